#!/usr/bin/env python
"""Starting points and step sizes of the main job's fit, at its 50 epochs: do any make it less under-confident?

At 50 epochs the main job's kernels are still flat (variances 1.0 / 1.7 / 4.5 against 0.18 / 4.1 / 10.9 after 200,
docs/calibration.md) and its held-out predictions under-confident.  Each candidate (`CANDIDATES`) changes where the
fit starts or how it steps, never how long it trains: the kernels' initial variances (one for all classes, or one per
class), their initial length scales, q(u)'s initial covariance, Adam's step size and its decay over the epochs.

``fit`` trains the main job's estimator (`gpal.catalog_jobs.settings.main_job_estimator`) with each candidate on the
main job's split (``gpal classify``: the default selection of CATALOG, a stratified 80 / 20 split drawn with the
seed) and keeps its held-out probabilities beside logistic regression's (`gpal.evaluation.baselines`) in
``OUT/probas/CATALOG.seedS.npz``, with each fit's seconds (the first fit of a process also traces its step) and final
kernel variances; a candidate already saved is not refitted.  ``--classes`` picks the class scheme (the study's record
is of the three-class ``blazar_pulsar``).  ``analyse`` writes the record ``RECORD/calibration_init_seedsA-B.json`` /
``.md`` (``--record``, by default the study's kept folder; the seeds in the name, so three and ten splits keep
their own): per catalog and candidate (mean over seeds) NLL, ECE (15 bins), accuracy, accuracy minus mean confidence,
seconds, kernel variances, and 95% paired bootstrap intervals over sources of the candidate minus ``gpal`` and minus
logistic regression (resamples averaged over the seeds).  Study ``calibration_init`` (its declaration beside this
script states the commands that made the record, lab/studies/records/calibration/).

    OMP_NUM_THREADS=1 nice -n 10 python lab/studies/bench_calibration_init.py fit --out /tmp/calib_init \
        --catalogs FL16Y --seeds 0 --candidates gpal var4 lr0.05
    python lab/studies/bench_calibration_init.py analyse --out /tmp/calib_init --record /tmp/calib_init

``cv`` scores every labelled source of the main job's selection once: stratified K-fold cross-validation (each
repeat a seed of its own), each fold's held-out probabilities of the candidates, logistic regression and the isotonic
random forest kept in ``OUT/cv/CATALOG.seedS.foldK.npz`` (a fold already saved is not refitted).  ``cv-analyse``
pools each repeat's out-of-fold probabilities and writes ``RECORD/calibration_cv.json`` / ``.md``: per model (mean over
repeats) NLL, ECE, accuracy minus mean confidence and each class's ECE; 95% paired bootstrap intervals over sources of
each candidate minus logistic regression (NLL, ECE, each class's ECE); the ECE a perfectly calibrated model with
each model's confidences shows on average (`gpal.evaluation.calibration.calibrated_ece`); and its spread, from labels
drawn from gpal's own pooled probabilities ``N_CALIBRATED_DRAWS`` times (mean and sd).

    OMP_NUM_THREADS=1 nice -n 10 python lab/studies/bench_calibration_init.py cv --out /tmp/calib_cv \
        --catalogs FL16Y 4FGL-DR4 --seeds 0 1 --candidates gpal var20
    python lab/studies/bench_calibration_init.py cv-analyse --out /tmp/calib_cv --seeds 0 1 --record /tmp/calib_cv

``later-labels`` reads a finished ``gpal workflow later_labels`` folder (``--out``: every check, models
gpal, ``gpal_kernel_variance20`` and logistic) and writes ``RECORD/later_labels_var20.json`` / ``.md``: per check
gpal's and logistic regression's NLL / ECE and var20 minus gpal (NLL, ECE, balanced accuracy, BL Lac-vs-FSRQ AUC) with
the run's paired intervals, at the commit the run names.

    python lab/studies/bench_calibration_init.py later-labels --out runs/calibration_later_labels --record /tmp

``summary`` renders ``RECORD/kernel_start.md`` from the four records above, kept beside it: the candidates side by
side, the spread over the splits and the main job's own split, the cross-validation and later-label tables.  With
``result_records.CHECK_VARIABLE`` set it compares the kept file instead (``run.py calibration_init --rebuild
--check``).

    python lab/studies/bench_calibration_init.py summary
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

#: Candidate name -> what differs from the main job's estimator.  ``kernel_variance`` / ``lengthscale_scale``: the
#: SE-ARD kernel starts at that variance (default 1) and at that multiple of its default length scales (sqrt(d));
#: ``q_sqrt_scale``: q(u)'s whitened covariance starts at that scale squared times I (default I, the prior);
#: ``lr_decay``: Adam's step falls exponentially epoch by epoch from ``learning_rate`` to that fraction of it;
#: ``class_kernel_variances``: each class's kernel starts at its own variance (classes in label order).
CANDIDATES: dict[str, dict[str, Any]] = {
    "gpal": {},
    "var4": {"kernel_variance": 4.0},
    "var10": {"kernel_variance": 10.0},
    "var20": {"kernel_variance": 20.0},
    "var30": {"kernel_variance": 30.0},
    "var50": {"kernel_variance": 50.0},
    "lr0.05": {"learning_rate": 0.05},
    "lr0.1": {"learning_rate": 0.1},
    "var4_lr0.05": {"kernel_variance": 4.0, "learning_rate": 0.05},
    "var10_lr0.05": {"kernel_variance": 10.0, "learning_rate": 0.05},
    "ls0.5": {"lengthscale_scale": 0.5},
    "ls2": {"lengthscale_scale": 2.0},
    "var10_ls0.5": {"kernel_variance": 10.0, "lengthscale_scale": 0.5},
    "q0.3": {"q_sqrt_scale": 0.3},
    "q0.1": {"q_sqrt_scale": 0.1},
    "var20_q0.3": {"kernel_variance": 20.0, "q_sqrt_scale": 0.3},
    # each class's kernel where 200 epochs take it (docs/calibration.md: bll / fsrq / pulsar), and with bll's left at 1
    "var_200_epochs": {"class_kernel_variances": (0.18, 4.1, 10.9)},
    "var_1_4_11": {"class_kernel_variances": (1.0, 4.1, 10.9)},
    "decay1": {"lr_decay": 1.0},  # the schedule's own trainer at a constant step: must equal gpal
    "lr0.1_decay0.1": {"learning_rate": 0.1, "lr_decay": 0.1},
    "lr0.1_decay0.3": {"learning_rate": 0.1, "lr_decay": 0.3},
    "lr0.06_decay0.2": {"learning_rate": 0.06, "lr_decay": 0.2},
    "var10_lr0.1_decay0.1": {"kernel_variance": 10.0, "learning_rate": 0.1, "lr_decay": 0.1},
}
CATALOGS = ("FL16Y", "4FGL-DR4")
SEEDS = (0, 1, 2)
TEST_SIZE = 0.2  # the main job's
N_BINS = 15
N_BOOT = 1000
N_FOLDS = 5
CV_BASELINES = ("logistic", "random_forest_isotonic")
N_CALIBRATED_DRAWS = 2000
MEASURES = ("nll", "ece", "accuracy", "accuracy_minus_confidence")  # `_measures`'s
#: Where the declared commands keep the study's record (`analyse`'s and `cv-analyse`'s tables and their JSON).
RECORD = Path(__file__).resolve().parent / "records" / "calibration"
#: The class scheme the record was measured on: the main job's classes when the study ran.
STUDY_CLASSES = "blazar_pulsar"


def fitted(candidate: dict[str, Any], train: Any, seed: int) -> Any:
    """The main job's estimator with the candidate's changes, fitted on ``train`` by the public steps of a fit
    (`gpal.estimators.fit_plan`), so that q(u) can start elsewhere than at the prior."""
    from gpal.estimators.fit_plan import complete_fit, fit_data, plan_fit, train_plan

    params = dict(candidate)
    scale, decay = params.pop("q_sqrt_scale", None), params.pop("lr_decay", None)
    per_class = params.pop("class_kernel_variances", None)
    estimator = estimator_of(params, train.X.shape[1], seed)
    plan = plan_fit(estimator, *fit_data(estimator, train, None, None))
    if per_class is not None:
        for kernel, variance in zip(plan.model.gp.kernels, per_class, strict=True):
            kernel.variance.assign(variance)
    if scale is not None:
        q_sqrt = plan.model.gp.q_sqrt
        q_sqrt.assign(scale * np.broadcast_to(np.eye(q_sqrt.shape[-1]), q_sqrt.shape))
    if decay is None:
        return train_plan(plan, progress=False)
    return complete_fit(plan, _decaying_fit(plan, float(decay)))


def _decaying_fit(plan: Any, decay: float) -> Any:
    """The plan's model trained by a `gpal.training.svi.Trainer` of its own, whose Adam step is set after each epoch
    to fall exponentially from the estimator's ``learning_rate`` to ``decay`` times it at the last epoch."""
    from gpal.training.svi import Trainer

    est = plan.estimator
    epochs, start = int(est.epochs), float(est.learning_rate)
    trainer = Trainer(plan.model, seed=plan.session.seed)

    def next_step(epoch: int, loss: float) -> None:
        trainer.optimizer.learning_rate = start * decay ** ((epoch + 1) / max(epochs - 1, 1))

    return trainer.fit(plan.train_data, epochs=epochs, batch_size=int(est.batch_size), learning_rate=start,
                       progress=False, callback=next_step)


def _save(path: Path, arrays: dict[str, np.ndarray]) -> None:
    """``np.savez`` through `gpal.files.atomic_output`: a run stopped while saving keeps the last whole file."""
    from gpal.files import atomic_output

    with atomic_output(path) as tmp, open(tmp, "wb") as out:
        np.savez(out, **arrays)


def estimator_of(candidate: dict[str, Any], n_features: int, seed: int) -> Any:
    """The main job's estimator with the candidate's kernel start and settings."""
    from gpal.catalog_jobs.settings import main_job_estimator
    from gpal.models.kernels import default_kernel

    params = dict(candidate)
    variance, scale = params.pop("kernel_variance", None), params.pop("lengthscale_scale", None)
    if variance is not None or scale is not None:
        kernel = default_kernel(n_features)
        kernel.variance.assign(1.0 if variance is None else variance)
        kernel.lengthscales.assign(kernel.lengthscales.numpy() * (1.0 if scale is None else scale))
        params["kernel"] = kernel
    return main_job_estimator(random_state=seed, progress=False, **params)


def labelled(catalog: str, classes: str) -> Any:
    """The labelled sources of the main job's selection of ``catalog`` (its cuts and features) in ``classes``."""
    from gpal.catalog_jobs.selection import CatalogSelection

    return CatalogSelection(catalog=catalog, classes=classes).load()[1]


def main_job_split(catalog: str, seed: int, classes: str = STUDY_CLASSES) -> tuple[Any, Any]:
    """The main job's training and held-out rows of ``catalog`` (`gpal classify`'s split) in ``classes``."""
    return labelled(catalog, classes).split(test_size=TEST_SIZE, seed=seed, stratify=True)


def fit(out: Path, catalogs: list[str], seeds: list[int], names: list[str], classes: str = STUDY_CLASSES) -> None:
    from gpal.evaluation.baselines import fit_baselines

    (out / "probas").mkdir(parents=True, exist_ok=True)
    for catalog in catalogs:
        for seed in seeds:
            path = out / "probas" / f"{catalog}.seed{seed}.npz"
            kept: dict[str, np.ndarray] = {}
            if path.is_file():
                with np.load(path) as saved:
                    kept = {k: saved[k] for k in saved.files}
            train, test = main_job_split(catalog, seed, classes)
            if "label" not in kept:
                kept["label"] = test.y
                kept["logistic"] = fit_baselines(train.X, train.y, test.X, names=["logistic"],
                                                 random_state=seed)["logistic"]
            for name in names:
                if name in kept:
                    continue
                t0 = time.perf_counter()
                model = fitted(CANDIDATES[name], train, seed)
                seconds = time.perf_counter() - t0
                kept[name] = model.predict_proba(test)
                kept[f"_seconds_{name}"] = np.array(seconds)
                kept[f"_variance_{name}"] = np.array([float(k.variance.numpy()) for k in model.model_.gp.kernels])
                _save(path, kept)  # after every fit: an interrupted run keeps what it finished
                print(f"{catalog} seed {seed} {name}: {seconds:.0f} s, variances "
                      f"{np.round(kept[f'_variance_{name}'], 2).tolist()}", flush=True)
            _save(path, kept)


def _measures(y: np.ndarray, p: np.ndarray) -> dict[str, float]:
    from gpal.evaluation.calibration import expected_calibration_error
    from gpal.evaluation.metrics import negative_log_likelihood

    accuracy = float(np.mean(p.argmax(axis=1) == y))
    return {"nll": negative_log_likelihood(y, p), "ece": expected_calibration_error(y, p, N_BINS),
            "accuracy": accuracy, "accuracy_minus_confidence": accuracy - float(p.max(axis=1).mean())}


def _paired(data: list[dict[str, np.ndarray]], a: str, b: str, indices: list[np.ndarray],
            by_class: bool = False) -> dict[str, list[float]]:
    """95% paired bootstrap interval of a - b per measure (and per class's ECE with ``by_class``), each resample's
    difference averaged over the repeats; ``indices``: each repeat's resamples of its rows, (N_BOOT, n)."""
    from gpal.evaluation.comparison import resampled_metrics

    diffs = []
    for d, index in zip(data, indices):
        ra, rb = (resampled_metrics(d["label"], d[m], index, N_BINS) for m in (a, b))
        diff = {k: ra[k] - rb[k] for k in ("nll", "ece", "accuracy")}
        for c in range(d[a].shape[1]) if by_class else ():
            diff[f"class_ece_{c}"] = (resampled_class_eces(d["label"], d[a], c, index)
                                      - resampled_class_eces(d["label"], d[b], c, index))
        diffs.append(diff)
    return {k: [float(v) for v in np.percentile(np.mean([d[k] for d in diffs], axis=0), [2.5, 97.5])]
            for k in diffs[0]}


def analyse(out: Path, catalogs: list[str], seeds: list[int], record: Path | None = None) -> dict[str, Any]:
    """The held-out table of the fits kept in ``out``, written to ``record`` (default ``out``) as
    ``calibration_init_seedsA-B.json`` / ``.md`` with the commit that made it."""
    from shared import code_commit

    result: dict[str, Any] = {"study": "calibration_init", "commit": code_commit(), "seeds": seeds, "catalogs": {}}
    for catalog in catalogs:
        paths = [out / "probas" / f"{catalog}.seed{s}.npz" for s in seeds]
        present = [(s, p) for s, p in zip(seeds, paths) if p.is_file()]
        if not present:
            continue
        data = []
        for _, p in present:
            with np.load(p) as saved:
                data.append({k: saved[k] for k in saved.files})
        used = [s for s, _ in present]
        models = [m for m in data[0] if m != "label" and not m.startswith("_") and all(m in d for d in data)]
        resamples = [np.random.default_rng([seed, 17]).integers(0, d["label"].size, (N_BOOT, d["label"].size))
                     for seed, d in zip(used, data)]  # each split scores its own sources
        rows = {}
        for m in models:
            per_seed = [_measures(d["label"], d[m]) for d in data]
            row = {k: float(np.mean([r[k] for r in per_seed])) for k in per_seed[0]}
            row["per_seed"] = per_seed
            if f"_seconds_{m}" in data[0]:
                row["seconds"] = float(np.mean([d[f"_seconds_{m}"] for d in data]))
                row["kernel_variance"] = np.mean([d[f"_variance_{m}"] for d in data], axis=0).round(3).tolist()
            for reference in ("gpal", "logistic"):
                if m != reference and reference in models:
                    row[f"minus_{reference}"] = _paired(data, m, reference, resamples)
            rows[m] = row
        result["catalogs"][catalog] = {"seeds": used, "n": int(data[0]["label"].size), "models": rows}
    _write_record(out if record is None else record, f"calibration_init_seeds{_seed_span(seeds)}", result,
                  markdown(result))
    return result


def _write_record(folder: Path, stem: str, result: dict[str, Any], table: str) -> None:
    """A record as the study keeps it: ``stem.json`` and its Markdown table ``stem.md`` in ``folder``."""
    from gpal.files import write_json_atomic

    folder.mkdir(parents=True, exist_ok=True)
    write_json_atomic(folder / f"{stem}.json", result)
    (folder / f"{stem}.md").write_text(table, encoding="utf-8")


def _seed_span(seeds: list[int]) -> str:
    """``0-9`` for consecutive seeds, else each seed joined by ``_``: the seeds in a record's name."""
    ordered = sorted(seeds)
    if ordered == list(range(ordered[0], ordered[-1] + 1)) and len(ordered) > 1:
        return f"{ordered[0]}-{ordered[-1]}"
    return "_".join(map(str, ordered))


def _iv(v: list[float]) -> str:
    return f"[{v[0]:+.3f}, {v[1]:+.3f}]"


def markdown(result: dict[str, Any]) -> str:
    lines = [f"Study `calibration_init`, commit {result['commit']}.", "",
             ("Held-out rows of the main job's split; each value is the mean over the seeds given; intervals are 95% "
              "paired bootstrap intervals over sources (1000 resamples, each averaged over the seeds) of the model "
              "minus gpal and minus logistic regression."), "",
             ("| catalog (held out) | seeds | model | NLL | ECE | accuracy | accuracy − confidence | seconds | "
              "kernel variances (bll / fsrq / pulsar) | − gpal: NLL | − gpal: ECE | − gpal: accuracy | "
              "− logistic: NLL | − logistic: ECE |"),
             "|---|---|---|---:|---:|---:|---:|---:|---|---|---|---|---|---|"]
    for catalog, c in result["catalogs"].items():
        for m, v in c["models"].items():
            variance = " / ".join(f"{x:.2f}" for x in v.get("kernel_variance", []))
            intervals = [_iv(v["minus_gpal"][k]) if "minus_gpal" in v else "" for k in ("nll", "ece", "accuracy")]
            intervals += [_iv(v["minus_logistic"][k]) if "minus_logistic" in v else "" for k in ("nll", "ece")]
            lines.append(f"| {catalog} ({c['n']}) | {','.join(map(str, c['seeds']))} | {m} | {v['nll']:.3f} | "
                         f"{v['ece']:.3f} | {v['accuracy']:.3f} | {v['accuracy_minus_confidence']:+.3f} | "
                         f"{v.get('seconds', float('nan')):.0f} | {variance} | " + " | ".join(intervals) + " |")
    lines += ["", "Per seed: NLL / ECE.", ""]
    for catalog, c in result["catalogs"].items():
        for m, v in c["models"].items():
            lines.append(f"- {catalog} {m}: " + "; ".join(
                f"seed {s}: {r['nll']:.3f} / {r['ece']:.3f}" for s, r in zip(c["seeds"], v["per_seed"])))
    return "\n".join(lines) + "\n"


def cv_folds(y: np.ndarray, seed: int, n_folds: int = N_FOLDS) -> list[np.ndarray]:
    """Held-out row indices of each of ``n_folds`` stratified folds of ``y`` (shuffled by ``seed``): every row in
    exactly one."""
    from sklearn.model_selection import StratifiedKFold

    folds = StratifiedKFold(n_splits=n_folds, shuffle=True, random_state=seed).split(np.zeros(y.size), y)
    return [held_out for _, held_out in folds]


def cv(out: Path, catalogs: list[str], seeds: list[int], names: list[str], n_folds: int = N_FOLDS,
       baselines: tuple[str, ...] = CV_BASELINES, classes: str = STUDY_CLASSES) -> None:
    from gpal.evaluation.baselines import fit_baselines

    (out / "cv").mkdir(parents=True, exist_ok=True)
    for catalog in catalogs:
        data = labelled(catalog, classes)
        for seed in seeds:
            for k, held_out in enumerate(cv_folds(data.y, seed, n_folds)):
                path = out / "cv" / f"{catalog}.seed{seed}.fold{k}.npz"
                kept: dict[str, np.ndarray] = {}
                if path.is_file():
                    with np.load(path) as saved:
                        kept = {key: saved[key] for key in saved.files}
                train, test = data.subset(np.setdiff1d(np.arange(data.n_samples), held_out)), data.subset(held_out)
                kept["index"], kept["label"], kept["class_names"] = held_out, test.y, np.array(data.class_names)
                missing = [b for b in baselines if b not in kept]
                if missing:
                    kept.update(fit_baselines(train.X, train.y, test.X, names=missing, random_state=seed))
                for name in (n for n in names if n not in kept):
                    t0 = time.perf_counter()
                    kept[name] = fitted(CANDIDATES[name], train, seed).predict_proba(test)
                    print(f"{catalog} seed {seed} fold {k} {name}: {time.perf_counter() - t0:.0f} s", flush=True)
                _save(path, kept)


def pooled_folds(out: Path, catalog: str, seed: int) -> dict[str, np.ndarray] | None:
    """Every model's out-of-fold probabilities of one repeat (and the labels), in the rows' order, for the models
    present in every fold, with the class names (None if the repeat has no fold saved)."""
    paths = sorted((out / "cv").glob(f"{catalog}.seed{seed}.fold*.npz"))
    if not paths:
        return None
    folds = []
    for path in paths:
        with np.load(path) as saved:
            folds.append({key: saved[key] for key in saved.files})
    index = np.concatenate([f["index"] for f in folds])
    if np.unique(index).size != index.size or index.max() + 1 != index.size:
        raise ValueError(f"{catalog} seed {seed}: the saved folds do not cover every row once")
    order = np.argsort(index)
    models = [m for m in folds[0] if m not in ("index", "class_names") and all(m in f for f in folds)]
    return {"class_names": folds[0]["class_names"], **{m: np.concatenate([f[m] for f in folds])[order] for m in models}}


def calibrated_ece_draws(proba: np.ndarray, seed: int, n_draws: int = N_CALIBRATED_DRAWS) -> np.ndarray:
    """ECE (``N_BINS`` bins) of ``proba`` against labels drawn from ``proba`` itself, once per draw: what a
    perfectly calibrated model with these probabilities shows on this many sources."""
    from gpal.evaluation.calibration import expected_calibration_error

    rng = np.random.default_rng([seed, 29])
    cumulative = np.cumsum(proba, axis=1)
    cumulative[:, -1] = 1.0  # rounding must not leave a draw above the last class
    draws = (rng.random((n_draws, proba.shape[0], 1)) > cumulative[None]).sum(axis=2)
    return np.array([expected_calibration_error(labels, proba, N_BINS) for labels in draws])


def resampled_class_eces(y: np.ndarray, proba: np.ndarray, cls: int, index: np.ndarray) -> np.ndarray:
    """ECE of class ``cls``'s probability (`gpal.evaluation.calibration.class_reliability`'s, ``N_BINS`` equal-width
    bins) on each resample of the rows, ``index`` (n_boot, n): a row's bin and gap do not depend on the resample."""
    score = proba[:, cls]
    edges = np.linspace(0.0, 1.0, N_BINS + 1)
    bins = np.clip(np.searchsorted(edges, score, side="left") - 1, 0, N_BINS - 1)  # as class_reliability bins
    gap = (y == cls) - score
    flat = (np.arange(index.shape[0])[:, None] * N_BINS + bins[index]).ravel()
    sums = np.bincount(flat, weights=gap[index].ravel(), minlength=index.shape[0] * N_BINS)
    return np.abs(sums.reshape(-1, N_BINS)).sum(axis=1) / index.shape[1]


def _class_eces(y: np.ndarray, p: np.ndarray) -> list[float]:
    from gpal.evaluation.calibration import class_reliability

    return [float(class_reliability(y, p, c, N_BINS).ece) for c in range(p.shape[1])]


def cv_analyse(out: Path, catalogs: list[str], seeds: list[int], record: Path | None = None) -> dict[str, Any]:
    """The cross-validation table of the folds kept in ``out``, written to ``record`` (default ``out``) as
    ``calibration_cv.json`` / ``.md`` with the commit that made it."""
    from shared import code_commit

    from gpal.evaluation.calibration import calibrated_ece

    result: dict[str, Any] = {"study": "calibration_init", "commit": code_commit(), "catalogs": {}}
    for catalog in catalogs:
        present = [(s, d) for s in seeds if (d := pooled_folds(out, catalog, s)) is not None]
        if not present:
            continue
        used, data = [s for s, _ in present], [d for _, d in present]
        models = [m for m in data[0] if m not in ("label", "class_names") and all(m in d for d in data)]
        n = data[0]["label"].size
        # every repeat scores the same sources in the same order: one resample of them serves all (resampling each
        # repeat apart would treat its sources as new ones and narrow the interval)
        resamples = [np.random.default_rng(17).integers(0, n, (N_BOOT, n))] * len(data)
        rows = {}
        for m in models:
            per_seed = [{**_measures(d["label"], d[m]), "class_ece": _class_eces(d["label"], d[m])} for d in data]
            row: dict[str, Any] = {k: float(np.mean([r[k] for r in per_seed])) for k in MEASURES}
            row["class_ece"] = np.mean([r["class_ece"] for r in per_seed], axis=0).tolist()
            row["calibrated_ece"] = float(np.mean([calibrated_ece(d[m], N_BINS) for d in data]))
            row["per_seed"] = per_seed
            if m != "logistic" and "logistic" in models:
                row["minus_logistic"] = _paired(data, m, "logistic", resamples, by_class=True)
            rows[m] = row
        draws = np.concatenate([calibrated_ece_draws(d["gpal"], s) for s, d in zip(used, data)]) if "gpal" in models \
            else np.array([np.nan])
        result["catalogs"][catalog] = {
            "seeds": used, "n": int(data[0]["label"].size), "class_names": data[0]["class_names"].tolist(),
            "calibrated_ece": {"mean": float(draws.mean()), "sd": float(draws.std(ddof=1)) if draws.size > 1 else 0.0},
            "models": rows}
    _write_record(out if record is None else record, "calibration_cv", result, cv_markdown(result))
    return result


def cv_markdown(result: dict[str, Any]) -> str:
    lines = [f"Study `calibration_init`, commit {result['commit']}.", "", CV_CAPTION, "", *cv_tables(result)]
    return "\n".join(lines)


#: What the cross-validation tables show (`cv_tables`).
CV_CAPTION = ("Out-of-fold probabilities of every labelled source, pooled per repeat; each value is the mean over the "
              "repeats; intervals are 95% paired bootstrap intervals over sources (1000 resamples of the sources, each "
              "the same for every repeat, the differences averaged over the repeats) of the model minus logistic "
              "regression.")


def cv_tables(result: dict[str, Any]) -> list[str]:
    """The cross-validation record's lines per catalog: the calibrated model's ECE and the models' table."""
    lines: list[str] = []
    for catalog, c in result["catalogs"].items():
        calibrated = c["calibrated_ece"]
        classes = " / ".join(c["class_names"])
        lines += [f"**{catalog}** ({c['n']} sources, repeats {','.join(map(str, c['seeds']))}): a perfectly "
                  f"calibrated model with gpal's probabilities shows ECE {calibrated['mean']:.4f} "
                  f"(sd {calibrated['sd']:.4f}).", "",
                  f"| model | NLL | ECE | calibrated model's ECE | accuracy | accuracy − confidence | "
                  f"class ECE ({classes}) | "
                  "− logistic: NLL | − logistic: ECE | − logistic: class ECE | ECE per repeat |",
                  "|---|---:|---:|---:|---:|---:|---|---|---|---|---|"]
        for m, v in c["models"].items():
            intervals = [_iv(v["minus_logistic"][k]) if "minus_logistic" in v else "" for k in ("nll", "ece")]
            intervals.append(" / ".join(_iv(v["minus_logistic"][f"class_ece_{c}"]) for c in range(len(v["class_ece"])))
                             if "minus_logistic" in v else "")
            lines.append(f"| {m} | {v['nll']:.4f} | {v['ece']:.4f} | {v['calibrated_ece']:.4f} | {v['accuracy']:.4f} | "
                         f"{v['accuracy_minus_confidence']:+.4f} | "
                         + " / ".join(f"{x:.4f}" for x in v["class_ece"]) + " | " + " | ".join(intervals) + " | "
                         + " / ".join(f"{r['ece']:.4f}" for r in v["per_seed"]) + " |")
        lines.append("")
    return lines


#: The later-label record's GP variant (`gpal.catalog_jobs.later_labels.GP_VARIANTS`, the bench's ``var20``) and the
#: baseline shown beside gpal.
LATER_VARIANT, LATER_BASELINE = "gpal_kernel_variance20", "logistic"
#: The variant's differences to gpal the record keeps: ``later_labels.csv``'s measure names.
LATER_DIFFERENCES = ("nll", "ece", "balanced_accuracy", "bll_fsrq_auc")


def later_labels_command(run: Path, seeds: list[int], models: list[str], n_boot: int) -> str:
    """The ``gpal workflow`` command that makes the run folder ``run`` with these seeds, models and resamples."""
    from gpal.catalog_jobs.later_labels import N_BOOT

    words = ["OMP_NUM_THREADS=1 nice -n 10 gpal workflow later_labels", f"--out {run}",
             f'--set "models=[{", ".join(models)}]"', f'--set "seeds=[{", ".join(map(str, seeds))}]"']
    return " ".join(words + ([f"--set n_boot={n_boot}"] if n_boot != N_BOOT else []))


def later_labels(run: Path, record: Path | None = None) -> dict[str, Any]:
    """The five-seed later-label table of a finished ``gpal workflow later_labels`` folder ``run``,
    written to ``record`` (default ``run``) as ``later_labels_var20.json`` / ``.md``: per check gpal's and logistic
    regression's NLL / ECE, and `LATER_VARIANT` minus gpal (`LATER_DIFFERENCES`) with the run's 95% paired bootstrap
    interval; at the commit the run names beside its measures (mixed, dirty or none is refused)."""
    import pandas as pd
    from shared import outputs_commit

    from gpal.catalog_jobs.later_labels import HELD_OUT, PAIRS

    path = run / "later_labels.csv"
    try:
        measures = pd.read_csv(path)
        config = json.loads((run / "workflow.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"{run} is not a finished later_labels workflow folder ({exc})") from None
    missing = {"check", "model", "measure", "value", "diff", "diff_low", "diff_high", "n", "commit"} - set(measures)
    if missing:
        raise ValueError(f"{path} lacks the columns {sorted(missing)}: not the later-label study's measures")
    commit = outputs_commit([{"commit": c} for c in sorted(set(measures["commit"].astype(str)))], [path])
    checks = [*PAIRS, *(f"held-out:{r}" for r in HELD_OUT)]
    if list(dict.fromkeys(measures["check"])) != checks:
        raise ValueError(f"{path} scores the checks {list(dict.fromkeys(measures['check']))}; the record is of every "
                         f"check of gpal/workflows/files/later_labels.yaml: {checks}")
    at = measures.set_index(["check", "model", "measure"])
    result: dict[str, Any] = {
        "study": "calibration_init", "commit": commit, "variant": LATER_VARIANT, "baseline": LATER_BASELINE,
        "seeds": config["seeds"], "n_boot": config["n_boot"],
        "commands": [later_labels_command(run, config["seeds"], config["models"], config["n_boot"]),
                     f"python lab/studies/bench_calibration_init.py later-labels --out {run}"],
        "checks": {}}
    for check in checks:
        def row(model: str, measure: str) -> pd.Series:
            if (check, model, measure) not in at.index:
                raise ValueError(f"{path} has no {measure} of {model} on {check}: run it with models "
                                 f"[gpal, {LATER_VARIANT}, {LATER_BASELINE}]")
            return at.loc[(check, model, measure)]

        differences = {}
        for measure in LATER_DIFFERENCES:
            r = row(LATER_VARIANT, measure)  # diff is gpal minus the model: the record keeps the variant minus gpal
            differences[measure] = [-float(r["diff"]), -float(r["diff_high"]), -float(r["diff_low"])]
        result["checks"][check] = {
            "n": int(row("gpal", "nll")["n"]),
            **{m: {k: float(row(m, k)["value"]) for k in ("nll", "ece")} for m in ("gpal", LATER_BASELINE)},
            "variant_minus_gpal": differences}
    _write_record(run if record is None else record, "later_labels_var20", result, later_labels_markdown(result))
    return result


def later_check_name(check: str) -> str:
    """``3FGL:FL16Y`` as ``3FGL -> FL16Y``, ``held-out:FL16Y`` as ``FL16Y held out``: the check as the pages name it."""
    return f"{check.split(':', 1)[1]} held out" if check.startswith("held-out:") else check.replace(":", " -> ")


def later_labels_markdown(result: dict[str, Any]) -> str:
    lines = [f"Study `calibration_init`, commit {result['commit']} (the run's units and measures).", "", "```bash",
             *result["commands"], "```", "", later_labels_caption(result), "", *later_labels_table(result)]
    return "\n".join(lines) + "\n"


def later_labels_caption(result: dict[str, Any]) -> str:
    """What the later-label table shows (`later_labels_table`): its seeds, its variant and how to read a difference."""
    return (f"Every later-label and held-out check; means over seeds {', '.join(map(str, result['seeds']))}. "
            f"var20 is `{result['variant']}` (the kernel starts at variance 20). var20 − gpal with its 95% paired "
            f"bootstrap interval over sources ({result['n_boot']} resamples, each averaged over the seeds); NLL and "
            "ECE > 0, balanced accuracy and AUC < 0 favour gpal.")


def later_labels_table(result: dict[str, Any]) -> list[str]:
    """The later-label record's table: a row per check."""
    from gpal.evaluation.comparison import difference_text

    names = {"nll": "NLL", "ece": "ECE", "balanced_accuracy": "balanced accuracy",
             "bll_fsrq_auc": "BL Lac-vs-FSRQ AUC"}
    lines = ["| check | sources | gpal NLL / ECE | "
             + " | ".join(f"var20 − gpal: {names[m]}" for m in LATER_DIFFERENCES)
             + f" | {result['baseline']} NLL / ECE |",
             "|---|---:|---|" + "---|" * len(LATER_DIFFERENCES) + "---|"]
    for check, c in result["checks"].items():
        lines.append(f"| {later_check_name(check)} | {c['n']} | {c['gpal']['nll']:.3f} / {c['gpal']['ece']:.3f} | "
                     + " | ".join(difference_text(*c["variant_minus_gpal"][m]) for m in LATER_DIFFERENCES)
                     + f" | {c[result['baseline']]['nll']:.3f} / {c[result['baseline']]['ece']:.3f} |")
    return lines


#: The study's summary beside its records (`summary`), and the records it is rendered from: held out over three and
#: ten splits, cross-validation, later labels.
SUMMARY = "kernel_start.md"
SUMMARY_RECORDS = ("calibration_init_seeds0-2.json", "calibration_init_seeds0-9.json", "calibration_cv.json",
                   "later_labels_var20.json")


def held_out_table(result: dict[str, Any]) -> list[str]:
    """A held-out record as the summary compares its candidates: per catalog and model (logistic regression, then
    `CANDIDATES`' order) the means, the spread and count over the splits, and the main job's own split (seed 0)."""
    first = next(iter(result["catalogs"].values()))
    lines = [f"| held out | model | NLL | ECE (sd over {len(first['seeds'])} splits) | accuracy − confidence | "
             "− gpal: NLL | − gpal: ECE | − logistic: ECE | splits with ECE ≤ logistic's | seed 0: NLL / ECE | "
             "final kernel variances (bll / fsrq / pulsar) |",
             "|---|---|---:|---:|---:|---|---|---|---:|---|---|"]
    order = ["logistic", *CANDIDATES]
    for catalog, c in result["catalogs"].items():
        logistic = [r["ece"] for r in c["models"]["logistic"]["per_seed"]]
        for m in sorted(c["models"], key=order.index):
            v = c["models"][m]
            eces = [r["ece"] for r in v["per_seed"]]
            seed0 = v["per_seed"][c["seeds"].index(0)]
            intervals = [_iv(v[f"minus_{ref}"][k]) if f"minus_{ref}" in v else ""
                         for ref, k in (("gpal", "nll"), ("gpal", "ece"), ("logistic", "ece"))]
            lines.append(f"| {catalog} ({c['n']}) | {m} | {v['nll']:.3f} | {v['ece']:.3f} "
                         f"({np.std(eces, ddof=1):.3f}) | {v['accuracy_minus_confidence']:+.3f} | "
                         + " | ".join(intervals) + " | "
                         f"{sum(e <= lg for e, lg in zip(eces, logistic)) if m != 'logistic' else ''} | "
                         f"{seed0['nll']:.3f} / {seed0['ece']:.3f} | "
                         + " / ".join(f"{x:.2f}" for x in v.get("kernel_variance", [])) + " |")
    return lines


def summary_markdown(record: Path) -> str:
    """The study's summary: its candidates and the tables of its kept records in ``record`` (`SUMMARY_RECORDS`), in
    one place to compare the candidates; each record's own ``.md`` has every column and per-seed value."""
    three, ten, cross, later = (json.loads((record / name).read_text(encoding="utf-8")) for name in SUMMARY_RECORDS)
    changes = "; ".join(f"{name}: " + (", ".join(f"{k} {v}" for k, v in c.items()) or "the main job's fit")
                        for name, c in CANDIDATES.items())
    sources = ", ".join(f"`{name}` (commit {r['commit']})"
                        for name, r in zip(SUMMARY_RECORDS, (three, ten, cross, later)))
    return "\n".join([
        "### The kernel-start study: where the fit starts and how it steps, at the main job's 50 epochs", "",
        f"Study `calibration_init` (lab/studies/calibration_init.yaml), rendered by `python "
        f"lab/studies/bench_calibration_init.py summary` from its records beside this file: {sources}.", "",
        f"Candidates, what each changes in the main job's fit (`CANDIDATES` of the study's script): {changes}.", "",
        "#### Held out, three splits", "",
        "Held-out rows of the main job's split (seed 0: the main job's own); means over the splits; intervals are 95% "
        "paired bootstrap intervals over sources (1000 resamples, each averaged over the splits) of the model minus "
        "gpal and minus logistic regression.", "", *held_out_table(three), "",
        "#### Held out, ten splits", "", *held_out_table(ten), "",
        "#### Every labelled source scored once: five-fold cross-validation", "", CV_CAPTION, "", *cv_tables(cross),
        "#### Later labels, five seeds", "", later_labels_caption(later), "", *later_labels_table(later)]) + "\n"


def summary(record: Path = RECORD) -> int:
    """Write `SUMMARY` in ``record`` from its kept records; with `result_records.CHECK_VARIABLE` set compare it
    instead (nothing written), so ``run.py calibration_init --rebuild --check`` holds the kept file to them."""
    import shared  # noqa: F401 -- puts the records' format (result_records) on the path
    from result_records import checking, outcome

    path, text = record / SUMMARY, summary_markdown(record)
    if checking():
        if path.read_text(encoding="utf-8") != text:
            print(f"error: {path} is not what `summary` renders from its records; run "
                  "python lab/studies/bench_calibration_init.py summary", file=sys.stderr)
            return 1
    else:
        path.write_text(text, encoding="utf-8")
    print(outcome(path))
    return 0


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("stage", choices=["fit", "analyse", "cv", "cv-analyse", "later-labels", "summary"])
    p.add_argument("--out", type=Path, default=Path("/tmp/calibration_init"))
    p.add_argument("--catalogs", nargs="+", default=list(CATALOGS))
    p.add_argument("--seeds", nargs="+", type=int, default=list(SEEDS))
    p.add_argument("--candidates", nargs="+", default=list(CANDIDATES), choices=list(CANDIDATES))
    p.add_argument("--classes", default=STUDY_CLASSES,
                   help="the class scheme or spec the fits train on (default %(default)s, the record's)")
    p.add_argument("--record", type=Path, default=RECORD,
                   help="where analyse / cv-analyse / later-labels write their tables and summary reads them "
                        "(default: the study's kept record)")
    args = p.parse_args(argv)
    if args.stage == "fit":
        fit(args.out, args.catalogs, args.seeds, args.candidates, classes=args.classes)
    elif args.stage == "cv":
        cv(args.out, args.catalogs, args.seeds, args.candidates, classes=args.classes)
    elif args.stage == "later-labels":
        try:
            print(later_labels_markdown(later_labels(args.out, args.record)))
        except ValueError as exc:
            p.error(str(exc))
    elif args.stage == "summary":
        raise SystemExit(summary(args.record))
    elif args.stage == "cv-analyse":
        print(cv_markdown(cv_analyse(args.out, args.catalogs, args.seeds, args.record)))
    else:
        print(json.dumps(analyse(args.out, args.catalogs, args.seeds, args.record)["catalogs"], indent=1)[:4000])


if __name__ == "__main__":
    main()

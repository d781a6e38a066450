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
kernel variances; a candidate already saved is not refitted.  ``analyse`` writes ``OUT/calibration_init.json`` /
``.md``: per catalog and candidate (mean over seeds) NLL, ECE (15 bins), accuracy, accuracy minus mean confidence,
seconds, kernel variances, and 95% paired bootstrap intervals over sources of the candidate minus ``gpal`` and minus
logistic regression (resamples averaged over the seeds).  Record: docs/studies/calibration/kernel_start.md.

    OMP_NUM_THREADS=1 nice -n 10 python benchmarks/bench_calibration_init.py fit --out /tmp/calib_init \
        --catalogs FL16Y --seeds 0 --candidates gpal var4 lr0.05
    python benchmarks/bench_calibration_init.py analyse --out /tmp/calib_init
"""

from __future__ import annotations

import argparse
import json
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


def main_job_split(catalog: str, seed: int) -> tuple[Any, Any]:
    """The main job's training and held-out rows of ``catalog`` (its default selection, `gpal classify`'s split)."""
    from gpal.catalog_jobs.selection import CatalogSelection

    _, data = CatalogSelection(catalog=catalog).load()
    return data.split(test_size=TEST_SIZE, seed=seed, stratify=True)


def fit(out: Path, catalogs: list[str], seeds: list[int], names: list[str]) -> None:
    from gpal.evaluation.baselines import fit_baselines

    (out / "probas").mkdir(parents=True, exist_ok=True)
    for catalog in catalogs:
        for seed in seeds:
            path = out / "probas" / f"{catalog}.seed{seed}.npz"
            kept: dict[str, np.ndarray] = {}
            if path.is_file():
                with np.load(path) as saved:
                    kept = {k: saved[k] for k in saved.files}
            train, test = main_job_split(catalog, seed)
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
                np.savez(path, **kept)  # after every fit: an interrupted run keeps what it finished
                print(f"{catalog} seed {seed} {name}: {seconds:.0f} s, variances "
                      f"{np.round(kept[f'_variance_{name}'], 2).tolist()}", flush=True)
            np.savez(path, **kept)


def _measures(y: np.ndarray, p: np.ndarray) -> dict[str, float]:
    from gpal.evaluation.calibration import expected_calibration_error
    from gpal.evaluation.metrics import negative_log_likelihood

    accuracy = float(np.mean(p.argmax(axis=1) == y))
    return {"nll": negative_log_likelihood(y, p), "ece": expected_calibration_error(y, p, N_BINS),
            "accuracy": accuracy, "accuracy_minus_confidence": accuracy - float(p.max(axis=1).mean())}


def _paired(data: list[dict[str, np.ndarray]], seeds: list[int], a: str, b: str) -> dict[str, list[float]]:
    """95% paired bootstrap interval of a - b per measure, each resample's difference averaged over the seeds."""
    from gpal.evaluation.comparison import resampled_metrics

    diffs = []
    for seed, d in zip(seeds, data):
        y = d["label"]
        index = np.random.default_rng([seed, 17]).integers(0, y.size, (N_BOOT, y.size))
        ra, rb = (resampled_metrics(y, d[m], index, N_BINS) for m in (a, b))
        diffs.append({k: ra[k] - rb[k] for k in ("nll", "ece", "accuracy")})
    return {k: [float(v) for v in np.percentile(np.mean([d[k] for d in diffs], axis=0), [2.5, 97.5])]
            for k in diffs[0]}


def analyse(out: Path, catalogs: list[str], seeds: list[int]) -> dict[str, Any]:
    from gpal.files import write_json_atomic

    result: dict[str, Any] = {"seeds": seeds, "catalogs": {}}
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
                    row[f"minus_{reference}"] = _paired(data, used, m, reference)
            rows[m] = row
        result["catalogs"][catalog] = {"seeds": used, "n": int(data[0]["label"].size), "models": rows}
    write_json_atomic(out / "calibration_init.json", result)
    (out / "calibration_init.md").write_text(markdown(result))
    return result


def _iv(v: list[float]) -> str:
    return f"[{v[0]:+.3f}, {v[1]:+.3f}]"


def markdown(result: dict[str, Any]) -> str:
    lines = [("Held-out rows of the main job's split; each value is the mean over the seeds given; intervals are 95% "
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


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("stage", choices=["fit", "analyse"])
    p.add_argument("--out", type=Path, default=Path("/tmp/calibration_init"))
    p.add_argument("--catalogs", nargs="+", default=list(CATALOGS))
    p.add_argument("--seeds", nargs="+", type=int, default=list(SEEDS))
    p.add_argument("--candidates", nargs="+", default=list(CANDIDATES), choices=list(CANDIDATES))
    args = p.parse_args(argv)
    if args.stage == "fit":
        fit(args.out, args.catalogs, args.seeds, args.candidates)
    else:
        print(json.dumps(analyse(args.out, args.catalogs, args.seeds)["catalogs"], indent=1)[:4000])


if __name__ == "__main__":
    main()

#!/usr/bin/env python
"""Why gpal's held-out ECE is worse than logistic regression's: each candidate cause measured on one fit per check.

``fit`` trains the main job's estimator once per check and seed (the later-label study's rows,
`gpal.catalog_jobs.later_labels`) and keeps, from that one fit, the probabilities of several ways of predicting
beside logistic regression's, in ``OUT/probas/CHECK.seedS.npz``:

- ``gpal``: the main job's prediction (300 draws of each noiseless input from p(x* | x~*), softmax over latent draws);
- ``gpal_noiseless``: the same model predicting at the measured inputs as if exact (X_var = 0): no input averaging;
- ``gpal_draws2000``: 2000 input draws instead of 300 (the number of prediction draws);
- ``gpal_mean_latent``: softmax of the latent means at the noiseless inputs (no latent-variance averaging either);
- ``logistic``: logistic regression on the same rows (`gpal.evaluation.baselines`).

On the later-label checks every model's probabilities of a bcu get what the catalog knows, as in the study
(``gpal_before_known`` and ``logistic_before_known``: without it; ``*_pool_prior``: moved to each group's own
class mix after it, `gpal.catalog_jobs.pool_prior`, derived when analysed).
``analyse`` reads them back and writes ``OUT/calibration.json`` / ``.md``: per check and variant (mean over seeds)
the top-label ECE (15 equal-width bins, the project's), the same ECE computed independently, the equal-mass and
10 / 20-bin ECE, NLL, accuracy and balanced accuracy under argmax(p) and argmax(p / training prior), each class's
one-vs-rest reliability (bins of p_c against the frequency of c) with its signed gap, and paired bootstrap
intervals of gpal minus each variant, resamples averaged over the seeds.

    OMP_NUM_THREADS=1 nice -n 10 python lab/studies/bench_calibration.py fit --out runs/calibration
    python lab/studies/bench_calibration.py analyse --out runs/calibration
    OMP_NUM_THREADS=1 nice -n 10 python lab/studies/bench_calibration.py in_sample --out runs/calibration

``in_sample`` fits FL16Y's seed-0 split after 50 and 200 epochs and compares the training rows' calibration with the
held-out rows' (``OUT/in_sample.json``).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import numpy as np

CHECKS = ("held-out:FL16Y", "held-out:4FGL-DR4", "4FGL-DR4:FL16Y", "4FGL:FL16Y")
SEEDS = (0, 1, 2)
N_BINS = 15


def _mean_latent_proba(model: Any, X: np.ndarray) -> np.ndarray:
    """softmax(mean of f) at the inputs taken as exact: what is left with no averaging at all."""
    import tensorflow as tf

    A, _ = model._inputs(X, np.zeros_like(X))
    mu, _ = model.model_.gp.predictive_marginals(tf.constant(A, dtype=tf.float64))
    z = mu.numpy()
    z = np.exp(z - z.max(axis=1, keepdims=True))
    return z / z.sum(axis=1, keepdims=True)


def _add_fits(path: Path, check: str, seed: int, extra: dict[str, dict[str, Any]]) -> None:
    """Further gpal fits (name -> estimator parameters) added to a saved check and seed where they are missing."""
    from gpal.catalog_jobs import later_labels as study
    from gpal.catalog_jobs.settings import main_job_estimator

    with np.load(path) as saved:
        kept = {k: saved[k] for k in saved.files}
    missing = {name: params for name, params in extra.items() if name not in kept}
    if not missing:
        return
    train, rows, _ = study.check_data(check, seed)
    units = {name: main_job_estimator(random_state=seed, progress=False, **params).fit(train).predict_proba(
        rows.X, rows.X_var) for name, params in missing.items()}
    kept.update(study.check_probabilities(check, seed, {m: {"proba": p} for m, p in units.items()}))
    np.savez(path, **kept)
    print(f"{check} seed {seed}: added {', '.join(missing)}", flush=True)


def fit(out: Path, checks: list[str], seeds: list[int], extra: dict[str, dict[str, Any]]) -> None:
    from gpal.catalog_jobs import later_labels as study
    from gpal.catalog_jobs.settings import main_job_estimator
    from gpal.evaluation.baselines import fit_baselines

    (out / "probas").mkdir(parents=True, exist_ok=True)
    for check in checks:
        for seed in seeds:
            path = out / "probas" / f"{check.replace(':', '__')}.seed{seed}.npz"
            if path.is_file():
                _add_fits(path, check, seed, extra)
                continue
            train, rows, _ = study.check_data(check, seed)
            t0 = time.perf_counter()
            model = main_job_estimator(random_state=seed, progress=False).fit(train)
            seconds = time.perf_counter() - t0
            proba, mc = model.predict_proba(rows.X, rows.X_var, return_mc_error=True)
            units = {
                "gpal": proba,
                "gpal_noiseless": model.predict_proba(rows.X, np.zeros_like(rows.X_var)),
                "gpal_mean_latent": _mean_latent_proba(model, rows.X),
            }
            model.set_params(n_samples=2000)
            units["gpal_draws2000"] = model.predict_proba(rows.X, rows.X_var)
            for name, params in extra.items():
                units[name] = main_job_estimator(random_state=seed, progress=False, **params).fit(train).predict_proba(
                    rows.X, rows.X_var)
            units["logistic"] = fit_baselines(train.X, train.y, rows.X, names=["logistic"], random_state=seed)["logistic"]
            known = study.check_probabilities(check, seed, {m: {"proba": p} for m, p in units.items()})
            if not check.startswith("held-out:"):  # what the catalog knows of a bcu: measured before and after
                known.update({f"{m}_before_known": units[m] for m in ("gpal", "logistic")})
            scored = study.scored_rows(check, seed)
            np.savez(path, label=scored["label"], prior=np.bincount(train.y, minlength=3) / train.y.size,
                     mc_error=mc, fit_seconds=seconds, **{m: np.asarray(p) for m, p in known.items()})
            print(f"{check} seed {seed}: fitted in {seconds:.0f} s", flush=True)


# ------------------------------------------------------------------- analysis
def independent_ece(y: np.ndarray, p: np.ndarray, n_bins: int) -> float:
    """Top-label ECE by an explicit loop over bins (k/M, (k+1)/M] (the first closed): the check of the project's."""
    conf, hit = p.max(axis=1), (p.argmax(axis=1) == y)
    total = 0.0
    for k in range(n_bins):
        low, high = k / n_bins, (k + 1) / n_bins
        inside = (conf <= high) & ((conf > low) if k else (conf >= low))
        if inside.any():
            total += inside.sum() * abs(hit[inside].mean() - conf[inside].mean())
    return total / y.size


def calibrated_p_value(y: np.ndarray, p: np.ndarray, n_bins: int, repeats: int = 1000, seed: int = 0) -> float:
    """Share of outcome sets drawn from a perfectly calibrated model with these confidences (hits ~ Bernoulli(
    confidence)) whose ECE is at least the observed one (consistency resampling, Broecker & Smith 2007): small where
    the ECE is more than its finite-sample bias explains."""
    from gpal.evaluation.calibration import expected_calibration_error, reliability_bins

    rng = np.random.default_rng(seed)
    conf = p.max(axis=1)
    observed = expected_calibration_error(y, p, n_bins)
    drawn = [reliability_bins(conf, rng.random(conf.size) < conf, n_bins).ece for _ in range(repeats)]
    return float(np.mean(np.asarray(drawn) >= observed - 1e-12))


RANGES = ((0.0, 0.9), (0.9, 1.0))
CLASS_RANGES = ((0.0, 0.1), (0.1, 0.9), (0.9, 1.0))


def signed_gaps(y: np.ndarray, p: np.ndarray) -> dict[str, float]:
    """Where the miscalibration is and its sign: sum of (outcome - score) / n over the rows in each range.

    Positive: the outcome is more frequent than the score says (under-confident in the top label; the class
    under-predicted in a class's range).  Each range's share adds up to the calibration-in-the-large."""
    n, out = y.size, {}
    conf, hit = p.max(axis=1), (p.argmax(axis=1) == y).astype(float)
    for low, high in RANGES:
        inside = (conf >= low) & (conf < high) if high < 1 else conf >= low
        out[f"top [{low}, {high})"] = float(np.sum(hit[inside] - conf[inside]) / n)
        out[f"top [{low}, {high}) n"] = int(inside.sum())
    for c, name in enumerate(("bll", "fsrq", "pulsar")):
        for low, high in CLASS_RANGES:
            pc = p[:, c]
            inside = (pc >= low) & (pc < high) if high < 1 else pc >= low
            out[f"{name} [{low}, {high})"] = float(np.sum((y[inside] == c) - pc[inside]) / n)
    return out


def prior_decision(p: np.ndarray, prior: np.ndarray) -> np.ndarray:
    """argmax_c p_c / prior_c: the class whose probability rose most over its training share."""
    return np.argmax(p / prior, axis=1)


def _decided_metrics(y: np.ndarray, decision: np.ndarray) -> dict[str, float]:
    recall = [np.mean(decision[y == c] == c) for c in np.unique(y)]
    return {"accuracy": float(np.mean(decision == y)), "balanced_accuracy": float(np.mean(recall))}


def _load(out: Path, check: str, seed: int) -> dict[str, np.ndarray]:
    """A check and seed's saved probabilities, with (later-label checks) gpal's and logistic regression's moved to
    each group's own class mix (``_pool_prior``), bcu included, as ``gpal classify --pool-prior`` moved them after the
    bcu rule when the study was recorded (today's default moves the unassociated sources only)."""
    with np.load(out / "probas" / f"{check.replace(':', '__')}.seed{seed}.npz") as d:
        data = {k: d[k] for k in d.files}
    if not check.startswith("held-out:"):
        from gpal.catalog_jobs import later_labels as study
        from gpal.catalog_jobs.pool_prior import adjust_to_pool
        from gpal.catalogs.classes import source_groups

        groups = source_groups(study.check_data(check, seed)[2])
        for m in ("gpal", "logistic"):
            moved = adjust_to_pool(data[m], groups, data["prior"], study.CLASSES, moved=None)
            data[f"{m}_pool_prior"] = moved.proba
            if m == "gpal":
                data["_groups"] = groups
                data["_mixes"] = {g: moved.groups[g]["prior"] for g in moved.groups}
    return data


def _pool_prior_groups(data: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per source group (bcu, unassociated): gpal's NLL before and after the pool prior and the mix it estimated,
    means over the seeds."""
    from gpal.evaluation.metrics import negative_log_likelihood

    out = {}
    for group in np.unique(data[0]["_groups"]):
        rows = []
        for d in data:
            keep = (d["label"] >= 0) & (d["_groups"] == group)
            rows.append({"n": int(keep.sum()), "nll": negative_log_likelihood(d["label"][keep], d["gpal"][keep]),
                         "nll_pool_prior": negative_log_likelihood(d["label"][keep], d["gpal_pool_prior"][keep]),
                         **{f"mix_{c}": float(v) for c, v in d["_mixes"][group].items()}})
        out[str(group)] = {k: float(np.mean([r[k] for r in rows])) for k in rows[0]}
    return out


def measures(y: np.ndarray, p: np.ndarray, prior: np.ndarray) -> dict[str, float]:
    from gpal.evaluation.calibration import calibrated_ece, class_reliability, expected_calibration_error
    from gpal.evaluation.comparison import balanced_accuracy
    from gpal.evaluation.metrics import negative_log_likelihood

    out = {"nll": negative_log_likelihood(y, p), "ece": expected_calibration_error(y, p, N_BINS),
           "ece_independent": independent_ece(y, p, N_BINS), "ece_floor": calibrated_ece(p, N_BINS),
           "ece_p_value": calibrated_p_value(y, p, N_BINS),
           "ece_quantile": expected_calibration_error(y, p, N_BINS, "quantile"),
           "ece_10": expected_calibration_error(y, p, 10), "ece_20": expected_calibration_error(y, p, 20),
           "accuracy": float(np.mean(p.argmax(axis=1) == y)), "balanced_accuracy": balanced_accuracy(y, p),
           "mean_confidence": float(p.max(axis=1).mean())}
    for c, name in enumerate(("bll", "fsrq", "pulsar")):
        out[f"ece_{name}"] = class_reliability(y, p, c, N_BINS).ece
    out.update({f"prior_rule_{k}": v for k, v in _decided_metrics(y, prior_decision(p, prior)).items()})
    out.update(signed_gaps(y, p))
    return out


def paired(seeds_data: list[dict[str, np.ndarray]], a: str, b: str, n_boot: int = 1000) -> dict[str, list[float]]:
    """95% paired bootstrap interval of a - b (NLL, ECE, balanced accuracy, accuracy and the prior rule's balanced
    accuracy), each resample's value averaged over the seeds."""
    from gpal.evaluation.comparison import resampled_metrics

    diffs: dict[str, list[np.ndarray]] = {}
    for seed, d in enumerate(seeds_data):
        keep = d["label"] >= 0
        y = d["label"][keep]
        index = np.random.default_rng([seed, 17]).integers(0, y.size, (n_boot, y.size))
        for name, proba in (("a", d[a][keep]), ("b", d[b][keep])):
            r = resampled_metrics(y, proba, index, N_BINS)
            decided = prior_decision(proba, d["prior"])
            r["prior_rule_balanced_accuracy"] = np.mean([_resampled_recall(y, decided, index, c) for c in range(3)],
                                                        axis=0)
            diffs.setdefault(name, []).append(r)
    out = {}
    for k in ("nll", "ece", "balanced_accuracy", "accuracy", "prior_rule_balanced_accuracy"):
        d = np.mean([ra[k] - rb[k] for ra, rb in zip(diffs["a"], diffs["b"])], axis=0)
        out[k] = [float(np.percentile(d, 2.5)), float(np.percentile(d, 97.5))]
    return out


def _resampled_recall(y: np.ndarray, decided: np.ndarray, index: np.ndarray, c: int) -> np.ndarray:
    is_c = (y == c)[index]
    hit = (decided == c)[index] & is_c
    return hit.sum(axis=1) / np.maximum(is_c.sum(axis=1), 1)


def analyse(out: Path, checks: list[str], seeds: list[int]) -> dict[str, Any]:
    result: dict[str, Any] = {"seeds": seeds, "checks": {}}
    for check in checks:
        data = [_load(out, check, s) for s in seeds]
        models = [k for k in data[0] if k not in ("label", "prior", "mc_error", "fit_seconds")
                  and not k.startswith("_")]
        per_model, rows_by_model = {}, {}
        for m in models:
            rows = []
            for d in data:
                keep = d["label"] >= 0
                rows.append(measures(d["label"][keep], d[m][keep], d["prior"]))
            per_model[m] = {k: float(np.mean([r[k] for r in rows])) for k in rows[0]}
            rows_by_model[m] = rows
        intervals = {m: paired(data, "gpal", m) for m in models if m != "gpal"}
        intervals["gpal prior rule - argmax"] = _rule_interval(data, "gpal")
        intervals["logistic prior rule - argmax"] = _rule_interval(data, "logistic")
        per_seed = {m: [{k: measures_seed[k] for k in ("ece", "ece_floor", "ece_p_value", "nll")}
                        for measures_seed in rows_by_model[m]] for m in ("gpal", "logistic")}
        result["checks"][check] = {"n": int((data[0]["label"] >= 0).sum()), "models": per_model, "per_seed": per_seed,
                                   "gpal_minus": intervals,
                                   "mc_error_mean": float(np.mean([d["mc_error"].mean() for d in data]))}
        if "_groups" in data[0]:
            result["checks"][check]["pool_prior_groups"] = _pool_prior_groups(data)
    from gpal.files import write_json_atomic

    write_json_atomic(out / "calibration.json", result)
    (out / "calibration.md").write_text(markdown(result))
    return result


def _rule_interval(data: list[dict[str, np.ndarray]], model: str, n_boot: int = 1000) -> dict[str, list[float]]:
    """Paired interval of the prior rule minus argmax (balanced accuracy, accuracy) for one model."""
    ba, acc = [], []
    for seed, d in enumerate(data):
        keep = d["label"] >= 0
        y, p = d["label"][keep], d[model][keep]
        index = np.random.default_rng([seed, 17]).integers(0, y.size, (n_boot, y.size))
        plain, rule = p.argmax(axis=1), prior_decision(p, d["prior"])
        ba.append(np.mean([_resampled_recall(y, rule, index, c) - _resampled_recall(y, plain, index, c)
                           for c in range(3)], axis=0))
        acc.append(((rule == y)[index].mean(axis=1) - (plain == y)[index].mean(axis=1)))
    return {k: [float(np.percentile(np.mean(v, axis=0), 2.5)), float(np.percentile(np.mean(v, axis=0), 97.5))]
            for k, v in (("balanced_accuracy", ba), ("accuracy", acc))}


def _iv(v: list[float]) -> str:
    return f"[{v[0]:+.3f}, {v[1]:+.3f}]"


def markdown(result: dict[str, Any]) -> str:
    """The record's tables: calibration per way of predicting, where the gap sits, and the decision rule."""
    lines = [f"Seeds {result['seeds']}; each value is the mean over the seeds; intervals are 95% paired bootstrap "
             "intervals over sources (1000 resamples, each averaged over the seeds) of gpal minus the other.", "",
             "| check | model | NLL | ECE | ECE of a calibrated model with these confidences | equal-mass ECE | "
             "ECE 10 / 20 bins | accuracy − mean confidence (< 0.9 / ≥ 0.9) | gpal − it: NLL | gpal − it: ECE |",
             "|---|---|---:|---:|---:|---:|---:|---|---|---|"]
    for check, c in result["checks"].items():
        for m, v in c["models"].items():
            iv = c["gpal_minus"].get(m)
            gap = v["top [0.0, 0.9)"] + v["top [0.9, 1.0)"]
            lines.append(f"| {check} ({c['n']}) | {m} | {v['nll']:.3f} | {v['ece']:.3f} | {v['ece_floor']:.3f} | "
                         f"{v['ece_quantile']:.3f} | {v['ece_10']:.3f} / {v['ece_20']:.3f} | {gap:+.4f} "
                         f"({v['top [0.0, 0.9)']:+.4f} / {v['top [0.9, 1.0)']:+.4f}) | "
                         f"{_iv(iv['nll']) if iv else ''} | {_iv(iv['ece']) if iv else ''} |")
    lines += ["", "Per seed (split): ECE, the ECE of a calibrated model with the same confidences, and the share of "
              "calibrated outcome draws (1000) with an ECE at least the observed (p).", "",
              "| check | model | " + " | ".join(f"seed {s}: ECE / calibrated / p" for s in result["seeds"]) + " |",
              "|---|---|" + "---|" * len(result["seeds"])]
    for check, c in result["checks"].items():
        for m, seeds in c["per_seed"].items():
            lines.append(f"| {check} | {m} | " + " | ".join(
                f"{v['ece']:.3f} / {v['ece_floor']:.3f} / {v['ece_p_value']:.2f}" for v in seeds) + " |")
    lines += ["", "Each class's one-vs-rest calibration: sum over the sources whose p(class) is in the range of "
              "(1[class] − p(class)), over all sources; > 0: the class is under-predicted there.  And the ECE of "
              "each class's probability (15 bins).", "",
              "| check | model | bll <0.1 / 0.1-0.9 / ≥0.9 | fsrq | pulsar | ECE bll / fsrq / pulsar |",
              "|---|---|---|---|---|---|"]
    for check, c in result["checks"].items():
        for m, v in c["models"].items():
            cells = [" / ".join(f"{v[f'{k} [{a}, {b})']:+.4f}" for a, b in CLASS_RANGES) for k in ("bll", "fsrq", "pulsar")]
            lines.append(f"| {check} | {m} | {' | '.join(cells)} | {v['ece_bll']:.3f} / {v['ece_fsrq']:.3f} / "
                         f"{v['ece_pulsar']:.3f} |")
    lines += ["", "The pool prior by source group (gpal): NLL before / after, and the class mix it estimated.", "",
              "| check | group | sources | NLL before / after | estimated bll / fsrq / pulsar |", "|---|---|---:|---|---|"]
    for check, c in result["checks"].items():
        for group, g in c.get("pool_prior_groups", {}).items():
            lines.append(f"| {check} | {group} | {g['n']:.0f} | {g['nll']:.3f} / {g['nll_pool_prior']:.3f} | "
                         f"{g['mix_bll']:.3f} / {g['mix_fsrq']:.3f} / {g['mix_pulsar']:.3f} |")
    lines += ["", "Deciding by argmax(p / training prior) against argmax(p): accuracy and balanced accuracy "
              "(the rule's minus argmax's, paired).", "",
              "| check | model | accuracy: argmax / prior rule | BA: argmax / prior rule | rule − argmax: BA | "
              "rule − argmax: accuracy |", "|---|---|---|---|---|---|"]
    for check, c in result["checks"].items():
        for m in ("gpal", "logistic"):
            v, iv = c["models"][m], c["gpal_minus"][f"{m} prior rule - argmax"]
            lines.append(f"| {check} | {m} | {v['accuracy']:.3f} / {v['prior_rule_accuracy']:.3f} | "
                         f"{v['balanced_accuracy']:.3f} / {v['prior_rule_balanced_accuracy']:.3f} | "
                         f"{_iv(iv['balanced_accuracy'])} | {_iv(iv['accuracy'])} |")
    return "\n".join(lines) + "\n"


def in_sample(out: Path, check: str = "held-out:FL16Y", seed: int = 0, epochs: tuple[int, ...] = (50, 200)) -> None:
    """Whether the fitted function itself is under-confident: the training rows' and held-out rows' accuracy minus
    mean confidence and ECE, and the kernels' variances and median lengthscales, after each number of epochs."""
    from gpal.catalog_jobs import later_labels as study
    from gpal.catalog_jobs.settings import main_job_estimator
    from gpal.evaluation.calibration import calibrated_ece, expected_calibration_error
    from gpal.evaluation.metrics import negative_log_likelihood
    from gpal.files import write_json_atomic

    train, test, _ = study.check_data(check, seed)
    result: dict[str, Any] = {"check": check, "seed": seed}
    for n in epochs:
        model = main_job_estimator(random_state=seed, progress=False, epochs=n).fit(train)
        kernels = model.model_.gp.kernels
        info: dict[str, Any] = {"kernel_variance": [float(k.variance.numpy()) for k in kernels],
                                "lengthscale_median": [float(np.median(k.lengthscales.numpy())) for k in kernels]}
        for split, rows in (("train", train), ("test", test)):
            p = model.predict_proba(rows.X, rows.X_var)
            info[split] = {"nll": negative_log_likelihood(rows.y, p), "ece": expected_calibration_error(rows.y, p),
                           "ece_calibrated": calibrated_ece(p),
                           "accuracy_minus_confidence": float(np.mean(p.argmax(axis=1) == rows.y) - p.max(axis=1).mean())}
        result[f"epochs{n}"] = info
        print(f"{n} epochs: {json.dumps(info)}", flush=True)
    write_json_atomic(out / "in_sample.json", result)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("stage", choices=["fit", "analyse", "in_sample"])
    p.add_argument("--out", type=Path, default=Path("runs/calibration"))
    p.add_argument("--checks", nargs="+", default=list(CHECKS))
    p.add_argument("--seeds", nargs="+", type=int, default=list(SEEDS))
    p.add_argument("--extra", default="{}", help="JSON: name -> estimator parameters of further gpal fits")
    args = p.parse_args(argv)
    if args.stage == "fit":
        fit(args.out, args.checks, args.seeds, json.loads(args.extra))
    elif args.stage == "in_sample":
        in_sample(args.out)
    else:
        analyse(args.out, args.checks, args.seeds)


if __name__ == "__main__":
    main()

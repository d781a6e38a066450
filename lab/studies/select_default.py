#!/usr/bin/env python
"""The selection study behind gpal's default classifier: candidates and baselines on the main job's task.

Task: 4FGL-DR4, classes bll / fsrq / pulsar (psr + msp), every labelled source, stratified
80/20 splits; split 0 is the main job's own held-out split (seed 0).  Every candidate
`NoisyGPClassifier` setting and every baseline (`gpal.evaluation.baselines`) is fitted on the same
training rows and features and scored on the same held-out rows, so differences are
paired.  Each (split, method) unit is written to ``--out`` as soon as it finishes: an
interrupted study resumes where it stopped, and more splits extend it.

    python lab/studies/select_default.py --features fermi_dr4 --splits 3 --out study.json
    python lab/studies/select_default.py --task 4fgl-454 --features villacampa2021 --test-size 0.1 --splits 5 --out s454.json
    python lab/studies/select_default.py --summarize study.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

# Candidates: settings of NoisyGPClassifier beside the shared ones below.
SHARED = dict(num_inducing=50, batch_size=200, epochs=300, n_samples=100, progress=False)
SOFTMAX_MC = dict(likelihood="softmax", likelihood_options={"elbo": "monte_carlo"})
CANDIDATES: dict[str, dict] = {
    "NIMGP robust-max (old default)": dict(input_noise="latent", likelihood="robustmax"),
    "MGP robust-max": dict(input_noise="none", likelihood="robustmax"),
    "MGP softmax (Gumbel bound)": dict(input_noise="none", likelihood="softmax", likelihood_options={"elbo": "bound"}),
    "MGP softmax (MC ELBO)": dict(input_noise="none", **SOFTMAX_MC),
    "NIMGP softmax (MC ELBO)": dict(input_noise="latent", **SOFTMAX_MC),
    "NIMGP-FO softmax (MC ELBO)": dict(input_noise="first_order", **SOFTMAX_MC),
    "MGP softmax (MC ELBO) + 600 epochs": dict(input_noise="none", **SOFTMAX_MC, epochs=600),
    "MGP softmax (MC ELBO) + early stopping": dict(input_noise="none", **SOFTMAX_MC, epochs=1000, early_stopping=True),
    "MGP softmax (MC ELBO) + M=100": dict(input_noise="none", **SOFTMAX_MC, num_inducing=100),
    "MGP softmax (MC ELBO) + SE + bias": dict(input_noise="none", **SOFTMAX_MC, kernel="bias"),
}
BASELINES = ("logistic", "random_forest_isotonic", "gradient_boosting_isotonic")


def _kernel(kind: str | None, d: int):
    if kind is None:
        return None
    import gpflow

    from gpal.models.kernels import default_kernel

    if kind == "bias":  # sigma_0^2 of paper 001 sec. 2: a constant added to the SE kernel
        return default_kernel(d) + gpflow.kernels.Constant(variance=1.0)
    raise ValueError(f"unknown kernel kind {kind!r}")


TASKS = {
    # the main job: every labelled bll / fsrq / pulsar source of 4FGL-DR4
    "dr4-main": dict(catalog="4FGL-DR4", classes=["bll", "fsrq", "pulsar"], merge={"pulsar": ["psr", "msp"]}),
    # the published set of paper 001 sec. 5.6: 4FGL, Signif_Avg > 30, 454 sources
    "4fgl-454": dict(catalog="4FGL", classes=["bll", "fsrq", "psr"], min_significance=30),
}


def task(name: str, features: str):
    from gpal.catalogs import load_catalog

    spec = dict(TASKS[name])
    return load_catalog(spec.pop("catalog")).dataset(features=features, **spec)


def run_unit(data, split: int, method: str, test_size: float) -> dict:
    """Fit one method on split ``split``; its scores and per-source held-out probabilities."""
    from gpal import NoisyGPClassifier

    train, test = data.split(test_size=test_size, seed=split, stratify=True)
    t0 = time.perf_counter()
    if method in BASELINES:
        from gpal.evaluation.baselines import fit_baselines

        proba = fit_baselines(train.X, train.y, test.X, names=[method], random_state=split)[method]
        extra = {}
    else:
        settings = {**SHARED, **CANDIDATES[method]}
        settings["kernel"] = _kernel(settings.pop("kernel", None), data.X.shape[1])
        clf = NoisyGPClassifier(random_state=split, **settings).fit(train)
        proba = clf.predict_proba(test)
        extra = {"best_epoch": int(clf.best_epoch_)}
    return {"split": split, "method": method, "seconds": round(time.perf_counter() - t0, 2),
            "ids": test.ids.tolist(), "y": test.y.tolist(), "proba": np.round(proba, 8).tolist(), **extra}


def _record_text(record: dict) -> str:
    """The record as JSON with one unit a line: its per-source probabilities indented one value a line took 1 MB of
    git, 40 % of it whitespace."""
    head = json.dumps({k: v for k, v in record.items() if k != "units"}, indent=1)[:-2]
    units = ",\n".join(json.dumps(unit, separators=(",", ":")) for unit in record["units"])
    return f'{head},\n "units": [\n{units}\n ]\n}}\n'


def summarize(units: list[dict], reference: str = "logistic") -> str:
    """Mean over splits (± SE) of each metric, and the paired NLL difference to ``reference``."""
    from gpal.evaluation.calibration import brier_score, expected_calibration_error
    from gpal.evaluation.comparison import balanced_accuracy
    from gpal.evaluation.metrics import negative_log_likelihood

    rows: dict[str, dict[int, dict]] = {}
    for u in units:
        y, p = np.asarray(u["y"]), np.asarray(u["proba"])
        rows.setdefault(u["method"], {})[u["split"]] = {
            "nll": negative_log_likelihood(y, p), "ece": expected_calibration_error(y, p, n_bins=15),
            "brier": brier_score(y, p), "accuracy": float(np.mean(p.argmax(1) == y)),
            "balanced_accuracy": balanced_accuracy(y, p), "seconds": u["seconds"]}
    splits = sorted(set.intersection(*(set(r) for r in rows.values())))

    def cell(values):
        v = np.asarray(values, dtype=float)
        se = v.std(ddof=1) / np.sqrt(v.size) if v.size > 1 else float("nan")
        return f"{v.mean():.3f} ± {se:.3f}"

    metrics = ("nll", "ece", "brier", "accuracy", "balanced_accuracy", "seconds")
    lines = [f"{len(splits)} paired splits: {splits}", "",
             "| method | " + " | ".join(metrics) + f" | NLL − {reference} | split 0 NLL |",
             "|---|" + "---|" * (len(metrics) + 2)]
    for method, by_split in sorted(rows.items(), key=lambda kv: np.mean([kv[1][s]["nll"] for s in splits])):
        diff = [by_split[s]["nll"] - rows[reference][s]["nll"] for s in splits] if reference in rows else [np.nan]
        lines.append(f"| {method} | " + " | ".join(cell([by_split[s][m] for s in splits]) for m in metrics)
                     + f" | {cell(diff)} | {by_split.get(0, {}).get('nll', float('nan')):.3f} |")
    return "\n".join(lines)


def faint_quarter(units: list[dict], significance: dict[str, float]) -> str:
    """NLL and accuracy per method on each split's held-out quarter of lowest Signif_Avg (largest error bars)."""
    from gpal.evaluation.metrics import negative_log_likelihood

    by_method: dict[str, list[tuple[float, float]]] = {}
    for u in units:
        sig = np.array([significance[i] for i in u["ids"]])
        faint = sig <= np.quantile(sig, 0.25)
        y, p = np.asarray(u["y"])[faint], np.asarray(u["proba"])[faint]
        by_method.setdefault(u["method"], []).append((negative_log_likelihood(y, p), float(np.mean(p.argmax(1) == y))))
    lines = ["| method (faintest quarter) | NLL | accuracy |", "|---|---|---|"]
    for method, values in sorted(by_method.items(), key=lambda kv: np.mean([v[0] for v in kv[1]])):
        v = np.asarray(values)
        lines.append(f"| {method} | {v[:, 0].mean():.3f} | {v[:, 1].mean():.3f} |")
    return "\n".join(lines)


def _significance(task_name: str) -> dict[str, float]:
    from gpal.catalogs import load_catalog

    catalog = load_catalog(TASKS[task_name]["catalog"])
    return dict(zip(catalog.names, np.asarray(catalog.table["Signif_Avg"], dtype=float)))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--task", choices=list(TASKS), default="dr4-main", help="data set (default dr4-main)")
    p.add_argument("--features", default="fermi_dr4", help="feature preset (default fermi_dr4)")
    p.add_argument("--splits", type=int, default=4, help="stratified 80/20 splits, seeds 0..K-1 (default 4)")
    p.add_argument("--test-size", type=float, default=0.2)
    p.add_argument("--methods", default=None, help="comma-separated subset of methods (default: all)")
    p.add_argument("--out", type=Path, default=Path("select_default.json"), help="results file (resumed if present)")
    p.add_argument("--summarize", type=Path, default=None, help="only print the summary of a results file")
    args = p.parse_args(argv)
    warnings.simplefilter("ignore")
    from gpal.files import write_text_atomic

    if args.summarize:
        record = json.loads(args.summarize.read_text())
        print(summarize(record["units"]))
        print(faint_quarter(record["units"], _significance(record["task"])))
        return 0
    methods = args.methods.split(",") if args.methods else [*BASELINES, *CANDIDATES]
    unknown = [m for m in methods if m not in BASELINES and m not in CANDIDATES]
    if unknown:
        p.error(f"unknown methods {unknown}; valid: {[*BASELINES, *CANDIDATES]}")
    identity = {"task": args.task, "features": args.features, "test_size": args.test_size}
    record = json.loads(args.out.read_text()) if args.out.is_file() else {**identity, "units": []}
    if {k: record.get(k) for k in identity} != identity:
        p.error(f"{args.out} holds another study ({ {k: record.get(k) for k in identity} }), not {identity}")
    done = {(u["split"], u["method"]) for u in record["units"]}
    data = task(args.task, args.features)
    for split in range(args.splits):
        for method in methods:
            if (split, method) in done:
                continue
            unit = run_unit(data, split, method, args.test_size)
            record["units"].append(unit)
            write_text_atomic(args.out, _record_text(record))
            print(f"split {split} {method}: {unit['seconds']} s", flush=True)
    print(summarize(record["units"]))
    print(faint_quarter(record["units"], _significance(args.task)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

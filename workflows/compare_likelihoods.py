#!/usr/bin/env python
"""Compare gpal's likelihoods and model families on the data sets available offline.

Every (data set, method) pair runs through ``gpal.experiments.run_repeated_splits``
(random stratified 90/10 splits, one resumable JSON file per split and method), so an
interrupted run picks up where it stopped.  The result is one Markdown table of test
accuracy, test NLL, top-label ECE (15 equal-width bins) and training seconds, each as
mean ± standard error over splits, written to ``<out>/comparison.md`` (and ``.json``).

Methods (names for ``--methods``):

- ``svgp-<likelihood>``: ``NoisyGPClassifier(input_noise="none", likelihood=...)`` for
  robustmax, step, probit, logit, softmax, logistic_softmax (Adam, minibatch 50, ``--epochs``);
- ``dirichlet``: ``DirichletGPClassifier`` (alpha_eps chosen from 0.1/0.01/0.001 by training MNLL);
- ``ls-cavi`` / ``ls-natgrad``: ``LogisticSoftmaxGPClassifier`` (augmented logistic-softmax)
  with full-batch CAVI or minibatch natural gradients;
- ``jj``, ``jj-hybrid``, ``taylor``: ``LogisticBoundGPClassifier`` (binary only; the table
  says "n/a (binary only)" on multi-class data sets).

The comparison is about likelihoods, so every method sees exact inputs: measured
input variances are not passed to any estimator (``use_variances=False``).
Iteration budgets: minibatch methods run ``--epochs`` passes over the training rows;
full-batch methods (CAVI sweeps, vi-JJ/Taylor outer iterations, Dirichlet L-BFGS)
stop at ``--iters`` iterations or earlier on their own convergence test.

Data sets take an optional ``:N`` suffix: generators draw N rows, fixed sets are
subsampled (seeded, stratified) to at most N rows.  Example::

    .venv/bin/python workflows/compare_likelihoods.py --splits 2 --epochs 30 \\
        --datasets synthetic_2d:400,waveform:400,wine,digits:600,4fgl,4fgl-dr4 --out runs/compare
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from gpal.calibration import expected_calibration_error
from gpal.data import NoisyDataset
from gpal.experiments import run_repeated_splits, summarize, unit_path
from gpal.metrics import format_mean_se, mean_se

SVGP_LIKELIHOODS = ("robustmax", "step", "probit", "logit", "softmax", "logistic_softmax")
BINARY_ONLY = ("jj", "jj-hybrid", "taylor")
METHODS = (
    *(f"svgp-{lik}" for lik in SVGP_LIKELIHOODS),
    "dirichlet",
    "ls-cavi",
    "ls-natgrad",
    *BINARY_ONLY,
)
NOT_APPLICABLE = "n/a (binary only)"
BATCH_SIZE = 50


# ------------------------------------------------------------------ data sets
def _synthetic_2d(n: int | None, seed: int) -> NoisyDataset:
    from gpal.synthetic import synthetic_2d

    return synthetic_2d(n_train=n or 1000, n_test=1, noise_variance=0.1, seed=seed).train


def _waveform(n: int | None, seed: int) -> NoisyDataset:
    from gpal.synthetic import waveform

    return waveform(n=n or 1000, seed=seed)


def _wine(n: int | None, seed: int) -> NoisyDataset:
    from gpal.synthetic import wine

    return wine()


def _digits(n: int | None, seed: int) -> NoisyDataset:
    from gpal.synthetic import digits

    return digits()


def _fgl(n: int | None, seed: int) -> NoisyDataset:
    from gpal.catalogs import load_catalog

    return load_catalog("4FGL").dataset(classes=["bll", "fsrq", "psr"], min_significance=30)


def _fgl_dr4(n: int | None, seed: int) -> NoisyDataset:
    from gpal.catalogs import load_catalog

    return load_catalog("4FGL-DR4").dataset(classes=["bll", "fsrq"])


#: name -> (loader(n, seed), whether n sets the generated size rather than a subsample cap)
DATASETS: dict[str, tuple[Callable[[int | None, int], NoisyDataset], bool]] = {
    "synthetic_2d": (_synthetic_2d, True),
    "waveform": (_waveform, True),
    "wine": (_wine, False),
    "digits": (_digits, False),
    "4fgl": (_fgl, False),
    "4fgl-dr4": (_fgl_dr4, False),
}
DATASET_NOTES = {
    "synthetic_2d": "GP-prior draw (sec. 5.2), 3 classes, input noise variance 0.1",
    "waveform": "Breiman waveform, 21 features, 3 classes",
    "wine": "UCI wine, 13 features, 3 classes",
    "digits": "8x8 digits, 64 features, 10 classes",
    "4fgl": "4FGL, Signif_Avg > 30, bll/fsrq/psr, 6 features",
    "4fgl-dr4": "4FGL-DR4, all significances, bll vs fsrq, 6 features",
}


def _stratified_cap(ds: NoisyDataset, n: int, seed: int) -> NoisyDataset:
    """At most ``n`` rows, each class keeping its share (seeded)."""
    if n >= ds.n_samples:
        return ds
    keep, _ = ds.split(test_size=1.0 - n / ds.n_samples, seed=seed)
    return keep


def parse_dataset(token: str, registry: Mapping[str, Any] = DATASETS) -> tuple[str, int | None]:
    """``"digits:600"`` -> ("digits", 600); unknown names list the valid ones."""
    name, _, size = token.strip().partition(":")
    name = name.strip().lower()
    if name not in registry:
        raise ValueError(f"unknown data set {name!r}; valid names are {list(registry)} (optionally NAME:ROWS)")
    if not size:
        return name, None
    if not size.isdigit() or int(size) < 20:
        raise ValueError(f"data set {token!r}: the row count after ':' must be an integer >= 20")
    return name, int(size)


def load_dataset(name: str, n: int | None, seed: int, registry: Mapping[str, Any] = DATASETS) -> NoisyDataset:
    """The named data set at the requested size."""
    loader, generated = registry[name]
    ds = loader(n, seed)
    return ds if generated or n is None else _stratified_cap(ds, n, seed)


# -------------------------------------------------------------------- methods
@dataclass(frozen=True)
class EstimatorFactory:
    """``seed -> unfitted estimator`` for a family outside NoisyGPClassifier.

    Its ``repr`` lists every setting, and gpal.experiments stores that repr in the
    folder's config, so rerunning with other settings into the same folder is refused
    rather than mixed.
    """

    family: str
    params: tuple[tuple[str, Any], ...]

    def __call__(self, seed: int) -> Any:
        if self.family == "dirichlet":
            from gpal.dirichlet_classifier import DirichletGPClassifier as cls
        elif self.family == "logistic_softmax":
            from gpal.logistic_softmax_classifier import LogisticSoftmaxGPClassifier as cls
        else:
            from gpal.logistic_bound_classifier import LogisticBoundGPClassifier as cls
        return cls(**dict(self.params), seed=seed, progress=False)


def method_spec(name: str, n_train: int, epochs: int, iters: int, num_inducing: int) -> Any:
    """The experiments-runner spec (parameter dict or factory) of one method on ``n_train`` rows."""
    if name.startswith("svgp-"):
        return {
            "input_noise": "none",
            "likelihood": name[len("svgp-") :],
            "num_inducing": num_inducing,
            "batch_size": BATCH_SIZE,
            "epochs": epochs,
            "progress": False,
        }
    if name == "dirichlet":
        return EstimatorFactory("dirichlet", (("num_inducing", num_inducing), ("max_iter", iters)))
    if name == "ls-cavi":
        return EstimatorFactory("logistic_softmax", (("inference", "cavi"), ("num_inducing", num_inducing), ("max_iter", iters)))
    if name == "ls-natgrad":
        steps = epochs * math.ceil(n_train / BATCH_SIZE)
        return EstimatorFactory(
            "logistic_softmax",
            (("inference", "natural_gradient"), ("batch_size", BATCH_SIZE), ("num_inducing", num_inducing), ("max_iter", steps)),
        )
    return EstimatorFactory("logistic_bound", (("method", name), ("num_inducing", num_inducing), ("max_iter", iters)))


def check_methods(names: Sequence[str]) -> list[str]:
    """Validated, de-duplicated method names."""
    names = list(dict.fromkeys(n.strip() for n in names if n.strip()))
    if not names:
        raise ValueError(f"no methods selected; valid names are {list(METHODS)}")
    unknown = [n for n in names if n not in METHODS]
    if unknown:
        raise ValueError(f"unknown method(s) {unknown}; valid names are {list(METHODS)}")
    if any(n.startswith("ls-") for n in names):
        try:
            importlib.import_module("gpal.logistic_softmax_classifier")
        except ImportError as exc:
            raise ValueError(f"ls-cavi / ls-natgrad need gpal.logistic_softmax_classifier, which does not import: {exc}") from exc
    return names


# ---------------------------------------------------------------------- runs
def _cell(values: Sequence[float], digits: int) -> str:
    m, se = mean_se(np.asarray(values, dtype=np.float64))
    return format_mean_se(m, se, digits)


def _rows_for(out: Path, method: str, splits: Sequence[int]) -> list[dict[str, Any]]:
    rows = []
    for k in splits:
        path = unit_path(out, method, k)
        if path.exists():
            rows.append(json.loads(path.read_text()))
    return rows


def run_comparison(
    datasets: Sequence[str],
    methods: Sequence[str],
    n_splits: int,
    epochs: int,
    out: str | Path,
    seed: int = 0,
    iters: int = 100,
    num_inducing: int = 20,
    progress: bool = True,
    registry: Mapping[str, Any] = DATASETS,
) -> list[dict[str, Any]]:
    """Run (or resume) every method x data set and write ``comparison.md`` / ``comparison.json``.

    ``registry`` maps data-set names to ``(loader(n, seed), generated)`` (default ``DATASETS``).

    Returns one row per (data set, method): metric cells as "mean ± SE" strings, or
    ``NOT_APPLICABLE`` for a binary-only method on a multi-class data set.  Failed
    units are recorded by the runner and retried on the next call.
    """
    methods = check_methods(methods)
    parsed = [parse_dataset(d, registry) for d in datasets]
    out = Path(out)
    table = []
    for name, n in parsed:
        ds = load_dataset(name, n, seed, registry)
        tag = name if n is None else f"{name}-n{n}"
        n_train = ds.n_samples - next(ds.repeated_splits(1, 0.1, seed)).test.size
        usable = [m for m in methods if ds.n_classes == 2 or m not in BINARY_ONLY]
        specs = {m: method_spec(m, n_train, epochs, iters, num_inducing) for m in usable}
        folder = out / tag
        if specs:
            run_repeated_splits(
                ds, specs, folder, n_splits=n_splits, test_size=0.1, seed=seed,
                use_variances=False, on_error="record", progress=progress,
            )
            summary = summarize(folder, methods=list(specs), splits=list(range(n_splits)), common_splits_only=False)
        for m in methods:
            row = {"dataset": tag, "n": ds.n_samples, "classes": ds.n_classes, "method": m}
            if m not in specs:
                row.update(splits=0, accuracy=NOT_APPLICABLE, nll=NOT_APPLICABLE, ece=NOT_APPLICABLE, train_seconds=NOT_APPLICABLE)
                table.append(row)
                continue
            entry = summary["methods"][m]
            units = _rows_for(folder, m, entry["splits"])
            row.update(splits=len(units), failed=entry["n_failed"])
            if units:
                row.update(
                    accuracy=_cell([1.0 - u["error"] for u in units], 3),
                    nll=_cell([u["nll"] for u in units], 3),
                    ece=_cell([expected_calibration_error(np.asarray(u["y_true"]), np.asarray(u["proba"])) for u in units], 3),
                    train_seconds=_cell([u["train_seconds"] for u in units], 1),
                )
            else:
                row.update(accuracy="failed", nll="failed", ece="failed", train_seconds="failed")
            table.append(row)
    out.mkdir(parents=True, exist_ok=True)
    (out / "comparison.json").write_text(json.dumps(table, indent=1))
    (out / "comparison.md").write_text(comparison_markdown(table))
    return table


def comparison_markdown(table: Sequence[Mapping[str, Any]]) -> str:
    """One Markdown table, a row per (data set, method)."""
    lines = [
        "| data set | n | C | method | splits | test accuracy | test NLL | ECE | train s |",
        "|---|---:|---:|---|---:|---|---|---|---|",
    ]
    for r in table:
        lines.append(
            f"| {r['dataset']} | {r['n']} | {r['classes']} | {r['method']} | {r['splits']} | {r['accuracy']} "
            f"| {r['nll']} | {r['ece']} | {r['train_seconds']} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument(
        "--datasets",
        default=",".join(DATASETS),
        help="comma-separated NAME[:ROWS] (default: all): " + "; ".join(f"{k} = {v}" for k, v in DATASET_NOTES.items()),
    )
    p.add_argument("--methods", default=",".join(METHODS), help=f"comma-separated subset of {list(METHODS)}")
    p.add_argument("--splits", type=int, default=5, help="random stratified 90/10 splits (default 5)")
    p.add_argument("--epochs", type=int, default=100, help="passes over the data for minibatch methods (default 100)")
    p.add_argument("--iters", type=int, default=100, help="iteration cap of full-batch methods (default 100)")
    p.add_argument("--num-inducing", type=int, default=20, help="inducing points for every method (default 20)")
    p.add_argument("--out", default="runs/compare_likelihoods", help="output folder; rerun into it to resume")
    p.add_argument("--seed", type=int, default=0, help="seed of data sets, splits and estimators (default 0)")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    args = p.parse_args(argv)
    for flag in ("splits", "epochs", "iters", "num_inducing"):
        if getattr(args, flag) < 1:
            p.error(f"--{flag.replace('_', '-')} must be >= 1; got {getattr(args, flag)}")
    try:
        datasets = [d for d in args.datasets.split(",") if d.strip()]
        for d in datasets:
            parse_dataset(d)
        methods = check_methods(args.methods.split(","))
    except ValueError as exc:
        p.error(str(exc))
    table = run_comparison(
        datasets, methods, args.splits, args.epochs, args.out, seed=args.seed, iters=args.iters,
        num_inducing=args.num_inducing, progress=not args.no_progress,
    )
    sys.stdout.write(comparison_markdown(table))
    return 0


if __name__ == "__main__":
    sys.exit(main())

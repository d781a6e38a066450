#!/usr/bin/env python
"""Paper 004's NLL gap on digits, isolated: the paper's CAVI against SVI logistic-softmax, varying what its authors set.

On digits (stratified split, seed 0, 1000 test rows, M = 50 k-means inducing inputs, SE-ARD), for each number of
training rows: SVI logistic-softmax (``NoisyGPClassifier``, Adam 0.01, minibatch 50: the workflows' own,
``--svi-epochs``) and the paper's CAVI as its
authors' AugmentedGaussianProcesses.jl runs it (``LogisticSoftmaxGPClassifier(inference="cavi", local_passes=5)``,
``--sweeps`` sweeps, one Adam step on the kernel after each) with one kernel shared by the classes or one per class
(``kernel_per_class``), at gpal's kernel step 0.1 and the authors' 0.01.  A last CAVI row per size holds each class's
kernel at SVI's fitted values (no kernel steps; the inducing inputs the other CAVI rows' k-means start, as SVI's
are one set per class): what is left there is the bound's, not the kernel's.  The last two rows are gpal's default
``inference="cavi_exact"`` (collapsed sweeps, then steps on the exact ELBO) with one kernel or one per class: whether
the per-class kernels should be gpal's default too.  It prints a Markdown table: test NLL, NLL minus SVI's, accuracy, seconds (construction, tracing and
training; the machine is shared, so only their order is meaningful).

With ``--splits N`` the chosen ``--units`` run on splits (and seeds) 0 to N - 1, and the table gives each unit's
mean test NLL and accuracy less SVI's on the same split, with a 95 % Student t interval, so a gap is told from
one split's chance.

Each fit's result is kept in ``--cache`` (one JSON a unit and split), so a rerun under load resumes where it stopped.

    python lab/studies/bench_paper004_gap.py --n-train 200 500
    python lab/studies/bench_paper004_gap.py --n-train 200 500 --splits 5 --units svi cavi_at_svi_kernels
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np

from shared import split, test_nll, workflow_svi  # the script's folder, first on its path
from shared import keep_printed, paired_t

M = 50


def fit_unit(unit: str, n_train: int, seed: int, args: argparse.Namespace, svi_holder: dict) -> dict:
    """Fit one unit ("svi", "cavi_<shared|per_class>_<lr>", "cavi_at_svi_kernels") on ``n_train`` rows of split
    ``seed`` (its seed too); its scores."""
    from gpal import LogisticSoftmaxGPClassifier, NoisyGPClassifier

    Xtr, Xte, ytr, yte = split("digits", seed, n_train)
    start = time.perf_counter()
    if unit == "svi":
        clf = NoisyGPClassifier(input_noise="none", likelihood="logistic_softmax", num_inducing=M, epochs=args.svi_epochs,
                                random_state=seed, **workflow_svi()).fit(Xtr, ytr)
        svi_holder[n_train, seed] = clf
        proba, classes = clf.predict_proba(Xte), clf.classes_
    elif unit == "cavi_at_svi_kernels":
        proba, classes = _cavi_at_svi_kernels(svi_holder[n_train, seed], Xtr, ytr, Xte, args.sweeps, seed)
    elif unit.startswith("exact_"):  # gpal's default inference, its defaults but the kernels
        clf = LogisticSoftmaxGPClassifier(num_inducing=M, kernel_per_class=(unit == "exact_perclass"),
                                          random_state=seed).fit(Xtr, ytr)
        proba, classes = clf.predict_proba(Xte), clf.classes_
    else:
        _, kernels, lr = unit.split("_", 2)
        clf = LogisticSoftmaxGPClassifier(inference="cavi", local_passes=5, max_iter=args.sweeps, num_inducing=M,
                                          learning_rate=float(lr), kernel_per_class=(kernels == "perclass"),
                                          random_state=seed).fit(Xtr, ytr)
        proba, classes = clf.predict_proba(Xte), clf.classes_
    seconds = time.perf_counter() - start
    return {"unit": unit, "n_train": n_train, "split": seed, "test_nll": round(test_nll(proba, yte, classes), 4),
            "accuracy": round(float(np.mean(classes[proba.argmax(1)] == yte)), 4), "seconds": round(seconds, 1),
            "load_1min": round(os.getloadavg()[0], 1)}


def _cavi_at_svi_kernels(svi, Xtr, ytr, Xte, sweeps: int, seed: int):
    """The paper's CAVI (five local passes a sweep) with each class's kernel and Z held at SVI's fitted values."""
    import gpflow

    from gpal.models.families.augmented_logistic_softmax import AugmentedLogisticSoftmaxGP
    from gpal.models.svgp import kmeans_inducing
    from gpal.training.cavi import AugmentedTrainer

    gp = next(m for m in svi.model_.submodules if type(m).__name__ == "LatentGPs")
    kernels = gpflow.kernels.SeparateIndependent([gpflow.utilities.deepcopy(k) for k in gp.kernels])
    Xs, Xts = svi.standardizer_.transform_arrays(Xtr)[0], svi.standardizer_.transform_arrays(Xte)[0]
    # SVI learns inducing inputs per class, which this model does not have: Z is the other CAVI rows' k-means start.
    Z = kmeans_inducing(Xs, M, seed)
    model = AugmentedLogisticSoftmaxGP(kernels, Z, len(svi.classes_), 1e-6, "mean_field", 5)
    AugmentedTrainer(model, Xs, np.searchsorted(svi.classes_, ytr), 0.1, False).run(
        "cavi", max_iter=sweeps, batch_size=None, hyper_every=0, delay=1.0, forgetting=0.6, seed=seed, progress=False)
    return model.predict_proba(Xts, 1000, seed), svi.classes_


UNITS = ("svi", "cavi_shared_0.1", "cavi_shared_0.01", "cavi_perclass_0.1", "cavi_perclass_0.01", "cavi_at_svi_kernels",
         "exact_shared", "exact_perclass")
LABELS = {
    "svi": ("SVI logistic-softmax", "one per class", "Adam 0.01"),
    "cavi_shared_0.1": ("paper's CAVI", "one shared", "0.1 (gpal's)"),
    "cavi_shared_0.01": ("paper's CAVI", "one shared", "0.01 (authors')"),
    "cavi_perclass_0.1": ("paper's CAVI", "one per class", "0.1 (gpal's)"),
    "cavi_perclass_0.01": ("paper's CAVI", "one per class (authors')", "0.01 (authors')"),
    "cavi_at_svi_kernels": ("paper's CAVI", "SVI's per class, held", "none"),
    "exact_shared": ("gpal's default (`cavi_exact`)", "one shared", "0.1, then 1.0"),
    "exact_perclass": ("gpal's default (`cavi_exact`)", "one per class", "0.1, then 1.0"),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n-train", type=int, nargs="+", default=[200, 500])
    parser.add_argument("--sweeps", type=int, default=200)
    parser.add_argument("--svi-epochs", type=int, default=300)
    parser.add_argument("--splits", type=int, default=1, help="splits 0 to N - 1, each its own seed")
    parser.add_argument("--units", nargs="+", choices=UNITS, default=list(UNITS),
                        help="the units to fit; svi is always among them, as every gap is against it")
    # (runs/papers/004_gap_units, the earlier folder, holds SVI fits some of which took the estimator's main-job batch
    # and step)
    parser.add_argument("--cache", type=Path, default=Path("runs/papers/004_gap_fits"))
    args = parser.parse_args()
    if args.splits < 1:
        parser.error(f"--splits must be 1 or more; got {args.splits}")
    units = [u for u in UNITS if u in {"svi", *args.units}]
    args.cache.mkdir(parents=True, exist_ok=True)
    with keep_printed("paper004_gap", __file__):
        results, svi_holder = {}, {}
        for n_train in args.n_train:
            for seed in range(args.splits):
                for unit in units:
                    results[n_train, seed, unit] = _unit(unit, n_train, seed, args, svi_holder)
                    print(json.dumps(results[n_train, seed, unit]), flush=True)
        print()
        if args.splits == 1:
            _one_split_table(results, args.n_train, units)
        else:
            _paired_table(results, args.n_train, args.splits, units)


def _unit(unit: str, n_train: int, seed: int, args: argparse.Namespace, svi_holder: dict) -> dict:
    """The unit's cached scores, or a fit's (kept in the cache)."""
    def path(u: str) -> Path:  # split 0 keeps the name it had before splits were asked for
        return args.cache / (f"n{n_train}_{u}_s{args.sweeps}_e{args.svi_epochs}" + (f"_split{seed}" if seed else "")
                             + ".json")

    cached = path(unit).is_file()
    if unit == "svi" and cached and not path("cavi_at_svi_kernels").is_file():
        cached = False  # the held-kernel unit needs SVI's fitted model in this process
    if cached:
        return {"split": seed, **json.loads(path(unit).read_text())}
    result = fit_unit(unit, n_train, seed, args, svi_holder)
    path(unit).write_text(json.dumps(result))
    return result


def _one_split_table(results: dict, sizes: list[int], units: list[str]) -> None:
    print("| training rows | method | kernels | kernel step | test NLL | NLL − SVI | accuracy | seconds |")
    print("|---:|---|---|---|---:|---:|---:|---:|")
    for n_train in sizes:
        svi = results[n_train, 0, "svi"]["test_nll"]
        for unit in units:
            r = results[n_train, 0, unit]
            gap = "–" if unit == "svi" else _signed(r["test_nll"] - svi)
            print(f"| {n_train} | " + " | ".join(LABELS[unit]) +
                  f" | {r['test_nll']:.3f} | {gap} | {r['accuracy']:.3f} | {r['seconds']:.1f} |")


def _paired_table(results: dict, sizes: list[int], splits: int, units: list[str]) -> None:
    """Each unit's mean scores over the splits, and its paired difference from SVI's with a 95 % t interval."""
    print("| training rows | method | kernels | kernel step | splits | test NLL, mean | NLL − SVI, mean ± SE "
          "| 95 % t interval | accuracy, mean | accuracy − SVI, mean ± SE | 95 % t interval |")
    print("|---:|---|---|---|---:|---:|---|---|---:|---|---|")
    for n_train in sizes:
        for unit in units:
            cells = []
            for metric in ("test_nll", "accuracy"):
                values = np.array([results[n_train, s, unit][metric] for s in range(splits)])
                cells.append(f"{values.mean():.3f}")
                if unit == "svi":
                    cells += ["–", "–"]
                    continue
                svi = np.array([results[n_train, s, "svi"][metric] for s in range(splits)])
                mean, se, low, high = paired_t(values - svi)
                cells += [f"{_signed(mean)} ± {se:.3f}", f"[{_signed(low)}, {_signed(high)}]"]
            print(f"| {n_train} | " + " | ".join(LABELS[unit]) + f" | {splits} | " + " | ".join(cells) + " |")


def _signed(x: float) -> str:
    return f"{x:+.3f}".replace("-", "−")


if __name__ == "__main__":
    main()

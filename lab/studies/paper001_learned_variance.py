"""The input-noise variance paper 001's NIMGP and NIMGP-FO learn on one split of a UCI set, beside that split's MGP.

Each fit trains one method once on split k of ``gpal/workflows/files/papers/001_uci_input_noise.yaml`` at one injected level
(its rows, noise draws and seed; robust-max with epsilon 1e-3 fixed, M = min(100, 5%), batch 50, 300 prediction
samples), with the variance learned from a given start and the kernel, epochs, learning rate and inducing inputs
(``--inducing``: gpal's k-means set shared by the classes, or paper 001's own random rows per class) given: the workflow
reports only test scores, and whether a method kept a variance or let it go to zero (and so became MGP) is read off
its fitted model.  The variance is stated per feature in the units of the training split standardised before the
noise, as the paper's scripts (and ``paper001_fo_variance.py``) state it.  A fit is ``METHOD:KERNEL[:START]``::

    python lab/studies/paper001_learned_variance.py --dataset vehicle --split 0 --level 0.25 \\
        --fits NIMGP:se_ard_plus_noise:0.01 MGP:se_ard NIMGP-FO:se_ard:0.01 NIMGP-FO:se_ard:0.1 --jobs 2 \\
        --json lab/pages/records/papers/probes/001_learned_variance.json
"""

from __future__ import annotations

import argparse
import json
import os
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from typing import Any

import numpy as np

from shared import METHODS, code_commit, learned_variance_start, uci_split

STUDY = "lab/studies/learned_variance.yaml"


def _fit(dataset: str, split_index: int, level: float, fit: str, epochs: int, learning_rate: float,
         inducing: str = "kmeans") -> dict[str, Any]:
    """Train one method on the split and read its test scores and learned input-noise variance."""
    for var in ("OMP_NUM_THREADS", "TF_NUM_INTRAOP_THREADS", "TF_NUM_INTEROP_THREADS"):
        os.environ[var] = "1"
    from gpal import NoisyGPClassifier
    from gpal.evaluation.metrics import error_rate, negative_log_likelihood

    method, kernel, *start = fit.split(":")
    train, test, seed, clean_scale = uci_split(dataset, split_index, level)
    learns = method != "MGP"
    clf = NoisyGPClassifier(input_noise=METHODS[method], noise_variance="learned",
                            likelihood="robustmax", kernel=kernel, num_inducing=min(100, int(0.05 * train.n_samples)),
                            batch_size=50, epochs=epochs, learning_rate=learning_rate, n_samples=300,
                            likelihood_options={"epsilon": 1e-3, "learn_epsilon": False}, random_state=seed)
    t0 = time.perf_counter()
    with learned_variance_start(float(start[0]) if learns else None, [], inducing):
        clf.fit(train.X, train.y)
    seconds = time.perf_counter() - t0
    proba = clf.predict_proba(test.X)
    row = {"fit": fit, "method": method, "kernel": kernel, "start": float(start[0]) if learns else None,
           "inducing": inducing,
           "epochs": epochs, "learning_rate": learning_rate, "n_train": int(train.n_samples),
           "n_test": int(test.n_samples), "seconds": round(seconds, 1),
           "test_nll": negative_log_likelihood(test.y, proba), "test_error": error_rate(test.y, proba)}
    if learns:
        # The estimator standardises the noisy training rows: a variance v there is v (s_noisy / s_clean)^2 here.
        v = clf.model_.noise_variance.learned.numpy() * (clf.standardizer_.scale / clean_scale) ** 2
        row.update(learned_variance=v.tolist(), learned_variance_min=float(v.min()),
                   learned_variance_median=float(np.median(v)), learned_variance_mean=float(v.mean()),
                   learned_variance_max=float(v.max()))
    return row


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dataset", default="vehicle")
    parser.add_argument("--split", type=int, default=0)
    parser.add_argument("--level", type=float, default=0.25)
    parser.add_argument("--fits", nargs="+", required=True, help="METHOD:KERNEL[:START], START for a learned variance")
    parser.add_argument("--epochs", type=int, default=1000)
    parser.add_argument("--learning-rate", type=float, default=1e-3)
    parser.add_argument("--inducing", default="kmeans", choices=("kmeans", "random_per_latent"),
                        help="inducing inputs: gpal's shared k-means set, or each class's own random training rows "
                             "(paper 001's authors')")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    for fit in args.fits:
        method, *rest = fit.split(":")
        if method not in METHODS or len(rest) != (1 if method == "MGP" else 2):
            raise SystemExit(f"--fits: {fit!r} is not METHOD:KERNEL (MGP) or METHOD:KERNEL:START ({sorted(METHODS)})")
    commit = code_commit()
    fits = [(args.dataset, args.split, args.level, fit, args.epochs, args.learning_rate, args.inducing)
            for fit in args.fits]
    with ProcessPoolExecutor(args.jobs, mp_context=get_context("spawn")) as pool:
        rows = []
        for row in pool.map(_fit, *zip(*fits)):
            print({k: row.get(k) for k in ("fit", "test_nll", "learned_variance_median", "seconds")}, flush=True)
            rows.append(row)
    record = {"workflow": STUDY, "command": "python lab/studies/paper001_learned_variance.py " + " ".join(
                  f"--{k.replace('_', '-')} {' '.join(map(str, v)) if isinstance(v, list) else v}"
                  for k, v in vars(args).items() if v is not None),
              "commit": commit, "dataset": args.dataset, "split": args.split, "level": args.level, "fits": rows}
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(record, fh, indent=1)


if __name__ == "__main__":
    main()

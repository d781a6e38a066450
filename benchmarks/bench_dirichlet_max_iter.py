#!/usr/bin/env python
"""How many L-BFGS-B iterations the Dirichlet GP needs: test NLL, error and fit time per max_iter cap.

``DirichletGPClassifier`` fits every candidate alpha_eps with L-BFGS-B up to ``max_iter``
iterations; this measures what a lower cap costs in accuracy and saves in time, on the
454-source 4FGL task, waveform and digits (repeated stratified splits, seed 0, M = 20).

    .venv/bin/python benchmarks/bench_dirichlet_max_iter.py --splits 3
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings

import numpy as np


def _datasets(seed: int) -> dict:
    from gpal.catalogs import load_catalog
    from gpal.data.synthetic import digits, waveform

    dg = digits(seed=seed)
    keep = np.sort(np.random.default_rng(seed).permutation(dg.n_samples)[:500])
    return {
        "4fgl": load_catalog("4FGL").dataset(classes=["bll", "fsrq", "psr"], min_significance=30),
        "waveform-600": waveform(n=600, seed=seed),
        "digits-500": dg.subset(keep),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--splits", type=int, default=3, help="repeated stratified splits per data set (default 3)")
    p.add_argument("--test-size", type=float, default=0.2, help="test fraction (default 0.2)")
    p.add_argument("--caps", default="30,100,300,1000", help="comma-separated max_iter values (default 30,100,300,1000)")
    args = p.parse_args(argv)
    from gpal import DirichletGPClassifier
    from gpal.evaluation.metrics import error_rate, negative_log_likelihood

    caps = [int(c) for c in args.caps.split(",")]
    print("| data set | max_iter | test NLL (mean ± SE) | test error | fit s (mean) |")
    print("|---|---:|---|---:|---:|")
    for name, ds in _datasets(0).items():
        for cap in caps:
            nll, err, secs = [], [], []
            for k, split in enumerate(ds.repeated_splits(args.splits, test_size=args.test_size, seed=0)):
                train, test = ds.subset(split.train), ds.subset(split.test)
                t0 = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # L-BFGS-B stopping at the cap warns
                    clf = DirichletGPClassifier(num_inducing=20, max_iter=cap, progress=False, random_state=k).fit(train.X, train.y)
                secs.append(time.perf_counter() - t0)
                proba = clf.predict_proba(test.X)
                nll.append(negative_log_likelihood(test.y, proba))
                err.append(error_rate(test.y, proba))
            se = np.std(nll, ddof=1) / np.sqrt(len(nll))
            print(f"| {name} | {cap} | {np.mean(nll):.3f} ± {se:.3f} | {np.mean(err):.3f} | {np.mean(secs):.1f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python
"""Paper 000's inputs and test sets (Bayesian Benchmarks) against gpal's, on the data sets of Tables III-IV.

Bayesian Benchmarks (``bayesian_benchmarks/data.py``, ``Dataset.__init__`` and ``normalize``) z-scores every input
on all rows before it draws a plain random 10 % test set; gpal's workflows z-score on each split's training rows.
The two maps differ per feature by a shift, which a stationary kernel does not see (the k-means inducing start moves
with the rows), and by a scale, the ratio of the training rows' standard deviation to all rows'.  This prints, over
the workflow's first ten splits, the largest of each: how far gpal's inputs are from the authors' in units of a
standard deviation.  The test sets: the largest gap between a class's share of a test set and its share of all
rows, for plain random test sets (the authors', ``protocol.stratify=false``) and stratified ones (gpal's).

    PYTHONPATH=$PWD python lab/studies/paper000_splits.py

The lines are kept in ``lab/studies/records/paper000_options.json``.
"""
from __future__ import annotations

import argparse

import numpy as np

from gpal.data import load_dataset
from gpal.data.registry import parse_dataset
from shared import keep_printed  # the script's folder, first on its path

#: The data sets of gpal/workflows/files/papers/000_tables_3_4.yaml, as it names them.
DATASETS = ("twonorm", "ringnorm", "magic", "mushroom", "waveform:5000", "waveform_noise", "satimage", "pendigits")


def facts(token: str, n_splits: int) -> dict:
    name, rows = parse_dataset(token)
    ds = load_dataset(name, n=rows, seed=0)
    mean, sd = ds.X.mean(0), ds.X.std(0)
    kept = sd > 0  # a constant feature is mapped to 0 either way
    shares = np.bincount(ds.y, minlength=ds.n_classes) / ds.n_samples
    scale, shift, gap = 0.0, 0.0, {}
    for stratify in (False, True):
        for split in ds.repeated_splits(n_splits, 0.1, 0, stratify=stratify):
            train, test = ds.X[split.train][:, kept], ds.y[split.test]
            if not stratify:
                scale = max(scale, float(np.max(np.abs(train.std(0) / sd[kept] - 1))))
                shift = max(shift, float(np.max(np.abs(train.mean(0) - mean[kept]) / sd[kept])))
            test_shares = np.bincount(test, minlength=ds.n_classes) / test.size
            gap[stratify] = max(gap.get(stratify, 0.0), float(np.max(np.abs(test_shares - shares))))
    return {"dataset": token, "rows": ds.n_samples, "scale": scale, "shift": shift, "random": gap[False],
            "stratified": gap[True]}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--splits", type=int, default=10, help="the workflow's splits read, seed 0 (default 10)")
    args = parser.parse_args(argv)
    with keep_printed("paper000_options", __file__, argv):
        print(f"| data set | rows | scale: max abs(training SD / all rows' SD - 1) | shift: max abs(training mean - "
              f"all rows' mean) / SD | largest class-share gap, random test sets | the same, stratified |")
        print("|---|---:|---:|---:|---:|---:|")
        for token in DATASETS:
            f = facts(token, args.splits)
            print(f"| {f['dataset']} | {f['rows']} | {f['scale']:.4f} | {f['shift']:.4f} | {f['random']:.4f} "
                  f"| {f['stratified']:.4f} |")


if __name__ == "__main__":
    main()

#!/usr/bin/env python
"""Paper 000 at its own optimisation budget on one split (sec. IV-A2: M = 300 k-means inducing points, minibatch
1024, 10 000 Adam steps at lr 0.01), for one GPC: test accuracy and NLL on one split of the 90/10 protocol of
gpal/workflows/files/papers/000_tables_3_4.yaml, and the seconds it took.  The epochs are rounded up, so a few more
steps run.  ``--kernel`` names the kernel (default gpal's SE-ARD; ``se_iso_liu`` is the paper's), ``--split`` and
``--random-test`` pick the split as the workflow does (stratified by default, as the recorded runs were made).

    PYTHONPATH=$PWD python lab/studies/bench_paper000_budget.py ringnorm step
    PYTHONPATH=$PWD python lab/studies/bench_paper000_budget.py waveform_noise step --kernel se_iso_liu --random-test \
        --json lab/studies/records/papers/paper000_budget_waveform_noise_liu.json
"""
import argparse
import json
import math
import time
from itertools import islice
from pathlib import Path

from gpal import NoisyGPClassifier
from gpal.data import load_dataset
from gpal.evaluation.metrics import error_rate, negative_log_likelihood
from shared import code_commit  # the script's folder, first on its path

parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
parser.add_argument("dataset")
parser.add_argument("likelihood")
parser.add_argument("--kernel", default=None, help="a name in gpal.registry.KERNELS (default: gpal's SE-ARD)")
parser.add_argument("--split", type=int, default=0, help="the split of the workflow's protocol, seed 0 (default 0)")
parser.add_argument("--random-test", action="store_true", help="a plain random test set (the workflow's "
                    "protocol.stratify=false), not a stratified one")
parser.add_argument("--json", type=Path, help="also write the line, with the commit, to this record")
args = parser.parse_args()
ds = load_dataset(args.dataset)
split = next(islice(ds.repeated_splits(args.split + 1, 0.1, 0, stratify=not args.random_test), args.split, None))
Xtr, ytr, Xte, yte = ds.X[split.train], ds.y[split.train], ds.X[split.test], ds.y[split.test]
epochs = math.ceil(10_000 * 1024 / len(ytr))
start = time.perf_counter()
clf = NoisyGPClassifier(input_noise="none", likelihood=args.likelihood, kernel=args.kernel, num_inducing=300,
                        batch_size=1024, epochs=epochs, learning_rate=0.01, random_state=0).fit(Xtr, ytr)
seconds = time.perf_counter() - start
proba = clf.predict_proba(Xte)
out = {"dataset": args.dataset, "likelihood": args.likelihood, "kernel": args.kernel or "se_ard", "split": args.split,
       "stratified": not args.random_test, "n_train": len(ytr), "epochs": epochs,
       "steps": epochs * math.ceil(len(ytr) / 1024), "seconds": seconds, "accuracy": 1 - error_rate(yte, proba),
       "nll": negative_log_likelihood(yte, proba)}
print(json.dumps(out))
if args.json:
    args.json.write_text(json.dumps({**out, "commit": code_commit()}) + "\n")

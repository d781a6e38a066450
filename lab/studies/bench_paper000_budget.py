#!/usr/bin/env python
"""Paper 000 at its own optimisation budget (sec. IV-A2: M = 300 k-means inducing points, minibatch 1024, 10 000
Adam steps at lr 0.01), for one GPC: test accuracy and NLL on splits of the 90/10 protocol of
gpal/workflows/files/papers/000_tables_3_4.yaml, and the seconds each fit took, one JSON line a fit.  The epochs
are rounded up, so a few more steps run.  gpal's tolerance stop stays on (the estimator's ``tol``): run to the
end, a fit takes some 40 CPU minutes here; ``--every-step`` turns it off.  ``epochs_run`` and ``steps`` count what
ran.  ``--kernel`` names the kernels (default gpal's SE-ARD, ``se_ard``;
``se_iso_liu`` is the paper's), ``--split`` the splits, ``--random-test`` draws them as the workflow's
``protocol.stratify=false`` does (default stratified, as the recorded runs were made); each kernel runs on each split.
``--authors`` adds the rest of the authors' model: one kernel and one set of inducing inputs for every class, and the
flip rate's Beta(0.2, 5) prior.

    PYTHONPATH=$PWD python lab/studies/bench_paper000_budget.py ringnorm step
    PYTHONPATH=$PWD python lab/studies/bench_paper000_budget.py waveform_noise step --kernel se_iso_liu se_ard \
        --split 0 3 --random-test --json lab/studies/records/papers/paper000_budget_waveform_noise.json
"""
import argparse
import json
import math
import shlex
import sys
import time
from pathlib import Path

from gpal import NoisyGPClassifier
from gpal.data import load_dataset
from gpal.evaluation.metrics import error_rate, negative_log_likelihood
from gpal.registry import KERNELS
from shared import code_commit  # the script's folder, first on its path

parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
parser.add_argument("dataset")
parser.add_argument("likelihood")
parser.add_argument("--kernel", nargs="+", default=["se_ard"], choices=list(KERNELS.names()), metavar="KERNEL",
                    help="kernels by name (default: se_ard, gpal's)")
parser.add_argument("--split", nargs="+", type=int, default=[0], help="splits of the workflow's protocol, seed 0 "
                    "(default 0)")
parser.add_argument("--random-test", action="store_true", help="plain random test sets (the workflow's "
                    "protocol.stratify=false), not stratified ones")
parser.add_argument("--every-step", action="store_true", help="run every step (tol=None), as the paper's fixed "
                    "count does, not stop at gpal's tolerance")
parser.add_argument("--authors", action="store_true", help="the rest of the authors' model too: one kernel and one "
                    "set of inducing inputs for every class (share_kernel_and_inducing) and the Beta(0.2, 5) prior on "
                    "a robust likelihood's flip rate, as the workflow's method_options set it")
parser.add_argument("--json", type=Path, help="also write the fits, with the commit and command, to this record")
args = parser.parse_args()
commit = code_commit()
ds = load_dataset(args.dataset)
splits = list(ds.repeated_splits(max(args.split) + 1, 0.1, 0, stratify=not args.random_test))
robust = args.likelihood in ("step", "probit", "logit")  # the likelihoods with a learned flip rate
multiclass = len(set(ds.y.tolist())) > 2  # one latent function on two classes: nothing to share
authors = ({**({"share_kernel_and_inducing": True} if multiclass else {}),
            **({"likelihood_options": {"delta_prior": [0.2, 5]}} if robust else {})} if args.authors else {})
fits = []
for k in args.split:
    split = splits[k]
    Xtr, ytr, Xte, yte = ds.X[split.train], ds.y[split.train], ds.X[split.test], ds.y[split.test]
    epochs = math.ceil(10_000 * 1024 / len(ytr))
    for kernel in args.kernel:
        start = time.perf_counter()
        clf = NoisyGPClassifier(input_noise="none", likelihood=args.likelihood, kernel=kernel, num_inducing=300,
                                batch_size=1024, epochs=epochs, learning_rate=0.01, random_state=0,
                                **({"tol": None} if args.every_step else {}), **authors).fit(Xtr, ytr)
        seconds = time.perf_counter() - start
        proba = clf.predict_proba(Xte)
        fits.append({"dataset": args.dataset, "likelihood": args.likelihood, "kernel": kernel, "split": k,
                     "stratified": not args.random_test, "every_step": args.every_step, "authors": args.authors, "n_train": len(ytr),
                     "epochs": epochs,
                     "epochs_run": len(clf.history_), "steps": len(clf.history_) * math.ceil(len(ytr) / 1024),
                     "seconds": seconds,
                     "accuracy": 1 - error_rate(yte, proba), "nll": negative_log_likelihood(yte, proba)})
        print(json.dumps(fits[-1]), flush=True)
if args.json:
    command = "PYTHONPATH=$PWD python " + shlex.join(["lab/studies/bench_paper000_budget.py", *sys.argv[1:]])
    args.json.write_text(json.dumps({"commit": commit, "command": command, "fits": fits}, indent=1) + "\n")

#!/usr/bin/env python
"""Paper 000, sec. IV-B2 and Fig. 4(b): "the GPCsm may suffer from slow convergence in the early stage due to the
complicated model structure" -- its test NLL along training against GPC-I, II and III (step, probit, logit).

Protocol: waveform-noise, the compare workflow's random stratified 90/10 splits (seed 0, split k from its own
stream), inputs standardised on the training rows, k-means inducing inputs, SE-ARD kernel, Adam at the paper's
learning rate 0.01 and minibatch 1024 (5 steps an epoch on 4 500 rows), delta learned, GPCsm through its closed-form
Gumbel bound (eq. 25). The test NLL is taken after the epochs of ``CHECKPOINTS`` (Adam steps = 5 x epochs).

The rule, fixed before the run: at each early checkpoint (``EARLY``: 50, 100 and 200 Adam steps, 0.5-2 % of the
paper's 10 000) GPCsm's test NLL minus that of each of GPC-I, II and III, paired over the splits, with its 95 %
Student-t interval. The claim holds where every such interval lies above 0, is contradicted where one lies below 0,
and is not resolved otherwise.

    PYTHONPATH=$PWD nice -n 10 python lab/studies/bench_paper000_curves.py --splits 10 \
        --json lab/studies/records/papers/paper000_curves.json
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from typing import Any

import numpy as np

from gpal.files import write_json_atomic
from shared import committed_source, paired_t

LIKELIHOODS = ("step", "probit", "logit", "softmax")
NAMES = {"step": "GPC-I", "probit": "GPC-II", "logit": "GPC-III", "softmax": "GPCsm"}
#: Epochs after which the test NLL is taken (log-spaced: the early stage is what the claim is about).
CHECKPOINTS = (1, 2, 4, 10, 20, 40, 100)
#: The rule's early checkpoints, in epochs (x 5 = Adam steps at minibatch 1024 on 4 500 rows).
EARLY = (10, 20, 40)
BATCH_SIZE = 1024
LEARNING_RATE = 0.01


def verdict(intervals: list[tuple[float, float, float]], complete: bool = True) -> str:
    """The rule over (mean, low, high) intervals of GPCsm minus another GPC: holds only if every one is above 0,
    and only when all three other GPCs ran (``complete``); one below 0 contradicts it whichever ran."""
    if any(high < 0 for _, _, high in intervals):
        return "contradicted"
    if complete and all(low > 0 for _, low, _ in intervals):
        return "holds"
    return "not resolved"


def trace(name: str, likelihood: str, split: int, num_inducing: int, epochs: int, seed: int,
          kernel: str | None = None) -> dict[str, Any]:
    """One fit on split ``split``, the test NLL and accuracy after each checkpoint epoch and the training seconds."""
    import tensorflow as tf

    from gpal.data import load_dataset
    from gpal.data.standardizer import Standardizer
    from gpal.evaluation.metrics import error_rate, negative_log_likelihood
    from gpal.models.svgp import build_model
    from gpal.training.svi import TrainData, Trainer

    ds = load_dataset(name, seed=seed)
    part = next(s for s in ds.repeated_splits(split + 1, 0.1, seed) if s.index == split)
    train, test = ds.subset(part.train), ds.subset(part.test)
    scaler = Standardizer.fit(train.X)
    X, X_test = scaler.transform_arrays(train.X)[0], scaler.transform_arrays(test.X)[0]
    options = {"elbo": "bound"} if likelihood == "softmax" else {}
    model = build_model(X, train.y, num_classes=ds.n_classes, input_noise="none", likelihood=likelihood,
                        likelihood_options=options, num_inducing=num_inducing, kernel=kernel, seed=seed + split)
    predict = tf.function(lambda: model.predict_proba(tf.constant(X_test), tf.zeros_like(tf.constant(X_test)),
                                                      tf.constant([seed + split, 7], tf.int64)))
    out = {"epoch": [], "nll": [], "accuracy": [], "seconds": []}
    start, paused = time.perf_counter(), [0.0]

    def callback(epoch: int, loss: float) -> None:
        if epoch + 1 not in CHECKPOINTS:
            return
        pause = time.perf_counter()
        proba = predict().numpy()
        out["epoch"].append(epoch + 1)
        out["seconds"].append(pause - start - paused[0])
        out["nll"].append(negative_log_likelihood(test.y, proba))
        out["accuracy"].append(1.0 - error_rate(test.y, proba))
        paused[0] += time.perf_counter() - pause

    Trainer(model, seed=seed + split).fit(TrainData.from_arrays(X, np.zeros_like(X), train.y), epochs=epochs,
                                          batch_size=BATCH_SIZE, learning_rate=LEARNING_RATE, progress=False,
                                          callback=callback)
    return {"likelihood": likelihood, "split": split, "n_train": int(train.n_samples), **out}


def summarise(traces: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per checkpoint: GPCsm minus each other GPC that ran, paired over the splits every method run finished."""
    by = {(t["likelihood"], t["split"]): t for t in traces}
    ran = [lik for lik in LIKELIHOODS if any(key[0] == lik for key in by)]
    splits = sorted({s for _, s in by if all((lik, s) in by for lik in ran)})
    rows = []
    for epoch in CHECKPOINTS:
        if not all(epoch in by[(lik, s)]["epoch"] for lik in ran for s in splits):
            continue
        at = {lik: np.array([by[(lik, s)]["nll"][by[(lik, s)]["epoch"].index(epoch)] for s in splits])
              for lik in ran}
        diffs = {NAMES[lik]: paired_t(at["softmax"] - at[lik]) for lik in ran if lik != "softmax"}
        diffs = {name: (mean, low, high) for name, (mean, _, low, high) in diffs.items()}
        rows.append({"epoch": epoch, "steps": epoch * -(-by[(ran[0], splits[0])]["n_train"] // BATCH_SIZE),
                     "splits": len(splits), "mean_nll": {NAMES[k]: float(v.mean()) for k, v in at.items()},
                     "gpcsm_minus": diffs, "early": epoch in EARLY,
                     "verdict": verdict(list(diffs.values()), complete=len(ran) == len(LIKELIHOODS))})
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    lines = ["| epoch (steps) | splits | mean NLL"
             + " | GPCsm - GPC-I | GPCsm - GPC-II | GPCsm - GPC-III | rule |", "|---|---:|---|---|---|---|---|"]
    for r in rows:
        d = ["{:+.4f} [{:+.4f}, {:+.4f}]".format(*r["gpcsm_minus"][name]) if name in r["gpcsm_minus"] else "not run"
             for name in list(NAMES.values())[:-1]]
        lines.append(f"| {r['epoch']} ({r['steps']}){' early' if r['early'] else ''} | {r['splits']} | "
                     + ", ".join(f"{k} {v:.4f}" for k, v in r["mean_nll"].items()) + " | " + " | ".join(d)
                     + f" | {r['verdict']} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dataset", default="waveform_noise")
    p.add_argument("--splits", type=int, default=10, help="90/10 splits (default 10, the paper's)")
    p.add_argument("--num-inducing", type=int, default=100, help="M (default 100; the paper: 300)")
    p.add_argument("--kernel", default=None, choices=("se_ard", "se_iso"),
                   help="default se_ard; the paper's single-length-scale RBF: se_iso")
    p.add_argument("--epochs", type=int, default=max(CHECKPOINTS), choices=CHECKPOINTS,
                   help=f"train to this checkpoint (default {max(CHECKPOINTS)}; the rule needs {max(EARLY)})")
    p.add_argument("--likelihoods", nargs="+", default=list(LIKELIHOODS), choices=LIKELIHOODS,
                   help="the GPCs to fit (default all four; softmax, GPCsm, is always one): a run of GPCsm and one "
                        "other can contradict the claim, only all four can make it hold")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", help="write settings, traces and the paired table here")
    args = p.parse_args(argv)
    if args.splits < 2:
        p.error(f"--splits must be >= 2 for a paired interval; got {args.splits}")
    if "softmax" not in args.likelihoods or len(args.likelihoods) < 2:
        p.error(f"--likelihoods must hold softmax (GPCsm) and at least one other; got {args.likelihoods}")
    if args.epochs < max(EARLY):
        p.error(f"--epochs must reach the rule's last early checkpoint, {max(EARLY)}; got {args.epochs}")
    commit = committed_source() if args.json else "not recorded"
    traces = []
    for split in range(args.splits):
        for lik in (lik for lik in LIKELIHOODS if lik in args.likelihoods):
            traces.append(trace(args.dataset, lik, split, args.num_inducing, args.epochs, args.seed, args.kernel))
            t = traces[-1]
            print(f"split {split} {NAMES[lik]}: NLL {t['nll'][0]:.3f} at epoch 1, {t['nll'][-1]:.3f} at "
                  f"{t['epoch'][-1]} ({t['seconds'][-1]:.1f} s)", file=sys.stderr, flush=True)
    rows = summarise(traces)
    sys.stdout.write(table(rows))
    if args.json:
        write_json_atomic(args.json, {
            "commit": commit, "settings": {k: v for k, v in vars(args).items() if k != "json"},
            "protocol": {"batch_size": BATCH_SIZE, "learning_rate": LEARNING_RATE, "checkpoints": CHECKPOINTS,
                         "early": EARLY},
            "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "load": os.getloadavg()},
            "rows": rows, "traces": traces})
    return 0


if __name__ == "__main__":
    sys.exit(main())

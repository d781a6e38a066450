"""Why NIMGP-FO's learned input-noise variance goes to zero on paper 001's UCI sets (sec. 3.3-3.4, 5.3, Table 5).

Each unit trains NIMGP-FO once on one 90/10 split of a UCI set with the paper's injected noise, in
the setting of ``gpal/workflows/files/papers/001_uci_input_noise.yaml`` (robust-max, epsilon 1e-3 fixed, SE-ARD
plus a learned noise level, M = min(100, 5%), batch 50, Adam 1e-3, the same splits and noise draws),
with its input-noise variance V either learned (from gpal's start 0.01 or the authors' 0.1) or given
and held fixed (at the authors' start 0.1, or at the injected level).  Given V is stated in the
units of the training split standardised before the noise was added, as the paper's scripts have it.

After training, with every other parameter held, it evaluates on the full training set the ELBO
(eq. 10 with the marginals of eq. 15-16) and on the test rows the NLL, at a grid of V shared by all
features; and the derivative of the ELBO in log V by automatic differentiation beside a central
finite difference, so that a gradient lost between the variance and the objective would show.
A learned V is also traced during training (median, min and max over features, with the epoch's mean
loss, every ``--trace-every`` epochs), to show when and how fast it leaves its start.

    python lab/studies/paper001_fo_variance.py --dataset vehicle --splits 0 1 --jobs 2 \
        --json lab/pages/records/papers/probes/001_fo_variance.json
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from typing import Any

import numpy as np

GRID = (0.0, 1e-4, 1e-3, 0.01, 0.05, 0.1, 0.25, 0.5)
# (injected level, arm): arm is "learned:<start>" or "given:<value>"; "given:level" is the injected level.
ARMS = {0.0: ("learned:0.01", "given:0.1"),
        0.25: ("learned:0.01", "learned:0.1", "given:0.1", "given:level")}


def _unit(dataset: str, split_index: int, level: float, arm: str, epochs: int, trace_every: int) -> dict[str, Any]:
    """Train one NIMGP-FO and measure the ELBO, test NLL and gradient around its fitted state."""
    for var in ("OMP_NUM_THREADS", "TF_NUM_INTRAOP_THREADS", "TF_NUM_INTEROP_THREADS"):
        os.environ[var] = "1"
    import tensorflow as tf

    from gpal import NoisyGPClassifier
    from gpal.evaluation.metrics import error_rate, negative_log_likelihood
    from gpal.models.input_noise import FirstOrder
    from shared import learned_variance_start, uci_split

    train, test, unit_seed, clean_scale = uci_split(dataset, split_index, level)
    kind, value = arm.split(":")
    kwargs = dict(input_noise="first_order", likelihood="robustmax", kernel="se_ard_plus_noise",
                  num_inducing=min(100, int(0.05 * train.n_samples)), batch_size=50, epochs=epochs,
                  learning_rate=1e-3, likelihood_options={"epsilon": 1e-3, "learn_epsilon": False},
                  random_state=unit_seed)
    X_var = X_var_test = None
    built: list[Any] = []
    trace: list[tuple[int, float, np.ndarray]] = []

    def record(epoch: int, loss: float) -> None:  # epoch counts from 0: the trace names epochs completed
        done = epoch + 1
        if built and (done == 1 or done % trace_every == 0 or done == epochs):
            trace.append((done, loss, built[-1].noise_variance.learned.numpy().copy()))

    if kind == "learned":
        kwargs["noise_variance"] = "learned"
        starting = learned_variance_start(float(value), built)
    else:
        kwargs["noise_variance"] = "known"
        given = level if value == "level" else float(value)
        X_var = np.broadcast_to(given * clean_scale ** 2, train.X.shape).copy()
        X_var_test = np.broadcast_to(given * clean_scale ** 2, test.X.shape).copy()
        starting = contextlib.nullcontext()
    t0 = time.perf_counter()
    with starting:
        clf = NoisyGPClassifier(**kwargs).fit(train.X, train.y, X_var=X_var, callback=record)
    seconds = time.perf_counter() - t0
    proba = clf.predict_proba(test.X, X_var=X_var_test)
    model = clf.model_
    Xs = tf.constant(clf.standardizer_.transform_arrays(train.X)[0])
    Xt = tf.constant(clf.standardizer_.transform_arrays(test.X)[0])
    Ytrain = tf.constant(np.searchsorted(clf.classes_, train.y))
    ytest = np.searchsorted(clf.classes_, test.y)
    # Model units: the estimator standardises the noisy training rows, so a variance v in the
    # clean-standardised units of the paper is v (s_clean / s_noisy)^2 here.
    to_model = (clean_scale / clf.standardizer_.scale) ** 2
    fo = FirstOrder()

    def elbo(V):
        Fmu, Fvar = fo._marginals(model.gp, Xs, V)
        return float(tf.reduce_sum(model.likelihood.variational_expectations(Fmu, Fvar, Ytrain)) - model.gp.kl())

    def test_nll(V):
        Fmu, Fvar = fo._marginals(model.gp, Xt, V)
        return negative_log_likelihood(ytest, model.likelihood.predict_proba(Fmu, Fvar).numpy())

    def shared(v, X):  # V in the paper's units, the same for every feature, as model-unit rows
        return tf.constant(np.broadcast_to(v * to_model, X.shape).copy())

    def grad_check(v):
        log_v = tf.Variable(np.log(v))
        with tf.GradientTape() as tape:
            Fmu, Fvar = fo._marginals(model.gp, Xs, tf.exp(log_v) * shared(1.0, Xs))
            value = tf.reduce_sum(model.likelihood.variational_expectations(Fmu, Fvar, Ytrain)) - model.gp.kl()
        h = 1e-4
        fd = (elbo(shared(v * np.exp(h), Xs)) - elbo(shared(v * np.exp(-h), Xs))) / (2 * h)
        return {"v": v, "autodiff": float(tape.gradient(value, log_v)), "finite_difference": fd}

    learned = (model.noise_variance.learned.numpy() / to_model).tolist() if kind == "learned" else None
    # The trace read the model's units; the paper's are the clean-standardised ones.
    trace_rows = [{"epoch": epoch, "loss": loss, "median": float(np.median(v / to_model)),
                   "min": float(np.min(v / to_model)), "max": float(np.max(v / to_model))} for epoch, loss, v in trace]
    train_proba = clf.predict_proba(train.X, X_var=X_var)
    return {
        "dataset": dataset, "split": split_index, "level": level, "arm": arm, "epochs": epochs,
        "n_train": int(train.n_samples), "n_test": int(test.n_samples), "seconds": round(seconds, 1),
        "test_nll": negative_log_likelihood(test.y, proba), "test_error": error_rate(test.y, proba),
        "train_nll": negative_log_likelihood(train.y, train_proba), "train_error": error_rate(train.y, train_proba),
        "learned_variance": learned,
        "learned_variance_median": None if learned is None else float(np.median(learned)),
        "profile": [{"v": v, "train_elbo": elbo(shared(v, Xs)), "test_nll": test_nll(shared(v, Xt))} for v in GRID],
        "d_elbo_d_log_v": [grad_check(v) for v in (0.01, 0.1)],
        "variance_trace": trace_rows or None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dataset", default="vehicle")
    parser.add_argument("--splits", type=int, nargs="+", default=[0, 1])
    parser.add_argument("--levels", type=float, nargs="+", default=sorted(ARMS, reverse=True))
    parser.add_argument("--epochs", type=int, default=1000)
    parser.add_argument("--trace-every", type=int, default=10)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    bad = [level for level in args.levels if level not in ARMS]
    if bad:
        raise SystemExit(f"--levels: no arms defined for {bad}; choose from {sorted(ARMS)}")
    if args.trace_every < 1:
        raise SystemExit(f"--trace-every: the epochs between trace points must be >= 1; got {args.trace_every}")
    units = [(args.dataset, k, level, arm, args.epochs, args.trace_every) for level in args.levels for k in args.splits
             for arm in ARMS[level]]
    with ProcessPoolExecutor(args.jobs, mp_context=get_context("spawn")) as pool:
        rows = []
        for row in pool.map(_unit, *zip(*units)):
            print({k: row[k] for k in ("split", "level", "arm", "test_nll", "learned_variance_median", "seconds")},
                  flush=True)
            rows.append(row)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    record = {"workflow": "lab/studies/fo_variance.yaml",
              "command": "python lab/studies/paper001_fo_variance.py " + " ".join(
                  f"--{k.replace('_', '-')} {' '.join(map(str, v)) if isinstance(v, list) else v}"
                  for k, v in vars(args).items() if v is not None),
              "commit": commit, "grid": list(GRID), "units": rows}
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(record, fh, indent=1)


if __name__ == "__main__":
    main()

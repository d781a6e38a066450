#!/usr/bin/env python
"""How long must a warm refit after one query be? (the waveform active-learning study, issue 12)

On one repetition of the waveform workflow's sets (100 initial, 400 pool, 500 test,
injected input-noise variance ``--noise``): fit each method with ``--epochs`` epochs
at ``--learning-rate``, add the first pool source, and refit warm-started for each of
``--refits`` epochs (one after another, as the loop does), printing the test NLL and
error, the wall time of the refit and of a pool prediction, and the first and last
minibatch loss.  A refit is long enough when longer ones no longer lower the test NLL.

    python benchmarks/bench_al_refit_length.py                      # the study's setting
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np


def _test_scores(estimator, test) -> tuple[float, float]:
    proba = estimator.predict_proba(test.X, test.X_var)
    p_true = np.clip(proba[np.arange(len(proba)), test.y], 1e-12, None)
    return float(-np.mean(np.log(p_true))), float(np.mean(proba.argmax(axis=1) != test.y))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--methods", default="MGP,NIMGP-NN")
    parser.add_argument("--noise", type=float, default=0.5)
    parser.add_argument("--epochs", type=int, default=1000, help="initial fit")
    parser.add_argument("--learning-rate", type=float, default=1e-3)
    parser.add_argument("--refits", default="20,50,100,300", help="epochs of the successive warm refits")
    parser.add_argument("--n-samples", type=int, default=100, help="input draws at prediction")
    args = parser.parse_args()

    from gpal.estimators.noisy_gp import NoisyGPClassifier
    from gpal.workflows import load_workflow
    from gpal.workflows.active_learning import make_sets
    from gpal.workflows.methods import classifier_params

    yaml = Path(__file__).resolve().parents[1] / "workflows" / "waveform_active_learning.yaml"
    config = load_workflow(yaml, [f"training.epochs={args.epochs}", f"training.learning_rate={args.learning_rate}",
                                  f"training.n_samples={args.n_samples}"]).config
    data = {**config["data"], "noise_levels": [args.noise]}
    initial, pool, test = make_sets(config["seed"], 0, args.noise, data)
    X = np.vstack([initial.X, pool.X[:1]])
    X_var = np.vstack([initial.X_var, pool.X_var[:1]])
    y = np.r_[initial.y, pool.y[:1]]
    methods = args.methods.split(",")
    params = classifier_params(methods, config["training"], data["n_initial"])
    for method in methods:
        estimator = NoisyGPClassifier(**params[method], random_state=1)
        start = time.perf_counter()
        estimator.fit(initial.X, initial.y, initial.X_var)
        nll, error = _test_scores(estimator, test)
        print(f"{method}, noise {args.noise:g}: initial fit {args.epochs} epochs at lr {args.learning_rate:g}, "
              f"{time.perf_counter() - start:.1f} s; test NLL {nll:.4f}, error {error:.3f}")
        for epochs in map(int, args.refits.split(",")):
            losses: list[float] = []
            estimator.set_params(warm_start=True, epochs=epochs)
            start = time.perf_counter()
            estimator.fit(X, y, X_var, callback=lambda epoch, loss: losses.append(loss))
            refit = time.perf_counter() - start
            start = time.perf_counter()
            estimator.predict_proba(pool.X, pool.X_var)
            predict = time.perf_counter() - start
            nll, error = _test_scores(estimator, test)
            print(f"  + {epochs:4d} warm epochs: {refit:.2f} s (pool prediction {predict:.2f} s); test NLL {nll:.4f}, "
                  f"error {error:.3f}; minibatch loss {losses[0]:.2f} -> {losses[-1]:.2f}")


if __name__ == "__main__":
    main()

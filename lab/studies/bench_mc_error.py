#!/usr/bin/env python
"""Monte Carlo error of noisy-input prediction: latent draws spread over the input draws (gpal 0.3) against
the full set of latent draws at every input draw (before), on one fitted NIMGP.

Both estimate the same probabilities; this measures how far each lands from it.  For ``--repeats``
seeds (the input draws' seed and the likelihood's seed both change) it predicts ``--rows`` sources
with each estimator and reports, per estimator, the median over sources and classes of the standard
deviation over seeds (the true Monte Carlo error), the median reported ``p_mc_se``, their ratio, the
mean absolute difference of the two estimators' seed-averaged probabilities, and the time per source.

    python lab/studies/bench_mc_error.py

Its table is kept in ``lab/studies/records/mc_error.json``; ``--json`` also writes every measure and setting.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

from gpal.files import write_json_atomic
from shared import keep_printed, synthetic_problem


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--d", type=int, default=16)
    p.add_argument("--classes", type=int, default=3)
    p.add_argument("--train-n", type=int, default=600)
    p.add_argument("--epochs", type=int, default=50)
    p.add_argument("--rows", type=int, default=300)
    p.add_argument("--samples", type=int, default=300, help="input draws per source (n_samples)")
    p.add_argument("--repeats", type=int, default=20)
    p.add_argument("--json", default=None)
    args = p.parse_args(argv)
    import tensorflow as tf

    from gpal import NoisyGPClassifier
    from gpal.models.likelihoods.base import Likelihood

    X, X_var, y = synthetic_problem(args.train_n + args.rows, args.d, args.classes, 0)
    clf = NoisyGPClassifier(input_noise="latent", num_inducing=50, epochs=args.epochs, n_samples=args.samples,
                            random_state=0).fit(X[: args.train_n], y[: args.train_n], X_var=X_var[: args.train_n])
    model, lik = clf.model_, clf.model_.likelihood
    A, B = clf._inputs(X[args.train_n :], X_var[args.train_n :])
    A, B = tf.constant(A), tf.constant(B)

    def estimate(spread: bool, seed: int) -> tuple[np.ndarray, np.ndarray]:
        lik.seed = seed  # read when traced: a fresh function per call
        per_draw = lik.predict_proba_per_draw if spread else lambda m, v, s: Likelihood._predict_proba_per_draw(lik, m, v, s)
        dtype = tf.float32 if spread else tf.float64

        def fn(a, b):
            strategy = model.strategy
            saved, strategy.prediction_dtype = strategy.prediction_dtype, dtype
            try:
                call_seed = tf.constant([seed, 1], tf.int64)
                Fmu, Fvar = strategy.predictive_marginals(model.gp, a, model._V(b), call_seed, args.samples)
            finally:
                strategy.prediction_dtype = saved
            return per_draw(Fmu, Fvar, tf.random.experimental.stateless_fold_in(call_seed, -1))

        draws = tf.function(fn, autograph=False)(A, B).numpy()
        return draws.mean(0), draws.std(0, ddof=1) / np.sqrt(args.samples)

    out: dict[str, Any] = {"settings": vars(args), "estimators": {}}
    means = {}
    for name, spread in (("full latent draws at every input draw (before)", False),
                         ("latent draws spread over input draws (0.3)", True)):
        t0 = time.perf_counter()
        runs = [estimate(spread, seed) for seed in range(args.repeats)]
        seconds = (time.perf_counter() - t0) / args.repeats
        p, se = np.stack([r[0] for r in runs]), np.stack([r[1] for r in runs])
        true_error = p.std(0, ddof=1)
        means[name] = p.mean(0)
        out["estimators"][name] = {
            "median_true_mc_error": float(np.median(true_error)),
            "median_reported_se": float(np.median(se)),
            "reported_over_true": float(np.median(se.mean(0) / true_error)),
            "seconds_per_source_incl_tracing": seconds / args.rows,
        }
    a, b = means.values()
    out["mean_abs_difference_of_seed_means"] = float(np.abs(a - b).mean())
    lik.seed = 0
    with keep_printed("mc_error", __file__, argv):  # docs/methods.md cites the reported / true ratio
        _print_table(out, args.repeats)
    if args.json:
        write_json_atomic(args.json, out)
    return out


def _print_table(out: dict[str, Any], repeats: int) -> None:
    print("| estimator | true MC error (median sd over seeds) | reported p_mc_se (median) | reported / true |")
    print("|---|---:|---:|---:|")
    for name, r in out["estimators"].items():
        print(f"| {name} | {r['median_true_mc_error']:.4f} | {r['median_reported_se']:.4f} | {r['reported_over_true']:.2f} |")
    print(f"mean |difference| of the two estimators' {repeats}-seed means: {out['mean_abs_difference_of_seed_means']:.4f}")


if __name__ == "__main__":
    main()

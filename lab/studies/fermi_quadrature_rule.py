#!/usr/bin/env python
"""Does the robust-max predictive's quadrature rule move the Fermi test NLL?  (Table 9 account)

The paper's code predicts with GPflow's RobustMax, a 20-point Gauss-Hermite rule on f_y; gpal
integrates with composite Gauss-Legendre panels at every class's step (accurate to ~1e-8 at any
variance ratio, where Gauss-Hermite was off by up to 0.1 at ratios >= 40: docs/methods.md,
"Likelihoods and the other model families").  This fits MGP on the first ``--splits`` splits of
gpal/workflows/files/fermi_4fgl.yaml (batched, the workflow's seeds) and scores the same fitted latent
marginals on each split's test sources with both rules.

    .venv/bin/python lab/studies/fermi_quadrature_rule.py --splits 16
"""

from __future__ import annotations

import argparse
import math
import sys

import numpy as np
import tensorflow as tf

from gpal import NoisyGPClassifier
from gpal.estimators.batched import fit_batched
from gpal.evaluation.metrics import negative_log_likelihood
from gpal.models.quadrature import hermite_rule, normal_cdf
from gpal.runs.units import derived_seed
from gpal.workflows import load_workflow
from gpal.workflows.shipped import resolve_workflow
from gpal.workflows.methods import classifier_params
from gpal.workflows.splits import dataset_and_training_size


def hermite_argmax(Fmu: np.ndarray, Fvar: np.ndarray, points: int = 20) -> np.ndarray:
    """P(f_c is the largest) for every c by Gauss-Hermite on f_c alone, as GPflow's RobustMax computes it."""
    x, w = (t.numpy() for t in hermite_rule(points))
    sd = np.sqrt(Fvar)
    out = np.empty_like(Fmu)
    for c in range(Fmu.shape[1]):
        f = Fmu[:, c, None] + sd[:, c, None] * x  # (N, K)
        z = (f[:, None, :] - Fmu[:, :, None]) / sd[:, :, None]
        cdf = normal_cdf(tf.constant(z)).numpy()
        cdf[:, c, :] = 1.0
        out[:, c] = np.prod(cdf, axis=1) @ w
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--splits", type=int, default=16)
    args = p.parse_args(argv)
    config = load_workflow(resolve_workflow("fermi_4fgl"), overrides=["methods=[MGP]"]).config
    dataset, n_train = dataset_and_training_size(config)
    params = classifier_params(["MGP"], config["training"], n_train)["MGP"]
    splits = list(dataset.repeated_splits(args.splits, config["protocol"]["test_size"], config["seed"]))
    ests = [NoisyGPClassifier(**{**params, "random_state": derived_seed(config["seed"], s.index)}) for s in splits]
    fit_batched(ests, [dataset.subset(s.train) for s in splits])
    eps = float(params["epsilon"])
    rows = []
    for est, split in zip(ests, splits):
        test = dataset.subset(split.test)
        X, _ = est.standardizer_.transform_arrays(test.X, test.X_var)
        Fmu, Fvar = (t.numpy() for t in est.model_.gp.predictive_marginals(tf.constant(X)))
        C = Fmu.shape[1]
        gpal_p = est.predict_proba(test.X)
        P = hermite_argmax(Fmu, Fvar)
        P = P / P.sum(axis=1, keepdims=True)
        hermite_p = (1 - eps) * P + eps / (C - 1) * (1 - P)
        rows.append((negative_log_likelihood(test.y, gpal_p), negative_log_likelihood(test.y, hermite_p)))
    rows = np.array(rows)
    diff = rows[:, 1] - rows[:, 0]
    print(f"MGP, {len(rows)} splits: test NLL gpal rule {rows[:, 0].mean():.3f}, Gauss-Hermite-20 {rows[:, 1].mean():.3f}, "
          f"paired difference {diff.mean():+.3f} ± {diff.std(ddof=1) / math.sqrt(len(diff)):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

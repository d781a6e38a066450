#!/usr/bin/env python
"""NIMGP prediction on the real catalog: all of 4FGL-DR4's bll / fsrq / pulsar and unassociated + bcu sources.

Fits a NIMGP (softmax, M = 50, ``--epochs``) on the labelled sources with the 16 ``fermi_dr4``
features, then (a) times ``predict_proba(..., return_mc_error=True)`` over every labelled and
candidate source (median of ``--repeats``), and (b) measures, on the fitted model, how far the
float32 prediction path's latent variances are from float64 in the rotated whitened form that
gpal uses and in the k^T Q k form it replaced (both relative to the float64 variance).

    python benchmarks/bench_dr4_prediction.py --json runs/bench/bench_dr4_prediction.json
"""

from __future__ import annotations

import argparse
import time
import warnings
from typing import Any

import numpy as np

from gpal.files import write_json_atomic


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--epochs", type=int, default=100)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--json", default=None)
    args = p.parse_args(argv)
    import tensorflow as tf

    from gpal import NoisyGPClassifier
    from gpal.catalogs import load_catalog
    from gpal.models.sparse import predictive_factors

    catalog = load_catalog("4FGL-DR4")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the one source with a NaN spectral index is dropped, as the main job does
        labelled = catalog.dataset(classes=["bll", "fsrq", "pulsar"], merge={"pulsar": ["psr", "msp"]},
                                   features="fermi_dr4")
        pool = catalog.pool(select=["unassociated", "bcu"], features="fermi_dr4")
    t0 = time.perf_counter()
    clf = NoisyGPClassifier(input_noise="latent", num_inducing=50, epochs=args.epochs, random_state=0).fit(labelled)
    fit_seconds = time.perf_counter() - t0
    X = np.concatenate([labelled.X, pool.X])
    X_var = np.concatenate([labelled.X_var, pool.X_var])
    clf.predict_proba(X[:10], X_var[:10])  # tracing
    times, se = [], None
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        _, se = clf.predict_proba(X, X_var, return_mc_error=True)
        times.append(time.perf_counter() - t0)

    gp = clf.model_.gp
    A, _ = clf._inputs(X, X_var)
    inputs = tf.constant(A)
    _, var64 = gp.predictive_marginals(inputs)
    _, var32 = gp.predictive_marginals(inputs, tf.float32)
    Kxz, kxx = gp._predictive_kernel_blocks(inputs, tf.float64)
    L = gp.cholesky_Kzz()
    eye = tf.eye(gp.num_inducing, batch_shape=[gp.num_latent], dtype=tf.float64)
    L_inv = tf.linalg.triangular_solve(L, eye)
    Q = tf.matmul(L_inv, tf.matmul(tf.matmul(gp.q_sqrt, gp.q_sqrt, transpose_b=True) - eye, L_inv), transpose_a=True)
    K32 = tf.cast(Kxz, tf.float32)
    q_form = tf.cast(kxx, tf.float32) + tf.reduce_sum(tf.matmul(K32, tf.cast(Q, tf.float32)) * K32, -1)
    factors = predictive_factors(L, tf.transpose(gp.q_mu), gp.q_sqrt)
    v64 = var64.numpy()
    out = {
        "settings": vars(args), "sources": int(len(X)), "fit_seconds": fit_seconds,
        "predict_seconds": times, "median_seconds": float(np.median(times)),
        "sources_per_s": float(len(X) / np.median(times)), "median_mc_se": float(np.median(se)),
        "condition_Kzz": [float(np.linalg.cond(l @ l.T)) for l in L.numpy()],
        "max_abs_Q": float(np.abs(Q.numpy()).max()), "max_abs_W": float(np.abs(factors.W.numpy()).max()),
        "float32_relative_variance_error": {
            "rotated whitened (gpal)": float((np.abs(var32.numpy() - v64) / v64).max()),
            "k^T Q k": float((np.abs(q_form.numpy().T - v64) / v64).max()),
        },
    }
    print(f"{out['sources']} sources: {out['median_seconds']:.2f} s (median of {args.repeats}), "
          f"{out['sources_per_s']:,.0f} sources/s, median p_mc_se {out['median_mc_se']:.4f}; fit {fit_seconds:.0f} s")
    print(f"K_zz condition numbers {[f'{c:.1e}' for c in out['condition_Kzz']]}, max |Q| {out['max_abs_Q']:.0f}, "
          f"max |W| {out['max_abs_W']:.0f}")
    for k, v in out["float32_relative_variance_error"].items():
        print(f"float32 latent variances, {k}: largest relative error {v:.1e}")
    if args.json:
        write_json_atomic(args.json, out)
    return out


if __name__ == "__main__":
    main()

"""The arithmetic of one SVI step: its flops by term and the time this machine's GEMMs take for the same shapes.

Flops of one step (forward; backward counted as twice the forward, the usual rule for matrix
products), per latent function c (C of them), batch B, M inducing points, d features:
K_zz 2 M^2 d, chol(K_zz) M^3 / 3, K_zx 2 M B d, A = L^-1 K_zx M^2 B, S^T A 2 M^2 B, A^T m 2 M B;
and for a population prior of K mixture components over the batch's sampled inputs 2 K d^2 B.
The elementwise work (kernel exponentials, quadrature of the likelihood, Adam) is left out:
it is O(M B + M^2) per latent, small beside these.
"""

from __future__ import annotations

import time

import numpy as np


def step_flops(n_latent: int, B: int, M: int, d: int, K: int) -> dict[str, float]:
    """Forward flops of one step by term; ``total`` counts backward as 2x forward."""
    terms = {
        "K_zz": 2 * M * M * d * n_latent,
        "chol(K_zz)": M**3 / 3 * n_latent,
        "K_zx": 2 * M * B * d * n_latent,
        "L^-1 K_zx": M * M * B * n_latent,
        "S^T A": 2 * M * M * B * n_latent,
        "A^T m": 2 * M * B * n_latent,
        "prior (mixture)": 2 * K * d * d * B,
    }
    terms["forward"] = sum(terms.values())
    terms["total"] = 3 * terms["forward"]
    return terms


def gemm_seconds(n_latent: int, B: int, M: int, d: int, K: int, repeats: int = 200) -> float:
    """CPU seconds of a step's matrix products as NumPy calls of the same shapes on one core (forward + 2x backward)."""
    import scipy.linalg as sl
    from threadpoolctl import threadpool_limits

    rng = np.random.default_rng(0)
    Zd = rng.normal(size=(n_latent, M, d))
    Xd = rng.normal(size=(n_latent, d, B))
    Kzz = np.eye(M)[None] * M + rng.normal(size=(n_latent, M, M)) * 0.01
    Kzz = Kzz @ np.swapaxes(Kzz, 1, 2)
    S = np.tril(rng.normal(size=(n_latent, M, M)))
    Kzx = rng.normal(size=(n_latent, M, B))
    m = rng.normal(size=(n_latent, M, 1))
    Pd = rng.normal(size=(K, d, d))
    Xs = rng.normal(size=(K, d, B))

    def forward() -> None:
        Zd @ np.swapaxes(Zd, 1, 2)
        Zd @ Xd
        for c in range(n_latent):
            L = np.linalg.cholesky(Kzz[c])
            sl.solve_triangular(L, Kzx[c], lower=True, check_finite=False)
        np.swapaxes(S, 1, 2) @ Kzx
        np.swapaxes(Kzx, 1, 2) @ m
        Pd @ Xs

    times = []
    with threadpool_limits(limits=1):  # matrices this small are one core's work; threads only wait on each other
        for _ in range(5):
            t0 = time.process_time()
            for _ in range(repeats):
                forward(); forward(); forward()  # noqa: E702  forward + backward (2x)
            times.append((time.process_time() - t0) / repeats)
    return float(np.median(times))


def large_gemm_rate(n: int = 1024) -> float:
    """Flops per CPU second of one n x n float64 GEMM on one core (median of 5): this machine's arithmetic rate."""
    from threadpoolctl import threadpool_limits

    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(n, n)), rng.normal(size=(n, n))
    times = []
    with threadpool_limits(limits=1):
        a @ b
        for _ in range(5):
            t0 = time.process_time()
            a @ b
            times.append(time.process_time() - t0)
    return 2 * n**3 / float(np.median(times))

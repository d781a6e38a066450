"""The whitened sparse-GP core every model family builds on.

Each family (the noisy-input SVGP, the Dirichlet GP, the logistic bounds, the augmented
logistic-softmax GP) approximates a latent f with M inducing values u = f(Z) in the
whitened frame u = L v, L = chol(K_zz + jitter I), p(v) = N(0, I).  They differ only in
how q(v) is found; the algebra below is the same for all of them and is written once here:

* ``inducing_variable``: the inducing inputs Z (M, D) as a variable, checked once;
* ``cholesky_with_jitter``: L = chol(K_zz + jitter I), batched over leading dimensions;
* ``project`` / ``whiten``: A = L^-1 K_zx and the Nystrom residual variances
  diag(K_xx) - colsum(A^2) = diag(K_xx - K_xz K_zz^-1 K_zx), held in a ``Projection``;
* ``whitened_marginals`` / ``marginal_variance``: q(f(x_i)) = N(a_i^T m, resid_i + |S^T a_i|^2)
  for q(v) = N(m, S S^T);
* ``whitened_kl``: KL(N(m, S S^T) || N(0, I)) from any square root S of the covariance (a
  precision P = Lp Lp^T enters as S = Lp^-T), which equals KL(q(u) || p(u));
* ``predictive_factors`` / ``factored_marginals``: the same marginals with q(v) folded in
  once, S S^T - I = U diag(D) U^T and W = U^T L^-1, so that predicting at many inputs costs
  one matrix product a = W k_zx per input (mean (U^T m)^T a, variance k_xx + sum_i D_i a_i^2)
  instead of a triangular solve, accurate enough to run in float32 (see ``PredictiveFactors``).

Everything is float64 TensorFlow unless a dtype is asked for, differentiable, and usable
inside ``tf.function``.
"""

from __future__ import annotations

from typing import NamedTuple

import gpflow
import numpy as np
import tensorflow as tf

__all__ = [
    "DEFAULT_JITTER",
    "PredictiveFactors",
    "Projection",
    "cholesky_with_jitter",
    "factored_marginals",
    "inducing_variable",
    "marginal_variance",
    "predictive_factors",
    "project",
    "whiten",
    "whitened_kl",
    "whitened_marginals",
]

# Every family's default jitter on K_zz's diagonal (kernel variances are of order 1).
DEFAULT_JITTER = 1e-6


class Projection(NamedTuple):
    """What a family needs of kernel and Z at inputs X, batched over any leading dimensions.

    A = L^-1 K_zx (..., M, N); resid = diag(K_xx) - colsum(A^2) = diag(K_xx - Q_xx) (..., N),
    the prior variance the inducing values do not explain; L = chol(K_zz + jitter I) (..., M, M).
    """

    A: tf.Tensor
    resid: tf.Tensor
    L: tf.Tensor


def inducing_variable(Z: np.ndarray) -> tf.Variable:
    """Z as a float64 ``tf.Variable`` (trainable), after checking it is a non-empty (M, D) array."""
    Z = np.asarray(Z, dtype=np.float64)
    if Z.ndim != 2 or Z.shape[0] < 1:
        raise ValueError(f"Z must be a non-empty (M, d) array of inducing inputs; got shape {Z.shape}")
    return tf.Variable(Z, name="inducing_points")


def cholesky_with_jitter(Kzz: tf.Tensor, jitter: float | tf.Tensor) -> tf.Tensor:
    """chol(K_zz + jitter I) for K_zz (..., M, M): jitter on the diagonal only, where it keeps K_zz positive definite."""
    return tf.linalg.cholesky(Kzz + jitter * tf.eye(tf.shape(Kzz)[-1], dtype=Kzz.dtype))


def whiten(L: tf.Tensor, Kzx: tf.Tensor, kxx: tf.Tensor) -> Projection:
    """The projection for a given Cholesky factor L (..., M, M), K_zx (..., M, N) and diag K_xx (..., N).

    Separate from ``project`` for models with a kernel per latent function (stacked factors)
    and for fitted posteriors that keep L rather than recompute it.
    """
    A = tf.linalg.triangular_solve(L, Kzx, lower=True)
    return Projection(A, kxx - tf.reduce_sum(tf.square(A), axis=-2), L)


def project(kernel: gpflow.kernels.Kernel, Z: tf.Tensor, X: tf.Tensor, jitter: float | tf.Tensor) -> Projection:
    """A = L^-1 K_zx, the residual variances and L = chol(K_zz + jitter I) for one kernel, Z (M, D) and X (N, D)."""
    L = cholesky_with_jitter(kernel(Z), jitter)
    return whiten(L, kernel(Z, X), kernel(X, full_cov=False))


def marginal_variance(proj: Projection, SA: tf.Tensor) -> tf.Tensor:
    """Var q(f_i) = resid_i + |S^T a_i|^2 given SA = S^T A (..., M, N), however S^T A was formed (product or solve)."""
    return proj.resid + tf.reduce_sum(tf.square(SA), axis=-2)


def whitened_marginals(
    proj: Projection, mean: tf.Tensor, sqrt: tf.Tensor, *, sqrt_transposed: bool = False
) -> tuple[tf.Tensor, tf.Tensor]:
    """Means a_i^T m and variances resid_i + |S^T a_i|^2 of q(f(x_i)) for q(v) = N(m, S S^T), each (..., N).

    ``mean`` (..., M) and ``sqrt`` (..., M, M) broadcast against ``proj.A`` (..., M, N), so one
    projection can serve several q(v).  With ``sqrt_transposed`` the factor given is S^T (e.g.
    chol(P)^-1 for a precision P = chol(P) chol(P)^T, whose covariance is S S^T with S = chol(P)^-T).
    """
    m = tf.linalg.matvec(proj.A, mean, transpose_a=True)
    SA = tf.linalg.matmul(sqrt, proj.A, transpose_a=not sqrt_transposed)
    return m, marginal_variance(proj, SA)


def whitened_kl(mean: tf.Tensor, sqrt: tf.Tensor, *, triangular: bool = True) -> tf.Tensor:
    """sum over the batch of KL(N(m, S S^T) || N(0, I)) = (|S|_F^2 + |m|^2 - M) / 2 - log|det S|.

    ``mean`` (..., M), ``sqrt`` (..., M, M) any square root S of the covariance, or its transpose:
    neither the Frobenius norm nor |det S| changes, so a precision P = Lp Lp^T enters as
    ``sqrt = Lp^-1``.  ``triangular`` reads log|det S| off the diagonal; otherwise it comes
    from an LU factorisation (``slogdet``).  In the whitened frame this equals KL(q(u) || p(u)).
    """
    M = tf.cast(tf.shape(mean)[-1], mean.dtype)
    if triangular:
        logdet = tf.reduce_sum(tf.math.log(tf.abs(tf.linalg.diag_part(sqrt))), axis=-1)
    else:
        logdet = tf.linalg.slogdet(sqrt)[1]
    trace = tf.reduce_sum(tf.square(sqrt), axis=[-2, -1])
    return tf.reduce_sum(0.5 * (trace + tf.reduce_sum(tf.square(mean), axis=-1) - M) - logdet)


class PredictiveFactors(NamedTuple):
    """q(v) = N(m, S S^T) folded into the prior in rotated whitened coordinates.

    With S S^T - I = U diag(D) U^T and W = U^T L^-1 (..., M, M), a = W k_zx is the whitened
    projection L^-1 k_zx turned by U, so q(f(x)) = N(mean^T a, k_xx + sum_i D_i a_i^2) with
    mean = U^T m (..., M) and D (..., M).  Why this form rather than Q = L^-T (S S^T - I) L^-1:
    |a|^2 <= k_xx whatever the conditioning of K_zz, so a float32 product keeps the variance
    to ~1e-5 of k_xx, where k_zx^T Q k_zx cancels entries of size |K_zz^-1| (relative errors of
    3e-3 on a fitted 4FGL-DR4 model, 5e-5 in this form).  The flops are those of Q.
    """

    W: tf.Tensor
    mean: tf.Tensor
    D: tf.Tensor


def predictive_factors(L: tf.Tensor, mean: tf.Tensor, sqrt: tf.Tensor) -> PredictiveFactors:
    """W, U^T m and D for L (..., M, M), q(v)'s ``mean`` (..., M) and lower-triangular ``sqrt`` S (..., M, M).

    S S^T - I is formed before its eigendecomposition, so directions where q(v) is still the
    prior get D_i = 0 exactly rather than the difference of two large numbers.
    """
    eye = tf.eye(tf.shape(L)[-1], batch_shape=tf.shape(L)[:-2], dtype=L.dtype)
    D, U = tf.linalg.eigh(tf.linalg.matmul(sqrt, sqrt, transpose_b=True) - eye)
    W = tf.linalg.matmul(U, tf.linalg.triangular_solve(L, eye, lower=True), transpose_a=True)
    return PredictiveFactors(W, tf.linalg.matvec(U, mean, transpose_a=True), D)


def factored_marginals(factors: PredictiveFactors, Kxz: tf.Tensor, kxx: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
    """Means and variances of q(f(x)) for K_xz (..., N, M) and diag K_xx (..., N); each (..., N).

    One matrix product a = K_xz W^T, then two weighted sums over its columns; computed in the
    dtype of ``Kxz`` (cast the factors first).
    """
    a = tf.linalg.matmul(Kxz, factors.W, transpose_b=True)  # (..., N, M)
    return tf.linalg.matvec(a, factors.mean), kxx + tf.linalg.matvec(tf.square(a), factors.D)

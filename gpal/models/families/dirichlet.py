"""Dirichlet-based GP classification (GPD, Milios et al. 2018: paper 003, sec. 4).

Labels become regression targets once, before any optimisation:

* one-hot y_i -> Dirichlet pseudo-counts alpha_i = y_i + alpha_eps (eq. 4), whose
  per-class Gamma(alpha_ic, 1) variables (eq. 5) are replaced by the lognormal with
  the same mean and variance (eq. 6): sigma2_ic = log(1/alpha_ic + 1) and
  y~_ic = log(alpha_ic) - sigma2_ic / 2;
* y~_ic = f_c(x_i) + N(0, sigma2_ic) (eq. 7): C heteroskedastic GP regressions that
  share one kernel, fitted by Titsias' collapsed bound with per-point, per-class noise
  (the optimal q(u) is closed form, so only the kernel and the inducing inputs are
  optimised, by L-BFGS-B);
* class probabilities E[softmax(f*)] under the Gaussian latent marginals (eq. 8), by
  Monte Carlo.

The paper's regression has a zero prior mean; its authors' code (dirichletGPC, ``src/evaluation.py``
lines 243-244 and 287) regresses y~ - m and adds m back at prediction, with
m_c = log(freq_c) + mean_ic(y~_ic - log freq_c) (`class_frequency_offset`): far from the data the
latent means return to m, whose softmax is the training class frequencies, where a zero mean gives
uniform probabilities.

First-order input noise (an extension; paper 003 has exact inputs): with
x_i = x~_i + e_i, e_i ~ N(0, diag V_i), f_c(x_i) ~ f_c(x~_i) + grad mu_c(x~_i)^T e_i,
so input noise adds Delta_ic = grad mu_c(x~_i)^T diag(V_i) grad mu_c(x~_i) to the
output noise.  The slope depends on the fit, so training alternates (the NIGP
scheme of McHutchon & Rasmussen 2011): fit with sigma2; then, ``rounds`` times,
compute Delta at the training inputs from the current posterior mean (held fixed)
and refit, warm-started, with noise sigma2 + Delta.  At prediction Delta at x~*
with V* is added to the latent variance.
"""

from __future__ import annotations

from typing import Sequence

import gpflow
import numpy as np
import tensorflow as tf
from check_shapes import check_shapes
from scipy.special import softmax

from gpal.models.input_noise import FirstOrder
from gpal.models.module_copy import module_copy
from gpal.models.sparse import DEFAULT_JITTER, Projection, marginal_variance, project, whiten

__all__ = [
    "DirichletPosterior",
    "HeteroskedasticSGPR",
    "class_frequency_offset",
    "collapsed_bound",
    "dirichlet_targets",
    "lognormal_moment_match",
    "mc_softmax",
]


# ------------------------------------------------------------ label transform
def lognormal_moment_match(alpha: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(mu, sigma2) of the lognormal with the mean and variance of Gamma(alpha, 1) (eq. 6).

    Gamma(alpha, 1) has mean = variance = alpha; Lognormal(mu, s2) has mean
    m = exp(mu + s2/2) and variance (exp(s2) - 1) m^2.  Equating both:
    alpha = (exp(s2) - 1) alpha^2  =>  s2 = log(1/alpha + 1), mu = log(alpha) - s2/2.
    """
    alpha = np.asarray(alpha, dtype=np.float64)
    if not np.all(alpha > 0):
        raise ValueError("Gamma shape parameters must be > 0")
    sigma2 = np.log1p(1.0 / alpha)
    return np.log(alpha) - sigma2 / 2.0, sigma2


def dirichlet_targets(codes: np.ndarray, num_classes: int, alpha_epsilon: float) -> tuple[np.ndarray, np.ndarray]:
    """Regression targets y~ (N, C) and their noise variances sigma2 (N, C) for integer labels."""
    if not alpha_epsilon > 0:
        raise ValueError(f"alpha_epsilon must be > 0; got {alpha_epsilon!r}")
    alpha = np.eye(num_classes)[np.asarray(codes, dtype=np.int64)] + float(alpha_epsilon)
    return lognormal_moment_match(alpha)


def class_frequency_offset(targets: np.ndarray, codes: np.ndarray, num_classes: int) -> np.ndarray:
    """The authors' per-class prior mean m (C,): log class frequencies, shifted so that y~ - m has mean zero.

    softmax(m) is the class frequencies (the shift is common to all classes and cancels), so a
    prediction far from the data, where the latent mean is m, gives the class prior.
    """
    freq = np.bincount(np.asarray(codes, dtype=np.int64), minlength=num_classes) / len(codes)
    if not np.all(freq > 0):
        raise ValueError(f"every class needs a training row for the class-frequency prior mean; frequencies {freq}")
    return np.log(freq) + np.mean(np.asarray(targets, dtype=np.float64) - np.log(freq))


# --------------------------------------------------------- collapsed algebra
def _factors(kernel, Z, X, noise, jitter) -> tuple[Projection, tf.Tensor, tf.Tensor]:
    """Algebra the bound and the posterior share.

    The projection (Lm = chol(K_ZZ + jitter I), A = Lm^-1 K_ZX (M, N), diag(K_XX - Q)); for
    every class c, As_c = A diag(1/sigma_c) and LB_c = chol(I + As_c As_c^T) (C, M, M).
    """
    proj = project(kernel, Z, X, jitter)
    As = proj.A[None] / tf.sqrt(tf.transpose(noise))[:, None, :]  # (C, M, N): A diag(sigma_c^-1)
    LB = tf.linalg.cholesky(tf.eye(tf.shape(Z)[0], dtype=Z.dtype) + tf.linalg.matmul(As, As, transpose_b=True))
    return proj, As, LB


@check_shapes("Z: [M, D]", "X: [N, D]", "Y: [N, C]", "noise: [N, C]", "return: []")
def collapsed_bound(kernel, Z: tf.Tensor, X: tf.Tensor, Y: tf.Tensor, noise: tf.Tensor, jitter: float) -> tf.Tensor:
    """Sum over classes of Titsias' bound with heteroskedastic noise Sigma_c = diag(sigma2_c):

        log N(y_c | 0, Q + Sigma_c) - 1/2 tr(Sigma_c^-1 (K_XX - Q)),   Q = K_XZ K_ZZ^-1 K_ZX.

    With B_c = I + A Sigma_c^-1 A^T (matrix determinant lemma and Woodbury),
    log|Q + Sigma_c| = log|Sigma_c| + log|B_c| and
    y^T (Q + Sigma_c)^-1 y = |Sigma_c^-1/2 y|^2 - |LB_c^-1 A Sigma_c^-1 y|^2.
    """
    proj, As, LB = _factors(kernel, Z, X, noise, jitter)
    r = tf.transpose(Y / tf.sqrt(noise))  # (C, N) = Sigma_c^-1/2 y_c
    v = tf.linalg.triangular_solve(LB, tf.linalg.matvec(As, r)[..., None], lower=True)[..., 0]  # (C, M)
    n = tf.cast(tf.shape(X)[0], X.dtype)
    C = tf.cast(tf.shape(Y)[1], X.dtype)
    return (
        -0.5 * n * C * np.log(2.0 * np.pi)
        - 0.5 * tf.reduce_sum(tf.math.log(noise))
        - tf.reduce_sum(tf.math.log(tf.linalg.diag_part(LB)))
        - 0.5 * tf.reduce_sum(tf.square(r))
        + 0.5 * tf.reduce_sum(tf.square(v))
        - 0.5 * tf.reduce_sum(proj.resid[:, None] / noise)  # tr(Sigma_c^-1 (K_XX - Q)), summed over c
    )


class DirichletPosterior(tf.Module):
    """The C latent posteriors q(f_c) of a fitted model: everything prediction needs, O(M^2 C).

    With the optimal q(u_c), mean_c(x) = m_c + k_xZ w_c, w_c = Lm^-T LB_c^-T LB_c^-1 A Sigma_c^-1 (y_c - m_c),
    and var_c(x) = k_xx - |Lm^-1 k_Zx|^2 + |LB_c^-1 Lm^-1 k_Zx|^2; the prior mean m (C,) is zero
    unless the fit used `class_frequency_offset`.
    """

    def __init__(self, kernel: gpflow.kernels.Kernel, Z: np.ndarray, Lm: np.ndarray, LB: np.ndarray, w: np.ndarray,
                 offset: np.ndarray | None = None):
        super().__init__(name="dirichlet_posterior")
        self.kernel = kernel
        self.Z = tf.constant(Z, dtype=tf.float64)  # (M, D)
        self.Lm = tf.constant(Lm, dtype=tf.float64)  # (M, M)
        self.LB = tf.constant(LB, dtype=tf.float64)  # (C, M, M)
        self.w = tf.constant(w, dtype=tf.float64)  # (M, C)
        self.offset = tf.constant(np.zeros(self.w.shape[1]) if offset is None else offset, dtype=tf.float64)  # (C,)

    @property
    def num_classes(self) -> int:
        return int(self.w.shape[1])

    def arrays(self) -> dict[str, np.ndarray]:
        """The posterior's matrices by name (the kernel's parameters are saved separately)."""
        return {"Z": self.Z.numpy(), "Lm": self.Lm.numpy(), "LB": self.LB.numpy(), "w": self.w.numpy(),
                "offset": self.offset.numpy()}

    @check_shapes("X: [N, D]", "return[0]: [N, C]", "return[1]: [N, C]")
    def predict_f(self, X: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
        """Means and variances of the latent marginals q(f_c(x_n)), each (N, C)."""
        Kzx = self.kernel(self.Z, X)
        proj = whiten(self.Lm, Kzx, self.kernel(X, full_cov=False))
        BA = tf.linalg.triangular_solve(self.LB, proj.A[None], lower=True)  # (C, M, N), batch broadcast
        return self._mean(X, Kzx), tf.transpose(marginal_variance(proj, BA))

    def _mean(self, X: tf.Tensor, Kzx: tf.Tensor | None = None) -> tf.Tensor:
        return self.offset + tf.linalg.matmul(self.kernel(self.Z, X) if Kzx is None else Kzx, self.w, transpose_a=True)

    @check_shapes("X: [N, D]", "return: [C, N, D]")
    def mean_gradients(self, X: tf.Tensor) -> tf.Tensor:
        """d mean_c(x_n) / d x_n for every class and point (mean_c at x_n depends on x_n alone)."""
        X = tf.convert_to_tensor(X, dtype=tf.float64)
        with tf.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
            tape.watch(X)
            mean = self._mean(X)
            totals = [tf.reduce_sum(mean[:, c]) for c in range(self.num_classes)]
        return tf.stack([tape.gradient(t, X) for t in totals])  # row n of d(sum_n mean_c)/dX is d mean_c(x_n)/dx_n

    @check_shapes("X: [N, D]", "V: [N, D]", "return: [N, C]")
    def extra_variance(self, X: tf.Tensor, V: tf.Tensor) -> tf.Tensor:
        """First-order output variance of input noise, grad mu_c^T diag(V_n) grad mu_c (the NIMGP-FO formula)."""
        return FirstOrder.extra_variance(tf.convert_to_tensor(V, dtype=tf.float64), self.mean_gradients(X))

    def predict(self, X: np.ndarray, V: np.ndarray | None = None, rows: int = 4096) -> tuple[np.ndarray, np.ndarray]:
        """Latent means and variances (N, C), ``rows`` at a time; with ``V`` the first-order variance is added."""
        means, variances = [], []
        for s in range(0, len(X), rows):
            Xb = tf.constant(X[s : s + rows], dtype=tf.float64)
            mean, var = self.predict_f(Xb)
            if V is not None:
                var = var + self.extra_variance(Xb, V[s : s + rows])
            means.append(mean.numpy())
            variances.append(var.numpy())
        C = self.num_classes
        return np.concatenate(means or [np.zeros((0, C))]), np.concatenate(variances or [np.zeros((0, C))])


class HeteroskedasticSGPR(gpflow.base.Module):
    """C sparse GP regressions on the columns of Y with per-point, per-class noise and one shared kernel.

    Only the kernel and the inducing inputs Z are trainable (Z held at its start with
    ``train_inducing=False``, as paper 003's authors do).  Targets and noise are
    non-trainable variables, so one traced objective serves every alpha_eps
    candidate and every first-order round: ``set_targets`` swaps them and ``reset``
    restores the trainable values the model was built with.
    """

    def __init__(
        self, kernel: gpflow.kernels.Kernel, Z: np.ndarray, X: np.ndarray, Y: np.ndarray, noise: np.ndarray,
        jitter: float = DEFAULT_JITTER, train_inducing: bool = True,
    ):
        super().__init__(name="heteroskedastic_sgpr")
        X = np.asarray(X, dtype=np.float64)
        self.kernel = kernel
        self.Z = gpflow.Parameter(np.asarray(Z, dtype=np.float64), name="inducing_points", trainable=bool(train_inducing))
        self.X = tf.constant(X)
        self.Y = tf.Variable(np.zeros_like(Y, dtype=np.float64), trainable=False, name="targets")
        self.noise = tf.Variable(np.ones_like(Y, dtype=np.float64), trainable=False, name="noise")
        self.jitter = float(jitter)
        self.set_targets(Y, noise)
        self._initial = [v.numpy() for v in self.trainable_variables]

    def set_targets(self, Y: np.ndarray, noise: np.ndarray) -> None:
        """New regression targets and noise variances, both (N, C)."""
        Y, noise = np.asarray(Y, dtype=np.float64), np.asarray(noise, dtype=np.float64)
        if Y.shape != noise.shape or Y.shape[0] != self.X.shape[0]:
            raise ValueError(
                f"Y {Y.shape} and noise {noise.shape} must both be (N, C) with N = {self.X.shape[0]} rows of X"
            )
        if not np.all(noise > 0):
            raise ValueError("noise variances must be > 0")
        self.Y.assign(Y)
        self.noise.assign(noise)

    def reset(self) -> None:
        """Kernel and inducing inputs back to their values at construction."""
        for v, value in zip(self.trainable_variables, self._initial):
            v.assign(value)

    def bound(self) -> tf.Tensor:
        """The collapsed lower bound on log p(Y), summed over classes."""
        return collapsed_bound(self.kernel, tf.convert_to_tensor(self.Z), self.X, self.Y, self.noise, self.jitter)

    @tf.function(autograph=False)  # a straight-line graph: nothing for AutoGraph to convert
    def loss_and_gradients(self) -> tuple[tf.Tensor, list[tf.Tensor]]:
        """The negative bound and its gradients, compiled once per model for the optimiser."""
        with tf.GradientTape(watch_accessed_variables=False) as tape:
            tape.watch(self.trainable_variables)
            loss = -self.bound()
        return loss, tape.gradient(loss, self.trainable_variables)

    def posterior(self, offset: np.ndarray | None = None) -> DirichletPosterior:
        """The latent posteriors at the current parameters (kernel copied, so later training leaves it alone).

        ``offset``: the prior mean the targets had subtracted (`class_frequency_offset`), added back to the means.
        """
        Z = tf.convert_to_tensor(self.Z)
        proj, As, LB = _factors(self.kernel, Z, self.X, self.noise, self.jitter)
        r = tf.transpose(self.Y / tf.sqrt(self.noise))
        v = tf.linalg.triangular_solve(LB, tf.linalg.matvec(As, r)[..., None], lower=True)  # (C, M, 1)
        u = tf.linalg.triangular_solve(LB, v, lower=True, adjoint=True)
        w = tf.linalg.triangular_solve(proj.L, tf.transpose(u[..., 0]), lower=True, adjoint=True)  # (M, C)
        return DirichletPosterior(module_copy(self.kernel), Z.numpy(), proj.L.numpy(), LB.numpy(), w.numpy(),
                                  offset)


# --------------------------------------------------------------- prediction
def mc_softmax(mean: np.ndarray, var: np.ndarray, n_samples: int, seed: Sequence[int] | int) -> np.ndarray:
    """E[softmax(f)] with f_c ~ N(mean_c, var_c) independent (eq. 8), by Monte Carlo.

    Every row uses the same ``n_samples`` standard-normal draws (common random
    numbers), so a row's probabilities do not depend on which other rows are
    predicted with it, and alpha_eps candidates are compared on equal noise.
    """
    mean, var = np.asarray(mean, dtype=np.float64), np.asarray(var, dtype=np.float64)
    eps = np.random.default_rng(seed).standard_normal((n_samples, 1, mean.shape[1]))
    rows = max(1, 2**22 // (n_samples * mean.shape[1]))
    out = [
        softmax(mean[s : s + rows] + np.sqrt(np.maximum(var[s : s + rows], 0.0)) * eps, axis=-1).mean(axis=0)
        for s in range(0, mean.shape[0], rows)
    ]
    return np.concatenate(out) if out else np.zeros((0, mean.shape[1]))

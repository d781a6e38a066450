"""GP regression on class labels, calibrated by Platt scaling (GPR + Platt): paper 003's baseline.

Milios et al. (paper 003), sec. 3.1 and 5: least-squares classification with a GP, i.e. a
Gaussian likelihood y = f(x) + N(0, sigma_n^2) on the labels themselves, Titsias' sparse
regression with k-means inducing inputs, the kernel and the noise variance learned by the
collapsed bound; 80 % of the training rows fit the regression and the other 20 % fit Platt's
sigmoid pi(x) = sigma(a f(x) + b) on the regression's predictive mean f.

* Binary: one regression on the 0/1 indicator of the second class; p(class 1) = sigma(a f + b).
* C > 2: one regression per class on its one-hot column (one kernel and noise shared, as one
  multi-output SGPR), a sigmoid per class fitted one-vs-rest, and the C probabilities
  normalised to sum to one.  The paper states no multi-class rule; this is its released code's
  (github.com/dmilios/dirichletGPC, ``src/evaluation.py``).

Targets are centred by their training mean (the GP prior has mean zero).  Platt's fit uses his
smoothed targets T+ = (N+ + 1) / (N+ + 2), T- = 1 / (N- + 2) (Platt 1999, sec. 2.2), which keep
a and b finite when the calibration rows are separable.  Only the posterior mean enters
Platt's sigmoid, so the fitted model is the weights w with f(x) = k(x, Z) w + label mean.
"""

from __future__ import annotations

from typing import NamedTuple

import gpflow
import numpy as np
import scipy.linalg
import scipy.optimize
import tensorflow as tf
from scipy.special import expit, log_expit

from gpal.models.sparse import DEFAULT_JITTER

__all__ = ["LabelRegression", "Platt", "fit_platt", "label_targets", "platt_targets",
           "regression_mean"]


class Platt(NamedTuple):
    """Platt's sigmoid sigma(a s + b) on a score s; one (a, b) per calibrated output."""

    a: np.ndarray  # (K,)
    b: np.ndarray  # (K,)

    def probability(self, scores: np.ndarray) -> np.ndarray:
        """sigma(a_k s_k + b_k) per column k of ``scores`` (N, K)."""
        return expit(scores * self.a + self.b)


class LabelRegression(NamedTuple):
    """The fitted regression's predictive mean: f(x) = k(x, Z) w + offset, per output."""

    kernel: gpflow.kernels.Kernel
    Z: np.ndarray  # (M, d)
    weights: np.ndarray  # (M, K)
    offset: np.ndarray  # (K,)
    noise_variance: float

    def mean(self, X: np.ndarray) -> np.ndarray:
        """(N, K) predictive means at the rows of X."""
        return self.kernel(tf.constant(X, tf.float64), tf.constant(self.Z, tf.float64)).numpy() @ self.weights + self.offset


def label_targets(codes: np.ndarray, num_classes: int) -> np.ndarray:
    """Regression targets: the 0/1 indicator of class 1 (N, 1) for two classes, else one-hot (N, C)."""
    onehot = np.eye(num_classes)[np.asarray(codes, dtype=np.int64)]
    return onehot[:, 1:] if num_classes == 2 else onehot


def regression_mean(kernel: gpflow.kernels.Kernel, Z: np.ndarray, X: np.ndarray, Y: np.ndarray, noise_variance: float,
                    jitter: float = DEFAULT_JITTER) -> LabelRegression:
    """The predictive mean of Titsias' SGPR on targets Y (N, K), centred here by their mean.

    w = sigma^-2 (K_zz + sigma^-2 K_zx K_xz)^-1 K_zx (Y - Ybar), through L = chol(K_zz),
    A = L^-1 K_zx / sigma, B = I + A A^T: w = L^-T B^-1 A (Y - Ybar) / sigma.
    """
    offset = Y.mean(axis=0)
    Kzz = kernel(Z).numpy() + jitter * np.eye(len(Z))
    L = np.linalg.cholesky(Kzz)
    A = scipy.linalg.solve_triangular(L, kernel(Z, X).numpy(), lower=True) / np.sqrt(noise_variance)
    B = np.eye(len(Z)) + A @ A.T
    w = scipy.linalg.solve_triangular(L.T, scipy.linalg.cho_solve(scipy.linalg.cho_factor(B, lower=True), A @ (Y - offset)),
                                      lower=False) / np.sqrt(noise_variance)
    return LabelRegression(kernel, np.array(Z, dtype=np.float64), w, offset, float(noise_variance))


def platt_targets(y: np.ndarray) -> np.ndarray:
    """Platt's smoothed targets for 0/1 labels: (N+ + 1)/(N+ + 2) for a 1, 1/(N- + 2) for a 0."""
    y = np.asarray(y, dtype=bool)
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    return np.where(y, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))


def fit_platt(score: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """(a, b) minimising the cross-entropy of sigma(a s + b) against Platt's targets of the 0/1 labels ``y``.

    Convex in (a, b); Newton's method in a trust region with the exact 2x2 Hessian.
    """
    s = np.asarray(score, dtype=np.float64)
    T = platt_targets(y)

    def nll(ab: np.ndarray) -> tuple[float, np.ndarray]:
        z = ab[0] * s + ab[1]
        value = -np.sum(T * log_expit(z) + (1.0 - T) * log_expit(-z))
        r = expit(z) - T
        return value, np.array([r @ s, r.sum()])

    def hessian(ab: np.ndarray) -> np.ndarray:
        p = expit(ab[0] * s + ab[1])
        v = p * (1.0 - p)
        return np.array([[v @ (s * s), v @ s], [v @ s, v.sum()]])

    n_pos = float(np.sum(np.asarray(y, dtype=bool)))
    start = np.array([0.0, np.log((n_pos + 1.0) / (len(s) - n_pos + 1.0))])
    result = scipy.optimize.minimize(nll, start, jac=True, hess=hessian, method="trust-exact", options={"gtol": 1e-10})
    return float(result.x[0]), float(result.x[1])

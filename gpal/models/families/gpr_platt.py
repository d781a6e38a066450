"""GP regression on class labels, calibrated by Platt scaling (GPR + Platt): paper 003's baseline.

Milios et al. (paper 003), sec. 3.1 and 5: least-squares classification with a GP, i.e. a
Gaussian likelihood y = f(x) + N(0, sigma_n^2) on the labels themselves, Titsias' sparse
regression with k-means inducing inputs, the kernel and the noise variance learned by the
collapsed bound; 80 % of the training rows fit the regression and the other 20 % fit Platt's
sigmoid pi(x) = sigma(a f(x) + b) on the regression's predictive mean f.

* The authors' binary form (their released code, github.com/dmilios/dirichletGPC,
  ``src/evaluation.py``, ``bincf_gpr_calibrated``; ``src/calibration.py``, ``ProbitCalibration``):
  p(class 1) = Phi(a (f - 0.5) / sqrt(1 + var f)), with f the predictive mean of the 0/1 indicator,
  var f its latent predictive variance (GPflow's ``predict_f``, no noise term), the offset fixed
  at 0, and a fitted by maximum likelihood against Platt's smoothed targets on the held-out rows.

* Binary: one regression on the 0/1 indicator of the second class; p(class 1) = sigma(a f + b).
* C > 2: one regression per class on its one-hot column (one kernel and noise shared, as one
  multi-output SGPR), a sigmoid per class fitted one-vs-rest, and the C probabilities
  normalised to sum to one.  The paper states no multi-class rule; this is its released code's
  (github.com/dmilios/dirichletGPC, ``src/evaluation.py``), which has no probit form for C > 2.

Targets are centred by their training mean (the GP prior has mean zero).  Platt's fit uses his
smoothed targets T+ = (N+ + 1) / (N+ + 2), T- = 1 / (N- + 2) (Platt 1999, sec. 2.2), which keep
a and b finite when the calibration rows are separable.  The fitted model is the weights w with
f(x) = k(x, Z) w + label mean, and the (M, M) matrix that gives the latent variance (the probit form's).
"""

from __future__ import annotations

from typing import NamedTuple

import gpflow
import numpy as np
import scipy.linalg
import scipy.optimize
import tensorflow as tf
from scipy.special import expit, log_expit, log_ndtr, ndtr

from gpal.models.sparse import DEFAULT_JITTER

__all__ = ["LabelRegression", "Platt", "ProbitPlatt", "fit_platt", "fit_probit_platt", "label_targets",
           "platt_targets", "probit_scores", "regression_mean"]


class Platt(NamedTuple):
    """Platt's sigmoid sigma(a s + b) on a score s; one (a, b) per calibrated output."""

    a: np.ndarray  # (K,)
    b: np.ndarray  # (K,)

    @staticmethod
    def scores(regression: "LabelRegression", X: np.ndarray) -> np.ndarray:
        """(N, K) scores it calibrates: the regression's predictive means."""
        return regression.mean(X)

    def probability(self, scores: np.ndarray) -> np.ndarray:
        """sigma(a_k s_k + b_k) per column k of ``scores`` (N, K)."""
        return expit(scores * self.a + self.b)


class ProbitPlatt(NamedTuple):
    """Paper 003's authors' binary calibration Phi(a s), s = (f - 0.5) / sqrt(1 + var f); one slope per output."""

    a: np.ndarray  # (K,)

    @staticmethod
    def scores(regression: "LabelRegression", X: np.ndarray) -> np.ndarray:
        """(N, K) scores it calibrates: `probit_scores`."""
        return probit_scores(regression, X)

    def probability(self, scores: np.ndarray) -> np.ndarray:
        """Phi(a_k s_k) per column k of ``scores`` (N, K), the scores of ``probit_scores``."""
        return ndtr(scores * self.a)


class LabelRegression(NamedTuple):
    """The fitted regression: mean k(x, Z) w + offset per output, latent variance k(x, x) - k(x, Z) V k(Z, x)."""

    kernel: gpflow.kernels.Kernel
    Z: np.ndarray  # (M, d)
    weights: np.ndarray  # (M, K)
    offset: np.ndarray  # (K,)
    noise_variance: float
    variance_weights: np.ndarray  # (M, M), V = Kzz^-1 - (Kzz + sigma^-2 Kzx Kxz)^-1

    def mean(self, X: np.ndarray) -> np.ndarray:
        """(N, K) predictive means at the rows of X."""
        return self.kernel(tf.constant(X, tf.float64), tf.constant(self.Z, tf.float64)).numpy() @ self.weights + self.offset

    def variance(self, X: np.ndarray) -> np.ndarray:
        """(N,) latent predictive variances at the rows of X (no noise term; the outputs share the kernel)."""
        Xt = tf.constant(X, tf.float64)
        Kxz = self.kernel(Xt, tf.constant(self.Z, tf.float64)).numpy()
        prior = self.kernel(Xt, full_cov=False).numpy()
        return np.maximum(prior - np.einsum("nm,mk,nk->n", Kxz, self.variance_weights, Kxz), 0.0)


def label_targets(codes: np.ndarray, num_classes: int) -> np.ndarray:
    """Regression targets: the 0/1 indicator of class 1 (N, 1) for two classes, else one-hot (N, C)."""
    onehot = np.eye(num_classes)[np.asarray(codes, dtype=np.int64)]
    return onehot[:, 1:] if num_classes == 2 else onehot


def regression_mean(kernel: gpflow.kernels.Kernel, Z: np.ndarray, X: np.ndarray, Y: np.ndarray, noise_variance: float,
                    jitter: float = DEFAULT_JITTER) -> LabelRegression:
    """Titsias' SGPR on targets Y (N, K), centred here by their mean: its predictive mean and latent variance.

    w = sigma^-2 (K_zz + sigma^-2 K_zx K_xz)^-1 K_zx (Y - Ybar), through L = chol(K_zz),
    A = L^-1 K_zx / sigma, B = I + A A^T: w = L^-T B^-1 A (Y - Ybar) / sigma; and
    var f(x) = k(x, x) - k_x^T L^-T (I - B^-1) L^-1 k_x.
    """
    offset = Y.mean(axis=0)
    Kzz = kernel(Z).numpy() + jitter * np.eye(len(Z))
    L = np.linalg.cholesky(Kzz)
    A = scipy.linalg.solve_triangular(L, kernel(Z, X).numpy(), lower=True) / np.sqrt(noise_variance)
    B = np.eye(len(Z)) + A @ A.T
    B_factor = scipy.linalg.cho_factor(B, lower=True)
    w = scipy.linalg.solve_triangular(L.T, scipy.linalg.cho_solve(B_factor, A @ (Y - offset)),
                                      lower=False) / np.sqrt(noise_variance)
    L_inv = scipy.linalg.solve_triangular(L, np.eye(len(Z)), lower=True)
    V = L_inv.T @ (np.eye(len(Z)) - scipy.linalg.cho_solve(B_factor, np.eye(len(Z)))) @ L_inv
    return LabelRegression(kernel, np.array(Z, dtype=np.float64), w, offset, float(noise_variance), (V + V.T) / 2)


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


def probit_scores(regression: LabelRegression, X: np.ndarray) -> np.ndarray:
    """(N, K) scores of the authors' probit form: (f - 0.5) / sqrt(1 + var f), f the mean, var f the latent variance."""
    return (regression.mean(X) - 0.5) / np.sqrt(1.0 + regression.variance(X))[:, None]


def fit_probit_platt(score: np.ndarray, y: np.ndarray) -> float:
    """The slope a maximising the likelihood of Phi(a s) against Platt's targets of the 0/1 labels ``y``.

    The offset is fixed at 0, as the authors' ``ProbitCalibration(const_b=True)``.  log Phi is
    concave, so the likelihood in a is too; Newton's method in a trust region, from a = 0 as theirs.
    """
    s = np.asarray(score, dtype=np.float64)
    T = platt_targets(y)

    def nll(a: np.ndarray) -> tuple[float, np.ndarray]:
        z = a[0] * s
        value = -np.sum(T * log_ndtr(z) + (1.0 - T) * log_ndtr(-z))
        return value, np.array([-np.sum(s * (T * _mills(z) - (1.0 - T) * _mills(-z)))])

    def hessian(a: np.ndarray) -> np.ndarray:
        z = a[0] * s
        # d/dz of phi/Phi(z) is -(phi/Phi)(z + phi/Phi); so each term's curvature is positive.
        curvature = T * _mills(z) * (z + _mills(z)) + (1.0 - T) * _mills(-z) * (-z + _mills(-z))
        return np.array([[np.sum(s * s * curvature)]])

    result = scipy.optimize.minimize(nll, np.zeros(1), jac=True, hess=hessian, method="trust-exact",
                                     options={"gtol": 1e-10})
    return float(result.x[0])


def _mills(z: np.ndarray) -> np.ndarray:
    """phi(z) / Phi(z), computed in log space so that it stays finite far in the left tail."""
    return np.exp(-0.5 * z * z - 0.5 * np.log(2.0 * np.pi) - log_ndtr(z))

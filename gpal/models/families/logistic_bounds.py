"""Binary logistic GP classification with analytic q(u): vi-JJ, vi-JJ-full, vi-JJ-hybrid, vi-Taylor.

Izmailov & Kropotov, "Faster variational inducing input GP classification"
(paper 002), sections 3-4.  Labels y_i in {-1, +1}, p(y_i | f_i) = sigma(y_i f_i).
The ELBO (11) is

    L(q) = sum_i E_q(f_i) log sigma(y_i f_i) - KL(q(u) || p(u)).

Both methods replace log sigma(y_i f) by a quadratic in f,

    g_i(f) = c_i + b_i f - w_i f^2,     w_i > 0,                          (*)

so that E_q g_i = c_i + b_i m_i - w_i (m_i^2 + S_i^2) is quadratic in q(u) and
the optimal q(u) is Gaussian in closed form.  Only (c, b, w) differ:

Jaakkola-Jordan (sec. 4.1, after [9]): for every xi,
    log sigma(t) >= t/2 - xi/2 + log sigma(xi) - lambda(xi) (t^2 - xi^2),
    lambda(xi) = tanh(xi / 2) / (4 xi)    (the paper prints tanh(xi); with it
    the quadratic meets log sigma at t = xi with the wrong slope and crosses
    above it, e.g. just left of t = xi = 1),
so with t = y f (t^2 = f^2):  c = log sigma(xi) - xi/2 + lambda xi^2, b = y/2,
w = lambda.  This is a global lower bound, hence J(q, xi) <= L(q).

Taylor (sec. 4.2, eq. 15): h(f) = log sigma(y f) has
    h'(f)  = y sigma(-y f)                                   (= phi, paper's phi_i)
    h''(f) = -y^2 sigma(y f) sigma(-y f) = -sigma(y f) sigma(-y f),
and the second-order expansion at xi is
    h(xi) + phi (f - xi) + (1/2) h''(xi) (f - xi)^2 = h(xi) + phi (f - xi) - psi (f - xi)^2,
    psi = sigma(y xi) sigma(-y xi) / 2 = e^{y xi} / (2 (1 + e^{y xi})^2)     (paper's psi).
psi is HALF the curvature |h''|.  Taking psi = sigma(y xi) sigma(-y xi), the
curvature itself, doubles the quadratic term: through the 2 Psi of (16) q(u)
then gets twice the likelihood precision and too small a variance.  Expanded:
c = h(xi) - phi xi - psi xi^2, b = phi + 2 psi xi (the paper's v, eq. 17), w = psi.
At xi = 0 both forms agree: lambda(0) = psi(0) = 1/8, b = y/2.  The paper
states xi_i = m_i as a stationary point; it is not one (d/dxi of the expanded
bound is -psi'(xi) ((m - xi)^2 + S^2)), but m_i is where the expansion of
E_q h is accurate to second order, so vi-Taylor expands at the current means.
The Taylor objective is an approximation, not a bound.

Whitened form.  With K_mm = L L^T, u = L v, p(v) = N(0, I), A = L^{-1} K_mn
(columns a_i) and q(v) = N(m_v, S_v):  m_i = a_i^T m_v,
S_i^2 = k_ii - |a_i|^2 + a_i^T S_v a_i.  Maximising sum_i E_q g_i - KL over q:

    C = I + 2 A W A^T,   S_v = C^{-1},   m_v = C^{-1} A b           (12)-(13), (16)-(17)

(mapped back: Sigma = L C^{-1} L^T = (2 K_mm^{-1} K_mn W K_nm K_mm^{-1} + K_mm^{-1})^{-1}),
and substituting back gives the collapsed objective of theta (and xi)

    J^(theta, xi) = sum c_i + 1/2 |L_C^{-1} A b|^2 - 1/2 log|C| - sum_i w_i (k_ii - |a_i|^2),

which is the paper's J^ of sec. 4.1 and (18) with the xi-only terms kept
(log|B| - log|K_mm| = log|C|): exactly max_q [sum_i E_q g_i - KL], nothing dropped.

Algorithm 1, from q = p (the paper starts from mu, Sigma = 0, I): stage 1 alternates xi <- xi(q) (eq. 14 for JJ: xi^2 = m^2 + S^2;
xi = m for Taylor) and q <- q^(xi) ``n_updates`` times; stage 2 runs L-BFGS-B
with at most ``max_fun`` evaluations on J^ over the kernel hyperparameters and
(optionally) the inducing inputs Z, with xi fixed (vi-JJ, vi-Taylor) or free
(vi-JJ-hybrid, sec. 4.1).  vi-JJ-full (sec. 4.1, the table of sec. 5.1) has no
stage 1: q(u) stays eliminated (J^ is already maximal over it) and xi is
optimised numerically with theta, by L-BFGS-B on J^(theta, xi) alone.  After
stage 2 q is reset to q^(xi) under the new theta, the q the collapsed objective
assumed; for the three JJ methods every step of the loop then raises the same
lower bound.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import gpflow
import numpy as np
import tensorflow as tf
from check_shapes import check_shapes

from gpal.models.quadrature import hermite_expectation
from gpal.models.sparse import DEFAULT_JITTER, Projection, inducing_variable, project, whitened_kl, whitened_marginals
from gpal.registry import LOGISTIC_BOUNDS

__all__ = [
    "METHODS",
    "LogisticBoundGP",
    "Quadratic",
    "WhitenedQ",
    "collapsed_bound",
    "expected_log_sigmoid",
    "expected_quadratic",
    "jj_coefficients",
    "jj_lambda",
    "kl_whitened",
    "log_sigmoid",
    "marginals",
    "optimal_q",
    "predictive_probability",
    "quadrature_elbo",
    "surrogate_elbo",
    "taylor_coefficients",
    "update_xi",
]

METHODS = LOGISTIC_BOUNDS
NUM_QUADRATURE = 64
# Below this |xi|, lambda(xi) = tanh(xi/2)/(4 xi) is 0/0-prone; its series 1/8 - xi^2/96 is exact to ~1e-14.
_SMALL_XI = 1e-3


class Quadratic(NamedTuple):
    """Per-point quadratic stand-in (*) for log sigma(y_i f): c + b f - w f^2, each (N,)."""

    c: tf.Tensor
    b: tf.Tensor
    w: tf.Tensor


class WhitenedQ(NamedTuple):
    """q(v) = N(mean, sqrt sqrt^T) for the whitened inducing values v = L^-1 u."""

    mean: tf.Tensor  # (M,)
    sqrt: tf.Tensor  # (M, M), any square root of S_v


# --------------------------------------------------------------- one dimension
def log_sigmoid(t: tf.Tensor) -> tf.Tensor:
    """log sigma(t) = -softplus(-t), stable for large |t|."""
    return -tf.math.softplus(-t)


def jj_lambda(xi: tf.Tensor) -> tf.Tensor:
    """lambda(xi) = tanh(xi/2) / (4 xi), even in xi, 1/8 at 0 (with a finite gradient there)."""
    small = tf.abs(xi) < _SMALL_XI
    safe = tf.where(small, tf.ones_like(xi), xi)
    return tf.where(small, 0.125 - tf.square(xi) / 96.0, tf.tanh(safe / 2.0) / (4.0 * safe))


@check_shapes("xi: [N]", "y: [N]")
def jj_coefficients(xi: tf.Tensor, y: tf.Tensor) -> Quadratic:
    """The Jaakkola-Jordan lower bound of log sigma(y f), tight at f = +-xi (sec. 4.1)."""
    lam = jj_lambda(xi)
    return Quadratic(log_sigmoid(xi) - xi / 2.0 + lam * tf.square(xi), y / 2.0, lam)


@check_shapes("xi: [N]", "y: [N]")
def taylor_coefficients(xi: tf.Tensor, y: tf.Tensor) -> Quadratic:
    """Second-order Taylor expansion of log sigma(y f) at f = xi (eq. 15); w = psi is HALF the curvature."""
    s = tf.sigmoid(y * xi)
    phi = y * (1.0 - s)  # h'(xi) = y sigma(-y xi)
    psi = s * (1.0 - s) / 2.0  # -h''(xi) / 2
    return Quadratic(log_sigmoid(y * xi) - phi * xi - psi * tf.square(xi), phi + 2.0 * psi * xi, psi)


COEFFICIENTS: dict[str, Callable[[tf.Tensor, tf.Tensor], Quadratic]] = {
    "jj": jj_coefficients,
    "jj-full": jj_coefficients,
    "jj-hybrid": jj_coefficients,
    "taylor": taylor_coefficients,
}


def expected_quadratic(quad: Quadratic, mean: tf.Tensor, var: tf.Tensor) -> tf.Tensor:
    """E_{N(f|mean,var)} [c + b f - w f^2] per point."""
    return quad.c + quad.b * mean - quad.w * (tf.square(mean) + var)


@check_shapes("y: [N]", "mean: [N]", "var: [N]", "return: [N]")
def expected_log_sigmoid(y: tf.Tensor, mean: tf.Tensor, var: tf.Tensor, num_points: int = NUM_QUADRATURE) -> tf.Tensor:
    """E_q log sigma(y_i f_i), the exact data term of the ELBO (11), by quadrature."""
    return hermite_expectation(lambda f: log_sigmoid(y[:, None] * f), mean, var, num_points)


@check_shapes("mean: [N]", "var: [N]", "return: [N]")
def predictive_probability(mean: tf.Tensor, var: tf.Tensor, num_points: int = NUM_QUADRATURE) -> tf.Tensor:
    """p(y = +1) = int sigma(f) N(f | mean, var) df (eq. 5), by quadrature rather than sigma(mean)."""
    return hermite_expectation(tf.sigmoid, mean, var, num_points)


# --------------------------------------------------------------- q(u) algebra
def _precision_cholesky(A: tf.Tensor, w: tf.Tensor) -> tf.Tensor:
    """chol(C), C = I + 2 A diag(w) A^T: the whitened precision of q^(xi)."""
    C = tf.eye(tf.shape(A)[0], dtype=A.dtype) + 2.0 * tf.matmul(A * w, A, transpose_b=True)
    return tf.linalg.cholesky(C)


@check_shapes("A: [M, N]", "quad.b: [N]", "quad.w: [N]", "return.mean: [M]", "return.sqrt: [M, M]")
def optimal_q(A: tf.Tensor, quad: Quadratic) -> WhitenedQ:
    """argmax_q sum_i E_q g_i - KL(q || p) = N(C^-1 A b, C^-1), eqs. (12)-(13) / (16)-(17) whitened."""
    Lc = _precision_cholesky(A, quad.w)
    mean = tf.linalg.cholesky_solve(Lc, tf.linalg.matvec(A, quad.b)[:, None])[:, 0]
    Lc_inv = tf.linalg.triangular_solve(Lc, tf.eye(tf.shape(Lc)[0], dtype=Lc.dtype), lower=True)
    return WhitenedQ(mean, tf.transpose(Lc_inv))  # C^-1 = Lc^-T Lc^-1


@check_shapes("proj.A: [M, N]", "q.mean: [M]", "q.sqrt: [M, M]", "return[0]: [N]", "return[1]: [N]")
def marginals(proj: Projection, q: WhitenedQ) -> tuple[tf.Tensor, tf.Tensor]:
    """Means m_i and variances S_i^2 of q(f_i), eq. (10) in the whitened frame."""
    return whitened_marginals(proj, q.mean, q.sqrt)


def kl_whitened(q: WhitenedQ) -> tf.Tensor:
    """KL(q(v) || N(0, I)) (= KL(q(u) || p(u))); ``sqrt`` may be any square root, so log|det| by LU."""
    return whitened_kl(q.mean, q.sqrt, triangular=False)


@check_shapes("proj.A: [M, N]", "proj.resid: [N]", "quad.c: [N]", "quad.b: [N]", "quad.w: [N]", "return: []")
def collapsed_bound(proj: Projection, quad: Quadratic) -> tf.Tensor:
    """J^(theta, xi) = max_q [sum_i E_q g_i - KL]: sec. 4.1's J^ and eq. (18) with the xi terms kept."""
    Lc = _precision_cholesky(proj.A, quad.w)
    r = tf.linalg.triangular_solve(Lc, tf.linalg.matvec(proj.A, quad.b)[:, None], lower=True)
    return (
        tf.reduce_sum(quad.c)
        + 0.5 * tf.reduce_sum(tf.square(r))
        - tf.reduce_sum(tf.math.log(tf.linalg.diag_part(Lc)))
        - tf.reduce_sum(quad.w * proj.resid)
    )


def surrogate_elbo(proj: Projection, q: WhitenedQ, quad: Quadratic) -> tf.Tensor:
    """sum_i E_q g_i - KL for any q: the paper's J(mu, Sigma, xi, theta) (JJ) or its Taylor counterpart."""
    mean, var = marginals(proj, q)
    return tf.reduce_sum(expected_quadratic(quad, mean, var)) - kl_whitened(q)


def quadrature_elbo(proj: Projection, q: WhitenedQ, y: tf.Tensor) -> tf.Tensor:
    """The ELBO (11) itself, its expectations by Gauss-Hermite quadrature (the objective svi maximises)."""
    mean, var = marginals(proj, q)
    return tf.reduce_sum(expected_log_sigmoid(y, mean, var)) - kl_whitened(q)


def update_xi(method: str, mean: tf.Tensor, var: tf.Tensor) -> tf.Tensor:
    """xi given q: sqrt(m^2 + S^2) for JJ (eq. 14, the maximiser of J), m for Taylor (the expansion point)."""
    return mean if method == "taylor" else tf.sqrt(tf.maximum(tf.square(mean) + var, 0.0))  # var may round below 0


# --------------------------------------------------------------------- model
class LogisticBoundGP(gpflow.base.Module):
    """Kernel, inducing inputs Z and the whitened q(v): the fitted posterior, usable without training data."""

    def __init__(self, kernel: gpflow.kernels.Kernel, Z: np.ndarray, jitter: float = DEFAULT_JITTER):
        super().__init__(name="logistic_bound_gp")
        self.kernel = kernel
        self.Z = inducing_variable(Z)
        M = self.Z.shape[0]
        self.q_mean = tf.Variable(np.zeros(M), trainable=False, name="q_mean")
        self.q_sqrt = tf.Variable(np.eye(M), trainable=False, name="q_sqrt")
        self.jitter = float(jitter)

    @property
    def q(self) -> WhitenedQ:
        return WhitenedQ(tf.convert_to_tensor(self.q_mean), tf.convert_to_tensor(self.q_sqrt))

    def project(self, X: tf.Tensor) -> Projection:
        """K_mm = L L^T (+ jitter, fixed at construction: compiled graphs read it once), A = L^-1 K_mn."""
        return project(self.kernel, tf.convert_to_tensor(self.Z), X, self.jitter)

    def marginals(self, X: np.ndarray | tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
        """Means and variances of q(f(x)) at the rows of X, each (N,)."""
        return marginals(self.project(tf.convert_to_tensor(X, tf.float64)), self.q)

    def predict_proba(self, X: np.ndarray | tf.Tensor) -> np.ndarray:
        """p(y = +1 | x) per row of X, (N,)."""
        return predictive_probability(*self.marginals(X)).numpy()

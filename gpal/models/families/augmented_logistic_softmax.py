"""Augmented logistic-softmax GP classification with closed-form updates (paper 004).

Galy-Fajou, Wenzel, Donner & Opper, "Multi-class GP classification made conjugate".
Likelihood p(y_i = k | f_i) = sigma(f_ik) / sum_c sigma(f_ic) (``gpal.models.likelihoods.logistic_softmax``).

Augmentation (derived here; one-hot y'_ic = [y_i = c], PG(b, c) the Polya-Gamma law):

1. 1/z = int_0^inf exp(-lambda z) dlambda (flat "prior" on lambda_i > 0):
       p(y_i, lambda_i | f_i) = sigma(f_ik) prod_c exp(-lambda_i sigma(f_ic)).
2. exp(-lambda sigma(f)) = e^-lambda exp(lambda sigma(-f)) = sum_n Po(n | lambda) sigma(-f)^n:
       p(y_i, lambda_i, n_i | f_i) = prod_c Po(n_ic | lambda_i) sigma(f_ic)^y'_ic sigma(-f_ic)^n_ic.
3. Polson et al.: sigma(f)^y' sigma(-f)^n = 2^-b e^{(y' - n) f / 2} int exp(-omega f^2 / 2) PG(omega | b, 0),
   b = y' + n, so the augmented joint is Gaussian in every f_ic:
       prod_c Po(n_ic | lambda_i) 2^-b_ic exp((y'_ic - n_ic) f_ic / 2 - omega_ic f_ic^2 / 2) PG(omega_ic | b_ic, 0).

Full conditionals: lambda | n ~ Gamma(1 + sum_c n_c, C); n_c | lambda, f ~ Po(lambda sigma(-f_c));
omega_c | n_c, f ~ PG(y'_c + n_c, |f_c|); f_c | rest Gaussian.

Variational family (the paper's): q(lambda_i) = Gamma(alpha_i, beta_i), q(n_ic) = Po(gamma_ic),
q(omega_ic | n_ic) = PG(y'_ic + n_ic, c_ic), q(v_c) Gaussian.  With PG(b, c) = cosh(c/2)^b
e^{-c^2 omega / 2} PG(b, 0) the PG base density cancels in E log p - E log q, leaving per (i, c)

    gamma (E log lambda - log gamma + 1) - (y' + gamma) log(2 cosh(c/2))
    + (y' - gamma) E f / 2 - theta (E f^2 - c^2) / 2,   theta = E omega = (y' + gamma) tanh(c/2) / (2c),

and per i: - C E lambda + H[Gamma(alpha, beta)] (E lambda = alpha/beta, E log lambda = psi(alpha) - log beta).
The log n! of the Poisson prior and of q(n) cancel too, so the bound is exact in closed form.

The paper's CAVI (``paper_locals``; ``inference="cavi"``): each sweep updates every factor once, in closed
form, as the paper lists them, then q(v):
    c_ic = sqrt(E f_ic^2)                                     (q(omega | n); the last term then vanishes),
    gamma_ic = exp(E log lambda_i) e^{-E f_ic / 2} / (2 cosh(c_ic / 2))   (q(n), at the current q(lambda)),
    alpha_i = 1 + sum_c gamma_ic,  beta_i = C                 (q(lambda), at the new q(n)),
each the exact maximiser of the bound in its own factor with the others held, so no sweep lowers the bound.
q(lambda) is the one local factor another depends on, so it is state carried from sweep to sweep
(Gamma(C, C) to start, E lambda = 1, as AugmentedGaussianProcesses.jl, the paper's code, starts it).

The joint optimum of all the locals for a q(f) (``optimal_locals``), the limit of such sweeps at a fixed
q(f), is what the bound's value as a function of q(u) alone is: c as above, and gamma_ic, alpha_i
coupled only through alpha: gamma_ic = e^{psi(alpha_i)} a_ic / C with
a_ic = e^{-E f_ic/2} / (2 cosh(c_ic/2)) < 1 (as c > |E f|), so alpha = 1 + r e^{psi(alpha)}, r = mean_c a_ic.
h(alpha) = alpha - 1 - r e^{psi(alpha)} is increasing and concave (0 < (e^psi)' < 1, e^psi convex), h(1) < 0, so Newton from alpha = 1 climbs monotonically
to its one root.

Global q(v_c) (sparse, whitened: u_c = L v_c, K_mm = L L^T, A = L^-1 K_mn): the bound is
sum_i [(y'_ic - gamma_ic) E f_ic / 2 - theta_ic E f_ic^2 / 2] - KL(q(v_c) || N(0, I)), so
    precision P_c = I + A diag(theta_c) A^T,   P_c m_c = A (y'_c - gamma_c) / 2
(the paper's CAVI update in whitened form).  In natural parameters (eta1 = P m, P) a natural-
gradient step of size rho is eta <- (1 - rho) eta + rho eta_hat, where eta_hat is the same formula
on a minibatch with the data sums scaled by N/|B| (Hoffman et al. SVI); rho = 1 on the full batch
is the CAVI update.  A CAVI iteration (all locals exact given q, then q exact given the locals)
never decreases the bound.  Gradients w.r.t. the kernel hyperparameters (and Z) are taken with the
locals held (``stop_gradient``): at the locals' joint optimum that is the gradient of the bound as a
function of q(u) and the kernel alone (envelope theorem); for the paper's sweep it is the partial
derivative its hyperparameter step ascends.

Collapsed lambda (gpal's variant, not the paper's: ``locals_family="collapsed"``, ``inference="cavi_collapsed"``
and the sweeps of ``"cavi_exact"``).  The mean-field q(lambda) q(n) above
is loose where it matters: given f the exact conditional of N = sum_c n_c is geometric with ratio
sum_c sigma(-f_c) / C, close to 1 for a confident point, and lambda | n ~ Gamma(1 + N, C) depends on it
strongly; mean field halves E n there (e^psi(alpha) ~ alpha - 1/2), which weakens the push of every
wrong class's latent down and leaves the fit underconfident.  Integrating lambda out exactly,
    p(n_i) = N! / prod_c n_ic! C^-(N+1)   (a geometric number of counts spread uniformly over classes),
and taking q(n_i) of the same form tilted by a_ic (its optimum), i.e. q(n | N) multinomial and q(N) geometric,
the bound per point becomes, for q(n) with means gamma_ic (G_i = sum_c gamma_ic),
    sum_c [-(y' + gamma) (log 2cosh(c/2) + t(c) (E f^2 - c^2) / 2) + (y' - gamma) E f / 2 - gamma log gamma]
    + (1 + G) log((1 + G) / C),        t(c) = tanh(c/2) / (2c),
maximised by c = sqrt(E f^2) and gamma_ic = a_ic / (C - sum_c a_ic), where it equals
    sum_c y'_c (E f_c / 2 - log 2cosh(c_c / 2)) - log(C - sum_c a_ic):
the Polya-Gamma bound of the logistic-softmax with only E sigma(-f_c) replaced by a_ic, no mean-field
loss from lambda.  It is never below the mean-field bound (for each n, log of the exact integral over
lambda is at least the mean-field's E_q(lambda) log p(.., lambda) + H[q(lambda)], by Jensen; and q(n) is free
here), and the global update is the same closed form with these gamma, so CAVI stays conjugate
and monotone; its locals are the joint optimum at every sweep (no state).  ``locals_family="mean_field"`` is the
paper's factorisation and sweep.

Design: one set of M inducing inputs shared by all classes, one q(v_c) per class, and by default one
kernel shared by all classes: sharing keeps A = L^-1 K_mn (O(N M^2)) and chol(K_mm) one computation per
step whatever C, and the hyperparameter count independent of C.  The paper's authors give each class its
own kernel (AugmentedGaussianProcesses.jl, src/models/SVGP.jl at 01da4a7, line 79): a
``gpflow.kernels.SeparateIndependent`` of C kernels does that here, A_c = L_c^-1 K_mn^(c) per class, C
times the cost; every update above is the same with A replaced by A_c in class c's terms.
Note the Poisson conditional is Po(lambda sigma(-f)), from step 2; the summary in the shared
papers folder prints sigma(f).
"""

from __future__ import annotations

import json
from typing import Any, Callable, NamedTuple

import gpflow
import numpy as np
import tensorflow as tf
from check_shapes import check_shapes

from gpal.models.compiled import KeptFunctions, instance_function, variable_specs
from gpal.models.latent_gps import LatentGPs
from gpal.models.likelihoods.logistic_softmax import logistic_softmax_probs
from gpal.models.module_copy import module_copy
from gpal.models.quadrature import monte_carlo_mean
from gpal.models.sparse import (DEFAULT_JITTER, Projection, cholesky_with_jitter, inducing_variable, project, whiten,
                                whitened_kl, whitened_marginals)
from gpal.registry import LOCALS_FAMILIES

__all__ = [
    "AugmentedLogisticSoftmaxGP",
    "as_latent_gps",
    "GaussianQ",
    "LocalFactors",
    "augmented_elbo_terms",
    "class_weighted_natural_parameters",
    "collapsed_elbo_terms",
    "collapsed_locals",
    "global_natural_parameters",
    "log_two_cosh_half",
    "onehot_labels",
    "optimal_locals",
    "paper_locals",
    "polya_gamma_mean",
    "signature_key",
]

# Below this c, tanh(c/2) / (2c) is 0/0-prone; its series 1/4 - c^2/48 is exact to ~1e-13 there.
_SMALL_C = 1e-4
# Newton on h(alpha) climbs to the root from below; 5 steps reach it to ~1e-12 relative for
# r from 0.1 to 1 - 1e-12 (checked against scipy); 12 leave a margin.
_NEWTON_STEPS = 12


class GaussianQ(NamedTuple):
    """Moments of the whitened q(v_c) = N(mean_c, inv_chol_c^T inv_chol_c), inv_chol_c = chol(P_c)^-1."""

    mean: tf.Tensor  # (C, M)
    inv_chol: tf.Tensor  # (C, M, M), lower triangular


class LocalFactors(NamedTuple):
    """Parameters of q(omega_ic | n_ic) = PG(y'+n, c), q(n_ic) = Po(gamma), q(lambda_i) = Gamma(alpha, beta)."""

    c: tf.Tensor  # (N, C)
    gamma: tf.Tensor  # (N, C)
    alpha: tf.Tensor  # (N,)
    beta: tf.Tensor  # (N,)


def log_two_cosh_half(c: tf.Tensor) -> tf.Tensor:
    """log(2 cosh(c/2)) = |c|/2 + log(1 + e^-|c|), stable for any c."""
    a = tf.abs(c)
    return a / 2.0 + tf.math.softplus(-a)


def polya_gamma_mean(b: tf.Tensor, c: tf.Tensor) -> tf.Tensor:
    """E[omega] for omega ~ PG(b, c): b tanh(c/2) / (2c), b/4 at c = 0."""
    small = tf.abs(c) < _SMALL_C
    safe = tf.where(small, tf.ones_like(c), c)
    return b * tf.where(small, 0.25 - tf.square(c) / 48.0, tf.tanh(safe / 2.0) / (2.0 * safe))


@check_shapes("mean: [N, C]", "var: [N, C]")
def optimal_locals(mean: tf.Tensor, var: tf.Tensor) -> LocalFactors:
    """argmax of the augmented bound over all local factors for the marginals q(f_ic) = N(mean, var)."""
    num_classes = tf.cast(tf.shape(mean)[1], mean.dtype)
    c = tf.sqrt(tf.square(mean) + tf.maximum(var, 0.0))
    log_a = -mean / 2.0 - log_two_cosh_half(c)  # log a_ic; gamma = e^{psi(alpha)} a / C
    r = tf.exp(tf.reduce_logsumexp(log_a, axis=1)) / num_classes  # (N,), < 1

    def newton(alpha: tf.Tensor) -> tf.Tensor:
        e_psi = tf.exp(tf.math.digamma(alpha))
        h = alpha - 1.0 - r * e_psi
        dh = 1.0 - r * e_psi * tf.math.polygamma(tf.constant(1.0, alpha.dtype), alpha)
        return alpha - h / dh

    _, alpha = tf.while_loop(
        lambda i, _: i < _NEWTON_STEPS,
        lambda i, alpha: (i + 1, newton(alpha)),
        (tf.constant(0), tf.ones_like(r)),
        maximum_iterations=_NEWTON_STEPS,
    )
    log_e_lambda = tf.math.digamma(alpha) - tf.math.log(num_classes)  # E log lambda with beta = C
    gamma = tf.exp(log_e_lambda[:, None] + log_a)
    return LocalFactors(c, gamma, alpha, tf.fill(tf.shape(alpha), num_classes))


@check_shapes("mean: [N, C]", "var: [N, C]", "alpha: [N]")
def paper_locals(mean: tf.Tensor, var: tf.Tensor, alpha: tf.Tensor) -> LocalFactors:
    """One pass of the paper's closed-form local updates for q(f_ic) = N(mean, var): c, then q(n) at the
    current q(lambda) = Gamma(``alpha``, C), then q(lambda) at the new q(n) (module docstring)."""
    num_classes = tf.cast(tf.shape(mean)[1], mean.dtype)
    c = tf.sqrt(tf.square(mean) + tf.maximum(var, 0.0))
    log_e_lambda = tf.math.digamma(alpha) - tf.math.log(num_classes)  # E log lambda with beta = C
    gamma = tf.exp(log_e_lambda[:, None] - mean / 2.0 - log_two_cosh_half(c))
    new_alpha = 1.0 + tf.reduce_sum(gamma, axis=1)
    return LocalFactors(c, gamma, new_alpha, tf.fill(tf.shape(new_alpha), num_classes))


@check_shapes(
    "mean: [N, C]", "var: [N, C]", "onehot: [N, C]",
    "loc.c: [N, C]", "loc.gamma: [N, C]", "loc.alpha: [N]", "loc.beta: [N]", "return: [N]",
)
def augmented_elbo_terms(mean: tf.Tensor, var: tf.Tensor, onehot: tf.Tensor, loc: LocalFactors) -> tf.Tensor:
    """Per point: E_q log p(y, lambda, n, omega | f) + H[q(lambda, n, omega)], exactly (module docstring).

    Summed over points and minus KL(q(v) || p(v)) it is the augmented ELBO, a lower bound on
    sum_i E_q log p(y_i | f_i) - KL for any locals; never tight, as q(lambda) q(n) is mean field.
    """
    num_classes = tf.cast(tf.shape(mean)[1], mean.dtype)
    e_log_lambda = tf.math.digamma(loc.alpha) - tf.math.log(loc.beta)
    e_lambda = loc.alpha / loc.beta
    b = onehot + loc.gamma
    theta = polya_gamma_mean(b, loc.c)
    per_class = (
        loc.gamma * (e_log_lambda[:, None] + 1.0)
        - tf.math.xlogy(loc.gamma, loc.gamma)
        - b * log_two_cosh_half(loc.c)
        + (onehot - loc.gamma) * mean / 2.0
        - theta * (tf.square(mean) + var - tf.square(loc.c)) / 2.0
    )
    gamma_entropy = (
        loc.alpha - tf.math.log(loc.beta) + tf.math.lgamma(loc.alpha) + (1.0 - loc.alpha) * tf.math.digamma(loc.alpha)
    )
    return tf.reduce_sum(per_class, axis=1) - num_classes * e_lambda + gamma_entropy


@check_shapes("mean: [N, C]", "var: [N, C]")
def collapsed_locals(mean: tf.Tensor, var: tf.Tensor) -> LocalFactors:
    """argmax of the collapsed bound (lambda integrated out) over c and q(n) for q(f_ic) = N(mean, var).

    gamma_ic = a_ic / (C - sum_c a_ic); alpha = 1 + sum_c gamma_ic, beta = C describe the exact
    q(lambda | n) = Gamma(1 + N, C) at the mean count (reported, not used by the bound).
    """
    num_classes = tf.cast(tf.shape(mean)[1], mean.dtype)
    c = tf.sqrt(tf.square(mean) + tf.maximum(var, 0.0))
    log_a = -mean / 2.0 - log_two_cosh_half(c)
    # C - sum a = sum_c (1 - a_c), each > 0 (a_c < 1 as c > |mean|): summed without cancellation.
    log_norm = tf.math.log(tf.reduce_sum(-tf.math.expm1(log_a), axis=1))
    gamma = tf.exp(log_a - log_norm[:, None])
    alpha = 1.0 + tf.reduce_sum(gamma, axis=1)
    return LocalFactors(c, gamma, alpha, tf.fill(tf.shape(alpha), num_classes))


@check_shapes(
    "mean: [N, C]", "var: [N, C]", "onehot: [N, C]", "loc.c: [N, C]", "loc.gamma: [N, C]", "return: [N]",
)
def collapsed_elbo_terms(mean: tf.Tensor, var: tf.Tensor, onehot: tf.Tensor, loc: LocalFactors) -> tf.Tensor:
    """Per point: the collapsed bound (module docstring) at c = ``loc.c``, E n = ``loc.gamma``; alpha, beta unused.

    A lower bound on E_q log p(y_i | f_i) for any c > 0 and gamma > 0, never below ``augmented_elbo_terms``
    at the same q(f).
    """
    num_classes = tf.cast(tf.shape(mean)[1], mean.dtype)
    b = onehot + loc.gamma
    tilt = log_two_cosh_half(loc.c) + polya_gamma_mean(tf.ones_like(loc.c), loc.c) * (tf.square(mean) + var - tf.square(loc.c)) / 2.0
    per_class = -b * tilt + (onehot - loc.gamma) * mean / 2.0 - tf.math.xlogy(loc.gamma, loc.gamma)
    count = 1.0 + tf.reduce_sum(loc.gamma, axis=1)
    return tf.reduce_sum(per_class, axis=1) + count * (tf.math.log(count) - tf.math.log(num_classes))


def class_weighted_natural_parameters(A: tf.Tensor, r: tf.Tensor, theta: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
    """(A_c r_c, I + A_c diag(theta_c) A_c^T) for every class c, each (C, M) and (C, M, M).

    ``A`` is one projection (M, N) shared by the classes or one per class (C, M, N) (a kernel per class);
    ``r``, ``theta`` (N, C).
    """
    if A.shape.rank == 3:
        eta1 = tf.linalg.matvec(A, tf.transpose(r))  # (C, M)
    else:
        eta1 = tf.transpose(tf.matmul(A, r))  # (C, M)
    weighted = A * tf.transpose(theta)[:, None, :]  # (C, M, N)
    eye = tf.eye(tf.shape(A)[-2], dtype=A.dtype)
    return eta1, eye + tf.matmul(weighted, A, transpose_b=True)


@check_shapes("A: [classes..., M, N]", "onehot: [N, C]", "loc.c: [N, C]", "loc.gamma: [N, C]", "return[0]: [C, M]", "return[1]: [C, M, M]")
def global_natural_parameters(A: tf.Tensor, onehot: tf.Tensor, loc: LocalFactors, scale: float | tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
    """The optimal q(v_c) for the locals, as natural parameters (P m, P), data sums scaled by ``scale``.

    P_c = I + scale A diag(theta_c) A^T, P_c m_c = scale A (y'_c - gamma_c) / 2 (paper's CAVI update, whitened);
    ``A`` (M, N), or (C, M, N) with a kernel per class (A_c in class c's update).
    """
    theta = polya_gamma_mean(onehot + loc.gamma, loc.c)  # (N, C)
    return class_weighted_natural_parameters(A, scale * (onehot - loc.gamma) / 2.0, scale * theta)


class AugmentedLogisticSoftmaxGP(gpflow.base.Module):
    """Inducing inputs Z shared by the classes, one whitened q(v_c) per class held as natural parameters.

    ``kernel`` is one gpflow kernel shared by the classes, or a ``gpflow.kernels.SeparateIndependent`` of
    ``num_classes`` kernels, one per class (the paper's authors' choice).
    """

    def __init__(self, kernel: gpflow.kernels.Kernel, Z: np.ndarray, num_classes: int, jitter: float = DEFAULT_JITTER,
                 locals_family: str = "collapsed", local_passes: int = 1):
        super().__init__(name="augmented_logistic_softmax_gp")
        if isinstance(local_passes, bool) or not isinstance(local_passes, (int, np.integer)) or local_passes < 1:
            raise ValueError(f"local_passes must be an integer >= 1; got {local_passes!r}")
        self.local_passes = int(local_passes)
        if locals_family not in LOCALS_FAMILIES:
            raise ValueError(f"locals_family must be one of {list(LOCALS_FAMILIES)}; got {locals_family!r}")
        self.locals_family = locals_family
        if isinstance(kernel, gpflow.kernels.SeparateIndependent) and len(kernel.kernels) != int(num_classes):
            raise ValueError(f"a kernel per class needs {int(num_classes)} kernels, one per class; "
                             f"got a SeparateIndependent of {len(kernel.kernels)}")
        self.kernel = kernel
        self.num_classes = int(num_classes)
        self.Z = inducing_variable(Z)
        M = self.Z.shape[0]
        # q(v_c) = prior N(0, I) to start: eta1 = P m = 0, P = I.
        self.eta1 = tf.Variable(np.zeros((num_classes, M)), trainable=False, name="eta1")
        self.precision = tf.Variable(np.tile(np.eye(M), (num_classes, 1, 1)), trainable=False, name="precision")
        self.jitter = float(jitter)

    @property
    def kernel_per_class(self) -> bool:
        """Whether each class has its own kernel (a ``SeparateIndependent``) rather than one shared."""
        return isinstance(self.kernel, gpflow.kernels.SeparateIndependent)

    @property
    def kernels(self) -> list[gpflow.kernels.Kernel]:
        """Class c's kernel at index c (the same object C times when shared)."""
        return list(self.kernel.kernels) if self.kernel_per_class else [self.kernel] * self.num_classes

    def project(self, X: tf.Tensor) -> Projection:
        """A = L^-1 K_mn with K_mm + jitter = L L^T, and the residual variances diag(K_nn - A^T A).

        (M, N) and (N,) for a shared kernel; (C, M, N) and (C, N), one per class, for a kernel per class.
        """
        Z = tf.convert_to_tensor(self.Z)
        if not self.kernel_per_class:
            return project(self.kernel, Z, X, self.jitter)
        kernels = self.kernel.kernels
        L = cholesky_with_jitter(tf.stack([k(Z) for k in kernels]), self.jitter)
        return whiten(L, tf.stack([k(Z, X) for k in kernels]), tf.stack([k(X, full_cov=False) for k in kernels]))

    def q(self) -> GaussianQ:
        """Mean m_c = P_c^-1 eta1_c and chol(P_c)^-1 of every q(v_c), one factorisation for all uses."""
        Lp = tf.linalg.cholesky(tf.convert_to_tensor(self.precision))
        eye = tf.eye(tf.shape(Lp)[1], batch_shape=[tf.shape(Lp)[0]], dtype=Lp.dtype)
        inv_chol = tf.linalg.triangular_solve(Lp, eye, lower=True)
        mean = tf.linalg.matvec(inv_chol, tf.linalg.matvec(inv_chol, self.eta1), transpose_a=True)
        return GaussianQ(mean, inv_chol)

    @staticmethod
    def marginals(proj: Projection, q: GaussianQ) -> tuple[tf.Tensor, tf.Tensor]:
        """q(f_ic) = N(a_i^T m_c, resid_i + |chol(P_c)^-1 a_i|^2), each (N, C): one projection for all classes."""
        mean, var = whitened_marginals(proj, q.mean, q.inv_chol, sqrt_transposed=True)  # (C, N) each
        return tf.transpose(mean), tf.transpose(var)

    @staticmethod
    def kl(q: GaussianQ) -> tf.Tensor:
        """sum_c KL(N(m_c, P_c^-1) || N(0, I)); P_c^-1 = S S^T with S = chol(P_c)^-T, triangular."""
        return whitened_kl(q.mean, q.inv_chol)

    def elbo(self, X: tf.Tensor, onehot: tf.Tensor, scale: float | tf.Tensor = 1.0,
             loc: LocalFactors | None = None) -> tf.Tensor:
        """The augmented ELBO at the locals ``loc`` (None: their joint optimum for the current q), data part of
        a batch scaled by ``scale`` = N/|B|; the locals are held in its gradients."""
        q = self.q()
        mean, var = self.marginals(self.project(X), q)
        loc = self.optimal_locals(mean, var) if loc is None else loc
        loc = LocalFactors(*[tf.stop_gradient(t) for t in loc])
        return scale * tf.reduce_sum(self.elbo_terms(mean, var, onehot, loc)) - self.kl(q)

    def optimal_locals(self, mean: tf.Tensor, var: tf.Tensor) -> LocalFactors:
        """The joint optimum of the local factors of this model's ``locals_family`` for marginals q(f) = N(mean, var)."""
        return collapsed_locals(mean, var) if self.locals_family == "collapsed" else optimal_locals(mean, var)

    def elbo_terms(self, mean: tf.Tensor, var: tf.Tensor, onehot: tf.Tensor, loc: LocalFactors) -> tf.Tensor:
        """Per-point bound of this model's ``locals_family`` at the given locals."""
        terms = collapsed_elbo_terms if self.locals_family == "collapsed" else augmented_elbo_terms
        return terms(mean, var, onehot, loc)

    def natural_gradient_step(self, X: tf.Tensor, onehot: tf.Tensor, scale: float | tf.Tensor, rho: float | tf.Tensor,
                              alpha: tf.Tensor | None = None) -> LocalFactors:
        """The batch's locals, then eta <- (1 - rho) eta + rho eta_hat (rho = 1, full batch: CAVI); returns the locals.

        The mean field's locals are the paper's pass from q(lambda_i) = Gamma(``alpha``, C), the batch's
        current q(lambda) (required), ``local_passes`` times (AugmentedGaussianProcesses.jl repeats the
        q(n), q(lambda) pair: twice for its full GP, five times for its sparse one, src/likelihood/
        logisticsoftmax.jl at 4edbe2a, ``local_updates!``); the collapsed locals are their optimum and need no ``alpha``.
        """
        proj = self.project(X)
        mean, var = self.marginals(proj, self.q())
        if self.locals_family == "collapsed":
            loc = collapsed_locals(mean, var)
        elif alpha is None:
            raise ValueError("natural_gradient_step of a mean-field model needs alpha, the batch's current q(lambda) "
                             "shapes (one per row), as the paper's sweep updates q(n) from them; got None")
        else:
            loc = paper_locals(mean, var, alpha)
            for _ in range(self.local_passes - 1):  # the q(n), q(lambda) pair again at the same c
                loc = paper_locals(mean, var, loc.alpha)
        eta1_hat, precision_hat = global_natural_parameters(proj.A, onehot, loc, scale)
        self.eta1.assign((1.0 - rho) * self.eta1 + rho * eta1_hat)
        self.precision.assign((1.0 - rho) * self.precision + rho * precision_hat)
        return loc

    def predict_f(self, X: np.ndarray | tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
        """Means and variances of q(f_c(x)), each (N, C)."""
        return self.marginals(self.project(tf.convert_to_tensor(X, tf.float64)), self.q())

    def sample_proba(self, X: np.ndarray, num_samples: int, seed: int) -> np.ndarray:
        """p(y | f_s) at ``num_samples`` seeded draws of the latent marginals q(f(x)), (S, N, C).

        Their mean is the Monte Carlo ``predict_proba``; their spread is the epistemic
        uncertainty a BALD-style acquisition scores (per point, so marginal draws suffice).
        """
        mean, var = self.predict_f(X)
        S, (N, C) = int(num_samples), mean.shape
        eps = tf.random.stateless_normal((S, N, C), seed=[int(seed), 1], dtype=mean.dtype, alg="philox")
        draws = mean + tf.sqrt(tf.maximum(var, 0.0)) * eps
        return logistic_softmax_probs(tf.reshape(draws, (S * N, C))).numpy().reshape(S, N, C)

    def predict_proba(self, X: np.ndarray, num_samples: int, seed: int, chunk: int = 4096) -> np.ndarray:
        """E_q p(y | f) by seeded Monte Carlo over the latent marginals, not a plug-in of the mean.

        Compiled once per ``signature_key`` and ``num_samples`` for any rows and seed (``_shared_predictor``).
        """
        from gpal.models.state import module_variables

        X = np.asarray(X, dtype=np.float64)
        predict = _shared_predictor(self, int(num_samples))
        values = module_variables(self)
        seed = tf.constant(int(seed), tf.int64)
        parts = [predict(values, tf.constant(X[i : i + chunk]), seed).numpy() for i in range(0, X.shape[0], chunk)]
        return np.concatenate(parts, axis=0) if parts else np.zeros((0, self.num_classes))


def signature_key(model: AugmentedLogisticSoftmaxGP) -> str:
    """What a compiled function of ``model`` depends on but its values, as a string.

    The kernel's structure, the shapes, the jitter, the classes of the model's parts and any attribute a
    part sets over its class's (a patched method).  A kernel the structure cannot describe is unshared.

    Returns
    -------
    str
        JSON text, equal for models that one trace serves (the shared predictor and CAVI updates).
    """
    from gpal.models.state import kernel_to_config, module_variables

    try:
        kernel: Any = [kernel_to_config(k) for k in model.kernels] if model.kernel_per_class else kernel_to_config(model.kernel)
    except NotImplementedError:
        kernel = f"unshared@{id(model)}"
    parts = [model, *model.submodules]
    return json.dumps({
        "kernel": kernel, "jitter": model.jitter, "num_classes": model.num_classes, "locals": model.locals_family,
        "variables": {p: (tuple(v.shape), v.dtype.name, bool(v.trainable)) for p, v in module_variables(model).items()},
        "classes": sorted(f"{type(m).__module__}.{type(m).__qualname__}@{id(type(m))}" for m in parts),
        "overrides": sorted(f"{type(m).__qualname__}.{name}={value!r}@{id(value)}" for m in parts
                            for name, value in vars(m).items() if hasattr(type(m), name)),
    }, sort_keys=True, default=str)


# (signature key, draws) -> compiled (values, X, seed) prediction; a few kept per process.
_PREDICTORS = KeptFunctions(kept=16)


def _shared_predictor(model: AugmentedLogisticSoftmaxGP, num_samples: int) -> Callable:
    """``(values, X, seed) -> E_q p(y | f)`` at ``X`` for any model of ``model``'s ``signature_key``.

    Tracing costs more than a small fit's predictions, and a script fits many models that differ
    only in their values: the prediction is traced once, on a private copy of the first model of
    its key, reading the variables given as ``values`` in place of its own (``reading_values``).
    Rows and seed are arguments, so neither retraces; the results equal a trace of the model's own
    bit for bit (tested).
    """
    from gpal.models.state import reading_values

    key = json.dumps([signature_key(model), int(num_samples)])
    kept = _PREDICTORS.get(key)
    if kept is not None:
        return kept
    template = module_copy(model)

    def predict(values: dict[str, Any], X: tf.Tensor, seed: tf.Tensor) -> tf.Tensor:
        with reading_values(template, values):
            mean, var = template.predict_f(X)
            return monte_carlo_mean(logistic_softmax_probs, mean, var, num_samples, seed)

    rows = tf.TensorSpec([None, int(template.Z.shape[-1])], tf.float64)
    return _PREDICTORS.keep(key, instance_function(predict, input_signature=[
        variable_specs(template), rows, tf.TensorSpec([], tf.int64)]))


def as_latent_gps(model: AugmentedLogisticSoftmaxGP) -> LatentGPs:
    """The fitted q(u) in the generic model's parametrisation: one kernel copy and Z per class, q_sqrt = chol(P_c^-1).

    Training by conjugate updates changes how q is found, not the model: in this form it
    predicts through ``NoisySVGP`` exactly as an SVI-trained model does.
    """

    q = model.q()
    covariance = tf.linalg.matmul(q.inv_chol, q.inv_chol, transpose_a=True)  # chol(P)^-T chol(P)^-1 = P^-1
    gp = LatentGPs([module_copy(k) for k in model.kernels], model.Z.numpy(), model.jitter)
    gp.q_mu.assign(tf.transpose(q.mean))
    gp.q_sqrt.assign(tf.linalg.cholesky(covariance))
    return gp


def onehot_labels(y: np.ndarray, num_classes: int) -> np.ndarray:
    """(N, C) float64 indicator y'_ic = [y_i = c]."""
    return np.eye(num_classes)[np.asarray(y, dtype=np.int64)]

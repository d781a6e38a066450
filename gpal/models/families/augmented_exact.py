"""The exact ELBO of the logistic-softmax GP and natural-gradient steps on it, for the augmented model's q(v).

The augmented bound (``gpal.models.families.augmented_logistic_softmax``) makes every update closed
form, but its optimum is a less confident q(v) than the exact ELBO's (docs/papers/004_numbers.md: the
Polya-Gamma bound is loose by a q-dependent amount).  Its CAVI sweeps are a fast start; these steps
finish on the objective SVI maximises,

    L(q) = sum_i E_q(f_i) log p(y_i | f_i) - sum_c KL(q(v_c) || N(0, I)),

with E_q log p by the same seeded, reparameterised Monte Carlo as ``LogisticSoftmaxLikelihood`` (fixed
draws, so L is a deterministic function of q and the kernel).

Natural gradient (whitened q(v_c) = N(m_c, S_c), natural parameters eta1 = P m, P = S^-1).  With the
marginals mu_ic = a_i^T m_c, s2_ic = r_i + a_i^T S_c a_i and g = dELL/dmu, h = dELL/ds2 (N, C), the chain
rule gives dL/dm_c = A g_c - m_c and dL/dS_c = A diag(h_c) A^T - (I - S_c^-1) / 2.  The natural gradient of
a Gaussian is the gradient in its expectation parameters (m, S + m m^T), so a step of size rho is

    P <- (1 - rho) P + rho P_hat,        P_hat_c    = I + A diag(-2 h_c) A^T,
    eta1 <- (1 - rho) eta1 + rho eta1_hat, eta1_hat_c = A (g_c - 2 h_c * mu_c),

the augmented update's form with theta = -2 h and (y' - gamma) / 2 = g - 2 h mu (for the Polya-Gamma
bound, which is quadratic in f, these are exact and rho = 1 is the CAVI update).  Its fixed points are
the stationary points of L.  The logistic-softmax is not log-concave in a wrong class's latent
(-log(sigma(f_c) + R) is convex for large f_c), so h may be positive and P_hat indefinite; a step whose
precision would not be positive definite is halved until it is (at rho -> 0 the step is P itself).
"""

from __future__ import annotations

import tensorflow as tf
from check_shapes import check_shapes

from gpal.models.families.augmented_logistic_softmax import AugmentedLogisticSoftmaxGP, class_weighted_natural_parameters
from gpal.models.likelihoods.logistic_softmax import logistic_softmax_log_prob
from gpal.models.quadrature import monte_carlo_mean

__all__ = ["expected_log_lik", "exact_elbo", "exact_natural_parameters", "natural_gradient_update"]

# Halvings of rho tried before a step is skipped (rho * 2^-12 < 3e-4: no progress left to make).
_MAX_HALVINGS = 12


@check_shapes("mean: [N, C]", "var: [N, C]", "labels: [N]", "return: [N]")
def expected_log_lik(mean: tf.Tensor, var: tf.Tensor, labels: tf.Tensor, num_samples: int, seed: int) -> tf.Tensor:
    """E_q log p(y_i | f_i) per point by ``num_samples`` seeded draws (those of ``LogisticSoftmaxLikelihood``)."""
    tiled = tf.tile(labels, [num_samples])
    return monte_carlo_mean(lambda F: logistic_softmax_log_prob(F, tiled), mean, var, num_samples, seed, at_once=True)


def exact_elbo(model: AugmentedLogisticSoftmaxGP, X: tf.Tensor, labels: tf.Tensor, num_samples: int, seed: int) -> tf.Tensor:
    """L(q) = sum_i E_q log p(y_i | f_i) - KL(q(v) || p(v)) of the model's q(v) and kernel (differentiable in both)."""
    q = model.q()
    mean, var = model.marginals(model.project(X), q)
    return tf.reduce_sum(expected_log_lik(mean, var, labels, num_samples, seed)) - model.kl(q)


@check_shapes("A: [classes..., M, N]", "mean: [N, C]", "g_mean: [N, C]", "g_var: [N, C]", "return[0]: [C, M]", "return[1]: [C, M, M]")
def exact_natural_parameters(A: tf.Tensor, mean: tf.Tensor, g_mean: tf.Tensor, g_var: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
    """(eta1_hat, P_hat): the natural parameters a full natural-gradient step (rho = 1) of L would reach.

    ``g_mean``, ``g_var``: dELL/dmu and dELL/ds2 at the marginals ``mean`` (module docstring).
    """
    theta = -2.0 * g_var
    return class_weighted_natural_parameters(A, g_mean + theta * mean, theta)


def _positive_definite(P: tf.Tensor) -> tf.Tensor:
    """Whether every matrix of the batch is positive definite (its smallest eigenvalue above rounding)."""
    smallest = tf.reduce_min(tf.linalg.eigvalsh(P))
    scale = tf.reduce_max(tf.abs(tf.linalg.diag_part(P)))
    return smallest > 1e-10 * scale


def natural_gradient_update(model: AugmentedLogisticSoftmaxGP, eta1_hat: tf.Tensor, P_hat: tf.Tensor,
                            rho: tf.Tensor) -> tf.Tensor:
    """eta <- (1 - rho) eta + rho eta_hat, rho halved until the precision stays positive definite.

    Returns the step size taken (0 when no halving kept it positive definite: q(v) is unchanged).
    """
    eta1, P = tf.convert_to_tensor(model.eta1), tf.convert_to_tensor(model.precision)

    def blend(step: tf.Tensor) -> tf.Tensor:
        return (1.0 - step) * P + step * P_hat

    step = tf.while_loop(
        lambda i, step: tf.logical_and(i < _MAX_HALVINGS, tf.logical_not(_positive_definite(blend(step)))),
        lambda i, step: (i + 1, step / 2.0),
        (tf.constant(0), tf.cast(rho, P.dtype)),
    )[1]
    step = tf.where(_positive_definite(blend(step)), step, tf.zeros_like(step))
    model.eta1.assign((1.0 - step) * eta1 + step * eta1_hat)
    model.precision.assign(blend(step))
    return step

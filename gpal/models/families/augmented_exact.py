"""The exact ELBO of the logistic-softmax GP and natural-gradient steps on it, for the augmented model's q(v).

The augmented bound (``gpal.models.families.augmented_logistic_softmax``) makes every update closed
form, but its optimum is a less confident q(v) than the exact ELBO's (docs/papers/004_augmented.md: the
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

import json
import threading

import numpy as np
import tensorflow as tf
from check_shapes import check_shapes

from gpal.models.families.augmented_logistic_softmax import AugmentedLogisticSoftmaxGP, signature_key
from gpal.models.likelihoods.logistic_softmax import logistic_softmax_log_prob
from gpal.models.quadrature import monte_carlo_mean
from gpal.training.shared import LentBySignature

__all__ = ["ExactFinish", "expected_log_lik", "exact_elbo", "exact_natural_parameters", "natural_gradient_update"]

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


@check_shapes("A: [M, N]", "mean: [N, C]", "g_mean: [N, C]", "g_var: [N, C]", "return[0]: [C, M]", "return[1]: [C, M, M]")
def exact_natural_parameters(A: tf.Tensor, mean: tf.Tensor, g_mean: tf.Tensor, g_var: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
    """(eta1_hat, P_hat): the natural parameters a full natural-gradient step (rho = 1) of L would reach.

    ``g_mean``, ``g_var``: dELL/dmu and dELL/ds2 at the marginals ``mean`` (module docstring).
    """
    theta = -2.0 * g_var
    eta1 = tf.transpose(tf.matmul(A, g_mean + theta * mean))  # (C, M)
    weighted = A[None, :, :] * tf.transpose(theta)[:, None, :]  # (C, M, N)
    eye = tf.eye(tf.shape(A)[0], dtype=A.dtype)
    return eta1, eye + tf.matmul(weighted, A, transpose_b=True)


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


class ExactFinish:
    """Steps on L from the model's current q(v) and kernel: q(v) by natural gradient, the kernel (and Z) by Adam.

    Both move from the same state, whose one Monte Carlo pass gives dELL/d(mu, s2) (the natural gradient)
    and, through the marginals, dL/d(kernel): a step costs one evaluation of L and its gradient.
    ``LogisticSoftmaxGPClassifier(inference="cavi_exact")`` runs it after the CAVI sweeps.  The compiled
    step is shared by every model of one ``signature_key`` whatever its rows (``_SharedSteps``), as
    tracing costs more than a small fit's steps; Adam's state carries over between ``run`` calls.
    """

    def __init__(self, model: AugmentedLogisticSoftmaxGP, X: np.ndarray, y: np.ndarray, learning_rate: float,
                 inducing_learning_rate: float | None, num_samples: int, seed: int):
        self.model = model
        self.X = tf.constant(X, tf.float64)
        self.labels = tf.constant(y, tf.int64)
        self.learning_rates = (float(learning_rate), None if inducing_learning_rate is None else float(inducing_learning_rate))
        self.num_samples, self.seed = int(num_samples), int(seed)
        self._adam_state: list[np.ndarray] | None = None  # None: fresh

    def run(self, steps: int, rho: float, hyper: bool = True) -> list[float]:
        """``steps`` steps with natural-gradient size ``rho`` (Adam on the kernel too if ``hyper``); L before each."""
        shared, lock = _signature_steps(self.model, self.learning_rates[1] is not None, self.num_samples, self.seed)
        history = []
        try:
            shared.load(self.model, self.learning_rates, self._adam_state)
            try:
                step = shared.step_and_hyper if hyper else shared.step
                for _ in range(int(steps)):
                    value = float(step(self.X, self.labels, tf.constant(float(rho), tf.float64)))
                    if not np.isfinite(value):
                        raise FloatingPointError(f"the exact ELBO became {value}; try a smaller step or a larger jitter")
                    history.append(value)
            finally:
                self._adam_state = shared.save(self.model)
        finally:
            lock.release()
        return history


class _SharedSteps:
    """The compiled exact steps of a template model, for every model of its signature (the pattern of
    ``gpal.training.cavi``: the template takes a model's values, steps, and gives them back)."""

    def __init__(self, model: AugmentedLogisticSoftmaxGP, train_inducing: bool, num_samples: int, seed: int):
        import gpflow

        from gpal.training.adam import Adam

        self.model = AugmentedLogisticSoftmaxGP(gpflow.utilities.deepcopy(model.kernel), model.Z.numpy(),
                                                model.num_classes, model.jitter, model.locals_family)
        self.num_samples, self.seed = num_samples, seed
        # Z lives in the standardised input space, where a step of the kernel's size would throw it about.
        groups = [list(self.model.kernel.trainable_variables)] + ([[self.model.Z]] if train_inducing else [])
        self.groups = [(variables, Adam()) for variables in groups]
        for variables, adam in self.groups:
            adam.build(variables)
        signature = [tf.TensorSpec([None, model.Z.shape[1]], tf.float64), tf.TensorSpec([None], tf.int64),
                     tf.TensorSpec([], tf.float64)]
        self.step = tf.function(lambda X, y, rho: self._step_graph(X, y, rho, False), input_signature=signature,
                                autograph=False)
        self.step_and_hyper = tf.function(lambda X, y, rho: self._step_graph(X, y, rho, True), input_signature=signature,
                                          autograph=False)

    def load(self, model: AugmentedLogisticSoftmaxGP, learning_rates: tuple[float, float | None],
             adam_state: list[np.ndarray] | None) -> None:
        """The template at ``model``'s values; each Adam at its learning rate and ``adam_state`` (None: fresh)."""
        from gpal.models.state import assign_module_values, module_values

        assign_module_values(self.model, module_values(model))
        adam_variables = [var for _, adam in self.groups for var in adam.variables]
        for k, var in enumerate(adam_variables):
            var.assign(tf.zeros_like(var) if adam_state is None else adam_state[k])
        for (_, adam), rate in zip(self.groups, learning_rates):
            adam.learning_rate = rate

    def save(self, model: AugmentedLogisticSoftmaxGP) -> list[np.ndarray]:
        """Copy the template's values into ``model``; the Adam states, for the next ``load``."""
        from gpal.models.state import assign_module_values, module_values

        assign_module_values(model, module_values(self.model))
        return [var.numpy() for _, adam in self.groups for var in adam.variables]

    def _step_graph(self, X: tf.Tensor, labels: tf.Tensor, rho: tf.Tensor, hyper: bool) -> tf.Tensor:
        """One step from the current state; returns L there."""
        model = self.model
        with tf.GradientTape(watch_accessed_variables=False) as tape:
            tape.watch([v for variables, _ in self.groups for v in variables])
            q = model.q()
            proj = model.project(X)
            mean, var = model.marginals(proj, q)
            value = tf.reduce_sum(expected_log_lik(mean, var, labels, self.num_samples, self.seed)) - model.kl(q)
        grads = tape.gradient(value, [mean, var, [variables for variables, _ in self.groups]],
                              unconnected_gradients=tf.UnconnectedGradients.ZERO)
        eta1_hat, P_hat = exact_natural_parameters(proj.A, mean, grads[0], grads[1])
        if hyper:
            n = tf.cast(tf.shape(X)[0], value.dtype)
            for (variables, adam), group_grads in zip(self.groups, grads[2]):
                if variables:
                    adam.apply_gradients(zip([-g / n for g in group_grads], variables))
        natural_gradient_update(model, eta1_hat, P_hat, rho)
        return value


# Signature -> the steps traced on a template model, lent to one run at a time; a few kept per process.
_STEPS: LentBySignature[_SharedSteps] = LentBySignature(8)


def _signature_steps(model: AugmentedLogisticSoftmaxGP, train_inducing: bool, num_samples: int,
                     seed: int) -> tuple[_SharedSteps, threading.Lock]:
    """The kept steps of ``model``'s ``signature_key``, whether Z trains and the draws, with their lock held."""
    key = json.dumps({"model": signature_key(model), "train_inducing": train_inducing, "draws": [num_samples, seed]})
    return _STEPS.borrow(key, lambda: _SharedSteps(model, train_inducing, num_samples, seed))

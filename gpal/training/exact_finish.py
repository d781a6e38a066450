"""Natural-gradient steps on the exact ELBO of the augmented logistic-softmax GP, with Adam on its kernel.

The step itself is the model's (``gpal.models.families.augmented_exact``); this module runs it: the
compiled step shared by every model of one signature, Adam's state between runs, the learning rates
(``LogisticSoftmaxGPClassifier(inference="cavi_exact")`` runs it after the CAVI sweeps of
``gpal.training.cavi``).
"""

from __future__ import annotations

import json
from typing import ContextManager

import numpy as np
import tensorflow as tf

from gpal.models.families.augmented_exact import exact_natural_parameters, expected_log_lik, natural_gradient_update
from gpal.models.families.augmented_logistic_softmax import AugmentedLogisticSoftmaxGP, signature_key
from gpal.models.module_copy import module_copy
from gpal.training.shared import LentBySignature

__all__ = ["ExactFinish"]


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
        history = []
        with _signature_steps(self.model, self.learning_rates[1] is not None, self.num_samples, self.seed,
                              self) as shared:
            step = shared.step_and_hyper if hyper else shared.step
            for _ in range(int(steps)):
                value = float(step(self.X, self.labels, tf.constant(float(rho), tf.float64)))
                if not np.isfinite(value):
                    raise FloatingPointError(f"the exact ELBO became {value}; try a smaller step or a larger jitter")
                history.append(value)
        return history


class _SharedSteps:
    """The compiled exact steps of a template model, for every model of its signature (the pattern of
    ``gpal.training.cavi``: the template takes a model's values, steps, and gives them back)."""

    def __init__(self, model: AugmentedLogisticSoftmaxGP, train_inducing: bool, num_samples: int, seed: int):

        from gpal.training.adam import Adam

        self.model = AugmentedLogisticSoftmaxGP(module_copy(model.kernel), model.Z.numpy(),
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

    def take_from(self, finish: ExactFinish) -> None:
        """The template at the run's model's values; each Adam at its learning rate and the run's state (None: fresh)."""
        from gpal.models.state import assign_module_values, module_values

        assign_module_values(self.model, module_values(finish.model))
        adam_variables = [var for _, adam in self.groups for var in adam.variables]
        for k, var in enumerate(adam_variables):
            var.assign(tf.zeros_like(var) if finish._adam_state is None else finish._adam_state[k])
        for (_, adam), rate in zip(self.groups, finish.learning_rates):
            adam.learning_rate = rate

    def give_back(self, finish: ExactFinish) -> None:
        """The template's values into the run's model; the Adam states to the run, for its next ``run``."""
        from gpal.models.state import assign_module_values, module_values

        assign_module_values(finish.model, module_values(self.model))
        finish._adam_state = [var.numpy() for _, adam in self.groups for var in adam.variables]

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


def _signature_steps(model: AugmentedLogisticSoftmaxGP, train_inducing: bool, num_samples: int, seed: int,
                     finish: ExactFinish | None = None) -> ContextManager[_SharedSteps]:
    """The kept steps of ``model``'s ``signature_key``, whether Z trains and the draws, lent for a ``with`` block to
    ``finish`` (None: only to read their compiled functions)."""
    key = json.dumps({"model": signature_key(model), "train_inducing": train_inducing, "draws": [num_samples, seed]})
    return _STEPS.lent(key, lambda: _SharedSteps(model, train_inducing, num_samples, seed), finish)

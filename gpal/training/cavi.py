"""Conjugate training of the augmented logistic-softmax GP: CAVI on the full batch, natural gradients on minibatches.

The closed-form updates (optimal locals, global natural parameters) are the model's
(``gpal.models.families.augmented_logistic_softmax``, paper 004); this module schedules
them (step sizes rho_t, minibatches) and interleaves Adam steps on the kernel.
"""

from __future__ import annotations

import json
from typing import ContextManager

import numpy as np
import tensorflow as tf

from gpal.constraints import OneOf, check_values
from gpal.models.compiled import instance_function
from gpal.models.families.augmented_logistic_softmax import (
    AugmentedLogisticSoftmaxGP,
    LocalFactors,
    onehot_labels,
    signature_key,
)
from gpal.models.module_copy import module_copy
from gpal.progress import progress_bar
from gpal.training.adam import Adam
from gpal.training.shared import LentBySignature

__all__ = ["SCHEDULES", "AugmentedTrainer", "step_size"]

#: How the global step is scheduled: full-batch sweeps with rho = 1, or minibatches with rho_t.
SCHEDULES = ("cavi", "natural_gradient")


def step_size(t: int, delay: float, forgetting: float) -> float:
    """Robbins-Monro step rho_t = (t + delay)^-forgetting for t = 0, 1, ... (Hoffman et al. 2013)."""
    return float((t + delay) ** (-forgetting))


class AugmentedTrainer:
    """CAVI (full batch, rho = 1) or natural-gradient SVI (minibatches, rho_t) on one data set.

    Each iteration: the batch's locals and the global step on q(v) (one compiled call),
    then, every ``hyper_every`` iterations, one Adam step on the kernel's trainable variables (and Z
    when ``train_inducing``) ascending the same bound; ``hyper_every = 0`` keeps them fixed.
    The bound after the global step is recorded each iteration: exact for CAVI (it never decreases
    while the hyperparameters are fixed), a minibatch estimate scaled by N/|B| for SVI.  The mean field's
    q(lambda_i) (``alpha``, one per training row) is the trainer's state, carried over between ``run`` calls;
    the value and the hyperparameter gradient are then taken at the sweep's locals, the collapsed family's at
    their optimum for the new q.

    The compiled updates are traced once per model signature for any number of rows (``_SharedUpdates``), as
    tracing costs more than a small fit: ``run`` sets a private template model to this model's values and
    the shared Adam to this trainer's state, updates, and copies both back, so the results equal
    updates traced for this model alone (tested) and the Adam state carries over between ``run`` calls.
    """

    def __init__(
        self,
        model: AugmentedLogisticSoftmaxGP,
        X: np.ndarray,
        y: np.ndarray,
        learning_rate: float = 0.01,
        train_inducing: bool = False,
    ):
        self.model = model
        self.X = np.asarray(X, dtype=np.float64)
        self.onehot = onehot_labels(y, model.num_classes)
        self.n = self.X.shape[0]
        self.learning_rate = float(learning_rate)
        self.train_inducing = bool(train_inducing)
        self._adam_state: list[np.ndarray] | None = None  # None: a fresh Adam
        # q(lambda_i) = Gamma(C, C) to start (E lambda = 1), as the paper's code starts it; unused when collapsed.
        self.alpha = np.full(self.n, float(model.num_classes))

    def run(
        self,
        inference: str = "cavi",
        max_iter: int = 100,
        batch_size: int | None = None,
        hyper_every: int = 1,
        delay: float = 1.0,
        forgetting: float = 0.6,
        seed: int = 0,
        progress: bool = False,
    ) -> list[float]:
        """Run ``max_iter`` iterations and return the bound after each global step."""
        check_values({"inference": OneOf(SCHEDULES)}, {"inference": inference})
        full = batch_size is None or batch_size >= self.n
        if inference == "cavi" and not full:
            raise ValueError("CAVI updates use the full batch; pass batch_size=None or use inference='natural_gradient'")
        size = self.n if full else int(batch_size)
        scale, n = tf.constant(self.n / size, tf.float64), tf.constant(float(self.n), tf.float64)
        rng = np.random.default_rng(seed)
        X_all, Y_all = tf.constant(self.X), tf.constant(self.onehot)
        history: list[float] = []
        with _signature_updates(self.model, self.train_inducing, self) as shared:
            bar = progress_bar(range(max_iter), disable=not progress, desc=f"logistic-softmax ({inference})", unit="it")
            for t in bar:
                idx = np.arange(self.n) if full else rng.choice(self.n, size, replace=False)
                Xb, Yb = (X_all, Y_all) if full else (tf.constant(self.X[idx]), tf.constant(self.onehot[idx]))
                alpha = tf.constant(self.alpha[idx])
                rho = tf.constant(1.0 if inference == "cavi" else step_size(t, delay, forgetting), tf.float64)
                hyper = bool(hyper_every) and (t + 1) % hyper_every == 0
                if hyper:
                    loc = shared.update(Xb, Yb, scale, rho, alpha)
                    value = float(shared.hyper(Xb, Yb, scale, n, *loc))
                else:
                    value, loc = shared.update_and_value(Xb, Yb, scale, rho, alpha)
                    value = float(value)
                self.alpha[idx] = loc[2].numpy()
                if not np.isfinite(value):
                    raise FloatingPointError(f"the augmented ELBO became {value} at iteration {t}; try a larger jitter")
                history.append(value)
                bar.set_postfix(elbo=f"{value:.4g}", refresh=False)
        return history


class _SharedUpdates:
    """The compiled CAVI / natural-gradient updates and Adam step of a template model, for every model of its signature."""

    def __init__(self, model: AugmentedLogisticSoftmaxGP, train_inducing: bool):

        self.model = AugmentedLogisticSoftmaxGP(module_copy(model.kernel), model.Z.numpy(),
                                                model.num_classes, model.jitter, model.locals_family)
        self.variables = list(self.model.kernel.trainable_variables) + ([self.model.Z] if train_inducing else [])
        self.optimizer = Adam()
        self.optimizer.build(self.variables)
        # Any number of rows: CAVI's batch is the whole training set, so known row counts traced anew for every
        # data set's size (54 traces in the 93 fits of scikit-learn's estimator checks).
        rows, by_class = (tf.TensorSpec([None, n], tf.float64) for n in (model.Z.shape[1], model.num_classes))
        per_row, scalar = tf.TensorSpec([None], tf.float64), tf.TensorSpec([], tf.float64)
        update = [rows, by_class, scalar, scalar, per_row]  # X, onehot, scale, rho, alpha
        hyper = [rows, by_class, scalar, scalar, by_class, by_class, per_row, per_row]  # X, onehot, scale, n, locals
        self.update = instance_function(self._update_graph, input_signature=update)
        self.update_and_value = instance_function(self._update_and_value_graph, input_signature=update)
        self.hyper = instance_function(self._hyper_graph, input_signature=hyper)

    def take_from(self, trainer: AugmentedTrainer) -> None:
        """The template at the trainer's model's values, Adam at its learning rate and state (None: fresh)."""
        from gpal.models.state import assign_module_values, module_values

        assign_module_values(self.model, module_values(trainer.model))
        for k, var in enumerate(self.optimizer.variables):
            var.assign(tf.zeros_like(var) if trainer._adam_state is None else trainer._adam_state[k])
        self.optimizer.learning_rate = trainer.learning_rate

    def give_back(self, trainer: AugmentedTrainer) -> None:
        """The template's values into the trainer's model; Adam's state to the trainer, for its next run."""
        from gpal.models.state import assign_module_values, module_values

        assign_module_values(trainer.model, module_values(self.model))
        trainer._adam_state = [var.numpy() for var in self.optimizer.variables]

    def _value(self, X: tf.Tensor, onehot: tf.Tensor, scale: tf.Tensor, loc: LocalFactors) -> tf.Tensor:
        """The bound at the current q: the mean field's at the sweep's locals, the collapsed one's at their optimum."""
        return self.model.elbo(X, onehot, scale, loc if self.model.locals_family == "mean_field" else None)

    def _update_graph(self, X: tf.Tensor, onehot: tf.Tensor, scale: tf.Tensor, rho: tf.Tensor,
                      alpha: tf.Tensor) -> LocalFactors:
        """Global step (before a hyper step, which reports the bound); returns the sweep's locals."""
        return self.model.natural_gradient_step(X, onehot, scale, rho, alpha)

    def _update_and_value_graph(self, X: tf.Tensor, onehot: tf.Tensor, scale: tf.Tensor, rho: tf.Tensor,
                                alpha: tf.Tensor) -> tuple[tf.Tensor, LocalFactors]:
        """Global step; then the bound at the new q, and the sweep's locals."""
        loc = self.model.natural_gradient_step(X, onehot, scale, rho, alpha)
        return self._value(X, onehot, scale, loc), loc

    def _hyper_graph(self, X: tf.Tensor, onehot: tf.Tensor, scale: tf.Tensor, n: tf.Tensor, *loc: tf.Tensor) -> tf.Tensor:
        """One Adam step on the kernel variables (and Z) ascending the bound per training row; returns the bound before it."""
        with tf.GradientTape(watch_accessed_variables=False) as tape:
            tape.watch(self.variables)
            value = self._value(X, onehot, scale, LocalFactors(*loc))
            loss = -value / n
        grads = tape.gradient(loss, self.variables, unconnected_gradients=tf.UnconnectedGradients.ZERO)
        self.optimizer.apply_gradients(zip(grads, self.variables))
        return value


# Signature -> the updates traced on a template model, lent to one run at a time; a few kept per process.
_UPDATES: LentBySignature[_SharedUpdates] = LentBySignature(8)


def _signature_updates(model: AugmentedLogisticSoftmaxGP, train_inducing: bool,
                       trainer: AugmentedTrainer | None = None) -> ContextManager[_SharedUpdates]:
    """The kept updates of ``model``'s signature (``signature_key``) and of whether Z trains (new ones if busy or
    absent), lent for a ``with`` block to ``trainer`` (None: only to read their compiled functions)."""
    key = json.dumps({"model": signature_key(model), "train_inducing": train_inducing})
    return _UPDATES.lent(key, lambda: _SharedUpdates(model, train_inducing), trainer)

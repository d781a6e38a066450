"""Conjugate training of the augmented logistic-softmax GP: CAVI on the full batch, natural gradients on minibatches.

The closed-form updates (optimal locals, global natural parameters) are the model's
(``gpal.models.families.augmented_logistic_softmax``, paper 004); this module schedules
them (step sizes rho_t, minibatches) and interleaves Adam steps on the kernel.
"""

from __future__ import annotations

import numpy as np
import tensorflow as tf
import tf_keras
from gpal.progress import progress_bar

from gpal.constraints import OneOf, check_values
from gpal.models.compiled import instance_function
from gpal.models.families.augmented_logistic_softmax import AugmentedLogisticSoftmaxGP, onehot_labels
from gpal.registry import CONJUGATE_INFERENCE

__all__ = ["AugmentedTrainer", "step_size"]


def step_size(t: int, delay: float, forgetting: float) -> float:
    """Robbins-Monro step rho_t = (t + delay)^-forgetting for t = 0, 1, ... (Hoffman et al. 2013)."""
    return float((t + delay) ** (-forgetting))


class AugmentedTrainer:
    """CAVI (full batch, rho = 1) or natural-gradient SVI (minibatches, rho_t) on one data set.

    Each iteration: optimal locals for the batch and the global step on q(v) (one compiled call),
    then, every ``hyper_every`` iterations, one Adam step on the kernel's trainable variables (and Z
    when ``train_inducing``) ascending the same bound; ``hyper_every = 0`` keeps them fixed.
    The bound after the global step is recorded each iteration: exact for CAVI (it never decreases
    while the hyperparameters are fixed), a minibatch estimate scaled by N/|B| for SVI.
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
        self.variables = list(model.kernel.trainable_variables) + ([model.Z] if train_inducing else [])
        self.optimizer = tf_keras.optimizers.Adam(learning_rate=learning_rate)
        self._update = instance_function(self._update_graph)
        self._hyper = instance_function(self._hyper_graph)

    def _update_graph(self, X: tf.Tensor, onehot: tf.Tensor, scale: tf.Tensor, rho: tf.Tensor, value: bool) -> tf.Tensor:
        """Global step; then the bound at the new q when ``value`` (else 0: the hyper step will report it)."""
        self.model.natural_gradient_step(X, onehot, scale, rho)
        return self.model.elbo(X, onehot, scale) if value else tf.zeros([], tf.float64)

    def _hyper_graph(self, X: tf.Tensor, onehot: tf.Tensor, scale: tf.Tensor) -> tf.Tensor:
        """One Adam step on the kernel variables (and Z) ascending the bound; returns the bound before it."""
        with tf.GradientTape(watch_accessed_variables=False) as tape:
            tape.watch(self.variables)
            value = self.model.elbo(X, onehot, scale)
            loss = -value / self.n
        grads = tape.gradient(loss, self.variables, unconnected_gradients=tf.UnconnectedGradients.ZERO)
        self.optimizer.apply_gradients(zip(grads, self.variables))
        return value

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
        check_values({"inference": OneOf(CONJUGATE_INFERENCE)}, {"inference": inference})
        full = batch_size is None or batch_size >= self.n
        if inference == "cavi" and not full:
            raise ValueError("CAVI updates use the full batch; pass batch_size=None or use inference='natural_gradient'")
        size = self.n if full else int(batch_size)
        scale = tf.constant(self.n / size, tf.float64)
        rng = np.random.default_rng(seed)
        X_all, Y_all = tf.constant(self.X), tf.constant(self.onehot)
        history = []
        bar = progress_bar(range(max_iter), disable=not progress, desc=f"logistic-softmax ({inference})", unit="it")
        for t in bar:
            if full:
                Xb, Yb = X_all, Y_all
            else:
                idx = rng.choice(self.n, size, replace=False)
                Xb, Yb = tf.constant(self.X[idx]), tf.constant(self.onehot[idx])
            rho = 1.0 if inference == "cavi" else step_size(t, delay, forgetting)
            hyper = bool(hyper_every) and (t + 1) % hyper_every == 0
            value = self._update(Xb, Yb, scale, tf.constant(rho, tf.float64), not hyper)
            value = float(self._hyper(Xb, Yb, scale) if hyper else value)
            if not np.isfinite(value):
                raise FloatingPointError(f"the augmented ELBO became {value} at iteration {t}; try a larger jitter")
            history.append(value)
            bar.set_postfix(elbo=f"{value:.4g}", refresh=False)
        return history

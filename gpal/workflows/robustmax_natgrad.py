"""Paper 004's robust-max baseline as the paper trains it: natural gradients on q(u), Adam on the rest.

The paper compares its augmented model with a sparse variational GP whose robust-max likelihood is trained by
natural gradients.  This is GPflow's own ``SVGP`` with GPflow's ``RobustMax`` (label flips fixed at 10⁻³) and
``NaturalGradient`` on (q_mu, q_sqrt), each step followed by one Adam step on the kernel and inducing inputs, as
GPflow's documentation pairs them; the workflow's ``svgp-robustmax`` trains gpal's model by Adam alone.

Why a step may be halved: robust-max's expected log-likelihood is not concave in the latent variances.  Where the
labelled class's latent mean is not the largest, a wider q(f) raises the chance that it is, so dE/dS has positive
directions, and the natural-gradient update of the precision, (1 - gamma) P + gamma (K^-1 - 2 dE/dS), can leave it
indefinite: q(u) is then no Gaussian, its Cholesky fails and GPflow refuses the step ("the corresponding
unconstrained value has NaN or Inf").  On vehicle, from q(u) at the prior, the smallest eigenvalue of the precision
after one step of gamma = 0.1 is below zero for every class, after one of 0.01 above it.  A failed step is retried
from the same q(u) at half the step, as often as needed; ``halved_steps_`` counts the halvings.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["NATGRAD_GAMMA", "NaturalGradientRobustMax"]

#: The natural-gradient step: GPflow's documentation's 0.1 fails at the first step on vehicle (above); 0.01 is the
#: largest of 0.1, 0.01, 0.001 at which few steps fail.
NATGRAD_GAMMA = 0.01
_SMALLEST_GAMMA = 1e-8


class NaturalGradientRobustMax:
    """A robust-max SVGP classifier trained by natural gradients (q(u)) and Adam (kernel, inducing inputs).

    Parameters
    ----------
    num_inducing
        inducing inputs, started at k-means centres of the standardised training rows, shared by the classes.
    batch_size, epochs
        minibatch size and passes over the training rows.
    gamma
        the natural-gradient step, halved for a step whose q(u) would not be a Gaussian.
    learning_rate
        Adam's step on the kernel and inducing inputs.
    random_state
        seeds k-means and the minibatch order.
    progress
        show a bar over the epochs, with the last epoch's mean loss, as gpal's own fits do.
    """

    def __init__(self, *, num_inducing: int = 50, batch_size: int = 50, epochs: int = 100,
                 gamma: float = NATGRAD_GAMMA, learning_rate: float = 0.01, random_state: int = 0,
                 progress: bool = False):
        self.num_inducing, self.batch_size, self.epochs = int(num_inducing), int(batch_size), int(epochs)
        self.gamma, self.learning_rate, self.random_state = float(gamma), float(learning_rate), int(random_state)
        self.progress = bool(progress)
        if not 0 < self.gamma <= 1:
            raise ValueError(f"gamma must be in (0, 1], the natural-gradient step; got {gamma!r}")

    def __repr__(self) -> str:
        return (f"NaturalGradientRobustMax(num_inducing={self.num_inducing}, batch_size={self.batch_size}, "
                f"epochs={self.epochs}, gamma={self.gamma}, learning_rate={self.learning_rate})")

    def fit(self, X: Any, y: Any, X_var: Any = None) -> "NaturalGradientRobustMax":
        """Fit on ``X`` (n, d) and labels ``y``; ``X_var`` is refused, as the baseline takes exact inputs."""
        import gpflow
        import tensorflow as tf
        from gpflow.optimizers import NaturalGradient

        from gpal.data.standardizer import Standardizer
        from gpal.models.kernels import default_kernel
        from gpal.models.svgp import kmeans_inducing
        from gpal.progress import progress_bar

        if X_var is not None:
            raise ValueError("NaturalGradientRobustMax takes exact inputs: X_var must be None")
        X = np.asarray(X, dtype=float)
        self.classes_, codes = np.unique(np.asarray(y), return_inverse=True)
        if len(self.classes_) < 2:
            raise ValueError(f"NaturalGradientRobustMax needs at least 2 classes; y has {len(self.classes_)}")
        self._standardizer = Standardizer.fit(X)
        Z = self._standardizer.transform_arrays(X)[0]
        n, C = len(Z), len(self.classes_)
        model = gpflow.models.SVGP(
            default_kernel(Z.shape[1]), gpflow.likelihoods.MultiClass(C, invlink=gpflow.likelihoods.RobustMax(C)),
            gpflow.inducing_variables.InducingPoints(kmeans_inducing(Z, min(self.num_inducing, n), self.random_state)),
            num_latent_gps=C, whiten=True, num_data=n)
        gpflow.set_trainable(model.q_mu, False)
        gpflow.set_trainable(model.q_sqrt, False)
        gamma = tf.Variable(self.gamma, dtype=tf.float64)
        natgrad, adam = NaturalGradient(gamma=gamma), tf.optimizers.Adam(self.learning_rate)

        @tf.function
        def natural_step(Xb: tf.Tensor, yb: tf.Tensor) -> None:
            natgrad.minimize(lambda: model.training_loss((Xb, yb)), var_list=[(model.q_mu, model.q_sqrt)])

        @tf.function
        def adam_step(Xb: tf.Tensor, yb: tf.Tensor) -> tf.Tensor:
            with tf.GradientTape() as tape:
                loss = model.training_loss((Xb, yb))
            adam.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
            return loss

        rng = np.random.default_rng(self.random_state)
        labels = codes[:, None].astype(float)
        self.halved_steps_ = 0
        bar = progress_bar(range(self.epochs), disable=not self.progress, desc="robust-max (natural gradients)",
                           unit="epoch")
        for _ in bar:
            order = rng.permutation(n)
            losses = []
            for start in range(0, n, self.batch_size):
                rows = order[start:start + self.batch_size]
                Xb, yb = tf.constant(Z[rows]), tf.constant(labels[rows])
                kept, step = (model.q_mu.numpy(), model.q_sqrt.numpy()), self.gamma
                while True:
                    gamma.assign(step)
                    try:
                        natural_step(Xb, yb)
                        break
                    except tf.errors.InvalidArgumentError:  # q(u) would not be a Gaussian: retry at half the step
                        model.q_mu.assign(kept[0])
                        model.q_sqrt.assign(kept[1])
                        step /= 2
                        self.halved_steps_ += 1
                        if step < _SMALLEST_GAMMA:
                            raise RuntimeError(f"no natural-gradient step down to {_SMALLEST_GAMMA} keeps q(u) a "
                                               "Gaussian") from None
                losses.append(float(adam_step(Xb, yb)))
            bar.set_postfix(loss=f"{np.mean(losses):.4g}", refresh=False)
        self.model_ = model
        return self

    def predict_proba(self, X: Any, X_var: Any = None) -> np.ndarray:
        """(n, C) class probabilities, the classes in ``classes_``'s order."""
        if X_var is not None:
            raise ValueError("NaturalGradientRobustMax takes exact inputs: X_var must be None")
        Z = self._standardizer.transform_arrays(np.asarray(X, dtype=float))[0]
        mean, _ = self.model_.predict_y(Z)
        proba = np.clip(mean.numpy(), 0.0, None)
        return proba / proba.sum(axis=1, keepdims=True)

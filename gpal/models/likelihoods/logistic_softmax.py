"""Logistic-softmax likelihood (paper 004, Galy-Fajou et al.) for the generic variational model.

p(y = k | f) = sigma(f_k) / sum_c sigma(f_c) = softmax(log sigma(f))_k.

Here it is trained like any other likelihood: E_q[log p(y | f)] has no closed form
and is estimated by reparameterised Monte Carlo over q(f), and the predictive
probability E_q[p(y | f)] is averaged over draws of the latent functions (plugging
the mean into p(y | f) would ignore the latent uncertainty and be overconfident).
Both use log sigma(f) = -softplus(-f) and a log-sum-exp, so no sigmoid underflows.

``logistic_softmax_log_prob`` and ``logistic_softmax_probs`` are the likelihood
itself as pure functions, for the augmented (CAVI) model of the same likelihood.
"""

from __future__ import annotations

from typing import Any

import tensorflow as tf
from check_shapes import check_shapes, inherit_check_shapes

from gpal.constraints import Integer
from gpal.models.quadrature import monte_carlo_mean
from gpal.models.likelihoods.base import MonteCarloLikelihood
from gpal.models.likelihoods.softmax import softmax

__all__ = ["LogisticSoftmaxLikelihood", "logistic_softmax_log_prob", "logistic_softmax_probs"]


@check_shapes("F: [N, C]", "Y: [N]", "return: [N]")
def logistic_softmax_log_prob(F: tf.Tensor, Y: tf.Tensor) -> tf.Tensor:
    """log p(y | f) = log sigma(f_y) - log sum_c sigma(f_c), stable for any f."""
    log_sigmoid = tf.math.log_sigmoid(F)
    own = tf.gather(log_sigmoid, tf.cast(Y, tf.int32), axis=1, batch_dims=1)
    return own - tf.reduce_logsumexp(log_sigmoid, axis=1)


@check_shapes("F: [shape...]", "return: [shape...]")
def logistic_softmax_probs(F: tf.Tensor, axis: int = 1) -> tf.Tensor:
    """p(y = k | f) = sigma(f_k) / sum_c sigma(f_c) for every class k, classes along ``axis``."""
    return softmax(tf.math.log_sigmoid(F), axis)


class LogisticSoftmaxLikelihood(MonteCarloLikelihood):
    """Logistic-softmax labels; expectations over q(f) by seeded, stateless Monte Carlo.

    Parameters
    ----------
    num_classes
        C >= 2, or None for a template whose class count is set at fit.
    num_samples
        draws of f per point for E_q[log p(y | f)] in the ELBO.  The draws
        are fixed by ``seed``, so the training objective is deterministic (the same
        noise at every step for a given batch shape).
    num_predict_samples
        draws of f for the predictive probabilities.
    seed
        seed of both sets of draws.

    Examples
    --------
    >>> import tensorflow as tf
    >>> from gpal.models import LogisticSoftmaxLikelihood
    >>> lik = LogisticSoftmaxLikelihood(num_classes=2, num_predict_samples=200, seed=0)
    >>> Fmu = tf.constant([[1.0, -1.0], [0.0, 0.0]], tf.float64)
    >>> Fvar = tf.constant([[0.1, 0.1], [1.0, 1.0]], tf.float64)
    >>> lik.predict_proba(Fmu, Fvar).numpy().round(1)     # sigma(f_k) / sum_c sigma(f_c): flatter than softmax
    array([[0.7, 0.3],
           [0.5, 0.5]])
    """

    name = "logistic_softmax"

    def __init__(
        self, num_classes: int | None = None, num_samples: int = 100, num_predict_samples: int = 1000, seed: int = 0
    ):
        super().__init__(name=self.name)
        self.num_classes = None if num_classes is None else Integer(2).check("num_classes", num_classes)
        self.num_samples = Integer(1).check("num_samples", num_samples)
        self.num_predict_samples = Integer(1).check("num_predict_samples", num_predict_samples)
        self.seed = Integer(0).check("seed", seed)

    def num_latent(self, num_classes: int) -> int:
        if num_classes != self.num_classes:
            raise ValueError(
                f"this LogisticSoftmaxLikelihood was built for {self.num_classes} classes, not {num_classes}"
            )
        return num_classes

    @inherit_check_shapes
    def _variational_expectations(self, Fmu: tf.Tensor, Fvar: tf.Tensor, Y: tf.Tensor) -> tf.Tensor:
        labels = tf.tile(Y, [self.num_samples])  # a label per row of every draw
        return monte_carlo_mean(lambda F: logistic_softmax_log_prob(F, labels), Fmu, Fvar, self.num_samples, self.seed,
                                at_once=True)

    def _proba(self, F: tf.Tensor, axis: int) -> tf.Tensor:
        return logistic_softmax_probs(F, axis)

    def get_config(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "num_classes": self.num_classes,
            "num_samples": self.num_samples,
            "num_predict_samples": self.num_predict_samples,
            "seed": self.seed,
        }

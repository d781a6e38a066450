"""Step, probit and logit likelihoods as one: Gaussian noise of variance a on the latent functions.

Paper 000 (Liu et al.) writes each of these classifiers as an internal function
g = f + eps, eps ~ N(0, a I), read out by a robust step rule with label-flip
probability delta:

* binary, one latent f, y in {-1, +1} (the codes 0/1 map to -1/+1):
  p(y | g) = (1 - 2 delta) H(y g) + delta                      (eq. 5);
* C classes, one latent per class:
  p(y | g) = (1 - C delta / (C - 1)) prod_{c != y} H(g_y - g_c) + delta / (C - 1)   (eq. 15).

So p(y | g) is 1 - delta when g ranks y first and delta / (C - 1) otherwise, and
with S = q(g ranks y first), q(g) = N(Fmu, Fvar + a) (eq. 7, 17):

* E_q(g)[log p(y | g)] = S log(1 - delta) + (1 - S) log(delta / (C - 1))   (eq. 8, 18),
* p(y | data) = (1 - delta) S + delta / (C - 1) (1 - S)                      (eq. 9, 19),

with S = Phi(y mu / sqrt(a + nu)) in the binary form and, for C classes, the
1-D integral ``prob_largest`` (composite Gauss-Legendre).  The ELBO term is the one of the
augmented model (eq. 6, 16): by Jensen it lies below E_q(f)[log p(y | f)] of the
marginal likelihood p(y | f) = int p(y | g) p(g | f) dg.

a -> 0 gives the step likelihood, a = 1 the (multinomial) probit, a = 2.897 the
logit (Phi(z / sqrt(2.897)) is within 0.009 of the logistic CDF, App. A).
delta lies in (0, (C - 1) / C): at the upper end the label carries no
information, beyond it a wrong label would be likelier than the right one.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import gpflow
import tensorflow as tf
import tensorflow_probability as tfp
from check_shapes import inherit_check_shapes

from gpal.constraints import Integer, ListOf, Optional, Real
from gpal.models.quadrature import (
    MIN_VARIANCE,
    PANEL_EDGES_PER_CLASS,
    argmax_probabilities,
    panel_rule,
    normal_cdf,
    prob_largest,
    robust_expected_log,
    robust_predictive,
)
from gpal.models.likelihoods.base import Likelihood, argmax_rule

__all__ = [
    "NOISE_VARIANCES",
    "FORMS",
    "GaussianNoiseLikelihood",
    "StepLikelihood",
    "ProbitLikelihood",
    "LogitLikelihood",
]

# Noise variance a for each named likelihood (paper 000 sec. II-A).
NOISE_VARIANCES = {"step": 0.0, "probit": 1.0, "logit": 2.897}
# "auto": the binary form (one latent function) for 2 classes, the multi-class form otherwise.
FORMS = ("auto", "binary", "multiclass")
DEFAULT_DELTA = 1e-3


def _noise_variance(noise: Any) -> float:
    if isinstance(noise, str):
        if noise.lower() not in NOISE_VARIANCES:
            raise ValueError(f"noise must be one of {sorted(NOISE_VARIANCES)} or a variance a >= 0; got {noise!r}")
        return NOISE_VARIANCES[noise.lower()]
    if isinstance(noise, bool) or not isinstance(noise, numbers.Real):
        raise ValueError(f"noise must be one of {sorted(NOISE_VARIANCES)} or a variance a >= 0; got {noise!r}")
    if not (math.isfinite(noise) and noise >= 0.0):
        raise ValueError(f"noise variance a must be finite and >= 0 (0: step, 1: probit, 2.897: logit); got {noise}")
    return float(noise)


class GaussianNoiseLikelihood(Likelihood):
    """Robust step read-out of f + N(0, a): step (a -> 0), probit (a = 1), logit (a = 2.897).

    Parameters
    ----------
    num_classes
        number of classes C >= 2, or None for a template whose class count
        is set when it is fitted (``make_likelihood(template, C)``).
    noise
        "step", "probit", "logit" or the noise variance a >= 0 itself.
    delta
        label-flip probability, in (0, (C - 1) / C).
    learn_delta
        learn delta with the ELBO (the paper's recommendation, sec. IV-B1:
        a fixed delta distorts the latent means and variances); kept in its range by
        a scaled sigmoid.
    form
        "binary" (one latent function, eq. 8-9; needs C = 2), "multiclass" (one
        latent per class, eq. 18-19) or "auto" (binary for C = 2).
    num_quadrature
        Gauss-Legendre points per panel of the multi-class S
        (``gpal.models.quadrature.prob_largest``); 8 give <= 4e-8 for up to 5 classes and <= 4e-7 for 10, even at latent
        variance ratios of 1e4.
    delta_prior
        None (delta maximises the ELBO) or (a, b): a Beta(a, b) prior on the learned delta, whose log density
        training adds once to its objective as GPflow adds a parameter's prior, on delta's log-odds:
        a log delta + b log(1 - delta) - log B(a, b) (`log_prior_density`), so training finds the MAP of
        logit(delta).  (0.2, 5) is paper 000's authors' code.  Needs ``learn_delta``.

    Examples
    --------
    >>> import tensorflow as tf
    >>> from gpal.models import GaussianNoiseLikelihood
    >>> lik = GaussianNoiseLikelihood(num_classes=2, noise=1.7, form="multiclass")   # any a >= 0
    >>> lik.name, lik.num_latent(2), lik.noise_variance
    ('gaussian_noise', 2, 1.7)
    >>> Fmu = tf.constant([[2.0, -1.0], [0.0, 0.0]], tf.float64)
    >>> lik.predict_proba(Fmu, tf.fill([2, 2], tf.constant(0.1, tf.float64))).numpy().round(3)
    array([[0.942, 0.058],
           [0.5  , 0.5  ]])
    """

    name = "gaussian_noise"
    _options = {"delta_prior": Optional(ListOf(Real(0, None, low_open=True, meaning="a Beta shape"),
                                               min_length=2, max_length=2, unique=False))}

    def __init__(
        self,
        num_classes: int | None = None,
        noise: str | float = "probit",
        delta: float = DEFAULT_DELTA,
        learn_delta: bool = True,
        form: str = "auto",
        num_quadrature: int = 8,
        delta_prior: tuple[float, float] | None = None,
    ):
        super().__init__(name=self.name)
        self.num_classes = None if num_classes is None else Integer(2).check("num_classes", num_classes)
        self.noise_variance = _noise_variance(noise)
        self.noise = noise.lower() if isinstance(noise, str) else self.noise_variance
        if form not in FORMS:
            raise ValueError(f"form must be one of {FORMS}; got {form!r}")
        if form == "binary" and self.num_classes not in (None, 2):
            raise ValueError(
                f"form='binary' needs num_classes=2; got num_classes={self.num_classes}: "
                "use form='auto' or form='multiclass'"
            )
        upper = 1.0 if self.num_classes is None else (self.num_classes - 1) / self.num_classes
        if not 0.0 < float(delta) < upper:
            raise ValueError(
                f"delta must lie in (0, {upper:g}) = (0, (C-1)/C) for C={self.num_classes} classes; got {delta}"
            )
        self._nodes, self._weights = panel_rule(num_quadrature)
        self.num_quadrature = int(num_quadrature)
        self.form = form
        self.binary = form == "binary" or (form == "auto" and self.num_classes == 2)
        self.learn_delta = bool(learn_delta)
        checked = self._options["delta_prior"].check("delta_prior", delta_prior)
        self.delta_prior = None if checked is None else tuple(checked)
        if self.delta_prior is not None and not self.learn_delta:
            raise ValueError(f"delta_prior={delta_prior!r} needs learn_delta=True: a prior on a delta held fixed "
                             "would move the objective's value and nothing it trains")
        self.delta = gpflow.Parameter(
            float(delta),
            transform=tfp.bijectors.Sigmoid(low=tf.constant(0.0, tf.float64), high=tf.constant(upper, tf.float64)),
            trainable=self.learn_delta,
            dtype=tf.float64,
            name="delta",
        )

    def num_latent(self, num_classes: int) -> int:
        if num_classes != self.num_classes:
            raise ValueError(f"this {type(self).__name__} was built for {self.num_classes} classes, not {num_classes}")
        return 1 if self.binary else num_classes

    def values_per_evaluation(self, num_classes: int) -> int:
        """With noise, the multi-class p(y | f) is `argmax_probabilities`' quadrature: for each of the C classes,
        (len(edges) C - 1) panels of ``num_quadrature`` nodes, each node held in C arrays at once (the C - 1 other
        classes' tails and the density).  The binary form and the step hold their C probabilities.

        Returns
        -------
        int
            C^2 (5 C - 1) ``num_quadrature`` with noise and more than two classes, else C.
        """
        if self.binary or self.noise_variance == 0:
            return super().values_per_evaluation(num_classes)
        panels = PANEL_EDGES_PER_CLASS * num_classes - 1
        return num_classes * panels * self.num_quadrature * num_classes

    def _binary_z(self, Fmu: tf.Tensor, Fvar: tf.Tensor) -> tf.Tensor:
        """mu / sqrt(a + nu) of the single latent function: S = Phi(y z) for y = +-1."""
        return Fmu[:, 0] / tf.sqrt(tf.maximum(Fvar[:, 0] + self.noise_variance, MIN_VARIANCE))

    @inherit_check_shapes
    def _variational_expectations(self, Fmu: tf.Tensor, Fvar: tf.Tensor, Y: tf.Tensor) -> tf.Tensor:
        if self.binary:
            yz = (2.0 * tf.cast(Y, Fmu.dtype) - 1.0) * self._binary_z(Fmu, Fvar)
            S, S_other = normal_cdf(yz), normal_cdf(-yz)
        else:
            S = prob_largest(Fmu, Fvar + self.noise_variance, Y, self._nodes, self._weights)
            S_other = 1.0 - S
        return robust_expected_log(S, S_other, tf.convert_to_tensor(self.delta), self.num_classes)

    @inherit_check_shapes
    def _predict_proba(self, Fmu: tf.Tensor, Fvar: tf.Tensor) -> tf.Tensor:
        if self.binary:
            z = self._binary_z(Fmu, Fvar)
            S = tf.stack([normal_cdf(-z), normal_cdf(z)], axis=1)
            S_other = S[:, ::-1]
        else:
            S = argmax_probabilities(Fmu, Fvar + self.noise_variance, self._nodes, self._weights)
            S_other = 1.0 - S
        return robust_predictive(S, S_other, tf.convert_to_tensor(self.delta), self.num_classes)

    def _conditional_proba(self, F: tf.Tensor) -> tf.Tensor:
        """Without noise (the step) the arg-max rule itself, as `RobustMax`'s; with noise the quadrature over it."""
        if self.binary or self.noise_variance > 0:
            return super()._conditional_proba(F)
        return argmax_rule(F, self.delta, self.num_classes)

    def log_prior_density(self) -> tf.Tensor | None:
        """log p(logit delta) under ``delta_prior`` Beta(a, b): a log delta + b log(1 - delta) - log B(a, b).

        GPflow 1, which paper 000's authors' code runs on, adds a parameter's prior at its constrained value plus
        the log Jacobian of its transform (GPflow 2 leaves the Jacobian out); for their logistic on (0, 1) that
        Jacobian is delta (1 - delta), which turns Beta(a, b)'s exponents a - 1, b - 1 into a, b.  Written for the
        (0, 1) logistic whatever gpal's own scaled sigmoid, so that the objective as a function of delta, and so its
        maximiser, is theirs.

        Returns
        -------
        tf.Tensor or None
            The scalar log density, or None without ``delta_prior``.
        """
        if self.delta_prior is None:
            return None
        a, b = self.delta_prior
        delta = tf.convert_to_tensor(self.delta)
        log_beta = math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)
        return a * tf.math.log(delta) + b * tf.math.log1p(-delta) - log_beta

    def get_config(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "num_classes": self.num_classes,
            "noise": self.noise,
            "delta": float(self.delta.numpy()),
            "learn_delta": self.learn_delta,
            "form": self.form,
            "num_quadrature": self.num_quadrature,
            # named only when set, so that a model saved without it keeps its structure (and its batched step)
            **({} if self.delta_prior is None else {"delta_prior": list(self.delta_prior)}),
        }


class _NamedNoise(GaussianNoiseLikelihood):
    """The Gaussian-noise likelihood with the noise variance its registry name fixes."""

    def __init__(
        self,
        num_classes: int | None = None,
        delta: float = DEFAULT_DELTA,
        learn_delta: bool = True,
        form: str = "auto",
        num_quadrature: int = 8,
        delta_prior: tuple[float, float] | None = None,
    ):
        super().__init__(num_classes, self.name, delta, learn_delta, form, num_quadrature, delta_prior)

    def get_config(self) -> dict[str, Any]:
        config = super().get_config()
        del config["noise"]  # implied by the name
        return config


class StepLikelihood(_NamedNoise):
    """GPC-I of paper 000: the step likelihood, a -> 0 (a = 0; the latent variance keeps it finite).

    Examples
    --------
    >>> import tensorflow as tf
    >>> from gpal.models import StepLikelihood
    >>> lik = StepLikelihood(num_classes=3)          # multi-class: one latent function per class
    >>> lik.num_latent(3), lik.noise_variance
    (3, 0.0)
    >>> Fmu = tf.constant([[3.0, 0.0, 0.0]], tf.float64)
    >>> lik.predict_proba(Fmu, tf.fill([1, 3], tf.constant(0.1, tf.float64))).numpy().round(3)
    array([[0.999, 0.001, 0.001]])
    """

    name = "step"


class ProbitLikelihood(_NamedNoise):
    """GPC-II of paper 000: the (multinomial) probit likelihood, a = 1.

    Examples
    --------
    >>> import tensorflow as tf
    >>> from gpal.models import ProbitLikelihood
    >>> lik = ProbitLikelihood(num_classes=2)        # two classes: the binary form, one latent function
    >>> lik.num_latent(2), lik.binary
    (1, True)
    >>> Fmu, Fvar = tf.constant([[1.0], [-1.0]], tf.float64), tf.constant([[0.5], [0.5]], tf.float64)
    >>> lik.predict_proba(Fmu, Fvar).numpy().round(3)       # Phi(mu / sqrt(1 + nu)), the second class at f > 0
    array([[0.208, 0.792],
           [0.792, 0.208]])
    """

    name = "probit"


class LogitLikelihood(_NamedNoise):
    """GPC-III of paper 000: the (multinomial) logit likelihood approximated by a = 2.897.

    Examples
    --------
    >>> import tensorflow as tf
    >>> from gpal.models import LogitLikelihood
    >>> lik = LogitLikelihood(num_classes=2, form="multiclass")
    >>> lik.get_config()["name"], lik.noise_variance
    ('logit', 2.897)
    >>> Fmu = tf.constant([[2.0, -1.0]], tf.float64)
    >>> lik.predict_proba(Fmu, tf.fill([1, 2], tf.constant(0.1, tf.float64))).numpy().round(3)
    array([[0.889, 0.111]])
    """

    name = "logit"

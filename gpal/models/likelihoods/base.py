"""Likelihoods: from latent marginals q(f_i) = N(Fmu_i, Fvar_i) to labels.

A likelihood is the part of the model that knows how labels depend on the latent
functions, and nothing about inputs or input noise.  The model hands it
marginals and integer labels; it returns

* ``variational_expectations(Fmu, Fvar, Y)``: E_q[log p(y_i | f_i)] per point, (N,);
* ``predict_proba(Fmu, Fvar)``: predictive class probabilities, (N, num_classes);
* ``num_latent(num_classes)``: how many latent functions it needs (C for the
  multi-class forms, 1 for binary forms of a later issue);
* its own trainable parameters (as a ``gpflow.base.Module``);
* ``get_config()``: a JSON-able description that ``likelihood_from_config`` rebuilds.

Its keyword options (the constructor's arguments but ``num_classes``) are what
``NoisyGPClassifier(likelihood_options=...)`` sets; a likelihood declares the constraint of each in
``_options``, which checks a value before any model is built.
"""

from __future__ import annotations

import abc
import inspect
from typing import Any, Mapping

import gpflow
import tensorflow as tf
import tensorflow_probability as tfp
from check_shapes import check_shapes, inherit_check_shapes

__all__ = ["Likelihood", "MonteCarloLikelihood", "RobustMax", "make_likelihood", "likelihood_from_config", "LIKELIHOODS",
           "register_likelihood", "saved_config", "unregister_likelihood"]

from gpal.constraints import Boolean, Constraint, Integer, OneOf, Real
from gpal.registry import LIKELIHOODS
from gpal.models.quadrature import (
    argmax_probabilities,
    monte_carlo_mean,
    panel_rule,
    prob_largest,
    robust_expected_log,
    robust_predictive,
    sigma_point_mean,
)


class Likelihood(gpflow.base.Module, abc.ABC):
    """Base class: the contract every likelihood plugged into the model satisfies.

    As in GPflow, the public methods check shapes and call the abstract private ones a
    subclass writes; a subclass that declares a ``name`` (a class attribute) registers itself in
    ``LIKELIHOODS`` under it, which is how ``NoisyGPClassifier(likelihood=...)``, the CLI's
    choices and saved configs find it.  An instance's ``name`` (TensorFlow's module name) is
    that registry name too.

    Examples
    --------
    >>> import tensorflow as tf
    >>> from gpal.models import Likelihood, make_likelihood
    >>> lik = make_likelihood("robustmax", num_classes=2)        # a registered name -> a Likelihood
    >>> isinstance(lik, Likelihood), lik.name, lik.num_latent(2)
    (True, 'robustmax', 2)
    >>> Fmu = tf.constant([[2.0, -1.0], [0.0, 0.0]], tf.float64)  # latent means, (N, L)
    >>> Fvar = tf.constant([[0.1, 0.1], [1.0, 1.0]], tf.float64)  # latent variances
    >>> lik.predict_proba(Fmu, Fvar).numpy().round(3)
    array([[0.999, 0.001],
           [0.5  , 0.5  ]])
    >>> lik.variational_expectations(Fmu, Fvar, tf.constant([0, 1])).shape   # E_q log p(y | f), one per row
    TensorShape([2])
    """

    #: The registry name, declared by each concrete subclass (abstract bases keep tf.Module's ``name``).
    name: str
    #: The constraint of each keyword option the likelihood declares (its constructor checks the value with it, and
    #: `check_likelihood_options` a ``likelihood_options`` entry before any model is built).
    _options: dict[str, Constraint] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if isinstance(cls.__dict__.get("name"), str) and cls.__dict__["name"]:
            LIKELIHOODS.register(cls.name, cls)

    def num_latent(self, num_classes: int) -> int:
        """Latent functions needed for ``num_classes`` classes (one per class by default).

        Returns
        -------
        int
            L, the width of the latent marginals this likelihood reads.
        """
        return num_classes

    @check_shapes("Fmu: [N, L]", "Fvar: [N, L]", "Y: [N]", "return: [N]")
    def variational_expectations(self, Fmu: tf.Tensor, Fvar: tf.Tensor, Y: tf.Tensor) -> tf.Tensor:
        """E_q[log p(y_i | f_i)] under independent Gaussian marginals, shape (N,).

        Returns
        -------
        tf.Tensor
            (N,) expected log-likelihoods of the labels ``Y``.
        """
        return self._variational_expectations(Fmu, Fvar, Y)

    @check_shapes("Fmu: [N, L]", "Fvar: [N, L]", "return: [N, C]")
    def predict_proba(self, Fmu: tf.Tensor, Fvar: tf.Tensor) -> tf.Tensor:
        """p(y_i = c) = E_q[p(y_i = c | f_i)], shape (N, num_classes).

        Returns
        -------
        tf.Tensor
            (N, C) probabilities, rows summing to 1.
        """
        return self._predict_proba(Fmu, Fvar)

    @check_shapes("Fmu: [N, L]", "Fvar: [N, L]", "return: [N, C]")
    def predict_proba_per_row(self, Fmu: tf.Tensor, Fvar: tf.Tensor) -> tf.Tensor:
        """``predict_proba`` by a rule that draws nothing, so no shared random numbers couple two rows.

        What joint posterior draws need (``NoisySVGP.sample_function_proba``): the likelihood's
        own quadrature here; a Monte Carlo likelihood uses the unscented rule instead.

        Returns
        -------
        tf.Tensor
            (N, C) probabilities, rows summing to 1.
        """
        return self._predict_proba(Fmu, Fvar)

    @check_shapes("F: [N, L]", "return: [N, C]")
    def conditional_proba(self, F: tf.Tensor) -> tf.Tensor:
        """p(y_i = c | f_i) at given latent values, shape (N, num_classes): what BALD and sampling need.

        Returns
        -------
        tf.Tensor
            (N, C) probabilities p(y | f).
        """
        return self._conditional_proba(F)

    @check_shapes("Fmu: [S, N, L]", "Fvar: [S, N, L]", "seed: [2]", "return: [S, N, C]")
    def predict_proba_per_draw(self, Fmu: tf.Tensor, Fvar: tf.Tensor, seed: tf.Tensor) -> tf.Tensor:
        """Estimates of p(y_i = c | x_s) at S draws x_s of each point's input, (S, N, C).

        Their mean over s is the noisy-input predictive and their spread its Monte Carlo
        error.  By default the predictive at every draw's marginals (``seed`` unused); a
        Monte Carlo likelihood draws from ``seed``, the prediction's, so that a new seed
        gives new draws of x and f together.

        Returns
        -------
        tf.Tensor
            (S, N, C) probabilities, one (N, C) estimate per input draw.
        """
        return self._predict_proba_per_draw(Fmu, Fvar, seed)

    def latent_draws_per_input(self, num_input_draws: Any) -> Any:
        """Latent draws ``predict_proba_per_draw`` makes at each of that many input draws (int or tensor).

        Returns
        -------
        int or tf.Tensor
            1 here; ceil(num_predict_samples / num_input_draws) for a Monte Carlo likelihood.
        """
        return 1

    def log_prior_density(self) -> tf.Tensor | None:
        """The log prior density of the likelihood's own parameters, which training adds once to the ELBO
        (`gpal.models.NoisySVGP.elbo`), or None where they have none (here).

        Returns
        -------
        tf.Tensor or None
            A scalar, or None.
        """
        return None

    def values_per_evaluation(self, num_classes: int) -> int:
        """The values p(y | f) holds at once for one row's latent value (or marginals): its C probabilities here.

        Prediction chunks (`gpal.models.chunked.in_chunks`) weigh an evaluation by it, so a likelihood that
        integrates over quadrature nodes per evaluation gets chunks its memory fits.

        Returns
        -------
        int
            The values held per evaluation, at least ``num_classes``.
        """
        return int(num_classes)

    def _predict_proba_per_draw(self, Fmu: tf.Tensor, Fvar: tf.Tensor, seed: tf.Tensor) -> tf.Tensor:
        S, n, L = tf.shape(Fmu)[0], tf.shape(Fmu)[1], tf.shape(Fmu)[2]
        p = self.predict_proba(tf.reshape(Fmu, [S * n, L]), tf.reshape(Fvar, [S * n, L]))
        return tf.reshape(p, [S, n, -1])

    def _conditional_proba(self, F: tf.Tensor) -> tf.Tensor:
        """The predictive at zero latent variance; a Monte Carlo likelihood overrides it to skip its draws."""
        return self._predict_proba(F, tf.zeros_like(F))

    @abc.abstractmethod
    @check_shapes("Fmu: [N, L]", "Fvar: [N, L]", "Y: [N]", "return: [N]")
    def _variational_expectations(self, Fmu: tf.Tensor, Fvar: tf.Tensor, Y: tf.Tensor) -> tf.Tensor:
        """The subclass's E_q[log p(y | f)]; a subclass inherits the shape checks."""

    @abc.abstractmethod
    @check_shapes("Fmu: [N, L]", "Fvar: [N, L]", "return: [N, C]")
    def _predict_proba(self, Fmu: tf.Tensor, Fvar: tf.Tensor) -> tf.Tensor:
        """The subclass's predictive probabilities; a subclass inherits the shape checks."""

    @abc.abstractmethod
    def get_config(self) -> dict[str, Any]:
        """JSON-able constructor arguments plus ``name`` (see ``likelihood_from_config``).

        Returns
        -------
        dict
            Constructor arguments (current parameter values) and ``name``: ``likelihood_from_config`` rebuilds it.
        """


class MonteCarloLikelihood(Likelihood):
    """A likelihood whose predictive E_q[p(y | f)] has no closed form: an average over seeded draws of f.

    A subclass sets ``num_predict_samples`` and ``seed`` and writes ``_proba`` (p(y | f) at
    given f, along any latent axis).  At exact inputs every point's marginals get the same
    ``num_predict_samples`` draws.  At S draws of noisy inputs, each input draw gets
    ceil(num_predict_samples / S) latent draws of its own instead of all of them: (x_s, f_s)
    are then joint draws from the predictive, the average over s is unbiased for the same
    probability, and the spread over s measures the whole Monte Carlo error.  The full set at
    every input draw cost S times more evaluations (300 x 1000 softmaxes per source at the
    defaults) for an error of the same order, since those latent draws were shared by the
    input draws rather than averaged over them (docs/methods.md).

    Examples
    --------
    >>> import tensorflow as tf
    >>> from gpal.models import SoftmaxLikelihood
    >>> from gpal.models.likelihoods import MonteCarloLikelihood
    >>> lik = SoftmaxLikelihood(num_classes=2, num_predict_samples=1000, seed=0)
    >>> isinstance(lik, MonteCarloLikelihood), lik.latent_draws_per_input(300)   # ceil(1000 / 300)
    (True, 4)
    >>> Fmu = tf.zeros([300, 5, 2], tf.float64)                # marginals at 300 draws of 5 inputs
    >>> per_draw = lik.predict_proba_per_draw(Fmu, tf.ones_like(Fmu), tf.constant([0, 1], tf.int64))
    >>> per_draw.shape                                          # their mean is the predictive
    TensorShape([300, 5, 2])
    """

    num_predict_samples: int
    seed: int

    @abc.abstractmethod
    def _proba(self, F: tf.Tensor, axis: int) -> tf.Tensor:
        """p(y | f) at latent values ``F`` whose axis ``axis`` runs over the latent functions; classes along it."""

    def _conditional_proba(self, F: tf.Tensor) -> tf.Tensor:
        return self._proba(F, axis=1)

    @inherit_check_shapes
    def _predict_proba(self, Fmu: tf.Tensor, Fvar: tf.Tensor) -> tf.Tensor:
        return monte_carlo_mean(self._conditional_proba, Fmu, Fvar, self.num_predict_samples, self.seed)

    def predict_proba_per_row(self, Fmu: tf.Tensor, Fvar: tf.Tensor) -> tf.Tensor:
        """The unscented rule (`sigma_point_mean`): 2L + 1 evaluations of the smooth p(y | f) per row.

        Returns
        -------
        tf.Tensor
            (N, C) probabilities, rows summing to 1.
        """
        return sigma_point_mean(self._conditional_proba, Fmu, Fvar)

    def latent_draws_per_input(self, num_input_draws: Any) -> Any:
        return (self.num_predict_samples + num_input_draws - 1) // num_input_draws  # ceil

    def _predict_proba_per_draw(self, Fmu: tf.Tensor, Fvar: tf.Tensor, seed: tf.Tensor) -> tf.Tensor:
        S, L = tf.shape(Fmu)[0], tf.shape(Fmu)[2]
        K = self.latent_draws_per_input(S)
        # Shared by every point, as the input draws are; the likelihood's own seed folded into the prediction's.
        seed = tf.random.experimental.stateless_fold_in(seed, self.seed)
        eps = tf.random.stateless_normal(tf.stack([L, K, S, 1]), seed=seed, dtype=tf.float32, alg="philox")
        # Latent axis first and float32: p(y | f) in elementwise passes over (L, K, S, N) arrays, three times
        # faster than a softmax along a last axis of length L; the rounding (~1e-7) is far below the MC error.
        mean, var = (tf.cast(tf.transpose(t, [2, 0, 1]), tf.float32)[:, None] for t in (Fmu, Fvar))
        p = tf.reduce_mean(self._proba(mean + tf.sqrt(tf.maximum(var, 0.0)) * eps, axis=0), axis=1)  # (C, S, N)
        return tf.cast(tf.transpose(p, [1, 2, 0]), Fmu.dtype)


#: How robust-max spreads its flip probability epsilon, the default first: over the C - 1 classes that are not the
#: arg-max (papers 000 and 001), or over all C (paper 001's authors' MGP code).
FLIP_SPREADS = ("others", "all")


class RobustMax(Likelihood):
    """Arg-max labelling rule with label-flip probability epsilon (paper eq. 2).

    p(y | f) = 1 - epsilon if y = argmax_c f_c, else epsilon / (C - 1).  ``flip_spread="all"`` spreads epsilon
    over all C classes instead, the winner's included: 1 - epsilon + epsilon / C on the winner, epsilon / C on each
    other, as paper 001's authors code their MGP (GPInputNoise ``gp_input_noise/mgpc.py`` 164, 174; their other
    methods spread it over the others).  That is the rule above with flip probability epsilon (C - 1) / C: a
    lower floor under a wrong confident prediction, so a higher NLL on the rows it gets wrong.  Both the
    ELBO term and the predictive probability reduce to
    P_y = int N(f_y | mu_y, nu_y) prod_{c != y} Phi((f_y - mu_c) / sqrt(nu_c)) df_y,
    a one-dimensional integral done by composite Gauss-Legendre quadrature
    (``num_quadrature`` points per panel; see ``gpal.models.quadrature.prob_largest``).

    Examples
    --------
    >>> import tensorflow as tf
    >>> from gpal.models import RobustMax
    >>> lik = RobustMax(num_classes=2, epsilon=1e-3)
    >>> Fmu = tf.constant([[2.0, -1.0], [0.0, 0.0]], tf.float64)
    >>> Fvar = tf.constant([[0.1, 0.1], [1.0, 1.0]], tf.float64)
    >>> lik.predict_proba(Fmu, Fvar).numpy().round(3)       # never beyond 1 - epsilon
    array([[0.999, 0.001],
           [0.5  , 0.5  ]])
    >>> lik.prob_argmax(Fmu, Fvar, tf.constant([0, 1])).numpy().round(3)
    array([1. , 0.5])
    """

    name = "robustmax"
    _options = {"epsilon": Real(0, 1, low_open=True, high_open=True, meaning="a label-flip probability"),
                "learn_epsilon": Boolean(), "num_quadrature": Integer(2), "flip_spread": OneOf(FLIP_SPREADS)}

    def __init__(
        self, num_classes: int | None = None, epsilon: float = 1e-3, learn_epsilon: bool = False, num_quadrature: int = 8,
        flip_spread: str = FLIP_SPREADS[0],
    ):
        """``num_classes=None`` makes a template for ``NoisyGPClassifier(likelihood=...)``, which sets it at fit."""
        super().__init__(name=self.name)
        if num_classes is not None and int(num_classes) < 2:
            raise ValueError(f"RobustMax needs at least 2 classes; got num_classes={num_classes}")
        epsilon, learn_epsilon, num_quadrature, flip_spread = (self._options[name].check(name, value) for name, value in (
            ("epsilon", epsilon), ("learn_epsilon", learn_epsilon), ("num_quadrature", num_quadrature),
            ("flip_spread", flip_spread)))
        self.num_classes = None if num_classes is None else int(num_classes)
        self.num_quadrature = int(num_quadrature)
        self.learn_epsilon = bool(learn_epsilon)
        self.flip_spread = flip_spread
        self.epsilon = gpflow.Parameter(
            float(epsilon), transform=tfp.bijectors.Sigmoid(), trainable=self.learn_epsilon, dtype=tf.float64
        )
        self._nodes, self._weights = panel_rule(self.num_quadrature)

    def num_latent(self, num_classes: int) -> int:
        if num_classes != self.num_classes:
            raise ValueError(f"this RobustMax was built for {self.num_classes} classes, not {num_classes}")
        return num_classes

    def flip(self) -> tf.Tensor:
        """The probability that the label is not the arg-max class: epsilon, or epsilon (C - 1) / C when
        ``flip_spread="all"`` (the share of epsilon that lands on the winner is no flip).

        Returns
        -------
        tf.Tensor
            Scalar flip probability, the rule's delta in ``robust_expected_log`` / ``robust_predictive``.
        """
        epsilon = tf.convert_to_tensor(self.epsilon)
        return epsilon if self.flip_spread == "others" else epsilon * (self.num_classes - 1) / self.num_classes

    @check_shapes("Fmu: [N, C]", "Fvar: [N, C]", "Y: [N]", "return: [N]")
    def prob_argmax(self, Fmu: tf.Tensor, Fvar: tf.Tensor, Y: tf.Tensor) -> tf.Tensor:
        """P(f_y is the largest latent value) for each point's class ``Y``, by quadrature.

        Returns
        -------
        tf.Tensor
            (N,) probabilities.
        """
        return prob_largest(Fmu, Fvar, Y, self._nodes, self._weights)

    @inherit_check_shapes
    def _variational_expectations(self, Fmu: tf.Tensor, Fvar: tf.Tensor, Y: tf.Tensor) -> tf.Tensor:
        p = self.prob_argmax(Fmu, Fvar, Y)
        return robust_expected_log(p, 1.0 - p, self.flip(), self.num_classes)

    @inherit_check_shapes
    def _predict_proba(self, Fmu: tf.Tensor, Fvar: tf.Tensor) -> tf.Tensor:
        p = argmax_probabilities(Fmu, Fvar, self._nodes, self._weights)
        return robust_predictive(p, 1.0 - p, self.flip(), self.num_classes)

    def _conditional_proba(self, F: tf.Tensor) -> tf.Tensor:
        """The rule itself at given latent values.  The default, the quadrature at zero variance, gives the same
        values but holds panels x nodes x classes (336 at 3 classes) in each of several arrays a row, for each of
        BALD's S x K draws a row (the `information` column's time and memory)."""
        return argmax_rule(F, self.flip(), self.num_classes)

    def get_config(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "num_classes": self.num_classes,
            "epsilon": float(self.epsilon.numpy()),
            "learn_epsilon": self.learn_epsilon,
            "num_quadrature": self.num_quadrature,
            "flip_spread": self.flip_spread,
        }


def argmax_rule(F: tf.Tensor, flip: Any, num_classes: int) -> tf.Tensor:
    """p(y | f) of an arg-max labelling with label-flip probability ``flip``: 1 - flip on the largest latent value,
    flip / (C - 1) on each other, (N, C)."""
    winner = tf.one_hot(tf.argmax(F, axis=1), tf.shape(F)[1], dtype=F.dtype)
    return robust_predictive(winner, 1.0 - winner, tf.convert_to_tensor(flip), num_classes)


def make_likelihood(spec: str | Likelihood, num_classes: int, **options: Any) -> Likelihood:
    """A fresh likelihood for ``num_classes`` classes from a name or a template object.

    A template object is rebuilt from its config (with its current parameter
    values) so that fitting never mutates the object a user passed in.

    Returns
    -------
    Likelihood
        A new likelihood for ``num_classes`` classes (never ``spec`` itself).
    """
    if isinstance(spec, Likelihood):
        if options:
            raise ValueError(
                f"likelihood options {sorted(options)} apply to a likelihood given by name; "
                f"this {type(spec).__name__} object is already configured"
            )
        config = spec.get_config()
        config.pop("name", None)
        config["num_classes"] = num_classes
        return type(spec)(**config)
    check_likelihood_options(spec, options)
    return LIKELIHOODS[spec.lower()](num_classes=num_classes, **options)


def check_likelihood_options(spec: str, options: Mapping[str, Any]) -> None:
    """Refuse an unknown likelihood name, an option its class does not take, or a value out of the option's
    declared range (``_options``; named as ``likelihood_options['epsilon']``), before any model is built."""
    if not isinstance(spec, str) or spec.lower() not in LIKELIHOODS:
        raise ValueError(f"likelihood must be one of {sorted(LIKELIHOODS)} or a Likelihood object; got {spec!r}")
    accepted = [p for p in inspect.signature(LIKELIHOODS[spec.lower()]).parameters if p not in ("self", "num_classes")]
    unknown = sorted(set(options) - set(accepted))
    if unknown:
        raise ValueError(f"likelihood {spec.lower()!r} has no option(s) {unknown}; its options are {accepted}")
    declared = LIKELIHOODS[spec.lower()]._options
    for option, value in options.items():
        if option in declared:
            declared[option].check(f"likelihood_options[{option!r}]", value)


def likelihood_from_config(config: Mapping[str, Any]) -> Likelihood:
    """Inverse of ``Likelihood.get_config``.

    Returns
    -------
    Likelihood
        The likelihood of the registered ``name`` the config holds, built from the rest of it.
    """
    config = dict(config)
    return LIKELIHOODS.get_class(config.pop("name", None))(**config)


def saved_config(likelihood: Likelihood) -> dict[str, Any]:
    """The config a saved model records for ``likelihood``, refused where loading would rebuild another class (a
    subclass a user did not register inherits its parent's ``name``, under which the parent is found).

    Returns
    -------
    dict
        ``likelihood.get_config()``.
    """
    holder = LIKELIHOODS.get(likelihood.name)
    if holder is not type(likelihood):
        held = "registered to no class" if holder is None else f"{holder.__qualname__}'s"
        raise ValueError(f"likelihood {type(likelihood).__qualname__} is not registered (its name "
                         f"{likelihood.name!r} is {held}), so a saved model would load another likelihood; register "
                         f"it first: gpal.register_likelihood('a_name', {type(likelihood).__qualname__})")
    return likelihood.get_config()


def register_likelihood(name: str, cls: type, *, replace: bool = False) -> None:
    """Make the likelihood ``cls`` (a subclass of `Likelihood`) known as ``name`` to ``NoisyGPClassifier``,
    ``--likelihood``, the workflows and saved models, from a user's own code.

    ``name`` (lower case: names are matched in any case) becomes the class's ``name``.  A name already
    registered is refused unless ``replace``; a built-in cannot be unregistered, but can be replaced.
    """
    if not isinstance(name, str) or name != name.lower():
        raise ValueError(f"a likelihood name must be a lower-case string (names are matched in any case); got {name!r}")
    LIKELIHOODS.register_named(name, cls, Likelihood, replace=replace)


def unregister_likelihood(name: str) -> None:
    """Forget a likelihood a user registered; a built-in one stays."""
    LIKELIHOODS.unregister(name)

"""Input-noise strategies: where the latent marginals q(f_i) are evaluated.

Observed inputs are x~_i = x_i + e_i with e_i ~ N(0, V_i), V_i diagonal.  A
strategy turns a batch of observed inputs (and their V, labels and row indices)
into the marginals the likelihood consumes, plus any extra ELBO terms it owns:

* ``none`` (MGP): marginals at x~_i; no extra terms.
* ``latent`` (NIMGP): a free Gaussian q(x_i) per training row, prior p(x_i) the paper's N(0, s I)
  or a population mixture (``gpal.models.input_prior``);
  marginals at one reparameterised sample of q(x_i); extra terms
  E_q log p(x~_i | x_i) - KL(q(x_i) || p(x_i)) in closed form.
* ``amortized`` (NIMGP-NN): as ``latent`` with q(x_i) produced by a small network
  from (x~_i, one-hot y_i).
* ``first_order`` (NIMGP-FO): marginals at x~_i with the variance of f_c increased
  by grad(mu_c)^T V_i grad(mu_c) (automatic differentiation), in training and prediction.

V itself is the model's ``NoiseVariance`` (`gpal.models.noise_variance`): a strategy is handed it.

A dimension whose V_ij is exactly 0 (a feature without an error bar) is
noiseless: x_ij = x~_ij, it has no q and contributes no ELBO terms, so nothing
ever divides by or takes the log of a zero variance.

q(x_i) is parameterised relative to a base (m_i, V~_i), the prior's label-free posterior
p(x_i | x~_i) (``prior.base``): mean m + sqrt(V~) a, variance V~ exp(b).  With a = b = 0
it starts at that posterior (for the broad prior, m = x~ and V~ = V s / (V + s)); in
noiseless dimensions V~ = 0 pins it to x~; and a, b stay well scaled whatever the size of
the error bars.  NIMGP also takes paper 001's authors' form (``q_x_form="free"``): mean x~ + a,
variance 1e-5 exp(b), i.e. a free mean and log-variance per row started at x~ and 1e-5, whose
Adam steps are in the inputs' own units, whatever the error bars.  NIMGP-NN's ``q_x_form="free"`` is
the authors' network: two networks, whose outputs are q(x_i)'s mean and log-variance themselves.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import gpflow
import numpy as np
import tensorflow as tf
from check_shapes import check_shapes

from gpal.constraints import OneOf
from gpal.models.input_prior import BroadPrior, MixturePrior, prior_from_config
from gpal.registry import BROAD_PRIOR_VARIANCE, DEFAULT_HIDDEN_SIZES, Q_X_FORMS, Q_X_UPDATES

__all__ = [
    "InputNoise",
    "NoInputNoise",
    "LatentInputs",
    "AmortizedInputs",
    "FirstOrder",
    "expected_log_observation",
]

# Rows whose base (p(x_i | x~_i) under a population prior) is computed at once: (rows, K, d, d) temporaries.
_BASE_ROWS_PER_BLOCK = 1024
#: Where the free form's q(x_i) variance starts: paper 001's authors' NIMGP (GPInputNoise at 0e9268a,
#: gp_input_noise/nimgpc_learn_noise.py:57-58, its mean at the noisy input).
FREE_Q_START_VARIANCE = 1e-5


# ----------------------------------------------------------------- closed forms
def expected_log_observation(diff: tf.Tensor, q_var: tf.Tensor, V: tf.Tensor) -> tf.Tensor:
    """E_{q(x)} log N(x~ | x, V) per dimension, for q(x) = N(x~ + diff, q_var); needs V > 0."""
    return -0.5 * tf.math.log(2.0 * math.pi * V) - 0.5 * (tf.square(diff) + q_var) / V



# ----------------------------------------------------------------- strategies
class InputNoise(gpflow.base.Module):
    """Base class.  ``gp`` is the latent-GP part of the model (``LatentGPs``).

    Examples
    --------
    >>> from gpal.models import InputNoise
    >>> from gpal.registry import INPUT_NOISE
    >>> [(name, INPUT_NOISE[name].__name__) for name in INPUT_NOISE]   # input_noise="..." -> strategy
    [('none', 'NoInputNoise'), ('latent', 'LatentInputs'), ('amortized', 'AmortizedInputs'), ('first_order', 'FirstOrder')]
    >>> all(issubclass(INPUT_NOISE[name], InputNoise) and INPUT_NOISE[name].name == name for name in INPUT_NOISE)
    True
    """

    #: The registry name (``INPUT_NOISE``, the estimators' ``input_noise``), declared by each strategy.
    name: str
    # What the strategy is, declared once here; estimators, the model builder and reports read these
    # (``INPUT_NOISE.having``) instead of keeping lists of names.
    #: Whether the noiseless inputs are latent variables with a prior (``input_prior`` applies to them).
    latent_inputs = False
    #: Whether the strategy uses the input-noise variances V (and so the measured ``X_var``, unless learned).
    uses_noise_variance = True
    #: Whether predictions average over draws of the inputs (``n_samples``).
    stochastic_prediction = False
    #: Whether the conjugate schemes of the augmented logistic-softmax model (``inference="cavi"`` /
    #: ``"natural_gradient"``), which model exact inputs, can train a model of this strategy.
    conjugate_inference = False
    #: The parameterisations of q(x_i) the strategy takes (``q_x_form``, `gpal.registry.Q_X_FORMS`); one
    #: without a q(x_i) has only the default, which changes nothing for it.
    q_x_forms: tuple[str, ...] = Q_X_FORMS[:1]
    #: How Adam may move the q(x_i) table (``q_x_update``, `gpal.registry.Q_X_UPDATES`); likewise only the default
    #: for a strategy without one.
    q_x_updates: tuple[str, ...] = Q_X_UPDATES[:1]

    @classmethod
    def build(cls, *, num_data: int, num_features: int, num_classes: int, prior_variance: float,
              population_prior: "MixturePrior | None", hidden_sizes: Sequence[int], seed: int) -> "InputNoise":
        """The strategy for a training set of ``num_data`` rows, ``num_features`` features and
        ``num_classes`` classes; each strategy takes the settings it has (``build_model`` passes all).

        Returns
        -------
        InputNoise
            The untrained strategy.
        """
        return cls()

    @property
    def has_base_table(self) -> bool:
        """Whether ``base_table`` gives per-row constants (a trainer then keeps a table of them)."""
        return False

    @property
    def per_point_variables(self) -> tuple[tf.Variable, ...]:
        """Variables with one row per training point, read by row index (optimised row-wise)."""
        return ()

    def restart(self, num_data: int) -> None:
        """Per-point state back at its start, for a training set of ``num_data`` rows (a warm-started refit)."""

    def training_noise(self, X: tf.Tensor, seed: tf.Tensor) -> tf.Tensor | None:
        """The standard-normal draws a training step of the batch ``X`` uses (None: the strategy draws nothing).

        Drawn apart from ``training_marginals`` so that a caller evaluating many models' ELBOs in
        one vectorised trace (``gpal.training.batched``) can draw each model's noise from its own seed.

        Returns
        -------
        tf.Tensor or None
            Draws shaped as ``X``, or None.
        """
        return None

    def base_table(self, X: tf.Tensor, V: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor] | None:
        """Per-row constants of training that depend on the rows alone, computed once per fit (None: none).

        A trainer passes the batch's rows of them to ``training_marginals`` as ``base``, so that a
        step does not recompute, per row, what no parameter moves.

        Returns
        -------
        tuple of tf.Tensor or None
            (mean, variance), each (n, d), of where each row's q(x_i) starts; None here.
        """
        return None

    def training_marginals(
        self, gp: Any, X: tf.Tensor, V: tf.Tensor | None, Y: tf.Tensor, idx: tf.Tensor, seed: tf.Tensor,
        noise: tf.Tensor | None = None, sample_weight: tf.Tensor | None = None,
        base: tuple[tf.Tensor, tf.Tensor] | None = None,
    ) -> tuple[tf.Tensor, tf.Tensor, tf.Tensor]:
        """(Fmu, Fvar) of shape (B, L) for the batch and the batch's sum of extra ELBO terms (scalar).

        ``noise`` (default ``training_noise(X, seed)``) are the step's draws where the strategy samples.
        ``sample_weight`` (B,) multiplies each row's extra terms (a row's own part of the ELBO, as its
        likelihood term is); None: unweighted.  ``base``: the batch's rows of ``base_table`` (default:
        computed from X and V).

        Returns
        -------
        Fmu, Fvar : tf.Tensor
            (B, L) latent means and variances at the batch's inputs (or at draws of them).
        extra : tf.Tensor
            Scalar, the batch's sum of the strategy's own ELBO terms (0 if it has none).
        """
        raise NotImplementedError

    def predictive_marginals(
        self, gp: Any, X: tf.Tensor, V: tf.Tensor | None, seed: tf.Tensor, n_samples: int
    ) -> tuple[tf.Tensor, tf.Tensor]:
        """(Fmu, Fvar) of shape (S, N, L) at S draws of the test inputs (S = 1 if deterministic).

        Returns
        -------
        Fmu, Fvar : tf.Tensor
            (S, N, L) latent means and variances.
        """
        raise NotImplementedError

    def predictive_inputs(self, X: tf.Tensor, V: tf.Tensor | None, seed: tf.Tensor, n_samples: int) -> tf.Tensor:
        """The inputs ``predictive_marginals`` evaluates the GP at for the same ``seed``, (S, N, D); (1, N, D) = X here.

        Returns
        -------
        tf.Tensor
            (S, N, D) inputs.
        """
        return X[None]

    def get_config(self) -> dict[str, Any]:
        """JSON-able description of the strategy.

        Returns
        -------
        dict
            ``name`` and the constructor's arguments: ``strategy_from_config`` rebuilds the strategy.
        """
        return {"name": self.name}

    def __repr__(self) -> str:
        """The constructor call ``get_config`` describes, so that an estimator given this object shows it."""
        config = self.get_config()
        config.pop("name", None)
        return f"{type(self).__qualname__}({', '.join(f'{k}={v!r}' for k, v in config.items())})"


class NoInputNoise(InputNoise):
    """MGP: the inputs are taken as exact.

    Examples
    --------
    >>> from gpal.models import InputNoise, NoInputNoise
    >>> strategy = NoInputNoise()
    >>> isinstance(strategy, InputNoise), strategy.get_config(), strategy.uses_noise_variance
    (True, {'name': 'none'}, False)
    """

    name = "none"
    uses_noise_variance = False
    conjugate_inference = True

    def training_marginals(self, gp, X, V, Y, idx, seed, noise=None, sample_weight=None, base=None):
        Fmu, Fvar = gp.marginals(X)
        return Fmu, Fvar, tf.zeros((), X.dtype)

    def predictive_marginals(self, gp, X, V, seed, n_samples):
        Fmu, Fvar = gp.predictive_marginals(X)
        return Fmu[None], Fvar[None]


class FirstOrder(InputNoise):
    """NIMGP-FO: input noise becomes output noise through the slope of the predictive mean.

    Examples
    --------
    >>> import tensorflow as tf
    >>> from gpal.models import FirstOrder
    >>> V = tf.constant([[0.04, 0.01]], tf.float64)                      # one point's input variances
    >>> grads = tf.constant([[[2.0, 0.0]], [[0.0, 1.0]]], tf.float64)   # d mu_c / d x for 2 latents
    >>> FirstOrder.extra_variance(V, grads).numpy()                    # 2^2 x 0.04 and 1^2 x 0.01
    array([[0.16, 0.01]])
    >>> FirstOrder().get_config()
    {'name': 'first_order'}
    """

    name = "first_order"

    @staticmethod
    @check_shapes("V: [N, D]", "grads: [L, N, D]", "return: [N, L]")
    def extra_variance(V: tf.Tensor, grads: tf.Tensor) -> tf.Tensor:
        """Delta_ic = grad(mu_c)(x~_i)^T diag(V_i) grad(mu_c)(x~_i).

        Returns
        -------
        tf.Tensor
            (N, L) variances added to the latent marginals.
        """
        return tf.einsum("lnd,nd->nl", tf.square(grads), V)

    def _marginals(self, gp, X, V):
        Fmu, Fvar, grads = gp.marginals_and_mean_gradients(X)
        return Fmu, Fvar + self.extra_variance(V, grads)

    def training_marginals(self, gp, X, V, Y, idx, seed, noise=None, sample_weight=None, base=None):
        Fmu, Fvar = self._marginals(gp, X, V)
        return Fmu, Fvar, tf.zeros((), X.dtype)

    def predictive_marginals(self, gp, X, V, seed, n_samples):
        Fmu, Fvar = self._marginals(gp, X, V)
        return Fmu[None], Fvar[None]


class _GaussianInputs(InputNoise):
    """Shared maths of the strategies with a Gaussian q(x_i) per training point.

    Subclasses only say where the offsets (a, b) of q(x_i) come from.
    """

    latent_inputs = True
    stochastic_prediction = True
    # The GP part of prediction at the sampled inputs runs in float32: its rounding (~1e-5 of the
    # prior variance) is three orders below the Monte Carlo error of the input draws it averages over.
    prediction_dtype = tf.float32

    def __init__(self, prior_variance: float, name: str, population_prior: "MixturePrior | dict | None" = None):
        super().__init__(name=name)
        broad = BroadPrior(prior_variance)  # checks the variance even where a population prior replaces it
        self.prior_variance = broad.variance
        if isinstance(population_prior, dict):
            population_prior = prior_from_config(population_prior)
        if population_prior is not None and not isinstance(population_prior, MixturePrior):
            raise TypeError(f"population_prior must be a MixturePrior; got {type(population_prior).__name__}")
        self.prior = population_prior if population_prior is not None else broad

    def offsets(self, X: tf.Tensor, Y: tf.Tensor, idx: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
        """(a, b), each (B, d): q(x_i) = N(m_i + sqrt(V~_i) a, V~_i exp(b)) around the prior's base (m, V~).

        Returns
        -------
        a, b : tf.Tensor
            (B, d) each.
        """
        raise NotImplementedError

    def base_table(self, X, V):
        """Where each row's q(x_i) starts, p(x_i | x~_i) moment-matched: per row, K (d, d) solves under a
        population prior, which would otherwise be most of a training step.  The broad prior's is elementwise.

        Returns
        -------
        tuple of tf.Tensor or None
            (mean, variance), each (n, d), under a population prior; None under the broad one.
        """
        if not self.has_base_table:
            return None
        parts = [self.prior.base(X[i:i + _BASE_ROWS_PER_BLOCK], V[i:i + _BASE_ROWS_PER_BLOCK])
                 for i in range(0, int(tf.shape(X)[0]), _BASE_ROWS_PER_BLOCK)]
        return tuple(tf.concat([part[j] for part in parts], axis=0) for j in range(2))

    @property
    def has_base_table(self) -> bool:
        """Under a population prior: p(x_i | x~_i) costs K (d, d) solves per row, kept in a table."""
        return isinstance(self.prior, MixturePrior)

    @check_shapes("X: [B, D]", "V: [B, D]", "a: [B, D]", "b: [B, D]", "noise: [B, D]")
    def sample_and_terms(
        self, X: tf.Tensor, V: tf.Tensor, a: tf.Tensor, b: tf.Tensor, noise: tf.Tensor,
        sample_weight: tf.Tensor | None = None, base: tuple[tf.Tensor, tf.Tensor] | None = None,
    ) -> tuple[tf.Tensor, tf.Tensor]:
        """A reparameterised draw of x_i ~ q(x_i) and the batch sum of E_q log p(x~|x) - KL(q(x)||p(x)),
        each row's terms times its ``sample_weight`` (B,) when given.

        ``base``: the rows' ``base_table`` entries (default: the prior's base, computed here).

        Returns
        -------
        sample : tf.Tensor
            (B, D) draw of the noiseless inputs (x~ itself in noiseless dimensions).
        terms : tf.Tensor
            Scalar, the batch sum of the extra ELBO terms.
        """
        noisy = V > 0
        # Noiseless dimensions compute with stand-ins (mean x~, variances 1) and are masked out
        # afterwards, so that no value or gradient there meets sqrt(0) or log(0).
        ones = tf.ones_like(V)
        q_mean, q_var = self.q_moments(X, V, a, b, base)
        q_mean = tf.where(noisy, q_mean, X)
        q_var = tf.where(noisy, q_var, ones)
        sample = tf.where(noisy, q_mean + tf.sqrt(q_var) * noise, X)
        observed = expected_log_observation(q_mean - X, q_var, tf.where(noisy, V, ones))
        observed = tf.where(noisy, observed, tf.zeros_like(observed))
        neg_kl = self.prior.neg_kl(q_mean, q_var, sample, noisy)
        if sample_weight is not None:
            observed, neg_kl = observed * sample_weight[:, None], neg_kl * sample_weight
        return sample, tf.reduce_sum(observed) + tf.reduce_sum(neg_kl)

    def q_moments(self, X: tf.Tensor, V: tf.Tensor, a: tf.Tensor, b: tf.Tensor,
                  base: tuple[tf.Tensor, tf.Tensor] | None = None) -> tuple[tf.Tensor, tf.Tensor]:
        """Mean and variance of q(x_i), each (B, d), from the offsets (a, b): relative to the prior's base (m, V~),
        m + sqrt(V~) a and V~ exp(b) (``base``: the rows' ``base_table`` entries; default computed here).
        Meaningful in the noisy dimensions only (``sample_and_terms`` replaces the rest).

        Returns
        -------
        q_mean, q_var : tf.Tensor
            (B, d) each.
        """
        base_mean, base_var = self.prior.base(X, V) if base is None else base
        base_var = tf.where(V > 0, base_var, tf.ones_like(V))  # noiseless: a stand-in, never sqrt(0)'s gradient
        return base_mean + tf.sqrt(base_var) * a, base_var * tf.exp(b)

    def training_noise(self, X, seed):
        return tf.random.stateless_normal(tf.shape(X), seed=seed, dtype=X.dtype)

    def training_marginals(self, gp, X, V, Y, idx, seed, noise=None, sample_weight=None, base=None):
        a, b = self.offsets(X, Y, idx)
        noise = self.training_noise(X, seed) if noise is None else noise
        sample, extra = self.sample_and_terms(X, V, a, b, noise, sample_weight, base)
        Fmu, Fvar = gp.marginals(sample)
        return Fmu, Fvar, extra

    def predictive_inputs(self, X, V, seed, n_samples):
        d = tf.shape(X)[1]
        # One set of draws shared by every row (common random numbers): a row's probability then
        # depends on the row and the seed alone, not on its position in the call, so a source
        # gets the same probability whatever else is predicted with it.
        noise = tf.random.stateless_normal([n_samples, 1, d], seed=seed, dtype=X.dtype)
        uniform = tf.random.stateless_uniform([n_samples, 1], seed=tf.random.experimental.stateless_fold_in(seed, 1),
                                              dtype=X.dtype)  # the mixture component of each draw
        return self.prior.sample(X, V, noise, uniform)

    def predictive_marginals(self, gp, X, V, seed, n_samples):
        n, d = tf.shape(X)[0], tf.shape(X)[1]
        samples = tf.reshape(self.predictive_inputs(X, V, seed, n_samples), [-1, d])
        Fmu, Fvar = gp.predictive_marginals(samples, self.prediction_dtype)  # the S draws folded into the batch
        L = tf.shape(Fmu)[1]
        return tf.reshape(Fmu, [n_samples, n, L]), tf.reshape(Fvar, [n_samples, n, L])

    def get_config(self) -> dict[str, Any]:
        config = {"name": self.name, "prior_variance": self.prior_variance}
        if isinstance(self.prior, MixturePrior):
            config["population_prior"] = self.prior.get_config()
        return config


class LatentInputs(_GaussianInputs):
    """NIMGP: free variational parameters (a_i, b_i) for every training row, gathered by row index.

    Examples
    --------
    >>> from gpal.models import LatentInputs
    >>> strategy = LatentInputs(num_data=5, num_features=2)     # what input_noise="latent" builds
    >>> strategy.name, [tuple(v.numpy().shape) for v in strategy.per_point_variables]   # (a_i, b_i) per row
    ('latent', [(5, 2), (5, 2)])
    >>> strategy.get_config()
    {'name': 'latent', 'prior_variance': 1000.0, 'num_data': 5, 'num_features': 2, 'q_x_form': 'relative', 'q_x_update': 'batch_rows'}

    ``q_x_form="free"`` is paper 001's authors' q(x_i): a free mean and log-variance per row, started at the
    noisy input and a variance of ``FREE_Q_START_VARIANCE`` (1e-5) instead of at p(x_i | x~_i).
    ``q_x_update="every_row"`` has the trainer's Adam move every row at each step, as the authors' does
    (`gpal.training.adam.RowAdam`), not only the minibatch's.
    """

    name = "latent"
    q_x_forms = Q_X_FORMS
    q_x_updates = Q_X_UPDATES

    def __init__(self, num_data: int, num_features: int, prior_variance: float = BROAD_PRIOR_VARIANCE,
                 population_prior: "MixturePrior | dict | None" = None, q_x_form: str = Q_X_FORMS[0],
                 q_x_update: str = Q_X_UPDATES[0]):
        super().__init__(prior_variance, name=self.name, population_prior=population_prior)
        self.q_x_form = OneOf(Q_X_FORMS).check("q_x_form", q_x_form)
        self.q_x_update = OneOf(Q_X_UPDATES).check("q_x_update", q_x_update)
        self.num_data = int(num_data)
        self.num_features = int(num_features)
        # Plain variables, not gpflow Parameters: gathering rows straight from a variable
        # keeps the gradient sparse, so a step costs O(batch) rather than O(num_data).
        # Any row count: a warm-started refit on more rows resizes them in place (``restart``),
        # so the compiled training step that reads them stays valid.
        zeros = np.zeros((self.num_data, self.num_features))
        shape = [None, self.num_features]
        self.q_offset = tf.Variable(zeros, dtype=tf.float64, shape=shape, name="q_x_offset")
        self.q_log_scale = tf.Variable(zeros, dtype=tf.float64, shape=shape, name="q_x_log_variance_ratio")

    @classmethod
    def build(cls, *, num_data, num_features, num_classes, prior_variance, population_prior, hidden_sizes, seed,
              q_x_form=Q_X_FORMS[0], q_x_update=Q_X_UPDATES[0]):
        return cls(num_data, num_features, prior_variance, population_prior, q_x_form, q_x_update)

    @property
    def has_base_table(self) -> bool:
        """The free form starts from x~ and a constant, and needs no table of p(x_i | x~_i)."""
        return self.q_x_form == "relative" and super().has_base_table

    def q_moments(self, X, V, a, b, base=None):
        if self.q_x_form == "relative":
            return super().q_moments(X, V, a, b, base)
        return X + a, FREE_Q_START_VARIANCE * tf.exp(b)

    @property
    def per_point_variables(self) -> tuple[tf.Variable, ...]:
        return (self.q_offset, self.q_log_scale)

    def restart(self, num_data: int) -> None:
        """Every q(x_i) back at p(x_i | x~_i) (a = b = 0), one row per training row."""
        self.num_data = int(num_data)
        for table in self.per_point_variables:
            table.assign(np.zeros((self.num_data, self.num_features)))

    def offsets(self, X, Y, idx):
        return tf.gather(self.q_offset, idx), tf.gather(self.q_log_scale, idx)

    def get_config(self) -> dict[str, Any]:
        return {**super().get_config(), "num_data": self.num_data, "num_features": self.num_features,
                "q_x_form": self.q_x_form, "q_x_update": self.q_x_update}


class AmortizedInputs(_GaussianInputs):
    """NIMGP-NN: q(x_i) from a ReLU network of (x~_i, one-hot y_i).

    gpal's network (``q_x_form="relative"``) gives the offsets (a_i, b_i) from p(x_i | x~_i); its zero output layer
    makes q(x_i) start there for every point.  ``q_x_form="free"`` is paper 001's authors' (GPInputNoise,
    gp_input_noise/nimgpc_nn_learn_noise.py 17-60, 123-126): two networks sharing nothing, one for the mean of
    q(x_i) and one for its log-variance, absolute rather than offsets, every weight and bias drawn from a normal of
    spread ``FREE_NETWORK_START_SPREAD`` truncated at two spreads, so q(x_i) starts near N(0, I).

    Examples
    --------
    >>> from gpal.models import AmortizedInputs
    >>> strategy = AmortizedInputs(num_features=2, num_classes=3, hidden_sizes=(8,))   # input_noise="amortized"
    >>> [tuple(w.shape) for w in strategy.weights]       # (x~, one-hot y) -> 8 -> (a, b)
    [(5, 8), (8, 4)]
    >>> strategy.per_point_variables                       # nothing grows with the training set
    ()
    >>> free = AmortizedInputs(num_features=2, num_classes=3, hidden_sizes=(8,), q_x_form="free")
    >>> [tuple(w.shape) for w in free.weights], [tuple(w.shape) for w in free.log_variance_weights]
    ([(5, 8), (8, 2)], [(5, 8), (8, 2)])
    """

    name = "amortized"
    q_x_forms = Q_X_FORMS

    def __init__(
        self,
        num_features: int,
        num_classes: int,
        hidden_sizes: Sequence[int] = DEFAULT_HIDDEN_SIZES,
        prior_variance: float = BROAD_PRIOR_VARIANCE,
        seed: int = 0,
        population_prior: "MixturePrior | dict | None" = None,
        q_x_form: str = Q_X_FORMS[0],
    ):
        super().__init__(prior_variance, name=self.name, population_prior=population_prior)
        hidden_sizes = tuple(int(h) for h in hidden_sizes)
        if any(h < 1 for h in hidden_sizes):
            raise ValueError(f"hidden_sizes must be positive integers; got {hidden_sizes}")
        self.q_x_form = OneOf(Q_X_FORMS).check("q_x_form", q_x_form)
        self.num_features = int(num_features)
        self.num_classes = int(num_classes)
        self.hidden_sizes = hidden_sizes
        self.seed = int(seed)
        rng = np.random.default_rng([self.seed, 7])
        d = self.num_features
        if self.q_x_form == "relative":
            self.weights, self.biases = _relative_network(rng, (d + self.num_classes, *hidden_sizes, 2 * d), "")
        else:
            # the mean's network keeps the names weights / biases, so that a saved relative fit's paths keep theirs
            self.weights, self.biases = _free_network(rng, (d + self.num_classes, *hidden_sizes, d), "")
            self.log_variance_weights, self.log_variance_biases = _free_network(
                rng, (d + self.num_classes, *hidden_sizes, d), "log_variance_")

    @classmethod
    def build(cls, *, num_data, num_features, num_classes, prior_variance, population_prior, hidden_sizes, seed,
              q_x_form=Q_X_FORMS[0]):
        return cls(num_features, num_classes, hidden_sizes, prior_variance, seed, population_prior, q_x_form)

    @property
    def has_base_table(self) -> bool:
        """The free form gives q(x_i) outright and needs no table of p(x_i | x~_i)."""
        return self.q_x_form == "relative" and super().has_base_table

    def offsets(self, X, Y, idx):
        """(a, b), each (B, d): gpal's offsets from p(x_i | x~_i), or under the free form q(x_i)'s own mean and
        log-variance.

        Returns
        -------
        a, b : tf.Tensor
            (B, d) each.
        """
        h = tf.concat([X, tf.one_hot(tf.cast(Y, tf.int32), self.num_classes, dtype=X.dtype)], axis=1)
        if self.q_x_form == "relative":
            out = _relu_network(h, self.weights, self.biases)
            return out[:, : self.num_features], out[:, self.num_features :]
        return (_relu_network(h, self.weights, self.biases),
                _relu_network(h, self.log_variance_weights, self.log_variance_biases))

    def q_moments(self, X, V, a, b, base=None):
        if self.q_x_form == "relative":
            return super().q_moments(X, V, a, b, base)
        return a, tf.exp(b)

    def get_config(self) -> dict[str, Any]:
        return {
            **super().get_config(),
            "num_features": self.num_features,
            "num_classes": self.num_classes,
            "hidden_sizes": list(self.hidden_sizes),
            "seed": self.seed,
            "q_x_form": self.q_x_form,
        }


#: The spread of the free network's starting weights and biases (paper 001's authors' weight_variable and
#: bias_variable, gp_input_noise/nimgpc_nn_learn_noise.py 9-15: tf.truncated_normal(stddev=0.001)).
FREE_NETWORK_START_SPREAD = 1e-3


def _relu_network(h: tf.Tensor, weights: Sequence[tf.Variable], biases: Sequence[tf.Variable]) -> tf.Tensor:
    """ReLU hidden layers, a linear output layer."""
    for W, bias in zip(weights[:-1], biases[:-1]):
        h = tf.nn.relu(h @ W + bias)
    return h @ weights[-1] + biases[-1]


def _relative_network(rng: np.random.Generator, sizes: Sequence[int], prefix: str):
    """gpal's start: Glorot uniform hidden layers, zero biases and a zero output layer (q(x_i) at its base)."""
    weights, biases = [], []
    for k, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        limit = 0.0 if k == len(sizes) - 2 else math.sqrt(6.0 / (n_in + n_out))
        weights.append(tf.Variable(rng.uniform(-limit, limit, (n_in, n_out)), dtype=tf.float64, name=f"{prefix}W{k}"))
        biases.append(tf.Variable(np.zeros(n_out), dtype=tf.float64, name=f"{prefix}b{k}"))
    return weights, biases


def _free_network(rng: np.random.Generator, sizes: Sequence[int], prefix: str):
    """The authors' start: every weight and bias from N(0, FREE_NETWORK_START_SPREAD^2) truncated at two spreads."""
    weights, biases = [], []
    for k, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        weights.append(tf.Variable(_truncated_normal(rng, (n_in, n_out)), dtype=tf.float64, name=f"{prefix}W{k}"))
        biases.append(tf.Variable(_truncated_normal(rng, (n_out,)), dtype=tf.float64, name=f"{prefix}b{k}"))
    return weights, biases


def _truncated_normal(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """tf.truncated_normal's law: normal draws beyond two spreads drawn again."""
    draws = rng.standard_normal(shape)
    while np.any(outside := np.abs(draws) > 2.0):
        draws[outside] = rng.standard_normal(int(outside.sum()))
    return FREE_NETWORK_START_SPREAD * draws

"""The sparse variational multi-latent GP and the ELBO that ties its parts together.

``NoisySVGP`` is the model: latent GPs (`gpal.models.latent_gps`) + an input-noise strategy + a noise
variance spec + a likelihood.  It assembles the minibatch ELBO

    (N / |B|) sum_{i in B} [E_q log p(y_i|f_i) + E_q log p(x~_i|x_i) - KL(q(x_i)||p(x_i))]
    - sum_c KL(q(u_c) || p(u_c))

(the bracket's last two terms come from the strategy, zero where it has none)
and the predictive class probabilities.  ``build_model`` initialises one from data.
"""

from __future__ import annotations

import warnings
from typing import Any, Mapping, Sequence

import gpflow
import numpy as np
import tensorflow as tf
from check_shapes import check_shapes

from gpal.constraints import OneOf
from gpal.models import input_prior as population_priors
from gpal.models.input_noise import InputNoise
from gpal.models.input_noise_setting import make_strategy, strategy_class, strategy_from_config
from gpal.models.kernels import make_kernel
from gpal.models.latent_gps import LatentGPs
from gpal.models.likelihoods.base import Likelihood, likelihood_from_config, make_likelihood
from gpal.models.module_copy import module_copy
from gpal.models.noise_variance import NoiseVariance
from gpal.models.sparse import DEFAULT_JITTER
from gpal.models.state import kernel_from_config, kernel_to_config
from gpal.registry import (
    BROAD_PRIOR_VARIANCE,
    DEFAULT_HIDDEN_SIZES,
    DEFAULT_INPUT_NOISE,
    DEFAULT_INPUT_PRIOR,
    DEFAULT_LIKELIHOOD,
    DEFAULT_NOISE_VARIANCE,
    DEFAULT_PRIOR_COMPONENTS,
    INDUCING_STARTS,
    INITIAL_LEARNED_VARIANCE,
    INPUT_NOISE,
    INPUT_PRIORS,
    Q_X_FORMS,
    Q_X_UPDATES,
    SVGP_NUM_INDUCING,
)

__all__ = ["INDUCING_STARTS", "NoisySVGP", "build_model", "check_shared_inducing_start", "kmeans_inducing",
           "random_inducing_per_latent"]


class NoisySVGP(gpflow.base.Module):
    """Latent GPs + input-noise strategy + noise-variance spec + likelihood, and their ELBO.

    Examples
    --------
    >>> import numpy as np
    >>> import tensorflow as tf
    >>> from gpal.models import NoisySVGP, build_model
    >>> rng = np.random.default_rng(0)
    >>> X, X_var = rng.normal(size=(30, 2)), np.full((30, 2), 0.05)
    >>> y = (X[:, 0] > 0).astype(np.int64)
    >>> model = build_model(X, y, num_classes=2, input_noise="latent", num_inducing=5, X_var=X_var)  # NIMGP
    >>> isinstance(model, NoisySVGP), model.strategy.name, model.likelihood.name
    (True, 'latent', 'softmax')
    >>> seed = tf.constant([0, 1], tf.int64)
    >>> elbo = model.elbo(tf.constant(X), tf.constant(X_var), tf.constant(y), tf.range(30), seed)
    >>> elbo.shape, bool(elbo < 0)             # what training maximises
    (TensorShape([]), True)
    >>> model.predict_proba(tf.constant(X[:3]), tf.constant(X_var[:3]), seed, n_samples=20).shape
    TensorShape([3, 2])
    >>> NoisySVGP.from_structure(model.structure()).strategy.get_config() == model.strategy.get_config()
    True
    """

    def __init__(
        self,
        gp: LatentGPs,
        strategy: InputNoise,
        likelihood: Likelihood,
        noise_variance: NoiseVariance | None,
        num_data: int,
        num_classes: int,
    ):
        super().__init__(name="noisy_svgp")
        if strategy.uses_noise_variance and noise_variance is None:
            raise ValueError(f"input_noise={strategy.name!r} needs a noise-variance spec")
        if likelihood.num_latent(num_classes) != gp.num_latent:
            raise ValueError(
                f"likelihood needs {likelihood.num_latent(num_classes)} latent functions, the GP has {gp.num_latent}"
            )
        self.gp = gp
        self.strategy = strategy
        self.likelihood = likelihood
        self.noise_variance = noise_variance if strategy.uses_noise_variance else None
        self.num_data = int(num_data)
        self.num_classes = int(num_classes)

    def _V(self, X_var: tf.Tensor) -> tf.Tensor | None:
        return None if self.noise_variance is None else self.noise_variance(X_var)

    @property
    def has_training_base(self) -> bool:
        """Whether ``training_base`` gives a table: the strategy has one, and no learned noise variance moves it."""
        learned = self.noise_variance is not None and bool(self.noise_variance.trainable_variables)
        return self.strategy.has_base_table and not learned

    def training_base(self, X: tf.Tensor, X_var: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor] | None:
        """The strategy's per-row constants of training (``InputNoise.base_table``) for the training rows,
        or None unless ``has_training_base``.

        Returns
        -------
        tuple of tf.Tensor or None
            (mean, variance), each (n, d), or None.
        """
        return self.strategy.base_table(X, self._V(X_var)) if self.has_training_base else None

    @check_shapes("X: [B, D]", "X_var: [B, D]", "Y: [B]", "idx: [B]", "seed: [2]", "return: []")
    def elbo(
        self, X: tf.Tensor, X_var: tf.Tensor, Y: tf.Tensor, idx: tf.Tensor, seed: tf.Tensor, num_data: Any = None,
        noise: tf.Tensor | None = None, sample_weight: tf.Tensor | None = None,
        base: tuple[tf.Tensor, tf.Tensor] | None = None,
    ) -> tf.Tensor:
        """Unbiased minibatch estimate of the ELBO; ``idx`` are the rows' positions in the training set.

        ``num_data`` (default ``self.num_data``) may be a tensor, so that a compiled step serves
        a training set whose size changes between fits.  ``noise``: the step's input draws, by
        default ``strategy.training_noise(X, seed)``.  ``sample_weight`` (B,): each row's terms
        (expected log-likelihood and its input terms) times its weight, so that an integer weight
        is that row repeated, in expectation over minibatches; None: unweighted.
        ``base``: the batch's rows of ``training_base`` (default: computed from the batch).
        A likelihood's prior on its parameters (``Likelihood.log_prior_density``) is added once, unscaled, as
        GPflow adds priors: the objective is then the ELBO plus that log density.

        Returns
        -------
        tf.Tensor
            Scalar ELBO estimate.
        """
        Fmu, Fvar, extra = self.strategy.training_marginals(self.gp, X, self._V(X_var), Y, idx, seed, noise,
                                                            sample_weight, base)
        expected = self.likelihood.variational_expectations(Fmu, Fvar, Y)
        if sample_weight is not None:
            expected = expected * sample_weight
        data_term = tf.reduce_sum(expected) + extra
        N = self.num_data if num_data is None else num_data
        scale = tf.cast(N, X.dtype) / tf.cast(tf.shape(X)[0], X.dtype)
        elbo = scale * data_term - self.gp.kl()
        log_prior = self.likelihood.log_prior_density()
        return elbo if log_prior is None else elbo + tf.cast(log_prior, elbo.dtype)

    @check_shapes("X: [N, D]", "X_var: [N, D]", "seed: [2]", "return: [N, C]")
    def predict_proba(self, X: tf.Tensor, X_var: tf.Tensor, seed: tf.Tensor, n_samples: int = 300) -> tf.Tensor:
        """Class probabilities, averaged over ``n_samples`` draws of p(x* | x~*) where the strategy samples.

        Returns
        -------
        tf.Tensor
            (N, C) probabilities, rows summing to 1.
        """
        return self.predict_proba_and_error(X, X_var, seed, n_samples)[0]

    @check_shapes("X: [N, D]", "X_var: [N, D]", "seed: [2]", "return[0]: [N, C]", "return[1]: [N, C]")
    def predict_proba_and_error(
        self, X: tf.Tensor, X_var: tf.Tensor, seed: tf.Tensor, n_samples: int = 300
    ) -> tuple[tf.Tensor, tf.Tensor]:
        """Class probabilities and their Monte Carlo standard error over the input draws.

        The error is std_s p_s / sqrt(S) over the S draws of p(x* | x~*), each p_s the
        likelihood's estimate at that draw (``Likelihood.predict_proba_per_draw``): zero for
        the strategies that do not sample inputs.

        Returns
        -------
        proba, error : tf.Tensor
            (N, C) each.
        """
        Fmu, Fvar = self.strategy.predictive_marginals(self.gp, X, self._V(X_var), seed, n_samples)
        if self.strategy.stochastic_prediction:  # latent draws from a stream apart from the input draws'
            p = self.likelihood.predict_proba_per_draw(Fmu, Fvar, tf.random.experimental.stateless_fold_in(seed, -1))
        else:
            p = self.likelihood.predict_proba(Fmu[0], Fvar[0])[None]
        S = tf.shape(p)[0]
        mean = tf.reduce_mean(p, axis=0)
        draws = tf.cast(S, p.dtype)
        spread = tf.sqrt(tf.reduce_sum(tf.square(p - mean), axis=0) / tf.maximum(draws - 1.0, 1.0))
        return mean, spread / tf.sqrt(draws)

    @check_shapes("X: [N, D]", "X_var: [N, D]", "seed: [2]", "return: [S, N, C]")
    def sample_conditional_proba(self, X: tf.Tensor, X_var: tf.Tensor, seed: tf.Tensor, n_samples: int,
                                 input_draws: int | None = None) -> tf.Tensor:
        """p(y | f_s) for ``n_samples`` draws of each point's latent marginals, (S, N, C).

        Inputs are drawn from p(x* | x~*) where the strategy samples them.  With ``input_draws``
        None each latent draw goes with one input draw, so the spread over s holds the
        measurement noise too; with K, every latent draw is averaged over the same K input
        draws, so the spread is the function's alone (what BALD asks about).

        Returns
        -------
        tf.Tensor
            (S, N, C) probabilities.
        """
        input_seed, latent_seed = tf.unstack(tf.random.experimental.stateless_split(seed, 2))
        V, L = self._V(X_var), self.gp.num_latent
        # Latent draws shared by every row, as the input draws are: nothing depends on a row's position.
        if input_draws is None or not self.strategy.stochastic_prediction:
            S_x = n_samples if self.strategy.stochastic_prediction else 1
            Fmu, Fvar = self.strategy.predictive_marginals(self.gp, X, V, input_seed, S_x)  # (S_x, N, L)
            eps = tf.random.stateless_normal([n_samples, 1, L], seed=latent_seed, dtype=X.dtype)
            p = self.likelihood.conditional_proba(tf.reshape(Fmu + tf.sqrt(Fvar) * eps, [-1, L]))
            return tf.reshape(p, [n_samples, tf.shape(X)[0], self.num_classes])
        Fmu, Fvar = self.strategy.predictive_marginals(self.gp, X, V, input_seed, input_draws)  # (K, N, L)
        eps = tf.random.stateless_normal([n_samples, 1, 1, L], seed=latent_seed, dtype=X.dtype)
        p = self.likelihood.conditional_proba(tf.reshape(Fmu[None] + tf.sqrt(Fvar)[None] * eps, [-1, L]))
        return tf.reduce_mean(tf.reshape(p, [n_samples, input_draws, tf.shape(X)[0], self.num_classes]), axis=1)

    @check_shapes("X: [N, D]", "X_var: [N, D]", "seed: [2]", "return: [S, N, C]")
    def sample_function_proba(self, X: tf.Tensor, X_var: tf.Tensor, seed: tf.Tensor, n_samples: int,
                              input_draws: int = 16) -> tf.Tensor:
        """p(y | x~, v_s) for ``n_samples`` draws v_s ~ q(v) of the inducing values, (S, N, C).

        A draw is shared by every row, so rows stay correlated as the posterior makes them:
        E_s p(y | x~, v_s) p(y* | x~*, v_s) is the joint predictive of two sources that EPIG needs,
        and the spread over s is the uncertainty a label can remove (about the function, not the
        measurement).  Given v_s, f(x) = a(x)^T v_s plus the residual k(x, x) - a^T a, whose
        covariance between rows (not carried by the inducing points) is neglected; each row's
        residual is integrated by a rule that draws nothing (``Likelihood.predict_proba_per_row``).
        Where inputs are sampled, each v_s is averaged over the same ``input_draws`` draws of the
        noiseless inputs, so the measurement noise is integrated out of every draw rather than
        taken for disagreement.  A row's draws depend on the row and the seed alone.

        Returns
        -------
        tf.Tensor
            (S, N, C) probabilities.
        """
        input_seed, v_seed = tf.unstack(tf.random.experimental.stateless_split(seed, 2))
        V = self._V(X_var)
        K = input_draws if self.strategy.stochastic_prediction else 1
        Fmu, Fvar = self.strategy.predictive_marginals(self.gp, X, V, input_seed, K)  # (K, N, L)
        inputs = self.strategy.predictive_inputs(X, V, input_seed, K)
        n, L = tf.shape(X)[0], tf.shape(Fmu)[2]
        spread = self.gp.inducing_spread(tf.reshape(inputs, [-1, tf.shape(X)[1]]))  # (L, M, K N)
        spread = tf.reshape(spread, [L, -1, K, n])  # (L, M, K, N)
        eps = tf.random.stateless_normal([n_samples, L, self.gp.num_inducing], seed=v_seed, dtype=X.dtype)
        mean = Fmu + tf.einsum("lmkn,slm->sknl", spread, eps)  # (S, K, N, L)
        resid = tf.maximum(Fvar - tf.transpose(tf.reduce_sum(tf.square(spread), axis=1), [1, 2, 0]), 1e-12)
        resid = tf.broadcast_to(resid, tf.shape(mean))
        p = self.likelihood.predict_proba_per_row(tf.reshape(mean, [-1, L]), tf.reshape(resid, [-1, L]))
        return tf.reduce_mean(tf.reshape(p, [n_samples, K, n, self.num_classes]), axis=1)

    def structure(self) -> dict[str, Any]:
        """JSON-able description from which ``NoisySVGP.from_structure`` rebuilds an identical (untrained) model.

        Returns
        -------
        dict
            Sizes, kernels, strategy, likelihood and noise-variance configs (no trained values).
        """
        Z = self.gp.Z
        return {
            "num_data": self.num_data,
            "num_classes": self.num_classes,
            "num_features": int(Z.shape[2]),
            "num_inducing": int(Z.shape[1]),
            "kernels": [kernel_to_config(k) for k in self.gp.kernels],
            "strategy": self.strategy.get_config(),
            "likelihood": self.likelihood.get_config(),
            "noise_variance": None if self.noise_variance is None else self.noise_variance.get_config(),
            # named only when held, so that a model trained as earlier gpal trained every model keeps its structure
            **({} if Z.trainable else {"train_inducing": False}),
            # named only when shared, likewise: then "kernels" holds the one kernel every latent function uses
            **({"shared_by": self.gp.num_latent} if self.gp.shared else {}),
        }

    @classmethod
    def from_structure(cls, s: Mapping[str, Any]) -> "NoisySVGP":
        """Inverse of `structure`: an untrained model of the same shape and parts.

        Returns
        -------
        NoisySVGP
            A model of that structure at its initial values (``gpal.models.state`` loads trained ones).
        """
        kernels = [kernel_from_config(k) for k in s["kernels"]]
        Z = np.zeros((len(kernels), s["num_inducing"], s["num_features"]))
        nv = s["noise_variance"]
        return cls(
            LatentGPs(kernels, Z, train_inducing=s.get("train_inducing", True), shared_by=s.get("shared_by")),
            strategy_from_config(s["strategy"]),
            likelihood_from_config(s["likelihood"]),
            None if nv is None else NoiseVariance(**nv),
            s["num_data"],
            s["num_classes"],
        )


def check_shared_inducing_start(share: bool, inducing_start: str) -> None:
    """Refuse one shared set of inducing inputs with a start that gives each latent function its own."""
    if share and inducing_start != INDUCING_STARTS[0]:
        raise ValueError(f"share_kernel_and_inducing=True gives every latent function one set of inducing inputs; "
                         f"inducing_start={inducing_start!r} starts each its own: use inducing_start="
                         f"{INDUCING_STARTS[0]!r}")


def kmeans_inducing(X: np.ndarray, num_inducing: int, seed: int) -> np.ndarray:
    """Inducing inputs by k-means on X (distinct rows when there are no more than M of them).

    Run on one OpenMP thread: scikit-learn's k-means gives different centres with 1 and 2
    threads, and the same seed must give the same model on a laptop or a cluster worker.

    Returns
    -------
    numpy.ndarray
        (M, d) inducing inputs, M <= ``num_inducing``.
    """
    from sklearn.cluster import KMeans
    from threadpoolctl import threadpool_limits

    distinct = np.unique(X, axis=0)
    if len(distinct) <= num_inducing:
        return distinct
    with threadpool_limits(limits=1):
        km = KMeans(n_clusters=num_inducing, n_init=1, random_state=seed).fit(X)
    return km.cluster_centers_


def random_inducing_per_latent(X: np.ndarray, num_inducing: int, num_latent: int, seed: int) -> np.ndarray:
    """(L, M, d) inducing inputs: for each latent function its own M rows of X drawn at random.

    Paper 001's authors start each class's inducing inputs so (GPInputNoise at 0e9268a,
    ``experiments/uci/*/test_real.py`` 49-52), drawing with replacement; here without, since a repeated row
    makes K_ZZ singular (their kernel's 1e-3 jitter absorbs it, gpal's smaller one would not).
    """
    rng = np.random.default_rng(seed)
    return np.stack([X[rng.choice(len(X), size=num_inducing, replace=False)] for _ in range(num_latent)])


def build_model(
    X: np.ndarray,
    y: np.ndarray,
    *,
    num_classes: int,
    input_noise: str | type[InputNoise] | InputNoise = DEFAULT_INPUT_NOISE,
    noise_variance: str = DEFAULT_NOISE_VARIANCE,
    likelihood: str | Likelihood = DEFAULT_LIKELIHOOD,
    num_inducing: int = SVGP_NUM_INDUCING,
    kernel: str | gpflow.kernels.Kernel | None = None,
    prior_variance: float = BROAD_PRIOR_VARIANCE,
    input_prior: str = DEFAULT_INPUT_PRIOR,
    prior_components: int = DEFAULT_PRIOR_COMPONENTS,
    X_var: np.ndarray | None = None,
    prior_inputs: tuple[np.ndarray, np.ndarray] | None = None,
    hidden_sizes: Sequence[int] = DEFAULT_HIDDEN_SIZES,
    likelihood_options: Mapping[str, Any] | None = None,
    initial_learned_variance: float = INITIAL_LEARNED_VARIANCE,
    inducing_start: str = INDUCING_STARTS[0],
    train_inducing: bool = True,
    q_x_form: str = Q_X_FORMS[0],
    q_x_update: str = Q_X_UPDATES[0],
    share_kernel_and_inducing: bool = False,
    jitter: float = DEFAULT_JITTER,
    seed: int = 0,
) -> NoisySVGP:
    """A ``NoisySVGP`` initialised from (already standardised) training inputs ``X`` (n, d) and codes ``y``.

    Inducing points (``inducing_start``): "kmeans", k-means on X, the same M = min(num_inducing, n) points for every
    latent function to start from; or "random_per_latent", for each latent function its own M training rows drawn
    at random, as paper 001's authors start them (`random_inducing_per_latent`); trained with the rest unless not
    ``train_inducing`` (paper 003's authors hold their GPC's where k-means put them). ``initial_learned_variance``: where the input-noise variance is learned
    (``noise_variance`` "learned" or "both"), its start per feature (paper 001's authors start at 0.1).  Kernels: ``kernel`` copied per latent function,
    default ``gpal.models.kernels.default_kernel``.  ``input_noise``: a name or a class, built for these rows,
    or an instance holding no variables, copied (`gpal.models.input_noise_setting.strategy_class`).  ``likelihood``
    defaults to the product's (``gpal.registry.DEFAULT_LIKELIHOOD``, as ``NoisyGPClassifier``'s);
    ``likelihood_options`` go to the likelihood it names (e.g. ``{"epsilon": 1e-3}`` for robust-max).
    ``q_x_form``: NIMGP's and NIMGP-NN's q(x_i) relative to p(x_i | x~_i) ("relative"), or paper 001's authors' absolute
    mean and log-variance ("free": per row, `gpal.models.input_noise.LatentInputs`; from their two networks,
    `gpal.models.input_noise.AmortizedInputs`); refused for a strategy without it.
    ``q_x_update``: Adam moves NIMGP's q(x_i) of the minibatch's rows only ("batch_rows"), or of every row at every
    step as paper 001's authors' TensorFlow 1 Adam does ("every_row", `gpal.training.adam.RowAdam`); refused likewise.
    ``share_kernel_and_inducing``: one kernel and one set of M inducing inputs, trained once for every latent function
    (`LatentGPs` ``shared_by``), as paper 000's authors' GPflow 1 SVGP has them; with one latent function (a binary
    likelihood) there is nothing to share, and a warning says so.

    Returns
    -------
    NoisySVGP
        The untrained model: q(u) at the prior, per-point q(x_i) (NIMGP) at p(x_i | x~_i).
    """
    kind = strategy_class(input_noise)
    OneOf(INPUT_PRIORS).check("input_prior", input_prior)
    for name, value, known, taken, what in (
            ("q_x_form", q_x_form, Q_X_FORMS, kind.q_x_forms, "q(x_i) of NIMGP and NIMGP-NN, an absolute mean and "
             "log-variance (free per training row, or from their two networks)"),
            ("q_x_update", q_x_update, Q_X_UPDATES, kind.q_x_updates, "Adam step of NIMGP's q(x_i) table, every row "
             "at every step")):
        OneOf(known).check(name, value)
        if value not in taken:
            takers = [n for n in INPUT_NOISE.names() if value in getattr(INPUT_NOISE.get_class(n), f"{name}s")]
            raise ValueError(f"{name}={value!r} is paper 001's (Villacampa-Calvo et al. 2021) authors' {what}; it "
                             f"needs input_noise in {takers}, got input_noise={input_noise!r}")
    n, d = X.shape
    lik = make_likelihood(likelihood, num_classes, **dict(likelihood_options or {}))
    L = lik.num_latent(num_classes)
    template = make_kernel(kernel, d, X, seed)
    OneOf(INDUCING_STARTS).check("inducing_start", inducing_start)
    share = bool(share_kernel_and_inducing)
    if share and L == 1:
        warnings.warn(f"share_kernel_and_inducing=True is ignored: likelihood {lik.name!r} with {num_classes} classes "
                      "has one latent function, whose kernel and inducing inputs are already its own alone",
                      UserWarning, stacklevel=2)
        share = False
    check_shared_inducing_start(share, inducing_start)
    kernels = [module_copy(template)] if share else [module_copy(template) for _ in range(L)]
    M = min(int(num_inducing), n)
    Z = kmeans_inducing(X, M, seed) if inducing_start == "kmeans" else random_inducing_per_latent(X, M, L, seed)
    population = None
    if input_prior == "population":
        if not kind.latent_inputs or X_var is None:
            raise ValueError(f"input_prior='population' is a prior over latent inputs: it needs an input_noise of "
                             f"{list(INPUT_NOISE.having('latent_inputs'))} and the training variances X_var; "
                             f"got input_noise={input_noise!r}")
        # looked up at the call, so that whoever replaces `gpal.models.input_prior.fit_mixture_prior` (a study of
        # other priors) replaces it for the fits too
        population = population_priors.fit_mixture_prior(*(prior_inputs or (X, X_var)), prior_components, seed)
    strategy = make_strategy(input_noise, num_data=n, num_features=d, num_classes=num_classes,
                             prior_variance=prior_variance, population_prior=population, hidden_sizes=hidden_sizes,
                             seed=seed, **({} if q_x_form == Q_X_FORMS[0] else {"q_x_form": q_x_form}),
                             **({} if q_x_update == Q_X_UPDATES[0] else {"q_x_update": q_x_update}))
    nv = NoiseVariance(noise_variance, d, initial_learned_variance) if strategy.uses_noise_variance else None
    gp = LatentGPs(kernels, Z, jitter, train_inducing, shared_by=L if share else None)
    return NoisySVGP(gp, strategy, lik, nv, n, num_classes)

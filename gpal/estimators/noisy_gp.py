"""``NoisyGPClassifier``: the scikit-learn style front of the noisy-input GP classifiers.

One estimator covers MGP, NIMGP, NIMGP-NN and NIMGP-FO (``input_noise`` =
none / latent / amortized / first_order) with any registered likelihood, trained by
stochastic variational inference; ``likelihood="logistic_softmax"`` can instead be
trained by the closed-form updates of its augmented model (``inference="cavi"`` or
``"natural_gradient"``, paper 004's; ``"cavi_collapsed"``, gpal's), delegated to ``LogisticSoftmaxGPClassifier``
and then held in the same model form as SVI's.  Inputs are validated and, by default,
standardised (variances mapped by 1/scale^2) before any TensorFlow work; labels
may be of any hashable type; a fitted model saves to a directory of plain files
(``config.json`` + ``params.npz``), never a pickle.

This module is parameter glue: the parameters and the rules between them are declared in
``gpal.estimators.params``; a fit's steps are ``gpal.estimators.fit_plan``'s (or, for the
conjugate schemes, ``gpal.estimators.conjugate``'s); the model, its trainer and its compiled
functions live in a ``gpal.training.session.ModelSession`` (kept across warm refits);
prediction runs in row chunks by ``gpal.models.chunked``; saving is
``gpal.estimators.noisy_gp_state``'s.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np
from sklearn.base import BaseEstimator

from gpal.constraints import Integer, check_values
from gpal.estimators.base import GPClassifierMixin, check_sample_weight, check_variance_scale
from gpal.estimators.conjugate import check_conjugate, fit_augmented
from gpal.estimators.fit_plan import fit_data, plan_fit, train_plan
from gpal.estimators.noisy_gp_state import noisy_gp_from_state, noisy_gp_state
from gpal.estimators.params import (AUTO, NOISY_GP_PARAMETERS, check_input_prior, check_named_likelihood_options,
                                    check_shared_latents, input_noise_class)
from gpal.estimators.sizes import check_fit_sizes, check_prediction_memory
from gpal.registry import (BROAD_PRIOR_VARIANCE, DEFAULT_HIDDEN_SIZES,
                           DEFAULT_LIKELIHOOD, DEFAULT_NOISE_VARIANCE, DEFAULT_PRIOR_COMPONENTS,
                           INDUCING_STARTS, INITIAL_LEARNED_VARIANCE, Q_X_FORMS, Q_X_UPDATES, SVGP_NUM_INDUCING)
from gpal.training.session import ModelSession

__all__ = ["NoisyGPClassifier"]

#: How many times a feature's spread most of a prediction's X_var must exceed to be warned of (`check_variance_scale`).
PREDICTION_VARIANCE_MARGIN = 10.0

#: The SVI training defaults (batch rows, Adam's step), the main job's: with its 50 inducing points
#: (`gpal.registry.SVGP_NUM_INDUCING`), given X_var on the 10-feature, 2000-row task of benchmarks/heteroscedastic.py
#: they reach the test NLL of 750 epochs at 100 points, batch 50 and step 0.01 in a fraction of that setting's time
#: to its own stop (docs/methods.md, "Training length").
SVI_DEFAULTS = {"batch_size": 200, "learning_rate": 0.03}

# The draw counts sample_proba and sample_joint_proba take.
_DRAWS = {"n_samples": Integer(1), "input_draws": Integer(1)}


#: How far a row of probabilities may miss 1 and be returned as computed: far above the rounding of a sum in float64
#: (~1e-15), far below that of one in float32 (up to ~1e-7, more than scikit-learn's ``log_loss`` accepts).
PROBABILITY_SUM_TOLERANCE = 1e-12


def rows_summing_to_one(proba: np.ndarray) -> np.ndarray:
    """``proba`` with each row that misses 1 by more than `PROBABILITY_SUM_TOLERANCE` divided by its sum, in float64.

    Returns
    -------
    numpy.ndarray
        (n, C) float64 probabilities.
    """
    proba = np.asarray(proba, dtype=np.float64)
    total = proba.sum(axis=1, keepdims=True)
    off = np.abs(total - 1) > PROBABILITY_SUM_TOLERANCE
    return np.where(off, proba / np.where(off, total, 1.0), proba)


class NoisyGPClassifier(GPClassifierMixin, BaseEstimator):
    """Sparse variational multi-class GP classifier for inputs with error bars.

    The defaults in the signature are the estimator's own. The main job (``gpal classify``, ``gpal train``)
    trains ``gpal.catalog_jobs.settings.main_job_estimator()``, which has the same inducing points, batch and
    step and replaces these: ``input_noise="latent", input_prior="population", epochs=50, tol=None`` (its
    ``MAIN_JOB_ESTIMATOR``: a fixed length chosen on the catalogs, so that a run does not depend on when a noisy
    bound levelled off).

    Fitted attributes: ``classes_``, ``n_features_in_`` (and ``feature_names_in_`` when X was a DataFrame),
    ``input_noise_`` and ``input_prior_`` (the input noise and prior the model has: ``input_noise="auto"``'s choice),
    ``random_seed_``, ``model_`` (the
    ``NoisySVGP`` tf.Module), ``standardizer_``, ``history_`` (per-epoch mean of the
    minibatch negative-ELBO estimates), ``stopped_early_``.  With ``inference`` "cavi" or
    "natural_gradient", ``model_`` holds the q(u) found by the conjugate updates (the same
    ``NoisySVGP`` form, so it predicts and saves as SVI's) and ``history_`` is the augmented
    ELBO per iteration.

    Parameters
    ----------
    input_noise
        "auto" (the default): the error bars used where they are given, NIMGP with the population prior
        (``input_noise="latent", input_prior="population"``; with the prior ``input_prior`` names, if it names one)
        for a fit given X_var with a non-zero entry, exact inputs (MGP) for one without (docs/methods.md, "When to use which", gives the measurements);
        ``input_noise_`` and ``input_prior_`` say which the fit chose.  Or "none", "latent", "amortized" or
        "first_order": how input noise enters: ignored (MGP), a Gaussian
        q(x_i) per training point (NIMGP), q(x_i) from a network of (x~_i, y_i) (NIMGP-NN), or a first-order
        variance correction grad(mu)^T V grad(mu) (NIMGP-FO).  Or, as ``kernel`` takes a gpflow kernel,
        a ``gpal.models.InputNoise`` subclass (``FirstOrder``, a user's own), built for each training
        set as its name is, or an instance holding no variables (``FirstOrder()``), copied at each fit; an
        instance with variables (``LatentInputs``, ``AmortizedInputs``) is sized for one training set and refused.
    noise_variance : "known" | "learned" | "both"
        Input-noise variances: the measured ``X_var``, one learned per-feature
        vector, or their sum.  Features whose measured variance is 0 are exact.
    likelihood
        a registered name ("softmax", the default, "robustmax", "step", "probit", "logit",
        "logistic_softmax") or a configured likelihood object.  Such an object is a ``gpal.models.Likelihood``.  Softmax (with its Monte
        Carlo ELBO) is the default: on 4FGL-DR4's main-job split it was the best calibrated GP, its NLL
        within the noise of the best (docs/methods.md); robust-max makes confident mistakes
        where classes overlap (docs/methods.md).
    likelihood_options
        keyword options of the named likelihood, e.g. ``{"epsilon": 0.001, "learn_epsilon": False}`` for robust-max (its label-flip probability, fixed
        unless learned), ``{"delta": 0.01, "learn_delta": False}`` for probit or ``{"num_samples": 50}`` for
        logistic-softmax; an option left out is the likelihood's default.
    inference
        "svi" (minibatch Adam on the ELBO, every likelihood and input-noise strategy),
        or for ``likelihood="logistic_softmax"`` with exact inputs (``input_noise="none"``):
        "cavi" (the paper's closed-form coordinate ascent on the full batch, ``epochs`` sweeps),
        "natural_gradient" (the paper's natural-gradient steps on minibatches of ``batch_size``, ``epochs``
        passes) or "cavi_collapsed" (gpal's sweeps with lambda integrated out; see
        ``LogisticSoftmaxGPClassifier``).  Kernel hyperparameters move by Adam at ``learning_rate`` in every case.
    inference_options
        settings of the augmented model with no SVI counterpart:
        ``hyper_every``, ``train_inducing``, ``nat_delay``, ``nat_forgetting``, ``jitter``
        (see ``LogisticSoftmaxGPClassifier``).
    num_inducing
        inducing points per latent function (capped at the training size).
    kernel
        a name, None / "se_ard" (squared exponential with ARD), "se_ard_plus_noise" (adding the paper's
        sigma_0^2 I[x = x']), "se_ard_plus_noise_median" (the same, started from the training rows as paper 001's
        authors start it) or "matern52_plus_se" (paper 000's Table V kernel), or a gpflow kernel, copied per
        class.  The names are ``gpal.registry.KERNELS``.
    batch_size
        training rows per Adam step on the ELBO (capped at the training size).
    epochs
        passes over the training rows (with ``inference`` "cavi", full-batch sweeps).
    learning_rate
        Adam's step size, for every trained parameter (the kernels' under "cavi" and
        "natural_gradient").
    n_samples
        Monte Carlo draws of p(x* | x~*) per test point (NIMGP and NIMGP-NN: "latent", "amortized").
    prior_variance
        s of the broad prior N(0, s I) on the noiseless inputs.
    input_prior : "auto" | "broad" | "population"
        The prior over the noiseless inputs of "latent" / "amortized" (MGP and NIMGP-FO have
        no latent inputs and ignore it): the paper's broad
        N(0, prior_variance I), or a Gaussian mixture of ``prior_components`` fitted to the
        training inputs *with their error bars* by extreme deconvolution, so that a faint
        source is averaged over where sources like it are, not over N(x~, V) (docs/methods.md).
        "auto" (the default): the population prior where ``input_noise="auto"`` uses the error bars, the broad
        prior for a named strategy (the papers' model); a named prior is used as named, ``input_noise="auto"``
        too.  ``input_prior_`` says which the fit used (None for a model without latent inputs, which has no prior
        over the noiseless inputs).
    prior_components
        mixture components of the population prior.
    hidden_sizes
        hidden layer widths of the amortisation network.
    initial_learned_variance
        where the input-noise variance is learned (``noise_variance`` "learned" or "both"), its start per feature,
        in standardised units.  It exists so that paper 001's workflows can start where its authors' code does
        (0.1); gpal's 0.01 stays the default, with which its test NLL was the lower on the splits measured
        (docs/methods.md, "NIMGP's starts").
    inducing_start : "kmeans" | "random_per_latent"
        how the inducing inputs start, before they are trained: k-means centres of the training rows shared by
        every latent function (gpal's default, for the same reason), or each latent function its own random
        training rows (paper 001's authors').
    train_inducing
        SVI trains the inducing inputs with the kernel and q(u) (gpal's default), or holds them where they start,
        as paper 003's authors hold their GPC's; held, they cover the data only as well as their start does.
        The conjugate schemes take theirs in ``inference_options``.
    share_kernel_and_inducing
        give every class's latent function one kernel (the same hyperparameters) and one set of inducing inputs, each
        trained once for all, as paper 000's authors' GPflow 1 SVGP does (``num_latent=3`` with one kernel and one
        feature); gpal's default gives each latent function its own, which can fit a class's own length scales and
        place its own inducing inputs.  Needs ``inducing_start="kmeans"`` and ``inference="svi"``; with one latent
        function (a binary likelihood) there is nothing to share and a warning says so.
    q_x_form : "relative" | "free"
        how NIMGP and NIMGP-NN (``input_noise="latent"``, ``"amortized"``) parameterise each training row's q(x_i):
        relative to p(x_i | x~_i), where it starts (gpal's default), or as paper 001's authors do, an absolute mean
        and log-variance: NIMGP's free per row, started at the noisy input and a variance of 1e-5; NIMGP-NN's from
        two networks of (x~_i, y_i), one for each, started near N(0, I).  Other strategies take only "relative".
    q_x_update : "batch_rows" | "every_row"
        how Adam moves NIMGP's q(x_i) table: only the rows of each minibatch, each row with its own moments and step
        count (gpal's default: a step costs the batch, not the training set), or every row at every step, the rows
        outside the batch on their momentum with a zero gradient, as paper 001's authors' TensorFlow 1 Adam does.
        Other strategies take only "batch_rows".
    standardize
        scale each input to the training inputs' mean and spread (their variances with them).  The
        scaling is a ``gpal.data.standardizer.Standardizer``.
    scaling
        the standardiser's map: "zscore" (mean 0, unit spread) or "range" (each feature's training range onto
        [-1, 1], as paper 003's authors scale their inputs).
    warm_start
        when True, a further ``fit`` continues from the fitted model (kernels,
        inducing points, q(u), likelihood and noise parameters, amortisation network and
        standardiser are kept; NIMGP's per-point q(x_i) restart at the observations), as
        in the paper's active-learning retraining.  Set the retraining length with
        ``set_params(epochs=...)``.
    early_stopping
        hold out a stratified ``validation_fraction`` of the training rows, score their NLL
        every ``validation_interval`` epochs, stop after ``n_iter_no_change`` checks without gain and keep the
        best parameters (``validation_history_``, ``best_epoch_``).  Off by default: on the main job the rows
        it holds out cost more than the stop saves (the model trained on fewer rows had a higher held-out NLL).
    validation_fraction
        the share of the training rows early stopping holds out (stratified by class).
    n_iter_no_change
        validation checks without a lower NLL before early stopping ends the training; without early stopping,
        epochs without ``tol``'s gain in the bound before the training ends.
    tol
        the training ends after ``n_iter_no_change`` epochs whose mean negative ELBO is not below the best so far by
        more than ``tol`` times its size; for a model with latent inputs (whose sampled inputs make the bound noisy),
        after ``n_iter_no_change`` epochs in a row at which the trend of the bound over the last 40 epochs predicts a
        fall of no more than ``tol`` times its size over as many epochs again (``converged_``); ``epochs`` being the most it runs; None: every epoch runs.
    validation_interval
        epochs between two validation checks of early stopping.
    random_state
        all randomness (k-means, network init, minibatches, MC draws) derives from it: an integer seed, None
        (a fresh seed at each fit) or a numpy ``RandomState`` / ``Generator`` (each fit draws its seed from it).
        The seed a fit used is ``random_seed_``.
    progress
        show a tqdm bar while training (off by default, as scikit-learn estimators are quiet).

    Examples
    --------
    >>> import numpy as np
    >>> from gpal import NoisyGPClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2))
    >>> X_var = np.full_like(X, 0.05)                  # each source's measured variances
    >>> y = np.where(X[:, 0] > 0, "psr", "bll")
    >>> clf = NoisyGPClassifier(input_noise="latent", num_inducing=5, epochs=2, random_state=0)  # NIMGP
    >>> clf.fit(X, y, X_var).classes_
    array(['bll', 'psr'], dtype='<U3')
    >>> proba = clf.predict_proba(X[:3], X_var[:3])
    >>> proba.shape, np.allclose(proba.sum(axis=1), 1.0)
    ((3, 2), True)
    >>> clf.predict(X[:3], X_var[:3]).shape
    (3,)
    """

    saved_format = "gpal.NoisyGPClassifier"  # the ``format`` of its saved folders
    saved_version = 2
    reports_mc_error = True  # predict_proba(..., return_mc_error=True)
    sklearn_expected_failures = {
        "check_sample_weight_equivalence_on_dense_data":
            "a weight scales its row's ELBO terms, equal to repeating the row only in expectation: stochastic training "
            "draws its minibatches (and k-means its inducing start) from another set of rows, so the weighted and the "
            "repeated fits reach different, not equal, models",
    }
    _parameters = NOISY_GP_PARAMETERS

    def __init__(
        self,
        *,
        input_noise: Any = AUTO,
        noise_variance: str = DEFAULT_NOISE_VARIANCE,
        likelihood: Any = DEFAULT_LIKELIHOOD,
        likelihood_options: dict[str, Any] | None = None,
        inference: str = "svi",
        inference_options: dict[str, Any] | None = None,
        num_inducing: int = SVGP_NUM_INDUCING,
        kernel: Any = None,
        batch_size: int = SVI_DEFAULTS["batch_size"],
        epochs: int = 750,
        learning_rate: float = SVI_DEFAULTS["learning_rate"],
        n_samples: int = 300,
        prior_variance: float = BROAD_PRIOR_VARIANCE,
        input_prior: str = AUTO,
        prior_components: int = DEFAULT_PRIOR_COMPONENTS,
        hidden_sizes: tuple[int, ...] = DEFAULT_HIDDEN_SIZES,
        initial_learned_variance: float = INITIAL_LEARNED_VARIANCE,
        inducing_start: str = INDUCING_STARTS[0],
        train_inducing: bool = True,
        share_kernel_and_inducing: bool = False,
        q_x_form: str = Q_X_FORMS[0],
        q_x_update: str = Q_X_UPDATES[0],
        standardize: bool = True,
        scaling: str = "zscore",
        warm_start: bool = False,
        early_stopping: bool = False,
        validation_fraction: float = 0.1,
        n_iter_no_change: int = 5,
        tol: float | None = 1e-3,
        validation_interval: int = 10,
        random_state: Any = 0,
        progress: bool = False,
    ):
        self._store_params(locals())

    # ------------------------------------------------------------ validation
    def _check_combinations(self) -> None:
        check_named_likelihood_options(self, self._likelihood_name)
        check_conjugate(self, self._likelihood_name)
        check_input_prior(self)
        check_shared_latents(self)

    @property
    def _likelihood_name(self) -> str | None:
        return self.likelihood.lower() if isinstance(self.likelihood, str) else None

    @property
    def needs_X_var(self) -> bool:
        """Whether measured variances are part of the model (and so required at fit and predict)."""
        return self.noise_variance != "learned" and input_noise_class(self).uses_noise_variance

    # ------------------------------------------------------------------- fit
    def fit(self, X: Any, y: Any = None, X_var: Any = None, callback: Callable[[int, float], bool | None] | None = None,
            *, unlabelled: Any = None, sample_weight: Any = None) -> "NoisyGPClassifier":
        """Fit on arrays ``X`` (n, d), labels ``y`` (n,), variances ``X_var`` (n, d), or on a ``NoisyDataset``.

        ``callback(epoch, loss)`` runs after every epoch; returning False stops
        training (as does Ctrl-C), keeping the parameters reached.  ``unlabelled`` (a
        ``NoisyDataset`` pool or an ``(X, X_var)`` pair) adds the inputs of sources without
        labels to the fit of the population prior (``input_prior="population"``): the
        sources to be classified then shape p(x) too, as in extreme deconvolution of a
        whole catalog; their labels are never needed.  ``sample_weight`` (n,): each row's terms
        of the ELBO times its weight (an integer weight is the row repeated, in expectation), e.g.
        density-ratio weights against a selection shift (`gpal.evaluation.shift`); None: unweighted.
        The validation NLL of early stopping and the population prior stay unweighted.
        Raises ``gpal.training.svi.TrainingError`` if the ELBO becomes non-finite.

        Returns
        -------
        NoisyGPClassifier
            ``self``, fitted.
        """
        data, extra = fit_data(self, X, y, X_var, unlabelled)
        weight = check_sample_weight(sample_weight, data.X.shape[0])
        if self.inference != "svi":
            if weight is not None:
                raise ValueError(f"sample_weight needs inference='svi'; got inference={self.inference!r}")
            return fit_augmented(self, data)
        return train_plan(plan_fit(self, data, extra, callback, weight), progress=bool(self.progress))

    def check_sizes(self, n_rows: int, n_features: int, n_classes: int, *, n_prior_rows: int | None = None) -> None:
        """Refuse settings whose memory or time a fit on ``n_rows`` (and predictions) would not fit in this machine,
        and warn of a fit expected to take long (`gpal.training.budget`); ``fit`` calls it, a job calls it first so
        that nothing is written.  ``n_prior_rows``: the rows the population prior is fitted to (default ``n_rows``)."""
        self.validate_params()
        check_fit_sizes(self, n_rows, n_features, n_classes, n_prior_rows)

    def _keep(self, session: ModelSession, n_features: int, standardizer: Any, history: list, stopped_early: bool) -> None:
        """The fitted state: the session's model and classes, and what they were fitted with."""
        self._set_fitted(session.classes, n_features, standardizer)
        self._session, self.model_ = session, session.model
        self.history_, self.stopped_early_ = list(history), stopped_early

    # --------------------------------------------------------------- predict
    def _inputs(self, X: Any, X_var: Any) -> tuple[np.ndarray, np.ndarray]:
        self._check_fitted()
        X, X_var = self._prediction_inputs(X, X_var, self.needs_X_var)
        if X.shape[0] == 0:
            raise ValueError("predict needs at least one row; X is empty")
        if self.needs_X_var:
            self._check_prediction_variances(X, X_var)
        elif getattr(self, "_fitted_without_error_bars", False) and np.any(X_var > 0):
            warnings.warn(f"{type(self).__name__} was fitted without error bars (input_noise='auto' chose exact "
                          "inputs), so the X_var given here is ignored: fit with X_var to use the error bars",
                          UserWarning, stacklevel=4)
        return X, X_var

    def _check_prediction_variances(self, X: np.ndarray, X_var: np.ndarray) -> None:
        # most variances over PREDICTION_VARIANCE_MARGIN times the spread: a chunk of faint sources may exceed the
        # spread itself (the catalog job's test catalog: up to 2.6 times); X rescaled without X_var, by far more
        """The fit's warnings of misused error bars (`check_variance_scale`: standard deviations passed as variances,
        X rescaled without X_var, values of an unmeasured error), for the rows a prediction is given, compared with
        the larger of their own spread and the training rows' (1 in the standardised units X and X_var are in here):
        measured variances stay below the spread of the values they scatter.  Not the training rows' alone, which a
        pool of fainter sources rightly exceeds (4FGL-DR4's unassociated sources: LP_beta's median variance is 1.2
        times the labelled sources' spread, 0.6 times their own), nor the rows' own alone, which a few similar rows
        to predict do not have; not for one row, nor for all-zero X_var, which asks for the probabilities at exact
        inputs (a decision surface on a grid)."""
        if X.shape[0] < 2 or not np.any(X_var > 0):
            return
        names = getattr(self, "feature_names_in_", None)
        if names is None and self.standardizer_ is not None:
            names = self.standardizer_.feature_names
        spread = X.var(axis=0) if self.standardizer_ is None else np.maximum(X.var(axis=0), 1.0)
        check_variance_scale(X, X_var, () if names is None else tuple(names), type(self).__name__, stacklevel=6,
                             spread=spread, margin=PREDICTION_VARIANCE_MARGIN)

    def predict_proba(self, X: Any, X_var: Any = None, *, return_mc_error: bool = False) -> Any:
        """Class probabilities (n, C), columns in the order of ``classes_``.

        A source's probability depends on the model and its own X / X_var row only (the
        Monte Carlo input draws are shared by all rows), never on which other rows are
        predicted with it or how they are chunked: exactly for exact-input models, to float32
        rounding (~1e-8) where inputs are sampled, whose float32 products may sum in an order
        that depends on the batch shape.  ``return_mc_error=True`` also returns
        each probability's Monte Carlo standard error over the input draws and the latent
        draws that go with them, (n, C): zero where inputs are not sampled (input_noise
        "none" / "first_order").  Where inputs are sampled, the draws are averaged in float32, so a row may miss 1
        by up to ~1e-7, more than scikit-learn's ``log_loss`` accepts without a warning: such rows are divided by
        their sum in float64 (a change of that order); rows that sum to 1 to float64's rounding (exact-input and
        first-order models, computed in float64) are returned as computed, so a saved model of those predicts
        exactly what it predicted before.

        Returns
        -------
        proba : numpy.ndarray
            (n, C) probabilities, rows summing to 1.
        mc_error : numpy.ndarray
            (n, C) Monte Carlo standard errors, only with ``return_mc_error=True`` (then a pair).
        """
        both = self.predict_proba_with(lambda S: self._session.predictor(S), X, X_var)  # the session once fitted
        proba = rows_summing_to_one(both[0])
        return (proba, both[1]) if return_mc_error else proba

    def predict_proba_with(self, predictor: Callable[[int], Callable], X: Any, X_var: Any = None) -> np.ndarray:
        """``predict_proba``'s probabilities and MC errors by ``predictor(S)``, a compiled ``(X, X_var, seed) ->
        [proba, error]`` of this model with S input draws (``predict_proba``: the session's, shared by a signature).

        Returns
        -------
        numpy.ndarray
            (2, n, C): the probabilities, then their Monte Carlo standard errors.
        """
        X, X_var = self._inputs(X, X_var)  # checks the estimator is fitted first
        model = self.model_
        S = self._session.input_draws(self.n_samples)
        fn = predictor(S)
        latent_draws = model.likelihood.latent_draws_per_input(S) if model.strategy.stochastic_prediction else 1
        check_prediction_memory(self.n_samples, S, len(self.classes_), latent_draws, int(model.gp.num_inducing), X.shape[1])
        return self._in_chunks(fn, X, X_var, S, "predict", latent_draws=latent_draws)

    def sample_proba(self, X: Any, X_var: Any = None, n_samples: int = 100, input_draws: int | None = None) -> np.ndarray:
        """p(y | f_s) for ``n_samples`` draws of each source's latent functions (and noisy inputs), (S, n, C).

        Their mean approximates ``predict_proba``; their spread is the epistemic part of the
        uncertainty that BALD-style acquisitions need.  ``input_draws`` K: each latent draw is
        averaged over K draws of the noiseless inputs, so the measurement noise is integrated out
        of the spread instead of counted in it (None: one input draw per latent draw).

        Returns
        -------
        numpy.ndarray
            (S, n, C) probabilities, one (n, C) slice per draw.
        """
        check_values(_DRAWS, {"n_samples": n_samples, "input_draws": 1 if input_draws is None else input_draws})
        X, X_var = self._inputs(X, X_var)
        S, K = int(n_samples), None if input_draws is None else int(input_draws)
        return self._in_chunks(self._session.sampler(S, K), X, X_var, S, "sample", latent_draws=K or 1)

    def sample_joint_proba(self, X: Any, X_var: Any = None, n_samples: int = 100, input_draws: int = 16) -> np.ndarray:
        """p(y | x, draw s) for ``n_samples`` posterior draws shared by every row and every call, (S, n, C).

        Unlike ``sample_proba`` (whose draws are per-row marginal), two calls give draws of one
        posterior, so ``mean_s p_s(y | x) p_s(y* | x*)`` is the joint predictive of a pool source
        and a target source (what EPIG needs).  Where inputs are sampled, each draw averages over
        ``input_draws`` draws of them; see ``NoisySVGP.sample_function_proba``.

        Returns
        -------
        numpy.ndarray
            (S, n, C) probabilities, one (n, C) slice per posterior draw.
        """
        check_values(_DRAWS, {"n_samples": n_samples, "input_draws": input_draws})
        X, X_var = self._inputs(X, X_var)
        S, K = int(n_samples), self._session.input_draws(input_draws)
        # a row holds S x K x (2L + 1) evaluations of p(y | f) at most (the unscented rule's points)
        return self._in_chunks(self._session.joint_sampler(S, K), X, X_var, S, "joint",
                               latent_draws=K * (2 * self.model_.gp.num_latent + 1))

    def _in_chunks(self, fn: Callable, X: np.ndarray, X_var: np.ndarray, S: int, stream: str, *,
                   latent_draws: int) -> np.ndarray:
        """``fn`` over row chunks, every chunk on the seed of ``random_state`` and ``stream`` (``gpal.models.chunked``)."""
        from gpal.models.chunked import in_chunks, stream_seed

        C = len(self.classes_)
        return in_chunks(fn, X, X_var, stream_seed(self.prediction_seed, stream), input_draws=S, num_classes=C,
                         latent_draws=latent_draws, values=self.model_.likelihood.values_per_evaluation(C))

    # ------------------------------------------------------------- save/load
    def to_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        self._check_fitted()
        return noisy_gp_state(self)

    @classmethod
    def from_state(cls, config: dict[str, Any], arrays: dict[str, np.ndarray]) -> "NoisyGPClassifier":
        return noisy_gp_from_state(cls, config, arrays)

"""``NoisyGPClassifier``: the scikit-learn style front of the noisy-input GP classifiers.

One estimator covers MGP, NIMGP, NIMGP-NN and NIMGP-FO (``input_noise`` =
none / latent / amortized / first_order) with any registered likelihood, trained by
stochastic variational inference; ``likelihood="logistic_softmax"`` can instead be
trained by the closed-form updates of its augmented model (``inference="cavi"`` or
``"natural_gradient"``, paper 004), delegated to ``LogisticSoftmaxGPClassifier``
and then held in the same model form as SVI's.  Inputs are validated and, by default,
standardised (variances mapped by 1/scale^2) before any TensorFlow work; labels
may be of any hashable type; a fitted model saves to a directory of plain files
(``config.json`` + ``params.npz``), never a pickle.
"""

from __future__ import annotations

import numbers
import os
import warnings
from typing import Any, Callable, NamedTuple

import numpy as np
from sklearn.base import BaseEstimator

from gpal.constraints import Boolean, Integer, OneOf, Options, Real, Satisfies, check_values
from gpal.data.dataset import NoisyDataset, Standardizer
from gpal.estimators.base import GPClassifierMixin, check_fit_data, check_predict_data
from gpal.estimators.logistic_softmax import LogisticSoftmaxGPClassifier
from gpal.estimators.params import SPARSE_GP_PARAMETERS, LIKELIHOOD
from gpal.evaluation.metrics import negative_log_likelihood
from gpal.files import load_model_dir, save_model_dir
from gpal.identity import jsonable
from gpal.registry import (DEFAULT_LIKELIHOOD, INFERENCE, INPUT_NOISE, INPUT_PRIORS, LATENT_INPUT_STRATEGIES,
                           NOISE_VARIANCE_MODES)
from gpal.training.early_stopping import ValidationMonitor, validation_split

__all__ = ["NoisyGPClassifier"]

# Settings of the augmented model that have no SVI counterpart, passed through ``inference_options``.
_AUGMENTED_OPTIONS = ("hyper_every", "train_inducing", "nat_delay", "nat_forgetting", "jitter")
# Prediction evaluates the GP at (rows x n_samples) inputs; chunks keep that bounded.  2^20 (388
# sources of 300 draws, 3 classes: ~25 MB per (inputs, M) array) ran ~20% faster than 2^18 on 2 cores.
_PREDICT_BUDGET = 2**20
# The draw counts sample_proba and sample_joint_proba take.
_DRAWS = {"n_samples": Integer(1), "input_draws": Integer(1)}
# The parameters a model is built from: a warm-started refit keeps the model itself (and its
# compiled functions) while these are unchanged and the inducing-point count stays the same.
_MODEL_PARAMS = ("input_noise", "noise_variance", "likelihood", "likelihood_options", "num_inducing", "kernel",
                 "prior_variance", "input_prior", "prior_components", "hidden_sizes", "epsilon", "learn_epsilon", "random_state")


class NoisyGPClassifier(GPClassifierMixin, BaseEstimator):
    """Sparse variational multi-class GP classifier for inputs with error bars.

    Parameters
    ----------
    input_noise : "none" | "latent" | "amortized" | "first_order"
        How input noise enters: ignored (MGP), a Gaussian q(x_i) per training point
        (NIMGP), q(x_i) from a network of (x~_i, y_i) (NIMGP-NN), or a first-order
        variance correction grad(mu)^T V grad(mu) (NIMGP-FO).
    noise_variance : "known" | "learned" | "both"
        Input-noise variances: the measured ``X_var``, one learned per-feature
        vector, or their sum.  Features whose measured variance is 0 are exact.
    likelihood : a registered name ("softmax", the default, "robustmax", "step", "probit", "logit",
        "logistic_softmax") or a configured ``gpal.models.Likelihood``.  Softmax (with its Monte
        Carlo ELBO) is the default because it gave the best held-out NLL and calibration on the
        4FGL-DR4 main job; robust-max makes confident mistakes where classes overlap
        (docs/results.md, default selection study).
    likelihood_options : keyword options of the named likelihood, e.g. ``{"delta": 0.01,
        "learn_delta": False}`` for probit or ``{"num_samples": 50}`` for logistic-softmax
        (robust-max takes ``epsilon`` / ``learn_epsilon`` below).
    inference : "svi" (minibatch Adam on the ELBO, every likelihood and input-noise strategy),
        or for ``likelihood="logistic_softmax"`` with exact inputs (``input_noise="none"``):
        "cavi" (closed-form coordinate ascent on the full batch, ``epochs`` sweeps) or
        "natural_gradient" (natural-gradient steps on minibatches of ``batch_size``, ``epochs``
        passes).  Kernel hyperparameters move by Adam at ``learning_rate`` in every case.
    inference_options : settings of the augmented model with no SVI counterpart:
        ``hyper_every``, ``train_inducing``, ``nat_delay``, ``nat_forgetting``, ``jitter``
        (see ``LogisticSoftmaxGPClassifier``).
    num_inducing : inducing points per latent function (capped at the training size).
    kernel : gpflow kernel copied per class, or a name from ``gpal.models.kernels.KERNELS``: ``None`` /
        "se_ard" is squared exponential with ARD, "se_ard_plus_noise" adds the paper's sigma_0^2 I[x = x'].
    batch_size, epochs, learning_rate : Adam minibatch optimisation of the ELBO.
    n_samples : Monte Carlo draws of p(x* | x~*) per test point (NIMGP and NIMGP-NN: "latent", "amortized").
    prior_variance : s of the broad prior N(0, s I) on the noiseless inputs.
    input_prior : "broad" | "population"
        The prior over the noiseless inputs of "latent" / "amortized" (MGP and NIMGP-FO have
        no latent inputs and ignore it): the paper's broad
        N(0, prior_variance I), or a Gaussian mixture of ``prior_components`` fitted to the
        training inputs *with their error bars* by extreme deconvolution, so that a faint
        source is averaged over where sources like it are, not over N(x~, V) (docs/methods.md).
    prior_components : mixture components of the population prior.
    hidden_sizes : hidden layer widths of the amortisation network.
    epsilon, learn_epsilon : label-flip probability of the robust-max likelihood.
    standardize : fit a ``gpal.data.dataset.Standardizer`` on the training inputs.
    warm_start : when True, a further ``fit`` continues from the fitted model (kernels,
        inducing points, q(u), likelihood and noise parameters, amortisation network and
        standardiser are kept; NIMGP's per-point q(x_i) restart at the observations), as
        in the paper's active-learning retraining.  Set the retraining length with
        ``set_params(epochs=...)``.
    early_stopping, validation_fraction, n_iter_no_change, validation_interval : hold out a
        stratified ``validation_fraction`` of the training rows, score their NLL every
        ``validation_interval`` epochs, stop after ``n_iter_no_change`` checks without gain and
        keep the best parameters (``validation_history_``, ``best_epoch_``).  Off by default: on
        the main job the rows it holds out cost more than the stop saves (docs/results.md).
    random_state : all randomness (k-means, network init, minibatches, MC draws) derives from it.
    progress : show a tqdm bar while training (off by default, as scikit-learn estimators are quiet).

    Fitted attributes: ``classes_``, ``n_features_in_``, ``model_`` (the
    ``NoisySVGP`` tf.Module), ``standardizer_``, ``history_`` (per-epoch mean of the
    minibatch negative-ELBO estimates), ``stopped_early_``.  With ``inference`` "cavi" or
    "natural_gradient", ``model_`` holds the q(u) found by the conjugate updates (the same
    ``NoisySVGP`` form, so it predicts and saves as SVI's) and ``history_`` is the augmented
    ELBO per iteration.

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
    saved_version = 1
    reports_mc_error = True  # predict_proba(..., return_mc_error=True)
    _parameters = {
        **SPARSE_GP_PARAMETERS,
        "input_noise": OneOf(INPUT_NOISE.names()),
        "noise_variance": OneOf(NOISE_VARIANCE_MODES),
        "likelihood": LIKELIHOOD,
        "likelihood_options": Options(),
        "inference": OneOf(INFERENCE),
        "inference_options": Options(),
        "batch_size": Integer(1),
        "epochs": Integer(0),
        "learning_rate": Real(0, low_open=True),
        "n_samples": Integer(1),
        "prior_variance": Real(0, low_open=True),
        "input_prior": OneOf(INPUT_PRIORS),
        "prior_components": Integer(1),
        "hidden_sizes": Satisfies(lambda s: all(isinstance(h, numbers.Integral) and h >= 1 for h in s),
                                  "a sequence of positive integers"),
        "epsilon": Real(0, 1, low_open=True, high_open=True, meaning="a label-flip probability"),
        "learn_epsilon": Boolean(),
        "warm_start": Boolean(),
        "early_stopping": Boolean(),
        "validation_fraction": Real(0, 1, low_open=True, high_open=True, meaning="a fraction of the training rows"),
        "n_iter_no_change": Integer(1),
        "validation_interval": Integer(1),
    }

    def __init__(
        self,
        input_noise: str = "none",
        noise_variance: str = "known",
        likelihood: Any = DEFAULT_LIKELIHOOD,
        likelihood_options: dict[str, Any] | None = None,
        inference: str = "svi",
        inference_options: dict[str, Any] | None = None,
        num_inducing: int = 100,
        kernel: Any = None,
        batch_size: int = 50,
        epochs: int = 750,
        learning_rate: float = 0.01,
        n_samples: int = 300,
        prior_variance: float = 1000.0,
        input_prior: str = "broad",
        prior_components: int = 8,
        hidden_sizes: tuple[int, ...] = (50,),
        epsilon: float = 1e-3,
        learn_epsilon: bool = False,
        standardize: bool = True,
        warm_start: bool = False,
        early_stopping: bool = False,
        validation_fraction: float = 0.1,
        n_iter_no_change: int = 5,
        validation_interval: int = 10,
        random_state: int = 0,
        progress: bool = False,
    ):
        self.input_noise = input_noise
        self.noise_variance = noise_variance
        self.likelihood = likelihood
        self.likelihood_options = likelihood_options
        self.inference = inference
        self.inference_options = inference_options
        self.num_inducing = num_inducing
        self.kernel = kernel
        self.batch_size = batch_size
        self.epochs = epochs
        self.learning_rate = learning_rate
        self.n_samples = n_samples
        self.prior_variance = prior_variance
        self.input_prior = input_prior
        self.prior_components = prior_components
        self.hidden_sizes = hidden_sizes
        self.epsilon = epsilon
        self.learn_epsilon = learn_epsilon
        self.standardize = standardize
        self.warm_start = warm_start
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.validation_interval = validation_interval
        self.random_state = random_state
        self.progress = progress

    # ------------------------------------------------------------ validation
    def _check_combinations(self) -> None:
        self._check_likelihood_options()
        self._check_inference()
        self._check_input_prior()

    def _check_input_prior(self) -> None:
        if self.input_prior == "population" and self._has_latent_inputs and self.noise_variance == "learned":
            raise ValueError(f"input_prior={self.input_prior!r} is fitted with the measured variances; "
                             "use noise_variance='known' or 'both'")

    @property
    def _has_latent_inputs(self) -> bool:
        """Whether the model has latent inputs for ``input_prior`` to be a prior of (NIMGP, NIMGP-NN)."""
        return self.input_noise in LATENT_INPUT_STRATEGIES

    def _check_likelihood_options(self) -> None:
        options = self.likelihood_options or {}
        clash = sorted({"epsilon", "learn_epsilon"} & set(options))
        if clash and self._likelihood_name == "robustmax":
            raise ValueError(f"set robust-max's {clash} with the epsilon / learn_epsilon parameters, not likelihood_options")
        if options and self._likelihood_name is None:
            raise ValueError("likelihood_options apply to a likelihood given by name; a Likelihood object is already configured")

    def _check_inference(self) -> None:
        options = self.inference_options or {}
        if self.inference == "svi":
            if options:
                raise ValueError(
                    f"inference_options {sorted(options)} configure inference='cavi' / 'natural_gradient'; "
                    "SVI is set by batch_size, epochs and learning_rate"
                )
            return
        if self._likelihood_name != "logistic_softmax":
            raise ValueError(
                f"inference={self.inference!r} is the conjugate scheme of the augmented logistic-softmax model "
                f"and exists only for likelihood='logistic_softmax'; with likelihood={self.likelihood!r} use inference='svi'"
            )
        if self.input_noise != "none":
            raise ValueError(
                f"inference={self.inference!r} models exact inputs; use input_noise='none', or inference='svi' "
                f"for input_noise={self.input_noise!r}"
            )
        if self.warm_start:
            raise ValueError(f"warm_start continues an SVI fit; inference={self.inference!r} refits from scratch: set warm_start=False")
        if self.epochs < 1:
            raise ValueError(f"inference={self.inference!r} needs epochs >= 1; got {self.epochs!r}")
        unknown = sorted(set(options) - set(_AUGMENTED_OPTIONS))
        if unknown:
            raise ValueError(f"unknown inference_options {unknown}; valid options are {list(_AUGMENTED_OPTIONS)}")

    @property
    def _likelihood_name(self) -> str | None:
        return self.likelihood.lower() if isinstance(self.likelihood, str) else None

    def _likelihood_options(self) -> dict[str, Any]:
        if self._likelihood_name == "robustmax":
            return {"epsilon": float(self.epsilon), "learn_epsilon": bool(self.learn_epsilon)}
        return dict(self.likelihood_options or {})

    @property
    def needs_X_var(self) -> bool:
        """Whether measured variances are part of the model (and so required at fit and predict)."""
        return self.input_noise != "none" and self.noise_variance != "learned"

    _needs_X_var = needs_X_var  # the older private name, still read by fit

    # ------------------------------------------------------------------- fit
    def fit(
        self,
        X: Any,
        y: Any = None,
        X_var: Any = None,
        callback: Callable[[int, float], bool | None] | None = None,
        *,
        unlabelled: Any = None,
    ) -> "NoisyGPClassifier":
        """Fit on arrays ``X`` (n, d), labels ``y`` (n,), variances ``X_var`` (n, d), or on a ``NoisyDataset``.

        ``callback(epoch, loss)`` runs after every epoch; returning False stops
        training (as does Ctrl-C), keeping the parameters reached.  ``unlabelled`` (a
        ``NoisyDataset`` pool or an ``(X, X_var)`` pair) adds the inputs of sources without
        labels to the fit of the population prior (``input_prior="population"``): the
        sources to be classified then shape p(x) too, as in extreme deconvolution of a
        whole catalog; their labels are never needed.
        Raises ``gpal.training.svi.TrainingError`` if the ELBO becomes non-finite.

        Returns
        -------
        NoisyGPClassifier
            ``self``, fitted.
        """
        data, extra = self._fit_data(X, y, X_var, unlabelled)
        if self.inference != "svi":
            return self._fit_augmented(data)

        plan = self._plan_fit(data, extra, callback)
        result = self._trainer(plan.model).fit(
            plan.train_data,
            epochs=int(self.epochs),
            batch_size=int(self.batch_size),
            learning_rate=float(self.learning_rate),
            progress=bool(self.progress),
            callback=plan.callback,
        )
        return self._complete_fit(plan, result)

    def _fit_data(self, X: Any, y: Any, X_var: Any, unlabelled: Any) -> tuple[Any, Any]:
        """Checked parameters, then the checked training data and the unlabelled inputs of the prior (or None)."""
        self._check_params()
        if X_var is None and not isinstance(X, NoisyDataset) and self._needs_X_var:
            raise ValueError(
                f"input_noise={self.input_noise!r} with noise_variance={self.noise_variance!r} uses the measured "
                "input variances, so fit needs X_var (n, d); pass zeros for exact features"
            )
        data = check_fit_data(X, y, X_var)
        return data, self._unlabelled_inputs(unlabelled, data.X.shape[1])

    def _plan_fit(self, data: Any, extra: Any, callback: Callable | None) -> "_FitPlan":
        """Everything before training: standardiser, model (built or kept), training arrays, validation monitor."""
        from gpal.models.state import assign_module_values, module_values
        from gpal.models.svgp import build_model
        from gpal.training.svi import TrainData

        previous = self._warm_start_source(data)
        if previous is not None:
            standardizer = self.standardizer_
        else:
            standardizer = Standardizer.fit(data.X) if self.standardize else None
        Z, Z_var = (data.X, data.X_var) if standardizer is None else standardizer.transform_arrays(data.X, data.X_var)
        y = data.y
        if self.early_stopping:
            fit_rows, val_rows = validation_split(y, float(self.validation_fraction), int(self.random_state))
            (Z, Z_val), (Z_var, Z_var_val), (y, y_val) = ((a[fit_rows], a[val_rows]) for a in (Z, Z_var, y))
        model = self._reusable(previous, Z)
        if model is not None:
            model.strategy.restart(len(y))  # NIMGP's q(x_i) start again at the observations
            model.num_data = len(y)
        else:
            model = build_model(
                Z,
                y,
                num_classes=len(data.classes),
                input_noise=self.input_noise,
                noise_variance=self.noise_variance,
                likelihood=self.likelihood,
                num_inducing=self.num_inducing,
                kernel=self.kernel,
                prior_variance=float(self.prior_variance),
                input_prior=self.input_prior if self._has_latent_inputs else "broad",
                prior_components=int(self.prior_components),
                X_var=Z_var,
                prior_inputs=None if extra is None else self._standardised_prior_inputs(standardizer, Z, Z_var, *extra),
                hidden_sizes=tuple(int(h) for h in self.hidden_sizes),
                likelihood_options=self._likelihood_options(),
                seed=int(self.random_state),
            )
            if previous is not None:
                _continue_from(model, previous)
        self._built_with = self._model_params()
        monitor = None
        if self.early_stopping:
            monitor = ValidationMonitor(
                self._validation_predictor(model),
                lambda: module_values(model),
                lambda state: assign_module_values(model, state),
                Z_val, Z_var_val, y_val,
                nll=negative_log_likelihood, interval=int(self.validation_interval),
                patience=int(self.n_iter_no_change), then=callback,
            )
        return _FitPlan(data, standardizer, model, TrainData.from_arrays(Z, Z_var, y), previous, monitor,
                        callback if monitor is None else monitor)

    def _complete_fit(self, plan: "_FitPlan", result: Any) -> "NoisyGPClassifier":
        """The fitted attributes from a plan and its ``TrainResult``."""
        monitor = plan.monitor
        interrupted = result.stopped_early
        if monitor is not None:
            # The monitor's own stop is the plan, not an interruption; a user's callback or Ctrl-C still is.
            interrupted = result.stopped_early and not monitor.exhausted
            monitor.restore()
        self.classes_ = plan.data.classes
        self.n_features_in_ = plan.data.X.shape[1]
        self.standardizer_ = plan.standardizer
        self.model_ = plan.model
        self.history_ = (list(self.history_) if plan.previous is not None else []) + result.history
        self.stopped_early_ = interrupted
        self.validation_history_ = [] if monitor is None else list(monitor.history)
        self.best_epoch_ = len(result.history) if monitor is None else monitor.best_epoch
        return self

    def _fit_augmented(self, data: Any) -> "NoisyGPClassifier":
        """CAVI / natural-gradient training of the augmented logistic-softmax model, in SVI's units.

        The fitted q(u) is then moved into a ``NoisySVGP`` (``as_latent_gps``), so prediction,
        sampling and saving are the same code as after SVI.  Its predictive Monte Carlo uses
        ``n_samples`` draws seeded by ``random_state``, as ``LogisticSoftmaxGPClassifier``'s does.
        """
        cavi = self.inference == "cavi"
        steps_per_epoch = 1 if cavi else -(-data.X.shape[0] // int(self.batch_size))
        inner = LogisticSoftmaxGPClassifier(
            inference=self.inference,
            num_inducing=int(self.num_inducing),
            kernel=self.kernel,
            max_iter=int(self.epochs) * steps_per_epoch,
            batch_size=None if cavi else int(self.batch_size),
            learning_rate=float(self.learning_rate),
            n_samples=int(self.n_samples),
            standardize=bool(self.standardize),
            random_state=int(self.random_state),
            progress=bool(self.progress),
            **(self.inference_options or {}),
        ).fit(data.X, data.classes[data.y])
        self._adopt(inner, num_data=data.X.shape[0])
        return self

    def _adopt(self, inner: Any, num_data: int) -> None:
        """Take the fitted state of an augmented-model estimator, its q(u) as a ``NoisySVGP``."""
        from gpal.models.families.augmented_logistic_softmax import as_latent_gps
        from gpal.models.input_noise import NoInputNoise
        from gpal.models.likelihoods.logistic_softmax import LogisticSoftmaxLikelihood
        from gpal.models.svgp import NoisySVGP

        C = len(inner.classes_)
        options = {"num_predict_samples": int(self.n_samples), "seed": int(self.random_state), **self._likelihood_options()}
        likelihood = LogisticSoftmaxLikelihood(C, **options)
        self.classes_ = inner.classes_
        self.n_features_in_ = inner.n_features_in_
        self.standardizer_ = inner.standardizer_
        self.model_ = NoisySVGP(as_latent_gps(inner.model_), NoInputNoise(), likelihood, None, num_data, C)
        self.history_ = list(inner.history_)
        self.stopped_early_ = False
        self._built_with = None  # not a model build_model makes: an SVI refit never keeps it

    def _unlabelled_inputs(self, unlabelled: Any, n_features: int) -> tuple[np.ndarray, np.ndarray] | None:
        if unlabelled is None:
            return None
        if self.input_prior != "population" or not self._has_latent_inputs:
            raise ValueError(f"unlabelled inputs shape the population prior only; input_noise={self.input_noise!r} "
                             f"with input_prior={self.input_prior!r} has none (use input_noise='latent' or 'amortized' "
                             "with input_prior='population', or leave unlabelled out)")
        X_u, V_u = unlabelled if isinstance(unlabelled, tuple) else (unlabelled, None)
        X_u, V_u = check_predict_data(X_u, V_u, n_features, needs_variance=True)
        return X_u, V_u

    @staticmethod
    def _standardised_prior_inputs(standardizer: Any, Z: np.ndarray, Z_var: np.ndarray, X_u: np.ndarray,
                                   V_u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if standardizer is not None:
            X_u, V_u = standardizer.transform_arrays(X_u, V_u)
        return np.vstack([Z, X_u]), np.vstack([Z_var, V_u])

    def _model_params(self) -> dict[str, Any]:
        return {k: v for k, v in self.get_params(deep=False).items() if k in _MODEL_PARAMS}

    def _reusable(self, previous: Any, Z: np.ndarray) -> Any:
        """``previous`` itself when a refit on inputs ``Z`` would rebuild the same model, else None.

        ``build_model`` would take M = min(num_inducing, distinct rows) inducing points; while
        that and the model's parameters are unchanged, the rebuilt model would only copy
        ``previous``'s values, so it is kept, and with it the compiled step and predictions.
        """
        if previous is None or getattr(self, "_built_with", None) != self._model_params():
            return None
        M = min(int(self.num_inducing), len(np.unique(Z, axis=0)))
        return previous if previous.gp.num_inducing == M else None

    def _trainer(self, model: Any) -> Any:
        """The ``Trainer`` of ``model``, made (and its step traced) once per model."""
        from gpal.training.svi import Trainer

        trainer = getattr(self, "_svi_trainer", None)
        if trainer is None or trainer.model is not model:
            trainer = self._svi_trainer = Trainer(model, seed=int(self.random_state))
        return trainer

    def _warm_start_source(self, data: Any) -> Any:
        """The fitted model to continue from, or None for a fresh start."""
        if not self.warm_start or not hasattr(self, "model_"):
            return None
        same_classes = len(data.classes) == len(self.classes_) and all(a == b for a, b in zip(data.classes, self.classes_))
        if not same_classes or data.X.shape[1] != self.n_features_in_:
            warnings.warn(
                f"warm_start ignored: the data have classes {list(data.classes)} and {data.X.shape[1]} features, "
                f"the fitted model {list(self.classes_)} and {self.n_features_in_}; starting afresh",
                stacklevel=3,
            )
            return None
        return self.model_

    # --------------------------------------------------------------- predict
    def _inputs(self, X: Any, X_var: Any) -> tuple[np.ndarray, np.ndarray]:
        self._check_fitted()
        X, X_var = check_predict_data(X, X_var, self.n_features_in_, self.needs_X_var)
        if X.shape[0] == 0:
            raise ValueError("predict needs at least one row; X is empty")
        if self.standardizer_ is not None:
            X, X_var = self.standardizer_.transform_arrays(X, X_var)
        return X, X_var

    def predict_proba(self, X: Any, X_var: Any = None, *, return_mc_error: bool = False) -> Any:
        """Class probabilities (n, C), columns in the order of ``classes_``.

        A source's probability depends on the model and its own X / X_var row only (the
        Monte Carlo input draws are shared by all rows), never on which other rows are
        predicted with it or how they are chunked: exactly for exact-input models, to float32
        rounding (~1e-8) where inputs are sampled, whose float32 products may sum in an order
        that depends on the batch shape.  ``return_mc_error=True`` also returns
        each probability's Monte Carlo standard error over the input draws and the latent
        draws that go with them, (n, C): zero where inputs are not sampled (input_noise
        "none" / "first_order").

        Returns
        -------
        proba : numpy.ndarray
            (n, C) probabilities, rows summing to 1.
        mc_error : numpy.ndarray
            (n, C) Monte Carlo standard errors, only with ``return_mc_error=True`` (then a pair).
        """
        inputs = self._inputs(X, X_var)  # checks the estimator is fitted first
        fn, S = self._predictor(self.model_)
        both = self._predict_with(fn, S, *inputs)
        return (both[0], both[1]) if return_mc_error else both[0]

    def _predict_with(self, fn: Callable, S: int, X: np.ndarray, X_var: np.ndarray) -> np.ndarray:
        """Probabilities and their MC errors, (2, n, C), from a compiled predictor of this model and S input draws."""
        model = self.model_
        latent_draws = model.likelihood.latent_draws_per_input(S) if model.strategy.stochastic_prediction else 1
        return self._in_chunks(fn, X, X_var, S, stream=-1, axis=1, latent_draws=latent_draws)

    def _predictor(self, model: Any) -> tuple[Callable, int]:
        """Compiled ``(X, X_var, seed) -> [probabilities, MC errors]`` of ``model`` and its input draws S."""
        import tensorflow as tf

        S = self._input_draws(model)
        make = lambda: lambda a, b, seed: tf.stack(model.predict_proba_and_error(a, b, seed, S))  # noqa: E731
        return self._compiled(model, ("predict", S), make), S

    def _input_draws(self, model: Any) -> int:
        """Draws of p(x* | x~*) per prediction: ``n_samples`` where the strategy samples inputs, else 1."""
        return int(self.n_samples) if model.strategy.stochastic_prediction else 1

    def _validation_predictor(self, model: Any) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
        """Class probabilities of the model under training, on the compiled prediction (its own seed stream)."""
        import tensorflow as tf

        fn, _ = self._predictor(model)
        seed = tf.constant([int(self.random_state), -7], tf.int64)
        return lambda X, X_var: fn(X, X_var, seed)[0].numpy()

    def _compiled(self, model: Any, key: tuple, make: Callable[[], Callable]) -> Callable:
        """``make()`` compiled for any number of rows, once per model and ``key``.

        Kept while the model is (a warm-started refit keeps it), so repeated fits and
        predictions of an active-learning loop trace nothing after the first.
        """
        import tensorflow as tf

        from gpal.models.compiled import instance_function

        cache = getattr(self, "_compiled_cache", None)
        if cache is None or cache[0] is not model:
            cache = self._compiled_cache = (model, {})
        if key not in cache[1]:
            spec = tf.TensorSpec([None, int(model.gp.Z.shape[-1])], tf.float64)
            # autograph off: these are straight-line graphs, and autograph mis-resolved strategy methods.
            cache[1][key] = instance_function(make(), input_signature=[spec, spec, tf.TensorSpec([2], tf.int64)],
                                              autograph=False)
        return cache[1][key]

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
        model = self.model_
        S, K = int(n_samples), None if input_draws is None else int(input_draws)
        fn = self._compiled(model, ("sample", S, K),
                            lambda: lambda a, b, seed: model.sample_conditional_proba(a, b, seed, S, K))
        return self._in_chunks(fn, X, X_var, S, stream=-(10**6), axis=1, latent_draws=K or 1)

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
        model = self.model_
        S, K = int(n_samples), int(input_draws) if model.strategy.stochastic_prediction else 1
        fn = self._compiled(model, ("joint", S, K),
                            lambda: lambda a, b, seed: model.sample_function_proba(a, b, seed, S, K))
        # a row holds S x K x (2L + 1) evaluations of p(y | f) at most (the unscented rule's points)
        return self._in_chunks(fn, X, X_var, S, stream=-(10**6) - 1, axis=1,
                               latent_draws=K * (2 * model.gp.num_latent + 1))

    def _in_chunks(self, fn: Callable, X: np.ndarray, X_var: np.ndarray, S: int, stream: int, axis: int = 0,
                   latent_draws: int = 1) -> np.ndarray:
        """Evaluate ``fn`` over row chunks so memory stays bounded; every chunk has the same seed.

        The draws are shared by the rows (see ``predict_proba``), so one seed for all chunks
        makes the result independent of the chunking.  A row holds S input draws, each with
        C^2 quadrature terms or ``latent_draws`` latent values, whichever is more.
        """
        import tensorflow as tf

        rows = max(1, _PREDICT_BUDGET // (S * max(len(self.classes_) ** 2, latent_draws)))
        seed = tf.constant([int(self.random_state), stream], dtype=tf.int64)  # a stream apart from training's
        out = []
        for start in range(0, X.shape[0], rows):
            out.append(fn(X[start : start + rows], X_var[start : start + rows], seed).numpy())
        return np.concatenate(out, axis=axis)

    # ------------------------------------------------------------- save/load
    def save(self, path: str | os.PathLike) -> None:
        """Write ``config.json`` and ``params.npz`` into directory ``path`` (replaced atomically)."""
        self._check_fitted()
        from gpal.models.state import kernel_to_config, module_values

        params = jsonable(self.get_params(deep=False), describe=None)
        if params["kernel"] is not None and not isinstance(params["kernel"], str):
            params["kernel"] = {"kernel_config": kernel_to_config(params["kernel"])}
        if not isinstance(params["likelihood"], str):
            params["likelihood"] = {"likelihood_config": params["likelihood"].get_config()}
        params["hidden_sizes"] = [int(h) for h in params["hidden_sizes"]]  # any sequence of integers, an array too
        config = {
            "params": params,
            **self._fitted_state(),
            "structure": self.model_.structure(),
            "history": [float(h) for h in self.history_],
            "stopped_early": bool(self.stopped_early_),
        }
        save_model_dir(path, self.saved_format, self.saved_version, config, module_values(self.model_))

    @classmethod
    def load(cls, path: str | os.PathLike) -> "NoisyGPClassifier":
        """Rebuild a classifier saved by ``save``; its predictions equal the saved one's.

        Returns
        -------
        NoisyGPClassifier
            The fitted classifier saved in folder ``path``.
        """
        from gpal.models.likelihoods.base import likelihood_from_config
        from gpal.models.state import assign_module_values, kernel_from_config
        from gpal.models.svgp import NoisySVGP

        config, arrays = load_model_dir(path, cls.saved_format, cls.saved_version)
        params = cls._current_names(config["params"])
        if isinstance(params["kernel"], dict):
            params["kernel"] = kernel_from_config(params["kernel"]["kernel_config"])
        if isinstance(params["likelihood"], dict):
            params["likelihood"] = likelihood_from_config(params["likelihood"]["likelihood_config"])
        params["hidden_sizes"] = tuple(params["hidden_sizes"])
        clf = cls(**params)
        if "augmented" in config:  # written by gpal <= 0.2, which kept the augmented estimator itself
            # The training-set size was not saved; it only scales the ELBO, and a CAVI fit is never continued.
            clf._adopt(LogisticSoftmaxGPClassifier.from_state(config["augmented"], arrays), num_data=0)
            return clf
        clf._restore_fitted_state(config)  # checks the saved sizes before the model is built from them
        model = NoisySVGP.from_structure(config["structure"])
        assign_module_values(model, arrays)
        clf.model_ = model
        clf._built_with = clf._model_params()  # a warm-started refit may keep this model
        clf.history_ = list(config["history"])
        clf.stopped_early_ = config["stopped_early"]
        return clf


# ------------------------------------------------------------------ helpers
class _FitPlan(NamedTuple):
    """A fit up to its training: the validated data, standardiser, model, its training arrays and callback."""

    data: Any
    standardizer: Any
    model: Any
    train_data: Any
    previous: Any
    monitor: Any
    callback: Callable | None


def _continue_from(model: Any, previous: Any) -> None:
    """Copy every global variable of ``previous`` into ``model``; per-point q(x_i) stay at their start.

    A variable whose shape changed (the inducing points and q(u) when the number of
    distinct training inputs passed a smaller ``num_inducing``) starts afresh, with a warning:
    a warm start that silently restarts q(u) would look like a converged one.
    """
    from gpflow.utilities import parameter_dict

    from gpal.models.state import module_values

    per_point = {id(v) for v in model.strategy.per_point_variables}
    old = module_values(previous)
    restarted = []
    for key, var in parameter_dict(model).items():
        raw = getattr(var, "unconstrained_variable", var)
        if id(var) in per_point or key not in old:
            continue
        if tuple(old[key].shape) != tuple(raw.shape):
            restarted.append(f"{key} {tuple(old[key].shape)} -> {tuple(raw.shape)}")
            continue
        raw.assign(old[key])
    if restarted:
        warnings.warn(
            "warm_start continued the model but restarted parameters whose size changed: "
            + "; ".join(restarted) + " (the number of inducing points follows the distinct training inputs "
            "up to num_inducing); give the refit enough epochs to converge again",
            stacklevel=3,
        )

"""``LogisticSoftmaxGPClassifier``: the augmented logistic-softmax GP (paper 004) behind gpal's estimator contract.

Training is the conjugate scheme of ``gpal.models.families.augmented_logistic_softmax``: the paper's
closed-form CAVI on the full batch ("cavi") or natural-gradient SVI on minibatches ("natural_gradient"),
both on its mean-field q(lambda) q(n, omega) q(u), or gpal's CAVI with lambda integrated out
("cavi_collapsed"), with the kernel (and optionally the inducing inputs) moved by Adam on the same bound.
"cavi_exact", gpal's too, finishes collapsed CAVI's sweeps with
full-batch natural-gradient steps on the exact ELBO (``gpal.models.families.augmented_exact``): the
augmented bound's optimum is a less confident q than the exact one, and these steps close that gap.  Predictions average the logistic-softmax
over Monte Carlo draws of q(f) (paper 004 sec. 4): a plug-in of the mean would be overconfident
and bias entropy-based acquisition.  Same contract as the other gpal classifiers
(``gpal.estimators.base``); saved as ``config.json`` + ``params.npz``, never a pickle.

This family models exact inputs: a non-zero ``X_var`` is accepted (so the estimator drops
into the same workflows) but ignored, with a warning.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator

from gpal.constraints import Boolean, Integer, OneOf, Optional, Real
from gpal.estimators.base import GPClassifierMixin, check_fit_data, warn_ignored_noise
from gpal.estimators.params import SPARSE_GP_PARAMETERS
from gpal.registry import AUGMENTED_INFERENCE, DEFAULT_NUM_INDUCING

__all__ = ["LogisticSoftmaxGPClassifier"]


class LogisticSoftmaxGPClassifier(GPClassifierMixin, BaseEstimator):
    """Sparse multi-class GP classifier, logistic-softmax likelihood, conjugate updates by augmentation.

    Fitted attributes: ``classes_``, ``n_features_in_``, ``model_``
    (``AugmentedLogisticSoftmaxGP``), ``standardizer_``, ``history_`` (the augmented ELBO after
    each iteration's global update; minibatch estimates for "natural_gradient"), ``exact_history_``
    (the exact ELBO before each exact step of "cavi_exact"; empty otherwise).

    Parameters
    ----------
    inference
        "cavi" (the paper's: full-batch coordinate ascent on its mean-field q(lambda) q(n, omega) q(u),
        each factor updated once per sweep in closed form), "natural_gradient" (the paper's SVI: the same
        factorisation, natural-gradient steps on q(u) over minibatches of ``batch_size``),
        "cavi_collapsed" (gpal's: the same closed-form sweeps with lambda integrated out, a tighter bound
        whose optimum is closer to SVI's predictive) or "cavi_exact" (gpal's, the default: ``max_iter``
        collapsed sweeps, then ``exact_steps`` full-batch natural-gradient steps on the exact ELBO, the kernel
        and Z moved by Adam on it too; on digits, vehicle and satimage it reached SVI logistic-softmax's
        test NLL in a fraction of SVI's time).  The closed-form bounds prefer less confident latents than
        the exact ELBO: docs/papers/004_numbers.md measures each against SVI.
    num_inducing
        inducing inputs shared by all classes, k-means centres of the (standardised)
        training inputs (capped at the distinct rows).
    kernel
        gpflow kernel (copied); ``None`` is squared exponential with one length scale per feature.
    kernel_per_class
        give each class its own copy of ``kernel``, each trained on its own (paper 004's authors' choice,
        AugmentedGaussianProcesses.jl); ``False`` (gpal's) shares one kernel among all classes: one projection
        per step for all of them, and on digits no clear loss (docs/papers/004_galy_fajou.md).
    max_iter
        iterations (CAVI sweeps or minibatch steps); 50 sweeps before the exact steps, as measured
        for "cavi_exact" (docs/papers/004_numbers.md).
    batch_size
        minibatch size for "natural_gradient"; ``None`` is the full batch (the CAVI schemes need ``None``).
    learning_rate
        Adam step on the kernel hyperparameters (and Z), one per ``hyper_every`` sweeps; 0.1
        rather than SVI's 0.01-0.02 as a CAVI fit takes a hundred or two steps, not thousands: at SVI's step the
        hyperparameters are still far from their optimum when the sweeps end (docs/papers/004_numbers.md).
    hyper_every
        one Adam step every this many iterations; 0 keeps the hyperparameters fixed.
    train_inducing
        move the inducing inputs with the hyperparameters.
    local_passes
        passes of the paper's q(n), q(lambda) updates per sweep or step ("cavi", "natural_gradient"):
        1 (gpal's) or more, as its authors' AugmentedGaussianProcesses.jl repeats them (5 in its sparse model).
    nat_delay, nat_forgetting
        natural-gradient step size rho_t = (t + nat_delay)^-nat_forgetting,
        t = 0, 1, ...; delay >= 1 keeps rho_t <= 1 (a convex blend of precisions stays positive
        definite); forgetting in (0.5, 1] for Robbins-Monro convergence.
    exact_steps
        natural-gradient steps on the exact ELBO after the sweeps ("cavi_exact").
    exact_step_size
        their step size rho in (0, 1]; halved within a step while the precision would
        not stay positive definite (the likelihood is not log-concave).  1 oscillated on digits.
    exact_learning_rate
        Adam step on the kernel in the exact phase, one per natural-gradient step;
        1.0, as the exact optimum's kernel variance is tens of times the start's (digits: ~30 after
        100 steps) and Adam moves softplus-constrained values by about this much per step.
    exact_inducing_learning_rate
        Adam step on the inducing inputs in the exact phase; ``None`` keeps
        them fixed.  Small, as they live in the standardised input space.
    exact_samples
        seeded Monte Carlo draws of q(f) per point for the exact ELBO (SVI's 100 by default).
    n_samples
        Monte Carlo draws of the latent marginals per prediction.
    jitter
        added to the diagonal of K_mm.
    standardize
        fit a ``gpal.data.standardizer.Standardizer`` on the training inputs.
    scaling
        the standardiser's map: "zscore" (mean 0, unit spread) or "range" (each feature's training range onto
        [-1, 1], as paper 003's authors scale their inputs).
    random_state
        seeds the k-means initialisation, the minibatches and the predictive draws (an integer seed, None or a numpy generator, as scikit-learn's).
    progress
        show a tqdm bar while fitting (off by default, as scikit-learn estimators are quiet).

    Examples
    --------
    >>> import numpy as np
    >>> from gpal import LogisticSoftmaxGPClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2))
    >>> y = np.where(X[:, 0] > 0.5, "fsrq", np.where(X[:, 0] < -0.5, "bll", "psr"))
    >>> clf = LogisticSoftmaxGPClassifier(num_inducing=5, max_iter=3, n_samples=50).fit(X, y)
    >>> clf.predict_proba(X[:2]).shape
    (2, 3)
    >>> clf.sample_proba(X[:2], n_samples=10).shape       # (draws, rows, classes)
    (10, 2, 3)
    """

    saved_format = "gpal.LogisticSoftmaxGPClassifier"  # the ``format`` of its saved folders
    saved_version = 2
    _parameters = {
        **SPARSE_GP_PARAMETERS,
        "inference": OneOf(AUGMENTED_INFERENCE),
        "kernel_per_class": Boolean(),
        "max_iter": Integer(1),
        "batch_size": Optional(Integer(1)),
        "learning_rate": Real(0, low_open=True),
        "hyper_every": Integer(0),
        "train_inducing": Boolean(),
        "local_passes": Integer(1),
        "nat_delay": Real(1, meaning="so that every step rho_t <= 1"),
        "nat_forgetting": Real(0, 1, meaning="0: every step is 1"),
        "exact_steps": Integer(1),
        "exact_step_size": Real(0, 1, low_open=True),
        "exact_learning_rate": Real(0, low_open=True),
        "exact_inducing_learning_rate": Optional(Real(0, low_open=True)),
        "exact_samples": Integer(1),
        "n_samples": Integer(1),
        "jitter": Real(0, low_open=True),
    }

    def __init__(
        self,
        *,
        inference: str = "cavi_exact",
        num_inducing: int = DEFAULT_NUM_INDUCING,
        kernel: Any = None,
        kernel_per_class: bool = False,
        max_iter: int = 50,
        batch_size: int | None = None,
        learning_rate: float = 0.1,
        hyper_every: int = 1,
        train_inducing: bool = False,
        local_passes: int = 1,
        nat_delay: float = 1.0,
        nat_forgetting: float = 0.6,
        exact_steps: int = 100,
        exact_step_size: float = 0.5,
        exact_learning_rate: float = 1.0,
        exact_inducing_learning_rate: float | None = 0.03,
        exact_samples: int = 100,
        n_samples: int = 1000,
        jitter: float = 1e-6,
        standardize: bool = True,
        scaling: str = "zscore",
        random_state: Any = 0,
        progress: bool = False,
    ):
        self._store_params(locals())

    def _check_combinations(self) -> None:
        if self.local_passes != 1 and self._locals_family() == "collapsed":
            raise ValueError(f"local_passes={self.local_passes} repeats the paper's mean-field local updates; "
                             f"inference={self.inference!r} takes the locals' optimum: use local_passes=1, "
                             "or inference='cavi' / 'natural_gradient'")
        if self.batch_size is not None and self.inference != "natural_gradient":
            raise ValueError(f"inference={self.inference!r} updates on the full batch: use batch_size=None, "
                             "or inference='natural_gradient'")

    def _locals_family(self) -> str:
        """The model's q(lambda, n): the paper's mean field for its schemes, lambda integrated out for gpal's."""
        return "collapsed" if self.inference in ("cavi_collapsed", "cavi_exact") else "mean_field"

    # ------------------------------------------------------------------- fit
    def fit(self, X: Any, y: Any = None, X_var: Any = None) -> "LogisticSoftmaxGPClassifier":
        """Fit on arrays ``X`` (n, d) and labels ``y`` (n,), or on a labelled ``NoisyDataset``.

        ``X_var`` is accepted for a common interface and ignored (warning if non-zero).

        Returns
        -------
        LogisticSoftmaxGPClassifier
            ``self``, fitted.
        """
        self._start_fit(X)
        data = check_fit_data(X, y, X_var, owner=type(self).__name__)
        warn_ignored_noise(data.X_var, "LogisticSoftmaxGPClassifier")

        from gpal.models.families.augmented_logistic_softmax import AugmentedLogisticSoftmaxGP
        from gpal.training.cavi import AugmentedTrainer

        standardizer, Xs, _ = self._standardize_fit(data)
        kernel, Z = self._sparse_start(Xs)
        if self.kernel_per_class:
            kernel = _per_class(kernel, len(data.classes))
        model = AugmentedLogisticSoftmaxGP(kernel, Z, len(data.classes), float(self.jitter), self._locals_family(),
                                           int(self.local_passes))
        trainer = AugmentedTrainer(model, Xs, data.y, float(self.learning_rate), bool(self.train_inducing))
        history = trainer.run(
            "natural_gradient" if self.inference == "natural_gradient" else "cavi",
            max_iter=int(self.max_iter),
            batch_size=None if self.batch_size is None else int(self.batch_size),
            hyper_every=int(self.hyper_every),
            delay=float(self.nat_delay),
            forgetting=float(self.nat_forgetting),
            seed=self.random_seed_,
            progress=bool(self.progress),
        )
        exact_history: list[float] = []
        if self.inference == "cavi_exact":
            from gpal.training.exact_finish import ExactFinish

            finish = ExactFinish(model, Xs, data.y, float(self.exact_learning_rate),
                                 None if self.exact_inducing_learning_rate is None else float(self.exact_inducing_learning_rate),
                                 int(self.exact_samples), self.random_seed_)
            exact_history = finish.run(int(self.exact_steps), float(self.exact_step_size))
        self._set_fitted(data.classes, Xs.shape[1], standardizer)
        self.model_ = model
        self.history_ = history
        self.exact_history_ = exact_history
        return self

    @property
    def n_iter_(self) -> int:
        """Iterations (CAVI sweeps or minibatch steps) the fit ran, ``max_iter`` unless stopped; "cavi_exact"'s exact
        steps after them are ``len(exact_history_)``."""
        self._require_fitted()
        return len(self.history_)

    # --------------------------------------------------------------- predict
    def predict_proba(self, X: Any, X_var: Any = None) -> np.ndarray:
        """(n, C) class probabilities, columns as ``classes_``: E_q[p(y | f)] by seeded Monte Carlo.

        Returns
        -------
        numpy.ndarray
            (n, C) probabilities, rows summing to 1.
        """
        Xs = self._exact_inputs(X, X_var)  # first: it raises the clear error when not fitted
        return self.model_.predict_proba(Xs, int(self.n_samples), self.prediction_seed)

    def sample_proba(self, X: Any, X_var: Any = None, n_samples: int = 100) -> np.ndarray:
        """p(y | f_s) for ``n_samples`` draws of the latent marginals, (S, n, C); their mean ~ ``predict_proba``.

        Returns
        -------
        numpy.ndarray
            (S, n, C) probabilities, one (n, C) slice per draw.
        """
        Integer(1).check("n_samples", n_samples)
        Xs = self._exact_inputs(X, X_var)
        return self.model_.sample_proba(Xs, int(n_samples), self.prediction_seed)

    # ------------------------------------------------------------- save/load
    def to_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        """The fitted classifier as (JSON-able config, named arrays); ``from_state`` inverts it.

        Returns
        -------
        config : dict
            Parameters, fitted attributes, kernel and history, JSON-able.
        arrays : dict
            Name -> numpy array (inducing inputs, natural parameters, kernel values).
        """
        from gpal.models.state import kernel_state

        self._check_fitted()
        model = self.model_
        params, arrays = self._params_state("kernel_template/")
        if model.kernel_per_class:
            states = [kernel_state(k, f"kernel{c}/") for c, k in enumerate(model.kernels)]
            kernel_config: Any = [config for config, _ in states]
            kernel_arrays = {name: value for _, arrays_c in states for name, value in arrays_c.items()}
        else:
            kernel_config, kernel_arrays = kernel_state(model.kernel, "kernel/")
        arrays.update({"Z": model.Z.numpy(), "eta1": model.eta1.numpy(), "precision": model.precision.numpy(), **kernel_arrays})
        config = {
            "params": params,
            **self._fitted_state(),
            "kernel": kernel_config,
            "jitter": model.jitter,
            "history": [float(h) for h in self.history_],
            "exact_history": [float(h) for h in self.exact_history_],
        }
        return config, arrays

    @classmethod
    def from_state(cls, config: dict[str, Any], arrays: dict[str, np.ndarray]) -> "LogisticSoftmaxGPClassifier":
        """Inverse of `to_state`: the classifier from its (config, arrays).

        Returns
        -------
        LogisticSoftmaxGPClassifier
            The fitted classifier that ``to_state`` described.
        """
        from gpal.models.families.augmented_logistic_softmax import AugmentedLogisticSoftmaxGP
        from gpal.models.state import kernel_from_state

        clf = cls(**cls._params_from_state(_current_params(config["params"]), arrays, "kernel_template/"))
        clf._restore_fitted_state(config)
        if isinstance(config["kernel"], list):  # a kernel per class
            import gpflow

            kernel = gpflow.kernels.SeparateIndependent(
                [kernel_from_state(k, arrays, f"kernel{c}/") for c, k in enumerate(config["kernel"])])
        else:
            kernel = kernel_from_state(config["kernel"], arrays, "kernel/")
        model = AugmentedLogisticSoftmaxGP(kernel, arrays["Z"], len(clf.classes_), config["jitter"], clf._locals_family())
        model.eta1.assign(arrays["eta1"])
        model.precision.assign(arrays["precision"])
        clf.model_ = model
        clf.history_ = list(config["history"])
        clf.exact_history_ = list(config.get("exact_history", []))  # saved before "cavi_exact": none
        return clf


def _per_class(kernel: Any, num_classes: int) -> Any:
    """``num_classes`` independent copies of ``kernel``, one per class, as one ``SeparateIndependent``."""
    import gpflow

    from gpal.models.module_copy import module_copy

    return gpflow.kernels.SeparateIndependent([module_copy(kernel) for _ in range(num_classes)])


def _current_params(params: dict[str, Any]) -> dict[str, Any]:
    """A saved folder's parameters in today's names: ``locals_family`` became part of ``inference``.

    Folders without it (gpal 0.3) were fitted with the paper's mean field, as "cavi" and "natural_gradient"
    are now; collapsed CAVI is "cavi_collapsed"; a collapsed natural-gradient fit keeps "natural_gradient"
    (its q(u) predicts the same; a refit uses the paper's locals), and "cavi_exact" always sweeps collapsed.
    """
    params = dict(params)
    if params.pop("locals_family", "mean_field") == "collapsed" and params.get("inference") == "cavi":
        params["inference"] = "cavi_collapsed"
    return params

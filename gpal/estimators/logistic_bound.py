"""``LogisticBoundGPClassifier``: binary logistic GP classification with analytic q(u).

The estimator front of ``gpal.models.families.logistic_bounds`` (paper 002): vi-JJ,
vi-JJ-full, vi-JJ-hybrid and vi-Taylor.  Same contract as the other gpal classifiers
(``gpal.estimators.base``): fit on arrays or a labelled ``NoisyDataset``, labels of any
sortable type, ``predict_proba`` -> (n, 2) in the order of ``classes_``, and
save/load as ``config.json`` + ``params.npz`` (no pickle).

This family models exact inputs: a non-zero ``X_var`` is accepted (so the
estimator drops into the same workflows) but ignored, with a warning.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
from sklearn.base import BaseEstimator

from gpal.constraints import Boolean, Integer, OneOf, Real
from gpal.estimators.base import GPClassifierMixin, check_fit_data, warn_ignored_noise
from gpal.estimators.params import SPARSE_GP_PARAMETERS
from gpal.registry import DEFAULT_NUM_INDUCING, LOGISTIC_BOUNDS

__all__ = ["LogisticBoundGPClassifier"]


class LogisticBoundGPClassifier(GPClassifierMixin, BaseEstimator):
    """Sparse binary GP classifier, logistic likelihood, q(u) in closed form (Izmailov & Kropotov).

    Fitted attributes: ``classes_`` (``classes_[1]`` is the class modelled by
    p(y = +1)), ``n_features_in_``, ``model_`` (``LogisticBoundGP``),
    ``standardizer_``, ``history_`` (ELBO (11) by quadrature per outer iteration,
    comparable with svi), ``bound_history_`` (the method's own objective J^),
    ``converged_``, ``stopped_early_``.

    Parameters
    ----------
    method : "jj" | "jj-full" | "jj-hybrid" | "taylor"
        vi-JJ (Jaakkola-Jordan bound, xi by eq. 14), vi-JJ-full (xi by L-BFGS-B with
        the hyperparameters, no analytic stage), vi-JJ-hybrid (xi by eq. 14, then also
        in the L-BFGS-B step) or vi-Taylor (second-order expansion at the marginal means).
    num_inducing
        inducing inputs, k-means centres of the (standardised) training inputs.
    kernel
        gpflow kernel (copied); ``None`` is squared exponential with one length scale per feature.
    max_iter
        outer iterations of Algorithm 1 (stops earlier when the objective
        changes by less than ``tol`` relative).
    n_updates, max_fun
        analytic xi/q(u) alternations and L-BFGS-B evaluations per
        outer iteration (the paper's n_upd = 3, n_fun = 5; vi-JJ-full has no analytic stage).
    train_inducing
        optimise the inducing inputs with the kernel hyperparameters
        (the paper keeps the k-means centres: ``False``).
    jitter
        added to the diagonal of K_mm.
    scheme
        "gpal" (gpal's): L-BFGS-B on the kernel's unconstrained values, restarted every outer
        iteration (vi-JJ-full too, from xi of eq. 14 under the prior); "gplib" (the paper's first
        author's code): L-BFGS-B on sigma_f and the length scales within [1e-2, 1e3], vi-JJ-full as
        one continuous run of ``max_iter`` iterations from xi = 1, vi-JJ-hybrid from xi = 1 with
        L-BFGS-B before the analytic updates (``gpal.training.bounds``).
    standardize
        fit a ``gpal.data.standardizer.Standardizer`` on the training inputs.
    scaling
        the standardiser's map: "zscore" (mean 0, unit spread) or "range" (each feature's training range onto
        [-1, 1], as paper 003's authors scale their inputs).
    random_state
        seeds the k-means initialisation (the only randomness) (an integer seed, None or a numpy generator, as scikit-learn's).
    progress
        show a tqdm bar while fitting (off by default, as scikit-learn estimators are quiet).

    Examples
    --------
    >>> import numpy as np
    >>> from gpal import LogisticBoundGPClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2))
    >>> y = np.where(X[:, 0] + X[:, 1] > 0, "fsrq", "bll")   # binary only
    >>> clf = LogisticBoundGPClassifier(method="jj", num_inducing=5, max_iter=3).fit(X, y)
    >>> clf.classes_.tolist()                                # p(y = +1) models classes_[1]
    ['bll', 'fsrq']
    >>> proba = clf.predict_proba(X[:2])
    >>> proba.shape, np.allclose(proba.sum(axis=1), 1.0)
    ((2, 2), True)
    """

    saved_format = "gpal.LogisticBoundGPClassifier"  # the ``format`` of its saved folders
    saved_version = 2
    binary_only = True  # p(y = +1) models classes_[1]; scikit-learn's tags say so
    _parameters = {
        **SPARSE_GP_PARAMETERS,
        "method": OneOf(LOGISTIC_BOUNDS),
        "max_iter": Integer(1),
        "n_updates": Integer(1),
        "max_fun": Integer(1),
        "tol": Real(0),
        "train_inducing": Boolean(),
        "jitter": Real(0, low_open=True),
        "scheme": OneOf(("gpal", "gplib")),
    }

    def __init__(
        self,
        *,
        method: str = "jj",
        num_inducing: int = DEFAULT_NUM_INDUCING,
        kernel: Any = None,
        max_iter: int = 100,
        n_updates: int = 3,
        max_fun: int = 5,
        tol: float = 1e-6,
        train_inducing: bool = True,
        jitter: float = 1e-6,
        scheme: str = "gpal",
        standardize: bool = True,
        scaling: str = "zscore",
        random_state: Any = 0,
        progress: bool = False,
    ):
        self._store_params(locals())

    # ------------------------------------------------------------------- fit
    def fit(self, X: Any, y: Any = None, X_var: Any = None,
            callback: Callable[[int, float], bool | None] | None = None,
            record: str = "current") -> "LogisticBoundGPClassifier":
        """Fit on arrays ``X`` (n, d) and labels ``y`` (n,) of exactly two classes, or on a ``NoisyDataset``.

        ``X_var`` is accepted for a common interface and ignored (warning if non-zero).
        ``callback(iteration, bound)`` runs after every outer iteration, when the estimator
        already predicts with the state reached (so a caller can trace test quality against
        time, as paper 002 plots it); returning False stops training, keeping that state.
        ``record="authors"`` shows it what paper 002's authors recorded instead: the start (q at
        mu = 0, Sigma = I) as iteration 0, then for vi-JJ and vi-Taylor the q of each iteration's
        analytic stage, one step stale (``gpal.training.bounds.BoundOptimizer.run``).

        Returns
        -------
        LogisticBoundGPClassifier
            ``self``, fitted.
        """
        self._start_fit(X)
        data = check_fit_data(X, y, X_var, owner=type(self).__name__)
        if len(data.classes) != 2:  # one class was refused by check_fit_data
            raise ValueError(
                f"Only binary classification is supported: LogisticBoundGPClassifier is binary, but y has "
                f"{len(data.classes)} classes {list(data.classes)}; use NoisyGPClassifier or DirichletGPClassifier for C > 2"
            )
        warn_ignored_noise(data.X_var, "LogisticBoundGPClassifier")

        from gpal.models.families.logistic_bounds import LogisticBoundGP
        from gpal.training.bounds import BoundOptimizer

        standardizer, Xs, _ = self._standardize_fit(data)
        kernel, Z = self._sparse_start(Xs)
        model = LogisticBoundGP(kernel, Z, float(self.jitter))
        optimizer = BoundOptimizer(model, Xs, 2.0 * data.y - 1.0, self.method, bool(self.train_inducing))
        if callback is not None:  # what predict_proba reads, so that the callback can predict
            self._set_fitted(data.classes, Xs.shape[1], standardizer)
            self.model_ = model
        try:
            result = optimizer.run(
                max_iter=int(self.max_iter),
                n_updates=int(self.n_updates),
                max_fun=int(self.max_fun),
                tol=float(self.tol),
                progress=bool(self.progress),
                callback=callback,
                scheme=self.scheme,
                record=record,
            )
        except BaseException:
            self.__dict__.pop("model_", None)  # a failed fit leaves no half-trained model to predict with
            raise
        self._set_fitted(data.classes, Xs.shape[1], standardizer)
        self.model_ = model
        self.history_ = result.history
        self.bound_history_ = result.bound_history
        self.converged_ = result.converged
        self.stopped_early_ = result.stopped_early
        return self

    @property
    def n_iter_(self) -> int:
        """Outer iterations of Algorithm 1 the fit ran (at most ``max_iter``; fewer once converged or stopped)."""
        self._require_fitted()
        return len(self.history_)

    # --------------------------------------------------------------- predict
    def predict_proba(self, X: Any, X_var: Any = None) -> np.ndarray:
        """(n, 2) class probabilities, columns as ``classes_``; p(y=+1) = int sigma(f) q(f) df by quadrature.

        Returns
        -------
        numpy.ndarray
            (n, 2) probabilities, rows summing to 1.
        """
        X = self._exact_inputs(X, X_var)
        p = np.clip(self.model_.predict_proba(X), 0.0, 1.0)  # quadrature rounding may leave 1 + 1e-16
        return np.column_stack([1.0 - p, p])

    # ------------------------------------------------------------- save/load
    def to_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        from gpal.models.state import kernel_state

        self._check_fitted()
        model = self.model_
        params, arrays = self._params_state("kernel_template/")
        kernel_config, kernel_arrays = kernel_state(model.kernel, "kernel/")
        arrays.update({"Z": model.Z.numpy(), "q_mean": model.q_mean.numpy(), "q_sqrt": model.q_sqrt.numpy(), **kernel_arrays})
        config = {
            "params": params,
            **self._fitted_state(),
            "kernel": kernel_config,
            "jitter": model.jitter,
            "history": [float(h) for h in self.history_],
            "bound_history": [float(h) for h in self.bound_history_],
            "converged": bool(self.converged_),
            "stopped_early": bool(self.stopped_early_),
        }
        return config, arrays

    @classmethod
    def from_state(cls, config: dict[str, Any], arrays: dict[str, np.ndarray]) -> "LogisticBoundGPClassifier":
        from gpal.models.families.logistic_bounds import LogisticBoundGP
        from gpal.models.state import kernel_from_state

        clf = cls(**cls._params_from_state(config["params"], arrays, "kernel_template/"))
        model = LogisticBoundGP(kernel_from_state(config["kernel"], arrays, "kernel/"), arrays["Z"], config["jitter"])
        model.q_mean.assign(arrays["q_mean"])
        model.q_sqrt.assign(arrays["q_sqrt"])
        clf._restore_fitted_state(config)
        clf.model_ = model
        clf.history_ = list(config["history"])
        clf.bound_history_ = list(config["bound_history"])
        clf.converged_ = config["converged"]
        clf.stopped_early_ = config["stopped_early"]
        return clf

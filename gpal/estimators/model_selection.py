"""The error bars through scikit-learn's model selection: scorers that pass ``X_var``, and the one-array form.

scikit-learn's tools pass ``X_var`` two ways.  With metadata routing on
(``sklearn.set_config(enable_metadata_routing=True)``) and ``set_fit_request(X_var=True)`` /
``set_score_request(X_var=True)`` on the estimator, `Pipeline`, ``cross_validate`` and ``GridSearchCV``
route it to ``fit`` and ``score``; scikit-learn's own scorers (``"neg_log_loss"``, ...) never pass metadata
to ``predict_proba``, so `noisy_scorer` gives any of them in a form that does.  Or, without routing, `stack_inputs` puts
``[X | X_var]`` in one array and `NoisyInputAdapter` splits it again in front of the estimator: every tool that
takes one array (any scorer, ``n_jobs``, modAL) then carries each row's error bars with it, and
`NoisyStandardScaler` is the scaler that maps a row's values and variances together.
"""

from __future__ import annotations

import functools
import warnings
from typing import Any, Callable

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, TransformerMixin
from sklearn.metrics import get_scorer, get_scorer_names, make_scorer
from sklearn.utils.metadata_routing import MetadataRequest
from sklearn.utils.validation import check_is_fitted

from gpal.data.dataset import NoisyDataset
from gpal.data.standardizer import Standardizer
from gpal.estimators.base import RescaledWithoutVariancesWarning

__all__ = ["NoisyInputAdapter", "NoisyScorer", "NoisyStandardScaler", "noisy_scorer", "split_inputs", "stack_inputs"]


def stack_inputs(X: Any, X_var: Any = None) -> np.ndarray:
    """The one-array form ``[X | X_var]`` (n, 2d) from arrays or a ``NoisyDataset`` (X_var None = exact inputs).

    Returns
    -------
    numpy.ndarray
        (n, 2d): the values, then their variances.
    """
    if isinstance(X, NoisyDataset):
        if X_var is not None:
            raise TypeError("pass either a NoisyDataset or arrays X, X_var, not both")
        X, X_var = X.X, X.X_var
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D (n_samples, n_features); got shape {X.shape}")
    V = np.zeros_like(X) if X_var is None else np.asarray(X_var, dtype=np.float64)
    if V.shape != X.shape:
        raise ValueError(f"X_var must have the shape of X {X.shape}; got {V.shape}")
    return np.hstack([X, V])


def split_inputs(XV: Any, n_features: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``[X | X_var]`` -> (X, X_var), the width checked against ``n_features`` when it is known.

    Returns
    -------
    X, X_var : numpy.ndarray
        (n, d) each.
    """
    XV = np.asarray(XV, dtype=np.float64)
    if XV.ndim == 1:  # one row, as modAL's retrieve_rows returns for a scalar index
        XV = XV[None, :]
    if XV.ndim != 2 or XV.shape[1] % 2:
        raise ValueError(f"expected the stacked array [X | X_var] with an even number of columns (2 x n_features); "
                         f"got shape {XV.shape}. Build it with gpal.estimators.model_selection.stack_inputs(X, X_var)")
    d = XV.shape[1] // 2
    if n_features is not None and d != n_features:
        raise ValueError(f"got [X | X_var] with {XV.shape[1]} columns, i.e. {d} features; the model was "
                         f"fitted on {n_features} features ({2 * n_features} stacked columns)")
    return XV[:, :d], XV[:, d:]


class NoisyInputAdapter(ClassifierMixin, BaseEstimator):
    """A gpal classifier seen through ``[X | X_var]`` arrays (`stack_inputs`), for tools that take one array.

    ``estimator`` is fitted in place, so that its ``warm_start`` carries over from one fit to the next (modAL's
    ``teach``); scikit-learn's model selection clones the adapter, and with it the estimator, as usual.
    """

    def __init__(self, estimator: Any):
        self.estimator = estimator

    def split_inputs(self, XV: Any) -> tuple[np.ndarray, np.ndarray]:
        """``[X | X_var]`` -> (X, X_var), checking the width against the fitted feature count.

        Returns
        -------
        X, X_var : numpy.ndarray
            (n, d) each.
        """
        return split_inputs(XV, getattr(self, "n_features_in_", None))

    @property
    def classes_(self) -> np.ndarray:
        """The wrapped classifier's labels."""
        return self.estimator.classes_

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "n_features_in_")

    def fit(self, XV: Any, y: Any, **fit_kwargs: Any) -> "NoisyInputAdapter":
        """Fit the wrapped classifier on the split ``[X | X_var]``.

        Returns
        -------
        NoisyInputAdapter
            ``self``, fitted.
        """
        if hasattr(self, "n_features_in_"):
            del self.n_features_in_  # a refit may change the width
        X, V = self.split_inputs(XV)
        with warnings.catch_warnings():
            # the one array carries each row's variances with its values: a scaler in front scaled both
            warnings.simplefilter("ignore", RescaledWithoutVariancesWarning)
            self.estimator.fit(X, np.asarray(y).ravel(), X_var=V, **fit_kwargs)
        self.n_features_in_ = X.shape[1]
        return self

    def predict_proba(self, XV: Any) -> np.ndarray:
        """The wrapped classifier's ``predict_proba`` of the split ``[X | X_var]``.

        Returns
        -------
        numpy.ndarray
            (n, C) probabilities.
        """
        check_is_fitted(self)
        return self.estimator.predict_proba(*self.split_inputs(XV))

    def predict(self, XV: Any) -> np.ndarray:
        """The wrapped classifier's ``predict`` of the split ``[X | X_var]``.

        Returns
        -------
        numpy.ndarray
            (n,) labels.
        """
        check_is_fitted(self)
        return self.estimator.predict(*self.split_inputs(XV))

    def sample_proba(self, XV: Any, n_samples: int = 100, **options: Any) -> np.ndarray:
        """The wrapped classifier's ``sample_proba`` (for BALD and discovery through modAL).

        Returns
        -------
        numpy.ndarray
            (S, n, C) probabilities.
        """
        X, V = self.split_inputs(XV)
        return self.estimator.sample_proba(X, X_var=V, n_samples=n_samples, **options)

    def sample_joint_proba(self, XV: Any, n_samples: int = 100) -> np.ndarray:
        """The wrapped classifier's ``sample_joint_proba`` (for EPIG through modAL).

        Returns
        -------
        numpy.ndarray
            (S, n, C) probabilities.
        """
        X, V = self.split_inputs(XV)
        return self.estimator.sample_joint_proba(X, X_var=V, n_samples=n_samples)


class NoisyStandardScaler(TransformerMixin, BaseEstimator):
    """scikit-learn's ``StandardScaler`` for ``[X | X_var]`` rows: the values to zero mean and unit spread, their
    variances by the same scale squared, so that each error bar keeps its meaning (a `Standardizer`).

    A ``StandardScaler`` in front of an estimator that takes ``X_var`` would rescale the values and leave the
    variances in the old units; use this one on `stack_inputs`' arrays, before a `NoisyInputAdapter`.

    Examples
    --------
    >>> import numpy as np
    >>> from gpal.estimators.model_selection import NoisyStandardScaler, stack_inputs
    >>> XV = stack_inputs(np.array([[1.0], [3.0]]), np.array([[0.4], [0.4]]))
    >>> NoisyStandardScaler().fit_transform(XV)
    array([[-1. ,  0.4],
           [ 1. ,  0.4]])
    """

    def fit(self, XV: Any, y: Any = None) -> "NoisyStandardScaler":
        """The mean and spread of the values of ``[X | X_var]``.

        Returns
        -------
        NoisyStandardScaler
            ``self``, fitted (``standardizer_``, ``n_features_in_`` = 2d stacked columns).
        """
        X, _ = split_inputs(XV)
        self.standardizer_, self.n_features_in_ = Standardizer.fit(X), 2 * X.shape[1]
        return self

    def transform(self, XV: Any) -> np.ndarray:
        """``[X | X_var]`` in the fitted units: ``(X - mean) / scale`` beside ``X_var / scale**2``.

        Returns
        -------
        numpy.ndarray
            (n, 2d).
        """
        check_is_fitted(self)
        return np.hstack(self.standardizer_.transform_arrays(*split_inputs(XV, self.n_features_in_ // 2)))

    def inverse_transform(self, XV: Any) -> np.ndarray:
        """The original units of a transformed ``[X | X_var]``.

        Returns
        -------
        numpy.ndarray
            (n, 2d).
        """
        check_is_fitted(self)
        return np.hstack(self.standardizer_.inverse_transform_arrays(*split_inputs(XV, self.n_features_in_ // 2)))


#: The estimator methods a scorer reads predictions from, which `NoisyScorer` hands ``X_var``.
_RESPONSE_METHODS = ("predict_proba", "predict", "predict_log_proba")


class _WithVariances:
    """An estimator as a scikit-learn scorer sees it, with ``X_var`` bound to its prediction methods: scikit-learn's
    scorers call ``predict_proba(X)`` and pass routed metadata to the metric only, never to the estimator."""

    def __init__(self, estimator: Any, X_var: Any):
        self._estimator, self._X_var = estimator, X_var

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._estimator, name)
        if name not in _RESPONSE_METHODS or self._X_var is None:
            return attribute

        @functools.wraps(attribute)  # scikit-learn reads the method's name
        def with_variances(X: Any) -> Any:
            return attribute(X, X_var=self._X_var)

        return with_variances


class NoisyScorer:
    """A scikit-learn scorer (``scorer(estimator, X, y, X_var=..., sample_weight=...)``) whose estimator's
    ``predict_proba`` / ``predict`` get the routed ``X_var``; made by `noisy_scorer`.  It asks scikit-learn's
    metadata routing for ``X_var`` (and ``sample_weight`` when ``weighted``)."""

    def __init__(self, scorer: Any, weighted: bool):
        self.scorer, self.weighted = scorer, weighted

    def __call__(self, estimator: Any, X: Any, y_true: Any, X_var: Any = None, sample_weight: Any = None) -> float:
        weight = {} if sample_weight is None else {"sample_weight": sample_weight}
        return float(self.scorer(_WithVariances(estimator, X_var), X, y_true, **weight))

    def get_metadata_routing(self) -> MetadataRequest:
        """What scikit-learn's routing passes to this scorer: ``X_var``, and ``sample_weight`` when weighted.

        Returns
        -------
        sklearn.utils.metadata_routing.MetadataRequest
            The scorer's requests.
        """
        request = MetadataRequest(owner=type(self).__name__)
        request.score.add_request(param="X_var", alias=True)
        if self.weighted:
            request.score.add_request(param="sample_weight", alias=True)
        return request

    def __repr__(self) -> str:
        return f"noisy_scorer({self.scorer!r})"


def noisy_scorer(scoring: str | Callable, *, response_method: str = "predict_proba", greater_is_better: bool = True,
                 weighted: bool = False, **kwargs: Any) -> NoisyScorer:
    """A scorer for ``cross_val_score``, ``cross_validate`` and ``GridSearchCV`` that passes the routed ``X_var``
    to the estimator; scikit-learn's own (``scoring="neg_log_loss"``) call ``predict_proba(X)`` without it, so a model
    that uses the error bars fails to score and its score is NaN.

    ``scoring``: any scikit-learn scorer name (``sklearn.metrics.get_scorer_names()``: "neg_log_loss",
    "accuracy", "roc_auc_ovr", "balanced_accuracy", ...), or a metric
    ``metric(y_true, predicted, **kwargs)`` with ``make_scorer``'s ``response_method`` and ``greater_is_better``.
    ``weighted``: pass the routed ``sample_weight`` to the metric too.  Turn routing on with
    ``sklearn.set_config(enable_metadata_routing=True)``.

    Returns
    -------
    NoisyScorer
        The scorer.

    Examples
    --------
    >>> from gpal.estimators.model_selection import noisy_scorer
    >>> noisy_scorer("neg_log_loss")
    noisy_scorer(make_scorer(log_loss, greater_is_better=False, response_method='predict_proba'))
    """
    if isinstance(scoring, str):
        if scoring not in get_scorer_names():
            raise ValueError(f"{scoring!r} is not a scikit-learn scorer name; valid names are "
                             "sklearn.metrics.get_scorer_names() (e.g. 'neg_log_loss', 'accuracy', 'roc_auc_ovr'), "
                             "or pass a metric function")
        return NoisyScorer(get_scorer(scoring), weighted)
    if not callable(scoring):
        raise TypeError(f"scoring must be a scikit-learn scorer name or a metric function; got {scoring!r}")
    if response_method not in _RESPONSE_METHODS:
        raise ValueError(f"response_method must be one of {list(_RESPONSE_METHODS)}; got {response_method!r}")
    return NoisyScorer(make_scorer(scoring, response_method=response_method, greater_is_better=greater_is_better,
                                   **kwargs), weighted)

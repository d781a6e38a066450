"""The estimator contract every gpal classifier shares, written once.

Every family (the noisy-input sparse GP, Dirichlet-based GPs, the binary
Jaakkola-Jordan / Taylor bounds, ...) implements ``fit`` and ``predict_proba``;
this module gives them the same input validation, label handling and the derived
``predict`` / ``score`` / ``predictive_entropy``, so users switch families without
changing code.  Validation happens here, before any TensorFlow work.
"""

from __future__ import annotations

import numbers
import os
import warnings
from dataclasses import dataclass
from typing import Any, ClassVar, Mapping

import numpy as np
from scipy import sparse
from sklearn.base import ClassifierMixin
from sklearn.exceptions import NotFittedError
from sklearn.utils.multiclass import type_of_target
from sklearn.utils import check_random_state
from sklearn.utils.validation import _check_feature_names, check_array, column_or_1d

from gpal.constraints import Constraint, check_params
from gpal.data.dataset import NoisyDataset
from gpal.data.standardizer import Standardizer
from gpal.evaluation.metrics import entropy
from gpal.identity import jsonable
from gpal.saved_models import (check_array_checksums, classes_from_json, classes_to_json, corrupt_field,
                                load_model_dir, save_model_dir)

__all__ = ["FitData", "FitInterrupted", "GPClassifierMixin", "RescaledWithoutVariancesWarning", "check_fit_data",
           "check_predict_data", "check_sample_weight", "entropy", "check_variance_scale", "expected_failed_checks",
           "fit_seed", "raise_if_interrupted", "warn_ignored_noise", "warn_standardised_without_variances"]


@dataclass(frozen=True)
class FitData:
    """Validated training data: float64 arrays, integer codes and the original labels."""

    X: np.ndarray
    X_var: np.ndarray
    y: np.ndarray  # codes into classes
    classes: np.ndarray  # sorted unique original labels (any hashable type)
    feature_names: tuple[str, ...]


def _matrix(name: str, value: Any, min_rows: int = 0, owner: str | None = None) -> np.ndarray:
    """``value`` as a dense, real, finite float64 (n_samples, n_features) array, at least ``min_rows`` rows; the
    refusals are scikit-learn's (`sklearn.utils.validation.check_array`'s words where it has them), naming ``name``."""
    if sparse.issparse(value):
        raise TypeError(f"{name} is a scipy sparse {type(value).__name__}, but sparse input is not supported: "
                        f"gpal's models take dense arrays (convert it with {name}.toarray())")
    raw = value if isinstance(value, np.ndarray) else np.asarray(value, dtype=object)
    if raw.dtype.kind in "USV" or (raw.dtype == object and any(isinstance(v, (str, bytes)) for v in raw.ravel())):
        # as scikit-learn: numbers given as text are a mistake upstream, not something to parse silently
        raise TypeError(f"{name} must be numeric; got {'text' if raw.dtype.kind != 'V' else 'records'} "
                        f"(dtype {raw.dtype}): convert it to numbers first")
    if raw.dtype.kind == "c" or (raw.dtype == object and any(isinstance(v, (complex, np.complexfloating)) for v in raw.ravel())):
        raise ValueError(f"Complex data not supported: {name} holds complex numbers (dtype {raw.dtype}); "
                         "gpal's models take real features")
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name} must be numeric; {exc}") from None
    if arr.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_samples, n_features); got shape {arr.shape}. Reshape your data with "
                         f"{name}.reshape(-1, 1) if it has a single feature or {name}.reshape(1, -1) if it is a single sample")
    # no rows (when rows are needed) or no columns: scikit-learn's messages, which name the shape and the minimum
    check_array(arr, dtype=None, ensure_all_finite=False, ensure_min_samples=min_rows, input_name=name, estimator=owner)
    bad = ~np.isfinite(arr)
    if bad.any():
        rows, cols = np.nonzero(bad)
        raise ValueError(
            f"{name} contains {bad.sum()} NaN or infinite value(s), first at row {rows[0]}, column {cols[0]}"
        )
    return arr


def _variances(X: np.ndarray, X_var: Any) -> np.ndarray:
    if X_var is None:
        return np.zeros_like(X)
    V = _matrix("X_var", X_var)
    if V.shape != X.shape:
        # scikit-learn routes X_var to the last step unchanged and tells the estimator nothing of the steps before
        # it, so the step cannot be named: the likely kind of step is, with the one-array form that keeps them together
        changed = ("rows (a step that resamples or drops rows)" if V.shape[0] != X.shape[0] else
                   "columns (a step that selects, combines or adds features: SelectKBest, PCA, PolynomialFeatures)")
        raise ValueError(f"X_var must have the shape of X at the estimator {X.shape}; got {V.shape}" + (
            f"; in a Pipeline, a step before this estimator changed X's {changed} and not X_var's, which "
            "scikit-learn routes past every step unchanged: put each row's error bars in the row "
            "(gpal.estimators.model_selection.stack_inputs, NoisyInputAdapter), so that every step keeps them "
            "together; outside a Pipeline, give X_var one row per row of X and one column per feature"
            if V.ndim == 2 and X.ndim == 2 else ""))
    if (V < 0).any():
        raise ValueError("X_var holds variances and must be >= 0 (got negative entries)")
    return V


def _missing_labels(labels: np.ndarray) -> np.ndarray:
    if labels.dtype.kind == "f":
        return np.isnan(labels)
    if labels.dtype == object:
        return np.array([v is None or (isinstance(v, (float, np.floating)) and np.isnan(v)) for v in labels], dtype=bool)
    return np.zeros(labels.shape, dtype=bool)


def check_sample_weight(sample_weight: Any, n_rows: int) -> np.ndarray | None:
    """None, or ``sample_weight`` as (n_rows,) float64: finite, >= 0, not all zero (ValueError otherwise).

    Returns
    -------
    numpy.ndarray or None
        The weights.
    """
    if sample_weight is None:
        return None
    weight = np.asarray(sample_weight, dtype=np.float64)
    if weight.shape != (n_rows,) or not np.all(np.isfinite(weight)) or np.any(weight < 0) or not np.any(weight > 0):
        raise ValueError(f"sample_weight must hold one finite weight >= 0 per row ({n_rows}), not all zero; "
                         f"got shape {weight.shape}" + (f", min {weight.min():.4g}, max {weight.max():.4g}"
                                                         if weight.size and weight.ndim == 1 else ""))
    return weight


def check_fit_data(X: Any, y: Any = None, X_var: Any = None, min_classes: int = 2, owner: str | None = None) -> FitData:
    """Arrays or a labelled ``NoisyDataset`` -> ``FitData``; labels may be any hashable type, not continuous numbers.

    ``owner`` (the estimator's name) is named in the refusals scikit-learn's words carry.  A column y (n, 1) is
    raveled with scikit-learn's ``DataConversionWarning``.
    """
    who = owner or "this classifier"
    if isinstance(X, NoisyDataset):
        if y is not None or X_var is not None:
            raise TypeError("pass either a NoisyDataset or arrays X, y (and X_var), not both")
        if not X.is_labelled:
            raise ValueError("cannot fit on an unlabelled NoisyDataset (a pool); it has no y")
        labels = np.asarray(X.class_names, dtype=object)[X.y]
        data, names = (X.X, X.X_var, labels), X.feature_names
    else:
        if y is None:
            raise ValueError(f"{who} requires y to be passed, but the target y is None: fit needs labels y "
                             "(one per row of X) or a labelled NoisyDataset")
        data, names = (X, X_var, y), ()
    Xa = _matrix("X", data[0], min_rows=1, owner=owner)
    V = _variances(Xa, data[1])
    labels = np.asarray(data[2])
    if labels.ndim == 2 and labels.shape[1] == 1:
        labels = column_or_1d(labels, warn=True)  # a one-column frame or (n, 1) array: used, with scikit-learn's warning
    if labels.ndim != 1 or labels.shape[0] != Xa.shape[0]:
        raise ValueError(f"y must be 1-D with one label per row of X ({Xa.shape[0]}); got shape {labels.shape}")
    missing = np.nonzero(_missing_labels(labels))[0]
    if missing.size:
        raise ValueError(
            f"y has {missing.size} missing label(s) (NaN or None), first at row {missing[0]}; "
            "drop those rows or give them a class (np.unique would make NaN a class of its own)"
        )
    try:
        kind = type_of_target(labels, input_name="y")
        classes, codes = np.unique(labels, return_inverse=True)
    except TypeError as exc:
        raise TypeError(f"labels must be mutually comparable (e.g. all strings or all ints): {exc}") from None
    if kind.startswith("continuous"):
        raise ValueError(f"Unknown label type: {kind}. y holds non-integer numbers (e.g. {labels[0]!r}), but {who} "
                         "needs class labels (strings, integers or integer-valued floats); bin a continuous target first")
    if len(classes) < min_classes:
        raise ValueError(f"need at least {min_classes} classes to fit a classifier; y has {len(classes)} "
                         f"class{'es' if len(classes) != 1 else ''}: {list(classes)}")
    return FitData(Xa, V, codes.astype(np.int64), classes, tuple(names) or tuple(f"x{j}" for j in range(Xa.shape[1])))


def check_predict_data(X: Any, X_var: Any, n_features: int, needs_variance: bool,
                       owner: str = "the model") -> tuple[np.ndarray, np.ndarray]:
    """Inputs for prediction, checked against the fitted model (arrays or a NoisyDataset); ``owner`` names the model
    in the refusal of another number of features."""
    if isinstance(X, NoisyDataset):
        if X_var is not None:
            raise TypeError("pass either a NoisyDataset or arrays X (and X_var), not both")
        X, X_var = X.X, X.X_var
    Xa = _matrix("X", X, owner=owner)
    if Xa.shape[1] != n_features:
        raise ValueError(f"X has {Xa.shape[1]} features, but {owner} is expecting {n_features} features as input "
                         f"(the number it was fitted with)")
    if X_var is None and needs_variance:
        raise ValueError(
            "this model was fitted to use the inputs' measured noise: pass X_var "
            "(per-point feature variances, 0 for exact features) or a NoisyDataset; in cross_val_score or "
            "GridSearchCV, a scorer given by name (scoring='neg_log_loss') calls predict_proba without X_var: wrap "
            "the name, scoring=gpal.estimators.model_selection.noisy_scorer('neg_log_loss'), which passes the routed "
            "X_var on"
        )
    return Xa, _variances(Xa, X_var)


def warn_ignored_noise(X_var: np.ndarray, owner: str, stacklevel: int = 3,
                       fix: str = "use NoisyGPClassifier to use the error bars") -> None:
    """Warn when a model that ignores input noise is handed non-zero variances, saying how to use them (``fix``).

    Such models accept ``X_var`` so they drop into the same workflows, but a
    user must not believe the error bars were used.
    """
    if np.any(X_var > 0):
        warnings.warn(
            f"{owner} ignores input noise: X_var has non-zero entries, but this model "
            f"treats the inputs as exact ({fix})",
            UserWarning,
            stacklevel=stacklevel,
        )


#: An X_var entry this many times its feature's variance across the sample says the value is unmeasured (or the
#: variance is in other units): the model would learn nothing from it.
UNINFORMATIVE_VARIANCE_RATIO = 1e6


def check_variance_scale(X: np.ndarray, X_var: np.ndarray, feature_names: Any, owner: str, stacklevel: int = 3,
                         spread: np.ndarray | None = None, margin: float = 1.0) -> None:
    """Warn of error bars that a noisy-input model would use in a way their giver cannot have meant.

    All zero: the model has nothing to use.  Most of a feature's variances above that feature's own variance
    across the sample: standard deviations passed as variances, or X rescaled without X_var (a scikit-learn
    ``StandardScaler`` in a Pipeline).  Variances over `UNINFORMATIVE_VARIANCE_RATIO` times the feature's
    variance: values that were not measured, which such a model learns nothing from.  ``spread``: each feature's
    variance to compare with (None: X's own across the sample); ``margin``: how many times it most variances must
    exceed to be warned of."""
    if X_var.size and not np.any(X_var > 0):
        warnings.warn(f"{owner} was given X_var, but it is zero everywhere: the inputs are treated as exact and the "
                      "input-noise model has nothing to use; pass the measured variances (squared error bars)",
                      UserWarning, stacklevel=stacklevel)
        return
    spread = X.var(axis=0) if spread is None else np.asarray(spread, dtype=np.float64)
    names = list(feature_names) if len(feature_names) == X.shape[1] else [f"x{j}" for j in range(X.shape[1])]
    for j in np.nonzero(spread > 0)[0]:
        typical = float(np.median(X_var[:, j]))
        if typical > margin * spread[j]:
            times = "" if margin == 1 else f"{margin:g} times "
            warnings.warn(
                f"X_var of feature {names[j]!r} exceeds {times}that feature's own variance across the sample for most rows "
                f"(median X_var {typical:.3g}, variance of X {spread[j]:.3g}): were standard deviations passed as "
                "variances (square them), or was X rescaled without X_var (a StandardScaler in a Pipeline)? Scale X "
                "and X_var together: leave the scaling to the estimator (standardize=True), or use "
                "gpal.estimators.model_selection.NoisyStandardScaler on stack_inputs(X, X_var)", UserWarning, stacklevel=stacklevel)
        huge = np.count_nonzero(X_var[:, j] > UNINFORMATIVE_VARIANCE_RATIO * spread[j])
        if huge and typical <= margin * spread[j]:
            warnings.warn(
                f"X_var of feature {names[j]!r} holds {huge} value(s) over {UNINFORMATIVE_VARIANCE_RATIO:.0e} times "
                f"that feature's variance across the sample (largest {X_var[:, j].max():.3g}): such a value says "
                "nothing was measured; if so, fill it in and give it a variance of the feature's spread, or drop "
                "the rows", UserWarning, stacklevel=stacklevel)


#: How close to mean 0 and standard deviation 1 a feature must be to read as the output of a standardising scaler:
#: rounding's distance (float32 inputs included), not any measured feature's.
STANDARDISED_TOLERANCE = 1e-6


class RescaledWithoutVariancesWarning(UserWarning):
    """X was rescaled by a step that left X_var in the old units (a ``StandardScaler``, ``MinMaxScaler`` or
    ``RobustScaler`` in a Pipeline)."""


def _rescaled_columns(X: np.ndarray) -> np.ndarray:
    """Which columns of X are, to rounding, what scikit-learn's StandardScaler (mean 0, sd 1 with or without
    Bessel's correction), MinMaxScaler (range [0, 1]) or RobustScaler (median 0, interquartile range 1) leave."""
    def near(a: np.ndarray, b: float) -> np.ndarray:
        return np.abs(a - b) < STANDARDISED_TOLERANCE

    standard = near(X.mean(axis=0), 0) & (near(X.std(axis=0), 1) | near(X.std(axis=0, ddof=1), 1))
    min_max = near(X.min(axis=0), 0) & near(X.max(axis=0), 1)
    q25, q50, q75 = np.percentile(X, [25, 50, 75], axis=0)
    robust = near(q50, 0) & near(q75 - q25, 1)
    return standard | min_max | robust


def warn_standardised_without_variances(X: np.ndarray, X_var: np.ndarray, feature_names: Any, owner: str,
                                        stacklevel: int = 3) -> None:
    """Warn where the features with error bars are rescaled to rounding as a scikit-learn scaler leaves them
    (`_rescaled_columns`) while their variances came beside them as an array.

    A scaler that maps X alone leaves X_var in the old units, too small or too large by the square of the feature's
    old spread; a variance check cannot see it when the old spread was below 1 (features in small units: their error
    bars then look like precise measurements).  Measured features are never rescaled so exactly; gpal's own
    scalings carry X_var with X (a ``NoisyDataset``, ``NoisyInputAdapter``, which silences this category)."""
    if X.shape[0] < 3:
        return
    noisy = np.any(X_var > 0, axis=0)
    scaled = np.nonzero(noisy & _rescaled_columns(X))[0]
    if not scaled.size:
        return
    names = list(feature_names) if len(feature_names) == X.shape[1] else [f"x{j}" for j in range(X.shape[1])]
    warnings.warn(
        f"{owner} was given X rescaled to rounding (in feature(s) {[names[j] for j in scaled]}: mean 0 and standard "
        "deviation 1, range [0, 1] or median 0 and interquartile range 1, as a StandardScaler, MinMaxScaler or "
        "RobustScaler leaves them) with X_var beside it: if a step rescaled X "
        "without X_var (a StandardScaler in a Pipeline), the error bars are still in the old units and the model "
        "misreads them. Give X and X_var in their own units and let the estimator standardise both "
        "(standardize=True), or scale them together (gpal.estimators.model_selection.NoisyStandardScaler on "
        "stack_inputs(X, X_var), before a NoisyInputAdapter); if X_var was scaled with X (by 1 / scale**2), ignore "
        "this RescaledWithoutVariancesWarning", RescaledWithoutVariancesWarning, stacklevel=stacklevel)


def fit_seed(random_state: Any) -> int:
    """The integer seed a fit derives all its randomness from, given scikit-learn's ``random_state``.

    An integer is the seed itself (so a seeded fit is reproducible); None draws one from numpy's global generator
    (a fresh fit each time, as ``sklearn.utils.check_random_state(None)``); a ``RandomState`` or ``Generator`` gives
    its next draw, so that a sequence of fits from one generator differ and are reproducible together.

    Returns
    -------
    int
        A seed in [0, 2**32 - 1).
    """
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(2**32 - 1))
    if isinstance(random_state, (numbers.Integral, np.integer)) and not isinstance(random_state, bool):
        return int(random_state)
    return int(check_random_state(random_state).randint(2**32 - 1, dtype=np.int64))


def expected_failed_checks(estimator: Any) -> dict[str, str]:
    """The scikit-learn estimator checks ``estimator``'s family declares it cannot pass, each with its reason: the
    ``expected_failed_checks`` argument of `sklearn.utils.estimator_checks.parametrize_with_checks` and ``check_estimator``.

    Returns
    -------
    dict
        Check name -> reason; empty for a family that passes them all.
    """
    return dict(getattr(type(estimator), "sklearn_expected_failures", {}))


class FitInterrupted(KeyboardInterrupt):
    """Training stopped (Ctrl-C) before its planned end; nothing built on it may be saved as done."""


def raise_if_interrupted(estimator: Any, consequence: str = "nothing was saved; rerun to compute it") -> None:
    """Turn a fit that kept its parameters after Ctrl-C (``stopped_early_``) back into an interruption.

    Every caller that saves a fitted model (a workflow unit, ``gpal train``, an active-learning
    checkpoint) calls this first, so an interrupted fit is never saved as a finished one.
    """
    if getattr(estimator, "stopped_early_", False):
        raise FitInterrupted(f"training interrupted; {consequence}")


class GPClassifierMixin(ClassifierMixin):
    """What every family shares: declared parameters, the fitted check, predict / score / entropy.

    A scikit-learn ``ClassifierMixin`` (so ``is_classifier`` and tools such as modAL
    recognise gpal models) whose methods also take the inputs' variances ``X_var``.
    A family declares ``_parameters`` (a constraint per constructor argument, all of them
    keyword-only), names the attribute that exists once fitted (``_fitted_attribute``) and
    implements ``fit``, ``predict_proba``, and ``to_state`` / ``from_state``, which ``save`` and
    ``load`` write and read.  What callers may ask of every family: ``validate_params()``,
    ``needs_X_var`` and ``reports_mc_error``.
    """

    _parameters: ClassVar[Mapping[str, Constraint]] = {}
    _fitted_attribute: ClassVar[str] = "model_"
    saved_format: ClassVar[str]  # the ``format`` of its saved folders (``config.json``), never a module path
    saved_version: ClassVar[int]
    #: Whether ``predict_proba(X, X_var, return_mc_error=True)`` also returns the probabilities' Monte Carlo
    #: standard errors; a family without it takes no such argument (its callers treat the errors as zero).
    reports_mc_error: ClassVar[bool] = False
    #: A family that models two classes only; scikit-learn's tags say so (``classifier_tags.multi_class``).
    binary_only: ClassVar[bool] = False
    #: scikit-learn's estimator checks (`sklearn.utils.estimator_checks`) that a model of this family cannot pass,
    #: check name -> the reason; `expected_failed_checks` hands them to ``parametrize_with_checks`` / ``check_estimator``.
    sklearn_expected_failures: ClassVar[Mapping[str, str]] = {}

    def __sklearn_tags__(self) -> Any:
        """scikit-learn's tags: a classifier of dense, finite, real inputs (``validate_params`` checks the parameters,
        so scikit-learn's parameter checks apply); multi-class unless ``binary_only``."""
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = False
        tags.input_tags.allow_nan = False
        tags.classifier_tags.multi_class = not self.binary_only
        return tags

    @property
    def needs_X_var(self) -> bool:
        """Whether, with these parameters, fit and predict need the inputs' measured variances ``X_var``.

        False for the families that model exact inputs (they accept ``X_var`` and ignore it, warning).
        """
        return False

    def validate_params(self) -> None:
        """Check every constructor argument against its declared constraint, then the rules that tie them.

        ``fit`` calls it; call it yourself to refuse bad settings before any data is read (scikit-learn's
        ``set_params`` does not check). Raises `gpal.constraints.InvalidParameter` (a ValueError and a
        TypeError) naming the parameter, or ValueError for a combination that does not go together.
        """
        check_params(self, self._parameters)
        self._check_combinations()

    def _check_combinations(self) -> None:
        """Rules between parameters; a family overrides it when it has some."""

    def _start_fit(self, X: Any) -> None:
        """What every family's ``fit`` does first: check the parameters, set ``random_seed_`` (the integer the fit and
        the fitted model's Monte Carlo predictions derive from, `fit_seed` of ``random_state``) and, for a DataFrame
        ``X``, ``feature_names_in_`` (scikit-learn's, which prediction then checks)."""
        self.validate_params()
        continued = getattr(self, "warm_start", False) and hasattr(self, "random_seed_")
        if not (continued and not isinstance(self.random_state, numbers.Integral)):
            self.random_seed_ = fit_seed(self.random_state)  # a warm refit from a generator keeps its model's seed
        _check_feature_names(self, X, reset=True)

    @property
    def prediction_seed(self) -> int:
        """The seed of a fitted model's Monte Carlo predictions: an integer ``random_state`` as set now (so
        ``set_params(random_state=s)`` on a fitted model draws another independent stream, as the Monte Carlo error
        is checked), else the seed its fit drew (``random_seed_``)."""
        if isinstance(self.random_state, (numbers.Integral, np.integer)) and not isinstance(self.random_state, bool):
            return int(self.random_state)
        return int(self.random_seed_)

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, self._fitted_attribute)

    def _check_fitted(self) -> None:
        """Fitted, and parameters still valid: ``set_params`` does not check them (as in scikit-learn),
        and prediction reads some (``n_samples``), so a bad one set after fit is named here."""
        self._require_fitted()
        self.validate_params()

    def _require_fitted(self) -> None:
        """NotFittedError (an AttributeError too) unless fitted: what a fitted attribute computed on demand checks."""
        if not self.__sklearn_is_fitted__():
            raise NotFittedError(f"this {type(self).__name__} is not fitted yet; call fit first")

    def predict_proba(self, X: Any, X_var: Any = None) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def predict_log_proba(self, X: Any, X_var: Any = None) -> np.ndarray:
        """The natural logarithm of ``predict_proba`` (-inf where a probability is 0), as scikit-learn's classifiers.

        Returns
        -------
        numpy.ndarray
            (n, C) log-probabilities, columns in the order of ``classes_``.
        """
        proba = self.predict_proba(X, X_var)
        with np.errstate(divide="ignore"):
            return np.log(proba)

    def predict(self, X: Any, X_var: Any = None) -> np.ndarray:
        """The most probable class per row.

        Returns
        -------
        numpy.ndarray
            (n,) labels from ``classes_``, in the labels' original type.
        """
        proba = self.predict_proba(X, X_var)  # first: it raises the clear error when not fitted
        return self.classes_[np.argmax(proba, axis=1)]

    def score(self, X: Any, y: Any = None, sample_weight: Any = None, *, X_var: Any = None) -> float:
        """Accuracy, optionally weighted, as scikit-learn's classifiers (a labelled NoisyDataset may stand for X, y).

        The arguments are scikit-learn's ``score(X, y, sample_weight)`` with ``X_var`` by keyword, where ``fit`` and
        ``predict_proba`` take ``X_var`` after ``X`` (and ``y``): scikit-learn's own tools pass metadata to ``fit``
        by keyword, but code written for any classifier may pass a weight to ``score`` third.

        Returns
        -------
        float
            The (weighted) fraction of rows whose most probable class is ``y``.
        """
        if isinstance(X, NoisyDataset):
            y = np.asarray(X.class_names, dtype=object)[X.y]
        predicted = self.predict(X, X_var)
        y = np.asarray(y)
        if y.shape != predicted.shape:
            raise ValueError(f"y must have one label per row ({predicted.shape[0]}); got shape {y.shape}")
        return float(np.average(predicted == y, weights=check_sample_weight(sample_weight, predicted.shape[0])))

    def predictive_entropy(self, X: Any, X_var: Any = None) -> np.ndarray:
        """Entropy of the predictive class distribution: the active-learning acquisition score.

        Returns
        -------
        numpy.ndarray
            (n,) entropies in nats, from 0 (certain) to log C.
        """
        return entropy(self.predict_proba(X, X_var))

    def _store_params(self, given: Mapping[str, Any]) -> None:
        """The constructor's arguments stored under their own names, unchecked and unchanged as scikit-learn asks, so
        that a parameter is written once, in the signature that ``get_params`` reads; ``given`` is the ``locals()`` of
        the constructor's first statement (its arguments and ``self``)."""
        for name, value in given.items():
            if name != "self":
                setattr(self, name, value)

    # ------------------------------------------------- the steps every family takes
    def _standardize_fit(self, data: FitData, keep: bool = False) -> tuple[Standardizer | None, np.ndarray, np.ndarray]:
        """The fit's standardiser and the training inputs and variances in its units.

        A fresh one (None unless ``standardize``; its map the ``scaling``), or with ``keep`` (a warm start) the fitted one.
        """
        standardizer = (self.standardizer_ if keep else None if not self.standardize
                        else Standardizer.fit(data.X, to=self.scaling))
        X, X_var = (data.X, data.X_var) if standardizer is None else standardizer.transform_arrays(data.X, data.X_var)
        return standardizer, X, X_var

    def _sparse_start(self, X: np.ndarray, kernel_rows: np.ndarray | None = None) -> tuple[Any, np.ndarray]:
        """The kernel (``kernel`` or the default) and the k-means inducing inputs (from X) a sparse fit starts from.

        A kernel that starts from the training rows reads ``kernel_rows`` (X unless given): the rows the model fits.
        """
        from gpal.models.kernels import make_kernel
        from gpal.models.svgp import kmeans_inducing

        n, d = X.shape
        rows = X if kernel_rows is None else kernel_rows
        return (make_kernel(self.kernel, d, rows, self.random_seed_),
                kmeans_inducing(X, min(int(self.num_inducing), n), self.random_seed_))

    def _set_fitted(self, classes: np.ndarray, n_features: int, standardizer: Standardizer | None) -> None:
        """The fitted attributes every family has: labels, input width, standardiser."""
        self.classes_, self.n_features_in_, self.standardizer_ = classes, n_features, standardizer

    def _prediction_inputs(self, X: Any, X_var: Any, needs_variance: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """Prediction inputs and variances checked against the fitted model, in its standardised units."""
        _check_feature_names(self, X, reset=False)  # scikit-learn's warning or error when a DataFrame's columns differ
        X, X_var = check_predict_data(X, X_var, self.n_features_in_, needs_variance, owner=type(self).__name__)
        return (X, X_var) if self.standardizer_ is None else self.standardizer_.transform_arrays(X, X_var)

    def _exact_inputs(self, X: Any, X_var: Any) -> np.ndarray:
        """Checked, standardised prediction inputs of a family that models exact inputs (X_var ignored, warned)."""
        self._check_fitted()
        Xs, V = self._prediction_inputs(X, X_var)
        warn_ignored_noise(V, type(self).__name__, stacklevel=4)  # the user's predict call
        return Xs

    # ------------------------------------------------------------------ pickling
    def __getstate__(self) -> dict[str, Any]:
        """A fitted model pickles as its saved form (`to_state`: plain arrays and JSON, the same as ``save`` writes),
        since its TensorFlow objects and compiled functions do not pickle; plain attributes (parameters,
        histories, ``feature_names_in_``) travel as they are.  So ``pickle``, ``joblib`` and scikit-learn's
        ``n_jobs`` copy a model that predicts exactly as the original."""
        state = super().__getstate__()
        if not self.__sklearn_is_fitted__():
            return state
        plain = {name: value for name, value in state.items() if _plain(value)}
        return {**plain, _PICKLED_FIT: self.to_state()}

    def __setstate__(self, state: dict[str, Any]) -> None:
        state = dict(state)
        fitted = state.pop(_PICKLED_FIT, None)
        if fitted is not None:
            self.__dict__.update(type(self).from_state(*fitted).__dict__)
        super().__setstate__(state)

    # ------------------------------------------------------------------ save / load
    def save(self, path: str | os.PathLike) -> None:
        """Write ``config.json`` and ``params.npz`` into directory ``path`` (replaced atomically)."""
        save_model_dir(path, self.saved_format, self.saved_version, *self.to_state())

    @classmethod
    def load(cls, path: str | os.PathLike) -> Any:
        """Rebuild an estimator written by ``save``; it predicts exactly as the saved one.

        Returns
        -------
        GPClassifierMixin
            The fitted estimator (of this class) saved in folder ``path``.
        """
        config, arrays = load_model_dir(path, cls.saved_format, cls.saved_version)
        estimator = cls.from_state(config, arrays)
        check_array_checksums(config, arrays)  # last: an array of the wrong form is named with what it must be
        return estimator

    def to_state(self) -> tuple[dict[str, Any], dict[str, np.ndarray]]:  # pragma: no cover - abstract
        """The fitted estimator as plain data, what ``save`` writes; ``from_state`` inverts it.

        Returns
        -------
        config : dict
            Parameters, fitted attributes and history, JSON-able.
        arrays : dict
            Name -> numpy array (the model's values).
        """
        raise NotImplementedError

    @classmethod
    def from_state(cls, config: dict[str, Any], arrays: dict[str, np.ndarray]) -> Any:  # pragma: no cover - abstract
        """Inverse of ``to_state``: the estimator from its (config, arrays), what ``load`` reads.

        Returns
        -------
        GPClassifierMixin
            The fitted estimator (of this class) that ``to_state`` described.
        """
        raise NotImplementedError

    def _params_state(self, template_prefix: str) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        """``get_params`` as JSON plus arrays: a user kernel template is saved under ``template_prefix``."""
        from gpal.models.state import kernel_state

        params, arrays = self._saved_params(), {}
        if params.get("kernel") is not None and not isinstance(params["kernel"], str):  # a name saves as itself
            params["kernel"], arrays = kernel_state(params["kernel"], template_prefix)
        return params, arrays

    def _saved_params(self) -> dict[str, Any]:
        """``get_params`` as JSON where it can be: a ``random_state`` generator is saved as None (a generator's state
        is no parameter a file keeps; the saved ``random_seed`` is what the model predicts with)."""
        params = self.get_params(deep=False)
        if not isinstance(params.get("random_state"), (numbers.Integral, type(None))):
            params["random_state"] = None
        return jsonable(params, describe=None)

    @staticmethod
    def _params_from_state(params: dict[str, Any], arrays: dict[str, np.ndarray], template_prefix: str) -> dict[str, Any]:
        """Inverse of ``_params_state``: constructor arguments with the kernel template rebuilt."""
        from gpal.models.state import kernel_from_state

        params = dict(params)
        if params.get("kernel") is not None and not isinstance(params["kernel"], str):
            params["kernel"] = kernel_from_state(params["kernel"], arrays, template_prefix)
        return params

    def _fitted_state(self) -> dict[str, Any]:
        """What every fitted family saves besides its model: labels, input width, standardiser."""
        return {
            "classes": classes_to_json(self.classes_),
            "n_features_in": int(self.n_features_in_),
            "standardizer": None if self.standardizer_ is None else self.standardizer_.to_dict(),
            "random_seed": int(self.random_seed_),
        }

    def _restore_fitted_state(self, config: Mapping[str, Any]) -> None:
        """Inverse of ``_fitted_state``, checked together with the saved constructor arguments.

        An edited or damaged config is refused here, naming the field, before the model
        can predict NaN or put probabilities under the wrong class.
        """
        params = config.get("params")
        for name, constraint in self._parameters.items():  # each named as its field, e.g. 'params.num_inducing'
            if isinstance(params, Mapping) and name in params and not constraint.ok(getattr(self, name)):
                raise corrupt_field(params, name, f"must be {constraint.expected}; got {getattr(self, name)!r}")
        try:
            self.validate_params()
        except ValueError as exc:  # InvalidParameter is one
            raise corrupt_field(config, "params", f"holds an invalid value: {exc}") from None
        if not isinstance(config["classes"], Mapping):
            raise corrupt_field(config, "classes", "must be {'dtype': ..., 'values': [...]}")
        classes = classes_from_json(config["classes"])
        if len(classes) < 2 or not _sorted_unique(classes):
            raise corrupt_field(config, "classes", f"must list two or more distinct labels in sorted order; got {classes.tolist()}")
        n_features = config["n_features_in"]
        if isinstance(n_features, bool) or not isinstance(n_features, int) or n_features < 1:
            raise corrupt_field(config, "n_features_in", f"must be an integer >= 1; got {n_features!r}")
        standardizer = config["standardizer"]
        if standardizer is not None:
            try:
                standardizer = Standardizer.from_dict(standardizer)
            except (ValueError, TypeError, KeyError) as exc:
                raise corrupt_field(config, "standardizer", f"is invalid: {exc}") from None
            if standardizer.mean.shape[0] != n_features:
                raise corrupt_field(config, "standardizer", f"has {standardizer.mean.shape[0]} features, n_features_in {n_features}")
        structure = config.get("structure")  # the model's own sizes, where a family saves them
        if isinstance(structure, Mapping):
            for key, least in (("num_data", 0), ("num_classes", 1), ("num_features", 1), ("num_inducing", 1)):
                size = structure.get(key, least)
                if isinstance(size, bool) or not isinstance(size, int) or size < least:
                    raise corrupt_field(structure, key, f"must be an integer >= {least}; got {size!r}")
            for key, want, said in (("num_classes", len(classes), "field 'classes' lists"),
                                    ("num_features", n_features, "field 'n_features_in' is")):
                if structure.get(key, want) != want:
                    raise corrupt_field(structure, key, f"is {structure[key]!r}, but {said} {want}")
        seed = config.get("random_seed", getattr(self, "random_state", None))  # a folder of an earlier gpal: its seed
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**32:
            raise corrupt_field(config, "random_seed", f"must be an integer seed in [0, 2**32); got {seed!r}")
        self.classes_, self.n_features_in_, self.standardizer_ = classes, n_features, standardizer
        self.random_seed_ = seed


#: The key of a pickled fitted model's saved form (`GPClassifierMixin.__getstate__`).
_PICKLED_FIT = "_gpal_fitted_state"


def _plain(value: Any) -> bool:
    """Whether ``value`` pickles as plain data (numbers, text, arrays, numpy generators and containers of them);
    the rest of a fitted model (TensorFlow objects, sessions) is rebuilt from its saved form."""
    if value is None or isinstance(value, (str, bytes, numbers.Number, np.ndarray, np.generic,
                                           np.random.RandomState, np.random.Generator)):
        return True
    if isinstance(value, (list, tuple)):
        return all(_plain(v) for v in value)
    if isinstance(value, dict):
        return all(_plain(k) and _plain(v) for k, v in value.items())
    return False


def _sorted_unique(classes: np.ndarray) -> bool:
    """Whether labels are as ``fit`` leaves them (``np.unique``): the columns of every probability follow that order."""
    try:
        return len(classes) == len(np.unique(classes)) and bool(np.all(np.unique(classes) == classes))
    except TypeError:
        return False

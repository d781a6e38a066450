"""Standard scikit-learn classifiers, fitted on the same split and features as the GP models.

A GP classifier is only worth its cost if it beats what a user would try first on
held-out NLL and calibration, so every comparison fits these beside it.  The baselines
see the feature values X only: scikit-learn classifiers cannot use the per-source error
bars, and whether those error bars help is exactly what the comparison measures.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from gpal.evaluation.metrics import proba_by_class

__all__ = ["BASELINES", "fit_baselines", "fit_baselines_on", "make_baseline", "min_training_per_class"]

#: Folds of the isotonic recalibration: every class needs at least this many training sources.
_CALIBRATION_FOLDS = 5
#: Trees of the random-forest baseline (in each calibration fold).
_FOREST_TREES = 100


def _logistic(random_state: int) -> Any:
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    # Scaling first: the L2 penalty and lbfgs both behave badly on features of mixed units.
    return make_pipeline(StandardScaler(), LogisticRegression(max_iter=5000, random_state=random_state))


def _random_forest_isotonic(random_state: int) -> Any:
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.ensemble import RandomForestClassifier

    # Forests' vote fractions are poorly calibrated; isotonic recalibration makes the NLL comparison fair.
    # 100 trees per fold: more trees cost in proportion and moved the held-out NLL less than the trees' own random
    # draw moves it on one split.
    forest = RandomForestClassifier(n_estimators=_FOREST_TREES, min_samples_leaf=2, n_jobs=1, random_state=random_state)
    return CalibratedClassifierCV(forest, method="isotonic", cv=_CALIBRATION_FOLDS)


def _gradient_boosting_isotonic(random_state: int) -> Any:
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.ensemble import HistGradientBoostingClassifier

    return CalibratedClassifierCV(HistGradientBoostingClassifier(random_state=random_state), method="isotonic",
                                  cv=_CALIBRATION_FOLDS)


#: name -> (factory building an unfitted estimator from a random_state, one-line description)
BASELINES: dict[str, tuple[Callable[[int], Any], str]] = {
    "logistic": (_logistic, "standardised features, multinomial logistic regression"),
    "random_forest_isotonic": (
        _random_forest_isotonic, f"random forest ({_FOREST_TREES} trees, min leaf 2), isotonic calibration, 5-fold"),
    "gradient_boosting_isotonic": (
        _gradient_boosting_isotonic, "histogram gradient boosting, isotonic calibration, 5-fold"),
}


def min_training_per_class(names: Sequence[str]) -> int:
    """The fewest training sources per class that the baselines ``names`` can be fitted on."""
    return _CALIBRATION_FOLDS if any(name.endswith("_isotonic") for name in names) else 1


def make_baseline(name: str, random_state: int = 0) -> Any:
    """An unfitted scikit-learn estimator for the baseline called ``name``."""
    if name not in BASELINES:
        raise ValueError(f"unknown baseline {name!r}; valid baselines: {list(BASELINES)}")
    if isinstance(random_state, bool) or not isinstance(random_state, (int, np.integer)):
        raise ValueError(f"random_state must be an integer; got {random_state!r}")
    return BASELINES[name][0](int(random_state))


def _features(X: np.ndarray, name: str) -> np.ndarray:
    arr = np.asarray(X, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[0] == 0:
        raise ValueError(f"{name} must be a non-empty (n, d) array of feature values; got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or inf")
    return arr


def fit_baselines(
    X_train: np.ndarray,
    y_train: np.ndarray,
    X_test: np.ndarray,
    names: Sequence[str] = tuple(BASELINES),
    random_state: int = 0,
) -> dict[str, np.ndarray]:
    """Held-out class probabilities of each named baseline: name -> (n_test, C).

    Column c is class code c, with C = max(y_train) + 1, so the columns line up with the
    GP model's even when a code is absent from the training rows (its column is then 0).
    Only the feature values are used, never their error bars.  Results are reproducible
    for a fixed ``random_state``.
    """
    return {name: probas[0] for name, probas in
            fit_baselines_on(X_train, y_train, [X_test], names=names, random_state=random_state).items()}


def fit_baselines_on(
    X_train: np.ndarray,
    y_train: np.ndarray,
    tests: Sequence[np.ndarray],
    names: Sequence[str] = tuple(BASELINES),
    random_state: int = 0,
) -> dict[str, list[np.ndarray]]:
    """`fit_baselines` for several sets of rows: each baseline is fitted once and gives its probabilities of each
    array of ``tests``, in order (the main job's held-out rows and the sources its later-release check scores).
    Each set is predicted on its own, so its probabilities are those `fit_baselines` gives it alone."""
    names = list(names)
    unknown = [n for n in names if n not in BASELINES]
    if unknown:
        raise ValueError(f"unknown baseline(s) {unknown}; valid baselines: {list(BASELINES)}")
    X_tr = _features(X_train, "X_train")
    X_tes = [_features(X, "X_test") for X in tests]
    y = np.asarray(y_train)
    if y.ndim != 1 or y.shape[0] != X_tr.shape[0]:
        raise ValueError(f"y_train must be 1-D with one code per row of X_train ({X_tr.shape[0]}); got {y.shape}")
    if not np.issubdtype(y.dtype, np.integer) or y.min() < 0:
        raise ValueError(f"y_train must hold integer class codes >= 0; got dtype {y.dtype}")
    for X_te in X_tes:
        if X_te.shape[1] != X_tr.shape[1]:
            raise ValueError(f"X_test has {X_te.shape[1]} features, X_train has {X_tr.shape[1]}")
    if np.unique(y).size < 2:
        raise ValueError("y_train must contain at least two classes")
    n_classes = int(y.max()) + 1
    out: dict[str, list[np.ndarray]] = {}
    for name in names:
        model = make_baseline(name, random_state).fit(X_tr, y.astype(np.int64))
        out[name] = [proba_by_class(model.predict_proba(X_te), model.classes_, range(n_classes)) for X_te in X_tes]
    return out

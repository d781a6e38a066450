"""The classifiers a user would otherwise reach for, fitted on the same split and features as gpal.

gpal earns its place only by beating these on held-out NLL and calibration, so the main
job and the selection study fit them beside every GP.  They see the feature values only:
scikit-learn classifiers have no way to use the error bars, which is the point of the
comparison.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

__all__ = ["BASELINES", "fit_baselines", "make_baseline"]


def _logistic(random_state: int) -> Any:
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(StandardScaler(), LogisticRegression(max_iter=5000, random_state=random_state))


def _random_forest_isotonic(random_state: int) -> Any:
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.ensemble import RandomForestClassifier

    forest = RandomForestClassifier(n_estimators=500, min_samples_leaf=2, n_jobs=1, random_state=random_state)
    return CalibratedClassifierCV(forest, method="isotonic", cv=5)


def _gradient_boosting_isotonic(random_state: int) -> Any:
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.ensemble import HistGradientBoostingClassifier

    return CalibratedClassifierCV(HistGradientBoostingClassifier(random_state=random_state), method="isotonic", cv=5)


#: name -> (factory of an unfitted estimator from a random_state, what it is)
BASELINES: dict[str, tuple[Callable[[int], Any], str]] = {
    "logistic": (_logistic, "standardised multinomial logistic regression"),
    "random_forest_isotonic": (_random_forest_isotonic, "500-tree random forest, isotonic calibration (5-fold)"),
    "gradient_boosting_isotonic": (_gradient_boosting_isotonic, "histogram gradient boosting, isotonic calibration (5-fold)"),
}


def make_baseline(name: str, random_state: int = 0) -> Any:
    """An unfitted scikit-learn estimator for baseline ``name``."""
    if name not in BASELINES:
        raise ValueError(f"unknown baseline {name!r}; valid baselines: {list(BASELINES)}")
    return BASELINES[name][0](int(random_state))


def fit_baselines(X_train: np.ndarray, y_train: np.ndarray, X_test: np.ndarray,
                  names: Sequence[str] = tuple(BASELINES), random_state: int = 0) -> dict[str, np.ndarray]:
    """Held-out probabilities (n_test, C) of each named baseline, column c for class code c."""
    y_train = np.asarray(y_train, dtype=np.int64)
    n_classes = int(y_train.max()) + 1
    out = {}
    for name in names:
        model = make_baseline(name, random_state).fit(np.asarray(X_train, dtype=np.float64), y_train)
        proba = np.zeros((len(X_test), n_classes))
        proba[:, np.asarray(model.classes_, dtype=np.int64)] = model.predict_proba(np.asarray(X_test, dtype=np.float64))
        out[name] = proba
    return out

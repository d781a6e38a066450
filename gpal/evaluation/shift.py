"""Density-ratio weights against a selection shift between labelled and unlabelled sources.

Associated (labelled) sources are brighter and more often off the Galactic plane than the
unassociated ones a classifier is for.  Malyshev (2024, RASTI, arXiv:2307.09584) reweights
each training source by w(x) = p_target(x) / p_source(x), estimated by a probabilistic
classifier that tells target rows from source rows: w = P(target | x) / P(source | x) times
n_source / n_target.  The weights go to an estimator's ``fit(..., sample_weight=w)``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["density_ratio_weights"]


def density_ratio_weights(X_source: Any, X_target: Any, *, clip: tuple[float, float] = (0.05, 20.0),
                          cv: int = 5, random_state: int = 0) -> np.ndarray:
    """Weights w(x) ~ p_target(x) / p_source(x) of the source rows, clipped, mean 1.

    A logistic regression on the standardised features (well calibrated for this: its log-odds
    are the log density ratio when that is linear in x) scores each source row out of fold
    (``cv`` folds), so no row's weight comes from a model that saw it.  The ratio is clipped to
    ``clip`` (a few sources unlike any target would otherwise dominate, or vanish), then scaled
    to mean 1 so that the ELBO keeps its scale.

    Returns
    -------
    numpy.ndarray
        (n_source,) weights > 0 with mean 1.
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_predict
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    source, target = np.asarray(X_source, dtype=np.float64), np.asarray(X_target, dtype=np.float64)
    if source.ndim != 2 or target.ndim != 2 or source.shape[1] != target.shape[1]:
        raise ValueError(f"X_source and X_target must be 2-d with the same features; got {source.shape} and {target.shape}")
    if not (np.isfinite(source).all() and np.isfinite(target).all()):
        raise ValueError("X_source and X_target must be finite")
    low, high = (float(c) for c in clip)
    if not 0 < low < high:
        raise ValueError(f"clip must be (low, high) with 0 < low < high; got {clip}")
    if min(len(source), len(target)) < cv:
        raise ValueError(f"each of X_source ({len(source)}) and X_target ({len(target)}) needs at least cv={cv} rows")
    X = np.vstack([source, target])
    is_target = np.r_[np.zeros(len(source), int), np.ones(len(target), int)]
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=5000))
    folds = StratifiedKFold(n_splits=cv, shuffle=True, random_state=random_state)
    p = cross_val_predict(model, X, is_target, cv=folds, method="predict_proba")[: len(source), 1]
    ratio = p / (1.0 - p) * len(source) / len(target)
    weights = np.clip(ratio, low, high)
    return weights / weights.mean()

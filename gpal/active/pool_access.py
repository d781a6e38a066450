"""What an acquisition asks of a model about a pool, whatever form the pool takes.

A pool is a ``NoisyDataset`` (features and their variances travel together), a plain (n, d)
array, or the ``[X | X_var]`` array of `gpal.active.modal`; the model is a gpal classifier or a
modAL learner wrapping one (which passes itself to the strategy).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gpal.data.dataset import NoisyDataset

__all__ = ["estimator_of", "pool_features", "pool_proba", "pool_size", "sample_pool_proba"]


def estimator_of(model: Any) -> Any:
    """The classifier behind a modAL learner (which passes itself to the strategy), else the model.

    Returns
    -------
    object
        ``model.estimator`` where there is one, else ``model``.
    """
    return getattr(model, "estimator", model)


def pool_features(model: Any, X_pool: Any) -> np.ndarray:
    """Features only (no variances) of a pool given as a NoisyDataset, a [X | X_var] array or plain X.

    Returns
    -------
    numpy.ndarray
        (n, d) features.
    """
    if isinstance(X_pool, NoisyDataset):
        return X_pool.X
    split = getattr(estimator_of(model), "split_inputs", None)
    if split is not None:
        return split(X_pool)[0]
    return np.asarray(X_pool, dtype=np.float64)


def pool_size(X_pool: Any) -> int:
    """Rows of a pool given as a NoisyDataset or an array.

    Returns
    -------
    int
        The number of pool rows.
    """
    return len(X_pool) if isinstance(X_pool, NoisyDataset) else np.shape(X_pool)[0]


def pool_proba(model: Any, X_pool: Any) -> np.ndarray:
    """Predictive class probabilities of the pool, with its variances when it has them.

    Returns
    -------
    numpy.ndarray
        (n, C) probabilities.
    """
    if isinstance(X_pool, NoisyDataset):
        return np.asarray(estimator_of(model).predict_proba(X_pool.X, X_var=X_pool.X_var), dtype=np.float64)
    return np.asarray(model.predict_proba(X_pool), dtype=np.float64)


def sample_pool_proba(model: Any, X_pool: Any, n_samples: int, joint: bool = False, **options: Any) -> np.ndarray:
    """p(y | f_s) for draws of latent functions (and inputs), (S, n, C): the epistemic spread.

    ``joint``: draws shared by every row and call (``sample_joint_proba``), for scores that
    relate one source's label to another's; otherwise ``sample_proba``'s per-row draws.
    ``options`` go to that method.

    Returns
    -------
    numpy.ndarray
        (S, n, C) probabilities, float64.
    """
    est = estimator_of(model)
    method = "sample_joint_proba" if joint else "sample_proba"
    if not callable(getattr(est, method, None)):
        raise TypeError(
            f"this acquisition needs a model with {method}(X, X_var, n_samples) (e.g. NoisyGPClassifier); "
            f"{type(est).__name__} has none"
        )
    sample = getattr(est, method)
    if isinstance(X_pool, NoisyDataset):
        samples = sample(X_pool.X, X_var=X_pool.X_var, n_samples=n_samples, **options)
    else:
        samples = sample(X_pool, n_samples=n_samples, **options)
    return np.asarray(samples, dtype=np.float64)

"""Using gpal classifiers inside modAL, input-noise variances included.

How the variances travel.  modAL hands strategies and estimators a single array
``X`` and stacks queried rows onto its training data itself, so anything that must
stay with a row has to be *in* the row.  A pool is therefore the array
``[X | X_var]`` (n, 2d) built by `stack_inputs`, and `NoisyInputAdapter` wraps a
gpal classifier, splitting every array it receives back into ``(X, X_var)`` before
``fit`` / ``predict_proba`` / ``sample_proba``.  modAL's query, ``retrieve_rows``,
``teach`` and its ``X_training`` then carry each source's error bars with it for
free, and modAL's own strategies (``entropy_sampling``, ...) work unchanged, as do
gpal's (`gpal.active.acquisition`, which also use the adapter's ``split_inputs``
to measure batch diversity on features only).  An index-based pool was the
alternative; it breaks modAL's ``X_training`` (it would hold indices) and any
strategy that looks at features.

scikit-learn >= 1.8 vs modAL 0.4.2.  ``ActiveLearner.fit`` and ``.teach`` call
``sklearn.utils.check_X_y(..., force_all_finite=...)``; scikit-learn renamed that
keyword ``ensure_all_finite`` in 1.6 and removed the old name in 1.8, so ``teach``
raises ``TypeError``.  Importing this module rebinds the ``check_X_y`` that
``modAL.models.learners`` uses to a wrapper that passes the same value under the
new name (only there, only when scikit-learn has the new name).  scikit-learn is
not pinned: pinning < 1.8 would downgrade every user of the environment.
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_X_y

from gpal.data.dataset import NoisyDataset

__all__ = ["NoisyInputAdapter", "stack_inputs", "install_sklearn_compat"]


def stack_inputs(X: Any, X_var: Any = None) -> np.ndarray:
    """The modAL pool ``[X | X_var]`` (n, 2d) from arrays or a ``NoisyDataset`` (X_var None = exact inputs)."""
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


class NoisyInputAdapter(ClassifierMixin, BaseEstimator):
    """A gpal classifier seen through ``[X | X_var]`` arrays, for modAL.

    ``estimator`` is fitted in place (not cloned), so its ``warm_start`` carries
    over from one ``teach`` to the next, as in gpal's own loop.
    """

    def __init__(self, estimator: Any):
        self.estimator = estimator

    def split_inputs(self, XV: Any) -> tuple[np.ndarray, np.ndarray]:
        """``[X | X_var]`` -> (X, X_var), checking the width against the fitted feature count."""
        XV = np.asarray(XV, dtype=np.float64)
        if XV.ndim == 1:  # one row, as modAL's retrieve_rows returns for a scalar index
            XV = XV[None, :]
        if XV.ndim != 2 or XV.shape[1] % 2:
            raise ValueError(
                f"expected the stacked array [X | X_var] with an even number of columns (2 x n_features); "
                f"got shape {XV.shape}. Build pools with gpal.active.modal.stack_inputs"
            )
        d = XV.shape[1] // 2
        expected = getattr(self, "n_features_in_", d)
        if d != expected:
            raise ValueError(f"got [X | X_var] with {XV.shape[1]} columns, i.e. {d} features; the model was "
                             f"fitted on {expected} features ({2 * expected} stacked columns)")
        return XV[:, :d], XV[:, d:]

    @property
    def classes_(self) -> np.ndarray:
        return self.estimator.classes_

    def fit(self, XV: Any, y: Any, **fit_kwargs: Any) -> "NoisyInputAdapter":
        if hasattr(self, "n_features_in_"):
            del self.n_features_in_  # a refit may change the width; split_inputs re-infers it
        X, V = self.split_inputs(XV)
        self.estimator.fit(X, np.asarray(y).ravel(), X_var=V, **fit_kwargs)
        self.n_features_in_ = X.shape[1]
        return self

    def predict_proba(self, XV: Any) -> np.ndarray:
        X, V = self.split_inputs(XV)
        return self.estimator.predict_proba(X, X_var=V)

    def predict(self, XV: Any) -> np.ndarray:
        X, V = self.split_inputs(XV)
        return self.estimator.predict(X, X_var=V)

    def sample_proba(self, XV: Any, n_samples: int = 100, **options: Any) -> np.ndarray:
        """The wrapped classifier's ``sample_proba`` (for BALD and discovery through modAL)."""
        X, V = self.split_inputs(XV)
        return self.estimator.sample_proba(X, X_var=V, n_samples=n_samples, **options)

    def sample_joint_proba(self, XV: Any, n_samples: int = 100) -> np.ndarray:
        """The wrapped classifier's ``sample_joint_proba`` (for EPIG through modAL)."""
        X, V = self.split_inputs(XV)
        return self.estimator.sample_joint_proba(X, X_var=V, n_samples=n_samples)


def _check_X_y_new_keyword(*args: Any, force_all_finite: Any = True, **kwargs: Any) -> Any:
    """modAL's call, with ``force_all_finite`` passed as scikit-learn's ``ensure_all_finite``."""
    return check_X_y(*args, ensure_all_finite=force_all_finite, **kwargs)


def install_sklearn_compat() -> bool:
    """Make modAL's ``ActiveLearner.fit``/``teach`` work on scikit-learn >= 1.6; True if it was needed."""
    import modAL.models.learners as learners

    if "ensure_all_finite" not in inspect.signature(check_X_y).parameters:
        return False  # scikit-learn < 1.6 still takes force_all_finite
    learners.check_X_y = _check_X_y_new_keyword
    return True


install_sklearn_compat()

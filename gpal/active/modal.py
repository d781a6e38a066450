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
strategy that looks at features.  Both live in `gpal.estimators.model_selection` (scikit-learn's tools
take the same one-array form) and are imported here for modAL's users.

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

from sklearn.utils import check_X_y

from gpal.estimators.model_selection import NoisyInputAdapter, stack_inputs

__all__ = ["NoisyInputAdapter", "stack_inputs", "install_sklearn_compat"]


def _check_X_y_new_keyword(*args: Any, force_all_finite: Any = True, **kwargs: Any) -> Any:
    """modAL's call, with ``force_all_finite`` passed as scikit-learn's ``ensure_all_finite``."""
    return check_X_y(*args, ensure_all_finite=force_all_finite, **kwargs)


def install_sklearn_compat() -> bool:
    """Make modAL's ``ActiveLearner.fit``/``teach`` work on scikit-learn >= 1.6.

    Returns
    -------
    bool
        True where modAL's ``check_X_y`` was rebound (scikit-learn has the new keyword), False where it was not needed.
    """
    import modAL.models.learners as learners

    if "ensure_all_finite" not in inspect.signature(check_X_y).parameters:
        return False  # scikit-learn < 1.6 still takes force_all_finite
    learners.check_X_y = _check_X_y_new_keyword
    return True


install_sklearn_compat()

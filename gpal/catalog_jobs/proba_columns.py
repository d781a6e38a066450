"""The probability columns of gpal's tables, written once: ``p_<class>`` per class, and the classes read back.

Every table of class probabilities (the classifications, the held-out predictions, the baselines',
a query file) names a class's column `proba_column`; a reader finds the classes with
`classes_from_columns`.  ``p_mc_se`` (`MC_ERROR_COLUMN`), the probabilities' Monte Carlo error,
shares the prefix and is no class.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

__all__ = ["MC_ERROR_COLUMN", "classes_from_columns", "proba_column", "proba_columns", "proba_of", "with_proba"]

_PREFIX = "p_"
#: The largest Monte Carlo standard error of a row's probabilities.
MC_ERROR_COLUMN = "p_mc_se"


def proba_column(cls: Any) -> str:
    """The column of class ``cls``'s probability."""
    return f"{_PREFIX}{cls}"


def proba_columns(classes: Sequence[Any]) -> list[str]:
    """The probability columns of ``classes``, in their order."""
    return [proba_column(cls) for cls in classes]


def classes_from_columns(columns: Sequence[str]) -> list[str]:
    """The classes whose probability columns are among ``columns``, in the columns' order."""
    return [c[len(_PREFIX):] for c in columns if c.startswith(_PREFIX) and c != MC_ERROR_COLUMN]


def proba_of(frame: Any, classes: Sequence[Any]) -> np.ndarray:
    """The (n, C) probabilities of ``classes`` in a frame's columns."""
    return frame[proba_columns(classes)].to_numpy()


def with_proba(frame: Any, classes: Sequence[Any], proba: Any) -> Any:
    """``frame`` (changed in place, and returned) with a probability column per class of ``proba`` (n, C)."""
    proba = np.asarray(proba)
    for c, cls in enumerate(classes):
        frame[proba_column(cls)] = proba[:, c]
    return frame

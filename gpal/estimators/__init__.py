"""Estimators: scikit-learn fronts of the model families.

One module per family, each a class built on ``gpal.estimators.base.GPClassifierMixin``
with its parameters declared in ``_parameters``; ``gpal.registry.ESTIMATORS`` names them
all. The saved-model loader, the contract test and docs/architecture.md read the registry.
"""

from __future__ import annotations

from typing import Any

from gpal.registry import ESTIMATORS

__all__ = ["saved_formats"]


def saved_formats() -> dict[str, Any]:
    """Saved-model ``format`` string -> the estimator class that loads it."""
    classes = [ESTIMATORS[family] for family in ESTIMATORS]
    return {cls.saved_format: cls for cls in classes}

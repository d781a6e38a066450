"""Estimators: scikit-learn fronts of the model families.

One module per family, each a class built on ``gpal.estimators.base.GPClassifierMixin``
with its parameters declared in ``_parameters``; ``gpal.registry.ESTIMATORS`` names them
all. The saved-model loader (`load_estimator`), the contract test and docs/architecture.md
read the registry.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from gpal.files import read_json
from gpal.registry import ESTIMATORS

__all__ = ["load_estimator", "saved_format", "saved_formats"]


def saved_formats() -> dict[str, Any]:
    """Saved-model ``format`` string -> the estimator class that loads it.

    Returns
    -------
    dict
        Format string (e.g. ``"gpal.NoisyGPClassifier"``) -> estimator class, one per registered family.
    """
    classes = [ESTIMATORS[family] for family in ESTIMATORS]
    return {cls.saved_format: cls for cls in classes}


def saved_format(path: Path) -> str:
    """The ``format`` of the model saved in folder ``path``, refused unless a gpal family loads it.

    Returns
    -------
    str
        The ``format`` in ``path/config.json``; FileNotFoundError or ValueError when there is none gpal knows.
    """
    formats = list(saved_formats())
    config = path / "config.json"
    if not config.is_file():
        raise FileNotFoundError(
            f"{path} is not a saved gpal model: it has no config.json (a model folder written by "
            f"an estimator's save(); known formats: {formats})"
        )
    record = read_json(config, "saved model config", damaged="the saved model is corrupt")
    if not isinstance(record, dict):
        raise ValueError(f"{config} holds a JSON {type(record).__name__}, not an object; the saved model is corrupt")
    fmt = record.get("format")
    if fmt not in formats:
        raise ValueError(f"{path} holds a model of unknown format {fmt!r}; valid formats are {formats}")
    return fmt


def load_estimator(path: str | os.PathLike) -> Any:
    """The fitted estimator saved in folder ``path``, whichever gpal family wrote it.

    Returns
    -------
    estimator
        The fitted estimator of the family that wrote the folder (`saved_format` says which).
    """
    path = Path(path)
    return saved_formats()[saved_format(path)].load(path)

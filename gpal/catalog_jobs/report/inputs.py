"""What the report is built from: the files of a finished `classify_catalog` folder, read once."""

from __future__ import annotations

import functools
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from gpal.catalog_jobs.layout import CLASSIFICATIONS_CSV, HELDOUT_FILE
from gpal.catalog_jobs.model_folders import TRAINING_FILE, read_training_record
from gpal.catalog_jobs.proba_columns import classes_from_columns, proba_column, proba_columns, proba_of
from gpal.catalog_jobs.tables import ClassifiedSources, read_probability_table
from gpal.files import read_bytes

__all__ = ["FinishedRun", "HeldOutRun", "read_held_out", "read_run"]


@dataclass(frozen=True)
class HeldOutRun:
    """A main-job folder's held-out predictions: what the held-out figures are drawn from, before the rest is done."""

    folder: Path
    training: dict[str, Any]
    #: ``tables/heldout.csv``: Source_Name, true_class, Signif_Avg and p_<class> of every held-out source.
    held: pd.DataFrame

    @functools.cached_property
    def classes(self) -> list[str]:
        return classes_from_columns(self.held.columns)

    @functools.cached_property
    def y(self) -> np.ndarray:
        """The held-out sources' true classes, as indices into `classes`."""
        return np.array([self.classes.index(c) for c in self.held["true_class"]], dtype=np.int64)

    @functools.cached_property
    def proba(self) -> np.ndarray:
        """The model's held-out probabilities, one column per class."""
        return proba_of(self.held, self.classes)


@dataclass(frozen=True)
class FinishedRun(HeldOutRun):
    """A finished main-job folder: its training record, held-out predictions and classified sources."""

    table: ClassifiedSources

    @property
    def frame(self) -> pd.DataFrame:
        """The classified sources (``classifications.csv``)."""
        return self.table.frame


def read_held_out(folder: Path) -> HeldOutRun:
    """The training record and held-out table of a main-job folder, refused with what to do when missing."""
    _require(folder, [TRAINING_FILE, HELDOUT_FILE])
    training = read_training_record(folder / TRAINING_FILE)
    return HeldOutRun(folder, training, read_heldout(folder / HELDOUT_FILE, training["classes"]))


def read_run(folder: Path) -> FinishedRun:
    """The files a report needs, refused with what to do when the run did not finish."""
    _require(folder, [TRAINING_FILE, HELDOUT_FILE, CLASSIFICATIONS_CSV])
    held_out = read_held_out(folder)
    return FinishedRun(folder, held_out.training, held_out.held, read_probability_table(folder / CLASSIFICATIONS_CSV))


def _require(folder: Path, names: list[str]) -> None:
    missing = [name for name in names if not (folder / name).is_file()]
    if missing:
        raise FileNotFoundError(f"{folder} is not a finished gpal classify folder: {missing} missing; rerun gpal classify")


def read_heldout(path: Path, classes: list[str]) -> pd.DataFrame:
    """``tables/heldout.csv`` checked against the run's classes: its columns, true classes and probabilities.

    An edited or corrupt table is named (file, column, row and value) rather than met as a
    ``list.index`` error or NaN metrics deep in the report.
    """
    where = f"{path} (a table gpal classify writes; rerun it to rewrite the table)"
    try:
        held = pd.read_csv(io.BytesIO(read_bytes(path, "held-out table")), dtype={"Source_Name": str, "true_class": str})
    except (UnicodeDecodeError, ValueError, pd.errors.ParserError) as exc:
        raise ValueError(f"{where} could not be read as CSV ({' '.join(str(exc).split())})") from None
    columns = ["Source_Name", "true_class", *proba_columns(classes)]
    missing = [c for c in columns if c not in held.columns]
    extra = [proba_column(c) for c in classes_from_columns(held.columns) if proba_column(c) not in columns]
    if missing or extra:
        raise ValueError(f"{where}: expected the columns {columns}; missing {missing}, unexpected {extra}")
    unknown = ~held["true_class"].isin(classes)
    if unknown.any():
        row = int(np.argmax(unknown.to_numpy()))
        raise ValueError(f"{where}: true_class on row {row + 2} is {held['true_class'].iloc[row]!r}; expected one of {classes}")
    for column in columns[2:]:
        values = pd.to_numeric(held[column], errors="coerce").to_numpy(dtype=float)
        bad = ~(np.isfinite(values) & (values >= 0) & (values <= 1))
        if bad.any():
            row = int(np.argmax(bad))
            raise ValueError(f"{where}: column {column} on row {row + 2} is {held[column].iloc[row]!r}; "
                             "expected a probability in [0, 1]")
        held[column] = values
    return held

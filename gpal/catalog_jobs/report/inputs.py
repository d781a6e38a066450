"""What the report is built from: a main-job run's results, held in memory by the job or read from its folder.

The main job hands its results over as its tables hold them (`gpal.catalog_jobs.tables.as_read_back`,
`gpal.catalog_jobs.tables.rendered_and_read_back`: the written decimals, without the trip through the disk); ``gpal report``
reads the same from a finished folder (`gpal.catalog_jobs.report.write_classify_report`, with the readers here, each
given its file's path), so both reports say the same.
"""

from __future__ import annotations

import functools
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from gpal.catalog_jobs.layout import CLASSIFICATIONS_CSV, HELDOUT_FILE, TRAINING_RECORD, FolderLayout
from gpal.catalog_jobs.proba_columns import classes_from_columns, proba_column, proba_columns, proba_of
from gpal.catalog_jobs.tables import ClassifiedSources
from gpal.files import read_bytes

__all__ = ["FINISHED_FILES", "FinishedRun", "HeldOutRun", "check_finished", "parse_baselines", "parse_heldout",
           "read_baselines", "read_context", "read_held_out"]

#: The files without which a folder holds no finished main job.
FINISHED_FILES = (TRAINING_RECORD, HELDOUT_FILE, CLASSIFICATIONS_CSV)


@dataclass(frozen=True)
class HeldOutRun:
    """A main job's held-out predictions: what the held-out figures are drawn from, before the rest is done."""

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
    """A finished main job: its training record, held-out predictions, classified sources and what ran beside."""

    table: ClassifiedSources
    #: The baselines' (and the error-blind twin's) held-out probabilities, ``baselines.csv`` (empty: none fitted).
    baselines: pd.DataFrame
    #: The "none of these" record (`gpal.catalog_jobs.none_of_these.check_outliers`; None: no flag).
    outliers: dict[str, Any] | None = None
    #: The mixes the classifications were moved to (`gpal.catalog_jobs.pool_prior`; None: the pool prior was off).
    pool_prior: dict[str, Any] | None = None
    #: The later-release check's measures (`gpal.catalog_jobs.later_check.later_check_table`; None: not checked).
    later: pd.DataFrame | None = None
    #: The catalog columns a folder of gpal <= 0.3 kept beside the classifications (None: in the table itself).
    context: pd.DataFrame | None = None

    @property
    def frame(self) -> pd.DataFrame:
        """The classified sources (``classifications.csv``)."""
        return self.table.frame


def check_finished(folder: Path, layout: FolderLayout) -> None:
    """Refuse, naming what is missing and what to do, a ``folder`` (kept by ``layout``) whose run did not finish."""
    missing = [layout.path(name) for name in FINISHED_FILES if not (folder / layout.path(name)).is_file()]
    if missing:
        raise FileNotFoundError(f"{folder} is not a finished gpal classify folder: {missing} missing; rerun gpal classify")


def read_held_out(path: Path, classes: list[str]) -> pd.DataFrame:
    """``tables/heldout.csv`` at ``path``, read within bounds and checked against the run's ``classes``."""
    return parse_heldout(io.BytesIO(read_bytes(path, "held-out table")), classes,
                         f"{path} (a table gpal classify writes; rerun it to rewrite the table)")


def read_baselines(path: Path) -> pd.DataFrame:
    """The baselines' held-out probabilities from a folder's `gpal.catalog_jobs.layout.BASELINES_FILE` at ``path``
    (empty where the run fitted none)."""
    return parse_baselines(path) if path.is_file() else pd.DataFrame()


def parse_baselines(source: Any) -> pd.DataFrame:
    """The baselines' held-out probabilities from their CSV: names and classes as text."""
    return pd.read_csv(source, dtype={"Source_Name": str, "true_class": str})


def read_context(path: Path) -> pd.DataFrame | None:
    """The catalog columns a folder of gpal <= 0.3 kept beside its classifications at ``path`` (None: absent, the
    table itself holds them)."""
    return pd.read_csv(path, dtype={"Source_Name": str}) if path.is_file() else None


def parse_heldout(source: Any, classes: list[str], where: str = "the held-out table") -> pd.DataFrame:
    """``tables/heldout.csv`` from its CSV, checked against the run's classes: its columns, true classes and
    probabilities.

    An edited or corrupt table is named (``where``, column, row and value) rather than met as a
    ``list.index`` error or NaN metrics deep in the report.
    """
    try:
        held = pd.read_csv(source, dtype={"Source_Name": str, "true_class": str})
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

"""What the report is built from: a main-job run's results, held in memory by the job or read from its folder.

The main job hands its results over as its tables hold them (`gpal.catalog_jobs.tables.as_read_back`,
`gpal.catalog_jobs.tables.rendered_and_read_back`: the written decimals, without the trip through the disk); ``gpal report``
reads the same from a finished folder (`read_finished_parts`: the folder's files read first, each within bounds,
then parsed and checked), so both reports say the same.
"""

from __future__ import annotations

import functools
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from gpal.catalog_jobs.later_check import read_later_table
from gpal.catalog_jobs.layout import (
    BASELINES_FILE, CATALOG_COLUMNS_FILE, CLASSIFICATIONS_CSV, HELDOUT_FILE, LATER_CHECK_FILE, OOD_FILE,
    POOL_PRIOR_FILE, TRAINING_FILE, TRAINING_RECORD, FolderLayout,
)
from gpal.catalog_jobs.model_folders import checked_training_record
from gpal.catalog_jobs.proba_columns import classes_from_columns, proba_column, proba_columns, proba_of
from gpal.catalog_jobs.tables import ClassifiedSources, parse_probability_csv, probability_csv_bytes
from gpal.files import read_bytes, read_json

__all__ = ["FINISHED_FILES", "FinishedRun", "HeldOutRun", "check_finished", "parse_baselines", "parse_heldout",
           "read_baselines", "read_finished_parts"]

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


def read_finished_parts(folder: Path, layout: FolderLayout) -> dict[str, Any]:
    """The parts of the run a finished `classify_catalog` ``folder`` (kept by ``layout``) holds, by `FinishedRun`
    field: ``gpal report`` builds its run from them as the main job builds its own from its results.

    The disk first: each record and table read once, within bounds (`gpal.files.read_json`,
    `gpal.files.read_bytes`; the classifications with their ECSV twin, which holds their keywords); then each part
    parsed and checked from what was read.  A file the run did without (no baselines fitted, the pool prior off, no
    later release, a folder of gpal >= 0.4 keeping the catalog columns in its table) leaves its part None (the
    baselines: an empty frame); one there that is no regular file (a FIFO, a folder) is named, not passed over.
    """
    check_finished(folder, layout)
    path = {name: folder / layout.path(name) for name in (*FINISHED_FILES, *_OPTIONAL_JSON, *_OPTIONAL_CSV)}
    record = read_json(path[TRAINING_RECORD], TRAINING_FILE, damaged="the model folder is corrupt")
    records = {name: read_json(path[name], _WHAT) for name in _OPTIONAL_JSON if path[name].exists()}
    texts = {name: read_bytes(path[name], _WHAT) for name in (HELDOUT_FILE, *_OPTIONAL_CSV) if path[name].exists()}
    classified = probability_csv_bytes(path[CLASSIFICATIONS_CSV])
    training = checked_training_record(record, path[TRAINING_RECORD])
    held = parse_heldout(io.BytesIO(texts[HELDOUT_FILE]), training["classes"],
                         f"{path[HELDOUT_FILE]} (a table gpal classify writes; rerun it to rewrite the table)")
    csv = {name: io.BytesIO(texts[name]) for name in _OPTIONAL_CSV if name in texts}
    return dict(
        training=training, held=held, table=parse_probability_csv(*classified),
        baselines=parse_baselines(csv[BASELINES_FILE]) if BASELINES_FILE in csv else pd.DataFrame(),
        outliers=records.get(OOD_FILE), pool_prior=records.get(POOL_PRIOR_FILE),
        later=read_later_table(csv[LATER_CHECK_FILE]) if LATER_CHECK_FILE in csv else None,
        context=(pd.read_csv(csv[CATALOG_COLUMNS_FILE], dtype={"Source_Name": str})
                 if CATALOG_COLUMNS_FILE in csv else None))


#: The records and tables of a part a run may do without: the "none of these" check, the pool prior; the
#: baselines, the later-release check, the catalog columns a folder of gpal <= 0.3 kept beside its classifications.
_OPTIONAL_JSON = (OOD_FILE, POOL_PRIOR_FILE)
_OPTIONAL_CSV = (BASELINES_FILE, LATER_CHECK_FILE, CATALOG_COLUMNS_FILE)
_WHAT = "gpal classify file"


def check_finished(folder: Path, layout: FolderLayout) -> None:
    """Refuse, naming what is missing and what to do, a ``folder`` (kept by ``layout``) whose run did not finish."""
    missing = [layout.path(name) for name in FINISHED_FILES if not (folder / layout.path(name)).exists()]
    if missing:
        raise FileNotFoundError(f"{folder} is not a finished gpal classify folder: {missing} missing; rerun gpal classify")


def read_baselines(path: Path) -> pd.DataFrame:
    """The baselines' held-out probabilities from a folder's `gpal.catalog_jobs.layout.BASELINES_FILE` at ``path``
    (empty where the run fitted none)."""
    return parse_baselines(path) if path.is_file() else pd.DataFrame()


def parse_baselines(source: Any) -> pd.DataFrame:
    """The baselines' held-out probabilities from their CSV: names and classes as text, each probability the float it
    was written from (the main job's report uses the table it wrote)."""
    return pd.read_csv(source, dtype={"Source_Name": str, "true_class": str}, float_precision="round_trip")


def parse_heldout(source: Any, classes: list[str], where: str = "the held-out table") -> pd.DataFrame:
    """``tables/heldout.csv`` from its CSV, checked against the run's classes: its columns, true classes and
    probabilities.

    An edited or corrupt table is named (``where``, column, row and value) rather than met as a
    ``list.index`` error or NaN metrics deep in the report.
    """
    try:
        # each probability as the float it was written from, so the report of a folder is the one its run made
        held = pd.read_csv(source, dtype={"Source_Name": str, "true_class": str}, float_precision="round_trip")
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

"""What the report is built from: the files of a finished `classify_catalog` folder, read once."""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from gpal.catalog_jobs.layout import CLASSIFICATIONS_CSV, HELDOUT_FILE
from gpal.catalog_jobs.model_folders import TRAINING_FILE
from gpal.catalog_jobs.tables import ClassifiedSources, read_probability_table

__all__ = ["FinishedRun", "read_run"]


@dataclass(frozen=True)
class FinishedRun:
    """A finished main-job folder: its training record, held-out predictions and classified sources."""

    folder: Path
    training: dict[str, Any]
    #: ``tables/heldout.csv``: Source_Name, true_class, Signif_Avg and p_<class> of every held-out source.
    held: pd.DataFrame
    table: ClassifiedSources

    @functools.cached_property
    def classes(self) -> list[str]:
        return [c[2:] for c in self.held.columns if c.startswith("p_")]

    @functools.cached_property
    def y(self) -> np.ndarray:
        """The held-out sources' true classes, as indices into `classes`."""
        return np.array([self.classes.index(c) for c in self.held["true_class"]], dtype=np.int64)

    @functools.cached_property
    def proba(self) -> np.ndarray:
        """The model's held-out probabilities, one column per class."""
        return self.held[[f"p_{c}" for c in self.classes]].to_numpy()

    @property
    def frame(self) -> pd.DataFrame:
        """The classified sources (``classifications.csv``)."""
        return self.table.frame


def read_run(folder: Path) -> FinishedRun:
    """The files a report needs, refused with what to do when the run did not finish."""
    needed = [folder / TRAINING_FILE, folder / HELDOUT_FILE, folder / CLASSIFICATIONS_CSV]
    missing = [str(p.relative_to(folder)) for p in needed if not p.is_file()]
    if missing:
        raise FileNotFoundError(f"{folder} is not a finished gpal classify folder: {missing} missing; rerun gpal classify")
    return FinishedRun(
        folder,
        json.loads((folder / TRAINING_FILE).read_text(encoding="utf-8")),
        pd.read_csv(folder / HELDOUT_FILE, dtype={"Source_Name": str, "true_class": str}),
        read_probability_table(folder / CLASSIFICATIONS_CSV),
    )

"""Probability tables (``gpal predict``): one row per source, keyed by ``Source_Name``.

One ``p_<class>`` column per class, the predicted class, the predictive entropy and
the sky position, with the catalog and the model recorded as metadata (FITS header
keywords, or ``# KEY: value`` lines heading a CSV).
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from gpal.runs.persistence import atomic_output

__all__ = ["ClassifiedSources", "TABLE_FORMATS", "check_table_path", "read_probability_table", "write_probability_table"]


TABLE_FORMATS = {".csv": "csv", ".fits": "fits", ".fit": "fits"}


# ---------------------------------------------------------- probability tables
@dataclass(frozen=True)
class ClassifiedSources:
    """A probability table: one row per source, and the metadata saying where it came from."""

    frame: pd.DataFrame
    meta: dict[str, str]


def _table_format(path: Path) -> str:
    fmt = TABLE_FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise ValueError(f"output {path} must end in one of {sorted(TABLE_FORMATS)} (CSV or FITS); got {path.suffix or 'no suffix'!r}")
    return fmt


def check_table_path(path: str | os.PathLike, force: bool = False) -> Path:
    """The output path, checked before any work: a known suffix, and no existing file unless ``force``."""
    path = Path(path)
    _table_format(path)
    if path.is_dir():
        raise IsADirectoryError(f"output {path} is a folder; give a file name ending in .csv or .fits")
    if path.exists() and not force:
        raise FileExistsError(f"output {path} already exists; choose another name or pass --force to overwrite it")
    return path


def write_probability_table(table: ClassifiedSources, path: str | os.PathLike, force: bool = False) -> Path:
    """Write CSV (``# KEY: value`` header lines) or FITS (header keywords), atomically."""
    path = check_table_path(path, force)
    if _table_format(path) == "csv":
        with atomic_output(path) as tmp:
            with open(tmp, "w", encoding="utf-8", newline="") as fh:
                fh.writelines(f"# {k}: {v}\n" for k, v in table.meta.items())
                table.frame.to_csv(fh, index=False)
        return path
    from astropy.table import Table

    out = Table.from_pandas(table.frame)
    out.meta.update(table.meta)
    with atomic_output(path) as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # astropy's note that long values use CONTINUE cards
        out.write(tmp, format="fits", overwrite=True)
    return path


def read_probability_table(path: str | os.PathLike) -> ClassifiedSources:
    """Read a table written by `write_probability_table` (CSV or FITS) with its metadata."""
    path = Path(path)
    if _table_format(path) == "csv":
        meta: dict[str, str] = {}
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                if not line.startswith("# "):
                    break
                key, _, value = line[2:].rstrip("\n").partition(": ")
                meta[key] = value
        frame = pd.read_csv(path, skiprows=len(meta), keep_default_na=False, na_values=[""],
                            dtype={"Source_Name": str, "CLASS1": str, "predicted_class": str})
        frame["CLASS1"] = frame["CLASS1"].fillna("")
        return ClassifiedSources(frame, meta)
    from astropy.table import Table

    t = Table.read(path, format="fits")
    keys = ("CREATOR", "CATALOG", "CATVER", "CATFILE", "SELECT", "NSOURCES", "DROPPED", "MODEL", "MODELFMT",
            "CLASSES", "FEATURES", "TRAINCAT", "TRAINSEL", "FITCONF")
    meta = {k: str(t.meta[k]) for k in keys if k in t.meta}
    frame = t.to_pandas()
    for column in frame.columns:
        if not pd.api.types.is_numeric_dtype(frame[column]):  # FITS pads strings and reads empty ones as masked
            frame[column] = frame[column].fillna("").astype(str).str.strip()
    return ClassifiedSources(frame, meta)

"""The main job's output folder (`classify_catalog`, ``gpal classify``): where each file lives, named once.

::

    gpal-output/
      classifications.csv        the classified sources: plain CSV
      classifications.ecsv       the same rows with units, column descriptions and provenance
      classifications.fits       the same rows as a FITS table
      follow_up.csv, .ecsv       classification follow-up list; discovery.csv / extended.csv beside it,
      follow_up.reg              its 95% error ellipses for DS9 (names: `gpal.catalog_jobs.follow_up`)
      report.md                  the page that reads them: metrics, tables, figures
      metrics.json               the report's numbers, for scripts
      ood.json                   the "none of these" threshold and what it caught
      training.json, model/      the trained model (``gpal predict gpal-output ...``)
      run.json                   the run's settings, which recognise a rerun
      tables/                    the report's tables (.csv, .md, .tex), the held-out predictions
      figures/                   the report's figures (.png, .pdf)

Folders written before ``tables/`` and ``figures/`` existed held every file flat beside the
classifications; `move_flat_layout` moves such a folder's files to their places, so that a
rerun of the same command resumes it (the trained model reused) and ``gpal report`` rebuilds it.
"""

from __future__ import annotations

import os
from pathlib import Path

from gpal.catalog_jobs.model_folders import TRAINING_FILE
from gpal.evaluation.reports import REPORT_FILE

__all__ = [
    "BASELINES_FILE",
    "CATALOG_COLUMNS_FILE",
    "CLASSIFICATIONS_CSV",
    "CLASSIFICATIONS_FITS",
    "CLASSIFY_FOLDER",
    "CONTEXT_COLUMNS",
    "DEFAULT_OUT_DIR",
    "FIGURES_DIR",
    "HELDOUT_FILE",
    "METRICS_FILE",
    "REPORT_FILE",
    "SIGNIFICANCE_COLUMN",
    "TABLES_DIR",
    "is_classify_folder",
    "move_flat_layout",
]

#: Where the main job writes unless told.
DEFAULT_OUT_DIR = "gpal-output"
#: The classified sources, what a user opens first: the CSV (with its ECSV twin, `gpal.catalog_jobs.tables`) and FITS.
CLASSIFICATIONS_CSV = "classifications.csv"
CLASSIFICATIONS_FITS = "classifications.fits"
METRICS_FILE = "metrics.json"
#: Every table of the report (CSV, Markdown, LaTeX) and the tables the report is built from.
TABLES_DIR = "tables"
#: Every figure of the report (PNG, PDF).
FIGURES_DIR = "figures"
#: The model's held-out predictions; with the run's training.json, what marks a classify folder.
HELDOUT_FILE = f"{TABLES_DIR}/heldout.csv"
#: The baselines' (and the error-blind twin's) held-out predictions, fitted once per run folder.
BASELINES_FILE = f"{TABLES_DIR}/heldout_baselines.csv"
#: Catalog columns of the classified sources that the report quotes (the classifications keep to probabilities).
CATALOG_COLUMNS_FILE = f"{TABLES_DIR}/catalog_columns.csv"
CONTEXT_COLUMNS = ("Flux1000", "Signif_Avg")
#: The catalog column that ranks sources by how faint they are; heldout.csv keeps it for the faintest-quarter check.
SIGNIFICANCE_COLUMN = "Signif_Avg"

# The flat layout, a record of what earlier folders hold (do not follow renames here): old name -> current path.
_FLAT_HELDOUT = "heldout.csv"
_FLAT_TABLES = ("heldout_metrics", "heldout_per_class", "heldout_confusion", "heldout_comparison", "predicted_counts",
                "predicted_by_latitude", "most_informative", "most_uncertain")
_FLAT_FIGURES = ("confusion_matrix", "reliability", "reliability_per_class", "sky_classes", "sky_entropy")
_FLAT_LAYOUT = {
    _FLAT_HELDOUT: HELDOUT_FILE,
    "heldout_baselines.csv": BASELINES_FILE,
    "classified_catalog.csv": CATALOG_COLUMNS_FILE,
    **{f"{stem}.{ext}": f"{TABLES_DIR}/{stem}.{ext}" for stem in _FLAT_TABLES for ext in ("csv", "md", "tex")},
    **{f"{stem}.{ext}": f"{FIGURES_DIR}/{stem}.{ext}" for stem in _FLAT_FIGURES for ext in ("png", "pdf")},
}


#: What marks a finished classify folder, in words (``gpal report`` names it when a folder is none of its kinds).
CLASSIFY_FOLDER = f"a gpal classify output ({TRAINING_FILE} and {HELDOUT_FILE})"


def is_classify_folder(folder: Path) -> bool:
    """Whether ``folder`` holds a finished model and held-out predictions of the main job, in either layout."""
    return (folder / TRAINING_FILE).is_file() and any(
        (folder / name).is_file() for name in (HELDOUT_FILE, _FLAT_HELDOUT))


def move_flat_layout(folder: Path) -> list[str]:
    """Move the files of a flat classify folder to their places in ``tables/`` and ``figures/``; the names moved.

    The held-out predictions of the model and baselines keep their values, so nothing is refitted;
    the report's tables, figures and ``report.md`` are rewritten by whatever moves them.
    A file at both places is taken from the flat one: only an earlier gpal, run after this one, writes there.
    """
    moved = []
    for old, new in _FLAT_LAYOUT.items():
        if (folder / old).is_file():
            (folder / new).parent.mkdir(exist_ok=True)
            os.replace(folder / old, folder / new)
            moved.append(old)
    return moved

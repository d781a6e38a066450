"""The main job's output folder (`classify_catalog`, ``gpal classify``): where each file lives, named once.

::

    gpal-output/
      classifications.csv        the classified sources: plain CSV
      classifications.ecsv       the same rows with units, column descriptions and provenance
      classifications.fits       the same rows as a FITS table
      classifications.mrt / .vot with --table-formats: as an AAS MRT / a VOTable (each list likewise)
      candidates_<class>.csv     a target list per class, with .ecsv and .reg (`gpal.catalog_jobs.candidates`)
      most_informative.csv       the follow-up ranking by what a label teaches, with .ecsv and .reg;
                                 discovery.csv / extended.csv beside it (names: `gpal.catalog_jobs.follow_up`)
      report.md                  the page that reads them: metrics, tables, figures
      metrics.json               the report's numbers, for scripts
      ood.json                   the "none of these" threshold and what it caught
      pool_prior.json            with the pool prior (default): the unassociated mix; bcu left as given
      training.json, model/      the trained model (``gpal predict gpal-output ...``)
      model_error_blind/         the same GP without the error bars, scored beside it
      run.json                   the run's settings, which recognise a rerun (signed by gpal)
      .gpal-written              what gpal wrote here: all that --force may remove
      tables/                    the report's tables (.csv, .md, .tex), the held-out predictions
      figures/                   the report's figures (.png, .pdf)
"""

from __future__ import annotations

from pathlib import Path

from gpal.catalog_jobs.model_folders import TRAINING_FILE
from gpal.evaluation.reports import REPORT_FILE

__all__ = [
    "BASELINES_FILE",
    "ERROR_BLIND_MODEL_DIR",
    "CATALOG_COLUMNS_FILE",
    "CLASSIFICATIONS_CSV",
    "CLASSIFICATIONS_FITS",
    "CLASSIFY_FOLDER",
    "CONTEXT_COLUMNS",
    "DEFAULT_OUT_DIR",
    "FIGURES_DIR",
    "FLUX_COLUMN",
    "HELDOUT_FILE",
    "METRICS_FILE",
    "REPORT_FILE",
    "SIGNIFICANCE_COLUMN",
    "TABLES_DIR",
    "is_classify_folder",
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
#: The error-blind twin's saved model (`gpal.estimators.load_estimator`), so the later-release check scores it too.
ERROR_BLIND_MODEL_DIR = "model_error_blind"
#: Catalog columns of the classified sources that the report quotes (the classifications keep to probabilities).
CATALOG_COLUMNS_FILE = f"{TABLES_DIR}/catalog_columns.csv"
#: The columns of catalog_columns.csv -> the release-record role each is read from (`gpal.catalogs.releases.Columns`).
#: The file's names are gpal's, fixed so that folders of every release (and of earlier versions) read alike.
CONTEXT_COLUMNS = {"Flux1000": "flux", "Signif_Avg": "significance"}
#: The heldout.csv column of each source's detection significance (the record's ``significance`` role), kept for
#: the faintest-quarter check.
SIGNIFICANCE_COLUMN = "Signif_Avg"
#: The catalog_columns.csv column of the photon flux (printed in scientific notation).
FLUX_COLUMN = "Flux1000"

#: What marks a finished classify folder, in words (``gpal report`` names it when a folder is none of its kinds).
CLASSIFY_FOLDER = f"a gpal classify output ({TRAINING_FILE} and {HELDOUT_FILE})"


def is_classify_folder(folder: Path) -> bool:
    """Whether ``folder`` holds a finished model and held-out predictions of the main job."""
    return (folder / TRAINING_FILE).is_file() and (folder / HELDOUT_FILE).is_file()

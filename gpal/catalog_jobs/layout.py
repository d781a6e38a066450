"""The main job's output folder (`classify_catalog`, ``gpal classify``): where each file lives, named once.

Every verb that reads or writes the folder (``gpal classify``, ``report``, ``predict``, ``check-later``, the
report's links, the tests) takes its paths from here.  A person sees at most twelve entries at its top, every
optional format asked::

    gpal-output/
      report.md                  the page that reads everything below: metrics, tables, figures
      classifications.csv        the classified sources: plain CSV
      classifications.ecsv       the same rows with units, column descriptions and provenance
      classifications.fits       the same rows as a FITS table
      classifications.mrt / .vot with --table-formats: as an AAS MRT / a VOTable (each list likewise)
      lists/                     every source list, each a .csv with its .ecsv twin
        candidates_<class>.csv   a target list per class, with .reg (`gpal.catalog_jobs.candidates`)
        candidates_<class>_clean.csv   the same without the doubtfully flagged rows, with .reg
        known_sources.csv        the sources the target lists leave out because the sky already names them
        most_informative.csv     the follow-up ranking by what a label teaches, with .reg
        discovery.csv            unassociated sources unlike every trained class (`gpal.catalog_jobs.follow_up`)
        extended.csv             the extended sources, outside the point-source classes
      tables/                    the report's tables (.csv, .md, .tex), the held-out predictions, the later check
      figures/                   the report's figures (.png, .pdf)
      model/                     the trained model (``gpal predict gpal-output ...``)
        training.json            what it was trained on (`gpal.catalog_jobs.model_folders`)
        estimator/               the saved estimator
        error_blind/             the same GP without the error bars, scored beside it
        bcu_types/               the blazar-type model that splits each bcu between bll and fsrq, bcu_types.json
                                 its record (`gpal.catalog_jobs.bcu_types`)
      records/                   the run's numbers, for scripts
        metrics.json             the report's numbers
        ood.json                 the "none of these" threshold and what it caught
        pool_prior.json          with --pool-prior: the unassociated mix
        timings.json             each step's wall and CPU seconds (``gpal classify -v`` prints them)
      run.json                   the run's settings, which recognise a rerun (signed by gpal)
      .gpal-written              what gpal wrote here: all that --force may remove

gpal 0.3 wrote the same files flat (`FLAT_LAYOUT`): the lists and records at the top, ``training.json`` beside
``model/`` (the estimator) and ``model_error_blind/``.  Such a folder is read where it is (`located`, one rule for
every path) and its report rebuilt in its own layout; ``gpal classify`` refuses to write into it (`refuse_flat`).
"""

from __future__ import annotations

import json
import os
import warnings
from dataclasses import dataclass
from pathlib import Path

from gpal.files import REPORT_FILE
from gpal.runs.output_dir import RUN_RECORD, OutputInUse, recorded_identity

__all__ = [
    "BASELINES_FILE",
    "BCU_TYPES_DIR",
    "BCU_TYPES_FILE",
    "CATALOG_COLUMNS_FILE",
    "CLASSIFICATIONS_CSV",
    "CLASSIFICATIONS_FITS",
    "CLASSIFY_FOLDER",
    "CONTEXT_COLUMNS",
    "CURRENT_LAYOUT",
    "DEFAULT_OUT_DIR",
    "DISCOVERY_FILE",
    "ERROR_BLIND_MODEL_DIR",
    "ESTIMATOR_DIR",
    "EXTENDED_FILE",
    "FIGURES_DIR",
    "FLAT_LAYOUT",
    "FLUX_COLUMN",
    "FolderLayout",
    "HELDOUT_FILE",
    "INFORMATIVE_FILE",
    "KIND",
    "KNOWN_FILE",
    "LATER_CHECK_FILE",
    "LATER_CHECK_SOURCES_FILE",
    "LAYOUT_VERSION",
    "UnsignedRunRecordWarning",
    "LISTS_DIR",
    "METRICS_FILE",
    "MODEL_DIR",
    "OOD_FILE",
    "POOL_PRIOR_FILE",
    "RECORDS_DIR",
    "REGION_FILE",
    "REPORT_FILE",
    "SIGNIFICANCE_COLUMN",
    "TABLES_DIR",
    "TIMINGS_FILE",
    "TRAINED_DIR",
    "TRAINING_FILE",
    "TRAINING_RECORD",
    "candidate_file",
    "clean_file",
    "folder_layout",
    "is_classify_folder",
    "list_path",
    "located",
    "refuse_flat",
    "region_file",
]

#: Where the main job writes unless told.
DEFAULT_OUT_DIR = "gpal-output"
#: The layout this gpal writes; a run's identity holds it, so a folder of another layout is another run.
LAYOUT_VERSION = 2
#: The run kind of the main job in its ``run.json``.
KIND = "gpal.catalog_jobs.classify"

# ------------------------------------------------------------------ the top
#: The classified sources, what a user opens first: the CSV (with its ECSV twin, `gpal.catalog_jobs.tables`) and FITS.
CLASSIFICATIONS_CSV = "classifications.csv"
CLASSIFICATIONS_FITS = "classifications.fits"
#: Every source list, each under its name below (`list_path`).
LISTS_DIR = "lists"
#: Every table of the report (CSV, Markdown, LaTeX) and the tables the report is built from.
TABLES_DIR = "tables"
#: Every figure of the report (PNG, PDF).
FIGURES_DIR = "figures"
#: The trained-model folder: ``training.json`` and the estimator, as ``gpal train`` writes one, and the twin.
TRAINED_DIR = "model"
#: The run's JSON records, which scripts read.
RECORDS_DIR = "records"

# ------------------------------------------------------------------ the lists (names inside LISTS_DIR)
#: The classified sources the sky already names, with the reason, apart from every target list.
KNOWN_FILE = "known_sources.csv"
#: The follow-up lists (`gpal.catalog_jobs.follow_up`).
INFORMATIVE_FILE = "most_informative.csv"
DISCOVERY_FILE = "discovery.csv"
EXTENDED_FILE = "extended.csv"


def candidate_file(cls: str) -> str:
    """The target list of class ``cls``: ``candidates_<cls>.csv`` (with its ``.ecsv`` twin and ``.reg``)."""
    return f"candidates_{cls}.csv"


def clean_file(cls: str) -> str:
    """The clean target list of class ``cls`` (no doubtfully flagged row): ``candidates_<cls>_clean.csv``."""
    return f"candidates_{cls}_clean.csv"


def region_file(list_file: str) -> str:
    """The DS9 region file drawn beside a list: same stem, ``.reg``."""
    return str(Path(list_file).with_suffix(".reg"))


#: The most-informative list's 95% error ellipses, for DS9.
REGION_FILE = region_file(INFORMATIVE_FILE)


def list_path(name: str) -> str:
    """Where the list ``name`` (one of the names above) lies in the folder."""
    return f"{LISTS_DIR}/{name}"


# ------------------------------------------------------------------ tables/
#: The model's held-out predictions; with the run's training record, what marks a classify folder.
HELDOUT_FILE = f"{TABLES_DIR}/heldout.csv"
#: The baselines' (and the error-blind twin's) held-out predictions, fitted once per run folder.
BASELINES_FILE = f"{TABLES_DIR}/heldout_baselines.csv"
#: Catalog columns of the classified sources that the report quotes (the classifications keep to probabilities).
CATALOG_COLUMNS_FILE = f"{TABLES_DIR}/catalog_columns.csv"
#: The later-release check's measures and the sources it scored (``gpal check-later``, the main job on an older
#: release).
LATER_CHECK_FILE = f"{TABLES_DIR}/later_check.csv"
LATER_CHECK_SOURCES_FILE = f"{TABLES_DIR}/later_check_sources.csv"

# ------------------------------------------------------------------ model/
#: A trained-model folder's record (`gpal.catalog_jobs.model_folders`), at the top of a ``gpal train`` folder.
TRAINING_FILE = "training.json"
#: The estimator beside ``training.json`` in a ``gpal train`` folder.
MODEL_DIR = "model"
#: The estimator beside ``training.json`` in the main job's `TRAINED_DIR`.
ESTIMATOR_DIR = "estimator"
#: The main job's training record.
TRAINING_RECORD = f"{TRAINED_DIR}/{TRAINING_FILE}"
#: The error-blind twin's saved model (`gpal.estimators.load_estimator`), so the later-release check scores it too.
ERROR_BLIND_MODEL_DIR = f"{TRAINED_DIR}/error_blind"
#: The blazar-type model that splits each bcu between bll and fsrq, and its record (`gpal.catalog_jobs.bcu_types`):
#: names inside the trained-model folder, beside its training record, so ``gpal predict`` with the run folder or with
#: its `TRAINED_DIR` alone splits the bcu alike.
BCU_TYPES_DIR = "bcu_types"
BCU_TYPES_FILE = "bcu_types.json"

# ------------------------------------------------------------------ records/
METRICS_FILE = f"{RECORDS_DIR}/metrics.json"
OOD_FILE = f"{RECORDS_DIR}/ood.json"
POOL_PRIOR_FILE = f"{RECORDS_DIR}/pool_prior.json"
#: Each step's wall and CPU seconds (`gpal.runs.timings`), which ``gpal classify -v`` prints.
TIMINGS_FILE = f"{RECORDS_DIR}/timings.json"

# ------------------------------------------------------------------ columns the report reads back
#: The columns of catalog_columns.csv -> the release-record role each is read from (`gpal.catalogs.releases.Columns`).
#: The file's names are gpal's, fixed so that folders of every release (and of earlier versions) read alike.
CONTEXT_COLUMNS = {"Flux1000": "flux", "Signif_Avg": "significance"}
#: The heldout.csv column of each source's detection significance (the record's ``significance`` role), kept for
#: the faintest-quarter check.
SIGNIFICANCE_COLUMN = "Signif_Avg"
#: The catalog_columns.csv column of the photon flux (printed in scientific notation).
FLUX_COLUMN = "Flux1000"


# ------------------------------------------------------------------ either layout
@dataclass(frozen=True)
class FolderLayout:
    """Where a folder keeps each file of this layout: ``moved`` maps a path (or the folder a path starts with) to
    where the folder has it instead, ``""`` for its top."""

    name: str
    moved: tuple[tuple[str, str], ...] = ()

    def path(self, name: str) -> str:
        """Where the file or folder ``name`` (a path of this gpal's layout, e.g. `OOD_FILE`) lies in the folder."""
        for new, old in self.moved:
            if name == new:
                return old or "."
            if name.startswith(new + "/"):
                rest = name[len(new) + 1:]
                return f"{old}/{rest}" if old else rest
        return name


#: The layout this gpal writes.
CURRENT_LAYOUT = FolderLayout(f"gpal's layout {LAYOUT_VERSION}")
#: gpal 0.3's: everything but the tables and figures at the top, the estimator in ``model/`` beside ``training.json``.
FLAT_LAYOUT = FolderLayout("the flat layout of gpal <= 0.3", (
    (ERROR_BLIND_MODEL_DIR, "model_error_blind"), (f"{TRAINED_DIR}/{ESTIMATOR_DIR}", MODEL_DIR),
    (TRAINING_RECORD, TRAINING_FILE), (TRAINED_DIR, ""),
    (LISTS_DIR, ""), (RECORDS_DIR, "")))


class UnsignedRunRecordWarning(UserWarning):
    """A folder's ``run.json`` is there but not as gpal signed it: what layout wrote the folder is not known."""


def folder_layout(folder: str | os.PathLike) -> FolderLayout:
    """The layout of a run or model folder: flat where its training record lies at the top (gpal <= 0.3's main
    job, and a ``gpal train`` folder, whose `TRAINED_DIR` is the folder itself), else this gpal's. A folder whose
    run record names a later layout than this gpal's is refused (ValueError naming both), not misread."""
    folder = Path(folder)
    identity = recorded_identity(folder)
    if identity is None and (folder / RUN_RECORD).exists():
        warnings.warn(f"{folder / RUN_RECORD} is not a run record as gpal signed it (edited or damaged): the folder's "
                      "layout is read from its files, and one a later gpal wrote would not be recognised as such",
                      UnsignedRunRecordWarning)  # one place: said once per process, however many readers ask
    written = identity.get("layout") if isinstance(identity, dict) else None
    if isinstance(written, int) and written > LAYOUT_VERSION:
        raise ValueError(f"{folder} was written by gpal {_writer_version(folder)} in its layout {written}; this gpal "
                         f"reads layouts up to {LAYOUT_VERSION}: read the folder with the gpal that wrote it or a "
                         "later one")
    flat = (folder / TRAINING_FILE).is_file() and not (folder / TRAINING_RECORD).is_file()
    return FLAT_LAYOUT if flat else CURRENT_LAYOUT


def located(folder: str | os.PathLike, name: str) -> Path:
    """The path of ``name`` (a path of this gpal's layout) in ``folder``, whichever layout wrote the folder."""
    return Path(folder) / folder_layout(folder).path(name)


def refuse_flat(folder: str | os.PathLike, force: bool) -> None:
    """Refuse to write the main job into a flat main-job folder of gpal <= 0.3 unless ``force`` (which replaces
    it): its files would lie beside this layout's, two runs in one folder."""
    folder = Path(folder)
    if force or folder_layout(folder) is not FLAT_LAYOUT or (recorded_identity(folder) or {}).get("kind") != KIND:
        return
    raise OutputInUse(
        f"refusing to write into {folder}: gpal {_writer_version(folder)} wrote it in {FLAT_LAYOUT.name}, this gpal writes "
        f"{TRAINED_DIR}/, {LISTS_DIR}/ and {RECORDS_DIR}/. gpal report, predict and check-later still read it; "
        "choose another folder or pass --force to replace it")


def _writer_version(folder: Path) -> str:
    """The gpal version a folder's run record names, or "unknown"."""
    try:
        return str(json.loads((folder / RUN_RECORD).read_text(encoding="utf-8")).get("gpal_version", "unknown"))
    except (OSError, ValueError, AttributeError):
        return "unknown"


#: What marks a finished classify folder, in words (``gpal report`` names it when a folder is none of its kinds).
CLASSIFY_FOLDER = f"a gpal classify output ({TRAINING_RECORD} and {HELDOUT_FILE})"


def is_classify_folder(folder: Path) -> bool:
    """Whether ``folder`` holds a finished model and held-out predictions of the main job (either layout)."""
    layout = folder_layout(folder)
    return all((folder / layout.path(name)).is_file() for name in (TRAINING_RECORD, HELDOUT_FILE))

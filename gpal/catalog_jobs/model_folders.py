"""Trained-model folders: the estimator's own folder beside ``training.json`` (``gpal train``'s folder, and ``model/``
of the main job's, `gpal.catalog_jobs.layout`).

``training.json`` records what the model was trained on (catalog release, classes
and merges, feature definitions, cuts, sources per class), so that predicting on
another catalog can check that the features exist there.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from gpal.catalog_jobs.layout import ESTIMATOR_DIR, MODEL_DIR, TRAINED_DIR, TRAINING_FILE, TRAINING_RECORD, located
from gpal.catalog_jobs.selection import CatalogSelection
from gpal.catalogs.classes import format_class_spec
from gpal.data.dataset import NoisyDataset
from gpal.estimators import load_estimator, saved_format
from gpal.estimators.base import raise_if_interrupted
from gpal.estimators.params import input_prior_used
from gpal.catalogs.features import resolve_features
from gpal.files import file_sha256, read_json, write_json_atomic
from gpal.identity import estimator_identity
from gpal.interrupts import check_stop
from gpal.runs.output_dir import claim_output_dir

__all__ = ["TrainedModel", "check_catalog_columns", "check_features", "load_trained", "loaded_estimator",
           "require_per_class", "train_catalog_model"]


TRAINING_FORMAT = "gpal.trained_model"
#: The record's fields that bind the folder into one thing: the size and checksum of each file of ``model/``, and a
#: checksum of each of its own fields, so that an edited field or a model from another training is named.
MODEL_FILES, FIELD_CHECKSUMS = "model_files", "field_sha256"


#: Estimator parameters that do not decide a trained model: the progress bar, and warm starts (a folder is fitted once).
_NOT_IDENTITY = ("progress", "warm_start")


# ------------------------------------------------------------- trained models
def _estimator_record(estimator: Any) -> dict[str, Any]:
    """The estimator's class and settings as the training record keeps them: an input-noise strategy given as a
    class or an object by its registered name, which the report reads (``none``: the error bars are not used)."""
    from gpal.models.input_noise_setting import strategy_class

    record = estimator_identity(estimator, leave_out=_NOT_IDENTITY)
    setting = getattr(estimator, "input_noise", None)
    if setting is not None and not isinstance(setting, str):
        record["params"]["input_noise"] = strategy_class(setting).name
    return record


def _training_record(data: NoisyDataset, merge: Mapping[str, Sequence[str]], estimator: Any, trained_on: str,
                     fit_seconds: float, model_dir: str) -> dict[str, Any]:
    cuts = data.meta.get("cuts", {})
    return {
        "format": TRAINING_FORMAT,
        "version": 1,
        "model": model_dir,
        "catalog": {k: data.meta.get(k) for k in ("release", "version", "cds_name", "data_release", "rows", "file")},
        "classes": list(data.class_names),
        "merge": {k: list(v) for k, v in merge.items()},
        "class_spec": format_class_spec(data.class_names, merge),
        "features": list(data.meta.get("features", [])),
        "feature_names": list(data.feature_names),
        "min_significance": cuts.get("min_significance"),
        "significance_column": cuts.get("significance_column"),
        "n_per_class": data.class_counts(),
        "dropped": dict(data.meta.get("dropped", {})),
        "repaired": dict(data.meta.get("repaired", {})),
        "trained_on": trained_on,
        "estimator": _estimator_record(estimator),
        # the population of the latent inputs, where the model has them: a report says it without loading the model
        "input_prior_used": input_prior_used(estimator) if hasattr(estimator, "input_prior") else None,
        "fit_seconds": round(float(fit_seconds), 2),
    }


@dataclass(frozen=True)
class TrainedModel:
    """A trained-model folder: where the model is, what it was trained on, and the estimator.

    ``folder`` is the folder given (a ``gpal train`` folder, or a main job's, whose run record, outlier score and
    classifications lie beside the model), ``record_file`` its ``training.json``.  The estimator (and with it
    TensorFlow) loads on first use, so that a catalog or a selection that does not fit the record is refused
    first, in a second rather than ten.
    """

    folder: Path
    model_dir: Path
    training: dict[str, Any]
    record_file: Path

    @functools.cached_property
    def estimator(self) -> Any:
        """The saved estimator, loaded once per process and folder version (`loaded_estimator`): the chunked
        prediction of the same folder uses this very object.  Read it; ``clone`` it to train another."""
        estimator = loaded_estimator(self.model_dir)  # first: a damaged field is named as it loads
        check_model_files(self.record_file, self.model_dir, self.training)
        if sorted(self.training["classes"]) != sorted(str(c) for c in estimator.classes_):
            raise ValueError(
                f"{self.record_file} lists classes {self.training['classes']} but the model in "
                f"{self.model_dir} classifies {[str(c) for c in estimator.classes_]}; the folder mixes two trainings"
            )
        names = self.training["feature_names"]
        if len(names) != getattr(estimator, "n_features_in_", len(names)):
            raise ValueError(
                f"{self.record_file} lists {len(names)} features but the model in {self.model_dir} "
                f"takes {estimator.n_features_in_}; the folder mixes two trainings"
            )
        return estimator

    @property
    def classes(self) -> list[str]:
        return [str(c) for c in self.estimator.classes_]


def _listed(names: Sequence[str]) -> str:
    return ", ".join(names)


def check_features(trained: TrainedModel, data: NoisyDataset, what: str = "the sources") -> None:
    """Refuse ``data`` unless its features are those the model was trained on, in their order: the message names the
    model, both counts and what is missing, extra or out of order (the estimator's own check counts columns only)."""
    expected, got = list(trained.training["feature_names"]), list(data.feature_names)
    if got == expected and data.X.shape[1] == len(expected):
        return
    missing = [name for name in expected if name not in got]
    extra = [name for name in got if name not in expected]
    why = "; ".join(part for part in (f"missing {_listed(missing)}" if missing else "",
                                      f"not trained on {_listed(extra)}" if extra else "") if part)
    raise ValueError(
        f"the model in {trained.folder} was trained on {len(expected)} features ({_listed(expected)}); {what} have "
        f"{len(got)}: {why or 'the same features in another order'}; give it the features it was trained on")


def check_catalog_columns(trained: TrainedModel, catalog: Any) -> None:
    """Refuse a catalog that lacks a column the model's features are built from, holds text there, or holds it in
    another shape (one value per source where a band is read, too few bands), naming the column and the model: before
    any feature is computed or the model loads."""
    features = resolve_features(trained.training["features"])
    where = f"the catalog {catalog.path.name} ({catalog.release})"
    needed = list(dict.fromkeys(c for f in features for c in f.columns))
    have = set(catalog.table.colnames)
    missing = [c for c in needed if c not in have]
    if missing:
        raise ValueError(
            f"{where} lacks column(s) {missing} that the features of the model in {trained.folder} "
            f"({_listed(trained.training['feature_names'])}) are built from; use a catalog with these columns")
    for name in needed:
        dtype = catalog.table[name].dtype
        if dtype.kind not in "iuf":
            held = "text" if dtype.kind in "SU" else dtype  # text is kept as the file's bytes
            raise ValueError(f"column {name!r} of {where} holds {held} values; the model in {trained.folder} was "
                             "trained on it as numbers: use a catalog of the release's layout")
    for f in features:
        for column, bands in _value_reads(f):
            shape = catalog.table[column].shape[1:]
            if bands is None and shape:
                raise ValueError(f"column {column!r} of {where} holds {shape[0]} values per source; the model in "
                                 f"{trained.folder} was trained on one (feature {f.label!r})")
            if bands is not None and (len(shape) != 1 or shape[0] <= max(bands)):
                held = f"{shape[0]} bands" if len(shape) == 1 else ("one value" if not shape else f"shape {shape}")
                raise ValueError(f"column {column!r} of {where} holds {held} per source; the model in "
                                 f"{trained.folder} reads band(s) {list(bands)} of it (feature {f.label!r})")


def _value_reads(feature: Any) -> list[tuple[str, tuple[int, ...] | None]]:
    """(value column, the bands read of it or None for one value per source) of each column ``feature`` reads."""
    reads = []
    for column, band in ((feature.column, feature.band), (feature.other_column, feature.other_band)):
        if column is None:
            continue
        if isinstance(column, tuple):  # one column per band (3FGL): each holds one value per source
            reads += [(c, None) for c in column]
        elif feature.reduce is not None:
            reads.append((column, tuple(feature.bands or (0,))))
        else:
            reads.append((column, None if band is None else (band,)))
    return reads


def loaded_estimator(model_dir: str | os.PathLike) -> Any:
    """The estimator saved in ``model_dir``, loaded once per process and version of its ``config.json`` (a model
    saved again there is loaded again): the main job's held-out check, its chunked prediction and an executor's
    chunks all use one loaded model rather than one each."""
    path = Path(model_dir).resolve()
    saved_format(path)  # a folder that holds no saved model is named as such, not as a missing config.json
    key = (str(path), (path / "config.json").stat().st_mtime_ns)
    return _JUST_SAVED[key] if key in _JUST_SAVED else _loaded(*key)


@functools.lru_cache(maxsize=4)
def _loaded(path: str, config_mtime_ns: int) -> Any:
    return load_estimator(path)


def _just_saved(estimator: Any, model_dir: Path) -> None:
    """The estimator saved in ``model_dir`` this moment is what `loaded_estimator` gives for that version of it in
    this process: the job that trained it predicts with it rather than loading it again (and tracing its functions
    again).  The last three saved: a job's model and the companions trained beside it."""
    path = model_dir.resolve()
    _JUST_SAVED[(str(path), (path / "config.json").stat().st_mtime_ns)] = estimator
    while len(_JUST_SAVED) > 3:
        _JUST_SAVED.pop(next(iter(_JUST_SAVED)))


_JUST_SAVED: dict[tuple[str, int], Any] = {}


def confined_model_dir(folder: Path, record_file: Path, model: Any) -> Path:
    """The model folder ``training.json`` names, refused unless it lies inside ``folder``.

    An edited record must not make ``gpal predict`` load (and attribute to this folder) a model kept elsewhere.
    """
    path = folder / model if isinstance(model, str) and model else None
    try:
        inside = path is not None and not Path(model).is_absolute() and path.resolve().is_relative_to(folder.resolve())
    except (RuntimeError, OSError):  # a symbolic link loop (RuntimeError before Python 3.13)
        raise ValueError(f"{path} (field 'model' of {record_file}) is a symbolic link loop; expected the model folder "
                         "gpal saved") from None
    if not inside:
        raise ValueError(
            f"{record_file}: field 'model' must be a folder inside {folder} (as gpal writes, {MODEL_DIR!r} or "
            f"{ESTIMATOR_DIR!r}); got {model!r}; the model folder is corrupt or was edited"
        )
    return path


def load_trained(folder: str | os.PathLike) -> TrainedModel:
    """Open a folder written by `train_catalog_model` (``training.json`` + ``model/``) or `classify_catalog` (its
    ``model/`` folder, found by `gpal.catalog_jobs.layout.located` in either layout)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"model folder {folder} does not exist; give the --out folder of gpal train or gpal classify")
    trained_dir = located(folder, TRAINED_DIR)
    record_file = trained_dir / TRAINING_FILE
    if not record_file.is_file():
        bare = " (it is a bare saved model: predict needs the feature definitions gpal train records)" if (
            folder / "config.json").is_file() else ""
        raise FileNotFoundError(
            f"{folder} is not a trained-model folder: expected {TRAINING_FILE} and {MODEL_DIR}/ in it (gpal train) "
            f"or {TRAINING_RECORD} (gpal classify){bare}; give the --out folder of gpal train or gpal classify"
        )
    training = read_training_record(record_file, checksums=False)
    model_dir = confined_model_dir(trained_dir, record_file, training.get("model", MODEL_DIR))
    check_field_checksums(record_file, training)
    return TrainedModel(folder, model_dir, _drawn_as_saved(training), record_file)


def _names(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) and v for v in value) and len(set(value)) == len(value)


#: The fields of ``training.json`` a reader uses, each with what it must be (as `_training_record` writes them).
_RECORD_FIELDS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "classes": (lambda v: _names(v) and len(v) >= 2, "a list of 2 or more distinct class names"),
    "features": (lambda v: isinstance(v, list) and len(v) >= 1, "a non-empty list of feature definitions"),
    "feature_names": (lambda v: _names(v) and len(v) >= 1, "a non-empty list of distinct column names"),
    "n_per_class": (lambda v: isinstance(v, dict) and all(isinstance(n, int) and n >= 1 for n in v.values()),
                    "a mapping of class -> sources trained on"),
    "catalog": (lambda v: isinstance(v, dict), "a mapping describing the catalog"),
    "estimator": (lambda v: isinstance(v, dict), "a mapping of the estimator's settings"),
}


def read_training_record(record_file: Path, checksums: bool = True) -> dict[str, Any]:
    """``training.json`` read within bounds and checked field by field (`checked_training_record`).  ``checksums``
    False leaves the fields' checksums to the caller (`load_trained` checks the model folder the record names first)."""
    return checked_training_record(read_json(record_file, TRAINING_FILE, damaged="the model folder is corrupt"),
                                   record_file, checksums)


def checked_training_record(training: Any, record_file: Path, checksums: bool = True) -> dict[str, Any]:
    """The training record read from ``record_file``, checked field by field: a damaged or edited record is named
    here, never met later as a KeyError or a table whose columns no longer match the classes."""
    if not isinstance(training, dict) or training.get("format") != TRAINING_FORMAT:
        raise ValueError(f"{record_file} is not a {TRAINING_FORMAT} record (field 'format' is not "
                         f"{TRAINING_FORMAT!r}); the model folder is corrupt")
    missing = [k for k in _RECORD_FIELDS if k not in training]
    if missing:
        raise ValueError(f"{record_file} lacks {missing}; the model folder is corrupt")
    for key, (ok, expected) in _RECORD_FIELDS.items():
        if not ok(training[key]):
            raise ValueError(f"{record_file}: field {key!r} must be {expected}; got {_short(training[key])}; "
                             "the model folder is corrupt or was edited")
    if list(training["n_per_class"]) != training["classes"]:
        raise ValueError(f"{record_file}: field 'classes' is {training['classes']} but 'n_per_class' counts "
                         f"{list(training['n_per_class'])}; the record was edited")
    try:
        resolve_features(training["features"])
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{record_file}: field 'features' must hold feature definitions ({exc}); "
                         "the model folder is corrupt or was edited") from None
    if checksums:  # last: a field of the wrong form is named with what it must be
        check_field_checksums(record_file, training)
        return _drawn_as_saved(training)
    return training


#: The Monte Carlo draws of a feature saved before features recorded theirs (gpal <= 0.4 drew every one 2048 times).
_DRAWS_BEFORE_RECORDED = 2048


def _drawn_as_saved(training: dict[str, Any]) -> dict[str, Any]:
    """The record with each Monte Carlo feature's draws as the model was trained with them, so that an earlier
    gpal's folder predicts a catalog exactly as it classified it (read after the fields' checksums)."""
    features = [dict(f, draws=_DRAWS_BEFORE_RECORDED) if isinstance(f, dict) and f.get("propagation") == "monte_carlo"
                and "draws" not in f else f for f in training["features"]]
    return {**training, "features": features}


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def job_estimator(estimator: Any) -> Any:
    """An unfitted copy of ``estimator`` (the caller's is left as it was), its settings checked now:
    bad settings fail before a catalog is read or a folder claimed."""
    from sklearn.base import clone

    estimator = clone(estimator)
    estimator.validate_params()
    return estimator


Log = Callable[[str], None]


def no_log(message: str) -> None:
    """The default `Log`: library calls say nothing; the command passes one that prints."""


def fit_or_reuse(estimator: Any, data: NoisyDataset, folder: Path, merge: Mapping[str, Sequence[str]], trained_on: str,
                 log: Log, model_dir: str = MODEL_DIR) -> None:
    """Fit and save into the trained-model ``folder`` (the estimator in its ``model_dir``) unless it already holds
    the finished model of this run (then say so)."""
    if (folder / TRAINING_FILE).is_file():
        log(f"reusing the trained model in {folder} (same settings; --force retrains)")
        return
    log(f"training on {data.n_samples} sources ({', '.join(f'{k} {v}' for k, v in data.class_counts().items())}), "
        f"{trained_on}")
    fit_and_save(estimator, data, folder, merge, trained_on, model_dir)


def fit_and_save(estimator: Any, data: NoisyDataset, folder: Path, merge: Mapping[str, Sequence[str]],
                 trained_on: str, model_dir: str = MODEL_DIR) -> Any:
    """Fit, then write the estimator into ``folder / model_dir`` and (last, so it marks completion)
    ``training.json``."""
    t0 = time.perf_counter()
    estimator.fit(data)
    raise_if_interrupted(estimator, "nothing was saved, rerun the same command to start it again")
    seconds = time.perf_counter() - t0
    estimator.save(folder / model_dir)
    _just_saved(estimator, folder / model_dir)
    record = _training_record(data, merge, estimator, trained_on, seconds, model_dir)
    record[MODEL_FILES] = {entry.name: {"bytes": entry.stat().st_size, "sha256": file_sha256(entry)}
                           for entry in sorted((folder / model_dir).iterdir())}
    record[FIELD_CHECKSUMS] = {key: _field_sha256(value) for key, value in record.items()}
    write_json_atomic(folder / TRAINING_FILE, record)
    return estimator


def _field_sha256(value: Any) -> str:
    """The checksum of a field of the record as JSON writes it (a reordered list or mapping differs)."""
    return hashlib.sha256(json.dumps(value, allow_nan=False).encode()).hexdigest()


def check_field_checksums(record_file: Path, training: Mapping[str, Any]) -> None:
    """Every field of the record as gpal wrote it, where the record holds their checksums (gpal <= 0.3's do not)."""
    if FIELD_CHECKSUMS not in training:
        return
    recorded = training[FIELD_CHECKSUMS]
    if not isinstance(recorded, dict) or not all(isinstance(v, str) for v in recorded.values()):
        raise ValueError(f"{record_file}: field {FIELD_CHECKSUMS!r} must map each field to its sha256; got "
                         f"{_short(recorded)}; the model folder is corrupt or was edited")
    edited = [key for key in training if key != FIELD_CHECKSUMS and (
        key not in recorded or _field_sha256(training[key]) != recorded[key])]
    edited += [key for key in recorded if key not in training]
    if edited:
        raise ValueError(
            f"{record_file}: field{'s' if len(edited) > 1 else ''} {', '.join(map(repr, edited))} "
            f"{'are' if len(edited) > 1 else 'is'} not as gpal wrote {'them' if len(edited) > 1 else 'it'} "
            f"(the checksums of field {FIELD_CHECKSUMS!r} differ); the record was edited: train again, or restore it")


def check_model_files(record_file: Path, model_dir: Path, training: Mapping[str, Any]) -> None:
    """The files of ``model_dir`` are those the record ``training`` (read from ``record_file``) was written with
    (sizes first, then checksums): a model saved by another training, or edited where it still loads, is refused."""
    files = training.get(MODEL_FILES)
    if files is None:  # a record of gpal <= 0.3
        return
    ok = isinstance(files, dict) and all(isinstance(v, dict) and isinstance(v.get("bytes"), int)
                                         and isinstance(v.get("sha256"), str) for v in files.values())
    if not ok or not files:
        raise ValueError(f"{record_file}: field {MODEL_FILES!r} must map each file of the model folder to its "
                         f"bytes and sha256; got {_short(files)}; the model folder is corrupt or was edited")
    present = sorted(entry.name for entry in model_dir.iterdir()) if model_dir.is_dir() else []
    if present != sorted(files):
        raise ValueError(f"{model_dir} holds {present} but {record_file} (field {MODEL_FILES!r}) lists "
                         f"{sorted(files)}; the model folder is incomplete or mixes two trainings")
    for name, expected in files.items():
        path = model_dir / name
        size = path.stat().st_size
        if size != expected["bytes"] or file_sha256(path) != expected["sha256"]:
            raise ValueError(
                f"{path} is not the file {record_file} was written with (field {MODEL_FILES!r}[{name!r}]: "
                + (f"{expected['bytes']} bytes, it holds {size}" if size != expected["bytes"] else "its sha256 differs")
                + "); the model folder mixes two trainings or was edited: train again, or restore it")


def require_per_class(data: NoisyDataset, minimum: int, needed_for: str) -> None:
    """Refuse a selection with a class below ``minimum`` sources, before any output folder is claimed."""
    counts = data.class_counts()
    short = {name: n for name, n in counts.items() if n < minimum}
    if short:
        raise ValueError(
            f"too few labelled sources: {', '.join(f'{k} {v}' for k, v in short.items())} "
            f"(all: {', '.join(f'{k} {v}' for k, v in counts.items())}); {needed_for} needs at least {minimum} "
            "per class. Lower --min-significance, choose other classes or a larger catalog"
        )


def check_sizes(estimator: Any, data: NoisyDataset) -> None:
    """The estimator's sizes weighed against ``data`` and the machine (refused or warned of), before a folder is claimed.

    An ``num_inducing`` above the training rows is said: the model uses one inducing point per row, no more.
    """
    estimator.check_sizes(data.n_samples, data.X.shape[1], len(data.class_names))
    if estimator.num_inducing > data.n_samples:
        warnings.warn(f"num_inducing={estimator.num_inducing} is more than the {data.n_samples} training sources; "
                      f"the model uses {data.n_samples} inducing points per class", stacklevel=2)


def open_job(kind: str, selection: CatalogSelection, estimator: Any) -> tuple[Any, NoisyDataset, dict[str, Any]]:
    """The catalog, its labelled data and the run identity shared by `gpal train` and the main job."""
    catalog, data = selection.load()
    check_stop()  # Ctrl-C in a command: the catalog is read, nothing is written
    identity = {"kind": kind, **selection.identity(catalog, data),
                "estimator": estimator_identity(estimator, leave_out=_NOT_IDENTITY)}
    return catalog, data, identity


def train_catalog_model(selection: CatalogSelection, estimator: Any, out_dir: str | os.PathLike, *,
                        force: bool = False, log: Log = no_log) -> Path:
    """Fit ``estimator`` (a copy) on every labelled source of ``selection`` and save it as a trained-model folder.

    Rerunning with the same selection and settings reuses the saved model; others on the
    same folder are refused unless ``force``.  ``log`` receives one line per step.
    Returns the folder.
    """
    estimator = job_estimator(estimator)
    _, data, identity = open_job("gpal.train", selection, estimator)
    require_per_class(data, 1, "training")
    check_sizes(estimator, data)
    folder = claim_output_dir(out_dir, identity, force=force)
    fit_or_reuse(estimator, data, folder, selection.class_groups()[1], "all selected sources", log)
    return folder

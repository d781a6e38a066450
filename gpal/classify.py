"""Classifying catalog sources: trained-model folders, probability tables and the main job.

Three layers, each used by the ``gpal`` command and by workflows:

* a *trained-model folder* (``gpal train``): ``model/`` (the estimator's own
  ``save``) beside ``training.json``, which records what it was trained on (catalog
  release, classes and merges, feature definitions, cuts, sources per class), so
  that predicting on another catalog can check that the features exist there;
* a *probability table* (``gpal predict``): one row per source keyed by
  ``Source_Name``, one ``p_<class>`` column per class, the predicted class, the
  predictive entropy and the sky position, with the catalog and the model recorded
  as metadata (FITS header keywords, or ``# KEY: value`` lines heading a CSV);
* the main job `classify_catalog` (``gpal classify``): train on the associated
  sources, check on a held-out split, classify the unassociated ones, write a report.
"""

from __future__ import annotations

import json
import os
import time
import types
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from gpal.data import NoisyDataset
from gpal.persistence import atomic_output, claim_output_dir, write_json_atomic

__all__ = [
    "ClassifiedSources",
    "TrainedModel",
    "TABLE_FORMATS",
    "check_table_path",
    "classify_catalog",
    "format_class_spec",
    "load_trained",
    "parse_class_spec",
    "predict_catalog",
    "read_probability_table",
    "train_catalog_model",
    "write_classify_report",
    "write_probability_table",
]

_TRAINING = "training.json"
_TRAINING_FORMAT = "gpal.trained_model"
_MODEL = "model"
_HELDOUT = "heldout.csv"
_BASELINES = "heldout_baselines.csv"
_SIGNIFICANCE = "Signif_Avg"
_MODEL_NAME = "gpal"
#: The main job's model and inputs, chosen by the selection study (docs/results.md): on 4FGL-DR4 the
#: MGP with the softmax likelihood on the fermi_dr4 features had the best held-out NLL and calibration;
#: the noisy-input NIMGP did not improve on it with these features (see the study).
DEFAULT_FEATURES = "fermi_dr4"
#: The classifiers a user would otherwise reach for, fitted on the main job's split and features.
DEFAULT_BASELINES = ("logistic", "random_forest_isotonic")
TABLE_FORMATS = {".csv": "csv", ".fits": "fits", ".fit": "fits"}
#: The classes of the main job: blazars of both kinds and pulsars (young and millisecond together).
DEFAULT_MERGE = types.MappingProxyType({"pulsar": ("psr", "msp")})


# ------------------------------------------------------------------ class spec
def parse_class_spec(spec: str) -> tuple[tuple[str, ...], dict[str, tuple[str, ...]]]:
    """``"bll,fsrq,pulsar=psr+msp"`` -> ``(("bll", "fsrq", "pulsar"), {"pulsar": ("psr", "msp")})``.

    Comma-separated classes; a class is a CLASS1 code, or ``name=code+code`` to merge
    codes into one class.  Codes are checked against the catalog when it is used.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError("the class spec is empty; expected e.g. 'bll,fsrq,pulsar=psr+msp'")
    classes: list[str] = []
    merge: dict[str, tuple[str, ...]] = {}
    for item in (part.strip() for part in spec.split(",")):
        name, eq, codes = item.partition("=")
        name = name.strip()
        members = tuple(c.strip().lower() for c in codes.split("+")) if eq else ()
        if not name or (eq and not all(members)) or any(ch in name for ch in "+ "):
            raise ValueError(
                f"bad class {item!r} in class spec {spec!r}: expected CODE or NAME=CODE+CODE "
                "(e.g. 'bll,fsrq,pulsar=psr+msp')"
            )
        if name in classes:
            raise ValueError(f"class {name!r} appears twice in class spec {spec!r}")
        classes.append(name)
        if eq:
            merge[name] = members
    if len(classes) < 2:
        raise ValueError(f"a classifier needs at least two classes; class spec {spec!r} names {classes}")
    return tuple(classes), merge


def format_class_spec(classes: Sequence[str], merge: Mapping[str, Sequence[str]] | None = None) -> str:
    """Inverse of `parse_class_spec`."""
    merge = merge or {}
    return ",".join(f"{c}={'+'.join(merge[c])}" if c in merge else c for c in classes)


# ------------------------------------------------------------- trained models
def _estimator_record(estimator: Any) -> dict[str, Any]:
    """Estimator class and parameters as JSON (objects such as a custom kernel by their type name)."""
    params = {k: v for k, v in estimator.get_params(deep=False).items() if k not in ("progress", "warm_start")}
    params = json.loads(json.dumps(params, default=lambda v: f"<{type(v).__module__}.{type(v).__qualname__}>"))
    return {"class": f"{type(estimator).__module__}.{type(estimator).__qualname__}", "params": params}


def _training_record(data: NoisyDataset, merge: Mapping[str, Sequence[str]], estimator: Any, trained_on: str,
                     fit_seconds: float) -> dict[str, Any]:
    cuts = data.meta.get("cuts", {})
    return {
        "format": _TRAINING_FORMAT,
        "version": 1,
        "model": _MODEL,
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
        "trained_on": trained_on,
        "estimator": _estimator_record(estimator),
        "fit_seconds": round(float(fit_seconds), 2),
    }


@dataclass(frozen=True)
class TrainedModel:
    """A trained-model folder: where the model is, what it was trained on, and the loaded estimator."""

    folder: Path
    model_dir: Path
    training: dict[str, Any]
    estimator: Any

    @property
    def classes(self) -> list[str]:
        return [str(c) for c in self.estimator.classes_]


def load_trained(folder: str | os.PathLike) -> TrainedModel:
    """Open a folder written by `train_catalog_model` or `classify_catalog` (``training.json`` + ``model/``)."""
    from gpal.prediction import load_estimator

    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"model folder {folder} does not exist; give the --out folder of gpal train or gpal classify")
    record_file = folder / _TRAINING
    if not record_file.is_file():
        bare = " (it is a bare saved model: predict needs the feature definitions gpal train records)" if (
            folder / "config.json").is_file() else ""
        raise FileNotFoundError(
            f"{folder} is not a trained-model folder: expected {_TRAINING} and {_MODEL}/ in it{bare}; "
            "give the --out folder of gpal train or gpal classify"
        )
    try:
        training = json.loads(record_file.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{record_file} is not valid JSON ({exc}); the model folder is corrupt") from None
    if not isinstance(training, dict) or training.get("format") != _TRAINING_FORMAT:
        raise ValueError(f"{record_file} is not a {_TRAINING_FORMAT} record; the model folder is corrupt")
    missing = [k for k in ("classes", "features", "feature_names", "catalog", "estimator") if k not in training]
    if missing:
        raise ValueError(f"{record_file} lacks {missing}; the model folder is corrupt")
    model_dir = folder / training.get("model", _MODEL)
    estimator = load_estimator(model_dir)
    if len(training["feature_names"]) != getattr(estimator, "n_features_in_", len(training["feature_names"])):
        raise ValueError(
            f"{folder}: {_TRAINING} lists {len(training['feature_names'])} features but the model in {model_dir} "
            f"takes {estimator.n_features_in_}; the folder mixes two trainings"
        )
    return TrainedModel(folder, model_dir, training, estimator)


def _make_estimator(input_noise: str, likelihood: str, epochs: int, num_inducing: int, batch_size: int, seed: int,
                    progress: bool) -> Any:
    from gpal.classifier import NoisyGPClassifier

    estimator = NoisyGPClassifier(input_noise=input_noise, likelihood=likelihood, epochs=epochs,
                                  num_inducing=num_inducing, batch_size=batch_size, seed=seed, progress=progress)
    estimator._check_params()  # bad settings fail here, before a catalog is read or a folder claimed
    return estimator


def _fit_and_save(estimator: Any, data: NoisyDataset, folder: Path, merge: Mapping[str, Sequence[str]],
                  trained_on: str) -> Any:
    """Fit, then write ``model/`` and (last, so it marks completion) ``training.json``."""
    t0 = time.perf_counter()
    estimator.fit(data)
    if getattr(estimator, "stopped_early_", False):
        raise KeyboardInterrupt("training interrupted; nothing was saved, rerun the same command to start it again")
    seconds = time.perf_counter() - t0
    estimator.save(folder / _MODEL)
    write_json_atomic(folder / _TRAINING, _training_record(data, merge, estimator, trained_on, seconds))
    return estimator


def _merge_for(classes: Sequence[str], merge: Mapping[str, Sequence[str]] | None) -> dict[str, tuple[str, ...]]:
    """The merges to apply: the default one only where its class was chosen; any other as given (then checked)."""
    given = {str(k): (v,) if isinstance(v, str) else tuple(v) for k, v in (merge or {}).items()}
    if given == dict(DEFAULT_MERGE):  # also when a workflow passes the default as plain lists
        return {k: v for k, v in given.items() if k in classes}
    return given


def _labelled(catalog: Any, classes: Sequence[str], merge: Mapping[str, Sequence[str]],
              min_significance: float | None, features: Any) -> NoisyDataset:
    return catalog.dataset(classes=list(classes), merge={k: list(v) for k, v in merge.items()},
                           min_significance=min_significance, features=features)


def _setup(kind: str, catalog: str, classes: Sequence[str], merge: Mapping[str, Sequence[str]] | None,
           min_significance: float | None, features: Any, estimator: Any) -> tuple[Any, dict, NoisyDataset, dict]:
    """Catalog, merge groups, labelled data and the run identity shared by `gpal train` and the main job."""
    from gpal.catalogs import load_catalog

    cat = load_catalog(catalog)
    merge = _merge_for(classes, merge)
    data = _labelled(cat, classes, merge, min_significance, features)
    identity = {
        "kind": kind,
        "catalog": cat.provenance(),
        "class_spec": format_class_spec(data.class_names, merge),
        "min_significance": min_significance,
        "features": data.meta["features"],
        "estimator": _estimator_record(estimator),
    }
    return cat, merge, data, identity


def train_catalog_model(
    out_dir: str | os.PathLike,
    *,
    catalog: str = "4FGL-DR4",
    classes: Sequence[str] = ("bll", "fsrq", "pulsar"),
    merge: Mapping[str, Sequence[str]] | None = DEFAULT_MERGE,
    min_significance: float | None = None,
    features: str | Sequence[Any] | None = DEFAULT_FEATURES,
    input_noise: str = "none",
    likelihood: str = "softmax",
    epochs: int = 300,
    num_inducing: int = 50,
    batch_size: int = 200,
    seed: int = 0,
    force: bool = False,
    progress: bool = True,
) -> Path:
    """Fit a `NoisyGPClassifier` on all selected labelled sources and save it as a trained-model folder.

    Rerunning with the same settings reuses the saved model; other settings on the
    same folder are refused unless ``force``.  Returns the folder.
    """
    estimator = _make_estimator(input_noise, likelihood, epochs, num_inducing, batch_size, seed, progress)
    _, merge, data, identity = _setup("gpal.train", catalog, classes, merge, min_significance, features, estimator)
    folder = claim_output_dir(out_dir, identity, force=force)
    if not (folder / _TRAINING).is_file():
        _fit_and_save(estimator, data, folder, merge, "all selected sources")
    return folder


# ---------------------------------------------------------- probability tables
@dataclass(frozen=True)
class ClassifiedSources:
    """A probability table: one row per source, and the metadata saying where it came from."""

    frame: pd.DataFrame
    meta: dict[str, str]


def _missing_columns(catalog: Any, features: Sequence[Any]) -> list[str]:
    from gpal.catalogs.features import resolve_features

    needed = [c for f in resolve_features(list(features)) for c in f.columns]
    have = set(catalog.table.colnames)
    return [c for c in dict.fromkeys(needed) if c not in have]


def _table_meta(trained: TrainedModel, catalog: Any, pool: NoisyDataset, select: Sequence[str]) -> dict[str, str]:
    """FITS-safe keywords (<= 8 characters), identical in the CSV header."""
    import gpal

    cfg = json.loads((trained.model_dir / "config.json").read_text(encoding="utf-8"))
    t = trained.training
    return {
        "CREATOR": f"gpal {gpal.__version__}",
        "CATALOG": catalog.release,
        "CATVER": catalog.version,
        "CATFILE": catalog.path.name,
        "SELECT": ",".join(select),
        "NSOURCES": str(pool.n_samples),
        "DROPPED": ",".join(pool.meta.get("dropped", {})),
        "MODEL": str(trained.folder.resolve()),
        "MODELFMT": f"{cfg.get('format')} v{cfg.get('version')}",
        "CLASSES": t.get("class_spec", ",".join(t["classes"])),
        "FEATURES": ",".join(t["feature_names"]),
        "TRAINCAT": f"{t['catalog'].get('release')} {t['catalog'].get('version')}",
        "TRAINSEL": json.dumps({"min_significance": t.get("min_significance"), "n_per_class": t.get("n_per_class"),
                                "trained_on": t.get("trained_on")}, sort_keys=True),
        "FITCONF": json.dumps(t["estimator"]["params"], sort_keys=True),
    }


def _select_tokens(select: str | Sequence[str]) -> tuple[str, ...]:
    tokens = [select] if isinstance(select, str) else list(select)
    out: list[str] = []
    for token in tokens:
        out += [t.strip().lower() for t in str(token).split(",") if t.strip()]
    if not out:
        raise ValueError("select must name at least one of 'unassociated', 'bcu', 'all' or a class code")
    return tuple(dict.fromkeys(out))


def _pool(catalog: Any, select: Sequence[str], features: Any) -> NoisyDataset:
    """Sources to classify; ``all`` means every source of the catalog, labelled or not."""
    if "all" in select:
        if len(select) > 1:
            raise ValueError(f"select 'all' already takes every source; do not combine it with {list(select)[1:]}")
        codes = sorted({c or "unassociated" for c in catalog.class_codes})
        return catalog.pool(select=codes, features=features)
    return catalog.pool(select=list(select), features=features)


def predict_catalog(
    model: str | os.PathLike | TrainedModel,
    catalog: Any = "4FGL-DR4",
    select: str | Sequence[str] = ("unassociated",),
    chunk_size: int = 20000,
    executor: Any = None,
    progress: bool = True,
) -> ClassifiedSources:
    """Class probabilities of the selected sources of ``catalog`` (a name, path or `Catalog`).

    ``select``: ``"unassociated"``, ``"bcu"``, other CLASS1 codes, or ``"all"``.
    The catalog must hold every column the model's features are built from.
    Prediction is chunked (``chunk_size`` rows) and runs on ``executor``
    (`gpal.executors.make_executor`; in this process when None).
    """
    from gpal.catalogs import load_catalog
    from gpal.estimator import entropy
    from gpal.prediction import predict_proba_chunked

    trained = model if isinstance(model, TrainedModel) else load_trained(model)
    cat = load_catalog(catalog) if isinstance(catalog, (str, os.PathLike)) else catalog
    missing = _missing_columns(cat, trained.training["features"])
    if missing:
        raise ValueError(
            f"the catalog {cat.path.name} ({cat.release}) lacks column(s) {missing} that the model's features "
            f"{trained.training['feature_names']} are built from; use a catalog with these columns"
        )
    tokens = _select_tokens(select)
    pool = _pool(cat, tokens, trained.training["features"])
    if tuple(pool.feature_names) != tuple(trained.training["feature_names"]):
        raise ValueError(f"catalog features {list(pool.feature_names)} differ from the model's "
                         f"{trained.training['feature_names']}")
    proba, mc_error = predict_proba_chunked(trained.model_dir, pool.X, pool.X_var, chunk_size=chunk_size,
                                            executor=executor, progress=progress, return_mc_error=True)
    classes = trained.classes
    frame = pd.DataFrame({"Source_Name": pool.ids, "CLASS1": pool.aux["CLASS1"]})
    for c, name in enumerate(classes):
        frame[f"p_{name}"] = proba[:, c]
    frame["predicted_class"] = np.asarray(classes, dtype=object)[np.argmax(proba, axis=1)]
    frame["entropy"] = entropy(proba)
    frame["p_mc_se"] = mc_error.max(axis=1)  # the largest Monte Carlo standard error of the row's probabilities
    for column in ("GLON", "GLAT"):
        frame[column] = pool.aux.get(column, np.full(pool.n_samples, np.nan))
    return ClassifiedSources(frame, _table_meta(trained, cat, pool, tokens))


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


# -------------------------------------------------------------------- main job
def classify_catalog(
    out_dir: str | os.PathLike = "gpal-output",
    *,
    catalog: str = "4FGL-DR4",
    classes: Sequence[str] = ("bll", "fsrq", "pulsar"),
    merge: Mapping[str, Sequence[str]] | None = DEFAULT_MERGE,
    min_significance: float | None = None,
    features: str | Sequence[Any] | None = DEFAULT_FEATURES,
    input_noise: str = "none",
    likelihood: str = "softmax",
    epochs: int = 300,
    num_inducing: int = 50,
    batch_size: int = 200,
    test_size: float = 0.2,
    seed: int = 0,
    select: str | Sequence[str] = ("unassociated", "bcu"),
    chunk_size: int = 20000,
    baselines: Sequence[str] = DEFAULT_BASELINES,
    force: bool = False,
    progress: bool = True,
    executor: Any = None,
) -> Path:
    """The main job: train on associated sources, check on a held-out split, classify the rest.

    Trains a `NoisyGPClassifier` on a stratified ``1 - test_size`` share of the
    labelled sources of ``classes`` (``merge`` groups CLASS1 codes into one class),
    scores it on the rest (accuracy, NLL, Brier, ECE, confusion matrix, reliability
    diagram) and, with that same model, classifies the ``select`` sources.  Writes
    into ``out_dir`` the trained-model folder (``model/``, ``training.json``), the
    held-out predictions, ``classifications.csv`` / ``.fits``, figures, ``metrics.json``
    and ``report.md``, whose path it returns.  Rerunning with the same settings
    reuses the saved model; other settings are refused unless ``force``.
    """
    estimator = _make_estimator(input_noise, likelihood, epochs, num_inducing, batch_size, seed, progress)
    if isinstance(test_size, bool) or not isinstance(test_size, (int, float)) or not 0 < test_size < 1:
        raise ValueError(f"test_size must be a fraction in (0, 1); got {test_size!r}")
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
        raise ValueError(f"chunk_size must be an integer >= 1 (rows per prediction task); got {chunk_size!r}")
    cat, merge, data, identity = _setup("gpal.classify", catalog, classes, merge, min_significance, features, estimator)
    tokens = _select_tokens(select)
    _pool(cat, tokens, data.meta["features"])  # an unknown selection fails before training, not after
    from gpal.baselines import BASELINES

    unknown = [b for b in baselines if b not in BASELINES]
    if unknown:
        raise ValueError(f"unknown baseline(s) {unknown}; valid baselines: {list(BASELINES)}")
    identity = {
        **identity,
        "baselines": list(baselines),
        "test_size": test_size,
        "seed": seed,
        "select": list(tokens),
        "chunk_size": chunk_size,
    }
    folder = claim_output_dir(out_dir, identity, force=force)
    train, test = data.split(test_size=test_size, seed=seed, stratify=True)
    if not (folder / _TRAINING).is_file():
        trained_on = f"training split: {train.n_samples} of {data.n_samples} sources, stratified, seed {seed}"
        _fit_and_save(estimator, train, folder, merge, trained_on)
    trained = load_trained(folder)

    proba = trained.estimator.predict_proba(test)
    held = pd.DataFrame({"Source_Name": test.ids, "true_class": test.labels(),
                         _SIGNIFICANCE: _column_of(cat, _SIGNIFICANCE, test.ids)})
    for c, name in enumerate(trained.classes):
        held[f"p_{name}"] = proba[:, c]
    with atomic_output(folder / _HELDOUT) as tmp:
        held.to_csv(tmp, index=False)
    if not (folder / _BASELINES).is_file():
        _write_baselines(folder / _BASELINES, train, test, list(baselines), seed)

    table = predict_catalog(trained, cat, tokens, chunk_size=chunk_size, executor=executor, progress=progress)
    for suffix in (".csv", ".fits"):
        write_probability_table(table, folder / f"classifications{suffix}", force=True)
    return write_classify_report(folder)


def _column_of(catalog: Any, column: str, ids: Sequence[str]) -> np.ndarray:
    """``column`` of the catalog rows named ``ids`` (NaN where the catalog lacks the column)."""
    if column not in catalog.table.colnames:
        return np.full(len(ids), np.nan)
    row = {name: i for i, name in enumerate(catalog.names)}
    values = np.asarray(catalog.table[column], dtype=np.float64)
    return values[[row[name] for name in ids]]


def _write_baselines(path: Path, train: NoisyDataset, test: NoisyDataset, names: Sequence[str], seed: int) -> None:
    """Held-out probabilities of the baselines, fitted on the same training rows and features (values only)."""
    from gpal.baselines import fit_baselines

    probas = fit_baselines(train.X, train.y, test.X, names=list(names), random_state=seed) if names else {}
    frames = []
    for name, proba in probas.items():
        frame = pd.DataFrame({"model": name, "Source_Name": test.ids, "true_class": test.labels()})
        for c, cls in enumerate(test.class_names):
            frame[f"p_{cls}"] = proba[:, c]
        frames.append(frame)
    table = pd.concat(frames) if frames else pd.DataFrame(columns=["model", "Source_Name", "true_class"])
    with atomic_output(path) as tmp:
        table.to_csv(tmp, index=False)


def _comparison(folder: Path, held: pd.DataFrame, classes: Sequence[str], model_name: str) -> pd.DataFrame | None:
    """Paired bootstrap comparison of the model with the baselines on the held-out rows (None without baselines)."""
    from gpal.comparison import bootstrap_comparison

    path = folder / _BASELINES
    base = pd.read_csv(path, dtype={"Source_Name": str, "true_class": str}) if path.is_file() else pd.DataFrame()
    if base.empty:
        return None
    y = np.array([classes.index(c) for c in held["true_class"]], dtype=np.int64)
    columns = [f"p_{c}" for c in classes]
    probas = {model_name: held[columns].to_numpy()}
    for name, rows in base.groupby("model", sort=False):
        rows = rows.set_index("Source_Name").loc[held["Source_Name"]]
        probas[str(name)] = rows[columns].to_numpy()
    return bootstrap_comparison(y, probas, reference=model_name, n_boot=2000, random_state=0)


def _comparison_table(comparison: pd.DataFrame) -> pd.DataFrame:
    """One row per model and metric: value [95% interval] and the paired difference [interval]."""
    def interval(low: float, high: float) -> str:
        return f"[{low:.3f}, {high:.3f}]"

    return pd.DataFrame({
        "model": comparison["model"], "metric": comparison["metric"], "value": comparison["value"].round(4),
        "95% interval": [interval(a, b) for a, b in zip(comparison["low"], comparison["high"])],
        "diff": comparison["diff"].round(4),
        "diff 95% interval": [interval(a, b) for a, b in zip(comparison["diff_low"], comparison["diff_high"])],
    })


def _faintest_quarter(folder: Path, held: pd.DataFrame, classes: Sequence[str]) -> dict[str, Any] | None:
    """NLL and accuracy of the model and each baseline on the held-out quarter of lowest significance.

    The faintest sources have the largest error bars: where a model that uses them should gain most.
    """
    from gpal.metrics import error_rate, negative_log_likelihood

    if _SIGNIFICANCE not in held or not np.isfinite(held[_SIGNIFICANCE]).all():
        return None
    cut = float(np.quantile(held[_SIGNIFICANCE], 0.25))
    faint = held[held[_SIGNIFICANCE] <= cut]
    columns = [f"p_{c}" for c in classes]
    y = np.array([classes.index(c) for c in faint["true_class"]], dtype=np.int64)
    probas = {_MODEL_NAME: faint[columns].to_numpy()}
    path = folder / _BASELINES
    base = pd.read_csv(path, dtype={"Source_Name": str, "true_class": str}) if path.is_file() else pd.DataFrame()
    for name, rows in (base.groupby("model", sort=False) if not base.empty else []):
        probas[str(name)] = rows.set_index("Source_Name").loc[faint["Source_Name"], columns].to_numpy()
    return {"max_significance": cut, "n": int(y.size),
            "models": {name: {"nll": negative_log_likelihood(y, p), "accuracy": 1.0 - error_rate(y, p)}
                       for name, p in probas.items()}}


def _population_shift(frame: pd.DataFrame, classes: Sequence[str], n_per_class: Mapping[str, int]) -> dict[str, Any] | None:
    """The class prior of the classified sources, re-estimated by EM under label shift (a diagnostic)."""
    from gpal.prior_shift import estimate_target_prior

    counts = np.array([float(n_per_class.get(c, 0)) for c in classes])
    if len(frame) == 0 or counts.min() <= 0:
        return None
    source = counts / counts.sum()
    result = estimate_target_prior(frame[[f"p_{c}" for c in classes]].to_numpy(), source)
    adjusted = np.asarray(classes, dtype=object)[result.proba.argmax(axis=1)]
    return {"training_prior": dict(zip(classes, source.round(4).tolist())),
            "estimated_prior": dict(zip(classes, np.round(result.prior, 4).tolist())),
            "n_iter": int(result.n_iter), "converged": bool(result.converged),
            "predicted_after_adjustment": {c: int((adjusted == c).sum()) for c in classes}}


def _counts_table(frame: pd.DataFrame, classes: Sequence[str]) -> pd.DataFrame:
    """Predicted class (rows) against the catalog's CLASS1 (case-folded) of the classified sources (columns)."""
    kinds = frame["CLASS1"].str.lower().replace("", "unassociated")
    rows = []
    for name in classes:
        mine = frame["predicted_class"] == name
        row: dict[str, Any] = {"predicted": name}
        for kind in sorted(kinds.unique()):
            row[kind] = int((mine & (kinds == kind)).sum())
        row["total"] = int(mine.sum())
        rows.append(row)
    return pd.DataFrame(rows)


def write_classify_report(folder: str | os.PathLike) -> Path:
    """(Re)build ``metrics.json``, the tables, figures and ``report.md`` of a `classify_catalog` folder from its files."""
    from gpal.calibration import top_label_reliability
    from gpal.metrics import confusion_matrix
    from gpal.plots import plot_confusion_matrix, plot_reliability, plot_sky_classes, plot_sky_values, save_figure
    from gpal.reports import prediction_metrics, write_report, write_table

    folder = Path(folder)
    needed = [folder / _TRAINING, folder / _HELDOUT, folder / "classifications.csv"]
    missing = [p.name for p in needed if not p.is_file()]
    if missing:
        raise FileNotFoundError(f"{folder} is not a finished gpal classify folder: {missing} missing; rerun gpal classify")
    training = json.loads((folder / _TRAINING).read_text(encoding="utf-8"))
    held = pd.read_csv(folder / _HELDOUT, dtype={"Source_Name": str, "true_class": str})
    classes = [c[2:] for c in held.columns if c.startswith("p_")]
    y = np.array([classes.index(c) for c in held["true_class"]], dtype=np.int64)
    proba = held[[f"p_{c}" for c in classes]].to_numpy()
    n_bins = 15
    scores = prediction_metrics(y, proba, n_bins=n_bins)
    conf = confusion_matrix(y, proba, len(classes))
    table = read_probability_table(folder / "classifications.csv")
    frame = table.frame
    comparison = _comparison(folder, held, classes, _MODEL_NAME)
    faint = _faintest_quarter(folder, held, classes)
    shift = _population_shift(frame, classes, training.get("n_per_class", {}))

    metrics = {
        "heldout": {"n": int(y.size), "accuracy": 1.0 - scores["error"], **scores, "n_bins": n_bins,
                    "confusion": conf.tolist(), "confusion_rows": "predicted", "classes": classes},
        "trained_on": training.get("n_per_class"),
        "fit_seconds": training.get("fit_seconds"),
        "classified": {"n": int(len(frame)), "predicted": frame["predicted_class"].value_counts().to_dict(),
                       "mean_entropy": float(frame["entropy"].mean())},
        "comparison": None if comparison is None else comparison.to_dict(orient="records"),
        "faintest_quarter": faint,
        "population_shift": shift,
        "dropped": {"labelled": training.get("dropped", {}),
                    "classified": [n for n in table.meta.get("DROPPED", "").split(",") if n]},
    }
    write_json_atomic(folder / "metrics.json", metrics)

    figures = {}
    fig = plot_confusion_matrix(conf, classes, title=f"held-out confusion matrix ({y.size} sources)")
    figures["Held-out confusion matrix (rows = predicted class, columns = true class)"] = save_figure(fig, folder / "confusion_matrix")
    fig = plot_reliability(top_label_reliability(y, proba, n_bins=n_bins), title="held-out reliability (top label)")
    figures["Held-out reliability diagram"] = save_figure(fig, folder / "reliability")
    sky = frame[np.isfinite(frame["GLON"]) & np.isfinite(frame["GLAT"])]
    if len(sky):
        codes = np.array([classes.index(c) for c in sky["predicted_class"]], dtype=np.int64)
        fig = plot_sky_classes(sky["GLON"].to_numpy(), sky["GLAT"].to_numpy(), codes, classes,
                               title=f"predicted class of {len(sky)} {table.meta.get('SELECT', '').replace(',', ' + ')} sources")
        figures["Sky map of the predicted classes"] = save_figure(fig, folder / "sky_classes")
        fig = plot_sky_values(sky["GLON"].to_numpy(), sky["GLAT"].to_numpy(), sky["entropy"].to_numpy(),
                              vmin=0.0, vmax=float(np.log(len(classes))), title="predictive entropy (nats)")
        figures["Sky map of the predictive entropy (high = uncertain)"] = save_figure(fig, folder / "sky_entropy")

    h = metrics["heldout"]
    metric_frame = pd.DataFrame([{"n": h["n"], "accuracy": round(h["accuracy"], 4), "nll": round(h["nll"], 4),
                                  "brier": round(h["brier"], 4), "ece": round(h["ece"], 4),
                                  "classwise_ece": round(h["classwise_ece"], 4)}])
    counts = _counts_table(frame, classes)
    uncertain = frame.nlargest(10, "entropy")[["Source_Name", "CLASS1", *[f"p_{c}" for c in classes], "entropy"]].round(3)
    tables = {
        "Held-out metrics": write_table(folder / "heldout_metrics", metric_frame),
        **({} if comparison is None else {
            "Held-out comparison with the baselines (same split and features; 95% paired bootstrap intervals, "
            f"2000 resamples; diff = model - {_MODEL_NAME}, so diff > 0 means {_MODEL_NAME} is better on NLL, ECE "
            "and Brier, worse on accuracy)": write_table(folder / "heldout_comparison", _comparison_table(comparison))}),
        "Classified sources: predicted class by catalog CLASS1": write_table(folder / "predicted_counts", counts),
        "The ten most uncertain classified sources (first candidates for follow-up)":
            write_table(folder / "most_uncertain", uncertain),
    }
    est = training["estimator"]["params"]
    cat = training["catalog"]
    dropped_lab = training.get("dropped", {})
    dropped_pool = metrics["dropped"]["classified"]
    lines = [
        f"Catalog **{table.meta.get('CATALOG')}** ({table.meta.get('CATFILE')}, version {table.meta.get('CATVER')}). "
        f"Classes `{training.get('class_spec')}`; features {', '.join(f'`{f}`' for f in training['feature_names'])}"
        + (", with their catalog error bars as input noise." if est.get("input_noise") != "none" else
           " (the catalog error bars are not used by this model: input_noise `none`)."),
        "",
        f"Model: `{training['estimator']['class']}` with input_noise=`{est.get('input_noise')}`, "
        f"likelihood=`{est.get('likelihood')}`, {est.get('epochs')} epochs, {est.get('num_inducing')} inducing points, "
        f"batch size {est.get('batch_size')}, seed {est.get('seed')}; trained in {training.get('fit_seconds')} s on the "
        f"{training.get('trained_on')} ({', '.join(f'{k} {v}' for k, v in training['n_per_class'].items())}).",
        "",
        f"**Held-out check** ({h['n']} sources never seen in training): accuracy {h['accuracy']:.3f}, "
        f"NLL {h['nll']:.3f} nats, Brier {h['brier']:.3f}, ECE {h['ece']:.3f} ({n_bins} equal-width bins). "
        "The model checked here is the model that classified the sources below (no refit on all labels), "
        "so these numbers describe the table.",
        "",
        *([] if faint is None else [
            f"**Faintest quarter** of the held-out sources (Signif_Avg <= {faint['max_significance']:.1f}, "
            f"{faint['n']} sources, where the error bars are largest): "
            + "; ".join(f"{name} NLL {m['nll']:.3f}, accuracy {m['accuracy']:.3f}" for name, m in faint["models"].items())
            + ".", ""]),
        *([] if shift is None else [
            "**Population shift**: the classified sources are fainter than the training sources and need not share "
            "their class proportions. Under a pure label shift (same p(features | class)), EM re-estimates their "
            "class prior as " + ", ".join(f"{c} {v:.3f}" for c, v in shift["estimated_prior"].items())
            + " (training: " + ", ".join(f"{c} {v:.3f}" for c, v in shift["training_prior"].items())
            + "). The table keeps the unadjusted probabilities; `gpal.prior_shift.adjust_to_prior` applies the "
            "estimate. Every source is forced into one of the trained classes.", ""]),
        f"**Classified**: {len(frame)} sources ({table.meta.get('SELECT')}), "
        + ", ".join(f"{k} {v}" for k, v in metrics["classified"]["predicted"].items())
        + f"; mean predictive entropy {metrics['classified']['mean_entropy']:.3f} nats (max {np.log(len(classes)):.3f}).",
        "",
        "**Rows left out** (NaN or infinite values in a used column): "
        + (f"{len(dropped_lab)} labelled source(s): " + "; ".join(f"{n} ({', '.join(c)})" for n, c in dropped_lab.items())
           if dropped_lab else "no labelled source")
        + "; " + (f"{len(dropped_pool)} source(s) to classify: {', '.join(dropped_pool)}" if dropped_pool
                  else "no source to classify") + ".",
        "",
        "Files: [classifications.csv](classifications.csv) and [classifications.fits](classifications.fits) "
        "(one row per source: `Source_Name`, `CLASS1`, " + ", ".join(f"`p_{c}`" for c in classes)
        + ", `predicted_class`, `entropy`, `p_mc_se` (the largest Monte Carlo standard error of the row's "
        "probabilities), `GLON`, `GLAT`; catalog and model in the header), "
        "[model/](model/) and [training.json](training.json) (reuse with `gpal predict`), "
        "[heldout.csv](heldout.csv), [heldout_baselines.csv](heldout_baselines.csv), [metrics.json](metrics.json).",
        "",
        f"Training catalog {cat.get('release')} {cat.get('version')}; rebuild this page with `gpal report {folder}`.",
    ]
    return write_report(folder, "gpal classify: " + str(table.meta.get("CATALOG")), figures, tables, "\n".join(lines))

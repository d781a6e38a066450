"""Trained-model folders (``gpal train``): the estimator's own ``model/`` beside ``training.json``.

``training.json`` records what the model was trained on (catalog release, classes
and merges, feature definitions, cuts, sources per class), so that predicting on
another catalog can check that the features exist there.
"""

from __future__ import annotations

import functools
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from gpal.catalogs import load_catalog
from gpal.catalogs.classes import format_class_spec
from gpal.catalogs.schemes import DEFAULT_SCHEME, resolve_classes
from gpal.data.dataset import NoisyDataset
from gpal.estimators import load_estimator
from gpal.estimators.base import raise_if_interrupted
from gpal.estimators.noisy_gp import NoisyGPClassifier
from gpal.files import write_json_atomic
from gpal.identity import estimator_identity
from gpal.registry import DEFAULT_LIKELIHOOD
from gpal.runs.output_dir import claim_output_dir

__all__ = ["DEFAULT_FEATURES", "TrainedModel", "load_trained", "require_per_class", "train_catalog_model"]


TRAINING_FILE = "training.json"
TRAINING_FORMAT = "gpal.trained_model"
MODEL_DIR = "model"


#: The main job's model and inputs, chosen by the selection study (docs/results.md): on 4FGL-DR4 the
#: MGP with the softmax likelihood on the fermi_dr4 features had the best held-out NLL and calibration;
#: the noisy-input NIMGP did not improve on it with these features (see the study).
DEFAULT_FEATURES = "fermi_dr4"


#: Estimator parameters that do not decide a trained model: the progress bar, and warm starts (a folder is fitted once).
_NOT_IDENTITY = ("progress", "warm_start")


# ------------------------------------------------------------- trained models
def _training_record(data: NoisyDataset, merge: Mapping[str, Sequence[str]], estimator: Any, trained_on: str,
                     fit_seconds: float) -> dict[str, Any]:
    cuts = data.meta.get("cuts", {})
    return {
        "format": TRAINING_FORMAT,
        "version": 1,
        "model": MODEL_DIR,
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
        "estimator": estimator_identity(estimator, leave_out=_NOT_IDENTITY),
        "fit_seconds": round(float(fit_seconds), 2),
    }


@dataclass(frozen=True)
class TrainedModel:
    """A trained-model folder: where the model is, what it was trained on, and the estimator.

    The estimator (and with it TensorFlow) loads on first use, so that a catalog or a
    selection that does not fit the record is refused first, in a second rather than ten.
    """

    folder: Path
    model_dir: Path
    training: dict[str, Any]

    @functools.cached_property
    def estimator(self) -> Any:
        estimator = load_estimator(self.model_dir)
        names = self.training["feature_names"]
        if len(names) != getattr(estimator, "n_features_in_", len(names)):
            raise ValueError(
                f"{self.folder}: {TRAINING_FILE} lists {len(names)} features but the model in {self.model_dir} "
                f"takes {estimator.n_features_in_}; the folder mixes two trainings"
            )
        return estimator

    @property
    def classes(self) -> list[str]:
        return [str(c) for c in self.estimator.classes_]


def confined_model_dir(folder: Path, record_file: Path, model: Any) -> Path:
    """The model folder ``training.json`` names, refused unless it lies inside ``folder``.

    An edited record must not make ``gpal predict`` load (and attribute to this folder) a model kept elsewhere.
    """
    path = folder / model if isinstance(model, str) and model else None
    if path is None or Path(model).is_absolute() or not path.resolve().is_relative_to(folder.resolve()):
        raise ValueError(
            f"{record_file}: field 'model' must be a folder inside {folder} (as gpal writes, {MODEL_DIR!r}); "
            f"got {model!r}; the model folder is corrupt or was edited"
        )
    return path


def load_trained(folder: str | os.PathLike) -> TrainedModel:
    """Open a folder written by `train_catalog_model` or `classify_catalog` (``training.json`` + ``model/``)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"model folder {folder} does not exist; give the --out folder of gpal train or gpal classify")
    record_file = folder / TRAINING_FILE
    if not record_file.is_file():
        bare = " (it is a bare saved model: predict needs the feature definitions gpal train records)" if (
            folder / "config.json").is_file() else ""
        raise FileNotFoundError(
            f"{folder} is not a trained-model folder: expected {TRAINING_FILE} and {MODEL_DIR}/ in it{bare}; "
            "give the --out folder of gpal train or gpal classify"
        )
    try:
        training = json.loads(record_file.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{record_file} is not valid JSON ({exc}); the model folder is corrupt") from None
    if not isinstance(training, dict) or training.get("format") != TRAINING_FORMAT:
        raise ValueError(f"{record_file} is not a {TRAINING_FORMAT} record; the model folder is corrupt")
    missing = [k for k in ("classes", "features", "feature_names", "catalog", "estimator") if k not in training]
    if missing:
        raise ValueError(f"{record_file} lacks {missing}; the model folder is corrupt")
    return TrainedModel(folder, confined_model_dir(folder, record_file, training.get("model", MODEL_DIR)), training)


def make_catalog_estimator(input_noise: str, likelihood: str, epochs: int, num_inducing: int, batch_size: int, seed: int,
                    progress: bool, input_prior: str = "broad") -> Any:
    estimator = NoisyGPClassifier(input_noise=input_noise, input_prior=input_prior, likelihood=likelihood, epochs=epochs,
                                  num_inducing=num_inducing, batch_size=batch_size, random_state=seed, progress=progress)
    estimator.validate_params()  # bad settings fail here, before a catalog is read or a folder claimed
    return estimator


Log = Callable[[str], None]


def no_log(message: str) -> None:
    """The default `Log`: library calls say nothing; the command passes one that prints."""


def fit_or_reuse(estimator: Any, data: NoisyDataset, folder: Path, merge: Mapping[str, Sequence[str]], trained_on: str,
                 log: Log) -> None:
    """Fit and save unless the folder already holds the finished model of this run (then say so)."""
    if (folder / TRAINING_FILE).is_file():
        log(f"reusing the trained model in {folder} (same settings; --force retrains)")
        return
    log(f"training on {data.n_samples} sources ({', '.join(f'{k} {v}' for k, v in data.class_counts().items())}), "
        f"{trained_on}")
    fit_and_save(estimator, data, folder, merge, trained_on)


def fit_and_save(estimator: Any, data: NoisyDataset, folder: Path, merge: Mapping[str, Sequence[str]],
                  trained_on: str) -> Any:
    """Fit, then write ``model/`` and (last, so it marks completion) ``training.json``."""
    t0 = time.perf_counter()
    estimator.fit(data)
    raise_if_interrupted(estimator, "nothing was saved, rerun the same command to start it again")
    seconds = time.perf_counter() - t0
    estimator.save(folder / MODEL_DIR)
    write_json_atomic(folder / TRAINING_FILE, _training_record(data, merge, estimator, trained_on, seconds))
    return estimator


def _labelled(catalog: Any, classes: Sequence[str], merge: Mapping[str, Sequence[str]],
              min_significance: float | None, features: Any) -> NoisyDataset:
    return catalog.dataset(classes=list(classes), merge={k: list(v) for k, v in merge.items()},
                           min_significance=min_significance, features=features)


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


def setup_job(kind: str, catalog: str, classes: str | Sequence[str], merge: Mapping[str, Sequence[str]] | None,
           min_significance: float | None, features: Any, estimator: Any) -> tuple[Any, dict, NoisyDataset, dict]:
    """Catalog, merge groups, labelled data and the run identity shared by `gpal train` and the main job.

    ``classes`` is a scheme name (`gpal.catalogs.schemes`), a class spec string, or a list of classes
    with ``merge``."""
    classes, merge = resolve_classes(classes, merge)
    cat = load_catalog(catalog)
    data = _labelled(cat, classes, merge, min_significance, features)
    identity = {
        "kind": kind,
        "catalog": cat.provenance(),
        "class_spec": format_class_spec(data.class_names, merge),
        "min_significance": min_significance,
        "features": data.meta["features"],
        "estimator": estimator_identity(estimator, leave_out=_NOT_IDENTITY),
    }
    return cat, merge, data, identity


def train_catalog_model(
    out_dir: str | os.PathLike,
    *,
    catalog: str = "4FGL-DR4",
    classes: str | Sequence[str] = DEFAULT_SCHEME,
    merge: Mapping[str, Sequence[str]] | None = None,
    min_significance: float | None = None,
    features: str | Sequence[Any] | None = DEFAULT_FEATURES,
    input_noise: str = "latent",
    input_prior: str = "population",
    likelihood: str = DEFAULT_LIKELIHOOD,
    epochs: int = 300,
    num_inducing: int = 50,
    batch_size: int = 200,
    seed: int = 0,
    force: bool = False,
    progress: bool = True,
    log: Log = no_log,
) -> Path:
    """Fit a `NoisyGPClassifier` on all selected labelled sources and save it as a trained-model folder.

    Rerunning with the same settings reuses the saved model; other settings on the
    same folder are refused unless ``force``.  ``log`` receives one line per step.
    Returns the folder.
    """
    estimator = make_catalog_estimator(input_noise, likelihood, epochs, num_inducing, batch_size, seed, progress,
                                       input_prior)
    _, merge, data, identity = setup_job("gpal.train", catalog, classes, merge, min_significance, features, estimator)
    require_per_class(data, 1, "training")
    folder = claim_output_dir(out_dir, identity, force=force)
    fit_or_reuse(estimator, data, folder, merge, "all selected sources", log)
    return folder

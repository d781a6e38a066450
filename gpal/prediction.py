"""Predicting with a saved model: load any gpal family, and predict millions of rows in chunks.

A catalog of millions of sources does not fit one ``predict_proba`` call on one
core, so `predict_proba_chunked` cuts the rows into chunks and sends each chunk
through an `Executor` as the task ``(model folder, X rows, X_var rows)``.  A worker
loads the saved model once and keeps it (keyed on the folder and the modification
time of its ``config.json``), so chunks do not reload it.  The model folder must be
readable at the same path on every worker (a shared file system on a cluster).

Each chunk's probabilities depend only on the model and that chunk's rows: the
Monte-Carlo draws of a stochastic prediction are seeded by the estimator's ``seed``
per call, so the result is the same whichever executor runs the chunks and in
whatever order they finish.  It is not bit-identical to one unchunked
``predict_proba`` call for models that predict by Monte Carlo (the draws of a
row depend on its position within the call); it is for deterministic predictions
up to float rounding.
"""

from __future__ import annotations

import functools
import inspect
import json
import numbers
import os
from pathlib import Path
from typing import Any

import numpy as np

from gpal.estimator import check_predict_data
from gpal.executors import Executor, as_executor

__all__ = ["load_estimator", "model_formats", "predict_proba_chunked"]


def model_formats() -> dict[str, type]:
    """Saved-model ``format`` string -> the estimator class that loads it."""
    from gpal import classifier, dirichlet_classifier, logistic_bound_classifier, logistic_softmax_classifier

    return {
        classifier._FORMAT: classifier.NoisyGPClassifier,
        dirichlet_classifier._FORMAT: dirichlet_classifier.DirichletGPClassifier,
        logistic_bound_classifier._FORMAT: logistic_bound_classifier.LogisticBoundGPClassifier,
        logistic_softmax_classifier._FORMAT: logistic_softmax_classifier.LogisticSoftmaxGPClassifier,
    }


def _model_format(path: Path) -> str:
    formats = list(model_formats())
    config = path / "config.json"
    if not config.is_file():
        raise FileNotFoundError(
            f"{path} is not a saved gpal model: it has no config.json (a model folder written by "
            f"an estimator's save(); known formats: {formats})"
        )
    try:
        fmt = json.loads(config.read_text(encoding="utf-8")).get("format")
    except (json.JSONDecodeError, AttributeError) as exc:
        raise ValueError(f"{config} is not a JSON object ({exc}); the saved model is corrupt") from None
    if fmt not in formats:
        raise ValueError(f"{path} holds a model of unknown format {fmt!r}; valid formats are {formats}")
    return fmt


def load_estimator(path: str | os.PathLike) -> Any:
    """The fitted estimator saved in folder ``path``, whichever gpal family wrote it."""
    path = Path(path)
    return model_formats()[_model_format(path)].load(path)


@functools.lru_cache(maxsize=4)
def _cached_estimator(path: str, config_mtime_ns: int) -> Any:
    """One loaded model per (folder, config.json version) per process; a re-saved model is reloaded."""
    return load_estimator(path)


def _estimator_for(path: str) -> Any:
    return _cached_estimator(path, (Path(path) / "config.json").stat().st_mtime_ns)


def _predict_chunk(model_dir: str, X: np.ndarray, X_var: np.ndarray) -> np.ndarray:
    """One chunk as an executor task: probabilities and their Monte Carlo errors, stacked (2, rows, C).

    Families whose predictions involve no Monte Carlo (or do not report it) give zero errors.
    """
    estimator = _estimator_for(model_dir)
    if "return_mc_error" in inspect.signature(estimator.predict_proba).parameters:
        proba, error = estimator.predict_proba(X, X_var, return_mc_error=True)
    else:
        proba = estimator.predict_proba(X, X_var)
        error = np.zeros_like(proba)
    return np.stack([np.asarray(proba, dtype=np.float64), np.asarray(error, dtype=np.float64)])


def predict_proba_chunked(
    model_dir: str | os.PathLike,
    X: Any,
    X_var: Any = None,
    *,
    chunk_size: int = 20000,
    executor: Executor | None = None,
    progress: bool = True,
    return_mc_error: bool = False,
) -> Any:
    """Class probabilities (N, C) of the model saved in ``model_dir``, columns in ``classes_`` order.

    With ``return_mc_error`` also their Monte Carlo standard errors (N, C).  A row's
    probability does not depend on ``chunk_size`` or on the other rows.

    ``X`` (N, d) and ``X_var`` (or a ``NoisyDataset`` as ``X``) are checked against the
    model before any chunk runs.  Rows go in chunks of ``chunk_size`` through
    ``executor`` (in this process if None); the result is in row order whatever
    order the chunks finish in.
    """
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, numbers.Integral) or chunk_size < 1:
        raise ValueError(f"chunk_size must be an integer >= 1 (rows per task); got {chunk_size!r}")
    executor = as_executor(executor)
    path = str(Path(model_dir).resolve())
    _model_format(Path(path))  # a clear error before anything is loaded
    estimator = _estimator_for(path)
    Xa, Va = check_predict_data(X, X_var, estimator.n_features_in_, getattr(estimator, "_needs_X_var", False))
    n = Xa.shape[0]
    if n == 0:
        raise ValueError("predict needs at least one row; X is empty")
    starts = range(0, n, int(chunk_size))
    tasks = [(path, Xa[s : s + chunk_size], Va[s : s + chunk_size]) for s in starts]
    out = np.empty((2, n, len(estimator.classes_)))
    for i, both in executor.map(_predict_chunk, tasks, desc="chunks", progress=progress):
        out[:, starts[i] : starts[i] + both.shape[1]] = both
    return (out[0], out[1]) if return_mc_error else out[0]

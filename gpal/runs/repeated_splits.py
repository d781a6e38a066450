"""Repeated random train/test splits x methods, one resumable unit at a time.

The paper's protocol (100 random 90/10 splits, every method trained on each split,
test NLL / error / confusion averaged over splits) takes hours, so it is cut into
units (split k, method m).  Each finished unit is one small JSON file written
atomically (temp file + ``os.replace``), so an interrupted run loses at most the
unit in flight and a rerun with the same arguments computes only what is missing.

Layout of an output folder::

    out/config.json                       data set fingerprint, seed, test_size, method specs (CONFIG_FILE)
    out/units/<method>/split_0007.json    one finished unit
    out/units/<method>/split_0007.error.json   a unit that raised (on_error="record"); retried on rerun
    out/summary.json, out/summary.md      written by summarize()

The units are independent, so they go through a `gpal.runs.executors.Executor`: in this
process by default, or on a Dask cluster.  Only the driver writes files, each unit
as its result arrives, and every unit draws its randomness from its own seed, so
the results are the same whichever executor ran them.

Standardisation is the estimator's job (``standardize=True``) and sees only the
training split, so nothing from the test rows leaks into a unit.
"""

from __future__ import annotations

import json
import math
import os
import re
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Literal, Mapping, Sequence

import numpy as np

from gpal.constraints import OneOf, Real, check_values
from gpal.data.dataset import NoisyDataset
from gpal.data.splits import Split
from gpal.estimators.base import raise_if_interrupted
from gpal.estimators.noisy_gp import NoisyGPClassifier
from gpal.evaluation.metrics import (confusion_matrix, error_rate, format_mean_se, mean_se, negative_log_likelihood,
                                     proba_by_class)
from gpal.files import write_json_atomic, write_text_atomic
from gpal.identity import check_same_run, dataset_fingerprint, jsonable
from gpal.registry import ON_ERROR
from gpal.runs.executors import Executor, as_executor
from gpal.runs.units import UNITS_DIR, derived_seed, run_units, unit_file

__all__ = [
    "CONFIG_FILE",
    "NOISY_INPUT_METHODS",
    "REPEATED_SPLITS_FOLDER",
    "is_repeated_splits_folder",
    "load_units",
    "select_methods",
    "split_with_injected_noise",
    "run_repeated_splits",
    "summarize",
    "summary_markdown",
    "unit_path",
]

#: The four classifiers of the noisy-input GP paper, as NoisyGPClassifier settings.
NOISY_INPUT_METHODS: dict[str, dict[str, Any]] = {
    "MGP": {"input_noise": "none"},
    "NIMGP": {"input_noise": "latent"},
    "NIMGP-NN": {"input_noise": "amortized"},
    "NIMGP-FO": {"input_noise": "first_order"},
}

MethodSpec = Mapping[str, Any] | Callable[[int], Any]
_NAME_OK = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]*$")


def select_methods(names: Iterable[str], **common: Any) -> dict[str, dict[str, Any]]:
    """NoisyGPClassifier parameter dicts for the named paper methods, each updated with ``common``."""
    names = list(names)
    if not names:
        raise ValueError(f"no methods selected; choose from {list(NOISY_INPUT_METHODS)}")
    unknown = [n for n in names if n not in NOISY_INPUT_METHODS]
    if unknown:
        raise ValueError(f"unknown method(s) {unknown}; valid names are {list(NOISY_INPUT_METHODS)}")
    return {n: {**common, **NOISY_INPUT_METHODS[n]} for n in dict.fromkeys(names)}


#: What a repeated-splits folder is bound to; its methods may grow.
_PROTOCOL = ("dataset", "test_size", "seed", "stratify", "use_variances")
#: The folder's record of its data set, protocol and methods; with the units, what marks the folder.
CONFIG_FILE = "config.json"
#: What marks a repeated-splits folder, in words (``gpal report`` names it when a folder is none of its kinds).
REPEATED_SPLITS_FOLDER = f"a repeated-splits experiment ({CONFIG_FILE} and {UNITS_DIR}/)"


def is_repeated_splits_folder(folder: Path) -> bool:
    """Whether ``folder`` is the output folder of `run_repeated_splits` (finished or not)."""
    return (folder / CONFIG_FILE).is_file() and (folder / UNITS_DIR).is_dir()


# --------------------------------------------------------------------------- files
def _read_json(path: Path) -> Any:
    """A saved JSON file; a damaged one is named, with the way out, instead of a decoder traceback."""
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path} is corrupt ({exc}): delete it and rerun to recompute it") from None


# ------------------------------------------------------------------ identity
def _describe_spec(spec: MethodSpec) -> Any:
    if isinstance(spec, Mapping):
        return jsonable(dict(spec), describe=repr)
    return f"callable {getattr(spec, '__module__', '?')}.{getattr(spec, '__qualname__', repr(spec))}"


def _check_config(out_dir: Path, config: dict[str, Any]) -> None:
    """Refuse to mix results of a different data set / split protocol / method spec in one folder.

    A method the folder does not hold yet is added to it; one it holds must have the same settings.
    """
    path = out_dir / CONFIG_FILE
    if path.exists():
        old = _read_json(path)
        kept = {name: desc for name, desc in old.get("methods", {}).items() if name in config["methods"]}
        check_same_run(
            {**{key: old.get(key) for key in _PROTOCOL}, "methods": kept},
            {**{key: config[key] for key in _PROTOCOL}, "methods": {name: config["methods"][name] for name in kept}},
            str(out_dir), "Use another output folder (or another method name), or delete the old one",
        )
        config = {**config, "methods": {**old.get("methods", {}), **config["methods"]}}
    write_json_atomic(path, config)


# --------------------------------------------------------------------------- units
def _make_estimator(spec: MethodSpec, seed: int) -> Any:
    if isinstance(spec, Mapping):
        params = dict(spec)
        params.setdefault("random_state", seed)
        return NoisyGPClassifier(**params)
    return spec(seed)


def split_with_injected_noise(dataset: NoisyDataset, split: Split, injected_variance: float,
                              unit_seed: int) -> tuple[Any, Any]:
    """The split's train and test rows, with the paper's injected input noise (sec. 5.3) when asked: the rows a unit
    of `run_repeated_splits` fits, so a model of one's own can be fitted on exactly them.

    N(0, injected_variance) in standardised units is N(0, injected_variance * s²) in the data's,
    s the training split's standard deviation per feature; train and test get independent draws,
    seeded by the unit's seed, so every method on a split sees the same noisy rows.
    """
    train, test = dataset.subset(split.train), dataset.subset(split.test)
    if not injected_variance:
        return train, test
    from gpal.data.standardizer import Standardizer
    from gpal.data.synthetic import inject_noise

    per_feature = injected_variance * Standardizer.fit(train).scale ** 2
    return (inject_noise(train, per_feature, seed=derived_seed(unit_seed, 1)),
            inject_noise(test, per_feature, seed=derived_seed(unit_seed, 2)))


def _run_unit(
    dataset: NoisyDataset, split: Split, method: str, spec: MethodSpec, seed: int, use_variances: bool,
    injected_variance: float = 0.0,
) -> dict[str, Any]:
    unit_seed = derived_seed(seed, split.index)  # shared by all methods on a split (common random numbers)
    train, test = split_with_injected_noise(dataset, split, injected_variance, unit_seed)
    estimator = _make_estimator(spec, unit_seed)
    t0 = time.perf_counter()
    estimator.fit(train.X, train.y, X_var=train.X_var if use_variances else None)
    raise_if_interrupted(estimator)
    t1 = time.perf_counter()
    raw = estimator.predict_proba(test.X, X_var=test.X_var if use_variances else None)
    t2 = time.perf_counter()
    return _unit_result(dataset, split, method, estimator, unit_seed, raw, t1 - t0, t2 - t1)


def _run_batch(names: list[str], dataset: NoisyDataset, splits: list[Split], method: str, spec: MethodSpec, seed: int,
               use_variances: bool, injected_variance: float = 0.0) -> list[dict[str, Any] | Exception]:
    """The units of one method on several splits, trained as one batched model where the method allows.

    Each unit's training and prediction times are its share of the batch's.  A method that
    cannot be batched (``NotBatchable``: a callable spec, early stopping, ...) runs one unit at a time.
    """
    from gpal.estimators.batched import NotBatchable, fit_batched, predict_proba_batched

    seeds = [derived_seed(seed, split.index) for split in splits]
    estimators = [_make_estimator(spec, s) for s in seeds]
    trains, tests = map(list, zip(*[split_with_injected_noise(dataset, split, injected_variance, s) for split, s in zip(splits, seeds)]))
    t0 = time.perf_counter()
    try:
        fitted = fit_batched(estimators, [(t.X, t.y, t.X_var if use_variances else None) for t in trains],
                             errors="return")
    except NotBatchable:
        return [_unit_or_error(dataset, split, method, spec, seed, use_variances, injected_variance) for split in splits]
    t1 = time.perf_counter()
    done = [k for k, f in enumerate(fitted) if not isinstance(f, Exception)]
    for k in done:
        raise_if_interrupted(estimators[k])
    probas = predict_proba_batched([estimators[k] for k in done], [tests[k].X for k in done],
                                   [tests[k].X_var if use_variances else None for k in done])
    t2 = time.perf_counter()
    results: list[dict[str, Any] | Exception] = list(fitted)
    for k, raw in zip(done, probas):
        results[k] = _unit_result(dataset, splits[k], method, estimators[k], seeds[k], raw,
                                  (t1 - t0) / len(splits), (t2 - t1) / max(1, len(done)))
    return results


def _unit_or_error(*args: Any) -> dict[str, Any] | Exception:
    try:
        return _run_unit(*args)
    except Exception as exc:  # noqa: BLE001 - reported per unit by the runner
        return exc


def _unit_result(dataset: NoisyDataset, split: Split, method: str, estimator: Any, unit_seed: int, raw: np.ndarray,
                 train_seconds: float, predict_seconds: float) -> dict[str, Any]:
    test = dataset.subset(split.test)
    classes = getattr(estimator, "classes_", range(np.shape(raw)[-1]))  # a user's estimator may keep none
    proba = proba_by_class(raw, classes, range(dataset.n_classes))
    return {
        "method": method,
        "split": split.index,
        "estimator_seed": unit_seed,
        "n_train": len(split.train),
        "n_test": test.n_samples,
        "nll": negative_log_likelihood(test.y, proba),
        "error": error_rate(test.y, proba),
        "confusion": confusion_matrix(test.y, proba, dataset.n_classes).tolist(),
        "confusion_rows": "predicted",
        "train_seconds": train_seconds,
        "predict_seconds": predict_seconds,
        **_fit_report(estimator),
        "test_ids": test.ids.tolist(),
        "y_true": test.y.tolist(),
        "proba": proba.tolist(),
    }


def _fit_report(estimator: Any) -> dict[str, Any]:
    """An iterative fit's own account where its estimator keeps one (scikit-learn's ``n_iter_``; ``converged_``), so
    that a run capped at some iterations says whether the cap bound it."""
    report: dict[str, Any] = {}
    n_iter = getattr(estimator, "n_iter_", None)
    if n_iter is not None:
        report["n_iter"] = int(np.max(n_iter))  # scikit-learn's is one count or one per class or fold
    converged = getattr(estimator, "converged_", None)
    if converged is not None:
        report["converged"] = bool(converged)
    return report


def _unit_name(method: str, split: int) -> str:
    return f"{method}/split_{split:04d}"


def unit_path(out_dir: str | os.PathLike, method: str, split: int) -> Path:
    """Where the result of (split, method) lives."""
    return unit_file(out_dir, _unit_name(method, split))


def run_repeated_splits(
    dataset: NoisyDataset,
    methods: Mapping[str, MethodSpec],
    out_dir: str | os.PathLike,
    n_splits: int = 100,
    test_size: float = 0.1,
    seed: int = 0,
    stratify: bool = True,
    use_variances: bool = True,
    on_error: Literal["raise", "record"] = "raise",
    progress: bool = True,
    executor: Executor | None = None,
    models_per_batch: int = 1,
    injected_variance: float = 0.0,
) -> dict[str, Any]:
    """Run every (split, method) unit not already on disk, then return ``summarize(out_dir)``.

    ``methods`` maps a name to either a dict of NoisyGPClassifier parameters or a
    callable ``seed -> unfitted estimator`` with ``fit(X, y, X_var=...)`` and
    ``predict_proba(X, X_var=...)``.  Splits come from ``dataset.repeated_splits``
    so the same seed gives the same splits.  Units go to ``executor.map`` (in this
    process, in split order with all methods per split, when ``executor`` is None);
    each result is written the moment it arrives, so an interrupted run keeps every
    finished unit.  The executor is not closed here.
    With ``on_error="record"`` a unit that raises is logged to an ``.error.json``
    file and skipped (retried on the next run) instead of stopping the run.
    ``models_per_batch`` > 1 trains up to that many splits of one method together as one batched
    model (``gpal.estimators.batched``; same results up to rounding), a task per batch; a method
    that cannot be batched runs its units one at a time inside the task.
    ``injected_variance`` > 0 adds Gaussian input noise of that variance, in units of the training
    split's standard deviation, to the train and test rows of every split (paper 001, sec. 5.3).
    """
    if not dataset.is_labelled:
        raise ValueError("run_repeated_splits needs a labelled data set")
    if isinstance(n_splits, bool) or not isinstance(n_splits, (int, np.integer)) or n_splits < 1:
        raise ValueError(f"n_splits (K) must be an integer >= 1; got {n_splits!r}")
    check_values({"on_error": OneOf(ON_ERROR), "injected_variance": Real(0)},
                 {"on_error": on_error, "injected_variance": injected_variance})
    if not methods:
        raise ValueError("methods is empty; give at least one name -> estimator spec")
    for name, spec in methods.items():
        if not isinstance(name, str) or not _NAME_OK.match(name):
            raise ValueError(f"method name {name!r} must be letters, digits, '_', '.', '+' or '-' (it names a folder)")
        if not (isinstance(spec, Mapping) or callable(spec)):
            raise TypeError(f"method {name!r}: spec must be a parameter dict or a callable seed -> estimator")

    executor = as_executor(executor)
    out = Path(out_dir)
    splits = list(dataset.repeated_splits(n_splits, test_size=test_size, seed=seed, stratify=stratify))
    _check_config(
        out,
        {
            "dataset": dataset_fingerprint(dataset),
            "test_size": test_size,
            "seed": seed,
            "stratify": stratify,
            "use_variances": use_variances,
            "methods": {name: _describe_spec(spec) for name, spec in methods.items()},
            **({"injected_variance": injected_variance} if injected_variance else {}),
        },
    )
    units = {_unit_name(name, split.index): (dataset, split, name, methods[name], seed, use_variances, injected_variance)
             for split in splits for name in methods}
    test_ids = {split.index: dataset.ids[split.test].tolist() for split in splits}

    def same_split(unit: str, result: dict[str, Any]) -> None:
        if result.get("test_ids") != test_ids[result.get("split")]:
            raise ValueError(f"{unit_file(out, unit)} was computed on a different test split; this folder is stale, delete it")

    if isinstance(models_per_batch, bool) or not isinstance(models_per_batch, (int, np.integer)) or models_per_batch < 1:
        raise ValueError(f"models_per_batch must be an integer >= 1; got {models_per_batch!r}")

    def batches(todo: list[str]) -> list[tuple[list[str], Callable[..., list[Any]], tuple]]:
        planned = []
        for name in methods:
            mine = [unit for unit in todo if units[unit][2] == name]
            for start in range(0, len(mine), models_per_batch):
                group = mine[start:start + models_per_batch]
                planned.append((group, _run_batch, (dataset, [units[u][1] for u in group], name, methods[name], seed,
                                                    use_variances, injected_variance)))
        return planned

    run_units(executor, _run_unit, units, out, desc="units", progress=progress, on_error=on_error, check=same_split,
              batches=batches if models_per_batch > 1 else None)
    return summarize(out, methods=list(methods), splits=[s.index for s in splits])


# ------------------------------------------------------------------------ summary
def load_units(out: Path, method: str, splits: Sequence[int] | None) -> dict[int, dict[str, Any]]:
    """A finished run's per-split results of ``method`` (split index -> unit record; ``splits`` None: all), the
    numbers `summarize` averages, for an analysis of the splits themselves (paired differences, one split's fit)."""
    folder = out / UNITS_DIR / method
    units = {}
    for path in sorted(folder.glob("split_*.json")):
        if path.name.endswith(".error.json"):
            continue
        result = _read_json(path)
        if splits is None or result["split"] in splits:
            units[result["split"]] = result
    return units


def _stat(values: Sequence[float]) -> dict[str, float | None]:
    m, se = mean_se(np.asarray(values, dtype=np.float64))
    return {"mean": m, "se": None if not math.isfinite(se) else se}


def summarize(
    out_dir: str | os.PathLike,
    methods: Sequence[str] | None = None,
    splits: Sequence[int] | None = None,
    common_splits_only: bool = True,
    write: bool = True,
) -> dict[str, Any]:
    """Mean ± SE of test NLL, error and timings, and the mean confusion matrix, per method.

    By default only splits finished by *every* method are used, so an interrupted
    run still compares methods on identical test sets.  Writes ``summary.json`` and
    ``summary.md`` into ``out_dir`` unless ``write=False``.
    """
    out = Path(out_dir)
    config = _read_json(out / CONFIG_FILE)
    names = list(methods) if methods is not None else list(config["methods"])
    units = {m: load_units(out, m, splits) for m in names}
    done = {m: set(u) for m, u in units.items()}
    common = set.intersection(*done.values()) if done else set()
    class_names = config["dataset"]["class_names"]
    summary: dict[str, Any] = {
        "class_names": class_names,
        "confusion_rows": "predicted",
        "common_splits_only": common_splits_only,
        "n_common_splits": len(common),
        "methods": {},
    }
    for m in names:
        use = sorted(common if common_splits_only else done[m])
        failed = len(list((out / UNITS_DIR / m).glob("split_*.error.json")))
        entry: dict[str, Any] = {"n_splits": len(use), "n_failed": failed, "splits": use}
        if use:
            rows = [units[m][k] for k in use]
            conf = np.asarray([r["confusion"] for r in rows], dtype=np.float64)
            conf_mean, conf_se = mean_se(conf, axis=0)
            entry.update(
                nll=_stat([r["nll"] for r in rows]),
                error=_stat([r["error"] for r in rows]),
                train_seconds=_stat([r["train_seconds"] for r in rows]),
                predict_seconds=_stat([r["predict_seconds"] for r in rows]),
                n_test=_stat([r["n_test"] for r in rows]),
                confusion_mean=conf_mean.tolist(),
                confusion_se=None if len(use) < 2 else conf_se.tolist(),
            )
        summary["methods"][m] = entry
    if write:
        write_json_atomic(out / "summary.json", summary)
        write_text_atomic(out / "summary.md", summary_markdown(summary))
    return summary


def summary_markdown(summary: Mapping[str, Any], digits: int = 3) -> str:
    """Markdown tables: metrics per method and the mean confusion matrix per method, rows = predicted, columns =
    true (paper Table 10 layout)."""
    import pandas as pd

    from gpal.evaluation.reports import markdown_table

    def cell(stat: Mapping[str, Any] | None, d: int = digits) -> str:
        if not stat:
            return "–"
        return format_mean_se(stat["mean"], float("nan") if stat["se"] is None else stat["se"], d)

    methods = summary["methods"]
    metrics = pd.DataFrame({
        "method": list(methods),
        "splits": [e["n_splits"] for e in methods.values()],
        "test NLL": [cell(e.get("nll")) for e in methods.values()],
        "test error": [cell(e.get("error")) for e in methods.values()],
        "train s / split": [cell(e.get("train_seconds"), 1) for e in methods.values()],
        "predict s / split": [cell(e.get("predict_seconds"), 2) for e in methods.values()],
    })
    lines = [markdown_table(metrics).rstrip("\n")]
    failed = {n: e["n_failed"] for n, e in methods.items() if e["n_failed"]}
    if failed:
        lines += ["", f"Failed units (excluded, retried on the next run): {failed}"]

    classes = summary["class_names"]
    rows = []
    for i, pred in enumerate(classes):
        for name, e in methods.items():
            if "confusion_mean" not in e:
                continue
            se = e["confusion_se"]
            rows.append([f"{pred} (pred.)", name] + [
                format_mean_se(e["confusion_mean"][i][j], float("nan") if se is None else se[i][j], 2)
                for j in range(len(classes))
            ])
    confusion = pd.DataFrame(rows, columns=["predicted", "method", *(f"{c} (true)" for c in classes)])
    lines += ["", "Mean confusion matrix over splits (± SE), rows = predicted class, columns = true class:", "",
              markdown_table(confusion).rstrip("\n")]
    return "\n".join(lines) + "\n"

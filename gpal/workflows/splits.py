"""Workflow kind ``repeated_splits``: a catalog selection, the paper's classifiers, K random splits.

The 4FGL reproduction of the noisy-input GP paper (Tables 9-10) is this kind.  The
units are `gpal.runs.repeated_splits.run_repeated_splits`'s (split, method) files; on top of
its ``summary.json`` / ``summary.md`` this writes a tidy ``results.csv`` (one row
per unit), the metric table, mean confusion matrices and pooled reliability
diagrams per method, and ``report.md``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pandas as pd

from gpal.constraints import Boolean, Integer, OneOf, Real
from gpal.evaluation.calibration import top_label_reliability
from gpal.files import atomic_output
from gpal.registry import MODELS_PER_BATCH, ON_ERROR
from gpal.runs.executors import Executor
from gpal.runs.repeated_splits import run_repeated_splits, summarize, summary_markdown, unit_path
from gpal.workflows import WORKFLOW_FILE
from gpal.workflows.methods import classifier_params, methods_field, training_schema
from gpal.workflows.measurements import Produced, write_measurements
from gpal.workflows.schema import Field, fields_from_settings

__all__ = ["dataset_and_training_size", "produces", "rebuild_splits_report", "run", "schema", "write_splits_report"]

#: The ``data`` block (a `gpal.catalog_jobs.selection.CatalogSelection`) where it differs from the main job's:
#: the paper's 454 4FGL sources above 30 sigma of three classes and its six features (None: the 'default' preset).
DATA = {"catalog": "4FGL", "classes": ["bll", "fsrq", "psr"], "min_significance": 30.0, "features": None}


#: The metrics of a unit its measurements hold.
METRICS = ("nll", "error", "train_seconds")


def schema() -> dict[str, Any]:
    from gpal.catalog_jobs.selection import CatalogSelection

    return {
        "data": fields_from_settings(CatalogSelection.settings(), **DATA),
        "methods": methods_field(),
        "protocol": {
            "splits": Field(Integer(1), 100, "random train/test splits K", part_of_run=False),
            "test_size": Field(Real(0, 1, low_open=True, high_open=True), 0.1, "test fraction per split"),
            "stratify": Field(Boolean(), True, "stratify splits by class"),
            "use_variances": Field(Boolean(), True, "pass the catalog's feature variances to the classifiers"),
            "on_error": Field(OneOf(ON_ERROR), "record", "record a failing unit and go on, or stop"),
            "models_per_batch": Field(Integer(1), MODELS_PER_BATCH, "splits of one method trained together as one "
                                      "batched model (1: one at a time; same results)", part_of_run=False),
        },
        "training": training_schema(num_inducing="auto"),
    }


def produces(config: Mapping[str, Any]) -> Produced:
    """One setting, the catalog; the configured methods; the metrics of a unit."""
    return Produced([config["data"]["catalog"]], config["methods"], METRICS)


def dataset_and_training_size(config: Mapping[str, Any]) -> tuple[Any, int]:
    """The catalog selection a ``repeated_splits`` configuration names, loaded, and the rows of its training split:
    the data and the size (``num_inducing: auto`` reads it) that a model of one's own needs to match the run."""
    from gpal.catalog_jobs.selection import CatalogSelection

    protocol = config["protocol"]
    _, dataset = CatalogSelection(**config["data"]).load()
    return dataset, dataset.n_samples - next(dataset.repeated_splits(1, protocol["test_size"], config["seed"])).test.size


def check(config: Mapping[str, Any]) -> None:
    """The catalog, its classes and the first split, before the output folder is claimed."""
    dataset_and_training_size(config)


def run(config: dict[str, Any], out: Path, executor: Executor, progress: bool) -> None:
    protocol = config["protocol"]
    dataset, n_train = dataset_and_training_size(config)
    summary = run_repeated_splits(
        dataset,
        classifier_params(config["methods"], config["training"], n_train, dataset.n_samples),
        out,
        n_splits=protocol["splits"],
        test_size=protocol["test_size"],
        seed=config["seed"],
        stratify=protocol["stratify"],
        use_variances=protocol["use_variances"],
        on_error=protocol["on_error"],
        progress=progress,
        executor=executor,
        models_per_batch=protocol["models_per_batch"],
    )
    _report(config, out, summary, f"{dataset}")


def _measured(out: Path, summary: Mapping[str, Any], setting: str) -> dict[tuple[str, str, str], list[float]]:
    measured: dict[tuple[str, str, str], list[float]] = {}
    for method, entry in summary["methods"].items():
        for k in entry["splits"]:
            unit = json.loads(unit_path(out, method, k).read_text(encoding="utf-8"))
            for metric in METRICS:
                measured.setdefault((setting, method, metric), []).append(unit[metric])
    return measured


def _report(config: dict[str, Any], out: Path, summary: dict[str, Any], data_line: str) -> None:
    intro = "\n".join([
        config["description"] or "", "",
        f"Data: {data_line}. Splits: {config['protocol']['splits']} (test fraction {config['protocol']['test_size']}), "
        f"seed {config['seed']}. Units, `summary.json` and a row per unit in `results.csv` are in this folder.",
    ])
    budget = {"splits": config["protocol"]["splits"], "epochs": config["training"]["epochs"]}
    write_measurements(out, config, produces(config), _measured(out, summary, config["data"]["catalog"]), budget)
    write_splits_report(out, summary, config["title"], intro)


def write_splits_report(
    out: Path, summary: dict[str, Any], title: str, intro: str = ""
) -> Path:
    """``results.csv`` (a row per unit), mean confusion matrices, pooled reliability and ``report.md``.

    ``summary`` is `gpal.runs.repeated_splits.summarize` of the folder ``out``.  Used by the workflow and by
    ``gpal report`` on any repeated-splits folder.
    """
    from gpal.evaluation.plots import plot_confusion_matrix, plot_reliability, save_figure
    from gpal.evaluation.reports import write_report

    rows, pooled = [], {}
    for method, entry in summary["methods"].items():
        y, p = [], []
        for k in entry["splits"]:
            unit = json.loads(unit_path(out, method, k).read_text(encoding="utf-8"))
            rows.append({key: unit[key] for key in ("method", "split", "n_train", "n_test", "nll", "error",
                                                   "train_seconds", "predict_seconds")})
            y.append(np.asarray(unit["y_true"]))
            p.append(np.asarray(unit["proba"]))
        if y:
            pooled[method] = top_label_reliability(np.concatenate(y), np.concatenate(p))
    with atomic_output(out / "results.csv") as tmp:
        pd.DataFrame(rows).to_csv(tmp, index=False)

    figures = {}
    classes = summary["class_names"]
    for method, entry in summary["methods"].items():
        if "confusion_mean" not in entry:
            continue
        spread = None if entry["confusion_se"] is None else np.asarray(entry["confusion_se"])
        fig = plot_confusion_matrix(np.asarray(entry["confusion_mean"]), classes, spread=spread,
                                    title=f"{method}: mean over {entry['n_splits']} splits (± SE)")
        figures[f"Mean confusion matrix, {method}"] = save_figure(fig, out / f"confusion_{method}")
    if pooled:
        fig = plot_reliability(pooled, title="top-label reliability, test points of all splits")
        figures["Reliability (pooled over splits)"] = save_figure(fig, out / "reliability")
    text = "\n".join([intro, "", "## Test NLL and error (mean ± SE over splits)", "", summary_markdown(summary)])
    return write_report(out, title, figures=figures, text=text)


def rebuild_splits_report(folder: Path) -> Path:
    """`write_splits_report` of any repeated-splits folder, from its files (``gpal report``).

    A folder written by ``gpal workflow`` keeps its title and description in `WORKFLOW_FILE`.
    """
    workflow = json.loads((folder / WORKFLOW_FILE).read_text()) if (folder / WORKFLOW_FILE).is_file() else {}
    return write_splits_report(
        folder,
        summarize(folder),
        workflow.get("title") or "gpal repeated-splits experiment",
        workflow.get("description") or "",
    )

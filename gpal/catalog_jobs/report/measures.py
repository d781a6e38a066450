"""The report's numbers: the held-out check with its intervals, the comparison with the baselines, the
faintest quarter, the population shift and the Monte Carlo noise; `run_metrics` gathers them for ``metrics.json``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from gpal.catalog_jobs.layout import SIGNIFICANCE_COLUMN
from gpal.catalog_jobs.pool_prior import held_classes
from gpal.catalog_jobs.proba_columns import MC_ERROR_COLUMN, proba_columns, proba_of
from gpal.catalog_jobs.report.inputs import FinishedRun
from gpal.catalog_jobs.tables import EXTENDED
from gpal.catalogs import Feature, repaired_how, repaired_text
from gpal.evaluation.comparison import bootstrap_comparison
from gpal.evaluation.intervals import binomial_interval
from gpal.evaluation.metrics import confusion_matrix, error_rate, negative_log_likelihood
from gpal.evaluation.prior_shift import estimate_target_prior
from gpal.evaluation.reports import completeness_purity, prediction_metrics

__all__ = ["ERROR_BLIND_MODEL", "LEVEL", "MODEL_NAME", "N_BINS", "HeldOutCheck", "measure", "run_metrics"]

MODEL_NAME = "gpal"
#: The main job's GP refitted with input_noise "none" on the same rows: the model minus its error bars.
ERROR_BLIND_MODEL = "gpal without error bars"
LEVEL = 0.95
#: Equal-width bins of the held-out calibration error and reliability diagram.
N_BINS = 15


@dataclass(frozen=True)
class HeldOutCheck:
    """The held-out predictions measured, beside the baselines'."""

    scores: dict[str, float]
    #: Confusion matrix: rows = predicted class, columns = true class.
    conf: np.ndarray
    #: Paired bootstrap of the model and each baseline: one row per model and metric.
    comparison: pd.DataFrame
    #: 95% interval of each metric (Jeffreys binomial for accuracy, bias-corrected bootstrap for the others).
    intervals: dict[str, list[float]]
    #: Completeness and purity per class with their intervals.
    per_class: pd.DataFrame
    faint: dict[str, Any] | None

    @property
    def correct(self) -> int:
        return int(np.trace(self.conf))


def _model_rows(comparison: pd.DataFrame) -> pd.DataFrame:
    """The model's own rows of the comparison, indexed by metric."""
    return comparison[comparison["model"] == MODEL_NAME].set_index("metric")


def _comparison(run: FinishedRun) -> pd.DataFrame:
    """Paired bootstrap intervals of the model's held-out metrics, and of each baseline's beside it."""
    base, held, classes = run.baselines, run.held, run.classes
    columns = proba_columns(classes)
    probas = {MODEL_NAME: held[columns].to_numpy()}
    for name, rows in (base.groupby("model", sort=False) if not base.empty else []):
        rows = rows.set_index("Source_Name").loc[held["Source_Name"]]
        probas[str(name)] = rows[columns].to_numpy()
    comparison = bootstrap_comparison(run.y, probas, reference=MODEL_NAME, n_boot=2000, random_state=0)
    # one interval method per statistic: accuracy, a count of correct sources, gets its binomial interval everywhere
    n = run.y.size
    for i in np.flatnonzero(comparison["metric"].to_numpy() == "accuracy"):
        correct = int(round(comparison.at[i, "value"] * n))
        comparison.loc[i, ["low", "high"]] = [float(b) for b in binomial_interval(correct, n, LEVEL)]
    return comparison


def _faintest_quarter(run: FinishedRun) -> dict[str, Any] | None:
    """NLL and accuracy of the model and each baseline on the held-out quarter of lowest significance.

    The faintest sources have the largest error bars: where a model that uses them should gain most.
    """
    held, classes = run.held, run.classes
    if SIGNIFICANCE_COLUMN not in held or not np.isfinite(held[SIGNIFICANCE_COLUMN]).all():
        return None
    cut = float(np.quantile(held[SIGNIFICANCE_COLUMN], 0.25))
    faint = held[held[SIGNIFICANCE_COLUMN] <= cut]
    columns = proba_columns(classes)
    y = np.array([classes.index(c) for c in faint["true_class"]], dtype=np.int64)
    probas = {MODEL_NAME: faint[columns].to_numpy()}
    base = run.baselines
    for name, rows in (base.groupby("model", sort=False) if not base.empty else []):
        probas[str(name)] = rows.set_index("Source_Name").loc[faint["Source_Name"], columns].to_numpy()
    return {"max_significance": cut, "n": int(y.size),
            "models": {name: {"nll": negative_log_likelihood(y, p), "accuracy": 1.0 - error_rate(y, p)}
                       for name, p in probas.items()}}


def measure(run: FinishedRun) -> HeldOutCheck:
    """Scores, confusion matrix, intervals, completeness and purity, comparison and faintest quarter."""
    scores = prediction_metrics(run.y, run.proba, n_bins=N_BINS)
    conf = confusion_matrix(run.y, run.proba, len(run.classes))
    comparison = _comparison(run)
    mine = _model_rows(comparison)
    intervals = {m: [float(mine.at[m, "low"]), float(mine.at[m, "high"])] for m in mine.index}
    return HeldOutCheck(scores, conf, comparison, intervals, completeness_purity(conf, run.classes, LEVEL),
                        _faintest_quarter(run))


def _population_shift(frame: pd.DataFrame, classes: Sequence[str], n_per_class: Mapping[str, int],
                      merge: Mapping[str, Sequence[str]]) -> dict[str, Any] | None:
    """The class prior of the classified sources, re-estimated by EM under label shift (a diagnostic), the other
    populations held at their training share as the pool prior holds them (`held_classes`)."""
    counts = np.array([float(n_per_class.get(c, 0)) for c in classes])
    if len(frame) == 0 or counts.min() <= 0:
        return None
    source = counts / counts.sum()
    held = held_classes(classes, merge)
    result = estimate_target_prior(proba_of(frame, classes), source, held=held if held.any() else None)
    adjusted = np.asarray(classes, dtype=object)[result.proba.argmax(axis=1)]
    return {"training_prior": dict(zip(classes, source.round(4).tolist())),
            "estimated_prior": dict(zip(classes, np.round(result.prior, 4).tolist())),
            "n_iter": int(result.n_iter), "converged": bool(result.converged),
            "predicted_after_adjustment": {c: int((adjusted == c).sum()) for c in classes}}


def _mc_noise(frame: pd.DataFrame, classes: Sequence[str]) -> dict[str, Any]:
    """Monte Carlo noise of the probabilities, and the sources whose top two classes it could swap."""
    proba = np.sort(proba_of(frame, classes), axis=1)
    se = frame[MC_ERROR_COLUMN].to_numpy() if MC_ERROR_COLUMN in frame else np.zeros(len(frame))
    unsettled = (proba[:, -1] - proba[:, -2]) < 2.0 * se if len(classes) > 1 else np.zeros(len(frame), dtype=bool)
    return {"median_se": float(np.median(se)) if se.size else 0.0, "max_se": float(se.max()) if se.size else 0.0,
            "unsettled": int(unsettled.sum())}


def _heldout_record(run: FinishedRun, check: HeldOutCheck) -> dict[str, Any]:
    per_class = check.per_class
    return {"n": int(run.y.size), "accuracy": 1.0 - check.scores["error"], **check.scores, "n_bins": N_BINS,
            "balanced_accuracy": float(_model_rows(check.comparison).at["balanced_accuracy", "value"]),
            "intervals": check.intervals, "interval_level": LEVEL,
            "per_class": per_class.astype(object).where(per_class.notna(), None).to_dict(orient="records"),
            "confusion": check.conf.tolist(), "confusion_rows": "predicted", "classes": run.classes}


def _classified_record(run: FinishedRun) -> dict[str, Any]:
    frame, meta = run.frame, run.table.meta
    return {"n": int(len(frame)), "select": meta.get("SELECT"),
            "predicted": frame["predicted_class"].value_counts().to_dict(),
            "none_of_these": int(frame["ood"].sum()) if "ood" in frame else None,
            "mean_entropy": float(frame["entropy"].mean()), "mc_noise": _mc_noise(frame, run.classes)}


def run_metrics(run: FinishedRun, check: HeldOutCheck) -> dict[str, Any]:
    """What ``metrics.json`` holds: the held-out check, the classified sources, the comparison, the shifts and
    dropped rows."""
    training, comparison = run.training, check.comparison
    moved = run.pool_prior
    metrics = {
        "heldout": _heldout_record(run, check),
        "trained_on": training.get("n_per_class"),
        "fit_seconds": training.get("fit_seconds"),
        "classified": _classified_record(run),
        "run_date": run.table.meta.get("DATE"),
        "comparison": comparison.to_dict(orient="records") if comparison["model"].nunique() > 1 else None,
        "faintest_quarter": check.faint,
        # with the pool prior applied the table's probabilities are already moved: its mixes replace the diagnostic
        "population_shift": None if moved else _population_shift(run.frame[run.frame["predicted_class"] != EXTENDED],
                                                                 run.classes, training.get("n_per_class", {}),
                                                                 training.get("merge", {})),
        "pool_prior": moved,
        "dropped": {"labelled": training.get("dropped", {}),
                    "classified": [n for n in run.table.meta.get("DROPPED", "").split(",") if n]},
        "repaired": {"labelled": repaired_text(training["repaired"]) if "repaired" in training else None,
                     "classified": run.table.meta.get("REPAIRED"),
                     "how": repaired_how(Feature.from_spec(f).missing_error for f in training.get("features", []))},
    }
    return metrics

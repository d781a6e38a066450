"""Paired bootstrap comparison of classifiers scored on the same held-out rows.

With a few hundred test sources, metric differences of a few hundredths can be noise.
Resampling the rows gives each metric a 95% percentile interval.  Scoring every model
on the *same* resampled rows gives each difference to a reference model a paired
interval, much narrower than the two separate intervals suggest, because the models
tend to fail on the same hard sources.

A difference is always the other model minus the reference (gpal), whatever prints it (`difference_text`): the
tables of the main job, its report and the docs' results page show the same number with the same sign.
"""

from __future__ import annotations

from typing import Mapping

import numpy as np
import pandas as pd

from gpal.evaluation.calibration import brier_score, expected_calibration_error, resampled_calibration_errors
from gpal.evaluation.metrics import PROBA_FLOOR, error_rate, negative_log_likelihood

__all__ = ["METRICS", "RANGES", "balanced_accuracy", "bootstrap_comparison", "difference_text", "resampled_metrics"]

def difference_text(diff: float, low: float, high: float, digits: int = 3) -> str:
    """A paired difference and its interval, signed: '+0.003 [-0.010, +0.020]'.

    The one form every report and page gives a difference in; ``diff`` is the other model minus the reference
    (gpal), as `bootstrap_comparison` makes it, and plain ASCII, so that the text can be read back as numbers.

    Returns
    -------
    str
        ``diff`` and its interval ``[low, high]``, each with its sign, to ``digits`` decimals.
    """
    return f"{diff:+.{digits}f} [{low:+.{digits}f}, {high:+.{digits}f}]"


#: The metrics reported, in table order (lower is better for the first three).
METRICS = ("nll", "ece", "brier", "accuracy", "balanced_accuracy")
#: Each metric's attainable range: the shift of a bias-corrected interval must not carry it outside.
RANGES = {"nll": (0.0, np.inf), "ece": (0.0, 1.0), "brier": (0.0, 2.0), "accuracy": (0.0, 1.0),
          "balanced_accuracy": (0.0, 1.0)}


def _codes(y: np.ndarray) -> np.ndarray:
    arr = np.asarray(y)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"y must be a non-empty 1-D array of class codes; got shape {arr.shape}")
    if not np.issubdtype(arr.dtype, np.integer) or arr.min() < 0:
        raise ValueError(f"y must hold integer class codes >= 0; got dtype {arr.dtype}")
    return arr.astype(np.int64)


def _checked_proba(proba: np.ndarray, y: np.ndarray, name: str) -> np.ndarray:
    p = np.asarray(proba, dtype=np.float64)
    if p.ndim != 2 or p.shape[0] != y.size or p.shape[1] <= y.max():
        raise ValueError(f"probabilities of {name} must have shape ({y.size}, C) with C > {y.max()}; got {p.shape}")
    if not np.all(np.isfinite(p)):
        raise ValueError(f"probabilities of {name} contain NaN or inf")
    if p.min() < -1e-9 or p.max() > 1 + 1e-9:
        raise ValueError(f"probabilities of {name} must lie in [0, 1]; got [{p.min():.3g}, {p.max():.3g}]")
    return p


def balanced_accuracy(y: np.ndarray, proba: np.ndarray) -> float:
    """Mean over the classes present in ``y`` of the recall of the arg-max prediction.

    Unlike accuracy it is not dominated by the largest class, which matters for the
    rare source classes.
    """
    y = _codes(y)
    hit = _checked_proba(proba, y, "the model").argmax(axis=1) == y
    present = np.unique(y)
    return float(np.mean([hit[y == c].mean() for c in present]))


def resampled_metrics(y: np.ndarray, p: np.ndarray, index: np.ndarray, n_bins: int) -> dict[str, np.ndarray]:
    """Each of `METRICS` on each resample (rows of ``index``, (n_boot, n) row numbers): metric -> (n_boot,)."""
    n = y.size
    hit = (p.argmax(axis=1) == y).astype(np.float64)
    onehot = np.zeros_like(p)
    onehot[np.arange(n), y] = 1.0
    per_row = {
        "nll": -np.log(np.clip(p[np.arange(n), y], PROBA_FLOOR, 1.0)),
        "brier": np.sum((p - onehot) ** 2, axis=1),
        "accuracy": hit,
    }
    out = {name: loss[index].mean(axis=1) for name, loss in per_row.items()}
    # Balanced accuracy from per-class counts of each resample; classes absent from a resample drop out.
    n_classes = int(y.max()) + 1
    flat = (np.arange(index.shape[0])[:, None] * n_classes + y[index]).ravel()
    size = index.shape[0] * n_classes
    count = np.bincount(flat, minlength=size).reshape(-1, n_classes)
    hits = np.bincount(flat, weights=hit[index].ravel(), minlength=size).reshape(-1, n_classes)
    present = count > 0
    recall = np.divide(hits, count, out=np.zeros_like(hits), where=present)
    out["balanced_accuracy"] = recall.sum(axis=1) / present.sum(axis=1)
    out["ece"] = resampled_calibration_errors(y, p, index, n_bins)
    return out


def _bias_corrected(draws: np.ndarray, value: float, bounds: tuple[float, float]) -> tuple[float, float]:
    """The 95% percentile interval of ``draws`` shifted by their bias (median - value): it holds ``value``.

    Clipped to ``bounds``, the values the quantity can take: a balanced accuracy near 1 whose resamples are
    biased low would otherwise get an upper limit above 1.
    """
    low, median, high = np.percentile(draws, [2.5, 50.0, 97.5])
    bias = median - value
    return float(max(low - bias, bounds[0])), float(min(high - bias, bounds[1]))


def bootstrap_comparison(
    y: np.ndarray,
    probas: Mapping[str, np.ndarray],
    reference: str,
    n_boot: int = 2000,
    random_state: int = 0,
    n_bins: int = 15,
) -> pd.DataFrame:
    """One row per (model, metric) with the full-set value, its interval and the paired difference.

    Columns: ``model``, ``metric``, ``value`` (on all rows), ``low``/``high`` (the 2.5 and
    97.5 percentiles over ``n_boot`` resamples of the rows, bias-corrected: shifted by the
    resamples' median minus ``value``, so that a metric a resample biases, such as the ECE,
    gets an interval that holds its value; clipped to the metric's range, `RANGES`), ``diff`` (model − reference on all rows; 0 for
    the reference), ``diff_low``/``diff_high`` (the same interval of the difference, both
    models scored on the same resampled rows) and ``p_below_zero``
    (fraction of resamples where the difference is negative).  ``ece`` uses ``n_bins``
    equal-width bins of the top-label confidence.
    """
    y = _codes(y)
    if not probas:
        raise ValueError("probas must name at least one model")
    if reference not in probas:
        raise ValueError(f"reference {reference!r} is not among the models {list(probas)}")
    if isinstance(n_boot, bool) or not isinstance(n_boot, (int, np.integer)) or n_boot < 10:
        raise ValueError(f"n_boot must be an integer >= 10; got {n_boot!r}")
    checked = {name: _checked_proba(p, y, repr(name)) for name, p in probas.items()}

    index = np.random.default_rng(random_state).integers(0, y.size, size=(int(n_boot), y.size))
    values: dict[str, dict[str, float]] = {}
    draws: dict[str, dict[str, np.ndarray]] = {}
    for name, p in checked.items():
        values[name] = {
            "nll": negative_log_likelihood(y, p),
            "ece": expected_calibration_error(y, p, n_bins=n_bins),
            "brier": brier_score(y, p),
            "accuracy": 1.0 - error_rate(y, p),
            "balanced_accuracy": balanced_accuracy(y, p),
        }
        draws[name] = resampled_metrics(y, p, index, n_bins)

    records = []
    for name in checked:
        for metric in METRICS:
            value, diff = values[name][metric], values[name][metric] - values[reference][metric]
            low, high = _bias_corrected(draws[name][metric], value, RANGES[metric])
            delta = draws[name][metric] - draws[reference][metric]
            width = RANGES[metric][1] - RANGES[metric][0]
            diff_low, diff_high = _bias_corrected(delta, diff, (-width, width))
            records.append({
                "model": name, "metric": metric, "value": value,
                "low": float(low), "high": float(high),
                "diff": diff,
                "diff_low": float(diff_low), "diff_high": float(diff_high),
                "p_below_zero": float(np.mean(delta < 0)),
            })
    return pd.DataFrame.from_records(records, columns=[
        "model", "metric", "value", "low", "high", "diff", "diff_low", "diff_high", "p_below_zero"])

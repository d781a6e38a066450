"""Calibration of predicted class probabilities: reliability bins, ECE, MCE, Brier score.

A classifier is calibrated when, among the points it gives probability p, a fraction
p is right.  Every quantity here bins a score s_i in [0, 1] (the top-label confidence
max_c p_ic, or the probability p_ic of one class) together with a 0/1 outcome (the
top label is right, or the true class is c) and compares, bin by bin, the mean score
with the observed frequency:

    ECE = sum_m |B_m| / n * |freq(B_m) - conf(B_m)|      (Milios et al. 2018, eq. 1)
    MCE = max_m |freq(B_m) - conf(B_m)|                  (over non-empty bins)

``strategy="uniform"`` uses M equal-width bins on [0, 1], each bin (a, b] (the first
also holds 0); ``strategy="quantile"`` uses M equal-mass bins: the points sorted by
score are cut into M groups whose sizes differ by at most one, so ties at a cut may
fall on both sides of it.  Conventions for ``y_true``/``proba`` follow
:mod:`gpal.evaluation.metrics`: integer codes 0..C-1 and an (n, C) probability matrix.

Papers define ECE differently, and `expected_calibration_error` takes each definition as options
(gpal's: top-label, 15 bins, mean confidence, empty bins left out).  Paper 003's authors' code
(dirichletGPC, ``src/evaluation.py``, ``calibration_test``, lines 44-71) uses 10 bins, each bin's
midpoint as its confidence, p(y=1) against y = 1 when a method gives a single probability column (its
binary GPC and GPR), and counts an empty bin as one point of accuracy 0 (``max(count, 1)``):
``MILIOS_2018_ECE``.  Unlike that code, a score of exactly 0 falls in the first bin here, not in none.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

__all__ = [
    "BINARY_SCORES",
    "CONFIDENCES",
    "EMPTY_BINS",
    "MILIOS_2018_ECE",
    "ROW_SUM_TOL",
    "ReliabilityBins",
    "reliability_bins",
    "top_label_reliability",
    "class_reliability",
    "expected_calibration_error",
    "calibrated_ece",
    "resampled_calibration_errors",
    "maximum_calibration_error",
    "classwise_ece",
    "brier_score",
]

#: Rows of ``proba`` must sum to 1 within this absolute tolerance.
ROW_SUM_TOL = 1e-6

Strategy = Literal["uniform", "quantile"]
#: A bin's confidence: the mean score of its points, or the midpoint of its edges.
CONFIDENCES = ("mean", "midpoint")
#: The score of a binary problem: the top-label confidence, or p(y=1) against y = 1.
BINARY_SCORES = ("top_label", "positive")
#: Empty bins: left out, or counted as one point of accuracy 0 (paper 003's code).
EMPTY_BINS = ("skip", "count")
#: Paper 003's ECE as its authors' code computes it (module docstring).
MILIOS_2018_ECE = {"n_bins": 10, "confidence": "midpoint", "binary": "positive", "empty_bins": "count"}


@dataclass(frozen=True)
class ReliabilityBins:
    """Per-bin summary of (score, outcome) pairs; empty bins have NaN confidence and accuracy.

    ``accuracy`` is the observed frequency of the outcome in the bin: top-label
    accuracy for :func:`top_label_reliability`, the frequency of class c for
    :func:`class_reliability`.
    """

    edges: np.ndarray  # (M + 1,) bin boundaries, increasing
    confidence: np.ndarray  # (M,) mean score in the bin
    accuracy: np.ndarray  # (M,) mean outcome in the bin
    counts: np.ndarray  # (M,) points in the bin
    strategy: str

    @property
    def n_bins(self) -> int:
        return self.counts.shape[0]

    @property
    def n_samples(self) -> int:
        return int(self.counts.sum())

    @property
    def gaps(self) -> np.ndarray:
        """|accuracy - confidence| per bin (NaN for empty bins)."""
        return np.abs(self.accuracy - self.confidence)

    @property
    def ece(self) -> float:
        """Bin gaps weighted by the fraction of points in each bin (eq. 1 of Milios et al.)."""
        filled = self.counts > 0
        return float(np.sum(self.counts[filled] / self.n_samples * self.gaps[filled]))

    def ece_as(self, confidence: str = "mean", empty_bins: str = "skip") -> float:
        """ECE with a bin's confidence and empty bins as a paper defines them (`CONFIDENCES`, `EMPTY_BINS`)."""
        if confidence not in CONFIDENCES:
            raise ValueError(f"confidence must be one of {list(CONFIDENCES)}; got {confidence!r}")
        if empty_bins not in EMPTY_BINS:
            raise ValueError(f"empty_bins must be one of {list(EMPTY_BINS)}; got {empty_bins!r}")
        conf = (self.edges[:-1] + self.edges[1:]) / 2 if confidence == "midpoint" else self.confidence
        filled = self.counts > 0
        if empty_bins == "skip":
            return float(np.sum(self.counts[filled] * np.abs(self.accuracy - conf)[filled]) / self.n_samples)
        sizes = np.maximum(self.counts, 1)
        accuracy = np.where(filled, self.accuracy, 0.0)
        return float(np.sum(sizes * np.abs(accuracy - conf)) / np.sum(sizes))

    @property
    def mce(self) -> float:
        """Largest gap over non-empty bins: the worst calibration any bin shows."""
        return float(np.max(self.gaps[self.counts > 0]))


# ------------------------------------------------------------------ validation
def _check_n_bins(n_bins: int) -> int:
    if isinstance(n_bins, bool) or not isinstance(n_bins, (int, np.integer)) or n_bins < 1:
        raise ValueError(f"n_bins must be a positive integer; got {n_bins!r}")
    return int(n_bins)


def _check_strategy(strategy: str) -> None:
    if strategy not in ("uniform", "quantile"):
        raise ValueError(f"strategy must be 'uniform' (equal width) or 'quantile' (equal mass); got {strategy!r}")


def _check_predictions(y_true: np.ndarray, proba: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Integer labels (n,) and an (n, C) probability matrix whose rows sum to 1."""
    p = np.asarray(proba, dtype=np.float64)
    if p.ndim != 2:
        raise ValueError(
            f"proba must be an (n_samples, n_classes) matrix; got shape {p.shape}. "
            "For a binary classifier pass np.column_stack([1 - p, p])."
        )
    n, n_classes = p.shape
    if n == 0 or n_classes < 2:
        raise ValueError(f"proba needs at least one row and two class columns; got shape {p.shape}")
    if not np.all(np.isfinite(p)):
        raise ValueError(f"proba contains NaN or inf in row(s) {np.nonzero(~np.isfinite(p).all(axis=1))[0][:5].tolist()}")
    if p.min() < 0 or p.max() > 1:
        raise ValueError(f"proba must lie in [0, 1]; got range [{p.min():.6g}, {p.max():.6g}]")
    row_sums = p.sum(axis=1)
    bad = np.abs(row_sums - 1.0) > ROW_SUM_TOL
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(
            f"proba rows must sum to 1 (within {ROW_SUM_TOL}); {int(bad.sum())} row(s) do not, "
            f"e.g. row {i} sums to {row_sums[i]:.9g}"
        )
    y = np.asarray(y_true)
    if y.ndim != 1:
        raise ValueError(f"y_true must be a 1-D array of class codes; got shape {y.shape}")
    if y.shape[0] != n:
        raise ValueError(f"y_true has {y.shape[0]} labels but proba has {n} rows")
    if not np.issubdtype(y.dtype, np.integer):
        raise TypeError(f"y_true must hold integer class codes 0..{n_classes - 1}; got dtype {y.dtype}")
    if y.min() < 0 or y.max() >= n_classes:
        raise ValueError(f"y_true codes must lie in [0, {n_classes}) for {n_classes} proba columns; got range [{y.min()}, {y.max()}]")
    return y.astype(np.int64), p


def _check_class(cls: int, n_classes: int) -> int:
    if isinstance(cls, bool) or not isinstance(cls, (int, np.integer)) or not 0 <= cls < n_classes:
        raise ValueError(f"cls must be a class code in [0, {n_classes}); got {cls!r}")
    return int(cls)


# --------------------------------------------------------------------- binning
def _bin_index(scores: np.ndarray, n_bins: int, strategy: str) -> tuple[np.ndarray, np.ndarray]:
    """Bin of every score and the bin edges."""
    if strategy == "uniform":
        edges = np.linspace(0.0, 1.0, n_bins + 1)
        # side="left": a score equal to an edge belongs to the bin that edge closes.
        index = np.clip(np.searchsorted(edges, scores, side="left") - 1, 0, n_bins - 1)
        return index, edges
    n = scores.shape[0]
    if n < n_bins:
        raise ValueError(f"equal-mass binning needs at least n_bins={n_bins} points; got {n}")
    order = np.argsort(scores, kind="stable")
    sizes = np.full(n_bins, n // n_bins) + (np.arange(n_bins) < n % n_bins)
    index = np.empty(n, dtype=np.int64)
    index[order] = np.repeat(np.arange(n_bins), sizes)
    ends = np.cumsum(sizes)
    s = scores[order]
    inner = (s[ends[:-1] - 1] + s[ends[:-1]]) / 2  # midway between neighbouring groups
    return index, np.concatenate([[s[0]], inner, [s[-1]]])


def reliability_bins(
    scores: np.ndarray, outcomes: np.ndarray, n_bins: int = 15, strategy: Strategy = "uniform"
) -> ReliabilityBins:
    """Bin scores in [0, 1] with their 0/1 outcomes; the building block of every curve here."""
    n_bins = _check_n_bins(n_bins)
    _check_strategy(strategy)
    s = np.asarray(scores, dtype=np.float64)
    o = np.asarray(outcomes)
    if s.ndim != 1 or s.shape != o.shape or s.size == 0:
        raise ValueError(f"scores and outcomes must be non-empty 1-D arrays of one length; got {s.shape} and {o.shape}")
    if not np.all(np.isfinite(s)) or s.min() < 0 or s.max() > 1:
        raise ValueError("scores must be finite probabilities in [0, 1]")
    if not np.all((o == 0) | (o == 1)):
        raise ValueError("outcomes must be 0/1 (or boolean)")
    index, edges = _bin_index(s, n_bins, strategy)
    counts = np.bincount(index, minlength=n_bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        confidence = np.bincount(index, weights=s, minlength=n_bins) / counts
        accuracy = np.bincount(index, weights=o.astype(np.float64), minlength=n_bins) / counts
    return ReliabilityBins(edges, confidence, accuracy, counts, strategy)


def top_label_reliability(
    y_true: np.ndarray, proba: np.ndarray, n_bins: int = 15, strategy: Strategy = "uniform"
) -> ReliabilityBins:
    """Confidence of the predicted class against whether the prediction is right."""
    y, p = _check_predictions(y_true, proba)
    predicted = np.argmax(p, axis=1)
    return reliability_bins(p[np.arange(y.size), predicted], predicted == y, n_bins, strategy)


def class_reliability(
    y_true: np.ndarray, proba: np.ndarray, cls: int, n_bins: int = 15, strategy: Strategy = "uniform"
) -> ReliabilityBins:
    """Probability given to class ``cls`` against how often the true class is ``cls`` (all points)."""
    y, p = _check_predictions(y_true, proba)
    cls = _check_class(cls, p.shape[1])
    return reliability_bins(p[:, cls], y == cls, n_bins, strategy)


# --------------------------------------------------------------------- scores
def expected_calibration_error(
    y_true: np.ndarray, proba: np.ndarray, n_bins: int = 15, strategy: Strategy = "uniform", *,
    confidence: str = "mean", binary: str = "top_label", empty_bins: str = "skip",
) -> float:
    """Top-label ECE: mean |accuracy - confidence| over bins, weighted by bin size.

    The keywords give another paper's definition (module docstring; ``**MILIOS_2018_ECE`` is paper
    003's): ``confidence`` per bin, the ``binary`` score, ``empty_bins``.
    """
    if binary not in BINARY_SCORES:
        raise ValueError(f"binary must be one of {list(BINARY_SCORES)}; got {binary!r}")
    if binary == "positive" and np.shape(proba)[-1] == 2:
        bins = class_reliability(y_true, proba, 1, n_bins, strategy)
    else:
        bins = top_label_reliability(y_true, proba, n_bins, strategy)
    if confidence == "mean" and empty_bins == "skip":
        return bins.ece
    return bins.ece_as(confidence, empty_bins)


def _mean_absolute_deviation(p: np.ndarray) -> float:
    """E|S - sum p| for S the number of successes of independent Bernoulli(p_i) trials (Poisson-binomial),
    exactly: the distribution of S built one trial at a time."""
    pmf = np.zeros(p.size + 1)
    pmf[0] = 1.0
    for k, q in enumerate(p, start=1):
        pmf[1:k + 1] = pmf[1:k + 1] * (1.0 - q) + pmf[:k] * q
        pmf[0] *= 1.0 - q
    return float(np.sum(pmf * np.abs(np.arange(p.size + 1) - p.sum())))


def calibrated_ece(proba: np.ndarray, n_bins: int = 15, strategy: Strategy = "uniform") -> float:
    """The top-label ECE that a perfectly calibrated model with these confidences shows on average.

    Each prediction is right with probability its confidence, so a bin's hits are Poisson-binomial and its
    expected gap is E|hits - sum of confidences| / n, computed exactly.  The ECE of a finite set is biased
    upwards by this much even when nothing is miscalibrated (about 0.025 for 600 sources of 90% mean
    confidence in 15 bins): two models' ECEs compare fairly only beside it.  Bins are those of
    `expected_calibration_error`.
    """
    p = np.asarray(proba, dtype=np.float64)
    _check_predictions(np.zeros(p.shape[0] if p.ndim == 2 else 0, dtype=np.int64), p)
    _check_strategy(strategy)
    confidence = p.max(axis=1)
    index, _ = _bin_index(confidence, _check_n_bins(n_bins), strategy)
    return sum(_mean_absolute_deviation(confidence[index == b]) for b in np.unique(index)) / confidence.size


def resampled_calibration_errors(y_true: np.ndarray, proba: np.ndarray, index: np.ndarray, n_bins: int = 15) -> np.ndarray:
    """Top-label ECE (equal-width bins) of each resample of the rows, ``index`` (n_boot, n): (n_boot,).

    A row's bin and its gap (hit - confidence) do not depend on the resample, and the ECE is
    sum over bins of |sum of the bin's gaps| / n, so every resample is one weighted count: a
    bootstrap of the ECE at the cost of its other metrics', where a call per resample was most of it.

    Returns
    -------
    np.ndarray
        (n_boot,) ECE of each resample.
    """
    y, p = _check_predictions(y_true, proba)
    predicted = np.argmax(p, axis=1)
    confidence = p[np.arange(y.size), predicted]
    bins, _ = _bin_index(confidence, n_bins, "uniform")
    gap = (predicted == y) - confidence
    flat = (np.arange(index.shape[0])[:, None] * n_bins + bins[index]).ravel()
    sums = np.bincount(flat, weights=gap[index].ravel(), minlength=index.shape[0] * n_bins)
    return np.abs(sums.reshape(-1, n_bins)).sum(axis=1) / index.shape[1]


def maximum_calibration_error(
    y_true: np.ndarray, proba: np.ndarray, n_bins: int = 15, strategy: Strategy = "uniform"
) -> float:
    """Top-label MCE: the largest |accuracy - confidence| of any non-empty bin (>= ECE)."""
    return top_label_reliability(y_true, proba, n_bins, strategy).mce


def classwise_ece(
    y_true: np.ndarray, proba: np.ndarray, n_bins: int = 15, strategy: Strategy = "uniform"
) -> float:
    """Mean over classes of the ECE of each class's probability (Kull et al. 2019).

    Unlike the top-label ECE it also judges the probabilities of the classes that
    were not predicted, which matters when the whole vector feeds a decision.
    """
    y, p = _check_predictions(y_true, proba)
    return float(np.mean([class_reliability(y, p, c, n_bins, strategy).ece for c in range(p.shape[1])]))


def brier_score(y_true: np.ndarray, proba: np.ndarray) -> float:
    """Mean over points of sum_c (p_c - 1[y = c])^2, in [0, 2].

    The multi-class form (Brier 1950); for two classes it is twice scikit-learn's
    binary ``brier_score_loss``, which scores the positive class only.
    """
    y, p = _check_predictions(y_true, proba)
    onehot = np.zeros_like(p)
    onehot[np.arange(y.size), y] = 1.0
    return float(np.mean(np.sum((p - onehot) ** 2, axis=1)))

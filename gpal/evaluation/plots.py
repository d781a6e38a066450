"""Figures for reports: confusion matrices, reliability diagrams, active-learning curves, sky maps.

Each function returns a new :class:`matplotlib.figure.Figure` attached to an Agg
canvas and never touches pyplot, so it works on headless machines, never opens a
window and leaves the caller's backend alone.  :func:`figure_files` renders PNG and
PDF in memory, :func:`save_figure` writes them atomically.
"""

from __future__ import annotations

import contextlib
import io
import os
import textwrap
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pandas as pd
from matplotlib import colormaps
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from gpal.evaluation.calibration import ReliabilityBins
from gpal.evaluation.intervals import binomial_interval
from gpal.evaluation.metrics import mean_se
from gpal.evaluation.reports import column_normalize, row_normalize
from gpal.files import write_files

__all__ = [
    "SPARSE_BIN",
    "figure_files",
    "plot_confusion_matrix",
    "plot_confusion_summary",
    "plot_reliability",
    "plot_learning_curves",
    "plot_sky_classes",
    "plot_sky_values",
    "save_figure",
]

#: File metadata that would change from run to run is left out, so reruns give identical files.
_METADATA = {"png": {"Software": None}, "pdf": {"CreationDate": None, "Producer": None}}


def _figure(width: float, height: float) -> Figure:
    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def figure_files(fig: Figure, formats: Sequence[str] = ("png", "pdf"), dpi: int = 150) -> dict[str, bytes]:
    """The figure rendered in memory in each format: {format: bytes}; nothing is written."""
    unknown = [f for f in formats if f not in _METADATA]
    if unknown or not formats:
        raise ValueError(f"formats must be a non-empty subset of {sorted(_METADATA)}; got {list(formats)}")
    rendered = {}
    with contextlib.ExitStack() as stack:
        for i, fmt in enumerate(formats):
            buffer = io.BytesIO()
            fig.savefig(buffer, format=fmt, dpi=dpi, metadata=_METADATA[fmt])
            rendered[fmt] = buffer.getvalue()
            if i == 0:
                stack.enter_context(_layout_kept(fig))
    return rendered


def save_figure(
    fig: Figure, path_without_suffix: str | os.PathLike, formats: Sequence[str] = ("png", "pdf"), dpi: int = 150
) -> dict[str, Path]:
    """Write ``<path>.png`` and ``<path>.pdf``: every format is rendered (`figure_files`) before any is written."""
    stem = Path(path_without_suffix)
    if stem.suffix.lower() in (".png", ".pdf"):
        raise ValueError(f"give the path without a suffix (got {stem}); one file per format is added")
    rendered = figure_files(fig, formats, dpi)
    paths = {fmt: stem.with_name(f"{stem.name}.{fmt}") for fmt in rendered}
    write_files(stem.parent, {path.name: rendered[fmt] for fmt, path in paths.items()})
    return paths


@contextlib.contextmanager
def _layout_kept(fig: Figure):
    """The layout the first format's save computed, kept for the others: a save under a layout engine draws the
    figure twice to place it, and that is a fifth of a figure's cost."""
    engine = fig.get_layout_engine()
    fig.set_layout_engine("none")
    try:
        yield
    finally:
        fig.set_layout_engine(engine)


# ---------------------------------------------------------- confusion matrix
def plot_confusion_matrix(
    matrix: np.ndarray,
    class_names: Sequence[str],
    spread: np.ndarray | None = None,
    normalized: bool = False,
    digits: int = 2,
    title: str | None = None,
) -> Figure:
    """Heat map with rows = predicted class and columns = true class, each cell annotated.

    ``matrix`` is one matrix of counts or the mean of several
    (:func:`gpal.evaluation.reports.confusion_matrix_summary`); with ``spread`` each cell reads
    'mean ± spread'.  ``normalized=True`` fixes the colour scale to [0, 1] for
    row-normalised matrices.  Empty cells of a normalised matrix (NaN) read 'n/a'.
    """
    m = np.asarray(matrix, dtype=np.float64)
    names = [str(c) for c in class_names]
    k = len(names)
    if m.shape != (k, k):
        raise ValueError(f"matrix must be ({k}, {k}) for classes {names}; got shape {m.shape}")
    sd = None if spread is None else np.asarray(spread, dtype=np.float64)
    if sd is not None and sd.shape != m.shape:
        raise ValueError(f"spread must have the shape of matrix {m.shape}; got {sd.shape}")
    fig = _figure(1.3 * k + 2.2, 1.1 * k + 1.4)
    ax = fig.add_subplot()
    _draw_confusion(ax, m, names, sd, normalized, digits, "fraction of predicted row" if normalized else "count")
    if title:
        ax.set_title(title)
    return fig


def plot_confusion_summary(counts: np.ndarray, class_names: Sequence[str], title: str | None = None) -> Figure:
    """Counts beside completeness (each true class's column sums to 1) and purity (each predicted row sums to 1).

    Raw counts make a rare class's diagonal look pale however well it is classified;
    the normalised panels show each class on the same 0-1 scale.
    """
    m = np.asarray(counts, dtype=np.float64)
    names = [str(c) for c in class_names]
    k = len(names)
    if m.shape != (k, k):
        raise ValueError(f"counts must be ({k}, {k}) for classes {names}; got shape {m.shape}")
    fig = _figure(3 * (1.1 * k + 1.6), 1.1 * k + 1.8)
    panels = [(m, False, "count", "counts"),
              (column_normalize(m), True, "fraction of true class", "completeness (columns sum to 1)"),
              (row_normalize(m), True, "fraction of predicted class", "purity (rows sum to 1)")]
    for ax, (matrix, normalized, label, name) in zip(fig.subplots(1, 3), panels):
        _draw_confusion(ax, matrix, names, None, normalized, 2, label)
        ax.set_title(name, fontsize=10)
    if title:
        fig.suptitle(title)
    return fig


def _draw_confusion(ax, m: np.ndarray, names: list[str], sd: np.ndarray | None, normalized: bool, digits: int,
                    label: str) -> None:
    """One annotated heat map (rows = predicted, columns = true) and its colour bar on ``ax``."""
    k = len(names)
    integer = sd is None and np.all(np.isnan(m) | (m == np.round(m))) and not normalized
    vmax = 1.0 if normalized else max(float(np.nanmax(m)) if np.isfinite(m).any() else 1.0, 1.0)
    cmap = colormaps["Blues"].with_extremes(bad="0.85")
    image = ax.imshow(np.ma.masked_invalid(m), cmap=cmap, vmin=0.0, vmax=vmax)
    for p in range(k):
        for t in range(k):
            value = m[p, t]
            if np.isnan(value):
                text = "n/a"
            elif integer:
                text = f"{value:.0f}"
            else:
                text = f"{value:.{digits}f}"
                if sd is not None:
                    text += "\n± " + ("n/a" if np.isnan(sd[p, t]) else f"{sd[p, t]:.{digits}f}")
            dark = np.isfinite(value) and value > 0.6 * vmax
            ax.text(t, p, text, ha="center", va="center", fontsize=9, color="white" if dark else "black")
    ax.set_xticks(range(k), names)
    ax.set_yticks(range(k), names)
    ax.set_xlabel("true class")
    ax.set_ylabel("predicted class")
    ax.figure.colorbar(image, ax=ax, label=label, shrink=0.8)


# ------------------------------------------------------------------ reliability
#: Bins with fewer points than this are drawn hollow: their frequency says little.
SPARSE_BIN = 10


def plot_reliability(
    bins: ReliabilityBins | Mapping[str, ReliabilityBins], title: str | None = None, xlabel: str = "confidence",
    level: float = 0.95,
) -> Figure:
    """Reliability diagram: observed frequency against mean confidence per bin, points per bin below.

    Pass one :class:`~gpal.evaluation.calibration.ReliabilityBins` (top-label) or a mapping
    name -> bins to overlay several (per class, or several methods); each legend entry
    carries its ECE.  Points on the diagonal are calibrated; below it, over-confident.
    Each point carries its Jeffreys binomial interval (``level``) and, for a single
    curve, its number of points; bins of fewer than `SPARSE_BIN` points are hollow.
    """
    curves = {"top label": bins} if isinstance(bins, ReliabilityBins) else dict(bins)
    if not curves or not all(isinstance(b, ReliabilityBins) for b in curves.values()):
        raise TypeError("bins must be a ReliabilityBins or a non-empty mapping of name -> ReliabilityBins")
    fig = _figure(4.8, 6.0)
    top, bottom = fig.subplots(2, 1, sharex=True, height_ratios=[3, 1])
    top.plot([0, 1], [0, 1], ls="--", color="0.5", lw=1, label="perfect calibration")
    for name, b in curves.items():
        filled = b.counts > 0
        n = b.counts[filled]
        x, freq = b.confidence[filled], b.accuracy[filled]
        low, high = binomial_interval(np.round(freq * n), n, level)
        (line,) = top.plot(x, freq, lw=1, label=f"{name} (ECE {b.ece:.3f})")
        colour = line.get_color()
        top.errorbar(x, freq, yerr=[freq - low, high - freq], fmt="none", ecolor=colour, elinewidth=1, capsize=2)
        sparse = n < SPARSE_BIN
        top.plot(x[~sparse], freq[~sparse], ls="none", marker="o", ms=5, color=colour)
        top.plot(x[sparse], freq[sparse], ls="none", marker="o", ms=5, mfc="white", mec=colour)
        if len(curves) == 1:
            for xi, yi, ni in zip(x, freq, n):
                right = xi > 0.85  # keep the last bin's count inside the axes
                top.annotate(f"{ni:d}", (xi, yi), xytext=(-5 if right else 4, -9), textcoords="offset points",
                             ha="right" if right else "left", fontsize=7, color="0.3")
        # One outlined box per bin, so the edges of equal-mass bins stay visible.
        bottom.bar(b.edges[:-1], b.counts, width=np.diff(b.edges), align="edge", fill=False, edgecolor=line.get_color(), lw=1)
    strategies = sorted({b.strategy for b in curves.values()})
    top.plot([], [], ls="none", marker="o", mfc="white", mec="0.3",
             label=f"fewer than {SPARSE_BIN} points; bars: {level:.0%} binomial interval")
    top.set(xlim=(0, 1), ylim=(0, 1.02), ylabel="observed frequency")
    top.legend(fontsize=8, loc="upper left")
    top.set_title(title or f"reliability ({', '.join(_STRATEGY_NAMES[s] for s in strategies)} bins)", fontsize=10)
    bottom.set(xlabel=xlabel, ylabel="points per bin")
    bottom.set_ylim(bottom=0)
    return fig


_STRATEGY_NAMES = {"uniform": "equal-width", "quantile": "equal-mass"}


# ------------------------------------------------------------ learning curves
def plot_learning_curves(
    results: pd.DataFrame,
    metric: str = "error",
    x: str = "n_labelled",
    by: Sequence[str] = ("method", "strategy"),
    repetition: str = "repetition",
    title: str | None = None,
) -> Figure:
    """Mean ± standard error over repetitions of ``metric`` against ``x``, one line per group.

    ``results`` is tidy: one row per (group, repetition, x).  The first ``by`` column
    picks the colour, the second (if any) the line style, so one acquisition
    strategy against another reads as solid against dashed in the same colour.
    """
    by = [by] if isinstance(by, str) else list(by)
    needed = [*by, repetition, x, metric]
    missing = [c for c in needed if c not in results.columns]
    if missing:
        raise ValueError(f"results lack column(s) {missing}; it has {list(results.columns)}")
    if results.empty:
        raise ValueError("results is empty")
    for col in (x, metric):
        if not pd.api.types.is_numeric_dtype(results[col]):
            raise TypeError(f"column {col!r} must be numeric; got dtype {results[col].dtype}")
    dup = results.duplicated([*by, repetition, x])
    if dup.any():
        raise ValueError(f"results have {int(dup.sum())} duplicate row(s) for the same ({', '.join([*by, repetition, x])})")
    colours = {v: f"C{i % 10}" for i, v in enumerate(results[by[0]].unique())}
    styles = {v: s for v, s in zip(results[by[1]].unique(), ["-", "--", ":", "-."] * 8)} if len(by) > 1 else {}

    fig = _figure(6.0, 4.0)
    ax = fig.add_subplot()
    for group, frame in results.groupby(by, sort=False):
        group = group if isinstance(group, tuple) else (group,)
        xs = np.sort(frame[x].unique())
        stats = [mean_se(frame.loc[frame[x] == v, metric].to_numpy()) for v in xs]
        mean, se = np.array(stats).T
        colour = colours[group[0]]
        style = styles[group[1]] if len(by) > 1 else "-"
        ax.plot(xs, mean, color=colour, ls=style, label=" / ".join(map(str, group)))
        ax.fill_between(xs, mean - se, mean + se, color=colour, alpha=0.2, lw=0)
    n_rep = results.groupby(by)[repetition].nunique()
    reps = f"{n_rep.min()}" if n_rep.min() == n_rep.max() else f"{n_rep.min()}-{n_rep.max()}"
    ax.set(xlabel=x.replace("_", " "), ylabel=metric.replace("_", " "))
    ax.set_title(title or f"{metric.replace('_', ' ')}: mean ± SE over {reps} repetitions", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return fig


# ------------------------------------------------------------------- sky maps
def _sky_positions(glon: np.ndarray, glat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Plot coordinates in radians: l wrapped to [-180, 180) and mirrored so that l grows to the left."""
    l = np.asarray(glon, dtype=np.float64)
    b = np.asarray(glat, dtype=np.float64)
    if l.ndim != 1 or l.shape != b.shape or l.size == 0:
        raise ValueError(f"glon and glat must be non-empty 1-D arrays of one length; got {l.shape} and {b.shape}")
    if not (np.isfinite(l).all() and np.isfinite(b).all()):
        raise ValueError("glon and glat must be finite (degrees)")
    if np.abs(b).max() > 90:
        raise ValueError(f"glat must lie in [-90, 90] degrees; got range [{b.min()}, {b.max()}]")
    wrapped = (l + 180.0) % 360.0 - 180.0
    return np.radians(-wrapped), np.radians(b)


_LON_LABEL_LAT = -20.0
#: Characters on one line of a sky map's title.
_TITLE_WIDTH = 80


def _sky_axes(fig: Figure, projection: str, title: str | None):
    if projection not in ("aitoff", "mollweide", "hammer"):
        raise ValueError(f"projection must be 'aitoff', 'mollweide' or 'hammer'; got {projection!r}")
    ax = fig.add_subplot(projection=projection)
    ticks = np.arange(-120, 121, 60)  # plot x of l = 120, 60, 0, 300, 240
    ax.set_xticks(np.radians(ticks), [])
    for t in ticks:  # longitudes as astronomers read them (0-360), below the plane, where few sources lie
        ax.text(np.radians(t), np.radians(_LON_LABEL_LAT), f"{(-t) % 360:d}°", ha="center", va="center", fontsize=8,
                color="0.2", bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.7})
    ax.set_yticks(np.radians(np.arange(-60, 61, 30)))
    ax.tick_params(axis="y", labelsize=8)
    ax.grid(alpha=0.4)
    ax.set_ylabel("Galactic latitude b")
    ax.set_xlabel("Galactic longitude l (increasing to the left)")
    if title:
        # a catalog job's title names its counts and selection (over 100 characters): at 11 pt on an 8-inch
        # figure about 95 fit on one line, so it wraps rather than run past the figure's edge
        ax.set_title(textwrap.fill(title, _TITLE_WIDTH), fontsize=11, pad=10)
    return ax


def plot_sky_classes(
    glon: np.ndarray,
    glat: np.ndarray,
    labels: np.ndarray,
    class_names: Sequence[str],
    projection: str = "aitoff",
    title: str | None = None,
) -> Figure:
    """Sources in Galactic coordinates coloured by (predicted) class; the legend gives counts per class."""
    x, y = _sky_positions(glon, glat)
    names = [str(c) for c in class_names]
    codes = np.asarray(labels)
    if codes.shape != x.shape or not np.issubdtype(codes.dtype, np.integer):
        raise ValueError(f"labels must be {x.shape[0]} integer class codes; got shape {codes.shape}, dtype {codes.dtype}")
    if codes.min() < 0 or codes.max() >= len(names):
        raise ValueError(f"labels must lie in [0, {len(names)}) for classes {names}; got range [{codes.min()}, {codes.max()}]")
    fig = _figure(8.0, 4.8)
    ax = _sky_axes(fig, projection, title)
    counts = np.bincount(codes, minlength=len(names))
    handles = {}
    for c in np.argsort(-counts, kind="stable"):  # the most common class first, so rarer ones stay visible on top
        if counts[c]:
            mask = codes == c
            handles[c] = ax.scatter(x[mask], y[mask], s=5, color=f"C{c % 10}", label=f"{names[c]} ({counts[c]})", lw=0)
    fig.legend(handles=[handles[c] for c in sorted(handles)], loc="outside lower center", ncol=min(len(names), 5), fontsize=9, markerscale=2.5)
    return fig


def plot_sky_values(
    glon: np.ndarray,
    glat: np.ndarray,
    values: np.ndarray,
    label: str = "predictive entropy [nats]",
    projection: str = "aitoff",
    vmin: float | None = None,
    vmax: float | None = None,
    title: str | None = None,
) -> Figure:
    """Sources in Galactic coordinates coloured by a number per source (e.g. predictive entropy).

    The highest values are drawn last so that the most uncertain sources are not
    hidden under confident neighbours.
    """
    x, y = _sky_positions(glon, glat)
    v = np.asarray(values, dtype=np.float64)
    if v.shape != x.shape or not np.isfinite(v).all():
        raise ValueError(f"values must be {x.shape[0]} finite numbers; got shape {v.shape}")
    order = np.argsort(v, kind="stable")
    fig = _figure(8.0, 5.0)
    ax = _sky_axes(fig, projection, title)
    points = ax.scatter(x[order], y[order], c=v[order], s=5, cmap="viridis", vmin=vmin, vmax=vmax, lw=0)
    fig.colorbar(points, ax=ax, orientation="horizontal", label=label, shrink=0.6, pad=0.1)
    return fig

"""The report's figures, one function each, rendered in memory as PNG and PDF for ``figures/``: {caption: files}.

The held-out ones need only the held-out table (`HeldOutRun`), so the main job draws them in a second
thread while it classifies the catalog (TensorFlow, GIL released); the sky maps wait for the classifications.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import numpy as np

from gpal.catalog_jobs.layout import FIGURES_DIR
from gpal.catalog_jobs.report.inputs import FinishedRun, HeldOutRun
from gpal.catalog_jobs.report.measures import N_BINS
from gpal.evaluation.calibration import class_reliability, top_label_reliability
from gpal.evaluation.metrics import confusion_matrix

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Figures", "held_out_figures", "report_figures"]

#: caption -> the figure's files (a path in the run folder -> its bytes).
Figures = dict[str, dict[str, bytes]]


def _rendered(fig: object, name: str) -> dict[str, bytes]:
    from gpal.evaluation.plots import figure_files

    return {f"{FIGURES_DIR}/{name}.{fmt}": data for fmt, data in figure_files(fig).items()}


def _confusion(run: HeldOutRun) -> Figures:
    from gpal.evaluation.plots import plot_confusion_summary

    fig = plot_confusion_summary(confusion_matrix(run.y, run.proba, len(run.classes)), run.classes, title=f"held-out confusion matrix ({run.y.size} sources)")
    return {"Held-out confusion matrix: counts, completeness and purity (rows = predicted class, columns = true class)":
            _rendered(fig, "confusion_matrix")}


def _reliability(run: HeldOutRun) -> Figures:
    from gpal.evaluation.plots import plot_reliability

    fig = plot_reliability(top_label_reliability(run.y, run.proba, n_bins=N_BINS), title="held-out reliability (top label)")
    return {"Held-out reliability diagram (numbers: sources per bin)": _rendered(fig, "reliability")}


def _reliability_per_class(run: HeldOutRun) -> Figures:
    from gpal.evaluation.plots import plot_reliability

    fig = plot_reliability({c: class_reliability(run.y, run.proba, k, n_bins=10) for k, c in enumerate(run.classes)},
                           title="held-out reliability per class", xlabel="predicted probability of the class")
    return {"Held-out reliability of each class's probability, sparse classes included (hollow: bins of few "
            "sources)": _rendered(fig, "reliability_per_class")}


def _sky_maps(run: FinishedRun) -> Figures:
    """The predicted classes and the predictive entropy of the point sources on the sky (none when no source has a
    position; extended sources have no point-source class)."""
    from gpal.evaluation.plots import plot_sky_classes, plot_sky_values

    frame, classes = run.frame, run.classes
    placed = np.isfinite(frame["GLON"]) & np.isfinite(frame["GLAT"])
    sky = frame[placed & frame["predicted_class"].isin(classes)]
    if not len(sky):
        return {}
    glon, glat = sky["GLON"].to_numpy(), sky["GLAT"].to_numpy()
    codes = np.array([classes.index(c) for c in sky["predicted_class"]], dtype=np.int64)
    select = run.table.meta.get("SELECT", "").replace(",", " + ")
    left = _left_out(frame, placed, classes)
    drawn = f"{len(sky)} of the {len(frame)} classified {select} sources" + (f" ({left} left out)" if left else "")
    classes_fig = plot_sky_classes(glon, glat, codes, classes, title=f"predicted class of {drawn}")
    figures = {f"Sky map of the predicted classes: {drawn}": _rendered(classes_fig, "sky_classes")}
    entropy_fig = plot_sky_values(glon, glat, sky["entropy"].to_numpy(), vmin=0.0, vmax=float(np.log(len(classes))),
                                  title=f"predictive entropy (nats) of {drawn}")
    figures[f"Sky map of the predictive entropy (high = uncertain, drawn on top): {drawn}"] = _rendered(
        entropy_fig, "sky_entropy")
    return figures


def _left_out(frame: "pd.DataFrame", placed: "pd.Series", classes: list[str]) -> str:
    """What a sky map leaves out, in words: the extended sources (no point-source class) and any without a position."""
    parts = []
    extended = int((placed & ~frame["predicted_class"].isin(classes)).sum())
    if extended:
        parts.append(f"{extended} extended")
    if int((~placed).sum()):
        parts.append(f"{int((~placed).sum())} without a position")
    return ", ".join(parts)


def held_out_figures(run: HeldOutRun, stop: Callable[[], None] = lambda: None) -> Figures:
    """The held-out confusion matrix and reliability diagrams; ``stop()`` is called before each (it raises to stop)."""
    figures: Figures = {}
    for draw in (_confusion, _reliability, _reliability_per_class):
        stop()
        figures.update(draw(run))
    return figures


def report_figures(run: FinishedRun, held_out: Figures | None = None) -> Figures:
    """The held-out figures (drawn here unless ``held_out`` holds them already), and the sky maps of the classified
    sources."""
    return {**(held_out_figures(run) if held_out is None else held_out), **_sky_maps(run)}

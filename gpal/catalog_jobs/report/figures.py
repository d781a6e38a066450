"""The report's figures, one function each, rendered in memory as PNG and PDF for ``figures/``: {caption: files}.

The held-out ones need only the held-out table (`HeldOutRun`), so the main job draws them in a second
thread while it classifies the catalog (TensorFlow, GIL released); the sky maps wait for the classifications.
Each figure is made through a `Render`: drawn and rendered (`drawn`), or, where a report is rebuilt from results the
figures do not depend on (the lists re-cut), read as the folder holds it (`kept_in`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Callable

import numpy as np

from gpal.catalog_jobs.layout import FIGURES_DIR
from gpal.catalog_jobs.report.inputs import FinishedRun, HeldOutRun
from gpal.catalog_jobs.report.measures import N_BINS
from gpal.evaluation.calibration import class_reliability, top_label_reliability
from gpal.evaluation.metrics import confusion_matrix

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Figures", "Render", "drawn", "held_out_figures", "kept_in", "report_figures", "sky_maps"]

#: caption -> the figure's files (a path in the run folder -> its bytes).
Figures = dict[str, dict[str, bytes]]
#: How a figure's files are made: ``render(name, draw)``, ``draw()`` the matplotlib figure.
Render = Callable[[str, Callable[[], object]], dict[str, bytes]]


def drawn(name: str, draw: Callable[[], object]) -> dict[str, bytes]:
    """The figure drawn and rendered as PNG and PDF."""
    from gpal.evaluation.plots import figure_files

    return {f"{FIGURES_DIR}/{name}.{fmt}": data for fmt, data in figure_files(draw()).items()}


def kept_in(folder: Path, path: Callable[[str], str]) -> Render:
    """A `Render` that reads each figure's files from ``folder`` (``path``: where the folder's layout keeps a file),
    drawing only one the folder lacks."""
    def render(name: str, draw: Callable[[], object]) -> dict[str, bytes]:
        files = {f"{FIGURES_DIR}/{name}.{fmt}": folder / path(f"{FIGURES_DIR}/{name}.{fmt}") for fmt in ("png", "pdf")}
        if not all(file.is_file() for file in files.values()):
            return drawn(name, draw)
        return {name: file.read_bytes() for name, file in files.items()}

    return render


def _confusion(run: HeldOutRun, render: Render) -> Figures:
    def draw() -> object:
        from gpal.evaluation.plots import plot_confusion_summary

        return plot_confusion_summary(confusion_matrix(run.y, run.proba, len(run.classes)), run.classes,
                                      title=f"held-out confusion matrix ({run.y.size} sources)")

    return {"Held-out confusion matrix: counts, completeness and purity (rows = predicted class, columns = true class)":
            render("confusion_matrix", draw)}


def _reliability(run: HeldOutRun, render: Render) -> Figures:
    def draw() -> object:
        from gpal.evaluation.plots import plot_reliability

        return plot_reliability(top_label_reliability(run.y, run.proba, n_bins=N_BINS),
                                title="held-out reliability (top label)")

    return {"Held-out reliability diagram (numbers: sources per bin)": render("reliability", draw)}


def _reliability_per_class(run: HeldOutRun, render: Render) -> Figures:
    def draw() -> object:
        from gpal.evaluation.plots import plot_reliability

        per_class = {c: class_reliability(run.y, run.proba, k, n_bins=10) for k, c in enumerate(run.classes)}
        return plot_reliability(per_class,
                                title="held-out reliability per class", xlabel="predicted probability of the class")

    return {"Held-out reliability of each class's probability, sparse classes included (hollow: bins of few "
            "sources)": render("reliability_per_class", draw)}


def sky_maps(run: FinishedRun, render: Render = drawn) -> Figures:
    """The predicted classes and the predictive entropy of the point sources on the sky (none when no source has a
    position; extended sources have no point-source class)."""
    frame, classes = run.frame, run.classes
    placed = np.isfinite(frame["GLON"]) & np.isfinite(frame["GLAT"])
    sky = frame[placed & frame["predicted_class"].isin(classes)]
    if not len(sky):
        return {}
    glon, glat = sky["GLON"].to_numpy(), sky["GLAT"].to_numpy()
    codes = np.array([classes.index(c) for c in sky["predicted_class"]], dtype=np.int64)
    select = run.table.meta.get("SELECT", "").replace(",", " + ")
    left = _left_out(frame, placed, classes)
    shown = f"{len(sky)} of the {len(frame)} classified {select} sources" + (f" ({left} left out)" if left else "")
    def draw_classes() -> object:
        from gpal.evaluation.plots import plot_sky_classes

        return plot_sky_classes(glon, glat, codes, classes, title=f"predicted class of {shown}")

    def draw_entropy() -> object:
        from gpal.evaluation.plots import plot_sky_values

        return plot_sky_values(glon, glat, sky["entropy"].to_numpy(), vmin=0.0, vmax=float(np.log(len(classes))),
                               title=f"predictive entropy (nats) of {shown}")

    return {f"Sky map of the predicted classes: {shown}": render("sky_classes", draw_classes),
            f"Sky map of the predictive entropy (high = uncertain, drawn on top): {shown}": render("sky_entropy",
                                                                                                 draw_entropy)}


def _left_out(frame: "pd.DataFrame", placed: "pd.Series", classes: list[str]) -> str:
    """What a sky map leaves out, in words: the extended sources (no point-source class) and any without a position."""
    parts = []
    extended = int((placed & ~frame["predicted_class"].isin(classes)).sum())
    if extended:
        parts.append(f"{extended} extended")
    if int((~placed).sum()):
        parts.append(f"{int((~placed).sum())} without a position")
    return ", ".join(parts)


def held_out_figures(run: HeldOutRun, stop: Callable[[], None] = lambda: None, render: Render = drawn) -> Figures:
    """The held-out confusion matrix and reliability diagrams; ``stop()`` is called before each (it raises to stop)."""
    figures: Figures = {}
    for figure in (_confusion, _reliability, _reliability_per_class):
        stop()
        figures.update(figure(run, render))
    return figures


def report_figures(run: FinishedRun, held_out: Figures | None = None, render: Render = drawn) -> Figures:
    """The held-out figures (made here unless ``held_out`` holds them already), and the sky maps of the classified
    sources, each made by ``render``."""
    return {**(held_out_figures(run, render=render) if held_out is None else held_out), **sky_maps(run, render)}

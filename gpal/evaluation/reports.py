"""Tables for papers and a Markdown report that ties tables and figures together.

Every table is written three ways from one DataFrame: CSV with full-precision
numbers (for further analysis), Markdown (for reports and issues) and a LaTeX
``tabular`` (for the paper).  The Markdown and LaTeX writers are small and local so
that gpal does not need jinja2 or tabulate, which pandas wants for its own writers.
Every file is written atomically (temp file in the same folder + ``os.replace``):
a reader or an interrupted run never sees half a file.

Confusion matrices follow :mod:`gpal.evaluation.metrics`: rows = predicted class, columns =
true class, as Table 10 of Villacampa-Calvo et al.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Callable, Literal, Mapping, Sequence

import numpy as np
import pandas as pd

from gpal.evaluation.calibration import (
    brier_score,
    classwise_ece,
    expected_calibration_error,
    maximum_calibration_error,
)
from gpal.evaluation.intervals import binomial_interval
from gpal.evaluation.metrics import error_rate, format_mean_se, mean_se, negative_log_likelihood
from gpal.files import REPORT_FILE, write_files, write_text_atomic
from gpal.warning_filters import changed_filters

__all__ = [
    "prediction_metrics",
    "row_normalize",
    "column_normalize",
    "completeness_purity",
    "confusion_matrix_summary",
    "confusion_table",
    "metric_summary",
    "metric_table",
    "markdown_table",
    "latex_table",
    "report_page",
    "table_files",
    "write_table",
    "write_report",
    "REPORT_FILE",
]

Spread = Literal["std", "se"]


# ----------------------------------------------------------------------- files
# --------------------------------------------------------------------- metrics
def prediction_metrics(
    y_true: np.ndarray, proba: np.ndarray, n_bins: int = 15, strategy: Literal["uniform", "quantile"] = "uniform"
) -> dict[str, float]:
    """Every per-split score of a probabilistic classifier, as one row of a metric table."""
    return {
        "nll": negative_log_likelihood(y_true, proba),
        "error": error_rate(y_true, proba),
        "brier": brier_score(y_true, proba),
        "ece": expected_calibration_error(y_true, proba, n_bins, strategy),
        "mce": maximum_calibration_error(y_true, proba, n_bins, strategy),
        "classwise_ece": classwise_ece(y_true, proba, n_bins, strategy),
    }


# ---------------------------------------------------------- confusion matrices
def row_normalize(matrix: np.ndarray) -> np.ndarray:
    """Divide each row by its sum: with rows = predicted, entry [p, t] = P(true t | predicted p).

    A row with no points (class never predicted) is NaN, not 0: nothing was observed.
    """
    m = np.asarray(matrix, dtype=np.float64)
    totals = m.sum(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(totals > 0, m / totals, np.nan)


def column_normalize(matrix: np.ndarray) -> np.ndarray:
    """Divide each column by its sum: with columns = true, entry [p, t] = P(predicted p | true t).

    The diagonal is each class's completeness (recall); an empty column is NaN.
    """
    return np.swapaxes(row_normalize(np.swapaxes(np.asarray(matrix, dtype=np.float64), -1, -2)), -1, -2)


def completeness_purity(counts: np.ndarray, class_names: Sequence[str], level: float = 0.95) -> pd.DataFrame:
    """Per class: completeness (share of its true sources found) and purity (share of its predictions right).

    ``counts`` is one confusion matrix (rows = predicted, columns = true); each
    fraction comes with its Jeffreys binomial interval at ``level``.
    """
    m = np.asarray(counts)
    names = [str(c) for c in class_names]
    if m.shape != (len(names), len(names)):
        raise ValueError(f"counts must be ({len(names)}, {len(names)}) for classes {names}; got shape {m.shape}")
    hits, true_n, predicted_n = np.diag(m), m.sum(axis=0), m.sum(axis=1)
    rows = {"class": names, "true": true_n.astype(int), "predicted": predicted_n.astype(int)}
    for name, n in (("completeness", true_n), ("purity", predicted_n)):
        low, high = binomial_interval(hits, n, level)
        rows[name] = np.where(n > 0, hits / np.maximum(n, 1), np.nan)
        rows[f"{name}_low"], rows[f"{name}_high"] = low, high
    return pd.DataFrame(rows)


def confusion_matrix_summary(
    matrices: Sequence[np.ndarray], normalize: bool = False, spread: Spread = "std"
) -> tuple[np.ndarray, np.ndarray]:
    """Cell-wise mean and spread of confusion matrices from repeated splits.

    ``spread="std"`` is the sample standard deviation (ddof=1) across splits, the
    split-to-split scatter; ``"se"`` divides it by sqrt(number of splits), the
    uncertainty of the mean (the size of the ± in Table 10 of the noisy-input GP
    paper, e.g. 17.66 ± 0.31 over 100 splits of 46 test points).  With
    ``normalize=True`` each matrix is row-normalised first and a split whose row is
    empty does not count towards that row's statistics.  One matrix gives NaN spread.
    """
    if spread not in ("std", "se"):
        raise ValueError(f"spread must be 'std' or 'se'; got {spread!r}")
    if len(matrices) == 0:
        raise ValueError("confusion_matrix_summary needs at least one confusion matrix")
    shapes = sorted({np.shape(m) for m in matrices})
    if len(shapes) != 1 or len(shapes[0]) != 2 or shapes[0][0] != shapes[0][1]:
        raise ValueError(f"confusion matrices must all be square (C, C) of one shape; got shapes {shapes}")
    stack = np.stack([np.asarray(m, dtype=np.float64) for m in matrices])
    if not np.isfinite(stack).all() or (stack < 0).any():
        raise ValueError("confusion matrices must hold finite, non-negative counts")
    if normalize:
        stack = row_normalize(stack)
    n = np.sum(~np.isnan(stack), axis=0)
    with changed_filters():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN cells are NaN on purpose
        mean = np.nanmean(stack, axis=0)
        std = np.where(n > 1, np.nanstd(stack, axis=0, ddof=1), np.nan)
        return mean, (std if spread == "std" else std / np.sqrt(n))


def confusion_table(
    summaries: Mapping[str, tuple[np.ndarray, np.ndarray]], class_names: Sequence[str], digits: int = 2
) -> pd.DataFrame:
    """Table 10 layout: one row per (predicted class, method), one column per true class, cells 'mean ± spread'.

    ``summaries`` maps a method name to the (mean, spread) pair of
    :func:`confusion_matrix_summary`.
    """
    names = [str(c) for c in class_names]
    if not summaries:
        raise ValueError("confusion_table needs at least one method")
    for method, (mean, sd) in summaries.items():
        if np.shape(mean) != (len(names), len(names)) or np.shape(sd) != np.shape(mean):
            raise ValueError(
                f"method {method!r}: mean and spread must be ({len(names)}, {len(names)}) for classes {names}; "
                f"got {np.shape(mean)} and {np.shape(sd)}"
            )
    rows = []
    for p, pred in enumerate(names):
        for method, (mean, sd) in summaries.items():
            cells = {f"{t} (true)": _cell(mean[p][k], sd[p][k], digits) for k, t in enumerate(names)}
            rows.append({"predicted": f"{pred} (pred.)", "method": method, **cells})
    return pd.DataFrame(rows)


def _cell(mean: float, spread: float, digits: int) -> str:
    """'mean ± spread'; 'n/a' for a row-normalised cell that no split defined."""
    return "n/a" if np.isnan(mean) else format_mean_se(mean, spread, digits)


# -------------------------------------------------------------- metric tables
def metric_summary(results: pd.DataFrame, metrics: Sequence[str], by: str | Sequence[str] = "method") -> pd.DataFrame:
    """Mean and standard error over repetitions of each metric, one row per group.

    ``results`` is tidy: one row per (group, repetition) with a numeric column per
    metric.  Returns columns ``<metric>_mean``, ``<metric>_se`` and ``n``.
    """
    keys = [by] if isinstance(by, str) else list(by)
    missing = [c for c in [*keys, *metrics] if c not in results.columns]
    if missing:
        raise ValueError(f"results lack column(s) {missing}; it has {list(results.columns)}")
    if not metrics:
        raise ValueError("metrics must name at least one metric column")
    for m in metrics:
        if not pd.api.types.is_numeric_dtype(results[m]):
            raise TypeError(f"metric column {m!r} must be numeric; got dtype {results[m].dtype}")
    rows = []
    for group, frame in results.groupby(keys, sort=False):
        row = dict(zip(keys, group if isinstance(group, tuple) else (group,)))
        for m in metrics:
            row[f"{m}_mean"], row[f"{m}_se"] = mean_se(frame[m].to_numpy())
        row["n"] = len(frame)
        rows.append(row)
    return pd.DataFrame(rows).set_index(keys)


def metric_table(summary: pd.DataFrame, metrics: Sequence[str], digits: int = 3) -> pd.DataFrame:
    """Display form of :func:`metric_summary`: one 'mean ± SE' string column per metric."""
    missing = [f"{m}_{s}" for m in metrics for s in ("mean", "se") if f"{m}_{s}" not in summary.columns]
    if missing:
        raise ValueError(f"summary lacks column(s) {missing}; build it with metric_summary")
    table = pd.DataFrame(
        {m: [format_mean_se(a, b, digits) for a, b in zip(summary[f"{m}_mean"], summary[f"{m}_se"])] for m in metrics},
        index=summary.index,
    )
    return table.reset_index()


# -------------------------------------------------------------------- writers
def markdown_table(table: pd.DataFrame) -> str:
    """GitHub-flavoured Markdown: header row, rule (numbers right-aligned), one line per row."""
    def cell(value: object) -> str:
        return str(value).replace("|", "\\|").replace("\n", " ")

    right = [pd.api.types.is_numeric_dtype(table[c]) for c in table.columns]
    lines = [
        "| " + " | ".join(cell(c) for c in table.columns) + " |",
        "|" + "|".join("---:" if r else "---" for r in right) + "|",
    ]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in table.itertuples(index=False)]
    return "\n".join(lines) + "\n"


_LATEX_ESCAPES = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
    "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
    "±": r"$\pm$",
}


def _latex_escape(value: object) -> str:
    return "".join(_LATEX_ESCAPES.get(ch, ch) for ch in str(value))


def latex_table(table: pd.DataFrame, caption: str | None = None, label: str | None = None) -> str:
    """A booktabs ``tabular`` (inside a ``table`` float when a caption or label is given)."""
    align = "".join("r" if pd.api.types.is_numeric_dtype(table[c]) else "l" for c in table.columns)
    body = [
        rf"\begin{{tabular}}{{{align}}}",
        r"\toprule",
        " & ".join(_latex_escape(c) for c in table.columns) + r" \\",
        r"\midrule",
        *(" & ".join(_latex_escape(v) for v in row) + r" \\" for row in table.itertuples(index=False)),
        r"\bottomrule",
        r"\end{tabular}",
    ]
    if caption is None and label is None:
        return "\n".join(body) + "\n"
    head = [r"\begin{table}", r"\centering"]
    if caption is not None:
        head.append(rf"\caption{{{_latex_escape(caption)}}}")
    if label is not None:
        head.append(rf"\label{{{label}}}")
    return "\n".join([*head, *body, r"\end{table}"]) + "\n"


def table_files(
    table: pd.DataFrame, data: pd.DataFrame | None = None, caption: str | None = None
) -> dict[str, str]:
    """A table's three texts in memory, by suffix: ``csv`` (from ``data``, full-precision numbers, if given), ``md`` and
    ``tex`` (from ``table``)."""
    csv_frame = table if data is None else data
    return {"csv": csv_frame.to_csv(index=not isinstance(csv_frame.index, pd.RangeIndex)),
            "md": markdown_table(table), "tex": latex_table(table, caption=caption)}


def write_table(
    path_without_suffix: str | os.PathLike,
    table: pd.DataFrame,
    data: pd.DataFrame | None = None,
    caption: str | None = None,
) -> dict[str, Path]:
    """Write ``<path>.csv``, ``.md`` and ``.tex`` (`table_files`)."""
    stem = Path(path_without_suffix)
    if stem.suffix in (".csv", ".md", ".tex"):
        raise ValueError(f"give the path without a suffix (got {stem}); .csv, .md and .tex are added")
    texts = table_files(table, data, caption)
    paths = {ext: stem.with_name(f"{stem.name}.{ext}") for ext in texts}
    write_files(stem.parent, {path.name: texts[ext] for ext, path in paths.items()})
    return paths


def report_page(
    title: str,
    figures: Mapping[str, Mapping[str, str]],
    tables: Mapping[str, Mapping[str, str]],
    text: str,
    markdown: Callable[[str], str],
) -> str:
    """A Markdown page: ``text``, then each table inline (with links to its CSV and LaTeX), then each figure.

    ``tables`` and ``figures`` map a caption to its files, by suffix, as links relative to the page;
    ``markdown(link)`` is the text of a table's Markdown file.
    """
    lines = [f"# {title}", ""]
    if text:
        lines += [text.strip(), ""]
    for caption, links in tables.items():
        if "md" not in links:
            raise ValueError(f"table {caption!r} has no Markdown file; pass what write_table returned")
        others = ", ".join(f"[{ext.upper()}]({link})" for ext, link in links.items() if ext != "md")
        lines += [f"## {caption}", "", markdown(links["md"]).rstrip(), ""]
        if others:
            lines += [f"Also as {others}.", ""]
    for caption, links in figures.items():
        if "png" not in links:
            raise ValueError(f"figure {caption!r} has no PNG file; pass what save_figure returned")
        others = ", ".join(f"[{ext.upper()}]({link})" for ext, link in links.items() if ext != "png")
        lines += [f"## {caption}", "", f"![{caption}]({links['png']})", ""]
        if others:
            lines += [f"Also as {others}.", ""]
    return "\n".join(lines)


def write_report(
    out_dir: str | os.PathLike,
    title: str,
    figures: Mapping[str, Mapping[str, Path]] | None = None,
    tables: Mapping[str, Mapping[str, Path]] | None = None,
    text: str = "",
    filename: str = REPORT_FILE,
) -> Path:
    """Write `report_page` as ``out_dir/filename``.

    ``tables`` maps a caption to the paths :func:`write_table` returned and
    ``figures`` maps a caption to the paths :func:`gpal.evaluation.plots.save_figure` returned;
    links are relative to ``out_dir`` so the folder can be moved as a whole.
    """
    out = Path(out_dir)

    def links(paths: Mapping[str, Path]) -> dict[str, str]:
        return {ext: Path(os.path.relpath(Path(p).resolve(), out.resolve())).as_posix() for ext, p in paths.items()}

    page = report_page(title, {c: links(p) for c, p in (figures or {}).items()},
                       {c: links(p) for c, p in (tables or {}).items()}, text,
                       lambda link: (out / link).read_text(encoding="utf-8"))
    return write_text_atomic(out / filename, page)

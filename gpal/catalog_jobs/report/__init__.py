"""The main job's report: ``metrics.json``, the tables, the figures and ``report.md``.

Built from a finished run (`gpal.catalog_jobs.report.inputs.FinishedRun`): the one the main job holds in memory,
or one read from the files of a finished `classify_catalog` folder (`gpal.catalog_jobs.layout`, either layout), so
a report can be remade (``gpal report``: `write_classify_report`) without refitting anything.  Its files are made
in memory (`report_files`) and written together, each where the folder's layout keeps it.
One module per part, in the order `report_files` builds them:

- `gpal.catalog_jobs.report.inputs`: the run's results (`FinishedRun`), and the readers of a folder's files;
- `gpal.catalog_jobs.follow_up`: the follow-up lists, beside the classifications;
- `gpal.catalog_jobs.report.measures`: the held-out check, the comparison with the
  baselines, the faintest quarter, the population shift; ``metrics.json``;
- `gpal.catalog_jobs.report.figures`: one function per figure (``figures/``);
- `gpal.catalog_jobs.report.tables`: one function per table (``tables/``);
- `gpal.catalog_jobs.report.text`: one function per paragraph of ``report.md``, and the
  terminal's `headline`.
"""

from __future__ import annotations

import os
from pathlib import Path

from gpal.catalog_jobs.follow_up import follow_up_files
from gpal.catalog_jobs.layout import CURRENT_LAYOUT, METRICS_FILE, REPORT_FILE, FolderLayout, folder_layout
from gpal.catalog_jobs.report.figures import Figures, Render, drawn, report_figures
from gpal.catalog_jobs.report.inputs import FinishedRun, read_finished_parts
from gpal.catalog_jobs.report.measures import ERROR_BLIND_MODEL, MODEL_NAME, measure, run_metrics
from gpal.catalog_jobs.report.tables import report_tables
from gpal.catalog_jobs.report.text import headline, report_text
from gpal.evaluation.reports import report_page
from gpal.files import json_text, write_files

__all__ = ["ERROR_BLIND_MODEL", "MODEL_NAME", "headline", "report_files", "write_classify_report"]


def write_classify_report(folder: str | os.PathLike) -> Path:
    """Rebuild ``metrics.json``, the tables, figures and ``report.md`` of a finished `classify_catalog` folder from
    its files (``gpal report``).

    The folder is resolved here, once, as the main job resolves its own: its layout read, its files read into the
    run (`gpal.catalog_jobs.report.inputs.read_finished_parts`), and the report's files written where the layout
    keeps them (a folder of gpal <= 0.3 keeps its own); the parts that build the report see the run and the layout,
    the folder only as the words of the rebuild command.
    """
    folder = Path(folder)
    layout = folder_layout(folder)
    run = FinishedRun(**read_finished_parts(folder, layout))
    files = report_files(run, folder, layout)
    write_files(folder, {layout.path(name): data for name, data in files.items()})
    return folder / layout.path(REPORT_FILE)


def report_files(run: FinishedRun, folder: Path, layout: FolderLayout = CURRENT_LAYOUT,
                 held_out_figures: Figures | None = None, render: Render = drawn) -> dict[str, str | bytes]:
    """The lists, ``metrics.json``, the figures, the tables and (last) ``report.md`` of the main job's ``run`` for
    its ``folder`` (kept by ``layout``, which the report's links follow), made in memory, by path in this gpal's
    layout; ``held_out_figures``: those already drawn (`gpal.catalog_jobs.report.figures.held_out_figures`), the
    others made by ``render``."""
    list_files, lists = follow_up_files(run.table, run.training.get("merge", {}))
    check = measure(run)
    metrics = run_metrics(run, check)
    figures = report_figures(run, held_out_figures, render)
    tables = report_tables(run, check, metrics, lists, layout)
    table_files = {name: text for files in tables.values() for name, text in files.items()}
    text = report_text(run, check, metrics, layout, folder)
    page = report_page("gpal classify: " + str(run.table.meta.get("CATALOG")),
                       {caption: _by_suffix(files) for caption, files in figures.items()},
                       {caption: _by_suffix(files) for caption, files in tables.items()}, text, table_files.__getitem__)
    return {**list_files, METRICS_FILE: json_text(metrics),
            **{name: data for files in figures.values() for name, data in files.items()}, **table_files,
            REPORT_FILE: page}


def _by_suffix(files: dict[str, object]) -> dict[str, str]:
    """A figure's or table's files as the page links them: suffix -> path."""
    return {Path(name).suffix[1:]: name for name in files}

"""The main job's report: ``metrics.json``, the tables, the figures and ``report.md``.

Everything is rebuilt from the files of a finished `classify_catalog` folder
(`gpal.catalog_jobs.layout`), so a report can be remade (``gpal report``) without
refitting anything.  One module per part, in the order `write_classify_report` builds them:

- `gpal.catalog_jobs.report.inputs`: the folder's files, read once (`FinishedRun`);
- `gpal.catalog_jobs.follow_up`: the follow-up lists, written beside the classifications;
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

from gpal.catalog_jobs.follow_up import write_follow_up_lists
from gpal.catalog_jobs.layout import REPORT_FILE
from gpal.catalog_jobs.report.figures import Figures, write_figures
from gpal.catalog_jobs.report.inputs import read_run
from gpal.catalog_jobs.report.measures import ERROR_BLIND_MODEL, MODEL_NAME, measure, write_metrics
from gpal.catalog_jobs.report.tables import write_tables
from gpal.catalog_jobs.report.text import headline, report_text
from gpal.evaluation.reports import write_report

__all__ = ["ERROR_BLIND_MODEL", "MODEL_NAME", "headline", "write_classify_report"]


def write_classify_report(folder: str | os.PathLike, held_out_figures: Figures | None = None) -> Path:
    """(Re)build ``metrics.json``, the tables, figures and ``report.md`` of a `classify_catalog` folder from its files;
    ``held_out_figures``: those already drawn (`gpal.catalog_jobs.report.figures.held_out_figures`)."""
    folder = Path(folder)
    run = read_run(folder)
    lists = write_follow_up_lists(run.table, folder, run.training.get("merge", {}))
    check = measure(run)
    metrics = write_metrics(run, check)
    figures = write_figures(run, held_out_figures)
    tables = write_tables(run, check, metrics, lists)
    return write_report(folder, "gpal classify: " + str(run.table.meta.get("CATALOG")), figures, tables,
                        report_text(run, check, metrics), filename=REPORT_FILE)

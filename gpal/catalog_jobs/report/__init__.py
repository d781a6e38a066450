"""The main job's report: ``metrics.json``, the tables, the figures and ``report.md``.

Built from a finished run (`gpal.catalog_jobs.report.inputs.FinishedRun`): the one the main job holds in memory,
or one read from the files of a finished `classify_catalog` folder (`gpal.catalog_jobs.layout`), so a report can
be remade (``gpal report``: `write_classify_report`) without refitting anything.  One module per part, in the order
`write_run_report` builds them:

- `gpal.catalog_jobs.report.inputs`: the run's results (`FinishedRun`), or a folder's files read once;
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
from gpal.catalog_jobs.layout import METRICS_FILE, REPORT_FILE
from gpal.catalog_jobs.report.figures import Figures, write_figures
from gpal.catalog_jobs.report.inputs import FinishedRun, read_run
from gpal.catalog_jobs.report.measures import ERROR_BLIND_MODEL, MODEL_NAME, measure, run_metrics
from gpal.catalog_jobs.report.tables import write_tables
from gpal.catalog_jobs.report.text import headline, report_text
from gpal.evaluation.reports import write_report
from gpal.files import write_json_atomic

__all__ = ["ERROR_BLIND_MODEL", "MODEL_NAME", "headline", "write_classify_report", "write_run_report"]


def write_classify_report(folder: str | os.PathLike) -> Path:
    """Rebuild ``metrics.json``, the tables, figures and ``report.md`` of a finished `classify_catalog` folder from
    its files (``gpal report``)."""
    folder = Path(folder)
    return write_run_report(read_run(folder), folder)


def write_run_report(run: FinishedRun, folder: Path, held_out_figures: Figures | None = None) -> Path:
    """Write ``metrics.json``, the tables, figures and ``report.md`` of the main job's ``run`` into its ``folder``;
    ``held_out_figures``: those already drawn (`gpal.catalog_jobs.report.figures.held_out_figures`)."""
    lists = write_follow_up_lists(run.table, folder, run.training.get("merge", {}))
    check = measure(run)
    metrics = run_metrics(run, check)
    write_json_atomic(folder / METRICS_FILE, metrics)
    figures = write_figures(run, folder, held_out_figures)
    tables = write_tables(run, folder, check, metrics, lists)
    return write_report(folder, "gpal classify: " + str(run.table.meta.get("CATALOG")), figures, tables,
                        report_text(run, check, metrics, folder), filename=REPORT_FILE)

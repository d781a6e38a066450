"""The lists of a finished main job cut again (``gpal report FOLDER --candidate-visible-from FAST ...``).

Which rows a list keeps, and the formats it is written in, are settings of the lists alone (`LIST_SETTINGS`): the
classifications they are cut from stay as the run made them.  A re-cut reads the folder's results, records the new
settings in the classifications' keywords (where the lists and the report read them), and writes the lists, the
tables and ``report.md`` again, with the figures as the folder holds them: no model is loaded, nothing is predicted.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any

from gpal.catalog_jobs.list_settings import EXTRA_FORMATS, LIST_SETTINGS
from gpal.catalog_jobs.job_settings import check_settings, header_of, recorded_settings, settings_from_header
from gpal.catalog_jobs.layout import CLASSIFICATIONS_CSV, CLASSIFICATIONS_FITS, LISTS_DIR, REPORT_FILE, folder_layout
from gpal.catalog_jobs.report import report_files
from gpal.catalog_jobs.report.figures import kept_in
from gpal.catalog_jobs.report.inputs import FINISHED_FILES, FinishedRun, read_finished_parts
from gpal.catalog_jobs.visibility import declination_range
from gpal.catalog_jobs.tables import (
    TWIN_SUFFIX, classified_table_files, extra_names, reheaded_files,
)
from gpal.files import replace_files
from gpal.runs.output_dir import record_identity, recorded_identity

__all__ = ["LIST_SETTINGS", "recut_lists"]

#: The classifications' ECSV twin, by path in the run folder.
TWIN_NAME = str(Path(CLASSIFICATIONS_CSV).with_suffix(TWIN_SUFFIX))



def recut_lists(folder: str | os.PathLike, **settings: Any) -> Path:
    """Write the lists of the finished `gpal.catalog_jobs.classify.classify_catalog` ``folder`` again with
    ``settings`` (`LIST_SETTINGS`; one not given keeps the folder's), and the classifications' keywords, the
    report's tables and ``report.md`` with them; the report's path.

    Every file is written under a temporary name first and all are renamed at the end, so an interruption before
    the end leaves the earlier lists as they were.  Files of a format no longer asked for are removed.  The run's
    record takes the new settings, so ``gpal classify`` with the same options reuses the folder.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"run folder {folder} does not exist; give the --out folder of gpal classify")
    layout = folder_layout(folder)
    missing = [layout.path(name) for name in FINISHED_FILES if not (folder / layout.path(name)).is_file()]
    if missing:
        raise FileNotFoundError(f"{folder} is not a finished gpal classify folder: {', '.join(missing)} missing; the "
                                "lists are cut again from the classifications of a finished run (gpal classify)")
    if settings.get("candidate_visible_from") is not None:
        declination_range(settings["candidate_visible_from"])  # an unknown telescope: the known ones, and the way round
    parts = read_finished_parts(folder, layout)
    table = parts["table"]
    was = settings_from_header(LIST_SETTINGS, table.meta)
    values = check_settings(LIST_SETTINGS, {**was, **settings}, "recut_lists").as_dict()
    table = replace(table, meta={**table.meta, **header_of(LIST_SETTINGS, values)})
    run = FinishedRun(**{**parts, "table": table})
    formats = list(values["table_formats"])
    files = reheaded_files(table, {name: folder / layout.path(name) for name in (TWIN_NAME, CLASSIFICATIONS_FITS)},
                           [setting.keyword for setting in LIST_SETTINGS.values()])
    files.update({name: data for name, data in classified_table_files(table, CLASSIFICATIONS_CSV, formats).items()
                  if Path(name).suffix[1:] not in ("csv", "ecsv")})  # the extra formats, as asked
    files.update(report_files(run, folder, layout, render=kept_in(folder, layout.path)))
    dropped = [layout.path(name) for fmt in sorted(set(EXTRA_FORMATS) - set(formats))
               for name in _tables_in(folder, layout.path, fmt)]
    replace_files(folder, {layout.path(name): data for name, data in files.items()}, remove=dropped)
    _record(folder, values)
    return folder / layout.path(REPORT_FILE)


def _tables_in(folder: Path, path: Any, fmt: str) -> set[str]:
    """The classifications and lists the folder holds in the extra format ``fmt`` (paths in this gpal's layout)."""
    names = extra_names(CLASSIFICATIONS_CSV, [fmt])
    lists = folder / path(LISTS_DIR)
    names += [f"{LISTS_DIR}/{entry.name}" for entry in lists.iterdir() if entry.suffix == EXTRA_FORMATS[fmt]]
    return {name for name in names if (folder / path(name)).is_file()}


def _record(folder: Path, values: dict[str, Any]) -> None:
    """The run's record with the lists' new settings in place of the old (a folder without a signed record, as
    gpal <= 0.2 wrote, keeps none)."""
    identity = recorded_identity(folder)
    if isinstance(identity, dict):
        kept = {name: value for name, value in identity.items() if name not in LIST_SETTINGS}
        record_identity(folder, dict(sorted({**kept, **recorded_settings(LIST_SETTINGS, values)}.items())))

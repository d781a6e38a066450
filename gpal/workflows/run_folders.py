"""``gpal report``: which kind of gpal run a folder holds, and its report rebuilt from its files.

Each kind is recognised by the files its own module names (`gpal.catalog_jobs.layout`,
`gpal.active.report`, `gpal.runs.repeated_splits`), so renaming a file there renames it here.
"""

from __future__ import annotations

import os
from pathlib import Path

from gpal.active.report import ACTIVE_FOLDER, is_active_folder
from gpal.catalog_jobs.active import write_campaign_report
from gpal.catalog_jobs.layout import CLASSIFY_FOLDER, is_classify_folder
from gpal.catalog_jobs.report import write_classify_report
from gpal.runs.repeated_splits import REPEATED_SPLITS_FOLDER, is_repeated_splits_folder
from gpal.workflows.splits import rebuild_splits_report

__all__ = ["rebuild_report"]

#: Each kind of run folder: what marks it (in words), the test, the report's builder; the first match wins.
_KINDS = (
    (CLASSIFY_FOLDER, is_classify_folder, write_classify_report),
    (ACTIVE_FOLDER, is_active_folder, write_campaign_report),
    (REPEATED_SPLITS_FOLDER, is_repeated_splits_folder, rebuild_splits_report),
)


def rebuild_report(folder: str | os.PathLike) -> Path:
    """Rebuild the figures, tables and ``report.md`` of a finished run folder; the report's path."""
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"run folder {folder} does not exist")
    for _, holds, report in _KINDS:
        if holds(folder):
            return report(folder)
    kinds = [words for words, _, _ in _KINDS]
    raise ValueError(f"{folder} is not a gpal run folder; expected one of: {', '.join(kinds[:-1])}, or {kinds[-1]}")

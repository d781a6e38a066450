"""A docs page generated from records: where the docs are, each record's workflow checked, and writing the page
or checking that it is current.

The pages built this way (``docs/papers.md``, ``docs/results.md``) are never edited by hand, so a test
regenerates each in memory and compares it with the file (``--check``).
"""

from __future__ import annotations

import importlib.util
import re
import sys
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any, Mapping

from gpal.files import write_text_atomic

__all__ = ["DOCS", "RECORDS", "ROOT", "check_workflow", "lists_record", "read_study", "write_or_check"]

#: The repository's top; its docs folder, where the pages are built; the records they are built from, beside the
#: generators (``results/``, ``papers/``), neither in the site nor in the installed package.
ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
RECORDS = Path(__file__).resolve().parent / "records"

#: A lab file a record's command runs, named from the repository's top: a study's script or a workflow file.
_LAB_FILE = re.compile(r"(?<![\w/.-])((?:lab|benchmarks|gpal/workflows/files)/[\w./-]+\.(?:py|yaml))")
#: Where a study's declaration lives: its ``records`` list every record that names it as the workflow.
_STUDIES = "lab/studies/"


def check_workflow(path: Path, record: Mapping[str, Any], name: str) -> str:
    """The workflow that made ``record`` (read from ``path``, named ``name`` from the repository's top), checked.

    A number on a page cites a workflow a reader can run, so a record is refused (ValueError naming the file and the
    field) that names no ``workflow``, one that does not exist, a study declaration that does not list ``name`` in
    its ``records``, or a command that runs a lab script or workflow file that is gone.
    """
    workflow = record.get("workflow")
    if not isinstance(workflow, str) or not workflow.strip():
        raise ValueError(f"{path}: no field 'workflow': the workflow file, from the repository's top, that made its "
                         "numbers (gpal/workflows/files/main_job.yaml, lab/studies/open_sky.yaml)")
    if not (ROOT / workflow).is_file():
        raise ValueError(f"{path}: its workflow {workflow} (field 'workflow') does not exist; restore it, or retire "
                         "the record")
    if workflow.startswith(_STUDIES):
        try:
            study = read_study(ROOT / workflow)
        except ValueError as exc:
            raise ValueError(f"{path}: its workflow (field 'workflow') is not a valid declaration: {exc}") from None
        if not lists_record(study, name):
            raise ValueError(f"{path}: its workflow {workflow} (field 'workflow') does not list {name} in its "
                             f"'records' ({study['records']}); add it there, or name the study that made it")
    for field in ("command", "source"):
        for file in _LAB_FILE.findall(str(record.get(field, ""))):
            if not (ROOT / file).is_file():
                raise ValueError(f"{path}: field {field!r} names {file}, which does not exist; a record names "
                                 "what runs today (a moved script at its new path)")
    return workflow


def read_study(path: Path) -> dict[str, Any]:
    """The study declaration at ``path``, checked by the studies' runner (ValueError naming the file and field)."""
    return _study_runner().read_study(path)


def lists_record(study: Mapping[str, Any], record: str) -> bool:
    """Whether declaration ``study`` lists ``record`` (from the repository's top), by the studies' runner's rule."""
    return _study_runner().lists_record(study, record)


@cache
def _study_runner() -> ModuleType:
    """The studies' runner (``lab/studies/run.py``), whose `read_study` is the one reader of a declaration."""
    spec = importlib.util.spec_from_file_location("study_runner", ROOT / _STUDIES / "run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_or_check(page: Path, text: str, check: bool, regenerate: str) -> int:
    """Write ``text`` to ``page`` (exit status 0), or with ``check`` return 1 if the file differs from it.

    ``regenerate`` is the command that rebuilds the page, named in the message of a stale page.
    """
    if check:
        current = page.read_text(encoding="utf-8") if page.is_file() else ""
        if current != text:
            print(f"{page} is out of date with its records; run {regenerate}", file=sys.stderr)
            return 1
        return 0
    write_text_atomic(page, text)
    print(f"wrote {page}")
    return 0

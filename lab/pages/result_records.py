"""A recorded result: the numbers of a table, the workflow and command that produced them and the commit it ran at.

A record is a JSON file that a generated docs page (`lab/pages/results_page.py` in the repository) is built from::

    {"format": "gpal.result_record", "version": 1,
     "title": "...", "workflow": "gpal/workflows/files/main_job.yaml", "command": "gpal classify", "commit": "f1b836f",
     "settings": {...}, "source": "what the numbers were read from",
     "tables": [{"caption": "...", "columns": ["a", "b"], "align": "lr", "rows": [["x", 1.0]]}]}

``workflow`` is the YAML file, from the repository's top, that remakes the numbers: a ``gpal workflow`` file or a
study's declaration (``lab/studies/<name>.yaml``), so a page cites what a reader can run, not a script at a
commit.  ``command`` is what ran, ``commit`` `gpal.identity.source_commit` when the numbers were produced (a study's
``shared.code_commit``: the same, blind to changes in the records folders); a number is never recorded without
them.  Cells are strings (already formatted, with the digits the result deserves) or numbers.

A study rebuilds its records from its kept outputs (``lab/studies/run.py NAME --rebuild``); with the
environment variable `CHECK_VARIABLE` set, `write_record` compares instead of writing, so ``run.py NAME --rebuild
--check`` shows that the committed records are what the study's outputs make, without touching them.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Mapping, Sequence

from gpal.files import write_text_atomic
from gpal.identity import jsonable

__all__ = ["CHECK_VARIABLE", "FORMAT", "RecordMismatch", "checking", "make_record", "make_table", "outcome",
           "read_record", "table_markdown", "write_record"]

FORMAT = "gpal.result_record"
_VERSION = 1
#: Set (to anything) in the environment, `write_record` checks the file against the record instead of writing it.
CHECK_VARIABLE = "GPAL_RECORDS_CHECK"
_REQUIRED = {"title": str, "workflow": str, "command": str, "commit": str, "settings": dict, "source": str, "tables": list}


def make_table(columns: Sequence[str], rows: Sequence[Sequence[Any]], align: str | None = None,
               caption: str = "") -> dict[str, Any]:
    """One table of a record; ``align`` is one letter per column, ``l`` or ``r`` (default: all ``l``)."""
    table = {"caption": caption, "columns": list(columns), "align": align or "l" * len(columns),
             "rows": [list(r) for r in rows]}
    _check_table(table, "the table")
    return table


def make_record(title: str, command: str, commit: str, tables: Sequence[Mapping[str, Any]],
                settings: Mapping[str, Any] | None = None, source: str = "", *, workflow: str) -> dict[str, Any]:
    """A record as JSON (checked: every field present, every row as long as its columns).

    ``workflow`` is the YAML file from the repository's top that remakes it (``lab/studies/open_sky.yaml``).
    """
    record = {"format": FORMAT, "version": _VERSION, "title": title, "workflow": workflow, "command": command,
              "commit": commit, "settings": jsonable(dict(settings or {})), "source": source, "tables": [dict(t) for t in tables]}
    _check_record(record, "the record")
    return record


class RecordMismatch(ValueError):
    """A record file differs from the record its study's outputs make (raised in the check mode of `write_record`)."""


def checking() -> bool:
    """Whether records are compared instead of written (`CHECK_VARIABLE` set): a study writes none of its files then."""
    return bool(os.environ.get(CHECK_VARIABLE))


def write_record(path: Path, record: Mapping[str, Any]) -> Path:
    """Write ``record`` (checked first) to ``path`` as indented JSON, atomically; with `CHECK_VARIABLE` set, raise
    `RecordMismatch` naming the first field that differs from the file instead (nothing written)."""
    _check_record(record, str(path))
    if checking():
        _compare(read_record(path), json.loads(json.dumps(record)), str(path))
        return Path(path)
    write_text_atomic(Path(path), json.dumps(record, indent=1, ensure_ascii=False) + "\n")
    return Path(path)


def outcome(path: Path) -> str:
    """The line a script prints after `write_record` returned ``path``, worded here once so that a check is never
    reported as a write: ``recorded PATH``, or in check mode ``checked PATH: matches`` (a mismatch raised before)."""
    return f"checked {path}: matches" if checking() else f"recorded {path}"


def read_record(path: Path) -> dict[str, Any]:
    """A record file, checked; a file that is not one raises ValueError naming the file and the field."""
    try:
        record = json.loads(Path(path).read_text(encoding="utf-8"))
    except ValueError as exc:
        raise ValueError(f"{path} is not JSON ({exc})") from None
    _check_record(record, str(path))
    return record


def _compare(kept: Any, made: Any, where: str) -> None:
    if isinstance(kept, dict) and isinstance(made, dict):
        for key in sorted(set(kept) | set(made)):
            if key not in kept or key not in made:
                raise RecordMismatch(f"{where}: field {key!r} is only in the {'file' if key in kept else 'rebuilt record'}")
            _compare(kept[key], made[key], f"{where}: {key}")
    elif isinstance(kept, list) and isinstance(made, list):
        if len(kept) != len(made):
            raise RecordMismatch(f"{where}: {len(kept)} entries in the file, {len(made)} rebuilt")
        for i, (a, b) in enumerate(zip(kept, made)):
            _compare(a, b, f"{where}[{i}]")
    elif kept != made:
        raise RecordMismatch(f"{where}: the file has {kept!r}, the study's outputs make {made!r}")


def table_markdown(table: Mapping[str, Any]) -> str:
    """A record's table as a Markdown pipe table (its caption, if any, on the line before)."""
    def cell(value: Any) -> str:
        text = f"{value:.3f}" if isinstance(value, float) else str(value)
        return text.replace("|", "\\|").replace("\n", " ")

    lines = [f"{table['caption']}", ""] if table.get("caption") else []
    lines.append("| " + " | ".join(cell(c) for c in table["columns"]) + " |")
    lines.append("|" + "|".join("---:" if a == "r" else "---" for a in table["align"]) + "|")
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in table["rows"]]
    return "\n".join(lines) + "\n"


def _check_record(record: Any, where: str) -> None:
    if not isinstance(record, Mapping) or record.get("format") != FORMAT:
        raise ValueError(f"{where} is not a result record (expected a JSON object with format {FORMAT!r})")
    if record.get("version") != _VERSION:
        raise ValueError(f"{where}: record version {record.get('version')!r}, expected {_VERSION}")
    for key, kind in _REQUIRED.items():
        if not isinstance(record.get(key), kind):
            raise ValueError(f"{where}: field {key!r} must be a {kind.__name__}, got {type(record.get(key)).__name__}")
    for key in ("title", "workflow", "command", "commit"):
        if not record[key].strip():
            raise ValueError(f"{where}: field {key!r} is empty; a recorded number needs its {key}")
    workflow = record["workflow"]
    if not workflow.endswith(".yaml") or workflow.startswith("/"):
        raise ValueError(f"{where}: field 'workflow' is {workflow!r}; expected the YAML file that remakes the numbers, "
                         "from the repository's top (gpal/workflows/files/main_job.yaml, lab/studies/open_sky.yaml)")
    if not record["tables"]:
        raise ValueError(f"{where}: no tables")
    for i, table in enumerate(record["tables"]):
        _check_table(table, f"{where}, table {i}")


def _check_table(table: Any, where: str) -> None:
    if not isinstance(table, Mapping) or not isinstance(table.get("columns"), list) or not table["columns"]:
        raise ValueError(f"{where}: a table needs a non-empty list 'columns'")
    n = len(table["columns"])
    align = table.get("align")
    if not isinstance(align, str) or len(align) != n or set(align) - {"l", "r"}:
        raise ValueError(f"{where}: 'align' must be one of l / r per column ({n}), got {align!r}")
    rows = table.get("rows")
    if not isinstance(rows, list) or not rows:
        raise ValueError(f"{where}: a table needs at least one row")
    for j, row in enumerate(rows):
        if not isinstance(row, list) or len(row) != n:
            raise ValueError(f"{where}, row {j}: expected {n} cells (the columns {table['columns']}), got {row!r}")
        for value in row:
            if not isinstance(value, (str, int, float)) or isinstance(value, bool):
                raise ValueError(f"{where}, row {j}: cell {value!r} is not a string or a number")

"""Resumable units of a workflow: one atomic JSON file per finished unit.

A workflow is cut into independent units (a method on a data set, one noise level,
one repetition).  Each unit is a module-level function of plain arguments, so any
executor can run it; its JSON-able result is written atomically by this process the
moment it arrives.  A rerun computes only the units whose file is absent, so an
interrupted run loses at most the units in flight.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Mapping

from gpal.runs.executors import Executor
from gpal.runs.persistence import write_json_atomic

__all__ = ["run_units", "unit_file"]


def unit_file(out: str | Path, name: str) -> Path:
    """Where the result of unit ``name`` (a relative path like ``noise_0.1/known/NIMGP``) lives."""
    return Path(out) / "units" / f"{name}.json"


def _load(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except json.JSONDecodeError:
        return None  # unreadable (e.g. a disk that filled up): compute it again


def run_units(
    executor: Executor,
    fn: Callable[..., dict[str, Any]],
    units: Mapping[str, tuple],
    out: str | Path,
    *,
    desc: str,
    progress: bool = True,
) -> dict[str, dict[str, Any]]:
    """Run ``fn(*units[name])`` for every unit without a result file; return every unit's result."""
    results = {name: _load(unit_file(out, name)) for name in units}
    todo = [name for name, result in results.items() if result is None]
    if todo:
        for index, result in executor.map(fn, [units[name] for name in todo], desc=desc, progress=progress):
            write_json_atomic(unit_file(out, todo[index]), result)
            results[todo[index]] = result
    return results

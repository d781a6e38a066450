"""Resumable units of a workflow: one atomic JSON file per finished unit, the one runner every workflow uses.

A workflow is cut into independent units (a method on a data set, one noise level,
one repetition, one train/test split).  Each unit is a module-level function of plain
arguments, so any executor can run it; its JSON-able result is written atomically by
this process the moment it arrives.  A rerun computes only the units whose file is
absent, so an interrupted run loses at most the units in flight.

An interrupted fit is never a result: a unit whose training was stopped by Ctrl-C
raises ``FitInterrupted`` (``gpal.estimators.base.raise_if_interrupted``), nothing is written for it, and
the run stops with the interruption, to be resumed by the same command.
"""

from __future__ import annotations

import functools
import json
import traceback
from pathlib import Path
from typing import Any, Callable, Literal, Mapping

import numpy as np

from gpal.constraints import OneOf, check_values
from gpal.files import write_json_atomic
from gpal.registry import ON_ERROR
from gpal.runs.executors import Executor

__all__ = ["UNITS_DIR", "derived_seed", "run_units", "unit_file"]

#: The folder of a run's finished units, inside its output folder.
UNITS_DIR = "units"


def derived_seed(*keys: int) -> int:
    """A seed for one unit from the run's seed and the unit's coordinates, independent across units."""
    return int(np.random.SeedSequence([int(k) for k in keys]).generate_state(1)[0] % (2**31 - 1))


def unit_file(out: str | Path, name: str) -> Path:
    """Where the result of unit ``name`` (a relative path like ``noise_0.1/known/NIMGP``) lives."""
    return Path(out) / UNITS_DIR / f"{name}.json"


def error_file(out: str | Path, name: str) -> Path:
    """Where a unit that raised is recorded (``on_error="record"``); it is retried on the next run."""
    return Path(out) / UNITS_DIR / f"{name}.error.json"


def _load(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None  # unreadable (e.g. a disk that filled up): compute it again


def _recorded(fn: Callable[..., dict[str, Any]], name: str, *args: Any) -> tuple[bool, dict[str, Any]]:
    """Run a unit on the worker, catching its failure there so one unit cannot cancel the others."""
    try:
        return True, fn(*args)
    except Exception as exc:
        return False, {"unit": name, "error": repr(exc), "traceback": traceback.format_exc()}


def _raised(fn: Callable[..., dict[str, Any]], name: str, *args: Any) -> tuple[bool, dict[str, Any]]:
    """Run a unit, its failure propagating with its own type (so the CLI's exit codes hold) and the unit named."""
    try:
        return True, fn(*args)
    except Exception as exc:
        exc.add_note(f"in unit {name!r}")
        raise


def _batch(fn: Callable[..., list[Any]], on_error: str, names: list[str], *args: Any) -> list[tuple[bool, dict[str, Any]]]:
    """Run one batch of units on the worker: ``fn(names, *args)`` gives a result or an exception per unit."""
    try:
        results = fn(names, *args)
    except Exception as exc:
        if on_error == "raise":
            exc.add_note(f"in the batch of units {names}")
            raise
        results = [exc] * len(names)
    out = []
    for name, result in zip(names, results):
        if not isinstance(result, Exception):
            out.append((True, result))
        elif on_error == "raise":
            result.add_note(f"in unit {name!r}")
            raise result
        else:
            trace = "".join(traceback.format_exception(result))
            out.append((False, {"unit": name, "error": repr(result), "traceback": trace}))
    return out


def run_units(
    executor: Executor,
    fn: Callable[..., dict[str, Any]],
    units: Mapping[str, tuple],
    out: str | Path,
    *,
    desc: str,
    progress: bool = True,
    on_error: Literal["raise", "record"] = "raise",
    check: Callable[[str, dict[str, Any]], None] | None = None,
    batches: Callable[[list[str]], list[tuple[list[str], Callable[..., list[Any]], tuple]]] | None = None,
) -> dict[str, dict[str, Any]]:
    """Run ``fn(*units[name])`` for every unit without a result file; return every finished unit's result.

    ``check(name, result)`` sees each result already on disk and raises if it belongs to
    another run (a stale folder).  With ``on_error="record"`` a unit that raises leaves
    ``<name>.error.json`` instead of stopping the run and is absent from the returned
    results; a later success removes the record.  ``batches(todo)``, where given, groups the
    missing units into ``(names, batch_fn, args)``: one task calls ``batch_fn(names, *args)``,
    which returns a result (or the exception) per name, and each is written as it would be alone.
    """
    check_values({"on_error": OneOf(ON_ERROR)}, {"on_error": on_error})
    results = {name: _load(unit_file(out, name)) for name in units}
    if check is not None:
        for name, result in results.items():
            if result is not None:
                check(name, result)
    todo = [name for name, result in results.items() if result is None]
    if not todo:
        return {name: result for name, result in results.items() if result is not None}
    if batches is None:
        guarded = functools.partial(_recorded if on_error == "record" else _raised, fn)
        groups = [[name] for name in todo]
        tasks = [(name, *units[name]) for name in todo]  # flat, so an executor can share big arguments
        finished = ((groups[i], [done]) for i, done in executor.map(guarded, tasks, desc=desc, progress=progress))
    else:
        planned = batches(todo)
        groups = [names for names, _, _ in planned]
        tasks = [(batch_fn, on_error, names, *args) for names, batch_fn, args in planned]
        finished = ((groups[i], done) for i, done in executor.map(_batch, tasks, desc=f"{desc} (batches)",
                                                                   progress=progress))
    for names, done in finished:
        for name, (ok, result) in zip(names, done):
            if ok:
                write_json_atomic(unit_file(out, name), result)
                error_file(out, name).unlink(missing_ok=True)
                results[name] = result
            else:
                write_json_atomic(error_file(out, name), result)
    return {name: result for name, result in results.items() if result is not None}

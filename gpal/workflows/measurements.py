"""A workflow's measurements, every repeat's value: ``measurements.json`` in its run's folder.

A kind that measures settings (a data set, a noise level) × methods × metrics over repeats (splits,
problems, timed epochs) writes each value it measured beside the command that ran, the commit, the
settings and the counts it ran with.  Its report shows means; this file keeps what they were taken
over, so that a run's numbers can be set beside another table (a paper's, another run's) and judged
by intervals without rerunning it.  Each kind declares what it can measure (its ``produces``), and a
value outside that is refused, so a key read from this file names what the kind documents.
"""

from __future__ import annotations

import math
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from gpal.files import write_json_atomic
from gpal.identity import source_commit

__all__ = ["MEASUREMENTS_FILE", "Produced", "json_plain", "write_measurements"]

#: The file `write_measurements` writes into a run's folder.
MEASUREMENTS_FILE = "measurements.json"


@dataclass(frozen=True)
class Produced:
    """What a configured workflow measures: the settings, methods and metrics of its measurements."""

    settings: Sequence[str]
    methods: Sequence[str]
    metrics: Sequence[str]


def _command(config: Mapping[str, Any]) -> str:
    invocation = config.get("invocation") or {}
    words = ["gpal", "workflow", str(invocation.get("source", "?"))]
    for item in invocation.get("overrides", ()):
        words += ["--set", str(item)]
    return shlex.join(words)


def json_plain(value: Any) -> Any:
    """JSON's form of a value: a NaN or infinity (a failed or unmeasured value) as null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: json_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_plain(v) for v in value]
    return value


def write_measurements(
    out: Path,
    config: Mapping[str, Any],
    produced: Produced,
    measured: Mapping[tuple[str, str, str], Sequence[float]],
    budget: Mapping[str, int],
) -> dict[str, Any]:
    """Write ``measurements.json`` into ``out`` and return what it holds.

    ``measured[(setting, method, metric)]`` is the value of each repeat; ``budget`` the counts the run
    used (repeats, splits, epochs, ...).
    """
    for setting, method, metric in measured:
        if setting not in produced.settings or method not in produced.methods or metric not in produced.metrics:
            raise ValueError(f"measured {setting}/{method}/{metric}, which this workflow does not produce "
                             f"(settings {list(produced.settings)}, methods {list(produced.methods)}, "
                             f"metrics {list(produced.metrics)})")
    result = json_plain({
        "workflow": Path(str((config.get("invocation") or {}).get("source", "workflow"))).stem,
        "title": config.get("title"),
        "command": _command(config),
        "commit": source_commit(),
        "settings": {k: v for k, v in config.items() if k not in ("invocation", "description")},
        "budget": dict(budget),
        "values": [{"setting": s, "method": m, "metric": k, "values": [float(v) for v in values]}
                   for (s, m, k), values in measured.items()],
    })
    write_json_atomic(out / MEASUREMENTS_FILE, result)
    return result

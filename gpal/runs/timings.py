"""Where a job's time went: each step's wall and CPU seconds, kept as the job runs.

A step's CPU seconds are the whole process's over the step's span (`time.process_time`): TensorFlow's and NumPy's own
threads work for the step that called them, so the calling thread's CPU alone would miss most of a fit.  Work that
runs beside other steps (`gpal.runs.background.Beside`) shares its span with them, and its CPU figure includes
theirs; the record marks it ``beside``.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from typing import Any, Iterator

__all__ = ["StepTimes", "format_times", "since_process_start"]


class StepTimes:
    """The steps of one job in the order they ended: name -> wall and CPU seconds (thread-safe: work beside the
    steps records its own)."""

    def __init__(self) -> None:
        self._steps: list[dict[str, Any]] = []
        self._lock = threading.Lock()

    def add(self, name: str, wall: float, cpu: float | None, beside: bool = False, within: str | None = None) -> None:
        """Record step ``name``; ``within``: the step whose time already holds this one's (a part shown apart)."""
        with self._lock:
            self._steps.append({"step": name, "wall_s": round(wall, 3),
                                "cpu_s": None if cpu is None else round(cpu, 3), "beside": beside,
                                **({"within": within} if within else {})})

    @contextlib.contextmanager
    def timed(self, name: str, beside: bool = False, within: str | None = None) -> Iterator[None]:
        """Time the block as step ``name`` (recorded when it ends, also by an exception)."""
        wall, cpu = time.perf_counter(), time.process_time()
        try:
            yield
        finally:
            self.add(name, time.perf_counter() - wall, time.process_time() - cpu, beside, within)

    def record(self) -> dict[str, Any]:
        """The steps as ``records/timings.json`` holds them, with the process's totals so far."""
        with self._lock:
            steps = list(self._steps)
        wall, cpu = since_process_start()
        return {"steps": steps, "process": {"wall_s": None if wall is None else round(wall, 3),
                                            "cpu_s": round(cpu, 3)}}


def since_process_start() -> tuple[float | None, float]:
    """Wall seconds since this process started (None where the system does not say) and its CPU seconds."""
    cpu = time.process_time()
    try:  # Linux: the start time in clock ticks after boot (field 22 of /proc/self/stat), and the time since boot
        with open("/proc/self/stat") as stat, open("/proc/uptime") as uptime:
            started = int(stat.read().rsplit(")", 1)[1].split()[19]) / os.sysconf("SC_CLK_TCK")
            return float(uptime.read().split()[0]) - started, cpu
    except (OSError, ValueError, IndexError):
        return None, cpu


def format_times(record: dict[str, Any]) -> list[str]:
    """The record as lines for a terminal: one step a line, work beside the steps marked."""
    steps = record.get("steps", [])
    width = max((len(s["step"]) for s in steps), default=4)
    lines = [f"{'step':<{width}}  {'wall s':>7}  {'CPU s':>7}"]
    for s in steps:
        cpu = "" if s["cpu_s"] is None else f"{s['cpu_s']:7.2f}"
        beside = "  (beside the steps)" if s["beside"] else (f"  (part of {s['within']})" if s.get("within") else "")
        lines.append(f"{s['step']:<{width}}  {s['wall_s']:7.2f}  {cpu:>7}{beside}")
    total = record.get("process", {})
    if total.get("wall_s") is not None:
        lines.append(f"{'whole process':<{width}}  {total['wall_s']:7.2f}  {total['cpu_s']:7.2f}")
    return lines

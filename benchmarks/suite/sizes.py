"""The sizes the benchmarks run at: the real ones, or the smallest under ``GPAL_BENCHMARK_SMOKE=1``."""

from __future__ import annotations

import os

#: True when the test suite smoke-runs the benchmarks: every size is its smallest.
SMOKE = os.environ.get("GPAL_BENCHMARK_SMOKE") == "1"


def pick(real: object, smallest: object) -> object:
    """``smallest`` in a smoke run, else ``real``."""
    return smallest if SMOKE else real

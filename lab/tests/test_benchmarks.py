"""Every benchmark of the timing suite (benchmarks/suite, asv's form) runs at its smallest size.

asv finds a benchmark by its name's prefix; this finds them the same way, sets
``GPAL_BENCHMARK_SMOKE=1`` (every size its smallest) and runs each once, so a benchmark broken by a
change fails here rather than in someone's asv run.
"""

from __future__ import annotations

import importlib
import inspect
import itertools
import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).parents[2] / "benchmarks"
PREFIXES = ("time_", "track_", "timeraw_", "peakmem_", "mem_")
MODULES = sorted(p.stem for p in (BENCHMARKS / "suite").glob("*.py") if p.stem not in ("__init__", "sizes", "arithmetic"))


@pytest.fixture
def suite(monkeypatch):
    monkeypatch.setenv("GPAL_BENCHMARK_SMOKE", "1")
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    for name in [n for n in sys.modules if n == "suite" or n.startswith("suite.")]:
        monkeypatch.delitem(sys.modules, name)
    return lambda module: importlib.import_module(f"suite.{module}")


def _benchmarks(module):
    """(name, callable factory) of every benchmark: functions, and methods of classes with their params."""
    for name, obj in vars(module).items():
        if inspect.isfunction(obj) and name.startswith(PREFIXES) and obj.__module__ == module.__name__:
            yield name, [()], lambda *p, f=obj: (None, f)
        elif inspect.isclass(obj) and obj.__module__ == module.__name__:
            grid = list(itertools.product(*getattr(obj, "params", []))) if hasattr(obj, "params") else [()]
            for method in (m for m in dir(obj) if m.startswith(PREFIXES)):
                yield f"{name}.{method}", grid, lambda *p, c=obj, m=method: (c(), m)


@pytest.mark.slow
@pytest.mark.parametrize("module", MODULES)
def test_every_benchmark_runs_at_its_smallest_size(suite, module):
    loaded = suite(module)
    found = list(_benchmarks(loaded))
    assert found, f"benchmarks/suite/{module}.py holds no benchmark"
    for name, grid, make in found:
        for params in grid:
            instance, method = make(*params)
            if instance is None:  # a module-level function
                result = method()
            else:
                getattr(instance, "setup", lambda *p: None)(*params)
                result = getattr(instance, method)(*params)
            if name.split(".")[-1].startswith("timeraw_"):  # asv runs the returned code in a fresh interpreter
                done = subprocess.run([sys.executable, "-c", result], capture_output=True, text=True, timeout=600,
                                      env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
                assert done.returncode == 0, f"{name}: {done.stderr[-2000:]}"
            elif name.split(".")[-1].startswith("track_"):
                assert isinstance(result, float) and result > 0, f"{name} returned {result!r}"

#!/usr/bin/env python
"""Where the test suite's time goes: the README's test command in this checkout, each test's CPU seconds recorded
(its own process's and those of the processes it started), summed by file.

On two cores the suite is CPU-bound: its wall time is about its CPU seconds over two, so a test's CPU seconds are
what shortening it would save, and unlike wall times they change little with the machine's load.  Time spent
outside tests (each worker's imports and collection) is not in the table; the total says how much the tests hold.

    python benchmarks/suite_cpu.py                       # prints the heaviest files and tests
    python benchmarks/suite_cpu.py --record lab/pages/records/results/timings.tests_cpu.json
    python benchmarks/suite_cpu.py -- tests/models       # arguments after -- go to pytest

This file is also the pytest plugin the run loads (``-p suite_cpu``): the hooks below write one JSON line per test.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]
#: The page generators' folder, on the path: the format of the records they read (result_records.py) lives there.
sys.path.append(str(REPOSITORY / "lab" / "pages"))
#: Where the plugin writes its lines (one file per pytest-xdist worker), set by `profile_suite` for the run.
OUT_VARIABLE = "GPAL_SUITE_CPU_DIR"
#: The README's test command, as `.ci/run` runs it (`-n 2`).
PYTEST = ["-m", "pytest", "-q", "-n", "2", "-p", "no:cacheprovider"]
#: How many files and tests the tables list unless told.
TOP = 12

_started: dict[str, tuple[float, float, float]] = {}


def _cpu_seconds() -> tuple[float, float]:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


def pytest_runtest_setup(item):
    _started[item.nodeid] = (*_cpu_seconds(), time.perf_counter())


def pytest_runtest_logfinish(nodeid, location):
    folder = os.environ.get(OUT_VARIABLE)
    if folder is None or nodeid not in _started:
        return
    own0, children0, wall0 = _started.pop(nodeid)
    own, children = _cpu_seconds()
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    with open(Path(folder) / f"{worker}.jsonl", "a", encoding="utf-8") as out:
        out.write(json.dumps({"test": nodeid.split("@")[0], "own": own - own0, "children": children - children0,
                              "wall": time.perf_counter() - wall0}) + "\n")


def profile_suite(pytest_args: list[str], cwd: Path = REPOSITORY) -> dict:
    """Run pytest with this plugin; each test's CPU seconds and the run's wall time.  A failing run is refused."""
    with tempfile.TemporaryDirectory() as folder:
        env = {**os.environ, OUT_VARIABLE: folder,
               "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent), os.environ.get("PYTHONPATH", "")])}
        start = time.perf_counter()
        done = subprocess.run([sys.executable, *PYTEST, "-p", "suite_cpu", *pytest_args], cwd=cwd, env=env)
        wall = time.perf_counter() - start
        if done.returncode != 0:
            raise SystemExit(f"error: pytest failed (exit {done.returncode}); a failing suite's times are not recorded")
        tests = [json.loads(line) for path in sorted(Path(folder).glob("*.jsonl"))
                 for line in path.read_text(encoding="utf-8").splitlines()]
    if not tests:
        raise SystemExit("error: pytest ran no test; nothing to record")
    return {"tests": tests, "wall": wall, "cores": os.cpu_count()}


def heaviest(run: dict, n: int = TOP) -> tuple[list[tuple[str, float, int]], list[tuple[str, float]]]:
    """The ``n`` files and the ``n`` tests with the most CPU seconds: (file, seconds, tests) and (test, seconds)."""
    by_file, count = Counter(), Counter()
    for test in run["tests"]:
        name = test["test"].split("::")[0]
        by_file[name] += test["own"] + test["children"]
        count[name] += 1
    files = [(name, seconds, count[name]) for name, seconds in by_file.most_common(n)]
    tests = sorted(((t["test"], t["own"] + t["children"]) for t in run["tests"]), key=lambda t: -t[1])[:n]
    return files, tests


def results_record(run: dict, commit: str, command: str, n: int = TOP) -> dict:
    from result_records import make_record, make_table

    total = sum(t["own"] + t["children"] for t in run["tests"])
    files, tests = heaviest(run, n)
    caption = (f"{len(run['tests'])} tests, {total:.0f} CPU seconds in tests, {run['wall']:.0f} s of wall time on "
               f"{run['cores']} cores: the {n} heaviest files")
    by_file = make_table(["file", "tests", "CPU s", "share"],
                         [[f"`{name}`", str(k), f"{s:.1f}", f"{s / total:.0%}"] for name, s, k in files],
                         caption=caption)
    by_test = make_table(["test", "CPU s"], [[f"`{name}`", f"{s:.1f}"] for name, s in tests],
                         caption=f"the {n} heaviest tests")
    return make_record("Where the test suite's time goes", command, commit, [by_file, by_test],
                       settings={"cores": run["cores"], "tests": len(run["tests"])},
                       workflow="lab/studies/suite_cpu.yaml")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ours, pytest_args = (argv[:argv.index("--")], argv[argv.index("--") + 1:]) if "--" in argv else (argv, [])
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--record", type=Path, help="write the results page's record to this file")
    parser.add_argument("--top", type=int, default=TOP, help=f"how many files and tests to list (default {TOP})")
    args = parser.parse_args(ours)
    if args.top < 1:
        parser.error(f"--top must be a positive number of rows; got {args.top}")
    run = profile_suite(pytest_args)
    commit = subprocess.run(["git", "rev-parse", "--short=7", "HEAD"], cwd=REPOSITORY, capture_output=True,
                            text=True, check=True).stdout.strip()
    command = " ".join(["python benchmarks/suite_cpu.py", *(["--top", str(args.top)] if args.top != TOP else []),
                        *(["--", *pytest_args] if pytest_args else [])])
    record = results_record(run, commit, command, args.top)
    for table in record["tables"]:
        print(f"\n{table['caption']}")
        for row in table["rows"]:
            print("  " + "  ".join(row))
    if args.record:
        from result_records import outcome, write_record

        print(outcome(write_record(args.record, record)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

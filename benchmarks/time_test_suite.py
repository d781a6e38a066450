#!/usr/bin/env python
"""Time what CI runs: a clean clone of this repository's HEAD, `.ci/run` in it (a fresh virtual environment, the
README's install, the main job, then the README's test command), with the environment CI gives it.

Prints the tests' summary line and the wall times; with ``--record FILE`` writes the results page's record
(`lab/pages/result_records.py`) there.  The machine's load average at the start and end is part of the record:
the suite's time is only comparable between runs of one machine at a similar load.

    python benchmarks/time_test_suite.py --record lab/pages/records/results/timings.tests.json
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[1]
#: The page generators' folder, on the path: the format of the records they read (result_records.py) lives there.
sys.path.append(str(REPOSITORY / "lab" / "pages"))
#: The environment CI runs `.ci/run` with: no variables of the developer's session.
CI_ENVIRONMENT = {"HOME": os.environ.get("HOME", "/root"), "TERM": "dumb",
                  "PATH": "/usr/local/bin:/usr/bin:/bin:/root/.pyenv/shims:/root/.pyenv/bin"}
#: pytest's closing line: "1737 passed, 2 skipped, 5 warnings in 371.23s (0:06:11)".
_SUMMARY = re.compile(r"^=*\s*(?P<counts>\d+ passed[^=]*?) in (?P<seconds>[\d.]+)s\b", re.MULTILINE)


def _minutes(seconds: float) -> str:
    return f"{int(seconds // 60)} min {round(seconds % 60):02d} s"


def run_ci(repository: Path) -> dict:
    """Clone ``repository``'s HEAD into a temporary folder, run `.ci/run` there; the times and the tests' summary."""
    with tempfile.TemporaryDirectory() as work:
        clone = Path(work) / "clone"
        subprocess.run(["git", "clone", "-q", str(repository), str(clone)], check=True)
        commit = subprocess.run(["git", "rev-parse", "--short=7", "HEAD"], cwd=clone, check=True,
                                capture_output=True, text=True).stdout.strip()
        load_start = os.getloadavg()[0]
        start = time.perf_counter()
        process = subprocess.Popen(["bash", ".ci/run"], cwd=clone, env=CI_ENVIRONMENT, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True)
        lines = []
        for line in process.stdout:  # shown as it comes: a run of minutes shows its progress
            sys.stdout.write(line)
            lines.append(line)
        code = process.wait()
        seconds = time.perf_counter() - start
    output = "".join(lines)
    if code != 0:
        raise SystemExit(f"error: .ci/run failed (exit {code}) at {commit}; no time is recorded for a failing suite")
    summary = _SUMMARY.findall(output)
    if not summary:
        raise SystemExit("error: .ci/run finished but printed no pytest summary line; nothing to record")
    counts, pytest_seconds = summary[-1][0].strip(), float(summary[-1][1])
    return {"commit": commit, "tests": counts, "pytest_seconds": pytest_seconds, "ci_seconds": seconds,
            "load": (load_start, os.getloadavg()[0])}


def results_record(run: dict) -> dict:
    from result_records import make_record, make_table

    load = f"1-minute load average {run['load'][0]:.1f} at the start, {run['load'][1]:.1f} at the end"
    table = make_table(["run", "tests", "time"], [
        ["the README's test command, from a clean clone", run["tests"], _minutes(run["pytest_seconds"])],
        ["the whole CI job (fresh environment, install, main job, tests)", "", _minutes(run["ci_seconds"])],
    ], caption=f"{os.cpu_count()} CPU cores; {load}.")
    return make_record("The test suite", "python benchmarks/time_test_suite.py", run["commit"], [table],
                       settings={"cores": os.cpu_count(), "load_average": [round(x, 1) for x in run["load"]]},
                       workflow="lab/studies/test_suite.yaml")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--record", type=Path, help="write the results page's record to this file")
    args = parser.parse_args(argv)
    run = run_ci(REPOSITORY)
    print(f"{run['tests']}: pytest {_minutes(run['pytest_seconds'])}, .ci/run {_minutes(run['ci_seconds'])} "
          f"at {run['commit']}")
    if args.record:
        from result_records import outcome, write_record

        print(outcome(write_record(args.record, results_record(run))))
    return 0


if __name__ == "__main__":
    sys.exit(main())

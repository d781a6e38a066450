#!/usr/bin/env python
"""The main job's wall time, CPU time and peak memory as a user meets them: ``gpal classify`` under ``/usr/bin/time``.

Each catalog's job runs ``--runs`` times, a new output folder each run, as a fresh process (imports, data and
tracing included), and the measurements are kept as JSON (``--json``).  With ``--baseline GPAL`` (the ``gpal`` of
another checkout, e.g. ``/path/to/old/.venv/bin/gpal``) the default job is also run ``--pairs`` times against it,
the two alternated pair by pair so that the machine's load hits both alike: the ratio of each pair is what the code
costs, whatever the machine's speed that day.  Run it on a machine with no other work.

    python lab/studies/time_main_job.py --json lab/studies/records/main_job_time.json \\
        --record lab/pages/records/results/timings.json
    python lab/studies/time_main_job.py --summarize lab/studies/records/main_job_time.json \\
        --record lab/pages/records/results/timings.json      # the record from the kept runs, nothing run
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from shared import (
    kept_output, output_field, output_files, outputs_commit, read_outputs, record_from_kept, run_commit)

#: The study's declaration, which the results page's record names.
WORKFLOW = "lab/studies/main_job_time.yaml"
#: What ``/usr/bin/time -f`` prints: wall, user and system seconds, peak resident memory in KiB.
TIME_FORMAT = "%e s %U user %S sys %M KB"
_TIME_LINE = re.compile(r"^([\d.]+) s ([\d.]+) user ([\d.]+) sys (\d+) KB$", re.M)
#: The catalogs timed by default: the main job's (FL16Y, its default) and the two releases before it.
CATALOGS = ("FL16Y", "4FGL-DR4", "4FGL")
DEFAULT_CATALOG = "FL16Y"


def parse_time(stderr: str) -> dict[str, float]:
    """Wall, user and system seconds and peak memory (KiB) from the last line ``/usr/bin/time -f TIME_FORMAT`` wrote."""
    found = _TIME_LINE.findall(stderr)
    if not found:
        raise ValueError(f"no line of /usr/bin/time -f {TIME_FORMAT!r} in the command's error output "
                         f"(its end: {stderr[-300:]!r})")
    wall, user, system, kb = found[-1]
    return {"wall_s": float(wall), "user_s": float(user), "sys_s": float(system), "max_rss_kb": int(kb)}


def timed_job(gpal: str, catalog: str) -> dict[str, Any]:
    """One ``gpal classify`` (of the ``gpal`` executable given) into a new folder, under ``/usr/bin/time``."""
    argv = [gpal, "classify", "--no-progress"] + ([] if catalog == DEFAULT_CATALOG else ["--catalog", catalog])
    with tempfile.TemporaryDirectory(prefix="time_main_job_") as work:
        done = subprocess.run(["/usr/bin/time", "-f", TIME_FORMAT, *argv, "--out", str(Path(work) / "out")],
                              capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {done.returncode}: {done.stderr[-1000:]}")
    return {"catalog": catalog, "gpal": gpal, **parse_time(done.stderr), "load_average": os.getloadavg()[0]}


def _span(values: list[float], digits: int = 1) -> str:
    low, high = f"{min(values):.{digits}f}", f"{max(values):.{digits}f}"
    return low if low == high else f"{low}-{high}"


def _count(n: int, thing: str) -> str:
    return f"one {thing}" if n == 1 else f"{n} {thing}s"


def _job_name(catalog: str) -> str:
    return f"gpal classify ({catalog})" if catalog == DEFAULT_CATALOG else f"gpal classify --catalog {catalog}"


def results_record(path: str) -> dict[str, Any]:
    """The results page's record from the kept runs at ``path``: per catalog the range of wall seconds, of user and of
    system CPU seconds and the largest peak memory; with paired runs against a baseline, their medians and the
    median of the pairs' ratios."""
    from result_records import make_record, make_table

    (raw,) = read_outputs([path])
    commit = outputs_commit([raw], [path])
    runs = output_field(raw, path, "runs")
    if not runs:
        raise ValueError(f"{path}: no runs of gpal classify")
    fields = ("catalog", "wall_s", "user_s", "sys_s", "max_rss_kb", "load_average")
    runs = [{k: output_field(run, path, k) for k in fields} for run in runs]
    rows = []
    for catalog in dict.fromkeys(run["catalog"] for run in runs):
        mine = [r for r in runs if r["catalog"] == catalog]
        rows.append([_job_name(catalog), _span([r["wall_s"] for r in mine]),
                     f"{_span([r['user_s'] for r in mine])} + {_span([r['sys_s'] for r in mine])}",
                     f"{max(r['max_rss_kb'] for r in mine) * 1024 / 1e9:.1f} GB"])
    loads = [r["load_average"] for r in runs]
    tables = [make_table(["command", "wall s", "CPU s (user + system)", "peak memory"], rows, "lrll", caption=(
        f"{_count(len(runs), 'run')}, each in a new folder, one after another (load average {_span(loads)} at their ends):"))]
    pairs = raw.get("pairs") or []
    if pairs:
        baseline = output_field(raw, path, "baseline")

        def cpu(run: dict[str, Any]) -> float:
            return run["user_s"] + run["sys_s"]

        this = [{k: output_field(p, path, "this", k) for k in fields} for p in pairs]
        before = [{k: output_field(p, path, "baseline", k) for k in fields} for p in pairs]
        tables.append(make_table(["", "wall s", "CPU s"], [
            ["this commit", f"{np.median([r['wall_s'] for r in this]):.1f}", f"{np.median([cpu(r) for r in this]):.1f}"],
            [baseline, f"{np.median([r['wall_s'] for r in before]):.1f}", f"{np.median([cpu(r) for r in before]):.1f}"],
            ["ratio (pair by pair, median)", f"{np.median([a['wall_s'] / b['wall_s'] for a, b in zip(this, before)]):.2f}",
             f"{np.median([cpu(a) / cpu(b) for a, b in zip(this, before)]):.2f}"]], "lrr", caption=(
            f"Against {baseline}, alternated pair by pair ({_count(len(pairs), 'pair')}, a new folder each run; medians; load "
            f"average {_span([r['load_average'] for r in this + before])}):")))
    return make_record("The main job", _command(raw, path), commit, tables,
                       source=f"the runs kept in {path}, each `/usr/bin/time -f \"{TIME_FORMAT}\" gpal classify "
                       "--out DIR`", workflow=WORKFLOW)


def _command(raw: dict[str, Any], path: str) -> str:
    """The command line that made the runs at ``path``, its options as the run had them (a baseline named, not its
    path on the machine that ran it)."""
    args = output_field(raw, path, "args")
    words = ["python lab/studies/time_main_job.py"]
    if list(args["catalogs"]) != list(CATALOGS):
        words.append("--catalogs " + " ".join(args["catalogs"]))
    if args["runs"] != 2:
        words.append(f"--runs {args['runs']}")
    if raw.get("pairs"):
        words.append(f"--baseline '<the gpal of {raw['baseline']}>' --baseline-name {raw['baseline']} "
                     f"--pairs {len(raw['pairs'])}")
    return " ".join([*words, f"--json {path}"])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--catalogs", nargs="+", default=list(CATALOGS), help=f"catalogs to time (default {CATALOGS})")
    p.add_argument("--runs", type=int, default=2, help="runs of each catalog's job (default 2)")
    p.add_argument("--baseline", metavar="GPAL", help="the gpal executable of another checkout to alternate with")
    p.add_argument("--baseline-name", help="what the record calls the baseline (default: its executable's path)")
    p.add_argument("--pairs", type=int, default=3, help="with --baseline: alternated pairs (default 3)")
    p.add_argument("--json", help="write the runs' measurements to this JSON file (a folder: runs.json in it)")
    p.add_argument("--record", help="write the results page's record to this file from the run's --json or --summarize")
    p.add_argument("--summarize", metavar="JSON", help="run nothing: the record from this kept output, with --record")
    args = p.parse_args(argv)
    if args.record and not (args.summarize or args.json) or args.summarize and not args.record:
        p.error("--record needs the run's --json or a kept output (--summarize JSON); --summarize needs --record")
    from result_records import outcome, write_record

    args.json = kept_output(args.json, "runs.json")
    if args.summarize:
        def kept() -> dict[str, Any]:
            files = output_files([args.summarize])
            if len(files) != 1:
                raise ValueError(f"{args.summarize} holds {len(files)} files of runs; the record is made from one")
            return results_record(files[0])

        record_from_kept(p, args.record, kept)
        return 0
    if args.runs < 1 or args.pairs < 1:
        p.error("--runs and --pairs must be >= 1")
    gpal = shutil.which("gpal")
    if gpal is None or not Path("/usr/bin/time").is_file():
        p.error("needs the gpal command on the PATH (pip install -e .) and /usr/bin/time (GNU time)")
    if args.baseline and not Path(args.baseline).is_file():
        p.error(f"--baseline {args.baseline} is not a file; expected another checkout's gpal executable")

    commit = run_commit(p, bool(args.record))
    raw: dict[str, Any] = {"commit": commit, "args": {"catalogs": args.catalogs, "runs": args.runs},
                           "load_average_at_start": os.getloadavg(), "runs": []}
    for catalog in args.catalogs:
        for _ in range(args.runs):
            raw["runs"].append(timed_job(gpal, catalog))
            print(raw["runs"][-1], flush=True)
    if args.baseline:
        raw["baseline"] = args.baseline_name or args.baseline
        raw["pairs"] = [{"baseline": timed_job(args.baseline, DEFAULT_CATALOG), "this": timed_job(gpal, DEFAULT_CATALOG)}
                        for _ in range(args.pairs)]
    if args.json:
        from gpal.files import write_json_atomic

        write_json_atomic(args.json, raw)
    if args.record:
        print(outcome(write_record(args.record, results_record(args.json))))
    return 0


if __name__ == "__main__":
    sys.exit(main())

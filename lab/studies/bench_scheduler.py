#!/usr/bin/env python
"""The schedulers side by side: ``gpal workflow`` and ``gpal predict`` in this process and on a local Dask cluster.

The repeated-splits workflow of docs/scaling.md (``gpal/workflows/files/fermi_4fgl.yaml``, MGP and NIMGP) runs under each
scheduler, ``--rounds`` times, the two alternated round by round (the first of a round swapped each round, so that a
drift of the machine's load hits both alike), each run a fresh process into a new folder, every command pinned to
``--cores`` cores (the local cluster starts a worker per core).  Kept per run: its wall time, each unit's fit and
predict seconds as the run wrote them (``units/<method>/split_*.json``), a digest of each unit's probabilities (so
that runs are compared bit for bit), the load average before and after, the commit.  Then a NIMGP model (300 input
samples) is trained on the same 454 sources and ``gpal predict`` classifies 4FGL's unassociated sources tiled to
``--rows`` rows, in chunks of ``--chunk-size``, under each scheduler: wall time, rows per second, a digest of the
table, and the peak resident memory of the driver and of each Dask worker process (each process's ``VmHWM``, read
while it runs).
Run it on a machine with no other work::

    python lab/studies/bench_scheduler.py --json lab/studies/records/scheduler \\
        --record lab/studies/records/scheduler.json
    python lab/studies/bench_scheduler.py --summarize lab/studies/records/scheduler \\
        --record lab/studies/records/scheduler.json      # the record from the kept runs, nothing run
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from shared import (
    ROOT, output_field, output_files, outputs_commit, read_outputs, record_from_kept, run_command, run_commit,
    tiled_catalog)

#: The study's declaration, which the record names.
WORKFLOW = "lab/studies/scheduler.yaml"
SCRIPT = "lab/studies/bench_scheduler.py"
SCHEDULERS = ("in-process", "local-dask")
#: The workflow docs/scaling.md times, and the two of its methods it runs.
FERMI = "fermi_4fgl"  # the shipped workflow, run by its name
METHODS = ("MGP", "NIMGP")
#: The prediction model: NIMGP as the workflow trains it (robust-max likelihood, 300 input samples, batch 50,
#: Adam 0.01) on the workflow's 454 sources and features (the paper's preset).
TRAIN = ("--catalog", "4FGL", "--classes", "bll,fsrq,psr", "--min-significance", "30", "--features", "default",
         "--input-noise", "latent", "--likelihood", "robustmax", "--n-samples", "300", "--batch-size", "50",
         "--learning-rate", "0.01", "--seed", "0")
DEFAULTS = {"rounds": 2, "splits": 4, "epochs": 100, "rows": 8000, "chunk_size": 2000, "cores": 2}
#: How often the running command's processes are read for their peak memory, in seconds.
POLL_S = 0.05


def digest(values: Any) -> str:
    """SHA-256 of ``values`` as float64 bytes: equal digests are bitwise equal arrays (a unit's JSON floats read back
    exactly what was written)."""
    return hashlib.sha256(np.ascontiguousarray(values, dtype=np.float64).tobytes()).hexdigest()


def unit_timings(folder: Path, expected: int) -> dict[str, dict[str, Any]]:
    """Each finished unit of the repeated-splits run in ``folder`` (``units/<method>/split_*.json``): its fit and
    predict seconds and the digest of its probabilities; a unit that failed (``.error.json``, which the workflow
    records and goes on) or fewer than ``expected`` units raise ValueError naming the folder."""
    from gpal.runs.units import UNITS_DIR

    units: dict[str, dict[str, Any]] = {}
    failed = sorted(p.relative_to(folder).as_posix() for p in (folder / UNITS_DIR).glob("*/*.error.json"))
    if failed:
        raise ValueError(f"{folder}: units failed ({failed}); a timing is of a run whose every unit finished")
    for path in sorted((folder / UNITS_DIR).glob("*/split_*.json")):
        try:
            unit = json.loads(path.read_text(encoding="utf-8"))
            units[f"{path.parent.name}/{path.stem}"] = {"fit_s": float(unit["train_seconds"]),
                                                        "predict_s": float(unit["predict_seconds"]),
                                                        "proba_sha256": digest(unit["proba"])}
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{path}: not a repeated-splits unit with train_seconds, predict_seconds and proba "
                             f"({exc!r})") from None
    if len(units) != expected:
        raise ValueError(f"{folder}: {len(units)} finished units, expected {expected} (splits x methods)")
    return units


def _vm_hwm_kib(pid: int) -> int | None:
    """The peak resident memory of a live process (``VmHWM`` of ``/proc/<pid>/status``, Linux), or None."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text(encoding="ascii").splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def _watch(pid: int, done: threading.Event, peaks: dict[str, dict[int, int]]) -> None:
    """Until ``done``: the peak memory of the command (``driver``) and of each process it started through
    multiprocessing's spawn (the Dask workers, and any other the cluster starts), the largest each was seen at."""
    import psutil

    try:
        root = psutil.Process(pid)
    except psutil.NoSuchProcess:
        return
    while not done.is_set():
        try:
            family = [root, *root.children(recursive=True)]
        except psutil.NoSuchProcess:
            return
        for process in family:
            try:
                role = "driver" if process.pid == pid else \
                    "worker" if any("spawn_main" in word for word in process.cmdline()) else None
            except psutil.Error:
                continue
            kib = _vm_hwm_kib(process.pid) if role else None
            if kib is not None:
                peaks[role][process.pid] = max(kib, peaks[role].get(process.pid, 0))
        done.wait(POLL_S)


def timed(argv: Sequence[str], cpus: Sequence[int]) -> dict[str, Any]:
    """Run ``argv`` from the repository's top pinned to ``cpus``: its wall seconds, the load average before and after,
    and the peak resident memory (MiB) of its driver process and of each Dask worker; a failure raises RuntimeError
    with the end of its error output."""
    before = os.getloadavg()
    peaks: dict[str, dict[int, int]] = {"driver": {}, "worker": {}}
    done = threading.Event()
    start = time.perf_counter()
    process = subprocess.Popen(list(argv), cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=lambda: os.sched_setaffinity(0, cpus))
    watcher = threading.Thread(target=_watch, args=(process.pid, done, peaks), daemon=True)
    watcher.start()
    _, err = process.communicate()
    wall = time.perf_counter() - start
    done.set()
    watcher.join()
    if process.returncode:
        raise RuntimeError(f"{' '.join(map(str, argv))} exited {process.returncode}: {err[-1500:]}")
    return {"wall_s": wall, "load_before": list(before), "load_after": list(os.getloadavg()),
            "peak_mib": {"driver": [kib / 1024 for kib in peaks["driver"].values()],
                         "workers": [kib / 1024 for kib in peaks["worker"].values()]}}


def _gpal(*words: str) -> list[str]:
    return [sys.executable, "-m", "gpal.cli", *words]


def workflow_run(scheduler: str, k: int, args: argparse.Namespace, cpus: Sequence[int], commit: str) -> dict[str, Any]:
    """Round ``k``'s run of the workflow under ``scheduler``, into a new folder: what `timed` measures and its units."""
    settings = [f"protocol.splits={args.splits}", f"training.epochs={args.epochs}", f"methods=[{','.join(METHODS)}]"]
    with tempfile.TemporaryDirectory(prefix="bench_scheduler_") as work:
        out = Path(work) / "run"
        measured = timed(_gpal("workflow", FERMI, *(w for s in settings for w in ("--set", s)), "--out", str(out),
                               "--no-progress", "--quiet", "--scheduler", scheduler), cpus)
        units = unit_timings(out, args.splits * len(METHODS))
    return {"commit": commit, "kind": "workflow", "round": k, "scheduler": scheduler, "args": _args(args),
            **measured, "units": units}


def predict_runs(args: argparse.Namespace, cpus: Sequence[int], commit: str) -> list[dict[str, Any]]:
    """The prediction model trained (not timed), 4FGL's unassociated sources its features keep tiled to
    ``args.rows``, then ``gpal predict`` under each scheduler: what `timed` measures, the rows, the table's digest."""
    from gpal.catalogs import load_catalog

    runs = []
    with tempfile.TemporaryDirectory(prefix="bench_scheduler_") as work:
        model, catalog = Path(work) / "model", Path(work) / "tiled.fits"
        train = _gpal("train", *TRAIN, "--epochs", str(args.epochs), "--out", str(model), "--no-progress", "--quiet")
        done = subprocess.run(train, cwd=ROOT, capture_output=True, text=True)
        if done.returncode:
            raise RuntimeError(f"{' '.join(train)} exited {done.returncode}: {done.stderr[-1500:]}")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the sources dropped for missing values are the point of asking
            sources = load_catalog("4FGL").pool(select=("unassociated",), features=None).ids
        tiled_catalog("4FGL", args.rows, catalog, sources=[str(s) for s in sources])
        for scheduler in SCHEDULERS:
            table = Path(work) / f"{scheduler}.csv"
            measured = timed(_gpal("predict", str(model), "--catalog", str(catalog), "--select", "unassociated",
                                   "--chunk-size", str(args.chunk_size), "--scheduler", scheduler, "--out", str(table),
                                   "--no-progress", "--quiet"), cpus)
            rows = len(table.read_text(encoding="utf-8").splitlines()) - 1
            runs.append({"commit": commit, "kind": "predict", "scheduler": scheduler, "args": _args(args),
                         "pool_sources": len(sources), "rows": rows, **measured,
                         "table_sha256": hashlib.sha256(table.read_bytes()).hexdigest()})
    return runs


def _args(args: argparse.Namespace) -> dict[str, int]:
    return {key: getattr(args, key) for key in DEFAULTS}


# ------------------------------------------------------------------------ the record
def _span(values: Sequence[float], digits: int = 1) -> str:
    low, high = f"{min(values):.{digits}f}", f"{max(values):.{digits}f}"
    return low if low == high else f"{low}-{high}"


def _gib(mib: float) -> str:
    return f"{mib / 1024:.2f} GiB"


def results_record(paths: Sequence[str], folder: str) -> dict[str, Any]:
    """The record from the runs kept at ``paths`` (the study's folder ``folder``): the workflow's wall times and sums
    of unit seconds per scheduler and round, whether every unit's probabilities were bitwise the same in every run,
    and the prediction's time, rows per second, peak memory and whether the tables were the same."""
    from result_records import make_record, make_table

    outputs = read_outputs(paths)
    commit = outputs_commit(outputs, paths)
    settings = [output_field(raw, path, "args") for raw, path in zip(outputs, paths)]
    if any(s != settings[0] for s in settings):
        raise ValueError(f"the runs {list(paths)} were made with different options: one record is one run of the study")
    settings = settings[0]
    kinds = [output_field(raw, path, "kind") for raw, path in zip(outputs, paths)]
    flows = [(raw, path) for raw, path, kind in zip(outputs, paths, kinds) if kind == "workflow"]
    predicts = [(raw, path) for raw, path, kind in zip(outputs, paths, kinds) if kind == "predict"]
    expected = {(k, s) for k in range(1, settings["rounds"] + 1) for s in SCHEDULERS}
    found = sorted((output_field(raw, p, "round"), output_field(raw, p, "scheduler")) for raw, p in flows)
    predicted = sorted(output_field(raw, p, "scheduler") for raw, p in predicts)
    if sorted(expected) != found or predicted != sorted(SCHEDULERS):
        raise ValueError(f"{folder}: runs {found} of the workflow and {len(predicts)} predictions; expected each "
                         f"scheduler {list(SCHEDULERS)} in each of {settings['rounds']} rounds and one prediction each")
    by = {(raw["round"], raw["scheduler"]): (raw, path) for raw, path in flows}
    rows, loads, digests = [], [], {}
    for scheduler in SCHEDULERS:
        runs = [by[(k, scheduler)] for k in range(1, settings["rounds"] + 1)]
        sums = []
        for raw, path in runs:
            units = output_field(raw, path, "units")
            sums.append(sum(output_field(raw, path, "units", name, "fit_s")
                            + output_field(raw, path, "units", name, "predict_s") for name in units))
            for name in units:
                digests.setdefault(name, set()).add(output_field(raw, path, "units", name, "proba_sha256"))
            loads += [output_field(raw, path, "load_before")[0], output_field(raw, path, "load_after")[0]]
        label = f"`{scheduler}`" + (f" ({settings['cores']} workers)" if scheduler == "local-dask" else "")
        rows.append([label, *(f"{output_field(raw, path, 'wall_s'):.1f} s" for raw, path in runs),
                     " / ".join(f"{s:.1f} s" for s in sums)])
    differing = sorted(name for name, seen in digests.items() if len(seen) > 1)
    n_runs = len(flows)
    same = (f"All {len(digests)} units' probabilities were bitwise identical across the {n_runs} runs." if not differing
            else f"The probabilities of {len(differing)} of the {len(digests)} units differed across the {n_runs} runs "
            f"({', '.join(differing)}).")
    units_table = make_table(
        ["scheduler", *(f"wall time, run {k}" for k in range(1, settings["rounds"] + 1)),
         "sum of unit fit+predict time"], rows, "l" + "r" * (settings["rounds"] + 1),
        caption=(f"`gpal workflow {FERMI} --set protocol.splits={settings['splits']} --set training.epochs="
                 f"{settings['epochs']} --set methods=[{','.join(METHODS)}] --scheduler S`: {len(digests)} units, "
                 "each run a new folder and a fresh process, the schedulers alternated round by round, every command "
                 f"pinned to {settings['cores']} cores (load average {_span(loads)} before and after the runs). "
                 + same))

    predict_rows, predict_loads = [], []
    by_scheduler = {raw["scheduler"]: (raw, path) for raw, path in predicts}
    tables = {output_field(raw, path, "table_sha256") for raw, path in predicts}
    for scheduler in SCHEDULERS:
        raw, path = by_scheduler[scheduler]
        wall, n = output_field(raw, path, "wall_s"), output_field(raw, path, "rows")
        peak = output_field(raw, path, "peak_mib")
        workers = ", ".join(_gib(m) for m in sorted(peak["workers"])) or "none"
        predict_rows.append([f"`{scheduler}`", f"{n:,}".replace(",", " "), f"{wall:.1f} s", f"{n / wall:.0f}",
                             _gib(max(peak["driver"])), workers])
        predict_loads += [output_field(raw, path, "load_before")[0], output_field(raw, path, "load_after")[0]]
    raw0, path0 = predicts[0]
    predict_table = make_table(
        ["scheduler", "rows", "wall time", "rows/s", "peak memory, driver", "peak memory, each spawned process"],
        predict_rows,
        "lrrrrl", caption=(
            f"`gpal predict MODEL --catalog tiled.fits --select unassociated --chunk-size {settings['chunk_size']} "
            "--scheduler S`: the model NIMGP (300 input samples) trained on the same 454 sources "
            f"(`gpal train {' '.join(TRAIN)} --epochs {settings['epochs']}`), the catalog 4FGL's "
            f"{output_field(raw0, path0, 'pool_sources')} unassociated sources with every feature tiled to "
            f"{settings['rows']} rows; the command's wall time (imports, reading the catalog, starting the cluster and "
            "each worker's model load included); peak memory each process's VmHWM, read every "
            f"{POLL_S} s while it ran, of the command and of each process it spawned through multiprocessing: the Dask "
            f"workers and any other the cluster started; load average {_span(predict_loads)} before and after. "
            + ("The two tables were the same bytes." if len(tables) == 1 else "The two tables differed.")))
    command = run_command(SCRIPT, settings, DEFAULTS, f"--json {folder}")
    return make_record("The schedulers: in this process and on a local Dask cluster", command, commit,
                       [units_table, predict_table], settings, source=f"the runs kept in {folder}",
                       workflow=WORKFLOW)


def _kept_name(raw: dict[str, Any]) -> str:
    """A run's file in the study's folder: its kind, round and scheduler."""
    if raw["kind"] == "predict":
        return f"predict_{raw['scheduler']}.json"
    return f"round{raw['round']}_{raw['scheduler']}.json"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=DEFAULTS["rounds"],
                   help="runs of the workflow per scheduler (default 2)")
    p.add_argument("--splits", type=int, default=DEFAULTS["splits"], help="the workflow's splits (default 4)")
    p.add_argument("--epochs", type=int, default=DEFAULTS["epochs"],
                   help="training epochs of the workflow's units and of the prediction model (default 100)")
    p.add_argument("--rows", type=int, default=DEFAULTS["rows"], help="rows of the tiled catalog (default 8000)")
    p.add_argument("--chunk-size", type=int, default=DEFAULTS["chunk_size"], help="gpal predict's chunk (default 2000)")
    p.add_argument("--cores", type=int, default=DEFAULTS["cores"],
                   help="cores every command is pinned to, so local-dask starts this many workers (default 2)")
    p.add_argument("--json", metavar="FOLDER",
                   help="keep each run's figures in this folder (its earlier runs replaced)")
    p.add_argument("--record", help="write the record to this file from the runs kept in --json or --summarize")
    p.add_argument("--summarize", metavar="FOLDER",
                   help="run nothing: the record from the runs kept here, with --record")
    args = p.parse_args(argv)
    if args.record and not (args.summarize or args.json) or args.summarize and not args.record:
        p.error("--record needs --json FOLDER or kept runs (--summarize FOLDER); --summarize needs --record")
    if args.summarize:
        record_from_kept(p, args.record, lambda: results_record(output_files([args.summarize]), args.summarize))
        return 0
    for key in DEFAULTS:
        if getattr(args, key) < 1:
            p.error(f"--{key.replace('_', '-')} must be >= 1; got {getattr(args, key)}")
    usable = sorted(os.sched_getaffinity(0))
    if len(usable) < args.cores:
        p.error(f"--cores {args.cores}, but this process may use {len(usable)} cores ({usable})")
    cpus = usable[: args.cores]
    folder = Path(args.json) if args.json else None
    if folder is not None and folder.exists() and not folder.is_dir():
        p.error(f"--json {folder} is a file; expected the folder the runs are kept in")
    commit = run_commit(p, bool(args.record))

    from gpal.files import write_json_atomic

    kept: list[str] = []

    def keep(raw: dict[str, Any]) -> None:
        print(json.dumps({k: v for k, v in raw.items() if k not in ("units", "args")}), flush=True)
        if folder is not None:
            kept.append(str(write_json_atomic(folder / _kept_name(raw), raw)))

    if folder is not None:  # the record is made from one run of the study: its earlier runs go
        folder.mkdir(parents=True, exist_ok=True)
        for old in [*folder.glob("round*_*.json"), *folder.glob("predict_*.json")]:
            old.unlink()
    for k in range(1, args.rounds + 1):
        for scheduler in SCHEDULERS if k % 2 else SCHEDULERS[::-1]:
            keep(workflow_run(scheduler, k, args, cpus, commit))
    for raw in predict_runs(args, cpus, commit):
        keep(raw)
    if args.record:
        record_from_kept(p, args.record, lambda: results_record(sorted(kept), args.json))
    return 0


if __name__ == "__main__":
    sys.exit(main())

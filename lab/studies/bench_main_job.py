#!/usr/bin/env python
"""The main job (``gpal classify``) end to end, its time broken down by part; one SVI step against its GEMMs.

(a) The job: ``gpal.cli.main(["classify", "--out", NEW_DIR, "--no-progress", *EXTRA])`` in this
    process, after timing the import of the command line and of the command's modules (what a
    fresh ``gpal classify`` pays before it parses; TensorFlow is imported inside the job, where
    the command imports it).  Each part is timed by wrapping the function that does it
    (explicit timers, no profiler, so the parts run at their own speed): inclusive wall seconds,
    the CPU seconds of its own thread and of the process while it ran, and calls.  Parts nest
    per thread (the GP fit holds the prior's EM, the model build and the SVI loop; the twin and
    the baselines run in a second thread); the table says which.  The SVI loop's steps are
    counted, so the job's own seconds per step come out too.
(b) ``--step``: one SVI step of the main job's model alone (``Trainer.step`` on a
    synthetic problem of the job's shapes: N = 2103, d = 16, C = 3, M = 50, batch 200,
    NIMGP with an 8-component population prior), median over blocks of steps, against the
    floating-point work of its shapes: the flops counted below, timed as the same GEMMs in
    NumPy on this machine, and at the rate of one large GEMM.

    PYTHONPATH=$PWD python lab/studies/bench_main_job.py --step --json runs/bench/main_job.json
    PYTHONPATH=$PWD python lab/studies/bench_main_job.py --step --kernels --no-job   # + the kernels a step runs
    PYTHONPATH=$PWD python lab/studies/bench_main_job.py -- --epochs 100     # options for gpal classify after --
    python lab/studies/bench_main_job.py --json lab/studies/records/main_job_parts \
        --record lab/pages/records/results/timings.parts.json       # the job kept as main_job_parts/job.json
    python lab/studies/bench_main_job.py --step --no-job --runs 4 --json lab/studies/records/main_job_step \
        --record lab/pages/records/results/timings.step.json        # four processes, step_run<k>.json
    python lab/studies/bench_main_job.py --summarize lab/studies/records/main_job_step --record FILE

Flops of one step (forward; backward counted as twice the forward, the usual rule for
matrix products), per latent function c (C of them), batch B, M inducing points, d features:
K_zz 2 M^2 d, chol(K_zz) M^3 / 3, K_zx 2 M B d, A = L^-1 K_zx M^2 B, S^T A 2 M^2 B, A^T m 2 M B;
and for the population prior of K mixture components over the batch's sampled inputs 2 K d^2 B.
The elementwise work (kernel exponentials, quadrature of the likelihood, Adam) is left out:
it is O(M B + M^2) per latent, small beside these.
"""

from __future__ import annotations

import argparse
import functools
import inspect
import os
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

from shared import (  # the script's folder, first on its path
    MAIN_JOB_SHAPES, kept_output, output_field, output_files, outputs_commit, read_outputs, record_from_kept,
    run_command, run_commit, runs_in_children, synthetic_problem, timing_suite)

ARITHMETIC = timing_suite("arithmetic")
#: The study's declaration, which the results page's records (`parts_record`, `step_record`) name, and its script.
WORKFLOW = "lab/studies/main_job_parts.yaml"
SCRIPT = "lab/studies/bench_main_job.py"

# The job's first use of TensorFlow's modules: the timers on functions of modules not yet imported are put in place
# when it returns, so that the benchmark imports nothing before the job does.
SIZE_CHECK = "size check (imports TensorFlow or waits for its import)"
# (label, ["module:attribute path", ...]): inclusive timers on the functions that do each part.  A part
# called inside another is recorded under it ("GP fit (model) / SVI loop"), so the tree shows where time goes.
PARTS = [
    ("import TensorFlow, GPflow, gpal's models", ["gpal.runs.background:_import"]),
    (SIZE_CHECK, ["gpal.catalog_jobs.classify:check_sizes"]),
    ("selection and features", ["gpal.catalogs.catalog:Catalog.dataset", "gpal.catalogs.catalog:Catalog.pool"]),
    ("GP fit (model)", ["gpal.catalog_jobs.classify:fit_or_reuse"]),
    ("GP fit (error-blind twin)", ["gpal.estimators.noisy_gp:NoisyGPClassifier.fit"]),
    ("model set-up (standardise, prior, build)", ["gpal.training.session:ModelSession.for_fit"]),
    ("extreme deconvolution (EM)", ["gpal.models.svgp:fit_mixture_prior", "gpal.models.input_prior:fit_mixture_prior"]),
    ("SVI loop", ["gpal.training.svi:Trainer.fit", "gpal.training.batched:BatchedTrainer.fit"]),
    ("load the saved model", ["gpal.catalog_jobs.classify:load_trained"]),
    ("GP prediction", ["gpal.estimators.noisy_gp:NoisyGPClassifier.predict_proba"]),
    ("GP prediction (twin)", []),
    ("baselines and error-blind twin", ["gpal.catalog_jobs.classify:_write_baselines"]),
    ("scikit-learn baselines", ["gpal.catalog_jobs.classify:fit_baselines_on"]),
    ("outlier score", ["gpal.catalog_jobs.classify:check_outliers", "gpal.catalog_jobs.prediction:saved_outliers"]),
    ("classify the selection", ["gpal.catalog_jobs.classify:predict_catalog"]),
    ("follow-up ranking", ["gpal.catalog_jobs.classify:with_information"]),
    ("report", ["gpal.catalog_jobs.classify:report_files", "gpal.catalog_jobs.classify:write_files"]),
]



class Timers:
    """Inclusive wall / CPU seconds and calls per path of parts ("outer / inner"); a part inside itself counts once.

    Each thread has its own path (the job fits the twin and the baselines in a second thread and imports
    TensorFlow in another), and a part's CPU seconds are its own thread's (``time.thread_time``), so parts
    that run at the same time are not counted in each other.  What TensorFlow's own pool threads compute is
    in no part: the job's process CPU less its parts' shows it."""

    def __init__(self) -> None:
        self.wall: dict[str, float] = {}
        self.cpu: dict[str, float] = {}
        self.process_cpu: dict[str, float] = {}
        self.calls: dict[str, int] = {}
        self.steps: dict[str, int] = {}
        self.off_main: set[str] = set()  # top-level parts that ran in another thread than the job's
        self.missing: list[str] = []  # targets not found (not timed)
        self._local = threading.local()
        self._undo: list[Callable[[], None]] = []
        self._deferred: list[tuple[str, str]] = []
        self.origin = time.perf_counter()  # reset when the job starts
        self.spans: list[tuple[str, str, float, float]] = []  # (part path, thread, start, end) from ``origin``

    @property
    def _stack(self) -> list[str]:
        if not hasattr(self._local, "stack"):
            self._local.stack = []
        return self._local.stack

    def wrap(self, label: str, target: str, defer: bool = True) -> bool:
        """Time ``target`` ("module:Class.attr" or "module:function") under ``label``; False where it is absent.

        A target whose module is not imported yet is timed from the end of the job's size check on (`SIZE_CHECK`)."""
        import importlib

        module_name, path = target.split(":")
        if defer and module_name not in sys.modules:
            self._deferred.append((label, target))
            return True
        try:
            owner: Any = importlib.import_module(module_name)
        except ModuleNotFoundError:  # a part of another commit than the benchmark's (an alternated baseline)
            return False
        *outer, attr = path.split(".")
        for name in outer:
            owner = getattr(owner, name, None)
        if owner is None or not hasattr(owner, attr):
            return False
        raw = inspect.getattr_static(owner, attr)
        kind = type(raw) if isinstance(raw, (classmethod, staticmethod)) else None
        fn = raw.__func__ if kind else raw

        @functools.wraps(fn)
        def timed(*args: Any, **kwargs: Any) -> Any:
            part = label
            if part in self._stack:  # the same part inside itself (a method calling its base's)
                return fn(*args, **kwargs)
            if part == "GP fit (error-blind twin)" and "baselines and error-blind twin" not in self._stack:
                return fn(*args, **kwargs)  # NoisyGPClassifier.fit times the twin only; the model is fit_or_reuse
            if part == "GP prediction" and "baselines and error-blind twin" in self._stack:
                part = "GP prediction (twin)"
            key = " / ".join(self._stack + [part])
            if not self._stack and threading.current_thread() is not threading.main_thread():
                self.off_main.add(key)
            self._stack.append(part)
            w0, c0, p0 = time.perf_counter(), time.thread_time(), time.process_time()
            try:
                result = fn(*args, **kwargs)
            finally:
                self._stack.pop()
                self.spans.append((key, threading.current_thread().name, w0 - self.origin, time.perf_counter() - self.origin))
                self.wall[key] = self.wall.get(key, 0.0) + time.perf_counter() - w0
                self.cpu[key] = self.cpu.get(key, 0.0) + time.thread_time() - c0
                self.process_cpu[key] = self.process_cpu.get(key, 0.0) + time.process_time() - p0
                self.calls[key] = self.calls.get(key, 0) + 1
            if part == SIZE_CHECK:
                deferred, self._deferred = self._deferred, []
                for later in deferred:
                    if not self.wrap(*later, defer=False):
                        self.missing.append(later[1])
            if part == "SVI loop":
                runs = result if isinstance(result, list) else [result]
                self.steps[key] = self.steps.get(key, 0) + max((getattr(r, "steps", 0) for r in runs), default=0)
            return result

        setattr(owner, attr, kind(timed) if kind else timed)
        self._undo.append(lambda: setattr(owner, attr, raw))
        return True

    def restore(self) -> None:
        for undo in reversed(self._undo):
            undo()
        self._undo.clear()


class CoreSampler:
    """The process's cores in use (CPU seconds per wall second) in each second of the job, from a sampling thread:
    where the job leaves a core idle."""

    def __init__(self, origin: float, interval: float = 1.0) -> None:
        self.cores: list[float] = []
        self._done = threading.Event()
        self._origin, self._interval = origin, interval
        self._thread = threading.Thread(target=self._run, name="core-sampler", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        wall, cpu = self._origin, time.process_time()
        while not self._done.wait(self._interval - (time.perf_counter() - wall) % self._interval):
            now_wall, now_cpu = time.perf_counter(), time.process_time()
            self.cores.append((now_cpu - cpu) / (now_wall - wall))
            wall, cpu = now_wall, now_cpu

    def stop(self) -> None:
        self._done.set()
        self._thread.join()


class CollectorTimer:
    """Seconds and count of Python's cyclic garbage collections by generation while it is installed (``gc.callbacks``):
    each holds the GIL, and a full one walks every object the process tracks."""

    def __init__(self) -> None:
        import gc

        self.seconds: dict[int, float] = {}
        self.counts: dict[int, int] = {}
        self._started: dict[int, float] = {}
        self._gc = gc
        gc.callbacks.append(self._callback)

    def _callback(self, phase: str, info: dict) -> None:
        thread = threading.get_ident()
        if phase == "start":
            self._started[thread] = time.perf_counter()
        elif thread in self._started:
            generation = info["generation"]
            self.seconds[generation] = self.seconds.get(generation, 0.0) + time.perf_counter() - self._started.pop(thread)
            self.counts[generation] = self.counts.get(generation, 0) + 1

    def stop(self) -> None:
        self._gc.callbacks.remove(self._callback)


def thread_cpu() -> dict[str, float]:
    """CPU seconds of this process's live threads from /proc (empty where there is none), summed by thread name
    (Python's, else the OS's; a trailing number dropped, so a pool's threads count together): which pools did the
    work (TensorFlow's ``tf_Compute`` runs a function's kernels, its unnamed Eigen threads their parallel parts)."""
    import re
    from collections import Counter

    ticks = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    python_names = {t.native_id: t.name for t in threading.enumerate()}  # the OS calls every Python thread "python"
    totals: Counter = Counter()
    for task in (os.listdir("/proc/self/task") if os.path.isdir("/proc/self/task") else []):
        try:
            with open(f"/proc/self/task/{task}/comm") as f:
                name = re.sub(r"[-_]?\d+$", "", python_names.get(int(task), f.read().strip()))
            with open(f"/proc/self/task/{task}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:  # the thread ended meanwhile
            continue
        totals[name] += (int(fields[11]) + int(fields[12])) / ticks  # utime, stime
    return dict(totals)


def run_main_job(extra: list[str], keep: str | None = None) -> dict[str, Any]:
    """The job with every part timed (into a fresh folder ``keep``, else a temporary one); a dict of seconds.

    Only ``gpal.cli`` is imported first (timed apart); the job imports the rest itself, TensorFlow in a
    second thread beside the selection's features, as ``gpal classify`` does."""
    w0, c0 = time.perf_counter(), time.process_time()
    import gpal.cli  # what `gpal classify` imports before it parses
    import_cli = (time.perf_counter() - w0, time.process_time() - c0)
    w0, c0 = time.perf_counter(), time.process_time()
    import gpal.catalog_jobs.classify  # noqa: F401  (what the command imports first: scikit-learn, pandas, SciPy)
    import_job = (time.perf_counter() - w0, time.process_time() - c0)
    if "tensorflow" in sys.modules:
        raise RuntimeError("TensorFlow was imported before the job: the benchmark would not time its import")

    timers = Timers()
    timers.missing = [t for label, targets in PARTS for t in targets if not timers.wrap(label, t)]
    if "tensorflow" in sys.modules:
        raise RuntimeError("the timers imported TensorFlow before the job: the benchmark would not time its import")
    with tempfile.TemporaryDirectory(prefix="bench_main_job_") as tmp:
        out = keep or tmp
        w0, c0 = time.perf_counter(), time.process_time()
        timers.origin = w0
        sampler, collector = CoreSampler(w0), CollectorTimer()
        threads_before = thread_cpu()
        try:
            code = gpal.cli.main(["classify", "--out", out, "--no-progress", *extra])
        finally:
            timers.restore()
            sampler.stop()
            collector.stop()
        job = (time.perf_counter() - w0, time.process_time() - c0)
        threads = {name: cpu - threads_before.get(name, 0.0) for name, cpu in thread_cpu().items()}
        metrics = _held_out_metrics(out) if code == 0 else {}
        classified = _classified_rows(out) if code == 0 else 0
    if code != 0:
        raise SystemExit(f"gpal classify exited {code}")
    return {"import_cli": import_cli, "import_job": import_job, "job": job, "parts": timers, "cores": sampler.cores,
            "missing": timers.missing, "metrics": metrics, "threads": threads, "classified": classified,
            "collections": {g: (collector.seconds[g], collector.counts[g]) for g in sorted(collector.seconds)}}


def _held_out_metrics(out: str) -> dict[str, Any]:
    import json

    from gpal.catalog_jobs.layout import METRICS_FILE, located

    path = located(out, METRICS_FILE)
    return json.loads(path.read_text()) if path.is_file() else {}


def _classified_rows(out: str) -> int:
    from gpal.catalog_jobs.layout import CLASSIFICATIONS_CSV, located
    from gpal.catalog_jobs.tables import read_probability_table

    return len(read_probability_table(located(out, CLASSIFICATIONS_CSV)).frame)


# ------------------------------------------------------------------ (b) one step against its GEMMs
# The flops and GEMM times of a step's shapes: benchmarks/suite/arithmetic.py (the timing suite's harness).
def _main_job_step(steps: int) -> tuple[Callable, list]:
    """The compiled step of the main job's model on a synthetic problem of its shapes, traced, and ``steps`` batches."""
    import tensorflow as tf

    from gpal.models.svgp import build_model
    from gpal.training.svi import TrainData, Trainer

    s = MAIN_JOB_SHAPES
    X, X_var, y = synthetic_problem(s["n"], s["d"], s["classes"], 0)
    model = build_model(X, y, num_classes=s["classes"], input_noise="latent", input_prior="population",
                        prior_components=s["prior_components"], num_inducing=s["inducing"], X_var=X_var, seed=0)
    trainer = Trainer(model, seed=0)
    trainer.load(TrainData.from_arrays(X, X_var, y), learning_rate=0.01)
    step = trainer.step
    rng = np.random.default_rng(0)
    batches = [tf.constant(rng.choice(s["n"], s["batch"], replace=False), tf.int64) for _ in range(steps)]
    float(step(batches[0], tf.constant(0, tf.int64)))  # trace
    return step, batches


#: What TensorFlow's profiler records beside the kernels: the executor's and the eager runtime's own spans.
_RUNTIME_SPANS = {"Process", "Run", "FunctionRun", "ExecutorDoneCallback", "ParallelFor", "EagerExecute",
                  "EagerKernelExecute", "TFE_Py_ExecuteCancelable", "function"}
#: The profiler's thread-pool listener: one ``Record`` per task handed to a pool, a Start/StopRegion pair per task run
#: (zero-length markers, not kernels; before 66c697e they were counted as kernels, doubling the count).
_POOL_EVENTS = "ThreadpoolListener::"


def step_kernels(steps: int = 50, top: int = 12) -> dict[str, Any]:
    """TensorFlow kernels one step executes (TensorFlow's profiler over ``steps`` steps): how many, and the
    ``top`` kernel types by time (per step; the profiler's own overhead inflates the times, not the counts)."""
    import collections
    import glob

    import tensorflow as tf
    from tensorflow.tsl.profiler.protobuf import xplane_pb2

    step, batches = _main_job_step(steps)
    with tempfile.TemporaryDirectory(prefix="bench_step_kernels_") as logdir:
        tf.profiler.experimental.start(logdir)
        for i, idx in enumerate(batches):
            float(step(idx, tf.constant(i, tf.int64)))
        tf.profiler.experimental.stop()
        space = xplane_pb2.XSpace()
        with open(glob.glob(f"{logdir}/**/*.xplane.pb", recursive=True)[0], "rb") as trace:
            space.ParseFromString(trace.read())
    counts, micros, pool_tasks = collections.Counter(), collections.Counter(), 0
    for plane in space.planes:
        for line in plane.lines:
            if not line.name.startswith(("tf_Compute", "tf_numa", "python")):
                continue
            for event in line.events:
                name = plane.event_metadata[event.metadata_id].name
                if name.startswith(_POOL_EVENTS):
                    pool_tasks += name == _POOL_EVENTS + "Record"
                    continue
                kind = name.rsplit(":", 1)[-1].strip()
                if ":" in name and kind not in _RUNTIME_SPANS and not kind.startswith("__inference"):
                    counts[kind] += 1  # a kernel is "op_name:OpType"; the rest are the runtime's own spans
                    micros[kind] += event.duration_ps / 1e6
    return {"kernels_per_step": sum(counts.values()) / steps, "pool_tasks_per_step": pool_tasks / steps,
            "top": [(kind, counts[kind] / steps, micros[kind] / steps) for kind, _ in micros.most_common(top)]}


def step_seconds(steps: int, repeats: int) -> tuple[float, float]:
    """Median wall and CPU seconds of one compiled step of the main job's model (synthetic data, same shapes)."""
    import tensorflow as tf

    step, batches = _main_job_step(steps)
    walls, cpus = [], []
    for _ in range(repeats):
        w0, c0 = time.perf_counter(), time.process_time()
        for i, idx in enumerate(batches):
            float(step(idx, tf.constant(i, tf.int64)))  # the loss fetched to the host, as the training loop does
        walls.append((time.perf_counter() - w0) / steps)
        cpus.append((time.process_time() - c0) / steps)
    return float(np.median(walls)), float(np.median(cpus))


# ------------------------------------------------------------------ output
def _row(label: str, wall: float, cpu: float, process_cpu: float, extra: str = "") -> str:
    return f"| {label:<46s} | {wall:8.2f} | {cpu:8.2f} | {process_cpu:8.2f} | {extra} |"


def print_job(result: dict[str, Any]) -> None:
    timers: Timers = result["parts"]
    print("| part | wall s | CPU s (its thread) | process CPU s while it ran | calls |")
    print("|---|---|---|---|---|")
    print(_row("import gpal.cli", *result["import_cli"], result["import_cli"][1]))
    print(_row("import the command's modules (no TensorFlow)", *result["import_job"], result["import_job"][1]))
    for key in sorted(timers.wall, key=lambda k: [_order(p) for p in k.split(" / ")]):
        depth = key.count(" / ")
        label = key.split(" / ")[-1] + (" (second thread)" if key in timers.off_main else "")
        print(_row("  " * depth + label, timers.wall[key], timers.cpu[key], timers.process_cpu[key],
                   str(timers.calls[key])))
    top = [key for key in timers.wall if " / " not in key]
    job_wall, job_cpu = result["job"]
    print(_row("other, main thread (CLI, data split, tables, writes)",
               job_wall - sum(timers.wall[k] for k in top if k not in timers.off_main), float("nan"), float("nan")))
    print(_row("CPU in no part (the above; TensorFlow's pool threads)", float("nan"),
               job_cpu - sum(timers.cpu[k] for k in top), float("nan")))
    imports = [result[k] for k in ("import_cli", "import_job")]
    total_cpu = job_cpu + sum(c for _, c in imports)
    print(_row("**total**", job_wall + sum(w for w, _ in imports), total_cpu, total_cpu))
    for key, steps in timers.steps.items():
        print(f"{key}: {steps} steps, {1e3 * timers.wall[key] / steps:.2f} ms wall "
              f"({1e3 * timers.cpu[key] / steps:.2f} ms CPU of its thread) per step, loop overhead included")
    print("\ntimeline (seconds from the job's start; each part's thread):")
    for key, thread, start, end in sorted(timers.spans, key=lambda span: span[2]):
        print(f"  {start:6.2f} -> {end:6.2f}  {thread[:16]:16s} {key}")
    print("CPU s of the threads alive at the job's end, by name (threads that ended are left out): " + ", ".join(
        f"{name} {cpu:.1f}" for name, cpu in sorted(result["threads"].items(), key=lambda kv: -kv[1]) if cpu >= 0.05))
    print("garbage collections during the job (generation: seconds, count): " + ", ".join(
        f"{g}: {seconds:.2f} s, {count}" for g, (seconds, count) in result["collections"].items()))
    cores = result["cores"]
    print("cores in use, second by second: " + " ".join(f"{c:.1f}" for c in cores))
    if result["missing"]:
        print(f"not found (not timed): {result['missing']}")
    held = result["metrics"].get("heldout", {})
    print("held-out:", {k: round(held[k], 4) for k in ("accuracy", "balanced_accuracy", "nll", "brier", "ece") if k in held})


# ------------------------------------------------------------------ the results page's records
def _part(parts: dict[str, Any], path: str, top: str, label: str) -> dict[str, float]:
    """Wall seconds and the process's CPU seconds while they ran (TensorFlow's pool threads included) of the parts
    labelled ``label`` under the top-level part ``top`` (summed: a part may sit at several depths), zero where it did
    not run."""
    keys = [k for k in parts if k.split(" / ")[0] == top and k.split(" / ")[-1] == label]
    return {"wall": sum(float(output_field(parts[k], path, "wall")) for k in keys),
            "cpu": sum(float(output_field(parts[k], path, "process_cpu")) for k in keys)}


def parts_record(path: str, commit: str | None = None) -> dict[str, Any]:
    """The results page's record of where the main job's time goes, from one run's JSON (the job timed, ``--json``):
    the imports, TensorFlow's import beside the features, the features, the GP fit and what runs beside it, the
    classification and the report, each its wall and CPU seconds (its threads'), and the total."""
    from result_records import make_record, make_table

    (raw,) = read_outputs([path])
    commit = outputs_commit([raw], [path], commit)
    job = output_field(raw, path, "job")
    parts = output_field(job, path, "parts")
    tops = {k for k in parts if " / " not in k}
    needed = ["import TensorFlow, GPflow, gpal's models", "selection and features", "GP fit (model)",
              "baselines and error-blind twin", "classify the selection", "report"]
    absent = [label for label in needed if label not in tops]
    if absent:
        raise ValueError(f"{path}: the job's parts lack {absent}; expected a run of the main job (not --no-job)")

    def top(label: str) -> dict[str, float]:
        return _part(parts, path, label, label) if label in tops else {"wall": 0.0, "cpu": 0.0}

    imports = [output_field(job, path, k) for k in ("import_cli", "import_job")]
    fit, beside = top("GP fit (model)"), top("baselines and error-blind twin")
    em = _part(parts, path, "GP fit (model)", "extreme deconvolution (EM)")["wall"]
    setup = _part(parts, path, "GP fit (model)", "model set-up (standardise, prior, build)")["wall"]
    svi = _part(parts, path, "GP fit (model)", "SVI loop")["wall"]
    steps = sum(n for k, n in output_field(job, path, "svi_steps").items() if k.split(" / ")[0] == "GP fit (model)")
    em_in_setup = any(k.startswith("GP fit (model) / ") and "model set-up" in k and k.endswith("(EM)") for k in parts)
    baselines = _part(parts, path, "baselines and error-blind twin", "scikit-learn baselines")["wall"]
    twin_fit = _part(parts, path, "baselines and error-blind twin", "GP fit (error-blind twin)")["wall"]
    twin_predict = _part(parts, path, "baselines and error-blind twin", "GP prediction (twin)")["wall"]
    after = [top(label) for label in ("outlier score", "classify the selection", "follow-up ranking")]
    classified = output_field(job, path, "classified")
    rows = [
        ["import `gpal.cli` and the command's modules", sum(w for w, _ in imports), sum(c for _, c in imports)],
        ["TensorFlow, GPflow and the model code (a second thread, beside the features)",
         *top("import TensorFlow, GPflow, gpal's models").values()],
        ["catalog selection and features, Monte Carlo error propagation included", *top("selection and features").values()],
        [f"GP fit: the population prior's EM {em:.1f} s, building {setup - em if em_in_setup else setup:.1f} s, "
         f"{steps} SVI steps {svi:.1f} s", fit["wall"], fit["cpu"]],
        [f"beside the fit: the baselines {baselines:.1f} s, then the GP without error bars (fit {twin_fit:.1f} s, "
         f"prediction {twin_predict:.1f} s)", beside["wall"], beside["cpu"]],
        [f"outlier score, classification of {classified} sources, follow-up ranking",
         sum(p["wall"] for p in after), sum(p["cpu"] for p in after)],
        ["report", *top("report").values()],
    ]
    wall = float(output_field(job, path, "job")[0]) + sum(w for w, _ in imports)
    cpu = float(output_field(job, path, "job")[1]) + sum(c for _, c in imports)
    table = make_table(["part", "wall s", "CPU s"],
                       [[label, f"{w:.1f}", f"{c:.1f}"] for label, w, c in rows]
                       + [["**total**", f"**{wall:.1f}**", f"**{cpu:.1f}**"]], "lrr", caption=f"One run of {wall:.1f} s:")
    extra = output_field(raw, path, "extra_args")
    command = run_command(SCRIPT, raw.get("args", {}), vars(_parser().parse_args([])),
                          f"--json {path}", *(["--", *extra] if extra else []))
    return make_record("Where the main job's time goes", command,
                       commit, [table], source=f"the run's output {path}", workflow=WORKFLOW)


def _span(values: list[float], digits: int) -> str:
    low, high = f"{min(values):.{digits}f}", f"{max(values):.{digits}f}"
    return low if low == high else f"{low}-{high}"


def step_record(paths: list[str], commit: str | None = None) -> dict[str, Any]:
    """The results page's record of one SVI step against its arithmetic, from the JSON of one or more runs of
    ``--step --no-job``: the ranges over the runs of the step's ms, its GEMMs' ms and their ratio, each run's own."""
    from result_records import make_record, make_table

    outputs = read_outputs(paths)
    commit = outputs_commit(outputs, paths, commit)
    steps = [output_field(raw, path, "step") for raw, path in zip(outputs, paths)]
    wall = [1e3 * float(output_field(s, p, "wall_s")) for s, p in zip(steps, paths)]
    cpu = [1e3 * float(output_field(s, p, "cpu_s")) for s, p in zip(steps, paths)]
    gemm = [1e3 * float(output_field(s, p, "gemm_s")) for s, p in zip(steps, paths)]
    shapes = [output_field(s, p, "shapes") for s, p in zip(steps, paths)]
    if any(shape != shapes[0] for shape in shapes):
        raise ValueError(f"the runs {list(map(str, paths))} timed steps of different shapes: one record is one shape")
    s = shapes[0]
    defaults = {k: v for k, v in vars(_parser().parse_args([])).items() if k not in ("step", "no_job", "runs")}
    loads = [float(output_field(raw, path, "load_average_at_start")[0]) for raw, path in zip(outputs, paths)]
    runs = f"{len(paths)} runs" if len(paths) > 1 else "one run"
    table = make_table(["quantity", "wall", "CPU"], [
        [f"one step of the main job's model ({runs}), ms", _span(wall, 1), _span(cpu, 1)],
        ["the matrix products of its shapes in NumPy on one core, ms", f"{_span(gemm, 2)} (CPU)", ""],
        ["step / its GEMMs (the same run's)", _span([w / g for w, g in zip(wall, gemm)], 1),
         _span([c / g for c, g in zip(cpu, gemm)], 1)]], "lll")
    folders = {str(Path(p).parent) for p in paths}
    if len(folders) == 1 and [Path(p).name for p in paths] == [f"step_run{k}.json" for k in range(1, len(paths) + 1)]:
        runs_option = f"--runs {len(paths)}" if len(paths) > 1 else ""  # made by --runs into the study's folder
        command = run_command(SCRIPT, outputs[0].get("args", {}), defaults, "--step --no-job", runs_option,
                              f"--json {folders.pop()}")
    else:
        command = "\n".join([*(run_command(SCRIPT, raw.get("args", {}), defaults, "--step --no-job", f"--json {p}")
                               for raw, p in zip(outputs, paths)),
                             *([f"python {SCRIPT} --summarize " + " ".join(map(str, paths))] if len(paths) > 1 else [])])
    return make_record(
        "One SVI step against its arithmetic", command, commit, [table],
        {"model": f"NIMGP, population prior ({s['prior_components']} components), M = {s['inducing']}, "
                  f"B = {s['batch']}, d = {s['d']}, C = {s['classes']}, n = {s['n']}"},
        source=f"{runs} of the step, load {_span(loads, 1)} at {'their starts' if len(paths) > 1 else 'its start'}: "
               f"{', '.join(map(str, paths))}",
        workflow=WORKFLOW)


def _order(label: str) -> int:
    return next(i for i, (name, _) in enumerate(PARTS) if name == label)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--step", action="store_true", help="also time one SVI step against its GEMMs")
    parser.add_argument("--no-job", action="store_true", help="skip the main job (with --step)")
    parser.add_argument("--steps", type=int, default=100, help="steps per timed block (--step)")
    parser.add_argument("--repeats", type=int, default=7, help="timed blocks (--step)")
    parser.add_argument("--kernels", action="store_true",
                        help="with --step: the kernels a step executes, from TensorFlow's profiler")
    parser.add_argument("--json", help="write every figure to this JSON file")
    parser.add_argument("--out", help="keep the job's folder here (default: a temporary one, removed)")
    parser.add_argument("--record", help="write the results page's record to this file from the run's --json (the "
                        "job's parts; with --step --no-job the step's) or from --summarize's outputs")
    parser.add_argument("--summarize", nargs="+", metavar="JSON", help="run nothing: the record from these kept "
                        "outputs (one job's, or one or more of --step --no-job), with --record")
    parser.add_argument("--commit", help="with --summarize: the commit of outputs that name none")
    parser.add_argument("--runs", type=int, default=1, help="with --step --no-job and --json FOLDER: this many runs, "
                        "each a fresh process, kept as FOLDER/step_run<k>.json (default 1)")
    return parser


def main(argv: list[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    argv = argv[: argv.index("--")] if "--" in argv else argv
    parser = _parser()
    args = parser.parse_args(argv)
    if args.record and not (args.summarize or args.json) or args.summarize and not args.record:
        parser.error("--record needs the run's --json or kept outputs (--summarize JSON ...); --summarize needs --record")
    if args.commit and not args.summarize:
        parser.error("--commit names the commit of kept outputs (--summarize); a run records its own")
    if args.record and not args.summarize and args.step != args.no_job:
        parser.error("--record writes one record: the job's parts (no --step) or the step's (--step --no-job)")
    if args.summarize:
        def kept() -> dict[str, Any]:
            files = output_files(args.summarize)
            outputs = read_outputs(files)
            if all("job" in raw for raw in outputs) and len(outputs) == 1:
                return parts_record(files[0], args.commit)
            if not any("job" in raw for raw in outputs):
                return step_record(files, args.commit)
            raise ValueError(f"{args.summarize}: a record is made from one run of the job or from runs of the "
                             "step alone (--step --no-job), not from several jobs or both")

        record_from_kept(parser, args.record, kept)
        return
    commit = run_commit(parser, bool(args.record))
    if args.step and args.no_job and args.json and os.path.isdir(args.json):
        if args.runs < 1:
            parser.error("--runs must be >= 1")
        child = ["--step", "--no-job", "--steps", str(args.steps), "--repeats", str(args.repeats),
                 *(["--kernels"] if args.kernels else [])]
        paths = runs_in_children(__file__, child, args.runs, args.json, "step")
        if args.record:
            from result_records import outcome, write_record

            print(outcome(write_record(args.record, step_record(paths))))
        return
    if args.runs != 1:
        parser.error("--runs goes with --step --no-job --json FOLDER (the folder keeping each run)")
    args.json = kept_output(args.json, "job.json")
    if args.out and os.path.exists(args.out):
        parser.error(f"--out {args.out} exists; the job must run from scratch, not reuse a trained model")

    record: dict[str, Any] = {"commit": commit, "args": vars(args), "load_average_at_start": os.getloadavg(),
                              "extra_args": extra}
    if not args.no_job:
        result = run_main_job(extra, args.out)
        print_job(result)
        t: Timers = result["parts"]
        record["job"] = {"import_cli": result["import_cli"], "import_job": result["import_job"], "job": result["job"],
                         "parts": {k: {"wall": t.wall[k], "cpu": t.cpu[k], "process_cpu": t.process_cpu[k],
                                       "calls": t.calls[k],
                                       "second_thread": k in t.off_main} for k in t.wall},
                         "svi_steps": t.steps, "metrics": result["metrics"], "classified": result["classified"],
                         "cores_per_second": result["cores"], "thread_cpu": result["threads"],
                         "collections": result["collections"],
                         "timeline": [{"part": k, "thread": th, "start": a, "end": b} for k, th, a, b in t.spans]}
    if args.step:
        s = MAIN_JOB_SHAPES
        wall, cpu = step_seconds(args.steps, args.repeats)
        flops = ARITHMETIC.step_flops(s["classes"], s["batch"], s["inducing"], s["d"], s["prior_components"])
        gemm = ARITHMETIC.gemm_seconds(s["classes"], s["batch"], s["inducing"], s["d"], s["prior_components"])
        rate = ARITHMETIC.large_gemm_rate()
        at_rate = flops["total"] / rate
        print(f"\none SVI step ({s}): {1e3 * wall:.3f} ms wall ({1e3 * cpu:.3f} ms CPU)")
        print(f"flops per step: {flops['total'] / 1e6:.2f} M (forward {flops['forward'] / 1e6:.2f} M: "
              + ", ".join(f"{k} {v / 1e6:.2f} M" for k, v in flops.items() if k not in ("forward", "total")) + ")")
        print(f"the step's GEMMs in NumPy, one core: {1e3 * gemm:.3f} ms CPU -> step CPU / GEMM = {cpu / gemm:.1f}")
        print(f"large-GEMM rate {rate / 1e9:.1f} GFLOP/s (one core) -> the flops at that rate {1e3 * at_rate:.3f} ms "
              f"-> step CPU / arithmetic = {cpu / at_rate:.1f}")
        record["step"] = {"shapes": s, "wall_s": wall, "cpu_s": cpu, "flops": flops, "gemm_s": gemm,
                          "large_gemm_flops_per_s": rate, "step_cpu_over_gemm": cpu / gemm,
                          "step_cpu_over_rate": cpu / at_rate}
        if args.kernels:
            kernels = step_kernels()
            print(f"kernels executed per step: {kernels['kernels_per_step']:.0f} (tasks handed to TensorFlow's thread "
                  f"pools: {kernels['pool_tasks_per_step']:.0f}); the most time (per step, "
                  "profiled): " + ", ".join(f"{k} {n:.0f} x {t:.0f} us" for k, n, t in kernels["top"]))
            record["step"]["kernels"] = kernels
    if args.json:
        from gpal.files import write_json_atomic

        write_json_atomic(args.json, record)
    if args.record:
        from result_records import outcome, write_record

        made = step_record([args.json]) if args.no_job else parts_record(args.json)
        print(outcome(write_record(args.record, made)))


if __name__ == "__main__":
    main()

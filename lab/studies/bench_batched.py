#!/usr/bin/env python
"""Batched training: K models of one family trained in one compiled step, against one at a time.

(a) Step times.  For each K (default 1, 4, 16, 64): seconds per step of a ``BatchedTrainer``
    holding K models (each its own data set and seed), against the step of one model
    trained alone (``gpal.training.svi.Trainer``).  Reported: units per second (a unit is one
    model trained for ``--epochs`` epochs: epochs x ceil(N / batch) steps), and the speed-up
    K x (single step) / (batched step), i.e. against K models trained one after another.
(b) With ``--end-to-end E``: 16 ``NoisyGPClassifier``s on 16 stratified 90/10 splits of the
    paper's 4FGL set (454 sources, the robust-max settings of gpal/workflows/files/fermi_4fgl.yaml),
    E epochs, fitted one after another (``fit``) and together (``fit_batched``), building,
    tracing and k-means included.

Steps are timed in blocks of ``--steps`` after ``--warmup`` untimed steps, the batch sizes'
blocks interleaved so load from other processes hits all alike; medians over ``--repeats``
blocks.  Wall and process CPU time are both recorded.

    .venv/bin/python lab/studies/bench_batched.py --json runs/bench/batched_fermi.json
    .venv/bin/python lab/studies/bench_batched.py --n 2000 --inducing 100 --ks 1 4 16 --json runs/bench/batched_m100.json
    .venv/bin/python lab/studies/bench_batched.py --ks 1 16 --end-to-end 50
    .venv/bin/python lab/studies/bench_batched.py --ks 1 16 64 --breakdown --json runs/bench/batched_breakdown.json
    python lab/studies/bench_batched.py --summarize lab/studies/records/batched_fermi_quiet.json \
        --record lab/pages/records/results/timings.batched.json     # the results page's record, no run

``--breakdown`` times, per K, the vectorised ELBO alone, ELBO + gradient and the whole step (CPU):
the arithmetic per model that batching cannot share.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from typing import Any

import numpy as np

from gpal.files import write_json_atomic
from shared import (
    METHODS, environment, output_field, outputs_commit, read_outputs, record_from_kept, run_command, run_commit,
    synthetic_problem)

#: The results page's record is written by `results_record`, from the JSON of a run (``--json``).
WORKFLOW = "lab/studies/batched.yaml"


def _models(method: str, K: int, args: argparse.Namespace) -> tuple[list, list]:
    from gpal.models.svgp import build_model
    from gpal.training.svi import TrainData

    models, datas = [], []
    for k in range(K):
        X, X_var, y = synthetic_problem(args.n, args.d, args.classes, args.seed + k)
        models.append(build_model(X, y, num_classes=args.classes, input_noise=METHODS[method], likelihood=args.likelihood,
                                  num_inducing=args.inducing, X_var=X_var, seed=args.seed + k))
        datas.append(TrainData.from_arrays(X, X_var, y))
    return models, datas


def step_timers(method: str, args: argparse.Namespace) -> dict[str, Any]:
    """A callable per configuration running ``steps`` steps and returning (wall, cpu) seconds."""
    import tensorflow as tf

    from gpal.training.batched import BatchedTrainer
    from gpal.training.svi import Trainer

    timers = {}
    rng = np.random.default_rng(args.seed)
    models, datas = _models(method, 1, args)
    single = Trainer(models[0], seed=args.seed)
    single.load(datas[0], learning_rate=0.01)  # (assigning the data's fields failed on its sample_weight, None)
    counter = {"single": 0}

    def run_single() -> tuple[float, float]:
        idx = [tf.constant(rng.permutation(args.n)[: args.batch], tf.int64) for _ in range(args.steps)]
        wall, cpu = time.perf_counter(), time.process_time()
        for i in idx:
            single.step(i, tf.constant(counter["single"], tf.int64)).numpy()
            counter["single"] += 1
        return time.perf_counter() - wall, time.process_time() - cpu

    timers["single"] = run_single
    for K in args.ks:
        models, datas = _models(method, K, args)
        trainer = BatchedTrainer(models, datas, [args.seed + k for k in range(K)])

        def run_batched(trainer=trainer, K=K) -> tuple[float, float]:
            idx = [tf.constant(np.stack([rng.permutation(args.n)[: args.batch] for _ in range(K)]), tf.int64)
                   for _ in range(args.steps)]
            with trainer.loaded() as group:  # the group's values and data copied in, outside the timing
                group.optimizer.learning_rate = 0.01
                wall, cpu = time.perf_counter(), time.process_time()
                for s, i in enumerate(idx):
                    group.step(i, tf.constant(s, tf.int64))[0].numpy()
                return time.perf_counter() - wall, time.process_time() - cpu

        timers[K] = run_batched
    return timers


def time_steps(method: str, args: argparse.Namespace) -> dict[str, Any]:
    timers = step_timers(method, args)
    saved_steps = args.steps
    args.steps = args.warmup
    for run in timers.values():  # tracing and warm-up
        run()
    args.steps = saved_steps
    blocks: dict[Any, list[tuple[float, float]]] = {key: [] for key in timers}
    for _ in range(args.repeats):
        for key, run in timers.items():
            blocks[key].append(run())
    per_step = {str(key): {"wall": float(np.median([w for w, _ in b])) / args.steps,
                           "cpu": float(np.median([c for _, c in b])) / args.steps,
                           "wall_range": [min(w for w, _ in b) / args.steps, max(w for w, _ in b) / args.steps]}
                for key, b in blocks.items()}
    steps_per_unit = args.epochs * math.ceil(args.n / args.batch)
    single = per_step["single"]["wall"]
    rows = []
    for K in args.ks:
        t = per_step[str(K)]["wall"]
        rows.append({"K": K, "ms_per_step": 1e3 * t, "cpu_ms_per_step": 1e3 * per_step[str(K)]["cpu"],
                     "units_per_second": K / (t * steps_per_unit), "speedup_vs_one_after_another": K * single / t})
    return {"method": method, "per_step": per_step, "single_ms_per_step": 1e3 * single,
            "single_units_per_second": 1 / (single * steps_per_unit), "rows": rows}


def breakdown(method: str, args: argparse.Namespace) -> list[dict[str, Any]]:
    """CPU ms of the K models' vectorised ELBO, of ELBO + gradient and of the whole step, for each K.

    Where the step's time goes once the per-step dispatch is shared: the forward and backward
    arithmetic per model is what batching cannot remove.
    """
    from gpal.training.batched import BatchedTrainer

    rows = []
    for K in args.ks:
        models, datas = _models(method, K, args)
        with BatchedTrainer(models, datas, [args.seed + k for k in range(K)]).loaded() as group:
            rows.append(_breakdown_row(method, group, K, args))
    return rows


def _breakdown_row(method: str, trainer: Any, K: int, args: argparse.Namespace) -> dict[str, Any]:
    """``breakdown``'s CPU ms for the K models loaded in ``trainer`` (a ``GroupStep``)."""
    import tensorflow as tf

    trainable = trainer.shared + trainer.tables
    forward = tf.function(lambda i, s: trainer.losses(i, s))

    @tf.function
    def backward(i, s):
        with tf.GradientTape(watch_accessed_variables=False) as tape:
            tape.watch(trainable)
            total = tf.reduce_sum(trainer.losses(i, s))
        return [tf.convert_to_tensor(g) for g in tape.gradient(total, trainable)]

    idx = tf.constant(np.stack([np.arange(args.batch)] * K), tf.int64)
    zero = tf.constant(0, tf.int64)
    row = {"K": K}
    for name, fn in (("elbo", lambda: forward(idx, zero).numpy()),
                     ("elbo_and_gradient", lambda: [g.numpy() for g in backward(idx, zero)]),
                     ("step", lambda: trainer.step(idx, zero)[0].numpy())):
        for _ in range(args.warmup):
            fn()
        blocks = []
        for _ in range(args.repeats):
            cpu = time.process_time()
            for _ in range(args.steps):
                fn()
            blocks.append((time.process_time() - cpu) / args.steps)
        row[f"{name}_cpu_ms"] = 1e3 * float(np.median(blocks))
        row[f"{name}_cpu_ms_per_model"] = row[f"{name}_cpu_ms"] / K
    print(f"  {method} K={K}: ELBO {row['elbo_cpu_ms']:.2f} ms, + gradient {row['elbo_and_gradient_cpu_ms']:.2f} ms, "
          f"step {row['step_cpu_ms']:.2f} ms; per model {row['elbo_cpu_ms_per_model']:.3f} / "
          f"{row['elbo_and_gradient_cpu_ms_per_model']:.3f} / {row['step_cpu_ms_per_model']:.3f} ms", flush=True)
    return row


def end_to_end(args: argparse.Namespace) -> dict[str, Any]:
    """16 estimators on 16 4FGL splits for ``--end-to-end`` epochs: one after another, then together."""
    from gpal import NoisyGPClassifier
    from gpal.catalogs import load_catalog
    from gpal.estimators.batched import fit_batched
    from gpal.runs.units import derived_seed

    data = load_catalog("4FGL").dataset(classes=["bll", "fsrq", "psr"], min_significance=30)
    trains = [data.subset(s.train) for s in data.repeated_splits(16, test_size=0.1, seed=0)]
    out = {}
    for method, noise in METHODS.items():
        params = dict(input_noise=noise, likelihood=args.likelihood, num_inducing=args.inducing, epochs=args.end_to_end,
                      batch_size=args.batch, n_samples=300, hidden_sizes=(50,))
        t = time.perf_counter()
        for k, train in enumerate(trains):
            NoisyGPClassifier(random_state=derived_seed(0, k), **params).fit(train)
        alone = time.perf_counter() - t
        t = time.perf_counter()
        fit_batched([NoisyGPClassifier(random_state=derived_seed(0, k), **params) for k in range(16)], trains)
        together = time.perf_counter() - t
        out[method] = {"one_after_another_s": alone, "together_s": together, "speedup": alone / together}
        print(f"  {method}: 16 fits of {args.end_to_end} epochs, one after another {alone:.1f} s, together "
              f"{together:.1f} s: {alone / together:.1f}x", flush=True)
    return out


def table(results: list[dict[str, Any]], args: argparse.Namespace) -> str:
    lines = [f"N = {args.n}, d = {args.d}, C = {args.classes}, M = {args.inducing}, batch {args.batch}, "
             f"{args.likelihood}; a unit = {args.epochs} epochs = {args.epochs * math.ceil(args.n / args.batch)} steps",
             "", "| method | K | ms / step (cpu) | units / s | one-at-a-time units / s | speed-up vs K x single step |",
             "|---|---:|---:|---:|---:|---:|"]
    for res in results:
        for row in res["rows"]:
            lines.append(f"| {res['method']} | {row['K']} | {row['ms_per_step']:.2f} ({row['cpu_ms_per_step']:.2f}) | "
                         f"{row['units_per_second']:.3f} | {res['single_units_per_second']:.3f} | "
                         f"{row['speedup_vs_one_after_another']:.1f}x |")
        lines.append(f"| {res['method']} | single | {res['single_ms_per_step']:.2f} | | | |")
    return "\n".join(lines)


def results_record(path: str, commit: str | None = None) -> dict[str, Any]:
    """The results page's record from a run's JSON at ``path``: per method, one model's ms per step and the speed-up
    K x (single step) / (batched step) at each K above 1.  ``commit`` only for a JSON that names none."""
    from result_records import make_record, make_table

    (raw,) = read_outputs([path])
    commit = outputs_commit([raw], [path], commit)
    args = {k: output_field(raw, path, "args", k) for k in ("n", "d", "classes", "inducing", "batch")}
    results = output_field(raw, path, "results")
    ks = [k for k in output_field(raw, path, "args", "ks") if k != 1]
    if not results or not ks:
        raise ValueError(f"{path}: no methods timed, or no K above 1: nothing to set against one model")
    rows, ratios = [], []
    for res in results:
        method = output_field(res, path, "method")
        speedups = {output_field(row, path, "K"): output_field(row, path, "speedup_vs_one_after_another")
                    for row in output_field(res, path, "rows")}
        missing = [k for k in ks if k not in speedups]
        if missing:
            raise ValueError(f"{path}: method {method!r} has no row for K = {missing}")
        rows.append([method, f"{output_field(res, path, 'single_ms_per_step'):.2f}", *(f"{speedups[k]:.1f}×" for k in ks)])
        ratios += [output_field(t, path, "cpu") / output_field(t, path, "wall")
                   for t in output_field(res, path, "per_step").values()]
    # process CPU time equal to wall time: each configuration ran on one core (the other's load elsewhere)
    cores = "one core" if float(np.median(ratios)) < 1.1 else f"CPU time {float(np.median(ratios)):.1f}× wall time"
    size = ("at the Fermi size" if (args["n"], args["d"], args["classes"], args["inducing"], args["batch"])
            == (408, 6, 3, 20, 50) else f"at N = {args['n']}, d = {args['d']}, M = {args['inducing']}")
    table = make_table(["method", "one model, ms per step", *(f"K = {k}" for k in ks)], rows, "lr" + "r" * len(ks),
                       caption=f"Speed-up K × (one model's step) / (the batched step) {size}, {cores}:")
    command = run_command("lab/studies/bench_batched.py", output_field(raw, path, "args"),
                          vars(_parser().parse_args([])), f"--json {path}")
    return make_record("Many models at once", command, commit,
                       [table], source=f"the run's output {path}", workflow=WORKFLOW)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=408, help="training points per model (default 408, a 4FGL split)")
    p.add_argument("--d", type=int, default=6)
    p.add_argument("--classes", type=int, default=3)
    p.add_argument("--inducing", type=int, default=20)
    p.add_argument("--batch", type=int, default=50)
    p.add_argument("--likelihood", default="robustmax", help="as the paper's Fermi experiment (default robustmax)")
    p.add_argument("--epochs", type=int, default=750, help="epochs of a unit, for units per second (default 750)")
    p.add_argument("--ks", type=int, nargs="+", default=[1, 4, 16, 64], help="models per batch")
    p.add_argument("--methods", nargs="+", default=list(METHODS), choices=list(METHODS))
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--end-to-end", type=int, default=0, metavar="E", help="also fit 16 4FGL splits for E epochs both ways")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json")
    p.add_argument("--breakdown", action="store_true", help="only time ELBO, ELBO + gradient and step per K (CPU)")
    p.add_argument("--record", help="write the results page's record to this file from the run's --json (or --summarize)")
    p.add_argument("--summarize", metavar="JSON", help="run nothing: the record from this kept output (with --record)")
    p.add_argument("--commit", help="with --summarize: the commit of an output that names none")
    return p


def main(argv: list[str] | None = None) -> int:
    p = _parser()
    args = p.parse_args(argv)
    if args.record and not (args.summarize or args.json) or args.summarize and not args.record:
        p.error("--record needs the run's --json or a kept output (--summarize JSON); --summarize needs --record")
    if args.commit and not args.summarize:
        p.error("--commit names the commit of a kept output (--summarize); a run records its own")
    if args.summarize:
        record_from_kept(p, args.record, lambda: results_record(args.summarize, args.commit))
        return 0
    commit = run_commit(p, bool(args.record))
    if args.breakdown:
        if args.record:
            p.error("--breakdown writes no results record; leave --record out")
        record = {"args": vars(args), "commit": commit, "environment": environment(),
                  "breakdown": {method: breakdown(method, args) for method in args.methods}}
        if args.json:
            write_json_atomic(args.json, record)
        return 0
    results = []
    for method in args.methods:
        print(f"timing {method} ...", flush=True)
        results.append(time_steps(method, args))
    text = table(results, args)
    print(text)
    record: dict[str, Any] = {"args": vars(args), "commit": commit, "environment": environment(),
                              "results": results, "table": text}
    if args.end_to_end:
        print(f"end to end, 16 splits of 4FGL, {args.end_to_end} epochs:", flush=True)
        record["end_to_end"] = end_to_end(args)
    if args.json:
        write_json_atomic(args.json, record)
    if args.record:
        from result_records import outcome, write_record

        print(outcome(write_record(args.record, results_record(args.json))))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    sys.exit(main())

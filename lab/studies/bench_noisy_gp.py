#!/usr/bin/env python
"""Speed of gpal's noisy-input GP classifiers: one table from one run, optionally JSON.

(a) seconds per training step of gpal MGP against a stock GPflow SVGP with
    ``MultiClass(RobustMax)``, same data, inducing points, kernels (SE-ARD per
    latent function, whitened full-covariance q(u)), ε, batch and Adam settings;
(b) NIMGP, NIMGP-NN and NIMGP-FO step time relative to gpal MGP;
(c) prediction throughput in sources per second through ``NoisyGPClassifier.predict_proba``
    with 300 input-noise samples;
(d) with ``--mnist-sized``: seconds per epoch on a synthetic problem the size of MNIST
    (N = 60000, d = 784, C = 10, M = 100, batch 200, input-noise level learned as in
    the paper's sec. 5.4) against the paper's Tesla P100 figures (Table 8).

Step times are medians over ``--repeats`` blocks of ``--steps`` steps; the methods'
blocks are interleaved so that load from other processes hits all of them alike.
Both wall-clock and process CPU time are recorded: on a shared machine the CPU
time (all threads of this process) is the steadier measure of the work a step
does, the wall time what a user waits.  Every step fetches its loss to the host,
as the training loop does.

    .venv/bin/python lab/studies/bench_noisy_gp.py --json bench.json
    .venv/bin/python lab/studies/bench_noisy_gp.py --mnist-sized --json bench_gpu.json   # on a GPU
    python lab/studies/bench_noisy_gp.py --repeats 7 --json lab/studies/records/noisy_gp \
        --record lab/pages/records/results/timings.methods.json       # kept as noisy_gp/run.json; the record
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from typing import Any, Callable

import numpy as np

from gpal.files import write_json_atomic
from shared import (
    METHODS, environment, kept_output, output_field, output_files, outputs_commit, read_outputs, record_from_kept,
    run_command, run_commit, synthetic_problem)

# Targets of the performance issue and the paper's measurements (Table 8, MNIST, Tesla P100).
RATIO_TARGETS = {"NIMGP": 1.5, "NIMGP-NN": 1.3, "NIMGP-FO": 2.0}
PAPER_RATIOS = {"NIMGP": 11.93 / 7.19, "NIMGP-NN": 7.62 / 7.19, "NIMGP-FO": 24.01 / 7.19}
PAPER_P100_EPOCH_SECONDS = {"MGP": 7.19, "NIMGP": 11.93, "NIMGP-NN": 7.62, "NIMGP-FO": 24.01}
GPFLOW_RATIO_TARGET = 1.1
MNIST_SPEEDUP_TARGET = 10.0
# The paper's MNIST set-up (sec. 5.4): 60000 training points, 784 pixels, 10 classes, batch 200.
MNIST_SHAPE = {"n": 60000, "d": 784, "classes": 10, "inducing": 100, "batch": 200}
#: The study's declaration, which the results page's record (`results_record`) names.
WORKFLOW = "lab/studies/noisy_gp.yaml"


# ------------------------------------------------------------------ step makers
def gpal_step(method: str, X, X_var, y, n_classes, num_inducing, args, noise_variance="known", hidden=(50,)):
    """(step() -> loss, model) for one gpal method; each call takes the next minibatch."""
    import tensorflow as tf

    from gpal.models import build_model
    from gpal.training.svi import TrainData, Trainer

    model = build_model(
        X, y, num_classes=n_classes, input_noise=METHODS[method], noise_variance=noise_variance,
        likelihood="robustmax", num_inducing=num_inducing, hidden_sizes=hidden, seed=args.seed,  # as GPflow's below
    )
    trainer = Trainer(model, seed=args.seed)
    trainer.load(TrainData.from_arrays(X, X_var, y), learning_rate=0.01)
    step = trainer.step
    batches = _batches(len(y), args.batch, args.seed)
    counter = iter(range(10**12))

    def run() -> float:
        k = next(counter)
        return float(step(batches(k), tf.constant(k, dtype=tf.int64)))

    return run, model


def gpflow_step(X, y, n_classes, Z, args):
    """step() -> loss for GPflow's own SVGP + MultiClass(RobustMax), set up like gpal's MGP."""
    import gpflow
    import tensorflow as tf
    import tf_keras

    d = X.shape[1]
    kernel = gpflow.kernels.SeparateIndependent(
        [gpflow.kernels.SquaredExponential(lengthscales=np.ones(d)) for _ in range(n_classes)]
    )
    inducing = gpflow.inducing_variables.SeparateIndependentInducingVariables(
        [gpflow.inducing_variables.InducingPoints(Z[c].copy()) for c in range(n_classes)]
    )
    likelihood = gpflow.likelihoods.MultiClass(n_classes, invlink=gpflow.likelihoods.RobustMax(n_classes, epsilon=1e-3))
    model = gpflow.models.SVGP(kernel, likelihood, inducing, num_latent_gps=n_classes, num_data=len(y), whiten=True)
    Xt = tf.constant(X, dtype=tf.float64)
    Yt = tf.constant(y[:, None], dtype=tf.float64)
    optimizer = tf_keras.optimizers.Adam(learning_rate=0.01)
    variables = model.trainable_variables

    @tf.function(input_signature=[tf.TensorSpec([None], tf.int64)])
    def step(idx):
        with tf.GradientTape(watch_accessed_variables=False) as tape:
            tape.watch(variables)
            loss = model.training_loss((tf.gather(Xt, idx), tf.gather(Yt, idx)))
        optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
        return loss

    batches = _batches(len(y), args.batch, args.seed)
    counter = iter(range(10**12))
    return lambda: float(step(batches(next(counter))))


def _batches(n: int, batch: int, seed: int) -> Callable[[int], Any]:
    """Minibatch k of a fresh permutation per epoch (same sequence for every method)."""
    import tensorflow as tf

    rng = np.random.default_rng(seed)
    per_epoch = math.ceil(n / batch)
    cache: dict[int, np.ndarray] = {}

    def get(k: int):
        epoch, j = divmod(k, per_epoch)
        if epoch not in cache:
            cache.clear()
            cache[epoch] = rng.permutation(n)
        return tf.constant(cache[epoch][j * batch : (j + 1) * batch], dtype=tf.int64)

    return get


def time_interleaved(
    steps: dict[str, Callable[[], float]], n_steps: int, repeats: int, warmup: int
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """(wall, cpu) seconds per step, one value per repeat block, blocks interleaved across methods."""
    for run in steps.values():
        for _ in range(warmup):
            run()
    wall: dict[str, list[float]] = {name: [] for name in steps}
    cpu: dict[str, list[float]] = {name: [] for name in steps}
    for _ in range(repeats):
        for name, run in steps.items():
            t0, c0 = time.perf_counter(), time.process_time()
            for _ in range(n_steps):
                run()
            wall[name].append((time.perf_counter() - t0) / n_steps)
            cpu[name].append((time.process_time() - c0) / n_steps)
    return wall, cpu


def time_prediction(method: str, X, X_var, y, n_classes, num_inducing, n_pred: int, n_samples: int, args) -> float:
    """Sources per second of predict_proba (after one warm-up call) for a briefly fitted classifier."""
    from gpal import NoisyGPClassifier

    clf = NoisyGPClassifier(
        input_noise=METHODS[method], num_inducing=num_inducing, epochs=1, batch_size=args.batch,
        n_samples=n_samples, random_state=args.seed, progress=False,
    )
    clf.fit(X, y, X_var=X_var)
    rng = np.random.default_rng(args.seed + 1)
    rows = rng.integers(0, len(y), n_pred)
    clf.predict_proba(X[rows[:10]], X_var=X_var[rows[:10]])
    best = math.inf
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        clf.predict_proba(X[rows], X_var=X_var[rows])
        best = min(best, time.perf_counter() - t0)
    return n_pred / best


# ------------------------------------------------------------------------ runs
def small_problem(args) -> dict[str, Any]:
    X, X_var, y = synthetic_problem(args.n, args.d, args.classes, args.seed)
    steps, models = {}, {}
    for method in METHODS:
        steps[method], models[method] = gpal_step(method, X, X_var, y, args.classes, args.inducing, args)
    Z = models["MGP"].gp.Z.numpy()
    steps["GPflow SVGP"] = gpflow_step(X, y, args.classes, Z, args)
    wall, cpu = time_interleaved(steps, args.steps, args.repeats, args.warmup)
    throughput = {
        m: time_prediction(m, X, X_var, y, args.classes, args.inducing, args.predict_n, 300, args) for m in METHODS
    }
    return {
        "seconds_per_step": wall,
        "cpu_seconds_per_step": cpu,
        "median_seconds_per_step": {k: float(np.median(v)) for k, v in wall.items()},
        "median_cpu_seconds_per_step": {k: float(np.median(v)) for k, v in cpu.items()},
        "predict_sources_per_second": throughput,
    }


def mnist_sized(args) -> dict[str, Any]:
    """One timed epoch (or ``--mnist-steps`` steps, extrapolated) per method on MNIST-sized synthetic data."""
    n, d, C, M, batch = (MNIST_SHAPE[k] for k in ("n", "d", "classes", "inducing", "batch"))
    X, X_var, y = synthetic_problem(n, d, C, args.seed)
    X_var[:] = 0.0  # the paper learned one input-noise level per feature on MNIST
    per_epoch = math.ceil(n / batch)
    n_steps = min(args.mnist_steps or per_epoch, per_epoch)
    sub = argparse.Namespace(**{**vars(args), "batch": batch})
    result = {}
    for method in METHODS:
        hidden = (250, 250) if method == "NIMGP-NN" else (50,)
        run, _ = gpal_step(method, X, X_var, y, C, M, sub, noise_variance="learned", hidden=hidden)
        for _ in range(args.warmup):
            run()
        t0 = time.perf_counter()
        for _ in range(n_steps):
            run()
        seconds = (time.perf_counter() - t0) / n_steps * per_epoch
        result[method] = {"seconds_per_epoch": seconds, "timed_steps": n_steps, "steps_per_epoch": per_epoch}
    return result


# ----------------------------------------------------------------------- table
def table(res: dict[str, Any], args) -> str:
    med = res["small"]["median_seconds_per_step"]
    cpu = res["small"]["median_cpu_seconds_per_step"]
    spread = {k: (min(v), max(v)) for k, v in res["small"]["seconds_per_step"].items()}
    rows = [("quantity", "measured: wall (cpu)", "target", "paper", "ok")]

    def ok(flag: bool) -> str:
        return "yes" if flag else "NO"

    for name in ("GPflow SVGP", *METHODS):
        lo, hi = spread[name]
        rows.append(
            (
                f"{name}: ms / step",
                f"{1e3 * med[name]:.2f} (cpu {1e3 * cpu[name]:.2f}); wall range {1e3 * lo:.2f}-{1e3 * hi:.2f}",
                "", "", "",
            )
        )

    def ratio(a: str, b: str) -> tuple[float, str]:
        r = med[a] / med[b]
        return r, f"{r:.2f} ({cpu[a] / cpu[b]:.2f})"

    r, text = ratio("MGP", "GPflow SVGP")
    rows.append(("MGP / GPflow SVGP step time", text, f"<= {GPFLOW_RATIO_TARGET}", "", ok(r <= GPFLOW_RATIO_TARGET)))
    for m, target in RATIO_TARGETS.items():
        r, text = ratio(m, "MGP")
        rows.append((f"{m} / MGP step time", text, f"<= {target}", f"{PAPER_RATIOS[m]:.2f}", ok(r <= target)))
    for m, rate in res["small"]["predict_sources_per_second"].items():
        how = "300 input samples" if METHODS[m] in ("latent", "amortized") else "deterministic"
        rows.append((f"{m}: predict sources / s ({how})", f"{rate:,.0f}", "", "", ""))
    if "mnist" in res:
        for m, e in res["mnist"].items():
            paper = PAPER_P100_EPOCH_SECONDS[m]
            speedup = paper / e["seconds_per_epoch"]
            note = "" if e["timed_steps"] == e["steps_per_epoch"] else f" ({e['timed_steps']} steps, extrapolated)"
            rows.append(
                (
                    f"MNIST-sized {m}: s / epoch{note}",
                    f"{e['seconds_per_epoch']:.2f} ({speedup:.1f}x P100)",
                    f">= {MNIST_SPEEDUP_TARGET:.0f}x",
                    f"{paper}",
                    ok(speedup >= MNIST_SPEEDUP_TARGET),
                )
            )
    widths = [max(len(r[i]) for r in rows) for i in range(5)]
    lines = ["| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |" for r in rows]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    env = res["environment"]
    head = (
        f"gpal noisy-input GP benchmark on {env['device']}, TF {env['tensorflow']}, GPflow {env['gpflow']}; "
        f"problem N={args.n}, d={args.d}, C={args.classes}, M={args.inducing}, batch={args.batch}; "
        f"{args.repeats} x {args.steps} steps per method, tf.function without XLA; "
        f"medians over blocks, 'ok' judged on wall time"
    )
    return head + "\n\n" + "\n".join(lines)


def results_record(path: str, commit: str | None = None) -> dict[str, Any]:
    """The results page's record from a run's JSON at ``path``: ms per step of GPflow's SVGP and MGP, the step-time
    ratios against their targets and the paper's, and the prediction rates of NIMGP and MGP (wall, CPU in brackets)."""
    from result_records import make_record, make_table

    (raw,) = read_outputs([path])
    commit = outputs_commit([raw], [path], commit)
    wall = output_field(raw, path, "small", "median_seconds_per_step")
    cpu = output_field(raw, path, "small", "median_cpu_seconds_per_step")
    rates = output_field(raw, path, "small", "predict_sources_per_second")
    a = {k: output_field(raw, path, "args", k) for k in ("n", "d", "classes", "inducing", "batch", "repeats")}
    load = output_field(raw, path, "environment", "load_average_at_start")
    for name in ("GPflow SVGP", *METHODS):
        if name not in wall or name not in cpu:
            raise ValueError(f"{path}: no step time of {name!r}; expected every method and GPflow's SVGP")
    for name in ("NIMGP", "MGP"):
        if name not in rates:
            raise ValueError(f"{path}: no prediction rate of {name!r}")

    def ratio(a_: str, b: str) -> str:
        return f"{wall[a_] / wall[b]:.2f} ({cpu[a_] / cpu[b]:.2f})"

    rows = [[f"{name}, ms per step", f"{1e3 * wall[name]:.2f} ({1e3 * cpu[name]:.2f})", "", ""]
            for name in ("GPflow SVGP", "MGP")]
    rows.append(["MGP / GPflow SVGP", ratio("MGP", "GPflow SVGP"), f"≤ {GPFLOW_RATIO_TARGET}", ""])
    rows += [[f"{m} / MGP", ratio(m, "MGP"), f"≤ {RATIO_TARGETS[m]}", f"{PAPER_RATIOS[m]:.2f}"] for m in RATIO_TARGETS]
    rows += [["NIMGP prediction, sources per second (300 input draws)", f"{rates['NIMGP']:,.0f}", "", ""],
             ["MGP prediction, sources per second (deterministic)", f"{rates['MGP']:,.0f}", "", ""]]
    caption = (f"The paper's Fermi-sized problem (N = {a['n']}, d = {a['d']}, C = {a['classes']}, M = {a['inducing']}, "
               f"batch {a['batch']}, robust-max) against a stock GPflow `SVGP` set up identically; median over "
               f"{a['repeats']} interleaved blocks of steps (load average {load[0]:.1f} at the start):")
    table = make_table(["quantity", "measured: wall (CPU)", "target", "paper"], rows, "llll", caption=caption)
    command = run_command("lab/studies/bench_noisy_gp.py", output_field(raw, path, "args"),
                          vars(_parser().parse_args([])), f"--json {path}")
    return make_record("Training step per method", command, commit,
                       [table], source=f"the run's output {path}", workflow=WORKFLOW)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=408, help="training points (default 408, a 4FGL training split)")
    p.add_argument("--d", type=int, default=6, help="features (default 6)")
    p.add_argument("--classes", type=int, default=3, help="classes (default 3)")
    p.add_argument("--inducing", type=int, default=20, help="inducing points M (default 20 = 5%% of 408)")
    p.add_argument("--batch", type=int, default=50, help="minibatch size (default 50)")
    p.add_argument("--steps", type=int, default=200, help="timed steps per block (default 200)")
    p.add_argument("--repeats", type=int, default=5, help="timed blocks per method (default 5)")
    p.add_argument("--warmup", type=int, default=5, help="untimed steps first, including tracing (default 5)")
    p.add_argument("--predict-n", type=int, default=2000, help="sources per timed prediction call (default 2000)")
    p.add_argument("--mnist-sized", action="store_true", help="also time epochs on an MNIST-sized problem (for a GPU)")
    p.add_argument("--mnist-steps", type=int, default=0, help="time only this many MNIST steps and extrapolate")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", help="write all raw timings and the table to this JSON file (a folder: run.json in it)")
    p.add_argument("--record", help="write the results page's record to this file from the run's --json (or --summarize)")
    p.add_argument("--summarize", metavar="JSON", help="run nothing: the record from this kept output (with --record)")
    return p


def main(argv: list[str] | None = None) -> int:
    p = _parser()
    args = p.parse_args(argv)
    if args.record and not (args.summarize or args.json) or args.summarize and not args.record:
        p.error("--record needs the run's --json or a kept output (--summarize JSON); --summarize needs --record")
    args.json = kept_output(args.json, "run.json")
    if args.summarize:
        def kept() -> dict[str, Any]:
            files = output_files([args.summarize])
            if len(files) != 1:
                raise ValueError(f"{args.summarize} holds {len(files)} runs; the record is made from one")
            return results_record(files[0])

        record_from_kept(p, args.record, kept)
        return 0
    commit = run_commit(p, bool(args.record))
    for name in ("n", "d", "classes", "inducing", "batch", "steps", "repeats", "predict_n"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be >= 1")
    if args.classes < 2:
        p.error("--classes must be >= 2")

    res: dict[str, Any] = {"commit": commit, "environment": environment(), "args": vars(args)}
    res["small"] = small_problem(args)
    if args.mnist_sized:
        res["mnist"] = mnist_sized(args)
    res["table"] = table(res, args)
    print(res["table"])
    if args.json:
        write_json_atomic(args.json, res, allow_nan=True)
    if args.record:
        from result_records import outcome, write_record

        print(outcome(write_record(args.record, results_record(args.json))))
    return 0


if __name__ == "__main__":
    sys.exit(main())

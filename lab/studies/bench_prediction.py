#!/usr/bin/env python
"""Prediction and warm-refit costs of ``NoisyGPClassifier`` (issue 12): one table, optionally JSON.

(a) the GP part of NIMGP prediction: sources / s of the latent marginals at S input draws per
    source (draws folded into one batch) in float64 and in float32 (what sampled inputs use), its
    matrix-product flops, and their rate against ``tf.matmul`` of the same precision timed in the
    same run, both of the prediction's own shape and square (the machine's GEMM peak);
(b) ``predict_proba`` end to end, sources / s, per likelihood: the likelihood's predictive
    integral over the S x n marginals is timed apart from the GP part;
(c) the fixed cost of a ``predict_proba`` call: 1 row through ``predict_proba`` against the
    compiled function alone, and the first call after a warm refit (tracing, if any);
(d) a warm-started refit of ``--refit-epochs`` epochs on ``--refit-n`` rows: wall time, the
    time its optimisation steps take alone, and the difference (fixed overhead).

Every timing is the median of ``--repeats`` runs; the variants of (a) are interleaved.  Run it
against another checkout (``PYTHONPATH=/path/to/old``) to compare: it only uses APIs that
existed before issue 12, falling back to ``LatentGPs.marginals`` where ``predictive_marginals``
is missing.

    python lab/studies/bench_prediction.py --json runs/bench/bench_prediction.json
    python lab/studies/bench_prediction.py --runs 2 --json lab/studies/records/prediction   # d6_run<k>.json
    python lab/studies/bench_prediction.py --d 16 --likelihoods softmax --runs 2 --json lab/studies/records/prediction \
        --record lab/pages/records/results/timings.prediction.json    # the record from every run kept there
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from pathlib import Path
from typing import Any, Callable

import numpy as np

from gpal.files import write_json_atomic
from shared import (
    median_seconds, output_field, output_files, outputs_commit, read_outputs, record_from_kept, run_command,
    run_commit, runs_in_children, synthetic_problem)

#: The study's declaration, which the results page's record (`results_record`) names, and its script.
WORKFLOW = "lab/studies/prediction.yaml"
SCRIPT = "lab/studies/bench_prediction.py"
#: The main job's features: the record names the runs of this many features as the main job's.
MAIN_JOB_FEATURES = 16


def fitted(args, likelihood: str, n: int, epochs: int, warm_start: bool = False):
    from gpal import NoisyGPClassifier

    X, X_var, y = synthetic_problem(max(n, args.train_n), args.d, args.classes, args.seed)
    clf = NoisyGPClassifier(
        input_noise="latent", likelihood=likelihood, num_inducing=args.inducing, epochs=epochs, batch_size=50,
        n_samples=args.samples, random_state=args.seed, warm_start=warm_start,
    )
    return clf.fit(X[:n], y[:n], X_var=X_var[:n]), (X, X_var, y)


def gp_part(args) -> dict[str, Any]:
    """(a): the latent marginals at rows x S inputs, against GEMMs of the same run in both precisions."""
    import inspect

    import tensorflow as tf

    clf, _ = fitted(args, "softmax", args.train_n, 5)
    gp = clf.model_.gp
    L, M, d, S, rows = gp.num_latent, gp.num_inducing, args.d, args.samples, args.gp_rows
    inputs = tf.constant(np.random.default_rng(args.seed).normal(size=(rows * S, d)))
    variants = {"solve (marginals), float64": gp.marginals}
    factored = getattr(gp, "predictive_marginals", None)
    if factored is not None:
        variants["factored (predictive_marginals), float64"] = factored
        if "dtype" in inspect.signature(factored).parameters:
            variants["factored, float32 (the sampled-input path)"] = lambda a: factored(a, tf.float32)

    def compile_variances(f: Callable) -> Callable:
        return tf.function(lambda a: f(a)[1], autograph=False)

    compiled = {k: compile_variances(f) for k, f in variants.items()}
    rng = np.random.default_rng(1)
    matmul = tf.function(lambda a, b: tf.matmul(a, b), autograph=False)
    exp = tf.function(tf.exp, autograph=False)
    calls = {k: (lambda f=f: f(inputs).numpy()) for k, f in compiled.items()}
    gemms = {}
    for dtype in (tf.float64, tf.float32):
        # The prediction's products: per latent, (rows S, M) x (M, M); and a square GEMM, the machine's peak.
        A = tf.constant(rng.normal(size=(rows * S, M)), dtype)
        B = tf.constant(rng.normal(size=(M, M)), dtype)
        big = tf.constant(rng.normal(size=(args.square, args.square)), dtype)
        gemms[dtype.name] = {"prediction shape": 2 * L * rows * S * M * M, "square": 2 * args.square**3}
        calls[f"GEMM {dtype.name}, prediction shape"] = lambda A=A, B=B: [matmul(A, B).numpy() for _ in range(L)]
        calls[f"GEMM {dtype.name}, square"] = lambda big=big: matmul(big, big).numpy()
        calls[f"exp {dtype.name}, K_xz shape"] = lambda A=A: [exp(A).numpy() for _ in range(L)]
    times = {k: [] for k in calls}
    for fn in calls.values():
        fn()
    for _ in range(args.repeats):  # interleaved: load from other processes hits every variant alike
        for k, fn in calls.items():
            t0 = time.perf_counter()
            fn()
            times[k].append(time.perf_counter() - t0)
    med = {k: float(np.median(v)) for k, v in times.items()}
    # Matrix-product flops per prediction input and latent: the exponent [x, x^2, 1] . z_a, 2 M (2 d + 1),
    # and a = W k_zx, 2 M^2.
    flops = rows * S * L * (2 * M * (2 * d + 1) + 2 * M * M)
    rates = {dt: {shape: n / med[f"GEMM {dt}, {shape}"] for shape, n in shapes.items()} for dt, shapes in gemms.items()}
    out = {"seconds": med, "all_seconds": times, "flops": flops, "exp_per_call": rows * S * L * M,
           "gemm_flops_per_s": rates,
           "exp_per_s": {dt: L * M * rows * S / med[f"exp {dt}, K_xz shape"] for dt in gemms},
           "sources_per_s": {}, "flops_per_s": {}, "fraction_of_gemm": {}}
    for k in variants:
        dt = "float32" if "float32" in k else "float64"
        out["sources_per_s"][k] = rows / med[k]
        out["flops_per_s"][k] = flops / med[k]
        out["fraction_of_gemm"][k] = {shape: flops / med[k] / r for shape, r in rates[dt].items()}
    return out


def end_to_end(args, likelihood: str) -> dict[str, Any]:
    """(b) and (c) for one likelihood."""
    import tensorflow as tf

    clf, (X, X_var, _) = fitted(args, likelihood, args.train_n, 5)
    rows = np.random.default_rng(args.seed + 1).integers(0, len(X), args.predict_n)
    total = median_seconds(lambda: clf.predict_proba(X[rows], X_var[rows]), args.repeats)
    model = clf.model_
    inputs = tf.constant(np.random.default_rng(0).normal(size=(args.samples * 100, args.d)))
    Fmu, Fvar = tf.function(lambda a: model.gp.marginals(a), autograph=False)(inputs)
    if hasattr(model.likelihood, "predict_proba_per_draw"):  # the noisy-input path: (S, 100, L) marginals
        shape = [args.samples, 100, -1]
        Fmu, Fvar = tf.reshape(Fmu, shape), tf.reshape(Fvar, shape)
        seed = tf.constant([args.seed, -1], tf.int64)
        lik = tf.function(lambda m, v: model.likelihood.predict_proba_per_draw(m, v, seed), autograph=False)
    else:
        lik = tf.function(lambda m, v: model.likelihood.predict_proba(m, v), autograph=False)
    lik_seconds = median_seconds(lambda: lik(Fmu, Fvar).numpy(), max(1, args.repeats // 2))
    one = median_seconds(lambda: clf.predict_proba(X[:1], X_var[:1]), args.repeats)
    fn = next(iter(clf._session.compiled.values())) if hasattr(clf, "_session") else clf._predict_fn
    seed = tf.constant([args.seed, -1], tf.int64)
    a, b = clf.standardizer_.transform_arrays(X[:1], X_var[:1])
    bare = median_seconds(lambda: fn(a, b, seed).numpy(), args.repeats)
    return {
        "predict_sources_per_s": args.predict_n / total,
        "likelihood_sources_per_s": 100 / lik_seconds,
        "one_row_seconds": one,
        "one_row_compiled_seconds": bare,
        "per_call_overhead_seconds": one - bare,
    }


def refit(args) -> dict[str, Any]:
    """(c) first predict after a warm refit and (d) the warm refit's fixed overhead."""
    import tensorflow as tf

    from gpal.training.svi import TrainData, Trainer

    n0, n = args.refit_n - args.refit_growth * args.refits, args.refit_n
    clf, (X, X_var, y) = fitted(args, "softmax", n0, args.refit_epochs, warm_start=True)
    clf.predict_proba(X[:5], X_var[:5])
    walls, first_predicts, later_predicts, sizes = [], [], [], []
    for k in range(1, args.refits + 1):
        m = n0 + k * args.refit_growth
        t0 = time.perf_counter()
        clf.fit(X[:m], y[:m], X_var=X_var[:m])
        walls.append(time.perf_counter() - t0)
        sizes.append(m)
        for store in (first_predicts, later_predicts):
            t0 = time.perf_counter()
            clf.predict_proba(X[:5], X_var[:5])
            store.append(time.perf_counter() - t0)
    # The steps alone: the same model, a step compiled once and timed over one refit's worth of minibatches.
    Z, Z_var = clf.standardizer_.transform_arrays(X[:n], X_var[:n])
    trainer = Trainer(clf.model_, seed=0)
    trainer.load(TrainData.from_arrays(Z, Z_var, y[:n]), learning_rate=0.01)
    step = trainer.step
    batches = [tf.constant(b, tf.int64) for b in np.array_split(np.arange(n), -(-n // 50))]
    per_refit = len(batches) * args.refit_epochs

    def steps() -> None:
        for e in range(args.refit_epochs):
            for b in batches:
                float(step(b, tf.constant(e, tf.int64)))

    step_seconds = median_seconds(steps, args.repeats)
    wall = float(np.median(walls[len(walls) // 2 :]))  # refits near the final size
    return {
        "refit_seconds": walls, "rows": sizes, "median_refit_seconds": wall, "steps_per_refit": per_refit,
        "steps_seconds": step_seconds, "overhead_seconds": wall - step_seconds,
        "overhead_fraction": (wall - step_seconds) / wall,
        "first_predict_after_refit_seconds": float(np.median(first_predicts)),
        "second_predict_after_refit_seconds": float(np.median(later_predicts)),
    }


def table(res: dict[str, Any]) -> str:
    g = res["gp"]
    lines = ["| quantity | value |", "|---|---:|"]
    for k, v in g["sources_per_s"].items():
        lines.append(f"| (a) GP part, {k}: sources / s | {v:,.0f} |")
        lines.append(f"| (a) GP part, {k}: matrix-product GFLOP / s | {g['flops_per_s'][k] / 1e9:.1f} |")
        f = g["fraction_of_gemm"][k]
        lines.append(f"| (a) GP part, {k}: / GEMM (prediction shape; square) | {f['prediction shape']:.2f}; {f['square']:.2f} |")
    for dt, shapes in g["gemm_flops_per_s"].items():
        for k, v in shapes.items():
            lines.append(f"| (a) {dt} tf.matmul, {k}: GFLOP / s | {v / 1e9:.1f} |")
        lines.append(f"| (a) {dt} tf.exp over an array the shape of K_xz: M exp / s | {g['exp_per_s'][dt] / 1e6:.0f} |")
    for lik, r in res["end_to_end"].items():
        lines.append(f"| (b) predict_proba, {lik}: sources / s | {r['predict_sources_per_s']:,.0f} |")
        lines.append(f"| (b) its likelihood part alone, {lik}: sources / s | {r['likelihood_sources_per_s']:,.0f} |")
        lines.append(f"| (c) predict_proba of 1 row, {lik}: ms (compiled function alone) | "
                     f"{1e3 * r['one_row_seconds']:.1f} ({1e3 * r['one_row_compiled_seconds']:.1f}) |")
        lines.append(f"| (c) per-call overhead, {lik}: ms | {1e3 * r['per_call_overhead_seconds']:.1f} |")
    r = res["refit"]
    lines += [
        f"| (c) first / second predict_proba (5 rows) after a warm refit: ms | "
        f"{1e3 * r['first_predict_after_refit_seconds']:.0f} / {1e3 * r['second_predict_after_refit_seconds']:.0f} |",
        f"| (d) warm refit, {r['steps_per_refit']} steps: s | {r['median_refit_seconds']:.3f} |",
        f"| (d) its steps alone: s | {r['steps_seconds']:.3f} |",
        f"| (d) fixed overhead: s (fraction of the refit) | {r['overhead_seconds']:.3f} ({r['overhead_fraction']:.0%}) |",
    ]
    return "\n".join(lines)


def _rate(value: float) -> str:
    """Sources per second to two significant figures, thousands apart by a space: the runs differ in the second."""
    return f"{float(f'{value:.2g}'):,.0f}".replace(",", " ")


def results_record(paths: list[str], commit: str | None = None) -> dict[str, Any]:
    """The results page's record from runs' JSON: softmax ``predict_proba`` sources per second end to end, a row per
    number of features, its range over the runs of that number (one run: its rate)."""
    from result_records import make_record, make_table

    outputs = read_outputs(paths)
    commit = outputs_commit(outputs, paths, commit)
    rates: dict[int, list[float]] = {}
    fixed = None
    for raw, path in zip(outputs, paths):
        settings = output_field(raw, path, "settings")
        shape = tuple(output_field(settings, path, k) for k in ("inducing", "classes", "samples"))
        if fixed not in (None, shape):
            raise ValueError(f"{path}: M, C and draws {shape}, the other runs {fixed}: one record is one model")
        fixed = shape
        softmax = output_field(raw, path, "end_to_end", "softmax")
        rates.setdefault(int(output_field(settings, path, "d")), []).append(
            float(output_field(softmax, path, "predict_sources_per_s")))
    inducing, classes, samples = fixed
    rows = [[f"d = {d}" + (" (the main job's)" if d == MAIN_JOB_FEATURES else ""),
             "-".join(dict.fromkeys([_rate(min(r)), _rate(max(r))]))] for d, r in sorted(rates.items())]
    loads = [x for raw, path in zip(outputs, paths) for x in (output_field(raw, path, "machine", "load_average_start")[0],
                                                              output_field(raw, path, "machine", "load_average_end")[0])]
    table = make_table(["features", "sources per second"], rows, "lr", caption=(
        f"NIMGP (M = {inducing}, C = {classes}, {samples} input draws per source, softmax), `predict_proba` end to end "
        f"on one process, {f'{len(paths)} runs' if len(paths) > 1 else 'one run'} (load average "
        f"{'-'.join(dict.fromkeys([f'{min(loads):.1f}', f'{max(loads):.1f}']))} at the runs' starts and ends):"))
    defaults = {k: v for k, v in vars(_parser().parse_args([])).items() if k != "runs"}
    folders = {str(Path(p).parent) for p in paths}
    by_d = {d: [Path(p).name for raw, p in zip(outputs, paths) if raw["settings"]["d"] == d] for d in sorted(rates)}
    if len(folders) == 1 and all(names == [f"d{d}_run{k}.json" for k in range(1, len(names) + 1)]
                                 for d, names in by_d.items()):
        folder = folders.pop()  # made by --runs into the study's folder: a line per number of features
        first = {d: next(raw for raw in outputs if raw["settings"]["d"] == d) for d in by_d}
        command = "\n".join(run_command(SCRIPT, first[d]["settings"], defaults, *(
            [f"--runs {len(names)}"] if len(names) > 1 else []), f"--json {folder}") for d, names in by_d.items())
    else:
        runs = [run_command(SCRIPT, raw["settings"], defaults, f"--json {path}") for raw, path in zip(outputs, paths)]
        command = "\n".join(runs + ([f"python {SCRIPT} --summarize {' '.join(map(str, paths))}"] if len(paths) > 1
                                     else []))
    return make_record("Prediction", command, commit, [table], source=f"the runs' outputs {', '.join(map(str, paths))}",
                       workflow=WORKFLOW)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--d", type=int, default=6)
    p.add_argument("--classes", type=int, default=3)
    p.add_argument("--inducing", type=int, default=50)
    p.add_argument("--samples", type=int, default=300, help="input draws per source (n_samples)")
    p.add_argument("--train-n", type=int, default=408)
    p.add_argument("--gp-rows", type=int, default=100, help="sources per call in (a)")
    p.add_argument("--predict-n", type=int, default=2000, help="sources per predict_proba call in (b)")
    p.add_argument("--square", type=int, default=1500, help="size of the square GEMM in (a)")
    p.add_argument("--likelihoods", default="softmax,robustmax")
    p.add_argument("--refit-n", type=int, default=200)
    p.add_argument("--refit-epochs", type=int, default=20)
    p.add_argument("--refit-growth", type=int, default=1, help="rows added per refit")
    p.add_argument("--refits", type=int, default=8)
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", default=None)
    p.add_argument("--record", help="write the results page's record to this file from the run's --json or --summarize's")
    p.add_argument("--summarize", nargs="+", metavar="JSON", help="run nothing: the record from these kept outputs "
                   "or folders (runs of d = 6 and of the main job's d = 16), with --record")
    p.add_argument("--runs", type=int, default=1, help="with --json FOLDER: this many runs, each a fresh process, kept "
                   "as FOLDER/d<d>_run<k>.json; the record (--record) is made from every run in the folder")
    return p


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = _parser()
    args = p.parse_args(argv)
    if args.record and not (args.summarize or args.json) or args.summarize and not args.record:
        p.error("--record needs the run's --json or kept outputs (--summarize JSON ...); --summarize needs --record")
    from result_records import outcome, write_record

    if args.summarize:
        record_from_kept(p, args.record, lambda: results_record(output_files(args.summarize)))
        return {}
    commit = run_commit(p, bool(args.record))
    if args.json and os.path.isdir(args.json):
        if args.runs < 1:
            p.error("--runs must be >= 1")
        defaults = vars(_parser().parse_args([]))
        child = [w for k, v in vars(args).items() if k not in ("json", "record", "summarize", "runs")
                 and v != defaults[k] for w in (f"--{k.replace('_', '-')}", str(v))]
        runs_in_children(__file__, child, args.runs, args.json, f"d{args.d}")
        if args.record:  # from every run in the folder: a record holds each number of features
            print(outcome(write_record(args.record, results_record(output_files([args.json])))))
        return {}
    if args.runs != 1:
        p.error("--runs goes with --json FOLDER (the folder keeping each run)")
    import tensorflow as tf


    res = {
        "commit": commit,
        "settings": vars(args),
        "machine": {"platform": platform.platform(), "python": platform.python_version(), "tensorflow": tf.__version__,
                    "cpus": os.cpu_count(), "load_average_start": os.getloadavg()},
        "gp": gp_part(args),
        "end_to_end": {lik: end_to_end(args, lik) for lik in args.likelihoods.split(",") if lik},
        "refit": refit(args),
    }
    res["machine"]["load_average_end"] = os.getloadavg()
    print(table(res))
    print(f"load average: start {res['machine']['load_average_start']}, end {res['machine']['load_average_end']}")
    if args.json:
        write_json_atomic(args.json, res)
    if args.record:
        print(outcome(write_record(args.record, results_record([args.json]))))
    return res


if __name__ == "__main__":
    main()

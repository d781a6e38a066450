#!/usr/bin/env python
"""Time-to-target across model families: one table from one run, optionally JSON.

Three comparisons, each with a reference method whose best test value over its run defines
the target (times ``1 + --tolerance``; the best, not the last, because SVI's test NLL rises
again as it overfits), and the wall-clock each method needs to *first* reach it:

(a) logistic-softmax with CAVI and with natural gradients vs SVI robust-max, target = test NLL
    of SVI robust-max within ``--svi-epochs`` (paper 004 reports about 10x);
(b) Dirichlet GP (GPD, alpha_eps = ``--alpha``) vs the same SVI robust-max run, target = its
    test error (paper 003 reports large speed-ups of GPD over variational classification);
(c) vi-JJ, vi-JJ-hybrid, vi-Taylor vs SVI with the logit likelihood on a binary task,
    target = test NLL of SVI (paper 002).

Every method gets the same rows, the same split and the same standardisation (fitted on
the training rows), the same SE-ARD kernel start, M = ``--num-inducing`` k-means inducing
inputs and float64.  Clocks run over model construction, graph tracing and training, and
pause while the test set is evaluated: every epoch for SVI, every ~epoch of minibatch steps
for natural gradients, every iteration for CAVI and vi-JJ/Taylor.  L-BFGS-B (Dirichlet) has
no hook between iterations, so it is refitted from scratch with max_iter on a grid
(L-BFGS-B is deterministic: the fit with max_iter = k is the k-th iterate of a longer fit) and
its time for k is that fit's time plus the one-off set-up.  Non-reference methods stop at
their target.  Before the timed runs every family runs once on 100 rows, so that
TensorFlow's one-off start-up costs fall on none of them; each timed run still pays
for building and tracing its own model.

    .venv/bin/python workflows/studies/bench_families.py --json runs/bench_families.json
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

import numpy as np

from gpal.files import write_json_atomic

PAPER = {
    "a": "about 10x (paper 004)",
    "b": "large speed-ups (paper 003)",
    "c": "vi-JJ / vi-Taylor faster than svi (paper 002)",
}
BATCH_SIZE = 50
DIRICHLET_GRID = (1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256)


@dataclass
class Trace:
    """Test metrics of one method along its training clock (evaluation time excluded)."""

    method: str
    seconds: list[float] = field(default_factory=list)
    iterations: list[int] = field(default_factory=list)
    nll: list[float] = field(default_factory=list)
    error: list[float] = field(default_factory=list)

    def add(self, seconds: float, iteration: int, y: np.ndarray, proba: np.ndarray) -> None:
        from gpal.evaluation.metrics import error_rate, negative_log_likelihood

        self.seconds.append(float(seconds))
        self.iterations.append(int(iteration))
        self.nll.append(negative_log_likelihood(y, proba))
        self.error.append(error_rate(y, proba))

    def first_reach(self, metric: str, target: float) -> int | None:
        """Index of the first checkpoint with ``metric`` <= target, or None."""
        hits = np.nonzero(np.asarray(getattr(self, metric)) <= target)[0]
        return int(hits[0]) if hits.size else None


class Clock:
    """Accumulates training time; ``paused()`` brackets evaluation."""

    def __init__(self) -> None:
        self.total = 0.0
        self._start = time.perf_counter()

    def lap(self) -> float:
        """Stop the clock and return the training seconds so far."""
        self.total += time.perf_counter() - self._start
        return self.total

    def resume(self) -> None:
        self._start = time.perf_counter()


@dataclass(frozen=True)
class Problem:
    name: str
    X: np.ndarray
    y: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    num_classes: int


# ------------------------------------------------------------------- data
def make_problem(kind: str, rows: int, test_size: float, seed: int) -> Problem:
    """A standardised train/test problem: multi-class waveform or binary 4FGL-DR4 bll vs fsrq."""
    from gpal.data.dataset import Standardizer

    if kind == "multiclass":
        from gpal.data.synthetic import waveform

        ds, name = waveform(n=rows, seed=seed), f"waveform (n = {rows}, d = 21, C = 3)"
    else:
        from gpal.catalogs import load_catalog

        ds = load_catalog("4FGL-DR4").dataset(classes=["bll", "fsrq"])
        if rows and rows < ds.n_samples:
            ds, _ = ds.split(test_size=1 - rows / ds.n_samples, seed=seed)
        name = f"4FGL-DR4 bll vs fsrq (n = {ds.n_samples}, d = 6)"
    train, test = ds.split(test_size=test_size, seed=seed)
    scaler = Standardizer.fit(train.X)
    X = scaler.transform_arrays(train.X)[0]
    X_test = scaler.transform_arrays(test.X)[0]
    return Problem(name, X, train.y, X_test, test.y, ds.n_classes)


def _kernel_and_Z(p: Problem, num_inducing: int, seed: int) -> tuple[Any, np.ndarray]:
    from gpal.models.kernels import default_kernel
    from gpal.models.svgp import kmeans_inducing

    return default_kernel(p.X.shape[1]), kmeans_inducing(p.X, min(num_inducing, p.X.shape[0]), seed)


# -------------------------------------------------------------- per family
def trace_svi(p: Problem, likelihood: str, epochs: int, num_inducing: int, seed: int,
              target: Callable[[Trace], bool] | None = None) -> Trace:
    """SVI (Adam, minibatch 50, lr 0.01) on gpal's sparse variational GP, evaluated every epoch."""
    import tensorflow as tf

    from gpal.models.svgp import build_model
    from gpal.training.svi import TrainData, Trainer

    trace, clock = Trace(f"SVI {likelihood}"), Clock()
    model = build_model(p.X, p.y, num_classes=p.num_classes, likelihood=likelihood, num_inducing=num_inducing, seed=seed)
    zeros = tf.zeros_like(tf.constant(p.X_test))
    predict = tf.function(lambda: model.predict_proba(tf.constant(p.X_test), zeros, tf.constant([seed, 7], tf.int64), 1))

    def callback(epoch: int, loss: float) -> bool:
        trace.add(clock.lap(), epoch + 1, p.y_test, predict().numpy())
        clock.resume()
        return not (target and target(trace))

    Trainer(model, seed=seed).fit(TrainData.from_arrays(p.X, np.zeros_like(p.X), p.y), epochs=epochs,
                                  batch_size=BATCH_SIZE, learning_rate=0.01, progress=False, callback=callback)
    return trace


def trace_logistic_softmax(p: Problem, inference: str, budget: int, num_inducing: int, seed: int,
                           target: Callable[[Trace], bool] | None = None) -> Trace:
    """Augmented logistic-softmax: CAVI sweeps (evaluated each), or natural-gradient steps in epoch-sized chunks.

    ``budget`` is sweeps for CAVI and epochs for natural gradients.  Chunks continue the
    step-size schedule (``delay`` = 1 + steps done) and draw fresh minibatches (seed per chunk).
    """
    from gpal.models.families.augmented_logistic_softmax import AugmentedLogisticSoftmaxGP
    from gpal.training.cavi import AugmentedTrainer

    trace, clock = Trace(f"logistic-softmax {inference}"), Clock()
    kernel, Z = _kernel_and_Z(p, num_inducing, seed)
    model = AugmentedLogisticSoftmaxGP(kernel, Z, p.num_classes, 1e-6)
    trainer = AugmentedTrainer(model, p.X, p.y, learning_rate=0.02)
    chunk = 1 if inference == "cavi" else -(-p.X.shape[0] // BATCH_SIZE)
    done = 0
    for k in range(budget):
        if inference == "cavi":
            trainer.run("cavi", max_iter=chunk, seed=seed + k)
        else:
            trainer.run("natural_gradient", max_iter=chunk, batch_size=BATCH_SIZE, delay=1.0 + done, seed=seed + k)
        done += chunk
        trace.add(clock.lap(), done, p.y_test, model.predict_proba(p.X_test, 500, seed))
        if target and target(trace):
            break
        clock.resume()
    return trace


def trace_dirichlet(p: Problem, alpha: float, max_iter: int, num_inducing: int, seed: int,
                    target: Callable[[Trace], bool] | None = None) -> Trace:
    """GPD refitted with L-BFGS-B max_iter on ``DIRICHLET_GRID`` (<= ``max_iter``); time = set-up + that fit."""
    from gpal.models.families.dirichlet import HeteroskedasticSGPR, dirichlet_targets, mc_softmax
    from gpal.training.collapsed import fit_dirichlet_gp

    trace, clock = Trace(f"Dirichlet (alpha_eps = {alpha:g})"), Clock()
    kernel, Z = _kernel_and_Z(p, num_inducing, seed)
    model = HeteroskedasticSGPR(kernel, Z, p.X, *dirichlet_targets(p.y, p.num_classes, alpha))
    fit_dirichlet_gp(model, p.y, alpha, max_iter=1)  # traces the objective once, as any first fit would
    setup = clock.lap()
    for k in (g for g in DIRICHLET_GRID if g <= max_iter):
        start = time.perf_counter()
        posterior, record = fit_dirichlet_gp(model, p.y, alpha, max_iter=k)
        seconds = setup + time.perf_counter() - start
        mean, var = posterior.predict(p.X_test)
        trace.add(seconds, record.rounds[0]["n_iter"], p.y_test, mc_softmax(mean, var, 1000, [seed, 2]))
        if (target and target(trace)) or record.rounds[0]["n_iter"] < k:  # reached, or L-BFGS-B converged
            break
    return trace


def trace_bound(p: Problem, method: str, max_iter: int, num_inducing: int, seed: int,
                target: Callable[[Trace], bool] | None = None) -> Trace:
    """vi-JJ / vi-JJ-hybrid / vi-Taylor (Algorithm 1: 3 analytic updates, 5 L-BFGS-B evaluations), evaluated every outer iteration."""
    import tensorflow as tf

    from gpal.models.families.logistic_bounds import LogisticBoundGP
    from gpal.training.bounds import BoundOptimizer

    trace, clock = Trace(f"vi-{method}"), Clock()
    kernel, Z = _kernel_and_Z(p, num_inducing, seed)
    model = LogisticBoundGP(kernel, Z, 1e-6)
    opt = BoundOptimizer(model, p.X, 2.0 * p.y - 1.0, method, True)
    model.q_mean.assign(tf.zeros_like(model.q_mean))
    model.q_sqrt.assign(tf.eye(model.q_sqrt.shape[0], dtype=tf.float64))
    for it in range(max_iter):
        opt.analytic_updates(3)
        opt.lbfgs_step(5)
        opt.update_q()
        prob = np.clip(model.predict_proba(p.X_test), 0.0, 1.0)
        trace.add(clock.lap(), it + 1, p.y_test, np.column_stack([1 - prob, prob]))
        if target and target(trace):
            break
        clock.resume()
    return trace


# ---------------------------------------------------------------- the run
def _row(comparison: str, trace: Trace, metric: str, target: float, reference_seconds: float | None, reference: bool) -> dict[str, Any]:
    k = trace.first_reach(metric, target)
    seconds = None if k is None else trace.seconds[k]
    return {
        "comparison": comparison,
        "method": trace.method + (" (reference)" if reference else ""),
        "metric": metric,
        "target": target,
        "seconds_to_target": seconds,
        "iterations_to_target": None if k is None else trace.iterations[k],
        "first_checkpoint_seconds": trace.seconds[0] if trace.seconds else None,
        "best": min(getattr(trace, metric)) if trace.seconds else None,
        "last_seconds": trace.seconds[-1] if trace.seconds else None,
        "speedup_vs_reference": None if seconds is None or not reference_seconds else reference_seconds / seconds,
    }


def _compare(label: str, ref: Trace, metric: str, tolerance: float, contenders: list[Callable[[Callable[[Trace], bool]], Trace]]) -> tuple[list[dict[str, Any]], list[Trace]]:
    target = min(getattr(ref, metric)) * (1 + tolerance)
    ref_k = ref.first_reach(metric, target)
    ref_seconds = ref.seconds[ref_k]
    rows = [_row(label, ref, metric, target, ref_seconds, True)]
    traces = []
    for make in contenders:
        trace = make(lambda t: t.first_reach(metric, target) is not None)
        rows.append(_row(label, trace, metric, target, ref_seconds, False))
        traces.append(trace)
    return rows, traces


def _warm_up(multi: Problem, binary: Problem, alpha: float, M: int, seed: int) -> None:
    """One tiny run of every family, so that process-level first-use costs (TensorFlow
    start-up, first kernel launches) are charged to none of the timed runs."""
    def head(p: Problem) -> Problem:
        return Problem(p.name, p.X[:100], p.y[:100], p.X_test[:20], p.y_test[:20], p.num_classes)

    small, small_bin = head(multi), head(binary)
    trace_svi(small, "robustmax", 1, M, seed)
    trace_logistic_softmax(small, "cavi", 1, M, seed)
    trace_logistic_softmax(small, "natural_gradient", 1, M, seed)
    trace_dirichlet(small, alpha, 1, M, seed)
    trace_svi(small_bin, "logit", 1, M, seed)
    trace_bound(small_bin, "jj", 1, M, seed)


def run(args: argparse.Namespace) -> dict[str, Any]:
    """All three comparisons; rows for the table and every trace for the JSON."""
    M, seed = args.num_inducing, args.seed
    multi = make_problem("multiclass", args.multiclass_rows, args.test_size, seed)
    binary = make_problem("binary", args.binary_rows, args.test_size, seed)
    _warm_up(multi, binary, args.alpha, M, seed)
    rows, traces = [], []

    svi = trace_svi(multi, "robustmax", args.svi_epochs, M, seed)
    traces.append(svi)
    r, t = _compare("(a) " + multi.name, svi, "nll", args.tolerance, [
        lambda stop: trace_logistic_softmax(multi, "cavi", args.iters, M, seed, stop),
        lambda stop: trace_logistic_softmax(multi, "natural_gradient", args.svi_epochs, M, seed, stop),
    ])
    rows += r
    traces += t
    r, t = _compare("(b) " + multi.name, svi, "error", args.tolerance, [
        lambda stop: trace_dirichlet(multi, args.alpha, max(DIRICHLET_GRID), M, seed, stop),
    ])
    rows += r
    traces += t
    svi_bin = trace_svi(binary, "logit", args.svi_epochs, M, seed)
    traces.append(svi_bin)
    r, t = _compare("(c) " + binary.name, svi_bin, "nll", args.tolerance, [
        lambda stop, m=m: trace_bound(binary, m, args.iters, M, seed, stop) for m in ("jj", "jj-hybrid", "taylor")
    ])
    rows += r
    traces += t
    return {
        "settings": {k: v for k, v in vars(args).items() if k != "json"},
        "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "python": platform.python_version(),
                    "accelerator": _accelerator()},
        "rows": rows,
        "traces": [asdict(t) for t in traces],
        "paper": PAPER,
    }


def _accelerator() -> str:
    import tensorflow as tf

    gpus = tf.config.list_physical_devices("GPU")
    return ", ".join(g.name for g in gpus) if gpus else "none (CPU only)"


def table(result: dict[str, Any]) -> str:
    """The Markdown table of one run."""
    def num(v: float | None, fmt: str) -> str:
        return "not reached" if v is None else format(v, fmt)

    lines = [
        "| comparison | method | target | s to target | iterations | first checkpoint s | best | speed-up vs reference |",
        "|---|---|---|---:|---:|---:|---:|---:|",
    ]
    for r in result["rows"]:
        lines.append(
            f"| {r['comparison']} | {r['method']} | {r['metric']} <= {r['target']:.4f} | {num(r['seconds_to_target'], '.1f')} "
            f"| {num(r['iterations_to_target'], 'd')} | {num(r['first_checkpoint_seconds'], '.1f')} | {r['best']:.4f} "
            f"| {num(r['speedup_vs_reference'], '.2f')} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--multiclass-rows", type=int, default=1500, help="waveform rows for (a) and (b) (default 1500)")
    p.add_argument("--binary-rows", type=int, default=0, help="4FGL-DR4 rows for (c), 0 = all 2309 (default)")
    p.add_argument("--test-size", type=float, default=0.3, help="test fraction (default 0.3)")
    p.add_argument("--svi-epochs", type=int, default=100, help="epochs of the SVI references; natural-gradient budget (default 100)")
    p.add_argument("--iters", type=int, default=300, help="CAVI sweeps / vi-JJ outer iterations at most (default 300)")
    p.add_argument("--alpha", type=float, default=0.01, help="Dirichlet alpha_eps (default 0.01)")
    p.add_argument("--num-inducing", type=int, default=50, help="inducing inputs, every method (default 50)")
    p.add_argument("--tolerance", type=float, default=0.02, help="target = reference best value x (1 + tol) (default 0.02)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", help="also write the table rows, settings and traces here")
    args = p.parse_args(argv)
    for name in ("multiclass_rows", "svi_epochs", "iters", "num_inducing"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be >= 1")
    if not 0 < args.test_size < 1 or args.tolerance < 0 or args.alpha <= 0:
        p.error("--test-size must be in (0, 1), --tolerance >= 0, --alpha > 0")
    result = run(args)
    sys.stdout.write(table(result))
    if args.json:
        write_json_atomic(args.json, result, allow_nan=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

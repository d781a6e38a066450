#!/usr/bin/env python
"""Reproduce the active-learning experiment of the noisy-input GP paper (Villacampa-Calvo et al., sec. 5.5).

Waveform data (1000 points) split at random into 100 initial labelled, 400 pool
and 500 test points; inputs standardised (statistics of initial + pool features,
no test data) and Gaussian noise of variance v injected; labels added from the
pool by predictive entropy or at random; the model is retrained after each query
from the previous solution; test error, NLL and ECE after every query.  MGP,
NIMGP, NIMGP-NN, NIMGP-FO; v in 0, 0.1, 0.25, 0.5; input-noise variance learned
(``noise_variance="learned"``), 50 inducing points, as in the paper.

Paper setting: 100 repetitions, one point per query, 100 queries, Adam lr 1e-3,
1000 epochs initially and 1000 after every query, 300 Monte Carlo samples at
prediction.  Every one of these is an option, so a reduced run says exactly what
it reduced.  Each (method, noise, strategy, repetition) is one resumable
`gpal.active.ActiveLearningLoop` checkpoint under ``<out>/units/``: rerun the same
command after an interruption and it continues.  Example (the reduced run of
docs/results.md):

    .venv/bin/python workflows/reproduce_waveform_active_learning.py --out runs/waveform_al \\
        --repetitions 1 --batch-size 10 --n-queries 10 --epochs 300 --retrain-epochs 30 \\
        --learning-rate 0.01 --n-samples 30 --workers 2
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_context
from pathlib import Path

import numpy as np
import pandas as pd

from gpal.active.loop import initial_pool_test_split, read_state
from gpal.experiments import NOISY_INPUT_METHODS
from gpal.persistence import write_json_atomic, write_text_atomic

STRATEGIES = {"entropy": {"name": "entropy"}, "random": {"name": "random", "seed": 0}}
METRICS = ("error", "nll", "ece")


def _parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", default="runs/waveform_al", help="output folder; reuse it to resume")
    p.add_argument("--methods", default=",".join(NOISY_INPUT_METHODS), help="comma-separated paper methods")
    p.add_argument("--noise", default="0,0.1,0.25,0.5", help="comma-separated injected input-noise variances")
    p.add_argument("--strategies", default="entropy,random", help=f"comma-separated subset of {list(STRATEGIES)}")
    p.add_argument("--repetitions", type=int, default=100, help="random splits (paper: 100)")
    p.add_argument("--n-initial", type=int, default=100)
    p.add_argument("--n-pool", type=int, default=400)
    p.add_argument("--n-test", type=int, default=500)
    p.add_argument("--n-queries", type=int, default=100, help="queries (paper: 100)")
    p.add_argument("--batch-size", type=int, default=1, help="sources per query (paper: 1)")
    p.add_argument("--epochs", type=int, default=1000, help="initial training epochs (paper: 1000)")
    p.add_argument("--retrain-epochs", type=int, default=1000, help="epochs after each query (paper: 1000)")
    p.add_argument("--learning-rate", type=float, default=1e-3, help="Adam learning rate (paper: 1e-3)")
    p.add_argument("--n-samples", type=int, default=300, help="Monte Carlo samples at prediction (paper: 300)")
    p.add_argument("--num-inducing", type=int, default=50, help="inducing points (paper: 50)")
    p.add_argument("--noise-variance", choices=("known", "learned", "both"), default="learned",
                   help="input-noise variances: injected value, learned (paper), or both")
    p.add_argument("--seed", type=int, default=0, help="repetition k uses seeds derived from (seed, k)")
    p.add_argument("--workers", type=int, default=1, help="parallel worker processes")
    p.add_argument("--summarize-only", action="store_true", help="only rebuild the summary from finished units")
    p.add_argument("--docs-figures", default=None,
                   help="also write the learning-curve and error-reduction figures here as al_waveform_*.png")
    args = p.parse_args(argv)
    args.methods = [m for m in args.methods.split(",") if m]
    args.noise = [float(v) for v in args.noise.split(",") if v]
    args.strategies = [s for s in args.strategies.split(",") if s]
    bad = [m for m in args.methods if m not in NOISY_INPUT_METHODS] + [s for s in args.strategies if s not in STRATEGIES]
    if bad:
        p.error(f"unknown method(s)/strategy(ies) {bad}; methods: {list(NOISY_INPUT_METHODS)}, "
                f"strategies: {list(STRATEGIES)}")
    if args.repetitions < 1 or args.workers < 1:
        p.error("--repetitions and --workers must be >= 1")
    return args


def unit_dir(out: Path, method: str, noise: float, strategy: str, rep: int) -> Path:
    return out / "units" / method / f"noise_{noise:g}" / strategy / f"rep_{rep:03d}"


def make_sets(rep: int, noise: float, args: argparse.Namespace):
    """Initial / pool / test sets of repetition ``rep`` with noise ``noise`` (shared by methods and strategies)."""
    from gpal.data import NoisyDataset, Standardizer
    from gpal.synthetic import inject_noise, waveform

    seeds = np.random.SeedSequence([args.seed, rep]).generate_state(5)
    data = waveform(args.n_initial + args.n_pool + args.n_test, seed=int(seeds[0]))
    initial, pool, test = initial_pool_test_split(data, args.n_initial, args.n_pool, args.n_test, seed=int(seeds[1]))
    scaler = Standardizer.fit(NoisyDataset.concatenate([initial, pool]))  # features only: no labels, no test rows
    return tuple(inject_noise(scaler.transform(ds), noise, seed=int(s)) for ds, s in zip((initial, pool, test),
                                                                                           seeds[2:]))


def run_unit(method: str, noise: float, strategy: str, rep: int, args: argparse.Namespace) -> tuple[str, float]:
    """One active-learning curve (resumed if its checkpoint exists); returns its name and wall seconds."""
    from gpal.active import ActiveLearningLoop, SimulatedOracle
    from gpal.classifier import NoisyGPClassifier

    initial, pool, test = make_sets(rep, noise, args)
    estimator = NoisyGPClassifier(
        **NOISY_INPUT_METHODS[method], noise_variance=args.noise_variance, num_inducing=args.num_inducing,
        epochs=args.epochs, learning_rate=args.learning_rate, n_samples=args.n_samples,
        seed=int(np.random.SeedSequence([args.seed, rep, 1]).generate_state(1)[0] % 2**31), progress=False,
    )
    t0 = time.perf_counter()
    ActiveLearningLoop(
        estimator, initial, pool, SimulatedOracle(pool), test=test, acquisition=STRATEGIES[strategy],
        batch_size=args.batch_size, n_queries=args.n_queries, retrain_epochs=args.retrain_epochs,
        checkpoint_dir=unit_dir(Path(args.out), method, noise, strategy, rep), progress=False,
    ).run()
    return f"{method} v={noise:g} {strategy} rep {rep}", time.perf_counter() - t0


def collect(args: argparse.Namespace) -> pd.DataFrame:
    """Tidy curves: one row per (method, noise, strategy, repetition, step) of every finished step."""
    rows = []
    for method in args.methods:
        for noise in args.noise:
            for strategy in args.strategies:
                for rep in range(args.repetitions):
                    path = unit_dir(Path(args.out), method, noise, strategy, rep)
                    if not (path / "state.json").exists():
                        continue
                    for m in read_state(path)["metrics"]:
                        rows.append({"method": method, "noise": noise, "strategy": strategy, "repetition": rep,
                                     "n_added": m["n_labelled"] - args.n_initial,
                                     **{k: m[k] for k in METRICS}})
    return pd.DataFrame(rows)


def plot_error_reduction(reduction: pd.DataFrame):
    """Final test-error reduction (initial - final), mean ± SE: one panel per strategy, bars per method and noise."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from gpal.metrics import mean_se

    strategies = list(dict.fromkeys(reduction.strategy))
    methods = list(dict.fromkeys(reduction.method))
    noises = sorted(reduction.noise.unique())
    fig = Figure(figsize=(4.0 * len(strategies), 3.6), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, len(strategies), sharey=True, squeeze=False)[0]
    width = 0.8 / len(methods)
    for ax, strategy in zip(axes, strategies):
        for k, method in enumerate(methods):
            stats = []
            for v in noises:
                vals = reduction.loc[(reduction.strategy == strategy) & (reduction.method == method)
                                     & (reduction.noise == v), "reduction"].to_numpy()
                stats.append(mean_se(vals) if vals.size else (np.nan, np.nan))
            mean, se = np.array(stats).T
            ax.bar(np.arange(len(noises)) + (k - (len(methods) - 1) / 2) * width, mean, width,
                   yerr=np.where(np.isfinite(se), se, 0), label=method, color=f"C{k}")
        ax.axhline(0, color="k", lw=0.8)
        ax.set_xticks(np.arange(len(noises)), [f"{v:g}" for v in noises])
        ax.set(xlabel="injected input-noise variance", title=f"{strategy}")
        ax.grid(axis="y", alpha=0.3)
    axes[0].set_ylabel("test error reduction (initial - final)")
    axes[0].legend(fontsize=8)
    return fig


def summarize(curves: pd.DataFrame, args: argparse.Namespace) -> str:
    """Curves CSV, one learning-curve figure per noise level, error-reduction table (Markdown)."""
    from gpal.metrics import format_mean_se, mean_se
    from gpal.plots import plot_learning_curves, save_figure
    from gpal.reports import markdown_table

    out = Path(args.out)
    write_text_atomic(out / "curves.csv", curves.to_csv(index=False))
    for noise, frame in curves.groupby("noise"):
        fig = plot_learning_curves(frame, metric="error", x="n_added", by=("method", "strategy"),
                                   title=f"waveform, input-noise variance {noise:g}: test error")
        save_figure(fig, out / f"al_waveform_error_noise_{noise:g}", formats=("png",))
    final_step = curves.groupby(["method", "noise", "strategy", "repetition"])["n_added"].transform("max")
    start = curves[curves.n_added == 0].set_index(["method", "noise", "strategy", "repetition"])["error"]
    end = curves[curves.n_added == final_step].set_index(["method", "noise", "strategy", "repetition"])
    reduction = (start - end["error"]).rename("reduction").reset_index()
    reduction["n_added"] = end["n_added"].to_numpy()
    reduction["method"] = pd.Categorical(reduction["method"], categories=args.methods, ordered=True)
    reduction = reduction.sort_values(["method", "noise", "strategy", "repetition"]).reset_index(drop=True)
    reduction["method"] = reduction["method"].astype(str)
    write_text_atomic(out / "error_reduction.csv", reduction.to_csv(index=False))
    figures = {"al_waveform_error_reduction": plot_error_reduction(reduction)}
    figures["al_waveform_learning_curves"] = plot_learning_curves(
        curves[curves.noise == curves.noise.max()], metric="error", x="n_added", by=("method", "strategy"),
        title=f"waveform, input-noise variance {curves.noise.max():g}: test error")
    for folder in [out] + ([Path(args.docs_figures)] if args.docs_figures else []):
        for name, fig in figures.items():
            save_figure(fig, folder / name, formats=("png",))
    table = []
    for (method, noise), frame in reduction.groupby(["method", "noise"], sort=False):
        row = {"method": method, "noise var.": f"{noise:g}"}
        for strategy in args.strategies:
            values = frame.loc[frame.strategy == strategy, "reduction"].to_numpy()
            row[f"reduction, {strategy}"] = format_mean_se(*mean_se(values)) if values.size else "-"
        if {"entropy", "random"} <= set(args.strategies):
            pair = frame.pivot(index="repetition", columns="strategy", values="reduction").dropna()
            diff = (pair["entropy"] - pair["random"]).to_numpy()
            row["entropy - random"] = format_mean_se(*mean_se(diff)) if diff.size else "-"
        table.append(row)
    text = markdown_table(pd.DataFrame(table))
    write_text_atomic(out / "error_reduction.md", text + "\n")
    return text


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    out = Path(args.out)
    write_json_atomic(out / "command.json", {"argv": sys.argv if argv is None else ["<api>", *argv],
                                             "args": vars(args)})
    if not args.summarize_only:
        units = [(m, v, s, r) for r in range(args.repetitions) for v in args.noise for m in args.methods
                 for s in args.strategies]
        print(f"{len(units)} units -> {out}", flush=True)
        # Threads per process: 1, so that --workers processes share the cores instead of fighting over them.
        for var in ("OMP_NUM_THREADS", "TF_NUM_INTRAOP_THREADS", "TF_NUM_INTEROP_THREADS"):
            os.environ.setdefault(var, "1")
        t0 = time.perf_counter()
        with ProcessPoolExecutor(args.workers, mp_context=get_context("spawn")) as pool:
            futures = [pool.submit(run_unit, *u, args) for u in units]
            for k, fut in enumerate(as_completed(futures), start=1):
                name, seconds = fut.result()
                print(f"[{k}/{len(units)}] {name}: {seconds:.0f} s (elapsed {time.perf_counter() - t0:.0f} s)",
                      flush=True)
    curves = collect(args)
    if curves.empty:
        print("no finished units yet", file=sys.stderr)
        return 1
    print(summarize(curves, args))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Workflow kind ``active_learning``: the waveform experiment of the noisy-input GP paper (sec. 5.5, Figs. 6-7).

Waveform data split at random into initial labelled, pool and test points; inputs
standardised with the initial + pool feature statistics (no test rows) and Gaussian
noise of each level injected; labels added from the pool by each acquisition
strategy; the model retrained from the previous solution after every query; test
error, NLL and ECE after every step.  A unit is one (method, noise, strategy,
repetition) curve: a checkpointed `gpal.active.ActiveLearningLoop` under
``checkpoints/`` (written by the worker, so a Dask cluster needs a shared file
system) that resumes mid-curve, and ``units/.../rep_0003.json`` once it is done.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from gpal.runs.executors import Executor
from gpal.workflows.methods import classifier_params, methods_field, training_schema
from gpal.workflows.schema import Field, choice, integer, list_of, number
from gpal.runs.units import run_units

__all__ = ["curve_unit", "make_sets", "plot_error_reduction", "run", "schema"]

METRICS = ("error", "nll", "ece")


def schema() -> dict[str, Any]:
    from gpal.registry import ACQUISITIONS

    return {
        "data": {
            "n_initial": Field(integer(1), 100, "initial labelled points"),
            "n_pool": Field(integer(1), 400, "pool points"),
            "n_test": Field(integer(1), 500, "test points"),
            "noise_levels": Field(list_of(number(0)), [0.0, 0.1, 0.25, 0.5], "injected input-noise variances"),
        },
        "repetitions": Field(integer(1), 100, "random splits (the paper: 100)", part_of_run=False),
        "strategies": Field(list_of(choice(ACQUISITIONS.names())), ["entropy", "random"], "acquisition strategies"),
        "methods": methods_field(),
        "loop": {
            "batch_size": Field(integer(1), 1, "sources added per query (the paper: 1)"),
            "n_queries": Field(integer(1), 100, "queries (the paper: 100)"),
            "retrain_epochs": Field(integer(0), 1000, "epochs of each retraining after a query (the paper: 1000)"),
        },
        "training": training_schema(noise_variance="learned", num_inducing=50, epochs=1000, learning_rate=1e-3),
    }


def make_sets(seed: int, rep: int, noise: float, data: dict[str, Any]) -> tuple[Any, Any, Any]:
    """Initial / pool / test sets of repetition ``rep`` at input-noise variance ``noise``."""
    from gpal.active.loop import initial_pool_test_split
    from gpal.data.dataset import NoisyDataset, Standardizer
    from gpal.data.synthetic import inject_noise, waveform

    seeds = np.random.SeedSequence([seed, rep]).generate_state(5)
    sizes = data["n_initial"], data["n_pool"], data["n_test"]
    initial, pool, test = initial_pool_test_split(waveform(sum(sizes), seed=int(seeds[0])), *sizes, seed=int(seeds[1]))
    scaler = Standardizer.fit(NoisyDataset.concatenate([initial, pool]))  # features only: no labels, no test rows
    return tuple(inject_noise(scaler.transform(ds), noise, seed=int(s)) for ds, s in zip((initial, pool, test), seeds[2:]))


def curve_unit(params: dict[str, Any], strategy: str, seed: int, rep: int, noise: float, data: dict[str, Any],
               loop: dict[str, Any], checkpoint: str) -> dict[str, Any]:
    """One learning curve, resumed from ``checkpoint`` if it exists; its metrics after every step."""
    from gpal.active import ActiveLearningLoop, SimulatedOracle
    from gpal.active.loop import read_state
    from gpal.estimators.noisy_gp import NoisyGPClassifier

    initial, pool, test = make_sets(seed, rep, noise, data)
    estimator = NoisyGPClassifier(**params, random_state=int(np.random.SeedSequence([seed, rep, 1]).generate_state(1)[0] % 2**31))
    start = time.perf_counter()
    ActiveLearningLoop(
        estimator, initial, pool, SimulatedOracle(pool), test=test, acquisition={"name": strategy},
        batch_size=loop["batch_size"], n_queries=loop["n_queries"], retrain_epochs=loop["retrain_epochs"],
        checkpoint_dir=checkpoint, progress=False,
    ).run()
    return {"metrics": read_state(checkpoint)["metrics"], "seconds": time.perf_counter() - start}


def run(config: dict[str, Any], out: Path, executor: Executor, progress: bool) -> None:
    data, seed = config["data"], config["seed"]
    params = classifier_params(config["methods"], config["training"], data["n_initial"])
    units, keys = {}, {}
    for rep in range(config["repetitions"]):
        for noise in data["noise_levels"]:
            for method in config["methods"]:
                for strategy in config["strategies"]:
                    name = f"{method}/noise_{noise:g}/{strategy}/rep_{rep:04d}"
                    checkpoint = str(out / "checkpoints" / name)
                    units[name] = (params[method], strategy, seed, rep, noise, data, config["loop"], checkpoint)
                    keys[name] = (method, noise, strategy, rep)
    results = run_units(executor, curve_unit, units, out, desc="learning curves", progress=progress)
    curves = pd.DataFrame([
        {"method": m, "noise": v, "strategy": s, "repetition": r, "n_added": row["n_labelled"] - data["n_initial"],
         **{k: row[k] for k in METRICS}}
        for name, (m, v, s, r) in keys.items() for row in results[name]["metrics"]
    ])
    _write(config, out, curves)


def _error_reduction(curves: pd.DataFrame, methods: list[str]) -> pd.DataFrame:
    """Per curve: test error after the initial fit minus the error after the last query."""
    key = ["method", "noise", "strategy", "repetition"]
    final_step = curves.groupby(key)["n_added"].transform("max")
    start = curves[curves.n_added == 0].set_index(key)["error"]
    end = curves[curves.n_added == final_step].set_index(key)
    reduction = (start - end["error"]).rename("reduction").reset_index()
    reduction["n_added"] = end["n_added"].to_numpy()
    reduction["method"] = pd.Categorical(reduction["method"], categories=methods, ordered=True)
    reduction = reduction.sort_values(key).reset_index(drop=True)
    reduction["method"] = reduction["method"].astype(str)
    return reduction


def _write(config: dict[str, Any], out: Path, curves: pd.DataFrame) -> None:
    from gpal.evaluation.metrics import format_mean_se, mean_se
    from gpal.runs.persistence import atomic_output
    from gpal.evaluation.plots import plot_learning_curves, save_figure
    from gpal.evaluation.reports import write_report, write_table

    with atomic_output(out / "curves.csv") as tmp:
        curves.to_csv(tmp, index=False)
    reduction = _error_reduction(curves, config["methods"])
    strategies = config["strategies"]
    shown = []
    for (method, noise), frame in reduction.groupby(["method", "noise"], sort=False):
        row = {"method": method, "noise var.": f"{noise:g}"}
        for strategy in strategies:
            values = frame.loc[frame.strategy == strategy, "reduction"].to_numpy()
            row[f"reduction, {strategy}"] = format_mean_se(*mean_se(values)) if values.size else "-"
        if {"entropy", "random"} <= set(strategies):
            pair = frame.pivot(index="repetition", columns="strategy", values="reduction").dropna()
            diff = (pair["entropy"] - pair["random"]).to_numpy()
            row["entropy - random"] = format_mean_se(*mean_se(diff)) if diff.size else "-"
        shown.append(row)
    tables = {"Final test-error reduction (initial - final), mean ± SE over repetitions":
              write_table(out / "error_reduction", pd.DataFrame(shown), data=reduction)}
    figures = {}
    for noise, frame in curves.groupby("noise"):
        fig = plot_learning_curves(frame, metric="error", x="n_added", by=("method", "strategy"),
                                   title=f"waveform, input-noise variance {noise:g}: test error")
        figures[f"Test error, input-noise variance {noise:g}"] = save_figure(fig, out / f"al_waveform_error_noise_{noise:g}")
    figures["Test-error reduction per method and noise level"] = save_figure(
        plot_error_reduction(reduction), out / "al_waveform_error_reduction")
    text = "\n".join([
        config["description"] or "", "",
        f"{config['repetitions']} repetition(s); {config['loop']['n_queries']} queries of "
        f"{config['loop']['batch_size']}; learning curves of every unit in `curves.csv`.",
    ])
    write_report(out, config["title"], figures=figures, tables=tables, text=text)


def plot_error_reduction(reduction: pd.DataFrame) -> Any:
    """Final test-error reduction (initial - final), mean ± SE: one panel per strategy, bars per method and noise."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from gpal.evaluation.metrics import mean_se

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

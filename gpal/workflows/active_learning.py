"""Workflow kind ``active_learning``: the waveform experiment of the noisy-input GP paper (sec. 5.5, Figs. 6-7).

Waveform data split at random into initial labelled, pool and test points; inputs
standardised with the initial + pool feature statistics (no test rows) and Gaussian
noise of each level injected; labels added from the pool by each acquisition
strategy; the model retrained from the previous solution after every query; test
error, NLL and ECE after every step.  A unit is one (method, noise, strategy,
repetition) curve: a checkpointed `gpal.active.ActiveLearningLoop` under
``checkpoints/`` (written by the worker, so a Dask cluster needs a shared file
system) that resumes mid-curve, and ``units/.../rep_0003.json`` once it is done.

Every strategy and method of a repetition sees the same split, the same noisy
inputs and the same estimator ``random_state`` (a paired design), so the per-repetition
difference of a strategy to the baseline (random) carries no split-to-split noise;
the differences, their areas and t-intervals come from `gpal.evaluation.paired`.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd

from gpal.constraints import Integer, ListOf, OneOf, Real
from gpal.data.dataset import NoisyDataset
from gpal.data.standardizer import Standardizer
from gpal.estimators.noisy_gp import NoisyGPClassifier
from gpal.evaluation.metrics import format_mean_se, mean_se
from gpal.evaluation.paired import difference_table, draw_differences, draw_strategy_curves, strategy_name
from gpal.files import atomic_output
from gpal.registry import ACQUISITIONS, MODELS_PER_BATCH
from gpal.runs.executors import Executor
from gpal.runs.units import run_units
from gpal.workflows.curves import (ACQUISITIONS_SECTION, acquisition_config, acquisition_section, check_strategy_options,
                                   curves_in_lock_step)
from gpal.workflows.methods import classifier_params, methods_field, training_schema
from gpal.workflows.schema import Field

__all__ = ["check", "curve_unit", "differences", "make_sets", "plot_al_curves", "plot_al_differences",
           "plot_error_reduction", "run", "schema"]

METRICS = ("error", "nll", "ece")
_LABELS = {"error": "test error", "nll": "test NLL"}  # the metrics compared between strategies
#: Acquisitions whose ``seed`` the study draws per repetition (every strategy of a repetition shares the stream).
_SEEDED_PER_REPETITION = ("random",)


def schema() -> dict[str, Any]:
    return {
        "data": {
            "n_initial": Field(Integer(1), 100, "initial labelled points"),
            "n_pool": Field(Integer(1), 400, "pool points"),
            "n_test": Field(Integer(1), 500, "test points"),
            "noise_levels": Field(ListOf(Real(0)), [0.0, 0.1, 0.25, 0.5], "injected input-noise variances"),
        },
        "repetitions": Field(Integer(1), 100, "random splits (the paper: 100)", part_of_run=False),
        "strategies": Field(ListOf(OneOf(ACQUISITIONS.names())), ["entropy", "random"], "acquisition strategies"),
        "baseline": Field(OneOf(ACQUISITIONS.names()), "random",
                          "the strategy the others are compared with, paired by repetition (if it is run)"),
        "methods": methods_field(),
        "loop": {
            "batch_size": Field(Integer(1), 1, "sources added per query (the paper: 1)"),
            "n_queries": Field(Integer(1), 100, "queries (the paper: 100)"),
            "retrain_epochs": Field(Integer(0), 1000, "epochs of each retraining after a query (the paper: 1000)"),
            "models_per_batch": Field(Integer(1), MODELS_PER_BATCH, "curves of one method run in lock step, each "
                                      "query's retrainings one batched fit (1: one curve at a time; same results "
                                      "up to rounding)", part_of_run=False),
        },
        # every acquisition's declared options; BALD at 30 draws, the study's cost
        ACQUISITIONS_SECTION: acquisition_section({name: ("seed",) for name in _SEEDED_PER_REPETITION},
                                                  bald={"n_samples": 30}),
        "training": training_schema(noise_variance="learned", num_inducing=50, epochs=1000, learning_rate=1e-3),
    }


def check(config: dict[str, Any]) -> None:
    """What no single key can check: an option a strategy requires, set."""
    check_strategy_options(config["strategies"], config[ACQUISITIONS_SECTION])


def make_sets(seed: int, rep: int, noise: float, data: dict[str, Any]) -> tuple[Any, Any, Any]:
    """Initial / pool / test sets of repetition ``rep`` at input-noise variance ``noise``."""
    from gpal.active.loop import initial_pool_test_split
    from gpal.data.synthetic import inject_noise, waveform

    seeds = np.random.SeedSequence([seed, rep]).generate_state(5)
    sizes = data["n_initial"], data["n_pool"], data["n_test"]
    initial, pool, test = initial_pool_test_split(waveform(sum(sizes), seed=int(seeds[0])), *sizes, seed=int(seeds[1]))
    scaler = Standardizer.fit(NoisyDataset.concatenate([initial, pool]))  # features only: no labels, no test rows
    return tuple(inject_noise(scaler.transform(ds), noise, seed=int(s)) for ds, s in zip((initial, pool, test), seeds[2:]))


def _curve_loop(params: dict[str, Any], strategy: str, seed: int, rep: int, noise: float, data: dict[str, Any],
                loop: dict[str, Any], acquisitions: dict[str, Any], checkpoint: str) -> Any:
    """The checkpointed loop of one learning curve (``acquisitions``: the workflow's section of their options)."""
    from gpal.active import ActiveLearningLoop, SimulatedOracle

    initial, pool, test = make_sets(seed, rep, noise, data)
    # Estimator seed and random strategy's stream depend on the repetition only: every strategy shares them.
    model_seed, random_seed = (int(v % 2**31) for v in np.random.SeedSequence([seed, rep, 1]).generate_state(2))
    estimator = NoisyGPClassifier(**params, random_state=model_seed)
    seeded = {"seed": random_seed} if strategy in _SEEDED_PER_REPETITION else {}
    return ActiveLearningLoop(
        estimator, initial, pool, SimulatedOracle(pool), test=test,
        acquisition=acquisition_config(strategy, acquisitions, **seeded),
        batch_size=loop["batch_size"], n_queries=loop["n_queries"], retrain_epochs=loop["retrain_epochs"],
        checkpoint_dir=checkpoint, progress=False,
    )


def _curve(loop: Any, seconds: float) -> dict[str, Any]:
    """A finished curve's unit result, read from its checkpoint."""
    from gpal.active.checkpoint import read_state

    state = read_state(loop.checkpoint_dir)
    return {"initial_ids": state["initial_ids"], "queried": [q["ids"] for q in state["queries"]],
            "metrics": state["metrics"], "seconds": seconds}


def curve_unit(params: dict[str, Any], strategy: str, seed: int, rep: int, noise: float, data: dict[str, Any],
               loop: dict[str, Any], acquisitions: dict[str, Any], checkpoint: str) -> dict[str, Any]:
    """One learning curve, resumed from ``checkpoint`` if it exists; its metrics after every step."""
    start = time.perf_counter()
    curve = _curve_loop(params, strategy, seed, rep, noise, data, loop, acquisitions, checkpoint)
    curve.run()
    return _curve(curve, time.perf_counter() - start)


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
                    units[name] = (params[method], strategy, seed, rep, noise, data, config["loop"],
                                   config[ACQUISITIONS_SECTION], checkpoint)
                    keys[name] = (method, noise, strategy, rep)
    per_batch = config["loop"]["models_per_batch"]

    def batches(todo: list[str]) -> list[tuple[list[str], Any, tuple]]:
        """The curves of one method, up to ``models_per_batch`` to a task (their models share steps)."""
        planned = []
        for method in config["methods"]:
            mine = [name for name in todo if keys[name][0] == method]
            for first in range(0, len(mine), per_batch):
                group = mine[first:first + per_batch]
                planned.append((group, curves_in_lock_step, ([units[name] for name in group], _curve_loop, _curve)))
        return planned

    results = run_units(executor, curve_unit, units, out, desc="learning curves", progress=progress,
                        batches=batches if per_batch > 1 else None)
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
    from gpal.evaluation.plots import save_figure
    from gpal.evaluation.reports import write_report, write_table

    with atomic_output(out / "curves.csv") as tmp:
        curves.to_csv(tmp, index=False)
    reduction = _error_reduction(curves, config["methods"])
    strategies, baseline = config["strategies"], config["baseline"]
    compared = baseline in strategies and len(strategies) > 1
    shown = []
    for (method, noise), frame in reduction.groupby(["method", "noise"], sort=False):
        row = {"method": method, "noise var.": f"{noise:g}"}
        for strategy in strategies:
            values = frame.loc[frame.strategy == strategy, "reduction"].to_numpy()
            row[f"reduction, {strategy}"] = format_mean_se(*mean_se(values)) if values.size else "-"
        shown.append(row)
    reps = curves["repetition"].nunique()
    tables = {f"Final test-error reduction (initial - final), mean ± SE over {reps} repetitions":
              write_table(out / "error_reduction", pd.DataFrame(shown), data=reduction)}
    figures = {f"Learning curves, mean ± SE over {reps} repetitions": save_figure(
        plot_al_curves(curves, strategies, baseline), out / "al_waveform_curves")}
    if compared:
        tables[f"Paired differences against {baseline}, mean ± SE over {reps} repetitions "
               "(negative = the strategy is better)"] = write_table(
            out / "differences", *differences(curves, strategies, baseline))
        figures["Paired differences against the baseline"] = save_figure(
            plot_al_differences(curves, strategies, baseline), out / "al_waveform_differences")
    figures["Test-error reduction per method and noise level"] = save_figure(
        plot_error_reduction(reduction), out / "al_waveform_error_reduction")
    loop = config["loop"]
    text = "\n".join([
        config["description"] or "", "",
        f"{config['repetitions']} repetition(s); {loop['n_queries']} queries of {loop['batch_size']}, "
        f"{loop['retrain_epochs']} warm-started epochs after each; learning curves of every unit in `curves.csv`. "
        "The area is the metric averaged over the budget (trapezoid); its interval is mean ± t(0.975, R-1) · SE "
        "of the per-repetition differences.",
    ])
    write_report(out, config["title"], figures=figures, tables=tables, text=text)


def _panels(curves: pd.DataFrame) -> list[tuple[str, float]]:
    """(method, noise) panels in the order the curves hold them."""
    return list(dict.fromkeys(zip(curves["method"], curves["noise"])))


def _panel(curves: pd.DataFrame, method: str, noise: float) -> pd.DataFrame:
    """One panel's curves in `gpal.evaluation.paired`'s columns (n_observed = labels added)."""
    frame = curves[(curves.method == method) & (curves.noise == noise)]
    return frame.rename(columns={"n_added": "n_observed"})


def differences(curves: pd.DataFrame, strategies: list[str], baseline: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per (method, noise): paired (strategy - baseline) differences of test error and NLL, at budgets and as areas."""
    shown, data = [], []
    for method, noise in _panels(curves):
        frame = _panel(curves, method, noise)
        table, full = difference_table(frame, strategies, baseline, _LABELS)
        table.insert(0, "noise var.", f"{noise:g}")
        table.insert(0, "method", method)
        table["repetitions paired"] = str(frame["repetition"].nunique())
        shown.append(table)
        data.append(full.assign(method=method, noise=noise))
    return pd.concat(shown, ignore_index=True), pd.concat(data, ignore_index=True)


def _small_multiples(curves: pd.DataFrame, draw: Callable[[Any, pd.DataFrame, str], None], ylabel: str,
                     title: str) -> Any:
    """Rows test error and NLL, one column per (method, noise); ``draw(ax, panel, metric)`` fills a panel."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    panels = _panels(curves)
    fig = Figure(figsize=(2.7 * len(panels) + 0.6, 2.4 * len(_LABELS) + 0.5), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(len(_LABELS), len(panels), sharex=True, sharey="row", squeeze=False)
    for j, (method, noise) in enumerate(panels):
        for i, (metric, label) in enumerate(_LABELS.items()):
            ax = axes[i, j]
            draw(ax, _panel(curves, method, noise), metric)
            if i == 0:
                ax.set_title(f"{method}, noise var. {noise:g}", fontsize=9)
            if j == 0:
                ax.set_ylabel(ylabel.format(label))
            if i == len(_LABELS) - 1:
                ax.set_xlabel("labels added")
    axes[0, 0].legend(fontsize=8, frameon=False)
    fig.suptitle(title.format(reps=curves["repetition"].nunique()), fontsize=10)
    return fig


def plot_al_curves(curves: pd.DataFrame, strategies: list[str], baseline: str) -> Any:
    """Test error and NLL per (method, noise): mean per strategy, SE as bars at a few budgets."""
    return _small_multiples(
        curves, lambda ax, panel, metric: draw_strategy_curves(ax, panel, strategies, baseline, metric, n_marked=7),
        "{}", "Waveform active learning: mean ± SE over {reps} repetitions")


def plot_al_differences(curves: pd.DataFrame, strategies: list[str], baseline: str) -> Any:
    """(strategy - baseline) test error and NLL per (method, noise), mean ± SE of the per-repetition differences."""
    return _small_multiples(
        curves, lambda ax, panel, metric: draw_differences(ax, panel, strategies, baseline, metric),
        f"Δ {{}}\n(below 0: better than {strategy_name(baseline)})",
        "Paired differences per repetition, mean ± SE over {reps} repetitions")


def plot_error_reduction(reduction: pd.DataFrame) -> Any:
    """Final test-error reduction (initial - final), mean ± SE: one panel per strategy, bars per method and noise."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

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

"""Workflow kind ``follow_up``: simulated telescope follow-up of 4FGL-DR4 sources.

gpal ranks unassociated sources for follow-up by how unsure its classifier is
about them; this asks whether that ranking buys a better classifier per source
observed than picking sources at random.  The associated sources of the main job's
classes stand in for the unassociated ones: per repetition they are split into a
stratified held-out test set, a small random seed set (at least one source per
class) and a pool whose labels are revealed only when queried
(`gpal.active.SimulatedOracle`).  Every strategy of a repetition starts from the
same seed set, test set and initial model (a paired design), so the per-repetition
difference to the baseline strategy carries no split-to-split noise.  A unit is one
(strategy, repetition) learning curve: a checkpointed `gpal.active.ActiveLearningLoop`
under ``checkpoints/`` that resumes mid-curve, and ``units/<strategy>/rep_0003.json``
once done.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from gpal.constraints import Integer, ListOf, OneOf, Parsed, Real
from gpal.evaluation.metrics import format_mean_se, mean_se
from gpal.evaluation.paired import (
    difference_table, draw_differences, draw_strategy_curves, higher_is_better, strategy_name,
)
from gpal.files import atomic_output
from gpal.identity import digest
from gpal.registry import ACQUISITIONS, MODELS_PER_BATCH
from gpal.runs.executors import Executor
from gpal.runs.units import run_units
from gpal.workflows.curves import (ACQUISITIONS_SECTION, acquisition_config, acquisition_section, check_strategy_options,
                                   curves_in_lock_step)
from gpal.workflows.schema import Field, fields_from_settings

__all__ = [
    "check", "follow_up_unit", "load_labelled", "make_sets", "plot_follow_up_curves", "plot_paired_differences",
    "run", "schema",
]

#: How the held-out set is drawn (see `make_sets`).
TESTS = ("faint", "stratified")
#: Strategy modifiers: ``+balance`` weights scores towards the target's class mix
#: (`gpal.active.Acquisition.class_weights`); ``+stochastic`` draws batches by power sampling.
MODIFIERS = ("balance", "stochastic")
#: Acquisitions whose ``seed`` the study draws per repetition (every strategy of a repetition shares the stream).
_SEEDED_PER_REPETITION = ("random",)

#: Per-step test metrics kept in ``curves.csv``; accuracy = 1 - the loop's error.
METRICS = ("nll", "accuracy", "ece")
_LABELS = {"nll": "held-out NLL", "accuracy": "held-out accuracy", "ece": "held-out ECE"}


def _data_fields() -> dict[str, Field]:
    """The main job's selection (`gpal.catalog_jobs.selection.CatalogSelection`), its classes spelled out as
    codes and merges, so this study uses what users run."""
    from gpal.catalog_jobs.selection import CatalogSelection

    classes, merge = CatalogSelection().class_groups()
    return fields_from_settings(CatalogSelection.settings(), classes=list(classes), merge=merge)


def schema() -> dict[str, Any]:
    from gpal.catalog_jobs.settings import main_job_estimator
    from gpal.estimators.settings import estimator_settings

    strategy = strategy_spec(ACQUISITIONS.names())
    return {
        "data": _data_fields(),
        "protocol": {
            "test": Field(OneOf(TESTS), "faint", "faint: test on a random half of the faint sources (the population "
                          "gpal classifies); stratified: a stratified test_size share of all"),
            "faint_quantile": Field(Real(0, 1, low_open=True, high_open=True), 0.25,
                                    "faint = Signif_Avg at or below this quantile of the labelled sources"),
            "test_size": Field(Real(0, 1, low_open=True, high_open=True), 0.3, "held-out fraction (test: stratified)"),
            "n_seed": Field(Integer(1), 15, "random seed set: sources labelled before any query (>= 1 per class)"),
        },
        "repetitions": Field(Integer(1), 10, "independent (test, seed, pool) draws (extends a run)", part_of_run=False),
        "strategies": Field(ListOf(strategy), ["entropy", "bald", "random"],
                            f"acquisitions, each optionally with modifiers +{' +'.join(MODIFIERS)}"),
        "baseline": Field(strategy, "random", "the strategy the others are compared with, paired by repetition"),
        "loop": {
            "batch_size": Field(Integer(1), 1, "sources observed per query"),
            "n_queries": Field(Integer(1), 30, "queries per curve"),
            "retrain_epochs": Field(Integer(0), 100, "epochs of each warm-started retraining after a query"),
            "models_per_batch": Field(Integer(1), MODELS_PER_BATCH, "curves run in lock step, each query's retrainings "
                                      "one batched fit (1: one curve at a time; same results up to rounding)",
                                      part_of_run=False),
        },
        # every acquisition's declared options, BALD's and EPIG's draws at the study's cost; EPIG's target
        # sources are drawn from the faint pool sources (test: faint) or the pool
        ACQUISITIONS_SECTION: acquisition_section({name: ("seed",) for name in _SEEDED_PER_REPETITION},
                                                  bald={"n_samples": 30}, epig={"n_samples": 50}),
        "report_at": Field(ListOf(Integer(1)), [20, 100], "budgets (sources observed) whose paired differences the "
                           "report gives with 95% intervals", part_of_run=False),
        # Exact inputs, not the main job's NIMGP: its population prior needs >= 80 labelled sources
        # and a campaign starts from n_seed (docs/active_learning.md, the simulated campaign on 4FGL-DR4).
        "training": fields_from_settings(
            estimator_settings(main_job_estimator(), ("input_noise", "likelihood", "epochs", "learning_rate", "num_inducing",
                                                         "batch_size")),
            input_noise="none"),
    }


def strategy_spec(names: Sequence[str]) -> Parsed:
    """The constraint of a strategy written ``name`` or ``name+modifier+...`` (modifiers: `MODIFIERS`)."""
    def parse(value: Any) -> str:
        if not isinstance(value, str):
            raise ValueError(f"a strategy is a name such as 'entropy' or 'entropy+balance'; got {value!r}")
        name, *mods = value.split("+")
        if name not in names:
            raise ValueError(f"{name!r} is not valid; valid acquisitions are {list(names)}")
        unknown = [m for m in mods if m not in MODIFIERS]
        if unknown or len(set(mods)) != len(mods):
            raise ValueError(f"{value!r}: modifiers must be distinct ones of {list(MODIFIERS)}; got {mods}")
        return value

    return Parsed(parse, f"an acquisition of {list(names)}, optionally with modifiers +{' +'.join(MODIFIERS)}")


# ------------------------------------------------------------------ data
def load_labelled(data: Mapping[str, Any]) -> Any:
    """The associated sources of the modelled classes, as the main job selects them, with Signif_Avg in ``aux``."""
    from dataclasses import replace

    from gpal.catalog_jobs.selection import CatalogSelection

    catalog, labelled = CatalogSelection(**data).load()
    return replace(labelled, aux={**labelled.aux, "Signif_Avg": catalog.values_of("significance", labelled.ids)})


def _seeds(seed: int, rep: int) -> np.ndarray:
    """Four independent seeds of repetition ``rep``: test split, seed set, estimator, random strategy."""
    return np.random.SeedSequence([seed, rep]).generate_state(4) % (2**31 - 1)


def _faint_cut(data: Any, protocol: Mapping[str, Any]) -> float:
    """The Signif_Avg at or below which a source counts as faint."""
    return float(np.quantile(data.aux["Signif_Avg"], protocol["faint_quantile"]))


def make_sets(data: Any, seed: int, rep: int, protocol: Mapping[str, Any]) -> tuple[Any, Any, Any, Any]:
    """(seed set, pool, test, target) of repetition ``rep``, the same for every strategy.

    ``test: faint``: the test set is a random half of the faint sources (the population gpal
    classifies is fainter than the one it trains on); the other half stays in the pool and is
    the target EPIG values labels by.  ``test: stratified``: a stratified share of all
    sources, and the target is the pool (None).  The seed set holds one random source of
    each class, the rest drawn uniformly from the non-test sources, so a follow-up campaign
    starts knowing every class.
    """
    s = _seeds(seed, rep)
    if protocol["test"] == "faint":
        cut = _faint_cut(data, protocol)
        faint = np.flatnonzero(data.aux["Signif_Avg"] <= cut)
        in_test = np.zeros(data.n_samples, dtype=bool)
        in_test[np.random.default_rng(int(s[0])).permutation(faint)[: faint.size // 2]] = True
        rest, test = data.subset(np.flatnonzero(~in_test)), data.subset(np.flatnonzero(in_test))
    else:
        rest, test = data.split(protocol["test_size"], seed=int(s[0]), stratify=True)
    rng = np.random.default_rng(int(s[1]))
    one_each = np.array([rng.choice(np.flatnonzero(rest.y == c)) for c in range(rest.n_classes)])
    others = rng.permutation(np.setdiff1d(np.arange(rest.n_samples), one_each))[: protocol["n_seed"] - rest.n_classes]
    chosen = np.zeros(rest.n_samples, dtype=bool)
    chosen[np.concatenate([one_each, others])] = True
    pool = rest.subset(np.flatnonzero(~chosen))
    if protocol["test"] != "faint":
        return rest.subset(np.flatnonzero(chosen)), pool, test, None
    return rest.subset(np.flatnonzero(chosen)), pool, test, pool.subset(np.flatnonzero(pool.aux["Signif_Avg"] <= cut))


def acquisition_for(strategy: str, acquisitions: Mapping[str, Any], target: Any, random_seed: int) -> dict[str, Any]:
    """The acquisition config of a strategy ``name+modifier+...`` in a repetition: its options from the
    ``acquisitions`` section, its random streams seeded, EPIG valuing a label by the ``target`` sources.

    Returns
    -------
    dict
        The config `gpal.active.make_acquisition` takes.
    """
    name, *mods = strategy.split("+")
    seeded = {"seed": random_seed} if name in _SEEDED_PER_REPETITION else {}
    data = {"target": target} if name == "epig" else {}  # EPIG's target sources: data, not an option
    acquisition = acquisition_config(name, acquisitions, **seeded, **data)
    modifiers = {"balance": {"balance": True}, "stochastic": {"batch": "stochastic", "batch_seed": random_seed}}
    for m in mods:
        acquisition.update(modifiers[m])
    return acquisition


def check(config: Mapping[str, Any]) -> None:
    """What no single key can check: the baseline, the seed set and the budget against the data."""
    if config["baseline"] not in config["strategies"]:
        raise ValueError(f"baseline: {config['baseline']!r} is not among strategies {config['strategies']}")
    check_strategy_options([s.split("+")[0] for s in config["strategies"]], config[ACQUISITIONS_SECTION])
    n_classes, n_seed = len(config["data"]["classes"]), config["protocol"]["n_seed"]
    if n_seed < n_classes:
        raise ValueError(f"protocol.n_seed: {n_seed} is fewer than the {n_classes} classes; "
                         "the seed set needs at least one source per class")
    _estimator(config["training"], seed=0)  # bad combinations fail now
    data = load_labelled(config["data"])
    if config["protocol"]["test"] == "faint" and int(np.sum(data.aux["Signif_Avg"] <= _faint_cut(data, config["protocol"]))) < 2:
        raise ValueError(f"protocol.faint_quantile: {config['protocol']['faint_quantile']} leaves fewer than 2 faint "
                         f"sources of {data.n_samples}; raise it or use test: stratified")
    seed_set, pool, _, _ = make_sets(data, config["seed"], 0, config["protocol"])
    loop = config["loop"]
    if loop["n_queries"] * loop["batch_size"] > pool.n_samples:
        raise ValueError(
            f"loop: {loop['n_queries']} queries of {loop['batch_size']} source(s) need "
            f"{loop['n_queries'] * loop['batch_size']}, but the pool holds {pool.n_samples} "
            f"(after the test set and the {seed_set.n_samples}-source seed set); lower loop.n_queries or loop.batch_size"
        )


# ------------------------------------------------------------------ units
def _estimator(training: Mapping[str, Any], seed: int) -> Any:
    """The campaign's NoisyGPClassifier from the ``training`` block, its settings checked."""
    from gpal.estimators.noisy_gp import NoisyGPClassifier

    estimator = NoisyGPClassifier(**training, random_state=seed, progress=False)
    estimator.validate_params()
    return estimator


def _follow_up_loop(data: Any, strategy: str, seed: int, rep: int, protocol: Mapping[str, Any],
                    loop: Mapping[str, Any], acquisitions: Mapping[str, Any], training: Mapping[str, Any],
                    checkpoint: str) -> Any:
    """The checkpointed loop of one learning curve (``acquisitions``: the workflow's section of their options)."""
    from gpal.active import ActiveLearningLoop, SimulatedOracle

    s = _seeds(seed, rep)
    seed_set, pool, test, target = make_sets(data, seed, rep, protocol)
    estimator = _estimator(training, seed=int(s[2]))
    # Random draws come from the repetition's own stream, not the same positions every time.
    acquisition = acquisition_for(strategy, acquisitions, target, int(s[3]))
    return ActiveLearningLoop(
        estimator, seed_set, pool, SimulatedOracle(pool), test=test, acquisition=acquisition,
        batch_size=loop["batch_size"], n_queries=loop["n_queries"], retrain_epochs=loop["retrain_epochs"],
        checkpoint_dir=checkpoint, progress=False,
    )


def _curve(loop: Any, seconds: float) -> dict[str, Any]:
    """A finished curve's unit result: the sets it used and its metrics per step, read from its checkpoint."""
    from gpal.active.checkpoint import read_state

    state = read_state(loop.checkpoint_dir)
    labels = [label for q in state["queries"] for label in q["labels"]]
    return {
        "seed_ids": state["initial_ids"],
        "queried_classes": {c: labels.count(c) for c in loop.pool.class_names},
        "test_ids_sha256": digest("\n".join(loop.test.ids.tolist())),
        "queried": [q["ids"] for q in state["queries"]],
        "metrics": state["metrics"],
        "seconds": seconds,
    }


def follow_up_unit(data: Any, strategy: str, seed: int, rep: int, protocol: Mapping[str, Any],
                   loop: Mapping[str, Any], acquisitions: Mapping[str, Any], training: Mapping[str, Any],
                   checkpoint: str) -> dict[str, Any]:
    """One learning curve, resumed from ``checkpoint`` if it exists; the sets it used and its metrics per step."""
    start = time.perf_counter()
    curve = _follow_up_loop(data, strategy, seed, rep, protocol, loop, acquisitions, training, checkpoint)
    curve.run()
    return _curve(curve, time.perf_counter() - start)


def run(config: dict[str, Any], out: Path, executor: Executor, progress: bool) -> None:
    data = load_labelled(config["data"])
    units, keys = {}, {}
    for rep in range(config["repetitions"]):  # repetition-major: an interrupted run leaves whole pairs
        for strategy in config["strategies"]:
            name = f"{strategy}/rep_{rep:04d}"
            units[name] = (data, strategy, config["seed"], rep, config["protocol"], config["loop"],
                           config[ACQUISITIONS_SECTION], config["training"], str(out / "checkpoints" / name))
            keys[name] = (strategy, rep)
    per_batch = config["loop"]["models_per_batch"]
    batches = lambda todo: [(todo[first:first + per_batch], curves_in_lock_step,  # noqa: E731
                             ([units[name] for name in todo[first:first + per_batch]], _follow_up_loop, _curve))
                            for first in range(0, len(todo), per_batch)]
    results = run_units(executor, follow_up_unit, units, out, desc="follow-up curves", progress=progress,
                        batches=batches if per_batch > 1 else None)
    n_seed = config["protocol"]["n_seed"]
    curves = pd.DataFrame([
        {"strategy": s, "repetition": r, "n_observed": row["n_labelled"] - n_seed,
         "nll": row["nll"], "accuracy": 1.0 - row["error"], "ece": row["ece"]}
        for name, (s, r) in keys.items() for row in results[name]["metrics"]
    ])
    mix = pd.DataFrame([{"strategy": s, **results[name].get("queried_classes", {})} for name, (s, r) in keys.items()])
    _write(config, out, curves, mix)


# -------------------------------------------------------------- summaries
def _mix_table(mix: pd.DataFrame, strategies: list[str]) -> pd.DataFrame:
    """Per strategy: the share of each class among the sources it queried, over all repetitions."""
    totals = mix.groupby("strategy").sum(numeric_only=True)
    shares = totals.div(totals.sum(axis=1), axis=0)
    return pd.DataFrame([{"strategy": strategy_name(s), **{c: f"{shares.loc[s, c]:.0%}" for c in shares.columns}}
                         for s in strategies if s in shares.index])


def _curve_table(curves: pd.DataFrame, strategies: list[str]) -> pd.DataFrame:
    """Mean ± SE of each metric at the start and at the end of the budget, per strategy."""
    last = curves["n_observed"].max()
    rows = []
    for strategy in strategies:
        frame = curves[curves.strategy == strategy]
        row = {"strategy": strategy_name(strategy)}
        for metric in METRICS:
            for b in (0, last):
                row[f"{_LABELS[metric]}, {b} observed"] = format_mean_se(*mean_se(
                    frame.loc[frame.n_observed == b, metric].to_numpy()))
        rows.append(row)
    return pd.DataFrame(rows)


def _write(config: dict[str, Any], out: Path, curves: pd.DataFrame, mix: pd.DataFrame) -> None:
    from gpal.evaluation.plots import save_figure
    from gpal.evaluation.reports import write_report, write_table

    with atomic_output(out / "curves.csv") as tmp:
        curves.to_csv(tmp, index=False)
    strategies, baseline = config["strategies"], config["baseline"]
    reps = curves["repetition"].nunique()
    shown, data = difference_table(curves, strategies, baseline, {m: _LABELS[m] for m in ("nll", "accuracy")},
                                   budgets=config["report_at"])
    tables = {
        f"Held-out metrics, mean ± SE over {reps} repetitions": write_table(out / "curves_summary",
                                                                            _curve_table(curves, strategies)),
        f"Paired differences against {strategy_name(baseline)} over {reps} repetitions: mean [95% t-interval] at "
        "a few budgets, mean ± SE of the area "
        "(negative NLL / positive accuracy = the strategy is better)": write_table(out / "differences", shown, data=data),
        "Classes of the queried sources (share over all repetitions)": write_table(out / "queried_classes",
                                                                                  _mix_table(mix, strategies)),
    }
    figures = {
        "Learning curves": save_figure(plot_follow_up_curves(curves, strategies, baseline), out / "follow_up_curves"),
        "Paired differences": save_figure(plot_paired_differences(curves, strategies, baseline),
                                          out / "follow_up_differences"),
    }
    p, loop = config["protocol"], config["loop"]
    text = "\n".join([
        config["description"] or "", "",
        f"{reps} repetition(s); test set: "
        + (f"a random half of the sources with Signif_Avg in the lowest {p['faint_quantile']:.0%}, the other half "
           "in the pool and EPIG's target; " if p["test"] == "faint" else f"a stratified {p['test_size']:.0%}; ")
        + f"seed set {p['n_seed']} sources; "
        f"{loop['n_queries']} queries of {loop['batch_size']} source(s), {loop['retrain_epochs']} warm-started "
        f"epochs after each; every step of every curve in `curves.csv`.  The area is the metric averaged over the "
        f"budget (trapezoid); its interval is mean ± t(0.975, R-1) · SE of the per-repetition differences.",
    ])
    write_report(out, config["title"], figures=figures, tables=tables, text=text)


# ----------------------------------------------------------------- figures
def plot_follow_up_curves(curves: pd.DataFrame, strategies: Sequence[str], baseline: str) -> Any:
    """One panel per metric: mean over repetitions against sources observed, SE as bars at a few budgets."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(3.3 * len(METRICS), 3.2), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, len(METRICS))
    for ax, metric in zip(axes, METRICS):
        draw_strategy_curves(ax, curves, strategies, baseline, metric)
        ax.set(xlabel="sources observed", ylabel=_LABELS[metric])
    axes[0].legend(fontsize=8, frameon=False)
    reps = curves["repetition"].nunique()
    fig.suptitle(f"Simulated follow-up: mean ± SE over {reps} repetitions", fontsize=10)
    return fig


def plot_paired_differences(curves: pd.DataFrame, strategies: Sequence[str], baseline: str) -> Any:
    """Small multiples: rows NLL and accuracy, one column per strategy; (strategy - baseline) ± SE against budget."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    others = [s for s in strategies if s != baseline]
    metrics = ("nll", "accuracy")
    fig = Figure(figsize=(3.4 * len(others), 2.6 * len(metrics)), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(len(metrics), len(others), sharex=True, sharey="row", squeeze=False)
    for i, metric in enumerate(metrics):
        for j, strategy in enumerate(others):
            ax = axes[i, j]
            draw_differences(ax, curves, [strategy], baseline, metric)
            better = "higher is better" if higher_is_better(metric) else "lower is better"
            ax.set_ylabel(f"Δ {_LABELS[metric]}\n({better})" if j == 0 else "")
            if i == 0:
                ax.set_title(f"{strategy_name(strategy)} − {strategy_name(baseline)}", fontsize=10)
            if i == len(metrics) - 1:
                ax.set_xlabel("sources observed")
    reps = curves["repetition"].nunique()
    fig.suptitle(f"Paired differences, mean ± SE over {reps} repetitions", fontsize=10)
    return fig

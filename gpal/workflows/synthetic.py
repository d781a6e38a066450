"""Workflow kind ``synthetic_2d``: the 2-D GP-prior problems of the noisy-input GP paper (sec. 5.2, Tables 2-3).

Repetition r draws its own problem (`gpal.data.synthetic.synthetic_2d`, three classes,
inputs in [-2.5, 2.5]^2) and observes it at every noise level.  Each method is
trained with the injected variance given (``known``) and learned from the data
(``learned``); MGP ignores input noise, so it is trained once per (r, level) and
shown in both rows.  The Bayes-optimal predictive of each (r, level) is a unit too.
Units: ``units/rep_0003/noise_0.25/{Bayes,MGP,known/NIMGP,learned/NIMGP,...}.json``.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from gpal.constraints import Integer, ListOf, OneOf, Real
from gpal.estimators.base import raise_if_interrupted
from gpal.estimators.noisy_gp import NoisyGPClassifier
from gpal.evaluation.metrics import error_rate, format_mean_se, negative_log_likelihood
from gpal.files import atomic_output
from gpal.registry import NOISE_VARIANCE_MODES
from gpal.runs.executors import Executor
from gpal.runs.units import derived_seed, run_units
from gpal.workflows.methods import (classifier_params, method_options_field, method_training, methods_field,
                                   noisy_input_method_options, training_schema)
from gpal.workflows.measurements import Produced, write_measurements
from gpal.workflows.schema import Field

__all__ = ["bayes_unit", "check", "method_unit", "produces", "repetition_problem", "run", "schema"]

#: The paper's two: the injected variance given to the methods, or learned by them.
_PAPER_MODES = ["known", "learned"]
_MAX_DRAWS = 100
_MODE = OneOf(NOISE_VARIANCE_MODES)


def schema() -> dict[str, Any]:
    return {
        "data": {
            "n_train": Field(Integer(1), 1000, "training points per problem"),
            "n_test": Field(Integer(1), 1000, "test points per problem"),
            "noise_levels": Field(ListOf(Real(0, low_open=True)), [0.1, 0.25, 0.5], "input-noise variances"),
            "variance": Field(Real(0, low_open=True), 0.5, "GP-prior amplitude of the latent functions"),
            "lengthscale": Field(Real(0, low_open=True), float(np.sqrt(2.0)), "GP-prior length scale"),
            "bayes_cells": Field(Integer(10), 400, "quadrature cells per axis of the Bayes-optimal predictive"),
        },
        "repetitions": Field(Integer(1), 100, "problems drawn (the paper: 100)", part_of_run=False),
        "noise_variance": Field(ListOf(_MODE), list(_PAPER_MODES),
                                "input-noise variance given to the methods (known), learned, or both"),
        "methods": methods_field(),
        "training": {k: f for k, f in training_schema(num_inducing=100, batch_size=200).items() if k != "noise_variance"},
        "method_options": method_options_field("training"),
    }


def check(config: dict[str, Any]) -> None:
    """Refuse ``method_options`` a method cannot take, naming the workflow, when the file is loaded."""
    try:
        noisy_input_method_options(config["method_options"], config["methods"], config["training"], "training")
    except ValueError as err:
        raise ValueError(f"{err} (the workflow of {config['title'] or 'this workflow'})") from None


def _setting(mode: str, noise: float) -> str:
    """The measurements' name of one row of Tables 2-3: the noise mode and the injected variance."""
    return f"{mode}/{noise:g}"


def produces(config: dict[str, Any]) -> Produced:
    settings = [_setting(mode, level) for mode in config["noise_variance"] for level in config["data"]["noise_levels"]]
    return Produced(settings, ["Bayes", *config["methods"]], ["nll", "error", "learned_variance"])


def _problem(kwargs: dict[str, Any]) -> Any:
    from gpal.data.synthetic import synthetic_2d

    return synthetic_2d(**kwargs)


def _problem_seed(seed: int, rep: int, data: dict[str, Any]) -> int:
    """The first seed of repetition ``rep``'s stream whose draw has every class in its train and test sets.

    A GP draw leaves a class without any region about one time in ten; the paper's
    problems all have three classes.  The latent draw does not depend on the noise level.
    """
    stream = np.random.SeedSequence([seed, rep]).generate_state(_MAX_DRAWS)
    for candidate in stream:
        problem = _problem(_kwargs(data, int(candidate), data["noise_levels"][0]))
        if all(len(np.unique(ds.y)) == 3 for ds in (problem.train, problem.test)):
            return int(candidate)
    raise RuntimeError(f"no 3-class problem in {_MAX_DRAWS} draws for repetition {rep}; check data.variance/lengthscale")


def _kwargs(data: dict[str, Any], problem_seed: int, noise: float) -> dict[str, Any]:
    return {"n_train": data["n_train"], "n_test": data["n_test"], "noise_variance": noise, "seed": problem_seed,
            "variance": data["variance"], "lengthscale": data["lengthscale"]}


def repetition_problem(data: dict[str, Any], seed: int, rep: int, noise: float) -> Any:
    """The problem of repetition ``rep`` at injected noise ``noise`` that a workflow with this ``data`` block and
    ``seed`` runs: the same draw, for a question the workflow does not ask of it (another length scale's Bayes error)."""
    return _problem(_kwargs(data, _problem_seed(seed, rep, data), noise))


def bayes_unit(problem: dict[str, Any], n_cells: int) -> dict[str, Any]:
    """Test NLL and error of the Bayes-optimal predictive of one problem."""
    p = _problem(problem)
    proba = p.bayes_proba(p.test.X, n_cells=n_cells)
    return {"nll": negative_log_likelihood(p.test.y, proba), "error": error_rate(p.test.y, proba)}


def method_unit(params: dict[str, Any], problem: dict[str, Any]) -> dict[str, Any]:
    """Train one classifier on one problem; test NLL, error and the learned input-noise variance (input units)."""
    p = _problem(problem)
    clf = NoisyGPClassifier(**params)
    start = time.perf_counter()
    clf.fit(p.train)
    raise_if_interrupted(clf)
    seconds = time.perf_counter() - start
    proba = clf.predict_proba(p.test)
    noise = clf.model_.noise_variance
    learned = None
    if noise is not None and noise.mode != "known":
        scale = 1.0 if clf.standardizer_ is None else clf.standardizer_.scale
        learned = (np.asarray(noise.learned.numpy()) * scale**2).tolist()
    return {"nll": negative_log_likelihood(p.test.y, proba), "error": error_rate(p.test.y, proba),
            "train_seconds": seconds, "learned_variance": learned}


def run(config: dict[str, Any], out: Path, executor: Executor, progress: bool) -> None:
    data, seed = config["data"], config["seed"]
    reps = range(config["repetitions"])
    problem_seeds = {r: _problem_seed(seed, r, data) for r in reps}
    bayes: dict[str, tuple] = {}
    fits: dict[str, tuple] = {}
    rows: list[tuple] = []  # (unit name, repetition, noise, mode, method)
    for r in reps:
        for noise in data["noise_levels"]:
            problem = _kwargs(data, problem_seeds[r], noise)
            folder = f"rep_{r:04d}/noise_{noise:g}"
            bayes[f"{folder}/Bayes"] = (problem, data["bayes_cells"])
            rows += [(f"{folder}/Bayes", r, noise, mode, "Bayes") for mode in config["noise_variance"]]
            for mode in config["noise_variance"]:
                for method in config["methods"]:
                    training = {**method_training(method, config["training"], config["method_options"]), "noise_variance": mode}
                    params = classifier_params([method], training, data["n_train"])[method]
                    shared = params["input_noise"] == "none"
                    name = f"{folder}/{method}" if shared else f"{folder}/{mode}/{method}"
                    fits[name] = ({**params, "random_state": derived_seed(seed, r, 1)}, problem)
                    rows.append((name, r, noise, mode, method))
    results = {**run_units(executor, bayes_unit, bayes, out, desc="Bayes-optimal", progress=progress),
               **run_units(executor, method_unit, fits, out, desc="fits", progress=progress)}
    frame = pd.DataFrame([
        {"repetition": r, "noise": noise, "mode": mode, "method": method, "problem_seed": problem_seeds[r],
         "nll": results[name]["nll"], "error": results[name]["error"],
         "learned_variance": np.mean(results[name]["learned_variance"])
         if results[name].get("learned_variance") else np.nan}
        for name, r, noise, mode, method in rows
    ])
    _write(config, out, frame)


def _write(config: dict[str, Any], out: Path, frame: pd.DataFrame) -> None:
    from gpal.evaluation.plots import save_figure
    from gpal.evaluation.reports import metric_summary, write_report, write_table

    with atomic_output(out / "results.csv") as tmp:
        frame.to_csv(tmp, index=False)
    summary = metric_summary(frame, ["nll", "error"], by=["mode", "noise", "method"])
    methods = ["Bayes", *config["methods"]]
    tables = {}
    for metric, label in (("nll", "Test NLL (Table 2)"), ("error", "Test error (Table 3)")):
        shown = []
        for (mode, noise), _ in summary.groupby(level=["mode", "noise"], sort=False):
            row = {"noise var.": mode, "level": f"{noise:g}"}
            for m in methods:
                s = summary.loc[(mode, noise, m)]
                row[m] = format_mean_se(s[f"{metric}_mean"], s[f"{metric}_se"])
            shown.append(row)
        tables[f"{label}, mean ± SE over {config['repetitions']} problems"] = write_table(
            out / f"table_{metric}", pd.DataFrame(shown), data=summary.reset_index())
    figures = {"Test NLL against input-noise variance": save_figure(_plot_nll(summary, methods), out / "nll")}
    learned = frame.dropna(subset=["learned_variance"])
    if not learned.empty:
        figures["Learned input-noise variance (paper Fig. 4)"] = save_figure(_plot_learned(learned), out / "learned_variance")
    measured = {(_setting(mode, noise), method, metric): list(part[metric].dropna())
                for (mode, noise, method), part in frame.groupby(["mode", "noise", "method"], sort=False)
                for metric in ("nll", "error", "learned_variance")}
    write_measurements(out, config, produces(config), measured, {"repeats": config["repetitions"],
                                                          "epochs": config["training"]["epochs"],
                                                          "n_samples": config["training"]["n_samples"]})
    text = "\n".join([
        config["description"] or "", "",
        f"{config['repetitions']} problems (`gpal.data.synthetic.synthetic_2d`, seed {config['seed']}), noise levels "
        f"{config['data']['noise_levels']}; one row per unit in `results.csv`. MGP ignores the input noise, "
        "so its known and learned rows are the same fits.",
    ])
    write_report(out, config["title"], figures=figures, tables=tables, text=text)


def _plot_nll(summary: pd.DataFrame, methods: list[str]) -> Any:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    modes = list(dict.fromkeys(summary.index.get_level_values("mode")))
    fig = Figure(figsize=(4.2 * len(modes), 3.4), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, len(modes), sharey=True, squeeze=False)[0]
    for ax, mode in zip(axes, modes):
        part = summary.xs(mode, level="mode")
        for k, m in enumerate(methods):
            s = part.xs(m, level="method")
            ax.errorbar(s.index, s["nll_mean"], yerr=np.nan_to_num(s["nll_se"]), marker="o", capsize=3,
                        color="k" if m == "Bayes" else f"C{k}", ls="--" if m == "Bayes" else "-", label=m)
        ax.set(title=f"noise variance {mode}", xlabel="injected input-noise variance")
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("test NLL (mean ± SE)")
    axes[0].legend(fontsize=8)
    return fig


def _plot_learned(learned: pd.DataFrame) -> Any:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    noises = sorted(learned["noise"].unique())
    fig = Figure(figsize=(3.6 * len(noises), 3.2), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, len(noises), squeeze=False)[0]
    for ax, noise in zip(axes, noises):
        part = learned[learned["noise"] == noise]
        for k, (m, values) in enumerate(part.groupby("method", sort=False)["learned_variance"]):
            ax.hist(values, bins=20, alpha=0.6, label=m, color=f"C{k + 1}")
        ax.axvline(noise, color="k", ls="--", lw=1)
        ax.set(title=f"injected variance {noise:g}", xlabel="learned variance (mean over features)")
    axes[0].set_ylabel("problems")
    axes[0].legend(fontsize=8)
    return fig

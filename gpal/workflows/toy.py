"""Workflow kind ``toy_1d``: the 1-D GP-prior toy of the noisy-input GP paper (sec. 5.1, Table 1, Fig. 2).

Each method is one unit: it is trained on `gpal.data.synthetic.toy_1d` and predicts the
test points and a grid over the input range.  The driver compares every predictive
with the exact Bayes-optimal one: test NLL, error and the mean KL(Bayes || model),
and draws Fig. 2 (each method's class probabilities against x, Bayes dashed).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from gpal.constraints import Integer, Real
from gpal.estimators.base import raise_if_interrupted
from gpal.estimators.noisy_gp import NoisyGPClassifier
from gpal.evaluation.metrics import error_rate, negative_log_likelihood
from gpal.files import write_json_atomic
from gpal.runs.executors import Executor
from gpal.runs.units import run_units
from gpal.workflows.methods import classifier_params, methods_field, training_schema
from gpal.workflows.measurements import Produced, write_measurements
from gpal.workflows.schema import Field

__all__ = ["fit_predict", "kl_from_bayes", "produces", "run", "schema"]


def schema() -> dict[str, Any]:
    return {
        "data": {
            "n_train": Field(Integer(1), 1000, "training points"),
            "n_test": Field(Integer(1), 1000, "test points"),
            "noise_std": Field(Real(0), 0.1, "standard deviation of the input noise (known to every method)"),
            "variance": Field(Real(0, low_open=True), 1.0, "GP-prior amplitude of the latent functions"),
            "lengthscale": Field(Real(0, low_open=True), 0.75, "GP-prior length scale"),
        },
        "methods": methods_field(),
        "training": training_schema(num_inducing=100, batch_size=200),
        "plot": {"grid_points": Field(Integer(2), 400, "points of the x grid of Fig. 2")},
    }


#: The one setting of Table 1, as the measurements name it.
SETTING = "toy_1d"


def produces(config: dict[str, Any]) -> Produced:
    return Produced([SETTING], ["Bayes-optimal", *config["methods"]], ["nll", "error", "kl"])


def kl_from_bayes(bayes: np.ndarray, proba: np.ndarray) -> float:
    """Mean over points of KL(p_Bayes || p_model), in nats."""
    p = np.clip(bayes, 1e-300, 1.0)
    q = np.clip(proba, 1e-300, 1.0)
    return float(np.mean(np.sum(np.where(bayes > 0, bayes * (np.log(p) - np.log(q)), 0.0), axis=1)))


def fit_predict(params: dict[str, Any], train: Any, test: Any, grid: np.ndarray, noise_var: float) -> dict[str, Any]:
    """One unit: fit a NoisyGPClassifier, predict the test set and the grid (observed with the same noise)."""
    clf = NoisyGPClassifier(**params)
    start = time.perf_counter()
    clf.fit(train)
    raise_if_interrupted(clf)
    proba = clf.predict_proba(test)
    seconds = time.perf_counter() - start
    grid_proba = clf.predict_proba(grid, X_var=np.full_like(grid, noise_var))
    return {"proba": proba.tolist(), "grid_proba": grid_proba.tolist(), "seconds": seconds}


def run(config: dict[str, Any], out: Path, executor: Executor, progress: bool) -> None:
    from gpal.data.synthetic import toy_1d

    d = config["data"]
    problem = toy_1d(d["n_train"], d["n_test"], d["noise_std"], seed=config["seed"],
                     variance=d["variance"], lengthscale=d["lengthscale"])
    train, test = problem.train, problem.test
    grid = np.linspace(-3.0, 3.0, config["plot"]["grid_points"])[:, None]
    params = classifier_params(config["methods"], config["training"], train.n_samples)
    units = {m: ({**p, "random_state": config["seed"]}, train, test, grid, d["noise_std"] ** 2) for m, p in params.items()}
    results = run_units(executor, fit_predict, units, out, desc="methods", progress=progress)

    bayes = problem.bayes_proba(test.X)
    rows = [{"predictive": "Bayes-optimal", "nll": negative_log_likelihood(test.y, bayes),
             "error": error_rate(test.y, bayes), "kl": 0.0, "seconds": float("nan")}]
    for name, r in results.items():
        proba = np.asarray(r["proba"])
        rows.append({"predictive": name, "nll": negative_log_likelihood(test.y, proba), "error": error_rate(test.y, proba),
                     "kl": kl_from_bayes(bayes, proba), "seconds": r["seconds"]})
    frame = pd.DataFrame(rows)
    _write(config, out, frame, problem, grid, {m: np.asarray(r["grid_proba"]) for m, r in results.items()})


def _write(config: dict[str, Any], out: Path, frame: pd.DataFrame, problem: Any, grid: np.ndarray,
           grid_proba: dict[str, np.ndarray]) -> None:
    from gpal.evaluation.plots import save_figure
    from gpal.evaluation.reports import write_report, write_table

    records = [{k: None if isinstance(v, float) and np.isnan(v) else v for k, v in row.items()}
               for row in frame.to_dict(orient="records")]
    write_json_atomic(out / "results.json", {"results": records, "problem": dict(problem.params)})
    shown = pd.DataFrame({
        "predictive": frame["predictive"],
        "test NLL": frame["nll"].map(lambda v: f"{v:.3f}"),
        "test error": frame["error"].map(lambda v: f"{v:.3f}"),
        "KL(Bayes ‖ model)": frame["kl"].map(lambda v: f"{v:.3f}"),
    })
    tables = {"Test NLL, error and distance from the Bayes-optimal predictive": write_table(
        out / "results", shown, data=frame)}
    fig = plot_toy_predictives(grid[:, 0], problem.bayes_proba(grid), grid_proba, problem.train)
    figures = {"Predictive probabilities against x (Bayes-optimal dashed)": save_figure(fig, out / "predictive")}
    d = config["data"]
    measured = {(SETTING, row["predictive"], metric): [row[metric]]
                for row in frame.to_dict(orient="records") for metric in ("nll", "error", "kl")}
    write_measurements(out, config, produces(config), measured, {"repeats": 1, "epochs": config["training"]["epochs"]})
    text = "\n".join([
        config["description"] or "", "",
        f"`gpal.data.synthetic.toy_1d(n_train={d['n_train']}, n_test={d['n_test']}, noise_std={d['noise_std']:g}, "
        f"seed={config['seed']})`; every method trained with the settings in `workflow.json`.",
    ])
    write_report(out, config["title"], figures=figures, tables=tables, text=text)


def plot_toy_predictives(x: np.ndarray, bayes: np.ndarray, predictives: dict[str, np.ndarray], train: Any) -> Any:
    """Fig. 2: one panel per method, p(class | x) solid, the Bayes-optimal predictive dashed, labels as ticks."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    n = len(predictives)
    cols = min(n, 2)
    rows = (n + cols - 1) // cols
    fig = Figure(figsize=(5.0 * cols, 3.2 * rows), layout="constrained")
    FigureCanvasAgg(fig)
    axes = np.atleast_1d(fig.subplots(rows, cols, sharex=True, sharey=True, squeeze=False)).ravel()
    for ax, (name, proba) in zip(axes, predictives.items()):
        for c in range(bayes.shape[1]):
            ax.plot(x, proba[:, c], color=f"C{c}", lw=1.5, label=f"{train.class_names[c]}")
            ax.plot(x, bayes[:, c], color=f"C{c}", lw=1.0, ls="--")
            ticks = train.X[train.y == c, 0]
            ax.plot(ticks, np.full_like(ticks, 1.05), "|", color=f"C{c}", ms=6, alpha=0.5)
        ax.set(title=name, ylim=(-0.02, 1.1), xlabel="observed x", ylabel="p(class | x)")
        ax.grid(alpha=0.3)
    for ax in axes[n:]:
        ax.set_visible(False)
    axes[0].plot([], [], color="k", lw=1.0, ls="--", label="Bayes-optimal")
    axes[0].legend(fontsize=8, loc="center left")
    return fig

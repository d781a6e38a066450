"""The main job's report: metrics, the comparison with baselines, tables, figures and ``report.md``.

Everything is rebuilt from the files of a finished `classify_catalog` folder, so a
report can be remade (``gpal report``) without refitting anything.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from gpal.catalog_jobs.model_folders import TRAINING_FILE
from gpal.catalog_jobs.tables import read_probability_table
from gpal.runs.persistence import write_json_atomic

__all__ = ["write_classify_report"]


#: The main job's folder: what `classify_catalog` writes and the report reads.
HELDOUT_FILE = "heldout.csv"
BASELINES_FILE = "heldout_baselines.csv"
SIGNIFICANCE_COLUMN = "Signif_Avg"
MODEL_NAME = "gpal"


def _comparison(folder: Path, held: pd.DataFrame, classes: Sequence[str], model_name: str) -> pd.DataFrame | None:
    """Paired bootstrap comparison of the model with the baselines on the held-out rows (None without baselines)."""
    from gpal.evaluation.comparison import bootstrap_comparison

    path = folder / BASELINES_FILE
    base = pd.read_csv(path, dtype={"Source_Name": str, "true_class": str}) if path.is_file() else pd.DataFrame()
    if base.empty:
        return None
    y = np.array([classes.index(c) for c in held["true_class"]], dtype=np.int64)
    columns = [f"p_{c}" for c in classes]
    probas = {model_name: held[columns].to_numpy()}
    for name, rows in base.groupby("model", sort=False):
        rows = rows.set_index("Source_Name").loc[held["Source_Name"]]
        probas[str(name)] = rows[columns].to_numpy()
    return bootstrap_comparison(y, probas, reference=model_name, n_boot=2000, random_state=0)


def _comparison_table(comparison: pd.DataFrame) -> pd.DataFrame:
    """One row per model and metric: value [95% interval] and the paired difference [interval]."""
    def interval(low: float, high: float) -> str:
        return f"[{low:.3f}, {high:.3f}]"

    return pd.DataFrame({
        "model": comparison["model"], "metric": comparison["metric"], "value": comparison["value"].round(4),
        "95% interval": [interval(a, b) for a, b in zip(comparison["low"], comparison["high"])],
        "diff": comparison["diff"].round(4),
        "diff 95% interval": [interval(a, b) for a, b in zip(comparison["diff_low"], comparison["diff_high"])],
    })


def _faintest_quarter(folder: Path, held: pd.DataFrame, classes: Sequence[str]) -> dict[str, Any] | None:
    """NLL and accuracy of the model and each baseline on the held-out quarter of lowest significance.

    The faintest sources have the largest error bars: where a model that uses them should gain most.
    """
    from gpal.evaluation.metrics import error_rate, negative_log_likelihood

    if SIGNIFICANCE_COLUMN not in held or not np.isfinite(held[SIGNIFICANCE_COLUMN]).all():
        return None
    cut = float(np.quantile(held[SIGNIFICANCE_COLUMN], 0.25))
    faint = held[held[SIGNIFICANCE_COLUMN] <= cut]
    columns = [f"p_{c}" for c in classes]
    y = np.array([classes.index(c) for c in faint["true_class"]], dtype=np.int64)
    probas = {MODEL_NAME: faint[columns].to_numpy()}
    path = folder / BASELINES_FILE
    base = pd.read_csv(path, dtype={"Source_Name": str, "true_class": str}) if path.is_file() else pd.DataFrame()
    for name, rows in (base.groupby("model", sort=False) if not base.empty else []):
        probas[str(name)] = rows.set_index("Source_Name").loc[faint["Source_Name"], columns].to_numpy()
    return {"max_significance": cut, "n": int(y.size),
            "models": {name: {"nll": negative_log_likelihood(y, p), "accuracy": 1.0 - error_rate(y, p)}
                       for name, p in probas.items()}}


def _population_shift(frame: pd.DataFrame, classes: Sequence[str], n_per_class: Mapping[str, int]) -> dict[str, Any] | None:
    """The class prior of the classified sources, re-estimated by EM under label shift (a diagnostic)."""
    from gpal.evaluation.prior_shift import estimate_target_prior

    counts = np.array([float(n_per_class.get(c, 0)) for c in classes])
    if len(frame) == 0 or counts.min() <= 0:
        return None
    source = counts / counts.sum()
    result = estimate_target_prior(frame[[f"p_{c}" for c in classes]].to_numpy(), source)
    adjusted = np.asarray(classes, dtype=object)[result.proba.argmax(axis=1)]
    return {"training_prior": dict(zip(classes, source.round(4).tolist())),
            "estimated_prior": dict(zip(classes, np.round(result.prior, 4).tolist())),
            "n_iter": int(result.n_iter), "converged": bool(result.converged),
            "predicted_after_adjustment": {c: int((adjusted == c).sum()) for c in classes}}


def _counts_table(frame: pd.DataFrame, classes: Sequence[str]) -> pd.DataFrame:
    """Predicted class (rows) against the catalog's CLASS1 (case-folded) of the classified sources (columns)."""
    kinds = frame["CLASS1"].str.lower().replace("", "unassociated")
    rows = []
    for name in classes:
        mine = frame["predicted_class"] == name
        row: dict[str, Any] = {"predicted": name}
        for kind in sorted(kinds.unique()):
            row[kind] = int((mine & (kinds == kind)).sum())
        row["total"] = int(mine.sum())
        rows.append(row)
    return pd.DataFrame(rows)


def write_classify_report(folder: str | os.PathLike) -> Path:
    """(Re)build ``metrics.json``, the tables, figures and ``report.md`` of a `classify_catalog` folder from its files."""
    from gpal.evaluation.calibration import top_label_reliability
    from gpal.evaluation.metrics import confusion_matrix
    from gpal.evaluation.plots import plot_confusion_matrix, plot_reliability, plot_sky_classes, plot_sky_values, save_figure
    from gpal.evaluation.reports import prediction_metrics, write_report, write_table

    folder = Path(folder)
    needed = [folder / TRAINING_FILE, folder / HELDOUT_FILE, folder / "classifications.csv"]
    missing = [p.name for p in needed if not p.is_file()]
    if missing:
        raise FileNotFoundError(f"{folder} is not a finished gpal classify folder: {missing} missing; rerun gpal classify")
    training = json.loads((folder / TRAINING_FILE).read_text(encoding="utf-8"))
    held = pd.read_csv(folder / HELDOUT_FILE, dtype={"Source_Name": str, "true_class": str})
    classes = [c[2:] for c in held.columns if c.startswith("p_")]
    y = np.array([classes.index(c) for c in held["true_class"]], dtype=np.int64)
    proba = held[[f"p_{c}" for c in classes]].to_numpy()
    n_bins = 15
    scores = prediction_metrics(y, proba, n_bins=n_bins)
    conf = confusion_matrix(y, proba, len(classes))
    table = read_probability_table(folder / "classifications.csv")
    frame = table.frame
    comparison = _comparison(folder, held, classes, MODEL_NAME)
    faint = _faintest_quarter(folder, held, classes)
    shift = _population_shift(frame, classes, training.get("n_per_class", {}))

    metrics = {
        "heldout": {"n": int(y.size), "accuracy": 1.0 - scores["error"], **scores, "n_bins": n_bins,
                    "confusion": conf.tolist(), "confusion_rows": "predicted", "classes": classes},
        "trained_on": training.get("n_per_class"),
        "fit_seconds": training.get("fit_seconds"),
        "classified": {"n": int(len(frame)), "predicted": frame["predicted_class"].value_counts().to_dict(),
                       "mean_entropy": float(frame["entropy"].mean())},
        "comparison": None if comparison is None else comparison.to_dict(orient="records"),
        "faintest_quarter": faint,
        "population_shift": shift,
        "dropped": {"labelled": training.get("dropped", {}),
                    "classified": [n for n in table.meta.get("DROPPED", "").split(",") if n]},
    }
    write_json_atomic(folder / "metrics.json", metrics)

    figures = {}
    fig = plot_confusion_matrix(conf, classes, title=f"held-out confusion matrix ({y.size} sources)")
    figures["Held-out confusion matrix (rows = predicted class, columns = true class)"] = save_figure(fig, folder / "confusion_matrix")
    fig = plot_reliability(top_label_reliability(y, proba, n_bins=n_bins), title="held-out reliability (top label)")
    figures["Held-out reliability diagram"] = save_figure(fig, folder / "reliability")
    sky = frame[np.isfinite(frame["GLON"]) & np.isfinite(frame["GLAT"])]
    if len(sky):
        codes = np.array([classes.index(c) for c in sky["predicted_class"]], dtype=np.int64)
        fig = plot_sky_classes(sky["GLON"].to_numpy(), sky["GLAT"].to_numpy(), codes, classes,
                               title=f"predicted class of {len(sky)} {table.meta.get('SELECT', '').replace(',', ' + ')} sources")
        figures["Sky map of the predicted classes"] = save_figure(fig, folder / "sky_classes")
        fig = plot_sky_values(sky["GLON"].to_numpy(), sky["GLAT"].to_numpy(), sky["entropy"].to_numpy(),
                              vmin=0.0, vmax=float(np.log(len(classes))), title="predictive entropy (nats)")
        figures["Sky map of the predictive entropy (high = uncertain)"] = save_figure(fig, folder / "sky_entropy")

    h = metrics["heldout"]
    metric_frame = pd.DataFrame([{"n": h["n"], "accuracy": round(h["accuracy"], 4), "nll": round(h["nll"], 4),
                                  "brier": round(h["brier"], 4), "ece": round(h["ece"], 4),
                                  "classwise_ece": round(h["classwise_ece"], 4)}])
    counts = _counts_table(frame, classes)
    uncertain = frame.nlargest(10, "entropy")[["Source_Name", "CLASS1", *[f"p_{c}" for c in classes], "entropy"]].round(3)
    tables = {
        "Held-out metrics": write_table(folder / "heldout_metrics", metric_frame),
        **({} if comparison is None else {
            "Held-out comparison with the baselines (same split and features; 95% paired bootstrap intervals, "
            f"2000 resamples; diff = model - {MODEL_NAME}, so diff > 0 means {MODEL_NAME} is better on NLL, ECE "
            "and Brier, worse on accuracy)": write_table(folder / "heldout_comparison", _comparison_table(comparison))}),
        "Classified sources: predicted class by catalog CLASS1": write_table(folder / "predicted_counts", counts),
        "The ten most uncertain classified sources (first candidates for follow-up)":
            write_table(folder / "most_uncertain", uncertain),
    }
    est = training["estimator"]["params"]
    cat = training["catalog"]
    dropped_lab = training.get("dropped", {})
    dropped_pool = metrics["dropped"]["classified"]
    lines = [
        f"Catalog **{table.meta.get('CATALOG')}** ({table.meta.get('CATFILE')}, version {table.meta.get('CATVER')}). "
        f"Classes `{training.get('class_spec')}`; features {', '.join(f'`{f}`' for f in training['feature_names'])}"
        + (", with their catalog error bars as input noise." if est.get("input_noise") != "none" else
           " (the catalog error bars are not used by this model: input_noise `none`)."),
        "",
        f"Model: `{training['estimator']['class']}` with input_noise=`{est.get('input_noise')}`, "
        f"likelihood=`{est.get('likelihood')}`, {est.get('epochs')} epochs, {est.get('num_inducing')} inducing points, "
        f"batch size {est.get('batch_size')}, seed {est.get('seed')}; trained in {training.get('fit_seconds')} s on the "
        f"{training.get('trained_on')} ({', '.join(f'{k} {v}' for k, v in training['n_per_class'].items())}).",
        "",
        f"**Held-out check** ({h['n']} sources never seen in training): accuracy {h['accuracy']:.3f}, "
        f"NLL {h['nll']:.3f} nats, Brier {h['brier']:.3f}, ECE {h['ece']:.3f} ({n_bins} equal-width bins). "
        "The model checked here is the model that classified the sources below (no refit on all labels), "
        "so these numbers describe the table.",
        "",
        *([] if faint is None else [
            f"**Faintest quarter** of the held-out sources (Signif_Avg <= {faint['max_significance']:.1f}, "
            f"{faint['n']} sources, where the error bars are largest): "
            + "; ".join(f"{name} NLL {m['nll']:.3f}, accuracy {m['accuracy']:.3f}" for name, m in faint["models"].items())
            + ".", ""]),
        *([] if shift is None else [
            "**Population shift**: the classified sources are fainter than the training sources and need not share "
            "their class proportions. Under a pure label shift (same p(features | class)), EM re-estimates their "
            "class prior as " + ", ".join(f"{c} {v:.3f}" for c, v in shift["estimated_prior"].items())
            + " (training: " + ", ".join(f"{c} {v:.3f}" for c, v in shift["training_prior"].items())
            + "). The table keeps the unadjusted probabilities; `gpal.evaluation.prior_shift.adjust_to_prior` applies the "
            "estimate. Every source is forced into one of the trained classes.", ""]),
        f"**Classified**: {len(frame)} sources ({table.meta.get('SELECT')}), "
        + ", ".join(f"{k} {v}" for k, v in metrics["classified"]["predicted"].items())
        + f"; mean predictive entropy {metrics['classified']['mean_entropy']:.3f} nats (max {np.log(len(classes)):.3f}).",
        "",
        "**Rows left out** (NaN or infinite values in a used column): "
        + (f"{len(dropped_lab)} labelled source(s): " + "; ".join(f"{n} ({', '.join(c)})" for n, c in dropped_lab.items())
           if dropped_lab else "no labelled source")
        + "; " + (f"{len(dropped_pool)} source(s) to classify: {', '.join(dropped_pool)}" if dropped_pool
                  else "no source to classify") + ".",
        "",
        "Files: [classifications.csv](classifications.csv) and [classifications.fits](classifications.fits) "
        "(one row per source: `Source_Name`, `CLASS1`, " + ", ".join(f"`p_{c}`" for c in classes)
        + ", `predicted_class`, `entropy`, `p_mc_se` (the largest Monte Carlo standard error of the row's "
        "probabilities), `GLON`, `GLAT`; catalog and model in the header), "
        "[model/](model/) and [training.json](training.json) (reuse with `gpal predict`), "
        "[heldout.csv](heldout.csv), [heldout_baselines.csv](heldout_baselines.csv), [metrics.json](metrics.json).",
        "",
        f"Training catalog {cat.get('release')} {cat.get('version')}; rebuild this page with `gpal report {folder}`.",
    ]
    return write_report(folder, "gpal classify: " + str(table.meta.get("CATALOG")), figures, tables, "\n".join(lines))

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
from gpal.catalog_jobs.none_of_these import PLANE_DEG, plane_counts
from gpal.catalog_jobs.none_of_these import report_lines as none_of_these_lines
from gpal.catalog_jobs.tables import read_probability_table
from gpal.runs.persistence import write_json_atomic
from gpal.registry import FOLLOW_UP_ACQUISITION, LATENT_INPUT_STRATEGIES

__all__ = ["headline", "write_classify_report"]


#: The main job's folder: what `classify_catalog` writes and the report reads.
HELDOUT_FILE = "heldout.csv"
BASELINES_FILE = "heldout_baselines.csv"
#: Catalog columns of the classified sources that the report quotes (the table keeps to probabilities).
CONTEXT_FILE = "classified_catalog.csv"
CONTEXT_COLUMNS = ("Flux1000", "Signif_Avg")
SIGNIFICANCE_COLUMN = "Signif_Avg"
MODEL_NAME = "gpal"
#: The main job's GP refitted with input_noise "none" on the same rows: the model minus its error bars.
ERROR_BLIND_MODEL = "gpal without error bars"
#: Populations of 4FGL that a model of other classes cannot name; the report's caveat lists those not modelled.
OTHER_POPULATIONS = ("spp", "snr", "pwn", "glc", "unk", "bin", "hmb", "sbg", "rdg", "nlsy1")
LEVEL = 0.95


def _comparison(folder: Path, held: pd.DataFrame, classes: Sequence[str], model_name: str) -> pd.DataFrame:
    """Paired bootstrap intervals of the model's held-out metrics, and of each baseline's beside it."""
    from gpal.evaluation.comparison import bootstrap_comparison

    path = folder / BASELINES_FILE
    base = pd.read_csv(path, dtype={"Source_Name": str, "true_class": str}) if path.is_file() else pd.DataFrame()
    y = np.array([classes.index(c) for c in held["true_class"]], dtype=np.int64)
    columns = [f"p_{c}" for c in classes]
    probas = {model_name: held[columns].to_numpy()}
    for name, rows in (base.groupby("model", sort=False) if not base.empty else []):
        rows = rows.set_index("Source_Name").loc[held["Source_Name"]]
        probas[str(name)] = rows[columns].to_numpy()
    return bootstrap_comparison(y, probas, reference=model_name, n_boot=2000, random_state=0)


def _error_bars_bought(comparison: pd.DataFrame | None, faint: dict[str, Any] | None) -> list[str]:
    """The paired NLL difference between the model and its twin without error bars, when the run fitted one."""
    if comparison is None or ERROR_BLIND_MODEL not in set(comparison["model"]):
        return []
    row = comparison[(comparison["model"] == ERROR_BLIND_MODEL) & (comparison["metric"] == "nll")].iloc[0]
    text = (f"**What the error bars bought**: the same GP fitted on the same sources without them (input_noise "
            f"`none`) has held-out NLL {row['value']:.3f}; with them minus without: {-row['diff']:+.3f} nats "
            f"(95% paired interval [{-row['diff_high']:+.3f}, {-row['diff_low']:+.3f}]; below 0: they help)")
    if faint is not None and ERROR_BLIND_MODEL in faint["models"]:
        text += (f"; on the faintest quarter {faint['models'][MODEL_NAME]['nll']:.3f} against "
                 f"{faint['models'][ERROR_BLIND_MODEL]['nll']:.3f}")
    return [text + ". docs/results.md measures the same on faint sources held out from training.", ""]


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


def _mc_noise(frame: pd.DataFrame, classes: Sequence[str]) -> dict[str, Any]:
    """Monte Carlo noise of the probabilities, and the sources whose top two classes it could swap."""
    proba = np.sort(frame[[f"p_{c}" for c in classes]].to_numpy(), axis=1)
    se = frame["p_mc_se"].to_numpy() if "p_mc_se" in frame else np.zeros(len(frame))
    unsettled = (proba[:, -1] - proba[:, -2]) < 2.0 * se if len(classes) > 1 else np.zeros(len(frame), dtype=bool)
    return {"median_se": float(np.median(se)) if se.size else 0.0, "max_se": float(se.max()) if se.size else 0.0,
            "unsettled": int(unsettled.sum())}


def _top_sources(frame: pd.DataFrame, score: str, classes: Sequence[str],
                 position: Sequence[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The ten sources with the largest ``score``: the data and the table as shown (rounded)."""
    top = frame.nlargest(10, score)
    top = top[["Source_Name", "CLASS1", *position, *[c for c in CONTEXT_COLUMNS if c in top],
               *[f"p_{c}" for c in classes], *dict.fromkeys(["entropy", score])]]
    shown = top.round({**{c: 3 for c in top.columns if c.startswith("p_") or c in ("entropy", score)},
                       **{c: 2 for c in position}, SIGNIFICANCE_COLUMN: 1})
    if "Flux1000" in shown:
        shown = shown.assign(Flux1000=[f"{v:.3g}" for v in shown["Flux1000"]])
    return top, shown


def _with_context(folder: Path, frame: pd.DataFrame) -> pd.DataFrame:
    """The table with the catalog columns the report quotes (absent in folders of gpal 0.2.0)."""
    path = folder / CONTEXT_FILE
    if not path.is_file():
        return frame
    context = pd.read_csv(path, dtype={"Source_Name": str})
    return frame.merge(context, on="Source_Name", how="left", validate="one_to_one")


def _metric_rows(h: Mapping[str, Any]) -> pd.DataFrame:
    """Held-out metrics, each with its 95% interval: binomial for accuracy, paired bootstrap for the others."""
    def interval(bounds: Sequence[float] | None) -> str:
        return "" if bounds is None else f"[{bounds[0]:.3f}, {bounds[1]:.3f}]"

    names = {"accuracy": "accuracy", "balanced_accuracy": "balanced accuracy", "nll": "NLL (nats)",
             "brier": "Brier", "ece": f"ECE ({h['n_bins']} bins; resampling biases its interval upward)"}
    return pd.DataFrame([{"metric": label, "value": round(h[key], 4), "95% interval": interval(h["intervals"].get(key))}
                         for key, label in names.items() if key in h])


def _interval_text(lo: float, hi: float) -> str:
    return "n/a" if np.isnan(lo) else f"[{lo:.2f}, {hi:.2f}]"


def _fractions(per_class: Sequence[Mapping[str, Any]], key: str) -> str:
    """'bll 0.94, fsrq 0.79'; n/a for a class with no true (completeness) or no predicted (purity) source."""
    return ", ".join(f"{r['class']} " + ("n/a" if r[key] is None else f"{r[key]:.2f}") for r in per_class)


def write_classify_report(folder: str | os.PathLike) -> Path:
    """(Re)build ``metrics.json``, the tables, figures and ``report.md`` of a `classify_catalog` folder from its files."""
    from gpal.evaluation.calibration import class_reliability, top_label_reliability
    from gpal.evaluation.intervals import binomial_interval
    from gpal.evaluation.metrics import confusion_matrix
    from gpal.evaluation.plots import plot_confusion_summary, plot_reliability, plot_sky_classes, plot_sky_values, save_figure
    from gpal.evaluation.reports import completeness_purity, prediction_metrics, write_report, write_table

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
    mine = comparison[comparison["model"] == MODEL_NAME].set_index("metric")
    accuracy = 1.0 - scores["error"]
    correct = int(np.trace(conf))
    intervals = {m: [float(mine.at[m, "low"]), float(mine.at[m, "high"])] for m in mine.index}
    intervals["accuracy"] = [float(b) for b in binomial_interval(correct, y.size, LEVEL)]
    per_class = completeness_purity(conf, classes, LEVEL)
    faint = _faintest_quarter(folder, held, classes)
    shift = _population_shift(frame, classes, training.get("n_per_class", {}))
    noise = _mc_noise(frame, classes)
    modelled = {code for codes in training.get("merge", {}).values() for code in codes} | {c.lower() for c in classes}
    unmodelled = [c for c in OTHER_POPULATIONS if c not in modelled]

    metrics = {
        "heldout": {"n": int(y.size), "accuracy": accuracy, **scores, "n_bins": n_bins,
                    "balanced_accuracy": float(mine.at["balanced_accuracy", "value"]),
                    "intervals": intervals, "interval_level": LEVEL,
                    "per_class": per_class.astype(object).where(per_class.notna(), None).to_dict(orient="records"),
                    "confusion": conf.tolist(), "confusion_rows": "predicted", "classes": classes},
        "trained_on": training.get("n_per_class"),
        "fit_seconds": training.get("fit_seconds"),
        "classified": {"n": int(len(frame)), "select": table.meta.get("SELECT"),
                       "predicted": frame["predicted_class"].value_counts().to_dict(),
                       "none_of_these": int(frame["ood"].sum()) if "ood" in frame else None,
                       "mean_entropy": float(frame["entropy"].mean()), "mc_noise": noise},
        "run_date": table.meta.get("DATE"),
        "comparison": comparison.to_dict(orient="records") if comparison["model"].nunique() > 1 else None,
        "faintest_quarter": faint,
        "population_shift": shift,
        "dropped": {"labelled": training.get("dropped", {}),
                    "classified": [n for n in table.meta.get("DROPPED", "").split(",") if n]},
    }
    write_json_atomic(folder / "metrics.json", metrics)

    figures = {}
    fig = plot_confusion_summary(conf, classes, title=f"held-out confusion matrix ({y.size} sources)")
    figures["Held-out confusion matrix: counts, completeness and purity (rows = predicted class, columns = true class)"] = (
        save_figure(fig, folder / "confusion_matrix"))
    fig = plot_reliability(top_label_reliability(y, proba, n_bins=n_bins), title="held-out reliability (top label)")
    figures["Held-out reliability diagram (numbers: sources per bin)"] = save_figure(fig, folder / "reliability")
    fig = plot_reliability({c: class_reliability(y, proba, k, n_bins=10) for k, c in enumerate(classes)},
                           title="held-out reliability per class", xlabel="predicted probability of the class")
    figures["Held-out reliability of each class's probability, sparse classes included (hollow: bins of few "
            "sources)"] = save_figure(fig, folder / "reliability_per_class")
    sky = frame[np.isfinite(frame["GLON"]) & np.isfinite(frame["GLAT"])]
    if len(sky):
        codes = np.array([classes.index(c) for c in sky["predicted_class"]], dtype=np.int64)
        fig = plot_sky_classes(sky["GLON"].to_numpy(), sky["GLAT"].to_numpy(), codes, classes,
                               title=f"predicted class of {len(sky)} {table.meta.get('SELECT', '').replace(',', ' + ')} sources")
        figures["Sky map of the predicted classes"] = save_figure(fig, folder / "sky_classes")
        fig = plot_sky_values(sky["GLON"].to_numpy(), sky["GLAT"].to_numpy(), sky["entropy"].to_numpy(),
                              vmin=0.0, vmax=float(np.log(len(classes))), title="predictive entropy (nats)")
        figures["Sky map of the predictive entropy (high = uncertain, drawn on top)"] = save_figure(fig, folder / "sky_entropy")

    h = metrics["heldout"]
    per_class_shown = pd.DataFrame({
        "class": per_class["class"], "true": per_class["true"], "predicted": per_class["predicted"],
        "completeness": per_class["completeness"].round(3),
        "completeness 95%": [_interval_text(a, b) for a, b in zip(per_class["completeness_low"], per_class["completeness_high"])],
        "purity": per_class["purity"].round(3),
        "purity 95%": [_interval_text(a, b) for a, b in zip(per_class["purity_low"], per_class["purity_high"])],
    })
    confusion_shown = pd.DataFrame(conf.astype(int), columns=[f"{c} (true)" for c in classes])
    confusion_shown.insert(0, "predicted", classes)
    counts = _counts_table(frame, classes)
    position = [c for c in ("GLON", "GLAT", "RA", "DEC") if c in frame]
    quoted = _with_context(folder, frame)
    ranked = {score: _top_sources(quoted, score, classes, position) for score in ("information", "entropy")
              if score in frame}
    tables = {
        "Held-out metrics (95% intervals: Jeffreys binomial for accuracy, paired bootstrap of 2000 resamples for "
        "the others)": write_table(folder / "heldout_metrics", _metric_rows(h)),
        "Held-out completeness and purity per class (95% Jeffreys binomial intervals)":
            write_table(folder / "heldout_per_class", per_class_shown, data=per_class),
        "Held-out confusion matrix (counts; rows = predicted class, columns = true class)":
            write_table(folder / "heldout_confusion", confusion_shown),
        **({} if metrics["comparison"] is None else {
            "Held-out comparison with the baselines (same split and features; 95% paired bootstrap intervals, "
            f"2000 resamples; diff = model - {MODEL_NAME}, so diff > 0 means {MODEL_NAME} is better on NLL, ECE "
            "and Brier, worse on accuracy)": write_table(folder / "heldout_comparison", _comparison_table(comparison))}),
        "Classified sources: predicted class by catalog CLASS1": write_table(folder / "predicted_counts", counts),
        f"Classified sources in and out of the Galactic plane (|b| <= {PLANE_DEG:g} deg): predicted class"
        + (" and how many are flagged as none of these (counted in their predicted class too)" if "ood" in frame else ""):
            write_table(folder / "predicted_by_latitude", plane_counts(frame, classes)),
        **({} if "information" not in ranked else {
            f"The ten most informative classified sources: the first candidates for follow-up ({FOLLOW_UP_ACQUISITION}, "
            "the nats a label would teach the model; positions in degrees, Flux1000 in photons cm^-2 s^-1, Signif_Avg "
            "in sigma)": write_table(folder / "most_informative", ranked["information"][1], data=ranked["information"][0])}),
        "The ten most uncertain classified sources (highest predictive entropy: often ambiguous whatever we learn, "
        "so a label teaches less than their uncertainty suggests)": write_table(
            folder / "most_uncertain", ranked["entropy"][1], data=ranked["entropy"][0]),
    }
    est = training["estimator"]["params"]
    cat = training["catalog"]
    dropped_lab = training.get("dropped", {})
    dropped_pool = metrics["dropped"]["classified"]
    acc_lo, acc_hi = intervals["accuracy"]
    lines = [
        f"Catalog **{table.meta.get('CATALOG')}** ({table.meta.get('CATFILE')}, version {table.meta.get('CATVER')}). "
        f"Classes `{training.get('class_spec')}`; features {', '.join(f'`{f}`' for f in training['feature_names'])}"
        + (", with their catalog error bars as input noise." if est.get("input_noise") != "none" else
           " (the catalog error bars are not used by this model: input_noise `none`)."),
        "",
        f"Run: table written {metrics['run_date']} UTC by {table.meta.get('CREATOR')}." if metrics["run_date"] else
        "Run: the table records no date (written by gpal 0.2.0 or earlier).",
        "",
        f"**What the model can say.** It knows only the classes {', '.join(f'`{c}`' for c in classes)}, and every "
        "classified source is forced into one of them: a source of another population "
        + (f"({', '.join(unmodelled)}, ...) " if unmodelled else "")
        + "still gets a class from this list, often with a confident probability. Read `predicted_class` as "
        "'most like', not as an identification" + (", and heed `ood` (below)." if "ood" in frame else "."),
        "",
        f"Model: `{training['estimator']['class']}` with input_noise=`{est.get('input_noise')}`"
        + (f", input_prior=`{est.get('input_prior')}`" if est.get("input_noise") in LATENT_INPUT_STRATEGIES else "") + ", "
        f"likelihood=`{est.get('likelihood')}`, {est.get('epochs')} epochs, {est.get('num_inducing')} inducing points, "
        f"batch size {est.get('batch_size')}, seed {est.get('random_state')}; trained in {training.get('fit_seconds')} s "
        f"on the {training.get('trained_on')} ({', '.join(f'{k} {v}' for k, v in training['n_per_class'].items())}).",
        "",
        f"**Held-out check** ({h['n']} sources never seen in training; 95% intervals): accuracy {h['accuracy']:.3f} "
        f"{_interval_text(acc_lo, acc_hi)} ({correct} of {h['n']}), NLL {h['nll']:.3f} nats "
        f"{_interval_text(*intervals['nll'])}, Brier {h['brier']:.3f} {_interval_text(*intervals['brier'])}, "
        f"ECE {h['ece']:.3f} ({n_bins} equal-width bins). Completeness (share of "
        "each true class found): " + _fractions(h["per_class"], "completeness")
        + "; purity (share of each predicted class that is right): " + _fractions(h["per_class"], "purity")
        + ". The model checked here is the model that classified the sources below (no refit on all labels), "
        "so these numbers describe the table. On the classified sources, which are fainter and may hold other "
        "populations, expect worse.",
        "",
        *_error_bars_bought(comparison, faint),
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
            "estimate.", ""]),
        f"**Classified**: {len(frame)} sources ({table.meta.get('SELECT')}), "
        + ", ".join(f"{k} {v}" for k, v in metrics["classified"]["predicted"].items())
        + f"; mean predictive entropy {metrics['classified']['mean_entropy']:.3f} nats (max {np.log(len(classes)):.3f}).",
        "",
        *none_of_these_lines(folder, frame, classes),
        *([] if "information" not in frame else [
            f"**Follow-up**: `information` ranks the classified sources by {FOLLOW_UP_ACQUISITION} (the mutual "
            "information between a source's class and the model: what its label would teach it). The most uncertain "
            "sources (highest entropy) are mostly faint sources that stay ambiguous whatever we learn; in a simulated "
            "4FGL-DR4 campaign, ranking by this score gave a better classifier of faint sources per source observed "
            "than entropy or random picks (docs/active_learning.md). For a targeted search use `gpal active "
            "--acquisition discovery`.", ""]),
        "**Monte Carlo noise** of the probabilities (`p_mc_se`): "
        + (f"median {noise['median_se']:.1e}, largest {noise['max_se']:.1e}; {noise['unsettled']} source(s) have "
           "their two most probable classes closer than twice that error, so their `predicted_class` is not settled "
           "by the draws." if noise["max_se"] > 0 else
           "none: this model's probabilities are computed without random draws (`p_mc_se` is 0)."),
        "",
        "**Rows left out** (NaN or infinite values in a used column): "
        + (f"{len(dropped_lab)} labelled source(s): " + "; ".join(f"{n} ({', '.join(c)})" for n, c in dropped_lab.items())
           if dropped_lab else "no labelled source")
        + "; " + (f"{len(dropped_pool)} source(s) to classify: {', '.join(dropped_pool)}" if dropped_pool
                  else "no source to classify") + ".",
        "",
        "Files: [classifications.csv](classifications.csv) (plain CSV: `pandas.read_csv`, TOPCAT), "
        "[classifications.ecsv](classifications.ecsv) (the same rows with units, column descriptions and provenance: "
        "`astropy.table.Table.read`) and [classifications.fits](classifications.fits) (HDU `CLASSIFICATIONS`, "
        "provenance in the header); one row per source: `Source_Name`, `CLASS1`, " + ", ".join(f"`p_{c}`" for c in classes)
        + ", `predicted_class`, `entropy`, `p_mc_se`, " + ("`information`, " if "information" in frame else "")
        + ("`ood_score`, `ood`, " if "ood" in frame else "")
        + "`GLON`, `GLAT`, `RA`, `DEC`. "
        "[model/](model/) and [training.json](training.json) (reuse with `gpal predict`), "
        "[heldout.csv](heldout.csv), [heldout_baselines.csv](heldout_baselines.csv), [metrics.json](metrics.json).",
        "",
        f"Training catalog {cat.get('release')} {cat.get('version')}; rebuild this page with `gpal report {folder}`.",
    ]
    return write_report(folder, "gpal classify: " + str(table.meta.get("CATALOG")), figures, tables, "\n".join(lines))


def headline(folder: str | os.PathLike) -> list[str]:
    """What the terminal shows at the end of ``gpal classify``: the held-out metrics and the counts (``metrics.json``)."""
    metrics = json.loads((Path(folder) / "metrics.json").read_text(encoding="utf-8"))
    h, done = metrics["heldout"], metrics["classified"]
    lo, hi = h["intervals"]["accuracy"]
    return [
        f"held-out check ({h['n']} sources): accuracy {h['accuracy']:.3f} [{lo:.3f}, {hi:.3f}], "
        f"NLL {h['nll']:.3f} nats, Brier {h['brier']:.3f}, ECE {h['ece']:.3f}",
        f"  completeness {_fractions(h['per_class'], 'completeness')}; purity {_fractions(h['per_class'], 'purity')}",
        f"classified {done['n']} sources ({done['select']}): "
        + ", ".join(f"{k} {v}" for k, v in done["predicted"].items())
        + ("" if done.get("none_of_these") is None else f"; {done['none_of_these']} flagged none of these (ood)")
        + f"; mean entropy {done['mean_entropy']:.3f} nats",
    ]

"""Make the example figures of docs/reports.md with gpal's main-job classifier.

The figures show gpal's reports on the real catalogs shipped in catalogs/: the
sparse GP classifier with the main job's settings (`gpal classify`'s defaults)
beside scikit-learn's logistic regression on 20 repeated 90/10 splits of the
4FGL bll / fsrq / psr sources above 30 sigma; entropy against random acquisition
with `gpal.active` on the same set; sky maps of the 4FGL-DR4 unassociated sources
from the classifier fitted on the DR4 bll / fsrq / psr sources.

    python lab/studies/make_report_figures.py                 # PNGs into docs/figures/
    python lab/studies/make_report_figures.py --report out/   # also a full report in out/

Everything is seeded; a rerun gives the same numbers up to TensorFlow's float
round-off.
"""

from __future__ import annotations

import argparse
import contextlib
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import entropy

from gpal.active import ActiveLearningLoop, SimulatedOracle, initial_pool_test_split
from gpal.catalog_jobs.settings import main_job_estimator, prior_for_rows
from gpal.evaluation.baselines import make_baseline
from gpal.evaluation.calibration import class_reliability, top_label_reliability
from gpal.catalogs import load_catalog
from gpal.evaluation.metrics import confusion_matrix
from gpal.evaluation.plots import (
    plot_confusion_matrix,
    plot_learning_curves,
    plot_reliability,
    plot_sky_classes,
    plot_sky_values,
    save_figure,
)
from gpal.evaluation.reports import (
    confusion_matrix_summary,
    confusion_table,
    metric_summary,
    metric_table,
    prediction_metrics,
    write_report,
    write_table,
)
from shared import ROOT, keep_printed  # the script's folder, first on its path

CLASSES = ["bll", "fsrq", "psr"]
N_SPLITS = 20
N_BINS = 10
GP = "gpal GP (main job)"


def gp_classifier(seed: int):
    """A classifier with `gpal classify`'s own settings (`main_job_estimator`, so they cannot drift)."""
    return main_job_estimator(random_state=seed)


MODELS = {GP: gp_classifier, "logistic regression": lambda seed: make_baseline("logistic", seed)}


def repeated_split_predictions(ds):
    """Per split and model: test labels, test probabilities (the 90/10 protocol of the paper)."""
    out = []
    for split in ds.repeated_splits(n_splits=N_SPLITS, test_size=0.1, seed=0):
        train, test = ds.subset(split.train), ds.subset(split.test)
        for name, make in MODELS.items():
            out.append((name, split.index, test.y, probabilities(name, make(split.index), train, test)))
    return out


def probabilities(name, model, train, test):
    """The model's probabilities on ``test``: the GP reads the error bars, as the main job's model must (it
    refuses features without them); the scikit-learn baseline cannot."""
    if name == GP:
        return model.fit(train.X, train.y, X_var=train.X_var).predict_proba(test.X, X_var=test.X_var)
    return model.fit(train.X, train.y).predict_proba(test.X)


def active_learning_curves(ds, n_repetitions=5, n_initial=50, n_queries=20):
    """gpal.active on the same set: entropy against random, single-source queries, warm-started refits.

    The initial set holds as many sources as the inducing points (50), so every refit continues q(u); its
    population prior has the components those rows can fit (`prior_for_rows`, as ``gpal active`` does).
    """
    frames = []
    for rep in range(n_repetitions):
        initial, pool, test = initial_pool_test_split(ds, n_initial, ds.n_samples - n_initial - 120, 120, seed=rep)
        for strategy in ("entropy", "random"):
            model = gp_classifier(rep)
            prior_for_rows(model, n_initial)
            result = ActiveLearningLoop(model, initial, pool, SimulatedOracle(pool), test=test,
                                        acquisition=strategy, batch_size=1, n_queries=n_queries, retrain_epochs=30,
                                        progress=False).run()
            frames.append(result.metrics.assign(method=GP, strategy=strategy, repetition=rep))
    return pd.concat(frames, ignore_index=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "figures", help="folder for the PNGs")
    parser.add_argument("--report", type=Path, help="also write PNG + PDF figures, CSV/Markdown/LaTeX tables and report.md here")
    args = parser.parse_args()
    # The kept record names the commit at the start, before the figures below rewrite docs/figures/.
    with keep_printed("report_figures", __file__) if args.report else contextlib.nullcontext():
        make_figures(args)


def make_figures(args: argparse.Namespace) -> None:
    """The figures into ``args.out``; with ``args.report`` the full report there too."""
    ds = load_catalog("4FGL").dataset(classes=CLASSES, min_significance=30)
    predictions = repeated_split_predictions(ds)
    gp = [(y, p) for name, _, y, p in predictions if name == GP]
    y_all = np.concatenate([y for y, _ in gp])
    p_all = np.concatenate([p for _, p in gp])

    counts = confusion_matrix_summary([confusion_matrix(y, p, 3) for y, p in gp], spread="std")
    fractions = confusion_matrix_summary([confusion_matrix(y, p, 3) for y, p in gp], normalize=True, spread="std")
    figures = {
        "confusion_counts": plot_confusion_matrix(
            counts[0], CLASSES, counts[1], title=f"4FGL test counts, mean ± std over {N_SPLITS} splits"),
        "confusion_normalised": plot_confusion_matrix(
            fractions[0], CLASSES, fractions[1], normalized=True, title="row-normalised: P(true | predicted)"),
        "reliability_top_label": plot_reliability(
            top_label_reliability(y_all, p_all, N_BINS, "uniform"), title="top label, equal-width bins"),
        "reliability_per_class": plot_reliability(
            {c: class_reliability(y_all, p_all, k, N_BINS, "quantile") for k, c in enumerate(CLASSES)},
            title="per class, equal-mass bins", xlabel="predicted probability of the class"),
    }

    curves = active_learning_curves(ds)
    figures["active_learning"] = plot_learning_curves(curves, metric="error")

    dr4 = load_catalog("4FGL-DR4")
    labelled, pool = dr4.dataset(classes=CLASSES), dr4.pool()
    proba = probabilities(GP, gp_classifier(0), labelled, pool)
    glon, glat = pool.aux["GLON"], pool.aux["GLAT"]
    figures["sky_classes"] = plot_sky_classes(
        glon, glat, proba.argmax(axis=1), CLASSES, title=f"4FGL-DR4 unassociated sources ({len(pool)}): predicted class")
    figures["sky_entropy"] = plot_sky_values(
        glon, glat, entropy(proba, axis=1), vmin=0, vmax=np.log(3), title="predictive entropy (maximum log 3)")

    for name, fig in figures.items():
        save_figure(fig, args.out / name, formats=("png",), dpi=90)
    if args.report:
        write_full_report(args.report, figures, predictions, counts, curves)


def write_full_report(out: Path, figures, predictions, counts, curves) -> None:
    """Every figure as PNG + PDF and the tables as CSV, Markdown and LaTeX, linked from report.md."""
    saved = {name.replace("_", " "): save_figure(fig, out / name) for name, fig in figures.items()}
    metrics = ["nll", "error", "brier", "ece", "mce", "classwise_ece"]
    per_split = pd.DataFrame([{"method": m, "split": k, **prediction_metrics(y, p, N_BINS)} for m, k, y, p in predictions])
    summary = metric_summary(per_split, metrics)
    tables = {
        f"Test metrics, mean ± SE over {N_SPLITS} splits": write_table(out / "metrics", metric_table(summary, metrics), summary),
        "Confusion matrix (gpal GP), mean ± std": write_table(out / "confusion", confusion_table({GP: counts}, CLASSES)),
    }
    # One split's 46 points bias ECE upwards; the pooled predictions show how much (docs/reports.md, "Bins").
    pooled = pd.DataFrame([{"method": m, **prediction_metrics(
        np.concatenate([y for n, _, y, _ in predictions if n == m]),
        np.concatenate([p for n, _, _, p in predictions if n == m]), N_BINS)}
        for m in dict.fromkeys(n for n, _, _, _ in predictions)]).set_index("method")
    tables[f"Test metrics of the {N_SPLITS} splits' predictions pooled"] = write_table(
        out / "metrics_pooled", pooled[metrics].round(3).reset_index(), pooled.reset_index())
    final = curves[curves["n_labelled"] == curves["n_labelled"].max()]
    final_summary = metric_summary(final, ["error", "nll"], by=["method", "strategy"])
    tables["Active learning, last step"] = write_table(
        out / "active_learning", metric_table(final_summary, ["error", "nll"]), final_summary)
    for caption, files in tables.items():
        print(f"{caption}\n\n{files['md'].read_text(encoding='utf-8')}")
    write_report(out, "gpal report: 4FGL bll / fsrq / psr", saved, tables,
                 text="4FGL bll/fsrq/psr above 30 sigma; gpal's main-job classifier beside logistic regression.")


if __name__ == "__main__":
    main()

"""Make the example figures of docs/reports.md from a stand-in scikit-learn model.

The figures show what gpal's reports look like on real inputs (the 4FGL and
4FGL-DR4 catalogs shipped in catalogs/) before the GP classifier is wired in: the
probabilities come from scikit-learn's logistic regression (and Gaussian naive
Bayes in the active-learning example), and the active-learning curves come from the
small loop below, not from gpal.active.

    .venv/bin/python docs/figures/make_report_figures.py                 # PNGs into docs/figures/
    .venv/bin/python docs/figures/make_report_figures.py --report out/   # also a full report in out/

Everything is seeded; a rerun gives the same figures.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import entropy
from sklearn.linear_model import LogisticRegression
from sklearn.naive_bayes import GaussianNB
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from gpal.evaluation.calibration import class_reliability, top_label_reliability
from gpal.catalogs import load_catalog
from gpal.evaluation.metrics import confusion_matrix, error_rate, negative_log_likelihood
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

CLASSES = ["bll", "fsrq", "psr"]
N_SPLITS = 20
N_BINS = 10
MODELS = {
    "logistic": lambda: make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000)),
    "naive Bayes": lambda: make_pipeline(StandardScaler(), GaussianNB()),
}


def repeated_split_predictions(ds):
    """Per split and model: test labels, test probabilities (the 90/10 protocol of the paper)."""
    out = []
    for split in ds.repeated_splits(n_splits=N_SPLITS, test_size=0.1, seed=0):
        for name, make in MODELS.items():
            model = make().fit(ds.X[split.train], ds.y[split.train])
            out.append((name, split.index, ds.y[split.test], model.predict_proba(ds.X[split.test])))
    return out


def active_learning_curves(ds, n_repetitions=10, n_start_per_class=4, n_queries=40):
    """A minimal pool-based loop (stand-in for gpal.active): entropy against random acquisition."""
    rows = []
    for rep in range(n_repetitions):
        rng = np.random.default_rng([1, rep])
        train, test = ds.split(test_size=0.2, seed=rep)
        start = np.concatenate([rng.choice(np.flatnonzero(train.y == c), n_start_per_class, replace=False) for c in range(3)])
        for name, make in MODELS.items():
            for strategy in ("entropy", "random"):
                labelled = list(start)
                pool = [i for i in range(len(train)) if i not in set(start)]
                pick = np.random.default_rng([2, rep])
                for step in range(n_queries + 1):
                    model = make().fit(train.X[labelled], train.y[labelled])
                    proba = model.predict_proba(test.X)
                    rows.append({
                        "method": name, "strategy": strategy, "repetition": rep, "n_labelled": len(labelled),
                        "error": error_rate(test.y, proba), "nll": negative_log_likelihood(test.y, proba),
                    })
                    if step == n_queries:
                        break
                    if strategy == "entropy":
                        k = int(np.argmax(entropy(model.predict_proba(train.X[pool]), axis=1)))
                    else:
                        k = int(pick.integers(len(pool)))
                    labelled.append(pool.pop(k))
    return pd.DataFrame(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent, help="folder for the PNGs")
    parser.add_argument("--report", type=Path, help="also write PNG + PDF figures, CSV/Markdown/LaTeX tables and report.md here")
    args = parser.parse_args()

    ds = load_catalog("4FGL").dataset(classes=CLASSES, min_significance=30)
    predictions = repeated_split_predictions(ds)
    logistic = [(y, p) for name, _, y, p in predictions if name == "logistic"]
    y_all = np.concatenate([y for y, _ in logistic])
    p_all = np.concatenate([p for _, p in logistic])

    counts = confusion_matrix_summary([confusion_matrix(y, p, 3) for y, p in logistic], spread="std")
    fractions = confusion_matrix_summary([confusion_matrix(y, p, 3) for y, p in logistic], normalize=True, spread="std")
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
    proba = MODELS["logistic"]().fit(labelled.X, labelled.y).predict_proba(pool.X)
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
        "Confusion matrix (logistic), mean ± std": write_table(out / "confusion", confusion_table({"logistic": counts}, CLASSES)),
    }
    final = curves[curves["n_labelled"] == curves["n_labelled"].max()]
    final_summary = metric_summary(final, ["error", "nll"], by=["method", "strategy"])
    tables["Active learning, last step"] = write_table(
        out / "active_learning", metric_table(final_summary, ["error", "nll"]), final_summary)
    write_report(out, "gpal report (stand-in scikit-learn models)", saved, tables,
                 text="Example inputs: 4FGL bll/fsrq/psr above 30 sigma; predictions from scikit-learn stand-ins.")


if __name__ == "__main__":
    main()

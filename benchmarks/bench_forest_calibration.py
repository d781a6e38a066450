"""The random-forest baseline calibrated on its own out-of-bag votes against the 5-fold isotonic forest the job fits.

On the main job's labelled selection (`CatalogSelection()`: FL16Y, bll / fsrq / pulsar, the release's features),
for each ``--seeds`` split (80/20, stratified): held-out NLL and CPU seconds of the job's baseline
(`make_baseline("random_forest_isotonic")`: 5 calibration folds of 100 trees) and of one forest of ``--trees``
trees fitted on every training row, whose vote fractions are recalibrated per class by isotonic regression on its
out-of-bag votes and normalised per row as scikit-learn's `CalibratedClassifierCV` normalises them.  Session 28
(docs/performance.md) ran it, and kept the 5-fold forest:

    PYTHONPATH=$PWD python benchmarks/bench_forest_calibration.py --seeds 0 1 2 3 4 --trees 100 200 300
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np


def out_of_bag_isotonic_forest(X_train, y_train, X_test, trees: int, seed: int) -> np.ndarray:
    """Probabilities (n_test, C) of a forest recalibrated on its out-of-bag votes (rows every tree drew skipped)."""
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.isotonic import IsotonicRegression

    forest = RandomForestClassifier(n_estimators=trees, min_samples_leaf=2, n_jobs=1, random_state=seed,
                                    oob_score=True).fit(X_train, y_train)
    votes = forest.oob_decision_function_
    voted = np.all(np.isfinite(votes), axis=1)
    raw = forest.predict_proba(X_test)
    calibrated = np.column_stack([
        IsotonicRegression(out_of_bounds="clip", y_min=0, y_max=1).fit(votes[voted, c], y_train[voted] == k)
        .predict(raw[:, c]) for c, k in enumerate(forest.classes_)])
    total = calibrated.sum(axis=1, keepdims=True)
    return np.where(total > 0, calibrated / np.where(total > 0, total, 1.0), 1.0 / calibrated.shape[1])


def main(argv: list[str] | None = None) -> None:
    from gpal.catalog_jobs.selection import CatalogSelection
    from gpal.evaluation.baselines import make_baseline
    from gpal.evaluation.metrics import negative_log_likelihood

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--trees", type=int, nargs="+", default=[100, 200, 300])
    args = parser.parse_args(argv)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the selection's repaired and dropped rows, said by the main job already
        _, data = CatalogSelection().load()
    columns = [f"out-of-bag, {t} trees" for t in args.trees]
    print("| split seed | 5-fold isotonic (job's) NLL (CPU s) | " + " | ".join(columns) + " |")
    print("|---" * (len(args.trees) + 2) + "|")
    for seed in args.seeds:
        train, test = data.split(test_size=0.2, seed=seed, stratify=True)
        c0 = time.process_time()
        proba = make_baseline("random_forest_isotonic", seed).fit(train.X, train.y).predict_proba(test.X)
        cells = [f"{negative_log_likelihood(test.y, proba):.4f} ({time.process_time() - c0:.1f})"]
        for trees in args.trees:
            c0 = time.process_time()
            proba = out_of_bag_isotonic_forest(train.X, train.y, test.X, trees, seed)
            cells.append(f"{negative_log_likelihood(test.y, proba):.4f} ({time.process_time() - c0:.1f})")
        print(f"| {seed} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()

"""Missing errors read as exact against the population's error: two main-job runs compared, paired.

Run the main job twice on one catalog, once per policy, then compare their held-out predictions
(the same split) and, for a release older than FL16Y, the later check each run wrote (the same
sources): NLL, ECE, balanced accuracy and accuracy, each difference (population - exact) with its
paired bootstrap interval (2000 resamples); the later check also for the bcu and the unassociated
sources alone.  docs/catalogs.md ("Missing errors") cites the results, kept in
``lab/studies/records/missing_errors.json`` (one entry a pair of runs)::

    gpal classify --catalog 4FGL --missing-errors exact --out /tmp/exact-v20
    gpal classify --catalog 4FGL --missing-errors population --out /tmp/population-v20
    python lab/studies/bench_missing_errors.py /tmp/exact-v20 /tmp/population-v20
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pandas as pd

from gpal.catalog_jobs.layout import TRAINING_RECORD, located
from gpal.catalogs.classes import parse_class_spec
from gpal.evaluation.comparison import bootstrap_comparison
from shared import keep_printed  # the script's folder, first on its path

MEASURES = ("nll", "ece", "balanced_accuracy", "accuracy")


def _compare(y: np.ndarray, exact: np.ndarray, population: np.ndarray, what: str) -> None:
    table = bootstrap_comparison(y, {"exact": exact, "population": population}, "exact", n_boot=2000)
    table = table.set_index(["model", "metric"])
    print(f"{what}: n={y.size}, per class {np.bincount(y).tolist()}")
    for m in MEASURES:
        r = table.loc[("population", m)]
        print(f"  {m:18s} exact {table.loc[('exact', m), 'value']:.4f}  population {r['value']:.4f}  "
              f"diff {r['diff']:+.4f} [{r['diff_low']:+.4f}, {r['diff_high']:+.4f}]")


def _same_rows(a: pd.DataFrame, b: pd.DataFrame, what: str) -> None:
    if a["Source_Name"].tolist() != b["Source_Name"].tolist():
        raise SystemExit(f"the two runs' {what} hold different sources: run them on one catalog with one seed")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("exact", type=Path, help="gpal classify --missing-errors exact --out folder")
    parser.add_argument("population", type=Path, help="gpal classify --missing-errors population --out folder")
    args = parser.parse_args(argv)
    with keep_printed("missing_errors", __file__, argv):
        _compare_runs(args.exact, args.population)


def _compare_runs(exact_run: Path, population_run: Path) -> None:
    held = [pd.read_csv(folder / "tables" / "heldout.csv", comment="#") for folder in (exact_run, population_run)]
    _same_rows(*held, "held-out splits")
    classes = [c[2:] for c in held[0].columns if c.startswith("p_")]
    y = np.array([classes.index(c) for c in held[0]["true_class"]])
    _compare(y, *(h[[f"p_{c}" for c in classes]].to_numpy() for h in held), "held-out")
    later = [folder / "tables" / "later_check_sources.csv" for folder in (exact_run, population_run)]
    if not all(path.exists() for path in later):
        return  # the newest release: nothing later to check against
    exact, population = (pd.read_csv(path, comment="#", keep_default_na=False) for path in later)
    _same_rows(exact, population, "later checks")
    # a later CLASS1 code counts for the class the run trained that holds it (its class spec's merges)
    training = json.loads(located(exact_run, TRAINING_RECORD).read_text(encoding="utf-8"))
    merge = parse_class_spec(training["class_spec"])[1]
    code = exact["later_class"].str.lower()
    label = np.array([next((k for k, c in enumerate(classes) if x in merge.get(c, (c,))), -1) for x in code])
    class1 = exact["CLASS1"].str.lower()
    for subset, rows in (("later classified", label >= 0), ("later classified, bcu", (label >= 0) & (class1 == "bcu")),
                         ("later classified, unassociated", (label >= 0) & (class1 == ""))):
        _compare(label[rows], *(t.loc[rows, [f"p_{c}_gpal" for c in classes]].to_numpy(float)
                                for t in (exact, population)), subset)


if __name__ == "__main__":
    main()

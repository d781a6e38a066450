"""The main job's bcu split by type, end to end: ``gpal classify`` with ``--bcu-types 4lac`` and ``none``, scored
on later labels.

`workflows/studies/bench_4lac.py` chose the blazar-type model with 4LAC-DR3's peaks on fitted units; this checks the
main job that applies it (`gpal.catalog_jobs.bcu_types`).  For each release of `RELEASES` the main job runs twice
(the same seed and settings but ``bcu_types``; a finished folder is reused), and the bcu of its later check
(``tables/later_check_sources.csv``, FL16Y's classes) that FL16Y calls BL Lac or FSRQ are scored by the NLL of
q = p_fsrq / (p_bll + p_fsrq), by the four-class NLL of their true type and by the BL Lac-vs-FSRQ AUC of q;
differences are 4lac minus none, 95% paired bootstrap intervals over the sources.

    OMP_NUM_THREADS=1 nice -n 10 python workflows/studies/bench_bcu_split.py --runs runs/bcu_split
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

RELEASES = ("4FGL-DR4", "4FGL")
SETTINGS = ("4lac", "none")
N_BOOT = 1000


def run(runs: Path, release: str, setting: str) -> Path:
    """The main job's folder for ``release`` with ``bcu_types=setting`` (run when not finished)."""
    from gpal.catalog_jobs.classify import classify_catalog
    from gpal.catalog_jobs.selection import CatalogSelection
    from gpal.catalog_jobs.settings import main_job_estimator

    folder = runs / f"{release}_{setting}"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the rows a feature cannot use are the report's to say
        classify_catalog(CatalogSelection(catalog=release), main_job_estimator(progress=False), folder,
                         progress=False, bcu_types=setting)
    return folder


def scores(folders: dict[str, Path]) -> dict[str, np.ndarray]:
    """Per setting, (3, n) per-source -log q-probability, -log four-class probability and q of the later-typed bcu;
    and ``truth`` (1: FSRQ)."""
    import pandas as pd

    tables = {s: pd.read_csv(f / "tables" / "later_check_sources.csv") for s, f in folders.items()}
    first = tables[SETTINGS[0]]
    for s, t in tables.items():
        if not (t["Source_Name"] == first["Source_Name"]).all():
            raise RuntimeError(f"the later checks of {list(folders.values())} scored other sources")
    later = first["later_class"].astype(str).str.strip().str.lower()
    rows = ((first["CLASS1"].astype(str).str.strip().str.lower() == "bcu") & later.isin(["bll", "fsrq"])).to_numpy()
    truth = (later[rows] == "fsrq").to_numpy()
    out = {"truth": truth}
    for s, t in tables.items():
        bll, fsrq = t["p_bll_gpal"].to_numpy()[rows], t["p_fsrq_gpal"].to_numpy()[rows]
        q = fsrq / (bll + fsrq)
        out[s] = np.stack([-np.log(np.clip(np.where(truth, q, 1 - q), 1e-12, 1)),
                           -np.log(np.clip(np.where(truth, fsrq, bll), 1e-12, 1)), q])
    return out


def table_rows(release: str, got: dict[str, np.ndarray], seed: int = 0) -> list[str]:
    from gpal.evaluation.metrics import roc_auc

    truth, a, b = got["truth"], got[SETTINGS[0]], got[SETTINGS[1]]
    rng = np.random.default_rng(seed)
    draws = np.array([(a[:2, i].mean(axis=1) - b[:2, i].mean(axis=1))
                      for i in (rng.integers(0, truth.size, truth.size) for _ in range(N_BOOT))])
    low, high = np.quantile(draws, [0.025, 0.975], axis=0)
    auc = {s: roc_auc(truth.astype(int), got[s][2]) for s in SETTINGS}
    out = []
    for k, measure in enumerate(("NLL of q", "4-class NLL")):
        out.append(f"| {release} -> FL16Y | {truth.size} ({truth.sum()} FSRQs) | {measure} | {a[k].mean():.3f} | "
                   f"{b[k].mean():.3f} | {a[k].mean() - b[k].mean():+.3f} [{low[k]:+.3f}, {high[k]:+.3f}] |")
    out.append(f"| {release} -> FL16Y | {truth.size} ({truth.sum()} FSRQs) | AUC of q | {auc['4lac']:.3f} | "
               f"{auc['none']:.3f} | {auc['4lac'] - auc['none']:+.3f} |")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=Path, required=True, help="folder of the main jobs' folders (reused)")
    args = parser.parse_args(argv)
    lines = ["| check | bcu scored | measure | --bcu-types 4lac | none | 4lac minus none (paired 95%) |",
             "|---|---|---|---|---|---|"]
    for release in RELEASES:
        lines += table_rows(release, scores({s: run(args.runs, release, s) for s in SETTINGS}))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())

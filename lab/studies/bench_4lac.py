"""BL Lacs and FSRQs among the bcu: does the counterpart's SED from 4LAC-DR3 rank them better, on later labels?

Issue 72.  For each release of `RELEASES` the bcu that FL16Y later calls BL Lac or FSRQ (linked as the later-label
checks link them, `gpal.catalog_jobs.later_labels`) are ranked by q = p_fsrq / (p_bll + p_fsrq) and scored by the
BL Lac-vs-FSRQ AUC of q and the NLL of q (-log q for an FSRQ, -log(1 - q) for a BL Lac; the bcu rule of
`gpal.catalogs.known_classes` weights bll and fsrq alike, so it leaves q as it is).  Models (`MODELS`), each fitted
once per seed and release (a unit, saved as JSON: the study resumes where it stopped):

- ``gpal``: the main job's estimator on the release's bll / fsrq / pulsar sources with the release's features,
  as the later-label study fits it (`later_labels.fit_unit`): today's q;
- ``logistic``: logistic regression on the same rows and features;
- ``gpal blazar``: the main job's estimator trained on the release's bll and fsrq only, the release's features;
- ``gpal blazar+4LAC``: the same with the 4LAC-DR3 features (`gpal.catalogs.lac.lac_features`: log10 nu_syn,
  log10 HE_EPeak with its error bar, each with an indicator; a missing value is the population's median with the
  population's variance as its error bar);
- ``gpal blazar+4LAC+z``: and the redshift with its indicator (what chose to leave it out: it stands in for the
  label, `gpal.catalogs.lac`);
- ``gpal blazar+4LAC fallback``: no fit of its own: ``gpal blazar+4LAC``'s q where 4LAC gives the synchrotron peak,
  ``gpal blazar``'s elsewhere (the other way to treat a missing peak: a model without it for those rows);
- ``logistic blazar``, ``logistic blazar+4LAC`` and ``logistic blazar+4LAC+z``: logistic regression on the same
  rows and features as the GP blazar models (values only: it reads no error bar; a missing value is the same median and indicator).

Intervals: 95% paired bootstrap over the scored sources (`N_BOOT` resamples, the same for every model and seed), each
resample's measure averaged over the seeds; the differences are each model minus ``gpal blazar+4LAC``.

**What 4LAC leaks.**  4LAC-DR3 (2022) is the AGN list of 4FGL-DR3: it postdates 4FGL (v20, 2020) and DR2 (2020).  A
check from v20 or DR2 therefore reads the SED of counterparts as 4LAC-DR3 knew them (peaks measured, redshifts
found and counterparts identified after the earlier release): an earlier run could not have had them, so those
checks flatter what the features add.  4LAC's own CLASS (its verdict on each bcu) is never read: it is no feature
and no label here (the labels are FL16Y's CLASS1), and the training labels are the earlier release's own.  DR4
(2023) postdates 4LAC-DR3: its check leaks nothing.

    OMP_NUM_THREADS=1 nice -n 10 python lab/studies/bench_4lac.py --runs runs/4lac            # fit what is missing, print
    python lab/studies/bench_4lac.py --runs runs/4lac --record lab/pages/records/results/4lac.json
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

import numpy as np

from shared import code_commit, type_measures  # the script's folder, first on its path

#: The releases whose bcu FL16Y scores, oldest first.
RELEASES = ("4FGL", "4FGL-DR2", "4FGL-DR4")
LATER = "FL16Y"
SEEDS = (0, 1, 2)
#: Models fitted per release and seed; the fallback is derived (no fit of its own).
FITTED = ("gpal", "logistic", "gpal blazar", "gpal blazar+4LAC", "gpal blazar+4LAC+z", "logistic blazar",
          "logistic blazar+4LAC", "logistic blazar+4LAC+z")
FALLBACK = "gpal blazar+4LAC fallback"
MODELS = (*FITTED[:5], FALLBACK, *FITTED[5:])
REFERENCE = "gpal blazar+4LAC"
N_BOOT = 1000
#: What the 4LAC release postdates (published 2022): the releases whose checks read later knowledge.
LAC_POSTDATES = ("4FGL", "4FGL-DR2")


def _slug(model: str) -> str:
    return model.replace(" ", "_").replace("+", "plus")


def scored(release: str) -> dict:
    """The release's bcu that FL16Y calls bll or fsrq: their rows in the later-label study's pool, ids, truth
    (1: FSRQ) and whether 4LAC gives their synchrotron peak."""
    from gpal.catalog_jobs.later_labels import later_codes, release_sets
    from gpal.catalogs.lac import join_4lac, read_4lac

    catalog, _, pool = release_sets(release)
    later = later_codes(release, LATER)
    rows = np.nonzero((np.char.lower(pool.aux["CLASS1"].astype(str)) == "bcu") & np.isin(later, ["bll", "fsrq"]))[0]
    ids = pool.ids[rows]
    joined = join_4lac(catalog, ids, read_4lac())
    return {"rows": rows, "ids": ids, "fsrq": later[rows] == "fsrq", "peak": joined["log_nu_syn"].notna().to_numpy(),
            "in_4lac": (joined["LAC_Name"] != "").to_numpy(), "log_nu_syn": joined["log_nu_syn"].to_numpy()}


def fit(release: str, seed: int, model: str) -> np.ndarray:
    """One model's q of the scored bcu of ``release``, fitted with ``seed``."""
    from dataclasses import replace

    from gpal.catalog_jobs.later_labels import release_sets, fit_unit
    from gpal.catalog_jobs.settings import main_job_estimator
    from gpal.evaluation.baselines import fit_baselines

    picked = scored(release)
    if model in ("gpal", "logistic"):
        proba = np.asarray(fit_unit(f"{release}:{LATER}", seed, model)["proba"])[picked["rows"]]
        return proba[:, 1] / (proba[:, 0] + proba[:, 1])
    catalog, train, pool = release_sets(release)
    blazars = train.subset(np.nonzero(train.y < 2)[0])  # bll (0) and fsrq (1) of the release's own labels
    blazars = replace(blazars, class_names=blazars.class_names[:2])
    rows = pool.subset(picked["rows"])
    if "+4LAC" in model:
        from gpal.catalogs.lac import read_4lac, with_lac_features

        lac, redshift = read_4lac(), model.endswith("+z")
        blazars = with_lac_features(blazars, catalog, lac, redshift)
        rows = with_lac_features(rows, catalog, lac, redshift)
    if model.startswith("gpal"):
        estimator = main_job_estimator(random_state=seed, progress=False).fit(blazars)
        return np.asarray(estimator.predict_proba(rows.X, rows.X_var))[:, 1]
    return fit_baselines(blazars.X, blazars.y, rows.X, names=["logistic"], random_state=seed)["logistic"][:, 1]


def unit(runs: Path, release: str, seed: int, model: str) -> np.ndarray:
    """The saved q of one unit (fitted and saved when missing)."""
    path = runs / release / f"seed{seed}_{_slug(model)}.json"
    if not path.is_file():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # rows the features cannot use are the main job's to report
            q = fit(release, seed, model)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"release": release, "seed": seed, "model": model, "q": q.tolist()}))
        print(f"fitted {release} seed {seed} {model}", file=sys.stderr, flush=True)
    return np.asarray(json.loads(path.read_text())["q"])


def probabilities(runs: Path, release: str, picked: dict) -> dict[str, np.ndarray]:
    """model -> (seeds, n) q of the scored bcu."""
    q = {m: np.stack([unit(runs, release, s, m) for s in SEEDS]) for m in FITTED}
    q[FALLBACK] = np.where(picked["peak"][None, :], q["gpal blazar+4LAC"], q["gpal blazar"])
    return {m: q[m] for m in MODELS}


def measures(truth: np.ndarray, q: dict[str, np.ndarray], seed: int = 0) -> dict[str, dict[str, list[float]]]:
    """model -> measure ('auc', 'nll') -> [seed-mean value, low, high, minus the reference, its low, its high]."""
    return type_measures(truth, q, REFERENCE, N_BOOT, seed)


def _tables(runs: Path) -> list[dict]:
    from gpal.evaluation.metrics import roc_auc
    from result_records import make_table

    coverage, scores = [], []
    for release in RELEASES:
        picked = scored(release)
        truth, peak = picked["fsrq"], picked["peak"]
        alone = roc_auc(truth[peak].astype(int), -picked["log_nu_syn"][peak])
        coverage.append([f"{release} -> {LATER}", int(truth.size), int(truth.sum()), int(picked["in_4lac"].sum()),
                         int(peak.sum()), int(truth[peak].sum()), f"{alone:.3f}",
                         "yes" if release in LAC_POSTDATES else "no"])
        result = measures(truth, probabilities(runs, release, picked))
        for m in MODELS:
            auc, nll = result[m]["auc"], result[m]["nll"]
            same = m == REFERENCE
            scores.append([f"{release} -> {LATER}", m, f"{auc[0]:.3f} [{auc[1]:.3f}, {auc[2]:.3f}]",
                           "" if same else f"{auc[3]:+.3f} [{auc[4]:+.3f}, {auc[5]:+.3f}]",
                           f"{nll[0]:.3f} [{nll[1]:.3f}, {nll[2]:.3f}]",
                           "" if same else f"{nll[3]:+.3f} [{nll[4]:+.3f}, {nll[5]:+.3f}]"])
    return [
        make_table(["check", "bcu scored", "FSRQs", "in 4LAC-DR3", "with nu_syn", "FSRQs with nu_syn",
                    "AUC of nu_syn alone (with it)", "4LAC postdates the release"], coverage, "lrrrrrrl",
                   "The bcu of each release that FL16Y calls BL Lac or FSRQ (the later-label study's pool: rows the "
                   "release's features can use), and what 4LAC-DR3 gives them"),
        make_table(["check", "model", "BL Lac vs FSRQ AUC [95%]", f"minus {REFERENCE} (paired 95%)",
                    "NLL of q [95%]", f"minus {REFERENCE} (paired 95%)"], scores, "llrrrr",
                   f"Ranked by q = p_fsrq / (p_bll + p_fsrq), {len(SEEDS)} seeds (means; intervals over the sources). "
                   "Higher AUC, lower NLL are better. 4LAC-DR3 postdates 4FGL and DR2: those checks read SEDs found "
                   "later (module docstring)"),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=Path, required=True, help="folder of the fitted units (reused)")
    parser.add_argument("--record", type=Path, help="also write the results page's record to this file")
    args = parser.parse_args(argv)
    from result_records import make_record, outcome, table_markdown, write_record

    tables = _tables(args.runs)
    for table in tables:
        print(table_markdown(table), "\n", sep="")
    if args.record:
        command = f"python lab/studies/bench_4lac.py --runs {args.runs}"
        print(outcome(write_record(args.record, make_record(
            "BL Lacs and FSRQs among the bcu: 4LAC-DR3's SED on later labels", command, code_commit(), tables,
            settings={"releases": RELEASES, "seeds": SEEDS, "models": MODELS, "n_boot": N_BOOT},
            workflow="lab/studies/4lac.yaml"))))
    return 0


if __name__ == "__main__":
    sys.exit(main())

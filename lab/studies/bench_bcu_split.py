"""The main job's bcu split by type, end to end: ``gpal classify`` with ``--bcu-types 4lac`` and ``none``, scored
on later labels, beside logistic regression and cheaper or richer blazar-type models.

`lab/studies/bench_4lac.py` chose the blazar-type model with 4LAC-DR3's peaks on fitted units; this checks the
main job that applies it (`gpal.catalog_jobs.bcu_types`).  For each release of `RELEASES` and seed of `SEEDS` the
main job runs twice (the split's and the estimator's seed; the same settings but ``bcu_types``; a finished folder
is reused), and the bcu of its later check (``tables/later_check_sources.csv``, FL16Y's classes) that FL16Y calls
BL Lac or FSRQ are ranked by q = p_fsrq / (p_bll + p_fsrq) (the bcu rule weights bll and fsrq alike, so q is the
model's own), scored by the BL Lac-vs-FSRQ AUC of q and the NLL of q (-log q for an FSRQ, -log(1 - q) for a BL
Lac).  Models (`MODELS`):

- ``gpal --bcu-types 4lac`` and ``none``: the main job's q with and without the split;
- ``logistic``: the main job's logistic-regression baseline (its later check's);
- ``logistic blazar+4LAC``: logistic regression on the blazar-type model's rows and features (the job's labelled
  BL Lacs and FSRQs, their features and `gpal.catalogs.lac.with_lac_features`);
- ``stacked q + 4LAC``: a cheaper split: logistic regression on the main model's logit q and the 4LAC features,
  fitted on the held-out BL Lacs and FSRQs of the ``none`` run (``tables/heldout.csv``: the main model never saw
  them), applied to the bcu's q of that run;
- ``gpal blazar+4LAC, SE+linear``: the blazar-type model with a linear kernel beside the squared exponential, so
  the synchrotron peak can enter q as a monotone trend (`gpal.catalog_jobs.later_labels`' ``se_plus_linear``);
- ``gpal blazar+4LAC +<quantities>`` and ``logistic blazar+4LAC +<quantities>`` (`VARIANTS`): the blazar-type model,
  and logistic regression on its rows, with more of 4LAC's measured SED beside the two peaks
  (`gpal.catalogs.lac.LAC_QUANTITIES`, each with its error bar where 4LAC gives one and its indicator): the
  synchrotron peak's flux nuFnu_syn, the high-energy peak's flux HE_nuFnuPeak, the Compton dominance (their
  ratio; high in FSRQs), and all three.  4LAC's SED class is no candidate: it is nu_syn cut at 10^14 and 10^15 Hz
  (every row of 4LAC-DR3 that gives both), so it tells a model nothing the peak does not.  4LAC's gamma-ray columns
  (photon index, fractional variability) repeat the release's own features, from 4FGL-DR3's data.

The fitted ones are units saved as JSON under ``--runs`` (the study resumes where it stopped).  Intervals: 95%
paired bootstrap over the scored sources (`N_BOOT` resamples), each resample's measure averaged over the seeds.

**What 4LAC leaks.**  4LAC-DR3 (2022) postdates 4FGL (v20) and DR2 (both 2020): their checks read the SEDs of
counterparts as 4LAC-DR3 knew them (bench_4lac.py's docstring).  DR4 (2023) postdates 4LAC-DR3.

    OMP_NUM_THREADS=1 nice -n 10 python lab/studies/bench_bcu_split.py --runs runs/bcu_split
    python lab/studies/bench_bcu_split.py --runs runs/bcu_split --record lab/pages/records/results/bcu_4lac.split.json
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
import warnings
from pathlib import Path

import numpy as np

from shared import code_commit, type_measures  # the script's folder, first on its path

RELEASES = ("4FGL-DR4", "4FGL", "4FGL-DR2")
SETTINGS = ("4lac", "none")
SEEDS = (0, 1, 2)
SPLIT, NONE, LOGISTIC = "gpal --bcu-types 4lac", "gpal --bcu-types none", "logistic"
LOGISTIC_LAC, STACKED, LINEAR = "logistic blazar+4LAC", "stacked q + 4LAC", "gpal blazar+4LAC, SE+linear"
#: The blazar-type model's feature variants: label -> the 4LAC quantities added to its two peaks.
VARIANTS = {"+syn flux": ("nuFnu_syn",), "+HE flux": ("HE_nuFnuPeak",), "+Compton dominance": ("Compton_dominance",),
            "+all three": ("nuFnu_syn", "HE_nuFnuPeak", "Compton_dominance")}
GP_VARIANTS = {f"gpal blazar+4LAC {label}": extra for label, extra in VARIANTS.items()}
LOGISTIC_VARIANTS = {f"logistic blazar+4LAC {label}": extra for label, extra in VARIANTS.items()}
FITTED = (LOGISTIC_LAC, STACKED, LINEAR, *GP_VARIANTS, *LOGISTIC_VARIANTS)
MODELS = (SPLIT, NONE, LOGISTIC, *FITTED)
#: What every other model is paired with.
REFERENCE = SPLIT
N_BOOT = 1000
#: How many of a check's costliest FSRQs its cost table shows.
COSTLIEST = 5
#: A published result on the same question: release -> (what,
#: AUC, NLL of q).  Its scored bcu and later labels are the paper's own, not this study's.
PUBLISHED = {"4FGL-DR2": ("Bayesian neural network (band spectra, light curves; as published)", 0.925, 0.172)}


def run(runs: Path, release: str, setting: str, seed: int = 0) -> Path:
    """The main job's folder for ``release`` with ``bcu_types=setting`` and ``seed`` (the split's and the model's;
    run when it has not finished)."""
    from gpal.catalog_jobs.classify import classify_catalog
    from gpal.catalog_jobs.selection import CatalogSelection
    from gpal.catalog_jobs.settings import main_job_estimator

    folder = runs / f"{release}_{setting}_seed{seed}"
    if (folder / "report.md").is_file():  # written last: the job finished (a rerun would redo all but the fits)
        return folder
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the rows a feature cannot use are the report's to say
        classify_catalog(CatalogSelection(catalog=release), main_job_estimator(progress=False, random_state=seed),
                         folder, seed=seed, progress=False, bcu_types=setting)
    return folder


def _later_typed(table) -> np.ndarray:
    later = table["later_class"].astype(str).str.strip().str.lower()
    return ((table["CLASS1"].astype(str).str.strip().str.lower() == "bcu") & later.isin(["bll", "fsrq"])).to_numpy()


def scores(folders: dict[str, Path]) -> dict[str, np.ndarray]:
    """The later-typed bcu of the later checks in ``folders`` (setting -> folder): ``ids``, ``truth`` (1: FSRQ) and
    q per model read from the tables (the two settings' gpal, and the ``none`` run's logistic baseline)."""
    import pandas as pd

    tables = {s: pd.read_csv(f / "tables" / "later_check_sources.csv") for s, f in folders.items()}
    first = tables[SETTINGS[0]]
    for t in tables.values():
        if not (t["Source_Name"] == first["Source_Name"]).all():
            raise RuntimeError(f"the later checks of {list(folders.values())} scored other sources")
    rows = _later_typed(first)
    out = {"ids": first["Source_Name"].to_numpy()[rows].astype(str),
           "truth": (first["later_class"].astype(str).str.strip().str.lower()[rows] == "fsrq").to_numpy()}

    def q(table, model):
        bll, fsrq = table[f"p_bll_{model}"].to_numpy()[rows], table[f"p_fsrq_{model}"].to_numpy()[rows]
        return fsrq / (bll + fsrq)

    out[SPLIT], out[NONE] = q(tables["4lac"], "gpal"), q(tables["none"], "gpal")
    if "p_bll_logistic" in tables["none"]:
        out[LOGISTIC] = q(tables["none"], "logistic")
    return out


@functools.lru_cache(maxsize=2)
def _blazars(release: str, extra: tuple[str, ...] = ()):
    """The job's catalog, its labelled BL Lacs and FSRQs (y 1: FSRQ) with the 4LAC features (and the ``extra``
    quantities), and 4LAC-DR3."""
    from dataclasses import replace

    from gpal.catalog_jobs.selection import CatalogSelection
    from gpal.catalogs.lac import read_4lac, with_lac_features

    catalog, data = CatalogSelection(catalog=release).load()
    picked = data.subset(np.nonzero(np.isin(data.labels(), ["bll", "fsrq"]))[0])
    picked = replace(picked, y=(picked.labels() == "fsrq").astype(np.int64), class_names=("bll", "fsrq"))
    lac = read_4lac()
    return catalog, with_lac_features(picked, catalog, lac, extra=extra), lac


def _bcu_rows(catalog, features, ids, lac, extra=()):
    """The bcu named ``ids`` with the job's ``features`` and the 4LAC features (and ``extra``), in that order."""
    from gpal.catalogs.lac import with_lac_features

    pool = catalog.pool(select=["bcu"], features=features)
    where = {name: i for i, name in enumerate(pool.ids.astype(str))}
    return with_lac_features(pool.subset(np.array([where[i] for i in ids])), catalog, lac, extra=extra)


def _logit(q: np.ndarray) -> np.ndarray:
    q = np.clip(q, 1e-6, 1 - 1e-6)
    return np.log(q / (1 - q))


def stacked(catalog, heldout, q_bcu: np.ndarray, bcu_ids, lac, seed: int) -> np.ndarray:
    """q of the bcu ``bcu_ids`` (the main model's ``q_bcu``) by logistic regression on [logit q, 4LAC features],
    fitted on the held-out BL Lacs and FSRQs of ``heldout`` (``tables/heldout.csv`` of a main job)."""
    from gpal.catalogs.lac import join_4lac, lac_features
    from gpal.evaluation.baselines import fit_baselines

    blazars = heldout[heldout["true_class"].isin(["bll", "fsrq"])]
    q_held = blazars["p_fsrq"].to_numpy() / (blazars["p_bll"] + blazars["p_fsrq"]).to_numpy()

    def inputs(ids, q):
        X, _ = lac_features(join_4lac(catalog, [str(i) for i in ids], lac), lac)
        return np.column_stack([_logit(q), X])

    return fit_baselines(inputs(blazars["Source_Name"], q_held), (blazars["true_class"] == "fsrq").to_numpy(int),
                         inputs(bcu_ids, q_bcu), names=["logistic"], random_state=seed)["logistic"][:, 1]


def fit(runs: Path, release: str, seed: int, model: str, ids: np.ndarray) -> np.ndarray:
    """A fitted model's q of the bcu named ``ids`` (the later-typed bcu of ``release``'s check), with ``seed``."""
    import pandas as pd

    from gpal.catalog_jobs.later_labels import variant_kernel
    from gpal.catalog_jobs.settings import main_job_estimator
    from gpal.evaluation.baselines import fit_baselines

    extra = {**GP_VARIANTS, **LOGISTIC_VARIANTS}.get(model, ())
    catalog, blazars, lac = _blazars(release, extra)
    if model == STACKED:
        folder = run(runs, release, "none", seed)
        table = pd.read_csv(folder / "tables" / "later_check_sources.csv").set_index("Source_Name").loc[ids]
        q = (table["p_fsrq_gpal"] / (table["p_bll_gpal"] + table["p_fsrq_gpal"])).to_numpy()
        return stacked(catalog, pd.read_csv(folder / "tables" / "heldout.csv"), q, ids, lac, seed)
    rows = _bcu_rows(catalog, blazars.meta["features"], ids, lac, extra)
    if model == LOGISTIC_LAC or model in LOGISTIC_VARIANTS:
        return fit_baselines(blazars.X, blazars.y, rows.X, names=["logistic"], random_state=seed)["logistic"][:, 1]
    if model == LINEAR or model in GP_VARIANTS:
        kernel = {"kernel": variant_kernel("se_plus_linear", blazars.X.shape[1])} if model == LINEAR else {}
        estimator = main_job_estimator(random_state=seed, progress=False, **kernel)
        return np.asarray(estimator.fit(blazars).predict_proba(rows.X, rows.X_var))[:, 1]
    raise ValueError(f"unknown model {model!r}; fitted here: {list(FITTED)}")


def unit(runs: Path, release: str, seed: int, model: str, ids: np.ndarray) -> np.ndarray:
    """The saved q of one fitted unit (fitted and saved when missing)."""
    path = runs / "units" / release / f"seed{seed}_{model.replace(' ', '_').replace('+', 'plus').replace(',', '')}.json"
    if not path.is_file():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # rows the features cannot use are the main job's to report
            q = fit(runs, release, seed, model, ids)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"release": release, "seed": seed, "model": model, "ids": ids.tolist(),
                                    "q": q.tolist()}))
        print(f"fitted {release} seed {seed} {model}", file=sys.stderr, flush=True)
    saved = json.loads(path.read_text())
    if saved["ids"] != ids.tolist():
        raise RuntimeError(f"{path} scored other sources than the main job's later check; remove it to refit")
    return np.asarray(saved["q"])


def probabilities(runs: Path, release: str, seeds=SEEDS) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """``release``'s truth (1: FSRQ) and model -> (seeds, n) q of its later-typed bcu."""
    per_seed = [scores({s: run(runs, release, s, seed) for s in SETTINGS}) for seed in seeds]
    for got in per_seed[1:]:
        if got["ids"].tolist() != per_seed[0]["ids"].tolist():
            raise RuntimeError(f"{release}: the seeds' later checks scored other sources")
    q = {m: np.stack([got[m] for got in per_seed]) for m in (SPLIT, NONE, LOGISTIC)}
    for m in FITTED:
        q[m] = np.stack([unit(runs, release, seed, m, per_seed[0]["ids"]) for seed in seeds])
    return per_seed[0]["truth"], {m: q[m] for m in MODELS}


def measures(truth: np.ndarray, q: dict[str, np.ndarray], reference: str = REFERENCE,
             seed: int = 0) -> dict[str, dict[str, list[float]]]:
    """model -> 'auc' / 'nll' -> [seed-mean value, its 95% interval, minus ``reference``, its paired interval]."""
    return type_measures(truth, q, reference, N_BOOT, seed)


def table_rows(release: str, truth: np.ndarray, q: dict[str, np.ndarray]) -> list[list]:
    """The record's rows of one release: each model's AUC and NLL of q with intervals, paired with `REFERENCE`."""
    result = measures(truth, q)
    check = f"{release} -> FL16Y ({truth.size} bcu, {int(truth.sum())} FSRQs)"
    rows = []
    for m in q:
        auc, nll = result[m]["auc"], result[m]["nll"]
        same = m == REFERENCE
        rows.append([check, m, f"{auc[0]:.3f} [{auc[1]:.3f}, {auc[2]:.3f}]",
                     "" if same else f"{auc[3]:+.3f} [{auc[4]:+.3f}, {auc[5]:+.3f}]",
                     f"{nll[0]:.3f} [{nll[1]:.3f}, {nll[2]:.3f}]",
                     "" if same else f"{nll[3]:+.3f} [{nll[4]:+.3f}, {nll[5]:+.3f}]"])
    if release in PUBLISHED:
        what, auc, nll = PUBLISHED[release]
        rows.append([check.split(" (")[0] + " (the paper's bcu)", what, f"{auc:.3f}", "", f"{nll:.3f}", ""])
    return rows


def auc_lost(truth: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Each FSRQ's share of the AUC lost (0 for a BL Lac): the BL Lacs ranked above it (a tie half) over
    n_BL Lac * n_FSRQ, so that the shares sum to 1 - AUC."""
    bll = np.sort(q[~truth])
    above = bll.size - np.searchsorted(bll, q, side="right")
    ties = np.searchsorted(bll, q, side="right") - np.searchsorted(bll, q, side="left")
    return np.where(truth, (above + 0.5 * ties) / (bll.size * truth.sum()), 0.0)


def what_costs(release: str, truth: np.ndarray, ids: np.ndarray, q: np.ndarray, shown: int = COSTLIEST) -> tuple:
    """Why ``release``'s check loses AUC: per type, the scored bcu with a 4LAC row, a synchrotron peak, a
    high-energy peak, a redshift (coverage rows); the ``shown`` FSRQs that cost the most AUC under ``q`` (the split's
    seed-mean q) with their 4LAC row, and what the AUC would be were every other FSRQ ranked first (cost rows)."""
    catalog, _, lac = _blazars(release)
    from gpal.catalogs.lac import join_4lac

    joined = join_4lac(catalog, [str(i) for i in ids], lac)
    check = f"{release} -> FL16Y"
    coverage = []
    for name, rows in (("BL Lac", ~truth), ("FSRQ", truth)):
        part = joined[rows]
        coverage.append([check, name, int(rows.sum()), int((part["LAC_Name"] != "").sum()),
                         int(part["log_nu_syn"].notna().sum()), int(part["HE_EPeak"].notna().sum()),
                         int(part["Redshift"].notna().sum()),
                         ", ".join(f"{k} {v}" for k, v in part["SED_class"].replace("", "none").value_counts().items())])
    lost = auc_lost(truth, q)
    worst = np.argsort(-lost)[:shown]
    costs = []
    for i in worst:
        row = joined.iloc[i]
        costs.append([check, str(ids[i]), f"{q[i]:.3f}", f"{lost[i]:.3f}", row["SED_class"] or "-",
                      "-" if np.isnan(row["log_nu_syn"]) else f"{row['log_nu_syn']:.2f}",
                      "-" if np.isnan(row["HE_EPeak"]) else f"{row['HE_EPeak']:.3g}",
                      "-" if np.isnan(row["Redshift"]) else f"{row['Redshift']:.3f}"])
    costs.append([check, f"these {shown} (the AUC were every other FSRQ ranked first: {1 - lost[worst].sum():.3f})",
                  "", f"{lost[worst].sum():.3f}", "", "", "", ""])
    return coverage, costs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=Path, required=True, help="folder of the main jobs' folders and units (reused)")
    parser.add_argument("--record", type=Path, help="also write the results page's record to this file")
    args = parser.parse_args(argv)
    from result_records import make_record, make_table, outcome, table_markdown, write_record

    rows, coverage, costs = [], [], []
    for release in RELEASES:
        truth, q = probabilities(args.runs, release)
        rows += table_rows(release, truth, q)
        ids = scores({s: run(args.runs, release, s, SEEDS[0]) for s in SETTINGS})["ids"]
        more = what_costs(release, truth, ids, q[SPLIT].mean(axis=0))
        coverage += more[0]
        costs += more[1]
    table = make_table(["check", "model", "BL Lac vs FSRQ AUC [95%]", f"minus {REFERENCE} (paired 95%)",
                        "NLL of q [95%]", f"minus {REFERENCE} (paired 95%)"], rows, "llrrrr",
                       f"The main job's later-typed bcu ranked by q = p_fsrq / (p_bll + p_fsrq), {len(SEEDS)} seeds "
                       "(means; intervals over the sources). Higher AUC, lower NLL are better")
    tables = [table, make_table(
        ["check", "later type", "bcu scored", "in 4LAC-DR3", "with nu_syn", "with HE_EPeak", "with a redshift",
         "4LAC SED class"], coverage, "llrrrrrl",
        "What 4LAC-DR3 gives the scored bcu, by the type FL16Y gave them (the redshift and SED class are shown, "
        "not features)"), make_table(
        ["check", "FSRQ (later type)", "q (split, seed mean)", "AUC lost", "4LAC SED class", "log10 nu_syn / Hz",
         "HE_EPeak / MeV", "redshift"], costs, "llrrlrrr",
        f"The {COSTLIEST} later FSRQs each check's split ranks lowest among the BL Lacs, with the share of the AUC "
        "each costs (the BL Lacs ranked above it over n_BL Lac n_FSRQ; the shares of all FSRQs sum to 1 - AUC)")]
    for t in tables:
        print(table_markdown(t), "\n", sep="")
    if args.record:
        print(outcome(write_record(args.record, make_record(
            "The main job's split on later labels", f"python lab/studies/bench_bcu_split.py --runs {args.runs}",
            code_commit(), tables, settings={"releases": RELEASES, "seeds": SEEDS, "models": MODELS,
                                                "n_boot": N_BOOT},
            workflow="lab/studies/bcu_split.yaml"))))
    return 0


if __name__ == "__main__":
    sys.exit(main())

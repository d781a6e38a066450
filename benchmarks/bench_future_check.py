#!/usr/bin/env python
"""The future check astronomers trust: classify 4FGL's unknowns, then see what 4FGL-DR4 found them to be.

A held-out split measures a classifier on sources like the associated ones; the sources it is
for are the unassociated ones, fainter and more often in the Galactic plane.  Later catalogs
associate some of them, which tests the predictions on the population they were made for
(Bhat & Malyshev 2022 did it from 3FGL to 4FGL-DR2).  Here the earlier catalog is 4FGL (v20)
and the later one 4FGL-DR4 (v35).

For each scheme (`gpal.catalogs.schemes`, ``--schemes``) and seed (``--seeds``):

1. Training: every v20 source whose CLASS1 code the scheme holds, labelled with its classes (v20
   has no ``msp`` code: its millisecond pulsars are ``psr``).  A stratified 10% is held out only to
   set the outlier threshold (`PopulationOutlierScore`, 5% of those flagged); every model fits the
   other 90%.
2. Models: the main job's NIMGP (latent input noise, population prior, softmax, M = 50, batch 200,
   ``--epochs``) and the calibrated baselines on the same rows (feature values only).
3. Features: the ``fermi_dr4`` preset, built from v20's own columns for training and prediction
   alike.  v20 has every column it reads, but its last Flux_Band band is 30-300 GeV (DR4's is
   30-100 GeV), so HR56 compares 10-30 GeV with 30-300 GeV here.
4. Prediction: every v20 source with CLASS1 "" (unassociated) or "bcu", matched to DR4 by
   ``Source_Name`` (a source keeps its name between data releases; those DR4 dropped are counted), the link
   of the release records (`gpal.catalogs.links`).  ``gpal check-later`` is the same check of a trained
   main-job folder against any later release; this study keeps the per-scheme and per-region tables.
   Its later class is the DR4 CLASS1 code.  Scored:

   * v20 unassociated that DR4 associates: coarse truth AGN / pulsar / other (`coarse_group`);
     ``unk`` is left out, its nature being unknown (as in bench_class_schemes).  The predicted group
     is that of the most probable class; a scheme without an "other" class is also scored with the
     sources its outlier score flags called "other" (``+ood``).  Recall and precision per group with
     Jeffreys 95% intervals, beside the published 3FGL -> 4FGL-DR2 values; where the later "other"
     sources went; and the NLL of the coarse truth (probabilities summed within groups; without an
     "other" class over the AGN and pulsar truths only), GP minus each baseline paired by source
     with a bootstrap 95% interval.
   * v20 bcu that DR4 calls bll or fsrq: accuracy and NLL of p(bll) vs p(fsrq), renormalised over
     the two, beside the training prior.

   Every table is given for all sources and for |b| <= 10 deg and > 10 deg.

Units (scheme, seed) are saved under ``--out`` as they finish, so an interrupted run resumes;
``--summarize`` rebuilds the tables from the saved units (summary.md and CSVs in ``--out``).

    python benchmarks/bench_future_check.py --seeds 0
    python benchmarks/bench_future_check.py --summarize
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from collections import Counter
from pathlib import Path

import numpy as np

OUT = Path("docs/studies/future_check")
FEATURES = "fermi_dr4"
GP = dict(input_noise="latent", input_prior="population", likelihood="softmax", num_inducing=50, batch_size=200,
          epochs=300)
BASELINES = ("logistic", "random_forest_isotonic", "gradient_boosting_isotonic")
SCHEMES = ("blazar_pulsar", "with_other")
PLANE_DEG = 10.0
REGIONS = ("all", "|b| <= 10", "|b| > 10")
GROUPS = ("agn", "pulsar", "other")
BOOTSTRAP = 2000
#: Bhat & Malyshev 2022, unassociated 3FGL sources associated in 4FGL-DR2 (and their test-sample recall).
PUBLISHED = {"AGN recall": 0.86, "pulsar recall": 0.51, "AGN precision": 0.93, "pulsar precision": 0.68}
PUBLISHED_TEST = {"AGN recall": 0.94, "pulsar recall": 0.67}


def _catalogs():
    """4FGL (v20) and 4FGL-DR4 (v35), the shipped releases."""
    from gpal.catalogs import load_catalog

    return load_catalog("4FGL"), load_catalog("4FGL-DR4")


def _later_codes(ids: np.ndarray, earlier, later) -> list[str | None]:
    """The later catalog's CLASS1 code of each source ("" unassociated), None where none (or several) links to it.

    The link is the release records' (`gpal.catalogs.links.link_later`), as ``gpal check-later`` reads it.
    """
    from gpal.catalogs.links import link_later

    index = link_later(earlier, later)
    row = {name: i for i, name in enumerate(earlier.names)}
    return [str(later.class_codes[index[row[n]]]) if index[row[n]] >= 0 else None for n in ids]


def run_unit(earlier, later, pool, scheme_name: str, seed: int, epochs: int) -> dict:
    """Fit every model on the earlier catalog's scheme sources and predict ``pool``; the later classes go with it."""
    from gpal import NoisyGPClassifier
    from gpal.catalogs.schemes import CLASS_SCHEMES
    from gpal.estimators.outliers import PopulationOutlierScore
    from gpal.evaluation.baselines import fit_baselines

    scheme = CLASS_SCHEMES[scheme_name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # dropped rows are recorded in the unit
        data = earlier.dataset(classes=list(scheme.classes), merge=scheme.merge, features=FEATURES)
    train, calibration = data.split(test_size=0.1, seed=seed)
    scorer = PopulationOutlierScore(random_state=seed).fit(train).calibrate(calibration)
    t0 = time.perf_counter()
    gp = NoisyGPClassifier(**dict(GP, epochs=epochs), random_state=seed).fit(train)
    # classes_ is sorted; the tables read columns in the scheme's order, as the baselines give them
    order = [list(gp.classes_).index(name) for name in scheme.classes]
    probas = {"gp": gp.predict_proba(pool)[:, order]}
    gp_seconds = time.perf_counter() - t0
    probas.update(fit_baselines(train.X, train.y, pool.X, names=list(BASELINES), random_state=seed))
    return {
        "seed": seed, "scheme": scheme_name, "classes": list(scheme.classes), "epochs": epochs, "features": FEATURES,
        "earlier": earlier.provenance(), "later": later.provenance(), "training_dropped": data.meta["dropped"],
        "n_train_per_class": np.bincount(train.y, minlength=len(scheme.classes)).tolist(),
        "n_calibration": calibration.n_samples, "gp_seconds": gp_seconds,
        "ids": [str(i) for i in pool.ids], "codes": [str(c).lower() for c in pool.aux["CLASS1"]],
        "later_codes": _later_codes(pool.ids, earlier, later), "glat": pool.aux["GLAT"].tolist(),
        "proba": {name: np.round(p, 6).tolist() for name, p in probas.items()},
        "ood_score": np.round(scorer.score(pool), 4).tolist(), "ood_threshold": scorer.threshold_,
    }


# ----------------------------------------------------------------- summary
def _regions(glat: np.ndarray) -> dict[str, np.ndarray]:
    plane = np.abs(glat) <= PLANE_DEG
    return dict(zip(REGIONS, (np.ones_like(plane), plane, ~plane)))


def _fraction(k: int, n: int) -> dict:
    from gpal.evaluation.intervals import binomial_interval

    low, high = binomial_interval(k, n)
    return {"k": int(k), "n": int(n), "value": k / n if n else float("nan"), "low": float(low), "high": float(high)}


def _cell(f: dict) -> str:
    counts = f"{f['k']}/{f['n']}"
    return f"{f['value']:.2f} [{f['low']:.2f}, {f['high']:.2f}] ({counts})" if f["n"] else counts


def _losses(y: np.ndarray, proba: np.ndarray) -> np.ndarray:
    """-log p(truth) per source, floored as `negative_log_likelihood` floors it."""
    from gpal.evaluation.metrics import PROBA_FLOOR

    return -np.log(np.clip(proba[np.arange(y.size), y], PROBA_FLOOR, 1.0))


class _Unit:
    """A saved unit read back: probabilities renormalised (stored to 6 decimals), coarse groups, truths."""

    def __init__(self, unit: dict):
        from gpal.catalogs.schemes import CLASS_SCHEMES, coarse_group

        self.raw = unit
        scheme = CLASS_SCHEMES[unit["scheme"]]
        if list(scheme.classes) != unit["classes"]:
            raise ValueError(f"unit {unit['scheme']} seed {unit['seed']} has classes {unit['classes']}; the scheme now "
                             f"has {list(scheme.classes)}: rerun it")
        self.proba = {m: np.asarray(p) / np.sum(p, axis=1, keepdims=True) for m, p in unit["proba"].items()}
        self.group_of_class = np.array([coarse_group(scheme.codes()[c][0]) for c in scheme.classes])
        self.has_other = "other" in self.group_of_class
        self.codes = np.asarray(unit["codes"])
        self.later = np.array(["missing" if c is None else c for c in unit["later_codes"]])
        self.regions = _regions(np.asarray(unit["glat"]))
        self.flagged = np.asarray(unit["ood_score"]) > unit["ood_threshold"]
        # newly associated unassociated sources with a known nature
        self.new = (self.codes == "") & ~np.isin(self.later, ["", "missing", "unk"])
        self.truth = np.array([coarse_group(c) for c in self.later])
        self.bcu = (self.codes == "bcu") & np.isin(self.later, ["bll", "fsrq"])

    def coarse_proba(self, model: str) -> np.ndarray:
        """(n, 3) probability of AGN, pulsar, other: each class's mass summed within its group."""
        return np.stack([self.proba[model][:, self.group_of_class == g].sum(1) for g in GROUPS], 1)

    def key(self, **more) -> dict:
        return {"scheme": self.raw["scheme"], "seed": self.raw["seed"], **more}


def later_class_table(unit: _Unit):
    """Sources per DR4 code, for the v20 unassociated and the v20 bcu, by region."""
    import pandas as pd

    columns = {}
    for earlier, code in (("unassociated", ""), ("bcu", "bcu")):
        for region, rows in unit.regions.items():
            columns[f"{earlier}: {region}"] = Counter(unit.later[(unit.codes == code) & rows])
    table = pd.DataFrame(columns).fillna(0).astype(int)
    table.index = ["(unassociated)" if c == "" else c for c in table.index]
    return table.sort_values(table.columns[0], ascending=False)


def coarse_rows(unit: _Unit) -> list[dict]:
    """Recall and precision per coarse group among the newly associated sources, per model and variant."""
    rows = []
    for model in unit.proba:
        argmax = np.array(GROUPS)[unit.coarse_proba(model).argmax(1)]
        variants = {"argmax": argmax}
        if not unit.has_other:
            variants["+ood"] = np.where(unit.flagged, "other", argmax)
        for variant, pred in variants.items():
            for region, where in unit.regions.items():
                scored = unit.new & where
                truth, pred_ = unit.truth[scored], pred[scored]
                for group in GROUPS if (unit.has_other or variant == "+ood") else GROUPS[:2]:
                    hit = int(np.sum((truth == group) & (pred_ == group)))
                    for metric, n in (("recall", np.sum(truth == group)), ("precision", np.sum(pred_ == group))):
                        rows.append(unit.key(model=model, variant=variant, region=region,
                                             metric=f"{'AGN' if group == 'agn' else group} {metric}",
                                             **_fraction(hit, int(n))))
    return rows


def other_rows(unit: _Unit) -> list[dict]:
    """Where the newly associated "other" sources went, and how many the outlier score flagged."""
    rows = []
    for model in unit.proba:
        pred = np.array(GROUPS)[unit.coarse_proba(model).argmax(1)]
        for region, where in unit.regions.items():
            other = unit.new & where & (unit.truth == "other")
            known = unit.new & where & (unit.truth != "other")
            row = unit.key(model=model, region=region, n=int(other.sum()))
            row.update({f"predicted {g}": int(np.sum(pred[other] == g)) for g in GROUPS})
            row["flagged"] = _cell(_fraction(int(unit.flagged[other].sum()), int(other.sum())))
            row["flagged AGN+pulsar"] = _cell(_fraction(int(unit.flagged[known].sum()), int(known.sum())))
            rows.append(row)
    return rows


def nll_rows(unit: _Unit) -> list[dict]:
    """NLL of the coarse truth per model; GP minus each baseline, paired by source, bootstrap 95% interval."""
    from gpal.evaluation.metrics import negative_log_likelihood

    scored = unit.new & (unit.has_other | (unit.truth != "other"))
    y = np.array([GROUPS.index(g) for g in unit.truth])
    rows = []
    for region, where in unit.regions.items():
        idx = np.nonzero(scored & where)[0]
        if idx.size == 0:
            continue
        losses = {m: _losses(y[idx], unit.coarse_proba(m)[idx]) for m in unit.proba}
        draws = np.random.default_rng(unit.raw["seed"]).integers(0, idx.size, (BOOTSTRAP, idx.size))
        for model in unit.proba:
            row = unit.key(model=model, region=region, n=int(idx.size),
                           NLL=negative_log_likelihood(y[idx], unit.coarse_proba(model)[idx]))
            if model != "gp":
                diff = losses["gp"] - losses[model]
                low, high = np.percentile(diff[draws].mean(1), [2.5, 97.5])
                row.update({"GP - model": float(diff.mean()), "low": float(low), "high": float(high)})
            rows.append(row)
    return rows


def bcu_rows(unit: _Unit) -> list[dict]:
    """bcu that DR4 calls bll or fsrq: p(bll) / (p(bll) + p(fsrq)), against the training sources' bll : fsrq prior."""
    from gpal.evaluation.metrics import PROBA_FLOOR, negative_log_likelihood

    bll, fsrq = unit.raw["classes"].index("bll"), unit.raw["classes"].index("fsrq")
    counts = unit.raw["n_train_per_class"]
    prior = counts[bll] / (counts[bll] + counts[fsrq])
    rows = []
    for region, where in unit.regions.items():
        idx = np.nonzero(unit.bcu & where)[0]
        y = (unit.later[idx] == "fsrq").astype(np.int64)
        candidates = {m: np.clip(p[idx][:, [bll, fsrq]], PROBA_FLOOR, None) for m, p in unit.proba.items()}
        candidates["training prior"] = np.tile([prior, 1 - prior], (idx.size, 1))
        for model, p in candidates.items():
            p = p / p.sum(1, keepdims=True)
            rows.append(unit.key(model=model, region=region, n=int(idx.size), **{"bll share": float(np.mean(y == 0))},
                                 accuracy=_cell(_fraction(int(np.sum(p.argmax(1) == y)), int(idx.size))),
                                 NLL=negative_log_likelihood(y, p) if idx.size else float("nan")))
    return rows


def summarize(out: Path) -> None:
    import pandas as pd

    from gpal.files import write_text_atomic

    units = [_Unit(json.loads(p.read_text())) for p in sorted(out.glob("unit_*.json"))]
    if not units:
        raise SystemExit(f"no units in {out}; run the study first")
    first = units[0]
    later = later_class_table(first)
    lines = [f"# Future check: 4FGL (v20) predictions scored by 4FGL-DR4 ({len(units)} units)", "",
             f"## DR4 class of the v20 unassociated and bcu sources ({first.raw['epochs']} epochs)", "",
             f"{int(np.sum(first.later == 'missing'))} of {first.later.size} v20 unassociated + bcu sources are not "
             "in DR4 ('missing'); 'unk' is left out of the scores.", "", later.to_markdown(), ""]

    coarse = pd.DataFrame([r for u in units for r in coarse_rows(u)]).sort_values("region", kind="stable")
    coarse["cell"] = [_cell(r) for r in coarse.to_dict("records")]
    wide = coarse.pivot_table(index=["region", "scheme", "seed", "model", "variant"], columns="metric", values="cell",
                              aggfunc="first", sort=False)
    published = pd.DataFrame([PUBLISHED, PUBLISHED_TEST],
                             index=["Bhat & Malyshev 2022 (3FGL -> 4FGL-DR2)", "Bhat & Malyshev 2022 (test sample)"])
    lines += ["## Newly associated unassociated sources: coarse recall and precision (Jeffreys 95%)", "",
              wide.fillna("").reset_index().to_markdown(index=False), "", "Published:", "",
              published.fillna("").to_markdown(), ""]

    other = pd.DataFrame([r for u in units for r in other_rows(u)])
    lines += ["## Where the sources later found to be 'other' went (argmax group; outlier flags)", "",
              other.sort_values(["region", "scheme", "seed"], kind="stable").to_markdown(index=False), ""]

    nll = pd.DataFrame([r for u in units for r in nll_rows(u)])
    lines += ["## NLL of the coarse truth (schemes without 'other': AGN and pulsar truths only); "
              f"GP - model paired by source, bootstrap 95% ({BOOTSTRAP} resamples)", "",
              nll.sort_values(["region", "scheme", "seed"], kind="stable").to_markdown(index=False, floatfmt=".3f")
              .replace(" nan ", "     "), ""]

    bcu = pd.DataFrame([r for u in units for r in bcu_rows(u)])
    lines += ["## v20 bcu that DR4 calls bll or fsrq: p(bll) vs p(fsrq) renormalised", "",
              bcu.sort_values(["region", "scheme", "seed"], kind="stable").to_markdown(index=False, floatfmt=".3f"), ""]

    text = "\n".join(lines)
    print(text)
    write_text_atomic(out / "summary.md", text)
    later.to_csv(out / "later_classes.csv")
    coarse.drop(columns="cell").to_csv(out / "coarse.csv", index=False)
    other.to_csv(out / "other_sources.csv", index=False)
    nll.to_csv(out / "nll.csv", index=False)
    bcu.to_csv(out / "bcu.csv", index=False)


def main(argv=None) -> int:
    from gpal.catalogs.schemes import CLASS_SCHEMES
    from gpal.files import write_json_atomic

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--schemes", nargs="+", default=list(SCHEMES), choices=list(CLASS_SCHEMES))
    parser.add_argument("--epochs", type=int, default=GP["epochs"])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--summarize", action="store_true")
    args = parser.parse_args(argv)
    if args.summarize:
        summarize(args.out)
        return 0
    todo = [(scheme, seed) for seed in args.seeds for scheme in args.schemes
            if not (args.out / f"unit_{scheme}_{seed}.json").is_file()]
    if todo:
        earlier, later = _catalogs()
        pool = earlier.pool(select=["unassociated", "bcu"], features=FEATURES)
    for scheme, seed in todo:
        t0 = time.perf_counter()
        unit = run_unit(earlier, later, pool, scheme, seed, args.epochs)
        write_json_atomic(args.out / f"unit_{scheme}_{seed}.json", unit)
        print(f"{scheme} seed {seed}: {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    summarize(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())

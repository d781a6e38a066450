"""Why gpal's ranking lags on the later-label checks (lab/studies/records/ranking_causes.md).

Each part prints a markdown table:

    python lab/studies/bench_ranking_causes.py scored-sets RUN --models gpal logistic --seeds 0 1 2
    python lab/studies/bench_ranking_causes.py by-class RUN --models gpal --seeds 0 1 2
    python lab/studies/bench_ranking_causes.py populations        # fast scikit-learn models, seeds 0 1
    python lab/studies/bench_ranking_causes.py features
    python lab/studies/bench_ranking_causes.py forest-545         # a forest trained on every AGN, scored on the 545
    python lab/studies/bench_ranking_causes.py ablations          # the forest without each feature; curvature / significance
    python lab/studies/bench_ranking_causes.py extremes RUN       # gpal's worst-ranked sources and significance thirds
    python lab/studies/bench_ranking_causes.py later-measurements RUN  # LR, RF and the main job's GP, seed 0
    python lab/studies/bench_ranking_causes.py gp-features RUN  # the main job's GP, seed 0: two feature changes
    python lab/studies/bench_ranking_causes.py hybrid RUN --seeds 0 1 2  # needs gpal and gpal_bcu_class in RUN

RUN is the folder of a ``later_labels`` workflow run (its units hold each model's probabilities).  The
scikit-learn models here are uncalibrated (AUC needs a ranking only): logistic regression on standardised features,
a random forest of 500 trees, histogram gradient boosting.
"""

from __future__ import annotations

import argparse
import json
import warnings
from pathlib import Path

import numpy as np

from gpal.catalog_jobs import later_labels as L
from gpal.catalogs.classes import class1_codes
from gpal.evaluation.metrics import roc_auc

OTHER_AGN = ("agn", "rdg", "nlsy1", "sey", "ssrq", "css")
LOW_LATITUDE = 10.0  # degrees: where the later releases' bcu associations sit among the pulsars


def _model(name: str, seed: int):
    from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return {"lr": lambda: make_pipeline(StandardScaler(), LogisticRegression(max_iter=5000)),
            "rf": lambda: RandomForestClassifier(500, n_jobs=1, random_state=seed),
            "gb": lambda: HistGradientBoostingClassifier(random_state=seed)}[name]()


def _seeds(name: str) -> list[int]:
    return [0] if name == "lr" else [0, 1]


def _class1(data) -> np.ndarray:
    return class1_codes(data.aux["CLASS1"])


def _auc(truth: np.ndarray, score: np.ndarray, rows: np.ndarray) -> float:
    return roc_auc(truth[rows], score[rows])  # NaN where the rows lack one of the two classes


def _unit(run: Path, check: str, seed: int, model: str) -> dict:
    return json.loads((run / "units" / check.replace(":", "_to_") / f"seed_{seed}" / f"{model}.json").read_text())


def scored_sets(run: Path, models: list[str], seeds: list[int]) -> None:
    """AGN-vs-pulsar AUC of p(pulsar) on the study's set and on two others, mean over ``seeds``."""
    print("| check | model | study's set: earlier unassociated, later AGN or pulsar | the 3-class rows (earlier "
          "unassociated + bcu, later bll/fsrq/pulsar): with the bcu rule / model alone | earlier unassociated, "
          "later bll/fsrq/pulsar |\n|---|---|---|---|---|")
    for check in L.PAIRS:
        class1 = _class1(L.release_sets(check.split(":")[0])[2])
        for model in models:
            values = []
            for seed in seeds:
                sc, unit = L.scored_rows(check, seed), _unit(run, check, seed, model)
                known = L.check_probabilities(check, seed, {model: unit})[model][:, 2]
                alone = np.asarray(unit["proba"])
                alone = (L.fold_bcu(alone) if alone.shape[1] == 4 else alone)[:, 2]
                three, unassociated = sc["label"] >= 0, class1 == ""
                sets = (sc["agn_pulsar"], three, three, unassociated & three)
                values.append([_auc(sc["pulsar"], p, s) for p, s in zip((known, known, alone, known), sets)]
                              + [s.sum() for s in sets])
            v = np.nanmean(values, axis=0)
            print(f"| {check} | {model} | {v[0]:.3f} ({v[4]:.0f}) | {v[1]:.3f} / {v[2]:.3f} ({v[5]:.0f}) | "
                  f"{v[3]:.3f} ({v[7]:.0f}) |")


def by_class(run: Path, models: list[str], seeds: list[int]) -> None:
    """AUC of each later AGN class against every pulsar of the set (and each pulsar class against every AGN), split
    at |b| = LOW_LATITUDE, and the set without the later bcu at low latitude."""
    for check in L.PAIRS:
        pool = L.release_sets(check.split(":")[0])[2]
        codes = L.later_codes(*check.split(":"))
        low = np.abs(np.asarray(pool.aux["GLAT"], float)) < LOW_LATITUDE
        for model in models:
            found: dict[str, list[float]] = {}
            for seed in seeds:
                sc = L.scored_rows(check, seed)
                p = L.check_probabilities(check, seed, {model: _unit(run, check, seed, model)})[model][:, 2]
                ap = sc["agn_pulsar"]
                psr, agn = ap & sc["pulsar"], ap & ~sc["pulsar"]

                def auc(pos, neg, p=p):
                    return roc_auc(np.r_[np.ones(pos.sum()), np.zeros(neg.sum())], np.r_[p[pos], p[neg]])

                groups = {"all": auc(psr, agn)}
                for c in ("bll", "fsrq", "bcu"):
                    for name, cut in ((c, True), (f"{c} |b|<{LOW_LATITUDE:g}", low), (f"{c} |b|>={LOW_LATITUDE:g}", ~low)):
                        m = agn & (codes == c) & cut
                        if m.sum() >= 3:
                            groups[f"AGN {name} ({m.sum()})"] = auc(psr, m)
                for c in ("psr", "msp"):
                    m = psr & (codes == c)
                    if m.sum() >= 2:
                        groups[f"pulsar {c} ({m.sum()})"] = auc(m, agn)
                m = ap & ~((codes == "bcu") & low)
                groups[f"without later bcu at |b|<{LOW_LATITUDE:g} ({m.sum()})"] = auc(psr & m, agn & m)
                for k, v in groups.items():
                    found.setdefault(k, []).append(v)
            print(f"- {check}, {model}: " + "; ".join(f"{k} {np.mean(v):.3f}" for k, v in found.items()))


def _training(check: str, population: str) -> tuple[np.ndarray, np.ndarray, int]:
    """Training rows of a population and the column of p(pulsar)."""
    catalog, train, pool = L.release_sets(check.split(":")[0])
    bcu = pool.X[_class1(pool) == "bcu"]
    if population == "bll/fsrq/pulsar":
        return train.X, train.y, 2
    if population == "bll/fsrq/pulsar/bcu":
        return np.vstack([train.X, bcu]), np.r_[train.y, np.full(len(bcu), 3)], 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        other = catalog.dataset(classes=["other"], merge={"other": list(OTHER_AGN)}, features=catalog.record.preset).X
    parts = {"AGN vs pulsar": [train.X], "AGN+bcu vs pulsar": [train.X, bcu],
             "AGN+bcu+other AGN vs pulsar": [train.X, bcu, other]}[population]
    y = np.r_[(train.y == 2).astype(int), np.zeros(sum(len(p) for p in parts[1:]), int)]
    return np.vstack(parts), y, 1


def populations() -> None:
    """AGN-vs-pulsar AUC by training population (the study's set: earlier unassociated sources only, so no bcu row
    trained on is scored)."""
    names = ("bll/fsrq/pulsar", "AGN vs pulsar", "AGN+bcu vs pulsar", "AGN+bcu+other AGN vs pulsar",
             "bll/fsrq/pulsar/bcu")
    print("| check | model | " + " | ".join(names) + " |\n|---|---|" + "---|" * len(names))
    for check in L.PAIRS:
        pool, sc = L.release_sets(check.split(":")[0])[2], L.scored_rows(check, 0)
        for m in ("lr", "rf", "gb"):
            row = []
            for population in names:
                X, y, col = _training(check, population)
                row.append(np.mean([_auc(sc["pulsar"], _model(m, s).fit(X, y).predict_proba(pool.X)[:, col],
                                         sc["agn_pulsar"]) for s in _seeds(m)]))
            print(f"| {check} | {m} | " + " | ".join(f"{v:.3f}" for v in row) + " |", flush=True)


def _preset_sets(release: str, preset: str):
    from gpal.catalogs import load_catalog

    catalog = load_catalog(release)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        train = catalog.dataset(classes=list(L.CLASSES), merge={k: list(v) for k, v in L.MERGE.items()},
                                features=preset)
        pool = catalog.pool(select=["unassociated", "bcu"], features=preset)
    if not np.array_equal(np.asarray(pool.ids), np.asarray(L.release_sets(release)[2].ids)):
        raise ValueError(f"{preset} keeps other pool rows of {release} than its main preset")
    return train, pool


def _blazar_share(p: np.ndarray) -> np.ndarray:
    return p[:, 1] / np.maximum(p[:, 0] + p[:, 1], 1e-12)


def features() -> None:
    """Feature choices: |sin b| left out; the light-curve and band-spectrum presets; BL Lac vs FSRQ trained on that
    pair alone."""
    print("| check | model | AGN-psr: main preset / without abs_sin_GLAT / +light curve / +bands and light curve | "
          "bll-fsrq: main / +light curve / +bands and light curve / trained on bll and fsrq alone |\n|---|---|---|---|")
    for check in L.PAIRS:
        release = check.split(":")[0]
        family = "fermi_3fgl" if release == "3FGL" else "fermi_dr4"
        sets = [L.release_sets(release)[1:]] + [_preset_sets(release, family + s) for s in ("_lightcurve", "_measurements")]
        sc = L.scored_rows(check, 0)
        blazar = np.isin(sc["label"], [0, 1])
        fsrq = sc["label"] == 1
        train, pool = sets[0]
        latitude = [j for j, n in enumerate(train.feature_names) if n != "abs_sin_GLAT"]
        for m in ("lr", "rf", "gb"):
            ap, bf = [], []
            for seed in _seeds(m):
                probas = [_model(m, seed).fit(t.X, t.y).predict_proba(p.X) for t, p in sets]
                no_b = _model(m, seed).fit(train.X[:, latitude], train.y).predict_proba(pool.X[:, latitude])
                pair = train.y < 2
                alone = _model(m, seed).fit(train.X[pair], train.y[pair]).predict_proba(pool.X)[:, 1]
                ap.append([_auc(sc["pulsar"], q[:, 2], sc["agn_pulsar"]) for q in (probas[0], no_b, *probas[1:])])
                bf.append([_auc(fsrq, _blazar_share(q), blazar) for q in probas] + [_auc(fsrq, alone, blazar)])
            print(f"| {check} | {m} | " + " / ".join(f"{v:.3f}" for v in np.mean(ap, 0)) + " | "
                  + " / ".join(f"{v:.3f}" for v in np.mean(bf, 0)) + " |", flush=True)


def forest_545() -> None:
    """3FGL -> FL16Y: a forest trained on every 3FGL AGN (bcu and other AGN included) against the pulsars, as the 2016
    forest was, scored on the 545 sources FL16Y puts in bll / fsrq / pulsar. 325 of them are 3FGL bcu, rows this
    forest trained on (as AGN); the AUC is also given on the 220 it did not see."""
    check = "3FGL:FL16Y"
    pool, sc = L.release_sets("3FGL")[2], L.scored_rows(check, 0)
    X, y, col = _training(check, "AGN+bcu+other AGN vs pulsar")
    three, unseen = sc["label"] >= 0, (sc["label"] >= 0) & (_class1(pool) == "")
    scores = [_model("rf", s).fit(X, y).predict_proba(pool.X)[:, col] for s in _seeds("rf")]
    for name, rows in (("the 545", three), ("the 220 unassociated among them", unseen)):
        print(f"- {name}: {np.mean([_auc(sc['pulsar'], p, rows) for p in scores]):.3f} ({rows.sum()} sources)")


def ablations() -> None:
    """AGN-vs-pulsar AUC of the forest (seeds 0, 1) without each feature in turn, minus with all; and of every model
    with log(curvature significance) - log(significance) added, or in place of the curvature significance."""
    for check in L.PAIRS:
        train, pool = L.release_sets(check.split(":")[0])[1:]
        sc = L.scored_rows(check, 0)
        names = list(train.feature_names)

        def auc(m, transform=lambda X: X, train=train, pool=pool, sc=sc):
            return np.mean([_auc(sc["pulsar"], _model(m, s).fit(transform(train.X), train.y).predict_proba(
                transform(pool.X))[:, 2], sc["agn_pulsar"]) for s in _seeds(m)])

        full = auc("rf")
        drops = [f"{n} {auc('rf', lambda X, j=j: np.delete(X, j, axis=1)) - full:+.3f}" for j, n in enumerate(names)]
        print(f"- {check}, forest {full:.3f}; without: " + ", ".join(drops))
        curvature = next(j for j, n in enumerate(names) if "Curv" in n)
        significance = names.index("log(Signif_Avg)")

        def ratio(X, curvature=curvature, significance=significance):
            return X[:, curvature] - X[:, significance]

        def replaced(X, curvature=curvature):
            out = X.copy()
            out[:, curvature] = ratio(X)
            return out

        for m in ("lr", "rf", "gb"):
            base = auc(m)
            print(f"  - {m}: {base:.3f}; curvature / significance added "
                  f"{auc(m, lambda X: np.column_stack([X, ratio(X)])) - base:+.3f}, in place of the curvature "
                  f"{auc(m, replaced) - base:+.3f}", flush=True)


def extremes(run: Path) -> None:
    """gpal's (seed 0 of RUN) five AGN ranked most pulsar-like and five pulsars ranked least, with their earlier
    features; and both AUCs by thirds of the earlier significance of the scored sources."""
    for check in L.PAIRS:
        catalog, _, pool = L.release_sets(check.split(":")[0])
        sc, codes = L.scored_rows(check, 0), L.later_codes(*check.split(":"))
        p = L.check_probabilities(check, 0, {"gpal": _unit(run, check, 0, "gpal")})["gpal"]
        shown = [j for j, n in enumerate(pool.feature_names)
                 if any(k in n for k in ("Curv", "beta", "Spectral_Index", "LP_Index", "Variab", "GLAT", "Signif_Avg"))]
        print(f"\n{check}: " + ", ".join(pool.feature_names[j] for j in shown))
        ap = np.nonzero(sc["agn_pulsar"])[0]
        agn, psr = ap[~sc["pulsar"][ap]], ap[sc["pulsar"][ap]]
        for label, rows in (("AGN ranked most pulsar-like", agn[np.argsort(-p[agn, 2])[:5]]),
                            ("pulsars ranked least pulsar-like", psr[np.argsort(p[psr, 2])[:5]])):
            print(f"  {label}:")
            for i in rows:
                print(f"    later {codes[i]:5s} p(pulsar) {p[i, 2]:.2f}: " + ", ".join(f"{pool.X[i, j]:.2f}" for j in shown))
        significance = catalog.values_of("significance", [str(i) for i in pool.ids])
        blazar = np.isin(sc["label"], [0, 1])
        for name, rows, truth, score in (("AGN-psr", sc["agn_pulsar"], sc["pulsar"], p[:, 2]),
                                         ("bll-fsrq", blazar, sc["label"] == 1, _blazar_share(p))):
            edges = np.quantile(significance[rows], [1 / 3, 2 / 3])
            third = np.digitize(significance, edges)
            print(f"  {name} by significance third (faint to bright): "
                  + ", ".join(f"{_auc(truth, score, rows & (third == k)):.3f}" for k in range(3)))


def later_measurements(run: Path | None) -> None:
    """The scored sources described by the later release's own measurements, ranked by models trained on the later
    release's labelled bll / fsrq / pulsar sources with the scored sources' counterparts left out; beside the same
    models on the earlier release's measurements (gpal's from RUN's seed-0 unit where RUN is given)."""
    from gpal.catalog_jobs.settings import main_job_estimator
    from gpal.catalogs import load_catalog
    from gpal.catalogs.links import link_later
    from gpal.catalogs.releases import link_path

    print("| check | model | AGN-psr: earlier / later measurements | bll-fsrq: earlier / later | scored AGN-psr / "
          "bll-fsrq | later training rows |\n|---|---|---|---|---|---|")
    for check in L.PAIRS:
        earlier, later = check.split(":")
        first, train, pool = L.release_sets(earlier)
        last = load_catalog(later)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            index = link_later(first, last, [load_catalog(r.name) for r in link_path(first.record, last.record)])
            codes = sorted(set(class1_codes(last.class_codes)) - {""})
            every = last.pool(select=["unassociated", *codes], features=last.record.preset)
            later_train = last.dataset(classes=list(L.CLASSES), merge={k: list(v) for k, v in L.MERGE.items()},
                                       features=last.record.preset)
        row = {n: i for i, n in enumerate(first.names)}
        linked = index[[row[str(n)] for n in pool.ids]]
        names = np.asarray(last.names)[np.maximum(linked, 0)].astype(str)
        position = {str(n): i for i, n in enumerate(every.ids)}
        has = (linked >= 0) & np.isin(names, list(position))
        sc = L.scored_rows(check, 0)
        ap, blazar = sc["agn_pulsar"] & has, np.isin(sc["label"], [0, 1]) & has
        scored = set(names[(ap | blazar)])
        keep = ~np.isin(np.asarray(later_train.ids).astype(str), list(scored))
        take = [position[n] for n in names[has]]
        fsrq = sc["label"] == 1
        for m in ("lr", "rf", "gp"):
            if m == "gp":
                if run is None:
                    continue
                before = np.asarray(_unit(run, check, 0, "gpal")["proba"])
                model = main_job_estimator(random_state=0, progress=False).fit(later_train.subset(keep))
                after_has = model.predict_proba(every.X[take], every.X_var[take])
            else:
                before = _model(m, 0).fit(train.X, train.y).predict_proba(pool.X)
                after_has = _model(m, 0).fit(later_train.X[keep], later_train.y[keep]).predict_proba(every.X[take])
            after = np.full((len(linked), 3), np.nan)
            after[has] = after_has
            print(f"| {check} | {'gpal' if m == 'gp' else m} | {_auc(sc['pulsar'], before[:, 2], ap):.3f} / "
                  f"{_auc(sc['pulsar'], after[:, 2], ap):.3f} | {_auc(fsrq, _blazar_share(before), blazar):.3f} / "
                  f"{_auc(fsrq, _blazar_share(after), blazar):.3f} | {ap.sum()} / {blazar.sum()} | {keep.sum()} |",
                  flush=True)


def gp_features(run: Path) -> None:
    """The main job's GP (seed 0) without abs_sin_GLAT and on the bands-and-light-curve preset, beside gpal's
    seed-0 unit of RUN; every measure of the study (what the catalog knows applied)."""
    from dataclasses import replace

    from gpal.catalog_jobs.settings import main_job_estimator

    def without(data, name):
        keep = [j for j, n in enumerate(data.feature_names) if n != name]
        return replace(data, X=data.X[:, keep], X_var=data.X_var[:, keep],
                       feature_names=tuple(data.feature_names[j] for j in keep))

    shown = ["nll", "balanced_accuracy", "agn_pulsar_auc", "bll_fsrq_auc"]
    print("| check | model | " + " | ".join(shown) + " |\n|---|---|" + "---|" * len(shown))
    for check in L.PAIRS:
        release = check.split(":")[0]
        _, train, pool = L.release_sets(release)
        family = "fermi_3fgl" if release == "3FGL" else "fermi_dr4"
        variants = {"without abs_sin_GLAT": (without(train, "abs_sin_GLAT"), without(pool, "abs_sin_GLAT")),
                    "bands and light curve": _preset_sets(release, family + "_measurements")}
        units = {"gpal": _unit(run, check, 0, "gpal")}
        for name, (t, p) in variants.items():
            units[name] = {"proba": main_job_estimator(random_state=0, progress=False).fit(t).predict_proba(
                p.X, p.X_var).tolist()}
        probabilities = L.check_probabilities(check, 0, units)
        sc = L.scored_rows(check, 0)
        for name, proba in probabilities.items():
            measured = L.model_measures(sc, proba, {})
            print(f"| {check} | {name} | " + " | ".join(f"{measured[m]:.3f}" for m in shown) + " |", flush=True)


def hybrid(run: Path, seeds: list[int]) -> None:
    """p(pulsar) from ``gpal_bcu_class``, the bll : fsrq share from ``gpal`` (no fit of its own): whether the
    bcu class's calibration cost comes from its p(pulsar) or from its folding of the bcu probability."""
    shown = ["nll", "ece", "balanced_accuracy", "agn_pulsar_auc", "bll_fsrq_auc", "ece_pulsar", "ece_fsrq"]
    print("| check | model | " + " | ".join(shown) + " |\n|---|---|" + "---|" * len(shown))
    for check in L.PAIRS:
        probabilities = {}
        for seed in seeds:
            units = {m: _unit(run, check, seed, m) for m in ("gpal", "gpal_bcu_class")}
            gp, four = np.asarray(units["gpal"]["proba"]), np.asarray(units["gpal_bcu_class"]["proba"])
            share = gp[:, :2] / gp[:, :2].sum(1, keepdims=True)
            units["hybrid"] = {"proba": np.column_stack([(1 - four[:, 2:3]) * share, four[:, 2]]).tolist()}
            probabilities[seed] = L.check_probabilities(check, seed, units)
        table = L.measure_check(check, seeds, probabilities, n_boot=100)
        wide = table.pivot_table(index="model", columns="measure", values="value")
        for model in ("gpal", "gpal_bcu_class", "hybrid"):
            print(f"| {check} | {model} | " + " | ".join(f"{wide.loc[model, m]:.3f}" for m in shown) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("part", choices=["scored-sets", "by-class", "populations", "features", "later-measurements",
                                           "gp-features", "hybrid", "ablations", "extremes",
                                           "forest-545"])
    parser.add_argument("run", nargs="?", type=Path, help="a later_labels workflow run folder")
    parser.add_argument("--models", nargs="+", default=["gpal"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    if args.part in ("scored-sets", "by-class", "gp-features", "hybrid", "extremes") and args.run is None:
        parser.error(f"{args.part} reads a later_labels run: give its folder")
    {"scored-sets": lambda: scored_sets(args.run, args.models, args.seeds),
     "by-class": lambda: by_class(args.run, args.models, args.seeds),
     "populations": populations, "features": features,
     "later-measurements": lambda: later_measurements(args.run),
     "gp-features": lambda: gp_features(args.run), "ablations": ablations, "extremes": lambda: extremes(args.run),
     "forest-545": forest_545, "hybrid": lambda: hybrid(args.run, args.seeds)}[args.part]()


if __name__ == "__main__":
    main()

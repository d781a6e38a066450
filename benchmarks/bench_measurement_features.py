#!/usr/bin/env python
"""Issue 36: do the measurements (band spectrum, light curve, with their errors) and shift weighting help
on a later-release check?

For an earlier / later release pair (``--pairs 4FGL-DR4:FL16Y``), as the later-release check does
(`gpal.catalog_jobs.later_check`): every labelled bll / fsrq / pulsar (psr + msp) source of the earlier
release trains; its unassociated and bcu sources are classified and scored by the class the later
release gives them (linked by `gpal.catalogs.links.link_later`), where that class is one of the three.

Models, all on the same training rows:

* the main job's estimator (`gpal.catalog_jobs.settings.main_job_estimator`, ``random_state`` = seed)
  with each feature preset (``--presets``: ``fermi_dr4`` and the measurement presets of
  `gpal.catalogs.features`), unweighted and shift-weighted: ``sample_weight`` = the density ratio
  unassociated / associated of the ``fermi_dr4`` features (`gpal.evaluation.shift.density_ratio_weights`,
  Malyshev 2024), the same weights for every preset;
* the baselines (`gpal.evaluation.baselines`: logistic regression, isotonic random forest, isotonic
  gradient boosting) given the same information: the preset's feature values, plus, for the
  measurement presets, the measurement features' propagated errors (their standard deviations) as
  extra columns (the baselines cannot use error bars otherwise).  Unweighted.

Printed: 3-class NLL overall, per later class and on the fainter half (``Signif_Avg`` below the scored
sources' median), each model minus logistic regression on the same preset with a paired bootstrap 95%
interval (`gpal.evaluation.comparison.bootstrap_comparison`), and the GP on each preset minus the GP on
``fermi_dr4``.  Probabilities are saved under ``--out`` (one .npz per pair and seed), so ``--summarize``
prints again without fitting.

    nice -n 15 python benchmarks/bench_measurement_features.py --pairs 4FGL-DR4:FL16Y --seeds 0
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

OUT = Path("docs/studies/measurement_features")
PRESETS = ("fermi_dr4", "fermi_dr4_bands", "fermi_dr4_lightcurve", "fermi_dr4_measurements")
CLASSES = ("bll", "fsrq", "pulsar")
MERGE = {"pulsar": ["psr", "msp"]}
BASELINES = ("logistic", "random_forest_isotonic", "gradient_boosting_isotonic")
SELECT = ("unassociated", "bcu")
N_BOOT = 2000


def _log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def run_pair(earlier: str, later: str, presets, seed: int, epochs: int | None, partial: Path) -> dict:
    """Fit every model of one pair and seed; the probabilities of the scored sources, by model name.

    Each finished model's probabilities go to ``partial`` at once, and a model found there is not fitted
    again: an interrupted run resumes."""
    from gpal.catalog_jobs.settings import main_job_estimator
    from gpal.catalogs import load_catalog
    from gpal.catalogs.links import link_later
    from gpal.catalogs.releases import link_path
    from gpal.evaluation.baselines import fit_baselines
    from gpal.evaluation.shift import density_ratio_weights

    first, last = load_catalog(earlier), load_catalog(later)
    index = link_later(first, last, [load_catalog(r.name) for r in link_path(first.record, last.record)])
    row_of = {name: i for i, name in enumerate(first.names)}
    codes = {c: tuple(MERGE.get(c, (c,))) for c in CLASSES}
    sets = {}
    for preset in presets:
        t = time.time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            train = first.dataset(classes=list(CLASSES), merge=MERGE, features=preset)
            pool = first.pool(select=list(SELECT), features=preset)
        sets[preset] = (train, pool)
        _log(f"{earlier} {preset}: {train.n_samples} training, {pool.n_samples} pool sources ({time.time() - t:.0f} s)")
    # The same scored sources and training rows for every preset: those every preset keeps.
    train_ids = set.intersection(*(set(map(str, s[0].ids)) for s in sets.values()))
    pool_ids = set.intersection(*(set(map(str, s[1].ids)) for s in sets.values()))
    base_train, base_pool = sets[presets[0]]
    linked = index[[row_of[str(n)] for n in base_pool.ids]]
    later_code = np.where(linked >= 0, last.class_codes[np.maximum(linked, 0)], "")
    label = np.array([next((k for k, c in enumerate(CLASSES) if code in codes[c]), -1) for code in later_code])
    scored_ids = [str(n) for n, lab in zip(base_pool.ids, label) if lab >= 0 and str(n) in pool_ids]
    y_scored = label[[i for i, n in enumerate(base_pool.ids) if str(n) in set(scored_ids)]]
    significance = first.values_of("significance", scored_ids)

    def rows(data, ids):
        at = {str(n): i for i, n in enumerate(data.ids)}
        return np.array([at[i] for i in ids])

    train_order = [str(n) for n in base_train.ids if str(n) in train_ids]
    # Shift weights: unassociated / associated, on the summary features (fermi_dr4), the same for every preset.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        summary_train = first.dataset(classes=list(CLASSES), merge=MERGE, features="fermi_dr4")
        summary_unassociated = first.pool(select=["unassociated"], features="fermi_dr4")
    weight = density_ratio_weights(summary_train.X[rows(summary_train, train_order)], summary_unassociated.X,
                                   random_state=seed)
    _log(f"shift weights: min {weight.min():.3g}, median {np.median(weight):.3g}, max {weight.max():.3g}, "
         f"effective rows {weight.sum() ** 2 / (weight ** 2).sum():.0f} of {weight.size}")
    proba = dict(np.load(partial)) if partial.exists() else {}

    def keep(new: dict) -> None:
        proba.update(new)
        np.savez(partial, **proba)

    for preset, (train, pool) in sets.items():
        tr, te = rows(train, train_order), rows(pool, scored_ids)
        X, V, y = train.X[tr], train.X_var[tr], train.y[tr]
        Xp, Vp = pool.X[te], pool.X_var[te]
        for weighted in (False, True):
            name = f"gp{'+w' if weighted else ''}|{preset}"
            if name in proba:
                continue
            t = time.time()
            params = {"random_state": seed, "progress": False, **({} if epochs is None else {"epochs": epochs})}
            clf = main_job_estimator(**params).fit(X, y, V, sample_weight=weight if weighted else None)
            keep({name: clf.predict_proba(Xp, Vp)})
            _log(f"gp {preset} weighted={weighted}: {time.time() - t:.0f} s")
        added = [k for k, name in enumerate(train.feature_names) if name not in base_train.feature_names]
        extra_train = np.sqrt(train.X_var[tr][:, added])
        extra_pool = np.sqrt(pool.X_var[te][:, added])
        if all(f"{name}|{preset}" in proba for name in BASELINES):
            continue
        t = time.time()
        fitted = fit_baselines(np.hstack([X, extra_train]), y, np.hstack([Xp, extra_pool]), names=list(BASELINES),
                               random_state=seed)
        keep({f"{name}|{preset}": p for name, p in fitted.items()})
        _log(f"baselines {preset}: {time.time() - t:.0f} s")
    return {"y": y_scored, "significance": significance, "ids": np.array(scored_ids), **proba}


def summarize(results: dict, presets) -> pd.DataFrame:
    """One row per model and subset: NLL and the paired difference to a reference: logistic regression on the same
    preset, or (rows ``gp vs fermi_dr4``) the same GP on fermi_dr4."""
    from gpal.evaluation.comparison import bootstrap_comparison

    y, significance = results["y"], results["significance"]
    models = [k for k in results if "|" in k]
    subsets = {"all": np.ones(y.size, bool), "fainter half": significance < np.median(significance),
               **{f"later {c}": y == k for k, c in enumerate(CLASSES)}}
    out = []
    for subset, mask in subsets.items():
        for preset in presets:
            probas = {m.split("|")[0]: results[m][mask] for m in models if m.endswith(f"|{preset}")}
            table = bootstrap_comparison(y[mask], probas, reference="logistic", n_boot=N_BOOT, random_state=0)
            for r in table[table.metric == "nll"].to_dict("records"):
                out.append({"subset": subset, "n": int(mask.sum()), "preset": preset, "model": r["model"],
                            "nll": r["value"], "reference": "logistic", "diff": r["diff"], "low": r["diff_low"],
                            "high": r["diff_high"]})
        # each GP preset against the GP on fermi_dr4
        for kind in ("gp", "gp+w"):
            probas = {p: results[f"{kind}|{p}"][mask] for p in presets}
            table = bootstrap_comparison(y[mask], probas, reference=presets[0], n_boot=N_BOOT, random_state=0)
            for r in table[(table.metric == "nll") & (table.model != presets[0])].to_dict("records"):
                out.append({"subset": subset, "n": int(mask.sum()), "preset": r["model"], "model": kind, "nll": r["value"],
                            "reference": f"{kind} {presets[0]}", "diff": r["diff"], "low": r["diff_low"],
                            "high": r["diff_high"]})
    return pd.DataFrame(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", nargs="+", default=["4FGL-DR4:FL16Y"], help="earlier:later release pairs")
    parser.add_argument("--presets", nargs="+", default=list(PRESETS))
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    parser.add_argument("--epochs", type=int, default=None, help="GP epochs (default: the main job's)")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--summarize", action="store_true", help="print from the saved probabilities only")
    args = parser.parse_args()
    if args.presets[0] != "fermi_dr4":
        parser.error("the first preset must be fermi_dr4 (the reference of the preset comparison)")
    args.out.mkdir(parents=True, exist_ok=True)
    pd.set_option("display.width", 200)
    for pair in args.pairs:
        earlier, later = pair.split(":")
        for seed in args.seeds:
            path = args.out / f"{earlier}_{later}_seed{seed}.npz"
            if not args.summarize and not path.exists():
                partial = path.with_suffix(".partial.npz")
                np.savez(path, **run_pair(earlier, later, tuple(args.presets), seed, args.epochs, partial))
                partial.unlink()
            results = dict(np.load(path))
            table = summarize(results, tuple(args.presets))
            counts = ", ".join(f"{int((results['y'] == k).sum())} {c}" for k, c in enumerate(CLASSES))
            print(f"\n## {earlier} -> {later}, seed {seed}: {results['y'].size} scored sources ({counts})\n")
            shown = table.copy()
            for c in ("nll", "diff", "low", "high"):
                shown[c] = shown[c].map(lambda v: f"{v:+.3f}" if c != "nll" else f"{v:.3f}")
            print(shown.to_markdown(index=False))
            table.to_csv(args.out / f"{earlier}_{later}_seed{seed}.csv", index=False)


if __name__ == "__main__":
    main()

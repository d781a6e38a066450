#!/usr/bin/env python
"""Issue 36: do the measurements (band spectrum, light curve, with their errors) and shift weighting help
on the later-release checks, and what do they do within a release?

For an earlier / later release pair (``--pairs 4FGL-DR4:FL16Y 4FGL:FL16Y ...``), as the later-release check
does (`gpal.catalog_jobs.later_check`): every labelled bll / fsrq / pulsar (psr + msp) source of the earlier
release trains; its unassociated and bcu sources are classified and scored by the class the later release gives
them (linked by `gpal.catalogs.links.link_later`) where that class is one of the three (3-class NLL), and the
earlier unassociated sources the later release calls an AGN or a pulsar give the AGN-vs-pulsar AUC.  Within
4FGL-DR4 (``--tasks``): ``heldout`` (the main job's 80/20 split), ``faint`` (train on the brighter three quarters,
test on the faintest), ``plane`` (AGN / pulsar / other, balanced accuracy at |b| <= 10 deg), ``ood`` ("none of
these": the outlier score given each preset, `run_ood`).

Models (``--models``), all on the same training rows of a check:

* ``gp``: the main job's estimator (`gpal.catalog_jobs.settings.main_job_estimator`: NIMGP, ``random_state`` =
  seed) on each preset (``--presets``: the first is the summary preset, ``fermi_dr4`` or 3FGL's ``fermi_3fgl``;
  then the measurement presets of `gpal.catalogs.features`); ``mgp``: the same without latent inputs (MGP, the
  error bars unused);
* ``baselines``: logistic regression, isotonic random forest, isotonic gradient boosting
  (`gpal.evaluation.baselines`) on the preset's feature values plus, for the measurement presets, the added
  features' propagated standard deviations as extra columns;
* ``+w`` (``gp+w``, ``mgp+w``, ``baselines+w``): fitted with ``sample_weight`` = the density ratio unassociated /
  associated on the summary features (`gpal.evaluation.shift.density_ratio_weights`, Malyshev 2024), the same
  weights for every preset.

Probabilities of every pool source go to ``--out`` (one .npz per check and seed) as each model finishes; a model
found there is not fitted again, so a run resumes, and further models or seeds add to the same files.  Printed
(and written to ``summary_<checks>.csv``): per check, and pooled over the pairs given, the 3-class NLL overall, on
the fainter half (``Signif_Avg`` below the scored sources' median, per check), per later class and at |b| <= 10
deg, as the mean over seeds; the paired difference of the seed-averaged per-source NLL to logistic regression on
the summary features (``diff``) and to the GP on them (``diff_gp``) with bootstrap 95% intervals over sources
(2000 resamples); balanced accuracy at argmax; the AGN-vs-pulsar AUC of P(pulsar) with the same interval against
logistic regression.

A saved file names the commit its models were fitted at (``mixed`` if at several), and the summary rows carry
it.  ``--record FILE`` writes the results page's record (``other_features``) from the summaries kept in ``--out``:
the four checks pooled, the two ``-> FL16Y`` checks pooled for the measurement preset, and the ``faint`` task.

    nice -n 10 python lab/studies/bench_measurement_features.py --pairs 4FGL-DR4:FL16Y 4FGL:FL16Y \
        --presets fermi_dr4 fermi_dr4_measurements --models gp baselines --seeds 0 1 2 --cache /tmp/cache
    python lab/studies/bench_measurement_features.py --pairs 4FGL-DR4:FL16Y 4FGL:FL16Y --summarize
    python lab/studies/bench_measurement_features.py --record lab/pages/records/results/other_features.json
"""

from __future__ import annotations

import argparse
import pickle
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from shared import code_commit  # the script's folder, first on its path; puts the pages' record format on the path
from gpal.evaluation.comparison import balanced_accuracy
from gpal.evaluation.metrics import PROBA_FLOOR

OUT = Path("lab/studies/records/measurement_features")
PRESETS = ("fermi_dr4", "fermi_dr4_bands", "fermi_dr4_lightcurve", "fermi_dr4_measurements")
CLASSES = ("bll", "fsrq", "pulsar")
MERGE = {"pulsar": ["psr", "msp"]}
BASELINES = ("logistic", "random_forest_isotonic", "gradient_boosting_isotonic")
SELECT = ("unassociated", "bcu")
#: The GP models: the main job's (NIMGP) and MGP, the same without latent inputs (the error bars unused).
GP_MODELS = {"gp": {}, "mgp": {"input_noise": "none", "input_prior": "broad"}}
#: Presets that play the summary preset's part in a pooled set (3FGL has no fermi_dr4).
SUMMARY_ALIAS = {"fermi_dr4": "summary", "fermi_3fgl": "summary"}
TASKS = ("heldout", "faint", "plane", "ood")
PLANE_SCHEME = "agn_pulsar_other"
PLANE_DEG = 10.0
MODELS = ("gp", "mgp", "gp+w", "mgp+w", "baselines", "baselines+w")
N_BOOT = 2000
#: The results page's record: the checks pooled for every row but the measurement preset's, the checks pooled for
#: that one (the releases with the preset, read by FL16Y), and the within-release task of the faint shift.
RECORD_PAIRS = ("4FGL-DR4:FL16Y", "4FGL:FL16Y", "4FGL:4FGL-DR4", "3FGL:FL16Y")
RECORD_MEASUREMENT_PAIRS = ("4FGL-DR4:FL16Y", "4FGL:FL16Y")
RECORD_TASK = "faint"
_SCRIPT = "python lab/studies/bench_measurement_features.py"
#: What computes the record's numbers: the fits (each pair with the presets whose rows it shares), then the summaries.
RECORD_COMMAND = "\n".join([
    f"{_SCRIPT} --pairs 4FGL-DR4:FL16Y 4FGL:FL16Y 4FGL:4FGL-DR4 --presets fermi_dr4 fermi_dr4_measurements "
    "--models gp mgp gp+w mgp+w baselines baselines+w --seeds 0 1 2 --fit-only",
    f"{_SCRIPT} --pairs 3FGL:FL16Y --presets fermi_3fgl fermi_3fgl_lightcurve fermi_3fgl_measurements "
    "--models gp mgp gp+w mgp+w baselines baselines+w --seeds 0 1 2 --fit-only",
    f"{_SCRIPT} --tasks faint --presets fermi_dr4 fermi_dr4_measurements --models gp mgp baselines --seeds 0 1 2",
    f"{_SCRIPT} --pairs {' '.join(RECORD_MEASUREMENT_PAIRS)} --summarize",
    f"{_SCRIPT} --pairs {' '.join(RECORD_PAIRS)} --summarize",
])


def _log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


def _cached(path: Path | None, build, describe):
    """``build()``, read from the pickle at ``path`` when built before and written there after (the
    measurement presets take minutes to build); ``describe(built)`` is logged with the build time."""
    if path is not None and path.exists():
        with open(path, "rb") as f:
            return pickle.load(f)
    t = time.time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        built = build()
    _log(f"{describe(built)} ({time.time() - t:.0f} s)")
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "wb") as f:
            pickle.dump(built, f)
    return built


def _datasets(catalog, release: str, preset: str, cache: Path | None, scheme: str | None = None):
    """The labelled training set (bll / fsrq / pulsar, or the class scheme ``scheme``) and the unassociated + bcu
    pool (None with a scheme) of ``release`` with ``preset``, from ``cache`` when built before."""
    from gpal.catalogs.schemes import resolve_classes

    path = None if cache is None else cache / f"{release}_{preset}{'' if scheme is None else '_' + scheme}.pkl"
    classes, merge = (CLASSES, MERGE) if scheme is None else resolve_classes(scheme)
    return _cached(path, lambda: (catalog.dataset(classes=list(classes), merge=merge, features=preset),
                                  None if scheme is not None else catalog.pool(select=list(SELECT), features=preset)),
                   lambda built: f"{release} {preset} {scheme or ''}: {built[0].n_samples} training sources")


def _all_codes(catalog, preset: str, cache: Path | None):
    """Every labelled 4FGL-DR4 source, one class per CLASS1 code, with ``preset``, from ``cache`` when built before."""
    path = None if cache is None else cache / f"4FGL-DR4_{preset}_all_codes.pkl"
    return _cached(path, lambda: catalog.dataset(classes=[c for c in catalog.class_counts() if c != "unassociated"],
                                                 features=preset),
                   lambda built: f"4FGL-DR4 {preset} every code: {built.n_samples} labelled sources")


def run_ood(presets, seeds, out: Path, cache: Path | None) -> pd.DataFrame:
    """"None of these" with each preset, by the class-scheme study's protocol (issue 24, scheme ``blazar_pulsar``):
    every labelled 4FGL-DR4 source split 80/20 per seed, stratified by CLASS1 code; `PopulationOutlierScore` fitted on
    the bll / fsrq / psr / msp training sources, its threshold at 5% of half of their held-out sources, the
    false-positive rate on the other half; the share flagged of every source of the codes left out (bcu excepted)
    and, as the main job's later-release check counts it, of the 4FGL-DR4 unassociated and bcu sources that FL16Y
    calls neither AGN nor pulsar.  The rows are those every preset keeps.  Written to ``out/summary_ood.csv``."""
    from gpal.catalogs import load_catalog
    from gpal.catalogs.links import link_later
    from gpal.catalogs.schemes import coarse_group
    from gpal.estimators.outliers import PopulationOutlierScore

    catalog, later = load_catalog("4FGL-DR4"), load_catalog("FL16Y")
    sets = {p: _all_codes(catalog, p, cache) for p in presets}
    pools = {p: _datasets(catalog, "4FGL-DR4", p, cache)[1] for p in presets}
    ids = set.intersection(*(set(map(str, s.ids)) for s in sets.values()))
    pool_ids = set.intersection(*(set(map(str, s.ids)) for s in pools.values()))
    base = sets[presets[0]]
    order = [str(n) for n in base.ids if str(n) in ids]
    pool_order = [str(n) for n in pools[presets[0]].ids if str(n) in pool_ids]
    codes = np.array(base.class_names)[base.y[_rows(base, order)]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        index = link_later(catalog, later)
    row_of = {name: i for i, name in enumerate(catalog.names)}
    linked = index[[row_of[n] for n in pool_order]]
    later_code = np.char.lower(np.char.strip(np.where(linked >= 0, later.class_codes[np.maximum(linked, 0)], "").astype(str)))
    later_other = np.array([c not in ("", "unk") and coarse_group(c) == "other" for c in later_code])
    first_pool = pools[presets[0]]
    unassociated = np.char.strip(first_pool.aux["CLASS1"][_rows(first_pool, pool_order)].astype(str)) == ""
    trained = np.isin(codes, ["bll", "fsrq", "psr", "msp"])
    left_out = ~trained & (codes != "bcu")
    rows = []
    for seed in seeds:
        train, test = base.subset(_rows(base, order)).split(test_size=0.2, seed=seed, stratify=True)
        train_in = [str(n) for n, c in zip(train.ids, np.array(base.class_names)[train.y]) if c in
                    ("bll", "fsrq", "psr", "msp")]
        test_in = np.array([str(n) for n, c in zip(test.ids, np.array(base.class_names)[test.y]) if c in
                            ("bll", "fsrq", "psr", "msp")])
        halves = np.random.default_rng([seed, 5]).permutation(test_in.size)
        calib, check = test_in[np.sort(halves[: test_in.size // 2])], test_in[np.sort(halves[test_in.size // 2:])]
        for preset, d in sets.items():
            t = time.time()
            part = lambda names: (d.X[_rows(d, names)], d.X_var[_rows(d, names)])
            scorer = PopulationOutlierScore(random_state=seed).fit(*part(train_in)).calibrate(*part(list(calib)))
            flagged = scorer.is_outlier(*part(order))
            pool = pools[preset]
            pool_flagged = scorer.is_outlier(pool.X[_rows(pool, pool_order)], pool.X_var[_rows(pool, pool_order)])
            row = {"seed": seed, "preset": preset, "features": d.n_features,
                   "false-positive rate": float(np.mean(scorer.is_outlier(*part(list(check))))),
                   f"left-out flagged ({left_out.sum()})": float(np.mean(flagged[left_out])),
                   f"left-out flagged, unk excluded ({np.sum(left_out & (codes != 'unk'))})":
                       float(np.mean(flagged[left_out & (codes != "unk")])),
                   f"DR4 unassociated + bcu FL16Y calls other ({later_other.sum()})": float(np.mean(pool_flagged[later_other])),
                   f"DR4 unassociated flagged ({unassociated.sum()})": float(np.mean(pool_flagged[unassociated]))}
            for code in ("spp", "unk", "rdg", "snr", "glc", "pwn", "hmb", "bin"):
                row[f"{code} ({np.sum(codes == code)})"] = float(np.mean(flagged[codes == code]))
            rows.append(row)
            _log(f"ood seed {seed} {preset}: left-out flagged {row[f'left-out flagged ({left_out.sum()})']:.3f} "
                 f"({time.time() - t:.0f} s)")
    table = pd.DataFrame(rows)
    table.to_csv(out / "summary_ood.csv", index=False)
    return table


def _estimator(model: str, seed: int, epochs: int | None):
    """The main job's estimator (``gp``: NIMGP) or the same without latent inputs (``mgp``)."""
    from gpal.catalog_jobs.settings import main_job_estimator

    params = {"random_state": seed, "progress": False, **GP_MODELS[model], **({} if epochs is None else {"epochs": epochs})}
    return main_job_estimator(**params)


def _fit_baseline(name: str, seed: int, X, y, Xp, weight):
    """One baseline's probabilities of ``Xp``, fitted with ``sample_weight`` = ``weight`` when given."""
    from gpal.evaluation.baselines import make_baseline
    from gpal.evaluation.metrics import proba_by_class

    model = make_baseline(name, seed)
    fit_params = {} if weight is None else (
        {"logisticregression__sample_weight": weight} if name == "logistic" else {"sample_weight": weight})
    model.fit(X, y, **fit_params)
    return proba_by_class(model.predict_proba(Xp), model.classes_, range(len(CLASSES)))


def run_pair(earlier: str, later: str, presets, models, seeds, epochs: int | None, out: Path, cache: Path | None):
    """Fit the ``models`` on every preset and seed of one pair; their probabilities of the whole pool go to
    ``out/<earlier>_<later>_seed<seed>.npz`` one model at a time, and a model found there is not fitted again."""
    from gpal.catalogs import load_catalog
    from gpal.catalogs.links import link_later
    from gpal.catalogs.releases import link_path
    from gpal.evaluation.shift import density_ratio_weights

    first, last = load_catalog(earlier), load_catalog(later)
    index = link_later(first, last, [load_catalog(r.name) for r in link_path(first.record, last.record)])
    # The same training rows and pool sources for every preset and every run: those that the summary preset and,
    # on a release with band spectra and light curves, fermi_dr4_measurements both keep.
    row_presets = list(dict.fromkeys([presets[0], *presets, *(["fermi_dr4_measurements"] if presets[0] == "fermi_dr4" else [])]))
    sets = {p: _datasets(first, earlier, p, cache) for p in row_presets}
    base_train, base_pool = sets[presets[0]]
    train_ids = set.intersection(*(set(map(str, s[0].ids)) for s in sets.values()))
    pool_ids = set.intersection(*(set(map(str, s[1].ids)) for s in sets.values()))
    train_order = [str(n) for n in base_train.ids if str(n) in train_ids]
    pool_order = [str(n) for n in base_pool.ids if str(n) in pool_ids]
    row_of = {name: i for i, name in enumerate(first.names)}
    linked = index[[row_of[n] for n in pool_order]]
    later_code = np.where(linked >= 0, last.class_codes[np.maximum(linked, 0)], "missing")
    class1 = np.asarray(base_pool.aux["CLASS1"])[[i for i, n in enumerate(base_pool.ids) if str(n) in pool_ids]]

    meta = {"ids": np.array(pool_order), "class1": class1.astype(str), "later_code": later_code.astype(str),
            "significance": first.values_of("significance", pool_order), "glat": first.values_of("glat", pool_order),
            "train_counts": np.bincount(base_train.y[_rows(base_train, train_order)], minlength=len(CLASSES))}
    for seed in seeds:
        path = out / f"{earlier}_{later}_seed{seed}.npz"
        proba = _load(path)
        for key, value in meta.items():
            if key in proba and not np.array_equal(proba[key], value):
                raise RuntimeError(f"{path} was made on other sources ({key} differs); move it away to start again")
        proba.update(meta)
        weight = None
        if any(m.endswith("+w") for m in models):
            summary_train = sets[presets[0]][0]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                unassociated = first.pool(select=["unassociated"], features=presets[0])
            weight = density_ratio_weights(summary_train.X[_rows(summary_train, train_order)], unassociated.X,
                                           random_state=seed)
            _log(f"shift weights: min {weight.min():.3g}, median {np.median(weight):.3g}, max {weight.max():.3g}, "
                 f"effective rows {weight.sum() ** 2 / (weight ** 2).sum():.0f} of {weight.size}")

        def keep(new: dict) -> None:
            proba.update(new)
            _stamp(proba)
            np.savez_compressed(path, **proba)

        for preset in presets:
            train, pool = sets[preset]
            tr, te = _rows(train, train_order), _rows(pool, pool_order)
            X, V, y = train.X[tr], train.X_var[tr], train.y[tr]
            Xp, Vp = pool.X[te], pool.X_var[te]
            added = [k for k, name in enumerate(train.feature_names) if name not in base_train.feature_names]
            Xb, Xbp = np.hstack([X, np.sqrt(V[:, added])]), np.hstack([Xp, np.sqrt(Vp[:, added])])
            for model in models:
                weighted = model.endswith("+w")
                kind = model.removesuffix("+w")
                names = [f"{b}{'+w' if weighted else ''}|{preset}" for b in BASELINES] if kind == "baselines" \
                    else [f"{model}|{preset}"]
                if all(n in proba for n in names):
                    continue
                t = time.time()
                w = weight if weighted else None
                if kind == "baselines":
                    keep({n: _fit_baseline(b, seed, Xb, y, Xbp, w) for n, b in zip(names, BASELINES)})
                else:
                    clf = _estimator(kind, seed, epochs).fit(X, y, V, sample_weight=w)
                    keep({names[0]: clf.predict_proba(Xp, Vp)})
                _log(f"{earlier}->{later} seed {seed} {model} {preset}: {time.time() - t:.0f} s")


def run_task(task: str, presets, models, seeds, epochs: int | None, out: Path, cache: Path | None) -> None:
    """Within 4FGL-DR4 (bll / fsrq / pulsar): ``heldout``, the main job's 80/20 split (seed 0), or ``faint``, the
    faintest quarter by ``Signif_Avg`` held out and the brighter three quarters trained on (issue 22's tasks,
    without its 90% subsamples); probabilities to ``out/<task>_seed<seed>.npz`` as `run_pair` saves them."""
    from gpal.catalogs import load_catalog

    weighted = [m for m in models if m.endswith("+w")]
    if weighted:
        raise ValueError(f"task {task}: no shift weights within one release; drop {weighted}")
    catalog = load_catalog("4FGL-DR4")
    row_presets = list(dict.fromkeys([*presets, "fermi_dr4_measurements"]))
    sets = {p: _datasets(catalog, "4FGL-DR4", p, cache)[0] for p in row_presets}
    base = sets[presets[0]]
    ids = set.intersection(*(set(map(str, s.ids)) for s in sets.values()))
    data = base.subset(np.nonzero([str(n) in ids for n in base.ids])[0])
    significance = catalog.values_of("significance", [str(n) for n in data.ids])
    if task == "heldout":
        train, test = data.split(test_size=0.2, seed=0)
    else:
        faint = significance <= np.quantile(significance, 0.25)
        train, test = data.subset(np.nonzero(~faint)[0]), data.subset(np.nonzero(faint)[0])
    train_ids, test_ids = [str(n) for n in train.ids], [str(n) for n in test.ids]
    meta = {"ids": np.array(test_ids), "y": test.y, "significance": catalog.values_of("significance", test_ids),
            "glat": catalog.values_of("glat", test_ids), "train_counts": np.bincount(train.y, minlength=len(CLASSES))}

    for seed in seeds:
        path = out / f"{task}_seed{seed}.npz"
        proba = _load(path)
        proba.update(meta)
        _fit_within(proba, path, sets, base, presets, models, train_ids, test_ids, seed, epochs, f"{task} seed {seed}")


def _load(path: Path) -> dict:
    """A saved file's arrays (empty if none); one saved before files named their commit says ``unknown``."""
    proba = dict(np.load(path)) if path.exists() else {}
    if "commit" not in proba and any("|" in k for k in proba):
        proba["commit"] = np.array("unknown")
    return proba


def _stamp(proba: dict) -> None:
    """Name the commit of the models just fitted into ``proba``: ``mixed`` once a file holds fits of several."""
    commit = code_commit()
    proba["commit"] = np.array(commit if str(proba.get("commit", commit)) == commit else "mixed")


def _commit_of(commits) -> str:
    """The one commit of several runs or checks, ``mixed`` if they differ ("" if none names one)."""
    commits = set(commits)
    return commits.pop() if len(commits) == 1 else "mixed"


def _rows(d, wanted):
    """The rows of data set ``d`` holding the sources named ``wanted``, in that order."""
    at = {str(n): i for i, n in enumerate(d.ids)}
    return np.array([at[i] for i in wanted])


def _fit_within(proba: dict, path: Path, sets: dict, base, presets, models, train_ids, test_ids, seed: int,
                epochs: int | None, label: str) -> None:
    """Every model on every preset of one within-release split, trained on ``train_ids`` and scored on ``test_ids``;
    each into ``proba`` and saved to ``path`` as it finishes, one found there not fitted again (the runs resume)."""
    for preset in presets:
        d = sets[preset]
        tr, te = _rows(d, train_ids), _rows(d, test_ids)
        X, V, y, Xp, Vp = d.X[tr], d.X_var[tr], d.y[tr], d.X[te], d.X_var[te]
        added = [k for k, name in enumerate(d.feature_names) if name not in base.feature_names]
        for model in models:
            names = [f"{b}|{preset}" for b in BASELINES] if model == "baselines" else [f"{model}|{preset}"]
            if all(n in proba for n in names):
                continue
            t = time.time()
            if model == "baselines":
                Xb, Xbp = np.hstack([X, np.sqrt(V[:, added])]), np.hstack([Xp, np.sqrt(Vp[:, added])])
                proba.update({n: _fit_baseline(b, seed, Xb, y, Xbp, None) for n, b in zip(names, BASELINES)})
            else:
                proba[names[0]] = _estimator(model, seed, epochs).fit(X, y, V).predict_proba(Xp, Vp)
            _stamp(proba)
            np.savez_compressed(path, **proba)
            _log(f"{label} {model} {preset}: {time.time() - t:.0f} s ({len(train_ids)} training)")


def _saved_runs(out: Path, stem: str) -> dict[int, dict]:
    """Every saved seed of one check or task, by seed: the summaries use all of them, whatever ``--seeds`` fitted."""
    found = {int(p.stem.rsplit("_seed", 1)[1]): p for p in out.glob(f"{stem}_seed*.npz")
             if p.stem.rsplit("_seed", 1)[1].isdigit()}
    return {s: dict(np.load(found[s])) for s in sorted(found)}


def _models_by_seed(runs: dict[int, dict]) -> dict[str, dict[int, np.ndarray]]:
    """The saved probabilities as ``"model|preset"`` (presets under their summary alias) -> seed -> array."""
    models: dict[str, dict[int, np.ndarray]] = {}
    for seed, run in runs.items():
        for key, p in run.items():
            if "|" in key:
                model, preset = key.split("|")
                models.setdefault(f"{model}|{SUMMARY_ALIAS.get(preset, preset)}", {})[seed] = p
    return models


def load_task(task: str, out: Path) -> dict | None:
    """The saved runs of a within-release task in `load_check`'s form (every test source scored; AGN vs pulsar:
    the bll and fsrq against the pulsars)."""
    runs = _saved_runs(out, task)
    if not runs:
        return None
    first = next(iter(runs.values()))
    label = first["y"].astype(int)
    models = _models_by_seed(runs)
    return {"check": task, "commit": _commit_of(str(r.get("commit", "")) for r in runs.values()),
            "label": label, "agn_psr": np.ones(label.size, bool),
            "is_pulsar": label == CLASSES.index("pulsar"), "significance": first["significance"],
            "glat": first["glat"],
            "models": _with_pool_prior(_with_averages(models), np.zeros(label.size, str), first["train_counts"])}


def run_plane(presets, models, seeds, epochs: int | None, out: Path, cache: Path | None) -> None:
    """The Galactic plane: every labelled 4FGL-DR4 source in the coarse groups AGN / pulsar / other (scheme
    ``agn_pulsar_other``), the class-scheme study's stratified 80/20 split (seed = the seed), scored on the held-out
    sources at |b| <= 10 deg; probabilities to ``out/plane_seed<seed>.npz``."""
    from gpal.catalogs import load_catalog

    catalog = load_catalog("4FGL-DR4")
    row_presets = list(dict.fromkeys([*presets, "fermi_dr4_measurements"]))
    sets = {p: _datasets(catalog, "4FGL-DR4", p, cache, PLANE_SCHEME)[0] for p in row_presets}
    base = sets[presets[0]]
    ids = set.intersection(*(set(map(str, s.ids)) for s in sets.values()))
    data = base.subset(np.nonzero([str(n) in ids for n in base.ids])[0])

    for seed in seeds:
        train, test = data.split(test_size=0.2, seed=seed, stratify=True)
        glat = catalog.values_of("glat", [str(n) for n in test.ids])
        test_ids = [str(n) for n, b in zip(test.ids, glat) if abs(b) <= PLANE_DEG]
        train_ids = [str(n) for n in train.ids]
        path = out / f"plane_seed{seed}.npz"
        proba = _load(path)
        proba.update({"ids": np.array(test_ids), "y": test.y[_rows(test, test_ids)],
                      "prior": np.bincount(train.y, minlength=3) / train.y.size})
        _fit_within(proba, path, sets, base, presets, models, train_ids, test_ids, seed, epochs, f"plane seed {seed}")


def summarize_plane(out: Path) -> pd.DataFrame | None:
    """Balanced accuracy over AGN / pulsar / other at |b| <= 10 deg, by argmax and by the balanced decision
    argmax p(group | x) / p(group) (group shares of the training sources), mean and spread over seeds, and the NLL."""
    runs = _saved_runs(out, "plane")
    if not runs:
        return None
    scores: dict[str, list] = {}
    for run in runs.values():
        y = run["y"].astype(int)
        for key, p in run.items():
            if "|" not in key:
                continue
            recall = lambda pred: float(np.mean([np.mean(pred[y == k] == k) for k in np.unique(y)]))
            scores.setdefault(key, []).append((recall(p.argmax(1)), recall((p / run["prior"]).argmax(1)),
                                               float(-np.log(np.clip(p[np.arange(y.size), y], PROBA_FLOOR, 1)).mean())))
    n = next(iter(runs.values()))["y"]
    rows = [{"check": "plane", "subset": f"|b| <= {PLANE_DEG:g}: " + ", ".join(f"{int(np.sum(n == k))} {g}" for k, g in
                                                                              enumerate(("agn", "pulsar", "other"))),
             "model": key, "seeds": len(v), **{f"{m}": float(np.mean([s[i] for s in v])) for i, m in
                                               enumerate(("balanced_accuracy", "balanced_accuracy_balanced", "nll"))},
             "balanced_accuracy_balanced_sd": float(np.std([s[1] for s in v], ddof=1)) if len(v) > 1 else np.nan}
            for key, v in scores.items()]
    return pd.DataFrame(rows)


def _with_averages(models: dict) -> dict:
    """``models`` and their averages (issue 36's model averaging), seed by seed: the GP over the summary and the
    measurement preset (``gp|avg presets``), and the GP with logistic regression on the summary features
    (``gp+logistic|summary``)."""
    pairs = {"gp|avg presets": ("gp|summary", "gp|fermi_dr4_measurements"),
             "gp+logistic|summary": ("gp|summary", "logistic|summary")}
    out = dict(models)
    for name, (a, b) in pairs.items():
        if a in models and b in models and (seeds := sorted(set(models[a]) & set(models[b]))):
            out[name] = {s: (models[a][s] + models[b][s]) / 2 for s in seeds}
    return out


def _with_pool_prior(models: dict, class1: np.ndarray, train_counts: np.ndarray) -> dict:
    """``models`` and, as ``<model>@prior``, the GP and logistic regression moved to the class mix of each group of
    sources to classify (unassociated; bcu: every group, as the recorded study moved them) by
    `gpal.catalog_jobs.pool_prior`: what the pool itself says, no later labels."""
    from gpal.catalog_jobs.pool_prior import adjust_to_pool
    from gpal.catalogs.classes import source_groups

    prior, groups = train_counts / train_counts.sum(), source_groups(class1)
    out = dict(models)
    for name in ("gp|summary", "gp|fermi_dr4_measurements", "logistic|summary"):
        if name in models:
            kind, preset = name.split("|")
            out[f"{kind}@prior|{preset}"] = {seed: adjust_to_pool(p, groups, prior, CLASSES, moved=None).proba
                                             for seed, p in models[name].items()}
    return out


def load_check(earlier: str, later: str, out: Path) -> dict | None:
    """The saved runs of one pair: sources, labels and, per model, its probabilities by seed (None: nothing saved).

    The 3-class label is the later class among bll / fsrq / pulsar (-1 otherwise); the AGN-vs-pulsar rows are the
    earlier *unassociated* sources the later release associates with an AGN or a pulsar, as `gpal check-later`
    scores them.  Models are named ``model|preset``, the first (summary) preset renamed ``summary`` so that checks
    from releases with other summary presets (3FGL's) pool."""
    from gpal.catalogs.schemes import coarse_group

    runs = _saved_runs(out, f"{earlier}_{later}")
    if not runs:
        return None
    first = next(iter(runs.values()))
    codes = {k: tuple(MERGE.get(c, (c,))) for k, c in enumerate(CLASSES)}
    later_code = np.char.lower(first["later_code"].astype(str))
    label = np.array([next((k for k, c in codes.items() if code in c), -1) for code in later_code])
    group = np.array([coarse_group(c) if c not in ("missing", "", "unk") else "" for c in later_code])
    agn_psr = (first["class1"] == "") & np.isin(group, ["agn", "pulsar"])
    models = _models_by_seed(runs)
    return {"check": f"{earlier} -> {later}", "commit": _commit_of(str(r.get("commit", "")) for r in runs.values()),
            "label": label, "agn_psr": agn_psr, "is_pulsar": group == "pulsar",
            "significance": first["significance"], "glat": first["glat"],
            "models": _with_pool_prior(_with_averages(models), first["class1"], first["train_counts"])
            if "train_counts" in first else _with_averages(models)}


def pooled(checks: list[dict]) -> dict:
    """The checks' sources together (a source scored by two checks counts twice), with the models every check has."""
    names = [m for m in checks[0]["models"] if all(m in c["models"] for c in checks)]
    seeds = {m: sorted(set.intersection(*(set(c["models"][m]) for c in checks))) for m in names}
    # the fainter half of each check, so that one release's faint sources do not decide the pooled half
    fainter = np.concatenate([_fainter(c) for c in checks])
    return {"check": "pooled: " + " + ".join(c["check"] for c in checks), "commit": _commit_of(c["commit"] for c in checks),
            **{k: np.concatenate([c[k] for c in checks]) for k in ("label", "agn_psr", "is_pulsar", "significance", "glat")},
            "fainter": fainter,
            "models": {m: {s: np.concatenate([c["models"][m][s] for c in checks]) for s in seeds[m]} for m in names if seeds[m]}}


def _fainter(check: dict) -> np.ndarray:
    """The scored sources below their median significance."""
    scored = check["label"] >= 0
    return scored & (check["significance"] < np.median(check["significance"][scored]))


def _auc(truth: np.ndarray, score: np.ndarray):
    """ROC AUC by ranks (ties counted half) along the last axis: one per row of (draws, n) arrays."""
    from scipy.stats import rankdata

    ranks = rankdata(score, axis=-1)
    n_pos = truth.sum(axis=-1)
    return (np.sum(ranks * truth, axis=-1) - n_pos * (n_pos + 1) / 2) / (n_pos * (truth.shape[-1] - n_pos))


def summarize(check: dict, reference: str = "logistic|summary", gp_reference: str = "gp|summary") -> pd.DataFrame:
    """One row per subset and model: NLL (mean and spread over seeds), the paired difference of the seed-averaged
    per-source NLL to logistic regression on the summary features (``diff``) and to the GP on them (``diff_gp``) with
    bootstrap 95% intervals over sources; balanced accuracy; and the AGN-vs-pulsar AUC (``auc``) with the same
    paired interval against logistic regression."""
    label, models = check["label"], check["models"]
    scored = label >= 0
    fainter = check.get("fainter", _fainter(check))
    subsets = {"all": scored, "fainter half": fainter, **{f"later {c}": label == k for k, c in enumerate(CLASSES)},
               "|b| <= 10": scored & (np.abs(check["glat"]) <= 10)}
    rng = np.random.default_rng(0)
    rows = []
    for subset, mask in subsets.items():
        y = label[mask]
        if y.size < 2:
            continue
        draws = rng.integers(0, y.size, (N_BOOT, y.size))
        loss = {m: np.mean([-np.log(np.clip(p[mask][np.arange(y.size), y], PROBA_FLOOR, 1.0)) for p in by_seed.values()],
                           axis=0) for m, by_seed in models.items()}
        for m, by_seed in models.items():
            per_seed = [float(-np.log(np.clip(p[mask][np.arange(y.size), y], PROBA_FLOOR, 1.0)).mean()) for p in by_seed.values()]
            row = {"check": check["check"], "commit": check.get("commit", ""), "subset": subset, "n": int(y.size),
                   "model": m, "seeds": len(by_seed),
                   "nll": float(np.mean(per_seed)), "nll_sd": float(np.std(per_seed, ddof=1)) if len(per_seed) > 1 else np.nan,
                   "balanced_accuracy": float(np.mean([balanced_accuracy(y, p[mask]) for p in by_seed.values()]))
                   if np.unique(y).size > 1 else np.nan}
            for ref, col in ((reference, "diff"), (gp_reference, "diff_gp")):
                if ref in loss and ref != m:
                    delta = loss[m] - loss[ref]
                    boot = delta[draws].mean(axis=1)
                    row.update({col: float(delta.mean()), f"{col}_low": float(np.percentile(boot, 2.5)),
                                f"{col}_high": float(np.percentile(boot, 97.5))})
            rows.append(row)
    # AGN vs pulsar among the earlier unassociated sources, P(pulsar) as the score
    rows_auc = check["agn_psr"]
    truth = check["is_pulsar"][rows_auc]
    if 0 < truth.sum() < truth.size:
        draws = rng.integers(0, truth.size, (N_BOOT, truth.size))
        draws = draws[[0 < truth[d].sum() < truth.size for d in draws]]
        pulsar = CLASSES.index("pulsar")
        boot = {m: np.mean([_auc(truth[draws], p[rows_auc, pulsar][draws]) for p in by_seed.values()], axis=0)
                for m, by_seed in models.items()}
        for m, by_seed in models.items():
            row = {"check": check["check"], "commit": check.get("commit", ""), "subset": "AGN vs pulsar (unassociated)",
                   "n": int(truth.size),
                   "n_pulsar": int(truth.sum()), "model": m, "seeds": len(by_seed),
                   "auc": float(np.mean([_auc(truth, p[rows_auc, pulsar]) for p in by_seed.values()]))}
            if reference in boot and m != reference:
                row["auc_diff"] = row["auc"] - float(np.mean([_auc(truth, p[rows_auc, pulsar])
                                                              for p in models[reference].values()]))
                row["auc_diff_low"], row["auc_diff_high"] = np.percentile(boot[m] - boot[reference], [2.5, 97.5])
            rows.append(row)
    return pd.DataFrame(rows)


def shown(table: pd.DataFrame) -> pd.DataFrame:
    """The summary as printed: values to 3 decimals, each difference with its interval in one cell."""
    out = table.drop(columns=[c for c in ("check", "commit") if c in table]).copy()
    for col in ("diff", "diff_gp", "auc_diff"):
        if col in out:
            out[col] = [f"{d:+.3f} [{lo:+.3f}, {hi:+.3f}]" if np.isfinite(d) else ""
                        for d, lo, hi in zip(out[col], out[f"{col}_low"], out[f"{col}_high"])]
            out = out.drop(columns=[f"{col}_low", f"{col}_high"])
    if "nll_sd" in out:
        out["nll"] = [f"{v:.3f} ± {s:.3f}" if np.isfinite(s) else (f"{v:.3f}" if np.isfinite(v) else "")
                      for v, s in zip(out.nll, out.nll_sd)]
        out = out.drop(columns="nll_sd")
    out = out.dropna(axis=1, how="all")
    return out.apply(lambda c: c.map(lambda v: f"{v:.3f}" if isinstance(v, float) and np.isfinite(v) else
                                      ("" if isinstance(v, float) else v)))


_WORDS = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}


def _check_name(pair: str) -> str:
    earlier, later = pair.split(":")
    return f"{earlier} -> {later}"


def _pooled_name(pairs) -> str:
    return "pooled: " + " + ".join(map(_check_name, pairs))


def _signed(value: float) -> str:
    return f"{value:+.3f}".replace("-", "\u2212")


def read_summaries(out: Path) -> pd.DataFrame:
    """Every summary of checks and tasks kept in ``out`` (``summary_*.csv`` with check, subset and model columns)."""
    tables = []
    for path in sorted(out.glob("summary_*.csv")):
        try:
            table = pd.read_csv(path)
        except (OSError, ValueError) as exc:
            raise ValueError(f"{path}: not a readable summary ({exc})") from None
        if {"check", "subset", "model"} <= set(table.columns):
            tables.append(table.assign(file=path.name))
    if not tables:
        raise ValueError(f"{out}: no summary_*.csv of the checks; summarize them first (--pairs ... --summarize)")
    return pd.concat(tables, ignore_index=True)


class _Summaries:
    """Rows of the kept summaries, looked up by check, subset and model; the commits of the rows read are kept."""

    def __init__(self, table: pd.DataFrame, out: Path):
        self.table, self.out, self.commits = table, out, []

    def difference(self, check: str, model: str, column: str = "diff_gp", subset: str = "all") -> tuple:
        """(difference, low, high) of ``model`` on ``check``: against the GP (``diff_gp``) or logistic (``diff``)."""
        t = self.table
        rows = t[(t["check"] == check) & (t["subset"] == subset) & (t["model"] == model)]
        if rows.empty:
            raise ValueError(f"{self.out}: no summary row of {model} on {check!r} ({subset}); summarize that check "
                             "first (--pairs ... --summarize)")
        columns = [column, f"{column}_low", f"{column}_high"]
        if not set(columns) <= set(rows.columns):
            raise ValueError(f"{self.out}: {rows['file'].iloc[0]} has no columns {columns}")
        values = rows[columns].to_numpy(float)
        if not np.all(np.isfinite(values)):
            raise ValueError(f"{self.out}: {rows['file'].iloc[0]} has no {column} of {model} on {check!r} ({subset})")
        if not np.allclose(values, values[0], rtol=0, atol=1e-12):
            raise ValueError(f"{self.out}: the summaries {sorted(rows['file'])} disagree on {model} on {check!r}; "
                             "summarize again")
        commit = rows["commit"] if "commit" in rows else pd.Series([""] * len(rows))
        self.commits += ["" if pd.isna(c) else str(c) for c in commit]
        return tuple(values[0])

    def interval(self, *args, **kwargs) -> str:
        return "{} [{}, {}]".format(*map(_signed, self.difference(*args, **kwargs)))

    def spread(self, checks, model: str, column: str = "diff_gp") -> str:
        means = [self.difference(c, model, column)[0] for c in checks]
        return f"{_signed(min(means))} to {_signed(max(means))}"

    def commit(self, given: str | None) -> str:
        """The commit the rows read were fitted at, or ``given`` where they name none (ValueError otherwise)."""
        named = set(self.commits) - {""}
        if "" in self.commits and named:
            raise ValueError(f"{self.out}: some summary rows name the commit {sorted(named)}, some none: summarize again")
        if named - {given} and given:
            raise ValueError(f"{self.out}: the summaries name the commit(s) {sorted(named)}, not --commit {given}")
        if len(named) > 1:
            raise ValueError(f"{self.out}: the summaries read name several commits {sorted(named)}: rerun at one")
        commit = named.pop() if named else given
        if not commit:
            raise ValueError(f"{self.out}: the summaries name no commit: give the one their fits ran at (--commit)")
        if commit in ("mixed", "unknown") or commit.endswith("+dirty"):
            raise ValueError(f"{self.out}: the fits ran at {commit!r}: a record needs one committed source")
        return commit


def results_record(out: Path, commit: str | None = None) -> dict:
    """The results page's record ``other_features`` from the summaries kept in ``out``: each change to the main job
    (measurement preset, MGP, shift weighting, the pool prior) as its pooled NLL difference to the main job's GP,
    paired over sources, and where it shows (a subset, each check, a within-release task)."""
    from result_records import make_record, make_table

    summaries = _Summaries(read_summaries(out), out)
    every, measured = _pooled_name(RECORD_PAIRS), _pooled_name(RECORD_MEASUREMENT_PAIRS)
    checks = [_check_name(p) for p in RECORD_PAIRS]
    laters = {p.split(":")[1] for p in RECORD_MEASUREMENT_PAIRS}
    measured_label = (" + ".join(p.split(":")[0] for p in RECORD_MEASUREMENT_PAIRS) + f" -> {laters.pop()}"
                      if len(laters) == 1 else " + ".join(map(_check_name, RECORD_MEASUREMENT_PAIRS)))
    all_label = f"all {_WORDS.get(len(checks), len(checks))} checks"
    pulsar, fsrq = CLASSES.index("pulsar"), CLASSES.index("fsrq")
    rows = [
        ["band spectra and light curve as features (`fermi_dr4_measurements`)",
         f"{summaries.interval(measured, 'gp|fermi_dr4_measurements')} ({measured_label})",
         f"fainter half {summaries.interval(measured, 'gp|fermi_dr4_measurements', subset='fainter half')}"],
        ["the same GP without error bars (MGP)", f"{summaries.interval(every, 'mgp|summary')} ({all_label})",
         f"the faintest quarter within 4FGL-DR4 {summaries.interval(RECORD_TASK, 'mgp|summary')}"],
        ["shift weighting of the training sources", f"{summaries.interval(every, 'gp+w|summary')} ({all_label})",
         f"each check {summaries.spread(checks, 'gp+w|summary')}; logistic regression weighted, against unweighted: "
         f"each check {summaries.spread(checks, 'logistic+w|summary', 'diff')}"],
        ["the pool prior, every group moved (`--pool-prior` when recorded)",
         f"{summaries.interval(every, 'gp@prior|summary')} ({all_label})",
         f"later pulsars {summaries.interval(every, 'gp@prior|summary', subset=f'later {CLASSES[pulsar]}')}, "
         f"later FSRQs {summaries.interval(every, 'gp@prior|summary', subset=f'later {CLASSES[fsrq]}')}; "
         f"{checks[0]} alone {summaries.interval(checks[0], 'gp@prior|summary')}"],
    ]
    t = summaries.table
    seeds = sorted(set(t.loc[t["check"].isin([every, measured, RECORD_TASK]), "seeds"].astype(int)))
    table = make_table(["change to the main job", "pooled NLL difference", "where it shows"], rows, "lll")
    return make_record("Tried on the later-release checks", RECORD_COMMAND, summaries.commit(commit), [table],
                       {"checks": checks, "seeds": seeds[0] if len(seeds) == 1 else seeds},
                       source=f"the summaries in {out.as_posix()}/ (summary_*.csv)",
                       workflow="lab/studies/measurement_features.yaml")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", nargs="+", default=[], help="earlier:later release pairs (4FGL-DR4:FL16Y ...)")
    parser.add_argument("--presets", nargs="+", default=list(PRESETS), help="the first is the reference (summary) preset")
    parser.add_argument("--models", nargs="+", default=["gp", "baselines"], choices=MODELS)
    parser.add_argument("--tasks", nargs="+", default=[], choices=TASKS, help="within-release tasks (4FGL-DR4)")
    parser.add_argument("--seeds", nargs="+", type=int, default=[0], help="seeds to fit; summaries use every saved seed")
    parser.add_argument("--epochs", type=int, default=None, help="GP epochs (default: the main job's)")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--cache", type=Path, default=None, help="folder keeping the built data sets between runs")
    parser.add_argument("--summarize", action="store_true", help="print from the saved probabilities only")
    parser.add_argument("--fit-only", action="store_true",
                        help="fit and save, print no tables (their bootstrap takes minutes; --summarize prints them)")
    parser.add_argument("--record", type=Path, help="then write the results page's record from the summaries in --out "
                        "(alone: from those kept, fitting and summarizing nothing)")
    parser.add_argument("--commit", help="with --record: the commit the fits ran at, for summaries that name none")
    args = parser.parse_args(argv)
    if not args.pairs and not args.tasks and not args.record:
        parser.error("name --pairs or --tasks (or --record alone)")
    args.out.mkdir(parents=True, exist_ok=True)
    pd.set_option("display.width", 200)
    if not args.summarize:
        for pair in args.pairs:
            earlier, later = pair.split(":")
            run_pair(earlier, later, tuple(args.presets), args.models, args.seeds, args.epochs, args.out, args.cache)
        for task in args.tasks:
            if task == "ood":
                run_ood(tuple(args.presets), args.seeds, args.out, args.cache)
                continue
            if task == "plane":
                run_plane(tuple(args.presets), args.models, args.seeds, args.epochs, args.out, args.cache)
                continue
            run_task(task, tuple(args.presets), args.models, args.seeds, args.epochs, args.out, args.cache)
        if args.fit_only:
            return 0
    checks = [c for pair in args.pairs if (c := load_check(*pair.split(":"), args.out)) is not None]
    if len(checks) > 1:
        checks.append(pooled(checks))
    checks += [c for task in args.tasks if task not in ("plane", "ood") and (c := load_task(task, args.out)) is not None]
    tables = [summarize(c) for c in checks]
    if "plane" in args.tasks and (plane := summarize_plane(args.out)) is not None:
        tables.append(plane)
    asked = [*args.pairs, *(t for t in args.tasks if t != "ood")]  # the outlier probe keeps its csv, not runs
    if args.summarize and asked and not tables:  # git keeps the summaries, not the saved runs they are made from
        print(f"error: no saved runs of {' '.join(asked)} in {args.out}/ (git does not keep them); "
              "fit them with the study's commands: python lab/studies/run.py measurement_features",
              file=sys.stderr)
        return 2
    for table in tables:
        print(f"\n## {table.check.iloc[0]}\n")
        print(shown(table).to_markdown(index=False))
    if "ood" in args.tasks and (args.out / "summary_ood.csv").exists():
        ood = pd.read_csv(args.out / "summary_ood.csv").drop(columns="seed").groupby("preset", sort=False)
        print("\n## None of these (outlier score; mean ± SD over seeds)\n")
        print((ood.mean().round(3).astype(str) + " ± " + ood.std().round(3).astype(str)).T.to_markdown())
    if tables:
        name = "summary_" + "+".join([p.replace(":", "_") for p in args.pairs] + args.tasks) + ".csv"
        pd.concat(tables).to_csv(args.out / name, index=False)
    if args.record:
        from result_records import outcome, write_record

        try:
            written = write_record(args.record, results_record(args.out, args.commit))
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        print(outcome(written))
    return 0


if __name__ == "__main__":
    sys.exit(main())

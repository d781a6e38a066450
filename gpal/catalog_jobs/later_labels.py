"""The later-label checks: gpal and the baselines scored by what later releases found, on every check, over seeds.

For each release pair (earlier, later), every labelled bll / fsrq / pulsar (psr + msp) source of the
earlier release trains each model; its unassociated and bcu sources are classified and scored by the
class the later release gives them (linked by `gpal.catalogs.links.link_later`, as ``gpal check-later``
links them).  A held-out check trains on the main job's 80% split of one release and scores the other
20%.  Per check, model and seed (`measure_check`):

- **3-class** NLL, top-label ECE (15 equal-width bins) and balanced accuracy on the sources whose
  (later) class is bll, fsrq or pulsar; the ECE of each class's probability (its reliability);
- **AGN-vs-pulsar AUC** of p(pulsar): on a later-label check the earlier *unassociated* sources the
  later release calls an AGN or a pulsar (coarse groups, `gpal.catalogs.schemes.coarse_group`); on a
  held-out check every held-out source;
- **pulsar-vs-blazar AUC** of p(pulsar) on every scored source the later release calls a bll, fsrq or pulsar
  (unassociated and bcu alike, the bcu with what the catalog knows applied): the set of the published
  classifiers' comparisons (3FGL -> FL16Y: 545 sources, 75 pulsars);
- **BL Lac-vs-FSRQ AUC** of p(fsrq) / (p(bll) + p(fsrq)) on the scored sources that are bll or fsrq;
- on a held-out check, the NLL of its faintest quarter (``Signif_Avg``).

Every model's probabilities of a bcu source have what the catalog knows applied (a bcu is a blazar,
`gpal.catalogs.known_classes`).  Intervals are 95% paired bootstrap intervals over the sources of the
difference between gpal and each other model, each resample's measure averaged over the seeds, so the same
sources are compared on both sides; the measures hold gpal minus the model (``diff``), and what shows them
(`paired_table`, `difference_to_gpal`) the other model minus gpal, as every other table of gpal.

Models: ``gpal`` (the main job's estimator), ``gpal+T`` (its probabilities with a temperature fitted on a
validation split, `gpal.evaluation.recalibration`), ``gpal+pool_unassociated`` (its probabilities of a
later-label check's unassociated sources moved to their own class mix, the bcu left as gpal gave them: what
``gpal classify`` does by default, through the same `gpal.catalog_jobs.pool_prior.adjust_to_pool`; no fit of its
own, and held-out rows are not moved), ``gpal+pool`` (the same moving every CLASS1 group, the bcu too), the variants of `GP_VARIANTS` and the baselines
(`gpal.evaluation.baselines`).
"""

from __future__ import annotations

import functools
import warnings
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from gpal.catalogs.classes import class1_codes
from gpal.catalogs.releases import RELEASES, link_path
from gpal.evaluation.calibration import class_reliability, expected_calibration_error
from gpal.evaluation.comparison import balanced_accuracy, difference_text, resampled_metrics
from gpal.evaluation.metrics import negative_log_likelihood, roc_auc
from gpal.warning_filters import changed_filters

__all__ = ["BCU", "CLASSES", "GP_VARIANTS", "HELD_OUT", "MERGE", "N_BOOT", "PAIRS", "POOL_PRIOR",
           "POOL_PRIOR_UNASSOCIATED", "TEMPERATURE", "TEMPERATURE_BIAS", "check_data", "check_pairs", "check_probabilities", "fit_unit",
           "difference_to_gpal", "fold_bcu", "later_codes", "measure_check", "model_measures", "moved_to_pool", "paired_table",
           "release_sets", "scored_rows", "variant_kernel", "with_bcu_class"]

CLASSES = ("bll", "fsrq", "pulsar")
#: The CLASS1 codes merged into one class of `CLASSES` (the main job's pulsar class).
MERGE = {"pulsar": ("psr", "msp")}
#: The later-label checks of docs/results.md ("What later releases found"), earlier:later.
PAIRS = ("3FGL:FL16Y", "4FGL:FL16Y", "4FGL-DR2:FL16Y", "4FGL:4FGL-DR4", "4FGL-DR4:FL16Y")
#: Releases whose main-job split (80 / 20, stratified, the seed's) gives a held-out check.
HELD_OUT = ("FL16Y", "4FGL-DR4")
TEST_SIZE = 0.2
#: The share of the training rows a validation fit leaves out to fit the temperature on.
VALIDATION_SIZE = 0.2
#: The model whose probabilities are recalibrated by a temperature, and the name of the result (whose unit holds
#: the validation fit).
TEMPERATURE = ("gpal", "gpal+T")
#: The same validation fit recalibrating by a temperature and an offset per class: no fit of its own.
TEMPERATURE_BIAS = "gpal+TB"
#: The model whose probabilities of the pool are moved with every CLASS1 group moved, and the name of the result (no
#: fit of its own: a transform of the model's probabilities).
POOL_PRIOR = ("gpal", "gpal+pool")
#: The same moving only the groups ``gpal classify``'s pool prior moves (the unassociated sources; the bcu keep
#: gpal's probabilities).
POOL_PRIOR_UNASSOCIATED = "gpal+pool_unassociated"
#: GP models: name -> what differs from the main job's estimator.  ``balanced``: every class weighs the same in
#: the ELBO (sample weights n / (C n_c)); ``kernel="se_plus_linear"``: a linear kernel added to the squared
#: exponential, so the latent functions can extrapolate beyond the training sources; ``bcu_class``: the release's bcu
#: sources train a fourth class (`with_bcu_class`), folded back into bll and fsrq (`fold_bcu`), as the published AGN
#: classifiers count every AGN, bcu included, against the pulsars; ``kernel_variance``: the squared exponential starts at
#: this variance instead of 1, so that the 50 epochs end sharper; ``class_kernel_variances``: each class's kernel
#: starts at its own variance (bll, fsrq, pulsar), fsrq's and pulsar's near where 200 epochs take them.  Each is a
#: question a later label can answer (is the main job's choice the better one?), so each runs as a model of a check.
GP_VARIANTS: dict[str, dict[str, Any]] = {
    "gpal": {},
    "gpal_inducing100": {"num_inducing": 100},
    "gpal_balanced": {"balanced": True},
    "gpal_linear": {"kernel": "se_plus_linear"},
    "gpal_epochs150": {"epochs": 150},
    "gpal_bcu_class": {"bcu_class": True},
    "gpal_kernel_variance10": {"kernel_variance": 10.0},
    "gpal_kernel_variance20": {"kernel_variance": 20.0},
    "gpal_class_kernel_variances": {"class_kernel_variances": (1.0, 4.1, 10.9)},
}
#: The CLASS1 code of the blazars of uncertain type, the fourth class of ``bcu_class``.
BCU = "bcu"
#: Bootstrap resamples of a check's paired intervals (the workflow's ``n_boot`` default).
N_BOOT = 1000
N_BINS = 15


def check_pairs(pairs: Sequence[str]) -> list[tuple[str, str]]:
    """``"EARLIER:LATER"`` pairs as (earlier, later) shipped releases, refused unless the later release is newer
    and links to the earlier one (so it can give the earlier sources later labels)."""
    names = list(RELEASES)
    out = []
    for pair in pairs:
        parts = str(pair).split(":")
        if len(parts) != 2 or not all(parts):
            raise ValueError(f"a release pair is written EARLIER:LATER (e.g. 4FGL:FL16Y); got {pair!r}")
        earlier, later = parts
        for name in parts:
            if name not in RELEASES:
                raise ValueError(f"release pair {pair!r}: {name!r} is not a shipped release ({', '.join(names)})")
        if names.index(later) <= names.index(earlier):
            newer = names[names.index(earlier) + 1:]
            raise ValueError(
                f"release pair {pair!r} has no later labels: {later} is not newer than {earlier}, so it cannot say what "
                f"{earlier}'s unassociated sources turned out to be; "
                + (f"give a later release of {', '.join(newer)}" if newer else
                   f"{earlier} is the newest shipped release, nothing has labelled its sources yet"))
        link_path(RELEASES[earlier], RELEASES[later])  # raises where the later release cannot name the earlier's sources
        out.append((earlier, later))
    return out


@functools.lru_cache(maxsize=8)
def release_sets(release: str) -> tuple[Any, Any, Any]:
    """The release's catalog, its labelled bll / fsrq / pulsar sources and its unassociated + bcu sources, with the
    release's main-job features (built once per process: the units of a run share them).

    Public so that an analysis of a later-label run reads the very rows the run scored, in its order.
    """
    from gpal.catalogs import load_catalog

    catalog = load_catalog(release)
    preset = catalog.record.preset
    with changed_filters():
        warnings.simplefilter("ignore")  # rows a feature cannot use are reported by the main job, not per unit
        train = catalog.dataset(classes=list(CLASSES), merge={k: list(v) for k, v in MERGE.items()}, features=preset)
        pool = catalog.pool(select=["unassociated", "bcu"], features=preset)
    return catalog, train, pool


@functools.lru_cache(maxsize=8)
def later_codes(earlier: str, later: str) -> np.ndarray:
    """The later release's CLASS1 code of each of the earlier release's pool sources ('' where it has none): the truth
    a later-label check scores, row for row with `release_sets`' pool."""
    from gpal.catalogs import load_catalog
    from gpal.catalogs.links import link_later

    first, pool = release_sets(earlier)[0], release_sets(earlier)[2]
    last = load_catalog(later)
    with changed_filters():
        warnings.simplefilter("ignore")
        index = link_later(first, last, [load_catalog(r.name) for r in link_path(first.record, last.record)])
    rows = {name: i for i, name in enumerate(first.names)}
    linked = index[[rows[str(n)] for n in pool.ids]]
    codes = np.where(linked >= 0, last.class_codes[np.maximum(linked, 0)], "")
    return class1_codes(codes)


def _trained_release(check: str) -> str:
    """The release a check trains on: ``held-out:RELEASE``'s, or the earlier one of ``EARLIER:LATER``."""
    return check.split(":", 1)[1] if check.startswith("held-out:") else check.split(":")[0]


def check_data(check: str, seed: int) -> tuple[Any, Any, np.ndarray]:
    """Training rows, rows to classify and their CLASS1 codes (the earlier release's) of one check and seed: what
    `fit_unit` fits and scores, for a model of one's own to be fitted on the same rows."""
    if check.startswith("held-out:"):
        _, data, _ = release_sets(_trained_release(check))
        train, test = data.split(test_size=TEST_SIZE, seed=seed, stratify=True)
        return train, test, np.array([CLASSES[k] for k in test.y])
    _, train, pool = release_sets(_trained_release(check))
    return train, pool, np.asarray(pool.aux["CLASS1"]).astype(str)


def variant_kernel(name: str | None, n_features: int, variance: float | None = None) -> Any:
    """The kernel a variant of `GP_VARIANTS` names (None: the estimator's default), its squared exponential starting
    at ``variance`` (None: 1, gpflow's start); public so that a fit outside the check uses the variant's kernel."""
    if name is None and variance is None:
        return None
    if name not in (None, "se_plus_linear"):
        raise ValueError(f"unknown kernel variant {name!r}; known: se_plus_linear")
    import gpflow

    from gpal.models.kernels import default_kernel

    squared_exponential = (default_kernel(n_features) if name is None
                           else gpflow.kernels.SquaredExponential(lengthscales=np.ones(n_features)))
    if variance is not None:
        squared_exponential.variance.assign(variance)
    if name is None:
        return squared_exponential
    return squared_exponential + gpflow.kernels.Linear(variance=np.full(n_features, 0.1))


def with_bcu_class(train: Any, pool: Any) -> Any:
    """``train`` with ``pool``'s bcu sources (CLASS1 ``bcu``) added as a fourth class after `CLASSES`, so the columns
    of the three keep their codes; the rest of the pool stays out."""
    from dataclasses import replace

    from gpal.data.dataset import NoisyDataset

    class1 = class1_codes(pool.aux["CLASS1"])
    bcu = pool.subset(class1 == BCU)
    names = (*train.class_names, BCU)
    return NoisyDataset.concatenate([replace(train, class_names=names),
                                     replace(bcu, y=np.full(bcu.n_samples, len(CLASSES)), class_names=names)])


def fold_bcu(proba: np.ndarray) -> np.ndarray:
    """(n, 4) probabilities of bll, fsrq, pulsar, bcu as (n, 3): a bcu is a blazar of unknown type, so its probability
    goes to bll and fsrq in the proportion the model gives them (half each where it gives both 0); p(pulsar) and
    p(fsrq) / (p(bll) + p(fsrq)) are unchanged."""
    p = np.asarray(proba, dtype=np.float64)
    blazar = p[:, 0] + p[:, 1]
    share = np.divide(p[:, 0], blazar, out=np.full(len(p), 0.5), where=blazar > 0)
    return np.column_stack([p[:, 0] + share * p[:, 3], p[:, 1] + (1 - share) * p[:, 3], p[:, 2]])


def _gp_proba(variant: Mapping[str, Any], seed: int, train: Any, X: np.ndarray, X_var: np.ndarray,
              pool: Any = None) -> np.ndarray:
    from gpal.catalog_jobs.settings import main_job_estimator

    params = dict(variant)
    balanced = params.pop("balanced", False)
    bcu_class = params.pop("bcu_class", False)
    if bcu_class:
        train = with_bcu_class(train, pool)
    kernel_variance = params.pop("kernel_variance", None)
    if "kernel" in params or kernel_variance is not None:
        params["kernel"] = variant_kernel(params.get("kernel"), train.X.shape[1], kernel_variance)
    weight = None
    if balanced:
        counts = np.bincount(train.y, minlength=train.n_classes).astype(float)
        weight = train.y.size / (train.n_classes * counts[train.y])
    class_variances = params.pop("class_kernel_variances", None)
    model = main_job_estimator(**params, random_state=seed, progress=False)
    if class_variances is None:
        model.fit(train, sample_weight=weight)
    else:
        _fit_from_class_variances(model, train, weight, class_variances)
    proba = model.predict_proba(X, X_var)
    if not bcu_class:
        return proba
    columns = list(model.classes_)  # the estimator orders its columns by class name: bcu would come first
    return fold_bcu(proba[:, [columns.index(c) for c in (*CLASSES, BCU)]])


def _fit_from_class_variances(estimator: Any, train: Any, weight: np.ndarray | None,
                              variances: Sequence[float]) -> None:
    """``estimator.fit(train, sample_weight=weight)`` by its public steps (`gpal.estimators.fit_plan`), each class's
    kernel starting at its own variance (one template kernel cannot)."""
    from gpal.estimators.fit_plan import fit_data, plan_fit, train_plan

    plan = plan_fit(estimator, *fit_data(estimator, train, None, None), weight=weight)
    kernels = plan.model.gp.kernels
    if plan.model.gp.shared:
        raise ValueError(f"class_kernel_variances gives each class's kernel its own variance; the estimator's "
                         f"share_kernel_and_inducing=True gives every class one kernel: set it to False")
    if len(kernels) != len(variances):
        raise ValueError(f"class_kernel_variances gives {len(variances)} variances for {len(kernels)} latent functions")
    for kernel, variance in zip(kernels, variances):
        kernel.variance.assign(variance)
    train_plan(plan, progress=False)


def fit_unit(check: str, seed: int, model: str) -> dict[str, Any]:
    """One model's probabilities of one check's rows (``proba``), fitted with ``seed``; for ``gpal+T`` instead the
    validation fit: the main job's estimator trained on (1 - VALIDATION_SIZE) of the training rows, its
    probabilities of the rest (``proba``) and their classes (``y``)."""
    from gpal.evaluation.baselines import BASELINES, fit_baselines

    train, rows, _ = check_data(check, seed)
    if model == TEMPERATURE[1]:
        fit, validation = train.split(test_size=VALIDATION_SIZE, seed=seed, stratify=True)
        proba = _gp_proba(GP_VARIANTS[TEMPERATURE[0]], seed, fit, validation.X, validation.X_var)
        return {"proba": proba.tolist(), "y": validation.y.tolist()}
    if model in GP_VARIANTS:
        pool = release_sets(_trained_release(check))[2]  # the release's bcu train a fourth class in `bcu_class`
        return {"proba": _gp_proba(GP_VARIANTS[model], seed, train, rows.X, rows.X_var, pool=pool).tolist()}
    if model in (POOL_PRIOR[1], POOL_PRIOR_UNASSOCIATED):
        raise ValueError(f"{model} has no fit of its own: it moves {POOL_PRIOR[0]}'s probabilities (check_probabilities)")
    if model in BASELINES:
        return {"proba": fit_baselines(train.X, train.y, rows.X, names=[model], random_state=seed)[model].tolist()}
    raise ValueError(f"unknown model {model!r}; known: {[*GP_VARIANTS, TEMPERATURE[1], *BASELINES]}")


def _known(proba: np.ndarray, class1: np.ndarray, train: Any, association: np.ndarray) -> np.ndarray:
    from gpal.catalogs.known_classes import apply_known_classes, class_weights

    counts = dict(zip(CLASSES, np.bincount(train.y, minlength=len(CLASSES)).tolist()))
    weights = class_weights(CLASSES, {k: list(v) for k, v in MERGE.items()}, counts)
    return apply_known_classes(proba, class1, weights, association=association)[0]


def moved_to_pool(proba: np.ndarray, class1: np.ndarray, train_y: np.ndarray, every_group: bool = False) -> np.ndarray:
    """``proba`` of pool rows (what the catalog knows already applied, as in a classify table) moved from the class
    shares of the training rows ``train_y`` by `gpal.catalog_jobs.pool_prior.adjust_to_pool` (groups by
    `gpal.catalogs.classes.source_groups`): the groups ``gpal classify``'s pool prior moves, exactly as it moves
    them; with ``every_group``, every CLASS1 group to its own mix (the bcu too)."""
    from gpal.catalog_jobs.pool_prior import MOVED_GROUPS, adjust_to_pool, training_prior
    from gpal.catalogs.classes import source_groups

    counts = dict(zip(CLASSES, np.bincount(np.asarray(train_y), minlength=len(CLASSES)).tolist()))
    prior = training_prior(counts, CLASSES)
    return adjust_to_pool(proba, source_groups(class1), prior, CLASSES,
                          moved=None if every_group else MOVED_GROUPS).proba


def scored_rows(check: str, seed: int) -> dict[str, np.ndarray]:
    """What a check scores: each row's class code (0..2, -1 where it has none of the three), whether it enters the
    AGN-vs-pulsar AUC and its truth there (pulsar = 1), and (held-out checks) whether it is in the faintest quarter."""
    train, rows, class1 = check_data(check, seed)
    if check.startswith("held-out:"):
        label = rows.y.astype(np.int64)
        signif = release_sets(_trained_release(check))[0].values_of("significance", [str(i) for i in rows.ids])
        return {"label": label, "agn_pulsar": np.ones(label.size, bool), "pulsar": label == CLASSES.index("pulsar"),
                "faint": signif <= np.quantile(signif, 0.25)}
    from gpal.catalogs.schemes import coarse_group

    codes = later_codes(*check.split(":"))
    label = np.array([CLASSES.index(c) if c in CLASSES else CLASSES.index("pulsar") if c in MERGE["pulsar"] else -1
                      for c in codes])
    group = np.array([coarse_group(c) if c not in ("", "unk") else "" for c in codes])
    return {"label": label, "agn_pulsar": (np.char.strip(class1) == "") & np.isin(group, ["agn", "pulsar"]),
            "pulsar": group == "pulsar", "faint": np.zeros(label.size, bool)}


def check_probabilities(check: str, seed: int, units: Mapping[str, Mapping[str, Any]],
                        class_bias: bool = False, pool_prior: bool = False) -> dict[str, np.ndarray]:
    """model -> probabilities of the check's rows from the fitted ``units`` (model -> fit_unit's result), with
    ``gpal+T`` (and, with ``class_bias``, ``gpal+TB``) derived from gpal's and what the catalog knows applied to
    every model; with ``pool_prior``, ``gpal+pool`` and ``gpal+pool_unassociated`` too: gpal's probabilities of a
    later-label check's pool moved by `moved_to_pool`, every group or as ``gpal classify`` moves them (on a held-out
    check gpal's own: the pool prior moves the pool only)."""
    from gpal.evaluation.recalibration import TemperatureScaling

    train, _, class1 = check_data(check, seed)
    proba = {m: np.asarray(u["proba"]) for m, u in units.items() if m != TEMPERATURE[1]}
    if TEMPERATURE[1] in units and TEMPERATURE[0] in proba:
        val = units[TEMPERATURE[1]]
        for name, bias in ((TEMPERATURE[1], False), (TEMPERATURE_BIAS, True))[:1 + class_bias]:
            scaling = TemperatureScaling(class_bias=bias).fit(np.asarray(val["proba"]),
                                                              np.asarray(val["y"], dtype=np.int64))
            proba[name] = scaling.transform(proba[TEMPERATURE[0]])
    if pool_prior and POOL_PRIOR[0] not in proba:
        raise ValueError(f"{POOL_PRIOR[1]} moves {POOL_PRIOR[0]}'s probabilities: fit {POOL_PRIOR[0]} too")
    if check.startswith("held-out:"):
        if pool_prior:
            proba[POOL_PRIOR[1]] = proba[POOL_PRIOR[0]].copy()
            proba[POOL_PRIOR_UNASSOCIATED] = proba[POOL_PRIOR[0]].copy()
        return proba
    from gpal.catalogs.known_classes import association_weight

    catalog, _, pool = release_sets(_trained_release(check))
    association = association_weight(catalog, [str(i) for i in pool.ids])
    known = {m: _known(p, class1, train, association) for m, p in proba.items()}
    if pool_prior:
        known[POOL_PRIOR[1]] = moved_to_pool(known[POOL_PRIOR[0]], class1, train.y, every_group=True)
        known[POOL_PRIOR_UNASSOCIATED] = moved_to_pool(known[POOL_PRIOR[0]], class1, train.y)
    return known


def model_measures(scored: Mapping[str, np.ndarray], proba: np.ndarray, index: Mapping[str, np.ndarray | None]) -> dict:
    """Every measure of one model's ``proba``; with ``index`` (measure group -> (B, n) resample of its rows) the
    measure of each resample instead.  What `measure_check` reports per model, for probabilities of one's own."""
    label, out = scored["label"], {}
    three = label >= 0
    y, p = label[three], proba[three]
    i = index.get("three")
    if not y.size:  # no source the later release puts in the three classes
        out.update(nll=np.nan, ece=np.nan, balanced_accuracy=np.nan)
    elif i is None:
        out.update(nll=negative_log_likelihood(y, p), ece=expected_calibration_error(y, p, N_BINS),
                   balanced_accuracy=balanced_accuracy(y, p))
    else:
        resampled = resampled_metrics(y, p, i, N_BINS)
        out.update({k: resampled[k] for k in ("nll", "ece", "balanced_accuracy")})
    if i is None:
        for c, cls in enumerate(CLASSES):
            out[f"ece_{cls}"] = class_reliability(y, p, c, N_BINS).ece if (y == c).any() else np.nan
    rows = scored["agn_pulsar"]
    s, t = proba[rows, CLASSES.index("pulsar")], scored["pulsar"][rows].astype(int)
    i = index.get("agn_pulsar")
    out["agn_pulsar_auc"] = roc_auc(t, s) if i is None else roc_auc(t[i], s[i])
    s, t = p[:, CLASSES.index("pulsar")], (y == CLASSES.index("pulsar")).astype(int)
    i = index.get("three")
    out["pulsar_blazar_auc"] = np.nan if not y.size else roc_auc(t, s) if i is None else roc_auc(t[i], s[i])
    blazar = np.isin(label, [0, 1])
    with np.errstate(invalid="ignore", divide="ignore"):
        s = proba[blazar, 1] / (proba[blazar, 0] + proba[blazar, 1])
    s, t = np.nan_to_num(s, nan=0.5), (label[blazar] == 1).astype(int)
    i = index.get("bll_fsrq")
    out["bll_fsrq_auc"] = roc_auc(t, s) if i is None else roc_auc(t[i], s[i])
    faint = scored["faint"][three]
    if faint.any() and index.get("three") is None:
        out["nll_faint_quarter"] = negative_log_likelihood(y[faint], p[faint])
    return out


def measure_check(check: str, seeds: Sequence[int], probabilities: Mapping[int, Mapping[str, np.ndarray]],
                  reference: str = "gpal", n_boot: int = N_BOOT) -> pd.DataFrame:
    """One row per model and measure: the mean over ``seeds`` (and its spread), and the paired bootstrap interval of
    ``reference`` minus the model.  ``probabilities``: seed -> model -> the check's rows' probabilities."""
    scored = {s: scored_rows(check, s) for s in seeds}
    models = [m for m in probabilities[seeds[0]] if all(m in probabilities[s] for s in seeds)]
    values = {m: [model_measures(scored[s], probabilities[s][m], {}) for s in seeds] for m in models}
    boot = {}
    for m in models:
        per_seed = []
        for s in seeds:
            sc = scored[s]
            rng = np.random.default_rng([s, 17])  # the same resamples for every model of a seed: paired
            sizes = {"three": int((sc["label"] >= 0).sum()), "agn_pulsar": int(sc["agn_pulsar"].sum()),
                     "bll_fsrq": int(np.isin(sc["label"], [0, 1]).sum())}
            index = {k: rng.integers(0, n, (n_boot, n)) for k, n in sizes.items() if n > 0}
            per_seed.append(model_measures(sc, probabilities[s][m], index))
        boot[m] = {k: np.nanmean([r[k] for r in per_seed], axis=0) for k in per_seed[0]}
    rows = []
    sizes = {"nll": "three", "ece": "three", "balanced_accuracy": "three", "agn_pulsar_auc": "agn_pulsar",
             "pulsar_blazar_auc": "three", "bll_fsrq_auc": "bll_fsrq"}
    sc0 = scored[seeds[0]]
    counts = {"three": int((sc0["label"] >= 0).sum()), "agn_pulsar": int(sc0["agn_pulsar"].sum()),
              "bll_fsrq": int(np.isin(sc0["label"], [0, 1]).sum())}
    for m in models:
        for measure in values[m][0]:
            v = np.array([r[measure] for r in values[m]], dtype=float)
            row = {"check": check, "model": m, "measure": measure, "n": counts.get(sizes.get(measure, "three")),
                   "value": float(np.nanmean(v)), "seed_sd": float(np.nanstd(v, ddof=1)) if len(v) > 1 else np.nan,
                   "seeds": len(seeds)}
            if measure in boot[m] and m != reference and reference in boot:
                d = boot[reference][measure] - boot[m][measure]
                ref = np.nanmean([r[measure] for r in values[reference]])
                row.update(diff=float(ref - row["value"]), diff_low=float(np.nanpercentile(d, 2.5)),
                           diff_high=float(np.nanpercentile(d, 97.5)))
            rows.append(row)
    return pd.DataFrame(rows)


def difference_to_gpal(measure: Mapping[str, float]) -> str:
    """A measure row's paired difference as text, the other model minus gpal (the row holds gpal minus the model).

    Returns
    -------
    str
        As `gpal.evaluation.comparison.difference_text`: '+0.003 [-0.010, +0.020]'.
    """
    return difference_text(-measure["diff"], -measure["diff_high"], -measure["diff_low"])


def paired_table(measures: pd.DataFrame, models: Sequence[str], shown: Sequence[str] = (
        "nll", "ece", "balanced_accuracy", "agn_pulsar_auc", "pulsar_blazar_auc", "bll_fsrq_auc")) -> pd.DataFrame:
    """The checks' table: one row per check and model, each measure as 'value' and, beside gpal, 'model - gpal'
    with its interval (`difference_to_gpal`)."""
    out = []
    for (check, model), part in measures.groupby(["check", "model"], sort=False):
        if model not in models:
            continue
        by = part.set_index("measure")
        row = {"check": check, "model": model, "n (3-class / AGN-psr / bll-fsrq)": ""}
        for m in shown:
            if m not in by.index:
                row[m] = ""
                continue
            r = by.loc[m]
            text = f"{r['value']:.3f}"
            if not pd.isna(r.get("diff", np.nan)):
                text += f" ({difference_to_gpal(r)})"
            row[m] = text
        n = [by.loc[m, "n"] if m in by.index else "" for m in ("nll", "agn_pulsar_auc", "bll_fsrq_auc")]
        row["n (3-class / AGN-psr / bll-fsrq)"] = " / ".join(str(int(x)) if x != "" else "" for x in n)
        out.append(row)
    return pd.DataFrame(out)

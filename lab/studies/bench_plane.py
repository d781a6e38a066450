#!/usr/bin/env python
"""Can a classifier reach the Galactic-plane target?  AGN / pulsar / other at |b| <= 10 deg (issue 62).

Target: balanced accuracy (BA) >= 0.82 over the coarse groups (`gpal.catalogs.schemes.coarse_group`) of
4FGL-DR4's labelled sources at |b| <= 10 deg (Zhu et al. 2023 report 0.815 on DR3's plane).  The splits are the
class-scheme study's (`bench_class_schemes`: every labelled source, 80/20 stratified by CLASS1 code, one split per
seed); every variant is scored on the same held-out plane sources of a seed, so differences are paired.

A variant is one choice on each axis (`Variant`):

* ``model``: the main job's GP (`shared.CLASS_SCHEME_GP`: NIMGP, population prior, softmax, M = 50), random
  forest, logistic regression, gradient boosting;
* ``train``: the training sources of the plane only, or of the whole sky;
* ``labels``: the three coarse groups, or finer classes (`FINE_CLASSES`: BL Lac, FSRQ, bcu, other AGN, young
  pulsar, millisecond pulsar, remnants and nebulae, spp, clusters, binaries, galaxies) whose probabilities are
  summed into their group before the decision;
* ``features``: the fermi_dr4 values; with their errors (sqrt of the variances) as features; with extra catalog
  columns a plane classifier could use (`EXTRA_COLUMNS`: |l|, PLEC curvature and shape, the number of analysis
  flags); with the extended-source flag and the 95% localisation too (``extended``: extended templates are
  almost all associated remnants and nebulae, so this one tells little about unassociated sources);
* ``unk``: unk sources (counterparts of unknown nature, coarse group "other") left out of training, or trained as
  "other";
* ``weights``: every coarse group weighs the same in training (sample weights n / (3 n_group)) and the decision is
  the argmax of the group probabilities, or no weights and the balanced decision argmax p(group | x) / p(group)
  with the training shares as p(group).
* ``clean``: the training set as it is, or without its soft-spectrum outlier AGN (`soft_agn_outliers`, in the
  spirit of Zhu et al. 2023's cleaning; ``soft_agn``: beyond the chi-square 3-dof 97.5% quantile, ``soft_agn99``:
  99%, a sensitivity check only).  Only training rows are dropped; the held-out sources are all scored.

Scores: BA over agn / pulsar / other on the held-out plane sources (unk left out, as the class-scheme study);
also with the held-out unk counted as "other", and with spp left out of the held-out sources.  Paired
differences: mean and SE of the per-seed difference, and a 95% bootstrap interval (held-out sources resampled
within each seed, the same draw for both variants).

Units (variant, seed) are saved under ``--out`` as they finish, so an interrupted run resumes; ``--summarize``
writes ``plane.md`` beside them (``--pool`` adds the units of other folders, ``--report`` writes elsewhere).
Seeds 3-5 (``--out lab/studies/records/class_schemes/plane_confirm``) check the variants picked on seeds 0-2
on other splits.

``--cv`` cross-validates a few variants fixed beforehand (`CV_VARIANTS`) instead: stratified K-fold (``--folds``)
over every labelled source, stratified by CLASS1 code, each of ``--repeats`` repeats its own shuffle; each fold's
fit is the split study's (`fit_and_score`), so each repeat scores every plane source once.  Units (variant, repeat,
fold) are saved under ``--out`` (default `CV_OUT`) as they finish; the summary is ``plane_cv.md`` beside them.
``--cv --clean soft_agn`` runs the cleaned versions of three of them (`CV_CLEANED`) on the same folds, into the same
folder; the summary pairs each against its uncleaned variant.

    python lab/studies/bench_plane.py --seeds 0 1 2
    python lab/studies/bench_plane.py --seeds 3 4 5 --out lab/studies/records/class_schemes/plane_confirm
    python lab/studies/bench_plane.py --summarize --pool lab/studies/records/class_schemes/plane_confirm \
        --report lab/studies/records/class_schemes/plane_six_seeds.md
    python lab/studies/bench_plane.py --cv --folds 5 --repeats 2
    python lab/studies/bench_plane.py --cv --clean soft_agn --folds 5 --repeats 5
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Callable

import numpy as np

from gpal.files import write_json_atomic

# lab/studies/ is the script's folder, first on its path
from shared import CLASS_SCHEME_GP as GP, COARSE_GROUPS, PLANE_DEG, code_commit, dr4_labelled, group_balanced_accuracy

OUT = Path("lab/studies/records/class_schemes/plane")
GROUPS = COARSE_GROUPS
#: Finer classes: name -> CLASS1 codes; each belongs to the coarse group of its codes.
FINE_CLASSES = {"bll": ("bll",), "fsrq": ("fsrq",), "bcu": ("bcu",), "agn_other": ("rdg", "agn", "ssrq", "css", "nlsy1", "sey"),
                "psr": ("psr",), "msp": ("msp",), "snr_pwn": ("snr", "pwn", "sfr"), "spp": ("spp",), "glc": ("glc", "gc"),
                "binary": ("hmb", "bin", "lmb", "nov"), "galaxy": ("sbg", "gal"), "unk": ("unk",)}
#: Catalog columns of the ``extra`` features (the 4 labelled sources without a PLEC fit get the training median).
EXTRA_COLUMNS = ("abs_GLON", "log(PLEC_SigCurv)", "PLEC_IndexS", "PLEC_ExpfactorS", "n_flags")
#: The spectral parameters of the soft-AGN cleaning's Gaussian, photon index first: the index says soft or hard, the
#: curvature significance and the pivot (decorrelation) energy are where plane pulsars and AGN part
#: (pulsar median log LP_SigCurv 2.3 against the AGN's 0.7 in the plane).
CLEAN_FEATURES = ("PL_Index", "log(LP_SigCurv)", "log(Pivot_Energy)")
#: ``clean`` -> the chi-square (3 dof) quantile of the squared Mahalanobis distance beyond which an AGN is an outlier.
CLEAN_QUANTILES = {"soft_agn": 0.975, "soft_agn99": 0.99}
N_BOOT = 2000


@dataclass(frozen=True)
class Variant:
    model: str = "gp"
    train: str = "plane"
    labels: str = "coarse"
    features: str = "values"
    unk: str = "out"
    weights: str = "groups"
    clean: str = "none"

    def _shown(self) -> list[str]:
        # no cleaning is left out of the name and the slug, so the units saved before the axis existed keep theirs
        return [getattr(self, f.name) for f in fields(self) if not (f.name == "clean" and self.clean == "none")]

    @property
    def name(self) -> str:
        return " / ".join(self._shown())

    @property
    def slug(self) -> str:
        return "_".join(self._shown()).replace("+", "")


def design() -> list[Variant]:
    """The variants run: every axis against the reference (plane, coarse, values, unk out, group weights) for every
    model, the feature and label axes crossed for the baselines (cheap), the GP's whole-sky fits limited to the
    coarse and fine labels and the decision rule."""
    out = []
    for model in ("random_forest", "logistic", "gradient_boosting"):
        for train in ("plane", "sky"):
            for labels in ("coarse", "fine"):
                for features in ("values", "errors", "extra", "extended"):
                    out.append(Variant(model, train, labels, features))
        out += [Variant(model, unk="other"), Variant(model, weights="none")]
    base = Variant("gp")
    out += [base, replace(base, labels="fine"), replace(base, features="errors"), replace(base, features="extra"),
            replace(base, labels="fine", features="errors"), replace(base, labels="fine", features="extra"),
            replace(base, features="extended"), replace(base, unk="other"), replace(base, weights="none"),
            replace(base, train="sky"), replace(base, train="sky", labels="fine"),
            replace(base, train="sky", weights="none")]
    return out


# ----------------------------------------------------------------- data
def _catalog_columns(ids) -> dict[str, np.ndarray]:
    """The extra columns of 4FGL-DR4 at the sources ``ids`` (NaN where the catalog has none)."""
    from gpal.catalogs import load_catalog
    from gpal.catalogs.catalog import text_values

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        catalog = load_catalog("4FGL-DR4")
    row = {name: i for i, name in enumerate(catalog.names)}
    at = np.array([row[str(i)] for i in ids])
    col = {name: np.asarray(catalog.table[name], dtype=np.float64)[at]
           for name in ("GLON", "PLEC_SigCurv", "PLEC_IndexS", "PLEC_ExpfactorS", "Flags", "Conf_95_SemiMajor")}
    glon = (col["GLON"] + 180.0) % 360.0 - 180.0
    flags = col["Flags"].astype(np.int64)
    extended = np.array([s.strip() != "" for s in text_values(catalog.table["Extended_Source_Name"])])[at]
    return {
        "abs_GLON": np.abs(glon),
        "log(PLEC_SigCurv)": np.log(np.maximum(col["PLEC_SigCurv"], 0.1)),
        "PLEC_IndexS": col["PLEC_IndexS"], "PLEC_ExpfactorS": col["PLEC_ExpfactorS"],
        "n_flags": np.array([bin(f).count("1") for f in flags], dtype=np.float64),
        "extended": extended.astype(np.float64),
        # extended templates have no localisation ellipse; the flag above says so, 0 keeps the column finite
        "log10(Conf_95_SemiMajor)": np.where(extended | np.isnan(col["Conf_95_SemiMajor"]), 0.0,
                                             np.log10(col["Conf_95_SemiMajor"])),
    }


def feature_matrix(data, extra: dict[str, np.ndarray], rows: np.ndarray, features: str) -> tuple[np.ndarray, np.ndarray]:
    """Features and their variances (0 for the columns with no error model) at ``rows`` for a feature choice."""
    X, V = data.X[rows], data.X_var[rows]
    if features == "values":
        return X, V
    blocks = [np.sqrt(V)]
    if features in ("extra", "extended"):
        blocks.append(np.column_stack([extra[c][rows] for c in EXTRA_COLUMNS]))
    if features == "extended":
        blocks.append(np.column_stack([extra[c][rows] for c in ("extended", "log10(Conf_95_SemiMajor)")]))
    added = np.hstack(blocks)
    return np.hstack([X, added]), np.hstack([V, np.zeros_like(added)])


def _fill_missing(X_train: np.ndarray, X_test: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    median = np.nanmedian(X_train, axis=0)
    return np.where(np.isnan(X_train), median, X_train), np.where(np.isnan(X_test), median, X_test)


def training_labels(codes: np.ndarray, variant: Variant) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    """Rows kept for training (unk only with ``unk="other"``), their class index, and the class names."""
    from gpal.catalogs.schemes import coarse_group

    keep = codes != "unk" if variant.unk == "out" else np.ones(codes.size, bool)
    if variant.labels == "coarse":
        names = [coarse_group(c) for c in codes[keep]]
    else:
        fine_of = {code: name for name, cs in FINE_CLASSES.items() for code in cs}
        names = [fine_of[c] for c in codes[keep]]
    classes = tuple(sorted(set(names)))
    return np.nonzero(keep)[0], np.array([classes.index(n) for n in names], dtype=np.int64), classes


def soft_agn_outliers(Z: np.ndarray, codes: np.ndarray, fit_rows: np.ndarray, train_rows: np.ndarray,
                      quantile: float) -> np.ndarray:
    """Which of ``train_rows`` are soft outlier AGN: a 3-D Gaussian (mean and covariance of ``Z``, photon index first)
    is fitted to the AGN among ``fit_rows`` (the fold's training rows, whole sky: the AGN population is mostly
    high-latitude blazars, while the plane's AGN are where misassociations gather, and a Gaussian fitted to them would
    widen to take them in); an AGN is dropped when its squared Mahalanobis distance is beyond the chi-square (3 dof)
    ``quantile`` and its index above the fitted AGN's median (softer)."""
    from scipy.stats import chi2

    from gpal.catalogs.schemes import coarse_group

    is_agn = np.array([coarse_group(c) == "agn" for c in codes])
    fitted = Z[fit_rows[is_agn[fit_rows]]]
    offset = Z[train_rows] - fitted.mean(0)
    distance2 = np.einsum("ij,jk,ik->i", offset, np.linalg.inv(np.cov(fitted.T)), offset)
    soft = Z[train_rows, 0] > np.median(fitted[:, 0])
    return is_agn[train_rows] & soft & (distance2 > chi2.ppf(quantile, Z.shape[1]))


def group_of_class(name: str) -> str:
    from gpal.catalogs.schemes import coarse_group

    return name if name in GROUPS else coarse_group(FINE_CLASSES[name][0])


# ----------------------------------------------------------------- fits
def _probabilities(variant: Variant, seed: int, epochs: int, X, V, y, ids, classes, weight, X_test, V_test) -> np.ndarray:
    """(n_test, n_classes) probabilities in the order of ``classes``."""
    from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    if variant.model == "gp":
        from gpal import NoisyGPClassifier
        from gpal.data.dataset import NoisyDataset

        train = NoisyDataset(X=X, X_var=V, y=y, class_names=classes, ids=ids,
                             feature_names=tuple(f"x{j}" for j in range(X.shape[1])))
        gp = NoisyGPClassifier(**dict(GP, epochs=epochs), random_state=seed).fit(train, sample_weight=weight)
        proba = gp.predict_proba(X_test, V_test)
        return proba[:, [list(gp.classes_).index(c) for c in classes]]
    if variant.model == "random_forest":
        model = RandomForestClassifier(500, min_samples_leaf=2, random_state=seed, n_jobs=1)
        model.fit(X, y, sample_weight=weight)
    elif variant.model == "gradient_boosting":
        model = HistGradientBoostingClassifier(random_state=seed)
        model.fit(X, y, sample_weight=weight)
    elif variant.model == "logistic":
        model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=5000))
        model.fit(X, y, logisticregression__sample_weight=weight)
    else:
        raise ValueError(f"unknown model {variant.model!r}")
    proba = np.zeros((X_test.shape[0], len(classes)))
    proba[:, model.classes_] = model.predict_proba(X_test)
    return proba


def unit_rows(glat: np.ndarray, tr_rows: np.ndarray, te_rows: np.ndarray, variant: Variant) -> tuple[np.ndarray, np.ndarray]:
    """A partition's rows a variant trains on (its ``train`` region) and scores (the plane's, unk still in)."""
    te_rows = te_rows[np.abs(glat[te_rows]) <= PLANE_DEG]
    if variant.train == "plane":
        tr_rows = tr_rows[np.abs(glat[tr_rows]) <= PLANE_DEG]
    return tr_rows, te_rows


def run_unit(data, extra, seed: int, variant: Variant, epochs: int, command: str) -> dict:
    train_all, test_all = data.split(test_size=0.2, seed=seed, stratify=True)
    index = {name: i for i, name in enumerate(data.ids)}
    tr_rows = np.array([index[i] for i in train_all.ids])
    te_rows = np.array([index[i] for i in test_all.ids])
    return {"variant": asdict(variant), "seed": seed, **fit_and_score(data, extra, tr_rows, te_rows, variant, seed, epochs),
            "command": command}


def fit_and_score(data, extra, tr_rows: np.ndarray, te_rows: np.ndarray, variant: Variant, seed: int, epochs: int) -> dict:
    """Train a variant on a partition's training rows and give its group scores at the partition's plane test rows."""
    fold_rows = tr_rows
    tr_rows, te_rows = unit_rows(data.aux["GLAT"], tr_rows, te_rows, variant)
    codes = np.array(data.class_names)[data.y]
    n_dropped = 0
    if variant.clean != "none":  # before the labels, so that the classes are those still trained on
        Z = data.X[:, [list(data.feature_names).index(c) for c in CLEAN_FEATURES]]
        dropped = soft_agn_outliers(Z, codes, fold_rows, tr_rows, CLEAN_QUANTILES[variant.clean])
        tr_rows, n_dropped = tr_rows[~dropped], int(dropped.sum())
    kept, y, classes = training_labels(codes[tr_rows], variant)
    tr_rows = tr_rows[kept]
    groups = np.array([group_of_class(c) for c in classes])
    group_index = np.array([GROUPS.index(g) for g in groups])[y]
    group_count = np.bincount(group_index, minlength=len(GROUPS)).astype(float)
    weight = y.size / (len(GROUPS) * group_count[group_index]) if variant.weights == "groups" else None
    X, V = feature_matrix(data, extra, tr_rows, variant.features)
    X_test, V_test = feature_matrix(data, extra, te_rows, variant.features)
    X, X_test = _fill_missing(X, X_test)
    t0 = time.perf_counter()
    proba = _probabilities(variant, seed, epochs, X, V, y, data.ids[tr_rows], classes, weight, X_test, V_test)
    seconds = time.perf_counter() - t0
    grouped = np.column_stack([proba[:, groups == g].sum(1) for g in GROUPS])
    if variant.weights == "none":  # the balanced decision: divide by the training shares of the groups
        grouped = grouped / (group_count / group_count.sum())
    return {"epochs": epochs if variant.model == "gp" else None,
            "commit": code_commit(), "seconds": seconds, "n_train": int(y.size), "n_dropped_agn": n_dropped,
            "classes": list(classes),
            "test_ids": [str(i) for i in data.ids[te_rows]], "test_codes": list(codes[te_rows]),
            "scores": np.round(grouped, 6).tolist()}


# ----------------------------------------------------------------- summary
def _ba(truth: np.ndarray, pred: np.ndarray) -> float:
    return group_balanced_accuracy(truth, pred, GROUPS)


def _truth_kept(codes: np.ndarray, evaluation: str) -> tuple[np.ndarray, np.ndarray]:
    """The coarse group of each held-out source and whether the evaluation scores it."""
    from gpal.catalogs.schemes import coarse_group

    truth = np.array([coarse_group(c) for c in codes])  # unk -> "other"
    keep = {"unk out": codes != "unk", "unk as other": np.ones(codes.size, bool),
            "unk and spp out": ~np.isin(codes, ["unk", "spp"])}[evaluation]
    return truth, keep


def _truth_pred(unit: dict, evaluation: str) -> tuple[np.ndarray, np.ndarray]:
    truth, keep = _truth_kept(np.asarray(unit["test_codes"]), evaluation)
    pred = np.array(GROUPS)[np.asarray(unit["scores"]).argmax(1)]
    return truth[keep], pred[keep]


EVALUATIONS = ("unk out", "unk as other", "unk and spp out")
#: Each axis's reference value, against which the paired differences are taken (the GP for the model).
REFERENCE = {"model": "gp", "train": "plane", "labels": "coarse", "features": "values", "unk": "out", "weights": "groups"}
FEATURE_STEPS = {"errors": "values", "extra": "errors", "extended": "extra"}


def _paired(units_a: dict, units_b: dict, seeds, rng) -> tuple[float, float, float, float]:
    """Mean and SE over seeds of BA(a) - BA(b) (unk out), and its 95% bootstrap interval."""
    diffs, boots = [], np.zeros(N_BOOT)
    for seed in seeds:
        ta, pa = _truth_pred(units_a[seed], "unk out")
        tb, pb = _truth_pred(units_b[seed], "unk out")
        if not np.array_equal(ta, tb):
            raise ValueError(f"seed {seed}: the two variants were scored on different held-out sources")
        diffs.append(_ba(ta, pa) - _ba(tb, pb))
        for k in range(N_BOOT):
            draw = rng.integers(0, ta.size, ta.size)
            boots[k] += (_ba(ta[draw], pa[draw]) - _ba(ta[draw], pb[draw])) / len(seeds)
    diffs = np.asarray(diffs)
    se = diffs.std(ddof=1) / np.sqrt(diffs.size) if diffs.size > 1 else float("nan")
    low, high = np.quantile(boots, [0.025, 0.975])
    return float(diffs.mean()), float(se), float(low), float(high)


def summarize(out: Path, command: str, pooled: tuple[Path, ...] = (), report: Path | None = None) -> str:
    """The study's tables from the units under ``out`` and ``pooled`` (other runs' folders, other seeds), written to
    ``report`` (default ``out/plane.md``)."""
    import pandas as pd

    units = [json.loads(p.read_text()) for folder in (out, *pooled) for p in sorted(folder.glob("unit_*.json"))]
    if not units:
        raise SystemExit(f"no units in {out}; run the study first")
    by_variant: dict[Variant, dict[int, dict]] = {}
    for u in units:
        by_variant.setdefault(Variant(**u["variant"]), {})[u["seed"]] = u
    seeds = sorted({u["seed"] for u in units})
    complete = {v: us for v, us in by_variant.items() if sorted(us) == seeds}
    complete.update(votes(complete, seeds))
    rows = []
    for v, us in complete.items():
        row = {**asdict(v)}
        for evaluation in EVALUATIONS:
            values = [_ba(*_truth_pred(us[s], evaluation)) for s in seeds]
            row[f"BA {evaluation}"] = f"{np.mean(values):.3f} ± {np.std(values, ddof=1) / np.sqrt(len(values)):.3f}"
            row[f"_{evaluation}"] = float(np.mean(values))
        row.update({f"completeness {g}": np.mean([_completeness(us[s], g) for s in seeds]) for g in GROUPS})
        row["seconds per fit"] = np.mean([us[s]["seconds"] for s in seeds])
        rows.append(row)
    table = pd.DataFrame(rows).sort_values("_unk out", ascending=False)
    best = table.iloc[0]
    best_without_extended = table[table.features != "extended"].iloc[0]

    rng = np.random.default_rng(0)
    comparisons = []
    for a, us_a in complete.items():
        for axis in REFERENCE:
            if getattr(a, axis) == REFERENCE[axis]:
                continue
            # each feature set adds to the one before it
            reference = FEATURE_STEPS[a.features] if axis == "features" else REFERENCE[axis]
            ref = replace(a, **{axis: reference})
            if ref not in complete:
                continue
            mean, se, low, high = _paired(us_a, complete[ref], seeds, rng)
            comparisons.append({"axis": axis, "model": a.model, "variant": a.name, "against": getattr(ref, axis),
                                "difference": f"{mean:+.3f} ± {se:.3f}", "95% bootstrap": f"[{low:+.3f}, {high:+.3f}]",
                                "_axis": axis, "_mean": mean})
    comparisons = pd.DataFrame(comparisons).sort_values(["_axis", "model", "variant"])
    headline = []
    for what, a, b in HEADLINE:
        if a in complete and b in complete:
            mean, se, low, high = _paired(complete[a], complete[b], seeds, rng)
            headline.append({"step": what, "variant": a.name, "against": b.name, "difference": f"{mean:+.3f} ± {se:.3f}",
                             "95% bootstrap": f"[{low:+.3f}, {high:+.3f}]"})

    shown = ["model", "train", "labels", "features", "unk", "weights", *[f"BA {e}" for e in EVALUATIONS],
             *[f"completeness {g}" for g in GROUPS], "seconds per fit"]
    sizes = _sizes(next(u for u in units if u["seed"] == seeds[0]))
    commits = sorted({u["commit"] for u in units})
    commands = sorted({u["command"] for u in units})
    epochs = sorted({u["epochs"] for u in units if u["epochs"] is not None})
    text = "\n".join([
        f"# Galactic plane: AGN / pulsar / other at |b| <= {PLANE_DEG:g} deg (issue 62)", "",
        f"Commands: {', '.join(f'`{c}`' for c in commands)}, then `{command}`; units ran at commit(s) "
        f"{', '.join(commits)}; GP epochs {epochs}; "
        f"seeds {seeds} (the class-scheme study's 80/20 splits).", "",
        f"Target: BA >= 0.82 (unk out).  Best: {_variant_text(best)}: {best['BA unk out']}; without the "
        f"extended-source features: {_variant_text(best_without_extended)}: {best_without_extended['BA unk out']}.", "",
        "## Headline steps: paired differences of BA (unk out)", "",
        pd.DataFrame(headline).to_markdown(index=False) if headline else "(not run)", "",
        "## Where the best variants go wrong: share of each CLASS1 code's held-out plane sources called each group "
        "(all seeds pooled)", "",
        *[f"{_variant_text(row)}\n\n{_by_code(complete[Variant(**{k: row[k] for k in REFERENCE})]).to_markdown()}\n"
          for row in (best, best_without_extended)],
        f"## Held-out plane sources of seed {seeds[0]}'s split (the other seeds' differ by a few)", "", sizes, "",
        "## Balanced accuracy, mean ± SE over seeds", "",
        table[shown].to_markdown(index=False, floatfmt=".3f"), "",
        "## Paired differences of BA (unk out): each variant against the same variant with one axis at its "
        "reference (GP, plane, coarse, unk out, group weights; features: errors against values, extra against "
        "errors, extended against extra)", "",
        "difference: mean ± SE over seeds of the per-seed difference; interval: held-out sources resampled within "
        f"each seed ({N_BOOT} draws).", "",
        comparisons.drop(columns=["_axis", "_mean"]).to_markdown(index=False), ""])
    (report or out / "plane.md").write_text(text)
    return text


_GP_SCHEME_STUDY = Variant("gp", "sky", "coarse", "values", "out", "none")
_GP_PLANE = Variant("gp")
#: The steps the study's summary leads with: (what, variant, against).
HEADLINE = [
    ("the GP: plane training with group weights against the class-scheme study's whole-sky fit and balanced decision",
     _GP_PLANE, _GP_SCHEME_STUDY),
    ("the GP: fine labels, errors and extra columns", replace(_GP_PLANE, labels="fine", features="extra"), _GP_PLANE),
    ("the GP: errors, extra columns and the extended-source features", replace(_GP_PLANE, features="extended"), _GP_PLANE),
    ("the best variant without the extended-source features against the plane GP",
     Variant("logistic", "plane", "fine", "extra"), _GP_PLANE),
    ("the best variant against the class-scheme study's GP", Variant("vote_rf_lr_gb", "sky", "coarse", "extended"),
     _GP_SCHEME_STUDY),
]
#: Soft votes (Zhu et al. vote over four classifiers): name -> the models whose group probabilities are averaged,
#: at every setting where each of them ran with group weights (their scores are then probabilities).
VOTES = {"vote_rf_lr_gb": ("random_forest", "logistic", "gradient_boosting"),
         "vote_gp_rf_lr_gb": ("gp", "random_forest", "logistic", "gradient_boosting")}


def votes(complete: dict, seeds) -> dict:
    """The `VOTES` as units of their own (no fit: averages of their members' held-out group probabilities)."""
    out = {}
    for name, members in VOTES.items():
        # in the units' order, not a set's: the summary draws its bootstrap resamples in this order
        for v in dict.fromkeys(replace(v, model=name) for v in complete if v.weights == "groups"):
            parts = [complete.get(replace(v, model=m)) for m in members]
            if any(p is None for p in parts):
                continue
            out[v] = {s: {**parts[0][s], "variant": asdict(v), "seconds": sum(p[s]["seconds"] for p in parts),
                          "scores": np.mean([np.asarray(p[s]["scores"]) for p in parts], axis=0).tolist()}
                      for s in seeds}
    return out


def _variant_text(row) -> str:
    return ", ".join(f"{k} {row[k]}" for k in REFERENCE)


def _by_code(units: dict):
    """CLASS1 code -> its number of held-out plane sources and the share called each group, seeds pooled."""
    import pandas as pd

    codes = np.concatenate([u["test_codes"] for u in units.values()])
    pred = np.concatenate([np.array(GROUPS)[np.asarray(u["scores"]).argmax(1)] for u in units.values()])
    rows = {code: {"n": int(np.sum(codes == code)), **{f"called {g}": float(np.mean(pred[codes == code] == g))
                                                       for g in GROUPS}} for code in np.unique(codes)}
    return pd.DataFrame(rows).T.sort_values("n", ascending=False).astype({"n": int}).round(2)


def _completeness(unit: dict, group: str) -> float:
    truth, pred = _truth_pred(unit, "unk out")
    return float(np.mean(pred[truth == group] == group))


def _sizes(unit: dict) -> str:
    import collections

    from gpal.catalogs.schemes import coarse_group

    counts = collections.Counter(unit["test_codes"])
    groups = collections.defaultdict(list)
    for code, n in sorted(counts.items(), key=lambda kv: -kv[1]):
        groups[coarse_group(code) if code != "unk" else "unk (coarse_group: other)"].append(f"{code} {n}")
    return "\n".join(f"- {g}: {sum(int(s.split()[-1]) for s in items)} ({', '.join(items)})" for g, items in groups.items())


# ----------------------------------------------------------------- cross-validation
CV_OUT = Path("lab/studies/records/class_schemes/plane_cv")
#: The variants cross-validated, fixed from plane_six_seeds.md before any cross-validation ran (variant -> why it is
#: here), so that their estimates are not the best of many.
CV_VARIANTS = {
    Variant("vote_rf_lr_gb", "sky", "coarse", "extended"):
        "the best of the six-seed table: soft vote of random forest, logistic regression and gradient boosting",
    Variant("logistic", "plane", "fine", "extra"): "the best of the six-seed table without the extended-source features",
    Variant("gp", "plane", "fine", "extra"): "the main job's GP at its best setting without the extended-source features",
    Variant("gp", "plane", "coarse", "extended"): "the GP at its best setting with the extended-source features",
    _GP_SCHEME_STUDY: "the class-scheme study's GP (whole sky, no weights, balanced decision), where this study started",
}


#: Cleaned versions of three of them (`soft_agn_outliers`), each paired against its uncleaned variant on the same
#: folds; fixed before they ran, the logistic regression first (seconds a fit).
CV_CLEANED = tuple(replace(v, clean=clean) for clean in CLEAN_QUANTILES for v in (
    Variant("logistic", "plane", "fine", "extra"), Variant("gp", "plane", "fine", "extra"),
    Variant("gp", "plane", "coarse", "extended")))


def cv_fitted() -> list[Variant]:
    """The fits the cross-validation needs: its variants, with a vote's members in place of the vote; GP fits last,
    so that an interrupted fold still has its cheap fits."""
    out = []
    for v in CV_VARIANTS:
        out += [replace(v, model=m) for m in VOTES[v.model]] if v.model in VOTES else [v]
    return sorted(dict.fromkeys(out), key=lambda v: v.model == "gp")


def cv_folds(y: np.ndarray, folds: int, repeat: int) -> np.ndarray:
    """Each row's test fold: stratified by class (CLASS1 code, as the splits), shuffled by ``repeat``."""
    from sklearn.model_selection import StratifiedKFold

    fold_of = np.empty(y.size, dtype=np.int64)
    with warnings.catch_warnings():
        # codes with fewer sources than folds (gc has one) are tested in fewer folds; StratifiedKFold warns of it
        warnings.simplefilter("ignore", UserWarning)
        for k, (_, test) in enumerate(StratifiedKFold(folds, shuffle=True, random_state=repeat).split(y, y)):
            fold_of[test] = k
    return fold_of


def run_cv(data, extra, folds: int, repeats: int, todo: list[Variant], epochs: int, out: Path, command: str) -> None:
    """Every (variant, repeat, fold) unit of ``todo`` not yet saved under ``out``: trained on the other folds, scored
    on the fold's plane sources; the model's random state is the repeat's."""
    for repeat in range(repeats):
        fold_of = cv_folds(data.y, folds, repeat)
        for fold in range(folds):
            tr_rows, te_rows = np.nonzero(fold_of != fold)[0], np.nonzero(fold_of == fold)[0]
            for variant in todo:
                _save_unit(out / f"unit_{variant.slug}_{repeat}_{fold}of{folds}.json",
                           lambda: {"variant": asdict(variant), "repeat": repeat, "fold": fold, "folds": folds,
                                    "n_sources": int(data.y.size),
                                    **fit_and_score(data, extra, tr_rows, te_rows, variant, repeat, epochs),
                                    "command": command},
                           f"{variant.name} repeat {repeat} fold {fold + 1}/{folds}")


def _save_unit(path: Path, fit: Callable[[], dict], label: str) -> None:
    """``fit()``'s unit saved at ``path``, unless a run before saved it (a stopped run resumes there)."""
    if path.is_file():
        return
    unit = fit()
    write_json_atomic(path, unit, allow_nan=True)  # a stopped run leaves whole units only
    print(f"{label}: {unit['seconds']:.0f} s", file=sys.stderr, flush=True)


def _cv_predictions(units: dict, repeats) -> tuple[np.ndarray, np.ndarray]:
    """(CLASS1 codes, predicted groups as repeats x sources) of one variant: each repeat's folds together, the
    sources in id order so that repeats and variants line up."""
    ids = codes = None
    preds = []
    for r in repeats:
        parts = [u for (rep, _), u in sorted(units.items()) if rep == r]
        r_ids = np.concatenate([u["test_ids"] for u in parts])
        order = np.argsort(r_ids)
        if np.unique(r_ids).size != r_ids.size:
            raise ValueError(f"repeat {r} scores a source twice")
        if ids is not None and not np.array_equal(r_ids[order], ids):
            raise ValueError(f"repeat {r} scores other sources than repeat {repeats[0]}")
        ids, codes = r_ids[order], np.concatenate([u["test_codes"] for u in parts])[order]
        preds.append(np.concatenate([np.array(GROUPS)[np.asarray(u["scores"]).argmax(1)] for u in parts])[order])
    return codes, np.array(preds)


def pooled_recalls(truth: np.ndarray, pred: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """(draws, groups) share of each group's sources called it, every repeat's call counted (``pred``: repeats x
    sources), source i counted ``weights[:, i]`` times (a bootstrap draw; all ones: the plain pooled recall)."""
    right = np.mean(pred == truth, axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):  # a group no draw holds: NaN, left out of the BA
        return np.column_stack([weights[:, truth == g] @ right[truth == g] / weights[:, truth == g].sum(1)
                                for g in GROUPS])


def _mean_sd(values: np.ndarray, fmt: str) -> str:
    return f"{values.mean():{fmt}} ± {values.std(ddof=1) if values.size > 1 else np.nan:.3f}"


def _interval(values: np.ndarray, fmt: str = ".3f") -> str:
    """The 95% interval of bootstrap ``values``."""
    low, high = np.quantile(values, [0.025, 0.975])
    return f"[{low:{fmt}}, {high:{fmt}}]"


def _repeat_bas(codes: np.ndarray, pred: np.ndarray, evaluation: str) -> np.ndarray:
    """Each repeat's BA (``pred``: repeats x sources) under ``evaluation``."""
    truth, keep = _truth_kept(codes, evaluation)
    return np.array([_ba(truth[keep], p[keep]) for p in pred])


def summarize_cv(out: Path, command: str) -> str:
    """The cross-validation's tables from the units under ``out``, written to ``out/plane_cv.md``."""
    import pandas as pd

    units = [json.loads(p.read_text()) for p in sorted(out.glob("unit_*.json"))]
    if not units:
        raise SystemExit(f"no units in {out}; run the cross-validation first")
    folds = sorted({u["folds"] for u in units})
    if len(folds) != 1:
        raise SystemExit(f"units of {folds} folds in {out}; keep one number of folds a folder")
    by_variant: dict[Variant, dict[tuple[int, int], dict]] = {}
    for u in units:
        by_variant.setdefault(Variant(**u["variant"]), {})[u["repeat"], u["fold"]] = u
    # a repeat counts when every fit of every variant has all its folds, so that all comparisons are paired
    repeats = sorted(r for r in {u["repeat"] for u in units}
                     if all({(r, f) for f in range(folds[0])} <= set(by_variant.get(v, {})) for v in cv_fitted()))
    if not repeats:
        raise SystemExit(f"no repeat in {out} has every variant's {folds[0]} folds")
    complete = {v: {k: u for k, u in us.items() if k[0] in repeats} for v, us in by_variant.items()}
    complete.update(votes(complete, [(r, f) for r in repeats for f in range(folds[0])]))
    predictions = {v: _cv_predictions(complete[v], repeats) for v in CV_VARIANTS}
    codes = next(iter(predictions.values()))[0]
    if any(not np.array_equal(c, codes) for c, _ in predictions.values()):
        raise ValueError("the variants were scored on different sources")

    rng = np.random.default_rng(0)
    pooled, boot, draws_of = {}, {}, {}
    for evaluation in EVALUATIONS:
        truth, keep = _truth_kept(codes, evaluation)
        n = int(keep.sum())
        draws = rng.multinomial(n, np.full(n, 1.0 / n), size=N_BOOT)  # the same draws for every variant: paired
        draws_of[evaluation] = draws
        for v, (_, pred) in predictions.items():
            pooled[v, evaluation] = pooled_recalls(truth[keep], pred[:, keep], np.ones((1, n)))[0]
            boot[v, evaluation] = pooled_recalls(truth[keep], pred[:, keep], draws)

    def per_repeat(v, evaluation) -> np.ndarray:
        return _repeat_bas(codes, predictions[v][1], evaluation)

    rows, recalls = [], []
    for v, why in CV_VARIANTS.items():
        row = {"variant": v.name, "why": why}
        for evaluation in EVALUATIONS:
            row[f"BA {evaluation}"] = (f"{_mean_sd(per_repeat(v, evaluation), '.3f')} "
                                       f"{_interval(np.nanmean(boot[v, evaluation], axis=1))}")
        row["seconds per fit"] = f"{np.mean([u['seconds'] for u in complete[v].values()]):.1f}"
        rows.append(row)
        recalls.append({"variant": v.name, **{f"{g}": f"{pooled[v, 'unk out'][j]:.3f} {_interval(boot[v, 'unk out'][:, j])}"
                                              for j, g in enumerate(GROUPS)},
                        "other, unk as other": f"{pooled[v, 'unk as other'][GROUPS.index('other')]:.3f} "
                                               f"{_interval(boot[v, 'unk as other'][:, GROUPS.index('other')])}"})
    variants = list(CV_VARIANTS)
    paired = []
    for i, a in enumerate(variants):
        for b in variants[i + 1:]:
            row = {"variant": a.name, "against": b.name}
            for evaluation in ("unk out", "unk as other"):
                boot_d = np.nanmean(boot[a, evaluation], axis=1) - np.nanmean(boot[b, evaluation], axis=1)
                row[f"BA {evaluation}"] = (f"{_mean_sd(per_repeat(a, evaluation) - per_repeat(b, evaluation), '+.3f')} "
                                           f"{_interval(boot_d, '+.3f')}")
            paired.append(row)

    commits = sorted({u["commit"] for us in complete.values() for u in us.values()})
    commands = sorted({u["command"] for us in complete.values() for u in us.values()})
    epochs = sorted({u["epochs"] for us in complete.values() for u in us.values() if u["epochs"] is not None})
    n_scored = int(np.sum(codes != "unk"))
    n_sources = ", ".join(str(n) for n in sorted({u["n_sources"] for u in units}))
    text = "\n".join([
        f"# Galactic plane, cross-validated: AGN / pulsar / other at |b| <= {PLANE_DEG:g} deg (issue 62)", "",
        f"Commands: {', '.join(f'`{c}`' for c in commands)}, then `{command}`; units ran at commit(s) "
        f"{', '.join(commits)}; GP epochs {epochs}.", "",
        f"Stratified {folds[0]}-fold cross-validation over all {n_sources} labelled DR4 sources "
        f"(stratified by CLASS1 code), repeats {repeats} (each its own shuffle).  Each variant is trained on the other "
        f"folds exactly as in the split study and scores each of the {codes.size} plane sources once a repeat "
        f"({n_scored} with unk out).  The variants were fixed from `plane_six_seeds.md` before this ran.", "",
        "BA: mean ± SD over repeats of the BA of a repeat's folds together (the mean is also the BA of every "
        "repeat's calls pooled), and a 95% bootstrap interval of the pooled BA over sources "
        f"({N_BOOT} draws, the same draws for every variant).  The interval reflects which sources DR4 labels, not "
        "how a refit moves (the SD over repeats shows that).  Recalls: pooled, with the same intervals.", "",
        "## Balanced accuracy", "",
        pd.DataFrame(rows).to_markdown(index=False), "",
        "## Recall of each group (pooled, unk out), and of other with the held-out unk counted as other", "",
        pd.DataFrame(recalls).to_markdown(index=False), "",
        "## Paired differences of BA (same folds, same bootstrap draws): mean ± SD over repeats of the per-repeat "
        "difference, and a 95% bootstrap interval of the pooled difference", "",
        pd.DataFrame(paired).to_markdown(index=False), "",
        "## Soft-AGN cleaning of the training set: each cleaned variant against the same variant uncleaned", "",
        _cleaning_table(by_variant, repeats, folds[0], codes, draws_of), "",
        "## Plane sources scored each repeat", "", _sizes({"test_codes": list(codes)}), "",
        "## Share of each CLASS1 code's plane sources called each group (repeats pooled: n counts a source once a "
        "repeat)", "",
        *[f"{v.name}\n\n{_by_code(complete[v]).to_markdown()}\n" for v in CV_VARIANTS], ""])
    (out / "plane_cv.md").write_text(text)
    return text


def _cleaning_table(by_variant: dict, repeats: list[int], folds: int, codes: np.ndarray, draws_of: dict) -> str:
    """Each `CV_CLEANED` variant against its uncleaned variant over the complete repeats both have, with the
    summary's bootstrap draws: BA, the paired difference, the change of each group's recall, the AGN dropped."""
    import pandas as pd

    rows = []
    for cleaned in CV_CLEANED:
        units = by_variant.get(cleaned, {})
        reps = [r for r in repeats if all((r, f) in units for f in range(folds))]
        if not reps:
            continue
        units = {k: u for k, u in units.items() if k[0] in reps}
        base = replace(cleaned, clean="none")
        c_codes, c_pred = _cv_predictions(units, reps)
        b_codes, b_pred = _cv_predictions({k: u for k, u in by_variant[base].items() if k[0] in reps}, reps)
        if not (np.array_equal(c_codes, codes) and np.array_equal(b_codes, codes)):
            raise ValueError(f"{cleaned.name}: scored on other sources than the cross-validated variants")
        dropped = np.array([u["n_dropped_agn"] for u in units.values()])
        row = {"variant": base.name, "clean": f"{cleaned.clean} ({CLEAN_QUANTILES[cleaned.clean]:g})",
               "repeats": ", ".join(map(str, reps)),
               "training AGN dropped a fold": f"{dropped.mean():.1f} ({dropped.min()}-{dropped.max()})"}
        for evaluation in ("unk out", "unk as other"):
            truth, keep = _truth_kept(codes, evaluation)
            draws = draws_of[evaluation]
            boot_c = pooled_recalls(truth[keep], c_pred[:, keep], draws)
            boot_b = pooled_recalls(truth[keep], b_pred[:, keep], draws)
            ba_c, ba_b = _repeat_bas(codes, c_pred, evaluation), _repeat_bas(codes, b_pred, evaluation)
            if evaluation == "unk out":
                row["BA uncleaned"], row["BA cleaned"] = _mean_sd(ba_b, ".3f"), _mean_sd(ba_c, ".3f")
                ones = np.ones((1, int(keep.sum())))
                change = (pooled_recalls(truth[keep], c_pred[:, keep], ones)[0]
                          - pooled_recalls(truth[keep], b_pred[:, keep], ones)[0])
                for j, g in enumerate(GROUPS):
                    row[f"recall change {g}"] = f"{change[j]:+.3f} {_interval(boot_c[:, j] - boot_b[:, j], '+.3f')}"
            row[f"difference BA {evaluation}"] = (f"{_mean_sd(ba_c - ba_b, '+.3f')} "
                                                   f"{_interval(np.nanmean(boot_c, 1) - np.nanmean(boot_b, 1), '+.3f')}")
        rows.append(row)
    if not rows:
        return "(not run)"
    return "\n".join([
        f"Cleaning (`soft_agn_outliers`, in the spirit of Zhu et al. 2023): a 3-D Gaussian in {', '.join(CLEAN_FEATURES)} "
        "fitted to each fold's training AGN (whole sky); the AGN of the variant's training set beyond the chi-square "
        "(3 dof) quantile given and softer than the fitted AGN's median index are dropped from training.  The held-out "
        "sources are all scored, uncleaned.  BA (unk out): mean ± SD over the repeats given; difference: cleaned − "
        "uncleaned, mean ± SD over those repeats, and a 95% bootstrap interval with the draws above.  Recall change: "
        "pooled, unk out.", "",
        pd.DataFrame(rows).to_markdown(index=False)])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--epochs", type=int, default=GP["epochs"])
    parser.add_argument("--models", nargs="+", default=["random_forest", "logistic", "gradient_boosting", "gp"])
    parser.add_argument("--out", type=Path, help=f"where the units go (default: {OUT}, with --cv {CV_OUT})")
    parser.add_argument("--cv", action="store_true", help="cross-validate CV_VARIANTS instead of the splits' design")
    parser.add_argument("--folds", type=int, default=5, help="with --cv: folds a repeat")
    parser.add_argument("--repeats", type=int, default=2, help="with --cv: repeats 0 .. R-1, each its own shuffle")
    parser.add_argument("--clean", choices=sorted(CLEAN_QUANTILES),
                        help="with --cv: run the CV_CLEANED variants of this cleaning instead of CV_VARIANTS")
    parser.add_argument("--summarize", action="store_true")
    parser.add_argument("--pool", type=Path, nargs="+", default=[], help="summarize the units of these folders too")
    parser.add_argument("--report", type=Path, help="where the summary goes (default: OUT/plane.md)")
    args = parser.parse_args(argv)
    command = "python lab/studies/bench_plane.py " + " ".join(sys.argv[1:] if argv is None else argv)
    if args.cv:
        out = args.out or CV_OUT
        if not args.summarize:
            out.mkdir(parents=True, exist_ok=True)
            data = dr4_labelled()
            fitted = [v for v in CV_CLEANED if v.clean == args.clean] if args.clean else cv_fitted()
            todo = [v for v in fitted if v.model in args.models]
            run_cv(data, _catalog_columns(data.ids), args.folds, args.repeats, todo, args.epochs, out, command)
        print(summarize_cv(out, command))
        return 0
    args.out = args.out or OUT
    if not args.summarize:
        args.out.mkdir(parents=True, exist_ok=True)
        data = dr4_labelled()
        extra = _catalog_columns(data.ids)
        for seed in args.seeds:
            for variant in design():
                if variant.model in args.models:
                    _save_unit(args.out / f"unit_{variant.slug}_{seed}.json",
                               lambda: run_unit(data, extra, seed, variant, args.epochs, command),
                               f"{variant.name} seed {seed}")
    print(summarize(args.out, command, tuple(args.pool), args.report))
    return 0


if __name__ == "__main__":
    sys.exit(main())

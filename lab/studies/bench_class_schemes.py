#!/usr/bin/env python
"""Which classes should the main job learn, and does "none of these" work?  The class-scheme study.

Every labelled source of 4FGL-DR4 (all CLASS1 codes, ``fermi_dr4`` features) is split once per
seed, stratified by CLASS1 code, 80/20.  Each scheme (`gpal.catalogs.schemes`) trains the main
job's model (NIMGP, population prior, softmax, M = 50, 300 epochs) and the calibrated baselines
on the training sources of its codes and is scored on the same held-out sources:

* its own classes: NLL, accuracy, balanced accuracy, ECE, completeness and purity per class;
* the main three (bll / fsrq / pulsar held-out sources): NLL of the fine class where the scheme
  has it (the mass it puts on other classes counts against it);
* coarse groups (AGN / pulsar / other, `coarse_group`; unk left out, its nature being unknown):
  balanced accuracy at |b| <= 10 deg over the three groups and at |b| > 10 deg AGN vs pulsar, the
  published comparisons (Zhu et al. 2023: 0.815 and 0.918), by argmax and by the balanced decision
  argmax p(group | x) / p(group) that balanced accuracy rewards.  A scheme without an "other" class
  calls "other" the sources its outlier score flags (``+ood``);
* "none of these": `PopulationOutlierScore` fitted on the scheme's training sources, threshold at
  5% of half its held-out sources, false-positive rate measured on the other half, and the share
  flagged of every source of the CLASS1 codes the scheme left out (bcu excepted: they are blazars).

Units (seed, scheme) are saved under ``--out`` as they finish, so an interrupted run resumes;
``--summarize`` prints the tables (mean and standard error over seeds) and writes ``metrics.csv`` and ``ood.csv``;
``--ood-probe`` writes ``ood_probe.csv`` and ``ood_probe.md``.  ``--record FILE`` then writes the results page's
record from those outputs ("none of these" from ``ood.csv``, with ``--ood-probe`` the faint-source one from
``ood_probe.csv``); ``--kept`` writes it from the outputs already in ``--out``, computing nothing (seconds).

    python lab/studies/bench_class_schemes.py --seeds 0 1 2 --record lab/pages/records/results/none_of_these.json
    python lab/studies/bench_class_schemes.py --plane-probe --seeds 0 1 2
    python lab/studies/bench_class_schemes.py --ood-probe --seeds 0 1 2 --record lab/pages/records/results/none_of_these.faint.json
    python lab/studies/bench_class_schemes.py --kept --commit d6eb20b --record lab/pages/records/results/none_of_these.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

# lab/studies/ is the script's folder, first on its path
from shared import CLASS_SCHEME_GP as GP, COARSE_GROUPS, PLANE_DEG, code_commit, dr4_labelled, group_balanced_accuracy

OUT = Path("lab/studies/records/class_schemes")
WORKFLOW = "lab/studies/class_schemes.yaml"
SCRIPT = "python lab/studies/bench_class_schemes.py"
#: The scheme whose "none of these" the results page shows, and the left-out classes it names, in its order
#: (CLASS1 code -> the page's name; None: the code is its name).
PAGE_SCHEME = "blazar_pulsar"
PAGE_LEFT_OUT = {"pwn": "pulsar wind nebulae", "snr": "supernova remnants", "sfr": "star-forming regions",
                 "hmb": "high-mass binaries", "spp": None, "unk": "unknown", "rdg": "radio galaxies",
                 "glc": "globular clusters"}
#: The outlier scores the page compares for fairness to faint sources: the probe's variant -> the page's name.
PAGE_SCORES = {"distance, 8 components (default)": "distance, 8 components (the default)",
               "log density -log p(x~ | V)": "log density −log p(x̃ | V)",
               "mixture of the noisy values (no error bars)": "mixture of the noisy values (no error bars)"}
BASELINES = ("logistic", "random_forest_isotonic", "gradient_boosting_isotonic")
MAIN_THREE = {"bll": ("bll",), "fsrq": ("fsrq",), "pulsar": ("psr", "msp")}
#: The summary's measures, in its order (`unit_metrics` gives some only for schemes that have them).
SUMMARY_COLUMNS = ("NLL", "accuracy", "balanced accuracy", "ECE", "main-three NLL", "plane AGN/pulsar/other",
                   "plane AGN/pulsar/other +ood", "high-b AGN vs pulsar", "plane AGN/pulsar/other balanced",
                   "plane AGN/pulsar/other balanced +ood", "high-b AGN vs pulsar balanced")


def _scheme_rows(codes_of_rows: np.ndarray, scheme) -> tuple[np.ndarray, np.ndarray]:
    """Rows whose code the scheme holds, and their class index."""
    index = {code: k for k, codes in enumerate(scheme.codes().values()) for code in codes}
    rows = np.nonzero([c in index for c in codes_of_rows])[0]
    return rows, np.array([index[c] for c in codes_of_rows[rows]], dtype=np.int64)


def run_unit(data, seed: int, scheme_name: str, epochs: int) -> dict:
    from gpal import NoisyGPClassifier
    from gpal.catalogs.schemes import CLASS_SCHEMES
    from gpal.data.dataset import NoisyDataset
    from gpal.estimators.outliers import PopulationOutlierScore
    from gpal.evaluation.baselines import fit_baselines

    scheme = CLASS_SCHEMES[scheme_name]
    codes = np.array(data.class_names)[data.y]
    train_all, test_all = data.split(test_size=0.2, seed=seed, stratify=True)
    tr_rows, tr_y = _scheme_rows(np.array(data.class_names)[train_all.y], scheme)
    train = NoisyDataset(X=train_all.X[tr_rows], X_var=train_all.X_var[tr_rows], y=tr_y,
                         class_names=scheme.classes, feature_names=data.feature_names, ids=train_all.ids[tr_rows])
    t0 = time.perf_counter()
    gp = NoisyGPClassifier(**dict(GP, epochs=epochs), random_state=seed).fit(train)
    # the estimator keeps its classes sorted (scikit-learn's classes_); the study keeps the scheme's order
    probas = {"gp": gp.predict_proba(test_all)[:, [list(gp.classes_).index(c) for c in scheme.classes]]}
    gp_seconds = time.perf_counter() - t0
    probas.update(fit_baselines(train.X, train.y, test_all.X, names=list(BASELINES), random_state=seed))

    # "none of these": calibrated on half the in-scheme held-out sources, measured on the other half
    te_rows, _ = _scheme_rows(np.array(data.class_names)[test_all.y], scheme)
    halves = np.random.default_rng([seed, 5]).permutation(te_rows)
    calib, check = np.sort(halves[: len(halves) // 2]), np.sort(halves[len(halves) // 2:])
    scorer = PopulationOutlierScore(random_state=seed).fit(train.X, train.X_var)
    scorer.calibrate(test_all.X[calib], test_all.X_var[calib])
    held = set(c for k in scheme.codes().values() for c in k) | {"bcu"}
    left_out = np.nonzero([c not in held for c in codes])[0]
    return {
        "seed": seed, "scheme": scheme_name, "classes": list(scheme.classes), "gp_seconds": gp_seconds,
        "commit": code_commit(),
        "test_ids": [str(i) for i in test_all.ids], "test_codes": list(np.array(data.class_names)[test_all.y]),
        "test_glat": test_all.aux["GLAT"].tolist(),
        "proba": {name: np.round(p, 6).tolist() for name, p in probas.items()},
        "ood_test_score": np.round(scorer.score(test_all.X, test_all.X_var), 4).tolist(),
        "ood_threshold": scorer.threshold_, "ood_calibration_rows": calib.tolist(), "ood_check_rows": check.tolist(),
        "left_out_codes": list(codes[left_out]),
        "left_out_score": np.round(scorer.score(data.X[left_out], data.X_var[left_out]), 4).tolist(),
    }


# ----------------------------------------------------------------- summary
def unit_metrics(unit: dict, model: str) -> dict:
    from gpal.catalogs.schemes import CLASS_SCHEMES, coarse_group
    from gpal.evaluation.calibration import expected_calibration_error
    from gpal.evaluation.metrics import negative_log_likelihood

    scheme = CLASS_SCHEMES[unit["scheme"]]
    proba = np.asarray(unit["proba"][model])
    proba /= proba.sum(1, keepdims=True)  # stored to 6 decimals
    codes = np.asarray(unit["test_codes"])
    rows, y = _scheme_rows(codes, scheme)
    out = {"NLL": negative_log_likelihood(y, proba[rows]), "accuracy": float(np.mean(proba[rows].argmax(1) == y)),
           "balanced accuracy": group_balanced_accuracy(y, proba[rows].argmax(1), range(len(scheme.classes))),
           "ECE": expected_calibration_error(y, proba[rows])}
    pred, truth = proba[rows].argmax(1), y
    for k, name in enumerate(scheme.classes):
        out[f"completeness {name}"] = float(np.mean(pred[truth == k] == k))
        out[f"purity {name}"] = float(np.mean(truth[pred == k] == k)) if np.any(pred == k) else float("nan")
    # the main three classes, where the scheme has them as classes
    if all(name in scheme.classes for name in MAIN_THREE):
        main = np.nonzero([any(c in codes_ for codes_ in MAIN_THREE.values()) for c in codes])[0]
        main_y = np.array([scheme.classes.index(next(n for n, cs in MAIN_THREE.items() if c in cs)) for c in codes[main]])
        out["main-three NLL"] = negative_log_likelihood(main_y, proba[main])
    # coarse groups
    group_of_class = np.array([coarse_group(scheme.codes()[name][0]) for name in scheme.classes])
    coarse = {g: proba[:, group_of_class == g].sum(1) for g in ("agn", "pulsar", "other")}
    truth = np.array([coarse_group(c) for c in codes])
    known = codes != "unk"
    plane = np.abs(np.asarray(unit["test_glat"])) <= PLANE_DEG
    stacked = np.stack([coarse["agn"], coarse["pulsar"], coarse["other"]], 1)
    pred = np.array(["agn", "pulsar", "other"])[stacked.argmax(1)]
    flagged = np.asarray(unit["ood_test_score"]) > unit["ood_threshold"]
    with_ood = np.where(flagged, "other", pred)
    rows_in = known & plane
    has_other = "other" in group_of_class
    out["plane AGN/pulsar/other"] = group_balanced_accuracy(truth[rows_in], pred[rows_in], COARSE_GROUPS) \
        if has_other else float("nan")
    out["plane AGN/pulsar/other +ood"] = group_balanced_accuracy(truth[rows_in], with_ood[rows_in], COARSE_GROUPS)
    rows_out = ~plane & np.isin(truth, ["agn", "pulsar"])
    two = np.where(coarse["agn"] >= coarse["pulsar"], "agn", "pulsar")
    out["high-b AGN vs pulsar"] = group_balanced_accuracy(truth[rows_out], two[rows_out], ("agn", "pulsar"))
    # balanced decisions: the group maximising p(group | x) / p(group), the rule balanced accuracy rewards
    # (group priors from the scheme's held-out sources, which the stratified split keeps at the training shares)
    prior = np.bincount(y, minlength=len(scheme.classes)) / y.size
    odds = np.stack([coarse[g] / prior[group_of_class == g].sum() if g in group_of_class else np.zeros(len(codes))
                     for g in ("agn", "pulsar", "other")], 1)
    pred = np.array(["agn", "pulsar", "other"])[odds.argmax(1)]
    if has_other:
        out["plane AGN/pulsar/other balanced"] = group_balanced_accuracy(truth[rows_in], pred[rows_in], COARSE_GROUPS)
    out["plane AGN/pulsar/other balanced +ood"] = group_balanced_accuracy(
        truth[rows_in], np.where(flagged, "other", pred)[rows_in], COARSE_GROUPS)
    two = np.where(odds[:, 0] >= odds[:, 1], "agn", "pulsar")
    out["high-b AGN vs pulsar balanced"] = group_balanced_accuracy(truth[rows_out], two[rows_out], ("agn", "pulsar"))
    return out


def ood_metrics(unit: dict) -> dict:
    score = np.asarray(unit["ood_test_score"])
    check = np.asarray(unit["ood_check_rows"], dtype=int)
    left = np.asarray(unit["left_out_score"]) > unit["ood_threshold"]
    codes = np.asarray(unit["left_out_codes"])
    out = {"false-positive rate": float(np.mean(score[check] > unit["ood_threshold"])),
           "left-out flagged": float(np.mean(left)) if left.size else float("nan"),
           "left-out flagged (unk excluded)": float(np.mean(left[codes != "unk"])) if np.any(codes != "unk") else float("nan")}
    for code in sorted(set(codes)):
        out[f"flagged {code} ({np.sum(codes == code)})"] = float(np.mean(left[codes == code]))
    return out


def summarize(out: Path) -> None:
    import pandas as pd

    units = [json.loads(p.read_text()) for p in sorted(out.glob("unit_*.json"))]
    if not units:
        raise SystemExit(f"no units in {out}; run the study first")
    rows = [{"scheme": u["scheme"], "seed": u["seed"], "model": m, **unit_metrics(u, m)} for u in units for m in u["proba"]]
    frame = pd.DataFrame(rows)
    # a measure only some schemes have (the main-three NLL, the balanced plane without +ood) is absent when none of
    # the schemes run (--schemes) has it
    cols = [c for c in SUMMARY_COLUMNS if c in frame.columns]
    grouped = frame.groupby(["scheme", "model"])[cols]
    mean, se = grouped.mean(), grouped.sem()
    table = mean.copy().astype(object)
    for col in cols:
        table[col] = [f"{m:.3f} ± {s:.3f}" if np.isfinite(s) else f"{m:.3f}" for m, s in zip(mean[col], se[col])]
    print(f"## Schemes (mean ± SE over {frame.seed.nunique()} seeds)\n")
    print(table.to_markdown())
    per_class = [c for c in frame.columns if c.startswith(("completeness", "purity"))]
    gp = frame[frame.model == "gp"]
    print("\n## Completeness and purity per class (GP)\n")
    print(gp.groupby("scheme")[per_class].mean().T.round(3).to_markdown())
    ood = pd.DataFrame([{"scheme": u["scheme"], "seed": u["seed"], "commit": u.get("commit", ""), **ood_metrics(u)}
                        for u in units])
    print("\n## None of these (outlier score, threshold at 5% of held-out in-scheme sources)\n")
    print(ood.groupby("scheme").mean(numeric_only=True).drop(columns="seed").T.round(3).to_markdown())
    frame.to_csv(out / "metrics.csv", index=False)
    ood.to_csv(out / "ood.csv", index=False)


def plane_probe(seeds) -> None:
    """Is the Galactic-plane ceiling the GP's?  Class-balanced baselines on AGN / pulsar / other, trained on
    the plane only or the whole sky, with and without the error columns as features; in-plane test sources."""
    import pandas as pd
    from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import balanced_accuracy_score
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    from gpal.catalogs.schemes import coarse_group

    data = dr4_labelled()
    models = {"random forest": lambda: RandomForestClassifier(500, min_samples_leaf=2, class_weight="balanced",
                                                              random_state=0, n_jobs=1),
              "gradient boosting": lambda: HistGradientBoostingClassifier(class_weight="balanced", random_state=0),
              "logistic": lambda: make_pipeline(StandardScaler(),
                                                LogisticRegression(max_iter=5000, class_weight="balanced"))}

    def rows(d, plane_only: bool, errors: bool):
        codes = np.array(data.class_names)[d.y]
        keep = codes != "unk"
        if plane_only:
            keep &= np.abs(d.aux["GLAT"]) <= PLANE_DEG
        X = np.hstack([d.X, np.sqrt(d.X_var)]) if errors else d.X
        return X[keep], np.array([coarse_group(c) for c in codes[keep]])

    results = []
    for seed in seeds:
        train, test = data.split(test_size=0.2, seed=seed, stratify=True)
        for errors in (False, True):
            X_test, g_test = rows(test, True, errors)
            for plane_only in (False, True):
                X_train, g_train = rows(train, plane_only, errors)
                for name, make in models.items():
                    pred = make().fit(X_train, g_train).predict(X_test)
                    results.append({"seed": seed, "model": name, "trained on": "plane" if plane_only else "whole sky",
                                    "features": "values + errors" if errors else "values",
                                    "balanced accuracy": balanced_accuracy_score(g_test, pred)})
    table = pd.DataFrame(results).groupby(["model", "trained on", "features"])["balanced accuracy"].agg(["mean", "sem"])
    print(f"## |b| <= {PLANE_DEG:g} deg, AGN / pulsar / other, class-balanced baselines ({len(seeds)} seeds)\n")
    print(table.round(3).to_markdown())


def ood_probe(seeds, out: Path) -> None:
    """Which outlier score catches most left-out classes without flagging faint sources for being faint?

    blazar_pulsar's training sources; threshold at 5% of the held-out ones (as the main job); the share
    flagged of every source of the left-out codes, of the faintest quarter of the held-out sources (5%
    for a score that is fair to faint sources) and of the unassociated sources.  Writes the shares of every
    seed to ``out/ood_probe.csv`` and their table to ``out/ood_probe.md``.
    """
    import pandas as pd
    from scipy.special import logsumexp

    from gpal.catalogs import load_catalog
    from gpal.catalogs.schemes import CLASS_SCHEMES
    from gpal.estimators.outliers import PopulationOutlierScore
    from gpal.files import write_text_atomic

    data = dr4_labelled()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        unassociated = load_catalog("4FGL-DR4").pool(select=["unassociated"], features="fermi_dr4")
    codes = np.array(data.class_names)[data.y]
    rows, _ = _scheme_rows(codes, CLASS_SCHEMES["blazar_pulsar"])
    main = data.subset(rows)
    held = set(c for k in CLASS_SCHEMES["blazar_pulsar"].codes().values() for c in k) | {"bcu"}
    left = data.subset(np.nonzero([c not in held for c in codes])[0])
    significance = list(data.feature_names).index("log(Signif_Avg)")

    def log_density(scorer, X, V):
        """-log p(x~ | V) under the deconvolved mixture (numpy, standardized units)."""
        Z, W = scorer.standardizer_.transform_arrays(X, V)
        mix = scorer.density_
        T = mix.covariances[None] + np.einsum("nd,de->nde", W, np.eye(Z.shape[1]))[:, None]
        diff = Z[:, None] - mix.means[None]
        D2 = np.einsum("nkd,nkd->nk", diff, np.linalg.solve(T, diff[..., None])[..., 0])
        return -logsumexp(np.log(mix.weights)[None] - 0.5 * (np.linalg.slogdet(T)[1] + D2), axis=1)

    d = data.n_features
    full = list(range(d))
    # name -> (components, feature columns, use the error bars, score)
    variants = {"distance, 8 components (default)": (8, full, True, None), "distance, 4 components": (4, full, True, None),
                "distance, 16 components": (16, full, True, None), "log density -log p(x~ | V)": (8, full, True, log_density),
                "mixture of the noisy values (no error bars)": (8, full, False, None)}
    variants.update({f"distance without {name}": (8, [c for c in full if c != j], True, None)
                     for j, name in enumerate(data.feature_names)})
    results = []
    commit = code_commit()
    for seed in seeds:
        train, test = main.split(test_size=0.2, seed=seed, stratify=True)
        faint = test.X[:, significance] <= np.quantile(test.X[:, significance], 0.25)
        for name, (k, cols, errors, score) in variants.items():
            def arrays(ds):
                return ds.X[:, cols], ds.X_var[:, cols] if errors else np.zeros_like(ds.X[:, cols])

            scorer = PopulationOutlierScore(n_components=k, random_state=seed).fit(*arrays(train))
            score_of = (lambda ds: scorer.score(*arrays(ds))) if score is None else (lambda ds: score(scorer, *arrays(ds)))
            threshold = np.quantile(score_of(test), 0.95)
            results.append({"variant": name, "seed": seed,
                            "left-out flagged": np.mean(score_of(left) > threshold),
                            "faintest held-out quarter flagged": np.mean(score_of(test)[faint] > threshold),
                            "unassociated flagged": np.mean(score_of(unassociated) > threshold), "commit": commit})
    shares = pd.DataFrame(results)
    frame = shares.drop(columns=["seed", "commit"]).groupby("variant", sort=False)
    table = frame.mean().round(3).astype(str) + " ± " + frame.sem().round(3).astype(str)
    text = (f"## Outlier scores: shares flagged at 5% of the held-out sources ({left.n_samples} left-out-class "
            f"sources, {unassociated.n_samples} unassociated; mean ± SE over {len(seeds)} seeds)\n\n"
            f"{table.to_markdown()}\n")
    out.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out / "ood_probe.csv", shares.to_csv(index=False))
    write_text_atomic(out / "ood_probe.md", text)
    print(text)


# ----------------------------------------------------------------- the results page's records
def _read_output(path: Path, columns: set[str]):
    import pandas as pd

    try:
        frame = pd.read_csv(path)
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: not a readable output of the study ({exc}); run it first") from None
    missing = sorted(columns - set(frame.columns))
    if missing:
        raise ValueError(f"{path} lacks the columns {missing}: not an output of {SCRIPT}")
    return frame


def _commit_of(frame, path: Path, commit: str | None) -> str:
    """The commit the outputs were made at: their ``commit`` column, or ``commit`` for outputs made before the column
    was written; never an uncommitted source."""
    named = set(frame["commit"].dropna().astype(str)) - {""} if "commit" in frame else set()
    if len(named) > 1:
        raise ValueError(f"{path} mixes the commits {sorted(named)}: rerun the study at one commit")
    if named and commit and commit not in named:
        raise ValueError(f"{path} was made at {named.pop()}, not at the commit given ({commit})")
    found = named.pop() if named else commit
    if not found:
        raise ValueError(f"{path} names no commit: give the commit its numbers were made at (--commit)")
    if found == "unknown" or found.endswith("+dirty"):
        raise ValueError(f"{path} was made at {found!r}: a record needs the committed source that ran")
    return found


def _seeds(frame, path: Path, by: str) -> list[int]:
    """The seeds of the rows, each ``by`` having run on every one (a mean over unequal seeds compares nothing)."""
    seeds = sorted(int(s) for s in frame["seed"].unique())
    if (frame.groupby(by)["seed"].nunique() != len(seeds)).any():
        raise ValueError(f"{path}: not every row ran on the seeds {seeds}; finish the run first")
    return seeds


def none_of_these_record(out: Path, commit: str | None = None) -> dict:
    """The results page's "none of these": `PAGE_SCHEME`'s false-positive rate and shares flagged of the classes
    never trained on, from ``out/ood.csv`` (`summarize`), mean over seeds."""
    import re

    from result_records import make_record, make_table

    path = Path(out) / "ood.csv"
    frame = _read_output(path, {"scheme", "seed", "false-positive rate", "left-out flagged"})
    frame = frame[frame["scheme"] == PAGE_SCHEME]
    if frame.empty:
        raise ValueError(f"{path} has no rows of the scheme {PAGE_SCHEME!r}, the one the page shows")
    seeds = _seeds(frame, path, "scheme")
    column = {m[1]: (c, int(m[2])) for c in frame.columns if (m := re.fullmatch(r"flagged (\w+) \((\d+)\)", c))}
    missing = [code for code in PAGE_LEFT_OUT if code not in column]
    if missing:
        raise ValueError(f"{path} has no share flagged of the left-out classes {missing}")
    mean = frame.mean(numeric_only=True)
    rows = [["of the trained classes (the false-positive rate; threshold set at 0.05)",
             f"{mean['false-positive rate']:.3f}"],
            ["of every class never trained on", f"{mean['left-out flagged']:.3f}"]]
    for code, name in PAGE_LEFT_OUT.items():
        key, n = column[code]
        rows.append([f"{name} ({code}, {n})" if name else f"{code} ({n})", f"{mean[key]:.3f}"])
    table = make_table(["held-out sources", f"share flagged (mean over {len(seeds)} seeds)"], rows, "lr")
    return make_record("Classes never trained on", f"{SCRIPT} --seeds {' '.join(map(str, seeds))}",
                       _commit_of(frame, path, commit), [table],
                       {"catalog": "4FGL-DR4", "classes": PAGE_SCHEME, "split": "80/20 stratified by CLASS1",
                        "seeds": seeds}, source=path.as_posix(), workflow=WORKFLOW)


def faint_record(out: Path, commit: str | None = None) -> dict:
    """The results page's fairness to faint sources: `PAGE_SCORES`' shares flagged from ``out/ood_probe.csv``
    (`ood_probe`), mean ± SE over seeds."""
    from result_records import make_record, make_table

    path = Path(out) / "ood_probe.csv"
    shares = ["left-out flagged", "faintest held-out quarter flagged"]
    frame = _read_output(path, {"variant", "seed", *shares})
    missing = [v for v in PAGE_SCORES if v not in set(frame["variant"])]
    if missing:
        raise ValueError(f"{path} has no rows of the scores {missing}")
    frame = frame[frame["variant"].isin(list(PAGE_SCORES))]
    seeds = _seeds(frame, path, "variant")
    grouped = frame.groupby("variant")[shares]
    mean, se = grouped.mean(), grouped.sem()
    rows = [[name, *(f"{mean.at[v, s]:.3f} ± {se.at[v, s]:.3f}" for s in shares)] for v, name in PAGE_SCORES.items()]
    table = make_table(["score", "classes never trained on, flagged", "faintest held-out quarter (trained classes), flagged"],
                       rows, "lll", caption="Shares flagged at a threshold of 5% of the held-out sources; mean ± SE "
                       f"over {len(seeds)} seeds.")
    return make_record("Fairness to faint sources", f"{SCRIPT} --ood-probe --seeds {' '.join(map(str, seeds))}",
                       _commit_of(frame, path, commit), [table], {"catalog": "4FGL-DR4", "seeds": seeds},
                       source=path.as_posix(), workflow=WORKFLOW)


def main(argv=None) -> int:
    from gpal.catalogs.schemes import CLASS_SCHEMES

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--schemes", nargs="+", default=list(CLASS_SCHEMES), choices=list(CLASS_SCHEMES))
    parser.add_argument("--epochs", type=int, default=GP["epochs"])
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--summarize", action="store_true")
    parser.add_argument("--plane-probe", action="store_true", help="the class-balanced baselines in the plane")
    parser.add_argument("--ood-probe", action="store_true", help="settings of the outlier score")
    parser.add_argument("--record", type=Path, help='then write the results page\'s record to this file: "none of '
                        'these" from ood.csv, with --ood-probe fairness to faint sources from ood_probe.csv')
    parser.add_argument("--kept", action="store_true", help="with --record: from the outputs already in --out, "
                        "computing nothing")
    parser.add_argument("--commit", help="with --kept: the commit outputs that name none were made at")
    args = parser.parse_args(argv)
    if args.kept and not args.record:
        parser.error("--kept goes with --record")
    if args.commit and not args.kept:
        parser.error("--commit goes with --kept (a run names its own commit)")
    if args.plane_probe:
        if args.record:
            parser.error("--plane-probe writes no record")
        plane_probe(args.seeds)
        return 0
    if not args.kept:
        if args.ood_probe:
            ood_probe(args.seeds, args.out)
        elif args.summarize:
            summarize(args.out)
        else:
            run_study(args)
    if args.record:
        from result_records import outcome, write_record

        try:
            record = (faint_record if args.ood_probe else none_of_these_record)(args.out, args.commit)
            print(outcome(write_record(args.record, record)))
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    return 0


def run_study(args) -> None:
    """Every (seed, scheme) unit not yet in ``args.out``, then the summary."""
    args.out.mkdir(parents=True, exist_ok=True)
    data = dr4_labelled()
    for seed in args.seeds:
        for scheme in args.schemes:
            path = args.out / f"unit_{scheme}_{seed}.json"
            if path.is_file():
                continue
            t0 = time.perf_counter()
            unit = run_unit(data, seed, scheme, args.epochs)
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps(unit))
            tmp.replace(path)
            print(f"{scheme} seed {seed}: {time.perf_counter() - t0:.0f} s", file=sys.stderr, flush=True)
    summarize(args.out)


if __name__ == "__main__":
    sys.exit(main())

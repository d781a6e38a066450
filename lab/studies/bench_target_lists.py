"""The target lists (`gpal.catalog_jobs.candidates`) and the bcu rule (`gpal.catalogs.known_classes`) on later labels.

Reads a finished ``gpal classify`` folder of a release older than the newest shipped (4FGL-DR4,
4FGL v20): its classifications and the later-release check it wrote (``tables/later_check_sources.csv``:
each classified source's FL16Y class, and every model's probabilities of it, the bcu rule applied).  gpal has
no setting that leaves the rule out, so ``bcu`` undoes it (`without_rule`): the rule weights a bcu's row by
positive factors and renormalises, so dividing by the same factors and renormalising gives the model's own
probabilities back exactly (gpal's checked against the saved model's own prediction of the bcu, `_check_undone`).
Prints, for docs/targets.md:

1. ``bcu``: the bcu sources FL16Y puts in a trained class, scored with the model's own probabilities and with
   the bcu rule gpal applies (NLL, balanced accuracy, paired bootstrap); how many bcu each way are predicted in
   a class outside the blazars;
2. ``rule``: the main job under no rule, the blazar prior believed whatever the association (``a = 1``) and
   gpal's rule: bcu predicted outside the blazars, predicted classes, target lists, the later check of gpal
   and of logistic regression under the same rule;
3. ``cuts``: per class and per combination of cuts, the candidates and the share of those FL16Y classifies
   that it puts in the candidate's class;
4. ``top``: among the first 50 sources FL16Y classifies of each ranking, the share in the class:
   the target list (default cuts), every classified point source by p_<class> alone, by logistic
   regression's probability, and the BALD list (most_informative.csv, by information) of sources
   predicted in the class; with the base rate (the class's share among every classified point source FL16Y
   classifies).

    python lab/studies/bench_target_lists.py RUN_FOLDER [bcu|rule|cuts|top ...]

What a command prints is kept in ``lab/studies/records/target_lists.json``, one entry a command.
"""

import itertools
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.metrics import balanced_accuracy_score

from gpal.catalog_jobs.candidates import candidate_lists, check_cuts
from gpal.catalog_jobs.layout import (
    CLASSIFICATIONS_CSV, CLASSIFY_FOLDER, INFORMATIVE_FILE, LATER_CHECK_SOURCES_FILE, is_classify_folder, list_path,
    located,
)
from gpal.catalog_jobs.model_folders import load_trained
from gpal.catalog_jobs.prediction import predict_proba_chunked, selection_pool
from gpal.catalogs import load_catalog
from gpal.catalogs.classes import class1_codes
from gpal.catalogs.known_classes import apply_known_classes, association_weight, class_weights
from gpal.evaluation.comparison import bootstrap_comparison
from gpal.evaluation.intervals import binomial_interval
from gpal.runs.output_dir import recorded_identity
from shared import keep_printed  # the script's folder, first on its path

TOP = 50
SIGNIFICANCE = (4.0, 5.0, 6.0, 8.0)
ELLIPSE = (np.inf, 0.2, 0.1, 0.05)
FLAGS = ((), tuple(range(1, 15)))
#: The bcu rules compared: the model's own probabilities, the blazar prior believed whatever the association
#: (``a = 1``) and gpal's rule, the prior weighted by ``ASSOC_PROB_BAY``.
NO_RULE, BLAZAR_PRIOR, RULE = "no rule", "blazar prior", "x ASSOC_PROB_BAY"


def _read(path):
    return pd.read_csv(path, keep_default_na=False, na_values=[""], dtype={"CLASS1": str, "ASSOC1": str})


def without_rule(proba, class1, weights, association):
    """``proba`` with the bcu rule undone: each bcu row divided by the factors ``a * w + 1 - a`` that
    `apply_known_classes` multiplied it by, and renormalised (the rule's normaliser cancels)."""
    raw = np.array(proba, dtype=np.float64, copy=True)
    labels = class1_codes(pd.Series(class1).fillna(""))
    for label, w in weights.items():
        rows = labels == label
        a = np.asarray(association, dtype=np.float64)[rows, None]
        unweighted = raw[rows] / (a * w + 1 - a)
        raw[rows] = unweighted / unweighted.sum(axis=1, keepdims=True)
    return raw


def _check_undone(trained, catalog, classes, frame, undone):
    """Refuse undone probabilities of the bcu that differ from the saved model's own prediction of them (the
    table's CSV keeps about nine digits)."""
    pool = selection_pool(catalog, ["bcu"], trained.training["features"])
    fresh = predict_proba_chunked(trained.model_dir, pool.X, pool.X_var, progress=False)
    fresh = np.asarray(fresh)[:, [trained.classes.index(c) for c in classes]]
    position = {name: i for i, name in enumerate(frame["Source_Name"])}
    difference = np.abs(fresh - undone[[position[str(name)] for name in pool.ids]]).max()
    if difference > 1e-6:
        raise RuntimeError(f"the bcu rule undone differs from the model's own prediction of the bcu by up to "
                           f"{difference:.2g} (expected below 1e-6): the rule's weights or association are not "
                           "the ones gpal applied")


def load(folder):
    """The classified sources joined to their FL16Y class, and every model's probabilities with the bcu rule as
    gpal applies it and undone."""
    folder = Path(folder)
    if not is_classify_folder(folder):
        raise SystemExit(f"{folder}: not {CLASSIFY_FOLDER}; make it with gpal classify --catalog RELEASE "
                         f"--out {folder}")
    run = recorded_identity(folder) or {}
    trained = load_trained(folder)
    training = trained.training
    classes, merge = training["classes"], training.get("merge", {})
    frame = _read(located(folder, CLASSIFICATIONS_CSV))
    later = _read(located(folder, LATER_CHECK_SOURCES_FILE)).set_index("Source_Name")
    later = later.loc[frame["Source_Name"]].reset_index()
    models = sorted({c[len(f"p_{classes[0]}_"):] for c in later.columns if c.startswith(f"p_{classes[0]}_")})
    rules = {RULE: {m: later[[f"p_{c}_{m}" for c in classes]].to_numpy() for m in models}}
    if run.get("bcu_types") in (None, "none"):  # a 4LAC split of the bcu moved gpal's rows past what the rule did
        catalog = load_catalog(training["catalog"]["release"])
        weights = class_weights(classes, merge, training["n_per_class"])
        association = association_weight(catalog, frame["Source_Name"].tolist())
        raw = {m: without_rule(p, frame["CLASS1"], weights, association) for m, p in rules[RULE].items()}
        _check_undone(trained, catalog, classes, frame, raw["gpal"])
        prior = {m: apply_known_classes(p, frame["CLASS1"].fillna(""), weights)[0] for m, p in raw.items()}
        rules = {NO_RULE: raw, BLAZAR_PRIOR: prior} | rules
    codes = {c: tuple(merge.get(c, (c,))) for c in classes}
    label = np.array([next((k for k, c in enumerate(classes) if code in codes[c]), -1)
                      for code in later["later_class"].fillna("").str.lower()])
    return frame, classes, merge, rules, label, folder


def _nonblazar(classes, merge):
    """The indices of the classes outside the blazars, those the rule weights down for a bcu."""
    return [k for k, w in enumerate(class_weights(classes, merge, {c: 1 for c in classes})["bcu"]) if w != 1]


def _need_undone(rules, folder):
    """Refuse a run whose rule could not be undone (`load`): the bcu and rule parts compare the rule with none."""
    if NO_RULE not in rules:
        raise SystemExit(f"{folder}: its bcu were split by --bcu-types 4lac after the rule, which cannot be undone; "
                         "give a run with --bcu-types none (the default)")


def bcu(frame, classes, merge, rules, label, folder):
    _need_undone(rules, folder)
    is_bcu = class1_codes(frame["CLASS1"].fillna("")) == "bcu"
    scored = is_bcu & (label >= 0)
    counts = ", ".join(f"{int(np.sum(label[scored] == k))} {c}" for k, c in enumerate(classes))
    print(f"{folder}: {scored.sum()} bcu sources FL16Y classifies ({counts})")
    raw, ruled = rules[NO_RULE], rules[RULE]
    probas = {f"{m} no rule": raw[m][scored] for m in raw} | {f"{m} + bcu rule": ruled[m][scored] for m in raw}
    table = bootstrap_comparison(label[scored], probas, reference="gpal no rule", n_boot=2000, random_state=0)
    table = table[table.metric.isin(["nll", "balanced_accuracy", "accuracy"])]
    print("| model | metric | value | 95% | diff (model - gpal no rule) | diff 95% |\n|---|---|---:|---|---:|---|")
    for r in table.itertuples():
        print(f"| {r.model} | {r.metric} | {r.value:.3f} | [{r.low:.3f}, {r.high:.3f}] | {r.diff:+.3f} | "
              f"[{r.diff_low:+.3f}, {r.diff_high:+.3f}] |")
    nonblazar = _nonblazar(classes, merge)
    blazar = scored & ~np.isin(label, nonblazar)
    for name, p in (("no rule", raw["gpal"]), ("bcu rule", ruled["gpal"])):
        print(f"gpal {name}: balanced accuracy on the {blazar.sum()} later blazars (bll, fsrq) alone: "
              f"{balanced_accuracy_score(label[blazar], np.argmax(p[blazar], axis=1)):.3f}")
    for name, p in (("no rule", raw["gpal"]), ("bcu rule", ruled["gpal"])):
        predicted = np.argmax(p[is_bcu], axis=1)
        print(f"gpal {name}: {int(np.isin(predicted, nonblazar).sum())} of {is_bcu.sum()} bcu predicted "
              f"{'/'.join(classes[k] for k in nonblazar)}")


def _share(rows_label, k):
    n = int(np.sum(rows_label >= 0))
    hits = int(np.sum(rows_label == k))
    low, high = binomial_interval(hits, n)
    return hits, n, low, high


def _with_rule(frame, classes, proba):
    """The classifications with gpal's probabilities ``proba`` and the point sources' predicted class from them."""
    out = frame.copy()
    for k, c in enumerate(classes):
        out[f"p_{c}"] = proba[:, k]
    point = ~out["extended"].astype(bool)
    out["predicted_class"] = np.where(point, np.asarray(classes, dtype=object)[np.argmax(proba, axis=1)],
                                      out["predicted_class"])
    return out


def rule(frame, classes, merge, rules, label, folder):
    _need_undone(rules, folder)
    is_bcu = class1_codes(frame["CLASS1"].fillna("")) == "bcu"
    point = ~frame["extended"].astype(bool).to_numpy()
    scored = label >= 0
    nonblazar = _nonblazar(classes, merge)
    pulsar = classes.index("pulsar")
    print(f"{folder}: the main job under each bcu rule ({RULE}: gpal's); later check on the {scored.sum()} "
          f"classified sources FL16Y classifies")
    print(f"| | {' | '.join(rules)} |\n|---|{'---|' * len(rules)}")
    cut = check_cuts({})
    bcu_names = frame["Source_Name"][is_bcu]
    columns = []
    for probas in rules.values():
        gpal = probas["gpal"]
        predicted = np.argmax(gpal[point], axis=1)
        lists = candidate_lists(_with_rule(frame, classes, gpal), classes, merge, cut)
        table = bootstrap_comparison(label[scored], {"gpal": gpal[scored], "logistic": probas["logistic"][scored]},
                                     reference="gpal", n_boot=2000, random_state=0).set_index(["model", "metric"])
        diff = table.loc[("logistic", "nll")]
        columns.append([
            str(int(np.isin(np.argmax(gpal[is_bcu], axis=1), nonblazar).sum())),
            str(int((gpal[is_bcu, pulsar] > 0.9).sum())),
            " / ".join(str(int(np.sum(predicted == k))) for k in range(len(classes))),
            " / ".join(f"{len(listed)} ({int(np.isin(listed['Source_Name'], bcu_names).sum())})"
                       for listed in lists.values()),
            f"{table.loc[('gpal', 'nll'), 'value']:.3f}, {table.loc[('gpal', 'balanced_accuracy'), 'value']:.3f}",
            f"{diff['diff']:+.3f} [{diff['diff_low']:+.3f}, {diff['diff_high']:+.3f}]",
        ])
    names = [f"bcu predicted {'/'.join(classes[k] for k in nonblazar)} (of {is_bcu.sum()})", "bcu with p_pulsar > 0.9",
             f"predicted {' / '.join(classes)} ({point.sum()} point sources)",
             f"target lists {' / '.join(classes)} (bcu among them)", "later check: gpal NLL, balanced accuracy",
             "logistic - gpal NLL [95%]"]
    for i, name in enumerate(names):
        print(f"| {name} | {' | '.join(column[i] for column in columns)} |")
    weights = class_weights(classes, merge, load_trained(folder).training["n_per_class"])["bcu"]
    print("a bcu's class weights w (the blazar prior over the training shares): "
          + ", ".join(f"{c} {w:.3f}" for c, w in zip(classes, weights)))


def cuts(frame, classes, merge, rules, label, folder):
    table = frame.assign(_label=label)
    print(f"{folder}: candidates per cut, and the share of those FL16Y classifies kept in the class")
    print("| class | Signif_Avg >= | 95% semi-major <= (deg) | Flags excluded | candidates | FL16Y classifies | "
          "kept class | share [95%] | top 50 classified: share |\n|---|---:|---:|---|---:|---:|---:|---|---|")
    for sig, ell, flags in itertools.product(SIGNIFICANCE, ELLIPSE, FLAGS):
        cut = check_cuts({"candidate_significance": sig, "candidate_max_ellipse": float(min(ell, 1e9)),
                          "candidate_flags": list(flags)})
        for k, (cls, rows) in enumerate(candidate_lists(table, classes, merge, cut).items()):
            lab = rows["_label"].to_numpy()
            hits, n, low, high = _share(lab, k)
            top = lab[lab >= 0][:TOP]
            thits, tn, tlow, thigh = _share(top, k)
            print(f"| {cls} | {sig:g} | {ell:g} | {'1-14' if flags else 'none'} | {len(rows)} | {n} | {hits} | "
                  f"{hits / max(n, 1):.3f} [{low:.2f}, {high:.2f}] | {thits}/{tn} [{tlow:.2f}, {thigh:.2f}] |")


def top(frame, classes, merge, rules, label, folder):
    table = frame.assign(_label=label)
    follow = _read(located(folder, list_path(INFORMATIVE_FILE))).set_index("Source_Name")
    cut = check_cuts({})
    lists = candidate_lists(table, classes, merge, cut)
    point = ~table["extended"].astype(bool).to_numpy()
    classified = label >= 0
    print(f"{folder}: among the first {TOP} sources FL16Y classifies of each ranking, the share in the class "
          f"(Jeffreys 95%); target lists at the defaults ({', '.join(f'{n}={v}' for n, v in cut.items())})")
    print("| class | base rate | target list | p_<class> alone | logistic | BALD list |\n|---|---|---|---|---|---|")
    for k, cls in enumerate(classes):
        base_hits, base_n, blow, bhigh = _share(label[point], k)
        by_p = np.argsort(-table[f"p_{cls}"].to_numpy(), kind="stable")
        by_logistic = np.argsort(-rules[RULE]["logistic"][:, k], kind="stable")
        bald_names = follow[follow["predicted_class"] == cls].sort_values("information", ascending=False,
                                                                         kind="stable").index
        position = {n: i for i, n in enumerate(table["Source_Name"])}
        rankings = {
            "target list": lists[cls]["_label"].to_numpy(),
            "p alone": label[[i for i in by_p if point[i]]],
            "logistic": label[[i for i in by_logistic if point[i]]],
            "BALD": label[[position[n] for n in bald_names]],
        }
        cells = []
        for lab in rankings.values():
            hits, n, low, high = _share(lab[lab >= 0][:TOP], k)
            cells.append(f"{hits}/{n} = {hits / max(n, 1):.2f} [{low:.2f}, {high:.2f}]")
        print(f"| {cls} | {base_hits}/{base_n} = {base_hits / base_n:.3f} [{blow:.3f}, {bhigh:.3f}] | "
              + " | ".join(cells) + " |")
    is_bcu = class1_codes(table["CLASS1"].fillna("")) == "bcu"
    print("bcu among the candidates: " + ", ".join(
        f"{cls} {int(np.isin(lists[cls]['Source_Name'], table['Source_Name'][is_bcu]).sum())} of {len(lists[cls])}"
        for cls in classes) + f"; classified point sources FL16Y classifies: {int((classified & point).sum())}")


def main(folder, *parts):
    warnings.simplefilter("ignore")
    loaded = load(folder)
    with keep_printed("target_lists", __file__, [folder, *parts]):  # docs/targets.md cites these tables
        for part in parts or ("bcu", "rule", "cuts", "top"):
            {"bcu": bcu, "rule": rule, "cuts": cuts, "top": top}[part](*loaded)
            print()


if __name__ == "__main__":
    main(*sys.argv[1:])

"""The target lists (`gpal.catalog_jobs.candidates`) and the bcu rule (`gpal.catalogs.known_classes`) on later labels.

Reads a finished ``gpal classify`` folder of a release older than the newest shipped (4FGL-DR4,
4FGL v20): its classifications and the later-release check it wrote (``tables/later_check_sources.csv``:
each classified source's FL16Y class, and every model's probabilities of it).  A folder of a gpal
before the bcu rule (no ``KNOWNCLS`` keyword) holds the probabilities as the models gave them, and the
rule is applied here with the library's function; a later folder has it applied already (``bcu``
needs the former).
Prints, for docs/targets.md:

1. ``bcu``: the bcu sources FL16Y puts in a trained class, scored with the probabilities as the
   model gives them and with the bcu rule applied (NLL, balanced accuracy, paired bootstrap);
   how many bcu each way are predicted in a non-blazar class;
2. ``cuts``: per class and per combination of cuts, the candidates (with the rule applied) and the
   share of those FL16Y classifies that it puts in the candidate's class;
3. ``top``: among the first 50 sources FL16Y classifies of each ranking, the share in the class:
   the target list (default cuts), every classified point source by p_<class> alone, by logistic
   regression's probability, and the BALD list (most_informative.csv, by information) of sources
   predicted in the class; with the base rate (the class's share among every classified source FL16Y classifies).

    python workflows/studies/bench_target_lists.py RUN_FOLDER [bcu|cuts|top ...]

What a command prints is kept in ``workflows/studies/records/target_lists.json``, one entry a command.
"""

import itertools
import json
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from gpal.catalog_jobs.candidates import candidate_lists, check_cuts
from gpal.catalog_jobs.layout import (
    CLASSIFICATIONS_CSV, INFORMATIVE_FILE, LATER_CHECK_SOURCES_FILE, TRAINING_RECORD, list_path, located,
)
from gpal.catalog_jobs.selection import CatalogSelection
from gpal.catalogs.known_classes import apply_known_classes, class_weights
from gpal.evaluation.comparison import bootstrap_comparison
from gpal.evaluation.intervals import binomial_interval
from gpal.runs.output_dir import recorded_identity
from shared import keep_printed  # the script's folder, first on its path

TOP = 50
SIGNIFICANCE = (4.0, 5.0, 6.0, 8.0)
ELLIPSE = (np.inf, 0.2, 0.1, 0.05)
FLAGS = ((), tuple(range(1, 15)))


def _read(path):
    return pd.read_csv(path, keep_default_na=False, na_values=[""], dtype={"CLASS1": str, "ASSOC1": str})


def load(folder):
    """The classified sources joined to their FL16Y class and every model's probabilities, rule applied."""
    folder = Path(folder)
    run = recorded_identity(folder) or {}
    classes, merge = CatalogSelection(classes=run.get("class_spec", "blazar_pulsar")).class_groups()
    frame = _read(located(folder, CLASSIFICATIONS_CSV))
    later = _read(located(folder, LATER_CHECK_SOURCES_FILE)).set_index("Source_Name")
    later = later.loc[frame["Source_Name"]].reset_index()
    models = sorted({c[len(f"p_{classes[0]}_"):] for c in later.columns if c.startswith(f"p_{classes[0]}_")})
    raw = {m: later[[f"p_{c}_{m}" for c in classes]].to_numpy() for m in models}
    if "KNOWNCLS" in located(folder, CLASSIFICATIONS_CSV).with_suffix(".ecsv").read_text(encoding="utf-8").split("\n# schema", 1)[0]:
        ruled, raw = raw, None  # a run of gpal with the rule: its probabilities have it already
    else:
        training = json.loads(located(folder, TRAINING_RECORD).read_text())
        weights = class_weights(classes, merge, training["n_per_class"])
        ruled = {m: apply_known_classes(p, frame["CLASS1"].fillna(""), weights)[0] for m, p in raw.items()}
    codes = {c: tuple(merge.get(c, (c,))) for c in classes}
    label = np.array([next((k for k, c in enumerate(classes) if code in codes[c]), -1)
                      for code in later["later_class"].fillna("").str.lower()])
    return frame, classes, merge, raw, ruled, label, folder


def bcu(frame, classes, merge, raw, ruled, label, folder):
    if raw is None:
        raise SystemExit(f"{folder}: its probabilities have the bcu rule already; give a run of gpal before it")
    is_bcu = frame["CLASS1"].fillna("").str.lower().to_numpy() == "bcu"
    scored = is_bcu & (label >= 0)
    counts = ", ".join(f"{int(np.sum(label[scored] == k))} {c}" for k, c in enumerate(classes))
    print(f"{folder}: {scored.sum()} bcu sources FL16Y classifies ({counts})")
    probas = {f"{m} as given": raw[m][scored] for m in raw} | {f"{m} + bcu rule": ruled[m][scored] for m in raw}
    table = bootstrap_comparison(label[scored], probas, reference="gpal as given", n_boot=2000, random_state=0)
    table = table[table.metric.isin(["nll", "balanced_accuracy", "accuracy"])]
    print("| model | metric | value | 95% | diff (model - gpal as given) | diff 95% |\n|---|---|---:|---|---:|---|")
    for r in table.itertuples():
        print(f"| {r.model} | {r.metric} | {r.value:.3f} | [{r.low:.3f}, {r.high:.3f}] | {r.diff:+.3f} | "
              f"[{r.diff_low:+.3f}, {r.diff_high:+.3f}] |")
    nonblazar = [k for k, w in enumerate(class_weights(classes, merge, {c: 1 for c in classes})["bcu"]) if w != 1]
    blazar = scored & ~np.isin(label, nonblazar)
    from sklearn.metrics import balanced_accuracy_score

    for name, p in (("as given", raw["gpal"]), ("bcu rule", ruled["gpal"])):
        print(f"gpal {name}: balanced accuracy on the {blazar.sum()} later blazars (bll, fsrq) alone: "
              f"{balanced_accuracy_score(label[blazar], np.argmax(p[blazar], axis=1)):.3f}")
    for name, p in (("as given", raw["gpal"]), ("bcu rule", ruled["gpal"])):
        predicted = np.argmax(p[is_bcu], axis=1)
        print(f"gpal {name}: {int(np.isin(predicted, nonblazar).sum())} of {is_bcu.sum()} bcu predicted "
              f"{'/'.join(classes[k] for k in nonblazar)}")


def _with_rule(frame, classes, ruled):
    out = frame.copy()
    for k, c in enumerate(classes):
        out[f"p_{c}"] = ruled["gpal"][:, k]
    point = ~out["extended"].astype(bool)
    out["predicted_class"] = np.where(point, np.asarray(classes, dtype=object)[np.argmax(ruled["gpal"], axis=1)],
                                      out["predicted_class"])
    return out


def _share(rows_label, k):
    n = int(np.sum(rows_label >= 0))
    hits = int(np.sum(rows_label == k))
    low, high = binomial_interval(hits, n)
    return hits, n, low, high


def cuts(frame, classes, merge, raw, ruled, label, folder):
    table = _with_rule(frame, classes, ruled).assign(_label=label)
    print(f"{folder}: candidates per cut (bcu rule applied), and the share of those FL16Y classifies kept in the class")
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


def top(frame, classes, merge, raw, ruled, label, folder):
    table = _with_rule(frame, classes, ruled).assign(_label=label)
    informative = next(p for p in (located(folder, list_path(INFORMATIVE_FILE)), folder / "follow_up.csv")
                       if p.is_file())
    follow = _read(informative).set_index("Source_Name")  # follow_up.csv: its name before gpal 0.4
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
        by_logistic = np.argsort(-ruled["logistic"][:, k], kind="stable")
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
    is_bcu = table["CLASS1"].fillna("").str.lower().to_numpy() == "bcu"
    print("bcu among the candidates: " + ", ".join(
        f"{cls} {int(np.isin(lists[cls]['Source_Name'], table['Source_Name'][is_bcu]).sum())} of {len(lists[cls])}"
        for cls in classes) + f"; classified point sources FL16Y classifies: {int((classified & point).sum())}")


def main(folder, *parts):
    warnings.simplefilter("ignore")
    loaded = load(folder)
    with keep_printed("target_lists", __file__, [folder, *parts]):  # docs/targets.md cites these tables
        for part in parts or ("bcu", "cuts", "top"):
            {"bcu": bcu, "cuts": cuts, "top": top}[part](*loaded)
            print()


if __name__ == "__main__":
    main(*sys.argv[1:])

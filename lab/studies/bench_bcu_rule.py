"""Which bcu rule: chosen on labels older than FL16Y, then tested on FL16Y's.

A bcu is a blazar of uncertain type; `gpal.catalogs.known_classes` turns that into a prior.  The
candidate rules, declared here before any of them was scored, all weight the features' class
probabilities of a bcu source, class c by ``a * w_c + 1 - a`` (``w`` the blazar prior's Bayes weights
of `class_weights`, the blazars' 1; ``a = 1`` is Bayes' rule with the blazar prior, ``a = 0`` the
features alone), and renormalise; they differ in ``a``:

- ``blazar prior``: ``a = 1`` (the rule before this study);
- ``no rule``: ``a = 0`` (the features alone);
- ``x ASSOC_PROB_BAY``: ``a`` = the Bayesian association probability of the source's counterpart;
- ``x max(BAY, LR)``: ``a`` = the larger of the Bayesian and the likelihood-ratio probabilities;
- ``half prior``: ``a = 0.5`` for every bcu.

Missing probabilities: a method that gave none (NaN, as 4FGL writes where it did not associate
the source) counts 0; a release whose layout has no association probabilities (3FGL) gives
``a = 1`` (the label as given, nothing saying it is in doubt).

Protocol.  Fit the main job's estimator once per release and seed (`later_labels.fit_unit`; every
rule acts on the same probabilities).  **Selection** (``select``): the bcu sources of 3FGL and 4FGL
(v20) that 4FGL-DR4 puts in bll, fsrq or psr / msp, pooled; the rule with the lowest NLL (mean over
seeds) wins, except that every rule whose paired bootstrap interval of the NLL difference to it
holds 0 counts as tied, and among the tied the highest balanced accuracy wins (equal: the earlier
in the list above).  The selection is written to ``selection.json`` before any FL16Y label is read.
**Test** (``test``, refused without ``selection.json``): the bcu sources of 4FGL-DR4 and 4FGL that
FL16Y puts in the three classes, each pair alone; NLL and balanced accuracy of every rule, and the
paired differences of the selected rule to ``blazar prior`` and to ``no rule``.  Intervals: 2000
resamples of the sources, the same for every rule and seed, each resample's measure averaged over
the seeds.  The blazar prior's share 3/239 was counted on the 4FGL -> 4FGL-DR4 bcu: the selection
pairs favour it (and 4FGL -> FL16Y shares its sources with 4FGL -> 4FGL-DR4)::

    OMP_NUM_THREADS=1 nice -n 10 python lab/studies/bench_bcu_rule.py fit /tmp/bcu-rule
    python lab/studies/bench_bcu_rule.py select /tmp/bcu-rule
    python lab/studies/bench_bcu_rule.py test /tmp/bcu-rule

The tables ``select`` and ``test`` print are kept in ``lab/studies/records/bcu_rule.json``.
"""

from __future__ import annotations

import argparse
import json
import warnings
from pathlib import Path

import numpy as np

from gpal.catalog_jobs.later_labels import CLASSES, MERGE, check_data, later_codes, release_sets, fit_unit
from gpal.catalogs.known_classes import apply_known_classes, association_weight, class_weights
from gpal.evaluation.comparison import balanced_accuracy, resampled_metrics
from gpal.evaluation.metrics import negative_log_likelihood
from shared import keep_printed  # the script's folder, first on its path

RULES = ("blazar prior", "no rule", "x ASSOC_PROB_BAY", "x max(BAY, LR)", "half prior")
SELECTION = ("3FGL:4FGL-DR4", "4FGL:4FGL-DR4")
TEST = ("4FGL-DR4:FL16Y", "4FGL:FL16Y")
TODAY, NONE = "blazar prior", "no rule"
#: The candidate the library's default rule (`gpal.catalogs.known_classes`) is, checked in ``test``.
LIBRARY = "x ASSOC_PROB_BAY"
SEEDS = (0, 1, 2)
N_BOOT = 2000
N_BINS = 15


def _fit_path(out: Path, release: str, seed: int) -> Path:
    return out / f"fit_{release}_seed{seed}.json"


def fit(out: Path, seeds: tuple[int, ...]) -> None:
    """The main job's estimator's probabilities of each release's unassociated and bcu sources, once per seed."""
    out.mkdir(parents=True, exist_ok=True)
    for release in sorted({p.split(":")[0] for p in SELECTION + TEST}):
        for seed in seeds:
            path = _fit_path(out, release, seed)
            if path.is_file():
                continue
            unit = fit_unit(f"{release}:FL16Y", seed, "gpal")  # the pool is the earlier release's, whatever the later
            path.write_text(json.dumps({"release": release, "seed": seed, **unit}))
            print(f"fitted {release} seed {seed}", flush=True)


def _association(release: str, ids: list[str]) -> np.ndarray:
    """Each rule's ``a`` (rule -> (n,)) for the sources ``ids`` of ``release``."""
    catalog = release_sets(release)[0]
    if catalog.columns.assoc_prob_bay is None and catalog.columns.assoc_prob_lr is None:
        bay = lr = np.ones(len(ids))  # the layout says nothing of the association's doubt: the label as given
    else:
        bay, lr = (np.nan_to_num(catalog.values_of(role, ids), nan=0.0) for role in ("assoc_prob_bay", "assoc_prob_lr"))
    n = len(ids)
    return {"blazar prior": np.ones(n), "no rule": np.zeros(n), "x ASSOC_PROB_BAY": bay,
            "x max(BAY, LR)": np.maximum(bay, lr), "half prior": np.full(n, 0.5)}


def _pair(out: Path, pair: str, seeds: tuple[int, ...]) -> dict:
    """The bcu sources of ``pair`` the later release puts in the classes: labels and each rule's probabilities
    (rule -> seed -> (n, C))."""
    earlier, later = pair.split(":")
    train, pool, class1 = check_data(f"{earlier}:{later}", seeds[0])
    codes = later_codes(earlier, later)
    label = np.array([CLASSES.index(c) if c in CLASSES else CLASSES.index("pulsar") if c in MERGE["pulsar"] else -1
                      for c in codes])
    rows = (np.char.lower(np.char.strip(class1.astype(str))) == "bcu") & (label >= 0)
    counts = dict(zip(CLASSES, np.bincount(train.y, minlength=len(CLASSES)).tolist()))
    w = class_weights(CLASSES, {k: list(v) for k, v in MERGE.items()}, counts)["bcu"]
    ids = [str(i) for i in np.asarray(pool.ids)[rows]]
    a = _association(earlier, ids)
    proba, raw = {}, {}
    for rule in RULES:
        proba[rule] = {}
        for seed in seeds:
            p = raw[seed] = np.asarray(json.loads(_fit_path(out, earlier, seed).read_text())["proba"])[rows]
            weighted = p * (a[rule][:, None] * w + 1 - a[rule][:, None])
            proba[rule][seed] = weighted / weighted.sum(axis=1, keepdims=True)
    # the library's rule (gpal.catalogs.known_classes, what the main job applies) is the candidate of its name
    library = {s: apply_known_classes(raw[s], class1[rows], {"bcu": w}, association=association_weight(
        release_sets(earlier)[0], ids))[0] for s in seeds}
    return {"label": label[rows], "proba": proba, "library": library, "ids": ids, "pair": pair}


def _joined(parts: list[dict]) -> dict:
    """Pairs pooled into one set of sources."""
    seeds = list(parts[0]["proba"][RULES[0]])
    return {"label": np.concatenate([p["label"] for p in parts]), "pair": " + ".join(p["pair"] for p in parts),
            "ids": sum((p["ids"] for p in parts), []),
            "proba": {r: {s: np.concatenate([p["proba"][r][s] for p in parts]) for s in seeds} for r in RULES}}


def _scores(data: dict, seed: int = 0) -> dict:
    """Per rule: NLL and balanced accuracy (mean over seeds) and their resamples (mean over seeds), (N_BOOT,)."""
    y = data["label"]
    index = np.random.default_rng(seed).integers(0, y.size, (N_BOOT, y.size))
    out = {}
    for rule, by_seed in data["proba"].items():
        ps = list(by_seed.values())
        boot = [resampled_metrics(y, p, index, N_BINS) for p in ps]
        out[rule] = {"nll": float(np.mean([negative_log_likelihood(y, p) for p in ps])),
                     "balanced_accuracy": float(np.mean([balanced_accuracy(y, p) for p in ps])),
                     "boot_nll": np.mean([b["nll"] for b in boot], axis=0),
                     "boot_balanced_accuracy": np.mean([b["balanced_accuracy"] for b in boot], axis=0),
                     "predicted_pulsar_of_later_pulsars": float(np.mean([
                         np.sum((p.argmax(1) == 2) & (y == 2)) for p in ps]))}
    return out


def _diff(scores: dict, rule: str, reference: str, measure: str) -> dict:
    d = scores[rule][f"boot_{measure}"] - scores[reference][f"boot_{measure}"]
    return {"diff": scores[rule][measure] - scores[reference][measure], "low": float(np.percentile(d, 2.5)),
            "high": float(np.percentile(d, 97.5))}


def _describe(data: dict) -> str:
    n = np.bincount(data["label"], minlength=len(CLASSES))
    return f"{data['pair']}: {data['label'].size} bcu ({', '.join(f'{k} {c}' for c, k in zip(CLASSES, n))})"


def select(out: Path, seeds: tuple[int, ...]) -> dict:
    """Score every rule on the selection pairs and write the chosen one to ``selection.json``."""
    data = _joined([_pair(out, pair, seeds) for pair in SELECTION])
    scores = _scores(data)
    best = min(RULES, key=lambda r: scores[r]["nll"])
    tied = [r for r in RULES if r == best or _diff(scores, r, best, "nll")["low"] <= 0 <= _diff(scores, r, best, "nll")["high"]]
    chosen = max(tied, key=lambda r: (scores[r]["balanced_accuracy"], -RULES.index(r)))
    record = {"pairs": list(SELECTION), "sources": _describe(data), "seeds": list(seeds), "lowest_nll": best,
              "tied_on_nll": tied, "selected": chosen,
              "rules": {r: {"nll": scores[r]["nll"], "balanced_accuracy": scores[r]["balanced_accuracy"],
                            "nll_minus_lowest": _diff(scores, r, best, "nll"),
                            "balanced_accuracy_minus_today": _diff(scores, r, TODAY, "balanced_accuracy"),
                            "later_pulsars_predicted_pulsar": scores[r]["predicted_pulsar_of_later_pulsars"]}
                        for r in RULES}}
    (out / "selection.json").write_text(json.dumps(record, indent=1))
    return record


def test(out: Path, seeds: tuple[int, ...]) -> dict:
    """Score every rule on the test pairs, the selected one paired against today's and against none."""
    path = out / "selection.json"
    if not path.is_file():
        raise SystemExit(f"{path} is missing: run `select` first (the rule is chosen before FL16Y's labels are read)")
    chosen = json.loads(path.read_text())["selected"]
    record = {"selected": chosen, "seeds": list(seeds), "pairs": {}}
    for pair in TEST:
        data = _pair(out, pair, seeds)
        scores = _scores(data)
        library = all(np.allclose(data["library"][s], data["proba"][LIBRARY][s], rtol=1e-12, atol=0) for s in seeds)
        record["pairs"][pair] = {"sources": _describe(data), f"library rule equals {LIBRARY}": library, "rules": {r: {
            "nll": scores[r]["nll"], "balanced_accuracy": scores[r]["balanced_accuracy"],
            "later_pulsars_predicted_pulsar": scores[r]["predicted_pulsar_of_later_pulsars"],
            **{f"{m}_minus_{ref}": _diff(scores, r, ref, m) for m in ("nll", "balanced_accuracy")
               for ref in (TODAY, NONE)}} for r in RULES}}
    (out / "test.json").write_text(json.dumps(record, indent=1))
    return record


def _table(title: str, rules: dict, columns: list[tuple[str, str]]) -> str:
    lines = [title, "| rule | " + " | ".join(c for c, _ in columns) + " |", "|---" * (len(columns) + 1) + "|"]
    for r, v in rules.items():
        cells = []
        for _, key in columns:
            x = v[key]
            cells.append(f"{x['diff']:+.3f} [{x['low']:+.3f}, {x['high']:+.3f}]" if isinstance(x, dict) else
                         f"{x:.3f}" if isinstance(x, float) else str(x))
        lines.append(f"| {r} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("stage", choices=["fit", "select", "test"])
    parser.add_argument("out", type=Path, help="folder of the fits and the records")
    parser.add_argument("--seeds", type=int, nargs="+", default=list(SEEDS))
    args = parser.parse_args(argv)
    seeds = tuple(args.seeds)
    warnings.simplefilter("ignore")  # the catalogs' per-row notes are the main job's to report
    if args.stage == "fit":
        fit(args.out, seeds)
    elif args.stage == "select":
        r = select(args.out, seeds)
        with keep_printed("bcu_rule", __file__, argv):  # docs/targets.md cites the selection and the test
            _print_selection(r)
    else:
        r = test(args.out, seeds)
        with keep_printed("bcu_rule", __file__, argv):
            _print_test(r)


def _print_selection(r: dict) -> None:
    print(_table(f"selection, {r['sources']}; seeds {r['seeds']}; lowest NLL {r['lowest_nll']}, tied "
                 f"{r['tied_on_nll']}; selected: {r['selected']}", r["rules"],
                 [("NLL", "nll"), ("NLL - lowest [95%]", "nll_minus_lowest"), ("balanced accuracy", "balanced_accuracy"),
                  ("bal. acc. - blazar prior [95%]", "balanced_accuracy_minus_today"),
                  ("later pulsars called pulsar", "later_pulsars_predicted_pulsar")]))


def _print_test(r: dict) -> None:
    for pair, v in r["pairs"].items():
        print(_table(f"\ntest, {v['sources']}; seeds {r['seeds']}; selected: {r['selected']}; the library's rule "
                     f"equals {LIBRARY}: {v[f'library rule equals {LIBRARY}']}", v["rules"],
                     [("NLL", "nll"), ("NLL - blazar prior", "nll_minus_blazar prior"),
                      ("NLL - no rule", "nll_minus_no rule"), ("balanced accuracy", "balanced_accuracy"),
                      ("bal. acc. - blazar prior", "balanced_accuracy_minus_blazar prior"),
                      ("bal. acc. - no rule", "balanced_accuracy_minus_no rule"),
                      ("later pulsars called pulsar", "later_pulsars_predicted_pulsar")]))


if __name__ == "__main__":
    main()

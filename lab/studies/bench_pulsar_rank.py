"""Can a ranking learned from earlier releases put more later pulsars at the top of a pulsar list than significance?

The pulsar lists are those of the pulsar order study (``bench_pulsar_order.py``: ``gpal classify`` with the defaults
on 3FGL, 4FGL, 4FGL-DR2 and 4FGL-DR4, in ``RUNS/<release>``, reused; run there when missing) and its later labels
(``RUNS/later_<earlier>_<later>.csv``).  A logistic regression (features standardised, L2 penalty ``C``) learns
"a pulsar in 4FGL-DR4" from what a list row carries (`FEATURES`), on the rows of the three lists older than DR4
(`TRAIN`).  Each feature set and ``C`` of `GRID`, fixed before FL16Y was read, is scored by list-held-out
cross-validation: fitted on two lists, it ranks the third, and the later pulsars among its first 25, 50 and 100 rows
are summed over the six pairs that end before FL16Y, the pairs the list order was chosen on.  Successive lists share
most of their sources (170 of DR2's 188 rows lie within 0.2 deg of a 4FGL row), so the rows of the training lists
within `SAME_SOURCE` of a held-out row are left out of its fit: a model, and a flexible one most, would otherwise be
scored on the sources it learned.  Gradient-boosted trees (`TREES`) are scored beside the grid the same way, to
say whether a flexible model finds what a linear one misses; a committee cannot read them, so they are not chosen.  The significance
order (the pulsar list's default, `Signif_Avg` first) is the rule to beat: a model is chosen only by holding more
in the top 50 (ties: the top 25, then the top 100), with a paired bootstrap interval of its gain (each list's rows
resampled, the held-out scores ranked by both).  The chosen model is then fitted on all three lists, frozen, and
read once on the four pairs ending in FL16Y.  Three of those lists were trained on (their DR4 pulsars are nearly all
FL16Y pulsars too), so the DR4 -> FL16Y pair, whose list no model saw, is shown alone as well.

    python lab/studies/bench_pulsar_rank.py --runs runs/pulsar_order
    python lab/studies/bench_pulsar_rank.py --runs runs/pulsar_order --record lab/pages/records/results/pulsar_order.learned.json
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd
from astropy import units as u
from astropy.coordinates import SkyCoord
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from gpal.catalog_jobs.candidates import ranked
from gpal.evaluation.metrics import roc_auc
from shared import (EARLIER, LATER, TOP, code_commit, hits, later_classes, pulsar_list,
                    pulsar_study_arguments, run)

#: The lists a model learns from, and the release whose pulsars it learns (the newest before FL16Y).
TRAIN = ("3FGL", "4FGL", "4FGL-DR2")
LEARNED_FROM = "4FGL-DR4"


def _log(column: str, floor: float) -> Callable[[pd.DataFrame], np.ndarray]:
    return lambda rows: np.log(np.maximum(pd.to_numeric(rows[column]).to_numpy(np.float64), floor))


def _logit_p(rows: pd.DataFrame) -> np.ndarray:
    p = np.clip(rows["p_pulsar"].to_numpy(np.float64), 1e-6, 1 - 1e-6)
    return np.log(p / (1 - p))


#: What a pulsar-list row carries, as a model reads it (logs of the positive quantities that span decades).
FEATURES: dict[str, Callable[[pd.DataFrame], np.ndarray]] = {
    "logit p_pulsar": _logit_p,
    "log Signif_Avg": _log("Signif_Avg", 1e-3),
    "|b|": lambda rows: rows["GLAT"].abs().to_numpy(np.float64),
    "log Signif_Curvature": _log("Signif_Curvature", 0.1),  # a curvature significance under 0.1 is none
    "log Variability_Index": _log("Variability_Index", 1.0),
    "log Conf_95_SemiMajor": _log("Conf_95_SemiMajor", 1e-4),
    "log Flux1000": _log("Flux1000", 1e-15),
    "unassociated_releases": lambda rows: pd.to_numeric(rows["unassociated_releases"], errors="coerce")
    .fillna(0).to_numpy(np.float64),
}
#: The feature sets tried (each with every ``C`` of `C_VALUES`): significance alone, with the probability, with the
#: latitude (millisecond pulsars off the plane), with the curvature (a pulsar's cut-off), and all of them.
GRID = {
    "significance": ("log Signif_Avg",),
    "probability + significance": ("logit p_pulsar", "log Signif_Avg"),
    "probability + significance + |b|": ("logit p_pulsar", "log Signif_Avg", "|b|"),
    "probability + significance + curvature": ("logit p_pulsar", "log Signif_Avg", "log Signif_Curvature"),
    "all": tuple(FEATURES),
}
C_VALUES = (0.01, 0.1, 1.0, 10.0)
BASELINE = "significance order (the default)"
#: A row of another list this close (deg) is the same source: twice the largest 95% semi-major axis a list holds.
SAME_SOURCE = 0.2
#: The flexible model scored beside `GRID` (on every feature; shallow trees, slow learning: few positives).
TREES = "gradient-boosted trees, depth 2"


def trees() -> HistGradientBoostingClassifier:
    return HistGradientBoostingClassifier(max_depth=2, max_iter=100, learning_rate=0.05, random_state=0)


def features(rows: pd.DataFrame, names: tuple[str, ...] = tuple(FEATURES)) -> np.ndarray:
    return np.column_stack([FEATURES[n](rows) for n in names])


class Lists:
    """Each release's pulsar list, and per pair which of its rows the later release calls a pulsar."""

    def __init__(self, runs: Path):
        self.rows = {e: pulsar_list(run(runs, e)) for e in EARLIER}
        self.found: dict[tuple[str, str], np.ndarray] = {}
        self.sky = {e: SkyCoord(rows["RA"].to_numpy(np.float64) * u.deg, rows["DEC"].to_numpy(np.float64) * u.deg)
                    for e, rows in self.rows.items()}
        for e in EARLIER:
            laters = LATER[LATER.index(e) + 1:] if e in LATER else LATER
            for later in laters:
                self.found[e, later] = hits(self.rows[e]["Source_Name"],
                                                        later_classes(runs, e, later))

    def apart(self, release: str, other: str | None) -> np.ndarray:
        """Which rows of ``release``'s list are no source of ``other``'s (none nearer than `SAME_SOURCE`)."""
        if other is None:
            return np.ones(len(self.rows[release]), bool)
        _, distance, _ = self.sky[release].match_to_catalog_sky(self.sky[other])
        return distance.deg >= SAME_SOURCE

    def pairs(self, ending_in_fl16y: bool) -> list[tuple[str, str]]:
        return [p for p in self.found if (p[1] == "FL16Y") == ending_in_fl16y]

    def significance(self, release: str) -> np.ndarray:
        """A score whose order is the list's default (`ranked` by significance): minus the default rank."""
        rows = self.rows[release].assign(_row=np.arange(len(self.rows[release])))
        rank = np.empty(len(rows))
        rank[ranked(rows, "pulsar", "significance")["_row"].to_numpy()] = np.arange(len(rows))
        return -rank


def logistic(c: float):
    return make_pipeline(StandardScaler(), LogisticRegression(C=c, max_iter=5000))


def fitted(lists: Lists, names: tuple[str, ...], model, on: tuple[str, ...], away_from: str | None = None):
    """``model`` fitted on the lists ``on``, without their rows that are sources of ``away_from``'s list."""
    keep = {e: lists.apart(e, away_from) for e in on}
    x = np.vstack([features(lists.rows[e], names)[keep[e]] for e in on])
    y = np.concatenate([lists.found[e, LEARNED_FROM][keep[e]] for e in on]).astype(int)
    return model.fit(x, y)


def held_out_scores(lists: Lists, names: tuple[str, ...], make) -> dict[str, np.ndarray]:
    """Each training list scored by the model (``make()``) fitted on the other two, without its sources."""
    return {e: fitted(lists, names, make(), tuple(t for t in TRAIN if t != e), away_from=e).predict_proba(
        features(lists.rows[e], names))[:, 1] for e in TRAIN}


def top_counts(lists: Lists, scores: dict[str, np.ndarray], pairs: list[tuple[str, str]]) -> dict[int, int]:
    """Later pulsars among the first k rows by ``scores`` (highest first), summed over ``pairs``."""
    out = dict.fromkeys(TOP, 0)
    for e, later in pairs:
        found = lists.found[e, later][np.argsort(-scores[e], kind="stable")]
        for k in TOP:
            out[k] += int(found[:k].sum())
    return out


def paired_gain(lists: Lists, mine: dict[str, np.ndarray], theirs: dict[str, np.ndarray], pairs: list[tuple[str, str]],
                n_boot: int, seed: int = 0) -> dict[int, tuple[int, float, float]]:
    """Per k: ``mine``'s later pulsars among the first k minus ``theirs``, summed over ``pairs``, and its 95% paired
    bootstrap interval (each list's rows resampled, the same draw ranked by both scores)."""
    rng = np.random.default_rng(seed)
    seen = {k: a - b for (k, a), b in zip(top_counts(lists, mine, pairs).items(), top_counts(lists, theirs, pairs).values())}
    draws = np.zeros((n_boot, len(TOP)))
    for i in range(n_boot):
        for e in sorted({e for e, _ in pairs}):
            draw = rng.integers(0, len(lists.rows[e]), len(lists.rows[e]))
            a, b = np.argsort(-mine[e][draw], kind="stable"), np.argsort(-theirs[e][draw], kind="stable")
            for later in (later for p, later in pairs if p == e):
                found = lists.found[e, later][draw]
                draws[i] += [found[a][:k].sum() - found[b][:k].sum() for k in TOP]
    return {k: (seen[k], *np.quantile(draws[:, j], [0.025, 0.975])) for j, k in enumerate(TOP)}


def study(runs: Path, n_boot: int) -> tuple[list[dict], str, bool]:
    from result_records import make_table

    lists = Lists(runs)
    older, newer = lists.pairs(False), lists.pairs(True)
    significance = {e: lists.significance(e) for e in EARLIER}
    probability = {e: lists.rows[e]["p_pulsar"].to_numpy(np.float64) for e in EARLIER}
    base = top_counts(lists, significance, older)
    grid_rows = [[BASELINE, "–", *map(str, base.values())],
                 ["probability order", "–", *map(str, top_counts(lists, probability, older).values())]]
    best, best_key, best_scores = None, (base[50], base[25], base[100]), None
    for name, names in GRID.items():
        for c in C_VALUES:
            scores = held_out_scores(lists, names, lambda: logistic(c))
            counts = top_counts(lists, scores, older)
            grid_rows.append([name, f"{c:g}", *map(str, counts.values())])
            if (counts[50], counts[25], counts[100]) > best_key:
                best, best_key, best_scores = (name, c), (counts[50], counts[25], counts[100]), scores
    flexible = held_out_scores(lists, tuple(FEATURES), trees)
    grid_rows.append([f"{TREES} (all features; not chosen)", "–", *map(str, top_counts(lists, flexible, older).values())])
    tables = [make_table(["model", "C", *(f"top {k}" for k in TOP)], grid_rows, "llrrr",
                         "Cross-validated on the pairs ending before FL16Y: each list ranked by the model fitted on "
                         f"the other two lists without its sources (rows within {SAME_SOURCE:g} deg of one), the later "
                         "pulsars among its first rows summed over the six pairs")]
    if best is None:
        return tables + [separation(lists)], BASELINE, False
    name, c = best
    gain = paired_gain(lists, best_scores, significance, older, n_boot)
    adopted = gain[50][1] > 0
    model = fitted(lists, GRID[name], logistic(c), TRAIN)
    frozen = {e: model.predict_proba(features(lists.rows[e], GRID[name]))[:, 1]
              for e in EARLIER}
    scaler, weights = model.named_steps["standardscaler"], model.named_steps["logisticregression"]
    tables.append(make_table(
        ["feature", "coefficient per standard deviation", "mean", "standard deviation"],
        [[f, f"{w:+.3f}", f"{m:.3f}", f"{s:.3f}"] for f, w, m, s in
         zip(GRID[name], weights.coef_[0], scaler.mean_, scaler.scale_)], "lrrr",
        f"The chosen model ({name}, C = {c:g}) fitted on the 3FGL, 4FGL and DR2 lists (intercept "
        f"{weights.intercept_[0]:+.3f})"))
    read = []
    for label, pairs, scores_gain in (
            ("pairs ending before FL16Y, cross-validated (chosen on)", older, gain),
            ("pairs ending in FL16Y, frozen model", newer, paired_gain(lists, frozen, significance, newer, n_boot)),
            ("4FGL-DR4 -> FL16Y alone, frozen model (a list no model saw)", [("4FGL-DR4", "FL16Y")],
             paired_gain(lists, frozen, significance, [("4FGL-DR4", "FL16Y")], n_boot))):
        mine = top_counts(lists, best_scores if pairs is older else frozen, pairs)
        theirs = top_counts(lists, significance, pairs)
        read.append([label, *(f"{mine[k]} / {theirs[k]}; {scores_gain[k][0]:+d} [{scores_gain[k][1]:+.0f}, "
                              f"{scores_gain[k][2]:+.0f}]" for k in TOP)])
    tables.append(make_table(["pairs", *(f"top {k}: model / significance; gain [95%]" for k in TOP)], read, "lrrr",
                             f"The chosen model against the significance order: later pulsars among the first rows, "
                             f"and the gain's 95% paired bootstrap interval ({n_boot} resamples of each list's rows)"))
    return tables + [separation(lists)], f"{name}, C = {c:g}", adopted


def separation(lists: Lists) -> dict:
    """The AUC, inside each list, of each feature for the pulsars of the newest release that labels it."""
    from result_records import make_table

    rows = []
    for e in EARLIER:
        later = LEARNED_FROM if e in TRAIN else "FL16Y"
        found = lists.found[e, later].astype(int)
        values = features(lists.rows[e])
        rows.append([f"{e} -> {later}", f"{len(found)} ({found.sum()})",
                     *(f"{roc_auc(found, values[:, j]):.2f}" for j in range(values.shape[1]))])
    return make_table(["pair", "list (later pulsars)", *FEATURES], rows, "ll" + "r" * len(FEATURES),
                      "What tells a list's later pulsars from its other rows: each feature's AUC inside the list "
                      "(0.5: no information; below 0.5: the later pulsars lie lower)")


def main(argv: list[str] | None = None) -> int:
    args = pulsar_study_arguments(__doc__, "folder of the pulsar order study's runs (reused)", argv)
    from result_records import make_record, outcome, table_markdown, write_record

    made, chosen, adopted = study(args.runs, args.n_boot)
    for table in made:
        print(table_markdown(table), "\n", sep="")
    print(f"chosen on the pairs ending before FL16Y: {chosen}; its top-50 gain over significance "
          f"{'excludes' if adopted else 'does not exclude'} zero")
    if args.record:
        command = f"python lab/studies/bench_pulsar_rank.py --runs {args.runs}"
        print(outcome(write_record(args.record, make_record(
            "A ranking learned from earlier releases, against the significance order", command, code_commit(), made,
            settings={"trained on": list(TRAIN), "label": f"a pulsar in {LEARNED_FROM}",
                      "feature sets": {k: list(v) for k, v in GRID.items()}, "C": list(C_VALUES), "top": list(TOP),
                      "same source within (deg)": SAME_SOURCE, "beside": TREES},
            workflow="lab/studies/pulsar_rank.yaml"))))
    return 0


if __name__ == "__main__":
    sys.exit(main())

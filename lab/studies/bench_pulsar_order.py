"""Which order of a pulsar list puts the pulsars later releases found at its top: the list orders of ``--order``.

For each shipped release older than FL16Y, ``gpal classify`` (the defaults) runs into ``RUNS/<release>`` (a finished
folder is reused: the study resumes where it stopped).  Its pulsar list (``lists/candidates_pulsar.csv``: which rows
the list holds does not depend on the order) is ranked again by each rule of `RULES`
(`gpal.catalog_jobs.candidates.ranked`), or by a score tried here only (a column the list carries, or the catalog's
``Energy_Flux100``, or ``p_pulsar`` times one: a search's expected yield; a product of ranks inside the list: the
significance's with |b|'s, the spectrum's curvature, variability or the ellipse's size; the sources of a
millisecond pulsar's log-parabola peak energy first), and scored by every newer shipped release: the ten release
pairs.  A row
is a *later pulsar* when the newer release, through its ``ASSOC_FGL`` links (`gpal.catalogs.links.link_later`),
calls it psr or msp; the links of a pair are kept in ``RUNS/later_<earlier>_<later>.csv``.

Per pair, rule and k in `TOP`: the later pulsars among the list's first k rows, with the 95% Jeffreys binomial
interval of that count (k trials; `gpal.evaluation.intervals.binomial_interval`); a list shorter than k is counted
whole.  The rule is chosen on the pairs that end before FL16Y (`CHOOSE_ON`) and confirmed on those ending in FL16Y;
its gain over the probability order and over the pulsar list's default order has a paired bootstrap interval, as
has `OFFERED`'s, an order offered beside the default, over the default.

Beside them, where a published classifier's candidates name the earlier release's sources (`PEERS`: the 4FGL-DR2
neural networks of Finke et al. 2021, shipped as ``catalogs/published_pulsar_candidates.csv``): the later pulsars
among its candidates, and among the probability order's first as many rows.

    python lab/studies/bench_pulsar_order.py --runs runs/pulsar_order
    python lab/studies/bench_pulsar_order.py --runs runs/pulsar_order --record lab/pages/records/results/pulsar_order.json
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd

from gpal.catalog_jobs.candidates import ORDER_BANDS, ORDER_CUTS, list_order, ranked, ranked_by
from gpal.catalog_jobs.layout import candidate_file, list_path, located
from gpal.evaluation.intervals import binomial_interval

from shared import (EARLIER, LATER, N_BOOT, TOP, float_column, hits,  # the script's folder, first on
                    later_classes, pulsar_list, pulsar_study_arguments, quiet_catalog,  # its path; puts the pages'
                    report_pulsar_study, run)  # record format on it

#: The later releases the rule is chosen on: every pair ending before FL16Y.
CHOOSE_ON = ("4FGL", "4FGL-DR2", "4FGL-DR4")
#: The millisecond pulsars' band of log-parabola peak energy (MeV, of E^2 dN/dE) a ``first`` rule puts first.
MSP_PEAK = (500.0, 3000.0)


class Rule(NamedTuple):
    """An order of the list: an ``--order`` with its band width or cut (`gpal.catalog_jobs.candidates.ranked`), or
    (``order`` '') one tried here only:

    - ``score``: the product of the columns, largest first, ties and missing values as the probability order (a
      missing value last);
    - ``ranks``: the product of the rows' ranks inside the list by each column (1 the largest; a column named
      ``-C``: 1 the smallest of C; ties share their mean rank, a missing value ranks last), smallest first: the
      columns weighed alike whatever their scales; ties as the significance order;
    - ``first`` (column, low, high): the rows whose column lies in [low, high] first, each part as the significance
      order.
    """

    order: str = ""
    band: float | None = None
    cut: float | None = None
    score: tuple[str, ...] = ()
    ranks: tuple[str, ...] = ()
    first: tuple[str, float, float] | None = None

    def rank(self, rows: pd.DataFrame) -> pd.DataFrame:
        if self.order:
            return ranked(rows, "pulsar", self.order, self.band, self.cut)
        if self.score:
            first = ranked(rows, "pulsar").drop(columns="rank")
            values = np.prod([_values(first, c) for c in self.score], axis=0)
            return ranked_by(first.assign(_score=values), "_score").drop(columns="_score")
        first = ranked(rows, "pulsar", "significance").drop(columns="rank")
        if self.ranks:
            values = -np.prod([pd.Series(_values(first, c.lstrip("-"))).rank(
                ascending=c.startswith("-"), na_option="bottom").to_numpy() for c in self.ranks], axis=0)
        else:
            column, low, high = self.first
            inside = (_values(first, column) >= low) & (_values(first, column) <= high)
            values = inside.astype(np.float64)
        return ranked_by(first.assign(_score=values), "_score").drop(columns="_score")

    def words(self) -> str:
        if self.score:
            return "score " + " x ".join(self.score)
        if self.ranks:
            return "ranks " + " x ".join(self.ranks)
        if self.first:
            return f"{self.first[0]} in [{self.first[1]:g}, {self.first[2]:g}] first, by significance"
        return self.order + (f", bands of {self.band:g}" if self.band is not None else "") + (
            f", cut at {self.cut:g}" if self.cut is not None else "")


def _values(rows: pd.DataFrame, column: str) -> np.ndarray:
    """A column of the list as float64 (a value that is no number: NaN)."""
    return pd.to_numeric(rows[column], errors="coerce").to_numpy(np.float64)


#: Rule name -> its `Rule`.  Band 1: one band, the probability not read.  The cut rules are a list cut by
#: probability (or by |b|) then ordered by significance; the scores: a detectability alone (the energy flux, the
#: photon flux above 1 GeV, the curvature significance), or ``p_pulsar`` times one, the expected yield of a search;
#: the rank products: what a radio searcher reads beside the significance (|b|: a colder sky off the plane; a
#: curved, steady spectrum; a small ellipse), and the model's probability as a rank inside the list.
RULES = {
    "probability": Rule("probability"),
    **{f"significance, bands of {band:g}": Rule("significance", band) for band in (0.1, 0.2, 0.3, 0.5, 1.0)},
    **{f"new first, bands of {band:g}": Rule("new_first", band) for band in (0.05, 0.1, 0.2, 0.3, 0.5, 1.0)},
    **{f"p_pulsar at least {cut:g} first, by significance": Rule("probable_by_significance", cut=cut)
       for cut in (0.5, 0.6, 0.7, 0.8, 0.9)},
    **{name: Rule(score=score) for name, score in (
        ("energy flux", ("Energy_Flux100",)), ("flux above 1 GeV", ("Flux1000",)),
        ("curvature significance", ("Signif_Curvature",)), ("p_pulsar x significance", ("p_pulsar", "Signif_Avg")),
        ("p_pulsar x significance squared (TS)", ("p_pulsar", "Signif_Avg", "Signif_Avg")),
        ("p_pulsar x energy flux", ("p_pulsar", "Energy_Flux100")), ("p_pulsar x flux above 1 GeV", ("p_pulsar", "Flux1000")),
        ("p_pulsar x curvature significance", ("p_pulsar", "Signif_Curvature")))},
    **{f"|b| at least {cut:g} deg first, by significance": Rule("off_plane_first", cut=cut) for cut in (2, 3, 5, 10, 15)},
    **{name: Rule(ranks=ranks) for name, ranks in (
        ("ranks: significance x |b|", ("Signif_Avg", "abs_GLAT")), ("ranks: p_pulsar x |b|", ("p_pulsar", "abs_GLAT")),
        ("ranks: p_pulsar x significance x |b|", ("p_pulsar", "Signif_Avg", "abs_GLAT")),
        ("ranks: p_pulsar x significance", ("p_pulsar", "Signif_Avg")),
        ("ranks: significance x curvature significance", ("Signif_Avg", "Signif_Curvature")),
        ("ranks: significance x LP_beta", ("Signif_Avg", "LP_beta")),
        ("ranks: significance x low variability", ("Signif_Avg", "-Variability_Index")),
        ("ranks: significance x small ellipse", ("Signif_Avg", "-Conf_95_SemiMajor")))},
    f"peak energy {MSP_PEAK[0] / 1e3:g}-{MSP_PEAK[1] / 1e3:g} GeV first, by significance": Rule(first=("LP_EPeak", *MSP_PEAK)),
}
#: The order offered beside the default (``--order off_plane_first``), whose gain over the default is also resampled.
OFFERED = "|b| at least 2 deg first, by significance"
#: The detectabilities whose AUC inside each list the study also gives (beside p_pulsar, Signif_Avg, |b| and the
#: releases unassociated).
SEPARATED = ("Energy_Flux100", "Flux1000", "Signif_Curvature", "LP_beta", "LP_EPeak", "Variability_Index",
             "Conf_95_SemiMajor")
#: |b| (deg) below which a source counts as near the plane in `latitudes`.
NEAR_PLANE = 5.0
#: The blazar lists read by both orders (their later members: the same class in the later release).
BLAZAR_LISTS = ("bll", "fsrq")


@functools.cache
def catalog_columns(release: str) -> pd.DataFrame:
    """By source name, what the lists do not carry: the release's ``Energy_Flux100`` (erg cm-2 s-1, 100 MeV-100 GeV),
    a detectability, and the log-parabola fit's curvature ``LP_beta`` and peak energy ``LP_EPeak`` (MeV, of E^2
    dN/dE: pivot x exp((2 - index) / (2 beta)), NaN where beta <= 0; 3FGL's ``beta`` and ``Spectral_Index`` where
    its spectrum is a log-parabola, else NaN), the spectral shape a searcher reads."""
    table = quiet_catalog(release).table
    if "LP_beta" in table.colnames:
        index, beta = float_column(table["LP_Index"]), float_column(table["LP_beta"])
    else:
        log_parabola = np.char.strip(np.asarray(table["SpectrumType"]).astype(str)) == "LogParabola"
        index = np.where(log_parabola, float_column(table["Spectral_Index"]), np.nan)
        beta = np.where(log_parabola, float_column(table["beta"]), np.nan)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        peak = np.where(beta > 0, float_column(table["Pivot_Energy"]) * np.exp((2 - index) / (2 * beta)), np.nan)
    return pd.DataFrame({"Energy_Flux100": float_column(table["Energy_Flux100"]), "LP_beta": beta, "LP_EPeak": peak},
                        index=[str(name).strip() for name in table["Source_Name"]])


def pulsar_rows(runs: Path, release: str) -> pd.DataFrame:
    """The release's pulsar list (`shared.pulsar_list`) with `catalog_columns` and ``abs_GLAT`` (|b|)."""
    rows = pulsar_list(run(runs, release))
    columns = catalog_columns(release).reindex(rows["Source_Name"].astype(str).str.strip())
    return rows.assign(**{c: columns[c].to_numpy() for c in columns}, abs_GLAT=rows["GLAT"].abs())


def default_rule() -> str:
    """The name in `RULES` of the pulsar list's default order of this gpal."""
    order = list_order("pulsar")
    want = Rule(order, ORDER_BANDS.get(order), ORDER_CUTS.get(order))
    return next(name for name, rule in RULES.items() if rule == want)


def counted(found: np.ndarray, k: int) -> tuple[int, int]:
    """(later pulsars among the first k rows, rows counted)."""
    n = min(k, found.size)
    return int(found[:n].sum()), n


def cell(k_found: int, n: int) -> str:
    """'12 [7-19]': the count and its 95% Jeffreys interval (n trials)."""
    if n == 0:
        return "–"
    low, high = binomial_interval(k_found, n)
    return f"{k_found} [{low * n:.0f}-{high * n:.0f}]"


def measure(runs: Path) -> pd.DataFrame:
    """One row per pair, rule and k: later pulsars found, rows counted."""
    out = []
    for earlier in EARLIER:
        rows = pulsar_rows(runs, earlier)
        for later in LATER[LATER.index(earlier) + 1:] if earlier in LATER else LATER:
            classes = later_classes(runs, earlier, later)
            for rule, how in RULES.items():
                found = hits(how.rank(rows)["Source_Name"], classes)
                for k in TOP:
                    n_found, n = counted(found, k)
                    out.append({"earlier": earlier, "later": later, "rule": rule, "k": k, "found": n_found, "n": n,
                                "list": len(rows), "later_pulsars": int(found.sum())})
    return pd.DataFrame(out)


def summed(frame: pd.DataFrame, laters: tuple[str, ...]) -> pd.DataFrame:
    """Found and counted, summed over the pairs whose later release is one of ``laters``, per rule and k."""
    part = frame[frame["later"].isin(laters)]
    return part.groupby(["rule", "k"], sort=False)[["found", "n"]].sum().reset_index()


def chosen(frame: pd.DataFrame) -> str:
    """The rule whose top 50, summed over the `CHOOSE_ON` pairs, holds the most later pulsars (ties: the top 25,
    then the top 100, then the earlier rule of `RULES`, the probability order first: a rule replaces it only by
    holding more)."""
    sums = summed(frame, CHOOSE_ON).pivot(index="rule", columns="k", values="found").reindex(list(RULES))
    best = sums.sort_values([50, 25, 100], ascending=False, kind="stable")
    return str(best.index[0])


def paired_differences(runs: Path, compared: tuple[tuple[str, str], ...], n_boot: int = N_BOOT,
                       seed: int = 0) -> dict[tuple[str, int, str, str], tuple[int, float, float]]:
    """Per set of pairs (those ending before FL16Y, those ending in it), k and (rule, other) of ``compared``: the
    later pulsars among the rule's first k minus the other's, summed over the pairs, and its 95% paired bootstrap
    interval (each list's rows resampled, the same draw ranked by every rule)."""
    rng = np.random.default_rng(seed)
    sets = {"ending before FL16Y": CHOOSE_ON, "ending in FL16Y": ("FL16Y",)}
    lists = []
    for earlier in EARLIER:
        rows = pulsar_rows(runs, earlier)
        laters = [later for later in (LATER[LATER.index(earlier) + 1:] if earlier in LATER else LATER)]
        lists.append(rows.assign(**{f"_hit_{later}": hits(rows["Source_Name"], later_classes(runs, earlier, later))
                                    for later in laters}))

    def diffs(drawn: list[pd.DataFrame]) -> dict[tuple[str, int, str, str], int]:
        out = {(name, k, *both): 0 for name in sets for k in TOP for both in compared}
        for rows in drawn:
            order = {rule: RULES[rule].rank(rows) for rule in dict.fromkeys(r for both in compared for r in both)}
            for rule, other in compared:
                for column in (c for c in rows.columns if c.startswith("_hit_")):
                    name = next(n for n, laters in sets.items() if column[5:] in laters)
                    for k in TOP:
                        out[name, k, rule, other] += (int(order[rule][column].to_numpy()[:k].sum())
                                                      - int(order[other][column].to_numpy()[:k].sum()))
        return out

    draws = [diffs([r.iloc[rng.integers(0, len(r), len(r))].reset_index(drop=True) for r in lists])
             for _ in range(n_boot)]
    seen = diffs(lists)
    return {key: (value, *np.quantile([d[key] for d in draws], [0.025, 0.975])) for key, value in seen.items()}


def blazar_lists(runs: Path) -> list[list[str]]:
    """Why the blazar lists keep the probability order: per blazar class and set of pairs, the later members of the
    class among the first 25, 50 and 100 rows of its list by probability and by significance."""
    out = []
    for cls in BLAZAR_LISTS:
        for name, laters in (("ending before FL16Y", CHOOSE_ON), ("ending in FL16Y", ("FL16Y",))):
            sums = {order: np.zeros(len(TOP), dtype=int) for order in ("probability", "significance")}
            for earlier in EARLIER:
                rows = pd.read_csv(located(run(runs, earlier), list_path(candidate_file(cls))),
                                   keep_default_na=False).drop(columns="rank")
                for later in (LATER[LATER.index(earlier) + 1:] if earlier in LATER else LATER):
                    if later not in laters:
                        continue
                    classes = later_classes(runs, earlier, later)
                    for order in sums:
                        names = ranked(rows, cls, order)["Source_Name"].astype(str).str.strip()
                        found = classes.reindex(names).fillna("").eq(cls).to_numpy()
                        sums[order] += [int(found[:k].sum()) for k in TOP]
            out.append([cls, name, *(f"{a} / {b}" for a, b in zip(sums["probability"], sums["significance"]))])
    return out


def separation(runs: Path) -> list[list[str]]:
    """What tells the later pulsars of a list from its other rows: the AUC, inside each list, of what it carries ('–'
    where the catalog does not give the value for every row: 3FGL's log-parabola fits, for its log-parabola sources
    only)."""
    from gpal.evaluation.metrics import roc_auc

    out = []
    for earlier in EARLIER:
        rows = pulsar_rows(runs, earlier)
        scores = {"p_pulsar": rows["p_pulsar"], "Signif_Avg": rows["Signif_Avg"], "|b|": rows["GLAT"].abs(),
                  "unassociated_releases": pd.to_numeric(rows["unassociated_releases"], errors="coerce").fillna(0),
                  **{c: pd.to_numeric(rows[c], errors="coerce") for c in SEPARATED}}
        for later in (LATER[LATER.index(earlier) + 1:] if earlier in LATER else LATER):
            found = hits(rows["Source_Name"], later_classes(runs, earlier, later)).astype(int)
            out.append([f"{earlier} -> {later}", str(int(found.sum())),
                        *(f"{roc_auc(found, v.to_numpy(np.float64)):.2f}" if v.notna().all() else "–"
                          for v in scores.values())])
    return out


def latitudes(runs: Path, names: tuple[str, ...]) -> list[list[str]]:
    """Why a flux ranks later pulsars worse than the significance: where on the sky each of the ``names`` rules puts
    a list's first 50 (per earlier release whose list is longer than 50): their median |b| and the share within
    `NEAR_PLANE` degrees of the plane, where the diffuse background is bright and a flux buys less significance."""
    out = []
    for earlier in EARLIER:
        rows = pulsar_rows(runs, earlier)
        if len(rows) <= 50:
            continue
        for name in names:
            top = RULES[name].rank(rows).head(50)["GLAT"].abs()
            out.append([earlier, name, f"{top.median():.1f}", f"{(top < NEAR_PLANE).mean():.2f}"])
    return out


def by_history(runs: Path) -> list[list[str]]:
    """Per pair whose earlier release has a history: the later pulsars among the list's rows by how many releases
    each had waited unassociated."""
    out = []
    for earlier in EARLIER[1:]:
        rows = pulsar_list(run(runs, earlier))
        waited = pd.to_numeric(rows["unassociated_releases"], errors="coerce").fillna(0).astype(int).to_numpy()
        for later in (LATER[LATER.index(earlier) + 1:] if earlier in LATER else LATER):
            found = hits(rows["Source_Name"], later_classes(runs, earlier, later))
            cells = []
            for n in range(1, waited.max() + 1):
                mine = waited == n
                if mine.any():
                    low, high = binomial_interval(int(found[mine].sum()), int(mine.sum()))
                    cells.append(f"{n}: {int(found[mine].sum())} / {int(mine.sum())} = {found[mine].mean():.2f} "
                                 f"[{low:.2f}, {high:.2f}]")
            out.append([f"{earlier} -> {later}", "; ".join(cells)])
    return out


def peer_orders() -> tuple[str, ...]:
    """The orders of gpal's list set beside a published one: the probability order, the default, `OFFERED`."""
    return tuple(dict.fromkeys(("probability", list_order("pulsar"), RULES[OFFERED].order)))


def peers(runs: Path) -> list[list[str]]:
    """Per published candidate list and later release: its later pulsars, and those among as many first rows of
    gpal's list and among its first 100, by `PEER_ORDERS`."""
    from gpal.catalogs.search_history import published_candidates

    table = published_candidates()
    out = []
    for (release, named_by), names in table.groupby(["release", "named_by"], sort=False)["Source_Name"]:
        if release not in EARLIER:
            continue
        rows = pulsar_list(run(runs, release))
        for later in LATER[LATER.index(release) + 1:] if release in LATER else LATER:
            classes = later_classes(runs, release, later)
            theirs = hits(names, classes)
            found = [hits(ranked(rows, "pulsar", order)["Source_Name"], classes) for order in peer_orders()]
            out.append([f"{release} -> {later}", named_by, str(len(names)), cell(int(theirs.sum()), len(names)),
                        *(cell(*counted(f, len(names))) for f in found), *(cell(*counted(f, 100)) for f in found)])
    return out


def tables(frame: pd.DataFrame, runs: Path, n_boot: int = N_BOOT) -> list[dict]:
    from result_records import make_table

    rule, default = chosen(frame), default_rule()
    if rule != default:
        print(f"note: the rule chosen here ({rule}) is not the pulsar list's default order of this gpal ({default})",
              file=sys.stderr)
    pairs = frame.drop_duplicates(["earlier", "later"])[["earlier", "later", "list", "later_pulsars"]]
    rows = []
    for p in pairs.itertuples(index=False):
        for name in (name for name, how in RULES.items() if how.order):
            part = frame[(frame["earlier"] == p.earlier) & (frame["later"] == p.later) & (frame["rule"] == name)]
            rows.append([f"{p.earlier} -> {p.later}", name, f"{p.list} ({p.later_pulsars})",
                         *(cell(int(r.found), int(r.n)) for r in part.itertuples(index=False))])
    per_pair = make_table(["pair", "order", "list (later pulsars in it)", *(f"top {k}" for k in TOP)], rows, "lllrrr",
                          "Later pulsars among the first 25, 50 and 100 rows of the pulsar list in each order "
                          "`--order` offers, per release pair (95% Jeffreys binomial interval of the count)")
    sums = []
    for label, laters in (("pairs ending before FL16Y (chosen on)", CHOOSE_ON), ("pairs ending in FL16Y (confirmed on)",
                                                                                  ("FL16Y",))):
        part = summed(frame, laters)
        for name in RULES:
            r = part[part["rule"] == name]
            sums.append([label, name + (" (chosen)" if name == rule else "") + (" (default)" if name == default else ""),
                         *(cell(int(x.found), int(x.n)) for x in r.itertuples(index=False))])
    summary = make_table(["pairs", "order", *(f"top {k}" for k in TOP)], sums, "llrrr",
                         "Summed over the pairs (95% Jeffreys binomial interval of the summed count); the order is "
                         "chosen by the top 50 on the pairs ending before FL16Y")
    compared = tuple(dict.fromkeys([*((rule, name) for name in ("probability", default) if name != rule),
                                    *(((OFFERED, default),) if OFFERED not in (rule, default) else ())]))
    gains = paired_differences(runs, compared, n_boot)
    paired = [[name, str(k), *("%+d [%+.0f, %+.0f]" % gains[name, k, *both] for both in compared)]
              for name in ("ending before FL16Y", "ending in FL16Y") for k in TOP]
    difference = make_table(["pairs", "top k", *(f"{mine} minus {other}" for mine, other in compared)], paired,
                            "lr" + "r" * len(compared),
                            f"The chosen order's gain over the probability order and the default, and the order "
                            f"offered beside the default's over it, summed over the pairs: 95% paired bootstrap "
                            f"interval ({n_boot} resamples of each list's rows, each ranked by every order)")
    out = [summary, difference, per_pair]
    peer_rows = peers(runs)
    if peer_rows:
        orders = [order + (" (default)" if order == list_order("pulsar") else "") for order in peer_orders()]
        out.append(make_table(["pair", "published list", "its candidates", "later pulsars among them",
                               *(f"gpal's first as many, by {order}" for order in orders),
                               *(f"gpal's top 100, by {order}" for order in orders)],
                              peer_rows, "llrr" + "rr" * len(orders),
                              "Beside a published classifier's pulsar candidates (95% Jeffreys intervals)"))
    out.append(make_table(["list", "pairs", *(f"top {k}: probability / significance" for k in TOP)], blazar_lists(runs),
                          "llrrr", "Why the blazar lists keep the probability order: their later members (the same "
                          "class in the later release) among the first rows by each order, summed over the pairs"))
    out.append(make_table(["pair", "later pulsars", "AUC p_pulsar", "AUC Signif_Avg", "AUC |b|",
                           "AUC unassociated_releases", *(f"AUC {c}" for c in SEPARATED)], separation(runs),
                          "lr" + "r" * (4 + len(SEPARATED)),
                          "What tells a list's later pulsars from its other rows: the AUC inside each pulsar list"))
    out.append(make_table(["list", "order", "median |b| of the first 50 (deg)", f"share with |b| < {NEAR_PLANE:g} deg"],
                          latitudes(runs, tuple(dict.fromkeys(("probability", default, rule, OFFERED, "energy flux",
                                                                   "flux above 1 GeV", "curvature significance")))),
                          "llrr", "Where each order puts a list's first 50 on the sky: a flux order fills them "
                          "from the Galactic plane"))
    out.append(make_table(["pair", "releases unassociated: later pulsars / rows = share [95%]"], by_history(runs), "ll",
                          "Why new-first does not help: the later pulsars of each list by how long its rows had "
                          "waited unassociated (1: new to the release; Jeffreys intervals)"))
    return out


def main(argv: list[str] | None = None) -> int:
    args = pulsar_study_arguments(__doc__, "folder of the gpal classify runs (reused)", argv)
    args.runs.mkdir(parents=True, exist_ok=True)
    frame = measure(args.runs)
    report_pulsar_study(
        args, tables(frame, args.runs, args.n_boot), chosen(frame),
        "Which pulsars a list puts first: the orders scored by later releases",
        f"python lab/studies/bench_pulsar_order.py --runs {args.runs}",
        {"releases": list(EARLIER), "rules": {k: v.words() for k, v in RULES.items()}, "top": list(TOP)},
        "lab/studies/pulsar_order.yaml")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Does a model that tells millisecond pulsars from young ones put more later pulsars at the top of the pulsar list?

Most pulsars a release finds among an earlier release's unassociated sources are millisecond pulsars (msp), while
the default classes merge them with the young pulsars (psr: in the plane, harder spectra) into one ``pulsar`` class.
Here the list is ranked by another model rather than in another order: ``gpal classify --classes`` with the default
scheme's classes but ``psr`` and ``msp`` apart (`APART`), on 3FGL, 4FGL, 4FGL-DR2 and 4FGL-DR4, into
``APART_RUNS/<release>`` (made when missing, reused).  Its pulsar list is the default's list rule read on the
two classes as one: ``p_pulsar`` = ``p_psr`` + ``p_msp``, a source listed when that is its most probable class
(`gpal.catalog_jobs.candidates.candidate_lists`, the same cuts and known-source vetting), so the list is the same
kind of list with a sharper class inside it.  It is ranked by each rule of `APART_RULES` (by ``p_msp``; by
``p_psr`` + ``p_msp``; by significance; the sources most probably msp of the five classes first), beside the default
model's list (the pulsar order study's runs, ``RUNS/<release>``, reused) by probability and by its default order.

Each list is scored as in the pulsar order study (`shared`): the later pulsars (psr or msp in a newer release,
through the ``ASSOC_FGL`` links) among its first 25, 50 and 100 rows, with a 95% Jeffreys interval, per release
pair and summed over the pairs ending before FL16Y, where the model and order are chosen (`chosen`: the most in the
top 50; ties: top 25, then top 100, then today's list first), and over those ending in FL16Y, where the choice is
read once.  The same counts are given for the later msp alone, and how many of each pair's later pulsars among the
earlier release's classified sources are msp.  Each apart list's gain over the default list has a 95% paired
bootstrap interval: each release's listed sources (the union of the two lists) resampled, every list keeping the
drawn rows it holds.  Beside the published DR2 classifiers' candidates (`gpal.catalogs.search_history`), as in the
pulsar order study.

``RUNS`` holds the default ``gpal classify`` runs (as the pulsar order study's; made here when missing), made by
the same gpal as the apart runs, so that the two models differ only in their classes.

    python lab/studies/bench_pulsar_msp.py --runs runs/pulsar_today --apart-runs runs/pulsar_msp
    python lab/studies/bench_pulsar_msp.py --runs runs/pulsar_today --apart-runs runs/pulsar_msp --record lab/pages/records/results/pulsar_order.msp.json
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

from gpal.catalog_jobs.candidates import candidate_lists, cuts_from_meta, list_order, ranked, ranked_by
from gpal.catalog_jobs.layout import CLASSIFICATIONS_CSV, located
from gpal.catalog_jobs.proba_columns import classes_from_columns, proba_column
from gpal.catalog_jobs.table_formats import EXTENDED
from gpal.catalog_jobs.tables import read_probability_table
from gpal.catalogs.classes import format_class_spec
from gpal.catalogs.schemes import DEFAULT_SCHEME, resolve_classes
from gpal.evaluation.intervals import binomial_interval

from shared import (EARLIER, LATER, N_BOOT, TOP, later_classes, pulsar_list,  # the script's folder, first on its
                    pulsar_study_arguments, quiet_catalog, report_pulsar_study, run)  # path; puts the pages' record
                    # format on it

#: The default scheme's classes and merges, the pulsar class as one merged class.
DEFAULT_CLASSES, DEFAULT_MERGES = resolve_classes(DEFAULT_SCHEME)
#: The default scheme's pulsar class split into the young (psr) and millisecond (msp) pulsars.
APART = format_class_spec([c for cls in DEFAULT_CLASSES for c in (("psr", "msp") if cls == "pulsar" else (cls,))],
                          {k: v for k, v in DEFAULT_MERGES.items() if k != "pulsar"})
#: The later classes scored: every pulsar, or the millisecond pulsars alone.
LABELS = {"later pulsars": ("psr", "msp"), "later msp": ("msp",)}
#: The release pairs the model and order are chosen on (every pair ending before FL16Y), and those read once.
SETS = {"ending before FL16Y (chosen on)": ("4FGL", "4FGL-DR2", "4FGL-DR4"), "ending in FL16Y (read once)": ("FL16Y",)}
#: The list's columns of the apart model's own probabilities (not ``p_``: the list's classes are the merged ones).
MSP, PSR, MSP_FIRST = "msp_probability", "psr_probability", "msp_most_probable"
#: The spin period (s) below which a pulsar is a millisecond pulsar (the recycled pulsars' usual bound).
MSP_PERIOD = 0.03


def _by(column: str) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """The list with the largest ``column`` first, ties as the probability order."""
    return lambda rows: ranked_by(ranked(rows, "pulsar").drop(columns="rank"), column)


def _msp_first(rows: pd.DataFrame) -> pd.DataFrame:
    """The rows whose most probable of the apart model's classes is msp first, each part by significance."""
    first = ranked(rows, "pulsar", "significance").drop(columns="rank")
    return ranked_by(first.assign(_first=first[MSP_FIRST].astype(float)), "_first").drop(columns="_first")


#: The pulsar list's default order of this gpal.
DEFAULT_ORDER = list_order("pulsar")
#: (model, order) -> how it ranks that model's list: today's list (``pulsar=psr+msp``) by its default order and by
#: probability; the apart model's by each rule tried.
TODAY = {("pulsar=psr+msp", f"{DEFAULT_ORDER} (default)"): lambda rows: ranked(rows, "pulsar", DEFAULT_ORDER),
         ("pulsar=psr+msp", "probability"): lambda rows: ranked(rows, "pulsar", "probability")}
APART_RULES = {("psr, msp apart", "p_psr + p_msp"): lambda rows: ranked(rows, "pulsar", "probability"),
               ("psr, msp apart", "significance"): lambda rows: ranked(rows, "pulsar", "significance"),
               ("psr, msp apart", "p_msp"): _by(MSP),
               ("psr, msp apart", "most probably msp first, by significance"): _msp_first}
RULES = {**TODAY, **APART_RULES}
#: Today's list in its default order: what a new list must beat.
DEFAULT = next(iter(TODAY))


def _pulsar_name(assoc: str) -> str:
    """A catalog's pulsar association as the ATNF catalogue names it: 'PSR J0030+0451', 'LAT PSR J0007+7303' ->
    'J0030+0451', 'J0007+7303'."""
    return assoc.strip().removeprefix("LAT ").strip().removeprefix("PSR ").strip()


def msp_types(names: list[str], period: dict[str, float], typed: dict[str, str]) -> tuple[np.ndarray, np.ndarray]:
    """Per pulsar name (as `_pulsar_name` gives it): whether it is a millisecond pulsar, and what said so ('ATNF
    period', 'FL16Y's class' or 'neither: psr').

    ``period`` (s) by ATNF J or B name: below `MSP_PERIOD` an msp; a coarse name ('J0248+42') takes the period of
    the one pulsar whose J name starts with it.  A pulsar with no period takes ``typed``'s class of the same name;
    one in neither is psr."""
    msp, how = np.zeros(len(names), bool), np.empty(len(names), dtype=object)
    for i, name in enumerate(names):
        p = period.get(name, np.nan)
        if not np.isfinite(p) and name.startswith("J"):
            coarse = [v for j, v in period.items() if j.startswith(name) and j != name]
            p = coarse[0] if len(coarse) == 1 else np.nan
        if np.isfinite(p):
            msp[i], how[i] = p < MSP_PERIOD, "ATNF period"
        elif name in typed:
            msp[i], how[i] = typed[name] == "msp", "FL16Y's class"
        else:
            how[i] = "neither: psr"
    return msp, how


def atnf_periods() -> dict[str, float]:
    """The shipped ATNF catalogue's (1.64) spin periods (s) by J and by B name."""
    from gpal.catalogs.psrcat import read_psrcat

    atnf = read_psrcat()
    return {**dict(zip(atnf["PSRJ"], atnf["P0"])), **{b: v for b, v in zip(atnf["PSRB"], atnf["P0"]) if b}}


@functools.cache
def msp_codes(release: str) -> tuple[np.ndarray, dict[str, int]]:
    """The release's CLASS1 with each psr an msp (same case) where `msp_types` says so, from its ``ASSOC1``, and how
    many pulsars each way typed.  What is typed is a known pulsar's nature, not a later discovery; on 4FGL-DR4 and
    FL16Y, which type their pulsars, the ATNF periods agree with the catalog on every pulsar they time."""
    catalog, newest = quiet_catalog(release), quiet_catalog("FL16Y")
    typed = {_pulsar_name(a): c for a, c in zip(np.asarray(newest.table["ASSOC1"]).astype(str), newest.class_codes)
             if c in LABELS["later pulsars"]}
    rows = np.flatnonzero(catalog.class_codes == "psr")
    assoc = np.asarray(catalog.table["ASSOC1"]).astype(str)
    msp, how = msp_types([_pulsar_name(assoc[i]) for i in rows], atnf_periods(), typed)
    codes = np.array(catalog.class1, dtype=object)
    codes[rows[msp]] = np.where(np.char.isupper(codes[rows[msp]].astype(str)), "MSP", "msp")
    return codes, {key: int((how == key).sum()) for key in ("ATNF period", "FL16Y's class", "neither: psr")}


def msp_catalog(release: str, folder: Path) -> Path:
    """The release's catalog file with `msp_codes`' CLASS1 (written in ``folder`` when missing), for a release
    whose pulsars are all psr; the release itself where it types them."""
    catalog = quiet_catalog(release)
    if "msp" in catalog.class_codes:
        return Path(release)
    path = folder / f"{release}_msp.fits"
    if not path.is_file():
        from astropy.io import fits

        from gpal.catalogs.catalog import CATALOG_DIR, HDU_NAME
        from gpal.catalogs.releases import RELEASES

        folder.mkdir(parents=True, exist_ok=True)
        with fits.open(CATALOG_DIR / RELEASES[release].file) as hdul:
            hdul[HDU_NAME].data[catalog.columns.class_code] = msp_codes(release)[0].astype(str)
            hdul.writeto(path)
    return path


def apart_run(runs: Path, release: str) -> Path:
    """The finished ``gpal classify --classes APART`` folder of one release (run here when missing), on
    `msp_catalog`."""
    return run(runs, release, "--classes", APART, "--catalog", str(msp_catalog(release, runs / "catalogs")))


@functools.cache
def apart_list(runs: Path, release: str) -> pd.DataFrame:
    """The apart model's pulsar list: its classifications with ``p_pulsar`` = ``p_psr`` + ``p_msp`` (the default
    scheme's classes), listed and vetted as the main job lists them, with the two probabilities kept beside."""
    table = read_probability_table(located(apart_run(runs, release), CLASSIFICATIONS_CSV))
    frame = table.frame
    apart = classes_from_columns(frame.columns)
    if not {"psr", "msp"} <= set(apart):
        raise ValueError(f"{runs / release} has no p_psr and p_msp columns (its classes: {apart}); expected a run "
                         f"with --classes {APART}")
    return candidate_lists(pulsar_as_one(frame), ["pulsar"], DEFAULT_MERGES,
                           cuts_from_meta(table.meta))["pulsar"].drop(columns="rank")


def pulsar_as_one(frame: pd.DataFrame) -> pd.DataFrame:
    """A classifications frame with psr and msp apart as one with the default classes: ``p_pulsar`` = ``p_psr`` +
    ``p_msp``, ``predicted_class`` the most probable of those classes (an extended source's kept), and the apart
    model's probabilities and whether msp was the most probable of its classes in their own columns."""
    apart = classes_from_columns(frame.columns)
    five = frame[[proba_column(c) for c in apart]].to_numpy(np.float64)
    merged = frame.drop(columns=[proba_column("psr"), proba_column("msp")]).assign(
        **{MSP: frame[proba_column("msp")], PSR: frame[proba_column("psr")],
           MSP_FIRST: np.asarray(apart)[five.argmax(axis=1)] == "msp"})
    merged.insert(merged.columns.get_loc(proba_column(apart[0])), proba_column("pulsar"),
                  frame[proba_column("psr")] + frame[proba_column("msp")])
    classes = classes_from_columns(merged.columns)
    best = np.asarray(classes)[merged[[proba_column(c) for c in classes]].to_numpy(np.float64).argmax(axis=1)]
    merged["predicted_class"] = np.where(frame["predicted_class"] == EXTENDED, EXTENDED, best)
    return merged


def later_types(apart_runs: Path, earlier: str, later: str) -> pd.Series:
    """The later release's class of each earlier source, its pulsars typed psr or msp (`msp_codes`), by earlier
    name (kept in ``APART_RUNS/later_<earlier>_<later>.csv``)."""
    return later_classes(apart_runs, earlier, later, lambda release: msp_codes(release)[0])


def lists(runs: Path, apart_runs: Path, release: str) -> dict[tuple[str, str], pd.DataFrame]:
    """Each (model, order)'s ranked pulsar list of one release."""
    today, apart = pulsar_list(run(runs, release)), apart_list(apart_runs, release)
    return {key: how(today if key in TODAY else apart) for key, how in RULES.items()}


def laters(earlier: str) -> tuple[str, ...]:
    return LATER[LATER.index(earlier) + 1:] if earlier in LATER else LATER


def found(names: pd.Series, classes: pd.Series, codes: tuple[str, ...]) -> np.ndarray:
    """Which of ``names`` the later release gives one of ``codes``."""
    return classes.reindex(names.astype(str).str.strip()).fillna("").isin(codes).to_numpy()


def measure(runs: Path, apart_runs: Path) -> pd.DataFrame:
    """One row per pair, (model, order), label and k: the later sources found among the first k rows, rows counted."""
    out = []
    for earlier in EARLIER:
        ranked_lists = lists(runs, apart_runs, earlier)
        for later in laters(earlier):
            classes = later_types(apart_runs, earlier, later)
            for (model, order), rows in ranked_lists.items():
                for label, codes in LABELS.items():
                    hit = found(rows["Source_Name"], classes, codes)
                    for k in TOP:
                        n = min(k, hit.size)
                        out.append({"earlier": earlier, "later": later, "model": model, "order": order,
                                    "label": label, "k": k, "found": int(hit[:n].sum()), "n": n,
                                    "list": hit.size, "in_list": int(hit.sum())})
    return pd.DataFrame(out)


def cell(k_found: int, n: int) -> str:
    """'12 [7-19]': the count and its 95% Jeffreys interval (n trials)."""
    if n == 0:
        return "–"
    low, high = binomial_interval(k_found, n)
    return f"{k_found} [{low * n:.0f}-{high * n:.0f}]"


def summed(frame: pd.DataFrame, later: tuple[str, ...], label: str) -> pd.DataFrame:
    part = frame[frame["later"].isin(later) & (frame["label"] == label)]
    return part.groupby(["model", "order", "k"], sort=False)[["found", "n"]].sum().reset_index()


def chosen(frame: pd.DataFrame) -> tuple[str, str]:
    """The (model, order) whose top 50 over the pairs ending before FL16Y holds the most later pulsars (ties: the
    top 25, then the top 100, then the earlier of `RULES`: today's list in its default order first, a new one
    replaces it only by holding more)."""
    sums = summed(frame, next(iter(SETS.values())), "later pulsars").pivot(
        index=["model", "order"], columns="k", values="found").reindex(list(RULES))
    return tuple(sums.sort_values([50, 25, 100], ascending=False, kind="stable").index[0])


def msp_share(runs: Path, apart_runs: Path) -> list[list[str]]:
    """Per pair: the earlier release's classified sources (unassociated and bcu) the later release calls a pulsar,
    and how many of them it calls msp."""
    out = []
    for earlier in EARLIER:
        names = read_probability_table(located(run(runs, earlier), CLASSIFICATIONS_CSV)).frame["Source_Name"]
        for later in laters(earlier):
            classes = later_types(apart_runs, earlier, later).reindex(names.astype(str).str.strip()).fillna("")
            pulsars, msps = int(classes.isin(LABELS["later pulsars"]).sum()), int(classes.eq("msp").sum())
            out.append([f"{earlier} -> {later}", str(pulsars), str(msps), f"{msps / pulsars:.2f}" if pulsars else "–"])
    return out


def paired_gain(runs: Path, apart_runs: Path, mine: tuple[str, str], other: tuple[str, str], n_boot: int,
                seed: int = 0) -> dict[tuple[str, str, int], tuple[int, float, float]]:
    """Per set of pairs, label and k: ``mine``'s later sources among its first k minus ``other``'s, summed over the
    pairs, with a 95% paired bootstrap interval: each release's listed sources (either list's) drawn with
    replacement, each list keeping (in its order) the drawn copies of its rows."""
    rng = np.random.default_rng(seed)
    per_release = []
    for earlier in EARLIER:
        both = lists(runs, apart_runs, earlier)
        names = [both[key]["Source_Name"].astype(str).str.strip().to_numpy() for key in (mine, other)]
        union = np.unique(np.concatenate(names))
        hits = {(later, label): [found(pd.Series(n), later_types(apart_runs, earlier, later), codes) for n in names]
                for later in laters(earlier) for label, codes in LABELS.items()}
        per_release.append((union, names, hits))

    def gain(counts: list[np.ndarray] | None) -> dict[tuple[str, str, int], int]:
        out = {(name, label, k): 0 for name in SETS for label in LABELS for k in TOP}
        for r, (union, names, hits) in enumerate(per_release):
            # the copies of each list row drawn, in the list's order
            copies = [np.ones(n.size, int) if counts is None else counts[r][np.searchsorted(union, n)] for n in names]
            for (later, label), (a, b) in hits.items():
                name = next(s for s, ends in SETS.items() if later in ends)
                for k in TOP:
                    out[name, label, k] += _first_k(a, copies[0], k) - _first_k(b, copies[1], k)
        return out

    draws = [gain([np.bincount(rng.integers(0, u.size, u.size), minlength=u.size) for u, _, _ in per_release])
             for _ in range(n_boot)]
    seen = gain(None)
    return {key: (value, *np.quantile([d[key] for d in draws], [0.025, 0.975])) for key, value in seen.items()}


def _first_k(hit: np.ndarray, copies: np.ndarray, k: int) -> int:
    """The hits among the first k rows of a list whose i-th row appears ``copies[i]`` times."""
    expanded = np.repeat(hit, copies)
    return int(expanded[:k].sum())


def peers(runs: Path, apart_runs: Path, keys: tuple[tuple[str, str], ...]) -> list[list[str]]:
    """Per published candidate list and later release: its later pulsars, and those among as many first rows of
    each of ``keys``' lists and among their first 100."""
    from gpal.catalogs.search_history import published_candidates

    out = []
    for (release, named_by), names in published_candidates().groupby(["release", "named_by"], sort=False)["Source_Name"]:
        if release not in EARLIER:
            continue
        ranked_lists = lists(runs, apart_runs, release)
        for later in laters(release):
            classes = later_types(apart_runs, release, later)
            theirs = found(names, classes, LABELS["later pulsars"])
            mine = [found(ranked_lists[key]["Source_Name"], classes, LABELS["later pulsars"]) for key in keys]
            out.append([f"{release} -> {later}", named_by, str(len(names)), cell(int(theirs.sum()), len(names)),
                        *(cell(int(m[:len(names)].sum()), min(len(names), m.size)) for m in mine),
                        *(cell(int(m[:100].sum()), min(100, m.size)) for m in mine)])
    return out


def tables(frame: pd.DataFrame, runs: Path, apart_runs: Path, n_boot: int = N_BOOT) -> list[dict]:
    from result_records import make_table

    best = chosen(frame)
    out = []
    for label in LABELS:
        rows = []
        for name, ends in SETS.items():
            part = summed(frame, ends, label)
            for (model, order) in RULES:
                r = part[(part["model"] == model) & (part["order"] == order)]
                rows.append([name, model, order + (" (chosen)" if (model, order) == best else ""),
                             *(cell(int(x.found), int(x.n)) for x in r.itertuples(index=False))])
        out.append(make_table(["pairs", "model's classes", "order", *(f"top {k}" for k in TOP)], rows, "lllrrr",
                              f"The {label} among the pulsar list's first rows, summed over the pairs (95% Jeffreys "
                              "interval of the summed count): the default model's list and the list of a model with "
                              "psr and msp apart (its p_psr + p_msp the list's class)"))
    # each list of the apart model (and the chosen one) against today's default
    compared = tuple(dict.fromkeys(key for key in (best, *APART_RULES) if key != DEFAULT))
    gains = {mine: paired_gain(runs, apart_runs, mine, DEFAULT, n_boot) for mine in compared}
    rows = [[name, label, str(k), *("%+d [%+.0f, %+.0f]" % gains[mine][name, label, k] for mine in compared)]
            for name in SETS for label in LABELS for k in TOP]
    out.append(make_table(["pairs", "scored", "top k", *(f"{' by '.join(mine)} minus today's default"
                                                         for mine in compared)], rows, "llr" + "r" * len(compared),
                          f"Each list's gain over today's ({' by '.join(DEFAULT)}), summed over the pairs: 95% paired "
                          f"bootstrap interval ({n_boot} resamples of each release's listed sources)"))
    per_pair = []
    for p in frame.drop_duplicates(["earlier", "later"]).itertuples(index=False):
        for key in dict.fromkeys((DEFAULT, best, *APART_RULES)):
            part = frame[(frame["earlier"] == p.earlier) & (frame["later"] == p.later) & (frame["model"] == key[0])
                         & (frame["order"] == key[1]) & (frame["label"] == "later pulsars")]
            r0 = part.iloc[0]
            per_pair.append([f"{p.earlier} -> {p.later}", *key, f"{r0.list} ({r0.in_list})",
                             *(cell(int(x.found), int(x.n)) for x in part.itertuples(index=False))])
    out.append(make_table(["pair", "model's classes", "order", "list (later pulsars in it)", *(f"top {k}" for k in TOP)],
                          per_pair, "llllrrr", "Later pulsars per release pair (95% Jeffreys interval)"))
    out.append(make_table(["pair", "later pulsars among the classified sources", "of them msp", "share msp"],
                          msp_share(runs, apart_runs), "lrrr", "How many of the pulsars later releases found among a release's "
                          "classified (unassociated and bcu) sources are millisecond pulsars"))
    keys = tuple(dict.fromkeys((DEFAULT, best, *APART_RULES)))
    peer_rows = peers(runs, apart_runs, keys)
    if peer_rows:
        words = [" by ".join(k) for k in keys]
        out.append(make_table(["pair", "published list", "its candidates", "later pulsars among them",
                               *(f"first as many, {w}" for w in words), *(f"top 100, {w}" for w in words)],
                              peer_rows, "llrr" + "rr" * len(keys),
                              "Beside a published classifier's pulsar candidates (95% Jeffreys intervals)"))
    return out


def main(argv: list[str] | None = None) -> int:
    args = pulsar_study_arguments(__doc__, "folder of the pulsar order study's runs (reused)", argv,
                                  apart_runs="folder of the runs with psr and msp apart (reused)")
    args.apart_runs.mkdir(parents=True, exist_ok=True)
    frame = measure(args.runs, args.apart_runs)
    report_pulsar_study(
        args, tables(frame, args.runs, args.apart_runs, args.n_boot), " by ".join(chosen(frame)),
        "A model with young and millisecond pulsars apart, its pulsar list scored by later releases",
        f"python lab/studies/bench_pulsar_msp.py --runs {args.runs} --apart-runs {args.apart_runs}",
        {"releases": list(EARLIER), "apart classes": APART, "orders": [" by ".join(k) for k in RULES],
         "top": list(TOP)}, "lab/studies/pulsar_msp.yaml")
    return 0


if __name__ == "__main__":
    sys.exit(main())

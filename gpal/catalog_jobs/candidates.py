"""Target lists, one per class: the sources most probably of that class that a telescope can follow up.

A proposal (a radio pulsar search, optical spectroscopy of blazar candidates) wants sources
that are probably of its class *and* can be found at other wavelengths.  The candidates of a
class are the classified sources that

- lie in the trained population (not ``ood``) and are point sources (not ``extended``);
- have ``predicted_class`` that class (its probability is the largest), and a catalog label that does not put
  the class outside the source's group (a bcu, a blazar with a counterpart, is never a pulsar candidate:
  `gpal.catalogs.known_classes.outside_group`);
- pass the cuts of `CUTS`: ``Signif_Avg`` at least ``candidate_significance``, a 95% ellipse
  whose semi-major axis is at most ``candidate_max_ellipse`` degrees (a source without one is
  left out), none of the catalog ``Flags`` in ``candidate_flags``;

ranked by that class's probability rounded to `RANK_DIGITS` decimals (beyond that the
probabilities are not calibrated to tell sources apart), then by ``Signif_Avg``, the most significant first, then
by the 95% ellipse, the smallest first: what an observer ranks by, the surest source and the smallest field to search (`ORDER_RULE`, stated in each list's header; ``p_mc_se`` beside the
probabilities: their Monte Carlo error).  A source the sky already names (``known_class``: a CLASS2 association,
another release's class, a known pulsar or object inside the ellipse) is no candidate: it is listed apart
(`gpal.catalog_jobs.layout.KNOWN_FILE`) with the reason.  Each row says in ``caveats`` why it may not be what it seems (the catalog's
`DOUBTFUL_FLAGS` in words, the Galactic plane); the clean list (`gpal.catalog_jobs.layout.clean_file`) holds the rows without a doubtful
flag.  `expected_members` gives a list's expected number of class members with its 95% interval.  The cuts are declared once, in `CUTS`: the main job's settings
(`gpal.catalog_jobs.classify.SETTINGS`, hence the command line and the workflows), the run's
identity, the table keywords `gpal report` rebuilds the lists from, and the report's words all
read them there.  Their defaults were chosen on later labels: candidates of a 4FGL-DR4 run
scored by the classes FL16Y gives them (docs/targets.md).
"""

from __future__ import annotations

import types
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from gpal.catalog_jobs.proba_columns import classes_from_columns, proba_column
from gpal.catalogs.known_classes import BLAZAR_CODES, outside_group
from gpal.catalog_jobs.job_settings import (
    check_settings, header_of, recorded_settings, settings_from_header,
)
from gpal.catalog_jobs.visibility import declination_range
from gpal.catalog_jobs.list_settings import (  # declared where the command line reads them without pandas
    BY_CLASS, CANDIDATE_SETTINGS, CUTS, FLAG_NUMBERS, ORDER_BANDS, ORDER_CUTS, ORDER_RULE, ORDER_SETTING, ORDERS,
    RANK_DIGITS, Cut,
)

__all__ = ["BLAZAR_SECTIONS", "BY_CLASS", "CANDIDATE_SETTINGS", "CLASS_ORDERS", "CUTS", "Cut", "DEFAULT_ORDER",
           "DOUBTFUL_FLAGS", "FLAG_NUMBERS", "LATER_YIELD_RATIOS", "NO_COUNTERPART", "ORDERS", "ORDER_BANDS", "ORDER_CUTS", "ORDER_RULE",
           "ORDER_SETTING", "RANK_DIGITS", "TRUSTED_YIELD", "UNKNOWN_NATURE", "candidate_lists", "caveats", "check_cuts",
           "clean", "cuts_from_meta", "cuts_identity", "cuts_meta", "cuts_text", "expected_members", "flag_mask",
           "followable", "kept_declinations", "known", "known_sources", "later_yield_words", "list_order", "numbered",
           "order_rule", "orders_words", "passes_flags", "point_sources_through", "ranked", "ranked_by",
           "trusted_yield_words", "visible"]

#: The catalog flags that put a candidate's reality or position in doubt: every documented flag but 12 (a highly
#: curved spectrum, what pulsars show).  On the target lists of every release older than FL16Y, flagged rows were
#: far more often lost by FL16Y and, where FL16Y classes them, kept their class less often (docs/results.md, "The
#: open sky").
DOUBTFUL_FLAGS = (1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 13, 14)
#: The caveat of an unassociated candidate of a blazar class (`gpal.catalogs.known_classes.BLAZAR_CODES`), whose
#: follow-up is its counterpart's spectrum: nothing is identified yet to point a spectrograph at.
NO_COUNTERPART = "unassociated: no counterpart to take a spectrum of yet"
#: The class code of a counterpart of unknown nature: a source another release associates with one is not known to
#: be of a class (it stays a candidate), but its caveat names the counterpart.
UNKNOWN_NATURE = "unk"
#: |GLAT| (deg) below which a candidate carries the Galactic-plane caveat (the diffuse emission is brightest there).
PLANE_LATITUDE = 2.0
#: The order of a class's list unless ``--order`` says: the pulsar list by significance (the later pulsars among
#: its first 50, summed over the release pairs ending in FL16Y: 50 against 40 by probability); the blazar and other
#: lists by probability (by significance their first 50 held fewer later members: docs/results.md).
CLASS_ORDERS: Mapping[str, str] = types.MappingProxyType({"pulsar": "significance"})
#: The order of a class's list that `CLASS_ORDERS` does not name.
DEFAULT_ORDER = "probability"
#: The sections of a blazar class's list, in their order: its follow-up is the counterpart's spectrum, which an
#: unassociated source does not have yet.
BLAZAR_SECTIONS = ("counterpart", "unassociated")
#: Per default class, the smallest and largest ratio of a target list's expected members to the members a later
#: release found among its rows, over the ten release pairs of docs/results.md's "The open sky" (its table of the
#: default variant's target lists): how far to trust a list's EXPECTED.
LATER_YIELD_RATIOS: Mapping[str, tuple[float, float]] = types.MappingProxyType({
    "bll": (0.96, 1.02), "fsrq": (0.81, 2.03), "other": (0.90, 4.40), "pulsar": (0.81, 1.26)})
#: The band of expected over found members inside which a class's lists' yields count as held (within a factor
#: 1.5 either way: a list that promises twice what a follow-up finds wastes the follow-up's time).
TRUSTED_YIELD = (0.67, 1.5)


def trusted_yield_words() -> str:
    """Which classes' yields held on later labels (`LATER_YIELD_RATIOS` inside `TRUSTED_YIELD`), in words."""
    low, high = TRUSTED_YIELD
    trusted = [cls for cls, (a, b) in LATER_YIELD_RATIOS.items() if low <= a and b <= high]
    others = [cls for cls in LATER_YIELD_RATIOS if cls not in trusted]
    words = f"trust the {' and '.join(trusted) or 'no'} lists' yields (within {low}-{high} of the members found)"
    return words + (f", not the {' and '.join(others)} lists'" if others else "")


def later_yield_words(cls: str) -> str:
    """How a ``cls`` list's expected members compared with later labels, in words ('' for a class not measured)."""
    if cls not in LATER_YIELD_RATIOS:
        return ""
    low, high = LATER_YIELD_RATIOS[cls]
    return (f"on later labels this class's lists promised {low:.2f}-{high:.2f} times the members found "
            "(docs/results.md, The open sky)")




def _as_cuts(values: Mapping[str, Any]) -> dict[str, Any]:
    """Cut values as the lists use them: the flags a sorted tuple without repeats."""
    return {name: tuple(CUTS[name].setting.plain(v)) if isinstance(v, (list, tuple)) else v
            for name, v in values.items()}


def check_cuts(given: Mapping[str, Any]) -> dict[str, Any]:
    """Every cut's value and the order: the ``given`` ones checked against their constraints, the others their
    defaults.

    A name that is not a cut or ``order`` is a TypeError naming them.
    """
    unknown = sorted(set(given) - set(CANDIDATE_SETTINGS))
    if unknown:
        raise TypeError(f"unknown target-list setting(s) {unknown}; the settings are {list(CANDIDATE_SETTINGS)}")
    return _as_cuts(check_settings(CANDIDATE_SETTINGS, given, "the target lists"))


def cuts_identity(cuts: Mapping[str, Any]) -> dict[str, Any]:
    """What a run records of its cuts: those that differ from the defaults (a run at the defaults is recorded as an
    earlier gpal recorded it, so its folder is reused)."""
    return recorded_settings(CANDIDATE_SETTINGS, cuts)


def cuts_meta(cuts: Mapping[str, Any]) -> dict[str, Any]:
    """The table keywords recording the cuts (so `gpal report` rebuilds the lists the run made)."""
    return header_of(CANDIDATE_SETTINGS, cuts)


def cuts_from_meta(meta: Mapping[str, Any]) -> dict[str, Any]:
    """The cuts a table's keywords record (a table of an earlier gpal records none: the defaults)."""
    return _as_cuts(settings_from_header(CANDIDATE_SETTINGS, meta))


def cuts_text(cuts: Mapping[str, Any]) -> str:
    """The cuts in words: 'Signif_Avg >= 5, 95% semi-major axis <= 0.1 deg, any Flags' (a visibility cut only where
    one is set)."""
    return ", ".join(words for name, value in cuts.items() if name in CUTS and (words := CUTS[name].words(value)))


def flag_mask(flags: Sequence[int]) -> int:
    """The bit mask of flag numbers (flag n is bit value 2**(n-1), as the catalogs number them)."""
    return sum(1 << (flag - 1) for flag in set(flags))


def passes_flags(values: np.ndarray, flags: Sequence[int]) -> np.ndarray:
    """Which ``Flags`` values carry none of ``flags``; -1 (the catalog gives no Flags) passes: nothing to cut by."""
    values = np.asarray(values, dtype=np.int64)
    return (values < 0) | (values & flag_mask(flags) == 0)


def point_sources_through(frame: pd.DataFrame, min_significance: float, excluded_flags: Sequence[int]) -> np.ndarray:
    """Which rows (``extended``, ``Signif_Avg``, ``Flags`` columns) are point sources at ``min_significance`` or more
    that carry none of the ``excluded_flags``: the rule every list of sources to follow up starts from.

    A significance unknown is below any cut; ``Flags`` -1 (the catalog gives none) excludes nothing.

    Returns
    -------
    numpy.ndarray
        (n,) boolean mask over the frame's rows.
    """
    significance = np.nan_to_num(frame["Signif_Avg"].to_numpy(np.float64), nan=-np.inf)
    keep = ~frame["extended"].to_numpy(bool) & (significance >= min_significance)
    return keep & passes_flags(frame["Flags"].to_numpy(np.int64), excluded_flags)


def followable(frame: pd.DataFrame, cuts: Mapping[str, Any]) -> np.ndarray:
    """Which rows a target list may hold, whatever their class: in the trained population, point sources, through
    the cuts.  A significance or ellipse the catalog does not give fails its cut.

    Returns
    -------
    numpy.ndarray
        (n,) boolean mask.
    """
    ellipse = np.nan_to_num(frame["Conf_95_SemiMajor"].to_numpy(np.float64), nan=np.inf)
    keep = ~frame["ood"].to_numpy(bool) & (ellipse <= cuts["candidate_max_ellipse"])
    return keep & visible(frame, cuts) & point_sources_through(frame, cuts["candidate_significance"],
                                                               cuts["candidate_flags"])


def kept_declinations(cuts: Mapping[str, Any]) -> tuple[float, float]:
    """The declinations (deg, south then north) a target list keeps: ``candidate_declination`` narrowed, where set,
    to the sky of ``candidate_visible_from``."""
    south, north = sorted(cuts.get("candidate_declination", (-90.0, 90.0)))
    telescope = cuts.get("candidate_visible_from")
    if telescope is not None:
        sees = declination_range(telescope)
        south, north = max(south, sees[0]), min(north, sees[1])
    return float(south), float(north)


def visible(frame: pd.DataFrame, cuts: Mapping[str, Any]) -> np.ndarray:
    """Which rows lie in the declinations the cuts keep (`kept_declinations`); a row without ``DEC`` passes only
    when no declination is cut."""
    south, north = kept_declinations(cuts)
    if (south, north) == (-90.0, 90.0):
        return np.ones(len(frame), dtype=bool)
    dec = frame["DEC"].to_numpy(np.float64) if "DEC" in frame else np.full(len(frame), np.nan)
    return (dec >= south) & (dec <= north)


def known(frame: pd.DataFrame) -> np.ndarray:
    """Which rows the sky already names: a ``known_class`` other than ``unk`` (a counterpart of unknown nature
    names no class: the row stays a candidate, its ``known_reason`` beside it); a table without the column: none."""
    if "known_class" not in frame.columns:
        return np.zeros(len(frame), dtype=bool)
    return ~frame["known_class"].fillna("").astype(str).str.strip().isin(["", UNKNOWN_NATURE]).to_numpy()


def caveats(frame: pd.DataFrame) -> np.ndarray:
    """Each row's reasons for doubt in words ('' for none): its `DOUBTFUL_FLAGS` ('flag 14: soft Galactic
    unassociated source', the meaning as ``Flag_Words`` gives it), 'on the Galactic plane (|b| < 2 deg)' where
    ``GLAT`` puts it there, 'inside extended source X' where ``Inside_Extended`` names one, 'ATNF pulsar X
    inside the 95% ellipse' where ``ATNF_pulsars`` names one, and the counterpart of unknown nature another release
    names (``known_class`` unk, ``known_reason``) (a blazar candidate's ellipse may hold the pulsar
    that makes its gamma rays; a pulsar candidate with one is known and in no list) (a table without those
    columns: the flag numbers alone).

    Returns
    -------
    numpy.ndarray
        (n,) strings.
    """
    n = len(frame)
    flags = frame["Flags"].to_numpy(np.int64)
    words = frame["Flag_Words"].fillna("").astype(str) if "Flag_Words" in frame else pd.Series([""] * n)
    glat = frame["GLAT"].to_numpy(np.float64) if "GLAT" in frame else np.full(n, np.nan)
    fields = frame["Inside_Extended"].fillna("").astype(str) if "Inside_Extended" in frame else pd.Series([""] * n)
    pulsars = frame["ATNF_pulsars"].fillna("").astype(str) if "ATNF_pulsars" in frame else pd.Series([""] * n)
    unknown = (frame["known_reason"].fillna("").astype(str).where(frame["known_class"].astype(str) == UNKNOWN_NATURE, "")
               if {"known_class", "known_reason"} <= set(frame.columns) else pd.Series([""] * n))
    out = []
    for value, described, b, field, pulsar, unk in zip(flags, words, glat, fields, pulsars, unknown):
        meaning = dict(w.split(": ", 1) for w in described.split("; ") if ": " in w)
        parts = [f"flag {f}" + (f": {meaning[str(f)]}" if str(f) in meaning else "")
                 for f in DOUBTFUL_FLAGS if value > 0 and value >> (f - 1) & 1]
        if abs(b) < PLANE_LATITUDE:
            parts.append(f"on the Galactic plane (|b| < {PLANE_LATITUDE:g} deg)")
        if field:
            parts.append(f"inside extended source {field.replace('; ', ' and ')}")
        if pulsar:
            parts.append(f"ATNF pulsar {pulsar.replace('; ', ' and ')} inside the 95% ellipse")
        if unk:
            parts.append(f"a counterpart of unknown nature: {unk}")
        out.append("; ".join(parts))
    return np.asarray(out, dtype=object)


def expected_members(proba: np.ndarray, level: float = 0.95) -> tuple[float, int, int]:
    """The expected number of class members among sources of class probabilities ``proba`` and the central
    ``level`` interval of that number, each source a member independently with its probability (the
    Poisson-binomial distribution, computed exactly).

    Returns
    -------
    tuple
        (expected, low, high).
    """
    p = np.clip(np.asarray(proba, dtype=np.float64), 0.0, 1.0)
    counts = np.zeros(p.size + 1)
    counts[0] = 1.0
    for i, pi in enumerate(p):  # the distribution of the count after each source
        counts[1:i + 2] = counts[1:i + 2] * (1 - pi) + counts[:i + 1] * pi
        counts[0] *= 1 - pi
    cdf = np.cumsum(counts)
    tail = (1 - level) / 2
    return float(p.sum()), int(np.searchsorted(cdf, tail)), int(np.searchsorted(cdf, 1 - tail))


def numbered(rows: pd.DataFrame) -> pd.DataFrame:
    """``rows`` in their order, ``rank`` (1 first) as the first column: every source list's numbering."""
    rows = rows.reset_index(drop=True)
    rows.insert(0, "rank", np.arange(1, len(rows) + 1))
    return rows


def ranked_by(rows: pd.DataFrame, column: str) -> pd.DataFrame:
    """``rows`` with the largest ``column`` first (ties in their order), `numbered`."""
    return numbered(rows.sort_values(column, ascending=False, kind="stable"))


def list_order(cls: str, order: str = BY_CLASS) -> str:
    """The order of ``cls``'s list: ``order``, or where it is `BY_CLASS` the class's own (`CLASS_ORDERS`, else
    `DEFAULT_ORDER`)."""
    return CLASS_ORDERS.get(cls, DEFAULT_ORDER) if order == BY_CLASS else order


def order_rule(order: str = DEFAULT_ORDER) -> str:
    """The rule of ``order`` (`ORDERS`) in a header's words; an unknown order is a ValueError naming the orders."""
    if order not in ORDERS:
        raise ValueError(f"unknown target-list order {order!r}; the orders are {list(ORDERS)}")
    return ORDERS[order]


def orders_words(classes: Sequence[str], order: str = BY_CLASS) -> str:
    """The order of each of ``classes``' lists in words: the one rule, or each class's where ``order`` is
    `BY_CLASS`."""
    if order != BY_CLASS:
        return order_rule(order)
    rules: dict[str, list[str]] = {}
    for cls in classes:
        rules.setdefault(list_order(cls), []).append(cls)
    return "; ".join(f"the {' and '.join(filter(None, (', '.join(named[:-1]), named[-1])))} list"
                     f"{'s' if len(named) > 1 else ''} by {name}: {order_rule(name)}" for name, named in rules.items())


def ranked(rows: pd.DataFrame, cls: str, order: str = DEFAULT_ORDER, band: float | None = None,
           cut: float | None = None) -> pd.DataFrame:
    """``rows`` in the rule of ``order`` (`ORDERS`; a ``section`` column first, where the rows have one), `numbered`.

    ``significance`` and ``new_first`` rank inside bands of ``p_<class>`` of width ``band`` (default
    `ORDER_BANDS`'; 1 is in the top band): ``significance`` by ``Signif_Avg``, ``new_first`` by
    ``unassociated_releases`` (fewest first; a table without the column has no search history: the probability
    order), each then as ``probability``.  ``probable_by_significance`` puts the rows with ``p_<class>`` at least
    ``cut`` (default `ORDER_CUTS`') first, then the others, each part as ``significance``; ``off_plane_first`` so
    with the rows at ``|GLAT|`` at least ``cut`` degrees (a row without ``GLAT`` is in the second part).
    """
    order_rule(order)  # an unknown order is refused, naming the orders
    p = rows[proba_column(cls)].to_numpy(np.float64)
    key = pd.DataFrame({"section": (rows["section"].map(BLAZAR_SECTIONS.index) if "section" in rows
                                    else np.zeros(len(rows), dtype=int)),
                        "band": np.zeros(len(rows)), "waited": np.zeros(len(rows)),
                        "p": np.round(p, RANK_DIGITS),
                        "s": np.nan_to_num(rows["Signif_Avg"].to_numpy(np.float64), nan=-np.inf),
                        "e": np.nan_to_num(rows["Conf_95_SemiMajor"].to_numpy(np.float64), nan=np.inf)},
                       index=rows.index)
    if order in ORDER_CUTS:  # the rows at or above the cut first (a value missing is below it)
        floor = ORDER_CUTS[order] if cut is None else cut
        if order == "off_plane_first":
            value = np.abs(rows["GLAT"].to_numpy(np.float64)) if "GLAT" in rows else np.full(len(rows), np.nan)
        else:
            value = p
        key["band"] = (np.nan_to_num(value, nan=0.0) >= floor).astype(np.float64)
    elif order != "probability":
        width = ORDER_BANDS[order] if band is None else band
        top = np.ceil(1 / width - 1e-9) - 1  # the band 1 falls in: the highest that starts below it
        key["band"] = np.minimum(np.floor(np.nan_to_num(p, nan=0.0) / width + 1e-9), top)
    if order == "new_first" and "unassociated_releases" in rows:
        key["waited"] = pd.to_numeric(rows["unassociated_releases"], errors="coerce").fillna(0).to_numpy()
    by_significance = order in ("significance", "probable_by_significance", "off_plane_first")
    columns = ["section", "band", "waited", *(("s", "p") if by_significance else ("p", "s")), "e"]
    at = key.sort_values(columns, ascending=[True, False, True, False, False, True], kind="stable").index
    return numbered(rows.loc[at])


def candidate_lists(frame: pd.DataFrame, classes: Sequence[str], merge: Mapping[str, Sequence[str]],
                    cuts: Mapping[str, Any]) -> dict[str, pd.DataFrame]:
    """Each class's target list (class -> its rows, ``rank`` first, in the order ``cuts["order"]`` names (`ORDERS`;
    `BY_CLASS` or absent: the class's own, `list_order`), with ``caveats``);
    ``classes`` those to list (the model's are the frame's ``p_<class>`` columns), ``merge`` the CLASS1 codes each
    holds (where not one code).  A source the sky already names (`known`) is in none.

    A list the cuts leave empty is an empty frame with every column (its file then holds the header).
    """
    keep = followable(frame, cuts) & ~known(frame)
    predicted = frame["predicted_class"].to_numpy()
    model_classes = classes_from_columns(frame.columns)
    excluded = outside_group(frame["CLASS1"].fillna("").to_numpy(str), model_classes, merge)
    frame = frame.assign(caveats=caveats(frame))
    lists = {}
    for cls in classes:
        rows = frame[keep & (predicted == cls) & ~excluded[:, model_classes.index(cls)]]
        if set(merge.get(cls, (cls,))) <= set(BLAZAR_CODES):
            rows = _blazar_rows(rows)
        rows = ranked(rows, cls, list_order(cls, cuts.get("order", BY_CLASS)))
        lists[cls] = rows if cuts.get("candidate_rows") is None else rows.head(cuts["candidate_rows"])
    return lists


def _blazar_rows(rows: pd.DataFrame) -> pd.DataFrame:
    """A blazar class's candidates as a spectroscopist reads them: in a ``section`` each (`BLAZAR_SECTIONS`: a
    counterpart to take a spectrum of, or none yet, said in ``caveats``), and a type another catalog already gives
    (an earlier release's, ``typed_before``; 4LAC-DR3's, ``LAC_class``) said in ``caveats``."""
    unassociated = rows["CLASS1"].fillna("").astype(str).str.strip().to_numpy() == ""
    typed = [_typed_words(before, lac, z) for before, lac, z in zip(
        rows.get("typed_before", pd.Series([""] * len(rows), index=rows.index)).fillna(""),
        rows.get("LAC_class", pd.Series([""] * len(rows), index=rows.index)).fillna(""),
        rows.get("LAC_Redshift", pd.Series([np.nan] * len(rows), index=rows.index)))]
    words = ["; ".join(filter(None, (said, type_words, NO_COUNTERPART if alone else "")))
             for said, type_words, alone in zip(rows["caveats"], typed, unassociated)]
    return rows.assign(caveats=words, section=np.where(unassociated, BLAZAR_SECTIONS[1], BLAZAR_SECTIONS[0]))


def _typed_words(before: str, lac_class: str, redshift: float) -> str:
    """'already typed: 4FGL-DR4 bll; 4LAC-DR3 bll, z = 0.525' ('' where no catalog types the source)."""
    found = [str(before)] if str(before).strip() else []
    if str(lac_class).strip().lower() in ("bll", "fsrq"):
        z = f", z = {redshift:.3f}" if np.isfinite(redshift) and redshift > 0 else ""
        found.append(f"4LAC-DR3 {str(lac_class).strip().lower()}{z}")
    return f"already typed: {'; '.join(found)}" if found else ""


def clean(rows: pd.DataFrame) -> pd.DataFrame:
    """A target list without its rows that carry a `DOUBTFUL_FLAGS` flag, ranked anew."""
    return numbered(rows[passes_flags(rows["Flags"].to_numpy(np.int64), DOUBTFUL_FLAGS)].drop(columns="rank"))


def known_sources(frame: pd.DataFrame, cuts: Mapping[str, Any]) -> pd.DataFrame:
    """The classified point sources through the cuts that the sky already names (`known`), the most significant
    first: what a target list would otherwise have held, with ``known_class`` and the reason beside the model's
    ``predicted_class``."""
    return ranked_by(frame[followable(frame, cuts) & known(frame)], "Signif_Avg")

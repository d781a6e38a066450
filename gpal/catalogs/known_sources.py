"""What is already known about each source of a LAT catalog: the evidence a candidate list must not ignore.

A source a catalog leaves unassociated (or calls a blazar of uncertain type) may be known all the
same, and proposing it again costs a proposal its credibility.  `known_about` gathers,
per source, every route by which its class is known:

- **the catalog's own CLASS2 / ASSOC2**, the association FL16Y (and the 4FGL family) gives where
  CLASS1 is empty or beside it, with the association probabilities tied to the association they
  belong to: ``ASSOC_PROB_BAY`` / ``ASSOC_PROB_LR`` describe ASSOC1, and where ASSOC1 is empty but
  ASSOC2 is not, the only association they can describe is ASSOC2 (274 rows of FL16Y give one so);
- **every other shipped release's class** of the same source, followed through the release links
  (`gpal.catalogs.links.link_later`: ``ASSOC_FGL``, or the name a 4FGL data release keeps; earlier
  and later releases alike, 3FGL through 4FGL-DR4); a release's class is its CLASS1, else its
  CLASS2.  A check scored on later labels must pass only the earlier releases (``releases=``): the
  later ones hold the labels it scores;
- **known pulsars of the ATNF Pulsar Catalogue inside the 95% error ellipse** (`gpal.catalogs.psrcat`;
  class ``msp`` where the spin period is below 30 ms, else ``psr``);
- **another source of the same catalog whose counterpart lies inside the 95% ellipse**
  (``RA_Counterpart`` / ``DEC_Counterpart``): a globular cluster, a remnant or a pulsar that one
  gamma-ray source is associated with can lie inside a second one's ellipse.  Every classified
  counterpart counts (all CLASS1 codes), the class is given beside it.

The 95% ellipse is the catalog's ``Conf_95_SemiMajor``, ``Conf_95_SemiMinor`` (degrees) and
``Conf_95_PosAng`` (the major axis's position angle, degrees east of north); whether a position lies inside
is `gpal.catalogs.error_ellipses`' test on the sphere.

The summary (``known_class``, ``known_as``, ``known_reason``, ``known_route``) is the strongest
piece of evidence.  Each piece has a strength and a route; the strongest is the one of highest
strength, and among equals the one first in this order of routes (`ROUTES`):

1. the catalog's CLASS1, 2. its CLASS2, 3. the other releases, newest first, 4. an ATNF pulsar
   inside the ellipse (the nearest), 5. another source's counterpart inside the ellipse (the nearest).

Strength: a specific class (any code but the two below) is strongest; ``bcu`` (a blazar, type
unknown) is weaker, and so is any class an *earlier* release gave (a newer analysis supersedes
it: an earlier bll does not refine FL16Y's own bcu, while a later release's bll refines a
4FGL-DR4 bcu); ``unk`` (a counterpart of unknown nature) is weakest.  Positions (routes 4 and 5)
take part only where no release associates the source, or associates it only as ``unk``: a
coincidence in position does not overrule an association, not even a bcu's (FL16Y J1644.5-4604,
a bcu with PSR J1644-4559 in its ellipse, stays a bcu; the ATNF columns show the pulsar).

Fallbacks: a catalog without CLASS2 (3FGL), association probabilities, counterpart positions or
ellipses, or a release that cannot be linked, leaves the columns of that route empty ('' or NaN)
and says so in ``attrs["notes"]`` of the returned frame, for a report to repeat; ``pulsars=None``
leaves the ATNF columns out altogether (recorded as such), and a missing or malformed pulsar
catalogue file is an error naming it (`gpal.catalogs.psrcat.read_psrcat`).
"""

from __future__ import annotations

import os
from typing import Any, NamedTuple, Sequence

import numpy as np
import pandas as pd

from gpal.catalogs.catalog import Catalog, load_catalog, text_values
from gpal.catalogs.classes import class1_codes
from gpal.catalogs.error_ellipses import PositionIndex
from gpal.catalogs.links import link_later
from gpal.catalogs.psrcat import PSRCAT_FILE, read_psrcat
from gpal.catalogs.releases import RELEASES, link_path, release_families

__all__ = ["CLASS_WORDS", "KNOWN_COLUMNS", "MSP_PERIOD", "ROUTES", "KnownIndex", "known_about"]

#: A pulsar whose spin period (s) is below this is a millisecond pulsar (``msp``), as the LAT catalogs count them.
MSP_PERIOD = 0.03
#: The routes of ``known_route``, in the order of precedence.
ROUTES = ("CLASS1", "CLASS2", "release", "ATNF", "neighbour")
#: Codes that say little of the class, weakest last: any other code wins over them (see the module's docstring).
_WEAK = {"bcu": 1, "unk": 2}
#: CLASS1 code -> words for a reason (the 4FGL papers' class names, shortened).
CLASS_WORDS = {
    "psr": "pulsar", "msp": "millisecond pulsar", "pwn": "pulsar wind nebula", "snr": "supernova remnant",
    "spp": "SNR or PWN candidate (spp)", "glc": "globular cluster", "sfr": "star-forming region",
    "hmb": "high-mass binary", "lmb": "low-mass binary", "bin": "binary", "nov": "nova", "gc": "Galactic centre",
    "bll": "BL Lac", "fsrq": "FSRQ", "rdg": "radio galaxy", "agn": "non-blazar AGN",
    "ssrq": "steep-spectrum radio quasar", "css": "compact steep-spectrum source", "bcu": "blazar of uncertain type", "nlsy1": "narrow-line Seyfert 1",
    "sey": "Seyfert galaxy", "sbg": "starburst galaxy", "gal": "normal galaxy", "unk": "counterpart of unknown type",
}
#: The columns `known_about` returns, before the per-release ones (``<release>_name``, ``_class``, ``_assoc``) and
#: the ATNF ones (``ATNF_pulsars``, ``ATNF_n``, ``ATNF_sep_deg``; left out with ``pulsars=None``).
KNOWN_COLUMNS = ("Source_Name", "CLASS1", "ASSOC1", "CLASS2", "ASSOC2", "ASSOC1_PROB_BAY", "ASSOC1_PROB_LR",
                 "ASSOC2_PROB_BAY", "ASSOC2_PROB_LR")
_SUMMARY_COLUMNS = ("known_class", "known_as", "known_reason", "known_route")


# ------------------------------------------------------------------ reading the catalog
def _text(catalog: Catalog, column: str | None, rows: np.ndarray | None = None) -> np.ndarray | None:
    """The text column's values (of ``rows``, every row when None); None where the catalog has no such column."""
    if column is None or column not in catalog.table.colnames:
        return None
    return text_values(catalog.table[column] if rows is None else catalog.table[column][rows])


def _floats(catalog: Catalog, column: str | None, rows: np.ndarray | None = None) -> np.ndarray | None:
    """The numeric column's values (of ``rows``, every row when None), NaN where masked; None where it is absent."""
    if column is None or column not in catalog.table.colnames:
        return None
    values = catalog.table[column] if rows is None else catalog.table[column][rows]
    values = values.filled(np.nan) if hasattr(values, "filled") else values
    return np.asarray(values, dtype=np.float64)


def _order(release: Any) -> tuple[int, int]:
    """Where a release stands in time: its family, then its data release."""
    return release_families().index(release.family), release.data_release


def _class_of(catalog: Catalog) -> tuple[np.ndarray, np.ndarray]:
    """Each row's class by the catalog (CLASS1, else CLASS2) and the association it goes with."""
    class1, assoc1 = class1_codes(catalog.class_codes), _text(catalog, catalog.columns.assoc1)
    class2, assoc2 = _text(catalog, "CLASS2"), _text(catalog, "ASSOC2")
    empty = np.full(catalog.n_rows, "")
    assoc1 = empty if assoc1 is None else assoc1
    if class2 is None:
        return class1, assoc1
    use2 = (class1 == "") & (class1_codes(class2) != "")
    return np.where(use2, class1_codes(class2), class1), np.where(use2, empty if assoc2 is None else assoc2, assoc1)


def _links(catalog: Catalog, other: Catalog, load: Any, notes: list[str]) -> np.ndarray | None:
    """For each row of ``catalog``, the row of ``other`` that is the same source (-1 where none); None (and a
    note) where the releases do not link."""
    earlier, later = (other, catalog) if _order(other.record) < _order(catalog.record) else (catalog, other)
    try:
        through = [load(r.name) for r in link_path(earlier.record, later.record)]
        ambiguous: list[str] = []
        forward = link_later(earlier, later, through, notes=ambiguous)
    except (ValueError, KeyError) as exc:
        notes.append(f"{other.release}: not linked to {catalog.release} ({exc}); its class is not given")
        return None
    notes.extend(f"{other.release} link: {said}" for said in ambiguous)
    if earlier is catalog:
        return forward
    back = np.full(catalog.n_rows, -1, dtype=np.int64)
    linked = np.nonzero(forward >= 0)[0]
    back[forward[linked]] = linked
    return back


def _rows(catalog: Catalog, names: Sequence[str] | None, order: np.ndarray) -> np.ndarray:
    """The catalog rows of ``names`` (every row when None), found by bisection in ``order`` (the argsort of the
    catalog's names): a dict of 10^6 names took 150 MB."""
    if names is None:
        return np.arange(catalog.n_rows)
    wanted = np.array([str(name).strip() for name in ([names] if isinstance(names, str) else names)], dtype=str)
    rows, known = np.zeros(wanted.size, dtype=np.int64), np.zeros(wanted.size, dtype=bool)
    if order.size and wanted.size:
        rows = order[np.minimum(np.searchsorted(catalog.names, wanted, sorter=order), order.size - 1)]
        known = catalog.names[rows] == wanted
    unknown = wanted[~known].tolist()
    if unknown:
        raise ValueError(f"{len(unknown)} source name(s) are not in {catalog.release} ({catalog.path.name}): "
                         f"{', '.join(map(repr, unknown[:5]))}{' ...' if len(unknown) > 5 else ''}; expected names of "
                         f"its {catalog.columns.name} column such as {catalog.names[0]!r}")
    return rows


def _probabilities(catalog: Catalog, rows: np.ndarray, assoc1: np.ndarray, assoc2: np.ndarray,
                   notes: list[str]) -> dict[str, np.ndarray]:
    """ASSOC_PROB_BAY / _LR of ``rows`` tied to the association they belong to: ASSOC1's where it is given, else
    ASSOC2's (``assoc1``, ``assoc2``: those rows')."""
    out = {}
    loose = np.zeros(rows.size, dtype=bool)
    for method, role in (("BAY", "assoc_prob_bay"), ("LR", "assoc_prob_lr")):
        values = _floats(catalog, getattr(catalog.columns, role), rows)
        if values is None:
            notes.append(f"{catalog.release} has no ASSOC_PROB_{method} column: the association probabilities of "
                         "that method are empty (NaN)")
            values = np.full(rows.size, np.nan)
        given = np.isfinite(values) & (values > 0)
        of1, of2 = assoc1 != "", (assoc1 == "") & (assoc2 != "")
        out[f"ASSOC1_PROB_{method}"] = np.where(of1, values, np.nan)
        out[f"ASSOC2_PROB_{method}"] = np.where(of2, values, np.nan)
        loose |= given & ~of1 & ~of2
    out = {column: out[column] for column in KNOWN_COLUMNS if column in out}  # ASSOC1's, then ASSOC2's
    if loose.any():
        notes.append(f"{catalog.release}: {int(loose.sum())} source(s) give an association probability but name no "
                     "association (ASSOC1 and ASSOC2 empty); it is left out")
    return out


class _Evidence(NamedTuple):
    """One piece of what is known about a source: its rank (strength: 0 strongest; route order), the class code,
    the name it is known by, the reason in words and its route (`ROUTES`)."""

    strength: int
    order: int
    code: str
    name: str
    reason: str
    route: str


def _strength(code: str) -> int:
    return _WEAK.get(code, 0)


def _own(release: str, class1: np.ndarray, assoc1: np.ndarray, class2: np.ndarray,
         assoc2: np.ndarray) -> list[list[_Evidence]]:
    """Routes 1 and 2: the catalog's CLASS1 and CLASS2, per row."""
    evidence: list[list[_Evidence]] = [[] for _ in class1]
    for i, pieces in enumerate(evidence):
        for order, (column, code, name) in enumerate((("CLASS1", class1[i], assoc1[i]),
                                                      ("CLASS2", class2[i], assoc2[i]))):
            if code:
                assoc_column = column.replace("CLASS", "ASSOC")
                pieces.append(_Evidence(_strength(code), order, code, name,
                                        f"{release} {column} {code} ({name or 'no ' + assoc_column})", column))
    return evidence


class _Linked(NamedTuple):
    """Another release as `known_about` reads it: each catalog row's row of it (-1: none; None: the releases do not
    link), what making the link said, and its rows' classes and associations (`_class_of`)."""

    other: Catalog
    link: np.ndarray | None
    said: list[str]
    classes: np.ndarray
    assocs: np.ndarray


def _release_columns(catalog: Catalog, rows: np.ndarray, linked: _Linked, order: int, notes: list[str],
                     evidence: list[list[_Evidence]]) -> dict[str, np.ndarray]:
    """Route 3 for one other release: its source, class and association per row (none where it is not linked)."""
    notes.extend(linked.said)
    if linked.link is None:
        return {}
    other, link = linked.other, linked.link[rows]
    at, found = np.maximum(link, 0), link >= 0
    columns = {"name": other.names, "class": linked.classes, "assoc": linked.assocs}
    columns = {f"{other.release}_{key}": np.where(found, values[at], "") for key, values in columns.items()}
    name, code, assoc = columns.values()
    floor = 1 if _order(other.record) < _order(catalog.record) else 0  # an earlier release's class ranks as a bcu
    for i in np.nonzero(code != "")[0]:
        evidence[i].append(_Evidence(max(_strength(code[i]), floor), order, code[i], assoc[i],
                                     f"{other.release} class {code[i]} ({assoc[i] or 'no association'}; {name[i]})",
                                     "release"))
    return columns


def _pulsar_columns(ellipses: tuple[np.ndarray, ...], table: pd.DataFrame, placed: PositionIndex, order: int,
                    evidence: list[list[_Evidence]]) -> dict[str, np.ndarray]:
    """Route 4: the ATNF pulsars of ``table`` (``placed``: their positions) inside each ellipse."""
    inside = placed.inside(*ellipses)
    names = ("PSR " + table["PSRJ"].astype(str)).to_numpy()
    period = table["P0"].to_numpy(float) if "P0" in table else np.full(len(table), np.nan)
    n = len(inside)
    columns = {"ATNF_pulsars": np.full(n, "", dtype=object), "ATNF_n": np.zeros(n, dtype=np.int64),
               "ATNF_sep_deg": np.full(n, np.nan)}
    for i, hits in enumerate(inside):
        if hits:
            j, separation = hits[0]
            columns["ATNF_pulsars"][i] = "; ".join(names[k] for k, _ in hits)
            columns["ATNF_n"][i], columns["ATNF_sep_deg"][i] = len(hits), separation
            code = "msp" if period[j] < MSP_PERIOD else "psr"
            evidence[i].append(_Evidence(_strength(code), order, code, names[j],
                                         f"ATNF pulsar {names[j]} {separation:.3f} deg inside the 95% ellipse", "ATNF"))
    columns["ATNF_pulsars"] = columns["ATNF_pulsars"].astype(str)
    return columns


class _Counterparts(NamedTuple):
    """The catalog's classified sources with a counterpart position: their rows, CLASS1 codes and ASSOC1, and the
    positions (`PositionIndex`)."""

    rows: np.ndarray
    class1: np.ndarray
    assoc1: np.ndarray
    placed: PositionIndex


def _counterparts(catalog: Catalog) -> _Counterparts | None:
    """`_Counterparts` of ``catalog``; None where it gives no counterpart positions."""
    ra = _floats(catalog, catalog.columns.counterpart_ra)
    dec = _floats(catalog, catalog.columns.counterpart_dec)
    if ra is None or dec is None:
        return None
    class1 = class1_codes(catalog.class_codes)
    rows = np.nonzero((class1 != "") & np.isfinite(ra) & np.isfinite(dec))[0]
    assoc1 = _text(catalog, catalog.columns.assoc1, rows)
    return _Counterparts(rows, class1[rows], np.full(rows.size, "") if assoc1 is None else assoc1,
                         PositionIndex(ra[rows], dec[rows]))


def _neighbour_columns(catalog: Catalog, rows: np.ndarray, ellipses: tuple[np.ndarray, ...],
                       counterparts: _Counterparts | None, order: int, notes: list[str],
                       evidence: list[list[_Evidence]]) -> dict[str, np.ndarray]:
    """Route 5: the other classified sources of the catalog whose counterpart lies inside each ellipse."""
    n = rows.size
    columns = {"neighbour_sources": np.full(n, "", dtype=object), "neighbour_class": np.full(n, "", dtype=object),
               "neighbour_assoc": np.full(n, "", dtype=object), "neighbour_sep_deg": np.full(n, np.nan)}
    if counterparts is None:
        notes.append(f"{catalog.release} has no counterpart positions (RA_Counterpart / DEC_Counterpart): other "
                     "sources' counterparts inside the ellipses are not looked for")
    else:
        placed, class1, assoc1 = counterparts.rows, counterparts.class1, counterparts.assoc1
        for i, (row, hits) in enumerate(zip(rows, counterparts.placed.inside(*ellipses))):
            hits = [(j, separation) for j, separation in hits if placed[j] != row]
            if not hits:
                continue
            k, separation = hits[0]
            columns["neighbour_sources"][i] = "; ".join(f"{catalog.names[placed[j]]} ({class1[j]}, {assoc1[j]})"
                                                        for j, _ in hits)
            columns["neighbour_class"][i], columns["neighbour_assoc"][i] = class1[k], assoc1[k]
            columns["neighbour_sep_deg"][i] = separation
            words = CLASS_WORDS.get(class1[k], class1[k])
            evidence[i].append(_Evidence(_strength(class1[k]), order, class1[k], assoc1[k],
                                         f"{words} {assoc1[k]} ({catalog.names[placed[k]]}) {separation:.3f} deg "
                                         "inside the 95% ellipse", "neighbour"))
    return {key: values.astype(str) if values.dtype == object else values for key, values in columns.items()}


def _strongest(pieces: list[_Evidence]) -> tuple[str, str, str, str]:
    """The summary of one source: its strongest piece of evidence, positions taking part only where no release
    associates it (but as unk); '' throughout where nothing is known."""
    if any(p.route not in ("ATNF", "neighbour") and p.strength < _WEAK["unk"] for p in pieces):
        pieces = [p for p in pieces if p.route not in ("ATNF", "neighbour")]
    if not pieces:
        return "", "", "", ""
    best = min(pieces, key=lambda p: (p.strength, p.order))
    return best.code, best.name, best.reason, best.route


def _ellipses(catalog: Catalog, rows: np.ndarray, notes: list[str]) -> tuple[np.ndarray, ...]:
    """The position and 95% ellipse of each row (NaN, and a note, where the catalog has none)."""
    roles = ("ra", "dec", "conf95_semimajor", "conf95_semiminor", "conf95_posang")
    values = [_floats(catalog, getattr(catalog.columns, role), rows) for role in roles]
    if any(v is None for v in values):
        notes.append(f"{catalog.release} has no 95% error ellipse (Conf_95_SemiMajor / SemiMinor / PosAng) or "
                     "position: no pulsar or counterpart was looked for inside one")
        return tuple(np.full(rows.size, np.nan) for _ in roles)
    without = int((~(np.isfinite(values[2]) & (values[2] > 0))).sum())
    if without:
        notes.append(f"{without} of the {rows.size} source(s) have no 95% ellipse: no pulsar or counterpart was "
                     "looked for inside theirs")
    return tuple(values)


# ------------------------------------------------------------------ the function
class KnownIndex:
    """What `known_about` reads over every row of a catalog, made once: the names' order, the links to each other
    release, the counterparts' positions and the pulsars'.  A caller asking about a large catalog's sources a block
    at a time makes one and asks it (`about`) each block; each block then reads only its own rows.

    Parameters are `known_about`'s.
    """

    def __init__(self, catalog: Catalog | str | os.PathLike, *,
                 pulsars: str | os.PathLike | pd.DataFrame | None = PSRCAT_FILE,
                 releases: Sequence[Catalog | str] | None = None):
        if not isinstance(catalog, Catalog):
            catalog = load_catalog(catalog)
        self.catalog = catalog
        loaded: dict[str, Catalog] = {catalog.release: catalog}

        def load(name: str) -> Catalog:  # a shipped release: it reads without warnings (test_later_check.py)
            if name not in loaded:
                loaded[name] = load_catalog(name)
            return loaded[name]

        others = [r for r in RELEASES if r != catalog.release] if releases is None else list(releases)
        others = [load(r) if isinstance(r, str) else loaded.setdefault(r.release, r) for r in others]
        others = sorted((o for o in others if o.release != catalog.release), key=lambda o: _order(o.record),
                        reverse=True)
        self.others = []
        for other in others:
            said: list[str] = []
            link = _links(catalog, other, load, said)
            self.others.append(_Linked(other, link, said, *_class_of(other)))
        self.order = np.argsort(catalog.names, kind="stable")
        self.counterparts = _counterparts(catalog)
        self.pulsars = pulsars if pulsars is None or isinstance(pulsars, pd.DataFrame) else read_psrcat(pulsars)
        self.pulsars_placed = None if self.pulsars is None else PositionIndex(
            self.pulsars["RAJ2000"].to_numpy(float), self.pulsars["DEJ2000"].to_numpy(float))

    def about(self, names: Sequence[str] | None = None) -> pd.DataFrame:
        """`known_about` of the sources ``names`` (all the catalog's when None)."""
        catalog = self.catalog
        rows = _rows(catalog, names, self.order)
        notes: list[str] = []
        class1 = class1_codes(catalog.class_codes[rows])
        found = {"ASSOC1": _text(catalog, catalog.columns.assoc1, rows), "CLASS2": _text(catalog, "CLASS2", rows),
                 "ASSOC2": _text(catalog, "ASSOC2", rows)}
        for column, values in found.items():
            if values is None:
                extra = (" (its ASSOC2 is given, without a class)" if column == "CLASS2" and found["ASSOC2"] is not None
                         else "")
                notes.append(f"{catalog.release} has no {column} column: {column} is empty{extra}")
        assoc1, class2, assoc2 = (np.full(rows.size, "") if v is None else v for v in found.values())
        class2 = class1_codes(class2)
        out: dict[str, np.ndarray] = {"Source_Name": catalog.names[rows], "CLASS1": class1, "ASSOC1": assoc1,
                                      "CLASS2": class2, "ASSOC2": assoc2,
                                      **_probabilities(catalog, rows, assoc1, assoc2, notes)}
        evidence = _own(catalog.release, class1, assoc1, class2, assoc2)

        checked = []
        for order, linked in enumerate(self.others, start=2):
            columns = _release_columns(catalog, rows, linked, order, notes, evidence)
            if columns:
                checked.append(linked.other.release)
                out.update(columns)

        ellipses = _ellipses(catalog, rows, notes)
        table = self.pulsars
        if table is None:
            notes.append("no pulsar catalogue was checked (pulsars=None): known pulsars inside the ellipses are not "
                         "looked for")
        else:
            out.update(_pulsar_columns(ellipses, table, self.pulsars_placed, len(self.others) + 2, evidence))
        out.update(_neighbour_columns(catalog, rows, ellipses, self.counterparts, len(self.others) + 3, notes,
                                      evidence))

        summary = np.array([_strongest(pieces) for pieces in evidence], dtype=object).reshape(rows.size, 4)
        out.update({column: summary[:, k].astype(str) for k, column in enumerate(_SUMMARY_COLUMNS)})
        frame = pd.DataFrame(out)
        frame.attrs.update(catalog=catalog.release, releases=checked, notes=notes,
                           pulsar_catalogue=None if table is None else {"file": table.attrs.get("file", ""),
                                                                        "version": table.attrs.get("version", "")})
        return frame


def known_about(catalog: Catalog | str | os.PathLike, names: Sequence[str] | None = None, *,
                pulsars: str | os.PathLike | pd.DataFrame | None = PSRCAT_FILE,
                releases: Sequence[Catalog | str] | None = None) -> pd.DataFrame:
    """What is already known about each source named ``names`` of ``catalog`` (all its sources without), by the
    routes and in the precedence of this module's docstring.

    Parameters
    ----------
    catalog : Catalog or str or path
        The catalog (a `Catalog`, a shipped release's name or a file, as `load_catalog` takes).
    names : sequence of str, optional
        Source names of ``catalog``; a name it does not hold is a ValueError naming it.
    pulsars : path or pandas.DataFrame or None
        The ATNF Pulsar Catalogue: a ``psrcat.db`` file (default: the shipped 1.64), a frame `read_psrcat`
        returned, or None to check no pulsar catalogue (the ATNF columns are then left out and the notes say so).
    releases : sequence of Catalog or str, optional
        The other releases to give the class of (default: every shipped release but the catalog's own, loaded
        here); an empty sequence checks none.  A release a link goes through is loaded when not given.

    A caller asking about a large catalog's sources a block at a time makes a `KnownIndex` once instead, and asks
    it about each block: what reads every row (the links to each release, a pass over both catalogs) is made once.

    Returns
    -------
    pandas.DataFrame
        One row per source, in the order of ``names``: `KNOWN_COLUMNS` (the catalog's CLASS1 / ASSOC1 and CLASS2 /
        ASSOC2, '' where it has none; the association probabilities of each association, NaN where they are not
        its), per other release R, newest first, ``R_name``, ``R_class``, ``R_assoc`` (its source, class code
        (CLASS1, else CLASS2) and association, '' where it has none), ``ATNF_pulsars`` (the pulsars inside the
        95% ellipse, nearest first, '; ' separated), ``ATNF_n``, ``ATNF_sep_deg`` (the nearest's separation),
        ``neighbour_sources`` (the other sources whose counterpart lies inside, nearest first, as
        'NAME (class, ASSOC1)'), ``neighbour_class``, ``neighbour_assoc`` and ``neighbour_sep_deg`` (the
        nearest's), and the summary ``known_class`` (a lower-case class code), ``known_as``, ``known_reason``,
        ``known_route`` (one of `ROUTES`; all '' where nothing is known).  ``attrs``: ``catalog`` (its
        release), ``releases`` (those whose classes are given), ``pulsar_catalogue`` (file and version, or None)
        and ``notes`` (what could not be checked, in words).

    Examples
    --------
    >>> from gpal.catalogs.known_sources import known_about
    >>> known = known_about("FL16Y", ["FL16Y J1929.0+1727", "FL16Y J1737.5-2354"], releases=["4FGL-DR4"])
    >>> known["known_reason"].tolist()
    ['FL16Y CLASS2 psr (PSR J1928+1725)', '4FGL-DR4 class glc (NGC 6401; 4FGL J1737.6-2350)']
    >>> known.loc[0, ["ASSOC1_PROB_BAY", "ASSOC2_PROB_BAY"]].round(2).tolist()   # ASSOC1 is empty: ASSOC2's
    [nan, 0.46]
    """
    return KnownIndex(catalog, pulsars=pulsars, releases=releases).about(names)

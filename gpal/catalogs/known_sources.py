"""What is already known about each source of a LAT catalog: the evidence a candidate list must not ignore.

A source a catalog leaves unassociated (or calls a blazar of uncertain type) may be known all the
same, and proposing it again costs a proposal its credibility (issue 70).  `known_about` gathers,
per source, every route by which its class is known:

- **the catalog's own CLASS2 / ASSOC2**, the association FL16Y (and the 4FGL family) gives where
  CLASS1 is empty or beside it, with the association probabilities tied to the association they
  belong to: ``ASSOC_PROB_BAY`` / ``ASSOC_PROB_LR`` describe ASSOC1, and where ASSOC1 is empty but
  ASSOC2 is not, the only association they can describe is ASSOC2 (FL16Y: 274 such rows);
- **every other shipped release's class** of the same source, followed through the release links
  (`gpal.catalogs.links.link_later`: ``ASSOC_FGL``, or the name a 4FGL data release keeps; earlier
  and later releases alike, 3FGL through 4FGL-DR4); a release's class is its CLASS1, else its
  CLASS2;
- **known pulsars of the ATNF Pulsar Catalogue inside the 95% error ellipse** (`gpal.catalogs.psrcat`;
  class ``msp`` where the spin period is below 30 ms, else ``psr``);
- **another source of the same catalog whose counterpart lies inside the 95% ellipse**
  (``RA_Counterpart`` / ``DEC_Counterpart``): a globular cluster, a remnant or a pulsar that one
  gamma-ray source is associated with can lie inside a second one's ellipse.  Every classified
  counterpart counts (all CLASS1 codes), the class is given beside it.

The 95% ellipse is the catalog's ``Conf_95_SemiMajor``, ``Conf_95_SemiMinor`` (degrees) and
``Conf_95_PosAng`` (the major axis's position angle, degrees east of north); a position is inside
when its offset (separation r and position angle phi from the source, on the sphere) satisfies
``(r cos(phi - PA) / a)**2 + (r sin(phi - PA) / b)**2 <= 1`` (`in_error_ellipse`).

The summary (``known_class``, ``known_as``, ``known_reason``, ``known_route``) takes the strongest
evidence, in this precedence:

1. the catalog's CLASS1, 2. its CLASS2, 3. the other releases, newest first, 4. an ATNF pulsar
   inside the ellipse (nearest first), 5. another source's counterpart inside the ellipse (nearest first);

with two refinements: a specific class wins over ``bcu`` (a blazar, type unknown) and both over
``unk`` (a counterpart of unknown nature) whatever their routes, so that a 4FGL-DR4 bcu that FL16Y
calls a BL Lac is known as one (an earlier release's class ranks as a bcu: it does not refine a
newer analysis's bcu, and among earlier releases the newest decides); and positions (routes 4 and 5) decide only for a source that no release
associates (or associates only with a counterpart of unknown type, ``unk``): a coincidence in
position does not overrule an association, not even a bcu's.

Fallbacks: a catalog without CLASS2 (3FGL), association probabilities, counterpart positions or
ellipses, or a release that cannot be linked, leaves the columns of that route empty ('' or NaN)
and says so in ``attrs["notes"]`` of the returned frame, which the report repeats; ``pulsars=None``
leaves the ATNF columns out altogether (recorded as such), and a missing or malformed pulsar
catalogue file is an error naming it (`gpal.catalogs.psrcat.read_psrcat`).
"""

from __future__ import annotations

import os
import warnings
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from gpal.catalogs.catalog import Catalog, load_catalog, text_values
from gpal.catalogs.classes import class1_codes
from gpal.catalogs.links import link_later
from gpal.catalogs.psrcat import PSRCAT_FILE, read_psrcat
from gpal.catalogs.releases import FAMILIES, RELEASES, link_path

__all__ = ["CLASS_WORDS", "KNOWN_COLUMNS", "MSP_PERIOD", "ROUTES", "angular_offsets", "in_error_ellipse",
           "known_about", "positions_inside"]

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
    "bll": "BL Lac", "fsrq": "FSRQ", "rdg": "radio galaxy", "agn": "non-blazar AGN", "ssrq": "steep-spectrum radio quasar",
    "css": "compact steep-spectrum source", "bcu": "blazar of uncertain type", "nlsy1": "narrow-line Seyfert 1",
    "sey": "Seyfert galaxy", "sbg": "starburst galaxy", "gal": "normal galaxy", "unk": "counterpart of unknown type",
}
#: The columns `known_about` returns, before the per-release ones (``<release>_name``, ``_class``, ``_assoc``) and
#: the ATNF ones (``ATNF_pulsars``, ``ATNF_n``, ``ATNF_sep_deg``; left out with ``pulsars=None``).
KNOWN_COLUMNS = ("Source_Name", "CLASS1", "ASSOC1", "CLASS2", "ASSOC2", "ASSOC1_PROB_BAY", "ASSOC1_PROB_LR",
                 "ASSOC2_PROB_BAY", "ASSOC2_PROB_LR")
_NEIGHBOUR_COLUMNS = ("neighbour_sources", "neighbour_class", "neighbour_assoc", "neighbour_sep_deg")
_SUMMARY_COLUMNS = ("known_class", "known_as", "known_reason", "known_route")


# ------------------------------------------------------------------ the ellipse
def angular_offsets(ra0: Any, dec0: Any, ra: Any, dec: Any) -> tuple[np.ndarray, np.ndarray]:
    """The separation and position angle (east of north) of ``(ra, dec)`` seen from ``(ra0, dec0)``, all in
    degrees (J2000), on the sphere (haversine and the exact bearing); the arrays broadcast.

    Returns
    -------
    tuple of numpy.ndarray
        Separation in [0, 180] and position angle in [0, 360) degrees.
    """
    a0, d0, a, d = (np.radians(np.asarray(v, dtype=np.float64)) for v in (ra0, dec0, ra, dec))
    dra = a - a0
    h = np.sin((d - d0) / 2) ** 2 + np.cos(d0) * np.cos(d) * np.sin(dra / 2) ** 2
    separation = 2 * np.arcsin(np.sqrt(np.clip(h, 0.0, 1.0)))
    angle = np.arctan2(np.sin(dra) * np.cos(d), np.cos(d0) * np.sin(d) - np.sin(d0) * np.cos(d) * np.cos(dra))
    return np.degrees(separation), np.mod(np.degrees(angle), 360.0)


def in_error_ellipse(ra0: Any, dec0: Any, semimajor: Any, semiminor: Any, posang: Any, ra: Any,
                     dec: Any) -> np.ndarray:
    """Whether ``(ra, dec)`` lies inside the error ellipse centred on ``(ra0, dec0)``: semi-axes ``semimajor`` and
    ``semiminor``, the major axis at position angle ``posang`` east of north, all in degrees (the LAT catalogs'
    ``Conf_95_*``); the boundary counts as inside.  An ellipse with a NaN or non-positive axis holds nothing.

    Returns
    -------
    numpy.ndarray
        Booleans, the arrays' broadcast shape.
    """
    separation, angle = angular_offsets(ra0, dec0, ra, dec)
    a = np.asarray(semimajor, dtype=np.float64)
    b = np.asarray(semiminor, dtype=np.float64)
    turn = np.radians(angle - np.asarray(posang, dtype=np.float64))
    along, across = separation * np.cos(turn), separation * np.sin(turn)
    with np.errstate(divide="ignore", invalid="ignore"):
        inside = (along / a) ** 2 + (across / b) ** 2 <= 1.0
    return inside & (a > 0) & (b > 0)


def positions_inside(ra0: np.ndarray, dec0: np.ndarray, semimajor: np.ndarray, semiminor: np.ndarray,
                     posang: np.ndarray, ra: np.ndarray, dec: np.ndarray) -> list[list[tuple[int, float]]]:
    """For each ellipse (arrays of n, degrees), the positions (arrays of m) inside it (`in_error_ellipse`), nearest
    first: a k-d tree on the unit sphere finds those within the semi-major axis, the exact test decides.

    Returns
    -------
    list of list of (int, float)
        Per ellipse, (index into the positions, separation in degrees).
    """
    from scipy.spatial import cKDTree

    def unit(r, d):
        r, d = np.radians(r), np.radians(d)
        return np.column_stack([np.cos(d) * np.cos(r), np.cos(d) * np.sin(r), np.sin(d)])

    found: list[list[tuple[int, float]]] = [[] for _ in range(len(ra0))]
    usable = np.isfinite(ra) & np.isfinite(dec)
    keep = np.nonzero(usable)[0]
    has = np.isfinite(ra0) & np.isfinite(dec0) & (semimajor > 0) & (semiminor > 0)
    if keep.size == 0 or not has.any():
        return found
    tree = cKDTree(unit(ra[keep], dec[keep]))
    rows = np.nonzero(has)[0]
    chord = 2 * np.sin(np.radians(np.minimum(semimajor[rows], 90.0)) / 2) * (1 + 1e-9)
    near = tree.query_ball_point(unit(ra0[rows], dec0[rows]), r=chord)
    for i, hits in zip(rows, near):
        if not hits:
            continue
        j = keep[np.asarray(hits, dtype=np.int64)]
        inside = in_error_ellipse(ra0[i], dec0[i], semimajor[i], semiminor[i], posang[i], ra[j], dec[j])
        separation, _ = angular_offsets(ra0[i], dec0[i], ra[j], dec[j])
        found[i] = sorted(((int(k), float(s)) for k, s, ok in zip(j, separation, inside) if ok), key=lambda t: t[1])
    return found


# ------------------------------------------------------------------ reading the catalog
def _text(catalog: Catalog, column: str | None) -> np.ndarray | None:
    if column is None or column not in catalog.table.colnames:
        return None
    return text_values(catalog.table[column])


def _floats(catalog: Catalog, column: str | None) -> np.ndarray | None:
    if column is None or column not in catalog.table.colnames:
        return None
    values = catalog.table[column]
    values = values.filled(np.nan) if hasattr(values, "filled") else values
    return np.asarray(values, dtype=np.float64)


def _order(release: Any) -> tuple[int, int]:
    """Where a release stands in time: its family, then its data release."""
    return FAMILIES.index(release.family), release.data_release


def _class_of(catalog: Catalog) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each row's class by the catalog: CLASS1, else CLASS2; its association; which column gave it."""
    class1 = class1_codes(catalog.class_codes)
    assoc1 = _text(catalog, catalog.columns.assoc1)
    assoc1 = np.full(catalog.n_rows, "") if assoc1 is None else assoc1
    class2 = _text(catalog, "CLASS2")
    assoc2 = _text(catalog, "ASSOC2")
    if class2 is None:
        return class1, assoc1, np.where(class1 != "", "CLASS1", "")
    class2 = class1_codes(class2)
    assoc2 = np.full(catalog.n_rows, "") if assoc2 is None else assoc2
    use2 = (class1 == "") & (class2 != "")
    return (np.where(use2, class2, class1), np.where(use2, assoc2, assoc1),
            np.where(use2, "CLASS2", np.where(class1 != "", "CLASS1", "")))


def _links(catalog: Catalog, other: Catalog, load: Any, notes: list[str]) -> np.ndarray | None:
    """For each row of ``catalog``, the row of ``other`` that is the same source (-1 where none); None (and a
    note) where the releases do not link."""
    earlier, later = (other, catalog) if _order(other.record) < _order(catalog.record) else (catalog, other)
    try:
        through = [load(r.name) for r in link_path(earlier.record, later.record)]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            forward = link_later(earlier, later, through)
    except (ValueError, KeyError) as exc:
        notes.append(f"{other.release}: not linked to {catalog.release} ({exc}); its class is not given")
        return None
    for warning in caught:
        notes.append(f"{other.release} link: {warning.message}")
    if earlier is catalog:
        return forward
    back = np.full(catalog.n_rows, -1, dtype=np.int64)
    linked = np.nonzero(forward >= 0)[0]
    back[forward[linked]] = linked
    return back


def _rows(catalog: Catalog, names: Sequence[str] | None) -> np.ndarray:
    if names is None:
        return np.arange(catalog.n_rows)
    if isinstance(names, str):
        names = [names]
    row = {name: i for i, name in enumerate(catalog.names)}
    wanted = [str(name).strip() for name in names]
    unknown = [name for name in wanted if name not in row]
    if unknown:
        raise ValueError(f"{len(unknown)} source name(s) are not in {catalog.release} ({catalog.path.name}): "
                         f"{', '.join(map(repr, unknown[:5]))}{' ...' if len(unknown) > 5 else ''}; expected names of "
                         f"its {catalog.columns.name} column such as {catalog.names[0]!r}")
    return np.array([row[name] for name in wanted], dtype=np.int64)


def _probabilities(catalog: Catalog, assoc1: np.ndarray, assoc2: np.ndarray, notes: list[str]) -> dict[str, np.ndarray]:
    """ASSOC_PROB_BAY / _LR tied to the association they belong to: ASSOC1's where it is given, else ASSOC2's."""
    out = {}
    loose = np.zeros(catalog.n_rows, dtype=bool)
    for method, role in (("BAY", "assoc_prob_bay"), ("LR", "assoc_prob_lr")):
        values = _floats(catalog, getattr(catalog.columns, role))
        if values is None:
            notes.append(f"{catalog.release} has no ASSOC_PROB_{method} column: the association probabilities of "
                         "that method are empty (NaN)")
            values = np.full(catalog.n_rows, np.nan)
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


def _summary(rank: list[tuple[tuple[int, int], str, str, str, str]]) -> tuple[str, str, str, str]:
    """The strongest of a source's pieces of evidence (weakness, route order), as (class, name, reason, route)."""
    if not rank:
        return "", "", "", ""
    best = min(rank, key=lambda item: item[0])
    return best[1], best[2], best[3], best[4]


# ------------------------------------------------------------------ the function
def known_about(catalog: Catalog | str | os.PathLike, names: Sequence[str] | None = None, *,
                pulsars: str | os.PathLike | pd.DataFrame | None = PSRCAT_FILE,
                releases: Sequence[Catalog | str] | Mapping[str, Catalog] | None = None) -> pd.DataFrame:
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
        here); an empty sequence checks none.  Catalogs a link goes through are loaded when not given.

    Returns
    -------
    pandas.DataFrame
        One row per source, in the order of ``names``: `KNOWN_COLUMNS` (the catalog's CLASS1 / ASSOC1 and CLASS2 /
        ASSOC2, '' where it has none; the association probabilities of each association, NaN where they are not
        its), per other release R ``R_name``, ``R_class``, ``R_assoc`` (its source, class code and association,
        '' where it has none), ``ATNF_pulsars`` (the pulsars inside the 95% ellipse, nearest first, '; '
        separated), ``ATNF_n``, ``ATNF_sep_deg`` (the nearest's separation), ``neighbour_sources`` (the other
        sources whose counterpart lies inside, nearest first, as 'NAME (class, ASSOC1)'), ``neighbour_class``,
        ``neighbour_assoc`` and ``neighbour_sep_deg`` (the nearest's), and the summary ``known_class`` (a
        lower-case class code), ``known_as``, ``known_reason``, ``known_route`` (one of `ROUTES`; all '' where
        nothing is known).  ``attrs``: ``catalog`` (its release), ``releases`` (those whose classes are given),
        ``pulsar_catalogue`` (file and version, or None) and ``notes`` (what could not be checked, in words).
    """
    if not isinstance(catalog, Catalog):
        catalog = load_catalog(catalog)
    rows = _rows(catalog, names)
    notes: list[str] = []
    loaded: dict[str, Catalog] = {catalog.release: catalog}
    if isinstance(releases, Mapping):
        loaded.update({str(k): v for k, v in releases.items()})
        releases = list(releases.values())

    def load(name: str) -> Catalog:
        if name not in loaded:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                loaded[name] = load_catalog(name)
        return loaded[name]

    others = [r for r in RELEASES if r != catalog.release] if releases is None else list(releases)
    others = [load(r) if isinstance(r, str) else loaded.setdefault(r.release, r) for r in others]
    others = sorted((o for o in others if o.release != catalog.release), key=lambda o: _order(o.record), reverse=True)

    out: dict[str, Any] = {"Source_Name": catalog.names}
    class1 = class1_codes(catalog.class_codes)
    assoc1 = _text(catalog, catalog.columns.assoc1)
    if assoc1 is None:
        notes.append(f"{catalog.release} has no {catalog.columns.assoc1 or 'ASSOC1'} column: ASSOC1 is empty")
        assoc1 = np.full(catalog.n_rows, "")
    class2, assoc2 = _text(catalog, "CLASS2"), _text(catalog, "ASSOC2")
    if class2 is None:
        notes.append(f"{catalog.release} has no CLASS2 column: CLASS2 is empty"
                     + ("" if assoc2 is None else " (its ASSOC2 is given, without a class)"))
        class2 = np.full(catalog.n_rows, "")
    if assoc2 is None:
        notes.append(f"{catalog.release} has no ASSOC2 column: ASSOC2 is empty")
        assoc2 = np.full(catalog.n_rows, "")
    class2 = class1_codes(class2)
    out.update(CLASS1=class1, ASSOC1=assoc1, CLASS2=class2, ASSOC2=assoc2)
    out.update(_probabilities(catalog, assoc1, assoc2, notes))

    # evidence per row: ((weakness, route order), class, name, reason, route)
    evidence: list[list[tuple[tuple[int, int], str, str, str, str]]] = [[] for _ in range(catalog.n_rows)]
    weak = lambda code: _WEAK.get(code, 0)  # noqa: E731
    for i in rows:
        if class1[i]:
            evidence[i].append(((weak(class1[i]), 0), class1[i], assoc1[i],
                                f"{catalog.release} CLASS1 {class1[i]} ({assoc1[i] or 'no ASSOC1'})", "CLASS1"))
        if class2[i]:
            evidence[i].append(((weak(class2[i]), 1), class2[i], assoc2[i],
                                f"{catalog.release} CLASS2 {class2[i]} ({assoc2[i] or 'no ASSOC2'})", "CLASS2"))

    checked = []
    for step, other in enumerate(others, start=2):
        link = _links(catalog, other, load, notes)
        if link is None:
            continue
        checked.append(other.release)
        their_class, their_assoc, _ = _class_of(other)
        found = link >= 0
        at = np.maximum(link, 0)
        out[f"{other.release}_name"] = np.where(found, other.names[at], "")
        out[f"{other.release}_class"] = np.where(found, their_class[at], "")
        out[f"{other.release}_assoc"] = np.where(found, their_assoc[at], "")
        # an earlier release's class ranks no higher than a bcu: it does not refine the catalog's own bcu
        floor = 1 if _order(other.record) < _order(catalog.record) else 0
        for i in rows:
            code = out[f"{other.release}_class"][i]
            if code:
                name = out[f"{other.release}_assoc"][i]
                evidence[i].append(((max(weak(code), floor), step), code, name,
                                    f"{other.release} class {code} ({name or 'no association'}; "
                                    f"{out[f'{other.release}_name'][i]})", "release"))
    position_step = len(others) + 2

    # the 95% ellipses
    semimajor = _floats(catalog, catalog.columns.conf95_semimajor)
    semiminor = _floats(catalog, catalog.columns.conf95_semiminor)
    posang = _floats(catalog, catalog.columns.conf95_posang)
    ra0, dec0 = _floats(catalog, catalog.columns.ra), _floats(catalog, catalog.columns.dec)
    if any(v is None for v in (semimajor, semiminor, posang, ra0, dec0)):
        notes.append(f"{catalog.release} has no 95% error ellipse (Conf_95_SemiMajor / SemiMinor / PosAng) or position: "
                     "no pulsar or counterpart was looked for inside one")
        semimajor = semiminor = posang = ra0 = dec0 = np.full(catalog.n_rows, np.nan)
    without = int((~(np.isfinite(semimajor[rows]) & (semimajor[rows] > 0))).sum())
    if without:
        notes.append(f"{without} of the {rows.size} source(s) have no 95% ellipse (extended sources among them): no "
                     "pulsar or counterpart was looked for inside theirs")
    sub = lambda v: v[rows]  # noqa: E731

    # known pulsars
    table = None
    if pulsars is None:
        notes.append("no pulsar catalogue was checked (pulsars=None): known pulsars inside the ellipses are not "
                     "looked for")
    else:
        table = pulsars if isinstance(pulsars, pd.DataFrame) else read_psrcat(pulsars)
        inside = positions_inside(sub(ra0), sub(dec0), sub(semimajor), sub(semiminor), sub(posang),
                                  table["RAJ2000"].to_numpy(float), table["DEJ2000"].to_numpy(float))
        names_psr = ("PSR " + table["PSRJ"].astype(str)).to_numpy()
        period = table["P0"].to_numpy(float) if "P0" in table else np.full(len(table), np.nan)
        listed, count, nearest = np.full(catalog.n_rows, "", dtype=object), np.zeros(catalog.n_rows, dtype=np.int64), \
            np.full(catalog.n_rows, np.nan)
        for i, hits in zip(rows, inside):
            if not hits:
                continue
            listed[i] = "; ".join(names_psr[j] for j, _ in hits)
            count[i], nearest[i] = len(hits), hits[0][1]
            j, separation = hits[0]
            code = "msp" if period[j] < MSP_PERIOD else "psr"
            evidence[i].append(((weak(code), position_step), code, names_psr[j],
                                f"ATNF pulsar {names_psr[j]} {separation:.3f} deg inside the 95% ellipse", "ATNF"))
        out.update(ATNF_pulsars=listed.astype(str), ATNF_n=count, ATNF_sep_deg=nearest)

    # other sources' counterparts
    cra, cdec = _floats(catalog, catalog.columns.counterpart_ra), _floats(catalog, catalog.columns.counterpart_dec)
    neighbours = {column: np.full(catalog.n_rows, "", dtype=object) for column in _NEIGHBOUR_COLUMNS[:3]}
    neighbours["neighbour_sep_deg"] = np.full(catalog.n_rows, np.nan)
    if cra is None or cdec is None:
        notes.append(f"{catalog.release} has no counterpart positions (RA_Counterpart / DEC_Counterpart): other "
                     "sources' counterparts inside the ellipses are not looked for")
    else:
        placed = (class1 != "") & np.isfinite(cra) & np.isfinite(cdec)
        index = np.nonzero(placed)[0]
        inside = positions_inside(sub(ra0), sub(dec0), sub(semimajor), sub(semiminor), sub(posang), cra[index],
                                  cdec[index])
        for i, hits in zip(rows, inside):
            hits = [(int(index[j]), s) for j, s in hits if index[j] != i]
            if not hits:
                continue
            neighbours["neighbour_sources"][i] = "; ".join(f"{catalog.names[k]} ({class1[k]}, {assoc1[k]})"
                                                           for k, _ in hits)
            k, separation = hits[0]
            neighbours["neighbour_class"][i], neighbours["neighbour_assoc"][i] = class1[k], assoc1[k]
            neighbours["neighbour_sep_deg"][i] = separation
            words = CLASS_WORDS.get(class1[k], class1[k])
            evidence[i].append(((weak(class1[k]), position_step + 1), class1[k], assoc1[k],
                                f"{words} {assoc1[k]} ({catalog.names[k]}) {separation:.3f} deg inside the 95% "
                                "ellipse", "neighbour"))
    out.update({k: v.astype(str) if v.dtype == object else v for k, v in neighbours.items()})

    summary = np.full((catalog.n_rows, 4), "", dtype=object)
    for i in rows:
        pieces = evidence[i]
        associated = [p for p in pieces if p[4] not in ("ATNF", "neighbour") and p[0][0] < _WEAK["unk"]]
        if associated:  # an association (bcu included): a coincidence in position does not overrule it
            pieces = [p for p in pieces if p[4] not in ("ATNF", "neighbour")]
        summary[i] = _summary(pieces)
    for k, column in enumerate(_SUMMARY_COLUMNS):
        out[column] = summary[:, k].astype(str)

    frame = pd.DataFrame({key: np.asarray(value)[rows] for key, value in out.items()})
    frame.attrs.update(catalog=catalog.release, releases=checked, notes=notes,
                       pulsar_catalogue=None if table is None else {"file": table.attrs.get("file", ""),
                                                                    "version": table.attrs.get("version", "")})
    return frame

"""What an observer needs to point at a source: the catalog columns every table of sources carries.

A table that names sources (classifications, follow-up lists, active-learning queries) is a
target list: it carries the position, the 95% error ellipse, the counterpart (name, position,
association probabilities), the significance, the flux, the analysis flags (as the bit mask and in
words, from the release record's ``flag_meanings``) and the extended source's template, with units.  `TARGET_COLUMNS` names the output columns, their
units and meanings; the catalog column behind each is the release record's (`Columns`, by role:
`gpal.catalogs.releases`), so a release with other names needs no edit here; `target_columns`
reads them for given source names.

Fallback for a layout that lacks a column: a number is NaN (a table writer derives a missing
``RA`` / ``DEC`` from ``GLON`` / ``GLAT``, and ``GLON`` / ``GLAT`` are derived here from the catalog's
``RA`` / ``DEC`` where it has those but not these; 3FGL gives no counterpart position or association
probability: NaN), a name is empty (``ASSOC1``, ``Extended_Source_Name``), ``Flags`` is
-1 ("not given") with ``Flag_Words`` empty, and ``extended`` is read from the name (the 3FGL / 4FGL
convention: an extended source's name ends in ``e``).  Float32 values are given at the digits the catalog
wrote (0.0983, not 0.09830000251531601), as float64.
"""

from __future__ import annotations

import functools
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from gpal.catalogs.catalog import text_values
from gpal.warning_filters import changed_filters

__all__ = ["EXTENDED_FIELD_COLUMNS", "FLAGS_NOT_GIVEN", "SEXAGESIMAL_COLUMNS", "TARGET_COLUMNS", "flag_legend", "flag_words", "target_columns"]

#: Output column -> (role of its catalog column in the release record's `Columns`, unit, description).
#: Units are astropy strings.
TARGET_COLUMNS: dict[str, tuple[str, str | None, str]] = {
    "GLON": ("glon", "deg", "Galactic longitude"),
    "GLAT": ("glat", "deg", "Galactic latitude"),
    "RA": ("ra", "deg", "right ascension (J2000) of the catalog position"),
    "DEC": ("dec", "deg", "declination (J2000) of the catalog position"),
    "Conf_95_SemiMajor": ("conf95_semimajor", "deg", "semi-major axis of the 95% position error ellipse"),
    "Conf_95_SemiMinor": ("conf95_semiminor", "deg", "semi-minor axis of the 95% position error ellipse"),
    "Conf_95_PosAng": ("conf95_posang", "deg", "position angle of the 95% ellipse's major axis, east of north"),
    "ASSOC1": ("assoc1", None, "the catalog's most probable counterpart (empty: none)"),
    "CLASS2": ("class2", None, "the catalog's CLASS2 code, the class of ASSOC2 (FL16Y gives it where CLASS1 is empty)"),
    "ASSOC2": ("assoc2", None, "the catalog's second counterpart, its only one where ASSOC1 is empty"),
    "RA_Counterpart": ("counterpart_ra", "deg", "right ascension (J2000) of the counterpart ASSOC1 (NaN: none given)"),
    "DEC_Counterpart": ("counterpart_dec", "deg", "declination (J2000) of the counterpart ASSOC1 (NaN: none given)"),
    "ASSOC_PROB_BAY": ("assoc_prob_bay", None, "association probability of the counterpart (ASSOC1, or ASSOC2 where ASSOC1 is "
                                         "empty), Bayesian method (NaN: none given)"),
    "ASSOC_PROB_LR": ("assoc_prob_lr", None, "association probability of the counterpart (ASSOC1, or ASSOC2 where ASSOC1 is "
                                       "empty), likelihood-ratio method (NaN: none given)"),
    "Signif_Avg": ("significance", None, "detection significance in sigma over the catalog's time range"),
    "Flux1000": ("flux", "ph cm-2 s-1", "photon flux from 1 to 100 GeV"),
    "Signif_Curvature": ("curvature_significance", None, "significance (sigma) of the spectrum's curvature "
                                                         "(4FGL LP_SigCurv, 3FGL Signif_Curve)"),
    "Peak_Energy": ("peak_energy", "MeV", "energy of the LogParabola's nu F_nu peak (LP_EPeak; NaN: none given)"),
    "Variability_Index": ("variability", None, "the catalog's variability index (a chi-square over its light curve)"),
    "Flags": ("flags", None, "the catalog's analysis flags (bit mask; 0: no caveat; -1: the catalog has no Flags)"),
    "Flag_Words": ("flags", None, "the Flags in words, 'n: meaning' per flag set, '; '-separated (legend: the FLAGn "
                                  "keywords; empty: no flag, or no Flags column)"),
    "extended": ("extended_name", None, "an extended source (the catalog names its spatial template)"),
    "Extended_Source_Name": ("extended_name", None, "the extended source's spatial template (empty: a point source)"),
}
#: ``Flags`` of a source whose catalog has no such column.
FLAGS_NOT_GIVEN = -1


def _shortest(values: Any) -> np.ndarray:
    """Numbers as float64; float32 ones at the decimal digits that round-trip them (what the catalog wrote)."""
    filled = values.filled(np.nan) if hasattr(values, "filled") else values
    array = np.asarray(filled)
    if array.dtype.kind == "f" and array.dtype.itemsize == 4:  # of either byte order (FITS is big-endian)
        return np.asarray(array.astype(str), dtype=np.float64)
    return np.asarray(array, dtype=np.float64)


def flag_words(flags: Any, meanings: Mapping[int, str]) -> np.ndarray:
    """Each ``Flags`` bit mask in words: 'n: meaning' per flag set, '; '-separated ('' for 0 or -1, not given); a
    flag the release does not document reads 'n: undocumented'.

    Returns
    -------
    numpy.ndarray
        (n,) strings.
    """
    out = []
    for value in np.asarray(flags, dtype=np.int64):
        if value <= 0:
            out.append("")
            continue
        set_flags = [n for n in range(1, 33) if value >> (n - 1) & 1]
        out.append("; ".join(f"{n}: {meanings.get(n, 'undocumented')}" for n in set_flags))
    return np.asarray(out, dtype=object)


def flag_legend(meanings: Mapping[int, str]) -> dict[str, str]:
    """The table keywords explaining the flags: ``FLAG<n>`` -> meaning, in flag order."""
    return {f"FLAG{n}": meanings[n] for n in sorted(meanings)}


def target_columns(catalog: Any, ids: Sequence[str]) -> pd.DataFrame:
    """The `TARGET_COLUMNS` of the catalog rows named ``ids`` (a `gpal.catalogs.Catalog`), in that order.

    A name the catalog lacks is a ``KeyError`` naming it; a column the layout lacks takes the
    fallback of this module's docstring.

    Returns
    -------
    pandas.DataFrame
        One row per id, ``Source_Name`` then the `TARGET_COLUMNS` in their order.
    """
    table = catalog.table
    row = {name: i for i, name in enumerate(catalog.names)}
    missing = [name for name in ids if name not in row]
    if missing:
        raise KeyError(f"source(s) {missing[:5]} are not in the catalog {catalog.path.name}")
    rows = np.array([row[name] for name in ids], dtype=np.int64)
    out = pd.DataFrame({"Source_Name": list(ids)})
    for name, (role, _, _) in TARGET_COLUMNS.items():
        column = getattr(catalog.columns, role)
        have = column is not None and column in table.colnames
        if name in ("ASSOC1", "CLASS2", "ASSOC2", "Extended_Source_Name"):
            out[name] = text_values(table[column])[rows] if have else ""
        elif name == "Flags":
            out[name] = np.asarray(table[column], dtype=np.int64)[rows] if have else FLAGS_NOT_GIVEN
        elif name == "Flag_Words":
            out[name] = flag_words(out["Flags"], catalog.record.flag_meanings)
        elif name == "extended":
            out[name] = (text_values(table[column])[rows] != "") if have else np.char.endswith(
                np.asarray(list(ids), dtype=str), "e")
        else:
            out[name] = _shortest(table[column])[rows] if have else np.nan
    return _with_extended_fields(_with_sexagesimal(_with_galactic(out)), catalog)


#: The sexagesimal position columns an observer types into a telescope's tool: name -> (unit, description).
SEXAGESIMAL_COLUMNS = {
    "RA_hms": (None, "right ascension (J2000) of the catalog position, hh:mm:ss.ss"),
    "DEC_dms": (None, "declination (J2000) of the catalog position, +dd:mm:ss.s"),
    "RA_Counterpart_hms": (None, "right ascension (J2000) of the counterpart ASSOC1, hh:mm:ss.ss: where a "
                                 "spectrograph points (empty: none given)"),
    "DEC_Counterpart_dms": (None, "declination (J2000) of the counterpart ASSOC1, +dd:mm:ss.s (empty: none given)"),
}
#: Each sexagesimal pair -> the degree columns it writes out, the pair placed after the second.
_SEXAGESIMAL_OF = {("RA_hms", "DEC_dms"): ("RA", "DEC"),
                   ("RA_Counterpart_hms", "DEC_Counterpart_dms"): ("RA_Counterpart", "DEC_Counterpart")}


#: The column naming the extended sources whose spatial model covers a source's position: name -> (unit, description).
EXTENDED_FIELD_COLUMNS = {
    "Inside_Extended": (None, "the extended sources whose spatial model (its extent ellipse) covers the position, "
                              "'; '-separated; a point source there may be a piece of it (empty: none, or the catalog "
                              "lists no extended sources)"),
}
#: The catalog HDU that lists the extended sources' spatial models.
EXTENDED_HDU = "ExtendedSources"


def _with_extended_fields(out: pd.DataFrame, catalog: Any) -> pd.DataFrame:
    """``Inside_Extended`` after ``Extended_Source_Name``: the extended sources whose extent ellipse
    (``Model_SemiMajor``, ``Model_SemiMinor``, ``Model_PosAng`` about ``RAJ2000`` / ``DEJ2000`` of the catalog's
    `EXTENDED_HDU`) holds each point source's position.  A catalog without that HDU or those columns: empty."""
    from gpal.catalogs.error_ellipses import positions_inside

    inside = np.full(len(out), "", dtype=object)
    models = _extended_models(catalog)
    if models is not None and len(models):
        point = ~out["extended"].to_numpy(bool)
        found = positions_inside(*(np.asarray(models[c], dtype=np.float64) for c in
                                   ("RAJ2000", "DEJ2000", "Model_SemiMajor", "Model_SemiMinor", "Model_PosAng")),
                                 out["RA"].to_numpy(np.float64), out["DEC"].to_numpy(np.float64))
        names = text_values(models["Source_Name"])
        covering: dict[int, list[str]] = {}
        for k, hits in enumerate(found):
            for row, _ in hits:
                covering.setdefault(row, []).append(str(names[k]))
        for row, fields in covering.items():
            if point[row]:
                inside[row] = "; ".join(fields)
    position = out.columns.get_loc("Extended_Source_Name") + 1
    out.insert(position, "Inside_Extended", inside)
    return out


def _extended_models(catalog: Any) -> Any:
    """The catalog file's extended-source models (an astropy Table, not to be changed), or None where it has none
    to read."""
    path = getattr(catalog, "path", None)
    return None if path is None else _models_in(str(path))


@functools.lru_cache(maxsize=8)
def _models_in(path: str) -> Any:
    """`_extended_models` of one file, read once: every table of a run asks (reading the HDU takes a second)."""
    import warnings

    from astropy.table import Table

    needed = {"Source_Name", "RAJ2000", "DEJ2000", "Model_SemiMajor", "Model_SemiMinor", "Model_PosAng"}
    try:
        with changed_filters():
            warnings.simplefilter("ignore")
            models = Table.read(path, hdu=EXTENDED_HDU)
    except (KeyError, OSError, ValueError):
        return None
    return models if needed <= set(models.colnames) else None


def _with_sexagesimal(out: pd.DataFrame) -> pd.DataFrame:
    """``RA_hms`` / ``DEC_dms`` beside ``RA`` / ``DEC``, and the counterpart's beside ``RA_Counterpart`` /
    ``DEC_Counterpart`` (`_SEXAGESIMAL_OF`; empty where the position is unknown)."""
    from astropy import units as u
    from astropy.coordinates import Angle

    for (ra_name, dec_name), (ra_deg, dec_deg) in _SEXAGESIMAL_OF.items():
        known = out[ra_deg].notna().to_numpy() & out[dec_deg].notna().to_numpy()
        ra, dec = np.full(len(out), "", dtype=object), np.full(len(out), "", dtype=object)
        if known.any():
            ra[known] = Angle(out.loc[known, ra_deg].to_numpy(np.float64) * u.deg).to_string(
                unit=u.hour, sep=":", precision=2, pad=True)
            dec[known] = Angle(out.loc[known, dec_deg].to_numpy(np.float64) * u.deg).to_string(
                unit=u.deg, sep=":", precision=1, pad=True, alwayssign=True)
        position = out.columns.get_loc(dec_deg) + 1
        out.insert(position, dec_name, dec)
        out.insert(position, ra_name, ra)
    return out


def _with_galactic(out: pd.DataFrame) -> pd.DataFrame:
    """``GLON`` / ``GLAT`` from ``RA`` / ``DEC`` (J2000, taken as ICRS: within milliarcseconds) where only those are
    known: a table of sources always says where they are in both frames when the catalog says it in one."""
    derive = (out["GLON"].isna() | out["GLAT"].isna()) & out["RA"].notna() & out["DEC"].notna()
    if derive.any():
        from astropy import units as u
        from astropy.coordinates import SkyCoord

        sky = SkyCoord(ra=out.loc[derive, "RA"].to_numpy() * u.deg, dec=out.loc[derive, "DEC"].to_numpy() * u.deg,
                       frame="icrs").galactic
        out.loc[derive, "GLON"], out.loc[derive, "GLAT"] = sky.l.deg, sky.b.deg
    return out

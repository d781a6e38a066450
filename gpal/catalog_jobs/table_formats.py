"""A table of sources as the text of each file format: the ECSV twin, the FITS HDU, the AAS MRT and the VOTable.

Every format carries the same description of the table, stated here once: each column's unit and meaning
(`COLUMNS`, a ``p_<class>`` column's from its name) and each header keyword's (`KEYWORDS`).  The writers make the
file's content in memory from the rows and keywords (`gpal.catalog_jobs.tables` builds those, picks the format by
the file's suffix and writes the files); the ECSV header is astropy's, its rows pandas', so a table of 10^6 sources
is written in blocks.
"""

from __future__ import annotations

import io
import json
import os
import re
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pandas as pd

from gpal.catalog_jobs.candidates import CUTS
from gpal.catalog_jobs.proba_columns import MC_ERROR_COLUMN, classes_from_columns
from gpal.catalogs.lac import LAC_TABLE_COLUMNS
from gpal.catalogs.targets import EXTENDED_FIELD_COLUMNS, SEXAGESIMAL_COLUMNS, TARGET_COLUMNS
from gpal.estimators.outliers import OOD_FALSE_POSITIVE_RATE
from gpal.files import write_text_atomic

__all__ = ["COLUMNS", "EXTENDED", "EXTNAME", "KEYWORDS", "TWIN_SUFFIX", "write_ecsv_twin"]

#: The FITS file's table HDU.
EXTNAME = "CLASSIFICATIONS"

#: The ECSV twin of a CSV table: same stem, this suffix.
TWIN_SUFFIX = ".ecsv"

#: Header keywords: what each says (the FITS card comment).  Values are strings unless typed below.
KEYWORDS = {
    "CREATOR": "software that wrote this table",
    "DATE": "when the table was written (UTC)",
    "CATALOG": "release of the classified catalog",
    "CATVER": "version of the classified catalog",
    "CATFILE": "file of the classified catalog",
    "SELECT": "which sources were classified",
    "NSOURCES": "number of rows",
    "DROPPED": "selected sources left out for NaN values",
    "REPAIRED": "missing errors repaired (read as exact or given the population's error), per error column",
    "MODEL": "trained-model folder",
    "MODELFMT": "saved-model format and version",
    "CLASSES": "class spec of the model",
    "FEATURES": "the model's input features",
    "TRAINCAT": "training catalog release and version",
    "TRAINSEL": "training selection",
    "FITCONF": "estimator settings",
    "KNOWNCLS": "what the catalog label changed (bcu: a blazar)",
    "KNOWNFROM": "where known_class was looked up (the catalog's CLASS2, earlier releases, a pulsar catalogue)",
    "LACFROM": "where the LAC_ columns (the counterpart's SED) came from: 4LAC-DR3 and how many sources it has",
    "BCUSPLIT": "how the bcu's p_bll and p_fsrq were split by the blazar-type model with 4LAC-DR3's SED peaks",
    "POOLMIX": "class mix the unassociated were moved to (pool prior)",
    "TARGET": "class the information column is about (empty: all)",
    "MINSIG": "Signif_Avg below which no follow-up list holds a source",
    "XFLAGS": "catalog Flags (numbers) that leave a source out of the follow-up lists",
    **{cut.keyword: cut.comment for cut in CUTS.values()},
    "LIST": "which source list this is",
    "EXPECTED": "expected number of class members in this list (sum of its probabilities)",
    "EXPLOW": "lower end of the 95% interval of the number of class members",
    "EXPHIGH": "upper end of the 95% interval of the number of class members",
    "ORDER": "how the list is ordered",
    "DECKEPT": "declinations (deg) the target list keeps: CDEC narrowed to the sky of CVISIBLE's telescope",
    "LATERYLD": "how far EXPECTED held: this class's lists' expected over found members on later labels",
    "LABELS": "the file whose label column the observers fill in",
    "FORMATS": "the formats each table is also written in beside the CSV (mrt, votable)",
}

#: The legend of the Flags column: ``FLAG<n>`` -> what flag n means (`gpal.catalogs.targets.flag_legend`).
_FLAG_KEY = re.compile(r"FLAG\d{1,2}")

_RECORD_KEYS = ("TRAINSEL", "FITCONF")  # nested records: YAML in ECSV, one HIERARCH card per value in FITS

#: ``predicted_class`` of an extended source: the trained point-source classes never name one.
EXTENDED = "extended"

#: Units and descriptions of the fixed columns (``p_<class>`` columns are added per table).
COLUMNS = {
    "Source_Name": (None, "the catalog's source name (4FGL J..., FL16Y J...), the key to the catalog"),
    "CLASS1": (None, "the catalog's CLASS1 code (empty: unassociated)"),
    "predicted_class": (None, f"the most probable class; {EXTENDED!r} for an extended source, which the point-source "
                              "classes do not describe (its p_<class> columns say what it resembles)"),
    "entropy": ("nat", "predictive entropy in nats, 0 (certain) to ln(number of classes)"),
    MC_ERROR_COLUMN: (None, "largest Monte Carlo standard error of the row's probabilities"),
    "information": ("nat", "follow-up score: mutual information between the source's class and the model (BALD), "
                           "what its label would teach the model"),
    "ood_score": (None, "outlier score: squared distance of the measurement from the training population, in units "
                        "of its spread plus the source's error bars (higher = less like any training source)"),
    "ood": (None, f"none of these: ood_score above the threshold that flags {OOD_FALSE_POSITIVE_RATE:.0%} of held-out "
                  "sources of the trained classes"),
    **{name: (unit, description) for name, (_, unit, description) in TARGET_COLUMNS.items()},
    **SEXAGESIMAL_COLUMNS,
    **EXTENDED_FIELD_COLUMNS,
    "RA": ("deg", "right ascension (J2000): the catalog's RAJ2000, or from GLON and GLAT where it has none"),
    "DEC": ("deg", "declination (J2000): the catalog's DEJ2000, or from GLON and GLAT where it has none"),
    "rank": (None, "the source's place in its list, 1 first"),
    "score": (None, "gpal active's acquisition score at query time (higher: asked first)"),
    "known_class": (None, "the class the sky already gives the source beyond its CLASS1 (CLASS2, an earlier "
                          "release, a known pulsar inside the 95% ellipse; empty: none): such a source is in no "
                          "target list but in known_sources.csv, unless the class is unk (a counterpart of unknown "
                          "nature names no class)"),
    "known_as": (None, "the known object's name (empty: none)"),
    "known_reason": (None, "how the class is known, in words (empty: not known)"),
    "ATNF_pulsars": (None, "the ATNF Pulsar Catalogue pulsars inside the 95% ellipse, nearest first (empty: none)"),
    **{name: (unit, description) for name, (_, unit, description) in LAC_TABLE_COLUMNS.items()},
    "caveats": (None, "why the source may not be what it seems: the catalog's doubtful flags in words, the Galactic "
                      "plane, an extended source's model covering it, an ATNF pulsar inside the 95% ellipse "
                      "(empty: none)"),
}

#: FITS has no unit for nats; a FITS reader would warn on it, so there it lives in TCOMM only.
_FITS_UNITS = {"deg", "ph cm-2 s-1"}


def _column_info(name: str) -> tuple[str | None, str]:
    classes = classes_from_columns([name])
    if classes:
        return None, f"predicted probability of class {classes[0]}"
    return COLUMNS.get(name, (None, ""))


def _astropy_table(frame: pd.DataFrame, meta: Mapping[str, Any]) -> Any:
    from astropy.table import Table

    out = Table.from_pandas(frame)
    for column in out.columns.values():
        unit, column.description = _column_info(column.name)
        column.unit = unit
    out.meta.update(_ordered(meta))
    return out


def _ordered(meta: Mapping[str, Any]) -> dict[str, Any]:
    """Keywords in the order of `KEYWORDS`, any others after them."""
    return {**{k: meta[k] for k in KEYWORDS if k in meta}, **meta}


def _fits_hdu(frame: pd.DataFrame, meta: Mapping[str, Any]) -> Any:
    """One BINTABLE HDU: TUNIT and TCOMM per column, one typed card per keyword or record value."""
    from astropy.io import fits
    from astropy.table import Table

    table = Table.from_pandas(frame)
    for column in table.columns.values():
        unit = _column_info(column.name)[0]
        column.unit = unit if unit in _FITS_UNITS else None
    hdu = fits.table_to_hdu(table)
    header = hdu.header
    for i, name in enumerate(frame.columns, start=1):
        description = _column_info(name)[1]
        if description:
            header.insert(f"TFORM{i}", (f"TCOMM{i}", description), after=True)
    header["EXTNAME"] = EXTNAME
    for key, value in _ordered(meta).items():
        if key in _RECORD_KEYS:
            for path, item in _flatten(value):
                header[f"HIERARCH {key}.{path}"] = _fits_text(json.dumps(item) if isinstance(item, list) else item)
        else:
            comment = "what this analysis flag of Flags means" if _FLAG_KEY.fullmatch(key) else KEYWORDS.get(key, "")
            header[key] = (_fits_text(value), comment)
    return hdu


def _fits_text(value: Any) -> Any:
    """A header value as FITS allows it (and an MRT cell), printable ASCII: any other character (a path through a
    folder named ``résultats``) as its Python escape, ``\\xe9``; the CSV, ECSV and VOTable keep it as written."""
    if not isinstance(value, str):
        return value
    return "".join(c if " " <= c <= "~" else c.encode("unicode_escape").decode("ascii") for c in value)


def _flatten(record: Mapping[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    """Nested dict -> [("a.b", value)]; lists stay whole (written as JSON)."""
    items: list[tuple[str, Any]] = []
    for key, value in record.items():
        if isinstance(value, dict) and value:
            items += _flatten(value, f"{prefix}{key}.")
        else:
            items.append((f"{prefix}{key}", value))
    return items


#: What a boolean column's explanation adds in an MRT, which has no logical type: its values are written as 1 / 0.
_MRT_BOOLEAN = " (1: true, 0: false)"


def _unit_in(unit: Any, fmt: str) -> Any:
    """``unit`` where astropy writes and reads it back in the unit syntax ``fmt`` (``cds`` for MRT, ``vounit`` for
    VOTable), else None: a unit the format has no name for (the nat of ``entropy``, whose description names it)
    would make the file's reader warn or fail."""
    if unit is None:
        return None
    from astropy import units as u

    try:
        u.Unit(unit.to_string(fmt), format=fmt)
    except (ValueError, TypeError):
        return None
    return unit


def _exact_float_format(values: np.ndarray) -> str:
    """A printf format writing each of the finite ``values`` in one notation, with the digits it needs to read back
    as the same float: fixed-point with the most decimals any value's shortest form has, or (where one needs an
    exponent: 1e-300, 1.2e-10) scientific with the most significant digits.

    astropy's MRT writer picks a column's digits from its first values and writes 1/3 beside 1e-300 as ``3e-01``;
    with this format nothing a table holds is rounded."""
    shortest = [repr(float(v)) for v in values]
    if not any("e" in text for text in shortest):
        return f"%.{max([len(text.partition('.')[2]) for text in shortest] or [1])}f"
    digits = [len(np.format_float_scientific(v, unique=True).partition("e")[0].lstrip("-").replace(".", ""))
              for v in values]
    return f"%.{max(max(digits) - 1, 1)}e"


def _mrt_text(frame: pd.DataFrame) -> str:
    """The AAS MRT of ``frame`` (astropy's ``ascii.mrt`` writer): the byte-by-byte description, each column's CDS
    unit (`_unit_in`) and explanation (`COLUMNS`), then the rows.

    What the format has no room for is written as it allows: text as printable ASCII (`_fits_text`), a missing or
    non-finite number as a blank cell (read back as masked), a boolean as 1 / 0 (`_MRT_BOOLEAN`), every float at
    the digits that read back to it (`_exact_float_format`).  The table's keywords are not in an MRT (astropy
    writes its Title / Authors lines empty, for the journal to fill); the ECSV and VOTable keep them."""
    from astropy.io import ascii
    from astropy.table import Column, MaskedColumn

    if frame.empty:
        raise ValueError("an AAS MRT holds at least one row (astropy's writer refuses an empty table); this table "
                         "has none")
    table = _astropy_table(frame, {})
    formats = {}
    for name in table.colnames:
        column = table[name]
        unit, description = _unit_in(column.unit, "cds"), column.description or ""
        if column.dtype.kind == "b":
            column = Column(np.asarray(column.filled(False) if hasattr(column, "filled") else column, dtype=np.uint8))
            description += _MRT_BOOLEAN
        elif column.dtype.kind == "f":
            values = np.asarray(column.filled(np.nan) if hasattr(column, "filled") else column, dtype=np.float64)
            finite = np.isfinite(values)
            column = Column(values) if finite.all() else MaskedColumn(values, mask=~finite)  # "?": may be blank
            if finite.any():  # an all-blank column keeps astropy's own width
                formats[name] = _exact_float_format(values[finite])
        elif column.dtype.kind in "USO":
            text = column.filled("") if hasattr(column, "filled") else column
            column = Column([_fits_text(str(value)) for value in np.asarray(text, dtype=object)], dtype=str)
        if column.dtype.kind in "iuf" and np.ma.getmaskarray(column).all():
            formats[name] = "%d" if column.dtype.kind in "iu" else "%.1f"  # one blank byte: see below
        column.unit, column.description = unit, _fits_text(description)
        table[name] = column
    out = io.StringIO()
    # A missing value is one blank (astropy's default, no character, leaves a column of none, RA_Counterpart of a
    # list without counterparts, narrower than the width its byte-by-byte line declares, shifting every column
    # after it); such a column's format gives it that one byte.
    table.write(out, format="ascii.mrt", formats=formats, fill_values=[(ascii.masked, " ")])
    return out.getvalue()


def _votable_bytes(frame: pd.DataFrame, meta: Mapping[str, Any]) -> bytes:
    """The VOTable of ``frame``: each column's unit (where VOUnit names it, `_unit_in`) and description, and the
    keywords as the table's ``INFO`` elements (records as JSON), each with what it says (`KEYWORDS`)."""
    from astropy.io.votable import from_table
    from astropy.io.votable.tree import Info

    table = _astropy_table(frame, {})
    for column in table.columns.values():
        column.unit = _unit_in(column.unit, "vounit")
    votable = from_table(table)
    infos = votable.get_first_table().infos
    for key, value in _ordered(meta).items():
        text = json.dumps(value, sort_keys=True) if isinstance(value, (dict, list)) else str(value)
        info = Info(name=key, value=text)
        info.content = "what this analysis flag of Flags means" if _FLAG_KEY.fullmatch(key) else KEYWORDS.get(key, "")
        infos.append(info)
    out = io.BytesIO()
    votable.to_xml(out)
    return out.getvalue()


def write_ecsv_twin(frame: pd.DataFrame, path: str | os.PathLike, meta: Mapping[str, Any]) -> Path:
    """Write the ECSV twin of the CSV ``path`` (same stem, `TWIN_SUFFIX`), atomically: the same rows with each
    column's unit and description (`COLUMNS`, ``p_<class>``), and ``meta`` as its keywords.

    The CSV stays plain for ``pandas.read_csv``; the twin is what carries the units.

    Returns
    -------
    pathlib.Path
        The twin's path.
    """
    twin = Path(path).with_suffix(TWIN_SUFFIX)
    write_text_atomic(twin, _ecsv_text(frame, meta))
    return twin


def _ecsv_text(frame: pd.DataFrame, meta: Mapping[str, Any]) -> str:
    """ECSV of ``frame`` with units and keywords (``meta``): astropy writes the header, pandas the rows.

    astropy formats each cell in Python (about 1 s for the main job's 3615-row table, masked columns
    most); pandas writes the same cells at once.  Every string is quoted and a missing value of any
    column is ``""``, which astropy's reader masks as it masks its own writer's empty cells: the file
    reads back to the same values, masks, types, units and keywords (tests/catalog_jobs/test_tables.py).
    A column astropy keeps as Python objects (strings with a None among them) is written as JSON, so a
    table holding one is left to astropy.
    """
    text = io.StringIO()
    _write_ecsv(text, frame, meta)
    return text.getvalue()


#: Rows converted to astropy at once to learn the columns' types for the ECSV header (`_ecsv_header_table`).
_HEADER_ROWS = 50000


def _ecsv_header_table(frame: pd.DataFrame, meta: Mapping[str, Any]) -> Any:
    """The astropy table (no rows) whose ECSV header heads ``frame``'s rows, or None where a block of rows holds a
    column astropy keeps as Python objects (`_ecsv_text`: the table is then astropy's to write).

    Made block by block: the whole table in astropy's fixed-width strings (a column of reasons in words, 4 bytes a
    character of its longest) was GiBs for 10^6 rows; a header names each column's type, never its width."""
    first = None
    for start in range(0, max(len(frame), 1), _HEADER_ROWS):
        table = _astropy_table(frame.iloc[start:start + _HEADER_ROWS], meta)
        if any(column.dtype.kind not in "biufU" for column in table.columns.values()):
            return None
        first = table[:0] if first is None else first
    return first


def _write_ecsv(out: Any, frame: pd.DataFrame, meta: Mapping[str, Any]) -> None:
    """`_ecsv_text` written to the text stream ``out`` as it is made (the rows in pandas' blocks)."""
    import csv

    header = _ecsv_header_table(frame, meta)
    if header is None:
        _astropy_table(frame, meta).write(out, format="ascii.ecsv")
        return
    header.write(out, format="ascii.ecsv")  # the header and the column names' line
    frame.to_csv(out, sep=" ", header=False, index=False, quoting=csv.QUOTE_NONNUMERIC, na_rep="", lineterminator="\n")


def _column_types(table: Any) -> list[tuple[str, str]]:
    """Each column's name and type as an ECSV header writes them (text of any width is one type)."""
    return [(name, "str" if table[name].dtype.kind == "U" else str(table[name].dtype)) for name in table.colnames]

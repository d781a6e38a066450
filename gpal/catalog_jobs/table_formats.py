"""A table of sources as the text of each file format: the ECSV twin, the FITS HDU, the AAS MRT and the VOTable.

Every format carries the same description of the table, stated here once: each column's unit, meaning, MRT
format and UCD (`COLUMNS`, a ``p_<class>`` column's from its name) and each header keyword's (`KEYWORDS`).  The
writers make the file's content in memory from the rows and keywords (`gpal.catalog_jobs.tables` builds those, picks
the format by the file's suffix and writes the files); the ECSV header is astropy's, its rows pandas', so a table of
10^6 sources is written in blocks.
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import os
import re
import warnings
from pathlib import Path
from typing import Any, Iterator, Mapping, NamedTuple

import numpy as np
import pandas as pd

from gpal.catalog_jobs.candidates import CUTS
from gpal.catalog_jobs.proba_columns import MC_ERROR_COLUMN, classes_from_columns
from gpal.catalogs.lac import LAC_TABLE_COLUMNS
from gpal.catalogs.targets import EXTENDED_FIELD_COLUMNS, SEXAGESIMAL_COLUMNS, TARGET_COLUMNS
from gpal.estimators.outliers import OOD_FALSE_POSITIVE_RATE
from gpal.files import write_text_atomic
from gpal.warning_filters import changed_filters

__all__ = ["COLUMNS", "ColumnInfo", "EXTENDED", "EXTNAME", "FLAG_KEY", "KEYWORDS", "RECORD_KEYS", "TWIN_SUFFIX",
           "astropy_table", "column_types", "ecsv_header_table", "ecsv_text", "fits_hdu", "keyword_order", "mrt_text",
           "published_keywords", "standard_card_forms",
           "votable_bytes", "write_ecsv", "write_ecsv_twin"]

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
    "LISTORD": "how the target lists are ranked (--order; ORDER states the rule)",
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
FLAG_KEY = re.compile(r"FLAG\d{1,2}")

RECORD_KEYS = ("TRAINSEL", "FITCONF")  # nested records: YAML in ECSV, one HIERARCH card per value in FITS

#: ``predicted_class`` of an extended source: the trained point-source classes never name one.
EXTENDED = "extended"

class ColumnInfo(NamedTuple):
    """What every format says of a column: its unit (as the ECSV writes it), its description, the printf format of
    its MRT cells (a float column; None: every digit the value has) and its VOTable UCD (None: none)."""

    unit: str | None
    description: str
    mrt: str | None = None
    ucd: str | None = None


#: MRT formats and UCDs of the catalog's columns, whose units and descriptions `gpal.catalogs.targets` and
#: `gpal.catalogs.lac` give: the decimals of the LAT catalog's own TDISP (gll_psc_v41: positions and ellipse axes
#: F8.4, Conf_95_PosAng / Signif_Avg / LP_SigCurv F8.3, Flux1000 E10.4, LP_EPeak F10.2, Variability_Index F10.4,
#: ASSOC_PROB_* F6.4; 4LAC-DR3's counterpart positions F8.4), 4LAC's peak frequencies to the 0.001 dex its
#: values carry, its peak energies to 0.1 MeV and redshifts to 4 decimals.
_CATALOG_COLUMNS = {
    "GLON": ("%.4f", "pos.galactic.lon"),
    "GLAT": ("%.4f", "pos.galactic.lat"),
    "Conf_95_SemiMajor": ("%.4f", "phys.angSize.smajAxis;pos.errorEllipse"),
    "Conf_95_SemiMinor": ("%.4f", "phys.angSize.sminAxis;pos.errorEllipse"),
    "Conf_95_PosAng": ("%.3f", "pos.posAng;pos.errorEllipse"),
    # sexagesimal copies of RA and DEC: the same quantity as text, so the same UCD without meta.main
    "RA_hms": (None, "pos.eq.ra"),
    "DEC_dms": (None, "pos.eq.dec"),
    "RA_Counterpart_hms": (None, "pos.eq.ra"),
    "DEC_Counterpart_dms": (None, "pos.eq.dec"),
    "ASSOC1": (None, "meta.id.assoc"),
    "ASSOC2": (None, "meta.id.assoc"),
    "RA_Counterpart": ("%.4f", "pos.eq.ra"),
    "DEC_Counterpart": ("%.4f", "pos.eq.dec"),
    "ASSOC_PROB_BAY": ("%.4f", None),
    "ASSOC_PROB_LR": ("%.4f", None),
    "Signif_Avg": ("%.3f", "stat.snr"),
    "Flux1000": ("%.3e", "phot.flux;em.gamma"),
    "Signif_Curvature": ("%.3f", None),
    "Peak_Energy": ("%.2f", None),
    "Variability_Index": ("%.4f", "src.var.index"),
    "Flags": (None, "meta.code.qual"),
    "LAC_log_nu_syn": ("%.3f", None),
    "LAC_HE_EPeak": ("%.1f", None),
    "LAC_Unc_HE_EPeak": ("%.1f", None),
    "LAC_Redshift": ("%.4f", "src.redshift"),
    "LAC_counterpart": (None, "meta.id.assoc"),
    "LAC_counterpart_RA": ("%.4f", "pos.eq.ra"),
    "LAC_counterpart_DEC": ("%.4f", "pos.eq.dec"),
}

#: The MRT format of a probability (``p_<class>``) and of the scores in nats: the four decimals of the catalog's
#: association probabilities (ASSOC_PROB_* F6.4), finer than the Monte Carlo error (``p_mc_se``) of most rows.
_PROBABILITY = "%.4f"


def _catalog_columns(columns: Mapping[str, tuple[str | None, str]]) -> dict[str, ColumnInfo]:
    """Another module's ``name -> (unit, description)`` with each column's `_CATALOG_COLUMNS` format and UCD."""
    return {name: ColumnInfo(unit, description, *_CATALOG_COLUMNS.get(name, ()))
            for name, (unit, description) in columns.items()}


#: The fixed columns (``p_<class>`` columns are added per table): unit, description, MRT format, UCD.
COLUMNS = {
    "Source_Name": ColumnInfo(None, "the catalog's source name (4FGL J..., FL16Y J...), the key to the catalog",
                              ucd="meta.id;meta.main"),
    "CLASS1": ColumnInfo(None, "the catalog's CLASS1 code (empty: unassociated)", ucd="src.class"),
    "predicted_class": ColumnInfo(None, f"the most probable class; {EXTENDED!r} for an extended source, which the "
                                        "point-source classes do not describe (its p_<class> columns say what it "
                                        "resembles)", ucd="src.class"),
    "entropy": ColumnInfo("nat", "predictive entropy in nats, 0 (certain) to ln(number of classes)", _PROBABILITY),
    MC_ERROR_COLUMN: ColumnInfo(None, "largest Monte Carlo standard error of the row's probabilities", _PROBABILITY),
    "information": ColumnInfo("nat", "follow-up score: mutual information between the source's class and the model "
                                     "(BALD), what its label would teach the model", _PROBABILITY),
    "ood_score": ColumnInfo(None, "outlier score: squared distance of the measurement from the training population, "
                                  "in units of its spread plus the source's error bars (higher = less like any "
                                  "training source)", "%.2f"),
    "ood": ColumnInfo(None, f"none of these: ood_score above the threshold that flags {OOD_FALSE_POSITIVE_RATE:.0%} "
                            "of held-out sources of the trained classes"),
    **_catalog_columns({name: (unit, description) for name, (_, unit, description) in TARGET_COLUMNS.items()}),
    **_catalog_columns(SEXAGESIMAL_COLUMNS),
    **_catalog_columns(EXTENDED_FIELD_COLUMNS),
    "RA": ColumnInfo("deg", "right ascension (J2000): the catalog's RAJ2000, or from GLON and GLAT where it has none",
                     "%.4f", "pos.eq.ra;meta.main"),
    "DEC": ColumnInfo("deg", "declination (J2000): the catalog's DEJ2000, or from GLON and GLAT where it has none",
                      "%.4f", "pos.eq.dec;meta.main"),
    "rank": ColumnInfo(None, "the source's place in its list, 1 first"),
    "score": ColumnInfo(None, "gpal active's acquisition score at query time (higher: asked first)", "%.4e"),
    "known_class": ColumnInfo(None, "the class the sky already gives the source beyond its CLASS1 (CLASS2, an earlier "
                                    "release, a known pulsar inside the 95% ellipse; empty: none): such a source is "
                                    "in no target list but in known_sources.csv, unless the class is unk (a "
                                    "counterpart of unknown nature names no class)"),
    "known_as": ColumnInfo(None, "the known object's name (empty: none)"),
    "known_reason": ColumnInfo(None, "how the class is known, in words (empty: not known)"),
    "ATNF_pulsars": ColumnInfo(None, "the ATNF Pulsar Catalogue pulsars inside the 95% ellipse, nearest first "
                                     "(empty: none)"),
    "typed_before": ColumnInfo(None, "an earlier release that typed the source a BL Lac or an FSRQ where this one "
                                     "calls it a bcu or leaves it unassociated, with the type ('4FGL-DR4 bll'; empty: "
                                     "none)"),
    "section": ColumnInfo(None, "the part of a blazar list the row is ranked in: 'counterpart' (a counterpart to "
                                "take a spectrum of) or 'unassociated' (none yet)"),
    "first_unassociated": ColumnInfo(None, "the oldest release of the unbroken run of releases, ending with this "
                                           "one, that list the source without a class (or with 'unk', a "
                                           "counterpart of unknown type): where it was first listed "
                                           "unassociated (empty: the source has a class)"),
    "unassociated_releases": ColumnInfo(None, "how many releases of that run list it without a class, this one "
                                              "included (0: it has a class)"),
    "named_by": ColumnInfo(None, "the published candidate lists that already named the source (catalogs/README.md; "
                                 "empty: none of the shipped ones)", ucd="meta.note"),
    "unassociated_years": ColumnInfo("yr", "years from the publication of first_unassociated to this release's: how "
                                           "long it has waited for an identification", "%.0f", "time.interval"),
    **_catalog_columns({name: (unit, description) for name, (_, unit, description) in LAC_TABLE_COLUMNS.items()}),
    "caveats": ColumnInfo(None, "why the source may not be what it seems: the catalog's doubtful flags in words, the "
                                "Galactic plane, an extended source's model covering it, an ATNF pulsar inside the "
                                "95% ellipse (empty: none)", ucd="meta.note"),
}

def _column_info(name: str) -> ColumnInfo:
    classes = classes_from_columns([name])
    if classes:
        return ColumnInfo(None, f"predicted probability of class {classes[0]}", _PROBABILITY, "stat.probability")
    return COLUMNS.get(name, ColumnInfo(None, ""))


@functools.lru_cache(maxsize=None)
def _unit(text: str | None) -> Any:
    """A column's unit as astropy reads it from ``text``, once a process: a name astropy does not know ("nat",
    "log10(Hz)") costs it a search of every unit for the error message it then discards, a few ms each column and
    table."""
    from astropy import units

    return None if text is None else units.Unit(text, parse_strict="silent")


def astropy_table(frame: pd.DataFrame, meta: Mapping[str, Any]) -> Any:
    from astropy.table import Table

    out = Table.from_pandas(frame)
    for column in out.columns.values():
        info = _column_info(column.name)
        column.unit, column.description = _unit(info.unit), info.description
    out.meta.update(keyword_order(meta))
    return out


def keyword_order(meta: Mapping[str, Any]) -> dict[str, Any]:
    """Keywords in the order of `KEYWORDS`, any others after them."""
    return {**{k: meta[k] for k in KEYWORDS if k in meta}, **meta}


@contextlib.contextmanager
def standard_card_forms() -> Iterator[None]:
    """Header cards set without astropy's notes that a keyword over 8 characters becomes a HIERARCH card, a long
    value CONTINUE cards, and a comment that no longer fits is cut: the standard's own forms, which every FITS
    reader reads (the run's keywords are such)."""
    from astropy.io.fits.verify import VerifyWarning

    with changed_filters():
        warnings.simplefilter("ignore", VerifyWarning)
        yield


def fits_hdu(frame: pd.DataFrame, meta: Mapping[str, Any]) -> Any:
    """One BINTABLE HDU: TUNIT (where FITS names the unit, `_described`) and TCOMM per column, one typed card per
    keyword or record value."""
    from astropy.io import fits
    from astropy.table import Table

    table = Table.from_pandas(frame)
    descriptions = []
    for column in table.columns.values():
        column.unit, description = _described(_column_info(column.name), "fits")
        descriptions.append(description)
    hdu = fits.table_to_hdu(table)
    header = hdu.header
    for i, description in enumerate(descriptions, start=1):
        if description:
            header.insert(f"TFORM{i}", (f"TCOMM{i}", description), after=True)
    header["EXTNAME"] = EXTNAME
    with standard_card_forms():
        for key, value in keyword_order(meta).items():
            if key in RECORD_KEYS:
                for path, item in _flatten(value):
                    header[f"HIERARCH {key}.{path}"] = _fits_text(json.dumps(item) if isinstance(item, list) else item)
            else:
                comment = "what this analysis flag of Flags means" if FLAG_KEY.fullmatch(key) else KEYWORDS.get(key, "")
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


def _unit_in(unit: str | None, fmt: str) -> Any:
    """The astropy unit ``unit`` (as `COLUMNS` spells it) means, where astropy writes and reads it back in the unit
    syntax ``fmt`` (``cds`` for MRT, ``vounit`` for VOTable, ``fits``), else None: a unit the format has no name
    for (the nat, or a logarithm in VOUnit) would make the file's reader warn or fail, so the description says it
    (`_described`).  ``log10(X)`` is astropy's ``dex(X)``, which CDS writes ``[X]``."""
    if unit is None:
        return None
    from astropy import units as u

    log = re.fullmatch(r"log10\((.+)\)", unit)
    try:
        meant = u.dex(u.Unit(log.group(1))) if log else u.Unit(unit)
        u.Unit(meant.to_string(fmt), format=fmt)
    except (ValueError, TypeError):
        return None
    return meant


def _described(info: ColumnInfo, fmt: str) -> tuple[Any, str]:
    """A column's unit in the syntax ``fmt`` (`_unit_in`) and its description, which names a unit ``fmt`` cannot
    write rather than lose it."""
    unit = _unit_in(info.unit, fmt)
    if info.unit is not None and unit is None:
        return None, f"{info.description} (unit: {info.unit})"
    return unit, info.description


def _exact_float_format(values: np.ndarray) -> str:
    """A printf format writing each of the finite ``values`` in one notation, with the digits it needs to read back
    as the same float: fixed-point with the most decimals any value's shortest form has, or (where one needs an
    exponent: 1e-300, 1.2e-10) scientific with the most significant digits.

    A float column that `COLUMNS` gives no MRT format is written so; astropy's MRT writer picks a column's digits
    from its first values and writes 1/3 beside 1e-300 as ``3e-01``."""
    shortest = [repr(float(v)) for v in values]
    if not any("e" in text for text in shortest):
        return f"%.{max([len(text.partition('.')[2]) for text in shortest] or [1])}f"
    digits = [len(np.format_float_scientific(v, unique=True).partition("e")[0].lstrip("-").replace(".", ""))
              for v in values]
    return f"%.{max(max(digits) - 1, 1)}e"


#: The longest line of an MRT's header (the AAS journals' and CDS's ReadMe width).
_MRT_WIDTH = 80


def mrt_text(frame: pd.DataFrame, meta: Mapping[str, Any]) -> str:
    """The AAS MRT of ``frame`` (astropy's ``ascii.mrt`` writer): the title (`_mrt_title`), the byte-by-byte
    description with each column's CDS unit and explanation (`COLUMNS`, `_described`), the notes (`_mrt_notes`),
    then the rows.  Authors are the paper's, left for the user to fill in.

    What the format has no room for is written as it allows: text as printable ASCII (`_fits_text`), a missing or
    non-finite number as a blank cell (read back as masked), a boolean as 1 / 0 (`_MRT_BOOLEAN`), a float at the
    decimals `COLUMNS` gives it (the CSV keeps every digit) or, without one, at every digit
    (`_exact_float_format`)."""
    from astropy.io import ascii
    from astropy.table import Column, MaskedColumn

    if frame.empty:
        raise ValueError("an AAS MRT holds at least one row (astropy's writer refuses an empty table); this table "
                         "has none")
    table = astropy_table(frame, {})
    formats, descriptions, unlimited = {}, [], set()
    for name in table.colnames:
        column, info = table[name], _column_info(name)
        unit, description = _described(info, "cds")
        if column.dtype.kind == "b":
            column = Column(np.asarray(column.filled(False) if hasattr(column, "filled") else column, dtype=np.uint8))
            description += _MRT_BOOLEAN
        elif column.dtype.kind == "f":
            values = np.asarray(column.filled(np.nan) if hasattr(column, "filled") else column, dtype=np.float64)
            finite = np.isfinite(values)
            column = Column(values) if finite.all() else MaskedColumn(values, mask=~finite)  # "?": may be blank
            if finite.any():  # an all-blank column keeps astropy's own width
                formats[name] = info.mrt or _exact_float_format(values[finite])
                if "e" in formats[name]:
                    # astropy rounds an exponent column's limits to fixed decimals ("[0.0/0.01]" for fluxes of
                    # 1e-12 to 1e-10): limits that mislead are left out
                    unlimited.add(len(descriptions))
        elif column.dtype.kind in "USO":
            text = column.filled("") if hasattr(column, "filled") else column
            column = Column([_fits_text(str(value)) for value in np.asarray(text, dtype=object)], dtype=str)
        if column.dtype.kind in "iuf" and np.ma.getmaskarray(column).all():
            formats[name] = "%d" if column.dtype.kind in "iu" else "%.1f"  # one blank byte: see below
        # a token astropy writes in one piece; the explanation replaces it in `_rewrapped`
        column.unit, column.description = unit, f"@{len(descriptions)}@"
        descriptions.append(_fits_text(description))
        table[name] = column
    out = io.StringIO()
    # A missing value is one blank (astropy's default, no character, leaves a column of none, RA_Counterpart of a
    # list without counterparts, narrower than the width its byte-by-byte line declares, shifting every column
    # after it); such a column's format gives it that one byte.
    table.write(out, format="ascii.mrt", formats=formats, fill_values=[(ascii.masked, " ")])
    lines = out.getvalue().split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith("Byte-by-byte Description")) + 4
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("-----"))
    notes = lines.index("Notes:", end)
    lines[notes:notes + 1] = ["Notes:", *_mrt_notes(published_keywords(meta))]
    lines[start:end] = _rewrapped(lines[start:end], descriptions, max(map(len, table.colnames)), unlimited)
    title = lines.index("Title:")
    lines[title:title + 1] = _header_lines(f"Title: {_fits_text(_mrt_title(meta))}", 7)
    return "\n".join(lines)


def _rewrapped(entries: list[str], descriptions: list[str], label_width: int,
               unlimited: set[int] = frozenset()) -> list[str]:
    """The byte-by-byte description's lines as astropy writes them with each explanation a token ``@k@``, with the
    tokens replaced by ``descriptions`` (the ``[min/max]`` limits astropy puts before the tokens in ``unlimited``
    removed) and each line wrapped (`_wrapped`) so that no continuation line starts with a digit or splits a word.

    astropy wraps an explanation by itself at hyphens too ("high- energy" read back) and so that a continuation line
    may start with a number and three words, which its reader takes for a column (a wrapped "1 to 100 GeV" of
    Flux1000 became a column GeV).  Continuation lines are indented as astropy indents them: past the Bytes field,
    12 characters of Format and Units and the longest label."""
    bytes_end = re.match(r"\s*\d+(?:-\s*\d+)?", entries[0]).end()
    columns: list[str] = []
    for line in entries:  # a line whose Bytes field (right-aligned) is blank continues the one before
        if line[bytes_end - 1:bytes_end].isdigit():
            columns.append(line.rstrip())
        else:
            columns[-1] += f" {line.strip()}"
    out = []
    for line in columns:
        # the explanation starts after the Bytes, Format, Units and Label fields, none of which holds a space
        fields = re.match(r"\s*\d+(?:-\s*\d+)?\s+\S+\s+\S+\s+\S+\s+", line).end()
        explanation = line[fields:]
        if int(re.search(r"@(\d+)@", explanation).group(1)) in unlimited:
            explanation = re.sub(r"^\[[^\]]*\]\s*", "", explanation)
        explanation = re.sub(r"@(\d+)@", lambda token: descriptions[int(token.group(1))], explanation)
        out += _wrapped(line[:fields] + explanation, bytes_end + 16 + label_width, prefix=fields)
    return out


def _wrapped(text: str, indent: int, prefix: int) -> list[str]:
    """``text`` in lines of at most `_MRT_WIDTH` characters, each after the first indented by ``indent`` spaces and
    starting with no digit (a word starting with one stays with the word before it; its first ``prefix``
    characters are kept as they are)."""
    chunks: list[str] = []
    for word in text[prefix:].split():
        if chunks and word[0].isdigit():
            chunks[-1] += f" {word}"
        else:
            chunks.append(word)
    lines = [(text[:prefix] + (chunks.pop(0) if chunks else "")).rstrip()]  # an empty explanation: no blanks
    for chunk in chunks:
        if len(lines[-1]) + 1 + len(chunk) <= _MRT_WIDTH:
            lines[-1] += f" {chunk}"
        else:
            lines.append(" " * indent + chunk)
    return lines


def _mrt_title(meta: Mapping[str, Any]) -> str:
    """The MRT's title from the table's keywords: what the table is (a list's ``LIST``, else the classifications),
    of which catalog and sources, by what."""
    what = meta.get("LIST") or "class probabilities, predicted class and 'none of these' flag of each source"
    catalog = " ".join(str(meta[key]) for key in ("CATALOG", "CATVER") if meta.get(key))
    of = f" of {catalog}" + (f" ({meta['SELECT']})" if meta.get("SELECT") else "") if catalog else ""
    by = f", by {meta['CREATOR']}" if meta.get("CREATOR") else ""
    return f"{what[0].upper()}{what[1:]}{of}{by}"


#: An absolute path of this machine (POSIX, or a Windows drive's) inside a keyword's text; its last part is kept.
_LOCAL_PATH = re.compile(r"(?<![\w.:/])(?:/|[A-Za-z]:[\\/])(?:[^\s,;()'\"\\/]+[\\/])+(?=[^\s,;()'\"\\/])")


def published_keywords(meta: Mapping[str, Any]) -> dict[str, Any]:
    """``meta`` as a journal's or the VO's table shows it: each local path (the model folder, the pulsar catalogue)
    cut to its file name, which says what was used without the machine it was used on.  The run record
    (``run.json``) keeps the full paths."""
    def cut(value: Any) -> Any:
        if isinstance(value, str):
            return _LOCAL_PATH.sub("", value)
        if isinstance(value, Mapping):
            return {key: cut(item) for key, item in value.items()}
        if isinstance(value, (list, tuple)):
            return [cut(item) for item in value]
        return value
    return {key: cut(value) for key, value in meta.items()}


def _mrt_notes(meta: Mapping[str, Any]) -> list[str]:
    """The MRT's notes: the Flags legend (the ``FLAG<n>`` keywords), then every other keyword of the table with what
    it says (`KEYWORDS`), which the ECSV and VOTable hold as keywords and an MRT has no other place for."""
    flags = {key: value for key, value in meta.items() if FLAG_KEY.fullmatch(key)}
    keywords = {key: value for key, value in keyword_order(meta).items() if key not in flags}
    notes = []
    if flags:
        notes += ["Note (1): Flags, Flag_Words: the catalog's analysis flags; bit n set means",
                  *(f"  {key.removeprefix('FLAG')}: {value}" for key, value in flags.items())]
    if keywords:
        notes.append(f"Note ({2 if flags else 1}): the table's keywords: name (what it says): value")
        for key, value in keywords.items():
            text = json.dumps(value, sort_keys=True) if isinstance(value, (dict, list)) else str(value)
            notes.append(f"  {key} ({KEYWORDS.get(key, 'keyword')}): {text}")
    return [line for note in notes for line in _header_lines(_fits_text(note), 4)]


def _header_lines(text: str, indent: int) -> list[str]:
    """A line of an MRT's header outside the byte-by-byte description in lines of at most `_MRT_WIDTH` characters,
    each after the first indented by ``indent`` spaces, long words (a list of names without spaces) broken."""
    import textwrap

    return textwrap.wrap(text, _MRT_WIDTH, subsequent_indent=" " * indent, break_on_hyphens=False)


def votable_bytes(frame: pd.DataFrame, meta: Mapping[str, Any]) -> bytes:
    """The VOTable of ``frame``: each column's unit (where VOUnit names it, `_described`), description and UCD
    (`COLUMNS`), the positions tied to their ``COOSYS`` (ICRS at equinox J2000, Galactic) so that TOPCAT and Aladin
    find them, and the keywords as the table's ``INFO`` elements (records as JSON), each with what it says
    (`KEYWORDS`)."""
    from astropy.io.votable import from_table
    from astropy.io.votable.tree import CooSys, Info

    table = astropy_table(frame, {})
    for column in table.columns.values():
        column.unit, column.description = _described(_column_info(column.name), "vounit")
    votable = from_table(table)
    systems = {"pos.eq.": CooSys(ID="ICRS", system="ICRS", equinox="J2000"),
               "pos.galactic.": CooSys(ID="galactic", system="galactic")}
    used: dict[str, Any] = {}
    for field in votable.get_first_table().fields:
        field.ucd = _column_info(field.name).ucd
        for prefix, system in systems.items():
            if field.ucd and field.ucd.startswith(prefix):
                field.ref = system.ID
                used[system.ID] = system
    votable.resources[0].coordinate_systems.extend(used.values())
    first = votable.get_first_table()
    # what astropy's Table.read keeps of a VOTable's header: the table's name and description, not its INFO
    first.name = str(meta.get("LIST") or "classifications").replace(" ", "_")[:64]
    first.description = (f"{_mrt_title(meta)}. The keywords (what each says, its value) are this table's INFO "
                         "elements: astropy.io.votable.parse(path).get_first_table().infos")
    infos = first.infos
    for key, value in keyword_order(published_keywords(meta)).items():
        text = json.dumps(value, sort_keys=True) if isinstance(value, (dict, list)) else str(value)
        info = Info(name=key, value=text)
        info.content = "what this analysis flag of Flags means" if FLAG_KEY.fullmatch(key) else KEYWORDS.get(key, "")
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
    write_text_atomic(twin, ecsv_text(frame, meta))
    return twin


def ecsv_text(frame: pd.DataFrame, meta: Mapping[str, Any]) -> str:
    """ECSV of ``frame`` with units and keywords (``meta``): astropy writes the header, pandas the rows.

    astropy formats each cell in Python (about 1 s for the main job's 3615-row table, masked columns
    most); pandas writes the same cells at once.  Every string is quoted and a missing value of any
    column is ``""``, which astropy's reader masks as it masks its own writer's empty cells: the file
    reads back to the same values, masks, types, units and keywords (tests/catalog_jobs/test_tables.py).
    A column astropy keeps as Python objects (strings with a None among them) is written as JSON, so a
    table holding one is left to astropy.
    """
    text = io.StringIO()
    write_ecsv(text, frame, meta)
    return text.getvalue()


#: Rows converted to astropy at once to learn the columns' types for the ECSV header (`ecsv_header_table`).
_HEADER_ROWS = 50000


def ecsv_header_table(frame: pd.DataFrame, meta: Mapping[str, Any]) -> Any:
    """The astropy table (no rows) whose ECSV header heads ``frame``'s rows, or None where a block of rows holds a
    column astropy keeps as Python objects (`ecsv_text`: the table is then astropy's to write).

    Made block by block: the whole table in astropy's fixed-width strings (a column of reasons in words, 4 bytes a
    character of its longest) was GiBs for 10^6 rows; a header names each column's type, never its width."""
    first = None
    for start in range(0, max(len(frame), 1), _HEADER_ROWS):
        table = astropy_table(frame.iloc[start:start + _HEADER_ROWS], meta)
        if any(column.dtype.kind not in "biufU" for column in table.columns.values()):
            return None
        first = table[:0] if first is None else first
    return first


def write_ecsv(out: Any, frame: pd.DataFrame, meta: Mapping[str, Any]) -> None:
    """`ecsv_text` written to the text stream ``out`` as it is made (the rows in pandas' blocks)."""
    import csv

    header = ecsv_header_table(frame, meta)
    if header is None:
        astropy_table(frame, meta).write(out, format="ascii.ecsv")
        return
    header.write(out, format="ascii.ecsv")  # the header and the column names' line
    frame.to_csv(out, sep=" ", header=False, index=False, quoting=csv.QUOTE_NONNUMERIC, na_rep="", lineterminator="\n")


def column_types(table: Any) -> list[tuple[str, str]]:
    """Each column's name and type as an ECSV header writes them (text of any width is one type)."""
    return [(name, "str" if table[name].dtype.kind == "U" else str(table[name].dtype)) for name in table.colnames]

"""Probability tables (``gpal predict``): one row per source, keyed by ``Source_Name``.

One ``p_<class>`` column per class, the predicted class, the predictive entropy and
the sky position (Galactic, and ICRS computed from it).  Each format loads with the
default reader of pandas, astropy and TOPCAT:

- ``.csv``: a plain CSV (no comment lines), byte-identical across equal runs, with an
  ECSV twin (``.ecsv``, same rows) beside it that carries units, column descriptions
  and the provenance;
- ``.fits``: one binary-table HDU, ``EXTNAME = 'CLASSIFICATIONS'``, with ``TUNIT`` /
  ``TCOMM`` per column and the provenance as typed header keywords (the estimator's
  settings and the training selection as ``HIERARCH FITCONF.<name>`` /
  ``HIERARCH TRAINSEL.<name>`` cards, one value each);
- ``.mrt``: the AAS journals' machine-readable table (astropy's ``ascii.mrt`` writer: the byte-by-byte
  description with each column's CDS unit and explanation), ASCII only, what a paper submits;
- ``.vot``: a VOTable (units, descriptions, the keywords as ``INFO`` elements), what VO tools exchange.

The main job writes the last two beside the CSV only when asked (`EXTRA_FORMATS`, ``--table-formats``):
they repeat the same rows, and most runs are read by pandas and astropy, which the CSV / ECSV serve.
"""

from __future__ import annotations

import datetime
import io
import json
import os
import re
import shutil
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence, TypeVar

import numpy as np
import pandas as pd

from gpal.catalog_jobs.candidates import CUTS
from gpal.catalog_jobs.job_settings import NEVER, JobSetting, settings_from_header
from gpal.catalog_jobs.proba_columns import MC_ERROR_COLUMN, classes_from_columns
from gpal.catalogs.lac import LAC_TABLE_COLUMNS
from gpal.catalogs.targets import EXTENDED_FIELD_COLUMNS, SEXAGESIMAL_COLUMNS, TARGET_COLUMNS
from gpal.constraints import ListOf, OneOf
from gpal.estimators.outliers import OOD_FALSE_POSITIVE_RATE
from gpal.files import atomic_output, write_files, write_text_atomic

__all__ = [
    "ClassifiedSources",
    "EXTENDED",
    "EXTRA_FORMATS",
    "FORMAT_SETTINGS",
    "TABLE_FORMATS",
    "as_read_back",
    "check_table_path",
    "classified_table_files",
    "dated",
    "extra_names",
    "formats_of",
    "read_probability_table",
    "rendered_and_read_back",
    "write_ecsv_twin",
    "write_probability_table",
]


TABLE_FORMATS = {".csv": "csv", ".fits": "fits", ".fit": "fits", ".mrt": "mrt", ".vot": "votable"}
#: The formats a job writes beside each CSV table only when asked -> their suffix: the AAS journals' MRT and the
#: Virtual Observatory's VOTable.  Not by default: they repeat the CSV's rows, and the main job's folder is read
#: mostly by pandas and astropy.
EXTRA_FORMATS = {"mrt": ".mrt", "votable": ".vot"}
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
_INTEGER_KEYS = ("NSOURCES", "EXPLOW", "EXPHIGH")
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
#: Columns of text (an empty value is "", not NaN).
_TEXT_COLUMNS = ("Source_Name", "CLASS1", "predicted_class", "ASSOC1", "CLASS2", "ASSOC2", "RA_hms", "DEC_dms",
                 "Flag_Words", "Inside_Extended", "caveats", "known_class", "known_as", "known_reason", "ATNF_pulsars", "Extended_Source_Name",
                 "LAC_SED_class", "LAC_counterpart", "LAC_counterpart_catalog")
#: FITS has no unit for nats; a FITS reader would warn on it, so there it lives in TCOMM only.
_FITS_UNITS = {"deg", "ph cm-2 s-1"}


# ---------------------------------------------------------- probability tables
@dataclass(frozen=True)
class ClassifiedSources:
    """A probability table: one row per source, and the metadata saying where it came from."""

    frame: pd.DataFrame
    meta: dict[str, Any]


def dated(table: ClassifiedSources) -> ClassifiedSources:
    """The table stamped with the current UTC time as ``DATE``, so that several files of one run share it."""
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")
    return ClassifiedSources(table.frame, {**table.meta, "DATE": now})


#: The job setting naming `EXTRA_FORMATS` (``gpal classify --table-formats mrt,votable``); the tables record it as
#: ``FORMATS``, so the lists (and ``gpal report`` rebuilding them) are written in the formats the classifications were.
FORMAT_SETTINGS = {
    "table_formats": JobSetting(
        ListOf(OneOf(tuple(EXTRA_FORMATS)), min_length=0), (),
        "also write the classifications and every source list as mrt (the AAS journals' machine-readable table, "
        "FILE.mrt) and/or votable (for VO tools such as TOPCAT and Aladin, FILE.vot), e.g. mrt,votable; none by "
        "default: the CSV + ECSV serve pandas and astropy",
        record=NEVER, keyword="FORMATS", unordered=True),
}


def formats_of(meta: Mapping[str, Any]) -> list[str]:
    """The `EXTRA_FORMATS` a table's keywords ask its files to be written in too (absent: none)."""
    return list(settings_from_header(FORMAT_SETTINGS, meta)["table_formats"])


def extra_names(name: str, formats: Sequence[str]) -> list[str]:
    """The files of the table ``name`` (a ``.csv``) in the `EXTRA_FORMATS` ``formats``: same stem, their suffix."""
    return [str(Path(name).with_suffix(EXTRA_FORMATS[fmt])) for fmt in formats]


def _table_format(path: Path) -> str:
    fmt = TABLE_FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise ValueError(f"output {path} must end in one of {sorted(TABLE_FORMATS)} (CSV, FITS, AAS MRT or VOTable); "
                         f"got {path.suffix or 'no suffix'!r}")
    return fmt


def _written_paths(path: Path) -> list[Path]:
    return [path, path.with_suffix(TWIN_SUFFIX)] if _table_format(path) == "csv" else [path]


def check_table_path(path: str | os.PathLike, force: bool = False) -> Path:
    """The output path, checked before any work: a known suffix, and no existing file (nor ECSV twin) unless ``force``."""
    path = Path(path)
    for target in _written_paths(path):
        if target.is_dir():
            raise IsADirectoryError(f"output {target} is a folder; give a file name ending in one of "
                                    f"{sorted(TABLE_FORMATS)}")
        if target.exists() and not force:
            raise FileExistsError(f"output {target} already exists; choose another name or pass --force to overwrite it")
    return path


def _typed(meta: Mapping[str, Any]) -> dict[str, Any]:
    """Keyword values as their types: counts as integers, records as dicts (old tables held them as strings)."""
    out = dict(meta)
    for key in _INTEGER_KEYS:
        if isinstance(out.get(key), str):
            out[key] = int(out[key])
    for key in _RECORD_KEYS:
        if isinstance(out.get(key), str):
            out[key] = json.loads(out[key])
    return out


def _with_equatorial(frame: pd.DataFrame) -> pd.DataFrame:
    """``RA``, ``DEC`` (degrees) right after ``GLAT``: the catalog's own where given, else (NaN) from ``GLON``, ``GLAT``.

    The catalog's RAJ2000 / DEJ2000 are what a cross-match against it expects; the
    transform (to ICRS, within milliarcseconds of J2000) serves frames that lack them.
    """
    n = len(frame)
    ra = frame["RA"].to_numpy(dtype=np.float64) if "RA" in frame else np.full(n, np.nan)
    dec = frame["DEC"].to_numpy(dtype=np.float64) if "DEC" in frame else np.full(n, np.nan)
    derive = np.isnan(ra) | np.isnan(dec)
    if derive.any():  # astropy.coordinates (a second's import) only where a frame lacks the catalog's positions
        from astropy import units as u
        from astropy.coordinates import SkyCoord

        sky = SkyCoord(l=frame["GLON"].to_numpy(dtype=np.float64)[derive] * u.deg,
                       b=frame["GLAT"].to_numpy(dtype=np.float64)[derive] * u.deg, frame="galactic").icrs
        ra, dec = ra.copy(), dec.copy()
        ra[derive], dec[derive] = sky.ra.deg, sky.dec.deg
    out = frame.drop(columns=["RA", "DEC"], errors="ignore")
    at = out.columns.get_loc("GLAT") + 1
    out.insert(at, "RA", ra)
    out.insert(at + 1, "DEC", dec)
    return out


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


def _unflatten(cards: Mapping[str, Any], key: str) -> dict[str, Any]:
    """The record ``key`` rebuilt from its ``key.a.b`` cards (undefined values as None, JSON lists decoded)."""
    from astropy.io.fits.card import Undefined

    record: dict[str, Any] = {}
    for name, value in cards.items():
        if not name.startswith(f"{key}."):
            continue
        *parents, leaf = name[len(key) + 1 :].split(".")
        node = record
        for parent in parents:
            node = node.setdefault(parent, {})
        if isinstance(value, Undefined):
            value = None
        elif isinstance(value, str) and value.startswith("["):
            value = json.loads(value)
        node[leaf] = value
    return record


_Read = TypeVar("_Read")


def as_read_back(frame: pd.DataFrame, read: Callable[[io.StringIO], _Read]) -> _Read:
    """``read`` applied to ``frame`` as gpal writes it to CSV (``to_csv(index=False)``): the values a report rebuilt
    from the folder holds (a float32 catalog column as its printed decimal), without the trip through the disk.

    The report of a run in memory and ``gpal report`` of its folder see the same numbers this way: the written
    decimals decide where a cut falls."""
    return read(io.StringIO(frame.to_csv(index=False)))


def _for_writing(table: ClassifiedSources) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The rows and keywords a table is written with: dated, with its equatorial position, keywords typed."""
    table = table if "DATE" in table.meta else dated(table)
    return _with_equatorial(table.frame), _typed(table.meta)


def classified_table_files(table: ClassifiedSources, name: str,
                           formats: Sequence[str] = ()) -> dict[str, str | bytes]:
    """The files of ``table`` written as ``name`` (a suffix of `TABLE_FORMATS`), made in memory: the CSV and its
    ECSV twin, or the FITS, MRT or VOTable file, by name; and beside them the table in the `EXTRA_FORMATS`
    ``formats`` (`extra_names`).

    An MRT holds at least one row (astropy's writer refuses an empty table), so a table without rows gets no
    ``.mrt``, and a warning says so: a journal's table of no sources has nothing to submit."""
    frame, meta = _for_writing(table)
    files = _files(name, frame, meta)
    for extra in extra_names(name, formats):
        if frame.empty and _table_format(Path(extra)) == "mrt":
            warnings.warn(f"{extra} is not written: {name} has no rows, and an AAS MRT holds at least one",
                          stacklevel=2)
            continue
        files.update(_files(extra, frame, meta))
    return files


def rendered_and_read_back(table: ClassifiedSources,
                           names: Sequence[str]) -> tuple[dict[str, str | bytes], ClassifiedSources]:
    """The files of ``table`` written as each of ``names`` (`classified_table_files`), and the table as
    `read_probability_table` reads them back: the rows through the CSV's decimals, the keywords through the ECSV
    twin's header.  One CSV text serves the files and the values; nothing touches the disk."""
    frame, meta = _for_writing(table)
    text = frame.to_csv(index=False)
    files = {key: content for name in names for key, content in _files(name, frame, meta, text).items()}
    header = io.StringIO()
    _astropy_table(frame.iloc[:0], meta).write(header, format="ascii.ecsv")
    return files, ClassifiedSources(_read_rows(io.StringIO(text)), _typed(_ecsv_meta(header.getvalue())))


def write_probability_table(table: ClassifiedSources, path: str | os.PathLike, force: bool = False) -> Path:
    """Write a plain CSV and its ECSV twin, or a FITS, MRT or VOTable file, atomically; returns its path.

    The CSV and its twin go to their files as pandas writes them, in blocks of rows, not made as one text first:
    a catalog of 10^6 sources held each text, a GiB, in memory beside the table (the same bytes either way)."""
    path = check_table_path(path, force)
    frame, meta = _for_writing(table)
    if _table_format(path) != "csv":
        write_files(path.parent, _files(path.name, frame, meta))
        return path
    with atomic_output(path) as tmp:
        frame.to_csv(tmp, index=False)
    with atomic_output(path.with_suffix(TWIN_SUFFIX)) as tmp, open(tmp, "w", encoding="utf-8", newline="") as out:
        _write_ecsv(out, frame, meta)
    return path


def write_probability_blocks(tables: Iterable[ClassifiedSources], path: str | os.PathLike,
                             force: bool = False) -> Path:
    """`write_probability_table` of the table whose rows come in ``tables``, one block after another (the keywords
    those of the last: `gpal.catalog_jobs.prediction.predict_catalog_blocks`), the same bytes as the whole table's.

    A CSV and its ECSV twin are written as the blocks come, so memory holds one block whatever the rows (the twin's
    rows wait in a temporary file for its header, which names the keywords); a FITS, MRT or VOTable file is made
    from the whole table."""
    path = check_table_path(path, force)
    tables = iter(tables)
    if _table_format(path) != "csv":
        blocks = list(tables)
        frame = pd.concat([t.frame for t in blocks], ignore_index=True)
        return write_probability_table(ClassifiedSources(frame, blocks[-1].meta), path, force)
    import csv

    date = dated(ClassifiedSources(pd.DataFrame(), {})).meta["DATE"]  # one stamp for every block
    header, meta = None, None
    with atomic_output(path) as tmp, open(tmp, "w", encoding="utf-8", newline="") as out, \
            tempfile.TemporaryFile("w+", encoding="utf-8", newline="", dir=path.parent) as rows:
        for table in tables:
            frame = _with_equatorial(table.frame)
            block = _ecsv_header_table(frame, {})
            if block is None:
                raise ValueError("a block of the table holds a column of Python objects (text with None among it); "
                                 "write it whole with write_probability_table")
            if header is None:
                header = block
            elif _column_types(block) != _column_types(header):
                changed = [a[0] for a, b in zip(_column_types(header), _column_types(block)) if a != b]
                raise ValueError(f"the blocks of the table differ in the types of column(s) {changed}; write it whole "
                                 "with write_probability_table")
            frame.to_csv(out, index=False, header=meta is None)
            frame.to_csv(rows, sep=" ", header=False, index=False, quoting=csv.QUOTE_NONNUMERIC, na_rep="",
                         lineterminator="\n")
            meta = table.meta
        if header is None:
            raise ValueError(f"no rows to write to {path}: the table came in no block")
        header.meta.update(_ordered(_typed({**meta, "DATE": date})))
        rows.seek(0)
        with atomic_output(path.with_suffix(TWIN_SUFFIX)) as twin, open(twin, "w", encoding="utf-8", newline="") as ecsv:
            header.write(ecsv, format="ascii.ecsv")  # the header and the column names' line, then the rows
            shutil.copyfileobj(rows, ecsv)
    return path


def _column_types(table: Any) -> list[tuple[str, str]]:
    """Each column's name and type as an ECSV header writes them (text of any width is one type)."""
    return [(name, "str" if table[name].dtype.kind == "U" else str(table[name].dtype)) for name in table.colnames]


def _files(name: str, frame: pd.DataFrame, meta: Mapping[str, Any],
           csv_text: str | None = None) -> dict[str, str | bytes]:
    """The table's files as ``name``: the CSV (``csv_text`` where the caller holds it already) and its twin, or the
    FITS, MRT or VOTable file."""
    fmt = _table_format(Path(name))
    if fmt == "csv":
        return {name: frame.to_csv(index=False) if csv_text is None else csv_text,
                str(Path(name).with_suffix(TWIN_SUFFIX)): _ecsv_text(frame, meta)}
    if fmt == "mrt":
        return {name: _mrt_text(frame)}
    if fmt == "votable":
        return {name: _votable_bytes(frame, meta)}
    fits = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # astropy's note that long values use CONTINUE cards
        _fits_hdu(frame, meta).writeto(fits)
    return {name: fits.getvalue()}


# ----------------------------------------------------------- MRT and VOTable
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


def _ecsv_meta(text: str) -> dict[str, Any]:
    """The keywords of an ECSV header (its ``#`` lines and the column names' line) read as a table of no rows."""
    from astropy.table import Table

    return dict(Table.read(text, format="ascii.ecsv").meta)


def _ecsv_header(path: Path) -> str:
    """An ECSV file's header and column names: its keywords without parsing its rows."""
    lines = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            lines.append(line)
            if not line.startswith("#"):  # the column names' line ends the header
                break
    return "".join(lines)


def _strip_strings(frame: pd.DataFrame) -> pd.DataFrame:
    for column in frame.columns:
        if not pd.api.types.is_numeric_dtype(frame[column]):  # FITS pads strings and reads empty ones as masked
            frame[column] = frame[column].fillna("").astype(str).str.strip()
    return frame


def read_probability_table(path: str | os.PathLike) -> ClassifiedSources:
    """Read a table written by `write_probability_table` with its metadata.

    A CSV takes its keywords from the ECSV twin beside it; a CSV written by gpal 0.2.0
    (``# KEY: value`` lines before the header) is read too.
    """
    from astropy.table import Table

    path = Path(path)
    fmt = _table_format(path)
    if fmt in EXTRA_FORMATS:
        raise ValueError(f"{path} is a {fmt} copy of a table, made for a journal or VO tools; read the .csv (with its "
                         ".ecsv) or .fits gpal wrote beside it, or the file itself with astropy's Table.read")
    if fmt == "fits":
        t = Table.read(path, hdu=EXTNAME) if _has_extname(path) else Table.read(path, format="fits")
        meta = {k: t.meta[k] for k in KEYWORDS if k in t.meta}
        meta.update({k: v for k, v in t.meta.items() if _FLAG_KEY.fullmatch(k)})
        meta.update({k: _unflatten(t.meta, k) for k in _RECORD_KEYS if any(n.startswith(f"{k}.") for n in t.meta)})
        return ClassifiedSources(_strip_strings(t.to_pandas()), _typed(meta))
    meta: dict[str, Any] = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if not line.startswith("# "):
                break
            key, _, value = line[2:].rstrip("\n").partition(": ")
            meta[key] = value
    header_lines = len(meta)
    twin = path.with_suffix(TWIN_SUFFIX)
    if not header_lines and twin.is_file():
        meta = _ecsv_meta(_ecsv_header(twin))
    return ClassifiedSources(_read_rows(path, skiprows=header_lines), _typed(meta))


def _read_rows(source: Any, skiprows: int = 0) -> pd.DataFrame:
    """A probability table's rows from its CSV: text columns as text ("" where empty), numbers as read."""
    text = {name: str for name in _TEXT_COLUMNS}
    frame = pd.read_csv(source, skiprows=skiprows, keep_default_na=False, na_values=[""], dtype=text)
    for name in set(_TEXT_COLUMNS) & set(frame.columns):
        frame[name] = frame[name].fillna("")
    return frame


def _has_extname(path: Path) -> bool:
    """Tables written by gpal 0.2.0 have no EXTNAME."""
    from astropy.io import fits

    with fits.open(path) as hdus:
        return EXTNAME in hdus

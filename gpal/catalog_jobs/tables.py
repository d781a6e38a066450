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
- ``.mrt``: the AAS journals' machine-readable table (astropy's ``ascii.mrt`` writer: a title, the byte-by-byte
  description with each column's CDS unit and explanation, the keywords as notes; floats at the catalog's
  decimals), ASCII only, what a paper submits with its authors filled in;
- ``.vot``: a VOTable (units, descriptions, UCDs, the positions' COOSYS, the keywords as ``INFO`` elements),
  what VO tools exchange.

The main job writes the last two beside the CSV only when asked (`EXTRA_FORMATS`, ``--table-formats``):
they repeat the same rows, and most runs are read by pandas and astropy, which the CSV / ECSV serve.

This module builds the table (dated, with its equatorial position, keywords typed), picks each file's format by
its suffix, writes the files (atomically; a CSV and its twin block by block) and reads them back; the text of each
format, and the columns' and keywords' descriptions every format carries, are `gpal.catalog_jobs.table_formats`'s.
"""

from __future__ import annotations

import datetime
import io
import json
import os
import shutil
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence, TypeVar

import numpy as np
import pandas as pd

from gpal.catalog_jobs.job_settings import settings_from_header
from gpal.catalog_jobs.list_settings import EXTRA_FORMATS, FORMAT_SETTINGS
from gpal.catalog_jobs.table_formats import (
    COLUMNS, EXTENDED, EXTNAME, FLAG_KEY, KEYWORDS, RECORD_KEYS, TWIN_SUFFIX, astropy_table, column_types,
    ecsv_header_table, ecsv_text, fits_hdu, keyword_order, mrt_text, standard_card_forms, votable_bytes, write_ecsv,
    write_ecsv_twin,
)
from gpal.files import atomic_output, read_bytes, write_files
from gpal.warning_filters import changed_filters

__all__ = [
    "COLUMNS",
    "ClassifiedSources",
    "EXTENDED",
    "EXTRA_FORMATS",
    "FORMAT_SETTINGS",
    "KEYWORDS",
    "TABLE_FORMATS",
    "as_read_back",
    "check_table_path",
    "classified_table_files",
    "dated",
    "extra_names",
    "formats_of",
    "parse_probability_csv",
    "probability_csv_bytes",
    "read_probability_table",
    "reheaded_files",
    "rendered_and_read_back",
    "write_ecsv_twin",
    "write_probability_table",
]


TABLE_FORMATS = {".csv": "csv", ".fits": "fits", ".fit": "fits", ".mrt": "mrt", ".vot": "votable"}

_INTEGER_KEYS = ("NSOURCES", "EXPLOW", "EXPHIGH")

#: Columns of text (an empty value is "", not NaN).
_TEXT_COLUMNS = ("Source_Name", "CLASS1", "predicted_class", "ASSOC1", "CLASS2", "ASSOC2", "RA_hms", "DEC_dms", "RA_Counterpart_hms", "DEC_Counterpart_dms",
                 "Flag_Words", "Inside_Extended", "caveats", "known_class", "known_as", "known_reason", "ATNF_pulsars", "first_unassociated", "named_by", "typed_before", "section",
                 "LAC_class",
                 "Extended_Source_Name",
                 "LAC_SED_class", "LAC_counterpart", "LAC_counterpart_catalog")


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
    for key in RECORD_KEYS:
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


def reheaded_files(table: ClassifiedSources, files: Mapping[str, Path], keywords: Sequence[str]) -> dict[str, bytes]:
    """The ECSV and FITS ``files`` of a table (name -> where it is) with the ``keywords`` of ``table.meta`` over the
    rows they hold, which stay as written: rows read back from a CSV may differ in a float's last digit.  A CSV,
    which holds no keywords, needs none of this."""
    from astropy.io import fits

    frame, meta = _for_writing(table)
    out: dict[str, bytes] = {}
    for name, path in files.items():
        old = path.read_bytes()
        if path.suffix == TWIN_SUFFIX:  # a new header above the rows (its column types read from all of them)
            text = old.decode("utf-8")
            out[name] = (_ecsv_header(ecsv_text(frame, meta)) + text[len(_ecsv_header(text)):]).encode("utf-8")
            continue
        cards = fits_hdu(frame.iloc[:1], meta).header
        with fits.open(io.BytesIO(old)) as hdus, standard_card_forms():  # the cards as `fits_hdu` sets them
            header = hdus[1].header
            for keyword in keywords:
                if keyword in cards and keyword in header:  # the card as the table's writer makes it, in its place
                    at = header.index(keyword)
                    del header[at]
                    header.insert(at, cards.cards[keyword])
                elif keyword in cards:
                    header.append(cards.cards[keyword])
            written = io.BytesIO()
            hdus.writeto(written)
        out[name] = written.getvalue()
    return out


def rendered_and_read_back(table: ClassifiedSources,
                           names: Sequence[str]) -> tuple[dict[str, str | bytes], ClassifiedSources]:
    """The files of ``table`` written as each of ``names`` (`classified_table_files`), and the table as
    `read_probability_table` reads them back: the rows through the CSV's decimals, the keywords through the ECSV
    twin's header.  One CSV text serves the files and the values; nothing touches the disk."""
    frame, meta = _for_writing(table)
    text = frame.to_csv(index=False)
    files = {key: content for name in names for key, content in _files(name, frame, meta, text).items()}
    header = io.StringIO()
    astropy_table(frame.iloc[:0], meta).write(header, format="ascii.ecsv")
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
        write_ecsv(out, frame, meta)
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
            block = ecsv_header_table(frame, {})
            if block is None:
                raise ValueError("a block of the table holds a column of Python objects (text with None among it); "
                                 "write it whole with write_probability_table")
            if header is None:
                header = block
            elif column_types(block) != column_types(header):
                changed = [a[0] for a, b in zip(column_types(header), column_types(block)) if a != b]
                raise ValueError(f"the blocks of the table differ in the types of column(s) {changed}; write it whole "
                                 "with write_probability_table")
            frame.to_csv(out, index=False, header=meta is None)
            frame.to_csv(rows, sep=" ", header=False, index=False, quoting=csv.QUOTE_NONNUMERIC, na_rep="",
                         lineterminator="\n")
            meta = table.meta
        if header is None:
            raise ValueError(f"no rows to write to {path}: the table came in no block")
        header.meta.update(keyword_order(_typed({**meta, "DATE": date})))
        rows.seek(0)
        with atomic_output(path.with_suffix(TWIN_SUFFIX)) as twin, open(twin, "w", encoding="utf-8", newline="") as ecsv:
            header.write(ecsv, format="ascii.ecsv")  # the header and the column names' line, then the rows
            shutil.copyfileobj(rows, ecsv)
    return path


def _files(name: str, frame: pd.DataFrame, meta: Mapping[str, Any],
           csv_text: str | None = None) -> dict[str, str | bytes]:
    """The table's files as ``name``: the CSV (``csv_text`` where the caller holds it already) and its twin, or the
    FITS, MRT or VOTable file."""
    fmt = _table_format(Path(name))
    if fmt == "csv":
        return {name: frame.to_csv(index=False) if csv_text is None else csv_text,
                str(Path(name).with_suffix(TWIN_SUFFIX)): ecsv_text(frame, meta)}
    if fmt == "mrt":
        return {name: mrt_text(frame, meta)}
    if fmt == "votable":
        return {name: votable_bytes(frame, meta)}
    fits = io.BytesIO()
    with changed_filters():
        warnings.simplefilter("ignore")  # astropy's note that long values use CONTINUE cards
        fits_hdu(frame, meta).writeto(fits)
    return {name: fits.getvalue()}


def _ecsv_meta(text: str) -> dict[str, Any]:
    """The keywords of an ECSV header (its ``#`` lines and the column names' line) read as a table of no rows."""
    from astropy.table import Table

    return dict(Table.read(text, format="ascii.ecsv").meta)


def _ecsv_header(text: str) -> str:
    """An ECSV text's header and column names: its keywords without parsing its rows."""
    lines = []
    for line in io.StringIO(text):
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
        meta.update({k: v for k, v in t.meta.items() if FLAG_KEY.fullmatch(k)})
        meta.update({k: _unflatten(t.meta, k) for k in RECORD_KEYS if any(n.startswith(f"{k}.") for n in t.meta)})
        return ClassifiedSources(_strip_strings(t.to_pandas()), _typed(meta))
    return parse_probability_csv(*probability_csv_bytes(path))


_WHAT = "classification table"


def probability_csv_bytes(path: Path) -> tuple[bytes, bytes | None]:
    """A probability table's CSV and its ECSV twin beside it (None: no twin), each read within bounds: what
    `parse_probability_csv` reads a table from."""
    twin = path.with_suffix(TWIN_SUFFIX)
    return read_bytes(path, _WHAT), read_bytes(twin, _WHAT) if twin.exists() else None


def parse_probability_csv(data: bytes, twin: bytes | None = None) -> ClassifiedSources:
    """A table `write_probability_table` wrote as CSV, from its bytes (read within bounds by the caller): its
    keywords from the ``# KEY: value`` lines gpal 0.2.0 wrote before the header, else from the header of its ECSV
    twin (``twin``'s bytes; None: a CSV without one)."""
    text = data.decode("utf-8")
    meta: dict[str, Any] = {}
    header_lines = 0
    for line in io.StringIO(text):
        if not line.startswith("# "):
            break
        key, _, value = line[2:].rstrip("\n").partition(": ")
        meta[key] = value
        header_lines += 1
    if not header_lines and twin is not None:
        meta = _ecsv_meta(_ecsv_header(twin.decode("utf-8")))
    return ClassifiedSources(_read_rows(io.StringIO(text), skiprows=header_lines), _typed(meta))


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

"""A LAT catalog's file read: its sources' table and where it came from, or a refusal that says why.

A catalog is the LAT's own FITS file, or the same table as ECSV or VOTable (what TOPCAT and astropy write from a
FITS file or a cross-match), with the header keyword ``CDS-NAME`` (and ``DataRelease`` for a 4FGL data release)
that names the release; any other file is refused, naming the formats and the columns read.
A FITS file is checked before astropy parses it (a whole number of FITS blocks, a gzip file decompressed within a
bound), a plain file memory-mapped so that a catalog of millions of rows is paged in as its columns are read; the
sources' HDU is found by name, the release identified by its record (`gpal.catalogs.releases`) and the key columns
checked.  `gpal.catalogs.catalog.Catalog` is built on what `read_catalog_file` returns.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gpal.catalogs.releases import Release, identify_release
from gpal.files import file_sha256, read_bytes, regular_file
from gpal.warning_filters import changed_filters

__all__ = ["HDU_NAME", "MAX_CATALOG_BYTES", "Provenance", "read_catalog_file"]


#: The HDU holding a LAT catalog's sources.
HDU_NAME = "LAT_Point_Source_Catalog"


@dataclass(frozen=True)
class Provenance:
    """Which file a catalog was read from: its path, its release's record, version and rows, and the SHA-256 of
    its bytes as stored."""

    path: Path
    record: Release
    version: str
    n_rows: int
    sha256: str  # of the file's bytes as stored: a run's identity holds what the catalog held, not only its name

    release = property(lambda self: self.record.name)
    cds_name = property(lambda self: self.record.family)
    data_release = property(lambda self: self.record.data_release)


_FITS_BLOCK = 2880  # a FITS file is a whole number of 2880-byte blocks
#: The most a gzip catalog decompresses to: 30 times the largest release (FL16Y, 8 MB); a plain file is mapped.
MAX_CATALOG_BYTES = 2**28


def _fits_bytes(path: Path) -> bytes:
    """A gzip file's FITS bytes, decompressed within gpal's read bound, refused when truncated: astropy reads a
    cut file as fewer HDUs or rows."""
    try:
        data = read_bytes(path, "catalog file", limit=MAX_CATALOG_BYTES)
    except ValueError as exc:
        raise ValueError(f"{exc}; it could not be read as a FITS file") from None
    _check_blocks(path, len(data), " uncompressed")
    return data


def _check_blocks(path: Path, size: int, uncompressed: str = "") -> None:
    if not size:
        raise ValueError(f"{path} could not be read as a FITS file: it is empty")
    if size % _FITS_BLOCK:
        raise ValueError(
            f"{path} could not be read as a FITS file: it is truncated or not FITS ({size} bytes{uncompressed} "
            f"is not a whole number of {_FITS_BLOCK}-byte FITS blocks)"
        )


def _source(path: Path) -> tuple[Any, bool]:
    """What astropy opens and whether to memory-map it: a plain file is mapped, so a catalog of millions of rows is
    paged in as its columns are read rather than copied whole into memory first; a gzip file is decompressed (the
    bound on its size stops a gzip bomb)."""
    import io

    path = regular_file(path, "catalog file")
    with open(path, "rb") as fh:
        compressed = fh.read(2) == b"\x1f\x8b"
    if compressed:
        return io.BytesIO(_fits_bytes(path)), False
    _check_blocks(path, path.stat().st_size)
    return path, True


def _read(path: Path):
    from astropy.io import fits
    from astropy.table import Table

    source, memmap = _source(path)
    try:
        with changed_filters():
            warnings.simplefilter("ignore", fits.verify.VerifyWarning)
            warnings.filterwarnings("error", message=".*truncated")
            # text stays bytes, as the file holds it: astropy's str is 4 bytes a character at the column's full
            # width (a catalog's names, 10^6 of them, took 164 MB); `text_values` decodes what a caller reads
            with fits.open(source, memmap=memmap, character_as_bytes=True) as hdul:
                names = [h.name for h in hdul]
                if HDU_NAME.upper() not in [n.upper() for n in names]:
                    raise ValueError(
                        f"{path} is not a LAT catalog: it has no {HDU_NAME} HDU (HDUs: {names})"
                    )
                hdu = hdul[HDU_NAME]
                if not isinstance(hdu, (fits.BinTableHDU, fits.TableHDU)):
                    raise ValueError(f"{path} is not a LAT catalog: its {HDU_NAME} HDU is "
                                     f"{type(hdu).__name__}, expected a table (BinTableHDU)")
                header = hdu.header.copy()
                primary = hdul[0].header.copy()
                table = Table.read(hdu)
    except (OSError, EOFError, UserWarning) as exc:
        raise ValueError(f"{path} could not be read as a FITS file ({exc}); it may be truncated or corrupt") from exc
    if len(table) == 0:
        raise ValueError(f"{path} has an empty {HDU_NAME} table (0 rows); expected the catalog's sources")
    return table, header, primary


def _provenance(path: Path, table, header, primary) -> Provenance:
    cds = str(header.get("CDS-NAME", primary.get("CDS-NAME", ""))).strip()
    version = str(header.get("VERSION", primary.get("VERSION", ""))).strip()
    if not version:
        match = re.search(r"gll_psc_(v\d+)", path.name)
        version = match.group(1) if match else "unknown"
    data_release = header.get("DataRelease", primary.get("DataRelease"))
    if data_release is None:
        data_release = int(np.max(table["DataRelease"])) if "DataRelease" in table.colnames else 1
    record = identify_release(str(path), cds, int(data_release), table.colnames)
    _check_keys(path, table, record)
    return Provenance(path, record, version, len(table), file_sha256(path))


def _check_keys(path: Path, table, record: Release) -> None:
    """Source names and class codes are text (the names' uniqueness: `_check_unique`)."""
    for column in (record.columns.name, record.columns.class_code):
        dtype = np.asarray(table[column]).dtype
        if dtype.kind not in "SU":
            raise ValueError(f"{path} is not a LAT catalog: column {column!r} holds {dtype.name} values; "
                             "expected text (source names, class codes)")


#: What a catalog file may be, as its first bytes (decompressed) show: ECSV, VOTable, else FITS.
_TEXT_FORMATS = {b"# %ECSV": "ECSV", b"<?xml": "VOTable", b"<VOTABLE": "VOTable"}
_ACCEPTED = ("FITS (the LAT's own file, .fit or .fits, gzip or not), ECSV or VOTable with the release's header "
             "keyword CDS-NAME (and DataRelease for a 4FGL data release) and the LAT's columns (Source_Name, "
             "CLASS1 and those of the features)")


def _text_format(path: Path) -> str | None:
    """``"ECSV"`` or ``"VOTable"`` where the file's first bytes say so; None for FITS; refused for other text."""
    head = _head(path)
    for magic, name in _TEXT_FORMATS.items():
        if head.lstrip().startswith(magic):
            return name
    if head.startswith(b"SIMPLE  =") or not head:
        return None
    if all(32 <= byte < 127 or byte in b"\t\r\n" for byte in head[:256]):
        raise ValueError(f"{path} is a text file gpal does not read as a catalog (CSV or another table without "
                         f"units and header keywords); gpal reads {_ACCEPTED}. A CSV with those columns converts "
                         "with astropy: t = Table.read(path, format='csv'); t.meta['CDS-NAME'] = '4FGL'; "
                         "t.write('catalog.ecsv')")
    return None


def _head(path: Path, size: int = 512) -> bytes:
    """The first ``size`` bytes of the file's content, a gzip file's decompressed: only they are read here, the
    whole file once by the route they choose.  A gzip stream that does not read gives b"" (the FITS route names
    the damage)."""
    import gzip
    import zlib

    with open(regular_file(path, "catalog file"), "rb") as fh:
        head = fh.read(size)
        if head[:2] != b"\x1f\x8b":
            return head
        fh.seek(0)
        try:
            return gzip.GzipFile(fileobj=fh).read(size)
        except (OSError, EOFError, zlib.error):
            return b""


def _read_text_table(path: Path, fmt: str):
    """An ECSV or VOTable catalog: its table, its header keywords (ECSV: the table's meta; VOTable: its INFO and
    PARAM elements, the resource's and the table's) as the FITS route's header, and an empty primary header."""
    import io

    from astropy.table import Table

    data = read_bytes(path, "catalog file", limit=MAX_CATALOG_BYTES)
    try:
        with changed_filters():
            warnings.simplefilter("ignore")
            if fmt == "ECSV":
                table = Table.read(data.decode("utf-8"), format="ascii.ecsv")
                header = dict(table.meta)
            else:
                from astropy.io.votable import parse

                votable = parse(io.BytesIO(data))
                first = votable.get_first_table()
                header = {}
                for element in [*votable.resources[0].infos, *votable.resources[0].params, *first.infos,
                                *first.params]:
                    header[element.name] = element.value
                table = first.to_table(use_names_over_ids=True)
    except (ValueError, UnicodeDecodeError, KeyError, IndexError) as exc:
        raise ValueError(f"{path} could not be read as {fmt} ({exc}); gpal reads {_ACCEPTED}") from None
    if len(table) == 0:
        raise ValueError(f"{path} has an empty table (0 rows); expected the catalog's sources")
    if "CDS-NAME" not in header and "Source_Name" in table.colnames:
        # astropy's VOTable writer keeps no keywords: the names say the family ("4FGL J0001.2+4741")
        families = {str(name).split(" ")[0] for name in table["Source_Name"]}
        if len(families) == 1:
            header["CDS-NAME"] = families.pop()
    return table, header, {}


def read_catalog_file(path: Path) -> tuple[Any, Provenance]:
    """The sources' table (astropy; a FITS file's text columns as its bytes) of the LAT catalog file ``path`` (FITS,
    ECSV or VOTable) and its `Provenance`, refused naming what is wrong when the file is not one."""
    fmt = _text_format(Path(path))
    table, header, primary = _read(path) if fmt is None else _read_text_table(Path(path), fmt)
    return table, _provenance(path, table, header, primary)

"""The LAT AGN catalog 4LAC-DR3 (Ajello et al. 2022, ApJS 263, 24) beside the source catalogs: the counterpart's SED.

Why: gpal tells a BL Lac from an FSRQ by gamma-ray measurements only, and a bcu (a blazar of uncertain
type) is exactly the source where that is hard.  Blazar astronomers classify a bcu by its counterpart's
synchrotron peak (high-synchrotron-peaked sources are nearly all BL Lacs), which 4LAC gives per 4FGL-DR3
AGN and the LAT source catalogs do not.  gpal ships both 4LAC-DR3 files (``catalogs/table-4LAC-DR3-h.fits.gz``,
|b| > 10 deg, and ``-l``, |b| < 10 deg; provenance in catalogs/README.md).

What is read (`read_4lac`): the counterpart (``ASSOC1``, its position and catalog), ``SED_class``, the
synchrotron peak ``nu_syn`` as log10 Hz, the high-energy peak ``HE_EPeak`` with ``Unc_HE_EPeak``, ``Redshift``.
4LAC writes "unknown" as 0 (``nu_syn``, ``nuFnu_syn``), -inf (``Redshift``, ``HE_nuFnuPeak``) or a masked
value (``HE_EPeak``): all read as NaN here, so a missing value is missing, never 0.  ``SED_class`` is a step
function of ``nu_syn`` (LSP below 10^14 Hz, ISP below 10^15, HSP above) given exactly where ``nu_syn`` is:
it is shown, never a feature beside the peak.  4LAC's own ``CLASS`` is read as ``LAC_CLASS`` for checks only:
it is a label (what 4LAC decided a bcu is), never a feature (`LAC_FEATURES` leaves it out).

The join (`lac_rows`): 4LAC names its sources by their 4FGL-DR3 name, which DR4 keeps.  A release joins
through the column its record names for 4FGL sources (`Release.links`): the source name in the 4FGL family
(4FGL v20, DR2, DR4), ``ASSOC_FGL`` in FL16Y.  4LAC writes a 4FGL name without its ``c`` suffix (the
catalogs' mark of a source on an interstellar clump: ``4FGL J0344.2+3203c`` is 4LAC's ``4FGL J0344.2+3203``),
so a name not found as written is looked up without a trailing ``c``.  3FGL names no 4FGL source: it is not
joined (ValueError).  `join_coverage` counts what a release's join reaches.

The features (`lac_features`): log10 ``nu_syn`` (4LAC gives no error: variance 0) and log10 ``HE_EPeak`` with the
first-order variance of ``Unc_HE_EPeak`` ((sigma / E / ln 10)^2), each with a 0/1 indicator of whether 4LAC gives
it.  A missing value takes the population's median (over the 4LAC rows that give it) with the population's
variance as its error bar: an error-bar model then reads the source as "anywhere in the population", and the
indicator lets any model tell a measured value from a filled one.  No row is dropped: a bcu without a peak is
still classified.  The redshift is no feature unless asked for (``redshift=True``): a known redshift stands in for
the label (an identified FSRQ has a spectroscopic redshift by definition: 96-99% of the training FSRQs of 4FGL,
DR2 and DR4 have one in 4LAC-DR3, 59-62% of the BL Lacs), and among bcu it came mostly with the spectrum that
later classified the source (28 of the 31 4FGL bcu that FL16Y calls FSRQs have one in 4LAC-DR3, 2 of DR4's 16).
With it the DR4 bcu that later releases typed rank worse, not better (docs/results.md, the bcu section).
More of the measured SED is there on request (``extra``, `LAC_QUANTITIES`): the synchrotron peak's flux
``nuFnu_syn`` (no error given), the high-energy peak's ``HE_nuFnuPeak`` with its error, and the Compton dominance
(their ratio, with the high-energy flux's error; high in FSRQs).  None ranks the later-typed bcu better than the two
peaks alone on later labels (docs/results.md, the bcu section), so they are not the default.
"""

from __future__ import annotations

import io
import os
import warnings
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from gpal.catalogs.catalog import CATALOG_DIR, text_values
from gpal.files import read_bytes
from gpal.warning_filters import changed_filters

__all__ = ["LAC_COLUMNS", "LAC_DEFAULT_QUANTITIES", "LAC_FEATURES", "LAC_FILES", "LAC_QUANTITIES", "LAC_REDSHIFT_FEATURES",
           "LAC_RELEASE", "LAC_TABLE_COLUMNS", "join_4lac", "join_coverage", "lac_feature_names", "lac_features",
           "lac_note", "lac_rows", "lac_table_columns", "read_4lac", "with_lac_features"]

#: The shipped 4LAC-DR3 files: high latitude (|b| > 10 deg, 3407 AGN) and low latitude (407).
LAC_FILES = (CATALOG_DIR / "table-4LAC-DR3-h.fits.gz", CATALOG_DIR / "table-4LAC-DR3-l.fits.gz")
LAC_RELEASE = "4LAC-DR3"
#: The columns a 4LAC file must have (the DR3 layout).
_REQUIRED = ("Source_Name", "CLASS", "ASSOC1", "Counterpart_Catalog", "RA_Counterpart", "DEC_Counterpart",
             "Unc_Counterpart", "Redshift", "SED_class", "HE_EPeak", "Unc_HE_EPeak", "HE_nuFnuPeak", "Unc_HE_nuFnuPeak",
             "nu_syn", "nuFnu_syn")
#: The columns `read_4lac` returns, one row per 4LAC AGN.
LAC_COLUMNS = ("Source_Name", "LAC_CLASS", "counterpart", "counterpart_catalog", "counterpart_ra", "counterpart_dec",
               "counterpart_unc", "SED_class", "log_nu_syn", "log_nuFnu_syn", "HE_EPeak", "Unc_HE_EPeak",
               "HE_nuFnuPeak", "Unc_HE_nuFnuPeak", "Redshift", "lac_file")
#: What a classified table and the target lists show of each source's 4LAC row, so a spectroscopist sees what to
#: point at and why: table column -> (column of `join_4lac`, unit, description).  4LAC gives no optical magnitude.
LAC_TABLE_COLUMNS = {
    "LAC_class": ("LAC_CLASS", None, "4LAC-DR3's class of the counterpart (bll, fsrq, bcu, ...; empty: no 4LAC row): a "
                                     "blazar candidate 4LAC already types needs no spectrum to type it"),
    "LAC_SED_class": ("SED_class", None, "4LAC-DR3 SED class of the counterpart from its synchrotron peak: LSP "
                                         "(< 1e14 Hz), ISP, HSP (>= 1e15 Hz; nearly all BL Lacs); empty: unknown"),
    "LAC_log_nu_syn": ("log_nu_syn", "log10(Hz)", "4LAC-DR3 synchrotron peak frequency of the counterpart, log10 Hz "
                                                  "(NaN: unknown or no 4LAC row)"),
    "LAC_HE_EPeak": ("HE_EPeak", "MeV", "4LAC-DR3 high-energy (inverse-Compton) peak energy (NaN: unknown)"),
    "LAC_Unc_HE_EPeak": ("Unc_HE_EPeak", "MeV", "its 1-sigma uncertainty"),
    "LAC_Redshift": ("Redshift", None, "4LAC-DR3 redshift of the counterpart (NaN: unknown)"),
    "LAC_counterpart": ("counterpart", None, "the counterpart 4LAC-DR3 gives the source's 4FGL-DR3 entry (empty: no "
                                             "4LAC row; an FL16Y source may have lost the association since)"),
    "LAC_counterpart_catalog": ("counterpart_catalog", None, "the catalog 4LAC-DR3 took the counterpart from"),
    "LAC_counterpart_RA": ("counterpart_ra", "deg", "4LAC-DR3 counterpart right ascension (J2000): where to point"),
    "LAC_counterpart_DEC": ("counterpart_dec", "deg", "4LAC-DR3 counterpart declination (J2000)"),
}
#: The most a 4LAC file decompresses to (DR3's high-latitude file is 0.9 MB).
MAX_LAC_BYTES = 2**27
_WHAT = "4LAC file"
_EXPECTED = (f"expected a 4LAC-DR3 FITS file (catalogs/README.md): a binary table with columns {list(_REQUIRED)}, "
             "one row per 4FGL-DR3 AGN")


def _floats(column: Any) -> np.ndarray:
    values = column.filled(np.nan) if hasattr(column, "filled") else column
    return np.asarray(values, dtype=np.float64)


def _read_one(path: Path) -> pd.DataFrame:
    """One 4LAC file as `LAC_COLUMNS`; FileNotFoundError or ValueError naming the file and what was expected."""
    from astropy.io import fits
    from astropy.table import Table

    raw = read_bytes(path, _WHAT, limit=MAX_LAC_BYTES)
    try:
        with changed_filters():
            warnings.simplefilter("ignore", fits.verify.VerifyWarning)
            with fits.open(io.BytesIO(raw), memmap=False) as hdul:
                tables = [h for h in hdul if isinstance(h, (fits.BinTableHDU, fits.TableHDU))]
                if not tables:
                    raise ValueError(f"{_WHAT} {path} holds no table HDU (HDUs: {[h.name for h in hdul]}); {_EXPECTED}")
                table = Table.read(tables[0])
    except (OSError, EOFError) as exc:
        raise ValueError(f"{_WHAT} {path} could not be read as FITS ({exc}); {_EXPECTED}") from None
    missing = [c for c in _REQUIRED if c not in table.colnames]
    if missing:
        raise ValueError(f"{_WHAT} {path} lacks column(s) {missing}; {_EXPECTED}")
    if len(table) == 0:
        raise ValueError(f"{_WHAT} {path} has no rows; {_EXPECTED}")
    nu = _floats(table["nu_syn"])
    flux = _floats(table["nuFnu_syn"])
    redshift = _floats(table["Redshift"])
    epeak, unc = _floats(table["HE_EPeak"]), _floats(table["Unc_HE_EPeak"])
    known_peak = np.isfinite(epeak) & (epeak > 0)
    he_flux, he_unc = _floats(table["HE_nuFnuPeak"]), _floats(table["Unc_HE_nuFnuPeak"])
    known_flux = np.isfinite(he_flux) & (he_flux > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        frame = pd.DataFrame({
            "Source_Name": text_values(table["Source_Name"]),
            "LAC_CLASS": np.char.lower(text_values(table["CLASS"])),
            "counterpart": text_values(table["ASSOC1"]),
            "counterpart_catalog": text_values(table["Counterpart_Catalog"]),
            "counterpart_ra": _floats(table["RA_Counterpart"]),
            "counterpart_dec": _floats(table["DEC_Counterpart"]),
            "counterpart_unc": _floats(table["Unc_Counterpart"]),
            "SED_class": text_values(table["SED_class"]),
            # 0 is 4LAC's "unknown", never a frequency
            "log_nu_syn": np.where(np.isfinite(nu) & (nu > 0), np.log10(nu), np.nan),
            "log_nuFnu_syn": np.where(np.isfinite(flux) & (flux > 0), np.log10(flux), np.nan),
            "HE_EPeak": np.where(known_peak, epeak, np.nan),
            "Unc_HE_EPeak": np.where(known_peak & np.isfinite(unc) & (unc > 0), unc, np.nan),
            # -inf is 4LAC's "unknown" here
            "HE_nuFnuPeak": np.where(known_flux, he_flux, np.nan),
            "Unc_HE_nuFnuPeak": np.where(known_flux & np.isfinite(he_unc) & (he_unc > 0), he_unc, np.nan),
            # -inf is 4LAC's "unknown"; a redshift is >= 0
            "Redshift": np.where(np.isfinite(redshift) & (redshift >= 0), redshift, np.nan),
            "lac_file": path.name,
        })
    return frame


def read_4lac(paths: Sequence[str | os.PathLike] | None = None) -> pd.DataFrame:
    """The 4LAC AGN of ``paths`` (the shipped `LAC_FILES` when None), one row each, file order.

    FileNotFoundError names a missing file; ValueError a file that is not a 4LAC table (no table, a
    required column missing, no rows) or an AGN named in two rows (the files must partition the sky).

    Returns
    -------
    pandas.DataFrame
        `LAC_COLUMNS`: missing values NaN (text ''), ``log_nu_syn`` / ``log_nuFnu_syn`` log10 of Hz and
        erg cm-2 s-1, ``HE_EPeak`` and its error in MeV, ``lac_file`` the file of the row; ``attrs``
        ``files`` (the paths read).  ``HE_nuFnuPeak`` and its error are in MeV cm-2 s-1, as 4LAC writes them.
    """
    if paths is None:
        missing = [str(p) for p in LAC_FILES if not p.is_file()]
        if missing:
            raise FileNotFoundError(f"the {LAC_RELEASE} files should ship at {missing} (package data of "
                                    "gpal.catalogs.data) but are missing; reinstall gpal")
    paths = [Path(p).expanduser() for p in (LAC_FILES if paths is None else paths)]
    if not paths:
        raise ValueError(f"no 4LAC file given; {_EXPECTED}")
    frame = pd.concat([_read_one(p) for p in paths], ignore_index=True)
    twice = frame["Source_Name"][frame["Source_Name"].duplicated()]
    if len(twice):
        raise ValueError(f"4LAC files {[str(p) for p in paths]} name {twice.size} source(s) twice (e.g. "
                         f"{', '.join(twice.iloc[:3])}); expected each AGN once (the high- and low-latitude files "
                         "are disjoint)")
    frame.attrs["files"] = [str(p) for p in paths]
    return frame


def _join_column(catalog: Any) -> str:
    """The catalog's column holding 4FGL names (its release record's link to the 4FGL family)."""
    column = catalog.record.links.get("4FGL")
    if column is None:
        raise ValueError(f"{catalog.release} ({catalog.path.name}) names no 4FGL source, so it cannot be joined to "
                         f"{LAC_RELEASE} (4FGL-DR3 names); expected a 4FGL-family release or one that links to 4FGL "
                         "(FL16Y through ASSOC_FGL)")
    if column not in catalog.table.colnames:
        raise ValueError(f"{catalog.path.name} ({catalog.release}) has no column {column!r} of 4FGL names; "
                         f"it cannot be joined to {LAC_RELEASE}")
    return column


def lac_rows(catalog: Any, lac: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """For each row of ``catalog`` (a `gpal.catalogs.Catalog`), its row of ``lac`` (`read_4lac`), or -1.

    The key is the catalog's 4FGL name (`Release.links`: ``Source_Name`` in the 4FGL family, ``ASSOC_FGL`` in
    FL16Y), looked up as written and, where absent, without a trailing ``c`` (4LAC drops that suffix).  A 4LAC row
    that two or more sources link to (a source a later release split in two) joins none of them: which one its
    counterpart belongs to is not known, and a neighbour's counterpart would be offered as the source's own.

    Returns
    -------
    tuple of numpy.ndarray
        (n_rows,) int64 rows of ``lac`` (-1: no 4LAC row), and (n_rows,) bool: joined only once the ``c`` was dropped.
    """
    joined, by_stem = _linked(catalog, lac)
    shared = np.isin(joined, _shared(joined, len(lac)))
    joined[shared] = -1
    return joined, by_stem & ~shared


def _linked(catalog: Any, lac: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """`lac_rows` before the rule on rows two sources name."""
    keys = text_values(catalog.table[_join_column(catalog)])
    where = {name: i for i, name in enumerate(lac["Source_Name"])}
    rows = np.array([where.get(k, -1) if k else -1 for k in keys], dtype=np.int64)
    stem = np.array([where.get(k[:-1], -1) if k.endswith("c") and rows[i] < 0 else -1 for i, k in enumerate(keys)],
                    dtype=np.int64)
    return np.where(rows >= 0, rows, stem), stem >= 0


def _shared(joined: np.ndarray, n_lac: int) -> np.ndarray:
    """The 4LAC rows that two or more entries of ``joined`` name."""
    return np.flatnonzero(np.bincount(joined[joined >= 0], minlength=n_lac) > 1)


def unshared(catalog: Any, lac: pd.DataFrame) -> pd.DataFrame:
    """``lac`` less the rows two or more of ``catalog``'s sources name, so that a join on any part of the catalog's
    rows (a block of them) leaves unjoined what `lac_rows` on the whole catalog leaves unjoined."""
    joined, _ = _linked(catalog, lac)
    return lac.drop(index=lac.index[_shared(joined, len(lac))]).reset_index(drop=True)


def join_4lac(catalog: Any, ids: Sequence[str] | None = None, lac: pd.DataFrame | None = None) -> pd.DataFrame:
    """The 4LAC row (`LAC_COLUMNS`) of each source named ``ids`` of ``catalog`` (every source when None); a source
    without one has NaN values and '' text.

    Returns
    -------
    pandas.DataFrame
        One row per id, in order: ``Source_Name`` (the catalog's), ``LAC_Name`` (4LAC's, '' without a row) and the
        other `LAC_COLUMNS`.
    """
    lac = read_4lac() if lac is None else lac
    rows, _ = lac_rows(catalog, lac)
    if ids is None:
        picked = rows
        names = catalog.names
    else:
        index = {name: i for i, name in enumerate(catalog.names)}
        unknown = [str(i) for i in ids if str(i) not in index]
        if unknown:
            raise ValueError(f"{len(unknown)} id(s) are not sources of {catalog.release} (e.g. {unknown[:3]})")
        picked = rows[[index[str(i)] for i in ids]]
        names = np.asarray([str(i) for i in ids])
    found = lac.iloc[np.maximum(picked, 0)].reset_index(drop=True).rename(columns={"Source_Name": "LAC_Name"})
    absent = picked < 0
    for column in found.columns:
        if found[column].dtype.kind == "f":
            found.loc[absent, column] = np.nan
        else:
            found.loc[absent, column] = ""
    found.insert(0, "Source_Name", names)
    return found


def lac_table_columns(catalog: Any, ids: Sequence[str], lac: pd.DataFrame | None = None) -> tuple[pd.DataFrame, str]:
    """The `LAC_TABLE_COLUMNS` of the sources ``ids`` of ``catalog``, and in words where they came from.

    A release that names no 4FGL source (3FGL) gets the columns empty and says so, rather than failing the
    table: the 4LAC columns describe a source, they decide nothing.

    Returns
    -------
    tuple
        The columns (one row per id, in order) and the note (what was joined, how many rows have a 4LAC row).
    """
    try:
        joined = join_4lac(catalog, ids, lac)
    except ValueError as exc:
        if "names no 4FGL source" not in str(exc):
            raise
        empty = pd.DataFrame({name: ([""] * len(ids) if _text_column(column) else np.full(len(ids), np.nan))
                              for name, (column, _, _) in LAC_TABLE_COLUMNS.items()})
        return empty, f"no {LAC_RELEASE} columns: {catalog.release} names no 4FGL source"
    out = pd.DataFrame({name: joined[column].to_numpy() for name, (column, _, _) in LAC_TABLE_COLUMNS.items()})
    out.attrs["lac_rows"] = found = int((joined["LAC_Name"] != "").sum())
    return out, lac_note(catalog, found, len(ids), lac)


def lac_note(catalog: Any, found: int, n: int, lac: pd.DataFrame | None = None) -> str:
    """In words what `lac_table_columns` joined: ``found`` of ``n`` sources of ``catalog`` have a 4LAC row (a table
    made in blocks of rows says it once, of them all; a block's count is its columns' ``attrs["lac_rows"]``)."""
    files = ", ".join(Path(f).name for f in (lac.attrs.get("files", []) if lac is not None else LAC_FILES))
    return f"{LAC_RELEASE} ({files}) joined by {_join_column(catalog)}: {found} of {n} sources have a 4LAC row"


def _text_column(column: str) -> bool:
    """Whether a `join_4lac` column holds text ('' where missing) rather than numbers (NaN)."""
    return column in ("LAC_Name", "LAC_CLASS", "counterpart", "counterpart_catalog", "SED_class", "lac_file")


def join_coverage(catalog: Any, lac: pd.DataFrame | None = None) -> dict[str, int]:
    """What the join of ``catalog`` to 4LAC reaches: every count the coverage statement of a release needs.

    Returns
    -------
    dict
        ``rows``; ``named`` (a 4FGL name in the join column); ``joined`` (a 4LAC row); ``joined_by_stem`` (only
        once a trailing ``c`` was dropped); ``bcu`` and ``bcu_joined`` (of them ``bcu_joined_by_stem``), ``bcu_nu_syn`` (with a synchrotron peak);
        ``blazars`` (bll + fsrq, any case) and ``blazars_joined``.
    """
    lac = read_4lac() if lac is None else lac
    rows, by_stem = lac_rows(catalog, lac)
    keys = text_values(catalog.table[_join_column(catalog)])
    joined = rows >= 0
    peak = np.zeros(rows.size, dtype=bool)
    peak[joined] = np.isfinite(lac["log_nu_syn"].to_numpy()[rows[joined]])
    bcu = catalog.class_codes == "bcu"
    blazar = np.isin(catalog.class_codes, ["bll", "fsrq"])
    return {"rows": int(rows.size), "named": int((keys != "").sum()), "joined": int(joined.sum()),
            "joined_by_stem": int(by_stem.sum()), "bcu": int(bcu.sum()), "bcu_joined": int((bcu & joined).sum()),
            "bcu_joined_by_stem": int((bcu & by_stem).sum()), "bcu_nu_syn": int((bcu & peak).sum()), "blazars": int(blazar.sum()),
            "blazars_joined": int((blazar & joined).sum())}


#: erg per MeV: 4LAC gives the high-energy peak's flux in MeV cm-2 s-1, the synchrotron peak's in erg cm-2 s-1.
_ERG_PER_MEV = 1.602176634e-6


def _exact(column: str) -> Any:
    return lambda frame: (frame[column].to_numpy(np.float64), None)


def _logged(column: str, error: str) -> Any:
    """log10 of a 4LAC value with its first-order error sigma / (value ln 10)."""
    def values(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        value = frame[column].to_numpy(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.log10(value), frame[error].to_numpy(np.float64) / (value * np.log(10))
    return values


def _compton_dominance(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """log10 of the high-energy peak's nuFnu over the synchrotron peak's (both erg cm-2 s-1); its error is the
    high-energy peak flux's (4LAC gives the synchrotron peak none); missing where either peak is."""
    value, sigma = _logged("HE_nuFnuPeak", "Unc_HE_nuFnuPeak")(frame)
    return value + np.log10(_ERG_PER_MEV) - frame["log_nuFnu_syn"].to_numpy(np.float64), sigma


#: The measured 4LAC quantities a feature can be: name -> (feature label, its value and 1-sigma error (None: 4LAC
#: gives none) from rows of `LAC_COLUMNS`, NaN where unknown).  Each feature is followed by "4LAC has <name>".
LAC_QUANTITIES = {
    "nu_syn": ("4LAC log10(nu_syn)", _exact("log_nu_syn")),
    "HE_EPeak": ("4LAC log10(HE_EPeak)", _logged("HE_EPeak", "Unc_HE_EPeak")),
    "nuFnu_syn": ("4LAC log10(nuFnu_syn)", _exact("log_nuFnu_syn")),
    "HE_nuFnuPeak": ("4LAC log10(HE_nuFnuPeak)", _logged("HE_nuFnuPeak", "Unc_HE_nuFnuPeak")),
    "Compton_dominance": ("4LAC log10(Compton dominance)", _compton_dominance),
    "Redshift": ("4LAC Redshift", _exact("Redshift")),
}
#: The quantities of `LAC_FEATURES`, the blazar-type model's (`gpal.catalog_jobs.bcu_types`).
LAC_DEFAULT_QUANTITIES = ("nu_syn", "HE_EPeak")


def _labels(name: str) -> tuple[str, str]:
    """The feature labels of quantity ``name``: its value's and its indicator's."""
    return LAC_QUANTITIES[name][0], f"4LAC has {name}"


#: The feature labels of `lac_features` by default, in order (4LAC's CLASS is none of them).
LAC_FEATURES = tuple(label for name in LAC_DEFAULT_QUANTITIES for label in _labels(name))
#: The labels of the redshift features `lac_features` adds with ``redshift=True``.
LAC_REDSHIFT_FEATURES = _labels("Redshift")


def lac_feature_names(extra: Sequence[str] = (), redshift: bool = False) -> tuple[str, ...]:
    """The labels of `lac_features` with ``extra`` and ``redshift``, in its column order."""
    return tuple(label for name in _quantities(extra, redshift) for label in _labels(name))


def _quantities(extra: Sequence[str], redshift: bool) -> tuple[str, ...]:
    unknown = [name for name in extra if name not in LAC_QUANTITIES or name == "Redshift"]
    if unknown:
        raise ValueError(f"unknown 4LAC quantities {unknown}; expected some of "
                         f"{[n for n in LAC_QUANTITIES if n != 'Redshift']} (the redshift by redshift=True)")
    names = (*LAC_DEFAULT_QUANTITIES, *(n for n in extra if n not in LAC_DEFAULT_QUANTITIES))
    return (*dict.fromkeys(names), *(("Redshift",) if redshift else ()))


def lac_features(joined: pd.DataFrame, lac: pd.DataFrame | None = None, redshift: bool = False,
                 extra: Sequence[str] = ()) -> tuple[np.ndarray, np.ndarray]:
    """The 4LAC features (`LAC_FEATURES`, then the ``extra`` quantities of `LAC_QUANTITIES`, then
    `LAC_REDSHIFT_FEATURES` with ``redshift``) and their variances of the rows of ``joined`` (`join_4lac`).  The
    redshift is left out by default: it stands in for the label (module docstring).

    Each measured value (log10 ``nu_syn``, exact; log10 ``HE_EPeak``, variance (Unc / E / ln 10)^2; likewise the
    other quantities, `LAC_QUANTITIES`) is followed by its indicator (1: 4LAC gives it, variance 0).  A missing
    value (no 4LAC row, or 4LAC's "unknown") is the population's median over the rows of ``lac`` that give it (the
    shipped 4LAC when None), its variance the population's variance: missing, not 0, and no row dropped.  A value
    without its error gets the median error of the rows that have one.

    Returns
    -------
    tuple of numpy.ndarray
        X (n, 2 k) and X_var (n, 2 k) for k quantities, columns in `lac_feature_names` order, all finite.
    """
    lac = read_4lac() if lac is None else lac
    X, V = [], []
    for name in _quantities(extra, redshift):
        measured = LAC_QUANTITIES[name][1]
        (values, sigma), (population, pop_sigma) = measured(joined), measured(lac)
        given = np.isfinite(values)
        known = population[np.isfinite(population)]
        if known.size < 2:
            raise ValueError(f"4LAC quantity {name!r} has fewer than 2 values ({known.size}); its population "
                             "median and variance, which stand in for a missing value, need more")
        variance = np.zeros(values.size)
        if sigma is not None:
            sigma = np.where(np.isfinite(sigma), sigma, np.nanmedian(pop_sigma[np.isfinite(population)]))
            variance = np.where(given, sigma ** 2, 0.0)
        X += [np.where(given, values, np.median(known)), given.astype(np.float64)]
        V += [np.where(given, variance, np.var(known)), np.zeros(values.size)]
    return np.column_stack(X), np.column_stack(V)


def with_lac_features(data: Any, catalog: Any, lac: pd.DataFrame | None = None, redshift: bool = False,
                      extra: Sequence[str] = ()) -> Any:
    """``data`` (a `NoisyDataset` built from ``catalog``) with the 4LAC features of its sources after its own
    (`lac_features` with ``redshift`` and ``extra``; their labels `lac_feature_names`), so any gpal model or
    baseline reads them as it reads the catalog's.

    Returns
    -------
    NoisyDataset
        Same rows, labels and ids, ``X`` and ``X_var`` wider by the 4LAC features; ``meta["lac"]`` the join's files.
    """
    from dataclasses import replace

    lac = read_4lac() if lac is None else lac
    X, V = lac_features(join_4lac(catalog, [str(i) for i in data.ids], lac), lac, redshift=redshift, extra=extra)
    names = (*data.feature_names, *lac_feature_names(extra, redshift))
    return replace(data, X=np.hstack([data.X, X]), X_var=np.hstack([data.X_var, V]), feature_names=names,
                   meta={**data.meta, "lac": {"release": LAC_RELEASE, "files": lac.attrs.get("files", []),
                                              "redshift": redshift, "extra": list(extra)}})

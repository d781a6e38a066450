"""The ATNF Pulsar Catalogue (Manchester et al. 2005, AJ 129, 1993) read from its native ``psrcat.db`` text.

The known pulsars are what a radio pulsar search must not propose again: `gpal.catalogs.known_sources`
looks for them inside each LAT source's 95% error ellipse.  gpal ships version 1.64
(``catalogs/psrcat_1.64.db.gz``, provenance in catalogs/README.md, of 2021: the newest a package of the index
ships); a user may read a newer copy (`read_psrcat` with a path; gzipped or not), or a CSV list of their own
(``name, ra, dec[, p0]``) of discoveries the catalogue does not hold yet (TRAPUM, FAST GPPS, MeerKAT, their own).

The format: one ``KEY value [error] [reference]`` line per parameter, entries separated by a line
starting with ``@``, comments starting with ``#`` (``#CATALOGUE 1.64`` gives the version).  An
entry is named by ``PSRJ`` (and ``PSRB`` when it has a B1950 name) and placed by ``RAJ`` / ``DECJ``
(J2000, sexagesimal, as coarse as ``17:22`` or ``+57`` where the discovery paper gave no more) or,
for pulsars timed in ecliptic coordinates, ``ELONG`` / ``ELAT`` (degrees; the J2000 mean ecliptic,
converted with astropy's ``BarycentricMeanEcliptic``: the frames' differences, below an
arcsecond, are far inside any LAT ellipse).  A file without entries, an entry without a name or a
position, or a position that does not read is refused with the file, the line and what was expected.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from gpal.catalogs.catalog import CATALOG_DIR
from gpal.files import read_bytes

__all__ = ["PSRCAT_COLUMNS", "PSRCAT_FILE", "PSRCAT_YEAR", "catalogue_words", "read_psrcat", "sexagesimal_degrees"]

#: The shipped copy (catalogs/README.md: version 1.64, 2872 pulsars).
PSRCAT_FILE = CATALOG_DIR / "psrcat_1.64.db.gz"
#: The year of the shipped copy's version (the file itself states no date): what a list vetted by it cannot know of.
PSRCAT_YEAR = 2021
#: The columns `read_psrcat` returns.
PSRCAT_COLUMNS = ("PSRJ", "PSRB", "RAJ2000", "DEJ2000", "P0", "TYPE", "ASSOC")
#: The most a psrcat.db decompresses to: version 1.64 is 2.4 MB, 2.x about 3.5 MB.
MAX_PSRCAT_BYTES = 2**26
_WHAT = "ATNF pulsar catalogue (psrcat.db)"
_EXPECTED = ("expected the ATNF Pulsar Catalogue's psrcat.db text: 'KEY value [error] [ref]' lines, entries separated "
             "by lines starting with '@', each entry with PSRJ and RAJ/DECJ or ELONG/ELAT")
_NUMBER = r"(\d+(?:\.\d*)?)"
_SEXAGESIMAL = re.compile(rf"^([+-]?){_NUMBER}(?::{_NUMBER}(?::{_NUMBER})?)?$")


def catalogue_words(file: str | os.PathLike, version: str) -> str:
    """Which known pulsars vetted a list, in the words its header and report give: 'ATNF Pulsar Catalogue 1.64
    (2021), psrcat_1.64.db.gz' for the shipped copy; the version the file states and its name for a user's copy or
    list (the file's name alone: a table published with it carries no local path)."""
    name = Path(file).name
    if Path(file).resolve() == PSRCAT_FILE.resolve():
        return f"ATNF Pulsar Catalogue {version} ({PSRCAT_YEAR}), {name}"
    if version.startswith("a user's list"):
        return f"{version}, {name}"
    return f"ATNF Pulsar Catalogue {version or '(no version stated)'}, the user's {name}"


def sexagesimal_degrees(text: str, hours: bool) -> float:
    """``"17:22:02.959"`` (hours, ``hours=True``) or ``"-32:07:45.3"`` (degrees) as degrees; minutes and seconds
    may be left out (``"00:33"``, ``"+57"``).  ValueError for anything else or a field out of range.

    Returns
    -------
    float
        The angle in degrees.
    """
    match = _SEXAGESIMAL.match(text.strip())
    if not match:
        raise ValueError(f"{text!r} is not a sexagesimal {'hh:mm:ss.s' if hours else '+dd:mm:ss.s'} angle")
    sign, whole, minutes, seconds = match.groups()
    given = [field for field in (whole, minutes, seconds) if field is not None]
    if any("." in field for field in given[:-1]):
        raise ValueError(f"{text!r} has decimals before its last field")
    whole, minutes, seconds = float(whole), float(minutes or 0), float(seconds or 0.0)
    if minutes >= 60 or seconds >= 60 or (hours and (sign or whole >= 24)) or (not hours and whole > 90):
        raise ValueError(f"{text!r} is out of range for {'a right ascension (hh < 24)' if hours else 'a declination'}")
    value = whole + minutes / 60 + seconds / 3600
    value *= 15.0 if hours else 1.0
    if not hours and value > 90:
        raise ValueError(f"{text!r} is out of range for a declination (at most 90 deg)")
    return -value if sign == "-" else value


def _ecliptic_to_equatorial(elong: np.ndarray, elat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """J2000 mean-ecliptic longitude and latitude (deg) as ICRS right ascension and declination (deg)."""
    if elong.size == 0:
        return elong, elat
    import astropy.units as u
    from astropy.coordinates import BarycentricMeanEcliptic, SkyCoord

    icrs = SkyCoord(lon=elong * u.deg, lat=elat * u.deg, frame=BarycentricMeanEcliptic(equinox="J2000")).icrs
    return np.asarray(icrs.ra.deg), np.asarray(icrs.dec.deg)


def _period(entry: dict[str, str]) -> float:
    """The spin period (s): ``P0``, else 1 / ``F0``; NaN where neither reads (a pulsar known by its position alone)."""
    for key, invert in (("P0", False), ("F0", True)):
        try:
            value = float(entry[key])
        except (KeyError, ValueError):
            continue
        if np.isfinite(value) and value > 0:
            return 1.0 / value if invert else value
    return float("nan")


def read_psrcat(path: str | os.PathLike | None = None) -> pd.DataFrame:
    """The pulsars of a ``psrcat.db`` file (gzipped or not): the shipped copy, `PSRCAT_FILE`, without ``path``.

    FileNotFoundError names a missing file; ValueError names the file, the line and what was expected
    when it is not such a catalogue (no entries, an entry without PSRJ or a position, a position that
    does not read, a line that is not ``KEY value``).

    Returns
    -------
    pandas.DataFrame
        One row per pulsar, file order: `PSRCAT_COLUMNS` (``PSRJ``, ``PSRB`` ('' without one), ``RAJ2000`` and
        ``DEJ2000`` in degrees, J2000, ``P0`` the spin period in seconds (``P0``, else 1 / ``F0``; NaN without
        either), ``TYPE`` and ``ASSOC`` as the file writes them); ``attrs`` ``file`` (the path)
        and ``version`` (the ``#CATALOGUE`` line's, '' without one).
    """
    path = Path(PSRCAT_FILE if path is None else path).expanduser()
    raw = read_bytes(path, _WHAT, limit=MAX_PSRCAT_BYTES)
    if b"\x00" in raw:
        raise ValueError(f"{_WHAT} {path} holds binary data (NUL bytes); {_EXPECTED}")
    text = raw.decode("utf-8", errors="replace")
    first = next((line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")), "")
    if "," in first:
        return _pulsar_list(path, text)
    version = ""
    entries: list[dict[str, str]] = []
    lines: list[int] = []  # the line each entry starts at, for messages
    entry: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if stripped.startswith("#CATALOGUE"):
            version = stripped[len("#CATALOGUE"):].strip()
            continue
        if not stripped or stripped.startswith("#"):
            continue
        if stripped.startswith("@"):
            if entry:
                entries.append(entry)
            entry = {}
            continue
        fields = stripped.split(None, 1)
        key = fields[0]
        if len(fields) < 2 or not re.fullmatch(r"[A-Z][A-Z0-9_]*", key):
            raise ValueError(f"{_WHAT} {path}, line {number}: {stripped[:60]!r} is not a 'KEY value' line; "
                             f"{_EXPECTED}")
        if not entry:
            lines.append(number)
        entry.setdefault(key, fields[1].split()[0])  # the value; its error and reference are not read
    if entry:
        entries.append(entry)
    if not entries:
        raise ValueError(f"{_WHAT} {path} holds no pulsar entries; {_EXPECTED}")
    rows = []
    ecliptic = []
    for start, found in zip(lines, entries):
        name = found.get("PSRJ", "")
        where = f"{_WHAT} {path}, the entry starting at line {start}"
        if not name:
            raise ValueError(f"{where} has no PSRJ name; {_EXPECTED}")
        try:
            if "RAJ" in found and "DECJ" in found:
                ra, dec = sexagesimal_degrees(found["RAJ"], hours=True), sexagesimal_degrees(found["DECJ"], hours=False)
            elif "ELONG" in found and "ELAT" in found:
                ra, dec = float(found["ELONG"]), float(found["ELAT"])
                if not (np.isfinite(ra) and np.isfinite(dec) and abs(dec) <= 90):
                    raise ValueError(f"ELONG {found['ELONG']!r} / ELAT {found['ELAT']!r} are not ecliptic degrees")
                ecliptic.append(len(rows))
            else:
                raise ValueError("it has neither RAJ and DECJ nor ELONG and ELAT")
        except ValueError as exc:
            raise ValueError(f"{where} (PSR {name}): its position does not read ({exc}); {_EXPECTED}") from None
        rows.append((name, found.get("PSRB", ""), ra, dec, _period(found), found.get("TYPE", ""), found.get("ASSOC", "")))
    table = pd.DataFrame(rows, columns=list(PSRCAT_COLUMNS))
    if ecliptic:
        ra, dec = _ecliptic_to_equatorial(table.loc[ecliptic, "RAJ2000"].to_numpy(float),
                                          table.loc[ecliptic, "DEJ2000"].to_numpy(float))
        table.loc[ecliptic, "RAJ2000"] = ra
        table.loc[ecliptic, "DEJ2000"] = dec
    table.attrs.update(file=str(path), version=version)
    return table


#: A pulsar list's CSV columns: what each is read as -> the header names it may have (any case).
_LIST_COLUMNS = {"PSRJ": ("name", "psrj", "psr", "pulsar"), "RAJ2000": ("ra", "raj", "raj2000", "ra_deg"),
                 "DEJ2000": ("dec", "decj", "dej2000", "dec_deg"), "P0": ("p0", "period", "period_s")}
_LIST_EXPECTED = ("expected a CSV of known pulsars with a header row and the columns name, ra, dec (J2000; degrees, "
                  "or hh:mm:ss / dd:mm:ss) and, optionally, p0 (the spin period in seconds), one pulsar a row")


def _pulsar_list(path: Path, text: str) -> pd.DataFrame:
    """A user's own list of known pulsars (discoveries newer than the catalogue) as `read_psrcat` returns the
    catalogue's: ``version`` says it is a user's list and how many pulsars it holds."""
    import io

    try:
        frame = pd.read_csv(io.StringIO(text), comment="#", dtype=str, keep_default_na=False, skipinitialspace=True)
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise ValueError(f"known-pulsar list {path} does not read as CSV ({exc}); {_LIST_EXPECTED}") from None
    header = {name.strip().lower(): name for name in frame.columns}
    found = {key: next((header[n] for n in names if n in header), None) for key, names in _LIST_COLUMNS.items()}
    missing = [names[0] for key, names in _LIST_COLUMNS.items() if key != "P0" and found[key] is None]
    if missing:
        raise ValueError(f"known-pulsar list {path} has no {', '.join(missing)} column (its columns: "
                         f"{list(frame.columns)}); {_LIST_EXPECTED}")
    if frame.empty:
        raise ValueError(f"known-pulsar list {path} holds no pulsars; {_LIST_EXPECTED}")
    rows = []
    for number, entry in enumerate(frame.to_dict("records"), start=2):
        name = str(entry[found["PSRJ"]]).strip()
        try:
            if not name:
                raise ValueError("the name is empty")
            ra, dec = (_angle(entry[found[key]], hours=key == "RAJ2000") for key in ("RAJ2000", "DEJ2000"))
            period = float(entry[found["P0"]]) if found["P0"] and str(entry[found["P0"]]).strip() else np.nan
        except ValueError as exc:
            raise ValueError(f"known-pulsar list {path}, line {number}: {exc}; {_LIST_EXPECTED}") from None
        rows.append((name, "", ra, dec, period, "", ""))
    table = pd.DataFrame(rows, columns=list(PSRCAT_COLUMNS))
    table.attrs.update(file=str(path), version=f"a user's list of {len(table)} pulsars")
    return table


def _angle(text: Any, hours: bool) -> float:
    """An RA (``hours``) or Dec in degrees, or sexagesimal as psrcat writes it."""
    text = str(text).strip()
    value = sexagesimal_degrees(text, hours) if ":" in text else float(text)
    if not np.isfinite(value) or not (0 <= value < 360 if hours else abs(value) <= 90):
        raise ValueError(f"{'ra' if hours else 'dec'} {text!r} is not an angle in range")
    return value

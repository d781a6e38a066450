"""How long each source has waited for an identification: its search history across the LAT releases.

A committee asked to fund another search of an unassociated source asks first how long it has been one: a source
every release since 3FGL has left unassociated has been searched for a decade, one new in the latest release has
not.  The history is read from what is already known of a source (`gpal.catalogs.known_sources.known_about`'s
per-release columns ``R_name`` and ``R_class``, through the releases' ``ASSOC_FGL`` links): going back from the
catalog's own release, release by release, while the source is listed and has no class, the run's oldest release
is where it was *first listed unassociated*.  A class of ``"unk"`` (a counterpart of unknown type) counts as none:
its nature is as open as an unassociated source's, and pulsar lists keep such sources.  A release that lists it with
any other class (CLASS1, else CLASS2), or does not list it, ends the run.  Releases whose links were not read (absent columns) end it too, and the history then
says it starts no earlier than the oldest release checked.

The committee's next question, whether a published search already named the source, is `named_by`: the published
candidate lists shipped in ``catalogs/published_pulsar_candidates.csv`` (`published_candidates`; provenance in
catalogs/README.md), matched by the name the source carries in the list's release.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from gpal.catalogs.catalog import CATALOG_DIR
from gpal.catalogs.releases import RELEASES, Release

__all__ = ["HISTORY_COLUMNS", "PUBLISHED_CANDIDATES", "PUBLISHED_COLUMNS", "UNTYPED", "named_by",
           "published_candidates", "search_history"]

#: The shipped published candidate lists: one row per source and list.
PUBLISHED_CANDIDATES = CATALOG_DIR / "published_pulsar_candidates.csv"
#: Their columns: the source's name in ``release`` (a shipped release), and who named it, in words.
PUBLISHED_COLUMNS = ("Source_Name", "release", "named_by")

#: The class codes that say nothing of a source's nature: no class, or a counterpart of unknown type.
UNTYPED = ("", "unk")
#: The columns `search_history` returns, in order.
HISTORY_COLUMNS = ("first_unassociated", "unassociated_releases", "unassociated_years")


def _year(release: Release) -> float:
    return np.nan if release.published is None else float(release.published)


def _untyped(classes: pd.Series) -> np.ndarray:
    return classes.fillna("").astype(str).str.strip().str.lower().isin(UNTYPED).to_numpy()


def search_history(known: pd.DataFrame, catalog: str | Release, earlier: Sequence[str | Release] | None = None,
                   unassociated: np.ndarray | None = None) -> pd.DataFrame:
    """Each source's run of releases without a class, ending at ``catalog`` (the release ``known`` describes).

    Parameters
    ----------
    known : pandas.DataFrame
        One row per source of ``catalog``, with ``R_name`` and ``R_class`` for each earlier release R (what
        `known_about` returns); a release whose two columns are absent is not checked.
    catalog : str or Release
        The release of the sources.
    earlier : sequence of str or Release, optional
        The releases before it to follow, in any order (default: every known release older than ``catalog``).
    unassociated : numpy.ndarray of bool, optional
        Which sources ``catalog`` itself lists without a class (default: ``CLASS1`` and ``CLASS2`` of ``known``
        both `UNTYPED`).  A source with a class has no history: its columns are '' / 0 / NaN.

    Returns
    -------
    pandas.DataFrame
        `HISTORY_COLUMNS`, aligned with ``known``: ``first_unassociated`` (the oldest release of the run),
        ``unassociated_releases`` (how many releases the run holds, ``catalog`` included) and
        ``unassociated_years`` (the years between the first release's publication and ``catalog``'s; NaN where
        either year is unknown).  ``attrs["checked"]``: the earlier releases whose columns were read, oldest
        first.
    """
    current = RELEASES[catalog] if isinstance(catalog, str) else catalog
    order = list(RELEASES)
    if earlier is None:
        earlier = order[:order.index(current.name)] if current.name in order else []
    records = [RELEASES[r] if isinstance(r, str) else r for r in earlier]
    records.sort(key=lambda r: order.index(r.name) if r.name in order else -1)
    checked = [r for r in records if f"{r.name}_name" in known and f"{r.name}_class" in known]
    n = len(known)
    if unassociated is None:
        missing = [c for c in ("CLASS1", "CLASS2") if c not in known]
        if missing:
            raise ValueError(f"the known-sources table has no {', '.join(missing)} column; expected known_about's "
                             f"columns, or pass unassociated= (which sources {current.name} lists without a class)")
        unassociated = _untyped(known["CLASS1"]) & _untyped(known["CLASS2"])
    running = np.asarray(unassociated, dtype=bool).copy()
    if running.shape != (n,):
        raise ValueError(f"unassociated has shape {running.shape}; expected one flag per source ({n},)")
    first = np.where(running, current.name, "").astype(object)
    count = running.astype(np.int64)
    first_year = np.where(running, _year(current), np.nan)
    for release in reversed(records):  # newest first: the run grows back in time while it holds
        if release not in checked:  # not read: the run can be said to start no earlier than here
            break
        name = known[f"{release.name}_name"].fillna("").astype(str).str.strip().to_numpy()
        running &= (name != "") & _untyped(known[f"{release.name}_class"])
        first[running] = release.name
        count[running] += 1
        first_year[running] = _year(release)
    frame = pd.DataFrame({"first_unassociated": first, "unassociated_releases": count,
                          "unassociated_years": _year(current) - first_year}, index=known.index)
    frame.attrs["checked"] = [r.name for r in checked]
    return frame


def published_candidates(path: str | Path | None = None) -> pd.DataFrame:
    """The published candidate lists (`PUBLISHED_COLUMNS`, more columns kept), the shipped ones when ``path`` is None.

    A file without one of `PUBLISHED_COLUMNS`, or naming a release that is not shipped, is refused naming it.
    """
    path = Path(PUBLISHED_CANDIDATES if path is None else path)
    table = pd.read_csv(path, dtype=str, keep_default_na=False)
    missing = [c for c in PUBLISHED_COLUMNS if c not in table.columns]
    if missing:
        raise ValueError(f"published candidate list {path.name} has no {', '.join(missing)} column; expected the "
                         f"columns {', '.join(PUBLISHED_COLUMNS)} (the source's name in that release, and who named it)")
    unknown = sorted(set(table["release"]) - set(RELEASES))
    if unknown:
        raise ValueError(f"published candidate list {path.name} names the release(s) {unknown}; expected one of "
                         f"{', '.join(RELEASES)}")
    return table.assign(**{c: table[c].str.strip() for c in PUBLISHED_COLUMNS})


def named_by(known: pd.DataFrame, names: Sequence[str], catalog: str | Release,
             published: pd.DataFrame | None = None) -> np.ndarray:
    """Which published lists named each source ('; '-joined ``named_by``, '' for none): a list of ``catalog``'s own
    release matched by ``names``, one of an earlier release by the ``<release>_name`` column of ``known`` (what
    `known_about` returns; a release whose column is absent matches nothing).

    Returns
    -------
    numpy.ndarray
        (len(names),) strings.
    """
    current = RELEASES[catalog] if isinstance(catalog, str) else catalog
    published = published_candidates() if published is None else published
    found = [[] for _ in names]
    for (release, who), rows in published.groupby(["release", "named_by"], sort=False):
        if release == current.name:
            own = np.asarray([str(n).strip() for n in names])
        elif f"{release}_name" in known:
            own = known[f"{release}_name"].fillna("").astype(str).str.strip().to_numpy()
        else:
            continue
        for i in np.flatnonzero(np.isin(own, rows["Source_Name"].to_numpy()) & (own != "")):
            found[i].append(who)
    return np.asarray(["; ".join(f) for f in found], dtype=object)

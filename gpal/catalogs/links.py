"""Which source of a later release each source of an earlier one became: the link the later-release check reads.

A later release names the earlier counterpart of its sources in a column its release record
gives (`Release.link_column`): ``ASSOC_FGL`` across families (FL16Y -> 4FGL, 4FGL -> 3FGL), the
source name itself within a family whose names are kept (4FGL data releases).  A link must be
one to one: two later rows naming the same earlier source make that source's later class
ambiguous, so its link is left out, with a warning naming the file, the column and the rows.
"""

from __future__ import annotations

import warnings
from typing import Any, Sequence

import numpy as np

from gpal.catalogs.catalog import text_values

__all__ = ["AmbiguousLinkWarning", "link_later"]


class AmbiguousLinkWarning(UserWarning):
    """Two or more rows of a later release name the same earlier source; that source is left unlinked."""


def link_later(earlier: Any, later: Any, through: Sequence[Any] = (), notes: list[str] | None = None) -> np.ndarray:
    """For each row of ``earlier`` (a `Catalog`), the row of ``later`` that names it, or -1.

    ``through``: catalogs of the releases the link goes through, in order (`link_path`: 3FGL ->
    4FGL-DR4 -> FL16Y); each step is a link of its own.  Raises ValueError, naming the file and
    column, when a release has no link to the one before it (its record names none, or the
    column is missing) or links none of its sources.  An ambiguous link is an `AmbiguousLinkWarning`,
    or, given ``notes``, a line appended there (a caller in a second thread says it itself: the warnings
    filters a thread would set to catch it are the whole process's).

    Returns
    -------
    numpy.ndarray
        (earlier.n_rows,) int64 row indices into ``later``, -1 where no later row (or several) names the source.
    """
    index = np.arange(earlier.n_rows)
    for before, after in zip([earlier, *through], [*through, later]):
        step = _link(before, after, notes)
        index = np.where(index >= 0, step[np.maximum(index, 0)], -1)
    return index


def _link(earlier: Any, later: Any, notes: list[str] | None) -> np.ndarray:
    """One step of `link_later`: ``later`` names ``earlier``'s sources itself."""
    column = later.record.link_column(earlier.record)
    if column not in later.table.colnames:
        raise ValueError(f"{later.path.name} ({later.release}) has no column {column!r}; it should name the "
                         f"{earlier.release} counterpart of each source (e.g. {earlier.names[0]!r})")
    linked = text_values(later.table[column])
    rows: dict[str, list[int]] = {}
    for i, name in enumerate(linked):
        if name:
            rows.setdefault(name, []).append(i)
    # a value naming no source of the earlier release (DR4's ASSOC_FGL also names 2FGL and 1FGL sources) unlinks
    # nothing, so the warning counts only the earlier release's own sources
    earlier_names = {str(name) for name in earlier.names}
    twice = {name: found for name, found in rows.items() if len(found) > 1 and name in earlier_names}
    if twice:
        shown = "; ".join(f"{name} <- {', '.join(str(later.names[i]) for i in found)}"
                          for name, found in list(twice.items())[:5])
        said = (f"{later.path.name} ({later.release}): {len(twice)} {earlier.release} source(s) are named by more "
                f"than one row of column {column!r} (expected one row per source): {shown}"
                f"{' ...' if len(twice) > 5 else ''}; their later class is ambiguous and they are left unlinked")
        if notes is None:
            warnings.warn(said, AmbiguousLinkWarning, stacklevel=2)
        else:
            notes.append(said)
    index = np.array([rows[n][0] if len(rows.get(n, ())) == 1 else -1 for n in earlier.names], dtype=np.int64)
    if not (index >= 0).any():
        raise ValueError(f"no source of {earlier.path.name} ({earlier.release}) is named in column {column!r} of "
                         f"{later.path.name} ({later.release}); expected {earlier.release} names such as "
                         f"{earlier.names[0]!r} there (e.g. {next((n for n in linked if n), 'none')!r} is what it holds)")
    return index

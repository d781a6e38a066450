"""The feature table of a catalog's selected rows: each feature's values and variances, the rows with an unusable
value dropped (or refused) and the missing errors repaired, each said in a warning.

`gpal.catalogs.catalog.Catalog` builds its data sets on it (`~Catalog.dataset`, `~Catalog.pool`,
`~Catalog.pool_blocks`), handing it the reader of its columns: a block of rows is then read, measured and checked
without a pass over the others.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections import Counter
from typing import Any, Callable, Iterator, Mapping, Sequence

import numpy as np

from gpal.catalogs.features import Feature, transform_all
from gpal.catalogs.features.errors import repaired_how, repaired_text

__all__ = ["Block", "DroppedRowsWarning", "RepairedRowsWarning", "feature_blocks", "feature_table"]

#: A catalog's column reader, ``read(name, rows=None)``: column ``name`` as floats at ``rows`` (every row when None).
Reader = Callable[..., np.ndarray]


class RepairedRowsWarning(UserWarning):
    """Rows were kept with a missing error read as exact (variance 0) or given the population's error, as their
    feature's ``missing_error`` says: a repair, counted as dropped rows are (`DroppedRowsWarning`).

    Examples
    --------
    >>> import warnings
    >>> from gpal.catalogs import RepairedRowsWarning, load_catalog
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     data = load_catalog("4FGL-DR4").dataset(classes=["bll", "fsrq"], features="fermi_dr4")
    >>> any(w.category is RepairedRowsWarning for w in caught)
    True
    >>> data.meta["repaired"]                          # error column -> values repaired
    {'Unc_Frac_Variability': 451, 'Unc_PL_Index': 1}
    """


class DroppedRowsWarning(UserWarning):
    """Rows were left out of a data set because a used column was NaN or infinite.

    Examples
    --------
    >>> import warnings
    >>> from gpal.catalogs import DroppedRowsWarning, load_catalog
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     data = load_catalog("4FGL-DR4").dataset(classes=["bll", "fsrq"], features="villacampa2021")
    >>> [w.category is DroppedRowsWarning for w in caught]
    [True]
    >>> data.meta["dropped"]                 # the dropped source and the columns that were unusable
    {'4FGL J2010.2-2523': ['LP_Index', 'Unc_LP_Index', 'LP_beta', 'Unc_LP_beta']}
    """


@dataclasses.dataclass(frozen=True)
class Block:
    """The selected sources of one block of catalog rows: their rows, features and variances, and what was dropped
    and repaired among them; ``totals`` (the last block's only) counts the whole selection."""

    rows: np.ndarray
    X: np.ndarray
    X_var: np.ndarray
    counted: dict[str, Any]  # {"dropped": source -> columns, "repaired": error column -> values}
    span: tuple[int, int]  # the catalog rows the block was selected from
    totals: dict[str, Any] | None = None


def feature_table(read: Reader, names: np.ndarray, mask: np.ndarray, feats: Sequence[Feature], *,
                  min_significance: float | None, significance_column: str, nan_policy: str, release: str,
                  cuts: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
    """The rows ``mask`` selects among the catalog's (``names``) that pass the cuts, their features and variances,
    and what was dropped and repaired (said in warnings; an empty selection refused, naming ``cuts``).

    Returns
    -------
    tuple
        Rows, X, X_var and ``{"dropped": ..., "repaired": ...}``.
    """
    rows, X, X_var, dropped, repaired = _select_block(read, names, mask, feats, min_significance, significance_column,
                                                      nan_policy, slice(0, len(names)), None)
    # the warnings point at the line that asked: Catalog.dataset or Catalog.pool's caller, above Catalog._select
    _say_dropped(dropped, nan_policy, stacklevel=5, what=_which(cuts), feats=feats)
    if rows.size == 0:
        _refuse_empty(release, cuts, dropped)
    _say_repaired(repaired, stacklevel=5, what=_which(cuts))
    return rows, X, X_var, {"dropped": dropped, "repaired": repaired[0]}


def feature_blocks(read: Reader, names: np.ndarray, mask: np.ndarray, feats: Sequence[Feature], *, rows: int,
                   release: str, cuts: Mapping[str, Any]) -> Iterator[Block]:
    """`feature_table` (``nan_policy="drop"``, no significance cut) in blocks of ``rows`` catalog rows, bit for bit
    (the population's errors are every row's); a block that selects no source is skipped.  The dropped and repaired
    sources are said once, before the last block; an empty selection is refused then.

    Yields
    ------
    Block
        The selected sources of each block, in catalog order, the last with the whole selection's ``totals``.
    """
    population = {f: f.population(read) for f in feats}
    dropped: dict[str, list[str]] = {}
    repaired: dict[str, int] = {}
    repairing: list[Feature] = []
    selected, n_repaired, last = 0, 0, None
    for start in range(0, len(names), rows):
        block = slice(start, min(start + rows, len(names)))
        found, X, X_var, gone, (fixed, fixing, n) = _select_block(read, names, mask, feats, None, None, "drop", block,
                                                                  population)
        n_repaired += n
        dropped.update(gone)
        for column, count in fixed.items():
            repaired[column] = repaired.get(column, 0) + count
        repairing += [f for f in fixing if f not in repairing]
        if found.size == 0:
            continue
        if last is not None:
            yield last
        selected += found.size
        last = Block(found, X, X_var, {"dropped": gone, "repaired": fixed}, (block.start, block.stop))
    order = list(dict.fromkeys(c for f in feats for c in f.columns))
    repaired = dict(sorted(repaired.items(), key=lambda item: order.index(item[0])))  # as `feature_table` lists them
    # the warnings point at Catalog.pool_blocks, which hands on these blocks
    _say_dropped(dropped, "drop", stacklevel=3, what=_which(cuts), feats=feats)
    if last is None:
        _refuse_empty(release, cuts, dropped)
    _say_repaired((repaired, repairing, n_repaired), stacklevel=3, what=_which(cuts))
    yield dataclasses.replace(last, totals={"n_samples": selected, "dropped": dropped, "repaired": repaired})


def _select_block(read: Reader, names: np.ndarray, mask: np.ndarray, feats: Sequence[Feature],
                  min_significance: float | None, significance_column: str | None, nan_policy: str, block: slice,
                  population: Mapping[Feature, Any] | None):
    """The rows of ``block`` that ``mask`` selects and pass the cuts, their features, what was dropped (source ->
    columns) and what was repaired (error column -> count, and the features repairing), said by the caller.
    ``population``: feature -> its `Feature.population` over every row (None: over the block's)."""
    def read_block(name: str) -> np.ndarray:
        return read(name, block)

    mask = mask[block]
    measured = {f: f.measure(read_block, None if population is None else population[f]) for f in feats}
    # A row is unusable when a used value is NaN or infinite (the significance included), an error
    # is negative, or an error is one that the feature's upper_limit / missing_error policy says to drop.
    nonfinite: dict[int, list[str]] = {}

    def flag(column: str, bad: np.ndarray) -> None:
        for i in np.nonzero(bad & mask)[0]:
            columns = nonfinite.setdefault(int(i), [])
            if column not in columns:  # several features may read one column
                columns.append(column)

    keep = mask.copy()
    if min_significance is not None:
        significance = read_block(significance_column)
        flag(significance_column, ~np.isfinite(significance))
        with np.errstate(invalid="ignore"):
            keep &= (significance > min_significance) | ~np.isfinite(significance)
    for f in feats:
        for column, bad in measured[f][2].items():
            flag(column, bad)
    nonfinite = {i: cols for i, cols in nonfinite.items() if keep[i]}
    block_names = names[block]
    dropped = {block_names[i]: cols for i, cols in sorted(nonfinite.items())}
    if dropped and nan_policy == "raise":
        _say_dropped(dropped, nan_policy)
    keep[list(nonfinite)] = False
    local = np.nonzero(keep)[0]
    if local.size == 0:
        return local + block.start, np.zeros((0, len(feats))), np.zeros((0, len(feats))), dropped, ({}, [], 0)
    columns = transform_all(feats, [measured[f][0][local] for f in feats], [measured[f][1][local] for f in feats],
                            block_names[local])
    X = np.column_stack([c[0] for c in columns])
    X_var = np.column_stack([c[1] for c in columns])
    return local + block.start, X, X_var, dropped, _repaired(feats, local, read_block)


def _repaired(feats: Sequence[Feature], rows: np.ndarray, read) -> tuple[dict[str, int], list[Feature], int]:
    """Error column -> how many of the selected ``rows`` (of what ``read`` gives) had a missing error repaired,
    the features that repaired one, and how many sources had one."""
    hit: dict[str, np.ndarray] = {}
    repairing: list[Feature] = []
    for f in feats:
        for column, missing in f.repaired_errors(read).items():
            hit[column] = hit.get(column, np.zeros(rows.size, dtype=bool)) | missing[rows]
            if missing[rows].any():
                repairing.append(f)
    counts = {column: int(mask.sum()) for column, mask in hit.items() if mask.any()}
    return counts, repairing, int(np.logical_or.reduce(list(hit.values())).sum()) if counts else 0


def _which(cuts: Mapping[str, Any] | None) -> str:
    """Which set of sources a warning is about, in words: a job reads its labelled sources (its training and
    held-out rows) and its pool (the sources it classifies) apart, and says so of each."""
    if cuts and cuts.get("classes"):
        return f"the labelled selection ({', '.join(cuts['classes'])}: the training and held-out sources)"
    if cuts and cuts.get("select"):
        return f"the pool ({', '.join(map(str, cuts['select']))}: the sources to classify)"
    return "the selection"


def _say_dropped(dropped: Mapping[str, Sequence[str]], nan_policy: str, stacklevel: int = 4,
                 what: str = "the selection", feats: Sequence[Feature] = ()) -> None:
    """The sources left out for NaN, infinite or invalid values, in a warning (``nan_policy="raise"``: an error);
    where an error column of a feature that drops missing errors (``feats``) is the cause, how to keep them."""
    if not dropped:
        return
    message = (
        f"{len(dropped)} source(s) of {what} have NaN, infinite or invalid values in used columns: "
        + "; ".join(f"{name} ({', '.join(cols)})" for name, cols in list(dropped.items())[:10])
        + (" ..." if len(dropped) > 10 else "")
    )
    errors = {c for f in feats if f.missing_error == "drop"
              for c in ((f.error,) if isinstance(f.error, str) else tuple(f.error or ())) + (f.other_error,) if c}
    by_error = sum(1 for cols in dropped.values() if errors.issuperset(cols))
    if by_error:
        message += (f" ({by_error} of them only lack an error the catalog does not give: features='release', the "
                    "command line's, gives such a source the population's median error and keeps it)")
    if nan_policy == "raise":
        raise ValueError(message + " (nan_policy='raise'; use nan_policy='drop' to leave them out)")
    warnings.warn(message + " -- dropped (nan_policy='drop')", DroppedRowsWarning, stacklevel=stacklevel)


def _refuse_empty(release: str, cuts: Mapping[str, Any], dropped: Mapping[str, Sequence[str]]) -> None:
    counts = Counter(c for cols in dropped.values() for c in cols)
    why = (f"; all {len(dropped)} source(s) left were dropped for NaN, infinite or invalid values in "
           + ", ".join(f"{c} ({n})" for c, n in counts.most_common())) if dropped else ""
    raise ValueError(f"the selection is empty in {release}: no source passes {cuts}{why}")


def _say_repaired(repaired: tuple[Mapping[str, int], Sequence[Feature], int], stacklevel: int = 4,
                  what: str = "the selection") -> None:
    """The kept sources whose missing errors were repaired (counts by error column, the features repairing, the
    sources), in a warning."""
    counts, repairing, n = repaired
    if counts:
        how = repaired_how(f.missing_error for f in repairing)
        warnings.warn(f"{n} source(s) of {what} have an error the catalog does not give (NaN or its "
                      f"'not measured' value) {how}: {repaired_text(counts)} -- kept", RepairedRowsWarning,
                      stacklevel=stacklevel)

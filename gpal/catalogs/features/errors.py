"""How a catalog writes an error bar, read once for every feature: which band of a column, the sides of a two-sided
error, upper limits, "not measured" values, and what stands in for a missing error.

The conventions are 4FGL's and 3FGL's (docs/catalogs.md, "Error model of each feature"); a
file that breaks them is refused with a ValueError naming the rows, never read silently.
"""

from __future__ import annotations

from typing import Callable, Iterable, Mapping

import numpy as np

__all__ = ["MISSING_ERROR_REPAIRS", "pick", "population_errors", "population_medians", "read_error", "refuse_rows", "repaired_how",
           "repaired_text"]

#: What each policy that keeps a row without an error does with it, in words.
MISSING_ERROR_REPAIRS = {"exact": "read as exact, variance 0", "population": "given the population's median error"}


def repaired_how(policies: Iterable[str]) -> str:
    """The features' ``missing_error`` policies in words, as warnings, the terminal and reports say them.

    Returns
    -------
    str
        ``"given the population's median error (missing_error='population')"``; empty when none keeps a row.
    """
    kept = sorted(set(policies) & set(MISSING_ERROR_REPAIRS))
    return " or ".join(f"{MISSING_ERROR_REPAIRS[p]} (missing_error={p!r})" for p in kept)


def repaired_text(counts: Mapping[str, int]) -> str:
    """A data set's ``meta["repaired"]`` (error column -> values repaired) in words, as the terminal and
    reports say it.

    Returns
    -------
    str
        ``"Unc_LP_beta 12, Unc_Frac_Variability 3"``; empty when nothing was repaired.
    """
    return ", ".join(f"{column} {n}" for column, n in counts.items())


def refuse_rows(mask: np.ndarray, message: Callable[[np.ndarray], str]) -> None:
    """Raise ValueError(message(rows)) naming the catalog rows where ``mask`` holds, if any."""
    if mask.any():
        raise ValueError(message(np.nonzero(mask)[0]))


def pick(arr: np.ndarray, band: int | None, column: str, label: str, is_error: bool = False) -> np.ndarray:
    """The column, or band ``band`` of a multi-band one: values (n,) / (n, B), errors also (n, 2) / (n, B, 2)."""
    arr = np.asarray(arr, dtype=np.float64)
    per_source = 1 + int(is_error and arr.ndim >= 2 and arr.shape[-1] == 2)  # the trailing [lower, upper] axis
    bands = arr.shape[1] if arr.ndim > per_source else None
    if band is None:
        if bands is not None:
            raise ValueError(f"column {column!r} of feature {label!r} has {bands} bands; give band=0..{bands - 1}")
        return arr
    if bands is None:
        raise ValueError(f"feature {label!r} asks for band {band} but column {column!r} has one value per source")
    if band >= bands:
        raise ValueError(f"feature {label!r} asks for band {band} but column {column!r} has {bands} bands (0..{bands - 1})")
    return arr[:, band]


def read_error(raw: np.ndarray, column: str, label: str, two_sided: str, sentinel: float | None):
    """Lower and upper 1-sigma errors, upper-limit rows, rows without a usable error, rows with a negative one.

    One-sided (n,) errors are symmetric.  A two-sided (n, 2) [lower, upper] error has its lower
    bound negative by convention; ``"mean"`` symmetrises it as the mean of the absolute bounds,
    ``"split_normal"`` keeps both sides and refuses a wrong sign.  An upper-limit row (NaN lower,
    finite upper) takes the upper error on both sides.  A one-sided error below 0 is a fault in
    the catalog, reported rather than silently made positive.
    """
    negative = np.zeros(raw.shape[:1], dtype=bool)
    upper_limit = np.zeros(raw.shape[:1], dtype=bool)
    if raw.ndim == 2 and raw.shape[1] == 2:
        lower, upper = raw[:, 0], raw[:, 1]
        if two_sided == "split_normal":
            wrong = (np.isfinite(lower) & (lower > 0)) | (np.isfinite(upper) & (upper < 0))
            if wrong.any():
                rows = np.nonzero(wrong)[0]
                raise ValueError(
                    f"two-sided error column {column!r} of feature {label!r} has {rows.size} row(s) (rows "
                    f"{rows[:3].tolist()}, e.g. {raw[rows[0]].tolist()}) outside the [lower <= 0, upper >= 0] convention"
                )
        lower, upper = np.abs(lower), np.abs(upper)
        upper_limit = np.isnan(lower) & np.isfinite(upper)
        lower = np.where(upper_limit, upper, lower)
    elif raw.ndim == 1:
        if two_sided == "split_normal":
            raise ValueError(
                f"feature {label!r} reads {column!r} as two-sided 4FGL errors (two_sided='split_normal': a [lower, upper] "
                f"pair, NaN lower for an upper limit) but the column has one error per source, shape {raw.shape}; "
                "use two_sided='mean' for a one-sided error"
            )
        negative = np.isfinite(raw) & (raw < 0)
        lower = upper = np.where(negative, np.nan, raw)
    else:
        raise ValueError(f"an error column must be (n,) or (n, 2) [lower, upper]; got shape {raw.shape} for {column!r}")
    if sentinel is not None:  # "no error measured": as good as NaN
        placeholder = np.isclose(upper, sentinel, rtol=1e-6, atol=0.0)
        lower, upper = np.where(placeholder, np.nan, lower), np.where(placeholder, np.nan, upper)
    missing = ~(np.isfinite(lower) & np.isfinite(upper)) & ~negative
    return lower, upper, upper_limit, missing, negative


def population_medians(lower: np.ndarray, upper: np.ndarray, missing: np.ndarray, negative: np.ndarray, column: str,
                       label: str) -> tuple[float, float] | None:
    """The median lower and upper errors of the rows that have one, what `population_errors` gives a row without
    (None where every row has one)."""
    known = ~(missing | negative)
    if missing.any() and not known.any():
        raise ValueError(f"feature {label!r} gives missing errors the population's error, but no row of {column!r} "
                         "has an error; use missing_error='exact' or 'drop'")
    if not missing.any():
        return None
    return float(np.median(lower[known])), float(np.median(upper[known]))


def population_errors(lower: np.ndarray, upper: np.ndarray, missing: np.ndarray, negative: np.ndarray, column: str,
                      label: str, medians: tuple[float, float] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper errors with each ``missing`` row given the median error of the rows that have one.

    A catalog gives no error where it measured none (4FGL's Unc_Frac_Variability = 10 where the
    variability is set to 0): the median over the whole catalog is what a source of unknown error
    plausibly has, where reading the value as exact would claim it is known perfectly.  ``medians``: that
    median where these rows are a block of the catalog (`population_medians` of all its rows).
    """
    if medians is None:
        medians = population_medians(lower, upper, missing, negative, column, label)
    if not missing.any():
        return lower, upper
    return np.where(missing, medians[0], lower), np.where(missing, medians[1], upper)

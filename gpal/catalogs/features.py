"""Declarative features: a catalog column, its 1-sigma error column and a transform.

A feature is data, not code: it names the columns it reads and how it maps them,
so a data set records exactly how it was built and the same spec works on every
4FGL release.  Error bars are carried through the transform as variances, either
to first order (delta method: var(g(x)) ~= g'(x)^2 sigma^2) or by Monte Carlo
through the error distribution that the catalog describes: split-normal two-sided
errors, 4FGL upper-limit bands, a physical lower bound such as flux >= 0.  The
catalog's conventions and each preset feature's error model are in docs/catalogs.md
("Error model of each feature").
"""

from __future__ import annotations

import functools
import hashlib
import math
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import MISSING, asdict, dataclass, field, fields, replace
from typing import Any, Callable, Mapping, Sequence

import numpy as np
from scipy.special import ndtr, ndtri

from gpal.catalogs.releases import FGL3_COLUMNS, FGL4_COLUMNS, Columns

__all__ = ["Feature", "FEATURE_PRESETS", "RELEASE_PRESET", "resolve_features", "transform_all", "MC_DRAWS", "MC_SEED"]

#: The preset name that stands for "the preset of the catalog's release" (`gpal.catalogs.releases`), resolved
#: by the catalog that reads it.
RELEASE_PRESET = "release"

_TRANSFORMS = ("identity", "log", "log10", "abs", "sin_deg", "abs_sin_deg")
_COMBINES = (None, "ratio", "hardness")
_REDUCES = (None, "share", "max_over_mean", "cv")
_UPPER_LIMIT_POLICIES = ("upper_error", "drop")
#: What each policy that keeps a row without an error does with it, in words.
MISSING_ERROR_REPAIRS = {"exact": "read as exact, variance 0", "population": "given the population's median error"}
_MISSING_ERROR_POLICIES = ("drop", *MISSING_ERROR_REPAIRS)
_PROPAGATIONS = ("first_order", "monte_carlo")
_TWO_SIDED = ("mean", "split_normal")
_CENTRES = ("point", "draw_mean")

#: Monte Carlo propagation: draws per source (a power of 2, as a Sobol sample needs), and the seed of
#: their scrambled-Sobol probabilities.  Every source is propagated at the same probabilities (common
#: random numbers), so a source's variance depends on its own catalog entries only: not on the
#: selection, the row order or the run.
MC_DRAWS = 2048
MC_SEED = 20_240_622
_MC_ROWS_PER_BLOCK = 128  # rows propagated at once: keeps the (rows, MC_DRAWS) temporaries to 2 MB each
#: Rows propagated at once however many operands a feature has (3FGL's 48-month light curves would otherwise take
#: 5 rows a block, and spend 40% of their time in Python's per-block calls).
_MC_MIN_ROWS = 16


@dataclass(frozen=True)
class Feature:
    """One model input built from catalog columns, with its error bar carried along.

    Parameters
    ----------
    column
        the value column, e.g. ``"LP_Index"``; with ``band``, one band of a multi-band
        column such as ``Flux_Band`` (n, 8).  With ``reduce``, a tuple of one column per band
        (3FGL's ``Flux100_300`` ...) reads as the bands of one multi-band column.
    error
        its 1-sigma uncertainty column (``None``: the feature is exact, variance 0):
        one-sided (n,) / (n, bands), or two-sided (n, 2) / (n, bands, 2) [lower, upper];
        a tuple of one error column per band where ``column`` is a tuple.
    transform
        ``"identity"``, ``"log"``, ``"log10"``, ``"abs"``, ``"sin_deg"`` or
        ``"abs_sin_deg"`` (``|sin b|`` of an angle in degrees, e.g. ``|sin GLAT|``).
    floor
        for log transforms, values below ``floor`` are raised to it first (``LP_SigCurv``
        can be exactly 0); without a floor a non-positive value is an error.  Monte Carlo
        draws are floored the same way.
    combine
        ``"ratio"`` (value / other) or ``"hardness"`` ((value - other) / (value + other)),
        where ``other`` is ``other`` (default: the same column) at ``other_band``, with
        ``other_error`` (default: ``error``).  Errors are taken as independent.
    upper_limit
        what a NaN lower error with a finite upper error means (4FGL: the band's
        Sqrt_TS_Band < 1, and value + 2 x upper error is its 2-sigma upper limit):
        ``"upper_error"`` takes the upper error as the Gaussian sigma on both sides of the
        value (with ``lower_bound=0`` the Monte Carlo draws are N(value, upper^2) truncated
        at 0, the flat-prior posterior whose 95.45% quantile is the catalog's limit when the
        value is 0); ``"drop"`` leaves the row out (reported).
    missing_error
        what a NaN or infinite error (or ``error_sentinel``) means: ``"drop"`` leaves
        the row out (reported), ``"exact"`` treats that row's value as exact (variance 0),
        ``"population"`` gives it the population's error: the median error of the column
        (of each side, of each band) over every catalog row that has one (reported too).
        A negative one-sided error is a fault: first-order features leave the row out
        (reported); Monte Carlo features refuse the column (ValueError).
    propagation
        ``"first_order"`` (delta method, one symmetric sigma per operand) or
        ``"monte_carlo"``: MC_DRAWS draws of each operand from its error distribution are
        combined and transformed, and the variance of the transformed draws is the
        feature's variance.  The feature's value stays the catalog's point value through
        the same map (not the draws' mean).  Seeded quasi-random draws (MC_SEED): deterministic.
    two_sided
        how a [lower, upper] error column is read: ``"mean"`` symmetrises it (one sigma,
        the mean of the absolute bounds); ``"split_normal"`` (Monte Carlo only) reads the
        4FGL convention: a finite pair is a split normal with sigma ``|lower|`` below the value
        and upper above it (the two-piece Gaussian likelihood under a flat prior), a NaN
        lower error an upper limit (see ``upper_limit``).  The column must then have the
        [lower, upper] axis with lower <= 0 <= upper, and an upper-limit row a value.
    lower_bound
        Monte Carlo only: the physical lower bound of the untransformed operands (0 for
        fluxes); the error distribution is truncated there (renormalised above it).  A
        catalog value below the bound is an error.
    error_sentinel
        an error value that the catalog writes where it measured none (4FGL-DR4's
        Unc_Frac_Variability is 10 where Frac_Variability is set to 0); it counts as a
        missing error (``missing_error``).  Matched to float32 precision.
    reduce
        a feature of many bands of one multi-band column at once (Monte Carlo only), each band an
        operand with its own error model: ``"share"`` is band ``band``'s fraction of the sum over
        ``bands`` (a band spectrum's shape), ``"max_over_mean"`` and ``"cv"`` (sample standard
        deviation over mean) summarise the bands as a light curve.  Computed per draw, so the
        error bars and upper limits of every band reach the feature's variance.
    bands
        the bands ``reduce`` reads (default: all of the column's bands).
    centre
        Monte Carlo only: the feature's value is the catalog's point value through the map
        (``"point"``) or the mean of the transformed draws (``"draw_mean"``), for maps whose
        point value sits at the edge of its draws (the log share of a band whose best fit is ~0).
    name
        feature name in data sets; defaults to e.g. ``log(column)``, ``HR(Flux_Band[3],Flux_Band[4])``.

    Examples
    --------
    >>> import numpy as np
    >>> from gpal.catalogs import Feature
    >>> flux = Feature("Energy_Flux100", error="Unc_Energy_Flux100", transform="log10")
    >>> flux.label, flux.columns
    ('log10(Energy_Flux100)', ('Energy_Flux100', 'Unc_Energy_Flux100'))
    >>> values, variances = flux.apply(np.array([1e-12, 1e-11]), np.array([1e-13, 1e-12]))
    >>> values, variances.round(5)      # a 10% error is 0.043 dex: variance 0.0019
    (array([-12., -11.]), array([0.00189, 0.00189]))
    >>> Feature.from_spec("log10:Energy_Flux100", available=["Energy_Flux100", "Unc_Energy_Flux100"]) == flux
    True
    """

    column: str | tuple[str, ...]
    error: str | tuple[str, ...] | None = None
    transform: str = "identity"
    floor: float | None = None
    name: str | None = None
    band: int | None = None
    combine: str | None = None
    other: str | None = None
    other_band: int | None = None
    other_error: str | None = None
    upper_limit: str = "upper_error"
    missing_error: str = "drop"
    propagation: str = "first_order"
    two_sided: str = "mean"
    lower_bound: float | None = None
    error_sentinel: float | None = None
    reduce: str | None = None
    bands: tuple[int, ...] | None = None
    centre: str = "point"

    def __post_init__(self) -> None:
        what = f"feature {self.label!r}"
        if self.bands is not None:
            if not isinstance(self.bands, (tuple, list)):
                raise ValueError(f"bands of {what} must be a list of band indices; got {self.bands!r}")
            object.__setattr__(self, "bands", tuple(self.bands))  # a list from JSON or YAML; hashable
        for key in ("column", "error"):
            if isinstance(getattr(self, key), list):
                object.__setattr__(self, key, tuple(getattr(self, key)))
        if self.transform not in _TRANSFORMS:
            raise ValueError(f"unknown transform {self.transform!r} for {what}; valid: {list(_TRANSFORMS)}")
        if self.floor is not None:
            if self.transform not in ("log", "log10"):
                raise ValueError(f"floor={self.floor} given for {what} but floors only apply to log transforms")
            if not (math.isfinite(self.floor) and self.floor > 0):
                raise ValueError(f"floor for {what} must be a positive number; got {self.floor}")
        if self.combine not in _COMBINES:
            raise ValueError(f"unknown combine {self.combine!r} for {what}; valid: 'ratio', 'hardness' or None")
        for key, valid in (("upper_limit", _UPPER_LIMIT_POLICIES), ("missing_error", _MISSING_ERROR_POLICIES),
                           ("propagation", _PROPAGATIONS), ("two_sided", _TWO_SIDED), ("centre", _CENTRES)):
            if getattr(self, key) not in valid:
                kind = f"{key} policy" if key in ("upper_limit", "missing_error") else key
                raise ValueError(f"unknown {kind} {getattr(self, key)!r} for {what}; valid: {list(valid)}")
        for key in ("band", "other_band"):
            value = getattr(self, key)
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0):
                raise ValueError(f"{key} of {what} must be a band index >= 0; got {value!r}")
        for key in ("lower_bound", "error_sentinel"):
            value = getattr(self, key)
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float, np.number))
                                      or not math.isfinite(value)):
                raise ValueError(f"{key} of {what} must be a finite number or None; got {value!r}")
        self._check_reduce(what)
        if self.combine is None:
            if any(v is not None for v in (self.other, self.other_band, self.other_error)):
                raise ValueError(f"other / other_band / other_error given for {what} without combine='ratio' or 'hardness'")
        elif self.other_column == self.column and self.other_band == self.band:
            raise ValueError(f"{what} combines {self.column}{_band(self.band)} with itself; give another column or other_band")
        if self.propagation == "first_order":
            if self.two_sided != "mean":
                raise ValueError(f"two_sided={self.two_sided!r} for {what} needs propagation='monte_carlo' "
                                 "(first-order propagation carries one symmetric sigma)")
            if self.lower_bound is not None:
                raise ValueError(f"lower_bound={self.lower_bound} for {what} needs propagation='monte_carlo' "
                                 "(first-order propagation cannot truncate an error distribution)")
            if self.centre != "point":
                raise ValueError(f"centre={self.centre!r} for {what} needs propagation='monte_carlo' (it is a mean of draws)")
        elif self.transform in ("log", "log10") and self.floor is None and (self.lower_bound is None or self.lower_bound < 0):
            raise ValueError(f"Monte Carlo draws of {what} can be <= 0 before its {self.transform}; "
                             "give lower_bound >= 0 (e.g. 0 for a flux) or a floor")

    def _check_reduce(self, what: str) -> None:
        if self.reduce not in _REDUCES:
            raise ValueError(f"unknown reduce {self.reduce!r} for {what}; valid: {list(_REDUCES)}")
        per_band = isinstance(self.column, tuple)
        if per_band and (len(self.column) < 2 or not all(isinstance(c, str) for c in self.column)):
            raise ValueError(f"column of {what} must be a column name or, with reduce, two or more band column "
                             f"names; got {self.column!r}")
        if isinstance(self.error, tuple) and not (per_band and len(self.error) == len(self.column)
                                                  and all(isinstance(c, str) for c in self.error)):
            raise ValueError(f"error of {what} is a tuple {self.error!r}: it needs a tuple column of as many band "
                             f"columns, one error column each; column is {self.column!r}")
        if self.reduce is None:
            if self.bands is not None:
                raise ValueError(f"bands={self.bands} given for {what} without reduce")
            if per_band:
                raise ValueError(f"column of {what} is a tuple of band columns {self.column!r}, which needs reduce")
            return
        if per_band and self.error is not None and not isinstance(self.error, tuple):
            raise ValueError(f"{what} reads the band columns {self.column!r}: give one error column per band, "
                             f"not {self.error!r}")
        if self.combine is not None or self.propagation != "monte_carlo":
            raise ValueError(f"reduce={self.reduce!r} for {what} needs propagation='monte_carlo' and no combine")
        if self.bands is not None and (len(self.bands) < 2 or len(set(self.bands)) != len(self.bands) or any(
                isinstance(b, bool) or not isinstance(b, (int, np.integer)) or b < 0 for b in self.bands)):
            raise ValueError(f"bands of {what} must be two or more distinct band indices >= 0; got {self.bands}")
        if self.reduce == "share":
            if self.band is None or (self.bands is not None and self.band not in self.bands):
                raise ValueError(f"reduce='share' for {what} needs band, one of its bands {self.bands}; got {self.band}")
        elif self.band is not None:
            raise ValueError(f"reduce={self.reduce!r} for {what} summarises several bands; give bands, not band")

    @property
    def other_column(self) -> str | None:
        return None if self.combine is None else (self.other or self.column)

    @property
    def label(self) -> str:
        if self.name:
            return self.name
        column = "|".join(self.column) if isinstance(self.column, tuple) else self.column
        base = f"{column}{_band(self.band)}"
        if self.reduce is not None:
            base = f"{self.reduce}({base})"
        if self.combine is not None:
            other = f"{self.other or self.column}{_band(self.other_band)}"
            base = f"HR({other},{base})" if self.combine == "hardness" else f"{base}/{other}"
        return base if self.transform == "identity" else f"{self.transform}({base})"

    @property
    def columns(self) -> tuple[str, ...]:
        cols = [self.column, self.error, self.other_column, self.other_error or (self.error if self.combine else None)]
        flat = (name for c in cols if c for name in (c if isinstance(c, tuple) else (c,)))
        return tuple(dict.fromkeys(flat))

    def to_dict(self) -> dict[str, Any]:
        """The fields that differ from their defaults (JSON-able; ``Feature.from_spec`` rebuilds the feature).

        Returns
        -------
        dict
            Field name -> value, defaults left out.
        """
        return {k: v for k, v in asdict(self).items() if v is not None and _DEFAULTS.get(k) != v}

    @classmethod
    def from_spec(cls, spec: "Feature | Mapping[str, Any] | str", available: Sequence[str] = ()) -> "Feature":
        """Build from a Feature, a dict of fields, or a string ``"COL"`` / ``"log:COL"`` / ``"log10:COL"``.

        For the string form the error column is ``Unc_COL`` when ``available``
        (the catalog's column names) contains it, as in every 4FGL release.

        Returns
        -------
        Feature
            The feature the spec describes (``spec`` itself if it is one).
        """
        if isinstance(spec, Feature):
            return spec
        if isinstance(spec, Mapping):
            unknown = set(spec) - set(_FIELDS)
            if unknown or "column" not in spec:
                raise ValueError(
                    f"feature spec {dict(spec)} must have 'column' and only the keys {', '.join(_FIELDS)}"
                    + (f"; unknown: {sorted(unknown)}" if unknown else "")
                )
            return cls(**spec)
        if isinstance(spec, str):
            transform, _, column = spec.rpartition(":")
            transform = transform or "identity"
            error = f"Unc_{column}" if f"Unc_{column}" in available else None
            return cls(column=column, error=error, transform=transform)
        raise TypeError(f"a feature spec must be a Feature, a dict or a string; got {type(spec).__name__}")

    # ------------------------------------------------------------ evaluation
    def measure(self, read: Callable[[str], np.ndarray]) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
        """Untransformed values, their errors and the unusable rows of every catalog row.

        ``read(column)`` returns a catalog column as floats.  The errors are what
        ``transform_values`` takes: for first-order features one 1-sigma error per row (of the
        combined value for a ratio or hardness ratio); for Monte Carlo features the error model
        of each operand, an (n, operands, 3) array of [value, lower sigma, upper sigma].  The
        third result maps a column name to the rows it makes unusable (non-finite values, or
        errors the policies say to drop); elsewhere values and errors are finite.  A file that
        breaks the declared error convention is refused with a ValueError.

        Returns
        -------
        values : numpy.ndarray
            (n,) untransformed values (the combined value for a ratio or hardness ratio).
        errors : numpy.ndarray
            (n,) 1-sigma errors, or the (n, operands, 3) error model of a Monte Carlo feature.
        unusable : dict
            Column name -> (n,) boolean mask of the rows it makes unusable.
        """
        if self.reduce is not None:
            return self._measure_bands(read)
        x, lo, up, bad = self._one(read, self.column, self.band, self.error)
        operands = [(x, lo, up)]
        value = x
        if self.combine is not None:
            y, lo_y, up_y, bad_other = self._one(read, self.other_column, self.other_band, self.other_error or self.error)
            for column, rows in bad_other.items():
                bad[column] = bad.get(column, np.zeros_like(rows)) | rows
            operands.append((y, lo_y, up_y))
            value = _combine_values(self.combine, x, y)
        if self.propagation == "monte_carlo":
            return value, np.stack([np.stack(op, axis=-1) for op in operands], axis=1), bad
        sigmas = [0.5 * (lower + upper) for _, lower, upper in operands]  # the symmetric sigma of each operand
        if self.combine is None:
            return x, sigmas[0], bad
        value, variance = _combine(self.combine, x, sigmas[0], operands[1][0], sigmas[1])
        return value, np.sqrt(variance), bad

    def repaired_errors(self, read: Callable[[str], np.ndarray]) -> dict[str, np.ndarray]:
        """Error column -> the rows whose missing error the feature repairs rather than drops (``missing_error``
        ``"exact"`` or ``"population"``), which a job counts as it counts dropped ones.

        Returns
        -------
        dict
            Error column name -> (n,) boolean mask; empty when the feature drops such rows instead.
        """
        operands = [(self.band, self.error)]
        if self.combine is not None:
            operands.append((self.other_band, self.other_error or self.error))
        if self.reduce is not None:
            operands = [(b, error) for _, b, error in self._band_operands(read)]
        out: dict[str, np.ndarray] = {}
        for band, error in operands if self.missing_error != "drop" else ():
            if error is not None:
                raw = _pick(read(error), band, error, self.label, is_error=True)
                missing = _read_error(raw, error, self.label, self.two_sided, self.error_sentinel)[3]
                out[error] = out.get(error, np.zeros_like(missing)) | missing
        return out

    def _band_operands(self, read) -> list[tuple[str, int | None, str | None]]:
        """(column, band within it, error column) of every band of ``bands``: one multi-band column's bands, or
        the band columns of a tuple ``column``, so that both layouts reach the one reduction."""
        if isinstance(self.column, tuple):
            return self._band_reads(self._bands(len(self.column)))
        n_bands = np.shape(read(self.column))
        if len(n_bands) != 2:
            raise ValueError(f"feature {self.label!r} reduces the bands of {self.column!r}, which needs a multi-band "
                             f"(n, bands) column; got shape {n_bands}")
        return self._band_reads(self._bands(n_bands[1]))

    def _band_reads(self, bands: Sequence[int]) -> list[tuple[str, int | None, str | None]]:
        if isinstance(self.column, tuple):
            errors = self.error or (None,) * len(self.column)
            return [(self.column[b], None, errors[b]) for b in bands]
        return [(self.column, b, self.error) for b in bands]

    def _operand_sources(self, operands: int) -> list[tuple]:
        """What each of the error model's ``operands`` is read from, and by which error rules: features that name
        the same operand may draw it once (`transform_all`), and operands read from other columns never merge."""
        if self.reduce is not None:  # the model's operands are ``bands``, or all the column's bands in order
            reads = self._band_reads(self.bands if self.bands is not None else range(operands))
        else:
            reads = [(self.column, self.band, self.error)]
            if self.combine is not None:
                reads.append((self.other_column, self.other_band, self.other_error or self.error))
        rules = (self.two_sided, self.upper_limit, self.missing_error, self.error_sentinel, self.lower_bound)
        return [read + rules for read in reads]

    def _measure_bands(self, read):
        """``measure`` of a ``reduce`` feature: every band of ``bands`` is an operand of the error model."""
        operands, bad = [], {}
        for column, b, error in self._band_operands(read):
            x, lo, up, bad_b = self._one(read, column, b, error)
            operands.append(np.stack([x, lo, up], axis=-1))
            for name, rows in bad_b.items():
                bad[name] = bad.get(name, np.zeros_like(rows)) | rows
        model = np.stack(operands, axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            value = self._reduce(model[..., 0])
        return value, model, bad

    def _bands(self, n_bands: int) -> tuple[int, ...]:
        bands = self.bands if self.bands is not None else tuple(range(n_bands))
        if max(bands) >= n_bands:
            raise ValueError(f"feature {self.label!r} asks for bands {list(bands)} but {self.column!r} has {n_bands} "
                             f"bands (0..{n_bands - 1})")
        return bands

    def _reduce(self, x: np.ndarray) -> np.ndarray:
        """The reduction of band values x (n, bands, ...) over the bands axis: the one formula for values and draws."""
        if self.reduce == "share":
            position = (self.bands or tuple(range(x.shape[1]))).index(self.band)
            return x[:, position] / x.sum(axis=1)
        mean = x.mean(axis=1)
        if self.reduce == "max_over_mean":
            return x.max(axis=1) / mean
        return x.std(axis=1, ddof=1) / mean

    def _one(self, read, column, band, error):
        """Values, lower and upper 1-sigma errors (0 where exact) and unusable rows of one operand."""
        values = _pick(read(column), band, column, self.label)
        bad = {column: ~np.isfinite(values)}
        if self.lower_bound is not None:
            below = np.isfinite(values) & (values < self.lower_bound)  # a non-finite value is dropped anyway
            _refuse_rows(below, lambda rows: (
                f"column {column!r} of feature {self.label!r} holds {rows.size} value(s) below its lower_bound "
                f"{self.lower_bound} (min {values[rows].min():.4g}, rows {rows[:3].tolist()}); the bound must hold "
                "for every catalog value"))
        if error is None:
            zero = np.zeros_like(values)
            return values, zero, zero.copy(), bad
        raw = _pick(read(error), band, error, self.label, is_error=True)
        lower, upper, upper_limit, missing, negative = _read_error(raw, error, self.label, self.two_sided, self.error_sentinel)
        if negative.any():
            if self.propagation == "monte_carlo":
                _refuse_rows(negative, lambda rows: (
                    f"error column {error!r} of feature {self.label!r} holds {rows.size} negative value(s) "
                    f"(min {raw[rows].min():.4g}, rows {rows[:3].tolist()}); a one-sided 1-sigma error must be >= 0"))
            bad[f"{error} (negative)"] = negative  # first order: the row is left out and reported
        if self.two_sided == "split_normal":
            _refuse_rows(upper_limit & np.isnan(values), lambda rows: (
                f"feature {self.label!r}: {rows.size} row(s) of {column!r} (rows {rows[:3].tolist()}) are NaN where "
                f"{error!r} marks an upper limit (NaN lower, finite upper error); the 4FGL convention needs the "
                "best-fit value there (value + 2 x upper error is the 2-sigma limit)"))
        if self.upper_limit == "drop":
            bad[f"{error} (upper limit)"] = upper_limit
        if self.missing_error == "drop":
            bad[error] = missing
        if self.missing_error == "population":
            lower, upper = _population_errors(lower, upper, missing, negative, error, self.label)
            missing = np.zeros_like(missing)
        unusable = missing | negative
        return values, np.where(unusable, 0.0, lower), np.where(unusable, 0.0, upper), bad

    def transform_values(self, x: np.ndarray, sigma: np.ndarray, ids: Sequence[str] = ()) -> tuple[np.ndarray, np.ndarray]:
        """Transformed values and their variances.

        ``sigma`` is the error ``measure`` returns for these rows: for first-order features one
        1-sigma error per row, propagated as var(g(x)) ~= g'(x)^2 sigma^2; for Monte Carlo
        features the (n, operands, 3) error model, or a plain (n,) sigma read as a symmetric
        error of the feature's one operand.  The value is the point value put through the
        transform in both cases.

        Returns
        -------
        values, variances : numpy.ndarray
            (n,) transformed values and their variances.
        """
        if self.propagation == "monte_carlo":
            return transform_all([self], [x], [sigma], ids)[0]
        x = np.asarray(x, dtype=np.float64)
        s = np.asarray(sigma, dtype=np.float64)
        self._check_log_argument(x, ids)
        if s.ndim > x.ndim:
            raise ValueError(f"feature {self.label!r} propagates to first order: sigma must be one error per value, "
                             f"shape {x.shape}; got {s.shape}")
        if self.transform == "identity":
            return x, s**2
        if self.transform == "abs":
            return np.abs(x), s**2
        if self.transform in ("sin_deg", "abs_sin_deg"):
            # d/dx sin(x deg) = cos(x deg) pi / 180
            return self._g(x), (np.cos(np.radians(x)) * math.pi / 180.0 * s) ** 2
        if self.floor is not None:
            x = np.maximum(x, self.floor)
        scale = 1.0 if self.transform == "log" else math.log(10.0)
        # d/dx ln(x) = 1/x: var(log x) ~= (sigma / x)^2 (and / ln(10)^2 for log10).
        return np.log(x) / scale, (s / (x * scale)) ** 2

    def apply(self, values: np.ndarray, sigma: np.ndarray | None, ids: Sequence[str] = ()) -> tuple[np.ndarray, np.ndarray]:
        """Transformed values and variances of one plain column's finite values (rows already selected).

        ``sigma`` is a one-sided (n,) or two-sided (n, 2) [lower, upper] error, read as the
        feature reads its error column.

        Returns
        -------
        values, variances : numpy.ndarray
            (n,) transformed values and their variances.
        """
        if self.reduce is not None:
            raise ValueError(f"feature {self.label!r} reduces several bands: build it from a catalog (Feature.measure), "
                             "not from one plain column")
        x = np.asarray(values, dtype=np.float64)
        if sigma is None:
            return self.transform_values(x, np.zeros_like(x), ids)
        lower, upper, _, _, negative = _read_error(np.asarray(sigma, dtype=np.float64), "sigma", self.label,
                                                   self.two_sided, self.error_sentinel)
        if negative.any():
            raise ValueError(f"errors of feature {self.label!r} hold {negative.sum()} negative value(s); 1-sigma errors are >= 0")
        if self.propagation == "first_order":
            return self.transform_values(x, 0.5 * (lower + upper), ids)
        return self.transform_values(x, np.stack([x, lower, upper], axis=-1)[:, None, :], ids)

    # ------------------------------------------------------------- internals
    def _g(self, x: np.ndarray) -> np.ndarray:
        """The transform of values (point values or Monte Carlo draws), floored first for logs."""
        if self.transform == "identity":
            return x
        if self.transform == "abs":
            return np.abs(x)
        if self.transform in ("sin_deg", "abs_sin_deg"):
            out = np.sin(np.radians(x))
            return np.abs(out) if self.transform == "abs_sin_deg" else out
        if self.floor is not None:
            x = np.maximum(x, self.floor)
        return np.log(x) / (1.0 if self.transform == "log" else math.log(10.0))

    def _check_log_argument(self, x: np.ndarray, ids: Sequence[str]) -> None:
        if self.transform not in ("log", "log10") or self.floor is not None or not (x <= 0).any():
            return
        bad = np.nonzero(x <= 0)[0]
        examples = [str(ids[i]) for i in bad[:3]] if len(ids) else bad[:3].tolist()
        raise ValueError(
            f"{self.transform} transform of feature {self.label!r}: {bad.size} non-positive value(s) "
            f"(min {x.min():.4g}; e.g. {examples}) and no floor; give Feature(..., floor=...) to clip them"
        )

    def _error_model(self, x: np.ndarray, s: np.ndarray) -> np.ndarray:
        """The (n, operands, 3) [value, lower sigma, upper sigma] model of a Monte Carlo feature's rows."""
        operands = 2 if self.combine is not None else 1 if self.reduce is None else s.shape[1] if s.ndim == 3 else "bands"
        if s.shape == x.shape and operands == 1:  # a plain symmetric sigma of the one operand
            model = np.stack([x, s, s], axis=-1)[:, None, :]
        elif s.ndim == 3 and s.shape[0] == x.shape[0] and s.shape[1:] == (operands, 3):
            model = s
        else:
            raise ValueError(
                f"feature {self.label!r} propagates by Monte Carlo: its errors must be the ({x.shape[0]}, {operands}, 3) "
                f"error model that Feature.measure returns" + (" or one sigma per value" if operands == 1 else "")
                + f"; got shape {s.shape}"
            )
        if (model[..., 1:] < 0).any():
            raise ValueError(f"error model of feature {self.label!r} holds negative sigmas; 1-sigma errors are >= 0")
        if self.lower_bound is not None and (model[..., 0] < self.lower_bound).any():
            raise ValueError(f"feature {self.label!r} has operand values below its lower_bound {self.lower_bound}")
        return model


_DEFAULTS = {f.name: f.default for f in fields(Feature) if f.default is not MISSING}
_FIELDS = tuple(f.name for f in fields(Feature))


def _refuse_rows(mask: np.ndarray, message: Callable[[np.ndarray], str]) -> None:
    """Raise ValueError(message(rows)) naming the catalog rows where ``mask`` holds, if any."""
    if mask.any():
        raise ValueError(message(np.nonzero(mask)[0]))


def _band(band: int | None) -> str:
    return "" if band is None else f"[{band}]"


def _pick(arr: np.ndarray, band: int | None, column: str, label: str, is_error: bool = False) -> np.ndarray:
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


def _read_error(raw: np.ndarray, column: str, label: str, two_sided: str, sentinel: float | None):
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


def _population_errors(lower: np.ndarray, upper: np.ndarray, missing: np.ndarray, negative: np.ndarray, column: str,
                       label: str) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper errors with each ``missing`` row given the median error of the rows that have one.

    A catalog gives no error where it measured none (4FGL's Unc_Frac_Variability = 10 where the
    variability is set to 0): the median over the whole catalog is what a source of unknown error
    plausibly has, where reading the value as exact would claim it is known perfectly.
    """
    known = ~(missing | negative)
    if missing.any() and not known.any():
        raise ValueError(f"feature {label!r} gives missing errors the population's error, but no row of {column!r} "
                         "has an error; use missing_error='exact' or 'drop'")
    if not missing.any():
        return lower, upper
    return np.where(missing, np.median(lower[known]), lower), np.where(missing, np.median(upper[known]), upper)


def _combine_values(kind: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return a / b if kind == "ratio" else (a - b) / (a + b)


def _combine(kind: str, a: np.ndarray, sa: np.ndarray, b: np.ndarray, sb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """a / b or (a - b) / (a + b) with first-order variances, the two errors independent."""
    value = _combine_values(kind, a, b)
    with np.errstate(divide="ignore", invalid="ignore"):
        if kind == "ratio":
            # d/da = 1/b, d/db = -a/b^2
            return value, (sa / b) ** 2 + (a * sb / b**2) ** 2
        # d/da = 2b/(a+b)^2, d/db = -2a/(a+b)^2
        return value, (2.0 / (a + b) ** 2) ** 2 * (b**2 * sa**2 + a**2 * sb**2)


# ------------------------------------------------------------------ Monte Carlo propagation
@functools.lru_cache(maxsize=None)
def _uniforms(draws: int, dims: int) -> np.ndarray:
    """(draws, dims) scrambled-Sobol points from MC_SEED: each column stratifies (0, 1), the columns independent."""
    from scipy.stats import qmc

    u = qmc.Sobol(d=dims, scramble=True, seed=MC_SEED).random(draws)
    u.setflags(write=False)
    return u


def _split_normal_draws(centre, lower, upper, u, bound):
    """Draws (rows, D) of split normals at the probabilities ``u`` (D,), truncated below at ``bound`` (None: none).

    A split normal with mode ``centre`` has density proportional to N(centre, lower^2) below the
    mode and N(centre, upper^2) above it, so a fraction lower / (lower + upper) of it lies below.
    Truncation at ``bound`` keeps the part of the lower half above the bound and renormalises.
    Each draw is the distribution's quantile at its probability: stratified probabilities give a
    stratified sample, exact in distribution for every row.
    """
    c, lo, up = centre[:, None], lower[:, None], upper[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):  # per row: where the draws fall
        p_lower = np.where(lo + up > 0, lo / (lo + up), 0.5)
        # Half the mass of the lower half-normal that lies above the bound: 0.5 where the bound is out of reach.
        half = np.full_like(c, 0.5) if bound is None else ndtr(np.where(lo > 0, (c - bound) / lo, np.inf)) - 0.5
        kept = 2.0 * half * p_lower
        q = np.where(kept + 1.0 - p_lower > 0, kept / (kept + 1.0 - p_lower), 0.0)  # P(draw below the mode)
        # P(0 <= Z <= |z|) of each draw's half-normal distance |z| from the mode is affine in u on each side:
        # half (q - u) / q below the mode, (u - q) / (2 (1 - q)) above it.
        slope_below = np.where(q > 0, half / q, 0.0)
        slope_above = np.where(q < 1, 0.5 / (1.0 - q), 0.0)
    u = u[None, :]
    below = u < q
    level = np.where(below, half - u * slope_below, u * slope_above - q * slope_above)
    level += 0.5
    draws = ndtri(level)
    draws *= np.where(below, -lo, up)
    draws += c
    return draws if bound is None else np.maximum(draws, bound, out=draws)  # round-off never crosses the bound


def transform_all(features: Sequence[Feature], values: Sequence[np.ndarray], errors: Sequence[np.ndarray],
                  ids: Sequence[str] = ()) -> list[tuple[np.ndarray, np.ndarray]]:
    """``Feature.transform_values`` of each feature (its ``values`` and ``errors``, the same rows for all).

    Monte Carlo features that share an operand (the same column, band and error rules, the same values and
    errors) are drawn together, each operand once (`_draw_groups`): the band shares of one spectrum, the two
    summaries of one light curve, the hardness ratios of adjacent bands (band 2 is HR12's soft band and HR23's
    hard one).  A feature of k operands reads the first k quasi-random columns, as it does alone, so a feature
    drawn with others gets a sample as finely stratified; where its columns come in another order (HR23 beside
    HR12) or from a wider set, its variance moves within its Monte Carlo error.

    Returns
    -------
    list of (values, variances)
        One (n,) pair per feature, in order.
    """
    out: list[Any] = [None] * len(features)
    points: dict[int, np.ndarray] = {}  # each Monte Carlo feature's values as float64, for its centre
    models: dict[int, np.ndarray] = {}
    operand_keys: dict[int, list[tuple]] = {}
    for i, (feature, x, sigma) in enumerate(zip(features, values, errors)):
        if feature.propagation != "monte_carlo":
            out[i] = feature.transform_values(x, sigma, ids)
            continue
        x = points[i] = np.asarray(x, dtype=np.float64)
        feature._check_log_argument(x, ids)
        model = models[i] = feature._error_model(x, np.asarray(sigma, dtype=np.float64))
        # an operand is shared by what it is read from and by its values: a feature given other arrays than its
        # catalog's (a user's, or another selection's rows) never borrows another's draws
        keys = [source + (hashlib.sha256(np.ascontiguousarray(model[:, k]).tobytes()).digest(),)
                for k, source in enumerate(feature._operand_sources(model.shape[1]))]
        operand_keys[i] = [key + (keys[:k].count(key),) for k, key in enumerate(keys)]  # a repeat is its own operand
    for group in _draw_groups(operand_keys):
        model = np.stack([models[i][:, k] for i, k in group.operands], axis=1)
        members = list(group.reads)
        moments = _monte_carlo_moments([features[i] for i in members], model, list(group.reads.values()), group.columns)
        for i, (mean, variance) in zip(members, moments):
            out[i] = (mean if features[i].centre == "draw_mean" else features[i]._g(points[i])), variance
    return out


@dataclass
class _DrawGroup:
    """Monte Carlo features drawn together: ``operands[j]`` = (feature, its operand) first naming operand j of the
    group's draws, ``columns[j]`` its column of `_uniforms`, ``reads[i]`` feature i's operands (positions in order)."""

    operands: list[tuple[int, int]] = field(default_factory=list)
    columns: list[int] = field(default_factory=list)
    reads: dict[int, tuple[int, ...]] = field(default_factory=dict)
    keys: dict[tuple, int] = field(default_factory=dict)

    def place(self, i: int, keys: list[tuple]) -> bool:
        """Add feature ``i`` of operand ``keys`` if the group is empty, or if it shares an operand with the group and
        its operands can sit at columns 0 .. k - 1 of the quasi-random set, each at its own, as alone; whether it was
        added."""
        shared = [self.columns[self.keys[key]] for key in keys if key in self.keys]
        if self.keys and (not shared or len(set(shared)) < len(shared) or max(shared) >= len(keys)):
            return False
        free = iter(c for c in range(len(keys)) if c not in shared)
        for k, key in enumerate(keys):
            if key not in self.keys:
                self.keys[key] = len(self.operands)
                self.operands.append((i, k))
                self.columns.append(next(free))
        self.reads[i] = tuple(self.keys[key] for key in keys)
        return True


def _draw_groups(operand_keys: dict[int, list[tuple]]) -> list[_DrawGroup]:
    """The Monte Carlo features (widest first) in groups that draw each shared operand once.

    A feature of k operands reads columns 0 .. k - 1 of `_uniforms`, in some order, as it does alone: the first k
    dimensions of a Sobol set, whose strata are the finest, so sharing draws never coarsens a feature's sample.
    Adjacent hardness ratios fit (their bands alternate between two columns); a ratio whose bands a band-share
    group already holds at columns beyond its two draws them again in a group of its own.
    """
    groups: list[_DrawGroup] = []
    for i in sorted(operand_keys, key=lambda i: -len(operand_keys[i])):  # stable: in the features' order otherwise
        keys = operand_keys[i]
        if not any(group.place(i, keys) for group in groups):
            groups.append(_DrawGroup())
            groups[-1].place(i, keys)
    return groups


def _monte_carlo_moments(features: Sequence[Feature], model: np.ndarray, reads: Sequence[tuple[int, ...]] | None = None,
                         columns: Sequence[int] | None = None) -> list[tuple[np.ndarray, np.ndarray]]:
    """Mean and variance of each feature's transformed draws, for each row of the (n, operands, 3) error model of
    their operands (the features share its lower bound too): each operand is drawn once for all of them.
    ``reads[j]``: the operands of ``features[j]``, in its order (default: all of them); ``columns[k]``: the column of
    `_uniforms` operand k is drawn at (default: k).

    Blocks of rows are propagated in `_MC_THREADS` threads (SciPy's quantile and NumPy's ufuncs release
    the GIL; each block's arithmetic is the same, so the results are too): the main job's features
    then use the core that TensorFlow's import, beside them, leaves idle once it is done.
    """
    n, operands, _ = model.shape
    reads = [tuple(range(operands))] * len(features) if reads is None else reads
    columns = list(range(operands)) if columns is None else columns
    bound = features[0].lower_bound
    if any(feature.lower_bound != bound for feature in features):
        raise ValueError("features drawn together must share their lower_bound")
    u = _uniforms(MC_DRAWS, max(columns) + 1)
    moments = [(np.empty(n), np.empty(n)) for _ in features]
    rows = max(_MC_MIN_ROWS, 2 * _MC_ROWS_PER_BLOCK // max(operands, 2))

    def propagate(start: int) -> None:
        block = model[start:start + rows]
        draws = [_split_normal_draws(block[:, k, 0], block[:, k, 1], block[:, k, 2], u[:, columns[k]], bound)
                 for k in range(operands)]
        stacked: dict[tuple[int, ...], np.ndarray] = {}  # the band shares of one spectrum stack their bands once
        for feature, read, (mean, variance) in zip(features, reads, moments):
            if feature.reduce is not None:
                if read not in stacked:
                    stacked[read] = np.stack([draws[k] for k in read], axis=1)
                combined = feature._reduce(stacked[read])
            else:
                combined = draws[read[0]] if len(read) == 1 else _combine_values(feature.combine, draws[read[0]],
                                                                                draws[read[1]])
            transformed = feature._g(combined)
            mean[start:start + rows] = transformed.mean(axis=1)
            variance[start:start + rows] = transformed.var(axis=1)

    starts = range(0, n, rows)
    if len(starts) > 1 and _MC_THREADS > 1:
        list(_block_pool().map(propagate, starts))  # list(): a block's exception is raised here
    else:
        for start in starts:
            propagate(start)
    return moments


#: Threads that propagate blocks of rows at once (at most 4: the blocks' temporaries are ~20 MB each).
_MC_THREADS = min(4, os.cpu_count() or 1)


@functools.lru_cache(maxsize=None)
def _block_pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=_MC_THREADS, thread_name_prefix="gpal-features")


# The six inputs of the Fermi-LAT experiment of Villacampa-Calvo et al. (2021, JMLR 22, sec. 5.6):
# flux left linear, the three quantities without error bars log-transformed, spectral shape linear.
# The floor 0.1 sigma on LP_SigCurv only touches curvature significances indistinguishable from 0
# (none in the published 454-source 4FGL selection, whose minimum is 0.104; one row of 4FGL-DR4's).
_VILLACAMPA2021 = (
    Feature("Flux1000", error="Unc_Flux1000"),
    Feature("Signif_Avg", transform="log"),
    Feature("LP_SigCurv", transform="log", floor=0.1),
    Feature("Pivot_Energy", transform="log"),
    Feature("LP_Index", error="Unc_LP_Index"),
    Feature("LP_beta", error="Unc_LP_beta"),
)

# The 4FGL error model of a photon or energy flux (docs/catalogs.md, "Error model of each feature"):
# Monte Carlo through the transform, the flux bounded below by 0.
_FLUX_ERRORS = dict(propagation="monte_carlo", lower_bound=0.0)


def _hardness(soft: int, hard: int) -> Feature:
    """HR of two Flux_Band bands: split-normal errors, upper-limit bands as 4FGL defines them, fluxes >= 0."""
    return Feature("Flux_Band", error="Unc_Flux_Band", band=hard, combine="hardness", other_band=soft,
                   name=f"HR{soft}{hard}", two_sided="split_normal", **_FLUX_ERRORS)


# The main job's inputs on 4FGL-DR4 (chosen by the selection study in docs/results.md): the paper's six
# with flux on a log scale (its long tail squashed every other source together after standardising),
# hardness ratios of adjacent photon-flux bands from 100 MeV to 30 GeV (DR4 bands 1-6: 0.1-0.3, 0.3-1,
# 1-3, 3-10, 10-30, 30-100 GeV; the pulsar cut-off and the blazar peaks fall there), variability,
# energy flux, |sin b| and the single power-law index.  Errors follow the catalog's own conventions:
# fluxes are >= 0 and reach their log or hardness ratio by Monte Carlo, a band's two-sided error is a
# split normal, a band with Sqrt_TS_Band < 1 (NaN lower error) is the flat-prior posterior of its
# 2-sigma upper limit, and Unc_Frac_Variability = 10 (written where Frac_Variability is set to 0) is
# no error bar.  A missing error (Unc_LP_beta where beta is pegged) marks that value exact.
_FERMI_DR4 = (
    Feature("Flux1000", error="Unc_Flux1000", transform="log10", missing_error="exact", **_FLUX_ERRORS),
    Feature("Signif_Avg", transform="log"),
    Feature("LP_SigCurv", transform="log", floor=0.1),
    Feature("Pivot_Energy", transform="log"),
    Feature("LP_Index", error="Unc_LP_Index", missing_error="exact"),
    Feature("LP_beta", error="Unc_LP_beta", missing_error="exact"),
    *(_hardness(b, b + 1) for b in range(1, 6)),
    Feature("Variability_Index", transform="log", floor=1.0),
    Feature("Energy_Flux100", error="Unc_Energy_Flux100", transform="log10", missing_error="exact", **_FLUX_ERRORS),
    Feature("GLAT", transform="abs_sin_deg", name="abs_sin_GLAT"),
    Feature("Frac_Variability", error="Unc_Frac_Variability", missing_error="exact", error_sentinel=10.0,
            propagation="monte_carlo", lower_bound=0.0),  # a fractional rms: >= 0 like a flux
    Feature("PL_Index", error="Unc_PL_Index", missing_error="exact"),
)



def _hardness_3fgl(soft: int) -> Feature:
    """HR of two adjacent 3FGL band columns, the same error model as `_hardness`, named as DR4's band pair.

    3FGL band k (0.1-0.3, 0.3-1, 1-3, 3-10, 10-100 GeV) is DR4 band k + 1, so HR12 compares the same
    energies in both layouts (HR45's hard band is 10-100 GeV here, 10-30 GeV in DR4).
    """
    bands, errors = FGL3_COLUMNS.band_flux, FGL3_COLUMNS.band_flux_error
    return Feature(bands[soft + 1], error=errors[soft + 1], combine="hardness", other=bands[soft],
                   other_error=errors[soft], name=f"HR{soft + 1}{soft + 2}", two_sided="split_normal", **_FLUX_ERRORS)


# The main job's inputs on 3FGL: fermi_dr4's quantities as 3FGL has them, under the same error rules
# (docs/catalogs.md, "3FGL"): the index and curvature significance of 3FGL's chosen spectral model
# (Spectral_Index, Signif_Curve) stand for LP_Index and LP_SigCurv; its bands are separate columns whose
# NaN lower error marks Sqrt_TS < 1 exactly as in 4FGL; PowerLaw_Index has no error column (exact).
# beta is left out: 3FGL fits it only for its 395 LogParabola sources (-inf, "not fitted", elsewhere), and
# Signif_Curve carries the curvature of every source; 3FGL has no Frac_Variability.
_FERMI_3FGL = (
    Feature("Flux1000", error="Unc_Flux1000", transform="log10", missing_error="exact", **_FLUX_ERRORS),
    Feature("Signif_Avg", transform="log"),
    Feature("Signif_Curve", transform="log", floor=0.1),
    Feature("Pivot_Energy", transform="log"),
    Feature("Spectral_Index", error="Unc_Spectral_Index", missing_error="exact"),
    *(_hardness_3fgl(b) for b in range(4)),
    Feature("Variability_Index", transform="log", floor=1.0),
    Feature("Energy_Flux100", error="Unc_Energy_Flux100", transform="log10", missing_error="exact", **_FLUX_ERRORS),
    Feature("GLAT", transform="abs_sin_deg", name="abs_sin_GLAT"),
    Feature("PowerLaw_Index"),
)

# The measurements behind the summaries (docs/catalogs.md, "Band spectra and light curves"), read
# through the 4FGL layout's roles (4FGL, DR2, DR4, FL16Y).  Band spectrum: each 0.1-100 GeV band's share of
# the photon flux summed over those bands (DR4 bands 1-6, present in every 4FGL release; the 50-100 MeV
# and TeV bands are mostly upper limits), log10, floored at 1e-4; its value is the mean of the log draws,
# since a band whose best fit is ~0 (Sqrt_TS_Band = 0) has a point value at the floor.  Light curve:
# the yearly fluxes' max / mean and coefficient of variation, log10 (cv floored at 0.01: a steady source).
# Every band and year is an operand with the fermi_dr4 error model (split normal, upper limit where the
# lower error is NaN, >= 0), reduced per Monte Carlo draw, so the errors reach the features' variances.
# 3FGL's five band columns span the same 0.1-100 GeV: its band k is DR4 band k + 1 (named so, as its
# hardness ratios are), its 10-100 GeV band DR4's bands 5 and 6 together (log10_share56).
_SHARE_BANDS = tuple(range(1, 7))


def _share(layout: Columns, band: int, bands: tuple[int, ...] | None, name: str) -> Feature:
    """Band ``band``'s share of the flux over ``bands`` of a release's band columns: one definition for every layout."""
    return Feature(layout.band_flux, error=layout.band_flux_error, band=band, reduce="share", bands=bands,
                   transform="log10", floor=1e-4, two_sided="split_normal", centre="draw_mean", name=name,
                   **_FLUX_ERRORS)


def _light_curve(reduce: str, floor: float | None) -> Feature:
    return Feature(FGL4_COLUMNS.history_flux, error=FGL4_COLUMNS.history_flux_error, reduce=reduce,
                   transform="log10", floor=floor, two_sided="split_normal", name=f"log10_lc_{reduce}", **_FLUX_ERRORS)


_BAND_SPECTRUM = tuple(_share(FGL4_COLUMNS, b, _SHARE_BANDS, f"log10_share{b}") for b in _SHARE_BANDS)
_BAND_SPECTRUM_3FGL = tuple(_share(FGL3_COLUMNS, b, None, f"log10_share{b + 1}" if b < 4 else "log10_share56")
                            for b in range(len(FGL3_COLUMNS.band_flux)))
_LIGHT_CURVE = (_light_curve("max_over_mean", None), _light_curve("cv", 0.01))

FEATURE_PRESETS: dict[str, tuple[Feature, ...]] = {
    "villacampa2021": _VILLACAMPA2021,
    "fermi_dr4": _FERMI_DR4,
    "fermi_dr4_bands": _FERMI_DR4 + _BAND_SPECTRUM,
    "fermi_dr4_lightcurve": _FERMI_DR4 + _LIGHT_CURVE,
    "fermi_dr4_measurements": _FERMI_DR4 + _BAND_SPECTRUM + _LIGHT_CURVE,
    "fermi_3fgl": _FERMI_3FGL,
    # 3FGL's light curve has fermi_dr4's layout (monthly, 48 bins)
    "fermi_3fgl_lightcurve": _FERMI_3FGL + _LIGHT_CURVE,
    "fermi_3fgl_measurements": _FERMI_3FGL + _BAND_SPECTRUM_3FGL + _LIGHT_CURVE,
    "default": _VILLACAMPA2021,
}


def with_missing_errors(features: Sequence[Feature], policy: str | None) -> tuple[Feature, ...]:
    """``features`` with every one that keeps rows without an error (``missing_error`` not ``"drop"``) reading them
    by ``policy`` (a key of `MISSING_ERROR_REPAIRS`; None: as they are).

    Returns
    -------
    tuple of Feature
        The features, in order.
    """
    if policy is None:
        return tuple(features)
    if policy not in MISSING_ERROR_REPAIRS:
        raise ValueError(f"unknown missing-error policy {policy!r}; valid: {list(MISSING_ERROR_REPAIRS)} or None")
    return tuple(f if f.missing_error == "drop" else replace(f, missing_error=policy) for f in features)


def resolve_features(features: str | Sequence[Any] | None, available: Sequence[str] = ()) -> tuple[Feature, ...]:
    """A preset name, or a list of Feature / dict / string specs, as a tuple of Features.

    Returns
    -------
    tuple of Feature
        The features, labels unique; the ``"default"`` preset for None.
    """
    if features is None:
        return FEATURE_PRESETS["default"]
    if isinstance(features, str):
        try:
            return FEATURE_PRESETS[features.lower()]
        except KeyError:
            raise ValueError(
                f"unknown feature preset {features!r}; valid presets: {sorted(FEATURE_PRESETS)} "
                "(or pass a list of features such as ['PL_Index', 'log:Energy_Flux100'])"
            ) from None
    resolved = tuple(Feature.from_spec(f, available) for f in features)
    if not resolved:
        raise ValueError("features must name at least one feature")
    labels = [f.label for f in resolved]
    if len(set(labels)) != len(labels):
        raise ValueError(f"feature names must be unique; got {labels}")
    return resolved

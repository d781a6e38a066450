"""The feature spec: a catalog column, its 1-sigma error column and a transform.

A feature is data, not code: it names the columns it reads and how it maps them,
so a data set records exactly how it was built and the same spec works on every
4FGL release.  Error bars are carried through the transform as variances, either
to first order (delta method: var(g(x)) ~= g'(x)^2 sigma^2) or by Monte Carlo
through the error distribution that the catalog describes: split-normal two-sided
errors, 4FGL upper-limit bands, a physical lower bound such as flux >= 0.  The
catalog's conventions and each preset feature's error model are in docs/catalogs.md
("Error model of each feature"); the maps are in `transforms`, the catalog's error conventions in
`errors`, the Monte Carlo engine in `propagation`.
"""

from __future__ import annotations

import math
from dataclasses import MISSING, asdict, dataclass, field, fields
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from gpal.catalogs.features.errors import (
    MISSING_ERROR_REPAIRS, pick, population_errors, population_medians, read_error, refuse_rows,
)
from gpal.catalogs.features.propagation import MC_DRAWS, transform_all
from gpal.catalogs.features.transforms import COMBINES, REDUCES, TRANSFORMS, combine_first_order, combine_values

__all__ = ["Feature"]

_UPPER_LIMIT_POLICIES = ("upper_error", "drop")
_MISSING_ERROR_POLICIES = ("drop", *MISSING_ERROR_REPAIRS)
_PROPAGATIONS = ("first_order", "monte_carlo")
_TWO_SIDED = ("mean", "split_normal")
_CENTRES = ("point", "draw_mean")


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
    draws
        Monte Carlo only: draws per source, a power of 2 (default: `MC_DRAWS`).  Saved with a model, so that a
        model's features are drawn again as it was trained; a feature saved by gpal <= 0.4, before it recorded
        them, was drawn 2048 times.
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
    # not compared: a feature is the same quantity however finely its error bar is sampled
    draws: int | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        what = f"feature {self.label!r}"
        if self.bands is not None:
            if not isinstance(self.bands, (tuple, list)):
                raise ValueError(f"bands of {what} must be a list of band indices; got {self.bands!r}")
            object.__setattr__(self, "bands", tuple(self.bands))  # a list from JSON or YAML; hashable
        for key in ("column", "error"):
            if isinstance(getattr(self, key), list):
                object.__setattr__(self, key, tuple(getattr(self, key)))
        if self.transform not in TRANSFORMS:
            raise ValueError(f"unknown transform {self.transform!r} for {what}; valid: {list(TRANSFORMS)}")
        if self.floor is not None:
            if not TRANSFORMS[self.transform].positive:
                raise ValueError(f"floor={self.floor} given for {what} but floors only apply to log transforms")
            if not (math.isfinite(self.floor) and self.floor > 0):
                raise ValueError(f"floor for {what} must be a positive number; got {self.floor}")
        if self.combine is not None and self.combine not in COMBINES:
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
            if self.draws is not None:
                raise ValueError(f"draws={self.draws!r} for {what} needs propagation='monte_carlo'")
        elif self.draws is not None:
            draws = self.draws
            if isinstance(draws, bool) or not isinstance(draws, (int, np.integer)) or draws < 16 or draws & (draws - 1):
                raise ValueError(f"draws of {what} must be a power of 2 of at least 16 (a Sobol sample's size); "
                                 f"got {draws!r}")
            object.__setattr__(self, "draws", int(draws))
        if (self.propagation != "first_order" and TRANSFORMS[self.transform].positive and self.floor is None
                and (self.lower_bound is None or self.lower_bound < 0)):
            raise ValueError(f"Monte Carlo draws of {what} can be <= 0 before its {self.transform}; "
                             "give lower_bound >= 0 (e.g. 0 for a flux) or a floor")

    def _check_reduce(self, what: str) -> None:
        if self.reduce is not None and self.reduce not in REDUCES:
            raise ValueError(f"unknown reduce {self.reduce!r} for {what}; valid: {[None, *REDUCES]}")
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
            # an unknown combine is refused at construction, whose message names the feature by this label
            template = COMBINES[self.combine].label if self.combine in COMBINES else "{a}/{b}"
            base = template.format(a=base, b=f"{self.other or self.column}{_band(self.other_band)}")
        return base if self.transform == "identity" else f"{self.transform}({base})"

    @property
    def columns(self) -> tuple[str, ...]:
        cols = [self.column, self.error, self.other_column, self.other_error or (self.error if self.combine else None)]
        flat = (name for c in cols if c for name in (c if isinstance(c, tuple) else (c,)))
        return tuple(dict.fromkeys(flat))

    @property
    def monte_carlo_draws(self) -> int | None:
        """The draws per source of a Monte Carlo feature (its ``draws``, else `MC_DRAWS`); None for first order."""
        return None if self.propagation == "first_order" else (self.draws or MC_DRAWS)

    def to_dict(self) -> dict[str, Any]:
        """The fields that differ from their defaults (JSON-able; ``Feature.from_spec`` rebuilds the feature), and a
        Monte Carlo feature's draws whatever they are, so that a saved model's features are drawn as it was trained.

        Returns
        -------
        dict
            Field name -> value, defaults left out.
        """
        fields_ = {k: v for k, v in asdict(self).items() if v is not None and _DEFAULTS.get(k) != v}
        return fields_ if self.propagation == "first_order" else {**fields_, "draws": self.monte_carlo_draws}

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
    def measure(self, read: Callable[[str], np.ndarray], population: Mapping[tuple[str, Any], Any] | None = None
                ) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
        """Untransformed values, their errors and the unusable rows of every catalog row.

        ``read(column)`` returns a catalog column as floats; ``population``: where ``read`` gives a block of the
        catalog's rows, the `population` of all of them, so that the block's values are the whole catalog's.  The errors are what
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
            return self._measure_bands(read, population)
        x, lo, up, bad = self._one(read, self.column, self.band, self.error, population)
        operands = [(x, lo, up)]
        value = x
        if self.combine is not None:
            y, lo_y, up_y, bad_other = self._one(read, self.other_column, self.other_band, self.other_error or self.error,
                                                 population)
            for column, rows in bad_other.items():
                bad[column] = bad.get(column, np.zeros_like(rows)) | rows
            operands.append((y, lo_y, up_y))
            value = combine_values(self.combine, x, y)
        if self.propagation == "monte_carlo":
            return value, np.stack([np.stack(op, axis=-1) for op in operands], axis=1), bad
        sigmas = [0.5 * (lower + upper) for _, lower, upper in operands]  # the symmetric sigma of each operand
        if self.combine is None:
            return x, sigmas[0], bad
        value, variance = combine_first_order(self.combine, x, sigmas[0], operands[1][0], sigmas[1])
        return value, np.sqrt(variance), bad

    def repaired_errors(self, read: Callable[[str], np.ndarray]) -> dict[str, np.ndarray]:
        """Error column -> the rows whose missing error the feature repairs rather than drops (``missing_error``
        ``"exact"`` or ``"population"``), which a job counts as it counts dropped ones.

        Returns
        -------
        dict
            Error column name -> (n,) boolean mask; empty when the feature drops such rows instead.
        """
        out: dict[str, np.ndarray] = {}
        for band, error in self._error_operands(read) if self.missing_error != "drop" else ():
            raw = pick(read(error), band, error, self.label, is_error=True)
            missing = read_error(raw, error, self.label, self.two_sided, self.error_sentinel)[3]
            out[error] = out.get(error, np.zeros_like(missing)) | missing
        return out

    def population(self, read: Callable[[str], np.ndarray]) -> dict[tuple[str, Any], tuple[float, float] | None]:
        """(error column, band) -> the median lower and upper errors ``missing_error="population"`` gives a row of
        ``read``'s rows without one: what `measure` of a block of them takes to give the whole catalog's values.

        Returns
        -------
        dict
            Empty for a feature of another ``missing_error``.
        """
        out = {}
        for band, error in self._error_operands(read) if self.missing_error == "population" else ():
            raw = pick(read(error), band, error, self.label, is_error=True)
            lower, upper, _, missing, negative = read_error(raw, error, self.label, self.two_sided,
                                                            self.error_sentinel)
            out[(error, band)] = population_medians(lower, upper, missing, negative, error, self.label)
        return out

    def _error_operands(self, read) -> list[tuple[Any, str]]:
        """(band, error column) of each operand that has an error column."""
        operands = [(self.band, self.error)]
        if self.combine is not None:
            operands.append((self.other_band, self.other_error or self.error))
        if self.reduce is not None:
            operands = [(b, error) for _, b, error in self._band_operands(read)]
        return [(band, error) for band, error in operands if error is not None]

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

    def operand_sources(self, operands: int) -> list[tuple]:
        """What each of the error model's ``operands`` is read from, and by which error rules: features that name
        the same operand may draw it once (`transform_all`), and operands read from other columns never merge.

        Returns
        -------
        list of tuple
            Per operand: (column, band, error column, then the error rules).
        """
        if self.reduce is not None:  # the model's operands are ``bands``, or all the column's bands in order
            reads = self._band_reads(self.bands if self.bands is not None else range(operands))
        else:
            reads = [(self.column, self.band, self.error)]
            if self.combine is not None:
                reads.append((self.other_column, self.other_band, self.other_error or self.error))
        rules = (self.two_sided, self.upper_limit, self.missing_error, self.error_sentinel, self.lower_bound)
        return [read + rules for read in reads]

    def _measure_bands(self, read, population):
        """``measure`` of a ``reduce`` feature: every band of ``bands`` is an operand of the error model."""
        operands, bad = [], {}
        for column, b, error in self._band_operands(read):
            x, lo, up, bad_b = self._one(read, column, b, error, population)
            operands.append(np.stack([x, lo, up], axis=-1))
            for name, rows in bad_b.items():
                bad[name] = bad.get(name, np.zeros_like(rows)) | rows
        model = np.stack(operands, axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            value = self.reduced(model[..., 0])
        return value, model, bad

    def _bands(self, n_bands: int) -> tuple[int, ...]:
        bands = self.bands if self.bands is not None else tuple(range(n_bands))
        if max(bands) >= n_bands:
            raise ValueError(f"feature {self.label!r} asks for bands {list(bands)} but {self.column!r} has {n_bands} "
                             f"bands (0..{n_bands - 1})")
        return bands

    def reduced(self, x: np.ndarray) -> np.ndarray:
        """The reduction of band values x (n, bands, ...) over the bands axis: the one formula for values and draws.

        Returns
        -------
        numpy.ndarray
            (n, ...) the reduced values.
        """
        position = (self.bands or tuple(range(x.shape[1]))).index(self.band) if self.reduce == "share" else 0
        return REDUCES[self.reduce](x, position)

    def _one(self, read, column, band, error, population=None):
        """Values, lower and upper 1-sigma errors (0 where exact) and unusable rows of one operand."""
        values = pick(read(column), band, column, self.label)
        bad = {column: ~np.isfinite(values)}
        if self.lower_bound is not None:
            below = np.isfinite(values) & (values < self.lower_bound)  # a non-finite value is dropped anyway
            refuse_rows(below, lambda rows: (
                f"column {column!r} of feature {self.label!r} holds {rows.size} value(s) below its lower_bound "
                f"{self.lower_bound} (min {values[rows].min():.4g}, rows {rows[:3].tolist()}); the bound must hold "
                "for every catalog value"))
        if error is None:
            zero = np.zeros_like(values)
            return values, zero, zero.copy(), bad
        raw = pick(read(error), band, error, self.label, is_error=True)
        lower, upper, upper_limit, missing, negative = read_error(raw, error, self.label, self.two_sided, self.error_sentinel)
        if negative.any():
            if self.propagation == "monte_carlo":
                refuse_rows(negative, lambda rows: (
                    f"error column {error!r} of feature {self.label!r} holds {rows.size} negative value(s) "
                    f"(min {raw[rows].min():.4g}, rows {rows[:3].tolist()}); a one-sided 1-sigma error must be >= 0"))
            bad[f"{error} (negative)"] = negative  # first order: the row is left out and reported
        if self.two_sided == "split_normal":
            refuse_rows(upper_limit & np.isnan(values), lambda rows: (
                f"feature {self.label!r}: {rows.size} row(s) of {column!r} (rows {rows[:3].tolist()}) are NaN where "
                f"{error!r} marks an upper limit (NaN lower, finite upper error); the 4FGL convention needs the "
                "best-fit value there (value + 2 x upper error is the 2-sigma limit)"))
        if self.upper_limit == "drop":
            bad[f"{error} (upper limit)"] = upper_limit
        if self.missing_error == "drop":
            bad[error] = missing
        if self.missing_error == "population":
            lower, upper = population_errors(lower, upper, missing, negative, error, self.label,
                                             None if population is None else population[(error, band)])
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
        self.check_domain(x, ids)
        if s.ndim > x.ndim:
            raise ValueError(f"feature {self.label!r} propagates to first order: sigma must be one error per value, "
                             f"shape {x.shape}; got {s.shape}")
        x = self._floored(x)
        return TRANSFORMS[self.transform].map(x), TRANSFORMS[self.transform].sigma(x, s) ** 2

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
        lower, upper, _, _, negative = read_error(np.asarray(sigma, dtype=np.float64), "sigma", self.label,
                                                   self.two_sided, self.error_sentinel)
        if negative.any():
            raise ValueError(f"errors of feature {self.label!r} hold {negative.sum()} negative value(s); 1-sigma errors are >= 0")
        if self.propagation == "first_order":
            return self.transform_values(x, 0.5 * (lower + upper), ids)
        return self.transform_values(x, np.stack([x, lower, upper], axis=-1)[:, None, :], ids)

    # ------------------------------------------------------------- internals
    def mapped(self, x: np.ndarray) -> np.ndarray:
        """The transform of values (point values or Monte Carlo draws), floored first for logs.

        Returns
        -------
        numpy.ndarray
            The transformed values, shaped as ``x``.
        """
        return TRANSFORMS[self.transform].map(self._floored(x))

    def _floored(self, x: np.ndarray) -> np.ndarray:
        return x if self.floor is None else np.maximum(x, self.floor)

    def check_domain(self, x: np.ndarray, ids: Sequence[str]) -> None:
        """Refuse values a log cannot take (x <= 0 without a floor), naming the sources ``ids``."""
        if not TRANSFORMS[self.transform].positive or self.floor is not None or not (x <= 0).any():
            return
        bad = np.nonzero(x <= 0)[0]
        examples = [str(ids[i]) for i in bad[:3]] if len(ids) else bad[:3].tolist()
        raise ValueError(
            f"{self.transform} transform of feature {self.label!r}: {bad.size} non-positive value(s) "
            f"(min {x.min():.4g}; e.g. {examples}) and no floor; give Feature(..., floor=...) to clip them"
        )

    def error_model(self, x: np.ndarray, s: np.ndarray) -> np.ndarray:
        """The error model of a Monte Carlo feature's rows, checked: ``s`` as `measure` returns it, or one sigma per value.

        Returns
        -------
        numpy.ndarray
            (n, operands, 3): [value, lower sigma, upper sigma] of each operand.
        """
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




def _band(band: int | None) -> str:
    return "" if band is None else f"[{band}]"

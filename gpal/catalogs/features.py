"""Declarative features: a catalog column, its 1-sigma error column and a transform.

A feature is data, not code: it names the columns it reads and how it maps them,
so a data set records exactly how it was built and the same spec works on every
4FGL release.  Error bars are carried through the transform as variances by
first-order (delta-method) propagation: var(g(x)) ~= g'(x)^2 sigma^2.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np

__all__ = ["Feature", "FEATURE_PRESETS", "resolve_features"]

_TRANSFORMS = ("identity", "log", "log10", "abs", "sin_deg", "abs_sin_deg")
_COMBINES = (None, "ratio", "hardness")
_UPPER_LIMIT_POLICIES = ("upper_error", "drop")
_MISSING_ERROR_POLICIES = ("drop", "exact")
_FIELDS = ("column", "error", "transform", "floor", "name", "band", "combine", "other", "other_band", "other_error",
           "upper_limit", "missing_error")


@dataclass(frozen=True)
class Feature:
    """One model input built from catalog columns, with its error bar carried along.

    column:    the value column, e.g. ``"LP_Index"``; with ``band``, one band of a multi-band
               column such as ``Flux_Band`` (n, 8).
    error:     its 1-sigma uncertainty column (``None``: the feature is exact, variance 0).
               Two-sided (n, 2) or (n, bands, 2) [lower, upper] errors are symmetrised as the
               mean of the absolute bounds.
    transform: ``"identity"``, ``"log"``, ``"log10"``, ``"abs"``, ``"sin_deg"`` or
               ``"abs_sin_deg"`` (|sin b| of an angle in degrees, e.g. |sin GLAT|).
    floor:     for log transforms, values below ``floor`` are raised to it first (``LP_SigCurv``
               can be exactly 0); without a floor a non-positive value is an error.
    combine:   ``"ratio"`` (value / other) or ``"hardness"`` ((value - other) / (value + other)),
               where ``other`` is ``other`` (default: the same column) at ``other_band``, with
               ``other_error`` (default: ``error``).  Errors are taken as independent.
    upper_limit: what a NaN lower error with a finite upper error means (a band where the source
               is not detected, so the catalog gives only an upper error): ``"upper_error"`` uses
               the upper error as a symmetric 1-sigma, ``"drop"`` leaves the row out (reported).
    missing_error: what a NaN or infinite error means: ``"drop"`` leaves the row out (reported),
               ``"exact"`` treats that row's value as exact (variance 0).  A negative one-sided
               error is always a fault: the row is left out (reported).
    name:      feature name in data sets; defaults to e.g. ``log(column)``, ``HR(Flux_Band[3],Flux_Band[4])``.
    """

    column: str
    error: str | None = None
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

    def __post_init__(self) -> None:
        what = f"feature {self.label!r}"
        if self.transform not in _TRANSFORMS:
            raise ValueError(f"unknown transform {self.transform!r} for {what}; valid: {list(_TRANSFORMS)}")
        if self.floor is not None:
            if self.transform not in ("log", "log10"):
                raise ValueError(f"floor={self.floor} given for {what} but floors only apply to log transforms")
            if not (math.isfinite(self.floor) and self.floor > 0):
                raise ValueError(f"floor for {what} must be a positive number; got {self.floor}")
        if self.combine not in _COMBINES:
            raise ValueError(f"unknown combine {self.combine!r} for {what}; valid: 'ratio', 'hardness' or None")
        if self.upper_limit not in _UPPER_LIMIT_POLICIES:
            raise ValueError(f"unknown upper_limit policy {self.upper_limit!r} for {what}; valid: {list(_UPPER_LIMIT_POLICIES)}")
        if self.missing_error not in _MISSING_ERROR_POLICIES:
            raise ValueError(f"unknown missing_error policy {self.missing_error!r} for {what}; valid: {list(_MISSING_ERROR_POLICIES)}")
        for key in ("band", "other_band"):
            value = getattr(self, key)
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0):
                raise ValueError(f"{key} of {what} must be a band index >= 0; got {value!r}")
        if self.combine is None:
            if any(v is not None for v in (self.other, self.other_band, self.other_error)):
                raise ValueError(f"other / other_band / other_error given for {what} without combine='ratio' or 'hardness'")
        elif self.other_column == self.column and self.other_band == self.band:
            raise ValueError(f"{what} combines {self.column}{_band(self.band)} with itself; give another column or other_band")

    @property
    def other_column(self) -> str | None:
        return None if self.combine is None else (self.other or self.column)

    @property
    def label(self) -> str:
        if self.name:
            return self.name
        base = f"{self.column}{_band(self.band)}"
        if self.combine is not None:
            other = f"{self.other or self.column}{_band(self.other_band)}"
            base = f"HR({other},{base})" if self.combine == "hardness" else f"{base}/{other}"
        return base if self.transform == "identity" else f"{self.transform}({base})"

    @property
    def columns(self) -> tuple[str, ...]:
        cols = [self.column, self.error, self.other_column, self.other_error or (self.error if self.combine else None)]
        return tuple(dict.fromkeys(c for c in cols if c))

    def to_dict(self) -> dict[str, Any]:
        defaults = {"transform": "identity", "upper_limit": "upper_error", "missing_error": "drop"}
        return {k: v for k, v in asdict(self).items() if v is not None and defaults.get(k) != v}

    @classmethod
    def from_spec(cls, spec: "Feature | Mapping[str, Any] | str", available: Sequence[str] = ()) -> "Feature":
        """Build from a Feature, a dict of fields, or a string ``"COL"`` / ``"log:COL"`` / ``"log10:COL"``.

        For the string form the error column is ``Unc_COL`` when ``available``
        (the catalog's column names) contains it, as in every 4FGL release.
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
        """Untransformed values, 1-sigma errors and unusable rows of every catalog row.

        ``read(column)`` returns a catalog column as floats.  The third result maps a
        column name to the rows it makes unusable (non-finite values, or errors the
        policies say to drop); elsewhere values and errors are finite.
        """
        x, s, bad = self._one(read, self.column, self.band, self.error)
        if self.combine is None:
            return x, s, bad
        y, t, bad_other = self._one(read, self.other_column, self.other_band, self.other_error or self.error)
        for column, rows in bad_other.items():
            bad[column] = bad.get(column, np.zeros_like(rows)) | rows
        value, variance = _combine(self.combine, x, s, y, t)
        return value, np.sqrt(variance), bad

    def _one(self, read, column, band, error):
        values = _pick(read(column), band, column, self.label)
        bad = {column: ~np.isfinite(values)}
        if error is None:
            return values, np.zeros_like(values), bad
        raw = _pick(read(error), band, error, self.label, is_error=True)
        sigma, upper_limit, missing, negative = _sigma(raw)
        if self.upper_limit == "drop":
            bad[f"{error} (upper limit)"] = upper_limit
        if self.missing_error == "drop":
            bad[error] = missing
        if negative.any():  # whatever the policies: a negative 1-sigma error is no error bar at all
            bad[f"{error} (negative)"] = negative
        return values, np.where(~np.isfinite(sigma), 0.0, sigma), bad

    def transform_values(self, x: np.ndarray, sigma: np.ndarray, ids: Sequence[str] = ()) -> tuple[np.ndarray, np.ndarray]:
        """Transformed values and their delta-method variances var(g(x)) ~= g'(x)^2 sigma^2."""
        x = np.asarray(x, dtype=np.float64)
        s = np.asarray(sigma, dtype=np.float64)
        if self.transform == "identity":
            return x, s**2
        if self.transform == "abs":
            return np.abs(x), s**2
        if self.transform in ("sin_deg", "abs_sin_deg"):
            radians = np.radians(x)
            out = np.sin(radians)
            var = (np.cos(radians) * math.pi / 180.0 * s) ** 2  # d/dx sin(x deg) = cos(x deg) pi / 180
            return (np.abs(out) if self.transform == "abs_sin_deg" else out), var
        if self.floor is not None:
            x = np.maximum(x, self.floor)
        elif (x <= 0).any():
            bad = np.nonzero(x <= 0)[0]
            examples = [str(ids[i]) for i in bad[:3]] if len(ids) else bad[:3].tolist()
            raise ValueError(
                f"{self.transform} transform of feature {self.label!r}: {bad.size} non-positive value(s) "
                f"(min {x.min():.4g}; e.g. {examples}) and no floor; give Feature(..., floor=...) to clip them"
            )
        scale = 1.0 if self.transform == "log" else math.log(10.0)
        # d/dx ln(x) = 1/x: var(log x) ~= (sigma / x)^2 (and / ln(10)^2 for log10).
        return np.log(x) / scale, (s / (x * scale)) ** 2

    def apply(self, values: np.ndarray, sigma: np.ndarray | None, ids: Sequence[str] = ()) -> tuple[np.ndarray, np.ndarray]:
        """Transformed values and variances of one plain column's finite values (rows already selected)."""
        x = np.asarray(values, dtype=np.float64)
        if sigma is None:
            return self.transform_values(x, np.zeros_like(x), ids)
        s, _, _, negative = _sigma(np.asarray(sigma, dtype=np.float64))
        if negative.any():
            raise ValueError(f"errors of feature {self.label!r} hold {negative.sum()} negative value(s); 1-sigma errors are >= 0")
        return self.transform_values(x, s, ids)


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


def _sigma(raw: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Symmetric 1-sigma, upper-limit rows (NaN lower, finite upper), rows with no usable error, rows with a negative one.

    A two-sided error's lower bound is negative by convention; a one-sided error below 0 is
    a fault in the catalog, reported rather than silently made positive.
    """
    negative = np.zeros(raw.shape[:1], dtype=bool)
    if raw.ndim == 2 and raw.shape[1] == 2:
        lower, upper = np.abs(raw[:, 0]), np.abs(raw[:, 1])
        upper_limit = np.isnan(lower) & np.isfinite(upper)
        sigma = np.where(upper_limit, upper, 0.5 * (lower + upper))
    elif raw.ndim == 1:
        upper_limit = np.zeros(raw.shape, dtype=bool)
        negative = np.isfinite(raw) & (raw < 0)
        sigma = np.where(negative, np.nan, raw)
    else:
        raise ValueError(f"an error column must be (n,) or (n, 2) [lower, upper]; got shape {raw.shape}")
    return sigma, upper_limit, ~np.isfinite(sigma) & ~negative, negative


def _combine(kind: str, a: np.ndarray, sa: np.ndarray, b: np.ndarray, sb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """a / b or (a - b) / (a + b) with first-order variances, the two errors independent."""
    with np.errstate(divide="ignore", invalid="ignore"):
        if kind == "ratio":
            value = a / b
            # d/da = 1/b, d/db = -a/b^2
            return value, (sa / b) ** 2 + (a * sb / b**2) ** 2
        value = (a - b) / (a + b)
        # d/da = 2b/(a+b)^2, d/db = -2a/(a+b)^2
        return value, (2.0 / (a + b) ** 2) ** 2 * (b**2 * sa**2 + a**2 * sb**2)


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

def _hardness(soft: int, hard: int) -> Feature:
    return Feature("Flux_Band", error="Unc_Flux_Band", band=hard, combine="hardness", other_band=soft,
                   name=f"HR{soft}{hard}")


# The main job's inputs on 4FGL-DR4 (chosen by the selection study in docs/results.md): the paper's six
# with flux on a log scale (its long tail squashed every other source together after standardising),
# hardness ratios of adjacent photon-flux bands from 100 MeV to 30 GeV (DR4 bands 1-6: 0.1-0.3, 0.3-1,
# 1-3, 3-10, 10-30, 30-100 GeV; the pulsar cut-off and the blazar peaks fall there), variability,
# energy flux, |sin b| and the single power-law index.  Bands where a source is an upper limit use
# the upper error; a missing error (Unc_LP_beta where beta is pegged) marks that value exact.
_FERMI_DR4 = (
    Feature("Flux1000", error="Unc_Flux1000", transform="log10", missing_error="exact"),
    Feature("Signif_Avg", transform="log"),
    Feature("LP_SigCurv", transform="log", floor=0.1),
    Feature("Pivot_Energy", transform="log"),
    Feature("LP_Index", error="Unc_LP_Index", missing_error="exact"),
    Feature("LP_beta", error="Unc_LP_beta", missing_error="exact"),
    *(_hardness(b, b + 1) for b in range(1, 6)),
    Feature("Variability_Index", transform="log", floor=1.0),
    Feature("Energy_Flux100", error="Unc_Energy_Flux100", transform="log10", missing_error="exact"),
    Feature("GLAT", transform="abs_sin_deg", name="abs_sin_GLAT"),
    Feature("Frac_Variability", error="Unc_Frac_Variability", missing_error="exact"),
    Feature("PL_Index", error="Unc_PL_Index", missing_error="exact"),
)

FEATURE_PRESETS: dict[str, tuple[Feature, ...]] = {
    "villacampa2021": _VILLACAMPA2021,
    "fermi_dr4": _FERMI_DR4,
    "default": _VILLACAMPA2021,
}


def resolve_features(features: str | Sequence[Any] | None, available: Sequence[str] = ()) -> tuple[Feature, ...]:
    """A preset name, or a list of Feature / dict / string specs, as a tuple of Features."""
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

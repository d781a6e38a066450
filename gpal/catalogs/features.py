"""Declarative features: a catalog column, its 1-sigma error column and a transform.

A feature is data, not code: it names the columns it reads and how it maps them,
so a data set records exactly how it was built and the same spec works on every
4FGL release.  Error bars are carried through the transform as variances by
first-order (delta-method) propagation: var(g(x)) ~= g'(x)^2 sigma^2.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Mapping, Sequence

import numpy as np

__all__ = ["Feature", "FEATURE_PRESETS", "resolve_features"]

_TRANSFORMS = ("identity", "log", "log10")


@dataclass(frozen=True)
class Feature:
    """One model input built from a catalog column.

    column:    the value column, e.g. ``"LP_Index"``.
    error:     its 1-sigma uncertainty column (``None`` when the catalog gives none:
               the feature then has variance exactly 0).  Two-sided (n, 2) error
               columns are symmetrised as the mean of the absolute bounds.
    transform: ``"identity"``, ``"log"`` (natural) or ``"log10"``.
    floor:     for log transforms, values below ``floor`` are raised to it before
               the log (``LP_SigCurv`` can be exactly 0).  Without a floor a
               non-positive value is an error.
    name:      feature name in data sets; defaults to ``log(column)`` etc.
    """

    column: str
    error: str | None = None
    transform: str = "identity"
    floor: float | None = None
    name: str | None = None

    def __post_init__(self) -> None:
        if self.transform not in _TRANSFORMS:
            raise ValueError(f"unknown transform {self.transform!r} for column {self.column!r}; valid: {list(_TRANSFORMS)}")
        if self.floor is not None:
            if self.transform == "identity":
                raise ValueError(f"floor={self.floor} given for column {self.column!r} but floors only apply to log transforms")
            if not (math.isfinite(self.floor) and self.floor > 0):
                raise ValueError(f"floor for column {self.column!r} must be a positive number; got {self.floor}")

    @property
    def label(self) -> str:
        if self.name:
            return self.name
        return self.column if self.transform == "identity" else f"{self.transform}({self.column})"

    @property
    def columns(self) -> tuple[str, ...]:
        return (self.column,) if self.error is None else (self.column, self.error)

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}

    @classmethod
    def from_spec(cls, spec: "Feature | Mapping[str, Any] | str", available: Sequence[str] = ()) -> "Feature":
        """Build from a Feature, a dict of fields, or a string ``"COL"`` / ``"log:COL"`` / ``"log10:COL"``.

        For the string form the error column is ``Unc_COL`` when ``available``
        (the catalog's column names) contains it, as in every 4FGL release.
        """
        if isinstance(spec, Feature):
            return spec
        if isinstance(spec, Mapping):
            unknown = set(spec) - {"column", "error", "transform", "floor", "name"}
            if unknown or "column" not in spec:
                raise ValueError(
                    f"feature spec {dict(spec)} must have 'column' and only the keys "
                    "column, error, transform, floor, name"
                    + (f"; unknown: {sorted(unknown)}" if unknown else "")
                )
            return cls(**spec)
        if isinstance(spec, str):
            transform, _, column = spec.rpartition(":")
            transform = transform or "identity"
            error = f"Unc_{column}" if f"Unc_{column}" in available else None
            return cls(column=column, error=error, transform=transform)
        raise TypeError(f"a feature spec must be a Feature, a dict or a string; got {type(spec).__name__}")

    def apply(self, values: np.ndarray, sigma: np.ndarray | None, ids: Sequence[str] = ()) -> tuple[np.ndarray, np.ndarray]:
        """Transformed values and their variances for finite inputs (rows already selected)."""
        x = np.asarray(values, dtype=np.float64)
        s = np.zeros_like(x) if sigma is None else _symmetric_sigma(np.asarray(sigma, dtype=np.float64))
        if self.transform == "identity":
            return x, s**2
        if self.floor is not None:
            x = np.maximum(x, self.floor)
        elif (x <= 0).any():
            bad = np.nonzero(x <= 0)[0]
            examples = [str(ids[i]) for i in bad[:3]] if len(ids) else bad[:3].tolist()
            raise ValueError(
                f"{self.transform} transform of column {self.column!r}: {bad.size} non-positive value(s) "
                f"(min {x.min():.4g}; e.g. {examples}) and no floor; give Feature(..., floor=...) to clip them"
            )
        scale = 1.0 if self.transform == "log" else math.log(10.0)
        out = np.log(x) / scale
        # d/dx ln(x) = 1/x: var(log x) ~= (sigma / x)^2 (and / ln(10)^2 for log10).
        return out, (s / (x * scale)) ** 2


def _symmetric_sigma(sigma: np.ndarray) -> np.ndarray:
    if sigma.ndim == 2 and sigma.shape[1] == 2:
        return 0.5 * (np.abs(sigma[:, 0]) + np.abs(sigma[:, 1]))
    if sigma.ndim != 1:
        raise ValueError(f"an error column must be (n,) or (n, 2) [lower, upper]; got shape {sigma.shape}")
    return np.abs(sigma)


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

FEATURE_PRESETS: dict[str, tuple[Feature, ...]] = {
    "villacampa2021": _VILLACAMPA2021,
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

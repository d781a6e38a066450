"""The maps a feature applies, each written once: a transform of one value, a combination of two, a reduction of bands.

Point values, Monte Carlo draws and first-order error propagation all read these tables, so a
map and its derivative cannot drift apart (`gpal.catalogs.features.spec.Feature`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

__all__ = ["COMBINES", "REDUCES", "TRANSFORMS", "Combine", "Transform", "combine_first_order", "combine_values"]

_LN10 = math.log(10.0)


@dataclass(frozen=True)
class Transform:
    """``map`` of values or draws; ``sigma(x, s)`` the first-order 1-sigma error of ``map(x)`` for an error ``s`` of
    ``x`` (|map'(x)| s); ``positive``: a log, defined for x > 0 only, which a floor may clip to."""

    map: Callable[[np.ndarray], np.ndarray]
    sigma: Callable[[np.ndarray, np.ndarray], np.ndarray]
    positive: bool = False


def _sin_deg(x: np.ndarray) -> np.ndarray:
    return np.sin(np.radians(x))


def _sin_deg_sigma(x: np.ndarray, s: np.ndarray) -> np.ndarray:
    return np.cos(np.radians(x)) * math.pi / 180.0 * s  # d/dx sin(x deg) = cos(x deg) pi / 180


#: Transform name -> its map and first-order error.
TRANSFORMS: dict[str, Transform] = {
    "identity": Transform(lambda x: x, lambda x, s: s),
    "log": Transform(np.log, lambda x, s: s / x, positive=True),  # d/dx ln(x) = 1/x
    "log10": Transform(lambda x: np.log(x) / _LN10, lambda x, s: s / (x * _LN10), positive=True),
    "abs": Transform(np.abs, lambda x, s: s),
    "sin_deg": Transform(_sin_deg, _sin_deg_sigma),
    "abs_sin_deg": Transform(lambda x: np.abs(_sin_deg(x)), _sin_deg_sigma),
}


@dataclass(frozen=True)
class Combine:
    """``value(a, b)`` of two operands; ``variance(a, sa, b, sb)`` its first-order variance, the errors independent;
    ``label`` the feature name it gives, from the names of ``a`` and ``b``."""

    value: Callable[[np.ndarray, np.ndarray], np.ndarray]
    variance: Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray], np.ndarray]
    label: str


#: Combination name -> its value, first-order variance and label.
COMBINES: dict[str, Combine] = {
    # d/da = 1/b, d/db = -a/b^2
    "ratio": Combine(lambda a, b: a / b, lambda a, sa, b, sb: (sa / b) ** 2 + (a * sb / b**2) ** 2, "{a}/{b}"),
    # d/da = 2b/(a+b)^2, d/db = -2a/(a+b)^2
    "hardness": Combine(lambda a, b: (a - b) / (a + b),
                        lambda a, sa, b, sb: (2.0 / (a + b) ** 2) ** 2 * (b**2 * sa**2 + a**2 * sb**2), "HR({b},{a})"),
}


def combine_values(kind: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``COMBINES[kind]`` of values or draws (a zero denominator gives inf or NaN, which callers report)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return COMBINES[kind].value(a, b)


def combine_first_order(kind: str, a: np.ndarray, sa: np.ndarray, b: np.ndarray,
                        sb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``COMBINES[kind]`` of two operands with its first-order variance."""
    value = combine_values(kind, a, b)
    with np.errstate(divide="ignore", invalid="ignore"):
        return value, COMBINES[kind].variance(a, sa, b, sb)


def _share(x: np.ndarray, position: int) -> np.ndarray:
    return x[:, position] / x.sum(axis=1)


#: Reduction name -> f(x, position): a summary over the bands axis (1) of band values or draws x (n, bands, ...);
#: ``position`` is the place of the feature's own band among them (for ``share``).
REDUCES: dict[str, Callable[[np.ndarray, int], np.ndarray]] = {
    "share": _share,  # the band's fraction of the summed flux: a band spectrum's shape
    "max_over_mean": lambda x, position: x.max(axis=1) / x.mean(axis=1),
    "cv": lambda x, position: x.std(axis=1, ddof=1) / x.mean(axis=1),  # sample standard deviation over mean
}

"""Binomial intervals for fractions measured on few sources (accuracy, completeness, purity, a reliability bin).

A fraction of k out of n is uncertain by about sqrt(p (1 - p) / n), but that normal
approximation fails for the small n of a sparse reliability bin or a rare class and for
p near 0 or 1.  gpal uses the Jeffreys interval (Brown, Cai & DasGupta 2001, Stat. Sci.
16, 101): the equal-tailed interval of the Beta(k + 1/2, n - k + 1/2) posterior, with
the lower bound 0 when k = 0 and the upper bound 1 when k = n.  Its coverage is close
to nominal down to n of a few.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import beta

__all__ = ["binomial_interval"]


def binomial_interval(k: np.ndarray | int, n: np.ndarray | int, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Jeffreys interval (low, high) of the fraction ``k / n``; NaN where ``n`` is 0.

    ``k`` and ``n`` are counts (arrays broadcast); ``level`` is the coverage (0.95: 2.5%
    in each tail).
    """
    k = np.asarray(k, dtype=np.float64)
    n = np.asarray(n, dtype=np.float64)
    if not 0 < level < 1:
        raise ValueError(f"level must lie in (0, 1); got {level!r}")
    if np.any(k < 0) or np.any(k > n) or np.any(k != np.round(k)) or np.any(n != np.round(n)):
        raise ValueError("k and n must be whole counts with 0 <= k <= n")
    tail = (1.0 - level) / 2.0
    with np.errstate(invalid="ignore"):
        low = np.where(k > 0, beta.ppf(tail, k + 0.5, n - k + 0.5), 0.0)
        high = np.where(k < n, beta.ppf(1.0 - tail, k + 0.5, n - k + 0.5), 1.0)
    empty = n == 0
    return np.where(empty, np.nan, low), np.where(empty, np.nan, high)

"""Monte Carlo propagation of catalog error bars through a feature's map.

Each operand (a flux, a band, a year of a light curve) is drawn its feature's ``draws`` times (`MC_DRAWS` unless
the feature says otherwise) from the error
distribution its catalog entry describes (a split normal, an upper limit, truncated at a physical
lower bound), at quasi-random probabilities shared by every source; the feature's map
(`gpal.catalogs.features.transforms`) is applied per draw and the spread of the results is the
feature's variance.  Features that read the same operand draw it once (`transform_all`).
"""

from __future__ import annotations

import functools
import hashlib
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
from scipy.special import ndtr, ndtri

from gpal.catalogs.features.transforms import combine_values

__all__ = ["MC_DRAWS", "MC_SEED", "transform_all"]

#: Monte Carlo propagation: draws per source (a power of 2, as a Sobol sample needs), and the seed of
#: their scrambled-Sobol probabilities.  Every source is propagated at the same probabilities (common
#: random numbers), so a source's variance depends on its own catalog entries only: not on the
#: selection, the row order or the run.  512 draws give FL16Y's main-job features the standard deviations of
#: 2048 to 0.1% for the median source and 4% for the 99th percentile (the hardness ratios, whose bands reach
#: zero, the widest), far inside how well a catalog's error bars are known, in a quarter of the time.
MC_DRAWS = 512
MC_SEED = 20_240_622
#: Draws propagated at once: a draw's (rows, draws) temporaries of 1 MB stay in a core's L2 cache (at twice that
#: the draws took 1.7 times as long), and a feature of many operands stacks at most _MC_STACKED_DRAWS rows x draws x
#: operands.  Counted in draws, not rows: each NumPy call of a block waits for the GIL that TensorFlow's import
#: beside the main job's features holds, up to Python's switch interval, so blocks of fewer, larger calls finish
#: sooner (the main job's catalog-and-features step: 3.4-3.8 s in blocks of 64 rows of 512 draws, 2.8-3.1 s in
#: blocks of 256, the same bits; three alternating runs on a shared 2-core machine).
_MC_BLOCK_DRAWS = 2**17
_MC_STACKED_DRAWS = 2**19
#: Draws propagated at once however many operands a feature has (3FGL's 48-month light curves would otherwise take
#: 5 rows a block, and spend 40% of their time in Python's per-block calls).
_MC_MIN_DRAWS = 2**15


@functools.lru_cache(maxsize=None)
def _uniforms(draws: int, dims: int) -> np.ndarray:
    """(draws, dims) scrambled-Sobol points from MC_SEED: each column stratifies (0, 1), the columns independent."""
    from scipy.stats import qmc

    u = qmc.Sobol(d=dims, scramble=True, seed=MC_SEED).random(draws)
    u.setflags(write=False)
    return u


def _split_normals(centre, lower, upper, bound) -> tuple[np.ndarray, ...]:
    """Split normals truncated below at ``bound`` (None: none), per row (each (n, 1)): the mode, the two sigmas, the
    probability below the mode and the slopes that map a probability to a level of the standard normal on each
    side of it, which `_quantiles` draws at.

    A split normal with mode ``centre`` has density proportional to N(centre, lower^2) below the
    mode and N(centre, upper^2) above it, so a fraction lower / (lower + upper) of it lies below.
    Truncation at ``bound`` keeps the part of the lower half above the bound and renormalises.
    Each draw is the distribution's quantile at its probability: stratified probabilities give a
    stratified sample, exact in distribution for every row.  Computed once for all the rows of an operand, not
    per block: in the main job each NumPy call of a block waits for the GIL that TensorFlow's import beside it
    holds, and these were more than half of a block's calls."""
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
    return c, -lo, up, q, half, slope_below, slope_above


def _quantiles(rows: Sequence[np.ndarray], u: np.ndarray, bound: float | None) -> np.ndarray:
    """Draws (rows, D) at the probabilities ``u`` (D,) of the split normals ``rows`` (`_split_normals`, or a slice
    of its arrays)."""
    c, minus_lo, up, q, half, slope_below, slope_above = rows
    u = u[None, :]
    below = u < q
    level = np.where(below, half - u * slope_below, u * slope_above - q * slope_above)
    level += 0.5
    draws = ndtri(level)
    draws *= np.where(below, minus_lo, up)
    draws += c
    return draws if bound is None else np.maximum(draws, bound, out=draws)  # round-off never crosses the bound


def transform_all(features: Sequence[Any], values: Sequence[np.ndarray], errors: Sequence[np.ndarray],
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
        feature.check_domain(x, ids)
        model = models[i] = feature.error_model(x, np.asarray(sigma, dtype=np.float64))
        # an operand is shared by what it is read from and by its values: a feature given other arrays than its
        # catalog's (a user's, or another selection's rows) never borrows another's draws
        keys = [source + (feature.monte_carlo_draws, hashlib.sha256(np.ascontiguousarray(model[:, k]).tobytes()).digest())
                for k, source in enumerate(feature.operand_sources(model.shape[1]))]
        operand_keys[i] = [key + (keys[:k].count(key),) for k, key in enumerate(keys)]  # a repeat is its own operand
    for group in _draw_groups(operand_keys):
        model = np.stack([models[i][:, k] for i, k in group.operands], axis=1)
        members = list(group.reads)
        moments = _monte_carlo_moments([features[i] for i in members], model, list(group.reads.values()), group.columns)
        for i, (mean, variance) in zip(members, moments):
            out[i] = (mean if features[i].centre == "draw_mean" else features[i].mapped(points[i])), variance
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


def _monte_carlo_moments(features: Sequence[Any], model: np.ndarray, reads: Sequence[tuple[int, ...]] | None = None,
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
    bound, draws = features[0].lower_bound, features[0].monte_carlo_draws
    if any(feature.lower_bound != bound or feature.monte_carlo_draws != draws for feature in features):
        raise ValueError("features drawn together must share their lower_bound and draws")
    u = _uniforms(draws, max(columns) + 1)
    moments = [(np.empty(n), np.empty(n)) for _ in features]
    rows = max(_MC_MIN_DRAWS, min(_MC_BLOCK_DRAWS, _MC_STACKED_DRAWS // operands)) // draws

    split_normals = [_split_normals(model[:, k, 0], model[:, k, 1], model[:, k, 2], bound) for k in range(operands)]

    def propagate(start: int) -> None:
        draws = [_quantiles([a[start:start + rows] for a in split_normals[k]], u[:, columns[k]], bound)
                 for k in range(operands)]
        stacked: dict[tuple[int, ...], np.ndarray] = {}  # the band shares of one spectrum stack their bands once
        for feature, read, (mean, variance) in zip(features, reads, moments):
            if feature.reduce is not None:
                if read not in stacked:
                    stacked[read] = np.stack([draws[k] for k in read], axis=1)
                combined = feature.reduced(stacked[read])
            else:
                combined = draws[read[0]] if len(read) == 1 else combine_values(feature.combine, draws[read[0]], draws[read[1]])
            transformed = feature.mapped(combined)
            mean[start:start + rows] = transformed.mean(axis=1)
            variance[start:start + rows] = transformed.var(axis=1)

    starts = range(0, n, rows)
    if len(starts) > 1 and _MC_THREADS > 1:
        list(_block_pool().map(propagate, starts))  # list(): a block's exception is raised here
    else:
        for start in starts:
            propagate(start)
    return moments


#: Threads that propagate blocks of rows at once (at most 4: each block holds a few MB of temporaries).
_MC_THREADS = min(4, os.cpu_count() or 1)


@functools.lru_cache(maxsize=None)
def _block_pool() -> ThreadPoolExecutor:
    return ThreadPoolExecutor(max_workers=_MC_THREADS, thread_name_prefix="gpal-features")

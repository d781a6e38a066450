"""Adapting class probabilities to a population with other class proportions (label shift).

The unassociated and bcu sources gpal classifies are not drawn like the associated
training sources: their class proportions differ.  If only the prior changes and the
class-conditional densities p(x | y) stay the same, Bayes' rule gives the target
posterior p_t(y | x) ∝ p_s(y | x) π_t(y) / π_s(y), and the unknown π_t can be
estimated from the unlabelled predictions by the EM iteration of Saerens, Latinne &
Decaestecker (2002, Neural Computation 14, 21): π_t ← mean_i p_t(y | x_i).

The assumption fails in part for catalog sources: unassociated sources are also fainter,
so p(x | y) shifts too (covariate shift).  Treat the estimate as a diagnostic of how
different the population is, not as a calibrated correction.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["PriorShiftResult", "adjust_to_prior", "estimate_target_prior"]


@dataclass(frozen=True)
class PriorShiftResult:
    prior: np.ndarray  # the estimated target prior, (C,)
    proba: np.ndarray  # the probabilities adjusted to it, (n, C)
    n_iter: int
    converged: bool


def _check(proba: np.ndarray, prior: np.ndarray, name: str) -> tuple[np.ndarray, np.ndarray]:
    p = np.asarray(proba, dtype=np.float64)
    if p.ndim != 2 or p.shape[0] == 0:
        raise ValueError(f"proba must be a non-empty (n, C) array; got shape {p.shape}")
    if not np.all(np.isfinite(p)) or p.min() < 0:
        raise ValueError("proba must hold finite, non-negative probabilities")
    q = np.asarray(prior, dtype=np.float64)
    if q.shape != (p.shape[1],):
        raise ValueError(f"{name} must have one entry per class ({p.shape[1]}); got shape {q.shape}")
    if not np.all(np.isfinite(q)) or q.min() <= 0 or abs(q.sum() - 1.0) > 1e-6:
        raise ValueError(f"{name} must be positive and sum to 1; got {q.tolist()}")
    return p, q


def adjust_to_prior(proba: np.ndarray, source_prior: np.ndarray, target_prior: np.ndarray) -> np.ndarray:
    """p_t(y | x) ∝ p_s(y | x) π_t(y) / π_s(y), rows renormalised."""
    p, source = _check(proba, source_prior, "source_prior")
    _, target = _check(p, target_prior, "target_prior")
    weighted = p * (target / source)
    return weighted / weighted.sum(axis=1, keepdims=True)


def estimate_target_prior(proba: np.ndarray, source_prior: np.ndarray, tol: float = 1e-8,
                          max_iter: int = 1000) -> PriorShiftResult:
    """EM estimate of the target prior from the source model's probabilities on the target rows."""
    p, source = _check(proba, source_prior, "source_prior")
    prior = source.copy()
    adjusted = p / p.sum(axis=1, keepdims=True)
    for n_iter in range(1, int(max_iter) + 1):
        adjusted = adjust_to_prior(p, source, prior)
        new = adjusted.mean(axis=0)
        new = np.maximum(new, 1e-300) / np.maximum(new, 1e-300).sum()
        done = np.max(np.abs(new - prior)) < tol
        prior = new
        if done:
            return PriorShiftResult(prior, adjust_to_prior(p, source, prior), n_iter, True)
    return PriorShiftResult(prior, adjusted, int(max_iter), False)

"""Adapting class probabilities to a population with different class proportions (label shift).

The unassociated and bcu sources gpal classifies are not drawn like the associated
sources it is trained on: the class proportions differ.  If only the prior changes,
π_s(y) -> π_t(y), while the class-conditional densities p(x | y) stay the same, Bayes'
rule gives the target posterior

    p_t(y | x) ∝ p_s(y | x) π_t(y) / π_s(y),

and the unknown π_t can be estimated from unlabelled predictions alone by the EM
iteration of Saerens, Latinne & Decaestecker (2002, Neural Computation 14, 21):
π_t <- mean_i p_t(y | x_i), repeated until it stops changing.

The assumption holds only in part for catalog sources: unassociated sources are also
fainter, with larger error bars, so p(x | y) shifts as well (covariate shift).  Treat the
estimate as a diagnostic of how different the classified population is, not as a
calibrated correction of the probabilities.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["PriorShiftResult", "adjust_to_prior", "estimate_target_prior"]


@dataclass(frozen=True)
class PriorShiftResult:
    """EM outcome; the arrays are read-only so the frozen result cannot be changed in place."""

    prior: np.ndarray  # estimated target prior, (C,)
    proba: np.ndarray  # probabilities adjusted to that prior, (n, C)
    n_iter: int        # EM updates performed
    converged: bool    # the last update moved no entry of the prior by tol or more


def _check_proba(proba: np.ndarray) -> np.ndarray:
    p = np.asarray(proba, dtype=np.float64)
    if p.ndim != 2 or p.shape[0] == 0 or p.shape[1] < 2:
        raise ValueError(f"proba must be a non-empty (n, C) array with C >= 2; got shape {p.shape}")
    if not np.all(np.isfinite(p)) or p.min() < 0 or p.max() > 1 + 1e-9:
        raise ValueError("proba must hold finite probabilities in [0, 1]")
    if np.any(p.sum(axis=1) <= 0):
        raise ValueError("every row of proba needs a positive probability")
    return p


def _check_prior(prior: np.ndarray, n_classes: int, name: str) -> np.ndarray:
    q = np.asarray(prior, dtype=np.float64)
    if q.shape != (n_classes,):
        raise ValueError(f"{name} must have one entry per class ({n_classes}); got shape {q.shape}")
    if not np.all(np.isfinite(q)) or q.min() <= 0 or abs(q.sum() - 1.0) > 1e-6:
        raise ValueError(f"{name} must be positive and sum to 1 (within 1e-6); got {q.tolist()}")
    return q


def _reweight(p: np.ndarray, ratio: np.ndarray) -> np.ndarray:
    """Bayes' rule under label shift: rows of p scaled by π_t / π_s and renormalised."""
    weighted = p * ratio
    return weighted / weighted.sum(axis=1, keepdims=True)


def adjust_to_prior(proba: np.ndarray, source_prior: np.ndarray, target_prior: np.ndarray) -> np.ndarray:
    """p_t(y | x) ∝ p_s(y | x) π_t(y) / π_s(y), each row renormalised to sum to 1."""
    p = _check_proba(proba)
    source = _check_prior(source_prior, p.shape[1], "source_prior")
    target = _check_prior(target_prior, p.shape[1], "target_prior")
    return _reweight(p, target / source)


def estimate_target_prior(
    proba: np.ndarray, source_prior: np.ndarray, tol: float = 1e-8, max_iter: int = 1000,
    held: np.ndarray | None = None,
) -> PriorShiftResult:
    """EM estimate of the target prior from the source model's probabilities on unlabelled target rows.

    ``proba`` are p_s(y | x_i) of a model trained with class prior ``source_prior``.
    Starting from π_t = π_s, each update sets π_t to the mean of the probabilities
    adjusted to the current π_t; it stops when no entry moves by ``tol`` or more.
    ``held``: a (C,) boolean mask of classes whose share stays at the source's; the update then shares the
    rest among the other classes in proportion to their mean probabilities (the EM of the likelihood with
    those shares fixed).  Why: a class that absorbs the covariate shift (the faint, soft sources of a
    catalog's other populations) draws EM's estimate towards itself, a share the labels never support.
    """
    p = _check_proba(proba)
    source = _check_prior(source_prior, p.shape[1], "source_prior")
    fixed = np.zeros(p.shape[1], bool) if held is None else np.asarray(held)
    if fixed.dtype != bool or fixed.shape != (p.shape[1],):
        raise ValueError(f"held must be a boolean mask with one entry per class ({p.shape[1]}); got {held!r}")
    if fixed.all():
        raise ValueError("held holds every class: no share is left to estimate")
    if isinstance(tol, bool) or not np.isfinite(tol) or tol <= 0:
        raise ValueError(f"tol must be a positive number; got {tol!r}")
    if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)) or max_iter < 1:
        raise ValueError(f"max_iter must be an integer >= 1; got {max_iter!r}")

    prior = source.copy()
    converged = False
    n_iter = 0
    while n_iter < max_iter:
        n_iter += 1
        updated = _reweight(p, prior / source).mean(axis=0)
        updated = np.where(fixed, source, updated / updated[~fixed].sum() * (1.0 - source[fixed].sum()))
        step = np.max(np.abs(updated - prior))
        prior = updated / updated.sum()
        if step < tol:
            converged = True
            break
    adjusted = _reweight(p, prior / source)
    prior.flags.writeable = False
    adjusted.flags.writeable = False
    return PriorShiftResult(prior=prior, proba=adjusted, n_iter=n_iter, converged=converged)

"""Batch rules: which k pool rows a query takes, given every row's score.

``top_k`` takes the k best scores; ``greedy_diverse`` picks greedily, damping each
candidate's score by its similarity to the rows already chosen, so a batch does not spend k
labels on k near-copies of one source; ``power_sample`` draws k without replacement with
probability proportional to score^beta (power acquisition, Kirsch et al. 2023), which spreads a
batch over the many nearly-as-good sources instead of one region of input space.
"""

from __future__ import annotations

import numpy as np

__all__ = ["BATCH_RULES", "greedy_diverse", "power_sample", "top_k"]

#: An acquisition's ``batch`` names one: `top_k`, `greedy_diverse` or `power_sample`.
BATCH_RULES = ("top_k", "diverse", "stochastic")


def top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k largest scores, best first; ties go to the lower index (deterministic).

    Returns
    -------
    numpy.ndarray
        (k,) row indices.
    """
    scores = np.asarray(scores, dtype=np.float64)
    return np.argsort(-scores, kind="stable")[:k]


def greedy_diverse(scores: np.ndarray, features: np.ndarray, k: int, lengthscale: float | None = None,
                   n_candidates: int | None = None) -> np.ndarray:
    """Greedy batch: repeatedly take argmax of ``score_i * (1 - max_j exp(-|x_i - x_j|^2 / 2 l^2))`` over chosen j.

    Distances are measured on features scaled by the candidates' standard deviation.
    Only the ``n_candidates`` best-scored rows (default max(10 k, 100)) compete, which
    keeps the cost O(n_candidates^2).  ``lengthscale`` defaults to the median pairwise
    distance among candidates.  A chosen row is never chosen again.

    Returns
    -------
    numpy.ndarray
        (k,) row indices, in the order chosen.
    """
    scores = np.asarray(scores, dtype=np.float64)
    if not 1 <= k <= scores.shape[0]:
        raise ValueError(f"cannot pick a batch of {k} from {scores.shape[0]} candidate(s)")
    if (scores < 0).any():
        raise ValueError("greedy_diverse needs non-negative scores (it damps them multiplicatively)")
    m = min(scores.shape[0], n_candidates or max(10 * k, 100))
    cand = top_k(scores, m)
    Z = np.asarray(features, dtype=np.float64)[cand]
    Z = (Z - Z.mean(axis=0)) / np.where(Z.std(axis=0) > 0, Z.std(axis=0), 1.0)
    d2 = np.sum((Z[:, None, :] - Z[None, :, :]) ** 2, axis=-1)
    if lengthscale is None:
        off = d2[np.triu_indices(m, 1)]
        lengthscale = float(np.sqrt(np.median(off))) if off.size and np.median(off) > 0 else 1.0
    similarity = np.exp(-d2 / (2.0 * lengthscale**2))
    closest = np.zeros(m)  # max similarity to anything chosen so far
    available = np.ones(m, dtype=bool)
    chosen = []
    for _ in range(k):
        value = np.where(available, scores[cand] * (1.0 - closest), -np.inf)
        j = int(np.argmax(value))  # first maximum: deterministic
        chosen.append(j)
        available[j] = False
        closest = np.maximum(closest, similarity[j])
    return cand[np.array(chosen, dtype=np.int64)]


def power_sample(scores: np.ndarray, k: int, beta: float, rng: np.random.Generator) -> np.ndarray:
    """k indices drawn without replacement with probability proportional to score^beta, in draw order.

    Gumbel-top-k: the k largest beta log s_i + G_i with G_i standard Gumbel are an ordered draw
    without replacement from p_i proportional to s_i^beta; beta -> infinity is top-k, beta = 0 uniform.
    Zero scores are drawn only after every positive one.

    Returns
    -------
    numpy.ndarray
        (k,) row indices, in draw order.
    """
    scores = np.asarray(scores, dtype=np.float64)
    if not 1 <= k <= scores.shape[0]:
        raise ValueError(f"cannot draw a batch of {k} from {scores.shape[0]} candidate(s)")
    if (scores < 0).any():
        raise ValueError("power_sample needs non-negative scores (it draws proportionally to score^beta)")
    with np.errstate(divide="ignore"):
        keys = beta * np.log(scores) + rng.gumbel(size=scores.shape[0])
    return top_k(np.where(np.isfinite(keys), keys, -np.inf), k)

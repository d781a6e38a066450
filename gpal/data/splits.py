"""Train/test splits as row indices: one seeded partition, the repeated protocol's `Split`, a per-class hold-out.

Dividing rows is apart from the rows themselves: `NoisyDataset.split` and `NoisyDataset.repeated_splits` draw their
partitions here, and training draws its validation and calibration rows (`holdout_per_class`) from class codes
alone.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["Split", "holdout_per_class", "partition"]


@dataclass(frozen=True)
class Split:
    """One train/test partition, as index arrays into the parent data set.

    Examples
    --------
    >>> import numpy as np
    >>> from gpal import NoisyDataset
    >>> data = NoisyDataset(X=np.arange(20.0).reshape(10, 2), X_var=None, y=np.array([0, 1] * 5),
    ...                     class_names=("a", "b"), feature_names=(), ids=None)
    >>> split = next(data.repeated_splits(n_splits=3, test_size=0.2, seed=0))
    >>> split.index, len(split.train), len(split.test)
    (0, 8, 2)
    >>> data.subset(split.test).class_counts()
    {'a': 1, 'b': 1}
    """

    index: int
    train: np.ndarray
    test: np.ndarray


def holdout_per_class(codes: np.ndarray, fraction: float, rng: np.random.Generator, holds_out: str,
                      remedy: str) -> tuple[np.ndarray, np.ndarray]:
    """Sorted (kept rows, held-out rows): ``round(fraction * n_c)`` of class c's ``n_c`` rows held out, at least one
    and at most ``n_c - 1``, so that every class is on both sides (an early-stopping validation set, a Platt
    calibration set, each drawn from the caller's own stream ``rng``).

    Raises ``ValueError`` naming a class with fewer than two rows: "``holds_out`` of every class, but class code
    ... has 1 training row(s); ``remedy``".

    Returns
    -------
    kept, held_out : numpy.ndarray
        Row indices into ``codes``, sorted, disjoint, together every row.
    """
    codes = np.asarray(codes)
    kept, held = [], []
    for code in np.unique(codes):
        rows = np.flatnonzero(codes == code)
        if rows.size < 2:
            raise ValueError(f"{holds_out} of every class, but class code {code} has {rows.size} training row(s); "
                             f"{remedy}")
        rows = rng.permutation(rows)
        n_held = min(rows.size - 1, max(1, int(round(fraction * rows.size))))
        held.append(rows[:n_held])
        kept.append(rows[n_held:])
    return np.sort(np.concatenate(kept)), np.sort(np.concatenate(held))


def partition(y: np.ndarray | None, n: int, test_size: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Seeded partition into sorted train and test indices, stratified when ``y`` is given.

    The test set has ``ceil(test_size * n)`` rows (as scikit-learn), shared among
    classes by largest remainder so each class keeps its proportion; every class
    keeps at least one training row.
    """
    if not 0.0 < test_size < 1.0:
        raise ValueError(f"test_size must be a fraction in (0, 1); got {test_size}")
    n_test = math.ceil(test_size * n)
    if n < 2 or n_test >= n:
        raise ValueError(f"cannot split {n} rows with test_size={test_size}: need at least one row on each side")
    if y is None:
        perm = rng.permutation(n)
        return np.sort(perm[n_test:]), np.sort(perm[:n_test])
    classes, counts = np.unique(y, return_counts=True)
    exact = counts * n_test / n
    take = np.floor(exact).astype(int)
    remainder = n_test - take.sum()
    # Ties in the fractional part are broken at random so no class is systematically favoured.
    order = np.lexsort((rng.random(len(classes)), -(exact - take)))
    take[order[:remainder]] += 1
    take = np.minimum(take, counts - 1)  # every class keeps a training row
    test = []
    for cls, k in zip(classes, take):
        members = np.nonzero(y == cls)[0]
        test.append(rng.permutation(members)[:k])
    test_idx = np.sort(np.concatenate(test)) if test else np.array([], dtype=np.int64)
    if test_idx.size == 0:
        raise ValueError(
            f"a stratified split of {n} rows with test_size={test_size} leaves the test set empty, as every class "
            f"keeps a training row (class sizes {counts.tolist()}); use more rows or stratify=False"
        )
    train_idx = np.setdiff1d(np.arange(n), test_idx)
    return train_idx, test_idx

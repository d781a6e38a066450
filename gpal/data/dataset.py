"""Noisy data sets: features with per-point, per-feature measurement variances.

`NoisyDataset` is the one container every stage of gpal shares: catalogs produce
it, synthetic generators produce it, models consume it.  It is immutable; every
operation (subset, split, standardise) returns a new data set, and every data set
is validated on construction so that NaN, negative variances or mismatched shapes
never reach a model.  How rows are divided is `gpal.data.splits`; the fitted
standardising map is `gpal.data.standardizer`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Iterator, Mapping, Sequence

import numpy as np

from gpal.data.splits import Split, partition

__all__ = ["NoisyDataset"]


def float_matrix(name: str, value: Any, n_rows: int | None = None) -> np.ndarray:
    """``value`` as a float64 (n, d) array named ``name`` in the error; a 1-D array of ``n_rows`` values is a column."""
    arr = np.asarray(value, dtype=np.float64)
    if arr.ndim == 1 and n_rows is not None and n_rows > 0 and arr.shape[0] == n_rows:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array (n_samples, n_features); got shape {arr.shape}")
    return arr


def check_finite(name: str, arr: np.ndarray, feature_names: Sequence[str]) -> None:
    """Refuse an array holding NaN or inf, naming the features and the first row."""
    bad = ~np.isfinite(arr)
    if bad.any():
        rows, cols = np.nonzero(bad)
        cols_named = sorted({feature_names[c] for c in cols})
        raise ValueError(
            f"{name} contains {bad.sum()} non-finite value(s) (NaN or inf) in {len(set(rows))} row(s), "
            f"features {cols_named}; first bad row index {rows[0]}. "
            "Drop or impute these rows before building a NoisyDataset."
        )


@dataclass(frozen=True, eq=False)
class NoisyDataset:
    """Features ``X`` (n, d) with measurement variances ``X_var`` (n, d), labels and ids.

    ``y`` holds integer codes into ``class_names`` or is ``None`` for an unlabelled
    pool.  A feature without an error bar has variance exactly 0.  ``aux`` carries
    per-row columns that are never features (sky position, raw class code) through
    subsetting; ``meta`` records provenance (release, cuts, dropped rows).

    Examples
    --------
    >>> import numpy as np
    >>> from gpal import NoisyDataset
    >>> data = NoisyDataset(
    ...     X=[[0.1, 1.0], [0.4, 2.0], [2.0, 0.5], [2.5, 0.1]],
    ...     X_var=[[0.01, 0.0], [0.04, 0.0], [0.01, 0.0], [0.09, 0.0]],  # feature 2 is exact
    ...     y=np.array([0, 0, 1, 1]), class_names=("bll", "fsrq"),
    ...     feature_names=("index", "curvature"), ids=["s1", "s2", "s3", "s4"])
    >>> data
    NoisyDataset(n=4, features=['index', 'curvature'], classes=['bll', 'fsrq'], release=-)
    >>> data.class_counts()
    {'bll': 2, 'fsrq': 2}
    >>> data.by_ids(["s3", "s1"]).labels().tolist()
    ['fsrq', 'bll']
    """

    X: np.ndarray
    X_var: np.ndarray
    y: np.ndarray | None
    class_names: tuple[str, ...]
    feature_names: tuple[str, ...]
    ids: np.ndarray
    aux: Mapping[str, np.ndarray] = field(default_factory=dict)
    meta: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        X = float_matrix("X", self.X)
        n, d = X.shape
        X_var = np.zeros_like(X) if self.X_var is None else float_matrix("X_var", self.X_var, n)
        if X_var.shape != X.shape:
            raise ValueError(f"X_var must have the same shape as X {X.shape}; got {X_var.shape}")
        feature_names = tuple(str(f) for f in self.feature_names) or tuple(f"x{j}" for j in range(d))
        if len(feature_names) != d:
            raise ValueError(f"feature_names has {len(feature_names)} names for {d} features")
        if len(set(feature_names)) != d:
            raise ValueError(f"feature_names must be unique; got {list(feature_names)}")
        check_finite("X", X, feature_names)
        check_finite("X_var", X_var, feature_names)
        if (X_var < 0).any():
            cols = sorted({feature_names[c] for c in np.nonzero(X_var < 0)[1]})
            raise ValueError(f"X_var must be >= 0 (variances, not standard deviations); negative in {cols}")
        class_names = tuple(str(c) for c in self.class_names)
        if len(set(class_names)) != len(class_names):
            raise ValueError(f"class_names must be unique; got {list(class_names)}")
        y = self.y
        if y is not None:
            y = np.asarray(y)
            if y.shape != (n,):
                raise ValueError(f"y must have shape ({n},); got {y.shape}")
            if not np.issubdtype(y.dtype, np.integer):
                raise TypeError(f"y must hold integer class codes into class_names; got dtype {y.dtype}")
            y = y.astype(np.int64)
            if n and (y.min() < 0 or y.max() >= len(class_names)):
                raise ValueError(
                    f"y codes must lie in [0, {len(class_names)}) for class_names {list(class_names)}; "
                    f"got range [{y.min()}, {y.max()}]"
                )
        ids = np.arange(n).astype(str) if self.ids is None else np.asarray(self.ids).astype(str)
        if ids.shape != (n,):
            raise ValueError(f"ids must have shape ({n},); got {ids.shape}")
        aux = {}
        for key, col in dict(self.aux).items():
            col = np.asarray(col)
            if col.shape[:1] != (n,):
                raise ValueError(f"aux column {key!r} must have {n} rows; got shape {col.shape}")
            aux[key] = col
        for name, value in [("X", X), ("X_var", X_var), ("y", y), ("ids", ids)]:
            object.__setattr__(self, name, value)
        object.__setattr__(self, "feature_names", feature_names)
        object.__setattr__(self, "class_names", class_names)
        object.__setattr__(self, "aux", aux)
        object.__setattr__(self, "meta", dict(self.meta))

    # ------------------------------------------------------------------ basics
    @property
    def n_samples(self) -> int:
        return self.X.shape[0]

    @property
    def n_features(self) -> int:
        return self.X.shape[1]

    @property
    def n_classes(self) -> int:
        return len(self.class_names)

    @property
    def is_labelled(self) -> bool:
        return self.y is not None

    def __len__(self) -> int:
        return self.n_samples

    def __repr__(self) -> str:
        labels = f"classes={list(self.class_names)}" if self.is_labelled else "unlabelled"
        return (
            f"NoisyDataset(n={self.n_samples}, features={list(self.feature_names)}, {labels}, "
            f"release={self.meta.get('release', '-')})"
        )

    def labels(self) -> np.ndarray:
        """Class names per row.

        Returns
        -------
        numpy.ndarray
            (n,) object array of class names; a ValueError for an unlabelled pool.
        """
        self._require_labels("labels()")
        return np.asarray(self.class_names, dtype=object)[self.y]

    def class_counts(self) -> dict[str, int]:
        """Rows per class.

        Returns
        -------
        dict
            Class name -> number of rows, in the order of ``class_names`` (zeros included).
        """
        self._require_labels("class_counts()")
        counts = np.bincount(self.y, minlength=self.n_classes)
        return {name: int(c) for name, c in zip(self.class_names, counts)}

    def _require_labels(self, what: str) -> None:
        if self.y is None:
            raise ValueError(f"{what} needs a labelled data set; this one is an unlabelled pool")

    # -------------------------------------------------------- index operations
    def subset(self, index: Sequence[int] | np.ndarray) -> "NoisyDataset":
        """Rows selected by integer index or boolean mask (order preserved, copies made).

        Returns
        -------
        NoisyDataset
            The selected rows, with their labels, ids and aux columns.
        """
        idx = np.asarray(index)
        if idx.dtype == bool:
            if idx.shape != (self.n_samples,):
                raise ValueError(f"boolean mask must have shape ({self.n_samples},); got {idx.shape}")
            idx = np.nonzero(idx)[0]
        elif idx.size and not np.issubdtype(idx.dtype, np.integer):
            raise TypeError(f"index must be integers or a boolean mask; got dtype {idx.dtype}")
        idx = idx.astype(np.int64).reshape(-1)
        if idx.size and (idx.min() < -self.n_samples or idx.max() >= self.n_samples):
            raise IndexError(f"index out of range for a data set of {self.n_samples} rows")
        return replace(
            self,
            X=self.X[idx],
            X_var=self.X_var[idx],
            y=None if self.y is None else self.y[idx],
            ids=self.ids[idx],
            aux={k: v[idx] for k, v in self.aux.items()},
        )

    def by_ids(self, ids: Sequence[str]) -> "NoisyDataset":
        """Rows with the given ids, in the order given; unknown ids are a KeyError.

        Returns
        -------
        NoisyDataset
            Those rows, in the order of ``ids``.
        """
        position = {name: i for i, name in enumerate(self.ids)}
        missing = [i for i in ids if i not in position]
        if missing:
            raise KeyError(f"{len(missing)} id(s) not in this data set, e.g. {missing[:5]}")
        return self.subset([position[i] for i in ids])

    @classmethod
    def concatenate(cls, datasets: Sequence["NoisyDataset"]) -> "NoisyDataset":
        """Stack data sets that share features and classes (meta of the first is kept).

        Returns
        -------
        NoisyDataset
            The rows of every data set, in the order given.
        """
        if not datasets:
            raise ValueError("concatenate needs at least one data set")
        first = datasets[0]
        for k, ds in enumerate(datasets[1:], start=1):
            if ds.feature_names != first.feature_names:
                raise ValueError(
                    f"data set {k} has features {list(ds.feature_names)}, expected {list(first.feature_names)}"
                )
            if ds.is_labelled != first.is_labelled or (
                first.is_labelled and ds.class_names != first.class_names
            ):
                raise ValueError(
                    f"data set {k} has classes {list(ds.class_names)} (labelled={ds.is_labelled}), "
                    f"expected {list(first.class_names)} (labelled={first.is_labelled})"
                )
            if set(ds.aux) != set(first.aux):
                raise ValueError(f"data set {k} has aux columns {sorted(ds.aux)}, expected {sorted(first.aux)}")
        return replace(
            first,
            X=np.concatenate([d.X for d in datasets]),
            X_var=np.concatenate([d.X_var for d in datasets]),
            y=None if first.y is None else np.concatenate([d.y for d in datasets]),
            ids=np.concatenate([d.ids for d in datasets]),
            aux={k: np.concatenate([d.aux[k] for d in datasets]) for k in first.aux},
        )

    def with_features(self, X: np.ndarray, X_var: np.ndarray, **meta: Any) -> "NoisyDataset":
        """Same rows, labels and ids with new feature values (e.g. after standardising).

        Returns
        -------
        NoisyDataset
            A copy with ``X`` and ``X_var`` replaced and ``meta`` updated by ``meta``.
        """
        return replace(self, X=X, X_var=X_var, meta={**self.meta, **meta})

    # ------------------------------------------------------------------ splits
    def split(self, test_size: float = 0.1, seed: int = 0, stratify: bool = True) -> tuple["NoisyDataset", "NoisyDataset"]:
        """One seeded train/test partition (no row in both, none sampled twice).

        The test set has ``ceil(test_size * n)`` rows; ``stratify`` keeps each class's share
        and at least one training row per class.

        Returns
        -------
        train, test : NoisyDataset
            The two parts, rows in their original order.
        """
        train, test = partition(self.y if stratify else None, self.n_samples, test_size, np.random.default_rng(seed))
        return self.subset(train), self.subset(test)

    def repeated_splits(
        self, n_splits: int = 100, test_size: float = 0.1, seed: int = 0, stratify: bool = True
    ) -> Iterator[Split]:
        """The repeated random 90/10 protocol of the noisy-input GP paper (sec. 5.3, 5.6).

        Split k draws from its own stream ``default_rng([seed, k])``, so any single
        split can be recomputed alone, in any order, on any worker.

        Yields
        ------
        Split
            Split k (``index`` k), its train and test row indices.
        """
        if n_splits < 1:
            raise ValueError(f"n_splits must be >= 1; got {n_splits}")
        labels = self.y if stratify else None
        for k in range(n_splits):
            train, test = partition(labels, self.n_samples, test_size, np.random.default_rng([seed, k]))
            yield Split(k, train, test)

    # ----------------------------------------------------------------- export
    def to_pandas(self):
        """One row per source: features, their variances (``var_<name>``), label and aux columns.

        Returns
        -------
        pandas.DataFrame
            Indexed by ``ids`` (named ``id``).
        """
        import pandas as pd

        data: dict[str, Any] = {}
        for j, name in enumerate(self.feature_names):
            data[name] = self.X[:, j]
        for j, name in enumerate(self.feature_names):
            data[f"var_{name}"] = self.X_var[:, j]
        if self.is_labelled:
            data["label"] = self.labels()
        for key, col in self.aux.items():
            if col.ndim == 1:
                data[key] = col
        return pd.DataFrame(data, index=pd.Index(self.ids, name="id"))

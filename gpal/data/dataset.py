"""Noisy data sets: features with per-point, per-feature measurement variances.

`NoisyDataset` is the one container every stage of gpal shares: catalogs produce
it, synthetic generators produce it, models consume it.  It is immutable; every
operation (subset, split, standardise) returns a new data set, and every data set
is validated on construction so that NaN, negative variances or mismatched shapes
never reach a model.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Iterator, Mapping, Sequence

import numpy as np

__all__ = ["NoisyDataset", "Split", "Standardizer", "holdout_per_class"]


def _as_float_matrix(name: str, value: Any, n_rows: int | None = None) -> np.ndarray:
    arr = np.asarray(value, dtype=np.float64)
    if arr.ndim == 1 and n_rows is not None and n_rows > 0 and arr.shape[0] == n_rows:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array (n_samples, n_features); got shape {arr.shape}")
    return arr


def _check_finite(name: str, arr: np.ndarray, feature_names: Sequence[str]) -> None:
    bad = ~np.isfinite(arr)
    if bad.any():
        rows, cols = np.nonzero(bad)
        cols_named = sorted({feature_names[c] for c in cols})
        raise ValueError(
            f"{name} contains {bad.sum()} non-finite value(s) (NaN or inf) in {len(set(rows))} row(s), "
            f"features {cols_named}; first bad row index {rows[0]}. "
            "Drop or impute these rows before building a NoisyDataset."
        )


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
        X = _as_float_matrix("X", self.X)
        n, d = X.shape
        X_var = np.zeros_like(X) if self.X_var is None else _as_float_matrix("X_var", self.X_var, n)
        if X_var.shape != X.shape:
            raise ValueError(f"X_var must have the same shape as X {X.shape}; got {X_var.shape}")
        feature_names = tuple(str(f) for f in self.feature_names) or tuple(f"x{j}" for j in range(d))
        if len(feature_names) != d:
            raise ValueError(f"feature_names has {len(feature_names)} names for {d} features")
        if len(set(feature_names)) != d:
            raise ValueError(f"feature_names must be unique; got {list(feature_names)}")
        _check_finite("X", X, feature_names)
        _check_finite("X_var", X_var, feature_names)
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
        train, test = _partition(self.y if stratify else None, self.n_samples, test_size, np.random.default_rng(seed))
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
            train, test = _partition(labels, self.n_samples, test_size, np.random.default_rng([seed, k]))
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


def _partition(y: np.ndarray | None, n: int, test_size: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
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


@dataclass(frozen=True)
class Standardizer:
    """Affine map x -> (x - mean) / scale fitted on training data.

    Variances follow the same map: var -> var / scale**2, so a measured error bar
    keeps its meaning in standardised units.  Constant features get scale 1.

    Examples
    --------
    >>> import numpy as np
    >>> from gpal import NoisyDataset, Standardizer
    >>> train = NoisyDataset(X=[[1.0], [3.0]], X_var=[[0.4], [0.4]], y=None, class_names=(),
    ...                      feature_names=("flux",), ids=None)
    >>> scaler = Standardizer.fit(train)
    >>> scaler.mean, scaler.scale
    (array([2.]), array([1.]))
    >>> Z, Z_var = scaler.transform_arrays(np.array([[4.0]]), np.array([[0.4]]))
    >>> Z, Z_var
    (array([[2.]]), array([[0.4]]))
    >>> scaler.inverse_transform_arrays(Z, Z_var)
    (array([[4.]]), array([[0.4]]))
    >>> Standardizer.from_dict(scaler.to_dict()).mean
    array([2.])
    """

    mean: np.ndarray
    scale: np.ndarray
    feature_names: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        """A zero, negative or non-finite scale would turn every prediction into NaN without a word: refuse it."""
        mean, scale = np.asarray(self.mean, dtype=np.float64), np.asarray(self.scale, dtype=np.float64)
        if mean.ndim != 1 or scale.shape != mean.shape:
            raise ValueError(f"mean and scale must be 1-D, one value per feature; got shapes {mean.shape} and {scale.shape}")
        if not np.all(np.isfinite(mean)):
            raise ValueError(f"mean must be finite; got {mean.tolist()}")
        bad = np.nonzero(~(np.isfinite(scale) & (scale > 0)))[0]
        if bad.size:
            raise ValueError(f"scale must be finite and > 0 for every feature; feature {bad[0]} has {scale[bad[0]]}")
        if self.feature_names and len(self.feature_names) != mean.shape[0]:
            raise ValueError(f"feature_names has {len(self.feature_names)} names for {mean.shape[0]} features")
        object.__setattr__(self, "mean", mean)
        object.__setattr__(self, "scale", scale)

    @classmethod
    def fit(cls, data: NoisyDataset | np.ndarray) -> "Standardizer":
        """The map fitted on the features of ``data`` (a NoisyDataset or an (n, d) array).

        Returns
        -------
        Standardizer
            Mean and standard deviation per feature (scale 1 where a feature is constant).
        """
        X = data.X if isinstance(data, NoisyDataset) else _as_float_matrix("X", data)
        if X.shape[0] == 0:
            raise ValueError("cannot fit a Standardizer on an empty data set")
        names = data.feature_names if isinstance(data, NoisyDataset) else ()
        _check_finite("X", X, names or [f"x{j}" for j in range(X.shape[1])])
        spread = X.std(axis=0)
        # Identical values whose mean is not exactly representable leave a spread of rounding error, which as a
        # scale would blow the variances up by 1e300: such a feature is constant.
        constant = spread <= 8 * np.finfo(np.float64).eps * np.abs(X).max(axis=0)
        return cls(mean=X.mean(axis=0), scale=np.where(constant, 1.0, spread), feature_names=tuple(names))

    def _check_width(self, X: np.ndarray) -> None:
        if X.shape[1] != self.mean.shape[0]:
            raise ValueError(f"expected {self.mean.shape[0]} features, got {X.shape[1]}")

    def transform_arrays(self, X: np.ndarray, X_var: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray | None]:
        """Standardise plain arrays.

        Returns
        -------
        Z, Z_var : numpy.ndarray
            ``(X - mean) / scale`` and ``X_var / scale**2`` (None when ``X_var`` is None).
        """
        X = _as_float_matrix("X", X)
        self._check_width(X)
        Z = (X - self.mean) / self.scale
        Z_var = None if X_var is None else _as_float_matrix("X_var", X_var, X.shape[0]) / self.scale**2
        return Z, Z_var

    def inverse_transform_arrays(self, Z: np.ndarray, Z_var: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray | None]:
        """Map standardised arrays back to the original units.

        Returns
        -------
        X, X_var : numpy.ndarray
            ``Z * scale + mean`` and ``Z_var * scale**2`` (None when ``Z_var`` is None).
        """
        Z = _as_float_matrix("Z", Z)
        self._check_width(Z)
        X = Z * self.scale + self.mean
        X_var = None if Z_var is None else _as_float_matrix("Z_var", Z_var, Z.shape[0]) * self.scale**2
        return X, X_var

    def transform(self, data: NoisyDataset) -> NoisyDataset:
        """Standardise a data set (its features must be the fitted ones).

        Returns
        -------
        NoisyDataset
            The same rows with standardised features and variances (``meta["standardized"]`` True).
        """
        if self.feature_names and data.feature_names != self.feature_names:
            raise ValueError(
                f"Standardizer was fitted on features {list(self.feature_names)}, got {list(data.feature_names)}"
            )
        Z, Z_var = self.transform_arrays(data.X, data.X_var)
        return data.with_features(Z, Z_var, standardized=True)

    def inverse_transform(self, data: NoisyDataset) -> NoisyDataset:
        """Undo `transform`.

        Returns
        -------
        NoisyDataset
            The same rows in the original units (``meta["standardized"]`` False).
        """
        X, X_var = self.inverse_transform_arrays(data.X, data.X_var)
        return data.with_features(X, X_var, standardized=False)

    def to_dict(self) -> dict[str, Any]:
        """JSON-able form, read back by `from_dict`.

        Returns
        -------
        dict
            ``mean``, ``scale`` and ``feature_names`` as lists.
        """
        return {"mean": self.mean.tolist(), "scale": self.scale.tolist(), "feature_names": list(self.feature_names)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Standardizer":
        """Inverse of `to_dict`.

        Returns
        -------
        Standardizer
            The map ``d`` describes.
        """
        return cls(np.asarray(d["mean"], float), np.asarray(d["scale"], float), tuple(d.get("feature_names", ())))

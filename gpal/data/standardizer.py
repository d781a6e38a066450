"""`Standardizer`: the affine map fitted on training features, applied alike to their values and their variances."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from gpal.data.dataset import NoisyDataset, check_finite, float_matrix

__all__ = ["SCALINGS", "Standardizer"]

#: What `Standardizer.fit` maps the training features to: z-scores, or each feature's range onto [-1, 1].
SCALINGS = ("zscore", "range")


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
    def fit(cls, data: NoisyDataset | np.ndarray, to: str = "zscore") -> "Standardizer":
        """The map fitted on the features of ``data`` (a NoisyDataset or an (n, d) array).

        ``to``: "zscore" (mean 0, standard deviation 1) or "range" (each feature's training minimum to -1 and
        maximum to +1, as paper 003's authors scale their inputs; a constant feature's range counts as 1 there).

        Returns
        -------
        Standardizer
            Mean and standard deviation per feature (scale 1 where a feature is constant), or with "range" the
            mid-range and half-range.
        """
        if to not in SCALINGS:
            raise ValueError(f"to must be one of {list(SCALINGS)}; got {to!r}")
        X = data.X if isinstance(data, NoisyDataset) else float_matrix("X", data)
        if X.shape[0] == 0:
            raise ValueError("cannot fit a Standardizer on an empty data set")
        names = data.feature_names if isinstance(data, NoisyDataset) else ()
        check_finite("X", X, names or [f"x{j}" for j in range(X.shape[1])])
        if to == "range":
            low, width = X.min(axis=0), np.ptp(X, axis=0)
            width = np.where(width == 0, 1.0, width)  # dirichletGPC's normalise_oneminusone: a constant feature -> -1
            return cls(mean=low + width / 2, scale=width / 2, feature_names=tuple(names))
        spread = X.std(axis=0)
        # Identical values whose mean is not exactly representable leave a spread of rounding error, which as a
        # scale would blow the variances up by 1e300: such a feature is constant.  So is one whose spread squared is
        # below the smallest normal float (about 1e-154): dividing a variance by it gives inf.
        floats = np.finfo(np.float64)
        constant = (spread <= 8 * floats.eps * np.abs(X).max(axis=0)) | (spread < np.sqrt(floats.tiny))
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
        X = float_matrix("X", X)
        self._check_width(X)
        Z = (X - self.mean) / self.scale
        Z_var = None if X_var is None else float_matrix("X_var", X_var, X.shape[0]) / self.scale**2
        return Z, Z_var

    def inverse_transform_arrays(self, Z: np.ndarray, Z_var: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray | None]:
        """Map standardised arrays back to the original units.

        Returns
        -------
        X, X_var : numpy.ndarray
            ``Z * scale + mean`` and ``Z_var * scale**2`` (None when ``Z_var`` is None).
        """
        Z = float_matrix("Z", Z)
        self._check_width(Z)
        X = Z * self.scale + self.mean
        X_var = None if Z_var is None else float_matrix("Z_var", Z_var, Z.shape[0]) * self.scale**2
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

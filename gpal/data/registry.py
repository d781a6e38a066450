"""Every benchmark data set gpal has offline, by name: shipped files, bundled sets, generators.

``load_dataset(name)`` returns all rows with raw features (no standardisation: a workflow fits
`gpal.data.standardizer.Standardizer` on its training split).  ``n`` means what it can for the kind
of set: a generator draws ``n`` rows, a fixed set is cut to at most ``n`` rows by a seeded,
stratified subsample.  ``NAME:N`` strings (workflow files, the CLI) are parsed by
`parse_dataset`.  docs/datasets.md lists the sets with their sizes and the papers that use them.

The Fermi-LAT catalog selections are not here: catalogs come later in gpal's pipeline than
``gpal.data`` (docs/architecture.md); a workflow that also runs on a catalog adds
`DatasetEntry` s for it to a copy of `DATASETS` (as `gpal.workflows.compare` does).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Callable, Mapping

from gpal.data.dataset import NoisyDataset

__all__ = ["DATASETS", "DatasetEntry", "dataset_names", "load_dataset", "parse_dataset"]


@dataclass(frozen=True)
class DatasetEntry:
    """How to get one named data set.

    ``load(n, seed)``: a generated set (one with a ``default_n``) draws ``n`` rows (`load_dataset`
    passes ``default_n`` when no size is asked for); a fixed set ignores both and `load_dataset`
    subsamples it.
    """

    load: Callable[[int | None, int], NoisyDataset]
    description: str
    default_n: int | None = None

    @property
    def generated(self) -> bool:
        return self.default_n is not None


def _keel(name: str) -> Callable[[int | None, int], NoisyDataset]:
    def load(n: int | None, seed: int) -> NoisyDataset:
        from gpal.data.keel import keel_dataset

        return keel_dataset(name)

    return load


def _generated(module: str, func: str) -> Callable[[int | None, int], NoisyDataset]:
    """A generator ``gpal.data.<module>.<func>(n=..., seed=...)``, imported when first used."""
    def load(n: int | None, seed: int) -> NoisyDataset:
        return getattr(importlib.import_module(f"gpal.data.{module}"), func)(n=n, seed=seed)

    return load


def _synthetic_2d(n: int | None, seed: int) -> NoisyDataset:
    from gpal.data.synthetic import synthetic_2d

    return synthetic_2d(n_train=n, n_test=1, noise_variance=0.1, seed=seed).train


def _sklearn(name: str) -> Callable[[int | None, int], NoisyDataset]:
    def load(n: int | None, seed: int) -> NoisyDataset:
        from gpal.data import synthetic

        return getattr(synthetic, name)()

    return load


_KEEL_NOTES = {
    "banana": "banana (KEEL), 2 features, 2 classes",
    "german": "German credit (KEEL), 20 attributes (13 nominal, one-hot: 61 features), 2 classes",
    "letter": "letter recognition (KEEL), 16 features, 26 classes",
    "magic": "MAGIC gamma telescope (KEEL), 10 features, 2 classes",
    "mushroom": "mushroom (KEEL, rows with missing values already removed: 5644), 22 nominal attributes one-hot, 2 classes",
    "pendigits": "pen-based digits (KEEL 'penbased'), 16 features, 10 classes",
    "ringnorm": "ringnorm, the DELVE file (KEEL 'ring'), 20 features, 2 classes",
    "satimage": "Statlog Landsat satellite (KEEL), 36 features, 6 classes",
    "twonorm": "twonorm, the DELVE file (KEEL), 20 features, 2 classes",
    "vehicle": "Statlog vehicle silhouettes (KEEL), 18 features, 4 classes",
    "vowel": "Deterding vowels (KEEL), 10 formant features, 11 classes",
}

#: name -> entry; the one registry of data sets (workflows and the CLI resolve names here)
DATASETS: dict[str, DatasetEntry] = {
    **{name: DatasetEntry(_keel(name), note) for name, note in _KEEL_NOTES.items()},
    "wine": DatasetEntry(_sklearn("wine"), "UCI wine (scikit-learn's copy, identical to KEEL's), 13 features, 3 classes"),
    "digits": DatasetEntry(_sklearn("digits"), "8x8 digits (scikit-learn), 64 features, 10 classes"),
    "waveform": DatasetEntry(_generated("synthetic", "waveform"),
                             "Breiman waveform (generated), 21 features, 3 classes", 1000),
    "waveform_noise": DatasetEntry(_generated("breiman", "waveform_noise"),
                                   "Breiman waveform + 19 noise inputs (generated), 40 features, 3 classes", 5000),
    "twonorm_breiman": DatasetEntry(_generated("breiman", "twonorm"),
                                    "Breiman twonorm (generated), 20 features, 2 classes", 7400),
    "ringnorm_breiman": DatasetEntry(_generated("breiman", "ringnorm"),
                                     "Breiman ringnorm (generated, a = 1/sqrt(20)), 20 features, 2 classes", 7400),
    "synthetic_2d": DatasetEntry(_synthetic_2d, "GP-prior draw (paper 001, sec. 5.2), 3 classes, input noise variance 0.1", 1000),
}


def dataset_names() -> tuple[str, ...]:
    """Every name `load_dataset` accepts.

    Returns
    -------
    tuple of str
        The names in registry order: shipped KEEL copies, scikit-learn's sets, generators.
    """
    return tuple(DATASETS)


def _entry(name: str, registry: Mapping[str, DatasetEntry], hint: str = "") -> DatasetEntry:
    if not isinstance(name, str) or name not in registry:
        raise ValueError(f"unknown data set {name!r}; valid names are {list(registry)}{hint}")
    return registry[name]


def parse_dataset(token: str, registry: Mapping[str, DatasetEntry] = DATASETS) -> tuple[str, int | None]:
    """Split a ``NAME`` or ``NAME:ROWS`` string; names are case-insensitive.

    Returns
    -------
    tuple
        (name, rows or None): ``"digits:600"`` -> ("digits", 600); an unknown name is a ValueError
        listing the valid ones.
    """
    if not isinstance(token, str):
        raise ValueError(f"a data set is NAME or NAME:ROWS with NAME in {list(registry)}; got {token!r}")
    name, _, size = token.strip().partition(":")
    name = name.strip().lower()
    _entry(name, registry, " (optionally NAME:ROWS)")
    if not size:
        return name, None
    if not size.isdigit() or int(size) < 20:
        raise ValueError(f"data set {token!r}: the row count after ':' must be an integer >= 20")
    return name, int(size)


def _stratified_cap(ds: NoisyDataset, n: int, seed: int) -> NoisyDataset:
    """At most ``n`` rows, each class keeping its share (seeded)."""
    if n >= ds.n_samples:
        return ds
    keep, _ = ds.split(test_size=1.0 - n / ds.n_samples, seed=seed)
    return keep


def load_dataset(name: str, *, n: int | None = None, seed: int = 0,
                 registry: Mapping[str, DatasetEntry] = DATASETS) -> NoisyDataset:
    """The named data set: all rows (or ``n``, see the module note), raw features, ``X_var`` zero.

    Returns
    -------
    NoisyDataset
        Labels coded into ``class_names``; ``meta`` says where the rows came from.

    Raises
    ------
    ValueError
        For a name not in the registry; the message lists the valid names.
    gpal.data.keel.DataFileError
        When a shipped file fails its checksum (damaged or truncated) or does not parse.
    """
    entry = _entry(name, registry)
    if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
        raise ValueError(f"n must be a positive integer or None; got {n!r}")
    if entry.generated:
        return entry.load(n or entry.default_n, seed)
    ds = entry.load(None, seed)
    return ds if n is None else _stratified_cap(ds, n, seed)

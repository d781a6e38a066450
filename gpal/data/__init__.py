"""Data: noisy data sets (features, their variances, labels), splits, standardisation, named sets.

``load_dataset(name)`` / ``dataset_names()`` (`gpal.data.registry`) give every data set gpal has
offline: the UCI sets shipped as KEEL copies (`gpal.data.keel`), scikit-learn's bundled sets,
the generators (`gpal.data.synthetic`, `gpal.data.breiman`) and the Fermi-LAT catalogs.
"""

from gpal.data.dataset import NoisyDataset
from gpal.data.splits import Split
from gpal.data.standardizer import Standardizer
from gpal.data.registry import dataset_names, load_dataset, parse_dataset

__all__ = ["NoisyDataset", "Split", "Standardizer", "dataset_names", "load_dataset", "parse_dataset"]

"""Data: noisy data sets (features, their variances, labels), splits, standardisation, generators.

``gpal.data.synthetic`` makes the generated problems (GP-prior toys, waveform) and the
offline sets shipped with scikit-learn (wine, digits).
"""

from gpal.data.dataset import NoisyDataset, Split, Standardizer

__all__ = ["NoisyDataset", "Split", "Standardizer"]

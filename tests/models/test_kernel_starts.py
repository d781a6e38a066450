"""Paper 001's authors' kernel start (`se_ard_plus_noise_median`), against a direct computation."""

import numpy as np
import pytest

from gpal.models import build_model
from gpal.models.kernels import make_kernel, median_distance


def _pairwise_median(X):
    """The median distance over every pair i < j, by broadcasting (no scipy)."""
    diff = X[:, None, :] - X[None, :, :]
    dist = np.sqrt((diff ** 2).sum(-1))
    return np.median(dist[np.triu_indices(len(X), 1)])


def test_the_authors_start_sets_squared_length_scales_at_the_median_distance():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 4)) * [1.0, 2.0, 0.5, 3.0]
    model = build_model(X, np.arange(60) % 3, num_classes=3, likelihood="robustmax", num_inducing=5,
                        kernel="se_ard_plus_noise_median")
    for kernel in model.gp.kernels:  # one copy a class, each from the same start
        se, white = kernel.kernels
        np.testing.assert_allclose(se.lengthscales.numpy() ** 2, np.full(4, _pairwise_median(X)), rtol=1e-10)
        np.testing.assert_allclose(se.variance.numpy(), np.e, rtol=1e-10)
        np.testing.assert_allclose(white.variance.numpy(), np.exp(-20.0), rtol=1e-6)


def test_more_than_a_thousand_rows_are_sampled_the_same_way_for_a_seed():
    X = np.random.default_rng(2).normal(size=(1500, 3))
    assert median_distance(X, seed=0) == median_distance(X, seed=0)
    assert median_distance(X, seed=0) != median_distance(X, seed=1)
    # a sample of 1000 of 1500 rows: near the median over all of them
    assert median_distance(X, seed=0) == pytest.approx(_pairwise_median(X), rel=0.03)


def test_a_start_from_rows_is_refused_without_them_or_from_equal_rows():
    with pytest.raises(ValueError, match="'se_ard_plus_noise_median' starts from the training rows"):
        make_kernel("se_ard_plus_noise_median", 3)
    X = np.zeros((10, 2))
    X[0] = 1.0
    with pytest.raises(ValueError, match="median distance between the 10 rows is 0.0: more than half the pairs"):
        make_kernel("se_ard_plus_noise_median", 2, X)

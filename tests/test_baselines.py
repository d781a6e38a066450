"""Baselines: the scikit-learn classifiers gpal is compared with, on the same features."""

import numpy as np
import pytest

from gpal.baselines import BASELINES, fit_baselines, make_baseline


def _blobs(n=150, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    return rng.normal(size=(n, 2)) + 2.0 * np.eye(3)[y][:, :2], y


@pytest.mark.parametrize("name", list(BASELINES))
def test_each_baseline_learns_and_is_deterministic(name):
    X, y = _blobs()
    first = fit_baselines(X[:100], y[:100], X[100:], names=[name], random_state=1)[name]
    again = fit_baselines(X[:100], y[:100], X[100:], names=[name], random_state=1)[name]
    assert first.shape == (50, 3) and np.allclose(first.sum(axis=1), 1.0)
    np.testing.assert_array_equal(first, again)
    assert np.mean(first.argmax(axis=1) == y[100:]) > 0.6


def test_columns_follow_class_codes_when_a_class_is_missing_from_training():
    X, y = _blobs()
    keep = y != 1
    proba = fit_baselines(X[keep][:80], np.where(y[keep][:80] == 2, 2, 0), X[:10], names=["logistic"])["logistic"]
    assert proba.shape == (10, 3) and np.all(proba[:, 1] == 0)


def test_unknown_baseline_is_named():
    with pytest.raises(ValueError, match="unknown baseline 'svm'; valid baselines"):
        make_baseline("svm")

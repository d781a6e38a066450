"""Baselines: the scikit-learn classifiers gpal is compared with, on the same feature values."""

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from gpal.evaluation.baselines import BASELINES, fit_baselines, fit_baselines_on, make_baseline


def _blobs(n=150, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    centres = np.array([[0.0, 0.0], [3.0, 0.0], [0.0, 3.0]])
    return centres[y] + rng.normal(size=(n, 2)), y


def test_registry_names_and_descriptions():
    assert list(BASELINES) == ["logistic", "random_forest_isotonic", "gradient_boosting_isotonic"]
    for factory, description in BASELINES.values():
        assert callable(factory) and description


def test_one_fit_gives_each_set_of_rows_what_a_fit_for_it_alone_gives(monkeypatch):
    """The main job's held-out rows and its later check's sources: one fit of each baseline, the same bits."""
    import gpal.evaluation.baselines as baselines

    X, y = _blobs()
    names = ["logistic", "random_forest_isotonic"]
    fits, make = [], baselines.make_baseline
    monkeypatch.setattr(baselines, "make_baseline", lambda name, random_state=0: fits.append(name) or make(name, random_state))
    both = fit_baselines_on(X[:100], y[:100], [X[100:120], X[120:]], names=names, random_state=3)
    assert fits == names and list(both) == names
    for k, rows in enumerate((X[100:120], X[120:])):
        alone = fit_baselines(X[:100], y[:100], rows, names=names, random_state=3)
        for name in names:
            np.testing.assert_array_equal(both[name][k], alone[name])
    with pytest.raises(ValueError, match="X_test has 1 features, X_train has 2"):
        fit_baselines_on(X, y, [X, X[:, :1]], names=["logistic"])


@pytest.mark.parametrize("name", list(BASELINES))
def test_each_baseline_learns_and_repeats_exactly(name):
    X, y = _blobs()
    # One OpenMP thread: on a loaded machine the boosting's threads spin-wait at every barrier (its 10
    # small fits here took 30 s of CPU with scikit-learn's threads and 0.9 s with one, the same probabilities).
    with threadpool_limits(1):
        first = fit_baselines(X[:100], y[:100], X[100:], names=[name], random_state=3)
        again = fit_baselines(X[:100], y[:100], X[100:], names=[name], random_state=3)
    assert list(first) == [name]
    proba = first[name]
    assert proba.shape == (50, 3)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_array_equal(proba, again[name])
    assert np.mean(proba.argmax(axis=1) == y[100:]) > 0.8  # well-separated blobs: chance is 1/3


def test_columns_are_class_codes_when_a_code_is_missing_from_training():
    X, y = _blobs()
    keep = y != 1
    proba = fit_baselines(X[keep], y[keep], X[:20], names=["logistic"])["logistic"]
    assert proba.shape == (20, 3)
    assert np.all(proba[:, 1] == 0)
    # Column 2 is class 2 (centre (0, 3)), not squeezed into column 1.
    assert np.all(proba[X[:20, 1] > 3, 2] > 0.5)


def test_random_state_reaches_the_estimator():
    assert make_baseline("random_forest_isotonic", 7).estimator.random_state == 7
    assert make_baseline("gradient_boosting_isotonic", 7).estimator.random_state == 7


def test_unknown_names_and_bad_inputs_are_named():
    with pytest.raises(ValueError, match="unknown baseline 'svm'; valid baselines"):
        make_baseline("svm")
    X, y = _blobs(30)
    with pytest.raises(ValueError, match=r"unknown baseline\(s\) \['svm'\]"):
        fit_baselines(X, y, X, names=["logistic", "svm"])
    with pytest.raises(ValueError, match="X_test has 1 features, X_train has 2"):
        fit_baselines(X, y, X[:, :1])
    with pytest.raises(ValueError, match="y_train must be 1-D"):
        fit_baselines(X, y[:-1], X)
    with pytest.raises(ValueError, match="integer class codes"):
        fit_baselines(X, y + 0.5, X)
    with pytest.raises(ValueError, match="X_train contains NaN"):
        fit_baselines(np.where(X > 2, np.nan, X), y, X)

"""NoisyDataset validation, splits and the variance-mapping standardiser."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from gpal.data.dataset import NoisyDataset
from gpal.data.standardizer import Standardizer


def make(n=60, d=3, classes=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * [1.0, 1e-9, 50.0][:d] + [0.0, 3e-9, 7.0][:d]
    X_var = rng.uniform(0.0, 1.0, size=(n, d)) * np.abs(X) * 0.01
    y = np.arange(n) % classes
    return NoisyDataset(X, X_var, y, tuple(f"c{k}" for k in range(classes)), tuple(f"f{j}" for j in range(d)), [f"s{i}" for i in range(n)])


# ------------------------------------------------------------------ validation
@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(X=np.array([[1.0, np.nan]])), r"X contains 1 non-finite.*\['b'\]"),
        (dict(X_var=np.array([[0.0, -1.0]])), r"negative in \['b'\]"),
        (dict(X_var=np.array([[0.0, np.inf]])), "X_var contains"),
        (dict(X_var=np.zeros((1, 3))), "same shape"),
        (dict(y=np.array([2])), r"y codes must lie in \[0, 2\)"),
        (dict(y=np.array([0.5])), "integer class codes"),
        (dict(X=np.zeros(2)), "2-D array"),
    ],
)
def test_validation_errors(kwargs, message):
    base = dict(X=np.array([[1.0, 2.0]]), X_var=np.zeros((1, 2)), y=np.array([0]), class_names=("u", "v"), feature_names=("a", "b"), ids=["s"])
    base.update(kwargs)
    with pytest.raises((ValueError, TypeError), match=message):
        NoisyDataset(**base)


# ---------------------------------------------------------------------- splits
def test_split_is_a_stratified_partition_without_replacement():
    ds = make(n=454)
    train, test = ds.split(test_size=0.1, seed=3)
    assert len(test) == 46 and len(train) == 408  # ceil(0.1 n), as the published 46 test sources
    assert set(train.ids).isdisjoint(test.ids)
    assert len(set(test.ids)) == len(test.ids)
    assert set(train.ids) | set(test.ids) == set(ds.ids)
    for name, n in ds.class_counts().items():
        assert abs(test.class_counts()[name] - 0.1 * n) <= 1


def test_split_seeding():
    ds = make()
    a = ds.split(seed=1)[1].ids
    assert np.array_equal(a, ds.split(seed=1)[1].ids)
    assert not np.array_equal(a, ds.split(seed=2)[1].ids)


def test_repeated_splits_are_independent_and_recomputable():
    ds = make(n=100)
    splits = list(ds.repeated_splits(n_splits=20, seed=5))
    assert [s.index for s in splits] == list(range(20))
    assert len({tuple(s.test) for s in splits}) == 20
    # Split 13 alone equals split 13 of the sequence: units can run on any worker, in any order.
    again = list(ds.repeated_splits(n_splits=14, seed=5))[13]
    assert np.array_equal(again.test, splits[13].test)
    for s in splits:
        assert np.intersect1d(s.train, s.test).size == 0 and s.train.size + s.test.size == 100


def test_rare_class_keeps_a_training_row():
    ds = NoisyDataset(np.arange(12.0)[:, None], None, np.array([0] * 10 + [1, 1]), ("big", "rare"), ("x",), None)
    for s in ds.repeated_splits(n_splits=10, test_size=0.5):
        assert 1 in ds.y[s.train]


def test_unstratified_split_and_bad_sizes():
    ds = make(n=10)
    train, test = ds.split(test_size=0.3, stratify=False)
    assert len(test) == 3
    with pytest.raises(ValueError, match="fraction"):
        ds.split(test_size=1.5)
    with pytest.raises(ValueError, match="n_splits"):
        next(ds.repeated_splits(n_splits=0))


# ------------------------------------------------------- subsetting and export
def test_subset_concatenate_by_ids_roundtrip():
    ds = make(n=30)
    parts = [ds.subset(np.arange(0, 10)), ds.subset(np.arange(10, 30))]
    whole = NoisyDataset.concatenate(parts)
    assert np.array_equal(whole.X, ds.X) and np.array_equal(whole.X_var, ds.X_var) and np.array_equal(whole.y, ds.y)
    picked = ds.by_ids(["s5", "s2"])
    assert list(picked.ids) == ["s5", "s2"] and np.array_equal(picked.X, ds.X[[5, 2]])
    assert len(ds.subset(ds.y == 1)) == 10
    with pytest.raises(KeyError, match="not in this data set"):
        ds.by_ids(["nope"])
    with pytest.raises(ValueError, match="features"):
        NoisyDataset.concatenate([ds, make(d=2)])


def test_subset_copies_rather_than_views():
    ds = make()
    sub = ds.subset([0, 1])
    sub.X[0, 0] = 1e6
    assert ds.X[0, 0] != 1e6


def test_to_pandas():
    ds = make(n=5, d=2)
    df = ds.to_pandas()
    assert isinstance(df, pd.DataFrame) and list(df.index) == list(ds.ids)
    assert list(df.columns) == ["f0", "f1", "var_f0", "var_f1", "label"]
    assert df["label"].tolist() == list(ds.labels())


# ----------------------------------------------------------------- standardiser
def test_standardizer_maps_values_and_variances_consistently():
    ds = make(n=200)
    train, test = ds.split(seed=0)
    scaler = Standardizer.fit(train)
    z = scaler.transform(train)
    np.testing.assert_allclose(z.X.mean(axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(z.X.std(axis=0), 1.0)
    np.testing.assert_allclose(z.X_var, train.X_var / scaler.scale**2)
    back = scaler.inverse_transform(scaler.transform(test))
    np.testing.assert_allclose(back.X, test.X, rtol=1e-12, atol=1e-24)
    np.testing.assert_allclose(back.X_var, test.X_var, rtol=1e-12, atol=1e-30)
    # Saved and restored as plain numbers.
    again = Standardizer.from_dict(scaler.to_dict())
    np.testing.assert_array_equal(again.transform(test).X, scaler.transform(test).X)


def test_standardized_variance_matches_monte_carlo():
    """Perturb raw inputs by their error bars, standardise each draw: the spread is X_var / scale^2."""
    ds = make(n=4)
    scaler = Standardizer.fit(make(n=200, seed=1))
    rng = np.random.default_rng(0)
    draws = ds.X + np.sqrt(ds.X_var) * rng.standard_normal((100_000, *ds.X.shape))
    empirical = ((draws - scaler.mean) / scaler.scale).var(axis=0)
    np.testing.assert_allclose(scaler.transform(ds).X_var, empirical, rtol=0.03)


def test_constant_feature_gets_unit_scale_and_width_is_checked():
    scaler = Standardizer.fit(np.array([[1.0, 5.0], [2.0, 5.0]]))
    assert scaler.scale[1] == 1.0
    tiny = np.full((6, 1), 1.23520953e-141)  # the mean of six copies is not exact: a spread of rounding error
    assert Standardizer.fit(tiny).scale[0] == 1.0
    below = np.array([[1.4e-159], [0.0], [0.0]])  # a spread whose square is not a normal float: variances would be inf
    assert Standardizer.fit(below).scale[0] == 1.0
    assert np.isfinite(Standardizer.fit(below).transform_arrays(below, np.ones((3, 1)))[1]).all()
    with pytest.raises(ValueError, match="expected 2 features"):
        scaler.transform_arrays(np.zeros((3, 3)))


@settings(max_examples=40, deadline=None)
@given(
    X=arrays(np.float64, (6, 2), elements=st.floats(-1e6, 1e6)),
    V=arrays(np.float64, (6, 2), elements=st.floats(0, 1e6)),
)
def test_standardizer_roundtrip_property(X, V):
    scaler = Standardizer.fit(X)
    Z, Z_var = scaler.transform_arrays(X, V)
    X2, V2 = scaler.inverse_transform_arrays(Z, Z_var)
    np.testing.assert_allclose(X2, X, rtol=1e-9, atol=1e-6)
    np.testing.assert_allclose(V2, V, rtol=1e-9, atol=1e-6)

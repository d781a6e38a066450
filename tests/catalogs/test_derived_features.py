"""Derived features: bands, ratios, hardness ratios, angle transforms and error policies, checked against Monte Carlo."""

import json
import warnings

import numpy as np
import pytest

from gpal.catalogs import load_catalog
from gpal.catalogs import DroppedRowsWarning
from gpal.catalogs.features import FEATURE_PRESETS, Feature

MAIN = dict(classes=["bll", "fsrq", "pulsar"], merge={"pulsar": ["psr", "msp"]})


def _reader(columns):
    return lambda name: columns[name]


def _monte_carlo_variance(fn, values, sigmas, n=400_000, seed=0):
    rng = np.random.default_rng(seed)
    draws = [v + s * rng.standard_normal((n, v.size)) for v, s in zip(values, sigmas)]
    return fn(*draws).var(axis=0)


@pytest.mark.parametrize("combine, fn", [
    ("hardness", lambda a, b: (a - b) / (a + b)),
    ("ratio", lambda a, b: a / b),
])
def test_combined_variances_match_monte_carlo(combine, fn):
    flux = np.array([[2.0, 3.0], [5.0, 1.0], [1.0, 1.2]])
    sigma = np.array([[0.02, 0.05], [0.04, 0.01], [0.015, 0.01]])
    errors = np.stack([-sigma, sigma], axis=-1)  # two-sided, symmetric here
    f = Feature("F", error="U", band=1, combine=combine, other_band=0)
    x, s, bad = f.measure(_reader({"F": flux, "U": errors}))
    _, var = f.transform_values(x, s)
    np.testing.assert_allclose(x, fn(flux[:, 1], flux[:, 0]))
    mc = _monte_carlo_variance(fn, [flux[:, 1], flux[:, 0]], [sigma[:, 1], sigma[:, 0]])
    np.testing.assert_allclose(var, mc, rtol=0.03)
    assert not any(b.any() for b in bad.values())


@pytest.mark.parametrize("transform, fn, values", [
    ("abs_sin_deg", lambda b: np.abs(np.sin(np.radians(b))), np.array([30.0, -60.0, 75.0])),
    ("sin_deg", lambda b: np.sin(np.radians(b)), np.array([30.0, -60.0, 75.0])),
    ("log10", np.log10, np.array([30.0, 60.0, 75.0])),
])
def test_transform_variances_match_monte_carlo(transform, fn, values):
    sigma = np.array([0.5, 1.0, 0.3])
    x, var = Feature("B", error="U", transform=transform).transform_values(values, sigma)
    np.testing.assert_allclose(x, fn(values))
    np.testing.assert_allclose(var, _monte_carlo_variance(fn, [values], [sigma]), rtol=0.03)


def test_upper_limits_and_missing_errors_follow_the_policies():
    flux = np.array([[1.0, 2.0], [1.0, 2.0], [1.0, 2.0]])
    errors = np.array([[[-0.1, 0.1], [np.nan, 0.4]],  # band 1 an upper limit
                       [[-0.1, 0.3], [-0.2, 0.2]],      # two-sided: mean of |lower|, |upper|
                       [[np.nan, np.nan], [-0.2, 0.2]]])  # band 0 without any error
    read = _reader({"F": flux, "U": errors})
    x, s, bad = Feature("F", error="U", band=1).measure(read)
    np.testing.assert_allclose(s, [0.4, 0.2, 0.2])
    _, _, bad = Feature("F", error="U", band=1, upper_limit="drop").measure(read)
    assert bad["U (upper limit)"].tolist() == [True, False, False]
    _, s, bad = Feature("F", error="U", band=0).measure(read)
    assert bad["U"].tolist() == [False, False, True]
    np.testing.assert_allclose(s[:2], [0.1, 0.2])
    _, s, bad = Feature("F", error="U", band=0, missing_error="exact").measure(read)
    assert not bad["F"].any() and "U" not in bad and s[2] == 0.0
    # the population's error: each side's median over the rows that have one, |lower| (0.1, 0.1) and upper (0.1, 0.3),
    # so row 2's symmetric sigma is (0.1 + 0.2) / 2
    _, s, bad = Feature("F", error="U", band=0, missing_error="population").measure(read)
    assert not bad["F"].any() and "U" not in bad
    np.testing.assert_allclose(s, [0.1, 0.2, 0.15])
    # a repair (exact or population) is reported per error column (what a selection counts), and only under those
    for policy in ("exact", "population"):
        repaired = Feature("F", error="U", band=0, missing_error=policy).repaired_errors(read)
        assert repaired["U"].tolist() == [False, False, True]
    assert Feature("F", error="U", band=0).repaired_errors(read) == {}


@pytest.mark.parametrize("spec, message", [
    (dict(column="F", error="U", band=2), "asks for band 2 but column 'F' has 2 bands"),
    (dict(column="F", error="U"), "column 'F' of feature 'F' has 2 bands; give band=0..1"),
    (dict(column="G", band=0), "asks for band 0 but column 'G' has one value per source"),
])
def test_bad_bands_are_named(spec, message):
    read = _reader({"F": np.ones((3, 2)), "U": np.ones((3, 2, 2)), "G": np.ones(3)})
    with pytest.raises(ValueError, match=message):
        Feature(**spec).measure(read)


@pytest.mark.parametrize("spec, message", [
    (dict(column="F", band=1, combine="hardness", other_band=1), "combines F\\[1\\] with itself"),
    (dict(column="F", band=-1), "band of feature .* must be a band index >= 0"),
    (dict(column="F", transform="sqrt"), "unknown transform 'sqrt'"),
    (dict(column="F", missing_error="ignore"), "unknown missing_error policy 'ignore' for feature 'F'"),
    (dict(column="F", upper_limit="keep"), "unknown upper_limit policy 'keep'"),
    (dict(column="F", other_band=1), "without combine"),
    (dict(column="F", combine="difference"), "unknown combine 'difference'"),
])
def test_bad_feature_specs_are_named(spec, message):
    with pytest.raises(ValueError, match=message):
        Feature(**spec)


def test_unknown_dict_keys_are_named():
    with pytest.raises(ValueError, match="unknown: \\['bandz'\\]"):
        Feature.from_spec({"column": "Flux_Band", "bandz": 2})


def test_new_kinds_round_trip_through_json():
    for feature in FEATURE_PRESETS["fermi_dr4"]:
        again = Feature.from_spec(json.loads(json.dumps(feature.to_dict())))
        assert again == feature


def test_main_job_preset_on_dr4():
    catalog = load_catalog("4FGL-DR4")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DroppedRowsWarning)
        data = catalog.dataset(**MAIN, features="fermi_dr4")
    assert np.all(np.isfinite(data.X)) and np.all(np.isfinite(data.X_var)) and np.all(data.X_var >= 0)
    assert data.n_features == len(FEATURE_PRESETS["fermi_dr4"])
    # Only a source with a NaN value is lost: upper-limit bands and missing errors keep their rows.
    # The rows kept with a missing error read as exact are said too, by error column.
    assert list(data.meta["dropped"]) == ["4FGL J2010.2-2523"] and data.meta["repaired"]
    assert sorted(w.category.__name__ for w in caught) == ["DroppedRowsWarning", "RepairedRowsWarning"]
    strict = catalog.dataset(**MAIN, features=[Feature("Flux_Band", error="Unc_Flux_Band", band=5, combine="hardness",
                                                       other_band=4, upper_limit="drop")])
    lower = np.asarray(catalog.table["Unc_Flux_Band"])[:, :, 0]
    upper_limits = np.isnan(lower[:, 5]) | np.isnan(lower[:, 4])  # a hardness ratio reads both bands
    labelled = np.isin(catalog.class_codes, ["bll", "fsrq", "psr", "msp"])
    assert data.n_samples + 1 - strict.n_samples == int((upper_limits & labelled).sum()) > 0
    j = data.feature_names.index("abs_sin_GLAT")
    assert 0 <= data.X[:, j].min() and data.X[:, j].max() <= 1

"""Feature specs and error propagation, checked against Monte Carlo."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpal.catalogs import FEATURE_PRESETS, Feature, resolve_features


@pytest.mark.parametrize("transform, fn", [("log", np.log), ("log10", np.log10)])
def test_log_variance_matches_monte_carlo(transform, fn):
    rng = np.random.default_rng(0)
    x0 = np.array([3.0e-9, 0.2, 45.0, 1500.0])
    sigma = 0.03 * x0  # 3% errors, the regime of the catalog's flux error bars
    _, var = Feature("c", error="e", transform=transform).apply(x0, sigma)
    draws = x0 + sigma * rng.standard_normal((200_000, x0.size))
    empirical = fn(draws).var(axis=0)
    # Delta method is first order: relative bias O((sigma/x)^2) ~ 1e-3, MC error ~ 0.3%.
    np.testing.assert_allclose(var, empirical, rtol=0.02)
    np.testing.assert_allclose(var, (sigma / (x0 * (1.0 if transform == "log" else np.log(10)))) ** 2)


def test_identity_variance_is_sigma_squared_and_two_sided_errors_are_symmetrised():
    x, var = Feature("c", error="e").apply(np.array([1.0, 2.0]), np.array([0.5, 0.1]))
    np.testing.assert_allclose(var, [0.25, 0.01], rtol=1e-15)
    _, var2 = Feature("c", error="e").apply(np.array([1.0]), np.array([[-0.2, 0.4]]))
    np.testing.assert_allclose(var2, [0.3**2])


def test_no_error_column_gives_exactly_zero_variance():
    _, var = Feature("c", transform="log").apply(np.array([1.0, 10.0]), None)
    assert np.all(var == 0.0)


def test_floor_clips_before_the_log_and_never_takes_log_zero():
    x, var = Feature("c", error="e", transform="log", floor=0.1).apply(np.array([0.0, 0.05, 2.0]), np.array([0.01, 0.01, 0.2]))
    np.testing.assert_allclose(x, np.log([0.1, 0.1, 2.0]))
    assert np.all(np.isfinite(var))
    np.testing.assert_allclose(var, [0.01, 0.01, 0.01])


@settings(max_examples=50, deadline=None)
@given(
    x=st.floats(1e-12, 1e12, allow_nan=False),
    rel=st.floats(1e-4, 0.5),
)
def test_log_propagation_is_scale_free(x, rel):
    """var(log x) depends only on the relative error: rescaling a column changes nothing."""
    _, v1 = Feature("c", error="e", transform="log").apply(np.array([x]), np.array([rel * x]))
    _, v2 = Feature("c", error="e", transform="log").apply(np.array([7.5 * x]), np.array([7.5 * rel * x]))
    np.testing.assert_allclose(v1, rel**2, rtol=1e-9)
    np.testing.assert_allclose(v1, v2, rtol=1e-9)


def test_preset_is_the_published_six_features():
    preset = FEATURE_PRESETS["villacampa2021"]
    assert [f.column for f in preset] == ["Flux1000", "Signif_Avg", "LP_SigCurv", "Pivot_Energy", "LP_Index", "LP_beta"]
    assert [f.error is not None for f in preset] == [True, False, False, False, True, True]
    assert [f.transform for f in preset] == ["identity", "log", "log", "log", "identity", "identity"]


def test_string_and_dict_specs():
    available = ["PL_Index", "Unc_PL_Index", "GLAT"]
    feats = resolve_features(["PL_Index", "log:GLAT", {"column": "GLAT", "name": "b"}], available)
    assert feats[0] == Feature("PL_Index", error="Unc_PL_Index")
    assert feats[1] == Feature("GLAT", transform="log")
    assert feats[2].label == "b"


@pytest.mark.parametrize(
    "spec, message",
    [
        ("no_such_preset", "unknown feature preset"),
        ([{"col": "x"}], "must have 'column'"),
        (["sqrt:Flux1000"], "unknown transform 'sqrt'"),
        ([Feature("a"), Feature("a")], "unique"),
        ([], "at least one"),
        ([3.0], "must be a Feature"),
    ],
)
def test_bad_specs(spec, message):
    with pytest.raises((ValueError, TypeError), match=message):
        resolve_features(spec)


def test_floor_only_for_log_and_positive():
    with pytest.raises(ValueError, match="floors only apply to log"):
        Feature("a", floor=1.0)
    with pytest.raises(ValueError, match="positive"):
        Feature("a", transform="log", floor=0.0)

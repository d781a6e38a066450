"""The 4FGL error model of features: split-normal errors, upper-limit bands, flux >= 0, Monte Carlo propagation.

Every expected number here comes from somewhere else than gpal's sampler: closed forms,
numerical integration (scipy.integrate.quad) or scipy.stats draws.
"""

import dataclasses
import json
import math
import warnings

import numpy as np
import pytest
from scipy import integrate, stats

from gpal.catalogs import load_catalog
from gpal.catalogs import DroppedRowsWarning
from gpal.catalogs.features import FEATURE_PRESETS, MC_DRAWS, Feature

MC = dict(propagation="monte_carlo")
FLUX = dict(propagation="monte_carlo", lower_bound=0.0)
MAIN = dict(classes=["bll", "fsrq", "pulsar"], merge={"pulsar": ["psr", "msp"]})


def _reader(columns):
    return lambda name: columns[name]


def _variance(feature, columns):
    x, err, bad = feature.measure(_reader(columns))
    assert not any(rows.any() for rows in bad.values())
    return feature.transform_values(x, err)


def _half_normal_moments(g, sigma):
    """Mean and variance of g(X), X = sigma |Z| (a flux pegged at 0 with upper error sigma), by quadrature."""
    density = lambda a: 2.0 * stats.norm.pdf(a, scale=sigma)  # noqa: E731
    m1 = integrate.quad(lambda a: g(a) * density(a), 0, np.inf, limit=200)[0]
    m2 = integrate.quad(lambda a: g(a) ** 2 * density(a), 0, np.inf, limit=200)[0]
    return m1, m2 - m1**2


# ------------------------------------------------------------------ small errors: Monte Carlo = first order
@pytest.mark.parametrize("spec, columns", [
    (dict(transform="log"), {"F": np.array([3e-9, 0.2, 45.0]), "U": np.array([3e-11, 0.002, 0.45])}),
    (dict(transform="log10"), {"F": np.array([3e-9, 0.2, 45.0]), "U": np.array([3e-11, 0.002, 0.45])}),
    (dict(band=1, combine="hardness", other_band=0),
     {"F": np.array([[2.0, 3.0], [5.0, 1.0], [1.0, 1.2]]),
      "U": np.stack([-np.array([[0.02, 0.03], [0.05, 0.01], [0.01, 0.012]]),
                     np.array([[0.02, 0.03], [0.05, 0.01], [0.01, 0.012]])], axis=-1)}),
    (dict(band=1, combine="ratio", other_band=0),
     {"F": np.array([[2.0, 3.0], [5.0, 1.0]]),
      "U": np.stack([-np.array([[0.02, 0.03], [0.05, 0.01]]), np.array([[0.02, 0.03], [0.05, 0.01]])], axis=-1)}),
])
def test_monte_carlo_matches_first_order_for_small_errors(spec, columns):
    first = Feature("F", error="U", **spec)
    mc = Feature("F", error="U", **spec, **FLUX)
    x1, v1 = _variance(first, columns)
    x2, v2 = _variance(mc, columns)
    np.testing.assert_array_equal(x1, x2)  # the value is the point value either way
    # 1% errors: the delta method's relative bias is O(1e-4); the stratified draws' error is below 0.5%.
    np.testing.assert_allclose(v2, v1, rtol=0.02)


def test_split_normal_variance_is_the_closed_form():
    """Var of a split normal (sigma_1 below, sigma_2 above the mode) = (1 - 2/pi)(sigma_2 - sigma_1)^2 + sigma_1 sigma_2."""
    lower, upper = np.array([0.1, 0.3, 1.0, 0.5]), np.array([0.1, 0.5, 2.5, 0.2])
    errors = np.stack([-lower, upper], axis=-1)
    _, var = Feature("c", error="e", two_sided="split_normal", **MC).apply(np.array([1.0, 5.0, 10.0, 3.0]), errors)
    expected = (1 - 2 / math.pi) * (upper - lower) ** 2 + lower * upper
    np.testing.assert_allclose(var, expected, rtol=5e-3)
    # The old symmetrised sigma is wrong for the skewed rows.
    assert abs(((lower + upper) / 2) ** 2 / expected - 1)[2] > 0.05


# ------------------------------------------------------------------ upper limits, by quadrature
def test_log_of_a_flux_pegged_at_zero_is_the_half_normal_closed_form():
    """An undetected band (best fit 0, NaN lower error) is sigma |Z|: Var(ln |Z|) = pi^2 / 8 whatever sigma."""
    f = Feature("F", error="U", band=0, transform="log10", two_sided="split_normal", **FLUX)
    sigma = np.array([2e-12, 7e-9])
    columns = {"F": 1e-9 * sigma[:, None], "U": np.stack([np.full(2, np.nan), sigma], axis=-1)[:, None, :]}
    _, var = _variance(f, columns)  # best fits 1e-9 sigma: indistinguishable from 0
    np.testing.assert_allclose(var, math.pi**2 / 8 / math.log(10) ** 2, rtol=0.01)


def test_upper_limit_reproduces_the_catalogs_two_sigma_limit():
    """4FGL: value + 2 x upper error is the 2-sigma upper limit; the posterior's 95.45% quantile sits there."""
    f = Feature("F", error="U", two_sided="split_normal", **FLUX)
    err = f.measure(_reader({"F": np.array([0.0]), "U": np.array([[np.nan, 3.0]])}))[1]
    from gpal.catalogs.features.propagation import _quantiles, _split_normals, _uniforms

    draws = _quantiles(_split_normals(err[:, 0, 0], err[:, 0, 1], err[:, 0, 2], 0.0), _uniforms(MC_DRAWS, 1)[:, 0], 0.0)
    assert draws.min() > 0
    assert np.quantile(draws, 2 * stats.norm.cdf(2) - 1) == pytest.approx(0.0 + 2 * 3.0, rel=0.01)


@pytest.mark.parametrize("soft", [(0.8, 0.1, 0.12), (0.05, 0.05, 0.05)])  # detected soft band; a faint one
def test_hardness_with_an_undetected_hard_band_matches_quadrature(soft):
    """HR = (a - b) / (a + b), hard band a an upper limit at 0 (sigma 0.4), soft band b exact: quad over a."""
    b, _, _ = soft
    f = Feature("F", error="U", band=1, combine="hardness", other_band=0, two_sided="split_normal",
                missing_error="exact", **FLUX)
    columns = {"F": np.array([[b, 0.0]]), "U": np.array([[[np.nan, np.nan], [np.nan, 0.4]]])}  # b: no error
    x, var = _variance(f, columns)
    assert x[0] == -1.0  # the point value: the catalog's best fit, hard flux 0
    _, expected = _half_normal_moments(lambda a: (a - b) / (a + b), 0.4)
    np.testing.assert_allclose(var, expected, rtol=0.01)


def test_hardness_of_two_noisy_bands_matches_independent_draws():
    """Both bands random (a split-normal detection, an upper limit): scipy.stats draws as the reference."""
    f = Feature("F", error="U", band=1, combine="hardness", other_band=0, two_sided="split_normal", **FLUX)
    soft, hard = (1.0, 0.3, 0.5), (0.1, np.nan, 0.2)  # value, lower sigma, upper sigma; hard is an upper limit
    columns = {"F": np.array([[soft[0], hard[0]]]), "U": np.array([[[-soft[1], soft[2]], [hard[1], hard[2]]]])}
    _, var = _variance(f, columns)
    rng = np.random.default_rng(7)
    n = 2_000_000
    # Soft band: split normal truncated at 0, drawn by rejection.
    side = rng.random(4 * n) < soft[1] / (soft[1] + soft[2])
    b = soft[0] + np.where(side, -soft[1], soft[2]) * np.abs(rng.standard_normal(4 * n))
    b = b[b >= 0][:n]
    a = stats.truncnorm.rvs(-hard[0] / hard[2], np.inf, loc=hard[0], scale=hard[2], size=n, random_state=rng)
    np.testing.assert_allclose(var, ((a - b) / (a + b)).var(), rtol=0.02)


# ------------------------------------------------------------------ the real catalog
def test_dr4_hardness_variances_are_bounded_and_runs_are_deterministic():
    catalog = load_catalog("4FGL-DR4")
    hardness = [f for f in FEATURE_PRESETS["fermi_dr4"] if f.label.startswith("HR")]
    assert len(hardness) == 5
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DroppedRowsWarning)
        data = catalog.dataset(**MAIN, features=hardness)
        bll_psr = catalog.dataset(classes=["bll", "psr"], features=hardness)
    assert np.all(data.X_var <= 1.0) and np.all(np.abs(data.X) <= 1.0)
    # Computed again for another selection, a source's variances come out the same to the last bit:
    # they depend on its own catalog entries only.
    rows = {name: i for i, name in enumerate(data.ids)}
    shared = [rows[name] for name in bll_psr.ids]
    np.testing.assert_array_equal(data.X_var[shared], bll_psr.X_var)
    # The first-order model it replaces blew up where a band's flux is near 0.
    first_order = [dataclasses.replace(f, propagation="first_order", two_sided="mean", lower_bound=None)
                   for f in hardness]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DroppedRowsWarning)
        old = catalog.dataset(**MAIN, features=first_order)
    assert old.X_var.max() > 1e3


def test_frac_variability_sentinel_is_no_error_bar():
    catalog = load_catalog("4FGL-DR4")
    feature = next(f for f in FEATURE_PRESETS["fermi_dr4"] if f.column == "Frac_Variability")
    x, err, bad = feature.measure(catalog._numbers)
    unc = np.asarray(catalog.table["Unc_Frac_Variability"], dtype=np.float64)
    sentinel = np.isclose(unc, 10.0, rtol=1e-6)
    # the placeholder is no error: the preset gives those rows the median of the real errors, not 10 (variance 100)
    population = np.median(unc[np.isfinite(unc) & ~sentinel])
    assert sentinel.sum() > 3000 and np.all(err[sentinel, 0, 1:] == population) and population < 0.3
    ok = np.isfinite(x) & ~sentinel
    _, var = feature.transform_values(x[ok], err[ok])
    assert np.all(var <= unc[ok] ** 2 * 1.01)  # truncation at 0 only narrows the distribution


# ------------------------------------------------------------------ bad input
@pytest.mark.parametrize("spec, columns, message", [
    (dict(column="F", error="U", **MC), {"F": np.ones(3), "U": np.array([0.1, -0.2, 0.1])},
     r"error column 'U' of feature 'F' holds 1 negative value.*rows \[1\].*must be >= 0"),
    (dict(column="F", error="U", two_sided="split_normal", **MC), {"F": np.ones(3), "U": np.full(3, 0.1)},
     r"feature 'F' reads 'U' as two-sided 4FGL errors .* one error per source"),
    (dict(column="F", error="U", two_sided="split_normal", **FLUX),
     {"F": np.array([1.0, np.nan]), "U": np.array([[-0.1, 0.1], [np.nan, 0.3]])},
     r"1 row\(s\) of 'F' \(rows \[1\]\) are NaN where 'U' marks an upper limit"),
    (dict(column="F", error="U", two_sided="split_normal", **MC),
     {"F": np.ones(2), "U": np.array([[-0.1, 0.1], [0.1, 0.3]])},
     r"two-sided error column 'U' of feature 'F' .* outside the \[lower <= 0, upper >= 0\] convention"),
    (dict(column="F", error="U", **FLUX), {"F": np.array([1.0, -0.5]), "U": np.full(2, 0.1)},
     r"column 'F' of feature 'F' holds 1 value\(s\) below its lower_bound 0.0"),
])
def test_files_that_break_the_error_convention_are_refused(spec, columns, message):
    with pytest.raises(ValueError, match=message):
        Feature(**spec).measure(_reader(columns))


@pytest.mark.parametrize("spec, message", [
    (dict(two_sided="split_normal"), "two_sided='split_normal' for feature 'F' needs propagation='monte_carlo'"),
    (dict(lower_bound=0.0), "lower_bound=0.0 for feature 'F' needs propagation='monte_carlo'"),
    (dict(transform="log", **MC), r"draws of feature 'log\(F\)' can be <= 0 before its log; give lower_bound >= 0"),
    (dict(propagation="bootstrap"), "unknown propagation 'bootstrap' for feature 'F'"),
    (dict(two_sided="max", **MC), "unknown two_sided 'max' for feature 'F'"),
    (dict(lower_bound=float("nan"), **MC), "lower_bound of feature 'F' must be a finite number"),
    (dict(error_sentinel="10"), "error_sentinel of feature 'F' must be a finite number"),
])
def test_bad_error_model_specs_are_named(spec, message):
    with pytest.raises(ValueError, match=message):
        Feature("F", error="U", **spec)


def test_error_model_fields_round_trip_and_default_to_the_old_model():
    feature = Feature("Frac_Variability", error="Unc_Frac_Variability", error_sentinel=10.0, **FLUX)
    spec = feature.to_dict()
    assert spec == {"column": "Frac_Variability", "error": "Unc_Frac_Variability", "propagation": "monte_carlo",
                    "lower_bound": 0.0, "error_sentinel": 10.0, "draws": MC_DRAWS}  # the draws always said
    assert Feature.from_spec(json.loads(json.dumps(spec))) == feature
    # A spec saved before these fields existed still means first order, symmetrised errors.
    old = Feature.from_spec({"column": "Flux_Band", "error": "Unc_Flux_Band", "band": 2})
    assert (old.propagation, old.two_sided, old.lower_bound) == ("first_order", "mean", None)
    assert all(f.propagation == "first_order" for f in FEATURE_PRESETS["villacampa2021"])


def test_blocks_propagated_in_threads_give_the_single_thread_moments_bit_for_bit(monkeypatch):
    """The Monte Carlo's row blocks run in a thread pool: each block's arithmetic is the same, so are its moments."""
    import gpal.catalogs.features.propagation as features

    rng = np.random.default_rng(5)
    n = 700  # several blocks of a two-operand feature
    soft, hard = rng.uniform(0.1, 3.0, n), rng.uniform(0.0, 2.0, n)
    model = np.stack([np.stack([soft, 0.3 * soft, 0.4 * soft], axis=1),
                      np.stack([hard, np.where(rng.random(n) < 0.2, np.nan, 0.5), np.full(n, 0.6)], axis=1)], axis=1)
    model[:, 1, 1] = np.nan_to_num(model[:, 1, 1], nan=0.0)
    hr = FEATURE_PRESETS["fermi_dr4"][[f.label for f in FEATURE_PRESETS["fermi_dr4"]].index("HR23")]
    monkeypatch.setattr(features, "_MC_THREADS", 1)
    alone = features._monte_carlo_moments([hr], model)[0]
    monkeypatch.setattr(features, "_MC_THREADS", 2)
    threaded = features._monte_carlo_moments([hr], model)[0]
    assert n > 2 * features._MC_BLOCK_DRAWS // features.MC_DRAWS
    for a, b in zip(alone, threaded):
        assert np.all(np.isfinite(a)) and np.array_equal(a, b)


def test_draws_are_a_feature_setting_saved_with_it_and_checked():
    """A Monte Carlo feature's draws: MC_DRAWS unless given, always in its saved form, a power of 2; a first-order
    feature takes none.  The same feature drawn 2048 times gives the 2048-draw variances, not the default's."""
    import gpal.catalogs.features.propagation as features

    default = Feature("Frac_Variability", error="Unc_Frac_Variability", **FLUX)
    fine = Feature("Frac_Variability", error="Unc_Frac_Variability", draws=2048, **FLUX)
    assert default.monte_carlo_draws == MC_DRAWS and fine.to_dict()["draws"] == 2048
    assert Feature.from_spec(json.loads(json.dumps(fine.to_dict()))).monte_carlo_draws == 2048
    for bad in (1000, 8, True, 2.0):
        with pytest.raises(ValueError, match="power of 2"):
            Feature("Frac_Variability", error="Unc_Frac_Variability", draws=bad, **FLUX)
    with pytest.raises(ValueError, match="needs propagation='monte_carlo'"):
        Feature("LP_Index", error="Unc_LP_Index", draws=512)
    rng = np.random.default_rng(6)
    x = rng.uniform(0.1, 1.0, 50)
    sigma = 0.5 * x
    moments = {f.monte_carlo_draws: f.transform_values(x, sigma) for f in (default, fine)}
    reference = features._monte_carlo_moments([fine], fine.error_model(x, sigma))[0]
    np.testing.assert_array_equal(moments[2048][1], reference[1])
    assert not np.array_equal(moments[MC_DRAWS][1], moments[2048][1])
    np.testing.assert_allclose(moments[MC_DRAWS][1], moments[2048][1], rtol=0.2)


def test_a_model_saved_before_draws_were_recorded_draws_its_features_2048_times():
    from gpal.catalog_jobs.model_folders import _drawn_as_saved

    saved = {"features": [{"column": "Flux1000", "propagation": "monte_carlo", "lower_bound": 0.0},
                          {"column": "LP_Index", "error": "Unc_LP_Index"},
                          {"column": "Energy_Flux100", "propagation": "monte_carlo", "lower_bound": 0.0, "draws": 256}]}
    read = _drawn_as_saved(saved)["features"]
    assert read[0]["draws"] == 2048 and "draws" not in read[1] and read[2]["draws"] == 256
    assert "draws" not in saved["features"][0]  # the record as read is left alone

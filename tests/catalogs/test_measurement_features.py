"""Features reduced over many bands (band-spectrum shares, light-curve summaries): their Monte Carlo errors.

The expected variances come from elsewhere than gpal's sampler: the first-order (delta-method)
variance by finite differences of a numpy reduction written here, and numerical integration
(scipy.integrate.quad) of a truncated normal for an upper-limit band.
"""

import numpy as np
import pytest
from scipy import integrate, stats

from gpal.catalogs.features import FEATURE_PRESETS, Feature
from gpal.catalogs.releases import RELEASES

FLUX = dict(propagation="monte_carlo", lower_bound=0.0, two_sided="split_normal")


def _two_sided(lower, upper):
    return np.stack([-np.asarray(lower, float), np.asarray(upper, float)], axis=-1)


def _features(feature, flux, error):
    x, model, bad = feature.measure({"F": flux, "U": error}.__getitem__)
    return feature.transform_values(x, model), bad


def _first_order_variance(fn, flux, sigma, step=1e-6):
    """sum_j (d fn / d x_j)^2 sigma_j^2 by central differences, row by row."""
    out = np.zeros(flux.shape[0])
    for j in range(flux.shape[1]):
        dx = np.zeros_like(flux)
        dx[:, j] = step * flux[:, j]
        grad = (fn(flux + dx) - fn(flux - dx)) / (2 * dx[:, j])
        out += grad**2 * sigma[:, j] ** 2
    return out


FLUXES = np.array([[4.0, 2.0, 1.0, 0.5], [1.0, 3.0, 2.5, 0.2], [2.0, 2.1, 1.9, 2.2]])


@pytest.mark.parametrize("spec, fn", [
    (dict(reduce="share", band=2, bands=(0, 1, 2, 3)), lambda f: np.log10(f[:, 2] / f.sum(axis=1))),
    (dict(reduce="share", band=1, bands=(1, 2, 3)), lambda f: np.log10(f[:, 1] / f[:, 1:].sum(axis=1))),
    (dict(reduce="max_over_mean"), lambda f: np.log10(f.max(axis=1) / f.mean(axis=1))),
    (dict(reduce="cv"), lambda f: np.log10(f.std(axis=1, ddof=1) / f.mean(axis=1))),
])
def test_small_errors_give_the_first_order_variance(spec, fn):
    sigma = 0.003 * FLUXES
    feature = Feature("F", error="U", transform="log10", **spec, **FLUX)
    (values, variances), _ = _features(feature, FLUXES, _two_sided(sigma, sigma))
    np.testing.assert_allclose(values, fn(FLUXES), rtol=1e-12)  # the point value through the same reduction
    np.testing.assert_allclose(variances, _first_order_variance(fn, FLUXES, sigma), rtol=0.03)


def test_an_upper_limit_band_is_the_truncated_normal_of_its_upper_error():
    """Band 0 an upper limit (NaN lower error), best fit 0.2, upper error 0.5; the other band exact at 1:
    the share x / (x + 1) of x ~ N(0.2, 0.5^2) truncated at 0, whose moments are integrated here."""
    flux = np.array([[0.2, 1.0]])
    error = np.array([[[np.nan, 0.5], [0.0, 0.0]]])
    feature = Feature("F", error="U", reduce="share", band=0, centre="draw_mean", **FLUX)
    (value, variance), bad = _features(feature, flux, error)
    assert not any(rows.any() for rows in bad.values())
    density = stats.truncnorm(a=-0.2 / 0.5, b=np.inf, loc=0.2, scale=0.5).pdf
    m1 = integrate.quad(lambda x: x / (x + 1) * density(x), 0, np.inf)[0]
    m2 = integrate.quad(lambda x: (x / (x + 1)) ** 2 * density(x), 0, np.inf)[0]
    np.testing.assert_allclose(value, [m1], rtol=2e-3)  # centre="draw_mean": the mean of the draws
    np.testing.assert_allclose(variance, [m2 - m1**2], rtol=0.01)


def test_a_band_without_any_error_leaves_the_row_out():
    """The Crab's inverse-Compton row: NaN lower and infinite upper errors in every year."""
    flux = np.array([[1.0, 2.0, 3.0], [1.0, 1.0, 1.0]])
    error = np.array([_two_sided([0.1] * 3, [0.1] * 3), [[np.nan, np.inf]] * 3])
    (_, _), bad = _features(Feature("F", error="U", reduce="cv", **FLUX), flux, error)
    assert bad["U"].tolist() == [False, True]


@pytest.mark.parametrize("spec, message", [
    (dict(reduce="share", bands=(0, 1)), "needs band"),
    (dict(reduce="share", band=3, bands=(0, 1)), "needs band"),
    (dict(reduce="cv", band=1), "give bands, not band"),
    (dict(reduce="cv", bands=(1,)), "two or more distinct"),
    (dict(reduce="mean"), "unknown reduce"),
    (dict(bands=(0, 1)), "without reduce"),
    (dict(reduce="cv", bands=2), "must be a list of band indices"),
])
def test_contradictory_reduce_specs_are_refused(spec, message):
    with pytest.raises(ValueError, match=message):
        Feature("F", error="U", **{**FLUX, **spec})


def test_reduce_and_draw_mean_need_monte_carlo():
    with pytest.raises(ValueError, match="needs propagation='monte_carlo'"):
        Feature("F", error="U", reduce="cv")
    with pytest.raises(ValueError, match="needs propagation='monte_carlo'"):
        Feature("F", error="U", centre="draw_mean")


def test_bands_beyond_the_column_are_refused():
    feature = Feature("F", error="U", reduce="max_over_mean", bands=(0, 4), **FLUX)
    with pytest.raises(ValueError, match="has 4 bands"):
        _features(feature, FLUXES, _two_sided(FLUXES * 0.1, FLUXES * 0.1))


def test_a_reduce_spec_survives_json():
    feature = FEATURE_PRESETS["fermi_dr4_bands"][-1]
    spec = feature.to_dict()
    spec["bands"] = list(spec["bands"])  # as JSON gives it back
    assert Feature.from_spec(spec) == feature


def test_the_measurement_presets_read_columns_every_4fgl_layout_names():
    layouts = {r.name: r.columns for r in RELEASES.values() if r.family != "3FGL"}
    for name in ("fermi_dr4_bands", "fermi_dr4_lightcurve", "fermi_dr4_measurements"):
        added = [f for f in FEATURE_PRESETS[name] if f.reduce is not None]
        assert added and FEATURE_PRESETS[name][: -len(added)] == FEATURE_PRESETS["fermi_dr4"]
        for columns in layouts.values():
            assert {c for f in added for c in f.columns} <= {
                columns.band_flux, columns.band_flux_error, columns.history_flux, columns.history_flux_error}

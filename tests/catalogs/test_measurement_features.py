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


def test_band_columns_give_the_numbers_of_one_multi_band_column():
    """DR4's layout split into one column per band (as 3FGL stores its bands) goes through the same reduction:
    the same values, variances and unusable rows, bit for bit, upper limits and a row without errors included."""
    error = _two_sided(0.2 * FLUXES, 0.3 * FLUXES)
    error[0, 3] = [np.nan, 0.4]   # an upper limit
    error[1] = [np.nan, np.inf]   # no usable error: left out
    one = {"F": FLUXES, "U": error}
    split = {**{f"F{b}": FLUXES[:, b] for b in range(4)}, **{f"U{b}": error[:, b] for b in range(4)}}
    for spec in (dict(reduce="share", band=2, bands=(1, 2, 3), centre="draw_mean"), dict(reduce="cv")):
        multi = Feature("F", error="U", transform="log10", floor=1e-4, **spec, **FLUX)
        per_band = Feature(tuple(f"F{b}" for b in range(4)), error=tuple(f"U{b}" for b in range(4)),
                           transform="log10", floor=1e-4, **spec, **FLUX)
        x, model, bad = multi.measure(one.__getitem__)
        x_b, model_b, bad_b = per_band.measure(split.__getitem__)
        np.testing.assert_array_equal(model_b, model)
        np.testing.assert_array_equal(x_b, x)
        rows = np.any(list(bad.values()), axis=0)
        assert rows.tolist() == np.any(list(bad_b.values()), axis=0).tolist() == [False, True, False]
        for got, want in zip(per_band.transform_values(x_b[~rows], model_b[~rows]),
                             multi.transform_values(x[~rows], model[~rows])):
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("spec, message", [
    (dict(column=("F0",), error=("U0",)), "two or more band column names"),
    (dict(column=("F0", "F1"), error=("U0",)), "as many band columns"),
    (dict(column="F", error=("U0", "U1")), "as many band columns"),
    (dict(column=("F0", "F1"), error="U"), "one error column per band"),
])
def test_band_column_specs_that_do_not_match_are_refused(spec, message):
    with pytest.raises(ValueError, match=message):
        Feature(**spec, reduce="cv", **FLUX)
    with pytest.raises(ValueError, match="needs reduce"):
        Feature(("F0", "F1"), error=("U0", "U1"))


def test_a_band_column_spec_survives_json():
    feature = FEATURE_PRESETS["fermi_3fgl_measurements"][-3]
    spec = {k: list(v) if isinstance(v, tuple) else v for k, v in feature.to_dict().items()}  # as JSON gives it back
    assert Feature.from_spec(spec) == feature


@pytest.fixture(scope="module")
def fgl3():
    from gpal.catalogs import load_catalog
    catalog = load_catalog("3FGL")
    with pytest.warns(UserWarning, match="population's median error"):  # 4 sources without Unc_Spectral_Index
        data = catalog.dataset(classes=["bll", "fsrq", "pulsar"], merge={"pulsar": ["psr"]},
                               features="fermi_3fgl_measurements")
    return catalog, data


def test_the_3fgl_measurement_preset_loads_on_the_shipped_3fgl(fgl3):
    catalog, data = fgl3
    with pytest.warns(UserWarning, match="population's median error"):
        summary = catalog.dataset(classes=["bll", "fsrq", "pulsar"], merge={"pulsar": ["psr"]}, features="fermi_3fgl")
    assert list(data.ids) == list(summary.ids)  # the added features leave no labelled source out
    assert data.feature_names[: summary.n_features] == summary.feature_names
    assert data.feature_names[summary.n_features:] == (
        "log10_share1", "log10_share2", "log10_share3", "log10_share4", "log10_share56",
        "log10_lc_max_over_mean", "log10_lc_cv")
    assert np.isfinite(data.X).all() and (data.X_var[:, summary.n_features:] > 0).all()


def test_3fgl_band_shares_match_an_independent_monte_carlo(fgl3):
    """PSR J0248.5+4232: four measured bands (split normal) and a 10-100 GeV upper limit at flux ~0 (NaN lower
    error): the shares' log draws, sampled here with numpy from the catalog's numbers and compared with gpal's
    MC_DRAWS quasi-random draws."""
    catalog, data = fgl3
    name = "3FGL J0248.5+4232"
    row = catalog.names.tolist().index(name)
    columns = RELEASES["3FGL"].columns
    flux = np.array([catalog.table[c][row] for c in columns.band_flux], dtype=float)
    error = np.array([catalog.table[c][row] for c in columns.band_flux_error], dtype=float)
    assert np.isnan(error[4, 0]) and flux[4] < 1e-3 * error[4, 1] and np.isfinite(error[:4]).all()
    rng = np.random.default_rng(0)
    n = 400_000
    draws = np.empty((n, 5))
    for b in range(5):
        lower = error[b, 1] if np.isnan(error[b, 0]) else -error[b, 0]
        x = np.empty(0)
        while x.size < n:  # the split normal truncated at 0, by rejection
            below = rng.random(4 * n) < lower / (lower + error[b, 1])
            z = np.abs(rng.standard_normal(4 * n))
            x = np.concatenate([x, (flux[b] + np.where(below, -lower, error[b, 1]) * z)])
            x = x[x >= 0]
        draws[:, b] = x[:n]
    logs = np.log10(np.maximum(draws / draws.sum(axis=1, keepdims=True), 1e-4))
    i = [str(s) for s in data.ids].index(name)
    k = list(data.feature_names).index("log10_share1")
    sd = logs.std(axis=0)
    # gpal's estimates from MC_DRAWS quasi-random draws against the numpy moments (their error negligible): within
    # three pseudo-random standard errors of as many draws, which quasi-random draws do not exceed.  A variance's
    # relative standard error is sqrt((kurtosis - 1) / N): sqrt(2 / N) for a normal, more for the share at the
    # 1e-4 floor, whose log draws pile up there
    from gpal.catalogs.features import MC_DRAWS

    kurtosis = ((logs - logs.mean(axis=0)) ** 4).mean(axis=0) / sd**4
    np.testing.assert_allclose(data.X[i, k:k + 5], logs.mean(axis=0), rtol=0, atol=(3 * sd / np.sqrt(MC_DRAWS)).max())
    assert np.all(np.abs(data.X_var[i, k:k + 5] / sd**2 - 1) < 3 * np.sqrt((kurtosis - 1) / MC_DRAWS))


def test_features_of_one_error_model_draw_it_once_to_the_same_bits(monkeypatch):
    """Three band shares and two summaries of the same four bands: one set of draws serves all five, each feature's
    moments equal to the bit those it gets alone; a feature with another lower bound draws its own."""
    import gpal.catalogs.features.propagation as features

    rng = np.random.default_rng(11)
    flux = rng.uniform(0.1, 4.0, (40, 4))
    error = _two_sided(0.2 * flux, 0.3 * flux)
    error[::7, 3, 0] = np.nan  # upper limits: a truncated normal of the upper error
    read = {"F": flux, "U": error}.__getitem__
    shared = [Feature("F", error="U", transform="log10", reduce="share", band=b, **FLUX) for b in (0, 1, 3)]
    shared += [Feature("F", error="U", transform="log10", reduce=r, **FLUX) for r in ("max_over_mean", "cv")]
    unbounded = Feature("F", error="U", reduce="share", band=2, propagation="monte_carlo", two_sided="split_normal")
    feats = shared + [unbounded]
    measured = [f.measure(read)[:2] for f in feats]
    alone = [f.transform_values(x, model) for f, (x, model) in zip(feats, measured)]
    calls = []
    draws = features._quantiles
    monkeypatch.setattr(features, "_quantiles", lambda *a: calls.append(1) or draws(*a))
    together = features.transform_all(feats, [x for x, _ in measured], [m for _, m in measured])
    assert len(calls) == 2 * 4  # two error models (bound 0 and none) of four bands, in one block of 40 rows each
    for (a_value, a_var), (b_value, b_var) in zip(alone, together):
        assert np.all(np.isfinite(a_var)) and np.array_equal(a_value, b_value) and np.array_equal(a_var, b_var)


def test_a_chain_of_hardness_ratios_draws_each_band_once_at_two_sobol_columns(monkeypatch):
    """HR01 ... HR34 of five bands: five operand draws, not eight, at two quasi-random columns (odd and even bands), so
    each ratio reads the two-dimensional Sobol set it reads alone (HR01 the same bits; HR12 its columns swapped);
    every ratio's variance agrees with an independent Monte Carlo of the split normals (scipy, 400 000 draws)."""
    import gpal.catalogs.features.propagation as features

    rng = np.random.default_rng(5)
    flux = rng.uniform(0.5, 3.0, (30, 5))
    lower, upper = 0.15 * flux, 0.25 * flux
    read = {"F": flux, "U": _two_sided(lower, upper)}.__getitem__
    ratios = [Feature("F", error="U", band=b + 1, combine="hardness", other_band=b, **FLUX) for b in range(4)]
    measured = [f.measure(read)[:2] for f in ratios]
    alone = [f.transform_values(x, model) for f, (x, model) in zip(ratios, measured)]
    calls = []
    draws = features._quantiles
    monkeypatch.setattr(features, "_quantiles", lambda *a: calls.append(a[1]) or draws(*a))
    together = features.transform_all(ratios, [x for x, _ in measured], [m for _, m in measured])
    assert len(calls) == 5  # one draw of each band, in one block of 30 rows
    sobol = features._uniforms(features.MC_DRAWS, 2)
    # drawn in the order the ratios name them (bands 1, 0, 2, 3, 4); bands 1 and 3 at column 0, 0, 2 and 4 at column 1
    assert all(np.array_equal(u, sobol[:, column]) for u, column in zip(calls, (0, 1, 1, 0, 1)))
    assert np.array_equal(together[0][1], alone[0][1])
    assert not np.array_equal(together[1][1], alone[1][1])  # the same Sobol set, its columns the other way round
    n = 400_000
    gen = np.random.default_rng(6)
    z, side = np.abs(gen.standard_normal((n, 5))), gen.uniform(size=(n, 5))
    for b, (value, variance) in enumerate(together):
        assert np.array_equal(value, alone[b][0])  # a hardness ratio's value is its point value
        for i in range(0, 30, 7):
            # a split normal: below its mode (the value) with probability lower / (lower + upper), a half-normal of
            # scale lower there, of scale upper above (the bound 0 lies beyond 6 sigma here)
            hard, soft = (np.where(side[:, j] < lower[i, j] / (lower[i, j] + upper[i, j]), -lower[i, j], upper[i, j])
                          * z[:, j] + flux[i, j] for j in (b + 1, b))
            assert variance[i] == pytest.approx(((hard - soft) / (hard + soft)).var(), rel=0.02)


def test_features_drawn_together_read_the_first_columns_they_read_alone():
    """Six band shares (each reads bands 1-6) and the five hardness ratios of the same bands: the ratio whose bands the
    shares hold at columns 0 and 1 joins them, the others draw their bands in a group of their own at two columns;
    every feature reads columns 0 .. k - 1 of its group's quasi-random set, one each, as it would alone."""
    from gpal.catalogs.features.propagation import _draw_groups

    keys = {i: [f"b{b}" for b in range(1, 7)] for i in range(6)}  # the shares
    keys.update({6 + k: [f"b{k + 2}", f"b{k + 1}"] for k in range(5)})  # HR12 ... HR56: hard band, soft band
    groups = _draw_groups(keys)
    assert [sorted(g.reads) for g in groups] == [[0, 1, 2, 3, 4, 5, 6], [7, 8, 9, 10]]
    assert [len(g.operands) for g in groups] == [6, 5]  # 11 band draws, where sharing only whole error models drew 16
    for group in groups:
        for i, read in group.reads.items():
            assert [keys[i][k] for k in range(len(read))] == [keys[j][k] for j, k in (group.operands[p] for p in read)]
            assert sorted(group.columns[p] for p in read) == list(range(len(keys[i])))

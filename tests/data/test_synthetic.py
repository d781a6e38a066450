"""Tests for gpal.data.synthetic: determinism, shapes, and the Bayes predictives checked
against independent brute-force simulations of the generating processes."""

import numpy as np
import pytest

from gpal.data.dataset import NoisyDataset
from gpal.data.synthetic import _GridLatent, digits, inject_noise, synthetic_2d, toy_1d, waveform, wine


@pytest.fixture(scope="module")
def toy():
    return toy_1d(n_train=300, n_test=1000, noise_std=0.1, seed=0)


def _nll(proba, y):
    return -np.mean(np.log(proba[np.arange(len(y)), y]))


def _fine_boundaries(latent, low, high, step=1e-4):
    """Argmax changes on a fine grid: independent of the generator's root finding."""
    xs = np.arange(low, high, step)
    lab = latent(xs[:, None]).argmax(1)
    return xs[1:][lab[1:] != lab[:-1]]


# ------------------------------------------------------------------ toy_1d
def test_toy_1d_contract(toy):
    for split, n in [(toy.train, 300), (toy.test, 1000)]:
        assert split.X.shape == (n, 1) and split.feature_names == ("x",)
        assert split.class_names == ("class_0", "class_1", "class_2")
        np.testing.assert_array_equal(split.X_var, np.full((n, 1), 0.1**2))
        assert split.meta["generator"] == "toy_1d" and split.meta["seed"] == 0
        assert split.aux["X_true"].shape == (n, 1)
        # labels are the argmax of the latent functions at the *noiseless* inputs
        np.testing.assert_array_equal(split.y, toy.latent(split.aux["X_true"]).argmax(1))
        assert np.abs(split.X - split.aux["X_true"]).max() < 6 * 0.1
    assert toy.train.ids[12] == "toy1d-train-000012" and toy.test.ids[0] == "toy1d-test-000000"
    assert set(np.unique(toy.train.y)) == {0, 1, 2}
    assert toy.bayes_proba(toy.test.X).shape == (1000, 3)
    assert toy.latent(np.linspace(-3, 3, 7)[:, None]).shape == (7, 3)


def test_toy_1d_deterministic():
    a, b, c = toy_1d(50, 40, seed=3), toy_1d(50, 40, seed=3), toy_1d(50, 40, seed=4)
    for x, y in [(a.train, b.train), (a.test, b.test)]:
        np.testing.assert_array_equal(x.X, y.X)
        np.testing.assert_array_equal(x.y, y.y)
    grid = np.linspace(-3, 3, 101)[:, None]
    np.testing.assert_array_equal(a.latent(grid), b.latent(grid))
    assert not np.allclose(a.latent(grid), c.latent(grid))
    assert not np.allclose(a.train.X, c.train.X)
    # independent streams: more training points leave the functions and the test set alone
    d = toy_1d(80, 40, seed=3)
    np.testing.assert_array_equal(a.latent(grid), d.latent(grid))
    np.testing.assert_array_equal(a.test.X, d.test.X)


def test_toy_1d_decision_boundaries_match_fine_scan(toy):
    fine = _fine_boundaries(toy.latent, -3, 3)
    exact = np.asarray(toy.params["decision_boundaries"])
    assert 2 <= len(exact) <= 10  # "classes alternate a few times"
    assert len(fine) == len(exact) and np.abs(fine - exact).max() < 2e-4


@pytest.mark.parametrize("noise_std", [0.1, 0.3])
def test_toy_1d_bayes_proba_matches_brute_force_simulation(noise_std):
    """Importance-weighted simulation of x ~ U[-3,3] with weights N(x~ | x, s^2).

    With 10^6 draws the effective sample size per x~ is >= 1.5e4, so the simulated
    frequencies have standard error <= 0.004; the tolerance 0.02 is 5 of them.
    """
    problem = toy_1d(10, 10, noise_std=noise_std, seed=0)
    b = np.asarray(problem.params["decision_boundaries"])
    x_obs = np.concatenate([b - 0.05, b + 0.02, [-3.15, 0.0, 3.1]])
    rng = np.random.default_rng(123)
    x = rng.uniform(-3, 3, 1_000_000)
    onehot = np.eye(3)[problem.latent(x[:, None]).argmax(1)]
    w = np.exp(-0.5 * ((x_obs[:, None] - x[None, :]) / noise_std) ** 2)
    simulated = (w @ onehot) / w.sum(1, keepdims=True)
    proba = problem.bayes_proba(x_obs[:, None])
    np.testing.assert_allclose(proba.sum(1), 1.0, atol=1e-12)
    np.testing.assert_allclose(proba, simulated, atol=0.02)
    assert np.ptp(proba[:len(b)], axis=1).min() < 0.9  # near boundaries the answer is not one-hot


def test_toy_1d_small_noise_gives_argmax_labels():
    problem = toy_1d(10, 10, noise_std=1e-3, seed=0)
    fine = _fine_boundaries(problem.latent, -3, 3)
    xs = np.linspace(-2.99, 2.99, 2000)
    xs = xs[np.abs(xs[:, None] - fine[None, :]).min(1) > 0.01]  # 10 noise sds from any boundary
    proba = problem.bayes_proba(xs[:, None])
    np.testing.assert_array_equal(proba.argmax(1), problem.latent(xs[:, None]).argmax(1))
    assert proba.max(1).min() > 1 - 1e-9
    exact = toy_1d(10, 10, noise_std=0.0, seed=0)
    np.testing.assert_array_equal(exact.bayes_proba(xs[:, None]), np.eye(3)[proba.argmax(1)])


def test_toy_1d_bayes_beats_noise_ignoring_plug_in(toy):
    """The Bayes predictive must beat 1[argmax f(x~)] even with its smoothing tuned on the test set."""
    y, x_obs = toy.test.y, toy.test.X
    bayes = toy.bayes_proba(x_obs)
    np.testing.assert_allclose(bayes.sum(1), 1.0, atol=1e-12)
    plug_in = np.eye(3)[toy.latent(np.clip(x_obs, -3, 3)).argmax(1)]
    best_plug_in = min(_nll((1 - eps) * plug_in + eps / 3, y) for eps in np.geomspace(1e-4, 0.5, 60))
    bayes_nll = _nll(bayes, y)
    assert bayes_nll < best_plug_in - 0.02
    assert bayes_nll < np.log(3) / 3
    assert np.mean(bayes.argmax(1) != y) <= np.mean(plug_in.argmax(1) != y) + 0.005


def test_toy_1d_rejects_bad_arguments():
    with pytest.raises(ValueError, match="noise_std.*-0.1"):
        toy_1d(noise_std=-0.1)
    with pytest.raises(ValueError, match="n_train.*0"):
        toy_1d(n_train=0)
    with pytest.raises(ValueError, match="seed"):
        toy_1d(seed=-1)
    problem = toy_1d(5, 5)
    with pytest.raises(ValueError, match=r"\[-3.0, 3.0\]"):
        problem.latent(np.array([[3.5]]))
    with pytest.raises(ValueError, match=r"shape \(n, 1\)"):
        problem.bayes_proba(np.zeros((4, 2)))


# ------------------------------------------------------------ GP-prior draws
@pytest.mark.parametrize("dim", [1, 2])
def test_latent_draws_have_the_prior_covariance(dim):
    """Many independent draws (as "classes") reproduce variance * exp(-d^2 / 2 l^2), off the grid too."""
    variance, lengthscale, n_draws = 0.5, np.sqrt(2.0), 4000
    latent = _GridLatent(np.random.default_rng(7), -2.5, 2.5, dim, n_draws, variance, lengthscale, 31)
    base = np.full(dim, -0.37)
    offsets = [np.zeros(dim), np.eye(dim)[0] * 1.3, np.eye(dim)[-1] * 0.6, np.full(dim, 0.9)]
    f = latent(np.stack([base + o for o in offsets]))  # (points, draws)
    assert np.abs(f.mean(1)).max() < 0.06  # se 0.011
    cov = f @ f[0] / n_draws
    expected = variance * np.exp(-0.5 * np.array([o @ o for o in offsets]) / lengthscale**2)
    np.testing.assert_allclose(cov, expected, atol=0.05)  # se <= 0.011


# -------------------------------------------------------------- synthetic_2d
@pytest.fixture(scope="module")
def synth():
    return synthetic_2d(n_train=200, n_test=1000, noise_variance=0.25, seed=1)


def test_synthetic_2d_contract(synth):
    assert synth.params["variance"] == 0.5 and synth.params["lengthscale"] == pytest.approx(np.sqrt(2))
    for split, n in [(synth.train, 200), (synth.test, 1000)]:
        assert split.X.shape == (n, 2) and split.feature_names == ("x1", "x2")
        np.testing.assert_array_equal(split.X_var, np.full((n, 2), 0.25))
        X_true = split.aux["X_true"]
        assert X_true.min() >= -2.5 and X_true.max() <= 2.5
        np.testing.assert_array_equal(split.y, synth.latent(X_true).argmax(1))
        assert split.meta["generator"] == "synthetic_2d"
    assert synth.test.ids[7] == "synth2d-test-000007"
    noise = synth.test.X - synth.test.aux["X_true"]
    assert abs(noise.var() - 0.25) < 0.03


def test_synthetic_2d_deterministic():
    a, b, c = (synthetic_2d(30, 30, seed=s) for s in (5, 5, 6))
    np.testing.assert_array_equal(a.train.X, b.train.X)
    np.testing.assert_array_equal(a.test.y, b.test.y)
    np.testing.assert_array_equal(a.bayes_proba(a.test.X), b.bayes_proba(b.test.X))
    assert not np.allclose(a.train.X, c.train.X)


def test_synthetic_2d_bayes_proba_matches_rejection_sampling(synth):
    """Monte Carlo over p(x | x~) by rejection: x = x~ + N(0, V), kept if inside the box.

    20000 kept draws per point: standard error <= 0.0035, tolerance 0.02.
    """
    proba = synth.bayes_proba(synth.test.X)
    np.testing.assert_allclose(proba.sum(1), 1.0, atol=1e-12)
    mixed = np.nonzero(proba.max(1) < 0.8)[0][:6]
    assert len(mixed) == 6
    x_obs = np.concatenate([synth.test.X[mixed], [[2.9, -2.7], [0.0, 0.0]]])
    rng = np.random.default_rng(99)
    simulated = []
    for point in x_obs:
        draws = point + 0.5 * rng.standard_normal((600_000, 2))  # >= 7% accepted
        draws = draws[(np.abs(draws) <= 2.5).all(1)][:20_000]
        assert len(draws) == 20_000
        simulated.append(np.bincount(synth.latent(draws).argmax(1), minlength=3) / len(draws))
    np.testing.assert_allclose(synth.bayes_proba(x_obs), np.array(simulated), atol=0.02)


def test_synthetic_2d_quadrature_converges(synth):
    X = synth.test.X[:200]
    coarse, fine = synth.bayes_proba(X, n_cells=100), synth.bayes_proba(X, n_cells=800)
    assert np.abs(coarse - fine).max() < 0.01
    assert np.abs(synth.bayes_proba(X) - fine).max() < 0.003


def test_synthetic_2d_bayes_beats_plug_in_and_uniform(synth):
    y, x_obs = synth.test.y, synth.test.X
    bayes = synth.bayes_proba(x_obs)
    plug_in = np.eye(3)[synth.latent(np.clip(x_obs, -2.5, 2.5)).argmax(1)]
    best_plug_in = min(_nll((1 - eps) * plug_in + eps / 3, y) for eps in np.geomspace(1e-4, 0.5, 60))
    assert _nll(bayes, y) < best_plug_in - 0.02
    assert _nll(bayes, y) < np.log(3)


def test_synthetic_2d_noise_free_limit():
    problem = synthetic_2d(50, 50, noise_variance=0.0, seed=2)
    proba = problem.bayes_proba(problem.test.X)
    np.testing.assert_array_equal(proba, np.eye(3)[problem.test.y])


def test_synthetic_2d_rejects_bad_arguments():
    with pytest.raises(ValueError, match="noise_variance.*-0.25"):
        synthetic_2d(noise_variance=-0.25)
    with pytest.raises(ValueError, match="n_test.*-5"):
        synthetic_2d(n_test=-5)
    with pytest.raises(ValueError, match="lengthscale must be > 0"):
        synthetic_2d(lengthscale=0.0)
    with pytest.raises(ValueError, match="n_cells"):
        synthetic_2d(5, 5).bayes_proba(np.zeros((1, 2)), n_cells=0)


# ------------------------------------------------------------------ waveform
def _base_waves():
    """The CART-book definition written out: triangles of height 6 peaking at i = 11, 15, 7."""
    i = np.arange(1, 22)
    h1 = np.clip(6 - np.abs(i - 11), 0, None)
    h2 = np.clip(6 - np.abs(i - 4 - 11), 0, None)
    h3 = np.clip(6 - np.abs(i + 4 - 11), 0, None)
    return h1, h2, h3


def test_waveform_shapes_balance_and_determinism():
    data = waveform(n=3000, seed=0)
    assert data.X.shape == (3000, 21) and data.feature_names[0] == "x1" and data.feature_names[-1] == "x21"
    np.testing.assert_array_equal(data.X_var, 0.0)
    assert data.ids[12] == "waveform-000012"
    shares = np.bincount(data.y, minlength=3) / 3000
    assert np.abs(shares - 1 / 3).max() < 0.04  # se 0.009
    np.testing.assert_array_equal(waveform(50, seed=4).X, waveform(50, seed=4).X)
    assert not np.allclose(waveform(50, seed=4).X, waveform(50, seed=5).X)


def test_waveform_class_means_and_noise():
    data = waveform(n=3000, seed=1)
    h1, h2, h3 = _base_waves()
    pairs = [(h1, h2), (h1, h3), (h2, h3)]
    for k, (a, b) in enumerate(pairs):
        members = data.y == k
        # feature sd <= 2, ~1000 rows per class: se <= 0.065
        np.testing.assert_allclose(data.X[members].mean(0), 0.5 * (a + b), atol=0.3)
        u = data.aux["u"][members, None]
        residual = data.X[members] - (u * a + (1 - u) * b)
        assert abs(residual.var() - 1.0) < 0.05 and abs(residual.mean()) < 0.03


# -------------------------------------------------------------- inject_noise
def _plain(n=20_000):
    return NoisyDataset(
        X=np.zeros((n, 3)), X_var=np.full((n, 3), 0.01), y=np.zeros(n, dtype=int),
        class_names=("a",), feature_names=("f1", "f2", "f3"), ids=None, meta={"source": "test"},
    )


def test_inject_noise_per_feature_and_scalar():
    data = _plain()
    X_before, var_before = data.X.copy(), data.X_var.copy()
    noisy = inject_noise(data, [0.1, 0.25, 0.5], seed=3)
    np.testing.assert_allclose(noisy.X.var(0), [0.1, 0.25, 0.5], rtol=0.04)  # rel. se 1%
    np.testing.assert_array_equal(noisy.X_var, var_before + np.array([0.1, 0.25, 0.5]))
    np.testing.assert_array_equal(data.X, X_before)  # input untouched
    np.testing.assert_array_equal(data.X_var, var_before)
    twice = inject_noise(noisy, 0.2, seed=4)
    np.testing.assert_allclose(twice.X_var, var_before + np.array([0.3, 0.45, 0.7]))
    assert twice.meta["noise_injections"] == [
        {"variance": [0.1, 0.25, 0.5], "seed": 3}, {"variance": 0.2, "seed": 4}
    ]
    assert twice.meta["source"] == "test"
    np.testing.assert_array_equal(inject_noise(data, 0.2, seed=4).X, inject_noise(data, 0.2, seed=4).X)
    assert not np.allclose(inject_noise(data, 0.2, seed=4).X, inject_noise(data, 0.2, seed=5).X)
    np.testing.assert_array_equal(inject_noise(data, 0.0).X, data.X)


def test_inject_noise_per_value():
    """Heteroscedastic noise: each value's own variance, added to X_var, its noise of that spread."""
    data = _plain()
    var = np.random.default_rng(0).uniform(0.01, 1.0, size=data.X.shape)
    noisy = inject_noise(data, var, seed=3)
    np.testing.assert_array_equal(noisy.X_var, data.X_var + var)
    np.testing.assert_allclose((noisy.X / np.sqrt(var)).std(axis=0), 1.0, rtol=0.03)  # standardised noise
    assert noisy.meta["noise_injections"] == [{"variance": "per value", "seed": 3}]
    with pytest.raises(ValueError, match=r"X's shape \(10, 3\).*got shape \(9, 3\)"):
        inject_noise(_plain(10), var[:9])
    bad = var[:10].copy()
    bad[4, 1] = -1.0
    with pytest.raises(ValueError, match=r"bad for \['f2'\]"):
        inject_noise(_plain(10), bad)


def test_wine_heteroscedastic_carries_error_bars_of_its_recipe():
    from gpal.data.synthetic import wine_heteroscedastic

    raw, noisy = wine(), wine_heteroscedastic(seed=1)
    fraction = np.sqrt(noisy.X_var) / raw.X.std(axis=0)  # each error bar over its feature's spread
    assert 0.05 <= fraction.min() and fraction.max() <= 0.5 and np.median(fraction) == pytest.approx(0.158, rel=0.1)
    assert np.all(noisy.X != raw.X) and np.array_equal(noisy.y, raw.y)
    small = wine_heteroscedastic(seed=1, units=0.05)
    np.testing.assert_allclose(small.X, noisy.X * 0.05)
    np.testing.assert_allclose(small.X_var, noisy.X_var * 0.0025)


def test_inject_noise_rejects_bad_variances():
    data = _plain(10)
    with pytest.raises(ValueError, match=r"'f2'"):
        inject_noise(data, [0.1, -0.2, 0.1])
    with pytest.raises(ValueError, match=r"shape \(3,\)"):
        inject_noise(data, [0.1, 0.2])
    with pytest.raises(ValueError, match="finite"):
        inject_noise(data, np.nan)
    with pytest.raises(TypeError, match="NoisyDataset"):
        inject_noise(np.zeros((3, 3)), 0.1)


# ------------------------------------------------------------ wine / digits
def test_wine_and_digits_raw():
    from sklearn.datasets import load_digits, load_wine

    w, d = wine(), digits()
    assert w.X.shape == (178, 13) and w.class_names == ("class_0", "class_1", "class_2")
    assert w.feature_names == tuple(load_wine().feature_names)
    np.testing.assert_array_equal(w.X, load_wine().data)
    assert d.X.shape == (1797, 64) and d.class_names == tuple(str(k) for k in range(10))
    np.testing.assert_array_equal(d.y, load_digits().target)
    np.testing.assert_array_equal(d.X_var, 0.0)
    assert w.ids[3] == "wine-000003" and w.meta["generator"] == "wine"


def test_wine_noise_levels_share_the_standardised_scale():
    clean, noisy = wine(noise_variance=0.0), wine(noise_variance=0.5, seed=2)
    np.testing.assert_allclose(clean.X.mean(0), 0.0, atol=1e-12)
    np.testing.assert_allclose(clean.X.std(0), 1.0)
    np.testing.assert_array_equal(clean.X_var, 0.0)
    np.testing.assert_array_equal(noisy.X_var, 0.5)
    assert abs((noisy.X - clean.X).var() - 0.5) < 0.05  # 2314 values: se 0.015
    np.testing.assert_array_equal(noisy.X, wine(noise_variance=0.5, seed=2).X)
    with pytest.raises(ValueError, match="noise_variance.*-1"):
        digits(noise_variance=-1)

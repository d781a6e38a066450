"""Priors over the noiseless inputs: extreme deconvolution and the mixture posterior, checked independently."""

import numpy as np
import pytest
import tensorflow as tf
from scipy import integrate, stats

from gpal import NoisyGPClassifier
from gpal.models.input_prior import BroadPrior, MixturePrior, fit_mixture_prior, prior_from_config

PRIOR_1D = MixturePrior([0.3, 0.7], [[-1.0], [2.0]], [[[0.5]], [[1.5]]])


def _t(a):
    return tf.constant(np.asarray(a, dtype=np.float64))


def _prior_pdf(x):
    return 0.3 * stats.norm.pdf(x, -1.0, np.sqrt(0.5)) + 0.7 * stats.norm.pdf(x, 2.0, np.sqrt(1.5))


def _posterior_moments_by_quadrature(x_obs, V):
    weight = lambda x: _prior_pdf(x) * stats.norm.pdf(x_obs, x, np.sqrt(V))  # noqa: E731
    Z = integrate.quad(weight, -20, 20, points=[-1, 2, x_obs])[0]
    mean = integrate.quad(lambda x: x * weight(x), -20, 20, points=[-1, 2, x_obs])[0] / Z
    var = integrate.quad(lambda x: (x - mean) ** 2 * weight(x), -20, 20, points=[-1, 2, x_obs])[0] / Z
    return mean, var


def test_deconvolution_without_noise_is_gaussian_mixture_em():
    """V = 0: extreme deconvolution must be scikit-learn's full-covariance EM from the same start."""
    from sklearn.mixture import GaussianMixture

    rng = np.random.default_rng(0)
    X = np.concatenate([rng.normal(-2, 0.5, (200, 2)), rng.normal([2, 1], [1.0, 0.3], (300, 2))])
    ours = fit_mixture_prior(X, np.zeros_like(X), 2, random_state=0, tol=1e-12, max_iter=2000)
    theirs = GaussianMixture(2, reg_covar=1e-3, tol=1e-12, max_iter=2000, means_init=ours.means).fit(X)
    np.testing.assert_allclose(ours.weights, theirs.weights_, atol=1e-6)
    np.testing.assert_allclose(ours.means, theirs.means_, atol=1e-5)
    np.testing.assert_allclose(ours.covariances, theirs.covariances_, atol=1e-5)


def test_one_deconvolution_step_matches_the_textbook_update_row_by_row():
    """One EM step (exact dimensions conditioned on, one triangular inverse per row and component) against Bovy et
    al.'s update written out in NumPy a row and a component at a time on the full d-square T_ik = Sigma_k + V_i."""
    from gpal.models.input_prior import _deconvolution_step

    rng = np.random.default_rng(5)
    n, d, K, e = 40, 4, 3, 1  # the first e dimensions exact
    X = rng.normal(size=(n, d))
    V = rng.uniform(0.05, 0.5, (n, d))
    V[:, :e] = 0.0
    weights = np.array([0.2, 0.5, 0.3])
    means = rng.normal(size=(K, d))
    covs = np.stack([a @ a.T + np.eye(d) for a in rng.normal(size=(K, d, d))])
    reg = 1e-3
    V_diag = tf.linalg.diag(tf.constant(V[:, e:]))
    state = [tf.constant(a) for a in (weights, means, covs)]
    got = [a.numpy() for a in _deconvolution_step(tf.constant(X), V_diag, *state, tf.constant(reg, tf.float64))]
    log_p, b, Bcov = np.zeros((n, K)), np.zeros((n, K, d)), np.zeros((n, K, d, d))
    for i in range(n):
        for k in range(K):
            T = covs[k] + np.diag(V[i])
            log_p[i, k] = np.log(weights[k]) + stats.multivariate_normal(means[k], T).logpdf(X[i])
            gain = covs[k] @ np.linalg.inv(T)
            b[i, k] = means[k] + gain @ (X[i] - means[k])
            Bcov[i, k] = covs[k] - gain @ covs[k]
    total = np.logaddexp.reduce(log_p, axis=1)
    r = np.exp(log_p - total[:, None])
    Nk = r.sum(0)
    new_means = np.einsum("nk,nkd->kd", r, b) / Nk[:, None]
    centred = b - new_means[None]
    new_covs = (np.einsum("nk,nkd,nke->kde", r, centred, centred) + np.einsum("nk,nkde->kde", r, Bcov)) / Nk[:, None,
                                                                                                            None]
    new_covs += reg * np.eye(d)
    np.testing.assert_allclose(got[0], Nk / n, rtol=1e-10)
    np.testing.assert_allclose(got[1], new_means, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(got[2], new_covs, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(got[3], total.mean(), rtol=1e-12)


def test_deconvolution_recovers_the_noiseless_spread():
    """One Gaussian observed through heteroscedastic noise: XD's variance is the true one, not the blurred one."""
    rng = np.random.default_rng(1)
    x = rng.normal(0.5, 0.4, (4000, 1))
    V = rng.uniform(0.05, 1.0, x.shape)
    observed = x + np.sqrt(V) * rng.normal(size=x.shape)
    prior = fit_mixture_prior(observed, V, 1, reg_covar=1e-6, tol=1e-9, max_iter=2000)  # the converged fixed point
    assert observed.var() > 0.6  # what a fit that ignores the errors would report
    np.testing.assert_allclose(prior.covariances[0, 0, 0], 0.16, rtol=0.1)
    np.testing.assert_allclose(prior.means[0, 0], 0.5, atol=0.03)


def test_deconvolution_conditions_on_exact_dimensions_as_the_limit_of_tiny_errors():
    """Dimensions exact in every row take the conditioned (Schur-complement) path; error bars of 1e-12 there take
    the general one: both must give the same mixture, exact dimensions in any position."""
    rng = np.random.default_rng(2)
    X = np.concatenate([rng.normal(-1, 0.6, (150, 4)), rng.normal([1, 0, 2, -1], 0.8, (150, 4))])
    X[:, 1] += 0.5 * X[:, 3]  # correlated across the exact / noisy split
    V = rng.uniform(0.02, 0.6, X.shape)
    V[:, [0, 2]] = 0.0
    V[:5, 3] = 0.0  # a noisy dimension with one exact row is not an exact dimension
    exact = fit_mixture_prior(X, V, 2, random_state=0, max_iter=15, tol=0.0)
    tiny_V = V.copy()
    tiny_V[:, [0, 2]] = 1e-12
    tiny = fit_mixture_prior(X, tiny_V, 2, random_state=0, max_iter=15, tol=0.0)
    np.testing.assert_allclose(exact.weights, tiny.weights, atol=1e-8)
    np.testing.assert_allclose(exact.means, tiny.means, atol=1e-8)
    np.testing.assert_allclose(exact.covariances, tiny.covariances, atol=1e-8)


def test_deconvolution_repeated_on_the_same_inputs_runs_once(monkeypatch):
    """The main job fits the model's prior and the outlier density on the same rows: the second fit is the first's."""
    import gpal.models.input_prior as input_prior

    runs = []
    real = input_prior._deconvolve
    monkeypatch.setattr(input_prior, "_deconvolve", lambda *a: runs.append(a) or real(*a))
    monkeypatch.setattr(input_prior, "_FITTED", type(input_prior._FITTED)())
    rng = np.random.default_rng(2)
    X = np.concatenate([rng.normal(-2, 0.5, (100, 2)), rng.normal(2, 0.5, (100, 2))])
    V = rng.uniform(0.01, 0.1, X.shape)
    first = fit_mixture_prior(X, V, 2)
    second = fit_mixture_prior(X.copy(), V.copy(), 2)
    assert len(runs) == 1
    for a, b in zip((first.weights, first.means, first.covariances), (second.weights, second.means, second.covariances)):
        np.testing.assert_array_equal(a, b)
        assert a is not b  # each caller owns its arrays
    moved = X.copy()
    moved[0, 0] += 1e-9  # any other input, seed or setting is a new fit
    fit_mixture_prior(moved, V, 2)
    fit_mixture_prior(X, V, 2, random_state=1)
    fit_mixture_prior(X, V, 2, tol=1e-3)
    assert len(runs) == 4


def test_deconvolution_asked_in_two_threads_at_once_runs_once(monkeypatch):
    """The main job asks for the same fit from the model's thread and the outlier score's at once: one EM runs, and
    the thread that asked second gets its result."""
    import threading
    import time

    import gpal.models.input_prior as input_prior

    runs = []
    real = input_prior._deconvolve

    def slow(*a):
        runs.append(a)
        time.sleep(0.3)  # the second thread asks while the first is still fitting
        return real(*a)

    monkeypatch.setattr(input_prior, "_deconvolve", slow)
    monkeypatch.setattr(input_prior, "_FITTED", type(input_prior._FITTED)())
    rng = np.random.default_rng(3)
    X = np.concatenate([rng.normal(-2, 0.5, (100, 2)), rng.normal(2, 0.5, (100, 2))])
    V = rng.uniform(0.01, 0.1, X.shape)
    fitted = [None, None]
    threads = [threading.Thread(target=lambda k=k: fitted.__setitem__(k, fit_mixture_prior(X, V, 2))) for k in (0, 1)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(runs) == 1
    np.testing.assert_array_equal(fitted[0].means, fitted[1].means)
    assert not input_prior._FITTING  # nothing left waiting


@pytest.mark.parametrize("x_obs,V", [(0.7, 0.8), (-3.0, 0.1), (5.0, 4.0)])
def test_mixture_posterior_moments_match_quadrature(x_obs, V):
    mean, var = (t.numpy()[0, 0] for t in PRIOR_1D.posterior(_t([[x_obs]]), _t([[V]])))
    ref_mean, ref_var = _posterior_moments_by_quadrature(x_obs, V)
    np.testing.assert_allclose([mean, var], [ref_mean, ref_var], rtol=1e-6)


def test_mixture_posterior_draws_match_quadrature_and_keep_exact_dimensions():
    """Monte Carlo draws of p(x | x~) against the quadrature moments; an exact feature stays at x~."""
    prior = MixturePrior([0.3, 0.7], [[-1.0, 0.0], [2.0, 0.0]], [[[0.5, 0.0], [0.0, 1.0]], [[1.5, 0.0], [0.0, 1.0]]])
    rng = np.random.default_rng(2)
    S = 100_000
    noise, uniform = _t(rng.normal(size=(S, 1, 2))), _t(rng.uniform(size=(S, 1)))
    draws = prior.sample(_t([[0.7, 0.3]]), _t([[0.8, 0.0]]), noise, uniform).numpy()[:, 0]
    ref_mean, ref_var = _posterior_moments_by_quadrature(0.7, 0.8)
    assert abs(draws[:, 0].mean() - ref_mean) < 4 * np.sqrt(ref_var / S)
    assert abs(draws[:, 0].var() / ref_var - 1) < 4 * np.sqrt(2 / S)
    assert np.all(draws[:, 1] == 0.3)


def test_mixture_log_density_and_kl_estimate():
    x = np.array([[-0.4], [3.1]])
    np.testing.assert_allclose(PRIOR_1D.log_prob(_t(x)).numpy(), np.log(_prior_pdf(x[:, 0])), rtol=1e-12)
    # E over reparameterised draws of the one-draw estimate = -KL(q || p), by quadrature
    q_mean, q_var = 0.4, 0.3
    rng = np.random.default_rng(3)
    draws = q_mean + np.sqrt(q_var) * rng.normal(size=(200_000, 1))
    noisy = tf.ones((draws.shape[0], 1), tf.bool)
    estimate = PRIOR_1D.neg_kl(_t(np.full_like(draws, q_mean)), _t(np.full_like(draws, q_var)), _t(draws), noisy).numpy()
    q = stats.norm(q_mean, np.sqrt(q_var))
    kl = integrate.quad(lambda x: q.pdf(x) * (q.logpdf(x) - np.log(_prior_pdf(x))), -10, 10)[0]
    assert abs(estimate.mean() + kl) < 4 * estimate.std() / np.sqrt(estimate.size)


def test_prior_config_round_trip_and_bad_values():
    again = prior_from_config(PRIOR_1D.get_config())
    np.testing.assert_array_equal(again.covariances, PRIOR_1D.covariances)
    assert prior_from_config(BroadPrior(10.0).get_config()).variance == 10.0
    with pytest.raises(ValueError, match="sum to 1"):
        MixturePrior([0.5, 0.6], [[0.0], [1.0]], [[[1.0]], [[1.0]]])
    with pytest.raises(ValueError, match="positive definite"):
        MixturePrior([1.0], [[0.0, 0.0]], [[[1.0, 2.0], [2.0, 1.0]]])
    with pytest.raises(ValueError, match="unknown input prior"):
        prior_from_config({"kind": "flat"})


def test_too_few_rows_for_the_mixture_is_refused_before_training():
    X = np.random.default_rng(4).normal(size=(30, 2))
    with pytest.raises(ValueError, match=r"needs at least 10 training rows per component \(80\); got 30 rows"):
        fit_mixture_prior(X, np.full_like(X, 0.1), 8)


def test_population_prior_needs_measured_variances_and_is_ignored_without_latent_inputs():
    X = np.random.default_rng(5).normal(size=(40, 2))
    y = np.arange(40) % 2
    with pytest.raises(ValueError, match="input_prior='population' is fitted with the measured variances"):
        NoisyGPClassifier(input_prior="population", input_noise="latent", noise_variance="learned").fit(X, y)
    mgp = NoisyGPClassifier(input_prior="population", input_noise="none", num_inducing=5, epochs=1).fit(X, y)
    assert mgp.model_.structure()["strategy"] == {"name": "none"}


def test_population_prior_trains_saves_and_predicts_the_same(tmp_path):
    from gpal.data.synthetic import toy_1d_heteroscedastic

    problem = toy_1d_heteroscedastic(n_train=120, n_test=60, seed=2)
    clf = NoisyGPClassifier(input_noise="latent", input_prior="population", prior_components=3, num_inducing=10,
                            epochs=5, n_samples=50, random_state=0).fit(problem.train)
    assert isinstance(clf.model_.strategy.prior, MixturePrior)
    proba = clf.predict_proba(problem.test)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    clf.save(tmp_path / "m")
    again = NoisyGPClassifier.load(tmp_path / "m")
    np.testing.assert_allclose(again.predict_proba(problem.test), proba, rtol=1e-6, atol=1e-9)
    # one row's probability does not depend on what is predicted with it (shared draws)
    np.testing.assert_allclose(clf.predict_proba(problem.test.subset([5])), proba[5:6], rtol=1e-6, atol=1e-9)


def test_unlabelled_inputs_shape_the_population_prior_only():
    """Sources without labels join the prior's fit (their inputs pull a component over), and nothing else."""
    rng = np.random.default_rng(6)
    X = rng.normal(0.0, 1.0, (60, 1))
    y = (X[:, 0] > 0).astype(int)
    V = np.full_like(X, 0.05)
    far = rng.normal(6.0, 0.3, (200, 1))
    settings = dict(input_noise="latent", input_prior="population", prior_components=2, num_inducing=5, epochs=1,
                    random_state=0)
    alone = NoisyGPClassifier(**settings).fit(X, y, V).model_.strategy.prior
    joint = NoisyGPClassifier(**settings).fit(X, y, V, unlabelled=(far, np.full_like(far, 0.05))).model_.strategy.prior
    scale = X.std()
    assert alone.means.max() * scale < 2.5
    assert joint.means.max() * scale > 5.0  # a component sits on the unlabelled sources (standardised units)
    with pytest.raises(ValueError, match="unlabelled inputs shape the population prior only"):
        NoisyGPClassifier(input_noise="latent", epochs=1).fit(X, y, V, unlabelled=(far, far * 0))
    with pytest.raises(ValueError, match="unlabelled inputs shape the population prior only"):
        NoisyGPClassifier(input_noise="none", input_prior="population", epochs=1).fit(X, y, V, unlabelled=(far, far * 0))
    with pytest.raises(ValueError, match="X has 2 features"):
        NoisyGPClassifier(**settings).fit(X, y, V, unlabelled=(np.zeros((5, 2)), np.zeros((5, 2))))


def test_mixture_log_density_in_several_dimensions_matches_scipy():
    """The whitened-product form of log p_pop against scipy's densities, with correlated components."""
    rng = np.random.default_rng(11)
    A = rng.normal(size=(3, 4, 4))
    covs = A @ A.transpose(0, 2, 1) + 0.1 * np.eye(4)
    means = rng.normal(size=(3, 4))
    weights = np.array([0.2, 0.5, 0.3])
    x = rng.normal(size=(7, 4)) * 2
    expected = np.log(sum(w * stats.multivariate_normal(m, c).pdf(x) for w, m, c in zip(weights, means, covs)))
    np.testing.assert_allclose(MixturePrior(weights, means, covs).log_prob(_t(x)).numpy(), expected, rtol=1e-10)


def test_trainer_reads_the_rows_base_from_its_table_with_the_same_elbo():
    """A step gathers each row's p(x_i | x~_i) from the table computed once per fit: the ELBO is the one
    computed from the batch itself, row for row (so the table is neither stale nor shuffled)."""
    from gpal.models.svgp import build_model
    from gpal.training.svi import TrainData, Trainer

    rng = np.random.default_rng(12)
    X = rng.normal(size=(90, 3))
    X_var = rng.uniform(0.01, 0.5, size=X.shape) * (np.arange(3) != 1)  # one exact dimension
    y = (X[:, 0] > 0).astype(np.int64)
    model = build_model(X, y, num_classes=2, input_noise="latent", input_prior="population", prior_components=3,
                        num_inducing=6, X_var=X_var, seed=0)
    trainer = Trainer(model, seed=0)
    data = TrainData.from_arrays(X, X_var, y)
    trainer.fit(data, epochs=1, batch_size=30, learning_rate=0.01, progress=False)
    idx = tf.constant([5, 71, 0, 33], tf.int64)
    seed = tf.constant([1, 2], tf.int64)
    batch = [tf.gather(t, idx) for t in (data.X, data.X_var, data.y)]
    from_table = model.elbo(*batch, idx, seed, base=tuple(tf.gather(t, idx) for t in trainer.base))
    np.testing.assert_allclose(from_table.numpy(), model.elbo(*batch, idx, seed).numpy(), rtol=1e-12)
    # the table follows the data of the latest fit
    model.strategy.restart(60)
    trainer.fit(TrainData.from_arrays(X[:60], X_var[:60], y[:60]), epochs=1, batch_size=30, learning_rate=0.01, progress=False)
    assert int(tf.shape(trainer.base[0])[0]) == 60

"""Dirichlet-based GP classification (paper 003): maths against independent computations, estimator contract."""

import gpflow
import numpy as np
import pytest
from sklearn.exceptions import NotFittedError
import tensorflow as tf
from scipy.stats import multivariate_normal
from sklearn.datasets import make_classification

from gpal.data.dataset import NoisyDataset
from gpal.estimators.dirichlet import DirichletGPClassifier
from gpal.models.families.dirichlet import (
    HeteroskedasticSGPR,
    class_frequency_offset,
    collapsed_bound,
    dirichlet_targets,
    lognormal_moment_match,
    mc_softmax,
)

FAST = dict(num_inducing=12, max_iter=40, n_samples=300, progress=False)


def _problem(n, seed, n_classes=3, n_features=4):
    X, y = make_classification(
        n_samples=n, n_features=n_features, n_informative=3, n_redundant=0, n_classes=n_classes,
        n_clusters_per_class=1, class_sep=2.0, random_state=seed,
    )
    return X, y


# ------------------------------------------------------------ label transform
@pytest.mark.parametrize("alpha", [0.001, 0.01, 0.5, 1.01, 3.0])
def test_moment_match_reproduces_gamma_mean_and_variance_analytically(alpha):
    mu, s2 = lognormal_moment_match(alpha)
    mean = np.exp(mu + s2 / 2)
    var = (np.exp(s2) - 1) * np.exp(2 * mu + s2)
    assert mean == pytest.approx(alpha, rel=1e-12)  # Gamma(alpha, 1): mean = alpha
    assert var == pytest.approx(alpha, rel=1e-12)  # and variance = alpha


@pytest.mark.parametrize("alpha", [0.5, 1.01, 3.0])
def test_moment_match_by_monte_carlo(alpha):
    rng = np.random.default_rng(7)
    mu, s2 = lognormal_moment_match(alpha)
    lognormal = np.exp(mu + np.sqrt(s2) * rng.standard_normal(1_000_000))
    gamma = rng.gamma(alpha, 1.0, 1_000_000)
    assert lognormal.mean() == pytest.approx(gamma.mean(), rel=0.01)
    assert lognormal.var() == pytest.approx(gamma.var(), rel=0.04)


def test_dirichlet_targets_follow_eq_6_and_the_small_alpha_limit():
    Y, s2 = dirichlet_targets(np.array([2, 0]), 3, 0.01)
    assert Y.shape == s2.shape == (2, 3)
    assert s2[0, 2] == pytest.approx(np.log(1 / 1.01 + 1)) and Y[0, 2] == pytest.approx(np.log(1.01) - s2[0, 2] / 2)
    assert s2[0, 0] == pytest.approx(np.log(101)) and Y[1, 1] == Y[0, 0]
    Y, s2 = dirichlet_targets(np.array([1]), 2, 1e-12)  # sec. 4.2: "1" labels tend to log 2 and log(1/sqrt 2)
    assert s2[0, 1] == pytest.approx(np.log(2)) and Y[0, 1] == pytest.approx(np.log(1 / np.sqrt(2)))
    with pytest.raises(ValueError, match="alpha_epsilon must be > 0"):
        dirichlet_targets(np.array([0, 1]), 2, 0.0)


# --------------------------------------------------------- collapsed bound
@pytest.fixture(scope="module")
def regression():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(25, 2))
    Y, s2 = dirichlet_targets(rng.integers(0, 3, 25), 3, 0.05)
    kernel = gpflow.kernels.SquaredExponential(variance=2.0, lengthscales=np.array([0.7, 1.3]))
    return X, Y, s2, kernel


def _exact_log_marginal(kernel, X, Y, s2):
    K = kernel(X).numpy()
    return sum(multivariate_normal(np.zeros(len(X)), K + np.diag(s2[:, c])).logpdf(Y[:, c]) for c in range(Y.shape[1]))


def _bound(kernel, Z, X, Y, s2, jitter):
    return float(collapsed_bound(kernel, *(tf.constant(a) for a in (Z, X, Y, s2)), jitter))


def test_bound_is_exact_heteroskedastic_marginal_likelihood_when_Z_is_X(regression):
    X, Y, s2, kernel = regression
    assert _bound(kernel, X, X, Y, s2, 1e-12) == pytest.approx(_exact_log_marginal(kernel, X, Y, s2), abs=1e-6)


def test_bound_is_below_exact_with_fewer_inducing_points(regression):
    X, Y, s2, kernel = regression
    exact = _exact_log_marginal(kernel, X, Y, s2)
    rng = np.random.default_rng(1)
    for M in (3, 8, 15):
        assert _bound(kernel, rng.normal(size=(M, 2)), X, Y, s2, 1e-8) < exact


def test_bound_with_constant_noise_matches_gpflow_sgpr(regression):
    X, Y, _, kernel = regression
    Z = X[::3]
    sgpr = gpflow.models.SGPR((X, Y[:, :1]), kernel, Z, noise_variance=0.3)
    ours = _bound(kernel, Z, X, Y[:, :1], np.full((len(X), 1), 0.3), gpflow.config.default_jitter())
    assert ours == pytest.approx(float(sgpr.elbo()), rel=1e-9)


def test_predictive_marginals_match_dense_gp_posterior(regression):
    X, Y, s2, kernel = regression
    post = HeteroskedasticSGPR(kernel, X, X, Y, s2, jitter=1e-12).posterior()
    Xs = np.random.default_rng(2).normal(size=(6, 2))
    mean, var = post.predict(Xs)
    K, Ks, kss = kernel(X).numpy(), kernel(Xs, X).numpy(), kernel(Xs, full_cov=False).numpy()
    for c in range(3):
        Kc = K + np.diag(s2[:, c])
        np.testing.assert_allclose(mean[:, c], Ks @ np.linalg.solve(Kc, Y[:, c]), atol=1e-8)
        np.testing.assert_allclose(var[:, c], kss - np.einsum("ij,ji->i", Ks, np.linalg.solve(Kc, Ks.T)), atol=1e-8)
    np.testing.assert_allclose(np.hstack(post.predict(Xs, rows=4)), np.hstack([mean, var]), rtol=1e-12)  # chunked


def test_first_order_extra_variance_matches_finite_differences(regression):
    X, Y, s2, kernel = regression
    post = HeteroskedasticSGPR(kernel, X[::2], X, Y, s2).posterior()
    rng = np.random.default_rng(3)
    Xs, V = rng.normal(size=(5, 2)), rng.uniform(0.01, 0.2, size=(5, 2))
    h = 1e-5
    slopes = np.stack([(post.predict(Xs + h * e)[0] - post.predict(Xs - h * e)[0]) / (2 * h) for e in np.eye(2)], -1)
    expected = np.einsum("ncd,nd->nc", slopes**2, V)  # grad mu_c^T diag(V) grad mu_c
    got = post.extra_variance(tf.constant(Xs), tf.constant(V)).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-12)
    assert np.all(got > 0)
    np.testing.assert_allclose(post.predict(Xs, V)[1] - post.predict(Xs)[1], got, rtol=1e-12)


def test_mc_softmax_is_seeded_normalised_and_exact_without_variance():
    rng = np.random.default_rng(4)
    mean, var = rng.normal(size=(7, 3)), rng.uniform(0.1, 2.0, size=(7, 3))
    p = mc_softmax(mean, var, 500, [0, 1])
    np.testing.assert_allclose(p.sum(axis=1), 1.0, rtol=1e-12)
    np.testing.assert_array_equal(p, mc_softmax(mean, var, 500, [0, 1]))
    np.testing.assert_array_equal(p[2:4], mc_softmax(mean[2:4], var[2:4], 500, [0, 1]))  # rows don't interact
    e = np.exp(mean)
    np.testing.assert_allclose(mc_softmax(mean, np.zeros_like(var), 10, 0), e / e.sum(1, keepdims=True), rtol=1e-12)


# ------------------------------------------------------------------ estimator
@pytest.fixture(scope="module")
def three_class():
    X, y = _problem(240, seed=0)
    return X[:160], y[:160], X[160:], y[160:]


@pytest.fixture(scope="module")
def fitted(three_class):
    X, y, _, _ = three_class
    return DirichletGPClassifier(alpha_epsilon=0.01, **FAST).fit(X, y)


def test_three_class_accuracy_and_normalised_probabilities(three_class, fitted):
    _, _, Xt, yt = three_class
    p = fitted.predict_proba(Xt)
    assert p.shape == (len(Xt), 3)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, rtol=1e-12)
    assert fitted.score(Xt, yt) > 0.85
    assert fitted.alpha_epsilon_ == 0.01 and len(fitted.history_) == 1 and fitted.n_features_in_ == 4


def test_alpha_selection_picks_lowest_training_mnll():
    X, y = _problem(45, seed=1)
    grid = (0.3, 0.01, 0.001)
    kw = dict(FAST, num_inducing=6, max_iter=10)
    clf = DirichletGPClassifier(alpha_grid=grid, **kw).fit(X, y)
    mnll = []
    for a in grid:  # each candidate refitted alone; training MNLL computed here, independently
        p = DirichletGPClassifier(alpha_epsilon=a, **kw).fit(X, y).predict_proba(X)
        mnll.append(-np.mean(np.log(p[np.arange(len(y)), y])))
    np.testing.assert_allclose([h["train_mnll"] for h in clf.history_], mnll, rtol=1e-10)
    assert clf.alpha_epsilon_ == grid[int(np.argmin(mnll))]
    assert len(set(np.round(mnll, 6))) == 3  # the choice is not a tie


def test_default_grid_is_the_papers():
    assert DirichletGPClassifier().alpha_grid == (0.1, 0.01, 0.001)


@pytest.fixture(scope="module")
def first_order(three_class):
    X, y, _, _ = three_class
    clf = DirichletGPClassifier(alpha_epsilon=0.1, input_noise="first_order", first_order_rounds=1, **FAST)
    return clf.fit(X[:90], y[:90].astype(str), X_var=np.full_like(X[:90], 0.1))


def test_save_load_gives_identical_predictions(tmp_path, three_class, first_order):
    Xt, Vt = three_class[2], np.full_like(three_class[2], 0.05)
    first_order.save(tmp_path / "gpd")
    first_order.save(tmp_path / "gpd")  # overwriting is atomic and allowed
    again = DirichletGPClassifier.load(tmp_path / "gpd")
    np.testing.assert_array_equal(again.predict_proba(Xt, Vt), first_order.predict_proba(Xt, Vt))
    np.testing.assert_array_equal(again.classes_, first_order.classes_)
    assert again.get_params() == first_order.get_params() and again.alpha_epsilon_ == 0.1
    assert again.history_ == first_order.history_
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "config.json").write_text('{"format": "x"}')
    with pytest.raises(ValueError, match="not a gpal.DirichletGPClassifier v2 model"):
        DirichletGPClassifier.load(tmp_path / "other")


def test_first_order_noise_makes_predictions_less_confident(three_class, first_order):
    Xt = three_class[2]
    assert [len(h["rounds"]) for h in first_order.history_] == [2]  # fit + one refit with extra noise
    assert list(first_order.classes_) == ["0", "1", "2"]
    exact = first_order.predictive_entropy(Xt, np.zeros_like(Xt))
    noisy = first_order.predictive_entropy(Xt, np.full_like(Xt, 1.0))
    assert np.all(noisy >= exact - 1e-3) and noisy.mean() > exact.mean() + 0.05


def test_string_labels_noisy_dataset_and_custom_kernel(tmp_path, three_class):
    X, y, Xt, yt = three_class
    names = np.array(["bll", "fsrq", "psr"])
    kernel = gpflow.kernels.Matern32(variance=3.0, lengthscales=2.0)
    kw = dict(FAST, alpha_epsilon=0.01, kernel=kernel, max_iter=25)
    clf = DirichletGPClassifier(**kw).fit(X[:90], names[y[:90]])
    assert list(clf.classes_) == ["bll", "fsrq", "psr"]
    assert set(clf.predict(Xt)) <= set(names) and clf.score(Xt, names[yt]) > 0.8
    assert kernel.variance.numpy() == 3.0  # fit trains a copy, never the kernel passed in
    ds = NoisyDataset(X[:90], None, y[:90], tuple(names), ("a", "b", "c", "d"), None)
    from_ds = DirichletGPClassifier(**kw).fit(ds)
    assert list(from_ds.classes_) == list(names)
    np.testing.assert_allclose(from_ds.predict_proba(Xt), clf.predict_proba(Xt), atol=1e-8)
    clf.save(tmp_path / "m32")
    again = DirichletGPClassifier.load(tmp_path / "m32")
    assert isinstance(again.kernel, gpflow.kernels.Matern32) and again.kernel.variance.numpy() == pytest.approx(3.0)
    np.testing.assert_array_equal(again.predict(Xt), clf.predict(Xt))
    np.testing.assert_array_equal(again.predict_proba(Xt), clf.predict_proba(Xt))


@pytest.mark.parametrize(
    "params, message",
    [
        (dict(alpha_epsilon=0.0), r"alpha_epsilon must be None or a finite number > 0 \(a Dirichlet pseudo-count\)"),
        (dict(alpha_epsilon=-0.1), r"alpha_epsilon must be None or a finite number > 0 \(a Dirichlet pseudo-count\)"),
        (dict(alpha_epsilon=float("nan")), r"alpha_epsilon must be None or a finite number > 0 \(a Dirichlet pseudo-count\)"),
        (dict(alpha_grid=()), "alpha_grid must be a non-empty"),
        (dict(alpha_grid=(0.1, 0.0)), r"alpha_grid must be a non-empty sequence of numbers > 0"),
        (dict(input_noise="latent"), r"input_noise must be one of \['none', 'first_order'\]; got 'latent'"),
        (dict(num_inducing=0), "num_inducing must be an integer >= 1"),
    ],
)
def test_bad_parameters_are_named(params, message):
    with pytest.raises(ValueError, match=message):
        DirichletGPClassifier(**params).fit(np.zeros((4, 1)), [0, 1, 0, 1])


def test_first_order_needs_variances_and_other_bad_calls(fitted, first_order, three_class):
    X, y, Xt, _ = three_class
    with pytest.raises(ValueError, match="input_noise='first_order'.*fit needs X_var"):
        DirichletGPClassifier(input_noise="first_order").fit(X, y)
    with pytest.raises(ValueError, match="input_noise='first_order'.*predict needs X_var"):
        first_order.predict_proba(Xt)
    with pytest.raises(NotFittedError, match="not fitted"):
        DirichletGPClassifier().predict_proba(Xt)
    with pytest.raises(ValueError, match="has 3 features"):
        fitted.predict_proba(Xt[:, :3])


# ------------------------------------------------- the authors' choices (dirichletGPC)
def test_class_frequency_offset_gives_the_class_prior_and_zero_mean_targets():
    codes = np.array([0, 0, 0, 0, 0, 0, 1, 1, 2, 2])
    Y, _ = dirichlet_targets(codes, 3, 0.01)
    m = class_frequency_offset(Y, codes, 3)
    e = np.exp(m)
    np.testing.assert_allclose(e / e.sum(), [0.6, 0.2, 0.2], rtol=1e-12)  # softmax(m) = frequencies
    assert np.mean(Y - m) == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(ValueError, match="every class needs a training row"):
        class_frequency_offset(Y, codes, 4)


def test_offset_posterior_matches_dense_gp_with_that_prior_mean(regression):
    X, Y, s2, kernel = regression
    m = np.array([0.3, -1.2, 0.5])
    post = HeteroskedasticSGPR(kernel, X, X, Y - m, s2, jitter=1e-12).posterior(m)
    Xs = np.vstack([np.random.default_rng(5).normal(size=(4, 2)), [[60.0, -60.0]]])  # the last far from the data
    mean, _ = post.predict(Xs)
    K, Ks = kernel(X).numpy(), kernel(Xs, X).numpy()
    for c in range(3):  # GP regression with constant prior mean m_c, computed densely
        np.testing.assert_allclose(mean[:, c], m[c] + Ks @ np.linalg.solve(K + np.diag(s2[:, c]), Y[:, c] - m[c]),
                                   atol=1e-8)
    np.testing.assert_allclose(mean[-1], m, atol=1e-12)


@pytest.fixture(scope="module")
def imbalanced():
    X, y = _problem(120, seed=3)
    keep = np.concatenate([np.flatnonzero(y == 0), np.flatnonzero(y == 1)[:20], np.flatnonzero(y == 2)[:10]])
    return X[keep], y[keep]


def test_far_from_data_the_authors_prior_mean_returns_the_class_frequencies(imbalanced):
    X, y = imbalanced
    kw = dict(FAST, alpha_epsilon=0.01, max_iter=20)
    authors = DirichletGPClassifier(prior_mean="class_frequency", **kw).fit(X, y)
    gpal = DirichletGPClassifier(**kw).fit(X, y)
    far = np.full((1, X.shape[1]), 1e3)
    mean, _ = authors.posterior_.predict(authors.standardizer_.transform_arrays(far, None)[0])
    e = np.exp(mean[0])
    np.testing.assert_allclose(e / e.sum(), np.bincount(y) / len(y), rtol=1e-9)
    np.testing.assert_allclose(gpal.posterior_.predict(gpal.standardizer_.transform_arrays(far, None)[0])[0], 0.0,
                               atol=1e-12)
    authors.set_params(n_samples=20000), gpal.set_params(n_samples=20000)  # Monte Carlo error well below 0.01
    p_authors, p_gpal = authors.predict_proba(far)[0], gpal.predict_proba(far)[0]
    assert np.argsort(p_authors).tolist() == np.argsort(np.bincount(y)).tolist()  # the class prior's order
    np.testing.assert_allclose(p_gpal, 1 / 3, atol=0.01)  # gpal's zero mean: uniform


def test_variance_start_is_the_targets_variance(imbalanced, monkeypatch):
    import gpal.training.collapsed as collapsed

    X, y = imbalanced
    seen = []

    def record_start(model, max_iter):
        seen.append((float(model.kernel.variance.numpy()), float(np.var(model.Y.numpy()))))
        return collapsed.OptimizeResult(fun=0.0, nit=0, success=True)

    monkeypatch.setattr(collapsed, "maximize_bound", record_start)
    DirichletGPClassifier(variance_start="targets", prior_mean="class_frequency", alpha_epsilon=0.01, **FAST).fit(X, y)
    DirichletGPClassifier(alpha_epsilon=0.01, **FAST).fit(X, y)
    (authors, targets_var), (gpal, _) = seen
    Y, _ = dirichlet_targets(y, 3, 0.01)
    assert authors == pytest.approx(targets_var) == pytest.approx(np.var(Y - class_frequency_offset(Y, y, 3)))
    assert gpal == 1.0


def test_fixed_inducing_inputs_isotropic_kernel_and_save_load(tmp_path, imbalanced):
    X, y = imbalanced
    kw = dict(FAST, alpha_epsilon=0.01, max_iter=15)
    fixed = DirichletGPClassifier(train_inducing=False, kernel="se_iso", prior_mean="class_frequency", **kw).fit(X, y)
    trained = DirichletGPClassifier(**kw).fit(X, y)
    from gpal.models.svgp import kmeans_inducing

    start = kmeans_inducing(fixed.standardizer_.transform_arrays(X, None)[0], 12, 0)
    np.testing.assert_array_equal(fixed.posterior_.Z.numpy(), start)
    assert not np.allclose(trained.posterior_.Z.numpy(), start)
    assert np.shape(fixed.posterior_.kernel.lengthscales.numpy()) == ()  # one length scale
    fixed.save(tmp_path / "authors")
    again = DirichletGPClassifier.load(tmp_path / "authors")
    assert again.get_params() == fixed.get_params()
    np.testing.assert_array_equal(again.predict_proba(X[:5]), fixed.predict_proba(X[:5]))
    with pytest.raises(ValueError, match=r"prior_mean must be one of \['zero', 'class_frequency'\]"):
        DirichletGPClassifier(prior_mean="frequency").fit(X, y)
    with pytest.raises(ValueError, match="variance_start='targets' sets the kernel's variance"):
        DirichletGPClassifier(variance_start="targets", kernel="se_ard_plus_noise", **kw).fit(X, y)

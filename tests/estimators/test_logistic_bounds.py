"""vi-JJ / vi-JJ-full / vi-JJ-hybrid / vi-Taylor (paper 002): the maths against independent computations, and the estimator."""

import json
import warnings

import gpflow
import numpy as np
import pytest
from sklearn.exceptions import NotFittedError
import tensorflow as tf
from scipy import integrate
from scipy.special import expit, log_expit

from gpal.data.dataset import NoisyDataset
from gpal.estimators.logistic_bound import LogisticBoundGPClassifier
from gpal.models.families.logistic_bounds import (
    LogisticBoundGP,
    WhitenedQ,
    collapsed_bound,
    expected_log_sigmoid,
    expected_quadratic,
    jj_coefficients,
    marginals,
    optimal_q,
    predictive_probability,
    quadrature_elbo,
    surrogate_elbo,
    taylor_coefficients,
)
from gpal.training.bounds import BoundOptimizer

T = lambda a: tf.constant(np.asarray(a, dtype=np.float64))  # noqa: E731


def gaussian_expectation(fn, mean, var):
    """int fn(f) N(f | mean, var) df by adaptive quadrature in the standardised variable (independent of Gauss-Hermite)."""
    sd = np.sqrt(var)
    return integrate.quad(lambda z: fn(mean + sd * z) * np.exp(-0.5 * z * z) / np.sqrt(2 * np.pi), -40, 40, epsabs=1e-13, epsrel=1e-12, limit=200)[0]


def problem(n=40, m=7, d=2, seed=0):
    """A small random model: data, labels in {-1, +1}, a kernel with non-unit hyperparameters, Z and a random q."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)
    kernel = gpflow.kernels.SquaredExponential(variance=1.7, lengthscales=np.array([0.8, 1.3])[:d])
    model = LogisticBoundGP(kernel, rng.normal(size=(m, d)))
    q = WhitenedQ(T(rng.normal(size=m)), T(np.tril(rng.normal(size=(m, m)) * 0.3) + np.eye(m) * 0.5))
    return X, y, model, q, rng


def dense_marginals(model, q, X):
    """Eq. (10) in the unwhitened parameters mu = L m_v, Sigma = L S L^T, with explicit inverses."""
    Z = model.Z.numpy()
    Kmm = model.kernel(Z).numpy() + model.jitter * np.eye(len(Z))
    Kmn = model.kernel(Z, X).numpy()
    L = np.linalg.cholesky(Kmm)
    mu, Sigma = L @ q.mean.numpy(), L @ q.sqrt.numpy() @ q.sqrt.numpy().T @ L.T
    Ki = np.linalg.inv(Kmm)
    mean = Kmn.T @ Ki @ mu
    var = model.kernel(X, full_cov=False).numpy() + np.einsum("in,ij,jn->n", Kmn, Ki @ (Sigma - Kmm) @ Ki, Kmn)
    kl = 0.5 * (np.linalg.slogdet(Kmm)[1] - np.linalg.slogdet(Sigma)[1] - len(Z) + np.trace(Ki @ Sigma) + mu @ Ki @ mu)
    return mean, var, kl, Kmm, Kmn


# ------------------------------------------------------------- one dimension
def test_jj_bound_lies_below_log_sigmoid_and_its_expectation():
    rng = np.random.default_rng(1)
    f = np.linspace(-12, 12, 2001)
    for xi in [0.0, 1e-4, 0.3, 1.0, 2.5, -4.0, 9.0]:
        for y in (-1.0, 1.0):
            g = expected_quadratic(jj_coefficients(T([xi]), T([y])), T(f), T(np.zeros_like(f))).numpy()
            assert np.all(g <= log_expit(y * f) + 1e-12)
            # tangent where t^2 = xi^2
            tight = expected_quadratic(jj_coefficients(T([xi, xi]), T([y, y])), T([xi, -xi]), T([0.0, 0.0])).numpy()
            np.testing.assert_allclose(tight, log_expit(y * np.array([xi, -xi])), rtol=0, atol=1e-12)
    # In expectation, for random marginals and any xi, and at the optimal xi of eq. (14) where it is closest.
    mean, var, y = rng.normal(0, 2, 30), rng.uniform(0.01, 6, 30), rng.choice([-1.0, 1.0], 30)
    exact = np.array([gaussian_expectation(lambda t, yy=yy: log_expit(yy * t), m, v) for m, v, yy in zip(mean, var, y)])
    best = np.sqrt(mean**2 + var)
    at_best = expected_quadratic(jj_coefficients(T(best), T(y)), T(mean), T(var)).numpy()
    assert np.all(at_best <= exact + 1e-10)
    for _ in range(5):
        xi = best + rng.normal(0, 1.0, 30)
        other = expected_quadratic(jj_coefficients(T(xi), T(y)), T(mean), T(var)).numpy()
        assert np.all(other <= at_best + 1e-12) and np.all(other <= exact + 1e-10)


def test_gauss_hermite_expectations_and_predictive_against_adaptive_quadrature():
    mean, var = np.array([-3.0, -0.5, 0.0, 1.2, 4.0]), np.array([0.01, 4.0, 9.0, 0.5, 2.0])
    y = np.array([1.0, -1.0, 1.0, 1.0, -1.0])
    want = [gaussian_expectation(lambda t, yy=yy: log_expit(yy * t), m, v) for m, v, yy in zip(mean, var, y)]
    np.testing.assert_allclose(expected_log_sigmoid(T(y), T(mean), T(var)).numpy(), want, rtol=1e-6)
    p = predictive_probability(T(mean), T(var)).numpy()
    np.testing.assert_allclose(p, [gaussian_expectation(expit, m, v) for m, v in zip(mean, var)], rtol=1e-8)
    assert abs(p[2] - 0.5) < 1e-12 and abs(p[1] - expit(-0.5)) > 0.02  # integrated, not the plug-in sigma(mean)


def test_taylor_expansion_matches_finite_differences_of_the_expected_log_likelihood():
    """Value, slope and curvature of E_q g at the expansion point are those of F(m, s) = E_N(m,s) log sigma(y f).

    The curvature check is the one a doubled psi fails: d^2F/dm^2 = -2 psi, dF/ds = -psi.
    """
    F = lambda m, s, y: gaussian_expectation(lambda t: log_expit(y * t), m, s) if s > 0 else log_expit(y * m)  # noqa: E731
    h = 1e-3
    for xi in [-2.3, -0.4, 0.0, 0.7, 3.1]:
        for y in (-1.0, 1.0):
            quad = taylor_coefficients(T([xi]), T([y]))
            c, b, w = (float(t.numpy()[0]) for t in quad)
            assert c + b * xi - w * xi**2 == pytest.approx(F(xi, 0, y), abs=1e-12)
            slope = (F(xi + h, 0, y) - F(xi - h, 0, y)) / (2 * h)
            curvature = (F(xi + h, 0, y) - 2 * F(xi, 0, y) + F(xi - h, 0, y)) / h**2
            assert b - 2 * w * xi == pytest.approx(slope, abs=1e-6)
            assert -2 * w == pytest.approx(curvature, abs=1e-5)
            s1, s2 = 1e-5, 2e-5  # F(m, s) = F(m, 0) + s F_mm / 2 + O(s^2)
            assert -w == pytest.approx((4 * F(xi, s1, y) - F(xi, s2, y) - 3 * F(xi, 0, y)) / (2 * s1), abs=1e-6)
    # At xi = 0 the Taylor quadratic and the Jaakkola-Jordan bound coincide (lambda(0) = psi(0) = 1/8).
    for a, b in zip(taylor_coefficients(T([0.0, 0.0]), T([1.0, -1.0])), jj_coefficients(T([0.0, 0.0]), T([1.0, -1.0]))):
        np.testing.assert_allclose(a.numpy(), b.numpy(), atol=1e-15)
    assert float(jj_coefficients(T([0.0]), T([1.0])).w[0]) == 0.125


# ------------------------------------------------------------ the GP bounds
def test_marginals_kl_and_jj_elbo_below_quadrature_elbo():
    X, y, model, q, rng = problem()
    proj = model.project(T(X))
    mean, var = marginals(proj, q)
    d_mean, d_var, d_kl, _, _ = dense_marginals(model, q, X)
    np.testing.assert_allclose(mean.numpy(), d_mean, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(var.numpy(), d_var, rtol=1e-6, atol=1e-9)
    exact = sum(gaussian_expectation(lambda t, yy=yy: log_expit(yy * t), m, v) for m, v, yy in zip(d_mean, d_var, y)) - d_kl
    elbo = float(quadrature_elbo(proj, q, T(y)))
    assert elbo == pytest.approx(exact, rel=1e-6)
    for xi in [np.sqrt(d_mean**2 + d_var), rng.uniform(0, 4, len(y))]:
        jj = float(surrogate_elbo(proj, q, jj_coefficients(T(xi), T(y))))
        assert jj < elbo


@pytest.mark.parametrize("kind", ["jj", "taylor"])
def test_analytic_q_is_the_optimum_and_matches_the_papers_formulas(kind):
    X, y, model, q, rng = problem(seed=2)
    proj = model.project(T(X))
    xi = rng.normal(0, 1.5, len(y))
    quad = (jj_coefficients if kind == "jj" else taylor_coefficients)(T(xi), T(y))
    q_hat = optimal_q(proj.A, quad)
    best = float(surrogate_elbo(proj, q_hat, quad))
    assert best == pytest.approx(float(collapsed_bound(proj, quad)), rel=1e-10)  # J^ = max_q J
    m = q_hat.mean.shape[0]
    for scale in (1e-3, 1e-1):
        for _ in range(5):
            dm = rng.normal(size=m) * scale
            dS = np.tril(rng.normal(size=(m, m))) * scale
            assert float(surrogate_elbo(proj, WhitenedQ(q_hat.mean + dm, q_hat.sqrt + dS), quad)) < best
    # Eqs. (12)-(13) (JJ) and (16)-(17) (Taylor) in the unwhitened frame, with explicit inverses.
    _, _, _, Kmm, Kmn = dense_marginals(model, q_hat, X)
    Ki, W = np.linalg.inv(Kmm), np.diag(quad.w.numpy())
    Sigma = np.linalg.inv(2 * Ki @ Kmn @ W @ Kmn.T @ Ki + Ki)
    target = y / 2 if kind == "jj" else quad.b.numpy()  # v(xi) = phi + 2 Psi xi
    mu = Sigma @ Ki @ Kmn @ target
    L = np.linalg.cholesky(Kmm)
    S = q_hat.sqrt.numpy()
    np.testing.assert_allclose(L @ q_hat.mean.numpy(), mu, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(L @ S @ S.T @ L.T, Sigma, rtol=1e-6, atol=1e-8)


def test_analytic_updates_never_decrease_the_jj_bound():
    X, y, model, _, _ = problem(n=60, m=8, seed=3)
    opt = BoundOptimizer(model, X, y, "jj")
    values = [opt.surrogate_elbo()]  # q = prior, xi = 0
    for _ in range(6):
        opt.update_xi()
        values.append(opt.surrogate_elbo())
        opt.update_q()
        values.append(opt.surrogate_elbo())
    assert np.all(np.diff(values) >= -1e-9 * np.abs(values[:-1]))
    assert values[-1] - values[0] > 1.0  # the updates do something
    assert opt.bound() == pytest.approx(values[-1], rel=1e-10)
    assert opt.bound() < opt.elbo()  # the JJ bound lies below the quadrature ELBO at the optimal q too


@pytest.mark.parametrize("method, train_inducing", [("jj", True), ("jj-hybrid", True), ("jj-full", True), ("taylor", False)])
def test_lbfgs_gradient_matches_finite_differences(method, train_inducing):
    X, y, model, _, rng = problem(n=30, m=5, seed=4)
    opt = BoundOptimizer(model, X, y, method, train_inducing)
    opt.analytic_updates(2)
    x0 = opt.get_vector()
    n_kernel = sum(int(np.prod(v.shape)) for v in model.kernel.trainable_variables)
    assert x0.size == n_kernel + train_inducing * model.Z.numpy().size + (method in ("jj-hybrid", "jj-full")) * len(y)
    f0, g = opt.objective(x0)
    h = 1e-5
    for _ in range(4):
        u = rng.normal(size=x0.size)
        u /= np.linalg.norm(u)
        fd = (opt.objective(x0 + h * u)[0] - opt.objective(x0 - h * u)[0]) / (2 * h)
        assert g @ u == pytest.approx(fd, rel=1e-5, abs=1e-9)
    assert opt.objective(x0)[0] == f0


def test_failed_cholesky_gives_a_finite_penalty():
    X, y, model, _, _ = problem(n=20, m=4, seed=6)
    model.jitter = -1.7  # K_mm - variance * I: zero diagonal, not positive definite
    opt = BoundOptimizer(model, X, y, "jj")
    f, g = opt.objective(opt.get_vector())
    assert f == 1e10 and g.shape == (3 + 8,) and not g.any()  # kernel + Z


@pytest.mark.parametrize("method", ["jj", "jj-hybrid", "jj-full"])
def test_vi_jj_objective_rises_every_outer_iteration(method):
    X, y, model, _, _ = problem(n=60, m=8, seed=5)
    result = BoundOptimizer(model, X, y, method).run(max_iter=8, tol=0.0)
    assert len(result.bound_history) == 8
    assert np.all(np.diff(result.bound_history) >= -1e-9 * np.abs(result.bound_history[:-1]))
    assert np.all(np.array(result.bound_history) < np.array(result.history))  # lower bound of the ELBO (11)


def test_vi_jj_full_converges_to_the_analytic_optimum_at_fixed_hyperparameters():
    """With theta fixed, L-BFGS-B on J^(xi) (vi-JJ-full) and the analytic fixed point of xi and q (vi-JJ's stage 1)
    maximise the same bound: both reach its maximum over xi, and the xi found are the same up to sign."""
    X, y, model, _, _ = problem(n=50, m=6, seed=7)
    gpflow.set_trainable(model.kernel, False)
    analytic = BoundOptimizer(model, X, y, "jj", train_inducing=False)
    analytic.update_xi()  # from the prior, as vi-JJ-full starts
    previous = -np.inf
    for _ in range(2000):
        analytic.analytic_updates(1)
        if abs(analytic.bound() - previous) < 1e-13 * abs(previous):
            break
        previous = analytic.bound()
    at_fixed_point = analytic.bound()
    full = BoundOptimizer(model, X, y, "jj-full", train_inducing=False)
    assert full.get_vector().size == len(y)  # xi alone is numerical
    result = full.run(max_iter=400, max_fun=20, tol=1e-14)
    # Both reach the same maximum.  Tolerance: scipy's L-BFGS-B stops once every gradient component of J^/N is
    # below 1e-5 (its pgtol), which leaves J^ (~ -31 here) ~1e-7 relative short of it; the fixed point is 1e-13 close.
    assert result.bound_history[-1] <= at_fixed_point + 1e-9
    assert result.bound_history[-1] == pytest.approx(at_fixed_point, rel=1e-6)
    np.testing.assert_allclose(np.abs(full.xi.numpy()), np.abs(analytic.xi.numpy()), rtol=0, atol=2e-2)
    _, g = full.objective(analytic.xi.numpy())  # the gradient of J^/N in xi at the analytic fixed point
    assert np.max(np.abs(g)) < 1e-8


def test_callback_sees_a_predicting_estimator_and_can_stop_it():
    X, y = two_moons(120, 0)
    seen = []
    clf = LogisticBoundGPClassifier(method="jj-full", num_inducing=8, max_iter=10, progress=False)

    def callback(iteration, bound):
        seen.append((iteration, bound, clf.predict_proba(X[:5])))
        return iteration < 2

    clf.fit(X, y, callback=callback)
    assert [s[0] for s in seen] == [0, 1, 2] and clf.stopped_early_ and len(clf.bound_history_) == 3
    assert [s[1] for s in seen] == clf.bound_history_
    np.testing.assert_array_equal(seen[-1][2], clf.predict_proba(X[:5]))  # the state the callback saw is the fit
    assert not np.array_equal(seen[0][2], seen[-1][2])


# ---------------------------------------------------------------- estimator
def two_moons(n, seed):
    from sklearn.datasets import make_moons

    X, y = make_moons(n, noise=0.2, random_state=seed)
    return X * [3.0, 0.5] + [10.0, -2.0], np.where(y == 1, "psr", "agn")  # unscaled features, string labels


FAST = dict(num_inducing=15, max_iter=15, progress=False)


@pytest.fixture(scope="module")
def fitted():
    X, y = two_moons(200, 0)
    return LogisticBoundGPClassifier(**FAST).fit(X, y)


@pytest.mark.parametrize("method", ["jj", "jj-full", "jj-hybrid", "taylor"])
def test_small_binary_problem_reaches_sensible_accuracy(method, fitted):
    clf = fitted if method == "jj" else LogisticBoundGPClassifier(method=method, **FAST).fit(*two_moons(200, 0))
    X_test, y_test = two_moons(300, 1)
    assert clf.score(X_test, y_test) > 0.93
    assert list(clf.classes_) == ["agn", "psr"] and clf.n_features_in_ == 2
    assert len(clf.history_) == len(clf.bound_history_) >= 2 and np.all(np.isfinite(clf.history_))
    assert clf.history_[-1] > clf.history_[0]


def test_probabilities_and_labels(fitted):
    X, _ = two_moons(50, 2)
    P = fitted.predict_proba(X)
    assert P.shape == (50, 2) and np.all((P >= 0) & (P <= 1))
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=0, atol=1e-15)
    assert set(fitted.predict(X)) <= {"agn", "psr"}
    np.testing.assert_allclose(fitted.predictive_entropy(X), -(P * np.log(P)).sum(axis=1))


def test_save_load_gives_identical_predictions(fitted, tmp_path):
    X, _ = two_moons(40, 3)
    fitted.save(tmp_path / "m")
    again = LogisticBoundGPClassifier.load(tmp_path / "m")
    np.testing.assert_array_equal(again.predict_proba(X), fitted.predict_proba(X))
    assert list(again.predict(X)) == list(fitted.predict(X)) and again.history_ == fitted.history_
    assert again.get_params() == fitted.get_params()
    assert "pickle" not in (tmp_path / "m" / "config.json").read_text()
    json.loads((tmp_path / "m" / "config.json").read_text())


def test_noisy_dataset_input_custom_kernel_and_ignored_noise(tmp_path):
    X, y = two_moons(60, 4)
    ds = NoisyDataset(X, np.full_like(X, 0.1), (y == "psr").astype(int), ("agn", "psr"), ("a", "b"), None)
    kernel = gpflow.kernels.Matern32(lengthscales=[2.0, 2.0])
    clf = LogisticBoundGPClassifier(method="taylor", num_inducing=6, max_iter=3, kernel=kernel, progress=False)
    with pytest.warns(UserWarning, match="ignores input noise") as record:
        clf.fit(ds)
    assert len(record) == 1 and list(clf.classes_) == ["agn", "psr"]
    assert isinstance(clf.model_.kernel, gpflow.kernels.Matern32)
    assert kernel.lengthscales.numpy().tolist() == [2.0, 2.0]  # the template is copied, not trained
    clf.save(tmp_path / "m")
    back = LogisticBoundGPClassifier.load(tmp_path / "m")
    assert isinstance(back.kernel, gpflow.kernels.Matern32) and back.kernel.lengthscales.numpy().tolist() == [2.0, 2.0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no X_var, no warning
        np.testing.assert_array_equal(back.predict_proba(X), clf.predict_proba(X))
    with pytest.warns(UserWarning, match="ignores input noise"):
        clf.predict_proba(ds)


@pytest.mark.parametrize(
    "kwargs, X, y, error, message",
    [
        ({}, np.zeros((6, 2)), [0, 1, 2, 0, 1, 2], ValueError, r"binary.*3 classes.*NoisyGPClassifier or DirichletGPClassifier"),
        ({"method": "laplace"}, np.zeros((4, 1)), [0, 1, 0, 1], ValueError, r"method must be one of \['jj', 'jj-full', 'jj-hybrid', 'taylor'\]"),
        ({"num_inducing": 0}, np.zeros((4, 1)), [0, 1, 0, 1], ValueError, "num_inducing must be an integer >= 1"),
        ({"kernel": "rbf"}, np.zeros((4, 1)), [0, 1, 0, 1], TypeError, "gpflow kernel"),
        ({}, np.array([[0.0], [np.nan]]), [0, 1], ValueError, "NaN"),
        ({}, np.zeros((3, 1)), [0, 1], ValueError, "one label per row"),
        ({}, np.zeros((3, 1)), [1, 1, 1], ValueError, "at least 2 classes"),
    ],
)
def test_bad_input_errors(kwargs, X, y, error, message):
    with pytest.raises(error, match=message):
        LogisticBoundGPClassifier(progress=False, **kwargs).fit(X, y)


def test_predict_errors(fitted):
    with pytest.raises(NotFittedError, match="not fitted"):
        LogisticBoundGPClassifier().predict_proba(np.zeros((1, 2)))
    with pytest.raises(ValueError, match="X has 3 features, but LogisticBoundGPClassifier is expecting 2 features"):
        fitted.predict_proba(np.zeros((1, 3)))


# ------------------------------------------- gplib's scheme (the paper's first author's code)
@pytest.mark.parametrize("method", ["jj-full", "jj-hybrid", "jj"])
def test_gplib_scheme_gradient_in_the_kernels_own_values_matches_finite_differences(method):
    X, y, model, _, rng = problem(n=30, m=5, seed=4)
    opt = BoundOptimizer(model, X, y, method, train_inducing=True)
    opt.analytic_updates(2)
    x0 = opt.natural_vector()
    # sigma_f = sqrt(variance) and the length scales come first, as gplib packs them; then Z, then xi
    np.testing.assert_allclose(x0[:3], [np.sqrt(1.7), 0.8, 1.3], rtol=1e-12)
    bounds = opt.natural_bounds()
    assert bounds[:3] == [(1e-2, 1e3)] * 3 and bounds[3] == (None, None)
    assert bounds[-1] == ((1e-3, None) if method != "jj" else (None, None))
    f0, g = opt.natural_objective(x0)
    h = 1e-6
    for _ in range(4):
        u = rng.normal(size=x0.size)
        u /= np.linalg.norm(u)
        fd = (opt.natural_objective(x0 + h * u)[0] - opt.natural_objective(x0 - h * u)[0]) / (2 * h)
        assert g @ u == pytest.approx(fd, rel=1e-5, abs=1e-9)
    assert opt.natural_objective(x0)[0] == pytest.approx(f0, rel=1e-12)
    assert model.kernel.variance.numpy() == pytest.approx(1.7, rel=1e-12)  # left at x0, as assigned


def test_gplib_vi_jj_full_is_one_bounded_lbfgs_run_from_xi_one():
    X, y, model, _, _ = problem(n=60, m=8, seed=5)
    opt = BoundOptimizer(model, X, y, "jj-full", train_inducing=False)
    starts = []
    original = opt.natural_lbfgs

    def spy(**kwargs):
        starts.append((opt.natural_vector(), kwargs))
        return original(**kwargs)

    opt.natural_lbfgs = spy
    result = opt.run(max_iter=25, scheme="gplib")
    (x0, kwargs), = starts  # one L-BFGS-B run, not restarted
    assert kwargs["max_iter"] == 25 and "max_fun" not in kwargs
    np.testing.assert_array_equal(x0[3:], 1.0)  # xi = 1 (gpc_vi_jj_full.py 98)
    assert 0 < len(result.bound_history) <= 25
    assert np.all(np.diff(result.bound_history) >= -1e-9 * np.abs(result.bound_history[:-1]))  # L-BFGS-B descends
    x = opt.natural_vector()
    assert np.all((x[:3] >= 1e-2) & (x[:3] <= 1e3)) and np.all(x[3:] >= 1e-3)
    assert opt.bound() == pytest.approx(result.bound_history[-1], rel=1e-12)
    with pytest.raises(ValueError, match=r"scheme must be one of \['gpal', 'gplib'\]; got 'scipy'"):
        opt.run(scheme="scipy")


def test_gplibs_kernel_has_one_length_scale_and_its_noise_term_on_the_diagonal_only():
    """`se_iso_plus_noise` against gplib's covariance written out in numpy (``covfun/se.py`` 42, ``covfun/utility.py``
    11-19): sigma_f^2 exp(-r^2 / (2 l^2)), plus sigma_l^2 only where a point meets itself (K_mm, k(x, x))."""
    from gpal.models.kernels import make_kernel

    start = make_kernel("se_iso_plus_noise", 4)
    se, white = start.kernels
    assert se.lengthscales.shape == () and se.lengthscales.numpy() == pytest.approx(2.0)
    assert (se.variance.numpy(), white.variance.numpy()) == pytest.approx((1.0, 0.01))

    X, y = two_moons(80, 3)
    clf = LogisticBoundGPClassifier(method="jj", kernel="se_iso_plus_noise", scheme="gplib", num_inducing=6,
                                    max_iter=4, train_inducing=False).fit(X, y)
    se, white = clf.model_.kernel.kernels
    sigma_f, ell, sigma_l = (float(np.sqrt(se.variance.numpy())), float(se.lengthscales.numpy()),
                             float(np.sqrt(white.variance.numpy())))
    assert se.lengthscales.shape == ()  # still one length scale after training
    assert (sigma_f, ell, sigma_l) != pytest.approx((1.0, np.sqrt(2.0), 0.1), rel=1e-3)  # all three learned
    assert all(1e-2 <= v <= 1e3 for v in (sigma_f, ell, sigma_l))  # gplib's box (se.py 22-23)

    def gplib_cov(A, B, noise):
        r = np.sqrt(((A[:, None, :] - B[None, :, :]) ** 2).sum(-1))
        return np.exp(-r**2 / (2 * ell**2)) * sigma_f**2 + (sigma_l**2 * np.eye(len(A)) if noise else 0.0)

    Z, Xs = clf.model_.Z.numpy(), clf.standardizer_.transform_arrays(X)[0]
    kernel = clf.model_.kernel
    np.testing.assert_allclose(kernel(Z).numpy(), gplib_cov(Z, Z, True), rtol=1e-12)
    np.testing.assert_allclose(kernel(Xs, Z).numpy(), gplib_cov(Xs, Z, False), rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(kernel(Xs, full_cov=False).numpy(), sigma_f**2 + sigma_l**2, rtol=1e-12)


@pytest.mark.parametrize("method", ["jj", "jj-full", "jj-hybrid", "taylor"])
def test_gplib_scheme_estimator_reaches_sensible_accuracy(method):
    clf = LogisticBoundGPClassifier(method=method, scheme="gplib", **FAST).fit(*two_moons(200, 0))
    assert clf.score(*two_moons(300, 1)) > 0.93
    assert len(clf.history_) >= 2 and clf.history_[-1] > clf.history_[0]


def test_authors_record_shows_the_start_then_the_analytic_stages_q_one_step_stale():
    """gplib records (theta_t, mu_t, Sigma_t) with mu, Sigma from iteration t's analytic stage, before its L-BFGS-B
    step, and the start as mu = 0, Sigma = I (record="authors"); training itself is the same as gpal's record."""
    X, y, model, _, _ = problem(n=50, m=6, seed=8)
    start = [v.numpy() for v in model.kernel.trainable_variables]
    seen = []

    def look(opt):
        def callback(it, bound):
            mean, _ = opt.model.marginals(X)
            seen.append((it, *opt.u_space_q(), mean.numpy(), opt.model.kernel.variance.numpy()))
        return callback

    opt = BoundOptimizer(model, X, y, "jj", train_inducing=False)
    authors = opt.run(max_iter=3, n_updates=2, tol=0.0, callback=look(opt), record="authors")
    assert [s[0] for s in seen] == [0, 1, 2, 3]
    M = model.Z.shape[0]
    np.testing.assert_allclose(seen[0][1], 0.0, atol=1e-12)
    np.testing.assert_allclose(seen[0][2], np.eye(M), atol=1e-10)
    np.testing.assert_allclose(seen[0][3], 0.0, atol=1e-12)  # E f = 0 everywhere: p = 1/2 at the start
    # iteration 1's q is the analytic stage's at the starting kernel, recomputed here from the prior
    for v, value in zip(model.kernel.trainable_variables, start):
        v.assign(value)
    fresh = BoundOptimizer(model, X, y, "jj", train_inducing=False)
    fresh.model.q_mean.assign(np.zeros(M)), fresh.model.q_sqrt.assign(np.eye(M))
    fresh.analytic_updates(2)
    mu, Sigma = fresh.u_space_q()
    np.testing.assert_allclose(seen[1][1], mu, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(seen[1][2], Sigma, rtol=1e-8, atol=1e-10)
    assert seen[1][4] != pytest.approx(seen[0][4])  # shown with the kernel after the step
    # the same training as gpal's record
    for v, value in zip(model.kernel.trainable_variables, start):
        v.assign(value)
    current = BoundOptimizer(model, X, y, "jj", train_inducing=False).run(max_iter=3, n_updates=2, tol=0.0)
    np.testing.assert_allclose(authors.bound_history, current.bound_history, rtol=1e-10)
    with pytest.raises(ValueError, match=r"record must be one of \['current', 'authors'\]; got 'stale'"):
        opt.run(record="stale")


def test_u_space_q_round_trips_through_the_whitened_q():
    X, y, model, q, _ = problem(n=20, m=5, seed=9)
    model.q_mean.assign(q.mean), model.q_sqrt.assign(q.sqrt)
    opt = BoundOptimizer(model, X, y, "jj")
    mu, Sigma = opt.u_space_q()
    L = np.linalg.cholesky(model.kernel(model.Z).numpy() + model.jitter * np.eye(5))
    np.testing.assert_allclose(mu, L @ q.mean.numpy(), rtol=1e-12)
    opt.set_u_space_q(mu, Sigma)
    np.testing.assert_allclose(model.q_mean.numpy(), q.mean.numpy(), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(model.q_sqrt.numpy() @ model.q_sqrt.numpy().T, q.sqrt.numpy() @ q.sqrt.numpy().T,
                               rtol=1e-9, atol=1e-12)

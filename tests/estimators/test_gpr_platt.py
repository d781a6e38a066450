"""GPR + Platt (paper 003's baseline): Platt's fit against a direct logistic regression, the regression mean
against gpflow's SGPR, its variance against the exact GP, the authors' probit form against a direct maximisation,
the binary limits, and the estimator."""

import gpflow
import numpy as np
import pytest
import scipy.optimize
from scipy.special import expit
from scipy.stats import norm
from sklearn.linear_model import LogisticRegression

from gpal.estimators.gpr_platt import GPRPlattClassifier
from gpal.training.collapsed import fit_label_regression
from gpal.data.splits import holdout_per_class
from gpal.models.families.gpr_platt import (
    Platt,
    ProbitPlatt,
    fit_platt,
    fit_probit_platt,
    label_targets,
    platt_targets,
    regression_mean,
)


def test_platt_fit_equals_a_logistic_regression_on_the_smoothed_targets():
    """Soft targets T are a weighted logistic regression: each row once as a 1 with weight T, once as a 0 with 1 - T."""
    rng = np.random.default_rng(0)
    s = rng.normal(size=300)
    y = (rng.uniform(size=300) < expit(1.7 * s - 0.4)).astype(int)
    a, b = fit_platt(s, y)
    T = platt_targets(y)
    direct = LogisticRegression(C=np.inf, tol=1e-12, max_iter=10_000).fit(
        np.concatenate([s, s])[:, None], np.r_[np.ones(300), np.zeros(300)], sample_weight=np.r_[T, 1.0 - T])
    assert a == pytest.approx(direct.coef_[0, 0], rel=1e-6)
    assert b == pytest.approx(direct.intercept_[0], rel=1e-6, abs=1e-8)
    assert 1.2 < a < 2.2  # near the generating slope


def test_platt_targets_and_binary_limits():
    y = np.array([1, 1, 1, 0, 0])
    np.testing.assert_allclose(platt_targets(y), [4 / 5, 4 / 5, 4 / 5, 1 / 4, 1 / 4])
    # An uninformative score (a multiplies zeros): sigma(b) is the mean smoothed target.
    _, b = fit_platt(np.zeros(5), y)
    assert expit(b) == pytest.approx(platt_targets(y).mean(), rel=1e-9)
    # Separable calibration rows: the smoothed targets keep (a, b) finite, and the fit is tight to them.
    s = np.array([-2.0, -1.0, -0.5, 0.5, 1.0, 2.0])
    y = (s > 0).astype(int)
    a, b = fit_platt(s, y)
    assert np.isfinite(a) and 0.5 < a < 5.0 and b == pytest.approx(0.0, abs=1e-8)  # symmetric problem
    residual = expit(a * s + b) - platt_targets(y)  # the optimum's moment conditions, the score equations
    assert abs(residual.sum()) < 1e-8 and abs(residual @ s) < 1e-8
    # The score's units do not matter: s * k gives a / k and the same probabilities.
    a2, b2 = fit_platt(3.0 * s, y)
    assert a2 == pytest.approx(a / 3.0, rel=1e-6) and b2 == pytest.approx(b, abs=1e-8)


def test_regression_mean_equals_gpflows_sgpr_prediction():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(80, 2))
    codes = (X[:, 0] + 0.3 * rng.normal(size=80) > 0).astype(int) + (X[:, 1] > 0.8)
    Y = label_targets(codes, 3)
    Z = X[:9].copy()
    kernel = gpflow.kernels.SquaredExponential(lengthscales=[1.0, 1.0])
    reg, result = fit_label_regression(kernel, Z, X, Y, max_iter=50)
    assert result.nit >= 1 and reg.weights.shape == (9, 3) and reg.noise_variance > 0
    np.testing.assert_allclose(reg.offset, Y.mean(axis=0))
    sgpr = gpflow.models.SGPR((X, Y - reg.offset), kernel, inducing_variable=Z, noise_variance=reg.noise_variance)
    X_new = rng.normal(size=(15, 2))
    # jitter: gpal adds 1e-6 to K_zz, gpflow its own default; their difference bounds the agreement
    np.testing.assert_allclose(reg.mean(X_new), sgpr.predict_f(X_new)[0].numpy() + reg.offset, atol=1e-5)


def calibration_split(codes, fraction, seed):
    """The estimator's calibration rows (``GPRPlattClassifier.fit``)."""
    return holdout_per_class(codes, fraction, np.random.default_rng([seed, 3]),
                             "GPR + Platt holds out a calibration share", "every class needs at least 2")


def test_label_targets_and_calibration_split():
    assert label_targets(np.array([0, 1, 1]), 2).tolist() == [[0.0], [1.0], [1.0]]
    assert label_targets(np.array([2, 0]), 3).tolist() == [[0, 0, 1], [1, 0, 0]]
    codes = np.repeat([0, 1, 2], [10, 20, 5])
    fit, cal = calibration_split(codes, 0.2, 0)
    assert sorted(np.r_[fit, cal].tolist()) == list(range(35)) and not set(fit) & set(cal)
    assert np.bincount(codes[cal]).tolist() == [2, 4, 1]
    with pytest.raises(ValueError, match="GPR \\+ Platt holds out a calibration share of every class, but class code 1 "
                                         "has 1 training row.*at least 2"):
        calibration_split(np.array([0, 0, 1]), 0.2, 0)


def test_binary_is_the_one_vs_rest_rule_with_two_classes():
    """Two classes: one regression on the indicator of class 1; its mirror (class 0's indicator) has the mirrored
    mean, so one-vs-rest with two sigmoids, normalised, gives the same probabilities."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(120, 2))
    y = np.where(X[:, 0] + 0.4 * rng.normal(size=120) > 0, "b", "a")
    clf = GPRPlattClassifier(num_inducing=10, max_iter=60).fit(X, y)
    Xs = clf.standardizer_.transform_arrays(X, np.zeros_like(X))[0]
    f1 = clf.regression_.mean(Xs)[:, 0]
    fit_rows, cal_rows = calibration_split((y == "b").astype(int), 0.2, 0)
    f0 = 1.0 - f1  # class 0's indicator is 1 - class 1's: the same GP fit, mirrored
    a0, b0 = fit_platt(f0[cal_rows], (y[cal_rows] == "a").astype(int))
    p0, p1 = expit(a0 * f0 + b0), clf.platt_.probability(f1[:, None])[:, 0]
    np.testing.assert_allclose(p1 / (p0 + p1), p1, atol=1e-6)
    np.testing.assert_allclose(clf.predict_proba(X)[:, 1], p1)
    assert clf.score(X, y) > 0.85


def test_multiclass_estimator_and_bad_input():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(150, 2))
    y = np.array(["x", "y", "z"])[(X[:, 0] > 0).astype(int) + (X[:, 1] > 0.5)]
    clf = GPRPlattClassifier(num_inducing=12, max_iter=80).fit(X, y)
    P = clf.predict_proba(X)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    assert clf.platt_.a.shape == (3,) and np.all(clf.platt_.a > 0)  # a larger regression output, a likelier class
    assert clf.score(X, y) > 0.8
    with pytest.raises(ValueError, match="calibration_fraction must be a finite number > 0 and < 1"):
        GPRPlattClassifier(calibration_fraction=1.0).fit(X, y)
    with pytest.warns(UserWarning, match="ignores input noise"):
        clf.predict_proba(X[:3], np.full((3, 2), 0.1))
    assert isinstance(clf.platt_, Platt)


def test_regression_variance_with_every_row_inducing_is_the_exact_gps():
    """With Z = X Titsias' SGPR is the exact GP: var f* = k** - k*x (Kxx + sigma^2 I)^-1 kx*, computed densely."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(40, 2))
    Y = (X[:, :1] > 0).astype(float)
    kernel = gpflow.kernels.SquaredExponential(variance=1.7, lengthscales=[0.8, 1.3])
    reg = regression_mean(kernel, X, X, Y, noise_variance=0.2, jitter=1e-12)
    X_new = np.r_[rng.normal(size=(10, 2)), X[:3], 6.0 + rng.normal(size=(2, 2))]  # new rows, training rows, far away
    K = kernel(X).numpy() + 0.2 * np.eye(40)
    Ks = kernel(X_new, X).numpy()
    exact_var = np.diag(kernel(X_new).numpy()) - np.einsum("ij,ji->i", Ks, np.linalg.solve(K, Ks.T))
    exact_mean = Ks @ np.linalg.solve(K, Y - Y.mean()) + Y.mean()
    np.testing.assert_allclose(reg.variance(X_new), exact_var, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(reg.mean(X_new), exact_mean, rtol=1e-6, atol=1e-9)
    assert reg.variance(X_new)[-1] == pytest.approx(1.7, rel=1e-3)  # far from the data: the prior's variance


def test_probit_slope_maximises_its_likelihood():
    """The slope against a direct bounded scalar maximisation of sum T log Phi(a s) + (1 - T) log Phi(-a s)."""
    rng = np.random.default_rng(5)
    s = rng.normal(size=400)
    y = (rng.uniform(size=400) < norm.cdf(2.5 * s)).astype(int)
    T = platt_targets(y)

    def nll(a):
        return -np.sum(T * np.log(norm.cdf(a * s)) + (1.0 - T) * np.log(norm.cdf(-a * s)))

    direct = scipy.optimize.minimize_scalar(nll, bounds=(0.0, 20.0), method="bounded", options={"xatol": 1e-10})
    a = fit_probit_platt(s, y)
    assert a == pytest.approx(direct.x, rel=1e-6)
    assert 2.0 < a < 3.1  # near the generating slope
    # separable scores: Platt's targets keep the slope finite, and the smoothed likelihood still has its optimum
    a_sep = fit_probit_platt(s, (s > 0).astype(int))
    T_sep = platt_targets(s > 0)
    grad = np.sum(s * (T_sep * norm.pdf(a_sep * s) / norm.cdf(a_sep * s)
                       - (1 - T_sep) * norm.pdf(a_sep * s) / norm.cdf(-a_sep * s)))
    assert np.isfinite(a_sep) and a_sep > a and abs(grad) < 1e-6


def test_probit_calibration_estimator_save_load_and_refusal(tmp_path):
    rng = np.random.default_rng(6)
    X = rng.normal(size=(150, 2))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=150) > 0, "psr", "agn")
    clf = GPRPlattClassifier(calibration="probit", num_inducing=10, max_iter=60).fit(X, y)
    assert isinstance(clf.platt_, ProbitPlatt) and clf.platt_.a.shape == (1,) and clf.platt_.a[0] > 0
    Xs = clf.standardizer_.transform_arrays(X, np.zeros_like(X))[0]
    f, var = clf.regression_.mean(Xs)[:, 0], clf.regression_.variance(Xs)
    p1 = norm.cdf(clf.platt_.a[0] * (f - 0.5) / np.sqrt(1.0 + var))
    np.testing.assert_allclose(clf.predict_proba(X)[:, 1], p1, rtol=1e-12)
    _, cal_rows = calibration_split((y == "psr").astype(int), 0.2, 0)
    s = (f[cal_rows] - 0.5) / np.sqrt(1.0 + var[cal_rows])
    assert clf.platt_.a[0] == pytest.approx(fit_probit_platt(s, y[cal_rows] == "psr"), rel=1e-12)
    assert clf.score(X, y) > 0.8
    clf.save(tmp_path / "model")
    loaded = GPRPlattClassifier.load(tmp_path / "model")
    assert loaded.calibration == "probit"
    np.testing.assert_array_equal(loaded.predict_proba(X), clf.predict_proba(X))
    platt = GPRPlattClassifier(num_inducing=10, max_iter=60).fit(X, y)
    platt.save(tmp_path / "platt")
    np.testing.assert_array_equal(GPRPlattClassifier.load(tmp_path / "platt").predict_proba(X), platt.predict_proba(X))
    three = np.array(["a", "b", "c"])[np.arange(150) % 3]
    with pytest.raises(ValueError, match=r"calibration='probit'\) is paper 003's \(Milios et al. 2018\) two-class "
                                         r"form; these labels have 3 classes: use calibration='platt'"):
        GPRPlattClassifier(calibration="probit", num_inducing=5).fit(X, three)
    with pytest.raises(ValueError, match=r"calibration must be one of \['platt', 'probit'\]"):
        GPRPlattClassifier(calibration="isotonic").fit(X, y)

"""The exact-ELBO finish of the augmented logistic-softmax GP: its natural gradient, fixed point and estimator option."""

import math

import gpflow
import numpy as np
import pytest
import tensorflow as tf

from conftest import three_class
from gpal.estimators.logistic_softmax import LogisticSoftmaxGPClassifier
from gpal.models.families.augmented_exact import (
    exact_elbo,
    exact_natural_parameters,
    expected_log_lik,
    natural_gradient_update,
)
from gpal.models.families.augmented_logistic_softmax import AugmentedLogisticSoftmaxGP
from gpal.training.cavi import AugmentedTrainer
from gpal.training.exact_finish import ExactFinish


def random_model(seed, n=30, m=6, num_classes=3):
    """A model with a random (non-prior) q(v) and the data it is evaluated on."""
    rng = np.random.default_rng(seed)
    X, y = three_class(n, seed)
    model = AugmentedLogisticSoftmaxGP(gpflow.kernels.SquaredExponential(lengthscales=[0.8, 1.2], variance=4.0), X[:m],
                                       num_classes)
    R = rng.normal(size=(num_classes, m, m)) / math.sqrt(m)
    model.precision.assign(np.eye(m) + np.einsum("cij,ckj->cik", R, R) * 3.0)
    model.eta1.assign(rng.normal(size=(num_classes, m)) * 2.0)
    return model, X, y


def ell_of_moments(model, X, y, m, S, num_samples=50):
    """sum_i E log p(y_i | f_i) as a function of the whitened means m (C, M) and covariances S (C, M, M) directly."""
    proj = model.project(tf.constant(X))
    mean = tf.transpose(tf.matmul(m, proj.A))  # (N, C)
    var = proj.resid[:, None] + tf.transpose(tf.einsum("mn,cmk,kn->cn", proj.A, S, proj.A))
    return tf.reduce_sum(expected_log_lik(mean, var, tf.constant(y, tf.int64), num_samples, 0))


@pytest.mark.parametrize("seed", [0, 1])
def test_natural_parameters_are_the_gradient_in_expectation_parameters(seed):
    """Independent route: autodiff of E log p with respect to (m, S) itself, not to the marginals.

    For a Gaussian q the natural gradient is the gradient in the expectation parameters (m, S + m m^T):
    d/dmu1 = dELL/dm - 2 dELL/dS m, d/dmu2 = dELL/dS, and a full step reaches eta1 = 0 + d/dmu1,
    P = I - 2 d/dmu2 (whitened prior N(0, I)).
    """
    model, X, y = random_model(seed)
    q = model.q()
    m, S = q.mean, tf.matmul(q.inv_chol, q.inv_chol, transpose_a=True)
    with tf.GradientTape() as tape:
        tape.watch([m, S])
        ell = ell_of_moments(model, X, y, m, S)
    g_m, g_S = tape.gradient(ell, [m, S])
    g_S = (g_S + tf.linalg.matrix_transpose(g_S)) / 2.0
    expected_eta1 = g_m - 2.0 * tf.linalg.matvec(g_S, m)
    expected_P = tf.eye(m.shape[1], dtype=m.dtype)[None] - 2.0 * g_S

    proj = model.project(tf.constant(X))
    mean, var = model.marginals(proj, q)
    with tf.GradientTape() as tape:
        tape.watch([mean, var])
        ell = tf.reduce_sum(expected_log_lik(mean, var, tf.constant(y, tf.int64), 50, 0))
    eta1_hat, P_hat = exact_natural_parameters(proj.A, mean, *tape.gradient(ell, [mean, var]))
    np.testing.assert_allclose(eta1_hat.numpy(), expected_eta1.numpy(), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(P_hat.numpy(), expected_P.numpy(), rtol=1e-9, atol=1e-9)


def test_expected_log_lik_matches_gauss_hermite_in_two_classes():
    """The seeded Monte Carlo against a 2-d Gauss-Hermite product rule (independent of the draws)."""
    mean = np.array([[1.5, -0.5], [-1.0, 2.0]])
    var = np.array([[0.3, 1.2], [2.0, 0.5]])
    y = np.array([0, 1])
    nodes, weights = np.polynomial.hermite_e.hermegauss(60)
    weights = weights / weights.sum()
    exact = []
    for i in range(2):
        f0 = mean[i, 0] + np.sqrt(var[i, 0]) * nodes[:, None]
        f1 = mean[i, 1] + np.sqrt(var[i, 1]) * nodes[None, :]
        log_sig = [-np.logaddexp(0.0, -f0) + 0 * f1, -np.logaddexp(0.0, -f1) + 0 * f0]
        logp = log_sig[y[i]] - np.logaddexp(*log_sig)
        exact.append(np.sum(weights[:, None] * weights[None, :] * logp))
    mc = expected_log_lik(tf.constant(mean), tf.constant(var), tf.constant(y, tf.int64), 40000, 0).numpy()
    np.testing.assert_allclose(mc, exact, atol=5e-3)


def test_steps_at_a_fixed_kernel_reach_a_stationary_point_of_the_exact_elbo():
    """From CAVI's optimum, exact steps (kernel fixed) raise L and end where its gradient in (m, S) vanishes."""
    X, y = three_class(60, 3, noise=0.15)
    model = AugmentedLogisticSoftmaxGP(gpflow.kernels.SquaredExponential(lengthscales=[0.8, 0.8], variance=8.0),
                                       X[::6], 3)
    AugmentedTrainer(model, X, y).run("cavi", max_iter=50, hyper_every=0)
    finish = ExactFinish(model, X, y, learning_rate=0.1, inducing_learning_rate=None, num_samples=50, seed=0)
    history = finish.run(80, rho=0.5, hyper=False)
    assert history[-1] > history[0] + 1.0  # CAVI's optimum is not the exact one
    assert np.all(np.diff(history[-20:]) > -1e-6)

    def gradient_norms():
        q = model.q()
        m, S = q.mean, tf.matmul(q.inv_chol, q.inv_chol, transpose_a=True)
        with tf.GradientTape() as tape:
            tape.watch([m, S])
            P = tf.linalg.inv(S)
            value = ell_of_moments(model, X, y, m, S) - 0.5 * tf.reduce_sum(
                tf.linalg.trace(S) + tf.reduce_sum(m * m, -1) + tf.linalg.logdet(P))
        return [float(tf.norm(g)) for g in tape.gradient(value, [m, S])]

    at_end = gradient_norms()
    assert max(at_end) < 1e-4, at_end
    assert float(exact_elbo(model, tf.constant(X), tf.constant(y, tf.int64), 50, 0)) == pytest.approx(
        finish.run(1, rho=0.5, hyper=False)[0], abs=1e-9)


def test_a_step_whose_precision_would_be_indefinite_is_halved():
    """P = I, target P_hat = -I: (1 - rho) I + rho (-I) is positive definite only for rho < 1/2, so 1 -> 1/2 -> 1/4."""
    model, _, _ = random_model(0, m=4)
    model.precision.assign(np.tile(np.eye(4), (3, 1, 1)))
    eta1 = model.eta1.numpy()
    taken = natural_gradient_update(model, tf.zeros_like(model.eta1), -tf.eye(4, batch_shape=[3], dtype=tf.float64),
                                    tf.constant(1.0, tf.float64))
    assert float(taken) == 0.25
    np.testing.assert_allclose(model.precision.numpy(), np.tile(0.5 * np.eye(4), (3, 1, 1)))
    np.testing.assert_allclose(model.eta1.numpy(), 0.75 * eta1)


@pytest.fixture(scope="module")
def exact_fitted():
    X, y = three_class(80, 7, noise=0.15)
    labels = np.array(["bll", "fsrq", "psr"])[y]
    cavi = LogisticSoftmaxGPClassifier(inference="cavi_collapsed", num_inducing=8, max_iter=20, n_samples=200).fit(X, labels)
    exact = LogisticSoftmaxGPClassifier(inference="cavi_exact", num_inducing=8, max_iter=20, exact_steps=40,
                                        n_samples=200).fit(X, labels)
    return cavi, exact, X, labels


def test_cavi_exact_starts_at_collapsed_cavi_and_raises_the_exact_elbo(exact_fitted):
    cavi, exact, X, labels = exact_fitted
    assert len(exact.history_) == 20 and len(exact.exact_history_) == 40 and cavi.exact_history_ == []
    np.testing.assert_allclose(exact.history_, cavi.history_)  # the same sweeps first
    y = np.searchsorted(cavi.classes_, labels)
    Xs = cavi.standardizer_.transform_arrays(X)[0]
    at_cavi = float(exact_elbo(cavi.model_, tf.constant(Xs), tf.constant(y, tf.int64), 100, 0))
    assert exact.exact_history_[0] == pytest.approx(at_cavi, rel=1e-9)
    assert exact.exact_history_[-1] > at_cavi + 1.0


def test_cavi_exact_saves_and_loads(exact_fitted, tmp_path):
    _, exact, X, _ = exact_fitted
    exact.save(tmp_path / "model")
    loaded = LogisticSoftmaxGPClassifier.load(tmp_path / "model")
    np.testing.assert_array_equal(loaded.predict_proba(X), exact.predict_proba(X))
    assert loaded.exact_history_ == exact.exact_history_
    assert loaded.get_params() == exact.get_params()


@pytest.mark.parametrize(
    "params, match",
    [
        ({"inference": "cavi_exact", "batch_size": 10}, "inference='cavi_exact' updates on the full batch"),
        ({"exact_step_size": 1.5}, "exact_step_size must be a finite number > 0 and <= 1"),
        ({"exact_steps": 0}, "exact_steps must be an integer >= 1"),
        ({"exact_inducing_learning_rate": 0.0}, "exact_inducing_learning_rate must be None or a finite number > 0"),
    ],
)
def test_bad_exact_parameters_are_named(params, match):
    X, y = three_class(20, 0)
    with pytest.raises(ValueError, match=match):
        LogisticSoftmaxGPClassifier(**params).fit(X, y)


def test_runs_in_parts_equal_one_run_and_models_of_one_signature_share_the_steps():
    """Adam's state carries over between ``run`` calls, and a model fitted on other rows reuses the same trace."""
    from gpal.training import exact_finish

    def fresh(n):
        X, y = three_class(n, 5)
        model = AugmentedLogisticSoftmaxGP(gpflow.kernels.SquaredExponential(lengthscales=[1.0, 1.0]), X[:5], 3)
        return model, ExactFinish(model, X, y, 0.1, 0.03, num_samples=20, seed=0)

    (whole, once), (parts, twice) = fresh(40), fresh(40)
    once.run(6, 0.5)
    twice.run(2, 0.5), twice.run(4, 0.5)
    for a, b in zip(whole.trainable_variables + (whole.eta1,), parts.trainable_variables + (parts.eta1,)):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    other, finish = fresh(25)
    with exact_finish._signature_steps(other, True, 20, 0) as traces:
        pass
    before = traces.step_and_hyper.experimental_get_tracing_count()
    finish.run(2, 0.5)
    assert traces.step_and_hyper.experimental_get_tracing_count() == before == 1

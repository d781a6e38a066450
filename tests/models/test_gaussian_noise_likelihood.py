"""Gaussian-noise likelihood family (step / probit / logit, paper 000 eq. 5-9, 15-19).

Closed forms and quadrature are checked against Monte Carlo of the generative
model itself: f ~ q(f), g = f + N(0, a), label read out by the robust step rule.
"""

import json

import numpy as np
import pytest
import tensorflow as tf
from scipy.special import expit
from scipy.stats import norm

from gpal.models import likelihoods
from gpal.models.likelihoods.gaussian_noise import (
    NOISE_VARIANCES,
    GaussianNoiseLikelihood,
    LogitLikelihood,
    ProbitLikelihood,
    StepLikelihood,
)
from gpal.models.likelihoods.base import RobustMax, likelihood_from_config, make_likelihood

NOISES = ["step", "probit", "logit"]


def _marginals(rng, n, num_latent, mean_sd=1.5, var_range=(0.3, 2.0)):
    mu = rng.normal(0.0, mean_sd, (n, num_latent))
    var = rng.uniform(*var_range, (n, num_latent))
    return mu, var


def _mc_first_class(rng, mu, var, a, num_samples):
    """(num_samples, n): the class that g = f + N(0, a), f ~ q(f), ranks first (before label flips)."""
    f = mu + np.sqrt(var) * rng.standard_normal((num_samples, *mu.shape))
    g = f + np.sqrt(a) * rng.standard_normal(f.shape)
    if mu.shape[1] == 1:  # binary: one latent, class 1 <=> g > 0
        return (g[..., 0] > 0).astype(int)
    return np.argmax(g, axis=2)


def _eval(lik, mu, var, y=None):
    mu, var = tf.constant(mu), tf.constant(var)
    if y is None:
        return lik.predict_proba(mu, var).numpy()
    return lik.variational_expectations(mu, var, tf.constant(y)).numpy()


@pytest.mark.parametrize("noise", NOISES)
@pytest.mark.parametrize("num_classes", [2, 4])
def test_expectation_and_prediction_match_monte_carlo(noise, num_classes):
    rng = np.random.default_rng(10 + num_classes)
    delta, n, K = 0.05, 25, 50_000
    lik = GaussianNoiseLikelihood(num_classes, noise=noise, delta=delta, learn_delta=False)
    L = lik.num_latent(num_classes)
    assert L == (1 if num_classes == 2 else num_classes)
    mu, var = _marginals(rng, n, L)
    y = rng.integers(0, num_classes, n)
    first = _mc_first_class(rng, mu, var, NOISE_VARIANCES[noise], K)
    # 2e-3 allows for the Gauss-Hermite error of the multi-class step form (a = 0)
    log_p = np.where(first == y, np.log1p(-delta), np.log(delta / (num_classes - 1)))
    mc, se = log_p.mean(0), log_p.std(0) / np.sqrt(K)
    np.testing.assert_array_less(np.abs(_eval(lik, mu, var, y) - mc), 4 * se + 2e-3)

    # predictive p(y = c) for every class c from the same draws
    proba = _eval(lik, mu, var)
    assert proba.shape == (n, num_classes)
    np.testing.assert_allclose(proba.sum(1), 1.0, atol=1e-12)
    for c in range(num_classes):
        p_c = np.where(first == c, 1 - delta, delta / (num_classes - 1))
        np.testing.assert_array_less(np.abs(proba[:, c] - p_c.mean(0)), 4 * p_c.std(0) / np.sqrt(K) + 2e-3)


def test_probit_prediction_is_phi_of_scaled_mean():
    rng = np.random.default_rng(1)
    mu, var = rng.normal(0, 2, (50, 1)), rng.uniform(0, 4, (50, 1))
    expected = norm.cdf(mu[:, 0] / np.sqrt(1 + var[:, 0]))
    nearly_clean = ProbitLikelihood(2, delta=1e-12, learn_delta=False)
    np.testing.assert_allclose(_eval(nearly_clean, mu, var)[:, 1], expected, atol=1e-10)
    robust = ProbitLikelihood(2, delta=0.1, learn_delta=False)  # eq. 9: (1 - 2 delta) Phi + delta
    proba = _eval(robust, mu, var)
    np.testing.assert_allclose(proba[:, 1], 0.8 * expected + 0.1, atol=1e-12)
    np.testing.assert_allclose(proba[:, 0], 0.8 * (1 - expected) + 0.1, atol=1e-12)


def test_logit_noise_matches_logistic_cdf():
    grid = np.linspace(-15, 15, 3001)[:, None]
    lik = LogitLikelihood(2, delta=1e-12, learn_delta=False)
    p = _eval(lik, grid, np.zeros_like(grid))[:, 1]  # zero latent variance: p = Phi(mu / sqrt(a))
    assert np.max(np.abs(p - expit(grid[:, 0]))) < 0.01


def test_binary_form_equals_two_latent_form():
    # Two latents with noise a each rank class 1 first with Phi((mu1 - mu0) / sqrt(2a + nu0 + nu1)):
    # the binary form on f1 - f0 with noise 2a.
    rng = np.random.default_rng(2)
    mu, var = _marginals(rng, 30, 2)
    y = rng.integers(0, 2, 30)
    two = GaussianNoiseLikelihood(2, noise="probit", delta=0.03, form="multiclass")
    one = GaussianNoiseLikelihood(2, noise=2.0, delta=0.03, form="binary")
    d_mu, d_var = mu[:, 1:] - mu[:, :1], var.sum(1, keepdims=True)
    np.testing.assert_allclose(_eval(two, mu, var, y), _eval(one, d_mu, d_var, y), atol=1e-6)
    np.testing.assert_allclose(_eval(two, mu, var), _eval(one, d_mu, d_var), atol=1e-6)


def test_multiclass_step_equals_robustmax():
    # a = 0 is the robust-max model (paper 000 after eq. 18): same ELBO term, same prediction.
    rng = np.random.default_rng(3)
    mu, var = _marginals(rng, 40, 3)
    y = rng.integers(0, 3, 40)
    step = StepLikelihood(3, delta=1e-3, learn_delta=False)
    robustmax = RobustMax(3, epsilon=1e-3)
    np.testing.assert_allclose(_eval(step, mu, var, y), _eval(robustmax, mu, var, y), rtol=1e-10)
    np.testing.assert_allclose(_eval(step, mu, var), _eval(robustmax, mu, var), atol=1e-12)


def test_expected_log_likelihood_orders_step_probit_logit():
    # Paper 000 sec. III-C / App. B: L_step >= L_probit >= L_logit for the same q and delta.
    # It holds where the marginals already rank the observed class first, and delta is below
    # its upper bound (C-1)/C: binary when y * mu >= 0; multi-class when mu_y is the largest
    # mean and the latent variances are equal (then adding noise only shrinks the standardised
    # margins).  Otherwise it can fail, as the last two checks show.
    rng = np.random.default_rng(4)
    liks = {C: [GaussianNoiseLikelihood(C, noise=s, delta=0.02) for s in NOISES] for C in (2, 4)}

    mu, var = rng.normal(0, 2, (200, 1)), rng.uniform(0, 3, (200, 1))
    y = (mu[:, 0] > 0).astype(int)
    step, probit, logit = (_eval(lik, mu, var, y) for lik in liks[2])
    assert np.all(step >= probit - 1e-12) and np.all(probit >= logit - 1e-12)
    assert np.mean(step > probit + 1e-6) > 0.9

    mu = rng.normal(0, 1.5, (200, 4))
    var = np.repeat(rng.uniform(0.1, 3, (200, 1)), 4, axis=1)
    y = np.argmax(mu, axis=1)
    step, probit, logit = (_eval(lik, mu, var, y) for lik in liks[4])
    assert np.all(step >= probit - 1e-9) and np.all(probit >= logit - 1e-9)
    assert np.mean(step > probit + 1e-6) > 0.9

    # binary, marginals on the wrong side: the order reverses
    step, _, logit = (_eval(lik, np.array([[-1.0]]), np.array([[0.5]]), np.array([1])) for lik in liks[2])
    assert step < logit
    # multi-class, mu_y largest but much smaller variance than its rivals: noise helps class y
    mu, var = np.array([[0.0, -0.01, -0.01, -0.01]]), np.array([[1e-6, 100.0, 100.0, 100.0]])
    step, _, logit = (_eval(lik, mu, var, np.array([0])) for lik in liks[4])
    assert step < logit


def _finite_difference(fn, x, h=1e-6):
    grad = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[idx] = h
        grad[idx] = (fn(x + step) - fn(x - step)) / (2 * h)
    return grad


@pytest.mark.parametrize("num_classes", [2, 3])
def test_gradients_match_finite_differences(num_classes):
    rng = np.random.default_rng(5)
    lik = LogitLikelihood(num_classes, delta=0.05)
    mu, var = _marginals(rng, 3, lik.num_latent(num_classes))
    y = tf.constant(rng.integers(0, num_classes, 3))
    w = rng.normal(size=3)
    delta = lik.delta.unconstrained_variable

    def objective(m, v):
        return float(tf.reduce_sum(w * lik.variational_expectations(tf.constant(m), tf.constant(v), y)))

    m, v = tf.Variable(mu), tf.Variable(var)
    with tf.GradientTape() as tape:
        value = tf.reduce_sum(w * lik.variational_expectations(m, v, y))
    g_mu, g_var, g_delta = tape.gradient(value, [m, v, delta])
    np.testing.assert_allclose(g_mu.numpy(), _finite_difference(lambda x: objective(x, var), mu), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(g_var.numpy(), _finite_difference(lambda x: objective(mu, x), var), rtol=1e-5, atol=1e-7)

    def at_delta(u):
        delta.assign(u)
        return objective(mu, var)

    fd_delta = _finite_difference(at_delta, delta.numpy())
    assert g_delta.numpy() == pytest.approx(fd_delta, rel=1e-5)


@pytest.mark.parametrize("num_classes", [2, 3])
def test_gradients_finite_at_extremes(num_classes):
    lik = StepLikelihood(num_classes)  # a = 0: the standardised margins are mu / sqrt(nu)
    L = lik.num_latent(num_classes)
    mu = tf.Variable(np.array([[0.0] * L, [1e3] * L, [-1e3] + [1e3] * (L - 1), [5.0] * L]))
    var = tf.Variable(np.array([[0.0] * L, [0.0] * L, [1e4] * L, [1e-30] * L]))
    y = tf.constant([0, 1, 0, 1])
    with tf.GradientTape() as tape:
        value = tf.reduce_sum(lik.variational_expectations(mu, var, y))
    grads = tape.gradient(value, [mu, var, lik.delta.unconstrained_variable])
    assert np.isfinite(value.numpy())
    assert all(np.all(np.isfinite(g.numpy())) for g in grads)
    assert np.all(np.isfinite(lik.predict_proba(mu, var).numpy()))


def test_delta_is_learnable_and_bounded():
    lik = GaussianNoiseLikelihood(3, noise="logit", delta=0.1)
    assert [v.name for v in lik.trainable_variables] == ["delta:0"]
    assert GaussianNoiseLikelihood(3, learn_delta=False).trainable_variables == ()
    mu, var, y = np.zeros((1, 3)), np.ones((1, 3)), np.array([0])
    for extreme in (30.0, -30.0):  # whatever the optimiser does, delta stays in (0, (C-1)/C)
        lik.delta.unconstrained_variable.assign(extreme)
        assert 0.0 < lik.delta.numpy() < 2 / 3
        assert np.isfinite(_eval(lik, mu, var, y)).all()
    # eq. 27: for fixed marginals the ELBO term peaks at delta = 1 - S (binary)
    lik = ProbitLikelihood(2)
    mu, var, y = tf.constant([[0.7]], tf.float64), tf.constant([[0.4]], tf.float64), tf.constant([1])
    best = 1 - norm.cdf(0.7 / np.sqrt(1.4))
    slopes = []
    for d in (best - 0.05, best, best + 0.05):
        lik.delta.assign(d)
        with tf.GradientTape() as tape:
            value = lik.variational_expectations(mu, var, y)
        slopes.append(float(tape.gradient(value, lik.delta.unconstrained_variable)))
    assert slopes[0] > 1e-3 and abs(slopes[1]) < 1e-9 and slopes[2] < -1e-3


@pytest.fixture
def registered(monkeypatch):
    """The registry entries this module's report asks for, registered for one test only."""
    for cls in (GaussianNoiseLikelihood, StepLikelihood, ProbitLikelihood, LogitLikelihood):
        monkeypatch.setitem(likelihoods.LIKELIHOODS, cls.name, cls)


@pytest.mark.parametrize(
    "lik",
    [
        lambda: GaussianNoiseLikelihood(3, 1.7, delta=0.02, learn_delta=False, form="multiclass", num_quadrature=9),
        lambda: StepLikelihood(2),
        lambda: ProbitLikelihood(3, delta=0.2),
        lambda: LogitLikelihood(2, form="multiclass"),
    ],
)
def test_config_round_trip(registered, lik):
    lik = lik()
    lik.delta.assign(0.0123)  # a learned value travels with the config
    config = json.loads(json.dumps(lik.get_config()))
    rebuilt = likelihood_from_config(config)
    assert type(rebuilt) is type(lik) and rebuilt.get_config() == lik.get_config()
    rng = np.random.default_rng(6)
    mu, var = _marginals(rng, 5, lik.num_latent(lik.num_classes))
    y = rng.integers(0, lik.num_classes, 5)
    np.testing.assert_array_equal(_eval(rebuilt, mu, var, y), _eval(lik, mu, var, y))
    np.testing.assert_array_equal(_eval(rebuilt, mu, var), _eval(lik, mu, var))


def test_template_adapts_to_class_count(registered):
    # "auto": binary (one latent) for 2 classes, one latent per class for 3
    template = LogitLikelihood(delta=0.6, learn_delta=False)  # num_classes=None: set at fit
    assert likelihood_from_config(json.loads(json.dumps(template.get_config()))).get_config() == template.get_config()
    assert make_likelihood(template, 3).num_latent(3) == 3
    with pytest.raises(ValueError, match=r"delta must lie in \(0, 0.5\) = \(0, \(C-1\)/C\) for C=2"):
        make_likelihood(template, 2)
    binary = make_likelihood(ProbitLikelihood(2), 2)
    assert isinstance(binary, ProbitLikelihood) and binary.num_latent(2) == 1
    assert make_likelihood(binary, 3).num_latent(3) == 3
    with pytest.raises(ValueError, match="form='binary' needs num_classes=2"):
        make_likelihood(ProbitLikelihood(2, form="binary"), 3)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"noise": -0.5}, r"a must be finite and >= 0"),
        ({"noise": float("nan")}, r"a must be finite and >= 0"),
        ({"noise": "cauchy"}, r"one of \['logit', 'probit', 'step'\]"),
        ({"noise": True}, r"one of \['logit', 'probit', 'step'\]"),
        ({"delta": 0.0}, r"delta must lie in \(0, 0.666667\)"),
        ({"delta": 0.7}, r"delta must lie in \(0, 0.666667\)"),
        ({"form": "binary"}, r"needs num_classes=2; got num_classes=3: use form='auto' or form='multiclass'"),
        ({"form": "ovr"}, r"form must be one of \('auto', 'binary', 'multiclass'\)"),
        ({"num_quadrature": 1}, r"num_quadrature must be an integer >= 2"),
    ],
)
def test_invalid_options(kwargs, message):
    with pytest.raises(ValueError, match=message):
        GaussianNoiseLikelihood(3, **kwargs)


def test_invalid_counts():
    with pytest.raises(ValueError, match=r"delta must lie in \(0, 0.5\)"):
        ProbitLikelihood(2, delta=0.5)
    with pytest.raises(ValueError, match="num_classes must be an integer >= 2"):
        StepLikelihood(1)
    with pytest.raises(ValueError, match="built for 3 classes, not 4"):
        LogitLikelihood(3).num_latent(4)

"""Softmax (Gumbel bound, paper 000 eq. 24-26) and logistic-softmax (paper 004) likelihoods,
and one end-to-end training smoke test for every likelihood of this issue."""

import functools
import json

import gpflow
import numpy as np
import pytest
import tensorflow as tf
from scipy.special import expit, log_expit, log_softmax, softmax

from gpal.models import likelihoods
from gpal.models.likelihoods.gaussian_noise import LogitLikelihood, ProbitLikelihood
from gpal.models.input_noise import NoInputNoise
from gpal.models.likelihoods.base import likelihood_from_config, make_likelihood
from gpal.models.likelihoods.logistic_softmax import LogisticSoftmaxLikelihood, logistic_softmax_log_prob, logistic_softmax_probs
from gpal.models.likelihoods.softmax import SoftmaxLikelihood, gumbel_softmax_bound
from gpal.models.latent_gps import LatentGPs
from gpal.models.svgp import NoisySVGP
from gpal.training.svi import TrainData, Trainer


def _marginals(rng, n, C, mean_sd=1.5, var_range=(0.05, 3.0)):
    return rng.normal(0.0, mean_sd, (n, C)), rng.uniform(*var_range, (n, C))


def _draws(rng, mu, var, num_samples):
    return mu + np.sqrt(var) * rng.standard_normal((num_samples, *mu.shape))


def _logistic_softmax_log_prob_np(F, y):
    """Independent reference: log sigma(f_y) - log sum_c sigma(f_c) via scipy."""
    ls = log_expit(F)
    own = np.take_along_axis(ls, np.broadcast_to(y[:, None], (*F.shape[:-1], 1)), axis=-1)[..., 0]
    return own - np.log(np.exp(ls).sum(-1))


def _tf(*arrays):
    return [tf.constant(a) for a in arrays]


def _compiled(fn):
    """``fn`` as one graph (a Monte Carlo loop of thousands of draws as a graph loop, not as eager iterations), without
    AutoGraph, as gpal compiles its own functions: converting a likelihood's code costs about a second a function."""
    return tf.function(fn, autograph=False)


# ------------------------------------------------------------------ softmax
def test_gumbel_bound_closed_form_and_zero_variance_limit():
    rng = np.random.default_rng(0)
    mu, var = _marginals(rng, 40, 4)
    y = rng.integers(0, 4, 40)
    own = np.take_along_axis(var / 2 - mu, y[:, None], 1)[:, 0]
    others = np.where(np.arange(4) == y[:, None], 0.0, np.exp(var / 2 + mu)).sum(1)
    expected = -np.log1p(np.exp(own) * others)  # eq. 25 as printed
    np.testing.assert_allclose(gumbel_softmax_bound(*_tf(mu, var, y)).numpy(), expected, rtol=1e-12)
    # no latent uncertainty, no Jensen gap: the bound is log softmax itself
    exact = np.take_along_axis(log_softmax(mu, axis=1), y[:, None], 1)[:, 0]
    np.testing.assert_allclose(gumbel_softmax_bound(*_tf(mu, np.zeros_like(var), y)).numpy(), exact, rtol=1e-12)


def test_gumbel_bound_below_monte_carlo_log_softmax():
    rng = np.random.default_rng(1)
    blocks = []
    for mean_sd, var_range in [(1.0, (1e-4, 0.1)), (2.0, (0.1, 3.0)), (30.0, (1.0, 100.0)), (300.0, (1e-3, 1e3))]:
        blocks.append(_marginals(rng, 30, 3, mean_sd, var_range))
    mu, var = (np.concatenate(parts) for parts in zip(*blocks))
    y = rng.integers(0, 3, len(mu))
    bound = gumbel_softmax_bound(*_tf(mu, var, y)).numpy()
    assert np.all(np.isfinite(bound)) and np.all(bound <= 0.0)
    samples = np.take_along_axis(log_softmax(_draws(rng, mu, var, 20_000), axis=2), y[None, :, None], 2)[..., 0]
    mc, se = samples.mean(0), samples.std(0) / np.sqrt(len(samples))
    np.testing.assert_array_less(bound, mc + 4 * se + 1e-12)
    # the Jensen gap grows with the latent variance: typically large for the broad marginals
    assert np.median((mc - bound)[60:90]) > 1.0 > np.max((mc - bound)[:30])


def test_monte_carlo_elbo_estimates_expected_log_softmax_and_sits_above_the_bound():
    rng = np.random.default_rng(11)
    mu, var = _marginals(rng, 60, 3, 2.0, (0.1, 4.0))
    y = rng.integers(0, 3, 60)
    lik = SoftmaxLikelihood(3, elbo="monte_carlo", num_elbo_samples=4000)
    # compiled: the 4000 draws as a graph loop, not 4000 eager iterations; the same draws and value as eager
    # (monte_carlo_mean is stateless; test_softmax_prediction_matches_monte_carlo checks eager against compiled)
    estimate = _compiled(lik.variational_expectations)(*_tf(mu, var, y)).numpy()
    samples = np.take_along_axis(log_softmax(_draws(rng, mu, var, 40_000), axis=2), y[None, :, None], 2)[..., 0]
    reference, se = samples.mean(0), samples.std(0) / np.sqrt(len(samples))
    # two independent Monte Carlo estimates of E_q log softmax_y(f): 4000 draws against 40000
    assert np.mean(np.abs(estimate - reference) / (se * np.sqrt(11.0))) < 1.0
    assert np.all(estimate > gumbel_softmax_bound(*_tf(mu, var, y)).numpy())  # Jensen's bound lies below


def test_two_class_softmax_is_the_logistic_of_the_latent_difference():
    """With two classes softmax_y(f) = sigmoid(f_y - f_other), and under independent marginals that difference is
    N(mu_y - mu_o, var_y + var_o): a one-dimensional Gauss-Hermite integral gives the ELBO term and the predictive
    that the Monte Carlo estimates (two dimensions, the likelihood's own draws) must match."""
    rng = np.random.default_rng(13)
    mu, var = _marginals(rng, 40, 2, 2.0, (0.05, 5.0))
    y = rng.integers(0, 2, 40)
    sign = np.where(y == 1, 1.0, -1.0)
    d_mean, d_sd = sign * (mu[:, 1] - mu[:, 0]), np.sqrt(var.sum(1))
    t, w = np.polynomial.hermite.hermgauss(80)
    nodes = d_mean[:, None] + np.sqrt(2.0) * d_sd[:, None] * t  # E_{N(m, s^2)} h = sum_k w_k h(m + sqrt(2) s t_k) / sqrt(pi)
    expected_log = log_expit(nodes) @ w / np.sqrt(np.pi)
    lik = SoftmaxLikelihood(2, num_predict_samples=4000, seed=3, elbo="monte_carlo", num_elbo_samples=4000)
    estimate = _compiled(lik.variational_expectations)(*_tf(mu, var, y)).numpy()
    # the draws are shared by the rows, so per row the Monte Carlo error is that of 4000 draws: SD / sqrt(4000)
    sd_log = np.sqrt(np.maximum((log_expit(nodes) ** 2) @ w / np.sqrt(np.pi) - expected_log**2, 0.0))
    np.testing.assert_array_less(np.abs(estimate - expected_log), 5 * sd_log / np.sqrt(4000) + 1e-6)
    p1 = expit(mu[:, 1, None] - mu[:, 0, None] + np.sqrt(2.0) * d_sd[:, None] * t) @ w / np.sqrt(np.pi)
    proba = _compiled(lik.predict_proba)(*_tf(mu, var)).numpy()
    np.testing.assert_allclose(proba[:, 1], p1, atol=5 * 0.5 / np.sqrt(4000))


def test_monte_carlo_elbo_gradients_reach_means_and_variances():
    rng = np.random.default_rng(12)
    mu, var = _marginals(rng, 5, 3)
    y = rng.integers(0, 3, 5)
    lik = SoftmaxLikelihood(3, elbo="monte_carlo", num_elbo_samples=64)
    Fmu, Fvar = tf.Variable(mu), tf.Variable(var)
    with tf.GradientTape() as tape:
        total = tf.reduce_sum(lik.variational_expectations(Fmu, Fvar, tf.constant(y)))
    g_mu, g_var = tape.gradient(total, [Fmu, Fvar])
    h = 1e-6  # fixed draws make the estimate a smooth function of (mu, var): central differences apply
    f = lambda m, v: float(tf.reduce_sum(lik.variational_expectations(*_tf(m, v, y))))  # noqa: E731
    e = np.zeros_like(mu)
    e[2, 1] = h
    np.testing.assert_allclose(g_mu.numpy()[2, 1], (f(mu + e, var) - f(mu - e, var)) / (2 * h), rtol=1e-5)
    np.testing.assert_allclose(g_var.numpy()[2, 1], (f(mu, var + e) - f(mu, var - e)) / (2 * h), rtol=1e-5)


def test_gumbel_bound_and_gradients_finite_at_extremes():
    mu = tf.Variable([[1e3, -1e3, 0.0], [-1e3, 1e3, 5.0], [0.0, 0.0, 0.0], [700.0, 700.0, -700.0]], dtype=tf.float64)
    var = tf.Variable([[1e4, 1e4, 1e4], [0.0, 0.0, 0.0], [1e4, 1e-12, 0.0], [1e3, 1e3, 1e3]], dtype=tf.float64)
    y = tf.constant([1, 0, 2, 2])
    with tf.GradientTape() as tape:
        bound = gumbel_softmax_bound(mu, var, y)
        total = tf.reduce_sum(bound)
    assert np.all(np.isfinite(bound.numpy()))
    # -log(1 + P) ~ -log P when P is huge: e.g. row 1, log P = (0 + 1e3) + logsumexp(1e3, 5) = 2000
    assert bound.numpy()[1] == pytest.approx(-2000.0, rel=1e-12)
    grads = tape.gradient(total, [mu, var])
    assert all(np.all(np.isfinite(g.numpy())) for g in grads)


def test_softmax_prediction_matches_monte_carlo():
    rng = np.random.default_rng(2)
    mu, var = _marginals(rng, 30, 3)
    lik = SoftmaxLikelihood(3, num_predict_samples=2000, seed=5)
    predict = _compiled(lik.predict_proba)
    proba = predict(*_tf(mu, var)).numpy()
    assert proba.shape == (30, 3)
    np.testing.assert_allclose(proba.sum(1), 1.0, atol=1e-12)
    reference = softmax(_draws(rng, mu, var, 100_000), axis=2)
    tolerance = 4 * reference.std(0) * np.sqrt(1 / 2000 + 1 / 100_000) + 1e-4
    np.testing.assert_array_less(np.abs(proba - reference.mean(0)), tolerance)
    # stateless: the same seed gives the same answer, eager or compiled; another seed another one
    few = SoftmaxLikelihood(3, num_predict_samples=10, seed=5)
    eager = few.predict_proba(*_tf(mu, var)).numpy()
    np.testing.assert_allclose(_compiled(few.predict_proba)(*_tf(mu, var)).numpy(), eager, rtol=1e-12)
    assert not np.allclose(SoftmaxLikelihood(3, num_predict_samples=10, seed=6).predict_proba(*_tf(mu, var)), eager)
    # zero variance: the softmax of the mean
    np.testing.assert_allclose(few.predict_proba(*_tf(mu, np.zeros_like(var))).numpy(), softmax(mu, axis=1), rtol=1e-12)


# ---------------------------------------------------------- logistic-softmax
def test_logistic_softmax_log_prob_is_stable():
    rng = np.random.default_rng(3)
    F = rng.normal(0, 3, (50, 4))
    y = rng.integers(0, 4, 50)
    expected = _logistic_softmax_log_prob_np(F, y)
    np.testing.assert_allclose(logistic_softmax_log_prob(*_tf(F, y)).numpy(), expected, rtol=1e-12)
    np.testing.assert_allclose(logistic_softmax_probs(tf.constant(F)).numpy().sum(1), 1.0, atol=1e-12)
    # far below zero sigma(f) ~ e^f underflows in the naive form; there p(y|f) -> softmax(f)
    F = np.array([[-800.0, -801.0, -802.0], [-2000.0, 0.0, 2000.0]])
    y = np.array([0, 0])
    log_p = logistic_softmax_log_prob(*_tf(F, y)).numpy()
    assert log_p[0] == pytest.approx(log_softmax(F[0])[0], rel=1e-12)
    assert log_p[1] == pytest.approx(-2000.0 - np.log(1.5), rel=1e-12)


def test_logistic_softmax_expectation_matches_monte_carlo():
    rng = np.random.default_rng(4)
    mu, var = _marginals(rng, 30, 3)
    y = rng.integers(0, 3, 30)
    lik = LogisticSoftmaxLikelihood(3, num_samples=2000, seed=1)
    value = _compiled(lik.variational_expectations)(*_tf(mu, var, y)).numpy()
    reference = _logistic_softmax_log_prob_np(_draws(rng, mu, var, 100_000), y)
    tolerance = 4 * reference.std(0) * np.sqrt(1 / 2000 + 1 / 100_000)
    np.testing.assert_array_less(np.abs(value - reference.mean(0)), tolerance)
    exact = _logistic_softmax_log_prob_np(mu, y)  # no latent variance: E log p = log p(y | mu)
    few = LogisticSoftmaxLikelihood(3, num_samples=3)
    np.testing.assert_allclose(few.variational_expectations(*_tf(mu, 0 * var, y)).numpy(), exact, rtol=1e-12)


def test_logistic_softmax_prediction_integrates_over_latents():
    rng = np.random.default_rng(5)
    mu, var = _marginals(rng, 30, 3)
    lik = LogisticSoftmaxLikelihood(3, num_predict_samples=2000, seed=2)
    predict = _compiled(lik.predict_proba)
    proba = predict(*_tf(mu, var)).numpy()
    np.testing.assert_allclose(proba.sum(1), 1.0, atol=1e-12)
    draws = np.exp(log_expit(_draws(rng, mu, var, 100_000)))
    reference = draws / draws.sum(2, keepdims=True)
    tolerance = 4 * reference.std(0) * np.sqrt(1 / 2000 + 1 / 100_000) + 1e-4
    np.testing.assert_array_less(np.abs(proba - reference.mean(0)), tolerance)
    # not a plug-in of the mean: broad latents pull the prediction towards uniform
    broad = predict(*_tf(mu, np.full_like(var, 25.0))).numpy()
    plug_in = logistic_softmax_probs(tf.constant(mu)).numpy()
    assert np.mean(np.abs(broad - plug_in).max(1) > 0.02) > 0.5
    assert np.abs(broad - 1 / 3).mean() < 0.5 * np.abs(plug_in - 1 / 3).mean()


def _finite_difference(fn, x, h=1e-6):
    grad = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[idx] = h
        grad[idx] = (fn(x + step) - fn(x - step)) / (2 * h)
    return grad


def test_gradients_match_finite_differences():
    rng = np.random.default_rng(6)
    mu, var = _marginals(rng, 3, 3)
    y = tf.constant(rng.integers(0, 3, 3))
    w = rng.normal(size=3)
    for expectation in (LogisticSoftmaxLikelihood(3, num_samples=4).variational_expectations, gumbel_softmax_bound):

        def objective(m, v):
            return float(tf.reduce_sum(w * expectation(tf.constant(m), tf.constant(v), y)))

        m, v = tf.Variable(mu), tf.Variable(var)
        with tf.GradientTape() as tape:
            value = tf.reduce_sum(w * expectation(m, v, y))
        g_mu, g_var = tape.gradient(value, [m, v])
        fd_mu = _finite_difference(lambda x: objective(x, var), mu)
        np.testing.assert_allclose(g_mu.numpy(), fd_mu, rtol=1e-5, atol=1e-7)
        fd_var = _finite_difference(lambda x: objective(mu, x), var)
        np.testing.assert_allclose(g_var.numpy(), fd_var, rtol=1e-5, atol=1e-7)


# ------------------------------------------------------------ configuration
@pytest.fixture
def registered(monkeypatch):
    for cls in (SoftmaxLikelihood, LogisticSoftmaxLikelihood):
        monkeypatch.setitem(likelihoods.LIKELIHOODS, cls.name, cls)


@pytest.mark.parametrize(
    "lik",
    [lambda: SoftmaxLikelihood(4, num_predict_samples=64, seed=3), lambda: LogisticSoftmaxLikelihood(2, 16, 32, 7),
     lambda: SoftmaxLikelihood(3, num_predict_samples=24, elbo="monte_carlo", num_elbo_samples=8)],
)
def test_config_round_trip(registered, lik):
    lik = lik()
    config = json.loads(json.dumps(lik.get_config()))
    rebuilt = likelihood_from_config(config)
    assert type(rebuilt) is type(lik) and rebuilt.get_config() == lik.get_config()
    rng = np.random.default_rng(7)
    mu, var = _marginals(rng, 5, lik.num_classes)
    y = rng.integers(0, lik.num_classes, 5)
    np.testing.assert_array_equal(rebuilt.predict_proba(*_tf(mu, var)), lik.predict_proba(*_tf(mu, var)))
    np.testing.assert_array_equal(
        rebuilt.variational_expectations(*_tf(mu, var, y)), lik.variational_expectations(*_tf(mu, var, y))
    )


def test_template_gets_class_count_at_fit(registered):
    template = LogisticSoftmaxLikelihood(num_samples=7)
    assert likelihood_from_config(json.loads(json.dumps(template.get_config()))).get_config() == template.get_config()
    fitted = make_likelihood(template, 3)
    assert fitted.num_latent(3) == 3 and fitted.num_samples == 7
    with pytest.raises(ValueError, match="built for None classes, not 3"):
        template.num_latent(3)


@pytest.mark.parametrize(
    "build, message",
    [
        (lambda: SoftmaxLikelihood(1), "num_classes must be an integer >= 2; got 1"),
        (lambda: SoftmaxLikelihood(3, num_predict_samples=0), "num_predict_samples must be an integer >= 1; got 0"),
        (lambda: SoftmaxLikelihood(3, seed=-1), "seed must be an integer >= 0; got -1"),
        (lambda: SoftmaxLikelihood(3, elbo="exact"), "softmax elbo must be one of"),
        (lambda: SoftmaxLikelihood(3, elbo="monte_carlo", num_elbo_samples=0), "num_elbo_samples must be an integer"),
        (lambda: LogisticSoftmaxLikelihood(3, num_samples=2.5), "num_samples must be an integer >= 1; got 2.5"),
        (lambda: LogisticSoftmaxLikelihood(3).num_latent(2), "built for 3 classes, not 2"),
        (lambda: SoftmaxLikelihood(2).num_latent(3), "built for 2 classes, not 3"),
    ],
)
def test_invalid_options(build, message):
    with pytest.raises(ValueError, match=message):
        build()


# ------------------------------------------------------------ end to end
def _blobs(num_classes, n_per_class=12, seed=0):
    rng = np.random.default_rng(seed)
    angles = 2 * np.pi * np.arange(num_classes) / num_classes
    centres = 2.5 * np.stack([np.cos(angles), np.sin(angles)], axis=1)
    X = np.concatenate([c + 0.8 * rng.standard_normal((n_per_class, 2)) for c in centres])
    return X, np.repeat(np.arange(num_classes), n_per_class)


@pytest.mark.parametrize(
    "make, num_classes",
    [
        (lambda: ProbitLikelihood(2), 2),
        (lambda: LogitLikelihood(3), 3),
        (lambda: SoftmaxLikelihood(3, num_predict_samples=200), 3),
        (lambda: LogisticSoftmaxLikelihood(2, num_samples=20, num_predict_samples=200), 2),
    ],
)
def test_training_smoke(make, num_classes):
    X, y = _blobs(num_classes)
    lik = make()
    L = lik.num_latent(num_classes)
    kernels = [gpflow.kernels.SquaredExponential(lengthscales=np.ones(2)) for _ in range(L)]
    model = NoisySVGP(LatentGPs(kernels, X[::4]), NoInputNoise(), lik, None, len(X), num_classes)
    trainer = Trainer(model)  # one full-batch step an epoch, 30 of them
    elbos = -np.array(trainer.fit(TrainData.from_arrays(X, np.zeros_like(X), y), epochs=30, batch_size=len(X),
                                  learning_rate=0.05, progress=False).history)
    assert np.all(np.isfinite(elbos))
    assert elbos[-10:].mean() > elbos[:10].mean()
    proba = _compiled(model.predict_proba)(*_tf(X, np.zeros_like(X)), tf.constant([0, 0], tf.int64)).numpy()
    assert proba.shape == (len(X), num_classes) and np.allclose(proba.sum(1), 1.0)
    assert np.mean(proba.argmax(1) == y) > 0.8


@pytest.mark.parametrize("kind", sorted(likelihoods.LIKELIHOODS))
def test_conditional_proba_is_the_predictive_at_zero_variance(kind):
    """p(y | f) (what BALD and sampling use) equals every likelihood's predictive with no latent spread."""
    lik = make_likelihood(kind, 3)
    F = np.random.default_rng(11).normal(scale=2.0, size=(6, lik.num_latent(3)))
    direct = lik.conditional_proba(tf.constant(F)).numpy()
    # compiled: a Monte Carlo likelihood's default 1000 draws as a graph loop, not 1000 eager iterations (same value)
    predictive = _compiled(lik.predict_proba)(*_tf(F, np.zeros_like(F))).numpy()
    np.testing.assert_allclose(direct, predictive, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(direct.sum(axis=1), 1.0, rtol=1e-12)
    if kind == "softmax":
        np.testing.assert_allclose(direct, softmax(F, axis=1), rtol=1e-12)
    if kind in ("robustmax", "step"):  # the rule: 1 - flip on the largest latent value, flip / (C - 1) elsewhere
        eps = float((lik.epsilon if kind == "robustmax" else lik.delta).numpy())
        np.testing.assert_allclose(direct, np.where(np.eye(3)[F.argmax(1)] == 1, 1 - eps, eps / 2), rtol=1e-12)
    if kind == "logistic_softmax":
        sig = 1.0 / (1.0 + np.exp(-F))
        np.testing.assert_allclose(direct, sig / sig.sum(axis=1, keepdims=True), rtol=1e-12)


@functools.cache
def _input_draws():
    """Two latent marginals (S, n, 2) at S = 4000 draws of each of n = 5 inputs; read-only, shared by the test below."""
    rng = np.random.default_rng(8)
    S, n = 4000, 5
    mu = rng.normal(0.0, 1.5, (S, n, 2)) + rng.normal(0, 1.0, (1, n, 2))
    var = rng.uniform(0.05, 3.0, (S, n, 2))
    mu.setflags(write=False)
    var.setflags(write=False)
    return mu, var


@functools.cache
def _exact_second_class(make):
    """The exact p(y = 1 | x_s) of ``make``'s likelihood at each input draw, averaged over s (n,): the same at any
    number of latent draws per input, so computed once per likelihood (Gauss-Hermite rules of 80 nodes)."""
    mu, var = _input_draws()
    t, w = np.polynomial.hermite.hermgauss(80)
    z = np.sqrt(2.0) * t
    if make is SoftmaxLikelihood:  # sigma(f_2 - f_1): a 1-D rule
        g = (mu[..., 1] - mu[..., 0])[..., None] + np.sqrt(var[..., 0] + var[..., 1])[..., None] * z
        return (1.0 / (1.0 + np.exp(-g)) @ w / np.sqrt(np.pi)).mean(0)
    # sigma(f_2) / (sigma(f_1) + sigma(f_2)) needs both: a 2-D rule, over blocks of draws (80 x 80 nodes each)
    s1, s2 = (1 / (1 + np.exp(-(mu[..., c, None] + np.sqrt(var[..., c])[..., None] * z))) for c in (0, 1))
    blocks = zip(np.array_split(s1, 8), np.array_split(s2, 8))
    exact = np.concatenate([b[..., None, :] / (a[..., :, None] + b[..., None, :]) @ w @ w for a, b in blocks]) / np.pi
    return exact.mean(0)


@pytest.mark.parametrize("make", [SoftmaxLikelihood, LogisticSoftmaxLikelihood])
@pytest.mark.parametrize("per_input", [1, 3])
def test_draws_spread_over_input_draws_estimate_the_predictive(make, per_input):
    """At S input draws each draw gets ceil(num_predict_samples / S) latent draws of its own: the average over
    s matches the exact per-draw predictive averaged over s (two classes: a 1-D Gauss-Hermite integral of
    p(y = 1 | f_2 - f_1)), within 4 standard errors measured from the spread over s, and equals a numpy
    reading of the same latent draws."""
    mu, var = _input_draws()
    S, n = mu.shape[:2]
    lik = make(2, num_predict_samples=S * per_input - 1, seed=3)
    seed = tf.constant([7, -1], tf.int64)
    per_draw = _compiled(lik.predict_proba_per_draw)
    draws = per_draw(*_tf(mu, var), seed).numpy()
    assert draws.shape == (S, n, 2)
    np.testing.assert_allclose(lik.predict_proba_per_draw(*_tf(mu[:5], var[:5]), seed).numpy(),  # eager: shapes checked
                               per_draw(*_tf(mu[:5], var[:5]), seed).numpy(), rtol=1e-12)
    estimate, se = draws.mean(0), draws.std(0, ddof=1) / np.sqrt(S)
    assert se[:, 1].min() > 0
    np.testing.assert_array_less(np.abs(estimate[:, 1] - _exact_second_class(make)), 4 * se[:, 1])
    # the same latent draws read in numpy: K per input draw, shared by the points (float32, as the path draws them)
    K = per_input
    eps = tf.random.stateless_normal([2, K, S, 1], seed=tf.random.experimental.stateless_fold_in(seed, 3),
                                     dtype=tf.float32, alg="philox").numpy().astype(np.float64)
    F = mu[:, :, None] + np.sqrt(var)[:, :, None] * eps.transpose(2, 3, 1, 0)  # (S, n, K, 2)
    reference = lik.conditional_proba(tf.constant(F.reshape(-1, 2))).numpy().reshape(S, n, K, 2).mean(2)
    np.testing.assert_allclose(draws, reference, rtol=2e-5, atol=1e-7)

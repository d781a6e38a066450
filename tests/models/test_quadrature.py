"""P(class y has the largest latent value) at very unequal variances, against independent computations."""

import numpy as np
import pytest
import tensorflow as tf
from scipy import integrate, special
from scipy.stats import norm

from gpal.models.quadrature import argmax_probabilities, panel_rule, prob_largest

NODES, WEIGHTS = panel_rule(8)


def _reference(mu, sd, y):
    """Adaptive quadrature of int N(t | mu_y, sd_y^2) prod_{c != y} Phi((t - mu_c) / sd_c) dt."""
    others = [c for c in range(len(mu)) if c != y]
    # ndtr is norm.cdf without scipy.stats' per-call argument handling (30 times faster here, equal to 2e-16)
    f = lambda t: (np.exp(-0.5 * ((t - mu[y]) / sd[y]) ** 2) / (np.sqrt(2 * np.pi) * sd[y])  # noqa: E731
                   * np.prod(special.ndtr((t - mu[others]) / sd[others])))
    lo, hi = mu[y] - 12 * sd[y], mu[y] + 12 * sd[y]
    points = [m for m in mu if lo < m < hi]
    return integrate.quad(f, lo, hi, points=points, limit=500, epsabs=1e-13, epsrel=1e-12)[0]


def _ours(mu, var, y):
    return prob_largest(tf.constant(mu), tf.constant(var), tf.constant(y), NODES, WEIGHTS).numpy()


@pytest.mark.parametrize("ratio", [1.0, 40.0, 1e3, 1e4])
@pytest.mark.parametrize("C", [2, 3, 5])
def test_matches_adaptive_quadrature_at_unequal_variances(ratio, C):
    rng = np.random.default_rng(int(ratio) + C)
    mu = rng.normal(0.0, 2.0, (12, C))
    var = rng.uniform(0.5, 2.0, (12, C))
    var[::2, 0] *= ratio  # one class much wider than the others (rows 0, 2, ...) or much narrower
    var[1::2, 0] /= ratio
    y = rng.integers(0, C, 12)
    reference = [_reference(mu[i], np.sqrt(var[i]), y[i]) for i in range(12)]
    np.testing.assert_allclose(_ours(mu, var, y), reference, rtol=0, atol=1e-8)


def test_the_old_failure_case():
    # A wide class (variance 1000) against a narrow one (1): the former 20-node Gauss-Hermite rule gave
    # about 0.455 here, the exact value is Phi(0.5 / sqrt(1001)) ~= 0.5063.
    got = _ours(np.array([[0.5, 0.0]]), np.array([[1000.0, 1.0]]), np.array([0]))
    assert got[0] == pytest.approx(norm.cdf(0.5 / np.sqrt(1001.0)), abs=1e-9)


def test_two_classes_equal_the_closed_form():
    rng = np.random.default_rng(3)
    mu, var = rng.normal(0, 2, (40, 2)), np.exp(rng.uniform(-5, 5, (40, 2)))
    expected = norm.cdf((mu[:, 0] - mu[:, 1]) / np.sqrt(var.sum(axis=1)))
    np.testing.assert_allclose(_ours(mu, var, np.zeros(40, dtype=int)), expected, rtol=0, atol=1e-8)


def test_probabilities_sum_to_one_before_renormalising_and_match_monte_carlo():
    rng = np.random.default_rng(4)
    C = 4
    mu, var = rng.normal(0, 1.5, (5, C)), np.exp(rng.uniform(np.log(1e-2), np.log(1e2), (5, C)))
    raw = np.stack([_ours(mu, var, np.full(5, c)) for c in range(C)], axis=1)
    np.testing.assert_allclose(raw.sum(axis=1), 1.0, atol=1e-8)
    draws = mu + np.sqrt(var) * np.random.default_rng(5).standard_normal((400_000, 5, C))
    freq = np.eye(C)[draws.argmax(axis=-1)].mean(axis=0)
    se = np.sqrt(freq * (1 - freq) / 400_000) + 1e-6
    assert np.all(np.abs(raw - freq) < 5 * se)
    p = argmax_probabilities(tf.constant(mu), tf.constant(var), NODES, WEIGHTS).numpy()
    np.testing.assert_allclose(p, raw, atol=1e-8)


def test_gradients_match_finite_differences():
    mu = tf.Variable([[0.3, -0.2, 0.1], [1.0, 0.0, -1.0]], dtype=tf.float64)
    var = tf.Variable([[50.0, 0.05, 1.0], [0.5, 2.0, 0.01]], dtype=tf.float64)
    y = tf.constant([0, 1])
    with tf.GradientTape() as tape:
        total = tf.reduce_sum(prob_largest(mu, var, y, NODES, WEIGHTS))
    g_mu, g_var = tape.gradient(total, [mu, var])
    h = 1e-6
    for (i, j) in [(0, 0), (0, 1), (1, 2), (1, 0)]:
        e = np.zeros((2, 3))
        e[i, j] = h
        f = lambda m, v: float(tf.reduce_sum(prob_largest(tf.constant(m), tf.constant(v), y, NODES, WEIGHTS)))  # noqa: E731
        m0, v0 = mu.numpy(), var.numpy()
        np.testing.assert_allclose(g_mu.numpy()[i, j], (f(m0 + e, v0) - f(m0 - e, v0)) / (2 * h), rtol=1e-4, atol=1e-8)
        np.testing.assert_allclose(g_var.numpy()[i, j], (f(m0, v0 + e) - f(m0, v0 - e)) / (2 * h), rtol=1e-4, atol=1e-8)


def test_monte_carlo_draws_at_once_are_the_loops_draws_and_gradients():
    """``at_once`` (the training ELBO's one pass over the stacked draws) takes the loop's very draws: the same
    estimate and gradients up to the order of the sum, and a label closed over per row, tiled, stays with its row."""
    from gpal.models.quadrature import monte_carlo_mean

    rng = np.random.default_rng(3)
    Fmu = tf.constant(rng.normal(size=(7, 3)))
    Fvar = tf.constant(rng.uniform(0.1, 2.0, size=(7, 3)))
    labels = tf.constant(rng.integers(0, 3, 7), tf.int32)
    S = 16

    def estimate(at_once: bool) -> tuple[np.ndarray, list[np.ndarray]]:
        rows = tf.tile(labels, [S]) if at_once else labels
        with tf.GradientTape() as tape:
            tape.watch([Fmu, Fvar])
            value = monte_carlo_mean(lambda F: tf.gather(tf.nn.log_softmax(F, axis=1), rows, axis=1, batch_dims=1),
                                     Fmu, Fvar, S, 5, at_once=at_once)
        return value.numpy(), [g.numpy() for g in tape.gradient(value, [Fmu, Fvar])]

    loop, loop_grads = estimate(False)
    once, once_grads = estimate(True)
    np.testing.assert_allclose(once, loop, rtol=1e-13, atol=1e-15)
    for a, b in zip(once_grads, loop_grads):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)
    # a different seed is a different estimate: the draws are not shared by accident
    other = monte_carlo_mean(lambda F: F, Fmu, Fvar, S, 6, at_once=True).numpy()
    assert np.abs(other - monte_carlo_mean(lambda F: F, Fmu, Fvar, S, 5, at_once=True).numpy()).max() > 1e-3

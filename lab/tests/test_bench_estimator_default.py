"""lab/studies/bench_estimator_default.py: the population prior's variants against closed forms in one dimension."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import optimize, stats

from conftest import repository_script

WEIGHTS, MEANS, VARIANCES = np.array([0.3, 0.7]), np.array([-1.0, 2.0]), np.array([0.5, 1.5])


@pytest.fixture(scope="module")
def bench():
    return repository_script("lab/studies/bench_estimator_default.py")


@pytest.fixture(scope="module")
def prior():
    from gpal.models.input_prior import MixturePrior

    return MixturePrior(WEIGHTS, MEANS[:, None], VARIANCES[:, None, None])


def _posterior(x, v, weights, means, variances):
    """Mean and variance of x given x~ = x + N(0, v) under the 1-D mixture prior, component by component."""
    r = weights * stats.norm.pdf(x, means, np.sqrt(variances + v))
    r /= r.sum()
    m = (variances * x + v * means) / (variances + v)
    s = variances * v / (variances + v)
    mean = np.sum(r * m)
    return mean, np.sum(r * (s + m ** 2)) - mean ** 2


def _tf_posterior(prior, x, v):
    import tensorflow as tf

    mean, var = prior.posterior(tf.constant([[x]], tf.float64), tf.constant([[v]], tf.float64))
    return float(mean.numpy()[0, 0]), float(var.numpy()[0, 0])


def test_the_background_weight_maximises_the_likelihood_and_its_component_joins_the_posterior(bench, prior):
    rng = np.random.default_rng(0)
    v = rng.uniform(0.1, 1.0, 60)
    # most rows from the mixture, a few far outside it, which the broad component should claim
    x = np.concatenate([rng.normal(2.0, 1.0, 54), rng.normal(0.0, 30.0, 6)]) + rng.normal(0, np.sqrt(v))
    s = 1000.0
    weight = bench.background_weight(prior, x[:, None], v[:, None], s)
    mixture = (WEIGHTS * stats.norm.pdf(x[:, None], MEANS, np.sqrt(VARIANCES + v[:, None]))).sum(axis=1)
    broad = stats.norm.pdf(x, 0.0, np.sqrt(s + v))
    best = optimize.minimize_scalar(lambda w: -np.sum(np.log((1 - w) * mixture + w * broad)), bounds=(0, 1),
                                    method="bounded", options={"xatol": 1e-10})
    assert 0.01 < weight < 0.5 and weight == pytest.approx(best.x, abs=1e-6)
    assert bench.background_weight(prior, x[:54, None], v[:54, None], s) < weight  # fewer outliers, less weight

    widened = bench.with_background(prior, weight, s)
    for xi, vi in ((2.5, 0.4), (40.0, 0.5), (-1.2, 3.0)):
        expected = _posterior(xi, vi, np.append((1 - weight) * WEIGHTS, weight), np.append(MEANS, 0.0),
                              np.append(VARIANCES, s))
        assert _tf_posterior(widened, xi, vi) == pytest.approx(expected, rel=1e-9)
    assert bench.with_background(prior, 0.0, s) is prior


def test_a_row_beyond_the_training_error_bars_gets_the_broad_or_the_tempered_posterior(bench, prior):
    limit, s = 0.8, 1000.0
    Widened = bench.widened_prior_class()
    broad, tempered = (Widened(prior, np.array([limit]), mode, s) for mode in ("broad", "tempered"))
    for xi, vi in ((0.3, 0.5), (3.0, 0.8)):  # within the training error bars: the mixture's posterior
        expected = _posterior(xi, vi, WEIGHTS, MEANS, VARIANCES)
        assert _tf_posterior(broad, xi, vi) == pytest.approx(expected, rel=1e-12)
        assert _tf_posterior(tempered, xi, vi) == pytest.approx(expected, rel=1e-12)
    xi, vi = 0.3, 2.0  # 2.5 times the largest training error bar
    assert _tf_posterior(broad, xi, vi) == pytest.approx((s * xi / (vi + s), vi * s / (vi + s)), rel=1e-12)
    assert _tf_posterior(tempered, xi, vi) == pytest.approx(_posterior(xi, vi, WEIGHTS, MEANS, VARIANCES * vi / limit),
                                                            rel=1e-9)


def test_the_widened_draws_follow_the_posterior_they_are_drawn_from(bench, prior):
    import tensorflow as tf

    Widened = bench.widened_prior_class()
    X = tf.constant([[0.3], [0.3]], tf.float64)
    V = tf.constant([[0.5], [2.0]], tf.float64)
    S = 20000
    noise = tf.random.stateless_normal([S, 1, 1], seed=[1, 2], dtype=tf.float64)
    uniform = tf.random.stateless_uniform([S, 1], seed=[3, 4], dtype=tf.float64)
    for mode, beyond in (("broad", (0.3 * 1000 / 1002, 2.0 * 1000 / 1002)),
                         ("tempered", _posterior(0.3, 2.0, WEIGHTS, MEANS, VARIANCES * 2.0 / 0.8))):
        draws = Widened(prior, np.array([0.8]), mode, 1000.0).sample(X, V, noise, uniform).numpy()[:, :, 0]
        for row, (mean, var) in enumerate((_posterior(0.3, 0.5, WEIGHTS, MEANS, VARIANCES), beyond)):
            assert draws[:, row].mean() == pytest.approx(mean, abs=4 * np.sqrt(var / S))
            assert draws[:, row].var() == pytest.approx(var, rel=0.05)


def test_a_fit_with_a_widened_prior_predicts_with_it(bench):
    """The widened prior's rows beyond the training error bars are predicted otherwise than the mixture's, in one
    process after a plain fit of the same rows (whose compiled prediction the widened model must not reuse)."""
    from gpal import NoisyGPClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 2))
    y = (X[:, 0] > 0).astype(int)
    V = np.full_like(X, 0.05)
    X_test, V_test = np.array([[0.4, 0.0], [0.4, 0.0]]), np.array([[0.05, 0.05], [4.0, 4.0]])
    proba = {}
    for variant in (None, "broad"):
        with bench.population_prior_variant(variant):
            est = NoisyGPClassifier(input_noise="latent", input_prior="population", prior_components=2, epochs=3,
                                    tol=None, num_inducing=5, random_state=0).fit(X, y, V)
        proba[variant] = est.predict_proba(X_test, V_test)
    assert np.allclose(proba[None][0], proba["broad"][0])
    assert not np.allclose(proba[None][1], proba["broad"][1], atol=1e-3)

"""Row weights in the ELBO (shift weighting): integer weights are repeated rows, ones are no weights,
and density-ratio weights recover a known ratio."""

import numpy as np
import pytest
import tensorflow as tf

from gpal import NoisyGPClassifier
from gpal.evaluation.shift import density_ratio_weights
from gpal.models import build_model

C, D = 3, 2


def _data(n=12, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, D)), np.arange(n) % C, rng.uniform(0.01, 0.1, (n, D))


def _t(a):
    return tf.constant(a, dtype=tf.float64)


def test_integer_weights_are_repeated_rows_in_expectation_over_minibatches():
    """The mean of the one-row minibatch ELBOs (every row in turn: the exact expectation) with weights w
    equals the same on the data with row i repeated w_i times."""
    X, y, V = _data()
    w = np.array([1, 3, 0, 2, 1, 1, 4, 1, 2, 1, 1, 1])
    rep = np.repeat(np.arange(len(y)), w)
    model = build_model(X, y, num_classes=C, num_inducing=5, input_noise="none", likelihood="robustmax")
    model.gp.q_mu.assign(np.random.default_rng(1).normal(size=model.gp.q_mu.shape))
    seed = tf.constant([0, 0], tf.int64)

    # Compiled (one trace with weights, one without): 42 eager ELBOs of robust-max's quadrature cost seconds each.
    elbo = tf.function(lambda X, V, y, i, n, weight: model.elbo(X, V, y, i, seed, num_data=n, sample_weight=weight),
                       autograph=False)

    def mean_elbo(X, V, y, weight, n):
        return np.mean([elbo(_t(X[i:i + 1]), _t(V[i:i + 1]), tf.constant(y[i:i + 1]), tf.constant([i]), tf.constant(n),
                             None if weight is None else _t(weight[i:i + 1])).numpy()
                        for i in range(len(y))])

    weighted = mean_elbo(X, V, y, w.astype(float), len(y))
    repeated = mean_elbo(X[rep], V[rep], y[rep], None, len(rep))
    unweighted = mean_elbo(X, V, y, None, len(y))
    np.testing.assert_allclose(weighted, repeated, rtol=1e-10)
    assert abs(weighted - unweighted) > 1e-3  # the weights did something


def test_weights_reach_the_latent_inputs_terms_as_repeated_rows_do():
    """NIMGP: a row's q(x_i) terms are weighted too; a repeated row has its own copy of q(x_i)."""
    X, y, V = _data(n=6)
    w = np.array([2, 1, 0, 3, 1, 1])
    rep = np.repeat(np.arange(len(y)), w)
    noise = np.random.default_rng(2).normal(size=X.shape)
    seed = tf.constant([0, 0], tf.int64)
    values, first = [], None
    for rows, weight in ((np.arange(len(y)), _t(w.astype(float))), (rep, None)):
        model = build_model(X[rows], y[rows], num_classes=C, num_inducing=4, input_noise="latent",
                            likelihood="robustmax")
        model.strategy.q_offset.assign(np.random.default_rng(3).normal(size=(len(y), D))[rows])
        model.strategy.q_log_scale.assign(np.full((len(rows), D), -0.3))
        first = first or model
        for mine, theirs in zip(model.gp.variables + model.likelihood.variables,
                                first.gp.variables + first.likelihood.variables):
            mine.assign(theirs)  # the same GP and likelihood: only the rows differ
        values.append(model.elbo(_t(X[rows]), _t(V[rows]), tf.constant(y[rows]), tf.range(len(rows), dtype=tf.int64),
                                 seed, num_data=len(rows), noise=_t(noise[rows]), sample_weight=weight).numpy())
    np.testing.assert_allclose(values[0], values[1], rtol=1e-10)


@pytest.mark.parametrize("input_noise", ["none", "latent"])
def test_weights_of_one_reproduce_the_unweighted_fit_exactly(input_noise):
    X, y, V = _data(n=30)
    params = dict(num_inducing=5, epochs=3, batch_size=10, input_noise=input_noise, progress=False, random_state=0)
    plain = NoisyGPClassifier(**params).fit(X, y, V)
    ones = NoisyGPClassifier(**params).fit(X, y, V, sample_weight=np.ones(len(y)))
    doubled = NoisyGPClassifier(**params).fit(X, y, V, sample_weight=np.r_[np.full(10, 2.0), np.ones(20)])
    assert plain.history_ == ones.history_
    np.testing.assert_array_equal(plain.predict_proba(X, V), ones.predict_proba(X, V))
    assert plain.history_ != doubled.history_


@pytest.mark.parametrize("weight", [np.ones(29), np.r_[-1.0, np.ones(29)], np.r_[np.nan, np.ones(29)], np.zeros(30)])
def test_bad_weights_are_refused(weight):
    X, y, V = _data(n=30)
    with pytest.raises(ValueError, match="sample_weight must hold one finite weight >= 0 per row"):
        NoisyGPClassifier(num_inducing=5, epochs=1, progress=False).fit(X, y, V, sample_weight=weight)


def test_density_ratio_weights_recover_a_gaussian_shift():
    """Source N(0, 1), target N(1, 1): p_target / p_source = exp(x - 1/2), linear in log-odds."""
    rng = np.random.default_rng(0)
    source, target = rng.normal(size=(3000, 1)), rng.normal(1.0, 1.0, size=(3000, 1))
    w = density_ratio_weights(source, target, clip=(1e-3, 1e3))
    slope, _ = np.polyfit(source[:, 0], np.log(w), 1)
    assert slope == pytest.approx(1.0, abs=0.1)  # log w = x + const
    assert w.mean() == pytest.approx(1.0)
    clipped = density_ratio_weights(source, target, clip=(0.5, 2.0))
    assert clipped.mean() == pytest.approx(1.0) and clipped.max() / clipped.min() == pytest.approx(4.0, rel=1e-6)


def test_density_ratio_weights_refuse_mismatched_features():
    with pytest.raises(ValueError, match="same features"):
        density_ratio_weights(np.zeros((10, 2)), np.zeros((10, 3)))
    with pytest.raises(ValueError, match="0 < low < high"):
        density_ratio_weights(np.zeros((10, 2)), np.zeros((10, 2)), clip=(2.0, 1.0))

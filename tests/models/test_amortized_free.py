"""NIMGP-NN with paper 001's authors' network (q_x_form="free"): two networks, absolute mean and log-variance."""

import numpy as np
import pytest
import tensorflow as tf

from gpal import NoisyGPClassifier
from gpal.models import AmortizedInputs
from gpal.models.input_noise import FREE_NETWORK_START_SPREAD
from gpal.models.input_noise_setting import strategy_from_config
from gpal.models.svgp import build_model

D, C = 3, 4


def _t(a):
    return tf.constant(a, tf.float64)


def _numpy_network(h, weights, biases):
    """The authors' neural_network with n_layers=1 (nimgpc_nn_learn_noise.py 50-54), in numpy."""
    hidden = np.maximum(h @ weights[0] + biases[0], 0.0)
    return hidden @ weights[1] + biases[1]


def _rows(n=7, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, D)), rng.integers(0, C, n), np.full((n, D), 0.3)


def test_the_start_is_the_authors_tiny_networks_and_q_is_near_the_standard_normal():
    strategy = AmortizedInputs(num_features=D, num_classes=C, hidden_sizes=(50,), q_x_form="free", seed=3)
    X, y, V = _rows()
    values = {name: [v.numpy() for v in getattr(strategy, name)]
              for name in ("weights", "biases", "log_variance_weights", "log_variance_biases")}
    # each network: (x~, one-hot y) -> 50 ReLU units -> d outputs, weights and biases alike from the truncated normal
    assert [w.shape for w in values["weights"]] == [(D + C, 50), (50, D)]
    assert [w.shape for w in values["log_variance_weights"]] == [(D + C, 50), (50, D)]
    drawn = np.concatenate([a.ravel() for arrays in values.values() for a in arrays])
    assert np.abs(drawn).max() <= 2 * FREE_NETWORK_START_SPREAD
    assert drawn.std() == pytest.approx(0.88 * FREE_NETWORK_START_SPREAD, rel=0.05)  # a normal truncated at 2 sd
    assert abs(drawn.mean()) < 0.1 * FREE_NETWORK_START_SPREAD
    h = np.hstack([X, np.eye(C)[y]])
    mean = _numpy_network(h, values["weights"], values["biases"])
    log_var = _numpy_network(h, values["log_variance_weights"], values["log_variance_biases"])
    a, b = strategy.offsets(_t(X), _t(y), tf.range(len(y)))
    np.testing.assert_allclose(a.numpy(), mean, rtol=1e-12, atol=1e-18)
    np.testing.assert_allclose(b.numpy(), log_var, rtol=1e-12, atol=1e-18)
    q_mean, q_var = strategy.q_moments(_t(X), _t(V), a, b)
    np.testing.assert_allclose(q_mean.numpy(), mean, rtol=1e-12)  # absolute, not x~ plus an offset
    np.testing.assert_allclose(q_var.numpy(), np.exp(log_var), rtol=1e-12)
    assert np.abs(q_mean.numpy()).max() < 1e-2 and np.abs(np.log(q_var.numpy())).max() < 1e-2  # near N(0, I)
    noise = np.random.default_rng(1).normal(size=X.shape)
    sample, extra = strategy.sample_and_terms(_t(X), _t(V), a, b, _t(noise))
    np.testing.assert_allclose(sample.numpy(), mean + np.exp(log_var / 2) * noise, rtol=1e-12)
    s = strategy.prior_variance  # E_q log N(x~ | x, V) - KL(q || N(0, s)), elementwise closed forms
    var = np.exp(log_var)
    observed = -0.5 * np.log(2 * np.pi * V) - ((X - mean) ** 2 + var) / (2 * V)
    kl = 0.5 * (var / s + mean**2 / s - 1 + np.log(s / var))
    np.testing.assert_allclose(extra.numpy(), (observed - kl).sum(), rtol=1e-10)


def test_gpal_network_still_starts_at_the_label_free_posterior():
    strategy = AmortizedInputs(num_features=D, num_classes=C, hidden_sizes=(8,))
    X, y, V = _rows()
    q_mean, q_var = strategy.q_moments(_t(X), _t(V), *strategy.offsets(_t(X), _t(y), tf.range(len(y))))
    s = strategy.prior_variance
    np.testing.assert_allclose(q_mean.numpy(), X, rtol=1e-12)  # the broad prior's base: mean x~, variance V s / (V + s)
    np.testing.assert_allclose(q_var.numpy(), V * s / (V + s), rtol=1e-12)


def test_the_two_networks_share_nothing():
    strategy = AmortizedInputs(num_features=D, num_classes=C, hidden_sizes=(6, 5), q_x_form="free")
    mean_vars = [*strategy.weights, *strategy.biases]
    var_vars = [*strategy.log_variance_weights, *strategy.log_variance_biases]
    assert not {id(v) for v in mean_vars} & {id(v) for v in var_vars}
    assert {id(v) for v in strategy.trainable_variables} == {id(v) for v in mean_vars + var_vars}
    X, y, _ = _rows()
    with tf.GradientTape(persistent=True) as tape:
        a, b = strategy.offsets(_t(X), _t(y), tf.range(len(y)))
        mean_sum, log_var_sum = tf.reduce_sum(a), tf.reduce_sum(b)
    assert all(g is None for g in tape.gradient(log_var_sum, mean_vars))
    assert all(g is None for g in tape.gradient(mean_sum, var_vars))
    assert all(g is not None for g in tape.gradient(log_var_sum, var_vars))
    # moving one network moves its output only: the log-variance's output bias shifts b, and a not at all
    old_bias = strategy.log_variance_biases[-1].numpy().copy()
    strategy.log_variance_biases[-1].assign(np.full(D, 2.0))
    a2, b2 = strategy.offsets(_t(X), _t(y), tf.range(len(y)))
    np.testing.assert_array_equal(a2.numpy(), a.numpy())
    np.testing.assert_allclose(b2.numpy() - b.numpy(), np.broadcast_to(2.0 - old_bias, b.shape), atol=1e-12)


def test_config_round_trip_keeps_the_form_and_the_networks():
    strategy = AmortizedInputs(num_features=D, num_classes=C, hidden_sizes=(6,), q_x_form="free", seed=5)
    config = strategy.get_config()
    assert config["q_x_form"] == "free"
    again = strategy_from_config(config)
    assert again.get_config() == config
    for name in ("weights", "biases", "log_variance_weights", "log_variance_biases"):
        for v, w in zip(getattr(strategy, name), getattr(again, name)):
            np.testing.assert_array_equal(v.numpy(), w.numpy())  # the same seed draws the same start
    relative = strategy_from_config({k: v for k, v in config.items() if k != "q_x_form"})
    assert relative.q_x_form == "relative"  # a config saved before the option loads as it was fitted


def test_a_fit_runs_and_a_saved_fit_predicts_the_same(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    y = (X[:, 0] > 0).astype(int) + (X[:, 0] > 1).astype(int)
    clf = NoisyGPClassifier(input_noise="amortized", noise_variance="learned", q_x_form="free", num_inducing=8,
                            epochs=3, batch_size=20, n_samples=20, progress=False, random_state=2).fit(X, y)
    strategy = clf.model_.strategy
    assert strategy.q_x_form == "free" and hasattr(strategy, "log_variance_weights")
    p = clf.predict_proba(X)
    np.testing.assert_allclose(p.sum(1), 1.0, atol=1e-12)
    clf.save(tmp_path / "nn")
    loaded = NoisyGPClassifier.load(tmp_path / "nn")
    assert loaded.model_.strategy.q_x_form == "free"
    np.testing.assert_array_equal(loaded.predict_proba(X), p)


def test_a_bad_form_is_refused_by_name():
    with pytest.raises(ValueError, match="q_x_form.*relative.*free"):
        AmortizedInputs(num_features=D, num_classes=C, q_x_form="authors")
    X, y, _ = _rows(n=20)
    with pytest.raises(ValueError, match=r"q_x_form='free' is paper 001's.*\['latent', 'amortized'\].*first_order"):
        build_model(X, y, num_classes=C, num_inducing=5, input_noise="first_order", q_x_form="free",
                    X_var=np.full_like(X, 0.1))

"""The Beta prior on the learned label-flip delta (``delta_prior``), as paper 000's authors' GPflow 1 code adds it.

Checked against independent computations: scipy's Beta density times the (0, 1) logistic's Jacobian, and TensorFlow
Probability's density of logit(delta) (GPflow 1 adds the authors' ``Parameter(..., Logistic(), prior=Beta(0.2, 5.))``
so); the gradient by finite differences.
"""

import json

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_probability as tfp
from scipy.stats import beta

from gpal import NoisyGPClassifier
from gpal.models.likelihoods.base import likelihood_from_config
from gpal.models.likelihoods.gaussian_noise import ProbitLikelihood, StepLikelihood
from gpal.models.state import module_values
from gpal.models.svgp import build_model
from gpal.training.batched import BatchedTrainer
from gpal.training.svi import SharedTrainer, TrainData

AUTHORS = (0.2, 5.0)  # GPCnoise's likelihoods_GPCnoise.py, Binary_Unifying and RobustMax


def _problem(k, n=40, C=3):
    rng = np.random.default_rng(k)
    X = rng.normal(size=(n, 2))
    y = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0.5) * (C > 2)
    return X, y


def _model(likelihood, C, options, k=0):
    X, y = _problem(k, C=C)
    model = build_model(X, y, num_classes=C, input_noise="none", likelihood=likelihood, num_inducing=5,
                        likelihood_options=options, seed=k)
    return model, X, y


def _elbo(model, X, y, rows):
    X_b = tf.constant(X[rows])
    return model.elbo(X_b, tf.zeros_like(X_b), tf.constant(y[rows]), tf.constant(rows, tf.int64),
                      tf.constant([0, 1], tf.int64), num_data=len(X))


def _logodds_log_density(delta, a, b):
    """TensorFlow Probability's density of logit(delta) for delta ~ Beta(a, b): what GPflow 1's prior on the
    authors' logistic parameter is (its log density at the constrained value plus the transform's log Jacobian)."""
    beta_dist = tfp.distributions.Beta(tf.constant(a, tf.float64), tf.constant(b, tf.float64))
    logodds = tfp.distributions.TransformedDistribution(beta_dist, tfp.bijectors.Invert(tfp.bijectors.Sigmoid()))
    return float(logodds.log_prob(tf.constant(np.log(delta / (1 - delta)), tf.float64)))


@pytest.mark.parametrize("likelihood, C", [("probit", 2), ("step", 3)])  # delta in (0, 1/2) and in (0, 2/3)
@pytest.mark.parametrize("shape", [AUTHORS, (2.0, 3.0)])
def test_the_objective_gains_the_beta_log_density_of_delta_once(likelihood, C, shape):
    with_prior, X, y = _model(likelihood, C, {"delta_prior": shape})
    without, _, _ = _model(likelihood, C, {})
    for delta in (1e-3, 0.04, 0.3):
        for model in (with_prior, without):
            model.likelihood.delta.assign(delta)
        for rows in (np.arange(40), np.arange(7, 17)):  # the full set and a minibatch: added once, not rescaled
            gained = float(_elbo(with_prior, X, y, rows) - _elbo(without, X, y, rows))
            a, b = shape
            expected = beta.logpdf(delta, a, b) + np.log(delta) + np.log1p(-delta)
            np.testing.assert_allclose(gained, expected, rtol=1e-10)
            np.testing.assert_allclose(gained, _logodds_log_density(delta, a, b), rtol=1e-10)


def test_the_prior_alone_peaks_where_the_authors_map_of_the_logodds_does():
    # a log delta + b log(1 - delta) is largest at a / (a + b): 0.2 / 5.2 for the authors' Beta(0.2, 5)
    lik = ProbitLikelihood(2, delta_prior=AUTHORS)
    slopes = []
    for delta in (0.03, 0.2 / 5.2, 0.05):
        lik.delta.assign(delta)
        with tf.GradientTape() as tape:
            value = lik.log_prior_density()
        slopes.append(float(tape.gradient(value, lik.delta.unconstrained_variable)))
    assert slopes[0] > 1e-3 and abs(slopes[1]) < 1e-12 and slopes[2] < -1e-3


@pytest.mark.parametrize("likelihood, C", [("logit", 2), ("probit", 3)])
def test_the_gradient_in_the_trained_variable_matches_finite_differences(likelihood, C):
    model, X, y = _model(likelihood, C, {"delta_prior": AUTHORS})
    var, rows = model.likelihood.delta.unconstrained_variable, np.arange(40)
    for start in (-4.0, 0.5):
        var.assign(start)
        with tf.GradientTape() as tape:
            value = _elbo(model, X, y, rows)
        grad = float(tape.gradient(value, var))
        h, ends = 1e-5, []
        for step in (h, -h):
            var.assign(start + step)
            ends.append(float(_elbo(model, X, y, rows)))
        np.testing.assert_allclose(grad, (ends[0] - ends[1]) / (2 * h), rtol=1e-6)


def test_the_config_carries_the_prior_and_a_model_without_keeps_its_config():
    lik = StepLikelihood(3, delta_prior=AUTHORS)
    lik.delta.assign(0.0123)
    config = json.loads(json.dumps(lik.get_config()))
    assert config["delta_prior"] == [0.2, 5.0]
    rebuilt = likelihood_from_config(config)
    assert rebuilt.get_config() == lik.get_config() and float(rebuilt.log_prior_density()) == float(lik.log_prior_density())
    assert "delta_prior" not in StepLikelihood(3).get_config()  # saved models and their structures as before
    assert StepLikelihood(3).log_prior_density() is None


def test_an_estimator_trains_saves_and_loads_with_it(tmp_path):
    from sklearn.base import clone

    X, y = _problem(3)
    options = {"delta_prior": list(AUTHORS)}
    fit = dict(input_noise="none", likelihood="probit", num_inducing=5, epochs=3, batch_size=20, random_state=0)
    est = NoisyGPClassifier(likelihood_options=options, **fit).fit(X, y)
    plain = NoisyGPClassifier(**fit).fit(X, y)
    assert est.model_.likelihood.delta_prior == AUTHORS
    assert float(est.model_.likelihood.delta.numpy()) != float(plain.model_.likelihood.delta.numpy())
    est.save(tmp_path / "m")
    again = NoisyGPClassifier.load(tmp_path / "m")
    assert again.model_.likelihood.delta_prior == AUTHORS
    np.testing.assert_array_equal(again.predict_proba(X), est.predict_proba(X))
    assert clone(est).likelihood_options == options


def test_batched_training_adds_it_as_training_alone_does():
    settings = dict(epochs=3, batch_size=16, learning_rate=0.05)
    options = {"delta_prior": AUTHORS}
    alone = []
    for k in range(2):
        model, X, y = _model("step", 3, options, k)
        SharedTrainer(model, seed=10 + k).fit(TrainData.from_arrays(X, np.zeros_like(X), y), progress=False, **settings)
        alone.append(module_values(model))
    built = [_model("step", 3, options, k) for k in range(2)]
    BatchedTrainer([m for m, _, _ in built], [TrainData.from_arrays(X, np.zeros_like(X), y) for _, X, y in built],
                   [10, 11]).fit(**settings)
    plain, X, y = _model("step", 3, {}, 0)
    SharedTrainer(plain, seed=10).fit(TrainData.from_arrays(X, np.zeros_like(X), y), progress=False, **settings)
    for expected, (model, _, _) in zip(alone, built):
        got = module_values(model)
        for path in expected:
            np.testing.assert_allclose(got[path], expected[path], rtol=0, atol=1e-10, err_msg=path)
    path = ".likelihood.delta"
    assert abs(alone[0][path] - module_values(plain)[path]) > 1e-6  # the prior moved what was trained


@pytest.mark.parametrize("options, message", [
    ({"delta_prior": AUTHORS, "learn_delta": False}, r"delta_prior=\(0.2, 5.0\) needs learn_delta=True"),
    ({"delta_prior": [0.2]}, r"delta_prior must be a list of 2 item\(s\), each a finite number > 0 \(a Beta shape\)"),
    ({"delta_prior": [0.2, -5]}, r"delta_prior\[1\] must be a finite number > 0 \(a Beta shape\); got -5"),
    ({"delta_prior": "0.2, 5"}, r"delta_prior must be a list of 2"),
])
def test_a_prior_that_cannot_apply_is_refused(options, message):
    with pytest.raises(ValueError, match=message):
        ProbitLikelihood(2, **options)


def test_the_estimator_refuses_a_bad_prior_before_fitting_naming_the_option():
    X, y = _problem(0)
    with pytest.raises(ValueError, match=r"likelihood_options\['delta_prior'\]\[0\] must be a finite number > 0"):
        NoisyGPClassifier(likelihood="logit", likelihood_options={"delta_prior": [0, 5]}, epochs=1).fit(X, y)
    with pytest.raises(ValueError, match="needs learn_delta=True"):
        NoisyGPClassifier(likelihood="logit", likelihood_options={"delta_prior": [0.2, 5], "learn_delta": False},
                          epochs=1).fit(X, y)

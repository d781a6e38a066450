"""Input-noise strategies declare what they are and build themselves; no caller keeps a list of their names."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("gpflow")

import tensorflow as tf  # noqa: E402

from gpal.estimators.noisy_gp import NoisyGPClassifier  # noqa: E402
from gpal.models.input_noise import InputNoise, LatentInputs  # noqa: E402
from gpal.models.input_noise_setting import register_input_noise, unregister_input_noise  # noqa: E402
from gpal.models.input_prior import fit_mixture_prior  # noqa: E402
from gpal.models.svgp import build_model  # noqa: E402
from gpal.registry import INPUT_NOISE  # noqa: E402
from gpal.training.svi import TrainData, Trainer  # noqa: E402


def _data(n=40, d=2, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return X, np.full_like(X, 0.05), (X[:, 0] > 0).astype(np.int64)


def test_the_declarations_say_what_each_strategy_is():
    assert INPUT_NOISE.having("latent_inputs") == ("latent", "amortized")
    assert INPUT_NOISE.having("uses_noise_variance") == ("latent", "amortized", "first_order")
    assert INPUT_NOISE.having("conjugate_inference") == ("none",)
    with pytest.raises(AttributeError, match="no attribute 'flies'"):
        INPUT_NOISE.having("flies")


@pytest.mark.parametrize("name", INPUT_NOISE.names())
def test_the_estimator_reads_the_declarations(name):
    kind = INPUT_NOISE[name]
    assert NoisyGPClassifier(input_noise=name).needs_X_var is kind.uses_noise_variance
    population = NoisyGPClassifier(input_noise=name, input_prior="population", noise_variance="learned")
    if kind.latent_inputs:  # the population prior is fitted with the measured variances it would not have
        with pytest.raises(ValueError, match="is fitted with the measured variances"):
            population.validate_params()
    else:  # no prior of latent inputs: the setting is ignored
        population.validate_params()
    augmented = NoisyGPClassifier(input_noise=name, likelihood="logistic_softmax", inference="cavi")
    if kind.conjugate_inference:
        augmented.validate_params()
    else:
        with pytest.raises(ValueError, match=r"models exact inputs; use an input_noise of \['none'\]"):
            augmented.validate_params()


class _Halved(InputNoise):
    """A strategy defined outside gpal: the GP evaluated at x~ / 2 (exact inputs, nothing learned)."""

    name = "test_halved"
    uses_noise_variance = False

    def training_marginals(self, gp, X, V, Y, idx, seed, noise=None, sample_weight=None, base=None):
        Fmu, Fvar = gp.marginals(X / 2)
        return Fmu, Fvar, tf.zeros((), X.dtype)

    def predictive_marginals(self, gp, X, V, seed, n_samples):
        Fmu, Fvar = gp.predictive_marginals(X / 2)
        return Fmu[None], Fvar[None]


def test_a_new_strategy_is_its_class_and_its_registration():
    X, X_var, y = _data()
    register_input_noise("test_halved", _Halved)  # the documented call a user's own code makes
    try:
        model = build_model(X, y, num_classes=2, input_noise="test_halved", num_inducing=4, X_var=X_var)
        assert isinstance(model.strategy, _Halved) and model.noise_variance is None and not model.has_training_base
        result = Trainer(model).fit(TrainData.from_arrays(X, X_var, y), epochs=2, batch_size=20, learning_rate=0.01, progress=False)
        assert len(result.history) == 2 and np.all(np.isfinite(result.history))
        # the model evaluates its GP where the strategy says: at x~ / 2
        proba = _compiled_proba(model, X, X_var)
        with pytest.raises(ValueError, match=r"needs an input_noise of \['latent', 'amortized'\]"):
            build_model(X, y, num_classes=2, input_noise="test_halved", input_prior="population", X_var=X_var,
                        num_inducing=4, prior_components=1)
    finally:
        unregister_input_noise("test_halved")
    model_none = build_model(X, y, num_classes=2, input_noise="none", num_inducing=4)
    assert len(model.trainable_variables) == len(model_none.trainable_variables)
    for source, target in zip(model.trainable_variables, model_none.trainable_variables):
        target.assign(source)
    np.testing.assert_allclose(proba, _compiled_proba(model_none, X / 2, X_var), atol=1e-12)


def _compiled_proba(model, X, X_var):
    """``model.predict_proba`` in a ``tf.function``: the softmax's 1000-draw Monte Carlo loop costs seconds eagerly."""
    predict = tf.function(lambda a, b: model.predict_proba(a, b, tf.constant([1, 2]), n_samples=1), autograph=False)
    return predict(tf.constant(X), tf.constant(X_var)).numpy()


def test_a_base_table_is_declared_by_the_prior_and_moved_by_nothing_learned():
    X, X_var, y = _data(n=100)
    population = fit_mixture_prior(X, X_var, 2, 0)
    assert LatentInputs(len(X), 2, population_prior=population).has_base_table
    assert not LatentInputs(len(X), 2).has_base_table
    for noise_variance, table in (("known", True), ("both", False), ("learned", False)):
        model = build_model(X, y, num_classes=2, input_noise="latent", input_prior="population", prior_components=2,
                            noise_variance=noise_variance, num_inducing=4, X_var=X_var)
        assert model.has_training_base is table
        trainer = Trainer(model)
        assert (trainer.base is not None) is table
        if table:  # the table is the prior's p(x_i | x~_i), row by row
            mean, var = model.training_base(tf.constant(X), tf.constant(X_var))
            base_mean, base_var = model.strategy.prior.base(tf.constant(X[:7]), tf.constant(X_var[:7]))
            np.testing.assert_allclose(mean.numpy()[:7], base_mean.numpy(), rtol=1e-12)
            np.testing.assert_allclose(var.numpy()[:7], base_var.numpy(), rtol=1e-12)
        else:
            assert model.training_base(tf.constant(X), tf.constant(X_var)) is None

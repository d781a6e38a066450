"""Models of one signature, on training sets of any size, share one compiled training step and train exactly as with
a step of their own."""

import numpy as np
import pytest

from gpal.models.state import assign_module_values, module_values, module_variables
from gpal.models.svgp import build_model
from gpal.training.svi import SharedTrainer, TrainData, Trainer, _signature_trainer


def _model(seed, strategy, n=30, input_prior="broad"):
    """A model of ``strategy`` on data of ``seed``: under a population prior, a prior of its own data's values."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    X_var = rng.uniform(0.01, 0.2, size=(n, 2))
    y = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0.5)
    model = build_model(X, y, num_classes=3, input_noise=strategy, num_inducing=5, X_var=X_var, seed=seed,
                        input_prior=input_prior, prior_components=2)
    return model, TrainData.from_arrays(X, X_var, y)


def _priors_differ(a, b):
    return not np.array_equal(a.strategy.prior.means, b.strategy.prior.means)


def _assert_same_values(got, expected):
    got, expected = module_values(got), module_values(expected)
    assert set(got) == set(expected)
    for path in expected:
        np.testing.assert_array_equal(got[path], expected[path], err_msg=path)


@pytest.mark.slow
@pytest.mark.parametrize("strategy, prior", [
    ("none", "broad"),
    ("latent", "broad"),  # per-point q(x_i) tables
    ("latent", "population"),  # and a population prior of other values in each model, read from the template's
])
def test_models_of_one_signature_share_a_step_and_train_bit_for_bit_as_alone(strategy, prior):
    settings = dict(epochs=2, batch_size=10, learning_rate=0.03, progress=False)
    (own, own_data), (first, first_data), (second, second_data) = (
        _model(0, strategy, input_prior=prior), _model(0, strategy, input_prior=prior),
        _model(1, strategy, 36, input_prior=prior))
    second_alone, _ = _model(1, strategy, 36, input_prior=prior)
    assert prior == "broad" or _priors_differ(first, second)
    expected = Trainer(own, seed=5).fit(own_data, **settings)
    expected_second = Trainer(second_alone, seed=6).fit(second_data, **settings)

    got = SharedTrainer(first, seed=5).fit(first_data, **settings)
    kept = module_values(first)
    got_second = SharedTrainer(second, seed=6).fit(second_data, **settings)

    assert got.history == expected.history and got_second.history == expected_second.history
    _assert_same_values(first, own)
    _assert_same_values(second, second_alone)
    assert all(np.array_equal(v, module_values(first)[k]) for k, v in kept.items())  # the other fit left it alone
    with _signature_trainer(second) as trainer:
        pass
    with _signature_trainer(first) as first_trainer:
        pass
    assert trainer is first_trainer and trainer.step.experimental_get_tracing_count() == 1
    assert trainer.model is not first and trainer.model is not second


def test_a_callback_sees_and_may_set_the_model_being_trained():
    settings = dict(epochs=4, batch_size=10, learning_rate=0.03, progress=False)
    runs = {name: _model(2, "none") for name in ("own", "shared", "unrestored")}
    start = module_values(runs["own"][0])
    seen = {name: [] for name in runs}

    def watching(name, restore=True):
        model = runs[name][0]

        def callback(epoch, loss):
            seen[name].append(module_values(model)[".gp.q_mu"])
            if epoch == 0 and restore:  # a callback that sets a state (as early stopping restores one) moves training
                assign_module_values(model, start)
            return epoch < 2
        return callback

    Trainer(runs["own"][0], seed=0).fit(runs["own"][1], callback=watching("own"), **settings)
    result = SharedTrainer(runs["shared"][0], seed=0).fit(runs["shared"][1], callback=watching("shared"), **settings)
    SharedTrainer(runs["unrestored"][0], seed=0).fit(runs["unrestored"][1], callback=watching("unrestored", False),
                                                     **settings)
    assert result.stopped_early and len(seen["shared"]) == 3
    for got, expected in zip(seen["shared"], seen["own"]):
        np.testing.assert_array_equal(got, expected)
    assert not np.array_equal(seen["shared"][0], start[".gp.q_mu"])  # the callback saw the trained values
    _assert_same_values(runs["shared"][0], runs["own"][0])
    assert not np.array_equal(seen["unrestored"][-1], seen["shared"][-1])  # the restore reached the training


def test_a_part_of_another_class_under_the_same_config_gets_a_step_of_its_own():
    (model, _), (other, _) = _model(3, "none"), _model(4, "none")
    with _signature_trainer(model) as trainer:
        pass
    with _signature_trainer(other) as same:
        pass
    other.likelihood.__class__ = type("Subclassed", (type(other.likelihood),), {})  # e.g. a plugged-in likelihood
    with _signature_trainer(other) as own:
        pass
    assert same is trainer and own is not trainer


# ------------------------------------------------------------------ predictors
def _own_function(model, kind):
    """The model's own compiled function of ``kind``, as each session traced before predictors were shared."""
    import tensorflow as tf

    from gpal.models.compiled import instance_function

    fn = {"predict": lambda a, b, seed: tf.stack(model.predict_proba_and_error(a, b, seed, 4)),
          "sample": lambda a, b, seed: model.sample_conditional_proba(a, b, seed, 3, 2),
          "joint": lambda a, b, seed: model.sample_function_proba(a, b, seed, 3, 2)}[kind]
    spec = tf.TensorSpec([None, 2], tf.float64)
    return instance_function(fn, input_signature=[spec, spec, tf.TensorSpec([2], tf.int64)], autograph=False)


def _move_values(model, seed):
    """Every trainable value of ``model`` moved off its start, as training moves them, without tracing a step."""
    rng = np.random.default_rng(seed)
    for var in module_variables(model).values():
        if var.trainable:
            value = var.numpy()
            var.assign(value + 0.1 * rng.normal(size=value.shape))


def _session_function(session, kind):
    return {"predict": lambda: session.predictor(4), "sample": lambda: session.sampler(3, 2),
            "joint": lambda: session.joint_sampler(3, 2)}[kind]()


@pytest.mark.parametrize("strategy, kinds, prior", [
    ("none", ["predict"], "broad"),
    ("latent", ["predict", "sample", "joint"], "broad"),  # per-point tables of another row count in the second model
    ("latent", ["predict", "sample"], "population"),  # a population prior of other values in each model
    ("amortized", ["predict"], "broad"),  # network weights
    ("first_order", ["predict"], "broad"),
])
@pytest.mark.slow
def test_models_of_one_signature_share_predictors_and_predict_bit_for_bit_as_alone(strategy, kinds, prior):
    import tensorflow as tf

    from gpal.training.session import ModelSession

    classes = np.arange(3)
    (first, data), (second, _) = _model(7, strategy, input_prior=prior), _model(8, strategy, 36, input_prior=prior)
    assert prior == "broad" or _priors_differ(first, second)
    _move_values(first, seed=1)  # values apart from the start (where predictions do not depend on the inputs)
    _move_values(second, seed=2)
    X, X_var = np.asarray(data.X)[:9], np.asarray(data.X_var)[:9]
    seed = tf.constant([3, 4], tf.int64)
    sessions = [ModelSession(m, classes, seed=0) for m in (first, second)]
    for kind in kinds:
        got = [_session_function(s, kind) for s in sessions]
        assert got[0].func is got[1].func and got[0].func.experimental_get_tracing_count() <= 1
        for fn, model in zip(got, (first, second)):
            np.testing.assert_array_equal(fn(X, X_var, seed).numpy(), _own_function(model, kind)(X, X_var, seed).numpy())
        assert not np.array_equal(got[0](X, X_var, seed).numpy(), got[1](X, X_var, seed).numpy())
        assert got[0].func.experimental_get_tracing_count() == 1


def test_a_model_with_a_patched_attribute_gets_a_predictor_of_its_own():
    import tensorflow as tf

    from gpal.training.session import ModelSession

    (model, _), (patched, _) = _model(9, "latent"), _model(10, "latent")
    shared = ModelSession(model, np.arange(3), seed=0).predictor(4).func
    patched.strategy.prediction_dtype = tf.float64  # over its class's float32
    assert ModelSession(patched, np.arange(3), seed=0).predictor(4).func is not shared
    assert ModelSession(_model(11, "latent")[0], np.arange(3), seed=0).predictor(4).func is shared

"""One kernel and one set of inducing inputs shared by every latent function (``share_kernel_and_inducing``):
checked against the per-latent model whose copies hold the same values, which computes on its own code path."""

import re
import warnings

import numpy as np
import pytest
import tensorflow as tf

from gpal.models.latent_gps import LatentGPs
from gpal.models.state import module_values, stored_variable
from gpal.models.svgp import NoisySVGP, build_model
from gpal.training.svi import SharedTrainer, TrainData

SEED = tf.constant([3, 4], tf.int64)


def _problem(n=40, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X_var = rng.uniform(0.01, 0.2, size=(n, d))
    y = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0.5)
    return X, X_var, y


def _shared(strategy="none", kernel=None, likelihood="robustmax", seed=0):
    X, X_var, y = _problem(seed=seed)
    model = build_model(X, y, num_classes=3, input_noise=strategy, likelihood=likelihood, kernel=kernel,
                        num_inducing=6, X_var=X_var, seed=seed, share_kernel_and_inducing=True)
    return model, TrainData.from_arrays(X, X_var, y)


def _moved(model, seed=1):
    """``model`` with every value moved off its start, so that an equality below is not that of two starts."""
    rng = np.random.default_rng(seed)
    for var in model.trainable_variables:
        var.assign(var + rng.normal(scale=0.1, size=var.numpy().shape))
    return model


def _unshared_twin(model):
    """The per-latent model of ``model``'s structure whose L kernels and L slices of Z hold its one kernel's and Z's
    values: the same function computed with L kernel objects and per-latent Z, the code path of every other model."""
    s = dict(model.structure())
    L = s.pop("shared_by")
    s["kernels"] = s["kernels"] * L
    twin = NoisySVGP.from_structure(s)
    shared = module_values(model)
    values = {}
    for path in module_values(twin):
        source = re.sub(r"^\.gp\.kernels\[\d+\]", ".gp.kernels[0]", path)
        values[path] = np.tile(shared[path], (L, 1, 1)) if path == ".gp.Z" else shared[source]
    for path, var in _variables(twin).items():
        var.assign(values[path])
    return twin


def _variables(model):
    from gpflow.utilities import parameter_dict

    return {path: stored_variable(v) for path, v in parameter_dict(model).items()}


def _elbo(model, data):
    X, V, y = (tf.constant(a) for a in (data.X, data.X_var, data.y))
    return model.elbo(X, V, y, tf.range(X.shape[0]), SEED)


def test_a_shared_model_holds_one_kernel_and_one_z_as_trainable_variables():
    shared, _ = _shared()
    X, X_var, y = _problem()
    own = build_model(X, y, num_classes=3, input_noise="none", likelihood="robustmax", num_inducing=6, seed=0)
    # per latent: Z (3, 6, 3), q_mu, q_sqrt and 3 kernels of (variance, lengthscales); shared: Z (1, 6, 3), one kernel
    assert len(own.trainable_variables) == 3 + 3 * 2
    assert len(shared.trainable_variables) == 3 + 2
    assert shared.gp.shared and shared.gp.num_latent == 3 and len(shared.gp.kernels) == 1
    assert tuple(shared.gp.Z.shape) == (1, 6, 3) and tuple(own.gp.Z.shape) == (3, 6, 3)
    assert sum(int(np.prod(v.shape)) for v in shared.trainable_variables) == (
        sum(int(np.prod(v.shape)) for v in own.trainable_variables) - 2 * (6 * 3 + 1 + 3))


@pytest.mark.parametrize("strategy, kernel, likelihood", [
    ("none", None, "robustmax"),                    # the stacked squared-exponential path
    ("first_order", "matern52_plus_se", "softmax"),  # a kernel that computes on its own; the mean's input gradients
    ("latent", None, "softmax"),                    # sampled inputs
])
def test_the_elbo_and_predictions_equal_the_per_latent_model_holding_the_same_values(strategy, kernel, likelihood):
    model, data = _shared(strategy, kernel, likelihood)
    _moved(model)
    twin = _unshared_twin(model)
    assert not twin.gp.shared and len(twin.gp.kernels) == 3
    np.testing.assert_allclose(float(_elbo(model, data)), float(_elbo(twin, data)), rtol=1e-10)
    X, V = tf.constant(data.X[:7]), tf.constant(data.X_var[:7])
    np.testing.assert_allclose(model.predict_proba(X, V, SEED, 8), twin.predict_proba(X, V, SEED, 8), rtol=1e-9,
                               atol=1e-12)
    np.testing.assert_allclose(model.sample_function_proba(X, V, SEED, 5), twin.sample_function_proba(X, V, SEED, 5),
                               rtol=1e-8, atol=1e-12)
    for dtype, rtol, atol in ((tf.float64, 1e-9, 1e-12), (tf.float32, 1e-4, 1e-6)):  # prediction's factored form
        np.testing.assert_allclose(model.gp.predictive_marginals(X, dtype), twin.gp.predictive_marginals(X, dtype),
                                   rtol=rtol, atol=atol)


@pytest.mark.parametrize("kernel", [None, "matern52_plus_se"])
def test_the_shared_gradients_are_the_sums_of_the_per_latent_copies_gradients(kernel):
    model, data = _shared("none", kernel)
    _moved(model)
    twin = _unshared_twin(model)
    with tf.GradientTape() as tape:
        elbo = _elbo(model, data)
    grads = dict(zip(_variables(model), tape.gradient(elbo, list(_variables(model).values()))))
    with tf.GradientTape() as tape:
        elbo = _elbo(twin, data)
    twin_grads = dict(zip(_variables(twin), tape.gradient(elbo, list(_variables(twin).values()))))
    np.testing.assert_allclose(grads[".gp.Z"][0], tf.reduce_sum(twin_grads[".gp.Z"], axis=0), rtol=1e-8, atol=1e-10)
    kernel_paths = [p for p in grads if p.startswith(".gp.kernels[0]")]
    assert kernel_paths
    for path in kernel_paths:
        copies = [twin_grads[path.replace("[0]", f"[{c}]", 1)] for c in range(3)]
        assert not np.allclose(copies[0], copies[1])  # the copies pull apart: a sum, not one copy counted thrice
        np.testing.assert_allclose(grads[path], sum(copies), rtol=1e-8, atol=1e-10, err_msg=path)


def test_training_moves_the_one_kernel_and_z_that_every_latent_reads():
    model, data = _shared()
    start = module_values(model)
    per_latent = _unshared_twin(model)  # the same start, each latent with its own copies
    settings = dict(epochs=3, batch_size=16, learning_rate=0.05, progress=False)
    SharedTrainer(model, seed=0).fit(data, **settings)
    SharedTrainer(per_latent, seed=0).fit(data, **settings)
    trained = module_values(model)
    assert len(model.gp.kernels) == 1 and tuple(model.gp.Z.shape) == (1, 6, 3)
    for path in (".gp.Z", ".gp.kernels[0].variance", ".gp.kernels[0].lengthscales"):
        assert not np.allclose(trained[path], start[path]), path
    # trained with a copy each, the latents' kernels and Z pull apart; shared, they stay one
    own = module_values(per_latent)
    assert not np.allclose(own[".gp.kernels[0].lengthscales"], own[".gp.kernels[1].lengthscales"])
    assert not np.allclose(own[".gp.Z"][0], own[".gp.Z"][1])
    np.testing.assert_allclose(float(_elbo(model, data)), float(_elbo(_unshared_twin(model), data)), rtol=1e-10)


def test_structure_and_saved_values_rebuild_the_shared_model():
    model, data = _shared("first_order")
    _moved(model)
    s = model.structure()
    assert s["shared_by"] == 3 and len(s["kernels"]) == 1
    rebuilt = NoisySVGP.from_structure(s)
    for path, var in _variables(rebuilt).items():
        var.assign(module_values(model)[path])
    assert rebuilt.gp.shared and rebuilt.structure() == s
    X, V = tf.constant(data.X[:4]), tf.constant(data.X_var[:4])
    np.testing.assert_array_equal(rebuilt.predict_proba(X, V, SEED), model.predict_proba(X, V, SEED))
    # an unshared model's structure names nothing new: earlier saved structures still match
    X, X_var, y = _problem()
    own = build_model(X, y, num_classes=3, input_noise="none", num_inducing=6, seed=0)
    assert "shared_by" not in own.structure()


def test_one_latent_function_has_nothing_to_share_and_says_so():
    X, X_var, y = _problem()
    with pytest.warns(UserWarning, match="share_kernel_and_inducing=True is ignored: likelihood 'probit'"):
        model = build_model(X, (y > 0).astype(int), num_classes=2, likelihood="probit", input_noise="none",
                            num_inducing=6, share_kernel_and_inducing=True)
    assert model.gp.num_latent == 1 and not model.gp.shared
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        build_model(X, (y > 0).astype(int), num_classes=2, likelihood="probit", input_noise="none", num_inducing=6)


def test_a_start_per_latent_and_a_wrong_latent_gps_are_refused():
    X, X_var, y = _problem()
    with pytest.raises(ValueError, match="inducing_start='random_per_latent' starts each its own"):
        build_model(X, y, num_classes=3, input_noise="none", num_inducing=6, inducing_start="random_per_latent",
                    share_kernel_and_inducing=True)
    import gpflow

    kernels = [gpflow.kernels.SquaredExponential() for _ in range(2)]
    with pytest.raises(ValueError, match="needs one kernel and a positive integer; got 2 kernels"):
        LatentGPs(kernels, np.zeros((4, 1)), shared_by=2)
    with pytest.raises(ValueError, match=r"must be \(M, d\) or \(1, M, d\); got shape \(2, 4, 1\)"):
        LatentGPs(kernels[:1], np.zeros((2, 4, 1)), shared_by=2)

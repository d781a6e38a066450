"""Augmented logistic-softmax GP with a kernel per class (paper 004's authors' choice) against the shared kernel."""

import math

import gpflow
import numpy as np
import pytest
import tensorflow as tf

from conftest import three_class
from gpal.estimators.logistic_softmax import LogisticSoftmaxGPClassifier
from gpal.models.families.augmented_exact import exact_natural_parameters
from gpal.models.families.augmented_logistic_softmax import AugmentedLogisticSoftmaxGP, onehot_labels


def pair(seed, locals_family="collapsed", n=40, m=8, num_classes=3):
    """The same random q(v) under one shared kernel and under C copies of it, one per class, and the data."""
    rng = np.random.default_rng(seed)
    X, y = three_class(n, seed)
    kernel = gpflow.kernels.SquaredExponential(variance=1.7, lengthscales=[0.8, 1.2])
    per_class = gpflow.kernels.SeparateIndependent([gpflow.utilities.deepcopy(kernel) for _ in range(num_classes)])
    R = rng.normal(size=(num_classes, m, m)) / math.sqrt(m)
    precision, eta1 = np.eye(m) + np.einsum("cij,ckj->cik", R, R) * 3.0, rng.normal(size=(num_classes, m))
    models = []
    for k in (kernel, per_class):
        model = AugmentedLogisticSoftmaxGP(k, X[:m], num_classes, locals_family=locals_family, local_passes=2)
        model.precision.assign(precision)
        model.eta1.assign(eta1)
        models.append(model)
    return models, tf.constant(X), tf.constant(onehot_labels(y, num_classes))


@pytest.mark.parametrize("locals_family", ["collapsed", "mean_field"])
def test_equal_kernels_per_class_are_the_shared_model(locals_family):
    (shared, per_class), X, onehot = pair(0, locals_family)
    for a, b in zip(shared.predict_f(X), per_class.predict_f(X)):
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(float(per_class.elbo(X, onehot)), float(shared.elbo(X, onehot)), rtol=1e-12)
    alpha = tf.fill([X.shape[0]], tf.constant(3.0, tf.float64))
    for model in (shared, per_class):
        model.natural_gradient_step(X, onehot, 1.0, 1.0, alpha)
    np.testing.assert_allclose(per_class.precision.numpy(), shared.precision.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(per_class.eta1.numpy(), shared.eta1.numpy(), rtol=1e-12, atol=1e-12)
    mean, var = shared.predict_f(X)
    g_mean, g_var = tf.sin(mean), -tf.exp(-var)  # any gradients: the map from them to eta is what is compared
    for a, b in zip(exact_natural_parameters(shared.project(X).A, mean, g_mean, g_var),
                    exact_natural_parameters(per_class.project(X).A, mean, g_mean, g_var)):
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-12, atol=1e-12)


def test_per_class_gradients_sum_to_the_shared_gradient():
    """The shared kernel is every class's kernel tied: the chain rule adds the classes' gradients."""
    (shared, per_class), X, onehot = pair(1)
    with tf.GradientTape(persistent=True) as tape:
        a, b = shared.elbo(X, onehot), per_class.elbo(X, onehot)
    ga = tape.gradient(a, [shared.kernel.variance.unconstrained_variable, shared.kernel.lengthscales.unconstrained_variable])
    gb = [tape.gradient(b, [k.variance.unconstrained_variable, k.lengthscales.unconstrained_variable])
          for k in per_class.kernel.kernels]
    assert not np.allclose(gb[0][1].numpy(), gb[1][1].numpy())  # the classes pull their kernels apart
    for j in range(2):
        np.testing.assert_allclose(sum(g[j].numpy() for g in gb), ga[j].numpy(), rtol=1e-9)


def test_one_class_kernel_gradient_matches_finite_differences():
    (_, model), X, onehot = pair(2)
    length = model.kernel.kernels[1].lengthscales.unconstrained_variable
    with tf.GradientTape() as tape:
        value = model.elbo(X, onehot)
    grad = tape.gradient(value, length).numpy()
    start, h = length.numpy(), 1e-6
    for j in range(start.size):
        values = []
        for sign in (1.0, -1.0):
            length.assign(start + sign * h * np.eye(start.size)[j])
            values.append(float(model.elbo(X, onehot)))
        length.assign(start)
        np.testing.assert_allclose(grad[j], (values[0] - values[1]) / (2 * h), rtol=1e-5)


def test_a_kernel_per_class_needs_one_kernel_per_class():
    X, _ = three_class(10, 0)
    kernels = gpflow.kernels.SeparateIndependent([gpflow.kernels.SquaredExponential() for _ in range(2)])
    with pytest.raises(ValueError, match="needs 3 kernels, one per class"):
        AugmentedLogisticSoftmaxGP(kernels, X[:4], 3)


@pytest.mark.parametrize("inference", ["cavi", "cavi_exact"])
def test_fit_trains_each_class_kernel_and_saves(inference, tmp_path):
    X, y = three_class(60, 3)
    clf = LogisticSoftmaxGPClassifier(inference=inference, kernel_per_class=True, num_inducing=8, max_iter=8,
                                      exact_steps=4, n_samples=50, local_passes=2 if inference == "cavi" else 1).fit(X, y)
    lengths = [k.lengthscales.numpy() for k in clf.model_.kernels]
    assert len(lengths) == 3 and not np.allclose(lengths[0], lengths[1])
    assert clf.score(X, y) > 0.7
    clf.save(tmp_path / "m")
    loaded = LogisticSoftmaxGPClassifier.load(tmp_path / "m")
    assert loaded.kernel_per_class and loaded.model_.kernel_per_class
    np.testing.assert_array_equal(loaded.predict_proba(X), clf.predict_proba(X))

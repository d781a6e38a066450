"""Paper 004's CAVI on its mean-field q(lambda) q(n, omega) q(u): each factor's closed-form update is the bound's
maximum in that factor, no update lowers the bound, and the sweeps end where a brute-force optimiser of the
same bound over every variational parameter ends."""

import math

import gpflow
import numpy as np
import pytest
import tensorflow as tf

from conftest import three_class
from gpal.estimators.logistic_softmax import LogisticSoftmaxGPClassifier
from gpal.models.families.augmented_logistic_softmax import (
    AugmentedLogisticSoftmaxGP,
    GaussianQ,
    LocalFactors,
    augmented_elbo_terms,
    global_natural_parameters,
    onehot_labels,
    paper_locals,
)
from gpal.models.sparse import whitened_kl
from gpal.training.cavi import AugmentedTrainer


def random_marginals(seed, n=25, num_classes=4):
    rng = np.random.default_rng(seed)
    mean = tf.constant(rng.normal(size=(n, num_classes)) * 2.0)
    var = tf.constant(rng.uniform(0.05, 2.0, size=(n, num_classes)))
    onehot = tf.constant(onehot_labels(rng.integers(0, num_classes, n), num_classes))
    alpha = tf.constant(rng.uniform(1.2, 6.0, size=n))  # some earlier sweep's q(lambda)
    return mean, var, onehot, alpha


@pytest.mark.parametrize("seed", [0, 1])
def test_each_local_update_is_the_optimum_of_its_factor(seed):
    """The gradient of the bound in each factor's parameters vanishes at its update (autodiff), and moving them lowers
    every point's bound: q(n, omega) (c, gamma) at the q(lambda) it was computed from, q(lambda) (alpha, beta) at the new q(n)."""
    mean, var, onehot, alpha = random_marginals(seed)
    loc = paper_locals(mean, var, alpha)
    before = loc._replace(alpha=alpha)  # the state gamma was updated in
    for field, point in [("c", loc), ("gamma", before), ("alpha", loc), ("beta", loc)]:
        value = tf.identity(getattr(point, field))
        with tf.GradientTape() as tape:
            tape.watch(value)
            best = augmented_elbo_terms(mean, var, onehot, point._replace(**{field: value}))
            total = tf.reduce_sum(best)
        grad = tape.gradient(total, value).numpy()
        assert np.max(np.abs(grad)) < 1e-9, (field, np.max(np.abs(grad)))
        for factor in (1.0 - 1e-3, 1.0 + 1e-3):
            lower = augmented_elbo_terms(mean, var, onehot, point._replace(**{field: value * factor}))
            assert np.all(lower.numpy() < best.numpy()), (field, factor)


def test_the_sweep_never_lowers_the_bound_factor_by_factor():
    """Five sweeps from arbitrary locals and a random q(u), the bound read after every single factor's update."""
    rng = np.random.default_rng(4)
    X, y = three_class(50, 4)
    model = AugmentedLogisticSoftmaxGP(gpflow.kernels.SquaredExponential(lengthscales=[0.8, 1.2]), X[:8], 3,
                                       locals_family="mean_field")
    R = rng.normal(size=(3, 8, 8)) / math.sqrt(8)
    model.precision.assign(np.eye(8) + np.einsum("cij,ckj->cik", R, R) * 3.0)
    model.eta1.assign(rng.normal(size=(3, 8)) * 2.0)
    proj, onehot = model.project(tf.constant(X)), tf.constant(onehot_labels(y, 3))
    n = len(X)
    loc = LocalFactors(tf.constant(rng.uniform(0.5, 3.0, (n, 3))), tf.constant(rng.uniform(0.1, 2.0, (n, 3))),
                       tf.constant(rng.uniform(1.0, 5.0, n)), tf.fill([n], tf.constant(3.0, tf.float64)))

    def bound():
        q = model.q()
        mean, var = model.marginals(proj, q)
        return float(tf.reduce_sum(augmented_elbo_terms(mean, var, onehot, loc)) - model.kl(q))

    values = [bound()]
    for _ in range(5):
        new = paper_locals(*model.marginals(proj, model.q()), loc.alpha)
        for fields in (("c",), ("gamma",), ("alpha", "beta")):
            loc = loc._replace(**{f: getattr(new, f) for f in fields})
            values.append(bound())
        eta1, precision = global_natural_parameters(proj.A, onehot, loc, 1.0)
        model.eta1.assign(eta1)
        model.precision.assign(precision)
        values.append(bound())
    steps = np.diff(values)
    assert np.all(steps >= -1e-9 * np.abs(values[1:])), steps
    assert values[-1] - values[0] > 10.0


def test_the_trainer_runs_the_same_sweeps():
    """``AugmentedTrainer`` (compiled, q(lambda) carried as its state) against the sweep written out here."""
    X, y = three_class(40, 6)
    kernel = gpflow.kernels.SquaredExponential(lengthscales=[1.0, 1.0])
    model = AugmentedLogisticSoftmaxGP(kernel, X[::5], 3, locals_family="mean_field")
    by_hand = AugmentedLogisticSoftmaxGP(gpflow.utilities.deepcopy(kernel), X[::5], 3, locals_family="mean_field")
    trainer = AugmentedTrainer(model, X, y)
    history = trainer.run("cavi", max_iter=4, hyper_every=0)
    proj, onehot = by_hand.project(tf.constant(X)), tf.constant(onehot_labels(y, 3))
    alpha = tf.fill([len(X)], tf.constant(3.0, tf.float64))  # Gamma(C, C) to start
    for _ in range(4):
        loc = paper_locals(*by_hand.marginals(proj, by_hand.q()), alpha)
        eta1, precision = global_natural_parameters(proj.A, onehot, loc, 1.0)
        by_hand.eta1.assign(eta1)
        by_hand.precision.assign(precision)
        alpha = loc.alpha
    np.testing.assert_allclose(model.eta1.numpy(), by_hand.eta1.numpy(), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(trainer.alpha, alpha.numpy(), rtol=1e-12)
    q = by_hand.q()
    mean, var = by_hand.marginals(proj, q)
    expected = float(tf.reduce_sum(augmented_elbo_terms(mean, var, onehot, loc)) - by_hand.kl(q))
    assert history[-1] == pytest.approx(expected, rel=1e-10)


def test_the_sweeps_end_at_the_maximum_a_brute_force_optimiser_finds():
    """Fixed kernel, tiny problem: L-BFGS over every variational parameter at once (q(u)'s mean and Cholesky factor,
    and log c, log gamma, log alpha, log beta: no closed form used) reaches the bound and q(u) of 400 sweeps."""
    from scipy.optimize import minimize

    X, y = three_class(24, 2)
    C, M, n = 3, 4, len(X)
    model = AugmentedLogisticSoftmaxGP(gpflow.kernels.SquaredExponential(lengthscales=[0.9, 0.9], variance=3.0), X[::6], C,
                                       locals_family="mean_field")
    history = AugmentedTrainer(model, X, y).run("cavi", max_iter=400, hyper_every=0)
    proj, onehot = model.project(tf.constant(X)), tf.constant(onehot_labels(y, C))
    sizes = [C * M, C * M * M, n * C, n * C, n, n]

    def negative_bound(x):
        x = tf.constant(x)
        with tf.GradientTape() as tape:
            tape.watch(x)
            mean, sqrt, log_c, log_gamma, log_alpha, log_beta = tf.split(x, sizes)
            mean, sqrt = tf.reshape(mean, (C, M)), tf.linalg.band_part(tf.reshape(sqrt, (C, M, M)), -1, 0)
            f_mean, f_var = model.marginals(proj, GaussianQ(mean, tf.linalg.matrix_transpose(sqrt)))
            loc = LocalFactors(tf.exp(tf.reshape(log_c, (n, C))), tf.exp(tf.reshape(log_gamma, (n, C))),
                               tf.exp(log_alpha), tf.exp(log_beta))
            value = -(tf.reduce_sum(augmented_elbo_terms(f_mean, f_var, onehot, loc)) - whitened_kl(mean, sqrt))
        return value.numpy(), tape.gradient(value, x).numpy()

    start = np.concatenate([np.full(C * M, 0.3), np.tile(np.eye(M), (C, 1, 1)).ravel() * 0.5, np.zeros(2 * n * C),
                            np.full(n, np.log(2.0)), np.full(n, np.log(2.0))])
    result = minimize(negative_bound, start, jac=True, method="L-BFGS-B", options={"maxiter": 20000, "gtol": 1e-10})
    assert abs(-result.fun - history[-1]) < 1e-6 * abs(history[-1]), (-result.fun, history[-1])
    np.testing.assert_allclose(result.x[: C * M].reshape(C, M), model.q().mean.numpy(), atol=1e-3)
    assert history[-1] - history[0] > 1.0


def test_the_inference_names_choose_the_factorisation():
    X, y = three_class(60, 3)
    fits = {inference: LogisticSoftmaxGPClassifier(inference=inference, num_inducing=6, max_iter=5, exact_steps=2,
                                                   n_samples=50, progress=False).fit(X, y)
            for inference in ("cavi", "cavi_collapsed", "cavi_exact")}
    assert fits["cavi"].model_.locals_family == "mean_field"
    assert fits["cavi_collapsed"].model_.locals_family == "collapsed" == fits["cavi_exact"].model_.locals_family
    assert np.max(np.abs(fits["cavi"].predict_proba(X) - fits["cavi_collapsed"].predict_proba(X))) > 1e-3
    with pytest.raises(ValueError, match="full batch"):
        LogisticSoftmaxGPClassifier(inference="cavi_collapsed", batch_size=10).fit(X, y)


def test_the_mean_field_step_asks_for_the_current_q_lambda():
    X, y = three_class(20, 1)
    model = AugmentedLogisticSoftmaxGP(gpflow.kernels.SquaredExponential(), X[:4], 3, locals_family="mean_field")
    with pytest.raises(ValueError, match="alpha"):
        model.natural_gradient_step(tf.constant(X), tf.constant(onehot_labels(y, 3)), 1.0, 1.0)

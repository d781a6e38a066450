"""Augmented logistic-softmax GP (paper 004): the closed-form bound, its updates and the estimator."""

import math
import warnings

import gpflow
import numpy as np
import pytest
from sklearn.exceptions import NotFittedError
import tensorflow as tf

from conftest import three_class
from gpal.estimators.logistic_softmax import LogisticSoftmaxGPClassifier
from gpal.models.families.augmented_logistic_softmax import (
    AugmentedLogisticSoftmaxGP,
    GaussianQ,
    LocalFactors,
    augmented_elbo_terms,
    collapsed_elbo_terms,
    collapsed_locals,
    global_natural_parameters,
    onehot_labels,
    optimal_locals,
    paper_locals,
    polya_gamma_mean,
)
from gpal.models.families.logistic_bounds import Quadratic, optimal_q
from gpal.models.sparse import whitened_kl
from gpal.training.cavi import AugmentedTrainer
from gpal.models.likelihoods.logistic_softmax import logistic_softmax_log_prob, logistic_softmax_probs


def random_model(seed, n=40, m=8, num_classes=3, locals_family="collapsed"):
    """A model with a random (non-prior) q(v) and the data it is evaluated on."""
    rng = np.random.default_rng(seed)
    X, y = three_class(n, seed)
    model = AugmentedLogisticSoftmaxGP(gpflow.kernels.SquaredExponential(lengthscales=[0.8, 1.2]), X[:m], num_classes,
                                       locals_family=locals_family)
    R = rng.normal(size=(num_classes, m, m)) / math.sqrt(m)
    model.precision.assign(np.eye(m) + np.einsum("cij,ckj->cik", R, R) * 3.0)
    model.eta1.assign(rng.normal(size=(num_classes, m)) * 2.0)
    return model, X, y


def random_marginals(seed, n=30, num_classes=4):
    rng = np.random.default_rng(seed)
    mean = tf.constant(rng.normal(size=(n, num_classes)) * 2.0)
    var = tf.constant(rng.uniform(0.05, 2.0, size=(n, num_classes)))
    onehot = tf.constant(onehot_labels(rng.integers(0, num_classes, n), num_classes))
    return mean, var, onehot


# ------------------------------------------------------------------ the bound
@pytest.mark.parametrize("locals_family", ["collapsed", "mean_field"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_cavi_never_decreases_the_elbo(seed, locals_family):
    X, y = three_class(120, seed)
    model = AugmentedLogisticSoftmaxGP(gpflow.kernels.SquaredExponential(lengthscales=[1.0, 1.0]), X[::8], 3,
                                       locals_family=locals_family)
    history = AugmentedTrainer(model, X, y).run("cavi", max_iter=12, hyper_every=0)
    steps = np.diff(history)
    assert np.all(steps >= -1e-9 * np.abs(history[1:])), steps
    assert history[-1] - history[0] > 1.0  # it does move


def test_hyperparameter_steps_raise_the_bound_and_move_the_inducing_inputs():
    X, y = three_class(120, 5)
    final = {}
    for hyper_every in (0, 1):
        model = AugmentedLogisticSoftmaxGP(gpflow.kernels.SquaredExponential(lengthscales=[3.0, 3.0]), X[::10], 3)
        trainer = AugmentedTrainer(model, X, y, learning_rate=0.05, train_inducing=True)
        final[hyper_every] = trainer.run("cavi", max_iter=30, hyper_every=hyper_every)[-1]
        moved = not np.allclose(model.kernel.lengthscales.numpy(), 3.0)
        assert moved == bool(hyper_every)
        assert np.allclose(model.Z.numpy(), X[::10]) != bool(hyper_every)
    assert final[1] > final[0] + 1.0


def _natural_gradient_alone(model, X, y, runs, learning_rate, batch_size, hyper_every):
    """Natural-gradient runs (Z trained) by updates traced for ``model`` alone (for any number of rows, as the
    trainer's are) with one Adam of its own, as ``AugmentedTrainer`` computed before it shared them; each run is
    (max_iter, delay, seed)."""
    import tf_keras

    from gpal.models.compiled import instance_function
    from gpal.training.cavi import step_size

    onehot = onehot_labels(y, model.num_classes)
    variables = list(model.kernel.trainable_variables) + [model.Z]
    adam = tf_keras.optimizers.Adam(learning_rate=learning_rate)
    adam.build(variables)  # its slots made here, so that ``hyper`` is traced once, not again for them

    def update(Xb, Yb, scale, rho):
        model.natural_gradient_step(Xb, Yb, scale, rho)
        return tf.zeros([], tf.float64)

    def update_and_value(Xb, Yb, scale, rho):
        model.natural_gradient_step(Xb, Yb, scale, rho)
        return model.elbo(Xb, Yb, scale)

    def hyper(Xb, Yb, scale):
        with tf.GradientTape(watch_accessed_variables=False) as tape:
            tape.watch(variables)
            value = model.elbo(Xb, Yb, scale)
            loss = -value / len(X)
        adam.apply_gradients(zip(tape.gradient(loss, variables, unconnected_gradients="zero"), variables))
        return value

    rows, by_class = (tf.TensorSpec([None, n], tf.float64) for n in (X.shape[1], model.num_classes))
    scalar = tf.TensorSpec([], tf.float64)
    update, update_and_value = (instance_function(fn, input_signature=[rows, by_class, scalar, scalar])
                                for fn in (update, update_and_value))
    hyper = instance_function(hyper, input_signature=[rows, by_class, scalar])
    scale, history = tf.constant(len(X) / batch_size, tf.float64), []
    for max_iter, delay, seed in runs:
        rng = np.random.default_rng(seed)
        for t in range(max_iter):
            idx = rng.choice(len(X), batch_size, replace=False)
            Xb, Yb = tf.constant(X[idx]), tf.constant(onehot[idx])
            is_hyper = (t + 1) % hyper_every == 0
            rho = tf.constant(step_size(t, delay, 0.6), tf.float64)
            value = (update if is_hyper else update_and_value)(Xb, Yb, scale, rho)
            history.append(float(hyper(Xb, Yb, scale) if is_hyper else value))
    return history


@pytest.mark.slow
def test_models_of_one_signature_share_the_updates_and_train_bit_for_bit_as_alone(monkeypatch):
    """Two data sets of other sizes, two runs on one trainer (Adam carries over): every bound and value exactly equal."""
    import gpal.training.cavi as cavi
    from gpal.models.state import module_values
    from gpal.training.shared import LentBySignature

    def model(X):  # 12 inducing points at either size: one signature, so the second data set's runs share the updates
        return AugmentedLogisticSoftmaxGP(gpflow.kernels.SquaredExponential(lengthscales=[2.0, 2.0]), X[:12], 3)

    monkeypatch.setattr(cavi, "_UPDATES", LentBySignature(8))  # no updates kept from other tests
    runs, kept = [(6, 1.0, 0), (4, 7.0, 1)], []
    for n, seed in [(120, 7), (90, 8)]:
        X, y = three_class(n, seed)
        alone, shared = model(X), model(X)
        expected = _natural_gradient_alone(alone, X, y, runs, 0.05, 30, 2)
        trainer = AugmentedTrainer(shared, X, y, learning_rate=0.05, train_inducing=True)
        got = sum((trainer.run("natural_gradient", max_iter=m, batch_size=30, hyper_every=2, delay=d, seed=s)
                   for m, d, s in runs), [])
        assert got == expected
        values = module_values(shared)
        for path, value in module_values(alone).items():
            np.testing.assert_array_equal(values[path], value, err_msg=path)
        assert not np.array_equal(values[".Z"], X[:12])  # the hyper steps ran
        with cavi._signature_updates(shared, True) as updates:
            pass
        kept.append(updates)
    assert kept[0] is updates and updates.model is not shared  # the second data set's runs: the first's updates
    assert all(fn.experimental_get_tracing_count() == 1 for fn in (updates.update, updates.update_and_value, updates.hyper))


@pytest.mark.parametrize("seed", [0, 1])
def test_each_local_update_is_a_stationary_maximum(seed):
    mean, var, onehot = random_marginals(seed)
    loc = optimal_locals(mean, var)
    best = augmented_elbo_terms(mean, var, onehot, loc).numpy()
    for field in LocalFactors._fields:
        for factor in (1.0 - 1e-3, 1.0 + 1e-3):
            moved = loc._replace(**{field: getattr(loc, field) * factor})
            lower = augmented_elbo_terms(mean, var, onehot, moved).numpy()
            assert np.all(lower < best), (field, factor)


@pytest.mark.parametrize("seed", [0, 1])
def test_each_collapsed_local_is_a_stationary_maximum(seed):
    mean, var, onehot = random_marginals(seed)
    loc = collapsed_locals(mean, var)
    best = collapsed_elbo_terms(mean, var, onehot, loc).numpy()
    for field in ("c", "gamma"):
        for factor in (1.0 - 1e-3, 1.0 + 1e-3):
            moved = loc._replace(**{field: getattr(loc, field) * factor})
            assert np.all(collapsed_elbo_terms(mean, var, onehot, moved).numpy() < best), (field, factor)


def test_collapsed_bound_at_its_optimum_is_the_sum_over_all_counts():
    """max over q(n) = log sum_n p(n) prod_c a_c^n_c, p(n) = N! / prod n_c! C^-(N+1), summed term by term (C = 3)."""
    from scipy.special import gammaln, logsumexp

    mean, var, onehot = random_marginals(3, n=5, num_classes=3)
    loc = collapsed_locals(mean, var)
    closed = collapsed_elbo_terms(mean, var, onehot, loc).numpy()
    m, c, yy = mean.numpy(), loc.c.numpy(), onehot.numpy()
    l2c = np.abs(c) / 2 + np.log1p(np.exp(-np.abs(c)))
    log_a = -m / 2 - l2c
    counts = np.stack(np.meshgrid(*[np.arange(151)] * 3, indexing="ij"), -1).reshape(-1, 3)
    counts = counts[counts.sum(1) <= 150]  # every count vector of total <= 150
    total = counts.sum(1)
    # The terms of total N sum to ratio^N / C: what is omitted is < 0.85^151 / 0.15 ~ 1e-10 of the whole.
    assert np.exp(log_a).sum(1).max() / 3 < 0.85
    log_prior = gammaln(total + 1) - gammaln(counts + 1).sum(1) - (total + 1) * np.log(3)
    for i in range(len(closed)):
        brute = logsumexp(log_prior + counts @ log_a[i]) + np.sum(yy[i] * (m[i] / 2 - l2c[i]))
        np.testing.assert_allclose(closed[i], brute, rtol=1e-9)


def test_collapsed_bound_matches_monte_carlo_over_the_counts():
    """Any gamma: q(n) is N ~ geometric, n | N ~ multinomial (scipy's densities); the n-dependent terms by sampling."""
    from scipy import stats
    from scipy.special import gammaln

    mean, var, onehot = random_marginals(4, n=4, num_classes=3)
    loc = collapsed_locals(mean, var)
    rng = np.random.default_rng(5)
    loc = loc._replace(gamma=loc.gamma * rng.uniform(0.5, 1.5, size=loc.gamma.shape),
                       c=loc.c * rng.uniform(0.8, 1.3, size=loc.c.shape))
    closed = collapsed_elbo_terms(mean, var, onehot, loc).numpy()
    m, second, yy, c, g = mean.numpy(), (mean**2 + var).numpy(), onehot.numpy(), loc.c.numpy(), loc.gamma.numpy()
    t = np.tanh(c / 2) / (2 * c)
    tilt = np.log(2 * np.cosh(c / 2)) + t * (second - c**2) / 2  # E_q(omega | n) of the PG terms, per unit count
    S = 100000
    for i in range(len(closed)):
        a_hat = g[i] * 3 / (1 + g[i].sum())  # q(n) = p(n) prod a_hat^n / normaliser, E n = gamma
        ratio = a_hat.sum() / 3
        N = rng.geometric(1 - ratio, size=S) - 1  # numpy's geometric starts at 1
        n = rng.multinomial(N, a_hat / a_hat.sum())
        log_q = stats.geom.logpmf(N + 1, 1 - ratio) + stats.multinomial.logpmf(n, N, a_hat / a_hat.sum())
        log_p = gammaln(N + 1) - gammaln(n + 1).sum(1) - (N + 1) * np.log(3)
        per_draw = log_p - log_q + n @ (-m[i] / 2 - tilt[i]) + np.sum(yy[i] * (m[i] / 2 - tilt[i]))
        se = per_draw.std() / math.sqrt(S)
        assert abs(per_draw.mean() - closed[i]) < 4 * se + 1e-12, (i, per_draw.mean(), closed[i], se)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_collapsed_bound_is_never_below_the_mean_field_bound(seed):
    mean, var, onehot = random_marginals(seed)
    collapsed = collapsed_elbo_terms(mean, var, onehot, collapsed_locals(mean, var)).numpy()
    mean_field = augmented_elbo_terms(mean, var, onehot, optimal_locals(mean, var)).numpy()
    assert np.all(collapsed >= mean_field - 1e-12)
    assert np.mean(collapsed - mean_field) > 0.05  # strictly tighter on these marginals, not the same bound


def test_global_update_is_a_stationary_maximum_for_fixed_locals():
    model, X, y = random_model(3)
    onehot = tf.constant(onehot_labels(y, 3))
    proj = model.project(tf.constant(X))
    loc = optimal_locals(*model.marginals(proj, model.q()))

    def bound():
        q = model.q()
        mean, var = model.marginals(proj, q)
        return float(tf.reduce_sum(augmented_elbo_terms(mean, var, onehot, loc)) - model.kl(q))

    eta1_hat, precision_hat = global_natural_parameters(proj.A, onehot, loc, 1.0)
    model.eta1.assign(eta1_hat)
    model.precision.assign(precision_hat)
    best = bound()
    rng = np.random.default_rng(0)
    for _ in range(3):
        model.eta1.assign(eta1_hat + 1e-2 * rng.normal(size=eta1_hat.shape))
        assert bound() < best
        model.eta1.assign(eta1_hat)
        model.precision.assign(precision_hat * (1.0 + 1e-2 * rng.choice([-1.0, 1.0])))
        assert bound() < best
        model.precision.assign(precision_hat)


@pytest.mark.parametrize("locals_family", ["collapsed", "mean_field"])
def test_cavi_reaches_the_maximum_a_direct_optimiser_finds(locals_family):
    """Fixed kernel: CAVI's q(u) and bound equal L-BFGS on the same bound over (m, chol S) from another start.

    The bound optimised by L-BFGS is the model's (locals at their optimum for each q), so a CAVI
    fixed point that were not its maximum (a wrong update) would show as a gap.
    """
    from scipy.optimize import minimize

    X, y = three_class(60, 9)
    model = AugmentedLogisticSoftmaxGP(gpflow.kernels.SquaredExponential(lengthscales=[0.9, 0.9], variance=3.0), X[::6], 3,
                                       locals_family=locals_family)
    Xt, onehot = tf.constant(X), tf.constant(onehot_labels(y, 3))
    AugmentedTrainer(model, X, y).run("cavi", max_iter=200, hyper_every=0)
    cavi_bound, cavi_mean = float(model.elbo(Xt, onehot)), model.q().mean.numpy()
    C, M = 3, model.Z.shape[0]
    proj = model.project(Xt)

    def negative_bound(x):
        x = tf.constant(x)
        with tf.GradientTape() as tape:
            tape.watch(x)
            mean = tf.reshape(x[: C * M], (C, M))
            sqrt = tf.linalg.band_part(tf.reshape(x[C * M :], (C, M, M)), -1, 0)
            f_mean, f_var = model.marginals(proj, GaussianQ(mean, tf.linalg.matrix_transpose(sqrt)))
            loc = LocalFactors(*[tf.stop_gradient(t) for t in model.optimal_locals(f_mean, f_var)])
            kl = whitened_kl(mean, sqrt)
            value = -(tf.reduce_sum(model.elbo_terms(f_mean, f_var, onehot, loc)) - kl)
        return value.numpy(), tape.gradient(value, x).numpy()

    start = np.concatenate([np.full(C * M, 0.3), np.tile(np.eye(M), (C, 1, 1)).ravel() * 0.5])
    result = minimize(negative_bound, start, jac=True, method="L-BFGS-B", options={"maxiter": 5000, "gtol": 1e-9})
    assert abs(-result.fun - cavi_bound) < 1e-5 * abs(cavi_bound), (-result.fun, cavi_bound)
    np.testing.assert_allclose(result.x[: C * M].reshape(C, M), cavi_mean, atol=2e-3)


@pytest.mark.parametrize("locals_family", ["collapsed", "mean_field"])
@pytest.mark.parametrize("seed", [0, 1])
def test_augmented_elbo_is_below_the_monte_carlo_elbo(seed, locals_family):
    """Jensen: max over the locals of the augmented bound <= sum_i E_q log p(y_i | f_i) - KL, same q(u)."""
    model, X, y = random_model(seed, locals_family=locals_family)
    mean, var = model.predict_f(X)
    rng = np.random.default_rng(seed + 10)
    f = mean.numpy()[None] + np.sqrt(var.numpy())[None] * rng.normal(size=(4000,) + tuple(mean.shape))
    logp = logistic_softmax_log_prob(tf.constant(f.reshape(-1, 3)), tf.constant(np.tile(y, 4000)))
    per_draw = logp.numpy().reshape(4000, -1).sum(axis=1)
    kl = float(model.kl(model.q()))
    mc, se = per_draw.mean() - kl, per_draw.std() / math.sqrt(4000)
    augmented = float(model.elbo(tf.constant(X), tf.constant(onehot_labels(y, 3))))
    assert augmented < mc - 5 * se
    assert mc - augmented < 0.5 * abs(mc)  # a bound, not a different quantity


@pytest.mark.parametrize("b, c", [(1.0, 0.0), (1.0, 0.7), (1.0, 3.0), (1.0, 12.0), (2.5, 1.5)])
def test_polya_gamma_mean_matches_sum_of_gammas(b, c):
    """PG(b, c) = (1 / 2 pi^2) sum_k g_k / ((k - 1/2)^2 + c^2 / 4 pi^2), g_k ~ Gamma(b, 1)."""
    rng = np.random.default_rng(0)
    K, S = 400, 20000
    denom = (np.arange(1, K + 1) - 0.5) ** 2 + c**2 / (4 * math.pi**2)
    draws = (rng.gamma(b, size=(S, K)) / denom).sum(axis=1) / (2 * math.pi**2)
    k = np.arange(K + 1, 10**6)
    tail = b * np.sum(1.0 / ((k - 0.5) ** 2 + c**2 / (4 * math.pi**2))) / (2 * math.pi**2)
    expected = float(polya_gamma_mean(tf.constant(b, tf.float64), tf.constant(c, tf.float64)))
    assert abs(draws.mean() + tail - expected) < 4 * draws.std() / math.sqrt(S)
    assert abs(draws.mean() + tail - expected) < 0.02 * expected


def test_polya_gamma_mean_is_smooth_at_zero():
    c = tf.constant([0.0, 0.99e-4, 1.01e-4, 1e-2], tf.float64)
    values = polya_gamma_mean(tf.ones_like(c), c).numpy()
    np.testing.assert_allclose(values, 0.25 - c.numpy() ** 2 / 48.0, rtol=1e-10)


@pytest.mark.parametrize("locals_family", ["collapsed", "mean_field"])
def test_natural_gradient_step_one_on_full_batch_is_the_cavi_update(locals_family):
    model, X, y = random_model(4, locals_family=locals_family)
    Xt, onehot = tf.constant(X), tf.constant(onehot_labels(y, 3))
    proj = model.project(Xt)
    alpha = tf.constant(np.linspace(1.5, 4.0, len(X)))
    mean, var = model.marginals(proj, model.q())
    loc = collapsed_locals(mean, var) if locals_family == "collapsed" else paper_locals(mean, var, alpha)
    theta = polya_gamma_mean(onehot + loc.gamma, loc.c)
    returned = model.natural_gradient_step(Xt, onehot, 1.0, 1.0, alpha)
    np.testing.assert_array_equal(returned.gamma.numpy(), loc.gamma.numpy())
    q = model.q()
    mean, cov = q.mean, tf.matmul(q.inv_chol, q.inv_chol, transpose_a=True)
    for c in range(3):
        # paper 002's closed-form q for a quadratic term b f - w f^2: here b = (y' - gamma) / 2, w = theta / 2
        quad = Quadratic(tf.zeros_like(theta[:, c]), (onehot[:, c] - loc.gamma[:, c]) / 2.0, theta[:, c] / 2.0)
        q = optimal_q(proj.A, quad)
        np.testing.assert_allclose(mean[c].numpy(), q.mean.numpy(), rtol=1e-8, atol=1e-10)
        np.testing.assert_allclose(cov[c].numpy(), (q.sqrt @ tf.transpose(q.sqrt)).numpy(), rtol=1e-8, atol=1e-10)


def test_natural_gradient_step_blends_natural_parameters():
    model, X, y = random_model(5)
    Xt, onehot = tf.constant(X[:16]), tf.constant(onehot_labels(y[:16], 3))
    eta1, precision = model.eta1.numpy(), model.precision.numpy()
    proj = model.project(Xt)
    hat = global_natural_parameters(proj.A, onehot, model.optimal_locals(*model.marginals(proj, model.q())), 2.5)
    model.natural_gradient_step(Xt, onehot, 2.5, 0.3)
    np.testing.assert_allclose(model.eta1.numpy(), 0.7 * eta1 + 0.3 * hat[0].numpy(), rtol=1e-10)
    np.testing.assert_allclose(model.precision.numpy(), 0.7 * precision + 0.3 * hat[1].numpy(), rtol=1e-10)


# ------------------------------------------------------------------ estimator
@pytest.mark.slow
def test_models_of_one_signature_share_one_predictor_and_predict_bit_for_bit_as_alone():
    """Two models, three row counts and a call in chunks, two seeds: each equals the model's own trace exactly."""
    from gpal.models.families.augmented_logistic_softmax import _shared_predictor
    from gpal.models.quadrature import monte_carlo_mean

    rows = np.random.default_rng(5).normal(size=(23, 2))
    for model_seed in (0, 1):
        model, _, _ = random_model(model_seed)
        for seed in (3, 12):
            alone = tf.function(lambda X: monte_carlo_mean(logistic_softmax_probs, *model.predict_f(X), 50, seed),
                                input_signature=[tf.TensorSpec([None, 2], tf.float64)])
            for n in (23, 7, 1):
                np.testing.assert_array_equal(model.predict_proba(rows[:n], 50, seed), alone(tf.constant(rows[:n])).numpy())
            chunks = [alone(tf.constant(rows[i : i + 10])).numpy() for i in (0, 10, 20)]
            np.testing.assert_array_equal(model.predict_proba(rows, 50, seed, chunk=10), np.concatenate(chunks))
    predictor = _shared_predictor(model, 50)
    assert predictor.experimental_get_tracing_count() == 1  # not per model, row count or seed
    assert _shared_predictor(model, 51) is not predictor  # the draws shape the loop: a trace each


@pytest.fixture(scope="module")
def fitted():
    X, y = three_class(150, 0)
    labels = np.array(["bll", "fsrq", "psr"])[y]
    clf = LogisticSoftmaxGPClassifier(inference="cavi", num_inducing=15, max_iter=40, learning_rate=0.05, n_samples=300,
                                      progress=False)
    return clf.fit(X, labels), X, labels


def test_predictions_integrate_over_q_and_sum_to_one(fitted):
    clf, X, _ = fitted
    proba = clf.predict_proba(X[:40])
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-12)
    mean, var = clf.model_.predict_f(clf.standardizer_.transform_arrays(X[:40])[0])
    plug_in = logistic_softmax_probs(mean).numpy()
    assert np.max(np.abs(proba - plug_in)) > 0.02
    rng = np.random.default_rng(1)
    f = mean.numpy()[None] + np.sqrt(var.numpy())[None] * rng.normal(size=(5000,) + tuple(mean.shape))
    reference = logistic_softmax_probs(tf.constant(f.reshape(-1, 3))).numpy().reshape(5000, 40, 3).mean(axis=0)
    np.testing.assert_allclose(proba, reference, atol=0.03)


def test_string_labels_and_sensible_accuracy(fitted):
    clf, _, _ = fitted
    assert list(clf.classes_) == ["bll", "fsrq", "psr"]
    X_test, y_test = three_class(300, 99)
    labels = np.array(["bll", "fsrq", "psr"])[y_test]
    assert set(clf.predict(X_test)) <= set(clf.classes_)
    assert clf.score(X_test, labels) > 0.85
    assert clf.n_features_in_ == 2 and len(clf.history_) == 40


def test_natural_gradient_minibatches_reach_sensible_accuracy():
    X, y = three_class(200, 1)
    clf = LogisticSoftmaxGPClassifier(
        inference="natural_gradient", batch_size=50, num_inducing=15, max_iter=60, learning_rate=0.05,
        n_samples=200, progress=False,
    ).fit(X, y)
    X_test, y_test = three_class(300, 98)
    assert clf.score(X_test, y_test) > 0.85
    assert len(clf.history_) == 60 and np.all(np.isfinite(clf.history_))


def test_save_load_predicts_identically(fitted, tmp_path):
    clf, X, _ = fitted
    clf.save(tmp_path / "model")
    loaded = LogisticSoftmaxGPClassifier.load(tmp_path / "model")
    np.testing.assert_array_equal(loaded.predict_proba(X), clf.predict_proba(X))
    assert list(loaded.classes_) == list(clf.classes_)
    assert loaded.history_ == clf.history_
    assert loaded.get_params() == clf.get_params()


def test_input_noise_is_ignored_with_a_warning():
    X, y = three_class(40, 2)
    clf = LogisticSoftmaxGPClassifier(num_inducing=5, max_iter=2, n_samples=10, progress=False)
    with pytest.warns(UserWarning, match="ignores input noise"):
        clf.fit(X, y, X_var=np.full_like(X, 0.1))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clf.predict_proba(X, np.zeros_like(X))


@pytest.mark.parametrize(
    "params, match",
    [
        ({"inference": "svi"}, "inference must be one of"),
        ({"inference": "cavi", "batch_size": 10}, "inference='cavi' updates on the full batch"),
        ({"inference": "natural_gradient", "batch_size": 0}, "batch_size must be None or an integer"),
        ({"num_inducing": 0}, "num_inducing must be an integer >= 1"),
        ({"nat_delay": 0.5}, "nat_delay must be a finite number >= 1"),
        ({"nat_forgetting": 1.5}, r"nat_forgetting must be a finite number >= 0 and <= 1 \(0: every step is 1\); got 1.5"),
        ({"learning_rate": -1.0}, "learning_rate must be a finite number > 0"),
        ({"inference": "cavi_collapsed", "local_passes": 2},
         r"local_passes=2 repeats the paper's mean-field local updates; inference='cavi_collapsed' takes"),
        ({"local_passes": 0}, "local_passes must be an integer >= 1"),
    ],
)
def test_bad_parameters_are_named(params, match):
    X, y = three_class(20, 0)
    with pytest.raises(ValueError, match=match):
        LogisticSoftmaxGPClassifier(progress=False, **params).fit(X, y)


def test_bad_inputs_raise_clear_errors(fitted):
    clf, X, _ = fitted
    with pytest.raises(NotFittedError, match="not fitted"):
        LogisticSoftmaxGPClassifier().predict_proba(X)
    with pytest.raises(ValueError, match="X has 3 features, but LogisticSoftmaxGPClassifier is expecting 2 features"):
        clf.predict_proba(np.ones((2, 3)))
    bad = X.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="row 3, column 1"):
        LogisticSoftmaxGPClassifier(progress=False).fit(bad, np.arange(len(X)) % 2)
    with pytest.raises(ValueError, match="at least 2 classes"):
        LogisticSoftmaxGPClassifier(progress=False).fit(X, np.zeros(len(X)))
    with pytest.raises(TypeError, match=r"kernel must be None, a kernel name \[.*\] or a gpflow kernel"):
        LogisticSoftmaxGPClassifier(kernel="rbf", progress=False).fit(X, np.arange(len(X)) % 2)


@pytest.mark.parametrize("optimal", [True, False])
def test_closed_form_bound_matches_monte_carlo_over_all_augmented_variables(optimal):
    """E_q[log p(y, lambda, n, omega | f) - log q(lambda, n, omega)] by sampling lambda, n, omega, scipy densities.

    Shared with the closed form are only the Gaussian moments of f (E f, E f^2 = m^2 + v, f being
    independent of the rest) and the exponential tilting PG(omega | b, c) = cosh(c/2)^b
    e^{-c^2 omega / 2} PG(omega | b, 0); omega is drawn from its sum-of-gammas representation.
    The omega terms are estimated from their own, smaller sample (the PG draws are the costly part).
    """
    from scipy import stats

    mean, var, onehot = random_marginals(7, n=4, num_classes=3)
    loc = optimal_locals(mean, var)
    if not optimal:
        rng_loc = np.random.default_rng(1)
        loc = LocalFactors(*[t * rng_loc.uniform(0.5, 1.5, size=t.shape) for t in loc])
    closed = augmented_elbo_terms(mean, var, onehot, loc).numpy()
    m, second, yy = mean.numpy(), (mean**2 + var).numpy(), onehot.numpy()
    c, g, a, rate = (t.numpy() for t in loc)
    rng = np.random.default_rng(2)
    S, S_pg, K = 400000, 20000, 200
    denom, far = (np.arange(1, K + 1) - 0.5) ** 2, (np.arange(K + 1, 10**5) - 0.5) ** 2
    for i in range(len(closed)):
        lam = rng.gamma(a[i], 1.0 / rate[i], size=S)
        n = rng.poisson(g[i], size=(S, 3))
        total = -stats.gamma.logpdf(lam, a[i], scale=1.0 / rate[i])  # flat prior on lambda
        omega_part = np.zeros(S_pg)
        for k in range(3):
            total += stats.poisson.logpmf(n[:, k], lam) - stats.poisson.logpmf(n[:, k], g[i, k])
            total += -(yy[i, k] + n[:, k]) * np.log(2 * np.cosh(c[i, k] / 2)) + (yy[i, k] - n[:, k]) * m[i, k] / 2
            shape = yy[i, k] + rng.poisson(g[i, k], size=S_pg)
            gam, drawn = np.zeros((S_pg, K)), shape > 0  # Gamma(0, 1) is 0: only the other rows are drawn
            gam[drawn] = rng.gamma(shape[drawn][:, None], size=(np.count_nonzero(drawn), K))
            shift = c[i, k] ** 2 / (4 * math.pi**2)
            tail = np.sum(1.0 / (far + shift)) * shape  # E of the terms k > K, too small to vary
            omega = ((gam / (denom + shift)).sum(axis=1) + tail) / (2 * math.pi**2)
            omega_part += omega * (c[i, k] ** 2 - second[i, k]) / 2
        estimate = total.mean() + omega_part.mean()
        se = math.hypot(total.std() / math.sqrt(S), omega_part.std() / math.sqrt(S_pg))
        assert abs(estimate - closed[i]) < 4 * se, (i, estimate, closed[i], se)


def test_save_load_with_a_user_kernel(tmp_path):
    X, y = three_class(60, 3)
    kernel = gpflow.kernels.Matern32(lengthscales=[0.7, 1.3])
    clf = LogisticSoftmaxGPClassifier(kernel=kernel, num_inducing=6, max_iter=5, n_samples=50, progress=False).fit(X, y)
    clf.save(tmp_path / "m")
    loaded = LogisticSoftmaxGPClassifier.load(tmp_path / "m")
    np.testing.assert_array_equal(loaded.predict_proba(X), clf.predict_proba(X))
    assert isinstance(loaded.kernel, gpflow.kernels.Matern32) and isinstance(loaded.model_.kernel, gpflow.kernels.Matern32)
    np.testing.assert_array_equal(loaded.kernel.lengthscales.numpy(), [0.7, 1.3])
    assert not np.allclose(loaded.model_.kernel.lengthscales.numpy(), [0.7, 1.3])  # fitted copy, template untouched


def test_cavi_against_the_true_elbo_optimum_at_a_fixed_kernel():
    """The cause of the gap to SVI, on a small problem: each augmented bound's optimum against the true ELBO's.

    The true ELBO (sum_i E_q log p(y_i | f_i) - KL, 300 fixed Monte Carlo draws) is maximised over q(u) by
    L-BFGS -- SVI's objective at the same kernel.  Integrating lambda out brings CAVI's q(u) to within the
    issue's 0.02 of the true optimum's test NLL here (measured 0.007: what is left is the Polya-Gamma
    bound's looseness); the paper's mean field stays well outside (measured 0.096).
    """
    from scipy.optimize import minimize

    X, y = three_class(80, 11, noise=0.15)
    X_test, y_test = three_class(400, 12, noise=0.15)
    kernel = gpflow.kernels.SquaredExponential(lengthscales=[0.8, 0.8], variance=8.0)
    fitted = {}
    for family in ("collapsed", "mean_field"):
        fitted[family] = AugmentedLogisticSoftmaxGP(gpflow.utilities.deepcopy(kernel), X[::8], 3, locals_family=family)
        AugmentedTrainer(fitted[family], X, y).run("cavi", max_iter=150, hyper_every=0)
    model, (C, M) = fitted["collapsed"], fitted["collapsed"].eta1.shape
    proj, proj_test = model.project(tf.constant(X)), model.project(tf.constant(X_test))
    eps = tf.constant(np.random.default_rng(0).normal(size=(300, len(X), C)))
    labels = tf.constant(np.tile(y, 300))

    def true_elbo(q):
        mean, var = model.marginals(proj, q)
        draws = tf.reshape(mean[None] + tf.sqrt(var)[None] * eps, (-1, C))
        return tf.reduce_sum(logistic_softmax_log_prob(draws, labels)) / 300 - model.kl(q)

    def unpack(x):
        sqrt = tf.linalg.band_part(tf.reshape(x[C * M :], (C, M, M)), -1, 0)
        return GaussianQ(tf.reshape(x[: C * M], (C, M)), tf.linalg.matrix_transpose(sqrt))

    def negative(x):
        x = tf.constant(x)
        with tf.GradientTape() as tape:
            tape.watch(x)
            value = -true_elbo(unpack(x))
        return value.numpy(), tape.gradient(value, x).numpy()

    def test_nll(q):
        mean, var = model.marginals(proj_test, q)
        draws = mean.numpy()[None] + np.sqrt(var.numpy())[None] * np.random.default_rng(3).normal(size=(2000,) + tuple(mean.shape))
        proba = logistic_softmax_probs(tf.constant(draws.reshape(-1, C))).numpy().reshape(draws.shape).mean(axis=0)
        return -np.mean(np.log(proba[np.arange(len(y_test)), y_test]))

    q = model.q()
    start = np.concatenate([q.mean.numpy().ravel(), np.transpose(q.inv_chol.numpy(), (0, 2, 1)).ravel()])
    best = unpack(minimize(negative, start, jac=True, method="L-BFGS-B", options={"maxiter": 3000}).x)
    qc, qm = fitted["collapsed"].q(), fitted["mean_field"].q()
    assert float(true_elbo(best)) > float(true_elbo(qc)) > float(true_elbo(qm))
    assert abs(test_nll(qc) - test_nll(best)) < 0.02
    assert abs(test_nll(qm) - test_nll(best)) > 0.05


def test_repeated_local_passes_are_the_papers_pass_again_and_reach_the_locals_optimum():
    """AugmentedGaussianProcesses.jl repeats q(n), q(lambda) per sweep (``local_passes``): two passes are the paper's
    pass applied to its own alpha, and many reach the joint optimum of the locals (Newton's fixed point, computed
    independently by ``optimal_locals``)."""
    model, X, y = random_model(5, locals_family="mean_field")
    Xt, onehot = tf.constant(X), tf.constant(onehot_labels(y, 3))
    alpha = tf.constant(np.full(len(X), 3.0))
    mean, var = model.marginals(model.project(Xt), model.q())
    twice = paper_locals(mean, var, paper_locals(mean, var, alpha).alpha)
    eta1, precision = model.eta1.numpy(), model.precision.numpy()
    model.local_passes = 2
    np.testing.assert_allclose(model.natural_gradient_step(Xt, onehot, 1.0, 1.0, alpha).gamma.numpy(),
                               twice.gamma.numpy(), rtol=1e-12)
    model.eta1.assign(eta1), model.precision.assign(precision)
    model.local_passes = 200
    many = model.natural_gradient_step(Xt, onehot, 1.0, 1.0, alpha)
    best = optimal_locals(mean, var)
    np.testing.assert_allclose(many.alpha.numpy(), best.alpha.numpy(), rtol=1e-8)
    np.testing.assert_allclose(many.gamma.numpy(), best.gamma.numpy(), rtol=1e-8)
    with pytest.raises(ValueError, match="local_passes must be an integer >= 1; got 0"):
        AugmentedLogisticSoftmaxGP(gpflow.kernels.SquaredExponential(), X[:4], 3, "mean_field", local_passes=0)


def test_cavi_with_the_authors_local_passes_never_decreases_the_elbo():
    X, y = three_class(120, 3)
    model = AugmentedLogisticSoftmaxGP(gpflow.kernels.SquaredExponential(lengthscales=[1.0, 1.0]), X[::8], 3,
                                       locals_family="mean_field", local_passes=5)
    history = AugmentedTrainer(model, X, y).run("cavi", max_iter=12, hyper_every=0)
    assert np.all(np.diff(history) >= -1e-9 * np.abs(history[1:]))
    assert history[-1] - history[0] > 1.0

"""The sparse GP, the input-noise strategies and the training loop, checked against independent computations."""

import gpflow
import numpy as np
import pytest
import tensorflow as tf
import tensorflow_probability as tfp

from gpal.models import build_model
from gpal.models.input_prior import BroadPrior
from gpal.models.input_noise import FirstOrder, LatentInputs, expected_log_observation
from gpal.training.svi import CholeskyError, SharedTrainer, TrainData, Trainer, TrainingError

tfd = tfp.distributions
C, D = 3, 2


def _data(n=40, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, D))
    y = np.arange(n) % C
    X_var = rng.uniform(0.01, 0.1, (n, D))
    return X, y, X_var


def _randomise(model, seed=0):
    """Non-trivial q(u) and kernel parameters, so that agreement checks mean something."""
    rng = np.random.default_rng(seed)
    gp = model.gp
    M = gp.num_inducing
    gp.q_mu.assign(rng.normal(size=(M, C)))
    gp.q_sqrt.assign(np.tril(rng.normal(0, 0.3, (C, M, M))) + np.eye(M)[None] * 0.5)
    for k in gp.kernels:
        k.lengthscales.assign(rng.uniform(0.5, 2.0, k.lengthscales.shape))
        k.variance.assign(rng.uniform(0.5, 2.0))
    gp.Z.assign(gp.Z.numpy() + rng.normal(0, 0.1, gp.Z.shape))


def _t(a):
    return tf.constant(a, dtype=tf.float64)


def _proba(model, X, X_var, seed, n_samples):
    """``model.predict_proba``, in a ``tf.function`` for a Monte Carlo likelihood: its 1000-draw loop costs seconds
    eagerly, a trace half a second; a quadrature (robust-max) costs a tenth of that eagerly."""
    if model.likelihood.latent_draws_per_input(1) == 1:
        return model.predict_proba(X, X_var, seed, n_samples)
    return tf.function(lambda a, b, s: model.predict_proba(a, b, s, n_samples), autograph=False)(X, X_var, seed)


# ------------------------------------------------------------------ GP core
def test_kl_matches_tensorflow_probability():
    X, y, _ = _data()
    model = build_model(X, y, num_classes=C, num_inducing=8)
    _randomise(model)
    gp = model.gp
    ref = 0.0
    for c in range(C):
        q = tfd.MultivariateNormalTriL(gp.q_mu[:, c], gp.q_sqrt[c])
        p = tfd.MultivariateNormalDiag(tf.zeros(8, tf.float64), tf.ones(8, tf.float64))
        ref += q.kl_divergence(p).numpy()
    np.testing.assert_allclose(gp.kl().numpy(), ref, rtol=1e-10)


def _dense_posterior(gp, c, Xs):
    """Latent c in the textbook un-whitened form (numpy): K_xz, diag K_xx, m_u, S_u and B = K_xz K_zz^-1."""
    k, Z = gp.kernels[c], gp.Z.numpy()[c]
    M = Z.shape[0]
    Kzz = k(Z).numpy() + gp.jitter.numpy() * np.eye(M)
    Kxz, kxx = k(Xs, Z).numpy(), k(Xs, full_cov=False).numpy()
    L = np.linalg.cholesky(Kzz)
    S = gp.q_sqrt.numpy()[c]
    return Kxz, kxx, L @ gp.q_mu.numpy()[:, c], L @ S @ S.T @ L.T, Kxz @ np.linalg.inv(Kzz)


def test_marginals_and_inducing_spread_match_dense_computation():
    """Whitened q(v) = N(m, S S^T), u = L v: compare with the textbook un-whitened formulas in numpy.

    The spread S^T L^-1 K_zx carries the part B S_u B^T of Cov q(f(x), f(x')) that q(u) carries.
    """
    X, y, _ = _data()
    model = build_model(X, y, num_classes=C, num_inducing=8)
    _randomise(model)
    gp = model.gp
    Xs = np.random.default_rng(1).normal(size=(15, D))
    mean, var = (t.numpy() for t in gp.marginals(_t(Xs)))
    spread = gp.inducing_spread(_t(Xs)).numpy()  # (L, M, N)
    for c in range(C):
        Kxz, kxx, m_u, S_u, B = _dense_posterior(gp, c, Xs)
        np.testing.assert_allclose(mean[:, c], B @ m_u, rtol=1e-7, atol=1e-9)
        dense_var = kxx - np.einsum("nm,nm->n", B, Kxz) + np.einsum("nm,mk,nk->n", B, S_u, B)
        np.testing.assert_allclose(var[:, c], dense_var, rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(spread[c].T @ spread[c], B @ S_u @ B.T, rtol=1e-6, atol=1e-9)
        assert np.all(np.sum(spread[c] ** 2, axis=0) <= var[:, c] + 1e-12)  # the rest is the residual


def test_sigma_point_mean_is_exact_for_cubics_per_axis():
    from gpal.models.quadrature import sigma_point_mean

    mean, var = _t([[0.3, -1.0], [2.0, 0.5]]), _t([[0.5, 2.0], [0.1, 1.5]])
    g = lambda F: tf.stack([F[:, 0] ** 2, F[:, 0] * F[:, 1], F[:, 1] ** 3 + F[:, 0]], axis=1)  # noqa: E731
    m, v = mean.numpy(), var.numpy()
    exact = np.stack([m[:, 0] ** 2 + v[:, 0], m[:, 0] * m[:, 1], m[:, 1] ** 3 + 3 * m[:, 1] * v[:, 1] + m[:, 0]], 1)
    np.testing.assert_allclose(sigma_point_mean(g, mean, var).numpy(), exact, rtol=1e-12)


@pytest.mark.parametrize("input_noise,likelihood", [("none", "robustmax"), ("none", "softmax"),
                                                    ("latent", "softmax"), ("first_order", "robustmax")])
def test_joint_draws_average_to_the_prediction_and_keep_rows_correlated(input_noise, likelihood):
    X, y, X_var = _data()
    model = build_model(X, y, num_classes=C, num_inducing=8, input_noise=input_noise, X_var=X_var,
                        likelihood=likelihood)
    _randomise(model)
    rng = np.random.default_rng(3)
    Xs = rng.normal(size=(5, D))
    Xs[1] = Xs[0] + 1e-3  # a near-copy of row 0
    Vs = np.full_like(Xs, 0.02)
    seed = tf.constant([1, 2], tf.int64)
    draws = model.sample_function_proba(_t(Xs), _t(Vs), seed, 4000).numpy()
    alone = model.sample_function_proba(_t(Xs[3:4]), _t(Vs[3:4]), seed, 4000).numpy()
    np.testing.assert_allclose(alone[:, 0], draws[:, 3], atol=1e-6)  # a row's draws do not depend on the others
    np.testing.assert_allclose(draws.sum(-1), 1.0, atol=1e-12)
    # the draws average to the predictive probabilities: to Monte Carlo error (SE <= 0.008 at 4000 shared
    # draws), the softmax's Monte Carlo prediction and its unscented rule's bias (exact to cubics)
    p = _proba(model, _t(Xs), _t(Vs), seed, 2000).numpy()
    np.testing.assert_allclose(draws.mean(0), p, atol=0.025)
    assert np.corrcoef(draws[:, 0, 0], draws[:, 1, 0])[0, 1] > 0.95  # near-identical sources move together


def test_joint_draws_take_measurement_noise_for_noise_not_for_disagreement():
    """With q(v) collapsed to a point, a noisy source's draws agree (nothing a label could teach); per-row draws don't."""
    X, y, X_var = _data()
    model = build_model(X, y, num_classes=C, num_inducing=8, input_noise="latent", X_var=X_var, likelihood="softmax")
    _randomise(model)
    model.gp.q_sqrt.assign(np.tile(1e-6 * np.eye(8)[None], (C, 1, 1)))
    Xs, Vs = np.random.default_rng(4).normal(size=(4, D)), np.full((4, D), 1.0)  # large error bars
    seed = tf.constant([3, 4], tf.int64)
    joint = model.sample_function_proba(_t(Xs), _t(Vs), seed, 50, input_draws=64).numpy()
    per_row = model.sample_conditional_proba(_t(Xs), _t(Vs), seed, 50).numpy()
    assert joint.std(axis=0).max() < 1e-6 and per_row.std(axis=0).max() > 0.05
    # per-row draws averaged over input draws (BALD's): the measurement noise leaves the spread, the latent part stays
    averaged = model.sample_conditional_proba(_t(Xs), _t(Vs), seed, 2000, input_draws=64).numpy()
    paired = model.sample_conditional_proba(_t(Xs), _t(Vs), seed, 2000).numpy()
    assert np.all(averaged.std(axis=0) < paired.std(axis=0))
    np.testing.assert_allclose(averaged.mean(0), paired.mean(0), atol=0.03)  # the same predictive, to MC error
    exact = build_model(X, y, num_classes=C, num_inducing=8, input_noise="none", likelihood="softmax")
    np.testing.assert_array_equal(exact.sample_conditional_proba(_t(Xs), _t(Vs), seed, 50, input_draws=7).numpy(),
                                  exact.sample_conditional_proba(_t(Xs), _t(Vs), seed, 50).numpy())


def _numpy_se(Z, X, lengthscales, variance):
    r2 = (((Z[:, None, :] - X[None, :, :]) / lengthscales) ** 2).sum(-1)
    return variance * np.exp(-0.5 * r2)


@pytest.mark.parametrize("kernel", ["se_ard", "se_isotropic", "matern52"])
def test_predictive_marginals_match_numpy_and_the_solve_path(kernel):
    """The prediction path (q(u) folded into w and Q, one GEMM; SE kernels as exp of one GEMM) against
    numpy's textbook formulas and against ``marginals``, whose triangular solve per input it replaces."""
    X, y, _ = _data()
    template = {"se_ard": None, "se_isotropic": gpflow.kernels.SquaredExponential(lengthscales=1.3),
                "matern52": gpflow.kernels.Matern52(lengthscales=[1.0, 2.0])}[kernel]
    model = build_model(X, y, num_classes=C, num_inducing=8, kernel=template)
    _randomise(model)
    gp = model.gp
    Xs = np.random.default_rng(2).normal(size=(25, D)) * 2.0
    mean, var = (t.numpy() for t in tf.function(gp.predictive_marginals, autograph=False)(_t(Xs)))
    solve_mean, solve_var = (t.numpy() for t in gp.marginals(_t(Xs)))
    np.testing.assert_allclose(mean, solve_mean, rtol=0, atol=1e-12)
    np.testing.assert_allclose(var, solve_var, rtol=0, atol=1e-12)
    for c, k in enumerate(gp.kernels):
        Z = gp.Z.numpy()[c]
        if kernel == "matern52":
            Kxz, kxx = k(Xs, Z).numpy(), k(Xs, full_cov=False).numpy()
            Kzz = k(Z).numpy()
        else:
            ls, v = np.broadcast_to(k.lengthscales.numpy(), (D,)), k.variance.numpy()
            Kxz, kxx, Kzz = _numpy_se(Xs, Z, ls, v), np.full(len(Xs), v), _numpy_se(Z, Z, ls, v)
        Kzz = Kzz + gp.jitter.numpy() * np.eye(8)
        L = np.linalg.cholesky(Kzz)
        S = gp.q_sqrt.numpy()[c]
        B = Kxz @ np.linalg.inv(Kzz)
        np.testing.assert_allclose(mean[:, c], B @ L @ gp.q_mu.numpy()[:, c], rtol=1e-9, atol=1e-10)
        dense_var = kxx - np.einsum("nm,nm->n", B, Kxz) + np.einsum("nm,mk,nk->n", B, L @ S @ S.T @ L.T, B)
        np.testing.assert_allclose(var[:, c], dense_var, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("conditioning", ["fitted-like", "near-singular"])
def test_float32_prediction_keeps_variances_to_float32_rounding_of_the_prior(conditioning):
    """predictive_marginals in float32 against float64, where K_zz is near-singular too (two inducing points
    1e-4 apart: condition number ~1e6, the limit the jitter sets).  There k^T Q k in float32 is off by up to
    0.1 (Q's entries reach 4e5); the rotated whitened form keeps means and variances within 1e-4 of the
    prior's scale (|mean| <= sqrt(k_xx) |m|)."""
    X, y, _ = _data()
    model = build_model(X, y, num_classes=C, num_inducing=8)
    _randomise(model)
    gp = model.gp
    if conditioning == "near-singular":
        Z = gp.Z.numpy()
        Z[:, 1] = Z[:, 0] + 1e-4
        gp.Z.assign(Z)
        assert np.linalg.cond(gp.kernels[0](gp.Z[0]).numpy() + gp.jitter.numpy() * np.eye(8)) > 1e5
    Xs = _t(np.random.default_rng(3).normal(size=(200, D)) * 1.5)
    mean64, var64 = (t.numpy() for t in gp.predictive_marginals(Xs))
    mean32, var32 = (t.numpy() for t in gp.predictive_marginals(Xs, tf.float32))
    prior = np.array([k.variance.numpy() for k in gp.kernels])
    assert var64.min() > 0 and np.ptp(mean64) > 0.5  # the comparison is not of constants
    assert np.abs(var32 - var64).max() < 1e-4 * prior.max()
    assert np.abs(mean32 - mean64).max() < 1e-4 * np.sqrt(prior.max()) * np.linalg.norm(gp.q_mu.numpy(), axis=0).max()


def test_first_order_gradients_match_finite_differences():
    X, y, X_var = _data()
    model = build_model(X, y, num_classes=C, num_inducing=8, input_noise="first_order")
    _randomise(model)
    gp = model.gp
    Xs = np.random.default_rng(2).normal(size=(10, D))
    mean, var, grads = (t.numpy() for t in gp.marginals_and_mean_gradients(_t(Xs)))
    h = 1e-5
    fd = np.zeros((C, 10, D))
    for j in range(D):
        step = np.zeros(D)
        step[j] = h
        up, down = gp.marginals(_t(Xs + step))[0].numpy(), gp.marginals(_t(Xs - step))[0].numpy()
        fd[:, :, j] = ((up - down) / (2 * h)).T
    np.testing.assert_allclose(grads, fd, rtol=1e-5, atol=1e-7)
    # Delta_ic = grad^T diag(V_i) grad is added to the variance, nothing else changes
    V = X_var[:10]
    Fmu, Fvar, _ = model.strategy.training_marginals(gp, _t(Xs), _t(V), None, None, None)
    np.testing.assert_allclose(Fmu.numpy(), mean)
    np.testing.assert_allclose(Fvar.numpy() - var, np.einsum("cnd,nd->nc", fd**2, V), rtol=1e-5, atol=1e-10)


# ----------------------------------------------------- closed-form ELBO terms
def test_closed_form_input_terms_match_tensorflow_probability():
    rng = np.random.default_rng(3)
    x_obs, mean = rng.normal(size=5), rng.normal(size=5)
    q_var, V, s = rng.uniform(0.01, 1, 5), rng.uniform(0.01, 1, 5), 1000.0
    q = tfd.Normal(_t(mean), _t(np.sqrt(q_var)))
    # E_q log N(x~ | x, V) = -cross-entropy(q, N(x~, V)) by symmetry of the normal density in x and x~
    ref = -q.cross_entropy(tfd.Normal(_t(x_obs), _t(np.sqrt(V))))
    np.testing.assert_allclose(expected_log_observation(_t(mean - x_obs), _t(q_var), _t(V)), ref, rtol=1e-12)
    kl_ref = q.kl_divergence(tfd.Normal(_t(np.zeros(5)), _t(np.full(5, np.sqrt(s)))))
    noisy = tf.ones((1, 5), tf.bool)
    neg_kl = BroadPrior(s).neg_kl(_t(mean[None]), _t(q_var[None]), None, noisy)
    np.testing.assert_allclose(-neg_kl.numpy(), [kl_ref.numpy().sum()], rtol=1e-10)


def test_input_posterior_is_the_normalised_product():
    V, s, x = np.array([0.3, 0.0]), 1000.0, np.array([1.5, -2.0])
    mean, var = (t.numpy() for t in BroadPrior(s).posterior(_t(x), _t(V)))
    np.testing.assert_allclose(var[0], 1 / (1 / V[0] + 1 / s))
    np.testing.assert_allclose(mean[0], var[0] * x[0] / V[0])
    assert var[1] == 0 and mean[1] == x[1]  # exact feature: no division by its zero variance


def test_zero_variance_dimension_is_exact_and_finite():
    """A feature without error bar: sample = observation, no ELBO terms, finite gradients."""
    strategy = LatentInputs(num_data=4, num_features=2)
    strategy.q_offset.assign(np.full((4, 2), 0.7))
    strategy.q_log_scale.assign(np.full((4, 2), -0.4))
    X = _t(np.random.default_rng(4).normal(size=(4, 2)))
    V = _t(np.column_stack([np.full(4, 0.05), np.zeros(4)]))
    noise = _t(np.random.default_rng(5).normal(size=(4, 2)))
    idx = tf.range(4)
    with tf.GradientTape() as tape:
        a, b = strategy.offsets(X, None, idx)
        sample, extra = strategy.sample_and_terms(X, V, a, b, noise)
        total = extra + tf.reduce_sum(sample)
    sources = [strategy.q_offset, strategy.q_log_scale]
    grads = [tf.convert_to_tensor(g).numpy() for g in tape.gradient(total, sources)]
    np.testing.assert_array_equal(sample.numpy()[:, 1], X.numpy()[:, 1])
    for g in grads:
        assert np.isfinite(g).all()
        np.testing.assert_array_equal(g[:, 1], 0.0)  # no gradient into the exact feature's q
        assert (g[:, 0] != 0).all()
    # the extra terms equal those of the noisy feature alone
    only = LatentInputs(num_data=4, num_features=1)
    only.q_offset.assign(np.full((4, 1), 0.7))
    only.q_log_scale.assign(np.full((4, 1), -0.4))
    _, extra_1d = only.sample_and_terms(X[:, :1], V[:, :1], *only.offsets(X, None, idx), noise[:, :1])
    np.testing.assert_allclose(extra.numpy(), extra_1d.numpy(), rtol=1e-12)


def test_latent_with_vanishing_noise_agrees_with_none():
    X, y, _ = _data()
    tiny = np.full_like(X, 1e-12)
    # robust-max: its predictive is a quadrature, not a Monte Carlo average over latent draws
    none = build_model(X, y, num_classes=C, num_inducing=8, input_noise="none", likelihood="robustmax")
    latent = build_model(X, y, num_classes=C, num_inducing=8, input_noise="latent", likelihood="robustmax")
    _randomise(none)
    _randomise(latent)
    latent.strategy.q_offset.assign(np.random.default_rng(6).normal(size=(40, D)))
    seed = tf.constant([0, 0], tf.int64)
    idx = tf.range(40, dtype=tf.int64)
    f_none = none.strategy.training_marginals(none.gp, _t(X), None, y, idx, seed)
    f_lat = latent.strategy.training_marginals(latent.gp, _t(X), _t(tiny), y, idx, seed)
    np.testing.assert_allclose(f_lat[0].numpy(), f_none[0].numpy(), atol=1e-5)
    np.testing.assert_allclose(f_lat[1].numpy(), f_none[1].numpy(), atol=1e-5)
    p_none = none.predict_proba(_t(X), _t(tiny), seed, n_samples=1)
    p_lat = latent.predict_proba(_t(X), _t(tiny), seed, n_samples=20)
    np.testing.assert_allclose(p_lat.numpy(), p_none.numpy(), atol=1e-5)


def test_first_order_elbo_gradient_reaches_the_learned_variance():
    """NIMGP-FO learns V (sec. 3.4) only through the extra variance of eq. 16: the training ELBO's gradient in
    V's unconstrained variable must be that of the objective, feature by feature."""
    X, y, X_var = _data()
    model = build_model(X, y, num_classes=C, num_inducing=8, input_noise="first_order", noise_variance="learned",
                        likelihood="robustmax", initial_learned_variance=0.2)
    _randomise(model)
    raw = model.noise_variance.learned.unconstrained_variable
    args = (_t(X), _t(X_var), tf.constant(y), tf.range(40, dtype=tf.int64), tf.constant([0, 1], tf.int64))
    with tf.GradientTape() as tape:
        elbo = model.elbo(*args)
    auto = tape.gradient(elbo, raw).numpy()
    start, h, fd = raw.numpy(), 1e-5, np.zeros(D)
    for j in range(D):
        step = np.zeros(D)
        step[j] = h
        raw.assign(start + step)
        up = model.elbo(*args).numpy()
        raw.assign(start - step)
        fd[j] = (up - model.elbo(*args).numpy()) / (2 * h)
    raw.assign(start)
    assert np.abs(fd).min() > 1e-3  # V moves the objective in every feature
    np.testing.assert_allclose(auto, fd, rtol=1e-5)


def test_first_order_elbo_falls_with_the_variance_once_the_labels_are_fitted():
    """Why a learned NIMGP-FO variance goes to zero: V only widens q(f_i) (eq. 15-16) and no ELBO term rewards
    it, so where every training label is the latent mean's argmax (two classes: P(y) = Phi(margin / sd)) each
    increase of V lowers the bound; the KL does not depend on V."""
    X, _, X_var = _data()
    model = build_model(X, np.arange(40) % 2, num_classes=2, num_inducing=8, input_noise="first_order",
                        noise_variance="known", likelihood="robustmax")
    rng = np.random.default_rng(0)
    model.gp.q_mu.assign(rng.normal(size=(8, 2)))
    mean = model.gp.marginals(_t(X))[0].numpy()
    fitted = tf.constant(np.argmax(mean, 1))
    idx, seed = tf.range(40, dtype=tf.int64), tf.constant([0, 1], tf.int64)
    bounds = [model.elbo(_t(X), _t(v * X_var), fitted, idx, seed).numpy() for v in (0.0, 0.5, 1.0, 2.0, 4.0)]
    assert np.all(np.diff(bounds) < 0), bounds
    against = tf.constant(1 - np.argmax(mean, 1))  # every label the other class: widening helps
    assert model.elbo(_t(X), _t(4 * X_var), against, idx, seed) > model.elbo(_t(X), _t(0 * X_var), against, idx, seed)


# -------------------------------------------------------------- ELBO / training
def test_minibatch_estimates_average_to_the_full_elbo():
    """(N/|B|) scaling: over a partition into equal batches the estimates average to the full-data ELBO."""
    X, y, X_var = _data(n=60)
    for kind in ("none", "first_order"):
        model = build_model(X, y, num_classes=C, num_inducing=8, input_noise=kind)
        _randomise(model)
        seed = tf.constant([0, 0], tf.int64)
        full = model.elbo(_t(X), _t(X_var), tf.constant(y), tf.range(60, dtype=tf.int64), seed).numpy()
        perm = np.random.default_rng(0).permutation(60)
        parts = [
            model.elbo(_t(X[b]), _t(X_var[b]), tf.constant(y[b]), tf.constant(b, tf.int64), seed).numpy()
            for b in np.split(perm, 4)
        ]
        np.testing.assert_allclose(np.mean(parts), full, rtol=1e-10)


def test_train_step_keeps_each_rows_data_and_q_together():
    """The compiled step gathers X, X_var, y and q(x_i) by the same row indices."""
    X, y, X_var = _data(n=30)
    model = build_model(X, y, num_classes=C, num_inducing=6, input_noise="latent")
    model.strategy.q_offset.assign(np.random.default_rng(8).normal(size=(30, D)))
    data = TrainData.from_arrays(X, X_var, y)
    trainer = Trainer(model, seed=5)
    trainer.load(data, learning_rate=0.01)
    idx = np.array([17, 3, 29, 8, 0, 11])
    expected = -model.elbo(
        _t(X[idx]), _t(X_var[idx]), tf.constant(y[idx]), tf.constant(idx, tf.int64), tf.constant([5, 4], tf.int64)
    ).numpy()
    loss = trainer.step(tf.constant(idx, tf.int64), tf.constant(4, tf.int64)).numpy()
    np.testing.assert_allclose(loss, expected, rtol=1e-12)


@pytest.mark.slow
def test_trainer_traces_its_step_once_across_fits_on_a_growing_set():
    """A Trainer's refits on more rows reuse its compiled step and equal a fresh Trainer's from the same start."""
    from gpal.models.state import assign_module_values, module_values

    X, y, X_var = _data(n=40)
    model = build_model(X[:30], y[:30], num_classes=C, num_inducing=6, input_noise="latent", seed=1)
    trainer = Trainer(model, seed=2)
    trainer.fit(TrainData.from_arrays(X[:30], X_var[:30], y[:30]), epochs=2, batch_size=10, learning_rate=0.01, progress=False)
    twin = build_model(X[:30], y[:30], num_classes=C, num_inducing=6, input_noise="latent", seed=1)
    assign_module_values(twin, module_values(model))
    for n in (35, 40):
        model.strategy.restart(n)
        result = trainer.fit(TrainData.from_arrays(X[:n], X_var[:n], y[:n]), epochs=2, batch_size=10,
                             learning_rate=0.02, progress=False)
    assert trainer.step.experimental_get_tracing_count() == 1
    assert model.strategy.q_offset.numpy().shape == (40, D) and model.strategy.num_data == 40
    with pytest.raises(ValueError, match="restart the strategy first"):
        trainer.fit(TrainData.from_arrays(X[:20], X_var[:20], y[:20]), epochs=1, batch_size=20, learning_rate=0.01,
                    progress=False)
    for n in (35, 40):  # the same refits, each through a fresh Trainer: new optimiser, new trace
        twin.strategy.restart(n)
        expected = Trainer(twin, seed=2).fit(TrainData.from_arrays(X[:n], X_var[:n], y[:n]), epochs=2, batch_size=10,
                                             learning_rate=0.02, progress=False)
    np.testing.assert_allclose(result.history, expected.history, rtol=1e-12)
    for key, value in module_values(twin).items():
        np.testing.assert_allclose(module_values(model)[key], value, rtol=0, atol=1e-12, err_msg=key)


def test_nan_loss_stops_with_step_and_keeps_parameters():
    X, y, X_var = _data(n=30)
    X[25, 0] = np.nan  # reaches the model only through this low-level path; fit validates inputs
    model = build_model(np.nan_to_num(X), y, num_classes=C, num_inducing=6)
    before = [v.numpy().copy() for v in model.trainable_variables]
    with pytest.raises(TrainingError, match=r"epoch 0, step \d+"):  # in the one step of this signature's models
        SharedTrainer(model).fit(TrainData.from_arrays(X, X_var, y), epochs=1, batch_size=10, learning_rate=0.01,
                                 progress=False)
    for b, v in zip(before, model.trainable_variables):
        assert np.isfinite(v.numpy()).all()
        np.testing.assert_array_equal(v.numpy(), b)  # first step failed: Adam applied nothing


class _IndefiniteSE(gpflow.kernels.SquaredExponential):
    """SE kernel whose K(Z, Z) is shifted down by ``shift`` I: needs jitter > shift to factorise."""

    def __init__(self, shift, **kwargs):
        super().__init__(**kwargs)
        self.shift = shift

    def K(self, X, X2=None):
        K = super().K(X, X2)
        return K - self.shift * tf.eye(tf.shape(X)[0], dtype=K.dtype) if X2 is None else K


def test_cholesky_failure_retries_with_growing_jitter():
    X, y, X_var = _data(n=30)
    model = build_model(X, y, num_classes=C, num_inducing=6, kernel=_IndefiniteSE(2e-5, lengthscales=np.ones(D)))
    model.gp.Z.assign(np.zeros((C, 6, D)))  # K_ZZ = 1 1^T - 2e-5 I: eigenvalues -2e-5 (x5) and 6 - 2e-5
    result = Trainer(model).fit(TrainData.from_arrays(X, X_var, y), epochs=2, batch_size=10, learning_rate=0.01, progress=False)
    assert len(result.history) == 2 and np.isfinite(result.history).all()
    np.testing.assert_allclose(model.gp.jitter.numpy(), 1e-4)  # 1e-6 and 1e-5 failed, 1e-4 works


def test_cholesky_failure_beyond_the_cap_is_a_clear_error():
    X, y, X_var = _data(n=30)
    model = build_model(X, y, num_classes=C, num_inducing=6, kernel=_IndefiniteSE(1.0, lengthscales=np.ones(D)))
    with pytest.raises(CholeskyError, match="Cholesky .* failed at epoch 0, step 0 even with jitter"):
        Trainer(model).fit(TrainData.from_arrays(X, X_var, y), epochs=1, batch_size=10, learning_rate=0.01, progress=False, max_jitter=1e-2)


def test_callback_and_interrupt_stop_cleanly():
    X, y, X_var = _data(n=30)
    data = TrainData.from_arrays(X, X_var, y)
    model = build_model(X, y, num_classes=C, num_inducing=6)
    # each fit starts afresh (data, Adam, seed), as a new Trainer's would, in the one step of this signature's models
    trainer = SharedTrainer(model)
    result = trainer.fit(data, epochs=50, batch_size=10, learning_rate=0.01, progress=False, callback=lambda epoch, loss: epoch < 2)
    assert result.stopped_early and len(result.history) == 3

    def interrupt(epoch, loss):
        if epoch == 1:
            raise KeyboardInterrupt

    result = trainer.fit(data, epochs=50, batch_size=10, learning_rate=0.01, progress=False, callback=interrupt)
    assert result.stopped_early and len(result.history) == 2
    assert all(np.isfinite(v.numpy()).all() for v in model.trainable_variables)


@pytest.mark.slow
def test_every_strategy_trains_and_predicts_normalised_probabilities():
    X, y, X_var = _data(n=40)
    X_var[:, 1] = 0.0  # one exact feature
    combos = [("none", "known"), ("latent", "known"), ("amortized", "learned"), ("first_order", "both")]
    for kind, mode in combos:
        model = build_model(X, y, num_classes=C, num_inducing=6, input_noise=kind, noise_variance=mode)
        # the one step of each signature's models (traced once; the none model's serves the NaN and callback tests too)
        result = SharedTrainer(model).fit(TrainData.from_arrays(X, X_var, y), epochs=3, batch_size=20,
                                          learning_rate=0.01, progress=False)
        assert np.isfinite(result.history).all(), (kind, mode)
        assert result.history[-1] < result.history[0], (kind, mode)
        p = _proba(model, _t(X), _t(X_var), tf.constant([0, 1], tf.int64), 5).numpy()
        np.testing.assert_allclose(p.sum(1), 1.0, atol=1e-12)
        assert (p > 0).all()


def test_first_order_extra_variance_uses_the_variances():
    V = _t(np.array([[0.5, 0.0], [0.0, 2.0]]))
    grads = _t(np.array([[[1.0, 3.0], [2.0, 1.0]]]))  # one latent, two points
    np.testing.assert_allclose(FirstOrder.extra_variance(V, grads).numpy(), [[0.5], [2.0]])


def test_gpflow_is_imported_without_docstring_rewriting_and_shapes_are_still_checked():
    """gpal.models turns check_shapes' import-time docstring parsing off (seconds per process), not its checks."""
    import check_shapes

    from gpal.models import NoiseVariance

    assert check_shapes.get_rewrite_docstrings() == check_shapes.DocstringFormat.NONE
    with pytest.raises(check_shapes.exceptions.ShapeMismatchError):
        NoiseVariance("known", num_features=2)(tf.zeros([3], tf.float64))


# ------------------------------------------------------------ inducing starts
def test_paper_001s_start_gives_each_latent_function_its_own_training_rows():
    X, y, _ = _data(n=40)
    model = build_model(X, y, num_classes=C, num_inducing=8, inducing_start="random_per_latent", seed=3)
    Z = model.gp.Z.numpy()
    assert Z.shape == (C, 8, D)
    rows = {tuple(r) for r in X}
    for z in Z:  # each latent's inducing inputs are distinct rows of X (drawn without replacement)
        assert all(tuple(r) in rows for r in z) and len({tuple(r) for r in z}) == 8
    assert not np.array_equal(Z[0], Z[1])  # one set per latent function, not one shared
    again = build_model(X, y, num_classes=C, num_inducing=8, inducing_start="random_per_latent", seed=3)
    np.testing.assert_array_equal(again.gp.Z.numpy(), Z)
    shared = build_model(X, y, num_classes=C, num_inducing=8).gp.Z.numpy()
    np.testing.assert_array_equal(shared[0], shared[1])  # gpal's default: one k-means set for every latent
    mean, var = model.gp.marginals(tf.constant(X[:5]))
    assert np.all(np.isfinite(mean.numpy())) and np.all(var.numpy() > 0)


def test_an_unknown_inducing_start_is_refused_by_name():
    X, y, _ = _data()
    with pytest.raises(ValueError, match="inducing_start.*random_per_latent"):
        build_model(X, y, num_classes=C, num_inducing=8, inducing_start="random")


# ------------------------------------------------------------ paper 001's authors' q(x_i)
def test_free_q_x_starts_at_the_observation_with_the_authors_variance_and_its_terms_match_monte_carlo():
    """q_x_form='free': q(x_i) = N(x~ + a, 1e-5 exp(b)); its draws and its extra ELBO terms
    E_q log N(x~ | x, V) - KL(q || N(0, s)) checked against numpy draws of that Gaussian."""
    from gpal.models.input_noise import FREE_Q_START_VARIANCE

    n, s = 3, 1000.0
    rng = np.random.default_rng(11)
    X = rng.normal(size=(n, 2))
    V = np.column_stack([np.full(n, 0.25), np.full(n, 0.04)])
    strategy = LatentInputs(num_data=n, num_features=2, prior_variance=s, q_x_form="free")
    idx = tf.range(n)
    # at the start: mean the observation, variance the authors' 1e-5, whatever V; a draw is mean + sd * noise
    noise = rng.normal(size=(n, 2))
    sample, _ = strategy.sample_and_terms(_t(X), _t(V), *strategy.offsets(None, None, idx), _t(noise))
    np.testing.assert_allclose(sample.numpy(), X + np.sqrt(1e-5) * noise, rtol=1e-12)
    assert FREE_Q_START_VARIANCE == 1e-5
    # moved: the closed-form terms against Monte Carlo over 400 000 draws of q
    a, b = rng.normal(size=(n, 2)), rng.normal(loc=3.0, size=(n, 2))
    strategy.q_offset.assign(a)
    strategy.q_log_scale.assign(b)
    _, extra = strategy.sample_and_terms(_t(X), _t(V), *strategy.offsets(None, None, idx), _t(noise))
    mean, var = X + a, 1e-5 * np.exp(b)
    x = mean + np.sqrt(var) * rng.normal(size=(400_000, n, 2))
    log_obs = -0.5 * np.log(2 * np.pi * V) - 0.5 * (X - x) ** 2 / V
    log_prior = -0.5 * np.log(2 * np.pi * s) - 0.5 * x**2 / s
    log_q = -0.5 * np.log(2 * np.pi * var) - 0.5 * (x - mean) ** 2 / var
    per_draw = (log_obs + log_prior - log_q).sum(axis=(1, 2))
    assert abs(extra.numpy() - per_draw.mean()) < 4 * per_draw.std() / np.sqrt(len(per_draw))
    # the relative form from the same offsets is another q: its variance scales with V
    relative = LatentInputs(num_data=n, num_features=2, prior_variance=s)
    q_var = relative.q_moments(_t(X), _t(V), _t(a), _t(b))[1].numpy()
    np.testing.assert_allclose(q_var, V * s / (V + s) * np.exp(b))


def test_free_q_x_keeps_a_noiseless_feature_exact():
    strategy = LatentInputs(num_data=4, num_features=2, q_x_form="free")
    strategy.q_offset.assign(np.full((4, 2), 0.7))
    X = _t(np.random.default_rng(4).normal(size=(4, 2)))
    V = _t(np.column_stack([np.full(4, 0.05), np.zeros(4)]))
    sample, extra = strategy.sample_and_terms(X, V, *strategy.offsets(X, None, tf.range(4)),
                                              _t(np.random.default_rng(5).normal(size=(4, 2))))
    np.testing.assert_array_equal(sample.numpy()[:, 1], X.numpy()[:, 1])
    np.testing.assert_allclose(sample.numpy()[:, 0], X.numpy()[:, 0] + 0.7, atol=0.02)
    assert np.isfinite(extra.numpy())


@pytest.mark.parametrize("input_noise", ["first_order", "none"])
def test_free_q_x_is_refused_without_a_q_x_naming_the_option_and_the_paper(input_noise):
    X, y, _ = _data()
    with pytest.raises(ValueError, match=rf"q_x_form='free' is paper 001's.*\['latent', 'amortized'\].*{input_noise}"):
        build_model(X, y, num_classes=C, num_inducing=8, input_noise=input_noise, q_x_form="free",
                    X_var=np.full_like(X, 0.1))
    with pytest.raises(ValueError, match="q_x_form.*relative.*free"):
        build_model(X, y, num_classes=C, num_inducing=8, input_noise="latent", q_x_form="authors")


def test_the_two_q_x_forms_never_share_a_compiled_step():
    """Models that differ only in q_x_form compute differently, so their trace keys (which share compiled training
    steps and predictors between models) differ; a saved structure rebuilds the form."""
    from gpal.models.svgp import NoisySVGP
    from gpal.training.signatures import trace_key

    X, y, _ = _data(n=30)
    free, relative = (build_model(X, y, num_classes=C, num_inducing=5, input_noise="latent", q_x_form=form,
                                  X_var=np.full_like(X, 0.1)) for form in ("free", "relative"))
    assert trace_key(free) != trace_key(relative)
    assert NoisySVGP.from_structure(free.structure()).strategy.q_x_form == "free"

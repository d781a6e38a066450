"""The shared sparse-GP core (gpal.models.sparse), Gauss-Hermite expectations and the L-BFGS packing,
each against an independent numpy computation on a tiny problem."""

import gpflow
import numpy as np
import pytest
import tensorflow as tf

from gpal.models.quadrature import hermite_expectation
from gpal.models.sparse import cholesky_with_jitter, project, whiten, whitened_kl, whitened_marginals
from gpal.training import lbfgs

T = lambda a: tf.constant(np.asarray(a, dtype=np.float64))  # noqa: E731
JITTER = 1e-6


def rbf(X1, X2, variance, lengthscales):
    """Squared-exponential kernel written out in numpy, independent of gpflow."""
    d = (X1[:, None, :] - X2[None, :, :]) / lengthscales
    return variance * np.exp(-0.5 * np.sum(d * d, axis=-1))


def tiny(seed=0, m=5, n=9, d=2):
    rng = np.random.default_rng(seed)
    variance, ls = 1.7, np.array([0.8, 1.3])[:d]
    kernel = gpflow.kernels.SquaredExponential(variance=variance, lengthscales=ls)
    Z, X = rng.normal(size=(m, d)), rng.normal(size=(n, d))
    Kzz = rbf(Z, Z, variance, ls) + JITTER * np.eye(m)
    return rng, kernel, Z, X, Kzz, rbf(Z, X, variance, ls), np.full(n, variance)


def kl_closed_form(mu, Sigma):
    """KL(N(mu, Sigma) || N(0, I)) = (tr Sigma + mu^T mu - M - log|Sigma|) / 2."""
    return 0.5 * (np.trace(Sigma) + mu @ mu - len(mu) - np.linalg.slogdet(Sigma)[1])


def test_projection_is_the_nystrom_residual():
    _, kernel, Z, X, Kzz, Kzx, kxx = tiny()
    proj = project(kernel, T(Z), T(X), JITTER)
    Q = Kzx.T @ np.linalg.solve(Kzz, Kzx)  # K_xz K_zz^-1 K_zx, jitter included
    np.testing.assert_allclose(proj.L.numpy(), np.linalg.cholesky(Kzz), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(proj.A.numpy().T @ proj.A.numpy(), Q, rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(proj.resid.numpy(), kxx - np.diag(Q), rtol=1e-8, atol=1e-10)
    assert np.all(proj.resid.numpy() > -1e-10)


def test_batched_whiten_matches_one_projection_at_a_time():
    """Stacked factors (a kernel per latent, as LatentGPs has) give each latent's own projection."""
    problems = [tiny(seed=s) for s in (1, 2, 3)]
    L = cholesky_with_jitter(T(np.stack([p[4] - JITTER * np.eye(5) for p in problems])), JITTER)
    proj = whiten(L, T(np.stack([p[5] for p in problems])), T(np.stack([p[6] for p in problems])))
    for c, (_, kernel, Z, X, *_rest) in enumerate(problems):
        one = project(kernel, T(Z), T(X), JITTER)
        for batched, single in zip(proj, one):
            np.testing.assert_allclose(batched.numpy()[c], single.numpy(), rtol=1e-10, atol=1e-12)


def test_whitened_marginals_match_the_unwhitened_posterior():
    """q(v) = N(m, S S^T), u = L v: the textbook mean K_xz K_zz^-1 mu and variance with mu = L m, Sigma = L S S^T L^T."""
    rng, kernel, Z, X, Kzz, Kzx, kxx = tiny(seed=4)
    m, S = rng.normal(size=5), rng.normal(size=(5, 5)) * 0.4  # any square root, not triangular
    proj = project(kernel, T(Z), T(X), JITTER)
    L = np.linalg.cholesky(Kzz)
    mu, Sigma, Ki = L @ m, L @ S @ S.T @ L.T, np.linalg.inv(Kzz)
    want_mean = Kzx.T @ Ki @ mu
    want_var = kxx + np.einsum("in,ij,jn->n", Kzx, Ki @ (Sigma - Kzz) @ Ki, Kzx)
    mean, var = whitened_marginals(proj, T(m), T(S))
    np.testing.assert_allclose(mean.numpy(), want_mean, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(var.numpy(), want_var, rtol=1e-7, atol=1e-9)
    mean_t, var_t = whitened_marginals(proj, T(m), T(S.T), sqrt_transposed=True)
    np.testing.assert_allclose(mean_t.numpy(), mean.numpy(), rtol=1e-14)
    np.testing.assert_allclose(var_t.numpy(), var.numpy(), rtol=1e-12)
    # Several q(v) over one projection broadcast to (C, N).
    ms, Ss = np.stack([m, -m]), np.stack([S, 2 * S])
    means, variances = whitened_marginals(proj, T(ms), T(Ss))
    for c in range(2):
        mc, vc = whitened_marginals(proj, T(ms[c]), T(Ss[c]))
        np.testing.assert_allclose(means.numpy()[c], mc.numpy(), rtol=1e-12, atol=1e-14)
        np.testing.assert_allclose(variances.numpy()[c], vc.numpy(), rtol=1e-12)


def test_kl_equals_the_closed_form_and_the_unwhitened_kl():
    rng, _, _, _, Kzz, _, _ = tiny(seed=5)
    ms = rng.normal(size=(3, 5))
    tril = np.tril(rng.normal(size=(3, 5, 5)) * 0.3) + 0.6 * np.eye(5)
    tril[1, 2, 2] *= -1.0  # a negative diagonal entry is still a square root
    full = rng.normal(size=(3, 5, 5)) * 0.5 + np.eye(5)
    want_tril = [kl_closed_form(ms[c], tril[c] @ tril[c].T) for c in range(3)]
    want_full = [kl_closed_form(ms[c], full[c] @ full[c].T) for c in range(3)]
    for c in range(3):
        assert float(whitened_kl(T(ms[c]), T(tril[c]))) == pytest.approx(want_tril[c], rel=1e-12)
        assert float(whitened_kl(T(ms[c]), T(full[c]), triangular=False)) == pytest.approx(want_full[c], rel=1e-12)
    assert float(whitened_kl(T(ms), T(tril))) == pytest.approx(sum(want_tril), rel=1e-12)  # summed over the batch
    assert float(whitened_kl(T(ms), T(full), triangular=False)) == pytest.approx(sum(want_full), rel=1e-12)
    # Whitening leaves the KL unchanged: KL(N(L m, L S S^T L^T) || N(0, K_zz)).
    L = np.linalg.cholesky(Kzz)
    mu, Sigma, Ki = L @ ms[0], L @ tril[0] @ tril[0].T @ L.T, np.linalg.inv(Kzz)
    unwhitened = 0.5 * (np.trace(Ki @ Sigma) + mu @ Ki @ mu - 5 + np.linalg.slogdet(Kzz)[1] - np.linalg.slogdet(Sigma)[1])
    assert float(whitened_kl(T(ms[0]), T(tril[0]))) == pytest.approx(unwhitened, rel=1e-7)


def test_precision_and_square_root_forms_agree():
    """A precision P = Lp Lp^T enters as Lp^-1; the covariance's own Cholesky factor gives the same KL and marginals."""
    rng, kernel, Z, X, *_ = tiny(seed=6)
    B = rng.normal(size=(5, 5))
    P = np.eye(5) + B @ B.T
    m = rng.normal(size=5)
    inv_chol = np.linalg.inv(np.linalg.cholesky(P))
    cov_chol = np.linalg.cholesky(np.linalg.inv(P))
    want = kl_closed_form(m, np.linalg.inv(P))
    assert float(whitened_kl(T(m), T(inv_chol))) == pytest.approx(want, rel=1e-12)
    assert float(whitened_kl(T(m), T(cov_chol))) == pytest.approx(want, rel=1e-12)
    proj = project(kernel, T(Z), T(X), JITTER)
    a = whitened_marginals(proj, T(m), T(inv_chol), sqrt_transposed=True)
    b = whitened_marginals(proj, T(m), T(cov_chol))
    for x, y in zip(a, b):
        np.testing.assert_allclose(x.numpy(), y.numpy(), rtol=1e-10, atol=1e-12)


def test_hermite_expectation_against_closed_forms():
    mean, var = np.array([-2.0, 0.0, 0.7, 3.0]), np.array([0.0, 0.5, 2.0, 4.0])
    np.testing.assert_allclose(hermite_expectation(tf.square, T(mean), T(var), 20).numpy(), mean**2 + var, rtol=1e-12)
    np.testing.assert_allclose(hermite_expectation(tf.exp, T(mean), T(var), 40).numpy(), np.exp(mean + var / 2), rtol=1e-10)
    # Batched (N, C) means, as a multi-class likelihood has them.
    got = hermite_expectation(lambda f: f**3, T(np.tile(mean, (2, 1))), T(np.tile(var, (2, 1))), 10).numpy()
    np.testing.assert_allclose(got, np.tile(mean**3 + 3 * mean * var, (2, 1)), rtol=1e-12, atol=1e-12)


def test_lbfgs_packs_in_order_and_minimises():
    a, b = tf.Variable(np.zeros((2, 3))), tf.Variable(np.zeros(4))
    x = np.arange(10.0)
    lbfgs.unpack([a, b], x)
    np.testing.assert_array_equal(a.numpy(), x[:6].reshape(2, 3))
    np.testing.assert_array_equal(b.numpy(), x[6:])
    np.testing.assert_array_equal(lbfgs.pack([a, b]), x)

    target = np.linspace(-1.0, 2.0, 10)

    def loss_and_gradients():
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.square(tf.concat([tf.reshape(a, [-1]), b], 0) - target))
        return loss, tape.gradient(loss, [a, b])

    result = lbfgs.minimize(lbfgs.make_objective([a, b], loss_and_gradients), [a, b], max_iter=50)
    assert result.success
    np.testing.assert_allclose(lbfgs.pack([a, b]), target, atol=1e-6)


def test_lbfgs_failures_and_keep_best():
    v = tf.Variable(np.array([3.0]))

    def failing():
        if float(v[0]) < 0.0:
            raise tf.errors.InvalidArgumentError(None, None, "not positive definite")
        loss = tf.reduce_sum(tf.square(v - 1.0))
        return (loss, [2.0 * (v - 1.0)]) if float(v[0]) < 10.0 else (tf.constant(np.nan, tf.float64), [v])

    objective = lbfgs.make_objective([v], failing, failure_value=1e10)
    f, g = objective(np.array([-1.0]))
    assert f == 1e10 and np.array_equal(g, [0.0])
    assert objective(np.array([20.0]))[0] == 1e10
    assert objective(np.array([2.0]))[0] == pytest.approx(1.0)
    with pytest.raises(tf.errors.InvalidArgumentError):
        lbfgs.make_objective([v], failing)(np.array([-1.0]))
    v.assign([3.0])
    evaluated = []

    def recording(x):
        f, g = objective(x)
        evaluated.append(f)
        return f, g

    lbfgs.minimize(recording, [v], max_fun=3, keep_best=True)
    assert (float(v[0]) - 1.0) ** 2 == pytest.approx(min(evaluated))  # left at the best point evaluated


def test_latent_gps_batched_squared_exponentials_equal_gpflows_kernels_one_by_one():
    """``LatentGPs`` computes L squared-exponential kernels as one batched formula: its marginals, K_ZZ factors and
    their gradients (ARD lengthscales, variances, Z, inputs) equal GPflow's kernels called one latent at a time."""
    from gpal.models.latent_gps import LatentGPs

    class Plain(gpflow.kernels.SquaredExponential):
        """The same kernel under another class: LatentGPs takes GPflow's own per-kernel path for it."""

    rng = np.random.default_rng(7)
    d, L = 3, 3
    Z = rng.normal(size=(L, 6, d))
    params = [(rng.uniform(0.5, 2.0, d), rng.uniform(0.5, 2.0)) for _ in range(L)]
    models = [LatentGPs([cls(variance=v, lengthscales=ls) for ls, v in params], Z) for cls in
              (gpflow.kernels.SquaredExponential, Plain)]
    for gp in models:
        gp.q_mu.assign(rng.normal(size=gp.q_mu.shape)) if gp is models[0] else gp.q_mu.assign(models[0].q_mu)
        gp.q_sqrt.assign(models[0].q_sqrt if gp is not models[0] else 0.3 * np.tril(rng.normal(size=(L, 6, 6))) +
                         np.eye(6))
    X = tf.constant(rng.normal(size=(9, d)))
    assert models[0]._stacked_se() is not None and models[1]._stacked_se() is None
    outputs = []
    for gp in models:
        with tf.GradientTape() as tape:
            tape.watch(X)
            mean, var, spread_grads = gp.marginals_and_mean_gradients(X)
            total = tf.reduce_sum(mean ** 2) + tf.reduce_sum(var) + tf.reduce_sum(gp.cholesky_Kzz())
        grads = tape.gradient(total, [X, *gp.trainable_variables])
        outputs.append([mean, var, spread_grads, gp.inducing_spread(X), *grads])
    for batched, one_by_one in zip(*outputs):
        np.testing.assert_allclose(batched, one_by_one, rtol=1e-11, atol=1e-13)

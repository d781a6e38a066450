"""Paper 001's authors' kernel start (`se_ard_plus_noise_median`), against a direct computation."""

import gpflow
import numpy as np
import pytest

from gpal.models import build_model
from gpal.models.kernels import make_kernel, median_distance, starts_from_rows
from gpal.registry import KERNELS


def _pairwise_median(X):
    """The median distance over every pair i < j, by broadcasting (no scipy)."""
    diff = X[:, None, :] - X[None, :, :]
    dist = np.sqrt((diff ** 2).sum(-1))
    return np.median(dist[np.triu_indices(len(X), 1)])


def test_the_authors_start_sets_squared_length_scales_at_the_median_distance():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(60, 4)) * [1.0, 2.0, 0.5, 3.0]
    model = build_model(X, np.arange(60) % 3, num_classes=3, likelihood="robustmax", num_inducing=5,
                        kernel="se_ard_plus_noise_median")
    for kernel in model.gp.kernels:  # one copy a class, each from the same start
        se, white = kernel.kernels
        np.testing.assert_allclose(se.lengthscales.numpy() ** 2, np.full(4, _pairwise_median(X)), rtol=1e-10)
        np.testing.assert_allclose(se.variance.numpy(), np.e, rtol=1e-10)
        np.testing.assert_allclose(white.variance.numpy(), np.exp(-20.0), rtol=1e-6)


def test_more_than_a_thousand_rows_are_sampled_the_same_way_for_a_seed():
    X = np.random.default_rng(2).normal(size=(1500, 3))
    assert median_distance(X, seed=0) == median_distance(X, seed=0)
    assert median_distance(X, seed=0) != median_distance(X, seed=1)
    # a sample of 1000 of 1500 rows: near the median over all of them
    assert median_distance(X, seed=0) == pytest.approx(_pairwise_median(X), rel=0.03)


def test_a_start_from_rows_is_refused_without_them_or_from_equal_rows():
    with pytest.raises(ValueError, match="'se_ard_plus_noise_median' starts from the training rows"):
        make_kernel("se_ard_plus_noise_median", 3)
    X = np.zeros((10, 2))
    X[0] = 1.0
    with pytest.raises(ValueError, match="median distance between the 10 rows is 0.0: more than half the pairs"):
        make_kernel("se_ard_plus_noise_median", 2, X)


def test_a_registered_factory_marked_starts_from_rows_gets_the_rows_and_seed():
    seen = {}

    @starts_from_rows
    def from_spread(X, seed=0):
        seen.update(shape=X.shape, seed=seed)
        return gpflow.kernels.SquaredExponential(lengthscales=float(X.std()))

    KERNELS.register("test_from_spread", from_spread)
    try:
        X = np.random.default_rng(4).normal(size=(20, 3)) * 5.0
        kernel = make_kernel("test_from_spread", 3, X, seed=7)
        assert seen == {"shape": (20, 3), "seed": 7}
        np.testing.assert_allclose(kernel.lengthscales.numpy(), X.std())
        with pytest.raises(ValueError, match="'test_from_spread' starts from the training rows"):
            make_kernel("test_from_spread", 3)
    finally:
        KERNELS.unregister("test_from_spread")


# ---- paper 003's authors' start: mean(std(X)) sqrt(d) of the scaled training rows (`se_iso_spread`)

def _range_scaled(X):
    """Each feature's minimum to -1 and maximum to +1, computed here (not by gpal's Standardizer)."""
    low, high = X.min(0), X.max(0)
    return 2.0 * (X - low) / (high - low) - 1.0


def _authors_start(X):
    """dirichletGPC's ``np.mean(np.std(X, 0)) * np.sqrt(dim)``, population standard deviations, feature by feature."""
    spreads = [np.sqrt(np.mean((col - col.mean()) ** 2)) for col in X.T]
    return sum(spreads) / len(spreads) * X.shape[1] ** 0.5


def _labelled_rows(seed=3, n=80):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5)) * [1.0, 4.0, 0.2, 2.0, 1.0] + 3.0
    return X, (X[:, 0] + 0.3 * X[:, 1] > 3.0).astype(int)


def test_the_data_spread_start_is_the_authors_mean_spread_times_sqrt_d():
    X, _ = _labelled_rows()
    for name in ("se_iso_spread", "se_iso_plus_fixed_white_spread"):
        kernel = make_kernel(name, 5, X)
        se = kernel if name == "se_iso_spread" else kernel.kernels[0]
        assert np.ndim(se.lengthscales.numpy()) == 0  # one length scale shared by the features
        np.testing.assert_allclose(se.lengthscales.numpy(), _authors_start(X), rtol=1e-12)
    # on these unscaled rows it is far from gpal's sqrt(d) start
    assert abs(_authors_start(X) - np.sqrt(5)) > 1.0


def _captured_starts(monkeypatch):
    """The rows every kernel the estimators build was built from, and its length scale then (before training)."""
    import gpal.models.kernels as kernels

    built, make = [], kernels.make_kernel

    def spy(kernel, n_features, X=None, seed=0):
        made = make(kernel, n_features, X, seed)
        built.append((X, made.lengthscales.numpy().copy()))
        return made

    monkeypatch.setattr(kernels, "make_kernel", spy)
    return built


@pytest.mark.parametrize("estimator", ["dirichlet", "gpr-platt"])
def test_gpd_and_gpr_start_from_their_scaled_training_rows(monkeypatch, estimator):
    from gpal import DirichletGPClassifier, GPRPlattClassifier

    X, y = _labelled_rows()
    built = _captured_starts(monkeypatch)
    cls = DirichletGPClassifier if estimator == "dirichlet" else GPRPlattClassifier
    cls(kernel="se_iso_spread", scaling="range", num_inducing=5, max_iter=2).fit(X, y)
    (rows, lengthscale), = built
    scaled = _range_scaled(X)
    # GPD reads every training row; GPR + Platt the rows its regression fits (its calibration share held out)
    assert len(rows) == (len(X) if estimator == "dirichlet" else len(X) - round(0.2 * len(X)))
    matched = [int(np.argmin(np.abs(scaled - r).sum(1))) for r in rows]
    np.testing.assert_allclose(rows, scaled[matched], atol=1e-12)
    np.testing.assert_allclose(lengthscale, _authors_start(scaled[matched]), rtol=1e-12)


def test_the_gpc_starts_from_the_rows_it_is_built_from():
    X, y = _labelled_rows()
    model = build_model(X, y, num_classes=2, likelihood="robustmax", num_inducing=5,
                        kernel="se_iso_plus_fixed_white_spread")
    for kernel in model.gp.kernels:
        np.testing.assert_allclose(kernel.kernels[0].lengthscales.numpy(), _authors_start(X), rtol=1e-12)


def test_the_data_spread_start_refuses_rows_without_spread():
    with pytest.raises(ValueError, match="'se_iso_spread' starts from the training rows"):
        make_kernel("se_iso_spread", 3)
    with pytest.raises(ValueError, match="mean feature spread is 0.0: no length scale"):
        make_kernel("se_iso_spread", 2, np.ones((10, 2)))
    with pytest.raises(ValueError, match="unknown kernel .se_iso_spred.; choose one of .*se_iso_spread"):
        make_kernel("se_iso_spred", 2, np.ones((10, 2)))


def test_the_authors_parameterisation_keeps_log_squared_length_scales_and_log_variances():
    """What Adam moves in `se_ard_plus_noise_median_log` is log l^2, log sigma^2 and log sigma_0^2 (the authors'
    RBF_ARD variables), from the same start as `se_ard_plus_noise_median`; the noise term's variance is their jitter
    1e-3 plus sigma_0^2, in K_ZZ and in the marginal variances alike."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(50, 3)) * [1.0, 4.0, 0.5]
    model = build_model(X, np.arange(50) % 3, num_classes=3, likelihood="robustmax", num_inducing=5,
                        kernel="se_ard_plus_noise_median_log")
    reference = make_kernel("se_ard_plus_noise_median", 3, X)
    for kernel in model.gp.kernels:
        se, white = kernel.kernels
        np.testing.assert_allclose(se.lengthscales.numpy(), reference.kernels[0].lengthscales.numpy(), rtol=1e-12)
        np.testing.assert_allclose(se.lengthscales.unconstrained_variable.numpy(),
                                   np.log(_pairwise_median(X)), rtol=1e-10)
        np.testing.assert_allclose(se.variance.unconstrained_variable.numpy(), 1.0, rtol=1e-12)
        # log(exp(-20)) back from 1e-3 + exp(-20): float64 keeps exp(-20) beside 1e-3 to about 1e-7 of itself
        np.testing.assert_allclose(white.variance.unconstrained_variable.numpy(), -20.0, rtol=0, atol=1e-6)
        np.testing.assert_allclose(white.variance.numpy(), 1e-3 + np.exp(-20.0), rtol=1e-12)
    Z = model.gp.Z.numpy()[0]
    kernel = model.gp.kernels[0]
    se = kernel.kernels[0]
    np.testing.assert_allclose(kernel(Z).numpy(), se(Z).numpy() + (1e-3 + np.exp(-20.0)) * np.eye(len(Z)), rtol=1e-12)
    np.testing.assert_allclose(kernel.K_diag(X).numpy(), se.variance.numpy() + 1e-3 + np.exp(-20.0), rtol=1e-12)
    # stepped far down, sigma_0^2 leaves the jitter under it
    white = kernel.kernels[1]
    white.variance.unconstrained_variable.assign(-200.0)
    assert float(white.variance.numpy()) == 1e-3


def test_an_adam_step_moves_the_authors_length_scales_by_a_share_and_gpflows_by_an_amount():
    """Adam's first step moves each variable by its learning rate against the gradient's sign: log l^2 by 0.1 is
    the length scale times exp(-0.05) whatever its size; the softplus moves a long length scale by about 0.1."""
    import tensorflow as tf

    X = np.random.default_rng(4).normal(size=(40, 2)) * 30.0  # long length scales
    for name, expected in (("se_ard_plus_noise_median_log", lambda l: l * np.exp(-0.05)),
                           ("se_ard_plus_noise_median", lambda l: l - 0.1)):
        se = make_kernel(name, 2, X).kernels[0]
        before = se.lengthscales.numpy()
        tf.optimizers.Adam(0.1).minimize(lambda: tf.reduce_sum(se.lengthscales), se.trainable_variables)
        np.testing.assert_allclose(se.lengthscales.numpy(), expected(before), rtol=1e-4)


def test_paper_000s_kernels_start_at_its_appendix_d_values():
    # Appendix D: RBF at length scale 0.1 sqrt(d), variance 5; Table V adds SE at sqrt(d), variance 5
    d = 9
    se = make_kernel("se_iso_liu", d)
    assert np.ndim(se.lengthscales.numpy()) == 0  # one length scale for every input
    np.testing.assert_allclose([se.lengthscales.numpy(), se.variance.numpy()], [0.3, 5.0], rtol=1e-12)
    ard = make_kernel("se_ard_liu", d)  # the authors' demos' ARD=True: the value for every input
    np.testing.assert_allclose(ard.lengthscales.numpy(), np.full(d, 0.3), rtol=1e-12)
    np.testing.assert_allclose(ard.variance.numpy(), 5.0, rtol=1e-12)
    matern, smooth = make_kernel("matern52_plus_se_iso", d).kernels
    assert isinstance(matern, gpflow.kernels.Matern52) and isinstance(smooth, gpflow.kernels.SquaredExponential)
    np.testing.assert_allclose([matern.lengthscales.numpy(), smooth.lengthscales.numpy()], [0.3, 3.0], rtol=1e-12)
    np.testing.assert_allclose([matern.variance.numpy(), smooth.variance.numpy()], [5.0, 5.0], rtol=1e-12)
    # the ARD reading starts each input where the one-length-scale kernel starts all of them
    ard_matern, ard_smooth = make_kernel("matern52_plus_se", d).kernels
    np.testing.assert_allclose(ard_matern.lengthscales.numpy(), np.full(d, 0.3), rtol=1e-12)
    np.testing.assert_allclose(ard_smooth.lengthscales.numpy(), np.full(d, 3.0), rtol=1e-12)
    X = np.random.default_rng(0).normal(size=(5, d))
    np.testing.assert_allclose(make_kernel("matern52_plus_se", d)(X), make_kernel("matern52_plus_se_iso", d)(X),
                               rtol=1e-12)

"""One front for every likelihood: NoisyGPClassifier(likelihood=..., likelihood_options=..., inference=...)."""

import numpy as np
import pytest

from gpal import LogisticSoftmaxGPClassifier, NoisyGPClassifier
from gpal.models.kernels import default_kernel, default_lengthscale

# learning_rate: the step LogisticSoftmaxGPClassifier is compared at (the front's default is SVI's, 0.03)
FAST = dict(num_inducing=8, epochs=3, batch_size=20, learning_rate=0.01, n_samples=50, progress=False)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 2))
    y = np.array(["a", "b", "c"])[(X[:, 0] > -0.4).astype(int) + (X[:, 0] > 0.4).astype(int)]
    return X, y


@pytest.fixture(scope="module")
def cavi(data):
    X, y = data
    return NoisyGPClassifier(likelihood="logistic_softmax", inference="cavi", random_state=2, **FAST).fit(X, y)


def test_cavi_front_equals_the_augmented_estimator(cavi, data):
    X, y = data
    direct = LogisticSoftmaxGPClassifier(
        inference="cavi", num_inducing=8, max_iter=3, learning_rate=0.01, n_samples=50, random_state=2, progress=False
    ).fit(X, y)
    # The front holds the same q(u) in the generic model's form: equal up to rounding.
    np.testing.assert_allclose(cavi.predict_proba(X), direct.predict_proba(X), rtol=0, atol=1e-12)
    mean, var = cavi.model_.gp.marginals(cavi.standardizer_.transform_arrays(X)[0])
    direct_mean, direct_var = direct.model_.predict_f(direct.standardizer_.transform_arrays(X)[0])
    np.testing.assert_allclose(mean, direct_mean, rtol=0, atol=1e-10)
    np.testing.assert_allclose(var, direct_var, rtol=1e-9)
    assert list(cavi.classes_) == ["a", "b", "c"]
    assert len(cavi.history_) == 3  # one closed-form sweep per epoch
    assert np.all(np.diff(cavi.history_) > -1e-6 * np.abs(cavi.history_[:-1]))  # hyper steps are small; ELBO rises


def test_cavi_front_runs_gpals_collapsed_cavi(data):
    X, y = data
    front = NoisyGPClassifier(likelihood="logistic_softmax", inference="cavi_collapsed", random_state=2, **FAST).fit(X, y)
    direct = LogisticSoftmaxGPClassifier(inference="cavi_collapsed", num_inducing=8, max_iter=3, learning_rate=0.01,
                                         n_samples=50, random_state=2, progress=False).fit(X, y)
    paper = LogisticSoftmaxGPClassifier(inference="cavi", num_inducing=8, max_iter=3, learning_rate=0.01,
                                        n_samples=50, random_state=2, progress=False).fit(X, y)
    np.testing.assert_allclose(front.predict_proba(X), direct.predict_proba(X), rtol=0, atol=1e-12)
    assert len(front.history_) == 3  # full-batch sweeps, one per epoch
    assert np.max(np.abs(front.predict_proba(X) - paper.predict_proba(X))) > 1e-4


def test_natural_gradient_runs_epochs_of_minibatch_steps(data):
    X, y = data
    clf = NoisyGPClassifier(likelihood="logistic_softmax", inference="natural_gradient", **{**FAST, "epochs": 2}).fit(X, y)
    assert len(clf.history_) == 2 * 3  # 60 rows / batch 20 = 3 steps per epoch
    p = clf.predict_proba(X)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-12)


def test_cavi_front_saves_loads_and_samples(cavi, data, tmp_path):
    X, _ = data
    cavi.save(tmp_path / "m")
    back = NoisyGPClassifier.load(tmp_path / "m")
    assert back.inference == "cavi" and type(back.model_) is type(cavi.model_)
    np.testing.assert_array_equal(back.predict_proba(X), cavi.predict_proba(X))
    draws = back.sample_proba(X, n_samples=4000)
    assert draws.shape == (4000, 60, 3)
    # Mean of the draws vs an independently seeded predictive at as many draws: equal within MC error.
    many = NoisyGPClassifier(likelihood="logistic_softmax", inference="cavi", random_state=2, **{**FAST, "n_samples": 4000})
    np.testing.assert_allclose(draws.mean(axis=0), many.fit(*data).predict_proba(X), atol=0.01)


@pytest.mark.parametrize(
    "params, match",
    [
        (dict(likelihood="robustmax", inference="cavi"), "only for likelihood='logistic_softmax'"),
        (dict(likelihood="logistic_softmax", inference="cavi", input_noise="latent"), r"use an input_noise of \['none'\]"),
        (dict(likelihood="logistic_softmax", inference="gibbs"), r"inference must be one of \['svi', 'cavi'"),
        (dict(likelihood="logistic_softmax", inference="cavi", inference_options={"rho": 1}), r"valid options are \['hyper_every'"),
        (dict(inference_options={"hyper_every": 2}), r"configure the conjugate schemes \['cavi', 'natural_gradient', 'cavi_collapsed'\]"),
        (dict(likelihood="logistic_softmax", inference="cavi", warm_start=True), "warm_start"),
        (dict(likelihood="probit", likelihood_options={"epsilon": 0.1}), r"has no option\(s\) \['epsilon'\]; its options are \['delta', 'learn_delta'"),
        (dict(likelihood="robustmax", likelihood_options={"epsilon": 1.5}),
         r"likelihood_options\['epsilon'\] must be a finite number > 0 and < 1 \(a label-flip probability\); got 1.5"),
        (dict(likelihood="robustmax", likelihood_options={"learn_epsilon": "yes"}),
         r"likelihood_options\['learn_epsilon'\] must be True or False; got 'yes'"),
    ],
)
def test_combinations_that_do_not_exist_are_named(data, params, match):
    X, y = data
    with pytest.raises(ValueError, match=match):
        NoisyGPClassifier(**{**FAST, **params}).fit(X, y)


def test_a_bad_likelihood_option_is_refused_before_any_model_is_built():
    from gpal.constraints import InvalidParameter

    with pytest.raises(InvalidParameter, match=r"likelihood_options\['epsilon'\] must be a finite number > 0 "
                                               r"and < 1 \(a label-flip probability\); got 0"):
        NoisyGPClassifier(likelihood="robustmax", likelihood_options={"epsilon": 0}).validate_params()


def test_robustmax_options_reach_the_likelihood(data):
    X, y = data
    fixed = NoisyGPClassifier(likelihood="robustmax", likelihood_options={"epsilon": 0.02}, **FAST).fit(X, y)
    assert float(fixed.model_.likelihood.epsilon.numpy()) == pytest.approx(0.02, rel=1e-12)
    assert not fixed.model_.likelihood.epsilon.trainable
    learned = NoisyGPClassifier(likelihood="robustmax", likelihood_options={"learn_epsilon": True}, **FAST).fit(X, y)
    assert learned.model_.likelihood.epsilon.trainable


def test_robustmax_flip_spread_reaches_the_likelihood(data):
    X, y = data
    clf = NoisyGPClassifier(likelihood="robustmax", likelihood_options={"flip_spread": "all"}, **FAST).fit(X, y)
    assert clf.model_.likelihood.flip_spread == "all"
    # a confident prediction's floor is epsilon / C, not epsilon / (C - 1)
    assert clf.predict_proba(X).min() >= 1e-3 / 3 - 1e-12


def test_likelihood_options_reach_the_likelihood(data):
    X, y = data
    clf = NoisyGPClassifier(likelihood="probit", likelihood_options={"delta": 0.02, "learn_delta": False}, **FAST).fit(X, y)
    assert float(clf.model_.likelihood.delta.numpy()) == pytest.approx(0.02)
    assert not clf.model_.likelihood.delta.trainable


def test_default_kernel_scales_with_dimension():
    """Scaled squared distance between standardised points is ~2 for every d (the reason for sqrt(d))."""
    rng = np.random.default_rng(0)
    for d in (1, 6, 64):
        a, b = rng.normal(size=(2, 4000, d))
        ell = default_lengthscale(d)
        assert np.mean(np.sum((a - b) ** 2, axis=1) / ell**2) == pytest.approx(2.0, rel=0.05)
        k = default_kernel(d)
        np.testing.assert_allclose(k.lengthscales.numpy(), np.full(d, np.sqrt(d)))
    with pytest.raises(ValueError, match="n_features"):
        default_lengthscale(0)


def test_paper000_table5_kernel_is_matern52_plus_se_from_the_papers_start():
    """k(x, x') = 5 (1 + s + s^2 / 3) e^-s, s = sqrt(5) r / (0.1 sqrt(d)), plus 5 exp(-r^2 / (2 d)), by hand."""
    from gpal.models.kernels import matern52_plus_se

    d = 4
    x, x2 = np.zeros((1, d)), np.full((1, d), 0.05)
    r = np.sqrt(d) * 0.05
    s = np.sqrt(5.0) * r / (0.1 * np.sqrt(d))
    expected = 5.0 * (1 + s + s**2 / 3) * np.exp(-s) + 5.0 * np.exp(-r**2 / (2 * d))
    np.testing.assert_allclose(matern52_plus_se(d)(x, x2).numpy(), [[expected]], rtol=1e-12)
    assert NoisyGPClassifier(kernel="matern52_plus_se", **FAST).fit(np.random.default_rng(0).normal(size=(30, 2)),
                                                                    np.arange(30) % 2).model_ is not None

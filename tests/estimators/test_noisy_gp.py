"""NoisyGPClassifier: the estimator contract, persistence, input errors and the 1-D toy result."""

import json

import gpflow
import numpy as np
import pytest
import tensorflow as tf
from sklearn.exceptions import NotFittedError
from sklearn.base import clone

from gpal import NoisyDataset, NoisyGPClassifier
from gpal.models import RobustMax
from gpal.training.svi import TrainingError

FAST = dict(num_inducing=8, epochs=3, batch_size=20, n_samples=20, progress=False)


def _arrays(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2)) * [1.0, 5.0] + [0.0, 100.0]
    labels = np.array(["blazar", "pulsar", "agn"])[(X[:, 0] > 0).astype(int) + (X[:, 0] > 1).astype(int)]
    X_var = np.column_stack([rng.uniform(0.01, 0.05, n), np.zeros(n)])  # second feature has no error bar
    return X, labels, X_var


@pytest.fixture(scope="module")
def data():
    return _arrays()


NAMES = ("agn", "blazar", "pulsar")


@pytest.fixture(scope="module")
def latent_clf(data):
    X, y, X_var = data
    return NoisyGPClassifier(input_noise="latent", random_state=1, **FAST).fit(X, y, X_var)


@pytest.fixture(scope="module")
def none_clf(data):
    X, y, _ = data
    return NoisyGPClassifier(input_noise="none", **FAST).fit(X, y)


@pytest.fixture(scope="module")
def dataset(data):
    X, labels, X_var = data
    return NoisyDataset(X, X_var, np.searchsorted(NAMES, labels), NAMES, ("flux", "index"), None)


def _custom_first_order():
    """NIMGP-FO with a kernel, a likelihood object and a noise variance of its own: fo_clf and the custom save/load
    test fit this one model signature, whose training step and predictor are traced once."""
    return NoisyGPClassifier(
        input_noise="first_order",
        noise_variance="both",
        kernel=gpflow.kernels.Matern32(lengthscales=np.ones(2)),
        likelihood=RobustMax(epsilon=0.01, learn_epsilon=True),
        **FAST,
    )


@pytest.fixture(scope="module")
def fo_clf(dataset):
    # Robust-max: wider latent marginals always flatten its probabilities, which the error-bar tests rely on
    # (a softmax a few epochs from its uniform start can move either way).
    return _custom_first_order().fit(dataset)


# ----------------------------------------------------------------- contract
def test_probabilities_labels_and_scores(latent_clf, data):
    X, y, X_var = data
    p = latent_clf.predict_proba(X, X_var)
    assert p.shape == (60, 3)
    np.testing.assert_allclose(p.sum(1), 1.0, atol=1e-12)
    assert list(latent_clf.classes_) == ["agn", "blazar", "pulsar"]
    pred = latent_clf.predict(X, X_var)
    assert set(pred) <= set(latent_clf.classes_)
    np.testing.assert_array_equal(pred, latent_clf.classes_[p.argmax(1)])
    assert latent_clf.score(X, y, X_var=X_var) == pytest.approx(np.mean(pred == y))
    h = latent_clf.predictive_entropy(X, X_var)
    np.testing.assert_allclose(h, -np.sum(p * np.log(p), axis=1))
    assert h.shape == (60,) and (h >= 0).all() and (h <= np.log(3) + 1e-12).all()
    assert latent_clf.n_features_in_ == 2 and len(latent_clf.history_) == 3
    assert not latent_clf.stopped_early_


def test_predictions_are_deterministic_for_a_seed(latent_clf, data):
    X, y, X_var = data
    np.testing.assert_array_equal(latent_clf.predict_proba(X, X_var), latent_clf.predict_proba(X, X_var))
    again = NoisyGPClassifier(input_noise="latent", random_state=1, **FAST).fit(X, y, X_var)
    np.testing.assert_array_equal(again.predict_proba(X, X_var), latent_clf.predict_proba(X, X_var))
    assert again.history_ == latent_clf.history_


def test_save_load_round_trip(latent_clf, data, tmp_path):
    X, _, X_var = data
    latent_clf.save(tmp_path / "model")
    config = json.loads((tmp_path / "model" / "config.json").read_text())
    assert config["params"]["input_noise"] == "latent"
    loaded = NoisyGPClassifier.load(tmp_path / "model")
    np.testing.assert_array_equal(loaded.predict_proba(X, X_var), latent_clf.predict_proba(X, X_var))
    np.testing.assert_array_equal(loaded.classes_, latent_clf.classes_)
    assert loaded.history_ == latent_clf.history_
    assert loaded.get_params() == latent_clf.get_params()
    latent_clf.save(tmp_path / "model")  # overwriting a saved model is allowed
    assert sorted(p.name for p in (tmp_path / "model").iterdir()) == ["config.json", "params.npz"]


def test_save_load_with_custom_kernel_likelihood_and_integer_labels(data, tmp_path):
    X, labels, X_var = data
    y = np.searchsorted(np.unique(labels), labels) * 10 + 10  # 10, 20, 30
    clf = _custom_first_order().fit(X, y, X_var)
    clf.save(tmp_path / "fo")
    loaded = NoisyGPClassifier.load(tmp_path / "fo")
    np.testing.assert_array_equal(loaded.predict_proba(X, X_var), clf.predict_proba(X, X_var))
    assert loaded.classes_.tolist() == [10, 20, 30] and loaded.predict(X, X_var).dtype.kind == "i"
    assert isinstance(loaded.model_.gp.kernels[0], gpflow.kernels.Matern32)
    assert loaded.model_.likelihood.epsilon.trainable


def test_save_refuses_non_finite_parameters(none_clf, tmp_path):
    none_clf.save(tmp_path / "good")
    clf = NoisyGPClassifier.load(tmp_path / "good")
    q_mu = clf.model_.gp.q_mu.unconstrained_variable
    q_mu.assign(np.full(q_mu.shape, np.nan))
    with pytest.raises(ValueError, match="non-finite parameters"):
        clf.save(tmp_path / "bad")
    assert not (tmp_path / "bad").exists()


class _BrokenLikelihood(RobustMax):
    """A plugged-in likelihood whose ELBO term is NaN: training must stop at the first step."""

    def variational_expectations(self, Fmu, Fvar, Y):
        return super().variational_expectations(Fmu, Fvar, Y) * np.nan


def test_diverging_training_raises_and_leaves_no_model(data, tmp_path):
    X, y, X_var = data
    clf = NoisyGPClassifier(likelihood=_BrokenLikelihood(), **FAST)
    with pytest.raises(TrainingError, match=r"epoch 0, step 0"):
        clf.fit(X, y, X_var)
    assert not hasattr(clf, "model_")
    with pytest.raises(NotFittedError, match="not fitted"):
        clf.save(tmp_path / "never")
    assert not (tmp_path / "never").exists()


def test_noisy_dataset_input(fo_clf, dataset, data):
    X, labels, X_var = data
    assert list(fo_clf.classes_) == list(NAMES)
    np.testing.assert_array_equal(fo_clf.predict_proba(dataset), fo_clf.predict_proba(X, X_var))
    assert fo_clf.score(dataset) == pytest.approx(fo_clf.score(X, labels, X_var=X_var))


def test_learned_noise_needs_no_error_bars(data, tmp_path):
    X, y, _ = data
    clf = NoisyGPClassifier(input_noise="amortized", noise_variance="learned", hidden_sizes=(5, 4), **FAST).fit(X, y)
    p = clf.predict_proba(X)
    np.testing.assert_allclose(p.sum(1), 1.0, atol=1e-12)
    learned = clf.model_.noise_variance.learned.numpy()
    assert learned.shape == (2,) and np.isfinite(learned).all() and (learned > 0).all()
    assert not np.allclose(learned, 0.01)  # the ELBO moved it from its initial value
    clf.save(tmp_path / "nn")
    np.testing.assert_array_equal(NoisyGPClassifier.load(tmp_path / "nn").predict_proba(X), p)


def test_first_order_uses_test_error_bars(fo_clf, data):
    """Larger test error bars widen the latent marginals: less confident on average (not pointwise)."""
    X, _, X_var = data
    small, large = fo_clf.predictive_entropy(X, X_var), fo_clf.predictive_entropy(X, X_var * 100)
    assert large.mean() > small.mean()
    assert np.abs(fo_clf.predict_proba(X, X_var * 100) - fo_clf.predict_proba(X, X_var)).max() > 1e-4


def test_latent_with_vanishing_error_bars_trains_like_none(none_clf, data):
    """Softmax: equal within Monte Carlo error (the latent draws differ); robust-max, exact per draw: equal
    within float32 rounding of the sampled-input GP part."""
    X, y, _ = data
    tiny = np.full_like(X, 1e-14)
    latent = NoisyGPClassifier(input_noise="latent", **FAST).fit(X, y, tiny)
    p, se = latent.predict_proba(X, tiny, return_mc_error=True)
    assert se.max() > 0
    assert np.all(np.abs(p - none_clf.predict_proba(X)) <= 4 * np.sqrt(2) * se)
    exact = {**FAST, "likelihood": "robustmax"}
    robust = NoisyGPClassifier(input_noise="latent", **exact).fit(X, y, tiny)
    robust_none = NoisyGPClassifier(input_noise="none", **exact).fit(X, y)
    np.testing.assert_allclose(robust.predict_proba(X, tiny), robust_none.predict_proba(X), atol=1e-5)


def test_stop_on_request(data):
    X, y, X_var = data
    clf = NoisyGPClassifier(**{**FAST, "epochs": 100}).fit(X, y, callback=lambda epoch, loss: False)
    assert clf.history_[0] > 0  # the loss: a negative ELBO
    assert clf.stopped_early_ and len(clf.history_) == 1
    np.testing.assert_allclose(clf.predict_proba(X).sum(1), 1.0, atol=1e-12)


def test_sklearn_clone_and_params():
    clf = NoisyGPClassifier(input_noise="latent", epochs=7)
    twin = clone(clf)
    assert twin.get_params() == clf.get_params() and twin is not clf


def test_warm_start_continues_from_the_fitted_model(data):
    """With 0 further epochs a warm start reproduces the fitted model exactly; a cold start does not."""
    X, y, X_var = data
    clf = NoisyGPClassifier(input_noise="latent", warm_start=True, random_state=3, **FAST).fit(X[:40], y[:40], X_var[:40])
    before = clf.predict_proba(X, X_var)
    clf.set_params(epochs=0).fit(X, y, X_var)  # more points: the per-point table grows, globals carry over
    np.testing.assert_allclose(clf.predict_proba(X, X_var), before, rtol=0, atol=1e-12)
    assert clf.model_.strategy.q_offset.numpy().shape[0] == 60 and np.all(clf.model_.strategy.q_offset.numpy()[40:] == 0)
    assert len(clf.history_) == 3  # the first fit's epochs, none added
    cold = NoisyGPClassifier(input_noise="latent", random_state=3, **{**FAST, "epochs": 0}).fit(X, y, X_var)
    assert np.abs(cold.predict_proba(X, X_var) - before).max() > 1e-3
    with pytest.warns(UserWarning, match="warm_start ignored"):
        clf.fit(X, np.where(y == "agn", "blazar", y), X_var)  # one class fewer: starts afresh
    assert list(clf.classes_) == ["blazar", "pulsar"]


def test_warm_refits_and_predictions_trace_once(data):
    """Active learning's pattern, refit on one more row then predict sets of any size, compiles each function once."""
    X, y, X_var = data
    clf = NoisyGPClassifier(input_noise="latent", warm_start=True, random_state=3, **FAST).fit(X[:40], y[:40], X_var[:40])
    model = clf.model_
    for n in range(41, 45):
        clf.fit(X[:n], y[:n], X_var[:n])
        for rows in (1, 7, 60):
            clf.predict_proba(X[:rows], X_var[:rows])
        for rows in (3, 11):  # what BALD and EPIG call, on pools of any size
            clf.sample_proba(X[:rows], X_var[:rows], n_samples=5)
            clf.sample_proba(X[:rows], X_var[:rows], n_samples=5, input_draws=4)
            clf.sample_joint_proba(X[:rows], X_var[:rows], n_samples=5, input_draws=4)
    assert clf.model_ is model and clf.model_.num_data == 44
    assert clf._session.trainer().step.experimental_get_tracing_count() == 1
    compiled = clf._session.compiled
    assert sorted(compiled, key=str) == sorted([("predict", 20), ("sample", 5, None), ("sample", 5, 4),
                                                ("joint", 5, 4)], key=str)
    assert all(fn.func.experimental_get_tracing_count() == 1 for fn in compiled.values())  # shared per signature


@pytest.mark.parametrize("likelihood", ["softmax", "robustmax"])
def test_predictions_equal_those_through_the_per_input_solve(data, likelihood, monkeypatch):
    """The factored prediction path gives the probabilities of ``marginals`` (a triangular solve per input draw)."""
    X, y, X_var = data
    fast = NoisyGPClassifier(input_noise="latent", likelihood=likelihood, random_state=2, **FAST).fit(X, y, X_var)
    slow = clone(fast).fit(X, y, X_var)
    float32 = fast.predict_proba(X, X_var)
    monkeypatch.setattr(fast.model_.strategy, "prediction_dtype", tf.float64)
    fast._session.compiled.clear()
    monkeypatch.setattr(slow.model_.gp, "predictive_marginals", lambda X, dtype: slow.model_.gp.marginals(X))
    np.testing.assert_allclose(fast.predict_proba(X, X_var), slow.predict_proba(X, X_var), rtol=0, atol=1e-12)
    np.testing.assert_allclose(float32, slow.predict_proba(X, X_var), rtol=0, atol=1e-5)


def test_a_kept_model_refits_as_a_rebuilt_one(data):
    """Keeping the model across a warm refit gives what rebuilding it and copying the fitted values gave."""
    X, y, X_var = data
    kept = NoisyGPClassifier(input_noise="latent", warm_start=True, random_state=3, **FAST).fit(X[:40], y[:40], X_var[:40])
    rebuilt = clone(kept).fit(X[:40], y[:40], X_var[:40])
    first = rebuilt.model_
    rebuilt._session.built_with = None  # as after a change of model parameters: build_model, then copy the values
    model = kept.model_
    kept.fit(X, y, X_var)
    rebuilt.fit(X, y, X_var)
    assert kept.model_ is model and rebuilt.model_ is not first
    np.testing.assert_allclose(kept.history_, rebuilt.history_, rtol=1e-12)
    np.testing.assert_allclose(kept.predict_proba(X, X_var), rebuilt.predict_proba(X, X_var), rtol=0, atol=1e-12)
    with pytest.warns(UserWarning, match=r"restarted parameters whose size changed: \.gp\.Z \(3, 8, 2\) -> \(3, 7, 2\)"):
        # a model parameter changed: built anew, q(u) restarted (at the build: no epoch needed, nor a new step traced)
        kept.set_params(num_inducing=7, epochs=0).fit(X, y, X_var)
    assert kept.model_ is not model and kept.model_.gp.num_inducing == 7


@pytest.mark.parametrize("input_noise", ["none", "latent"])
def test_sample_proba_averages_to_predict_proba(data, input_noise):
    X, y, X_var = data
    clf = NoisyGPClassifier(input_noise=input_noise, **{**FAST, "epochs": 10, "n_samples": 2000}).fit(X, y, X_var)
    samples = clf.sample_proba(X[:10], X_var[:10], n_samples=2000)
    assert samples.shape == (2000, 10, 3)
    np.testing.assert_allclose(samples.sum(-1), 1.0, atol=1e-9)
    # Monte Carlo over (x, f) against quadrature over f (and MC over x): agree to MC error.
    np.testing.assert_allclose(samples.mean(0), clf.predict_proba(X[:10], X_var[:10]), atol=0.04)
    with pytest.raises(ValueError, match="n_samples"):
        clf.sample_proba(X, X_var, n_samples=0)


# ------------------------------------------------------------------ errors
@pytest.mark.parametrize(
    "kwargs, fit_args, error, match",
    [
        ({"input_noise": "latent"}, "no_X_var", ValueError, "needs X_var"),
        ({}, "nan_X", ValueError, "NaN or infinite"),
        ({}, "one_class", ValueError, "at least 2 classes"),
        ({}, "negative_var", ValueError, "must be >= 0"),
        ({}, "short_y", ValueError, r"one label per row of X \(60\)"),
        ({"input_noise": "exact"}, "ok", ValueError, "input_noise must be one of"),
        ({"noise_variance": "measured"}, "ok", ValueError, "noise_variance must be one of"),
        ({"num_inducing": 0}, "ok", ValueError, "num_inducing"),
        ({"kernel": "rbf"}, "ok", TypeError, "kernel"),
    ],
)
def test_bad_fit_input(data, kwargs, fit_args, error, match):
    X, y, X_var = (a.copy() for a in data)
    args = {
        "ok": (X, y, X_var),
        "no_X_var": (X, y, None),
        "nan_X": (np.where(np.arange(60)[:, None] == 5, np.nan, X), y, X_var),
        "one_class": (X, np.full(60, "blazar"), X_var),
        "negative_var": (X, y, -X_var),
        "short_y": (X, y[:-1], X_var),
    }[fit_args]
    with pytest.raises(error, match=match):
        NoisyGPClassifier(**{**FAST, **kwargs}).fit(*args)


def test_bad_predict_input(latent_clf, data):
    X, _, X_var = data
    with pytest.raises(ValueError, match="X has 3 features, but NoisyGPClassifier is expecting 2 features"):
        latent_clf.predict_proba(np.hstack([X, X[:, :1]]), np.hstack([X_var, X_var[:, :1]]))
    with pytest.raises(ValueError, match="pass X_var"):
        latent_clf.predict_proba(X)
    with pytest.raises(ValueError, match="shape of X"):
        latent_clf.predict_proba(X, X_var[:, :1])
    with pytest.raises(NotFittedError, match="not fitted"):
        NoisyGPClassifier().predict(X)


# ---------------------------------------------------------------- 1-D toy
@pytest.mark.slow
def test_toy_1d_noise_aware_predictive_beats_mgp():
    """Sec. 5.1: NIMGP's test NLL is clearly below MGP's and close to the Bayes-optimal predictive.

    A smaller version of the paper's run (300 training points, M = 20, 60 epochs).
    """
    from gpal.data.synthetic import toy_1d

    problem = toy_1d(n_train=300, n_test=1000, noise_std=0.1, seed=0)
    test = problem.test
    bayes = problem.bayes_proba(test.X)
    rows = np.arange(len(test))

    def nll(p):
        return -np.mean(np.log(p[rows, test.y]))

    def kl_from_bayes(p):
        return np.mean(np.sum(bayes * (np.log(np.maximum(bayes, 1e-300)) - np.log(p)), axis=1))

    # The paper's likelihood: robust-max.  50 draws of each noisy test input: the NLL and KL move by under 0.01 from
    # 100 draws' (far inside the margins below) at half the prediction's cost.
    # every one of the 60 epochs (tol=None): NIMGP's Monte Carlo bound is too noisy for the default stop to read
    # and the paper's batch and Adam step (50, 0.01)
    settings = dict(likelihood="robustmax", num_inducing=20, epochs=60, batch_size=50, learning_rate=0.01, n_samples=50,
                    progress=False, tol=None)
    p = {}
    for kind in ("none", "latent"):
        clf = NoisyGPClassifier(input_noise=kind, **settings).fit(problem.train)
        assert list(clf.classes_) == list(test.class_names)
        p[kind] = clf.predict_proba(test)
    nll_mgp, nll_nimgp, nll_bayes = nll(p["none"]), nll(p["latent"]), nll(bayes)
    assert nll_mgp - nll_nimgp > 0.1, (nll_mgp, nll_nimgp)
    assert abs(nll_nimgp - nll_bayes) < abs(nll_mgp - nll_bayes) / 3, (nll_mgp, nll_nimgp, nll_bayes)
    assert kl_from_bayes(p["latent"]) < kl_from_bayes(p["none"]) / 3


def test_a_bad_parameter_set_after_fit_is_named_at_predict(data):
    X, y, X_var = data
    clf = NoisyGPClassifier(input_noise="latent", random_state=1, **FAST).fit(X, y, X_var)
    with pytest.raises(ValueError, match=r"n_samples must be an integer >= 1; got -1"):
        clf.set_params(n_samples=-1).predict_proba(X, X_var)

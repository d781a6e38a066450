"""Estimators travel as scikit-learn's do: pickle, joblib and ``n_jobs`` copies predict exactly as the original;
``random_state`` takes what scikit-learn's does; ``predict_log_proba`` and ``feature_names_in_``."""

from __future__ import annotations

import io
import pickle
import warnings

import joblib
import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import cross_validate
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer

from gpal import NoisyGPClassifier
from gpal.registry import ESTIMATORS

TINY = {
    "noisy_gp": {"input_noise": "latent", "num_inducing": 5, "epochs": 2, "n_samples": 16},
    "dirichlet": {"num_inducing": 5, "max_iter": 1, "n_samples": 16},
    "logistic_bound": {"num_inducing": 5, "max_iter": 1, "max_fun": 2, "n_updates": 1},
    "logistic_softmax": {"num_inducing": 5, "max_iter": 2, "n_samples": 16, "exact_steps": 1, "exact_samples": 8},
    "gpr_platt": {"num_inducing": 5, "max_iter": 1},
}


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    return X, np.full_like(X, 0.05), np.where(X[:, 0] + 0.3 * rng.normal(size=60) > 0, "psr", "bll")


def _quiet_fit(est, X, y, V):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # exact-input families say they ignore X_var
        return est.fit(X, y, V)


def _proba(est, X, V):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return est.predict_proba(X, V)


def test_every_family_is_pickled():
    assert set(TINY) == set(ESTIMATORS.names())


@pytest.mark.parametrize("family", sorted(TINY))
def test_a_pickled_fitted_model_predicts_exactly_as_the_original(family, data):
    X, V, y = data
    est = _quiet_fit(ESTIMATORS[family](**TINY[family]), X, y, V)
    expected = _proba(est, X, V)  # compiled functions exist now: they are what would not pickle
    copy = pickle.loads(pickle.dumps(est))
    np.testing.assert_array_equal(_proba(copy, X, V), expected)
    assert copy.get_params() == est.get_params()
    np.testing.assert_array_equal(copy.classes_, est.classes_)
    # an unfitted one pickles as its parameters and fits as the original would
    fresh = pickle.loads(pickle.dumps(ESTIMATORS[family](**TINY[family])))
    np.testing.assert_array_equal(_proba(_quiet_fit(fresh, X, y, V), X, V), expected)


def test_a_pickled_model_keeps_its_plain_fitted_attributes_and_refits_warm(data):
    X, V, y = data
    est = NoisyGPClassifier(**TINY["noisy_gp"], warm_start=True).fit(X, y, V)
    copy = pickle.loads(pickle.dumps(est))
    assert copy.history_ == est.history_ and copy.best_epoch_ == est.best_epoch_
    assert copy.validation_history_ == est.validation_history_ and copy.random_seed_ == est.random_seed_
    copy.fit(X, y, V)  # continues from the unpickled model
    assert len(copy.history_) == 2 * len(est.history_)


def test_joblib_round_trip_of_a_pipeline(data):
    X, V, y = data
    pipe = make_pipeline(FunctionTransformer(), NoisyGPClassifier(num_inducing=5, epochs=2))
    pipe.fit(X, y)
    buffer = io.BytesIO()
    joblib.dump(pipe, buffer)
    buffer.seek(0)
    np.testing.assert_array_equal(joblib.load(buffer).predict_proba(X), pipe.predict_proba(X))


def test_cross_validate_in_two_processes_returns_the_fitted_estimators(data):
    X, V, y = data
    est = NoisyGPClassifier(num_inducing=5, epochs=2)
    result = cross_validate(est, X, y, cv=2, n_jobs=2, return_estimator=True, scoring="neg_log_loss")
    assert len(result["estimator"]) == 2 and np.all(np.isfinite(result["test_score"]))
    # each returned model is the fit of its fold, predicting as a fit in this process does
    local = cross_validate(est, X, y, cv=2, n_jobs=1, return_estimator=True, scoring="neg_log_loss")
    for remote, here in zip(result["estimator"], local["estimator"]):
        np.testing.assert_allclose(remote.predict_proba(X), here.predict_proba(X), atol=1e-6)


@pytest.mark.parametrize("make", [lambda: None, lambda: 7, lambda: np.random.RandomState(0),
                                  lambda: np.random.default_rng(0)], ids=["None", "int", "RandomState", "Generator"])
def test_random_state_as_scikit_learn_takes_it(make, data):
    X, V, y = data
    est = NoisyGPClassifier(**TINY["noisy_gp"], random_state=make()).fit(X, y, V)
    assert isinstance(est.random_seed_, int) and 0 <= est.random_seed_ < 2**32
    # predictions are a function of the fitted model: repeated calls agree, whatever the generator did since
    np.testing.assert_array_equal(est.predict_proba(X, V), est.predict_proba(X, V))
    # the same generator state gives the same fit
    again = NoisyGPClassifier(**TINY["noisy_gp"], random_state=make()).fit(X, y, V)
    if make() is not None:
        np.testing.assert_array_equal(again.predict_proba(X, V), est.predict_proba(X, V))


def test_a_generator_draws_a_new_seed_per_fit_and_a_saved_model_keeps_it(data, tmp_path):
    X, V, y = data
    est = NoisyGPClassifier(**TINY["noisy_gp"], random_state=np.random.default_rng(0))
    first = est.fit(X, y, V).random_seed_
    assert clone(est).get_params()["random_state"] is not None
    assert est.fit(X, y, V).random_seed_ != first
    est.save(tmp_path / "m")
    loaded = NoisyGPClassifier.load(tmp_path / "m")
    assert loaded.random_state is None and loaded.random_seed_ == est.random_seed_
    np.testing.assert_array_equal(loaded.predict_proba(X, V), est.predict_proba(X, V))


@pytest.mark.parametrize("bad", [-1, 2**32, 1.5, "0", True])
def test_a_bad_random_state_is_named(bad):
    with pytest.raises(ValueError, match="random_state must be None, an integer seed"):
        NoisyGPClassifier(random_state=bad).validate_params()


def test_predict_log_proba_is_the_log_of_predict_proba(data):
    X, V, y = data
    est = NoisyGPClassifier(**TINY["noisy_gp"]).fit(X, y, V)
    np.testing.assert_allclose(np.exp(est.predict_log_proba(X, V)), est.predict_proba(X, V), rtol=1e-12)


def test_feature_names_from_a_dataframe_are_kept_and_checked(data):
    pd = pytest.importorskip("pandas")
    X, V, y = data
    frame = pd.DataFrame(X, columns=["flux", "index"])
    est = NoisyGPClassifier(**TINY["noisy_gp"]).fit(frame, y, V)
    assert list(est.feature_names_in_) == ["flux", "index"]
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        np.testing.assert_array_equal(est.predict_proba(frame, V), est.predict_proba(X, V))
    with pytest.raises(ValueError, match="feature names"):
        est.predict_proba(frame[["index", "flux"]], V)
    assert not hasattr(NoisyGPClassifier(**TINY["noisy_gp"]).fit(X, y, V), "feature_names_in_")

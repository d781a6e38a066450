"""Loading any saved family and chunked prediction (the Dask variant is in test_executors.py)."""

import json

import numpy as np
import pytest
from scipy import sparse

from gpal.registry import ESTIMATORS

from gpal.runs.executors import Executor, InProcessExecutor
from gpal.catalog_jobs.model_folders import _loaded
from gpal.catalog_jobs.prediction import predict_proba_chunked
from gpal.estimators import load_estimator, saved_formats
from gpal.data.synthetic import synthetic_2d


class ReversedExecutor(Executor):
    """Finishes tasks last-first, as a cluster might."""

    name = "reversed"

    def _results(self, fn, tasks):
        for i in reversed(range(len(tasks))):
            yield i, fn(*tasks[i])


@pytest.fixture(scope="module")
def problem():
    return synthetic_2d(n_train=40, n_test=75, seed=1)


def _fit_save(problem, path, input_noise):
    from gpal.estimators.noisy_gp import NoisyGPClassifier

    clf = NoisyGPClassifier(input_noise=input_noise, epochs=3, num_inducing=5, n_samples=20, random_state=2, progress=False)
    clf.fit(problem.train).save(path)
    return clf


@pytest.fixture(scope="module")
def exact_model(problem, tmp_path_factory):
    path = tmp_path_factory.mktemp("models") / "mgp"
    return path, _fit_save(problem, path, "none")


@pytest.fixture(scope="module")
def noisy_model(problem, tmp_path_factory):
    path = tmp_path_factory.mktemp("models") / "nimgp"
    return path, _fit_save(problem, path, "latent")


def test_load_estimator_dispatches_on_format(exact_model, problem, tmp_path):
    from gpal.estimators.noisy_gp import NoisyGPClassifier
    from gpal.estimators.logistic_bound import LogisticBoundGPClassifier

    path, clf = exact_model
    loaded = load_estimator(path)
    assert type(loaded) is NoisyGPClassifier
    np.testing.assert_allclose(loaded.predict_proba(problem.test), clf.predict_proba(problem.test), rtol=0, atol=1e-12)

    binary = problem.train.subset(np.flatnonzero(problem.train.y != 2))
    LogisticBoundGPClassifier(num_inducing=4, max_iter=2, progress=False).fit(binary.X, binary.y).save(tmp_path / "jj")
    assert type(load_estimator(tmp_path / "jj")) is LogisticBoundGPClassifier


def test_load_estimator_errors_name_valid_formats(tmp_path):
    formats = saved_formats()
    assert formats["gpal.NoisyGPClassifier"].__name__ == "NoisyGPClassifier"
    assert sorted(cls.__name__ for cls in formats.values()) == sorted(
        {cls.__name__ for cls in map(ESTIMATORS.__getitem__, ESTIMATORS)})  # one format per registered family
    with pytest.raises(FileNotFoundError, match="no config.json.*gpal.DirichletGPClassifier"):
        load_estimator(tmp_path)
    (tmp_path / "config.json").write_text(json.dumps({"format": "sklearn.SVC", "version": 1}))
    with pytest.raises(ValueError, match="unknown format 'sklearn.SVC'; valid formats are .*gpal.LogisticSoftmaxGPClassifier"):
        load_estimator(tmp_path)
    (tmp_path / "config.json").write_text("{not json")
    with pytest.raises(ValueError, match="corrupt"):
        load_estimator(tmp_path)


def test_chunked_equals_unchunked_for_deterministic_prediction(exact_model, problem):
    path, clf = exact_model
    full = clf.predict_proba(problem.test)
    for chunk_size in (1, 16, 75, 1000):
        chunked = predict_proba_chunked(path, problem.test, chunk_size=chunk_size, progress=False)
        assert chunked.shape == (75, 3)
        np.testing.assert_allclose(chunked, full, rtol=0, atol=1e-12)


def test_monte_carlo_chunks_do_not_depend_on_completion_order(noisy_model, problem):
    path, clf = noisy_model
    X, V = problem.test.X, problem.test.X_var
    in_order = predict_proba_chunked(path, X, V, chunk_size=20, progress=False)
    reversed_ = predict_proba_chunked(path, X, V, chunk_size=20, executor=ReversedExecutor(), progress=False)
    np.testing.assert_array_equal(reversed_, in_order)
    # each chunk is the model's own prediction on those rows, placed at those rows
    np.testing.assert_array_equal(in_order[40:60], clf.predict_proba(X[40:60], V[40:60]))
    np.testing.assert_allclose(in_order.sum(1), 1.0, atol=1e-12)
    # the one-call prediction differs only by Monte-Carlo noise (its draws depend on rows per call)
    assert np.abs(in_order - clf.predict_proba(X, V)).max() < 0.1


def test_model_is_loaded_once_per_process_and_reloaded_when_saved_again(exact_model, problem, tmp_path):
    path, clf = exact_model
    predict_proba_chunked(path, problem.test, chunk_size=10, progress=False)
    before = _loaded.cache_info()
    predict_proba_chunked(path, problem.test, chunk_size=10, progress=False)
    after = _loaded.cache_info()
    assert after.misses == before.misses and after.hits == before.hits + 9  # 8 chunks + the driver's check

    copy = tmp_path / "model"
    clf.save(copy)
    predict_proba_chunked(copy, problem.test, chunk_size=100, progress=False)
    clf.save(copy)  # a new config.json: the next call must load the new model
    misses = _loaded.cache_info().misses
    predict_proba_chunked(copy, problem.test, chunk_size=100, progress=False)
    assert _loaded.cache_info().misses == misses + 1


class CountingExecutor(InProcessExecutor):
    calls = 0

    def map(self, fn, tasks, **kwargs):
        CountingExecutor.calls += 1
        return super().map(fn, tasks, **kwargs)


def test_a_loaded_model_refuses_another_feature_count_naming_both(noisy_model, problem):
    path, clf = noisy_model
    loaded = load_estimator(path)
    X, V = problem.test.X, problem.test.X_var
    for est in (clf, loaded):
        with pytest.raises(ValueError, match=r"^X has 1 features, but NoisyGPClassifier is expecting 2 features as input"):
            est.predict_proba(X[:, :1], V[:, :1])
    np.testing.assert_allclose(loaded.predict_proba(X, V), clf.predict_proba(X, V), rtol=0, atol=1e-12)  # valid input: as fitted


def test_bad_input_is_refused_before_any_chunk_runs(noisy_model, problem, tmp_path):
    path, _ = noisy_model
    X, V = problem.test.X, problem.test.X_var
    ex = CountingExecutor()
    with pytest.raises(ValueError, match=r"X has 3 features, but the NoisyGPClassifier saved in \S+ is expecting 2 features as input"):
        predict_proba_chunked(path, np.hstack([X, X[:, :1]]), executor=ex, progress=False)
    bad = X.copy()
    bad[5, 1] = np.nan
    with pytest.raises(ValueError, match="NaN or infinite value.*row 5, column 1"):
        predict_proba_chunked(path, bad, V, executor=ex, progress=False)
    with pytest.raises(ValueError, match="pass X_var"):
        predict_proba_chunked(path, X, executor=ex, progress=False)
    with pytest.raises(ValueError, match="X_var must have the shape of X"):
        predict_proba_chunked(path, X, V[:10], executor=ex, progress=False)
    with pytest.raises(ValueError, match="at least one row"):
        predict_proba_chunked(path, X[:0], V[:0], executor=ex, progress=False)
    # the estimators' own refusals (scikit-learn's): another dtype or shape than the model was fitted on
    with pytest.raises(ValueError, match="Complex data not supported: X holds complex numbers"):
        predict_proba_chunked(path, X + 1j, V, executor=ex, progress=False)
    with pytest.raises(TypeError, match="X is a scipy sparse csr_matrix, but sparse input is not supported"):
        predict_proba_chunked(path, sparse.csr_matrix(X), V, executor=ex, progress=False)
    with pytest.raises(TypeError, match="X must be numeric; got text"):
        predict_proba_chunked(path, X.astype(str), V, executor=ex, progress=False)
    with pytest.raises(ValueError, match=r"X must be 2-D \(n_samples, n_features\); got shape \(75,\)\. Reshape your data"):
        predict_proba_chunked(path, X[:, 0], V[:, 0], executor=ex, progress=False)
    for size in (0, 2.5, True):
        with pytest.raises(ValueError, match="chunk_size must be an integer >= 1"):
            predict_proba_chunked(path, X, V, chunk_size=size, executor=ex, progress=False)
    with pytest.raises(TypeError, match="executor must be a gpal.runs.executors.Executor"):
        predict_proba_chunked(path, X, V, executor="local-dask", progress=False)
    with pytest.raises(FileNotFoundError, match="not a saved gpal model"):
        predict_proba_chunked(tmp_path / "nowhere", X, V, executor=ex, progress=False)
    assert CountingExecutor.calls == 0


def test_a_long_fit_traces_its_predictor_beside_the_training_and_a_short_one_does_not():
    """A fit of at least LOOP_MIN_STEPS steps has its predictor traced in a second thread while it trains, so the
    first predict_proba runs the trace it finds; a shorter fit traces nothing it may never use.  Either way the
    probabilities are the same."""
    from gpal import NoisyGPClassifier
    from gpal.training.svi import LOOP_MIN_STEPS

    rng = np.random.default_rng(4)
    X = rng.normal(size=(40, 2))
    y = (X[:, 0] > 0).astype(int)
    V = rng.uniform(0.01, 0.1, X.shape)
    settings = dict(input_noise="latent", num_inducing=5, batch_size=4, n_samples=8, progress=False, random_state=1)
    long = NoisyGPClassifier(epochs=LOOP_MIN_STEPS // 10, **settings).fit(X, y, V)  # 10 batches an epoch
    short = NoisyGPClassifier(epochs=LOOP_MIN_STEPS // 10 - 1, **settings).fit(X, y, V)
    key = ("predict", long._session.input_draws(long.n_samples))
    assert key in long._session.compiled and key not in short._session.compiled
    traced = long._session.compiled[key].func
    assert traced.experimental_get_tracing_count() == 1
    proba = long.predict_proba(X, V)
    assert traced.experimental_get_tracing_count() == 1  # the prediction used the trace made during the fit
    assert np.allclose(proba.sum(axis=1), 1.0) and short.predict_proba(X, V).shape == proba.shape

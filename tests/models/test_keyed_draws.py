"""A probability belongs to its source: the same model gives a row the same probability whatever is predicted with it."""

import numpy as np
import pytest

import gpal.models.chunked
from gpal import NoisyGPClassifier

FAST = dict(num_inducing=8, epochs=5, batch_size=30, learning_rate=0.01, progress=False)


def _problem(n=90, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0.5)
    return X, y, rng.uniform(0.05, 0.5, size=X.shape)


@pytest.fixture(scope="module", params=[
    dict(input_noise="latent", n_samples=40),                 # Monte Carlo over the input noise
    dict(input_noise="none", likelihood="softmax"),           # Monte Carlo over the latent functions
])
def fitted(request):
    X, y, V = _problem()
    return NoisyGPClassifier(random_state=3, **FAST, **request.param).fit(X, y, V), X, V


def test_same_row_same_probability_alone_in_a_batch_shuffled_and_chunked(fitted, monkeypatch):
    """A row's probability does not depend on the other rows of the call.

    Exact-input models compute in float64 and agree to 1e-13.  Sampled inputs run the GP part
    in float32, whose matrix products sum in an order that depends on the batch shape on some
    CPUs (measured: 4.5e-9 apart on this one), so they agree to float32 rounding, 1e-6: still
    four orders below the 1e-2 a position-dependent draw would move a probability.
    """
    clf, X, V = fitted
    atol = 1e-6 if clf.model_.strategy.stochastic_prediction else 1e-13
    full = clf.predict_proba(X, V)
    alone = np.vstack([clf.predict_proba(X[i : i + 1], V[i : i + 1]) for i in (0, 17, 89)])
    np.testing.assert_allclose(alone, full[[0, 17, 89]], rtol=0, atol=atol)
    order = np.random.default_rng(1).permutation(len(X))
    np.testing.assert_allclose(clf.predict_proba(X[order], V[order]), full[order], rtol=0, atol=atol)
    np.testing.assert_allclose(clf.predict_proba(X[40:55], V[40:55]), full[40:55], rtol=0, atol=atol)
    monkeypatch.setattr(gpal.models.chunked, "PREDICT_BUDGET", 7 * clf.n_samples * 9)  # chunks of 7 rows
    np.testing.assert_allclose(clf.predict_proba(X, V), full, rtol=0, atol=atol)



def test_chunks_in_threads_give_the_same_bits(fitted, monkeypatch):
    """Where TensorFlow runs each op on one thread (gpal's commands), chunks run in threads over the cores: each
    chunk's arithmetic is unchanged, so the probabilities are the same bits as one thread's."""
    clf, X, V = fitted
    monkeypatch.setattr(gpal.models.chunked, "PREDICT_BUDGET", 1)  # a row a chunk
    monkeypatch.setattr(gpal.models.chunked, "prediction_threads", lambda: 1)
    one = clf.predict_proba(X, V)
    used = []
    real_pool = gpal.models.chunked.ThreadPoolExecutor
    monkeypatch.setattr(gpal.models.chunked, "ThreadPoolExecutor", lambda **k: used.append(k) or real_pool(**k))
    monkeypatch.setattr(gpal.models.chunked, "prediction_threads", lambda: 3)
    np.testing.assert_array_equal(clf.predict_proba(X, V), one)
    assert used and used[0]["max_workers"] == 3


def test_prediction_threads_follow_tensorflows_op_threads_and_a_schedulers_limit(monkeypatch):
    """One thread where TensorFlow splits ops over its pool (its default); the cores where ops are single-threaded;
    never more than OMP_NUM_THREADS, which a Dask worker's nanny sets to 1."""
    from gpal.models.chunked import prediction_threads

    monkeypatch.setattr(gpal.models.chunked.os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.delenv("TF_NUM_INTRAOP_THREADS", raising=False)
    if gpal.models.chunked.tf.config.threading.get_intra_op_parallelism_threads() in (0, None):
        assert prediction_threads() == 1
    monkeypatch.setenv("TF_NUM_INTRAOP_THREADS", "1")
    if gpal.models.chunked.tf.config.threading.get_intra_op_parallelism_threads() in (0, 1):
        assert prediction_threads() == 4
        monkeypatch.setenv("OMP_NUM_THREADS", "2")
        assert prediction_threads() == 2
        monkeypatch.setenv("OMP_NUM_THREADS", "1")
        assert prediction_threads() == 1

def test_same_probability_after_save_and_load(fitted, tmp_path):
    clf, X, V = fitted
    clf.save(tmp_path / "m")
    np.testing.assert_array_equal(NoisyGPClassifier.load(tmp_path / "m").predict_proba(X[:5], V[:5]),
                                  clf.predict_proba(X[:5], V[:5]))


def test_monte_carlo_error_matches_the_spread_over_independent_draw_streams():
    """The reported error is the spread of independent estimates, on average and row by row: about 95% of
    40 estimates fall within 2 reported errors of their mean.  (It includes the latent draws that go with
    each input draw, nearly the same size for every row here, so a correlation of reported and measured
    errors across rows would measure the noise of 40-estimate spreads rather than the reported error.)"""
    X, y, V = _problem()
    clf = NoisyGPClassifier(input_noise="latent", n_samples=30, random_state=0, **FAST).fit(X, y, V)
    proba, se = clf.predict_proba(X, V, return_mc_error=True)
    np.testing.assert_array_equal(proba, clf.predict_proba(X, V))
    # The prediction stream follows the seed parameter: 40 seeds give 40 independent estimates of each probability.
    estimates = np.stack([clf.set_params(random_state=s).predict_proba(X, V) for s in range(1, 41)])
    clf.set_params(random_state=0)
    spread = estimates.std(axis=0, ddof=1)
    ratio = se.mean() / spread.mean()
    assert 0.8 < ratio < 1.25, ratio
    covered = np.mean(np.abs(estimates - estimates.mean(axis=0)) < 2 * se)
    assert 0.9 < covered < 0.995, covered


def test_exact_input_models_report_zero_monte_carlo_error():
    X, y, V = _problem(40)
    clf = NoisyGPClassifier(input_noise="first_order", **FAST).fit(X, y, V)
    _, se = clf.predict_proba(X, V, return_mc_error=True)
    assert se.shape == (40, 3) and np.all(se == 0)


def test_chunks_shrink_with_the_latent_draws_per_input_draw(monkeypatch):
    """One input draw and 1000 latent draws per source: the chunks hold 1000 latent values per row, not 9."""
    X, y, V = _problem(40)
    clf = NoisyGPClassifier(input_noise="latent", n_samples=1, random_state=0, **FAST).fit(X, y, V)
    seen = []
    original = clf._in_chunks
    monkeypatch.setattr(gpal.models.chunked, "PREDICT_BUDGET", 10_000)
    monkeypatch.setattr(gpal.models.chunked, "prediction_threads", lambda: 1)  # the whole budget for one chunk
    monkeypatch.setattr(clf, "_in_chunks", lambda *a, **k: seen.append(k["latent_draws"]) or original(*a, **k))
    rows = []
    monkeypatch.setattr(clf._session, "predictor", lambda S, f=clf._session.predictor: (
        lambda a, b, seed, g=f(S): rows.append(len(a)) or g(a, b, seed)))
    clf.predict_proba(X, V)
    assert seen == [1000] and max(rows) == 10 and sum(rows) == 40


def test_a_quadrature_likelihood_weighs_its_chunks_and_leaves_the_draws_unchanged(monkeypatch):
    """BALD's draws on a multi-class probit model: each latent draw's p(y | f) is a quadrature holding
    C * (5 C - 1) panels * 8 nodes in C arrays (3 classes: 3 * 14 * 8 * 3 = 1008 values, 336 times a softmax
    draw's 3), so a chunk holds 336 times fewer rows than the draws' count alone gives it; the draws are the same
    whatever the chunks (each chunk on the call's seed)."""
    from gpal.models.chunked import PREDICT_BUDGET

    X, y, V = _problem(60)
    clf = NoisyGPClassifier(input_noise="latent", likelihood="probit", n_samples=4, random_state=0, **FAST).fit(X, y, V)
    likelihood = clf.model_.likelihood
    assert likelihood.values_per_evaluation(3) == 3 * (5 * 3 - 1) * 8 * 3
    rows = []
    original = clf._session.sampler

    def counting(S, K):
        sampler = original(S, K)
        return lambda a, b, seed: rows.append(len(a)) or sampler(a, b, seed)

    monkeypatch.setattr(clf._session, "sampler", counting)
    # one chunk in flight, whatever this worker's TensorFlow pools (the threads share the budget: another test's)
    monkeypatch.setattr(gpal.models.chunked, "prediction_threads", lambda: 1)
    S, K = 20, 16
    weighed = clf.sample_proba(X, V, n_samples=S, input_draws=K)
    assert rows[0] == PREDICT_BUDGET // (S * K * 336) == 2 and sum(rows) == len(X)
    rows.clear()
    monkeypatch.setattr(gpal.models.chunked, "PREDICT_BUDGET", S * K * 336 * len(X))  # one chunk
    # the same draws; a chunk's shape may only reorder a sum's rounding
    np.testing.assert_allclose(clf.sample_proba(X, V, n_samples=S, input_draws=K), weighed, rtol=0, atol=1e-12)
    assert rows == [len(X)]

"""Acquisition functions against hand computations; batch rules; bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gpal.active.acquisition import (
    BALD,
    Discovery,
    LeastConfidence,
    Margin,
    PredictiveEntropy,
    RandomSampling,
    expected_yield,
    greedy_diverse,
    make_acquisition,
    top_k,
)
from gpal.data.dataset import NoisyDataset

PROBA = np.array(
    [
        [1.0, 0.0, 0.0],
        [0.5, 0.5, 0.0],
        [0.2, 0.3, 0.5],
        [1 / 3, 1 / 3, 1 / 3],
        [0.7, 0.2, 0.1],
    ]
)


class FixedModel:
    """Returns fixed probabilities (and Monte Carlo samples); records the inputs it was given."""

    def __init__(self, proba, samples=None):
        self.proba, self.samples, self.calls = proba, samples, []

    def predict_proba(self, X, X_var=None):
        self.calls.append(("predict_proba", np.array(X), None if X_var is None else np.array(X_var)))
        return self.proba

    def sample_proba(self, X, X_var=None, n_samples=100):
        self.calls.append(("sample_proba", np.array(X), None if X_var is None else np.array(X_var)))
        return self.samples


def _pool(n, d=2, seed=0):
    rng = np.random.default_rng(seed)
    return NoisyDataset(X=rng.normal(size=(n, d)), X_var=rng.uniform(0.1, 0.2, size=(n, d)), y=None,
                        class_names=("a", "b", "c"), feature_names=(), ids=[f"s{i}" for i in range(n)])


def _hand_entropy(row):
    return -sum(p * math.log(p) for p in row if p > 0)


def test_entropy_margin_least_confidence_match_hand_computation():
    model, pool = FixedModel(PROBA), _pool(5)
    idx, _ = PredictiveEntropy()(model, pool, n_instances=5)
    expected = {
        "entropy": [_hand_entropy(r) for r in PROBA],
        "margin": [0.0, 1.0, 1 - (0.5 - 0.3), 1.0, 1 - (0.7 - 0.2)],
        "least_confidence": [0.0, 0.5, 0.5, 2 / 3, 0.3],
    }
    for acq in (PredictiveEntropy(), Margin(), LeastConfidence()):
        np.testing.assert_allclose(acq.scores(model, pool), expected[acq.name], atol=1e-12)
    # entropy ranks the uniform row first, the one-hot row last
    assert idx[0] == 3 and idx[-1] == 0


def test_scores_returned_are_those_of_the_chosen_rows_and_variances_travel():
    model, pool = FixedModel(PROBA), _pool(5)
    idx, scores = PredictiveEntropy()(model, pool, n_instances=2)
    np.testing.assert_allclose(scores, [_hand_entropy(PROBA[i]) for i in idx])
    _, X, X_var = model.calls[-1]
    np.testing.assert_array_equal(X, pool.X)
    np.testing.assert_array_equal(X_var, pool.X_var)


def test_bald_is_nonnegative_and_equals_entropy_of_mean_minus_mean_entropy():
    rng = np.random.default_rng(1)
    samples = rng.dirichlet([0.5, 0.5, 0.5], size=(40, 6))  # (S, n, C)
    samples[:, 0, :] = [0.2, 0.3, 0.5]  # every draw agrees: no epistemic uncertainty
    model = FixedModel(samples.mean(axis=0), samples)
    scores = BALD(n_samples=40).scores(model, _pool(6))
    hand = []
    for i in range(6):
        mean = [sum(samples[s, i, c] for s in range(40)) / 40 for c in range(3)]
        hand.append(_hand_entropy(mean) - sum(_hand_entropy(samples[s, i]) for s in range(40)) / 40)
    np.testing.assert_allclose(scores, hand, atol=1e-12)
    assert (scores >= 0).all()
    assert scores[0] == pytest.approx(0.0, abs=1e-12)
    assert model.calls[-1][0] == "sample_proba" and model.calls[-1][2] is not None


def test_bald_needs_sample_proba():
    class NoSamples:
        def predict_proba(self, X, X_var=None):
            return PROBA

    with pytest.raises(TypeError, match="sample_proba"):
        BALD()(NoSamples(), _pool(5))


def test_top_k_picks_the_k_largest_best_first():
    scores = np.random.default_rng(2).random(50)
    idx = top_k(scores, 7)
    assert set(idx) == set(np.argsort(scores)[-7:])
    assert np.all(np.diff(scores[idx]) <= 0)


def test_diverse_batch_has_no_duplicates_and_spreads_over_clusters():
    rng = np.random.default_rng(3)
    # cluster A (scores 0.9-1.0) and cluster B far away (scores 0.8-0.85): top-k takes only A
    A = rng.normal(0.0, 0.01, size=(10, 2))
    B = rng.normal(10.0, 0.01, size=(10, 2))
    X = np.vstack([A, B])
    scores = np.concatenate([rng.uniform(0.9, 1.0, 10), rng.uniform(0.8, 0.85, 10)])
    assert set(top_k(scores, 2)) <= set(range(10))
    picked = greedy_diverse(scores, X, 2)
    assert {int(picked[0]) < 10, int(picked[1]) < 10} == {True, False}
    everything = greedy_diverse(scores, X, 20)
    assert sorted(everything.tolist()) == list(range(20))
    with pytest.raises(ValueError, match="batch of 21 from 20"):
        greedy_diverse(scores, X, 21)


def test_diverse_rule_through_an_acquisition():
    pool = _pool(30)
    model = FixedModel(np.tile(PROBA[3], (30, 1)))  # all tie: diversity decides
    idx, scores = PredictiveEntropy(batch="diverse")(model, pool, n_instances=5)
    assert len(set(idx.tolist())) == 5 and scores.shape == (5,)
    gaps = [np.linalg.norm(pool.X[a] - pool.X[b]) for a in idx for b in idx if a < b]
    top = PredictiveEntropy()(model, pool, n_instances=5)[0]
    top_gaps = [np.linalg.norm(pool.X[a] - pool.X[b]) for a in top for b in top if a < b]
    assert min(gaps) > min(top_gaps)


def test_random_depends_only_on_seed_and_pool_size():
    pool = _pool(20)
    a = RandomSampling(seed=4)(None, pool, 5)[0]
    assert np.array_equal(a, RandomSampling(seed=4)(None, pool, 5)[0])
    assert not np.array_equal(a, RandomSampling(seed=5)(None, pool, 5)[0])


def test_pool_smaller_than_batch_is_a_clear_error():
    with pytest.raises(ValueError, match="pool of 5.*smaller than the batch"):
        PredictiveEntropy()(FixedModel(PROBA), _pool(5), n_instances=6)


def test_make_acquisition_round_trips_config_and_rejects_unknown():
    acq = make_acquisition({"name": "bald", "n_samples": 7, "batch": "diverse"})
    assert isinstance(acq, BALD) and make_acquisition(acq.config()).config() == acq.config()
    with pytest.raises(ValueError, match="unknown acquisition 'entropie'"):
        make_acquisition("entropie")
    with pytest.raises(ValueError, match="batch must be one of"):
        PredictiveEntropy(batch="kmeans")


# ------------------------------------------------------------------ discovery
def test_discovery_ranks_by_target_probability_and_explores_with_the_spread():
    model, pool = FixedModel(PROBA), _pool(5)
    model.classes_ = np.array(["a", "b", "c"])
    idx, scores = Discovery(target="c")(model, pool, n_instances=3)
    assert idx.tolist() == [2, 3, 4] and np.allclose(scores, [0.5, 1 / 3, 0.1])
    # with exploration the score is p + beta * sd over the joint draws, the sd taken per source
    samples = np.stack([PROBA, PROBA]).copy()
    samples[0, 4], samples[1, 4] = [0.0, 0.0, 1.0], [0.4, 0.4, 0.2]  # source 4: p_c draws 1.0 and 0.2, sd 0.4
    model.samples = samples
    idx, scores = Discovery(target="c", exploration=1.5, n_samples=2)(model, pool, n_instances=1)
    assert idx.tolist() == [4] and scores[0] == pytest.approx(0.1 + 1.5 * 0.4)  # beats source 2's 0.5
    assert make_acquisition(Discovery("c", exploration=1.0).config()).config() == Discovery("c", exploration=1.0).config()


def test_discovery_names_an_unknown_target_and_bad_settings():
    model = FixedModel(PROBA)
    model.classes_ = np.array(["bll", "fsrq", "pulsar"])
    with pytest.raises(ValueError, match=r"discovery target 'msp' is not a class of the model; its classes are \['bll', 'fsrq', 'pulsar'\]"):
        Discovery(target="msp")(model, _pool(5), n_instances=1)
    with pytest.raises(ValueError, match="exploration must be a number >= 0"):
        Discovery(target="pulsar", exploration=-1)
    with pytest.raises(ValueError, match="cannot query 6 source"):
        Discovery(target="pulsar")(model, _pool(5), n_instances=6)


def test_expected_yield_is_the_poisson_binomial_checked_by_simulation():
    p = np.array([0.9, 0.8, 0.5, 0.3, 0.05, 0.6, 0.7])
    result = expected_yield(p)
    assert result["expected"] == pytest.approx(p.sum()) and result["sd"] == pytest.approx(np.sqrt(np.sum(p * (1 - p))))
    draws = (np.random.default_rng(0).random((200_000, p.size)) < p).sum(axis=1)  # independent Monte Carlo
    assert draws.mean() == pytest.approx(result["expected"], abs=0.01)
    assert np.mean((draws >= result["low"]) & (draws <= result["high"])) >= 0.95
    # the interval is the narrowest central one: shrinking either end drops below 95% coverage on one side
    assert np.mean(draws < result["low"]) <= 0.025 and np.mean(draws > result["high"]) <= 0.025
    assert np.mean(draws <= result["low"]) > 0.025 and np.mean(draws >= result["high"]) > 0.025
    certain = expected_yield([1.0, 1.0, 0.0])
    assert (certain["low"], certain["high"], certain["sd"]) == (2, 2, 0.0)
    with pytest.raises(ValueError, match="probabilities in \\[0, 1\\]"):
        expected_yield([0.5, 1.2])

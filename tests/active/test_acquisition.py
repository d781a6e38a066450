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

    def sample_proba(self, X, X_var=None, n_samples=100, input_draws=None):
        self.calls.append(("sample_proba", np.array(X), None if X_var is None else np.array(X_var)))
        return self.samples


class JointModel(FixedModel):
    def sample_joint_proba(self, X, X_var=None, n_samples=100):
        self.calls.append(("sample_joint_proba", np.array(X), None if X_var is None else np.array(X_var)))
        return self.joint(np.asarray(X))


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


def test_bald_about_a_target_is_the_information_of_target_or_not():
    """With a target, y becomes [y = target]: binary entropies of p_target, computed here by hand."""
    rng = np.random.default_rng(2)
    samples = rng.dirichlet([0.5, 0.5, 0.5], size=(30, 5))  # (S, n, C)
    samples[:, 1, :] = samples[:, 1, [0]] * [1.0, 0.0, 0.0] + [0.0, 0.5, 0.5] * (1 - samples[:, 1, [0]])
    samples[:, 2, :] = [0.1, 0.45, 0.45]  # draws disagree on nothing
    samples[:, 3, 0] = 0.2  # draws agree on the target, disagree on the others
    samples[:, 3, 1] = rng.uniform(0, 0.8, size=30)
    samples[:, 3, 2] = 0.8 - samples[:, 3, 1]
    model = FixedModel(samples.mean(axis=0), samples)
    model.classes_ = np.array(["a", "b", "c"])

    def binary(p):
        return _hand_entropy([p, 1 - p])

    scores = BALD(n_samples=30, target="a").scores(model, _pool(5))
    hand = [binary(sum(samples[s, i, 0] for s in range(30)) / 30) - sum(binary(samples[s, i, 0]) for s in range(30)) / 30
            for i in range(5)]
    np.testing.assert_allclose(scores, hand, atol=1e-12)
    assert scores[2] == pytest.approx(0.0, abs=1e-12) and scores[3] == pytest.approx(0.0, abs=1e-12)
    assert BALD(n_samples=30).scores(model, _pool(5))[3] > 0.05  # about every class, source 3 still teaches
    with pytest.raises(ValueError, match=r"bald target 'psr' is not a class of the model; its classes are \['a', 'b', 'c'\]"):
        BALD(target="psr").scores(model, _pool(5))
    assert make_acquisition(BALD(target="a").config()).config() == BALD(target="a").config()


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
    with pytest.raises(ValueError, match="exploration must be a finite number >= 0"):
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


# ----------------------------------------------------------------------- EPIG
def _brute_force_epig(P, Q):
    """Mutual information I[y; y*] from the joint table, term by term, averaged over the targets."""
    S, N, C = P.shape
    out = []
    for n in range(N):
        total = 0.0
        for m in range(Q.shape[1]):
            joint = np.zeros((C, C))
            for s in range(S):
                joint += np.outer(P[s, n], Q[s, m]) / S
            p, q = joint.sum(axis=1), joint.sum(axis=0)
            total += sum(joint[a, b] * math.log(joint[a, b] / (p[a] * q[b]))
                         for a in range(C) for b in range(C) if joint[a, b] > 0)
        out.append(total / Q.shape[1])
    return np.array(out)


def test_epig_scores_equal_the_mutual_information_of_the_joint_table():
    from gpal.active.acquisition import epig_scores

    rng = np.random.default_rng(3)
    P, Q = rng.dirichlet([0.7] * 3, size=(25, 7)), rng.dirichlet([0.7] * 3, size=(25, 4))
    P[:, 0] = [0.2, 0.3, 0.5]  # a pool source every draw agrees on tells nothing about any target
    scores = epig_scores(P, Q)
    np.testing.assert_allclose(scores, _brute_force_epig(P, Q), atol=1e-12)
    assert scores[0] == pytest.approx(0.0, abs=1e-12) and (scores >= 0).all()
    np.testing.assert_allclose(epig_scores(P, Q, max_bytes=1), scores, atol=1e-14)  # chunking changes nothing
    # a pool source whose label decides the target's (identical draws, deterministic labels) carries all of H[y*]
    hard = np.zeros((2, 1, 2))
    hard[0, 0], hard[1, 0] = [1, 0], [0, 1]
    assert epig_scores(hard, hard)[0] == pytest.approx(math.log(2))
    with pytest.raises(ValueError, match="must share S and C"):
        epig_scores(P, Q[:10])


def test_epig_prefers_the_pool_source_whose_draws_move_with_the_targets():
    from gpal.active.acquisition import EPIG

    rng = np.random.default_rng(4)
    S = 200
    flip = rng.random(S) < 0.5  # one posterior "coin": which class the left region belongs to

    def joint(X):  # sources with x0 < 0 follow the coin; others are uncertain on their own (independent draws)
        out = np.empty((S, X.shape[0], 3))
        for n, x in enumerate(X):
            if x[0] < 0:
                out[:, n] = np.where(flip[:, None], [0.9, 0.05, 0.05], [0.05, 0.9, 0.05])
            else:
                own = np.random.default_rng(int(abs(x[1]) * 1e6)).random(S) < 0.5
                out[:, n] = np.where(own[:, None], [0.9, 0.05, 0.05], [0.05, 0.9, 0.05])
        return out

    pool = _pool(6)
    pool.X[:, 0] = [1, 1, -1, 1, 1, 1]
    target = np.array([[-2.0, 0.3], [-3.0, 0.1]])
    model = JointModel(None)
    model.joint = joint
    idx, scores = EPIG(target=target, n_samples=S)(model, pool, n_instances=1)
    assert idx.tolist() == [2] and scores[0] > 0.3  # BALD would tie it with the other, equally uncertain sources
    assert EPIG(target=target).config()["target"]["n"] == 2
    assert make_acquisition({"name": "epig", "n_target": 5}).config()["n_target"] == 5
    with pytest.raises(ValueError, match="target must be a NoisyDataset or a non-empty finite"):
        EPIG(target=np.zeros((0, 2)))
    with pytest.raises(TypeError, match="sample_joint_proba"):
        EPIG()(FixedModel(PROBA), _pool(5))


# ------------------------------------------------------------- batch rules
def test_power_sample_draws_in_proportion_to_score_to_the_beta():
    from gpal.active.acquisition import power_sample

    scores = np.array([1.0, 2.0, 3.0, 4.0, 0.0])
    rng = np.random.default_rng(5)
    firsts = np.bincount([power_sample(scores, 1, 1.0, rng)[0] for _ in range(20_000)], minlength=5) / 20_000
    np.testing.assert_allclose(firsts, scores / scores.sum(), atol=0.012)  # Gumbel-top-1 = categorical(s / sum s)
    squared = np.bincount([power_sample(scores, 1, 2.0, rng)[0] for _ in range(20_000)], minlength=5) / 20_000
    np.testing.assert_allclose(squared, scores**2 / np.sum(scores**2), atol=0.012)
    batch = power_sample(scores, 5, 1.0, rng)
    assert sorted(batch.tolist()) == [0, 1, 2, 3, 4] and batch[-1] == 4  # no repeats; the zero score comes last
    with pytest.raises(ValueError, match="non-negative"):
        power_sample(-scores, 1, 1.0, rng)


def test_stochastic_batches_are_seeded_by_pool_size_and_recorded_in_the_config():
    model, pool = FixedModel(PROBA), _pool(5)
    acq = PredictiveEntropy(batch="stochastic", beta=3.0, batch_seed=7)
    first, again = acq(model, pool, n_instances=3)[0], acq(model, pool, n_instances=3)[0]
    assert first.tolist() == again.tolist() and len(set(first.tolist())) == 3
    assert acq.config() == {"name": "entropy", "batch": "stochastic", "lengthscale": None, "beta": 3.0, "batch_seed": 7}
    assert "beta" not in PredictiveEntropy().config()  # top-k batches do not depend on it
    with pytest.raises(ValueError, match="beta must be a finite number >= 0"):
        PredictiveEntropy(beta=-1.0)


def test_balance_weights_scores_towards_the_target_class_mix():
    model, pool = FixedModel(PROBA), _pool(5)
    model.classes_ = np.array([0, 1, 2])
    acq = PredictiveEntropy(balance=True)
    np.testing.assert_allclose(acq.class_weights(model, pool), 1.0)  # nothing known about the labelled set yet
    acq.observe_labelled([2] * 8 + [0])  # labelled set full of class 2
    w = acq.class_weights(model, pool)
    from gpal.evaluation.prior_shift import estimate_target_prior

    labelled = np.array([2.0, 1.0, 9.0]) / 12.0  # counts + 1 each
    target = estimate_target_prior(PROBA, labelled).prior
    np.testing.assert_allclose(w, PROBA @ (target / labelled), atol=1e-12)  # independent recomputation
    assert w[0] > w[2]  # a likely class-0 source moves the mix towards the target more than a likely class-2 one
    idx, scores = acq(model, pool, n_instances=5)
    np.testing.assert_allclose(scores, (PredictiveEntropy().scores(model, pool) * w)[idx], atol=1e-12)
    assert acq.config()["balance"] is True and "balance" not in PredictiveEntropy().config()

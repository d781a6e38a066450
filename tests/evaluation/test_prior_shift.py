"""Label-shift EM, checked on classes with known densities, where the exact posteriors are known."""

import numpy as np
import pytest
from scipy.stats import norm

from gpal.evaluation.prior_shift import PriorShiftResult, adjust_to_prior, estimate_target_prior

# Unit-variance Gaussian classes 3 sd apart: overlapping enough for EM to matter, separated
# enough that the EM estimate's standard error is within 1.2x of counting the labels
# (from the Fisher information of the mixture weights), so 4 binomial SEs is >3 true SEs.
MEANS = np.array([-3.0, 0.0, 3.0])
SOURCE = np.array([0.5, 0.3, 0.2])
TARGET = np.array([0.2, 0.3, 0.5])


def _posterior(x, prior):
    joint = norm.pdf(x[:, None], MEANS[None], 1.0) * prior
    return joint / joint.sum(axis=1, keepdims=True)


def _sample(prior, n, seed):
    rng = np.random.default_rng(seed)
    y = rng.choice(prior.size, size=n, p=prior)
    return rng.normal(MEANS[y], 1.0), y


def _nll(p, y):
    return -np.mean(np.log(p[np.arange(y.size), y]))


def test_em_recovers_the_target_prior_and_posteriors():
    n = 20000
    x, y = _sample(TARGET, n, seed=0)
    source_posterior = _posterior(x, SOURCE)
    result = estimate_target_prior(source_posterior, SOURCE)
    assert isinstance(result, PriorShiftResult) and result.converged and result.n_iter > 1
    binomial_se = np.sqrt(TARGET * (1 - TARGET) / n)
    assert np.all(np.abs(result.prior - TARGET) < 4 * binomial_se), (result.prior, binomial_se)
    # The adjusted probabilities are the exact posteriors under the estimated prior ...
    np.testing.assert_allclose(result.proba, _posterior(x, result.prior), rtol=0, atol=1e-12)
    # ... and so within the prior error of the exact posteriors under the true target prior:
    # p_c changes by a factor within exp(+-spread) of the log prior ratios.
    log_ratio = np.log(result.prior / TARGET)
    bound = np.expm1(log_ratio.max() - log_ratio.min())
    assert np.max(np.abs(result.proba - _posterior(x, TARGET))) <= bound
    # On the true labels the adjustment pays off (by ~0.03 nats here) and, the prior error being
    # second order in the NLL, scores within 1e-4 nats of knowing the target prior.
    assert _nll(result.proba, y) < _nll(source_posterior, y)
    assert abs(_nll(result.proba, y) - _nll(_posterior(x, TARGET), y)) < 1e-4


def test_the_result_is_a_fixed_point_of_the_em_update():
    x, _ = _sample(TARGET, 3000, seed=1)
    tol = 1e-8
    result = estimate_target_prior(_posterior(x, SOURCE), SOURCE, tol=tol)
    assert result.converged
    np.testing.assert_allclose(result.proba.mean(axis=0), result.prior, rtol=0, atol=tol)
    np.testing.assert_allclose(adjust_to_prior(_posterior(x, SOURCE), SOURCE, result.prior), result.proba,
                               rtol=0, atol=1e-15)
    assert result.prior.sum() == pytest.approx(1.0, abs=1e-15)


def test_no_shift_to_find_leaves_the_probabilities_unchanged():
    # When the mean prediction already equals the source prior, EM stops at once.
    x, _ = _sample(SOURCE, 500, seed=2)
    p = _posterior(x, SOURCE)
    prior = p.mean(axis=0)
    result = estimate_target_prior(p, prior)
    assert result.converged and result.n_iter == 1
    np.testing.assert_allclose(result.prior, prior, rtol=0, atol=1e-15)
    np.testing.assert_allclose(result.proba, p, rtol=0, atol=1e-15)


def test_adjusting_to_the_source_prior_is_the_identity():
    x, _ = _sample(SOURCE, 50, seed=3)
    p = _posterior(x, SOURCE)
    np.testing.assert_allclose(adjust_to_prior(p, SOURCE, SOURCE), p, rtol=0, atol=1e-15)


def test_adjust_to_prior_is_bayes_rule():
    x, _ = _sample(SOURCE, 50, seed=4)
    np.testing.assert_allclose(adjust_to_prior(_posterior(x, SOURCE), SOURCE, TARGET), _posterior(x, TARGET),
                               rtol=0, atol=1e-12)


def test_stopping_early_is_reported():
    x, _ = _sample(TARGET, 2000, seed=5)
    result = estimate_target_prior(_posterior(x, SOURCE), SOURCE, max_iter=2)
    assert not result.converged and result.n_iter == 2


def test_result_cannot_be_changed():
    result = estimate_target_prior(np.array([[0.9, 0.1], [0.2, 0.8]]), np.array([0.5, 0.5]))
    with pytest.raises(ValueError):
        result.prior[0] = 0.3
    with pytest.raises(AttributeError):
        result.n_iter = 0


@pytest.mark.parametrize("prior, message", [
    (np.array([0.5, 0.5]), "one entry per class"),
    (np.array([0.6, 0.6, -0.2]), "positive and sum to 1"),
    (np.array([0.5, 0.3, 0.3]), "positive and sum to 1"),
    (np.array([1.0, 0.0, 0.0]), "positive and sum to 1"),
])
def test_bad_priors_are_named(prior, message):
    with pytest.raises(ValueError, match=message):
        estimate_target_prior(np.full((4, 3), 1 / 3), prior)
    with pytest.raises(ValueError, match="target_prior (must have|must be) .*" + message.split()[-1]):
        adjust_to_prior(np.full((4, 3), 1 / 3), SOURCE, prior)


@pytest.mark.parametrize("proba, message", [
    (np.full((4,), 0.5), r"non-empty \(n, C\)"),
    (np.full((4, 3), np.nan), "finite probabilities"),
    (np.full((4, 3), -0.1), "finite probabilities"),
    (np.zeros((4, 3)), "positive probability"),
])
def test_bad_probabilities_are_named(proba, message):
    with pytest.raises(ValueError, match=message):
        estimate_target_prior(proba, SOURCE)


@pytest.mark.parametrize("kwargs, message", [({"tol": 0.0}, "tol"), ({"max_iter": 0}, "max_iter")])
def test_bad_settings_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        estimate_target_prior(np.full((4, 3), 1 / 3), SOURCE, **kwargs)


def test_a_held_class_keeps_its_share_and_the_rest_is_the_constrained_maximum_likelihood():
    """With class 1 held at its source share, EM's fixed point maximises the pool's likelihood over the other
    shares (summing to 1 - the held share): checked against a direct numerical maximisation."""
    from scipy.optimize import minimize_scalar

    x, _ = _sample(TARGET, 5000, seed=6)
    p = _posterior(x, SOURCE)
    held = np.array([False, True, False])
    result = estimate_target_prior(p, SOURCE, held=held)
    assert result.converged and result.prior[1] == pytest.approx(SOURCE[1], abs=1e-12)
    free = 1.0 - SOURCE[1]
    likelihood = p / SOURCE  # p(x | y) up to a factor per row, which the maximisation does not see

    def loss(a):
        prior = np.array([a, SOURCE[1], free - a])
        return -np.log(likelihood @ prior).sum()

    best = minimize_scalar(loss, bounds=(1e-9, free - 1e-9), method="bounded", options={"xatol": 1e-10})
    assert result.prior[0] == pytest.approx(best.x, abs=1e-5)
    np.testing.assert_allclose(result.proba, adjust_to_prior(p, SOURCE, result.prior), atol=1e-12)


@pytest.mark.parametrize("held, message", [(np.array([True, True, True]), "no share is left"),
                                           (np.array([1, 0, 0]), "boolean mask"), (np.array([True]), "one entry")])
def test_a_bad_held_mask_is_named(held, message):
    with pytest.raises(ValueError, match=message):
        estimate_target_prior(np.full((4, 3), 1 / 3), SOURCE, held=held)

"""Label-shift EM: recovering a known target prior from exact posteriors of a known model."""

import numpy as np
import pytest
from scipy.stats import norm

from gpal.prior_shift import adjust_to_prior, estimate_target_prior

MEANS = np.array([-1.5, 0.0, 1.5])


def _posterior(x, prior):
    joint = norm.pdf(x[:, None], MEANS[None], 1.0) * prior
    return joint / joint.sum(axis=1, keepdims=True)


def test_em_recovers_the_target_prior_and_the_target_posteriors():
    source, target = np.array([0.5, 0.3, 0.2]), np.array([0.2, 0.3, 0.5])
    rng = np.random.default_rng(0)
    n = 20000
    y = rng.choice(3, size=n, p=target)
    x = rng.normal(MEANS[y], 1.0)
    result = estimate_target_prior(_posterior(x, source), source)
    assert result.converged
    binomial_se = np.sqrt(target * (1 - target) / n)
    # EM has more variance than counting labels (overlapping classes): allow 4 SE of a 3x inflated binomial.
    assert np.all(np.abs(result.prior - target) < 4 * 3 * binomial_se), result.prior
    np.testing.assert_allclose(result.proba, _posterior(x, result.prior), atol=1e-10)
    np.testing.assert_allclose(result.prior, result.proba.mean(axis=0), atol=1e-7)  # the fixed point


def test_no_shift_leaves_probabilities_unchanged():
    source = np.array([0.5, 0.3, 0.2])
    rng = np.random.default_rng(1)
    p = _posterior(rng.normal(size=50), source)
    np.testing.assert_allclose(adjust_to_prior(p, source, source), p, atol=1e-15)


@pytest.mark.parametrize("prior, message", [
    (np.array([0.5, 0.5]), "one entry per class"),
    (np.array([0.6, 0.6, -0.2]), "positive and sum to 1"),
])
def test_bad_priors_are_named(prior, message):
    with pytest.raises(ValueError, match=message):
        estimate_target_prior(np.full((4, 3), 1 / 3), prior)

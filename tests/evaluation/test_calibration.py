"""gpal.evaluation.calibration against loop implementations of the definitions, hand-computed cases and scikit-learn."""

import numpy as np
import pytest
from sklearn.metrics import brier_score_loss

from gpal.evaluation.calibration import (
    MILIOS_2018_ECE,
    calibrated_ece,
    resampled_calibration_errors,
    brier_score,
    class_reliability,
    classwise_ece,
    expected_calibration_error,
    maximum_calibration_error,
    reliability_bins,
    top_label_reliability,
)

# Four points, three classes; the top-label confidences are 0.9, 0.8, 0.4, 0.5.
Y = np.array([0, 1, 0, 2])
P = np.array(
    [
        [0.9, 0.05, 0.05],  # right
        [0.8, 0.1, 0.1],  # wrong
        [0.4, 0.3, 0.3],  # right
        [0.2, 0.5, 0.3],  # wrong; 0.5 lies on the edge between two bins of width 0.5
    ]
)


def loop_ece(scores, outcomes, n_bins, strategy="uniform"):
    """ECE straight from eq. 1 of Milios et al.: bins (a, b] (the first closed), or equal-count groups."""
    n = len(scores)
    if strategy == "uniform":
        groups = []
        for m in range(n_bins):
            lo, hi = m / n_bins, (m + 1) / n_bins
            groups.append([i for i in range(n) if (lo < scores[i] <= hi) or (m == 0 and scores[i] == 0)])
    else:
        order = sorted(range(n), key=lambda i: scores[i])
        groups, start = [], 0
        for m in range(n_bins):
            size = n // n_bins + (1 if m < n % n_bins else 0)
            groups.append(order[start : start + size])
            start += size
    total, gaps = 0.0, []
    for members in groups:
        if members:
            acc = sum(outcomes[i] for i in members) / len(members)
            conf = sum(scores[i] for i in members) / len(members)
            total += len(members) / n * abs(acc - conf)
            gaps.append(abs(acc - conf))
    return total, max(gaps)


def draw_labels(rng, p):
    """One label per row drawn from that row's probabilities."""
    return (rng.random(len(p))[:, None] > np.cumsum(p, axis=1)).sum(axis=1).clip(max=p.shape[1] - 1)


def test_ece_and_mce_hand_computed():
    # bin (0, 0.5]: confidences 0.4, 0.5, one right -> |0.5 - 0.45| = 0.05, weight 1/2
    # bin (0.5, 1]: confidences 0.9, 0.8, one right -> |0.5 - 0.85| = 0.35, weight 1/2
    assert expected_calibration_error(Y, P, n_bins=2) == pytest.approx(0.5 * 0.05 + 0.5 * 0.35, abs=1e-12)
    assert maximum_calibration_error(Y, P, n_bins=2) == pytest.approx(0.35, abs=1e-12)
    bins = top_label_reliability(Y, P, n_bins=2)
    np.testing.assert_array_equal(bins.counts, [2, 2])
    np.testing.assert_allclose(bins.confidence, [0.45, 0.85])
    np.testing.assert_allclose(bins.accuracy, [0.5, 0.5])
    np.testing.assert_allclose(bins.edges, [0.0, 0.5, 1.0])


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
@pytest.mark.parametrize("n_bins", [1, 7, 15])
def test_ece_matches_loop_implementation(strategy, n_bins):
    rng = np.random.default_rng(n_bins)
    p = rng.dirichlet(np.full(4, 0.7), size=301)
    y = rng.integers(0, 4, size=301)
    conf = p.max(axis=1)
    right = (p.argmax(axis=1) == y).astype(int)
    expected_ece, expected_mce = loop_ece(list(conf), list(right), n_bins, strategy)
    assert expected_calibration_error(y, p, n_bins, strategy) == pytest.approx(expected_ece, abs=1e-12)
    assert maximum_calibration_error(y, p, n_bins, strategy) == pytest.approx(expected_mce, abs=1e-12)


def test_scores_on_bin_edges_go_to_the_bin_they_close():
    scores = np.array([0.0, 0.1, 0.2, 0.3, 0.7, 1.0])
    bins = reliability_bins(scores, np.ones(6), n_bins=10)
    # (0, 0.1] holds 0 and 0.1; 0.2 closes (0.1, 0.2]; 0.3 closes (0.2, 0.3]; ...
    np.testing.assert_array_equal(bins.counts, [2, 1, 1, 0, 0, 0, 1, 0, 0, 1])
    assert bins.ece == pytest.approx(loop_ece(list(scores), [1] * 6, 10)[0], abs=1e-12)


def test_classwise_ece_is_mean_of_per_class_loop_ece():
    rng = np.random.default_rng(7)
    p = rng.dirichlet(np.ones(3), size=200)
    y = rng.integers(0, 3, size=200)
    per_class = [loop_ece(list(p[:, c]), list((y == c).astype(int)), 10)[0] for c in range(3)]
    assert classwise_ece(y, p, n_bins=10) == pytest.approx(np.mean(per_class), abs=1e-12)
    assert class_reliability(y, p, 2, n_bins=10).ece == pytest.approx(per_class[2], abs=1e-12)


def test_calibrated_predictions_have_small_ece_and_overconfident_ones_large():
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(3), size=40_000)
    y = draw_labels(rng, p)  # labels drawn from the predicted probabilities: calibrated by construction
    sharp = p**3 / np.sum(p**3, axis=1, keepdims=True)  # same ranking, over-confident
    for strategy in ("uniform", "quantile"):
        assert expected_calibration_error(y, p, 10, strategy) < 0.01
        assert classwise_ece(y, p, 10, strategy) < 0.01
        assert expected_calibration_error(y, sharp, 10, strategy) > 0.1
        assert classwise_ece(y, sharp, 10, strategy) > 0.05
    bins = top_label_reliability(y, sharp, 10)
    filled = bins.counts > 0
    assert np.all(bins.accuracy[filled] <= bins.confidence[filled] + 0.01)  # below the diagonal


@pytest.mark.parametrize("seed", range(5))
def test_mce_is_at_least_ece(seed):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.full(3, 0.3), size=97)
    y = rng.integers(0, 3, size=97)
    for strategy in ("uniform", "quantile"):
        assert maximum_calibration_error(y, p, 8, strategy) >= expected_calibration_error(y, p, 8, strategy)


@pytest.mark.parametrize("n", [10, 1003, 1009])
def test_equal_mass_bins_have_equal_counts(n):
    rng = np.random.default_rng(n)
    scores = np.round(rng.beta(5, 1, size=n), 2)  # many ties
    bins = reliability_bins(scores, rng.integers(0, 2, size=n), n_bins=10, strategy="quantile")
    assert bins.counts.sum() == n
    assert bins.counts.max() - bins.counts.min() <= 1
    assert np.all(np.diff(bins.edges) >= 0)
    assert bins.edges[0] == scores.min() and bins.edges[-1] == scores.max()


def test_empty_uniform_bins_are_nan_and_ignored():
    bins = reliability_bins(np.array([0.95, 0.97]), np.array([1, 0]), n_bins=10)
    assert bins.counts.sum() == 2 and bins.counts[-1] == 2
    assert np.isnan(bins.confidence[:-1]).all() and np.isnan(bins.accuracy[:-1]).all()
    assert bins.ece == pytest.approx(abs(0.5 - 0.96))
    assert bins.mce == pytest.approx(abs(0.5 - 0.96))


def test_brier_binary_matches_sklearn():
    rng = np.random.default_rng(1)
    p1 = rng.random(500)
    y = rng.integers(0, 2, size=500)
    # scikit-learn's binary Brier scores the positive class only: half the two-class sum.
    assert brier_score(y, np.column_stack([1 - p1, p1])) == pytest.approx(2 * brier_score_loss(y, p1), rel=1e-12)


def test_brier_three_classes_hand_computed():
    p = np.array([[0.7, 0.2, 0.1], [0.1, 0.6, 0.3]])
    y = np.array([0, 2])
    # (0.3^2 + 0.2^2 + 0.1^2) = 0.14 and (0.1^2 + 0.6^2 + 0.7^2) = 0.86
    assert brier_score(y, p) == pytest.approx((0.14 + 0.86) / 2, abs=1e-12)
    assert brier_score(np.array([1]), np.array([[0.0, 1.0, 0.0]])) == 0.0
    assert brier_score(np.array([0]), np.array([[0.0, 1.0, 0.0]])) == pytest.approx(2.0)


@pytest.mark.parametrize(
    "y, p, error, match",
    [
        (Y, np.vstack([[1.2, -0.1, -0.1], P[1:]]), ValueError, "must lie in \\[0, 1\\]"),
        (Y, P[:, :2], ValueError, "sum to 1"),
        (Y[:3], P, ValueError, "3 labels but proba has 4 rows"),
        (np.array([0, 1, 0, 3]), P, ValueError, "codes must lie in \\[0, 3\\)"),
        (np.array([0, 1, 0, -1]), P, ValueError, "codes must lie"),
        (Y.astype(float), P, TypeError, "integer class codes"),
        (Y, P[:, 0], ValueError, "column_stack"),
        (Y, np.where(np.eye(4, 3) > 0, np.nan, P), ValueError, "NaN"),
        (Y[:0], P[:0], ValueError, "at least one row"),
    ],
)
def test_bad_inputs_raise_clear_errors(y, p, error, match):
    for fn in (expected_calibration_error, classwise_ece, brier_score):
        with pytest.raises(error, match=match):
            fn(y, p)


def test_bad_binning_arguments_raise():
    with pytest.raises(ValueError, match="n_bins must be a positive integer"):
        expected_calibration_error(Y, P, n_bins=0)
    with pytest.raises(ValueError, match="strategy must be 'uniform'"):
        expected_calibration_error(Y, P, strategy="kmeans")
    with pytest.raises(ValueError, match="at least n_bins=10 points"):
        expected_calibration_error(Y, P, n_bins=10, strategy="quantile")
    with pytest.raises(ValueError, match="cls must be a class code"):
        class_reliability(Y, P, 3)
    with pytest.raises(ValueError, match="outcomes must be 0/1"):
        reliability_bins(np.array([0.2, 0.4]), np.array([0, 2]))


def test_resampled_calibration_errors_equal_the_ece_of_each_resample():
    """The one-count form of the bootstrap's ECE against the ECE computed on each resample itself."""
    rng = np.random.default_rng(7)
    proba = rng.dirichlet([0.7, 0.7, 0.7], size=120)
    proba[:5] = [1.0, 0.0, 0.0]  # confidence exactly 1: the last bin's closing edge
    y = rng.integers(0, 3, size=120)
    index = rng.integers(0, 120, size=(50, 120))
    expected = [expected_calibration_error(y[i], proba[i], n_bins=7) for i in index]
    np.testing.assert_allclose(resampled_calibration_errors(y, proba, index, n_bins=7), expected, rtol=1e-12,
                               atol=1e-15)


def test_calibrated_ece_of_equal_confidences_is_the_binomial_mean_absolute_deviation():
    """n predictions all of confidence c, one bin: E|Binomial(n, c) - n c| / n, from scipy's pmf."""
    from scipy.stats import binom

    for n, c in ((1, 0.7), (37, 0.9), (200, 0.55)):
        proba = np.tile([c, 1 - c], (n, 1))
        k = np.arange(n + 1)
        expected = np.sum(binom.pmf(k, n, c) * np.abs(k - n * c)) / n
        assert calibrated_ece(proba, n_bins=1) == pytest.approx(expected, rel=1e-10)


def test_calibrated_ece_is_the_mean_ece_of_calibrated_outcomes():
    """Monte Carlo: labels drawn from the probabilities themselves (a calibrated model), the ECE averaged."""
    rng = np.random.default_rng(3)
    proba = rng.dirichlet([0.5, 0.5, 0.5], size=150)
    draws = np.array([expected_calibration_error(draw_labels(rng, proba), proba, n_bins=10) for _ in range(2000)])
    exact = calibrated_ece(proba, n_bins=10)
    assert abs(draws.mean() - exact) < 4 * draws.std() / np.sqrt(draws.size)
    # nothing is miscalibrated, yet the ECE is far from 0: the bias the floor measures
    assert exact > 0.03


def test_calibrated_ece_vanishes_for_sure_predictions_and_shrinks_with_more_sources():
    assert calibrated_ece(np.tile([1.0, 0.0], (20, 1))) == 0.0
    rng = np.random.default_rng(0)
    small = rng.dirichlet([1, 1, 1], size=100)
    large = np.tile(small, (16, 1))  # the same confidences, 16 times as many: the bias falls about 4 times
    ratio = calibrated_ece(small) / calibrated_ece(large)
    assert 3.0 < ratio < 5.0


def test_calibrated_ece_refuses_what_is_not_a_probability_matrix():
    with pytest.raises(ValueError, match="sum to 1"):
        calibrated_ece(P[:, :2])
    with pytest.raises(ValueError, match="column_stack"):
        calibrated_ece(P[:, 0])
    with pytest.raises(ValueError, match="strategy must be"):
        calibrated_ece(P, strategy="kmeans")


def test_ece_as_paper_003_defines_it_hand_computed():
    p1 = np.array([0.05, 0.12, 0.55, 0.58, 0.95])
    y = np.array([0, 1, 1, 0, 1])
    proba = np.column_stack([1 - p1, p1])
    # p(y=1) in 10 bins: bin 0 {0.05: y 0}, bin 1 {0.12: y 1}, bin 5 {0.55: 1, 0.58: 0}, bin 9 {0.95: 1}.
    # Midpoint gaps: 0.05, 0.85, |0.5 - 0.55| x 2 points, 0.05; the six empty bins (midpoints 0.25, 0.35,
    # 0.45, 0.65, 0.75, 0.85, sum 3.3) count as one point of accuracy 0 each: (1.05 + 3.3) / (5 + 6).
    assert expected_calibration_error(y, proba, **MILIOS_2018_ECE) == pytest.approx(4.35 / 11, abs=1e-12)
    assert expected_calibration_error(y, proba, 10, confidence="midpoint", binary="positive") == pytest.approx(1.05 / 5)
    # mean confidence: 0.05, 0.88, |0.565 - 0.5| x 2, 0.05
    assert expected_calibration_error(y, proba, 10, binary="positive") == pytest.approx(1.11 / 5)
    # gpal's top-label ECE, 15 bins: {0.95 right, 0.95 right} (0.1), {0.88 wrong} (0.88), {0.55 right, 0.58 wrong} (0.13)
    assert expected_calibration_error(y, proba) == pytest.approx(1.11 / 5)
    three = np.array([[0.7, 0.2, 0.1], [0.2, 0.3, 0.5]])  # more than two classes: top-label whatever `binary` says
    assert expected_calibration_error([0, 0], three, 10, binary="positive") == expected_calibration_error([0, 0], three, 10)
    with pytest.raises(ValueError, match=r"confidence must be one of \['mean', 'midpoint'\]; got 'centre'"):
        expected_calibration_error(y, proba, confidence="centre")
    with pytest.raises(ValueError, match=r"binary must be one of \['top_label', 'positive'\]"):
        expected_calibration_error(y, proba, binary="one")

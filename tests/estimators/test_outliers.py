"""The "none of these" score: the deconvolved density against an independent computation, and its threshold."""

import numpy as np
import pytest
import tensorflow as tf
from scipy import stats
from sklearn.exceptions import NotFittedError

from gpal.estimators.outliers import PopulationOutlierScore
from gpal.models.input_prior import MixturePrior

MIXTURE = MixturePrior([0.3, 0.7], [[0.0, 1.0], [2.0, -1.0]],
                       [[[1.0, 0.3], [0.3, 0.5]], [[0.4, -0.1], [-0.1, 2.0]]])


def test_mahalanobis_against_explicit_inverses():
    rng = np.random.default_rng(0)
    X, V = rng.normal(size=(7, 2)) * 2, rng.uniform(0, 3, size=(7, 2))
    V[0] = 0.0
    expected = [-2 * np.log(sum(w * np.exp(-0.5 * (x - m) @ np.linalg.inv(C + np.diag(v)) @ (x - m))
                                for w, m, C in zip(MIXTURE.weights, MIXTURE.means, MIXTURE.covariances)))
                for x, v in zip(X, V)]
    np.testing.assert_allclose(MIXTURE.mahalanobis(tf.constant(X), tf.constant(V)).numpy(), expected, rtol=1e-10)


def test_for_one_component_the_score_is_chi_squared_whatever_the_error_bars():
    """Sources of the population, measured with error bars from tiny to ten times its spread."""
    rng = np.random.default_rng(1)
    C = np.array([[1.0, 0.4, 0.0], [0.4, 0.5, 0.1], [0.0, 0.1, 2.0]])
    one = MixturePrior([1.0], [[1.0, -1.0, 0.5]], [C])
    x = rng.multivariate_normal(one.means[0], C, size=4000)
    V = np.exp(rng.uniform(np.log(1e-3), np.log(20.0), size=x.shape))
    observed = x + rng.normal(size=x.shape) * np.sqrt(V)
    scores = one.mahalanobis(tf.constant(observed), tf.constant(V)).numpy()
    assert stats.kstest(scores, stats.chi2(df=3).cdf).pvalue > 0.01
    faint = V.mean(axis=1) > np.median(V.mean(axis=1))
    assert stats.mannwhitneyu(scores[faint], scores[~faint]).pvalue > 0.01  # faint sources score like bright ones


def _population(n, seed, noise=0.1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    V = np.full_like(X, noise**2)
    return X + rng.normal(size=X.shape) * noise, V


def test_threshold_flags_the_chosen_share_of_new_in_population_sources():
    scorer = PopulationOutlierScore(n_components=2, false_positive_rate=0.05).fit(*_population(400, 0))
    scorer.calibrate(*_population(400, 1))
    flagged = scorer.is_outlier(*_population(4000, 2))
    assert 0.03 < flagged.mean() < 0.075  # 5% up to the calibration sample's noise (400 sources)


def test_a_far_source_is_flagged_unless_its_error_bars_reach_the_population():
    scorer = PopulationOutlierScore(n_components=2).fit(*_population(400, 0)).calibrate(*_population(400, 1))
    far = np.array([[6.0, 6.0]])
    assert scorer.is_outlier(far, np.full((1, 2), 0.01))[0]
    assert not scorer.is_outlier(far, np.full((1, 2), 40.0))[0]  # a faint source: its measurement says little
    assert scorer.score(far, np.full((1, 2), 0.01))[0] > scorer.score(np.zeros((1, 2)), np.full((1, 2), 0.01))[0]


def test_misuse_is_named():
    scorer = PopulationOutlierScore(n_components=2)
    with pytest.raises(NotFittedError, match="call fit"):
        scorer.score(np.zeros((1, 2)))
    scorer.fit(*_population(100, 0))
    with pytest.raises(ValueError, match="threshold is not set"):
        scorer.is_outlier(np.zeros((1, 2)))
    with pytest.raises(ValueError, match="needs at least 100 held-out sources; got 5"):
        scorer.calibrate(*_population(5, 1))
    with pytest.raises(ValueError, match="X has 3 features, but PopulationOutlierScore is expecting 2 features"):
        scorer.score(np.zeros((1, 3)))
    with pytest.raises(ValueError, match="finite"):
        scorer.score(np.array([[np.nan, 0.0]]))
    with pytest.raises(ValueError, match="false_positive_rate"):
        PopulationOutlierScore(false_positive_rate=1.5).fit(*_population(100, 0))


def test_the_main_job_flags_its_rate_or_one_held_out_source_of_a_small_split():
    """`fitted_outlier_score`: `OOD_FALSE_POSITIVE_RATE` on a held-out split large enough to set it; on a smaller one,
    the smallest rate it can set, which flags exactly one of its sources."""
    from gpal.catalog_jobs.none_of_these import fitted_outlier_score
    from gpal.data.dataset import NoisyDataset
    from gpal.estimators.outliers import OOD_FALSE_POSITIVE_RATE

    def dataset(n, seed):
        X, V = _population(n, seed)
        return NoisyDataset(X=X, X_var=V, y=None, class_names=(), feature_names=("a", "b"), ids=np.arange(n))

    train = dataset(400, 0)
    large = fitted_outlier_score(train, dataset(400, 1), seed=0)
    assert large.false_positive_rate == OOD_FALSE_POSITIVE_RATE
    assert large.is_outlier(dataset(400, 1).X, dataset(400, 1).X_var).sum() == round(400 * OOD_FALSE_POSITIVE_RATE)
    small = dataset(37, 2)
    scorer = fitted_outlier_score(train, small, seed=0)
    assert scorer.false_positive_rate == pytest.approx(1 / 37)
    assert scorer.is_outlier(small.X, small.X_var).sum() == 1

"""scikit-learn's own estimator checks (`sklearn.utils.estimator_checks`) on every registered gpal estimator family.

At sizes that keep the suite's time (8 inducing points, a few iterations): the checks test the contract (validation,
fitted attributes, tags, invariances), not the fit's quality.  A check a family cannot pass by its nature is declared
by the family (``sklearn_expected_failures``, each with its reason) and handed to scikit-learn as an expected failure.
"""

from __future__ import annotations

from sklearn.utils.estimator_checks import parametrize_with_checks

from gpal.estimators.base import expected_failed_checks
from gpal.registry import ESTIMATORS

SMALL = {
    "noisy_gp": {"num_inducing": 8, "epochs": 3, "batch_size": 50, "n_samples": 16},
    "dirichlet": {"num_inducing": 8, "max_iter": 5, "n_samples": 64, "alpha_epsilon": 0.01},
    "logistic_bound": {"num_inducing": 8, "max_iter": 2},
    "logistic_softmax": {"num_inducing": 8, "max_iter": 3, "n_samples": 64, "exact_steps": 2, "exact_samples": 16},
    "gpr_platt": {"num_inducing": 8, "max_iter": 20},
}


def test_every_family_is_checked():
    assert set(SMALL) == set(ESTIMATORS.names())


@parametrize_with_checks([ESTIMATORS[family](**SMALL[family]) for family in ESTIMATORS.names()],
                         expected_failed_checks=expected_failed_checks, xfail_strict=True)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)

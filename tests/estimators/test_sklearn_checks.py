"""scikit-learn's own estimator checks (`sklearn.utils.estimator_checks`) on every registered gpal estimator family.

At sizes that keep the suite's time (8 inducing points, a few iterations): the checks test the contract (input
validation, fitted attributes, tags, invariances), not the fit's quality.  A check a family cannot pass by its nature
is declared by the family (``sklearn_expected_failures``, each with its reason) and handed to scikit-learn as an
expected failure (strict: a declared failure that passes fails the test).
"""

from __future__ import annotations

import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from gpal.estimators.base import expected_failed_checks
from gpal.registry import ESTIMATORS

SMALL = {
    "noisy_gp": {"num_inducing": 8, "epochs": 3, "batch_size": 50, "n_samples": 16},
    "dirichlet": {"num_inducing": 8, "max_iter": 1, "n_samples": 16, "alpha_epsilon": 0.01},
    "logistic_bound": {"num_inducing": 8, "max_iter": 1, "max_fun": 2, "n_updates": 1},
    "logistic_softmax": {"num_inducing": 8, "max_iter": 2, "n_samples": 32, "exact_steps": 1, "exact_samples": 8},
    "gpr_platt": {"num_inducing": 8, "max_iter": 1},
}
#: Families whose fits trace their TensorFlow functions anew per model (no trace shared between fits of one signature,
#: as NoisyGPClassifier's and LogisticSoftmaxGPClassifier's are): at these sizes tracing is most of a fit's time, and
#: the checks (which fit dozens of times) run them eagerly, about 3 times faster.  Their graph mode is tested in
#: their own test files.
EAGER = ("DirichletGPClassifier", "LogisticBoundGPClassifier", "GPRPlattClassifier")


def test_every_family_is_checked():
    assert set(SMALL) == set(ESTIMATORS.names())


@pytest.fixture
def eager_for():
    """Run ``tf.function``s eagerly while the estimator given is a family of `EAGER`; restored after the test."""
    import tensorflow as tf

    def switch(estimator):
        tf.config.run_functions_eagerly(type(estimator).__name__ in EAGER)

    yield switch
    tf.config.run_functions_eagerly(False)


@parametrize_with_checks([ESTIMATORS[family](**SMALL[family]) for family in ESTIMATORS.names()],
                         expected_failed_checks=expected_failed_checks, xfail_strict=True)
def test_sklearn_estimator_checks(estimator, check, eager_for):
    from check_shapes import disable_check_shapes

    eager_for(estimator)
    # the models' internal shape assertions (gpflow's check_shapes, which documents turning them off for speed) are
    # a quarter of these tiny fits' time; every other test of the models keeps them on
    with disable_check_shapes():
        check(estimator)

"""gpal classifiers inside modAL's ActiveLearner: query/teach with modAL's own entropy_sampling."""

from __future__ import annotations

import numpy as np
import pytest
from modAL.models import ActiveLearner
from modAL.uncertainty import classifier_entropy, entropy_sampling

import modAL.models.learners
from gpal.active.acquisition import PredictiveEntropy
from gpal.active.modal import NoisyInputAdapter, install_sklearn_compat, stack_inputs
from gpal.data.synthetic import inject_noise, waveform


class Recorder:
    """Stands in for a gpal classifier and records the variances it is given."""

    def __init__(self):
        self.fit_X_var = None

    def fit(self, X, y, X_var=None):
        self.fit_X_var, self.classes_ = X_var, np.unique(y)
        return self

    def predict_proba(self, X, X_var=None):
        # More input noise -> flatter prediction: entropy grows with the variance.
        w = np.exp(-X_var.sum(axis=1))[:, None]
        return w * np.eye(len(self.classes_))[0] + (1 - w) / len(self.classes_)


@pytest.fixture(scope="module")
def data():
    ds = inject_noise(waveform(120, seed=0), 0.1, seed=1)
    return ds.subset(np.arange(30)), ds.subset(np.arange(30, 90)), ds.subset(np.arange(90, 120))


def test_modal_check_accepts_its_old_keyword_on_this_scikit_learn():
    install_sklearn_compat()  # idempotent; importing gpal.active.modal already did it
    X, y = modAL.models.learners.check_X_y(np.zeros((3, 2)), np.arange(3), force_all_finite=True)
    assert X.shape == (3, 2)
    with pytest.raises(ValueError, match="NaN"):
        modAL.models.learners.check_X_y(np.full((3, 2), np.nan), np.arange(3), force_all_finite=True)


def test_variances_travel_through_query_and_teach():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(12, 2))
    V = np.tile([[0.0, 0.0]], (12, 1))
    V[7] = [2.0, 3.0]  # the noisiest source is the most uncertain one
    pool = stack_inputs(X, V)
    learner = ActiveLearner(NoisyInputAdapter(Recorder()), entropy_sampling,
                            X_training=pool[:4], y_training=np.array([0, 1, 0, 1]))
    idx, rows = learner.query(pool[4:])
    assert idx.tolist() == [3] and np.array_equal(rows[0, 2:], [2.0, 3.0])
    learner.teach(rows, np.array([1]))
    assert learner.X_training.shape == (5, 4)
    np.testing.assert_array_equal(learner.estimator.estimator.fit_X_var[-1], [2.0, 3.0])


def test_modal_query_teach_cycle_with_noisy_gp_classifier(data):
    from gpal.estimators.noisy_gp import NoisyGPClassifier

    initial, pool, test = data
    clf = NoisyGPClassifier(input_noise="first_order", noise_variance="known", num_inducing=10, epochs=10,
                            batch_size=30, n_samples=5, warm_start=True, progress=False)
    learner = ActiveLearner(NoisyInputAdapter(clf), entropy_sampling,
                            X_training=stack_inputs(initial), y_training=initial.y)
    X_pool, y_pool = stack_inputs(pool), pool.y
    clf.set_params(epochs=3)
    for _ in range(2):
        idx, rows = learner.query(X_pool, n_instances=2)
        # modAL's entropy of the adapter equals gpal's predictive entropy on (X, X_var): variances were used
        np.testing.assert_allclose(classifier_entropy(learner, X_pool),
                                   clf.predictive_entropy(X_pool[:, :21], X_var=X_pool[:, 21:]), rtol=1e-10)
        learner.teach(rows, y_pool[idx])
        X_pool, y_pool = np.delete(X_pool, idx, axis=0), np.delete(y_pool, idx)
    assert learner.X_training.shape == (34, 42) and len(clf.history_) == 10 + 3 + 3  # warm-started twice
    assert 0.0 <= learner.score(stack_inputs(test), test.y) <= 1.0
    # gpal's own strategy has the same signature and ranks like modAL's
    assert learner.query(X_pool, n_instances=1)[0].tolist() == PredictiveEntropy()(learner, X_pool, 1)[0].tolist()


def test_plain_x_instead_of_stacked_is_a_clear_error():
    adapter = NoisyInputAdapter(Recorder()).fit(stack_inputs(np.zeros((4, 2))), [0, 1, 0, 1])
    assert adapter.predict_proba(np.zeros((3, 4))).shape == (3, 2)
    with pytest.raises(ValueError, match="6 columns, i.e. 3 features.*fitted on 2"):
        adapter.predict_proba(np.zeros((3, 6)))
    with pytest.raises(ValueError, match="even number of columns"):
        adapter.predict_proba(np.zeros((3, 3)))

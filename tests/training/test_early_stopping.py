"""Early stopping on a validation NLL: the split, the monitor's patience and restore, and the estimator's use of it."""

import numpy as np
import pytest

from gpal import NoisyGPClassifier
from gpal.data.splits import holdout_per_class
from gpal.training.early_stopping import ValidationMonitor
from gpal.evaluation.metrics import negative_log_likelihood


def _validation_split(y, fraction, seed):
    """The estimator's early-stopping split (``gpal.estimators.fit_plan``)."""
    return holdout_per_class(y, fraction, np.random.default_rng([seed, 7]), "early stopping holds out a validation share",
                             "set early_stopping=False or add labelled rows")


def test_validation_split_is_stratified_disjoint_and_complete():
    y = np.repeat([0, 1, 2], [50, 30, 4])
    fit, val = _validation_split(y, 0.2, seed=3)
    assert np.intersect1d(fit, val).size == 0
    assert np.array_equal(np.sort(np.concatenate([fit, val])), np.arange(y.size))
    assert [int((y[val] == c).sum()) for c in range(3)] == [10, 6, 1]  # round(0.2 n) per class, at least one
    assert all((y[fit] == c).any() for c in range(3))
    again, _ = _validation_split(y, 0.2, seed=3)
    other, _ = _validation_split(y, 0.2, seed=4)
    assert np.array_equal(fit, again) and not np.array_equal(fit, other)


def test_validation_split_refuses_a_class_with_one_row():
    with pytest.raises(ValueError, match="early stopping holds out a validation share of every class, but class code 1 "
                                         "has 1 training row.*set early_stopping=False"):
        _validation_split(np.array([0, 0, 0, 1]), 0.5, seed=0)


def test_monitor_stops_after_patience_and_restores_the_best_state():
    y = np.array([0, 1])
    # Validation NLLs of successive checks: best at the 2nd check, then three without gain.
    good = np.array([[0.9, 0.1], [0.1, 0.9]])
    scores = iter([np.array([[0.6, 0.4], [0.4, 0.6]]), good, good * 0.9 + 0.05, good * 0.8 + 0.1, good * 0.7 + 0.15])
    state = {"value": 0}
    restored = []
    monitor = ValidationMonitor(
        lambda X, V: next(scores), lambda: dict(state), lambda s: restored.append(s), np.zeros((2, 1)),
        np.zeros((2, 1)), y, nll=negative_log_likelihood, interval=2, patience=3,
    )
    decisions = []
    for epoch in range(10):
        state["value"] = epoch
        decisions.append(monitor(epoch, 0.0))
    assert decisions[:9] == [None] * 9 and decisions[9] is False  # checks at epochs 2, 4, 6, 8, 10
    assert monitor.best_epoch == 4 and monitor.exhausted
    assert monitor.best_nll == pytest.approx(negative_log_likelihood(y, good))
    monitor.restore()
    assert restored == [{"value": 3}]  # the parameters held when epoch index 3 (4 epochs done) was checked


def test_monitor_passes_a_user_stop_through():
    monitor = ValidationMonitor(lambda X, V: np.array([[1.0, 0.0]]), dict, lambda s: None, np.zeros((1, 1)),
                                np.zeros((1, 1)), np.array([0]), nll=negative_log_likelihood, interval=5, patience=2,
                                then=lambda e, l: e < 2)
    assert [monitor(e, 0.0) for e in range(3)] == [None, None, False]
    assert not monitor.exhausted


def _problem(n=120, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = (X[:, 0] + 0.7 * rng.normal(size=n) > 0).astype(int) + (X[:, 1] > 1.0)
    return X, y, np.full_like(X, 0.01)


def test_estimator_keeps_the_best_validation_state():
    X, y, X_var = _problem()
    clf = NoisyGPClassifier(input_noise="none", likelihood="softmax", num_inducing=10, batch_size=40, epochs=60,
                            learning_rate=0.05, early_stopping=True, validation_fraction=0.25, validation_interval=2,
                            n_iter_no_change=3, progress=False, random_state=2).fit(X, y, X_var)
    epochs, nlls = zip(*clf.validation_history_)
    assert epochs[0] == 2 and all(b - a == 2 for a, b in zip(epochs, epochs[1:]))
    assert clf.best_epoch_ == epochs[int(np.argmin(nlls))]
    assert not clf.stopped_early_  # the monitor's stop is not an interruption
    _, val = _validation_split(y, 0.25, seed=2)
    # The restored model scores the validation rows exactly as at its best check.
    assert negative_log_likelihood(y[val], clf.predict_proba(X[val], X_var[val])) == pytest.approx(min(nlls), abs=2e-3)
    assert clf.model_.num_data == y.size - val.size


@pytest.mark.parametrize("bad, message", [
    (dict(validation_fraction=0.0), r"validation_fraction must be a finite number > 0 and < 1 \(a fraction of the training rows\)"),
    (dict(validation_fraction=1.5), r"validation_fraction must be a finite number > 0 and < 1 \(a fraction of the training rows\)"),
    (dict(n_iter_no_change=0), "n_iter_no_change must be an integer >= 1"),
    (dict(validation_interval=0), "validation_interval must be an integer >= 1"),
    (dict(early_stopping="yes"), "early_stopping must be True or False"),
])
def test_bad_early_stopping_settings_are_named(bad, message):
    X, y, X_var = _problem(30)
    with pytest.raises((ValueError, TypeError), match=message):
        NoisyGPClassifier(progress=False, **bad).fit(X, y, X_var)

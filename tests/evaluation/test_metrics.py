"""gpal.evaluation.metrics against hand-computed values and scikit-learn."""

import math

import numpy as np
import pytest
from sklearn.metrics import confusion_matrix as sk_confusion_matrix
from sklearn.metrics import log_loss

from gpal.evaluation.metrics import (
    PROBA_FLOOR,
    confusion_matrix,
    error_rate,
    format_mean_se,
    mean_se,
    negative_log_likelihood,
)

Y = np.array([0, 1, 2, 1])
P = np.array(
    [
        [0.7, 0.2, 0.1],
        [0.5, 0.4, 0.1],  # wrong: argmax 0, true 1
        [0.1, 0.1, 0.8],
        [0.25, 0.5, 0.25],
    ]
)


def test_nll_hand_computed():
    expected = -(math.log(0.7) + math.log(0.4) + math.log(0.8) + math.log(0.5)) / 4
    assert negative_log_likelihood(Y, P) == pytest.approx(expected, rel=1e-12)


def test_nll_matches_sklearn_log_loss():
    rng = np.random.default_rng(3)
    p = rng.dirichlet(np.ones(4), size=200)
    y = rng.integers(0, 4, size=200)
    assert negative_log_likelihood(y, p) == pytest.approx(log_loss(y, p, labels=range(4)), rel=1e-10)


def test_nll_clips_zero_probability_to_floor():
    p = np.array([[1.0, 0.0], [0.5, 0.5]])
    value = negative_log_likelihood(np.array([1, 0]), p)
    assert np.isfinite(value)
    assert value == pytest.approx((-math.log(PROBA_FLOOR) - math.log(0.5)) / 2)


def test_error_rate_labels_and_proba():
    assert error_rate(Y, P) == pytest.approx(0.25)
    assert error_rate(Y, np.array([0, 1, 2, 0])) == pytest.approx(0.25)
    assert error_rate(Y, Y) == 0.0


def test_confusion_rows_predicted_by_default():
    cm = confusion_matrix(Y, P, n_classes=3)
    expected = np.array([[1, 1, 0], [0, 1, 0], [0, 0, 1]])  # [pred, true]
    np.testing.assert_array_equal(cm, expected)
    assert cm.sum() == len(Y)


def test_confusion_matches_sklearn_transposed():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 500)
    pred = rng.integers(0, 3, 500)
    sk = sk_confusion_matrix(y, pred, labels=[0, 1, 2])  # sklearn: rows = true
    np.testing.assert_array_equal(confusion_matrix(y, pred, 3, rows="true"), sk)
    np.testing.assert_array_equal(confusion_matrix(y, pred, 3), sk.T)


def test_confusion_counts_absent_classes_as_zero_rows():
    cm = confusion_matrix(np.array([0, 0]), np.array([0, 0]), n_classes=3)
    assert cm.shape == (3, 3) and cm[0, 0] == 2 and cm.sum() == 2


def test_mean_se_hand_computed():
    m, se = mean_se([1.0, 2.0, 3.0, 4.0])
    assert m == pytest.approx(2.5)
    assert se == pytest.approx(np.sqrt(np.var([1, 2, 3, 4], ddof=1) / 4))
    m, se = mean_se(np.array([[1.0, 10.0], [3.0, 10.0]]), axis=0)
    np.testing.assert_allclose(m, [2.0, 10.0])
    np.testing.assert_allclose(se, [1.0, 0.0])


def test_mean_se_single_value_has_undefined_se():
    m, se = mean_se([0.3])
    assert m == pytest.approx(0.3) and math.isnan(se)
    assert format_mean_se(0.3, se) == "0.300 ± n/a"
    assert format_mean_se(0.3771, 0.0194) == "0.377 ± 0.019"


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: negative_log_likelihood(Y, P[:, :2]), "columns"),
        (lambda: negative_log_likelihood(Y, P[:3]), "shape"),
        (lambda: negative_log_likelihood(Y, P * 2), r"\[0, 1\]"),
        (lambda: negative_log_likelihood(Y, np.where(P > 0.6, np.nan, P)), "NaN"),
        (lambda: confusion_matrix(Y, Y, n_classes=2), "only 2 classes"),
        (lambda: confusion_matrix(Y, Y, 3, rows="columns"), "rows must be"),
        (lambda: error_rate(Y, Y[:3]), "shape"),
        (lambda: mean_se([]), "at least one"),
    ],
)
def test_bad_input_is_rejected(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_non_integer_labels_rejected():
    with pytest.raises(TypeError, match="integer"):
        error_rate(np.array([0.5, 1.0]), np.array([0, 1]))

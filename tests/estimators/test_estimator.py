"""The shared estimator contract: validation, labels of any type, derived predict/score/entropy."""

import numpy as np
import pytest
from scipy import sparse

from sklearn.base import BaseEstimator
from sklearn.exceptions import DataConversionWarning

from gpal.data.dataset import NoisyDataset
from gpal.estimators.base import GPClassifierMixin, check_fit_data, check_predict_data, entropy


class Fixed(GPClassifierMixin, BaseEstimator):
    """A stand-in classifier whose probabilities are the softmax of its first two inputs."""

    classes_ = np.array(["bll", "fsrq"], dtype=object)

    def predict_proba(self, X, X_var=None):
        X, _ = check_predict_data(X, X_var, n_features=2, needs_variance=False)
        e = np.exp(X - X.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)


def test_labels_of_any_hashable_type_are_encoded_sorted():
    data = check_fit_data(np.zeros((4, 1)), np.array(["psr", "bll", "psr", "fsrq"]))
    assert list(data.classes) == ["bll", "fsrq", "psr"]
    assert list(data.y) == [2, 0, 2, 1]
    assert list(check_fit_data(np.zeros((3, 1)), [10, -3, 10]).classes) == [-3, 10]


def test_noisy_dataset_input_keeps_class_names_and_variances():
    ds = NoisyDataset(np.arange(6.0).reshape(3, 2), np.full((3, 2), 0.5), np.array([1, 0, 1]), ("a", "b"), ("u", "v"), None)
    data = check_fit_data(ds)
    assert list(data.classes) == ["a", "b"] and list(data.y) == [1, 0, 1]
    assert np.all(data.X_var == 0.5) and data.feature_names == ("u", "v")
    with pytest.raises(ValueError, match="unlabelled"):
        check_fit_data(NoisyDataset(np.zeros((2, 1)), None, None, (), ("u",), None))
    with pytest.raises(TypeError, match="not both"):
        check_fit_data(ds, y=[0, 1, 1])


@pytest.mark.parametrize(
    "X, y, X_var, error, message",
    [
        (np.zeros(3), [0, 1, 0], None, ValueError, "2-D"),
        (np.array([[0.0], [np.nan]]), [0, 1], None, ValueError, "NaN or infinite"),
        (np.zeros((2, 1)), [0, 1, 1], None, ValueError, "one label per row"),
        (np.zeros((2, 1)), [1, 1], None, ValueError, "at least 2 classes"),
        (np.zeros((2, 1)), [0, 1], -np.ones((2, 1)), ValueError, ">= 0"),
        (np.zeros((2, 1)), [0, 1], np.ones((2, 2)), ValueError, "shape of X"),
        (np.zeros((2, 1)), None, None, ValueError, "requires y to be passed, but the target y is None"),
        ([["a"], ["b"]], [0, 1], None, TypeError, "numeric"),
        (np.zeros((2, 1)), np.array(["a", 1], dtype=object), None, TypeError, "labels must be mutually comparable"),
        (np.zeros((2, 1)), [0.5, 1.5], None, ValueError, "Unknown label type: continuous"),
        (np.zeros((2, 1)) + 1j, [0, 1], None, ValueError, "Complex data not supported: X holds complex numbers"),
        (sparse.csr_matrix(np.eye(2)), [0, 1], None, TypeError, "X is a scipy sparse csr_matrix, but sparse input is not supported"),
        (np.zeros((0, 2)), [], None, ValueError, r"Found array with 0 sample\(s\) \(shape=\(0, 2\)\) while a minimum of 1 is required"),
        (np.zeros((2, 0)), [0, 1], None, ValueError, r"0 feature\(s\) \(shape=\(2, 0\)\) while a minimum of 1 is required"),
        (np.zeros((1, 2)), [0], None, ValueError, "at least 2 classes to fit a classifier; y has 1 class: "),
    ],
)
def test_fit_validation(X, y, X_var, error, message):
    with pytest.raises(error, match=message):
        check_fit_data(X, y, X_var)


def test_a_column_y_is_raveled_with_scikit_learns_warning():
    X = np.arange(4.0)[:, None]
    with pytest.warns(DataConversionWarning, match="A column-vector y was passed when a 1d array was expected"):
        data = check_fit_data(X, np.array([["a"], ["b"], ["a"], ["b"]]))
    assert list(data.classes) == ["a", "b"] and list(data.y) == [0, 1, 0, 1]


def test_predict_validation():
    with pytest.raises(ValueError, match="X has 3 features, but the model is expecting 2 features as input"):
        check_predict_data(np.zeros((1, 3)), None, 2, needs_variance=False)
    with pytest.raises(ValueError, match="pass X_var"):
        check_predict_data(np.zeros((1, 2)), None, 2, needs_variance=True)
    X, V = check_predict_data(np.zeros((1, 2)), None, 2, needs_variance=False)
    assert np.all(V == 0)


def test_entropy_against_direct_formula():
    P = np.array([[0.5, 0.5, 0.0], [1.0, 0.0, 0.0], [0.2, 0.3, 0.5]])
    np.testing.assert_allclose(entropy(P), [np.log(2), 0.0, -(0.2 * np.log(0.2) + 0.3 * np.log(0.3) + 0.5 * np.log(0.5))])


def test_derived_predict_score_entropy():
    from sklearn.base import is_classifier

    clf = Fixed()
    assert is_classifier(clf)
    X = np.array([[2.0, 0.0], [0.0, 2.0], [1.0, 1.0]])
    assert list(clf.predict(X)) == ["bll", "fsrq", "bll"]
    assert clf.score(X, ["bll", "bll", "bll"]) == pytest.approx(2 / 3)
    assert clf.score(X, ["bll", "bll", "bll"], sample_weight=[1, 0, 1]) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="one label per row"):
        clf.score(X, ["bll"])
    np.testing.assert_allclose(clf.predictive_entropy(X)[2], np.log(2))

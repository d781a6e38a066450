"""The scikit-learn contract, checked the same way for every registered estimator family.

clone and get/set_params round trips, every constructor argument declared and
checked, NotFittedError before fit, ``random_state`` reproducibility, score with
sample weights, quiet by default, and save/load giving the same probabilities.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from sklearn.base import clone, is_classifier
from sklearn.exceptions import NotFittedError

from gpal.constraints import InvalidParameter
from gpal.registry import ESTIMATORS

# Small, fast settings per family; everything else at its default.
SMALL = {
    "noisy_gp": {"num_inducing": 5, "epochs": 3, "batch_size": 20},
    "dirichlet": {"num_inducing": 5, "max_iter": 5, "n_samples": 64, "alpha_epsilon": 0.01},
    "logistic_bound": {"num_inducing": 5, "max_iter": 2},
    "logistic_softmax": {"num_inducing": 5, "max_iter": 3, "n_samples": 64},
    "gpr_platt": {"num_inducing": 5, "max_iter": 20},
}
FAMILIES = ESTIMATORS.names()


def _data(family: str) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    if family == "logistic_bound":
        return X, np.where(X[:, 0] > 0, "yes", "no")
    return X, np.array(["a", "b", "c"])[(X[:, 0] > 0).astype(int) + (X[:, 1] > 0.5)]


def _make(family: str, **params):
    return ESTIMATORS[family](**{**SMALL[family], **params})


def test_every_family_is_tested():
    assert set(SMALL) == set(FAMILIES)


@pytest.mark.parametrize("family", FAMILIES)
def test_parameters_are_declared_once_and_round_trip(family):
    cls = ESTIMATORS[family]
    args = [p for p in inspect.signature(cls.__init__).parameters if p != "self"]
    assert sorted(args) == sorted(cls._parameters), "every constructor argument needs exactly one constraint"
    assert "random_state" in args and "seed" not in args
    est = _make(family)
    assert is_classifier(est)
    cloned = clone(est)
    assert cloned.get_params() == est.get_params()
    est.set_params(random_state=7)
    assert est.get_params()["random_state"] == 7
    assert inspect.signature(cls.__init__).parameters["progress"].default is False


@pytest.mark.parametrize("family", FAMILIES)
def test_the_constructor_stores_each_argument_as_given_and_nothing_else(family):
    cls = ESTIMATORS[family]
    given = {p: object() for p in inspect.signature(cls.__init__).parameters if p != "self"}
    est = cls(**given)  # unchecked until fit: any object is stored
    assert vars(est).keys() == given.keys()
    assert all(getattr(est, name) is value for name, value in given.items())


@pytest.mark.parametrize("family", FAMILIES)
def test_constructor_arguments_are_keyword_only(family):
    """Settings are named at every call, so adding or reordering one never shifts another."""
    cls = ESTIMATORS[family]
    kinds = {p.kind for name, p in inspect.signature(cls.__init__).parameters.items() if name != "self"}
    assert kinds == {inspect.Parameter.KEYWORD_ONLY}
    with pytest.raises(TypeError, match="positional"):
        cls(5)


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("name", ["random_state", "num_inducing"])
def test_bad_parameter_is_named_before_any_work(family, name):
    est = _make(family, **{name: -3})
    X, y = _data(family)
    expected = {"random_state": r"None, an integer seed in \[0, \d+\], a numpy.random.RandomState or a numpy.random.Generator",
                "num_inducing": r"an integer >= \d+"}[name]
    with pytest.raises(InvalidParameter, match=rf"{name} must be {expected}; got -3"):
        est.fit(X, y)
    assert isinstance(InvalidParameter("x"), ValueError) and isinstance(InvalidParameter("x"), TypeError)


@pytest.mark.parametrize("family", FAMILIES)
def test_not_fitted_error(family):
    est = _make(family)
    X, _ = _data(family)
    with pytest.raises(NotFittedError, match="not fitted"):
        est.predict_proba(X)
    with pytest.raises(NotFittedError):
        est.predict(X)


@pytest.mark.parametrize("family", FAMILIES)
def test_fit_score_save_load(family, tmp_path, capsys):
    X, y = _data(family)
    est = _make(family, random_state=3).fit(X, y)
    assert capsys.readouterr().err == "", "estimators are quiet unless progress=True"
    proba = est.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-9)
    # the same random_state gives the same model
    np.testing.assert_allclose(_make(family, random_state=3).fit(X, y).predict_proba(X), proba, atol=1e-10)
    # score: accuracy, weighted as scikit-learn's (keyword sample_weight, positional too)
    hits = est.predict(X) == y
    weights = np.linspace(0.0, 2.0, len(y))
    assert est.score(X, y) == pytest.approx(hits.mean())
    assert est.score(X, y, sample_weight=weights) == pytest.approx(np.average(hits, weights=weights))
    assert est.score(X, y, weights) == pytest.approx(np.average(hits, weights=weights))
    assert est.score(X, y, X_var=np.zeros_like(X)) == pytest.approx(hits.mean())
    with pytest.raises(ValueError, match="sample_weight must hold one finite weight"):
        est.score(X, y, sample_weight=weights[:-1])
    est.save(tmp_path / "model")
    loaded = type(est).load(tmp_path / "model")
    assert loaded.get_params() == est.get_params()
    np.testing.assert_allclose(loaded.predict_proba(X), proba, atol=1e-12)


@pytest.mark.parametrize("params", [{"family": "noisy_gp"}, {"family": "noisy_gp", "likelihood": "logistic_softmax",
                                                             "inference": "cavi"}, {"family": "logistic_softmax"}])
@pytest.mark.slow
def test_fitting_several_estimators_prints_no_retracing_warning(params):
    """A script that fits one model per split must not hear TensorFlow's 'triggered tf.function retracing'."""
    import logging

    import tensorflow as tf

    params = dict(params)
    family = params.pop("family")
    X, y = _data(family)
    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append
    tf.get_logger().addHandler(handler)
    try:
        for seed in range(7):  # TensorFlow warns from the fifth trace of one code object
            est = _make(family, random_state=seed, **params).fit(X, y)
            est.predict_proba(X)
            est.predict_proba(X[:7])
    finally:
        tf.get_logger().removeHandler(handler)
    assert not [r.getMessage() for r in records if "retracing" in r.getMessage()]

"""``NoisyGPClassifier(input_noise=...)`` takes a strategy class or a stateless strategy object, as ``kernel=`` takes
a GPflow kernel: it fits as the name does, is stored as given, never changed by a fit, and saves and reloads; a
strategy or a likelihood object saves only where loading finds its class again (registered)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("gpflow")

from sklearn.base import clone  # noqa: E402

import gpal  # noqa: E402
from gpal.constraints import InvalidParameter  # noqa: E402
from gpal.estimators.noisy_gp import NoisyGPClassifier  # noqa: E402
from gpal.identity import type_name  # noqa: E402
from gpal.models import FirstOrder, LatentInputs, NoInputNoise, RobustMax  # noqa: E402
from gpal.models.svgp import build_model  # noqa: E402

SETTINGS = {"num_inducing": 4, "epochs": 3, "batch_size": 20, "random_state": 0}


def _data():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(30, 2))
    return X, np.full_like(X, 0.05), np.where(X[:, 0] + 0.3 * rng.normal(size=30) > 0, "psr", "bll")


def _proba(input_noise):
    X, X_var, y = _data()
    est = NoisyGPClassifier(input_noise=input_noise, **SETTINGS).fit(X, y, X_var)
    return est, est.predict_proba(X, X_var)


class UsersFirstOrder(FirstOrder):
    """A user's strategy: NIMGP-FO unchanged, under a class of their own."""


def test_an_object_or_a_class_fits_as_its_name_and_the_object_passed_is_left_as_it_was():
    _, named = _proba("first_order")
    given = FirstOrder()
    est, from_object = _proba(given)
    np.testing.assert_allclose(from_object, named, rtol=0, atol=1e-12)
    assert est.input_noise is given and est.get_params()["input_noise"] is given  # stored as given
    assert type(est.model_.strategy) is FirstOrder and est.model_.strategy is not given  # a copy is fitted
    assert given.variables == () and given.get_config() == {"name": "first_order"}
    users, from_class = _proba(UsersFirstOrder)
    assert type(users.model_.strategy) is UsersFirstOrder and users.input_noise is UsersFirstOrder
    np.testing.assert_allclose(from_class, named, rtol=0, atol=1e-12)


def test_clone_copies_the_object_and_reprs_show_it():
    given = FirstOrder()
    est = NoisyGPClassifier(input_noise=given)
    copied = clone(est)
    assert type(copied.input_noise) is FirstOrder and copied.input_noise is not given
    assert clone(NoisyGPClassifier(input_noise=LatentInputs)).input_noise is LatentInputs
    assert repr(est) == "NoisyGPClassifier(input_noise=FirstOrder())"
    assert not NoisyGPClassifier(input_noise=NoInputNoise()).needs_X_var
    assert NoisyGPClassifier(input_noise=LatentInputs).needs_X_var
    assert type_name(LatentInputs) == "<gpal.models.input_noise.LatentInputs>"  # a run record names the class


@pytest.mark.parametrize("check", ["check_estimators_overwrite_params", "check_get_params_invariance",
                                   "check_set_params"])
def test_scikit_learns_parameter_checks_pass_with_an_object(check):
    """scikit-learn's own: a fit leaves every parameter as given (by a hash of its value), get_params and set_params
    keep the object.  Its fits pass no X_var: the variance is learned."""
    from check_shapes import disable_check_shapes
    from sklearn.utils import estimator_checks

    est = NoisyGPClassifier(input_noise=FirstOrder(), noise_variance="learned", **SETTINGS)
    with disable_check_shapes():
        getattr(estimator_checks, check)("NoisyGPClassifier", est)


@pytest.mark.parametrize("value, message", [
    (LatentInputs(num_data=5, num_features=2),
     r"holding no variables .*give its class or name\); got LatentInputs\(prior_variance=1000.0, num_data=5"),
    ("sideways", r"input_noise must be one of \['none', 'latent', 'amortized', 'first_order'\]"),
    (RobustMax, r"an InputNoise subclass .*; got <class"),
    (3, r"got 3$"),
])
def test_a_wrong_type_or_a_strategy_sized_for_a_training_set_is_refused(value, message):
    with pytest.raises(InvalidParameter, match=message):
        NoisyGPClassifier(input_noise=value).validate_params()


def test_build_model_names_the_variables_of_a_refused_instance():
    X, X_var, y = _data()
    with pytest.raises(ValueError, match=r"holds variables sized for one training set \(q_x_log_variance_ratio \(5, 2\), "
                                         r"q_x_offset \(5, 2\)\); give its class LatentInputs or its "
                                         r"name 'latent'"):
        build_model(X, (y == "psr").astype(np.int64), num_classes=2, input_noise=LatentInputs(5, 2), X_var=X_var)


@pytest.mark.parametrize("input_noise", [FirstOrder(), LatentInputs])
def test_a_model_fitted_with_an_object_saves_and_reloads(tmp_path, input_noise):
    X, X_var, _ = _data()
    est, proba = _proba(input_noise)
    est.save(tmp_path / "model")
    loaded = NoisyGPClassifier.load(tmp_path / "model")
    np.testing.assert_array_equal(loaded.predict_proba(X, X_var), proba)
    saved = loaded.input_noise
    assert saved is input_noise if isinstance(input_noise, type) else type(saved) is type(input_noise)


class _MyFirstOrder(FirstOrder):
    """A user's strategy class, registered by a test only."""


class _MyRobustMax(RobustMax):
    """A user's likelihood class: it inherits robust-max's name until registered."""


#: parameter -> (the object given, the parent whose name it inherits, register, unregister, what the model holds)
_OBJECTS = {
    "input_noise": (_MyFirstOrder, FirstOrder, gpal.register_input_noise, gpal.unregister_input_noise,
                    lambda est: est.model_.strategy),
    "likelihood": (_MyRobustMax(num_classes=2), RobustMax, gpal.register_likelihood, gpal.unregister_likelihood,
                   lambda est: est.model_.likelihood),
}


@pytest.mark.parametrize("parameter", sorted(_OBJECTS))
def test_an_unregistered_subclass_is_refused_at_save_and_saves_once_registered(tmp_path, parameter):
    """A subclass a user did not register inherits its parent's name: saving it would reload the parent, so the
    save is refused before anything is written, naming the call that makes it loadable."""
    given, parent, register, unregister, held = _OBJECTS[parameter]
    mine = given if isinstance(given, type) else type(given)
    X, X_var, y = _data()
    est = NoisyGPClassifier(**{parameter: given}, **SETTINGS).fit(X, y, X_var)
    proba = est.predict_proba(X, X_var)
    with pytest.raises(ValueError, match=rf"{mine.__qualname__} is not registered \(its name '{parent.name}' is "
                                         rf"{parent.__qualname__}'s\).*gpal.register_{parameter}\('a_name', "):
        est.save(tmp_path / "model")
    assert not (tmp_path / "model").exists()
    register(f"test_mine_{parameter}", mine)
    try:
        est.save(tmp_path / "model")
        loaded = NoisyGPClassifier.load(tmp_path / "model")
        assert type(held(loaded)) is mine
        np.testing.assert_array_equal(loaded.predict_proba(X, X_var), proba)
        assert NoisyGPClassifier(**{parameter: f"test_mine_{parameter}"}).validate_params() is None
    finally:
        unregister(f"test_mine_{parameter}")
    with pytest.raises(ValueError, match=rf"unknown {parameter} 'test_mine_{parameter}'.*a class of your own: "
                                         rf"register it first, gpal.register_{parameter}\('test_mine_{parameter}'"):
        NoisyGPClassifier.load(tmp_path / "model")  # in a process that has not registered it


def test_a_strategy_class_naming_none_is_refused_at_save_saying_so():
    from gpal.models.input_noise import InputNoise
    from gpal.models.input_noise_setting import registered_name

    class Bare(InputNoise):
        """A strategy of a user's that declares no ``name``."""

    with pytest.raises(ValueError, match=r"Bare is not registered \(it has no name\).*register_input_noise"):
        registered_name(Bare)

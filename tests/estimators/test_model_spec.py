"""The estimator's parameters resolved once into the spec ``build_model`` takes (issue 38, Deliver 1)."""

from __future__ import annotations

import inspect
from dataclasses import fields

import pytest

from gpal.estimators.noisy_gp import NoisyGPClassifier
from gpal.estimators.params import input_prior_used, model_spec
from gpal.training.session import ModelSpec


def test_every_field_is_a_keyword_of_build_model_with_the_estimators_default():
    """A spec passes each field to build_model by name, and build_model's own defaults (its API without an
    estimator) are the estimator's: a default changed in one place only fails here."""
    from gpal.models.svgp import build_model

    keywords = inspect.signature(build_model).parameters
    spec = model_spec(NoisyGPClassifier())
    for f in fields(ModelSpec):
        assert f.name in keywords, f.name
        default = keywords[f.name].default
        assert (dict(default or {}) if f.name == "likelihood_options" else default) == getattr(spec, f.name), f.name


@pytest.mark.parametrize("likelihood, options, expected", [
    ("robustmax", {"epsilon": 0.02, "learn_epsilon": True}, {"epsilon": 0.02, "learn_epsilon": True}),
    ("RobustMax", None, {}),
    ("probit", {"delta": 0.01}, {"delta": 0.01}),
    ("softmax", None, {}),
])
def test_likelihood_options_are_resolved(likelihood, options, expected):
    est = NoisyGPClassifier(likelihood=likelihood, likelihood_options=options)
    assert model_spec(est).likelihood_options == expected


@pytest.mark.parametrize("input_noise, used", [("none", None), ("first_order", None), ("latent", "population"),
                                               ("amortized", "population")])
def test_the_input_prior_applies_only_to_latent_inputs(input_noise, used):
    est = NoisyGPClassifier(input_noise=input_noise, input_prior="population")
    assert input_prior_used(est) == used
    assert model_spec(est).input_prior == (used or "broad")


def test_equal_specs_for_parameters_that_build_the_same_model():
    """A warm refit keeps its model exactly when the specs are equal: a setting the model does not read
    (the epochs, the step size) leaves the spec alone; one it reads changes it."""
    base = model_spec(NoisyGPClassifier())
    assert model_spec(NoisyGPClassifier(epochs=3, learning_rate=0.5)) == base
    assert model_spec(NoisyGPClassifier(num_inducing=7)) != base
    assert model_spec(NoisyGPClassifier(random_state=1)).seed == 1 != base.seed


def test_the_seed_of_a_generator_is_known_once_a_fit_has_drawn_it():
    import numpy as np

    with pytest.raises(ValueError, match="gives a seed only when fit draws it"):
        model_spec(NoisyGPClassifier(random_state=np.random.default_rng(0)))
    est = NoisyGPClassifier(random_state=None)
    est.random_seed_ = 12  # as a fit sets it
    assert model_spec(est).seed == 12

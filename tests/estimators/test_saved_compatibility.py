"""Folders saved by gpal 0.3 load and predict the same; folders of an earlier format are refused, saying so."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from gpal.catalog_jobs.model_folders import load_trained
from gpal.estimators import load_estimator

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SAVED = FIXTURES / "saved_v0_3"
EXPECTED = np.load(SAVED / "expected.npz")
MODELS = ["noisy_gp_latent", "noisy_gp_cavi", "dirichlet", "logistic_bound", "logistic_softmax"]


@pytest.mark.parametrize("name", MODELS)
def test_saved_model_loads_and_predicts_as_before(name):
    """The same probabilities; for the noisy-input model (sampled inputs) the same within Monte Carlo error,
    since 0.3 spreads the softmax's latent draws over the input draws (``MonteCarloLikelihood``): within 4
    standard errors of the difference of two such estimates, sqrt(2) x the reported one."""
    est = load_estimator(SAVED / name)
    assert est.get_params()["random_state"] == 1
    with np.testing.suppress_warnings() as sup:
        sup.filter(UserWarning)
        proba = est.predict_proba(EXPECTED["Xq"], EXPECTED["Vq"])
    if name == "noisy_gp_latent":
        proba, se = est.predict_proba(EXPECTED["Xq"], EXPECTED["Vq"], return_mc_error=True)
        assert se.min() > 0
        np.testing.assert_array_less(np.abs(proba - EXPECTED[name]), 4 * np.sqrt(2) * se)
    else:
        np.testing.assert_allclose(proba, EXPECTED[name], rtol=0, atol=1e-9)


def test_a_logistic_softmax_folder_of_0_3_says_it_was_fitted_with_the_mean_field():
    """0.3 knew only the paper's q(lambda) q(n); its folders hold no locals_family and must not claim the newer default."""
    assert "locals_family" not in json.loads((SAVED / "logistic_softmax" / "config.json").read_text())["params"]
    est = load_estimator(SAVED / "logistic_softmax")
    assert est.inference == "cavi" and est.model_.locals_family == "mean_field"  # the paper's, as "cavi" is now


@pytest.mark.parametrize("saved, now", [
    ({"inference": "cavi", "locals_family": "collapsed"}, "cavi_collapsed"),
    ({"inference": "cavi", "locals_family": "mean_field"}, "cavi"),
    ({"inference": "natural_gradient", "locals_family": "collapsed"}, "natural_gradient"),
    ({"inference": "cavi_exact", "locals_family": "collapsed"}, "cavi_exact"),
    ({"inference": "natural_gradient"}, "natural_gradient"),
])
def test_a_folder_saved_with_a_locals_family_loads_under_todays_inference_names(saved, now):
    from gpal.estimators.logistic_softmax import _current_params

    assert _current_params({"max_iter": 3, **saved}) == {"max_iter": 3, "inference": now}


def test_trained_folder_loads_and_predicts_as_before():
    trained = load_trained(SAVED / "trained_dr4")
    assert trained.estimator.get_params()["random_state"] == 0
    proba = trained.estimator.predict_proba(EXPECTED["Xq"], EXPECTED["Vq"])
    np.testing.assert_allclose(proba, EXPECTED["trained_dr4"], rtol=0, atol=1e-9)


@pytest.mark.parametrize("name", [*MODELS, "trained_dr4/model"])
def test_a_folder_of_gpal_0_1_is_refused_as_an_earlier_format(name):
    old = FIXTURES / "saved_v0_1" / name
    fmt = json.loads((old / "config.json").read_text())["format"]
    with pytest.raises(ValueError, match=rf"holds a '{fmt}' v1 model, not a {fmt} v2 model; an earlier gpal "
                                         r"saved it .*: refit it with this one"):
        load_estimator(old)


def test_a_folder_that_recorded_epsilon_as_a_parameter_loads_with_it_as_a_likelihood_option(tmp_path):
    """Robust-max's epsilon / learn_epsilon were estimator parameters before they became likelihood options: a folder
    written that way (built here from a new one by moving them back into the parameters) loads with them in
    likelihood_options and predicts as the folder it was made from; under another likelihood they were never read."""
    from gpal import NoisyGPClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 2))
    y = np.where(X[:, 0] > 0, "psr", "bll")
    for likelihood, options in (("robustmax", {"epsilon": 0.02}), ("softmax", None)):
        fitted = NoisyGPClassifier(likelihood=likelihood, likelihood_options=options, num_inducing=4, epochs=2,
                                   random_state=0).fit(X, y)
        folder = tmp_path / likelihood
        fitted.save(folder)
        config = json.loads((folder / "config.json").read_text())
        assert config["params"]["likelihood_options"] == options
        config["params"].update(epsilon=0.02, learn_epsilon=False, likelihood_options=None)  # the old way
        (folder / "config.json").write_text(json.dumps(config))
        loaded = load_estimator(folder)
        assert "epsilon" not in loaded.get_params() and "learn_epsilon" not in loaded.get_params()
        expected = {"epsilon": 0.02, "learn_epsilon": False} if likelihood == "robustmax" else None
        assert loaded.likelihood_options == expected, likelihood
        np.testing.assert_allclose(loaded.predict_proba(X), fitted.predict_proba(X), rtol=0, atol=1e-12)
        if likelihood == "robustmax":
            assert float(loaded.model_.likelihood.epsilon.numpy()) == pytest.approx(0.02, rel=1e-12)

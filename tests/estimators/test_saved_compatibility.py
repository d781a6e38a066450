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
    assert est.locals_family == "mean_field" and est.model_.locals_family == "mean_field"


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

"""``input_noise="auto"``, the default: the error bars used where X_var is given (NIMGP with the population prior),
exact inputs where it is not, the choice kept as ``input_noise_`` / ``input_prior_`` through save, load and pickle."""

from __future__ import annotations

import json
import pickle
import warnings

import numpy as np
import pytest

from gpal import NoisyGPClassifier
from gpal.saved_models import CorruptModel

SMALL = {"num_inducing": 5, "batch_size": 40, "n_samples": 16, "epochs": 4, "prior_components": 2, "random_state": 0}


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(80, 2))
    V = rng.uniform(0.01, 0.2, size=X.shape)
    return X, V, np.where(X[:, 0] + rng.normal(scale=0.3, size=80) > 0, "psr", "bll")


def test_given_error_bars_the_default_fits_nimgp_with_the_population_prior(data):
    X, V, y = data
    auto = NoisyGPClassifier(**SMALL).fit(X, y, V)
    assert (auto.input_noise_, auto.input_prior_) == ("latent", "population") and auto.needs_X_var
    named = NoisyGPClassifier(**SMALL, input_noise="latent", input_prior="population").fit(X, y, V)
    np.testing.assert_array_equal(auto.predict_proba(X, V), named.predict_proba(X, V))
    with pytest.raises(ValueError, match="pass X_var"):
        auto.predict_proba(X)  # a model that uses the error bars needs the test sources' own


@pytest.mark.parametrize("given", ["none", "zeros"])
def test_without_error_bars_the_default_fits_exact_inputs(given, data):
    X, V, y = data
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # nothing is ignored: there are no error bars
        auto = NoisyGPClassifier(**SMALL).fit(X, y, None if given == "none" else np.zeros_like(V))
    assert (auto.input_noise_, auto.input_prior_) == ("none", None) and not auto.needs_X_var
    exact = NoisyGPClassifier(**SMALL, input_noise="none").fit(X, y)
    np.testing.assert_array_equal(auto.predict_proba(X), exact.predict_proba(X))


def test_a_named_input_noise_is_its_own_choice(data):
    X, V, y = data
    est = NoisyGPClassifier(**SMALL, input_noise="first_order").fit(X, y, V)
    assert (est.input_noise_, est.input_prior_) == ("first_order", None)  # no latent inputs: no prior over them
    with pytest.warns(UserWarning, match="ignores input noise.*as the default input_noise='auto' does"):
        NoisyGPClassifier(**SMALL, input_noise="none").fit(X, y, V)


def test_the_choice_survives_save_load_and_pickle(data, tmp_path):
    X, V, y = data
    est = NoisyGPClassifier(**SMALL).fit(X, y, V)
    est.save(tmp_path / "m")
    loaded = NoisyGPClassifier.load(tmp_path / "m")
    again = pickle.loads(pickle.dumps(est))
    for other in (loaded, again):
        assert (other.input_noise, other.input_noise_, other.input_prior_) == ("auto", "latent", "population")
        np.testing.assert_array_equal(other.predict_proba(X, V), est.predict_proba(X, V))
    config = json.loads((tmp_path / "m" / "config.json").read_text())
    config["input_choice"]["input_noise"] = "amortized"
    (tmp_path / "m" / "config.json").write_text(json.dumps(config))
    with pytest.raises(CorruptModel, match="input_noise='auto' needs the fit's choice"):
        NoisyGPClassifier.load(tmp_path / "m")


def test_an_exact_input_fit_has_no_input_prior_after_loading_and_an_earlier_folders_broad_reads_as_none(data, tmp_path):
    X, V, y = data
    est = NoisyGPClassifier(**SMALL).fit(X, y)
    est.save(tmp_path / "m")
    assert NoisyGPClassifier.load(tmp_path / "m").input_prior_ is None
    config = json.loads((tmp_path / "m" / "config.json").read_text())
    assert config["input_choice"] == {"input_noise": "none", "input_prior": None}
    config["input_choice"]["input_prior"] = "broad"  # what an earlier gpal recorded for exact inputs
    (tmp_path / "m" / "config.json").write_text(json.dumps(config))
    loaded = NoisyGPClassifier.load(tmp_path / "m")
    assert (loaded.input_noise_, loaded.input_prior_) == ("none", None)
    np.testing.assert_array_equal(loaded.predict_proba(X), est.predict_proba(X))


@pytest.mark.parametrize("settings, chosen", [
    ({"input_prior": "broad"}, ("latent", "broad")),
    ({"input_prior": "broad", "prior_components": 9}, ("latent", "broad")),  # the broad prior needs no rows a component
    ({"input_noise": "latent"}, ("latent", "broad")),  # a named strategy keeps the papers' prior
    ({"input_noise": "amortized", "input_prior": "population"}, ("amortized", "population")),
])
def test_a_named_input_prior_is_honoured_and_auto_resolves_as_documented(settings, chosen, data, tmp_path):
    """An explicit prior beside input_noise='auto' is the prior the model has, not the population prior 'auto'
    would choose; the fitted model is the one the resolved names fit, and the choice survives saving."""
    from gpal.models.input_prior import BroadPrior, MixturePrior

    X, V, y = data
    est = NoisyGPClassifier(**{**SMALL, **settings}).fit(X, y, V)
    assert (est.input_noise_, est.input_prior_) == chosen
    assert isinstance(est.model_.strategy.prior, {"broad": BroadPrior, "population": MixturePrior}[chosen[1]])
    named = NoisyGPClassifier(**{**SMALL, **settings, "input_noise": chosen[0], "input_prior": chosen[1]}).fit(X, y, V)
    np.testing.assert_array_equal(est.predict_proba(X, V), named.predict_proba(X, V))
    est.save(tmp_path / "m")
    loaded = NoisyGPClassifier.load(tmp_path / "m")
    assert loaded.get_params() == est.get_params() and (loaded.input_noise_, loaded.input_prior_) == chosen
    np.testing.assert_array_equal(loaded.predict_proba(X, V), est.predict_proba(X, V))


def test_the_default_input_prior_is_auto_and_says_so_in_get_params():
    assert NoisyGPClassifier().get_params()["input_prior"] == "auto"
    with pytest.raises(ValueError, match="input_prior"):
        NoisyGPClassifier(input_prior="wide").validate_params()


def test_auto_with_learned_variances_is_refused_naming_the_fix():
    with pytest.raises(ValueError, match="noise_variance='learned' ignores; name an input_noise of"):
        NoisyGPClassifier(noise_variance="learned").validate_params()


@pytest.mark.parametrize("settings, why", [
    ({"prior_components": 9}, r"80 training rows are too few for the population prior's prior_components=9 "
                              r"\(10 rows each\); with prior_components=8 or fewer, or with input_prior='broad' "
                              r"\(the paper's prior\) it uses them"),
    ({"likelihood": "logistic_softmax", "inference": "cavi"}, "inference='cavi' models exact inputs"),
])
def test_where_auto_cannot_use_the_error_bars_it_fits_exact_inputs_and_says_why(settings, why, data):
    X, V, y = data
    params = {**SMALL, **settings}  # 9 components need 90 rows; 80 are given
    with pytest.warns(UserWarning, match="ignores input noise.*" + why):
        est = NoisyGPClassifier(**params).fit(X, y, V)
    assert est.input_noise_ == "none" and not est.needs_X_var


def test_the_tol_doc_states_the_trend_window_the_stop_reads():
    """The CLI's help shows the docstring, which cannot name a module path: the window is written as a number there."""
    from gpal.estimators.fit_plan import TREND_EPOCHS
    from gpal.estimators.noisy_gp import NoisyGPClassifier
    from gpal.estimators.settings import parameter_docs

    assert f"over the last {TREND_EPOCHS} epochs" in " ".join(parameter_docs(NoisyGPClassifier)["tol"].split())

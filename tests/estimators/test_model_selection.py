"""X_var through scikit-learn's model selection: routing with `noisy_scorer`, the one-array form with
`NoisyInputAdapter` and `NoisyStandardScaler`, and the warnings for error bars a model would misuse."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import sklearn
from sklearn.metrics import log_loss
from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_val_score, cross_validate
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from gpal import NoisyGPClassifier
from gpal.data.standardizer import Standardizer
from gpal.estimators.model_selection import NoisyInputAdapter, NoisyStandardScaler, noisy_scorer, split_inputs, stack_inputs

FAST = {"num_inducing": 5, "epochs": 3, "n_samples": 16, "batch_size": 30}


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(3)
    n = 90
    X = rng.normal(size=(n, 2)) * [1.0, 50.0] + [0.0, 500.0]  # a second feature in other units
    V = (rng.uniform(0.1, 0.4, size=(n, 2)) * [1.0, 50.0]) ** 2
    y = np.where(X[:, 0] + rng.normal(scale=0.5, size=n) > 0, "psr", "bll")
    return X, V, y


@pytest.fixture
def routing():
    with sklearn.config_context(enable_metadata_routing=True):
        yield


def _nimgp() -> NoisyGPClassifier:
    return NoisyGPClassifier(input_noise="latent", input_prior="population", prior_components=2, **FAST)


def test_the_noisy_log_loss_scorer_is_the_log_loss_of_predict_proba_with_x_var(data):
    X, V, y = data
    est = _nimgp().fit(X, y, V)
    expected = -log_loss(y, est.predict_proba(X, V), labels=est.classes_)
    assert noisy_scorer("neg_log_loss")(est, X, y, X_var=V) == pytest.approx(expected, rel=1e-12)
    # without X_var a model fitted with its error bars refuses, as it does when called directly
    with pytest.raises(ValueError, match="pass X_var"):
        noisy_scorer("neg_log_loss")(est, X, y)


def test_cross_val_score_with_neg_log_loss_routes_x_var(data, routing):
    X, V, y = data
    est = _nimgp().set_fit_request(X_var=True)
    folds = StratifiedKFold(n_splits=2, shuffle=True, random_state=0)
    scores = cross_val_score(est, X, y, cv=folds, scoring=noisy_scorer("neg_log_loss"), params={"X_var": V})
    # each fold's score is the log loss of a fit on the other fold, computed here by hand
    for score, (train, test) in zip(scores, folds.split(X, y)):
        fold = _nimgp().fit(X[train], y[train], V[train])
        assert score == pytest.approx(-log_loss(y[test], fold.predict_proba(X[test], V[test]), labels=fold.classes_),
                                      rel=1e-6)


def test_grid_search_and_cross_validate_route_x_var_with_two_scorers(data, routing):
    X, V, y = data
    est = _nimgp().set_fit_request(X_var=True)
    scoring = {"nll": noisy_scorer("neg_log_loss"), "acc": noisy_scorer("accuracy")}
    search = GridSearchCV(est, {"num_inducing": [3, 5]}, cv=2, scoring=scoring, refit="nll").fit(X, y, X_var=V)
    assert search.best_params_["num_inducing"] in (3, 5) and np.all(np.isfinite(search.cv_results_["mean_test_nll"]))
    result = cross_validate(est, X, y, cv=2, scoring=scoring, params={"X_var": V})
    assert np.all(result["test_acc"] >= 0) and np.all(result["test_nll"] < 0)


def test_a_pipeline_routes_x_var_to_fit_predict_proba_and_score(data, routing):
    X, V, y = data
    est = _nimgp().set_fit_request(X_var=True).set_predict_proba_request(X_var=True).set_score_request(X_var=True)
    pipe = make_pipeline(est).fit(X, y, X_var=V)
    direct = _nimgp().fit(X, y, V)
    np.testing.assert_array_equal(pipe.predict_proba(X, X_var=V), direct.predict_proba(X, V))
    assert pipe.score(X, y, X_var=V) == direct.score(X, y, X_var=V)


def test_a_standard_scaler_in_front_of_the_error_bars_is_warned_about(data, routing):
    X, V, y = data
    est = _nimgp().set_fit_request(X_var=True)
    with pytest.warns(UserWarning, match=r"feature 'x1' exceeds that feature's own variance.*NoisyStandardScaler"):
        make_pipeline(StandardScaler(), est).fit(X, y, X_var=V)


def test_a_step_that_changes_x_s_columns_and_not_x_var_s_is_refused_naming_the_fix(data, routing):
    from sklearn.preprocessing import FunctionTransformer

    X, V, y = data
    est = _nimgp().set_fit_request(X_var=True)
    with pytest.raises(ValueError, match=r"X_var must have the shape of X \(90, 1\); got \(90, 2\); in a Pipeline.*"
                                         r"changed X's columns .*stack_inputs, NoisyInputAdapter"):
        make_pipeline(FunctionTransformer(lambda A: A[:, :1]), est).fit(X, y, X_var=V)
    with pytest.raises(ValueError, match=r"got \(85, 2\); in a Pipeline, a step before this estimator changed X's rows"):
        _nimgp().fit(X, y, V[:85])  # what a step that drops rows hands on


def test_the_noisy_scaler_maps_values_and_variances_together(data):
    X, V, y = data
    scaler = NoisyStandardScaler().fit(stack_inputs(X, V))
    Z, Z_var = split_inputs(scaler.transform(stack_inputs(X, V)))
    # an independent computation: the sample's mean and spread
    np.testing.assert_allclose(Z, (X - X.mean(axis=0)) / X.std(axis=0))
    np.testing.assert_allclose(Z_var, V / X.var(axis=0))
    np.testing.assert_allclose(scaler.inverse_transform(np.hstack([Z, Z_var])), stack_inputs(X, V))
    with pytest.raises(ValueError, match="fitted on 2 features"):
        scaler.transform(np.zeros((3, 6)))


def test_a_pipeline_of_the_noisy_scaler_and_the_adapter_fits_as_the_estimator_alone(data):
    X, V, y = data
    XV = stack_inputs(X, V)
    pipe = make_pipeline(NoisyStandardScaler(), NoisyInputAdapter(_nimgp())).fit(XV, y)
    direct = _nimgp().fit(X, y, V)  # standardises X and X_var itself
    np.testing.assert_allclose(pipe.predict_proba(XV), direct.predict_proba(X, V), atol=1e-5)
    # and scikit-learn's own scorers work on the one array, in two processes too
    scores = cross_val_score(pipe, XV, y, cv=2, scoring="neg_log_loss", n_jobs=2)
    assert np.all(np.isfinite(scores)) and np.all(scores < 0)


def test_the_adapter_is_importable_where_modal_users_found_it():
    from gpal.active import modal

    assert modal.NoisyInputAdapter is NoisyInputAdapter and modal.stack_inputs is stack_inputs


@pytest.mark.parametrize("bad, message", [
    (lambda V: np.sqrt(V) * 0 + 1e12, r"over 1e\+06 times that feature's variance"),
    (lambda V: np.zeros_like(V), "zero everywhere"),
], ids=["1e12", "all zero"])
def test_error_bars_a_noisy_input_model_cannot_use_are_warned_about(bad, message, data):
    X, V, y = data
    huge = V.copy()
    huge[:3] = bad(V)[:3]
    given = bad(V) if message == "zero everywhere" else huge
    with pytest.warns(UserWarning, match=message):
        NoisyGPClassifier(input_noise="first_order", **FAST).fit(X, y, given)


def test_standard_deviations_given_as_variances_are_named(data):
    X, V, y = data
    X, V = X / [1.0, 1000.0], V / [1.0, 1e6]  # feature x1 in units where its spread is 0.05
    sd = np.c_[V[:, 0], np.sqrt(V[:, 1])]  # x1's error bars given as standard deviations
    NoisyGPClassifier(input_noise="first_order", **FAST).fit(X, y, V)  # the variances themselves: nothing said
    with pytest.warns(UserWarning, match="feature 'x1'.*standard deviations passed as variances") as record:
        NoisyGPClassifier(input_noise="first_order", **FAST).fit(X, y, sd)
    assert not any("'x0'" in str(w.message) for w in record)


def test_a_model_that_ignores_the_error_bars_says_so_and_how_to_use_them(data):
    X, V, y = data
    with pytest.warns(UserWarning, match="ignores input noise.*input_noise='latent', input_prior='population'"):
        NoisyGPClassifier(**FAST, input_noise="none").fit(X, y, V)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        NoisyGPClassifier(**FAST, input_noise="none").fit(X, y)  # nothing given, nothing said
        NoisyGPClassifier(**FAST, input_noise="none").fit(X, y, np.zeros_like(X))


def test_an_exact_input_dirichlet_gp_says_it_ignores_the_error_bars(data):
    from gpal import DirichletGPClassifier

    X, V, y = data
    with pytest.warns(UserWarning, match="DirichletGPClassifier.*ignores input noise.*input_noise='first_order'"):
        DirichletGPClassifier(num_inducing=5, max_iter=1, alpha_epsilon=0.01).fit(X, y, V)


def test_noisy_scorer_refuses_what_it_does_not_know():
    with pytest.raises(ValueError, match="neg_log_loss"):
        noisy_scorer("roc_auc_ovr")
    with pytest.raises(TypeError, match="metric function"):
        noisy_scorer(3)


def test_a_weighted_scorer_asks_for_and_passes_the_sample_weight(data):
    from sklearn.metrics import brier_score_loss

    X, V, y = data
    est = _nimgp().fit(X, y, V)
    weight = np.linspace(0.5, 2.0, len(y))
    proba = est.predict_proba(X, V)
    weighted = noisy_scorer("neg_log_loss", weighted=True)
    assert weighted(est, X, y, X_var=V, sample_weight=weight) == pytest.approx(
        -log_loss(y, proba, labels=est.classes_, sample_weight=weight), rel=1e-12)
    assert "sample_weight" in str(weighted.get_metadata_routing())
    assert "sample_weight" not in str(noisy_scorer("neg_log_loss").get_metadata_routing())
    # the binary Brier score reads the positive class' column, as scikit-learn's scorer does
    assert noisy_scorer("neg_brier_score")(est, X, y, X_var=V) == pytest.approx(
        -brier_score_loss(y, proba[:, 1], pos_label=est.classes_[1]), rel=1e-12)


def test_prediction_warns_of_misused_error_bars_as_fit_does(data):
    X, V, y = data
    X, V = X / [1.0, 1e4], V / [1.0, 1e8]  # feature x1 in units where its spread is 0.005
    est = NoisyGPClassifier(input_noise="first_order", **FAST).fit(X, y, V)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the variances themselves, zero ones (exact inputs) and one row: nothing said
        est.predict_proba(X, V)
        est.predict_proba(X, np.zeros_like(V))
        est.predict_proba(X[:1], np.sqrt(V[:1]) * 1e3)
    sd = np.c_[V[:, 0], np.sqrt(V[:, 1])]  # x1's error bars given as standard deviations
    with pytest.warns(UserWarning, match="feature 'x1' exceeds 10 times that feature's own variance across the "
                                         "sample.*standard deviations passed as variances") as record:
        est.predict_proba(X, sd)
    assert not any("'x0'" in str(w.message) for w in record)
    assert record[0].filename == __file__  # said at the user's call
    huge = V.copy()
    huge[:3, 0] = 1e12
    with pytest.warns(UserWarning, match=r"feature 'x0' holds 3 value\(s\) over 1e\+06 times"):
        est.predict(X, huge)

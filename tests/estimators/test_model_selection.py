"""X_var through scikit-learn's model selection: routing with `noisy_scorer`, the one-array form with
`NoisyInputAdapter` and `NoisyStandardScaler`, and the warnings for error bars a model would misuse."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import sklearn
from sklearn.metrics import accuracy_score, balanced_accuracy_score, log_loss, roc_auc_score
from sklearn.model_selection import GridSearchCV, StratifiedKFold, cross_val_score, cross_validate
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MinMaxScaler, RobustScaler, StandardScaler

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


def _wine_split(units: float = 1.0):
    from gpal.data.synthetic import wine_heteroscedastic

    data = wine_heteroscedastic(seed=0, units=units)
    return data.X, data.X_var, np.asarray(data.class_names)[data.y]


@pytest.mark.parametrize("scaler", [StandardScaler, MinMaxScaler, RobustScaler])
def test_a_scaler_on_features_of_small_spread_is_warned_about_naming_them(scaler, routing):
    """Wine in units where most spreads are below 1: a scaler scales X up and leaves X_var tiny, which no variance
    exceeds; X rescaled to rounding as the scaler leaves it, beside an X_var given apart, is what says it."""
    from gpal.estimators.base import RescaledWithoutVariancesWarning

    X, V, y = _wine_split(units=0.05)
    est = _nimgp().set_fit_request(X_var=True)
    with pytest.warns(RescaledWithoutVariancesWarning, match=r"rescaled to rounding.*'x0'.*'x12'.*"
                                                             r"NoisyStandardScaler"):
        make_pipeline(scaler(), est).fit(X, y, X_var=V)


def test_the_warnings_name_a_data_frame_s_columns(data):
    import pandas as pd

    X, V, y = data
    frame = pd.DataFrame(X, columns=["flux", "index"])
    wrong = V.copy()
    wrong[:, 1] = 10 * X[:, 1].var()  # the second feature's error bars ten times its spread
    with pytest.warns(UserWarning, match=r"feature 'index' exceeds that feature's own variance"):
        _nimgp().fit(frame, y, wrong)


def test_error_bars_given_only_at_prediction_are_said_to_be_ignored(data):
    X, V, y = data
    est = NoisyGPClassifier(**FAST).fit(X, y)  # input_noise="auto" without X_var: exact inputs
    with pytest.warns(UserWarning, match=r"fitted without error bars.*X_var given here is ignored"):
        proba = est.predict_proba(X, V)
    np.testing.assert_array_equal(proba, est.predict_proba(X))
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        est.predict_proba(X, np.zeros_like(V))  # zeros ask for exact inputs: nothing is ignored


@pytest.mark.parametrize("route", ["direct", "noisy scaler", "data set", "exact inputs"])
def test_no_rescaling_is_said_where_x_var_came_with_x(route):
    """gpal's own scalings and ordinary data pass without the warning: the values and variances as measured, the
    noisy scaler's one array, a standardised NoisyDataset, and a StandardScaler in front of a model given no X_var."""
    from gpal.data.synthetic import wine_heteroscedastic
    from gpal.estimators.base import RescaledWithoutVariancesWarning

    X, V, y = _wine_split(units=0.05)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RescaledWithoutVariancesWarning)
        if route == "direct":
            _nimgp().fit(X, y, V)
        elif route == "noisy scaler":
            make_pipeline(NoisyStandardScaler(), NoisyInputAdapter(_nimgp())).fit(stack_inputs(X, V), y)
        elif route == "data set":
            data = wine_heteroscedastic(seed=0, units=0.05)
            _nimgp().fit(Standardizer.fit(data).transform(data))
        else:
            make_pipeline(StandardScaler(), NoisyGPClassifier(input_noise="none", **FAST)).fit(X, y)


def test_a_step_that_changes_x_s_columns_and_not_x_var_s_is_refused_naming_the_fix(data, routing):
    from sklearn.preprocessing import FunctionTransformer

    X, V, y = data
    est = _nimgp().set_fit_request(X_var=True)
    with pytest.raises(ValueError, match=r"X_var must have the shape of X at the estimator \(90, 1\); got \(90, 2\); "
                                         r"in a Pipeline.*changed X's columns .*stack_inputs, NoisyInputAdapter"):
        make_pipeline(FunctionTransformer(lambda A: A[:, :1]), est).fit(X, y, X_var=V)
    with pytest.raises(ValueError, match=r"got \(85, 2\); in a Pipeline, a step before this estimator changed X's rows"):
        _nimgp().fit(X, y, V[:85])  # what a step that drops rows hands on


def test_a_pipeline_step_that_drops_rows_is_named_as_the_cause_at_fit_and_prediction(data, routing):
    """scikit-learn routes X_var past every step unchanged: a step that drops rows leaves it one row per source too
    many, which the estimator refuses, naming a step before it as the cause and the one-array form as the fix."""
    from sklearn.preprocessing import FunctionTransformer

    X, V, y = data
    est = _nimgp().set_fit_request(X_var=True).set_predict_proba_request(X_var=True)
    pipe = make_pipeline(FunctionTransformer(lambda A: A[:-5]), est)
    with pytest.raises(ValueError, match=r"X_var must have the shape of X at the estimator \(85, 2\); got \(90, 2\); "
                                         r"in a Pipeline, a step before this estimator changed X's rows \(a step that "
                                         r"resamples or drops rows\).*routes past every step unchanged.*stack_inputs, "
                                         r"NoisyInputAdapter.*outside a Pipeline, give X_var one row per row of X"):
        pipe.fit(X[:, :], y[:-5], X_var=V)
    fitted = make_pipeline(FunctionTransformer(lambda A: A), est).fit(X, y, X_var=V)
    fitted.steps[0] = ("drop", FunctionTransformer(lambda A: A[:-5]).fit(X))
    with pytest.raises(ValueError, match=r"got \(90, 2\); in a Pipeline, a step before this estimator changed X's rows"):
        fitted.predict_proba(X, X_var=V)


def test_probabilities_sum_to_one_as_log_loss_checks_them_and_exact_rows_stay_as_computed(data):
    """Sampled inputs average their draws in float32, whose rows scikit-learn's log_loss would warn of at every
    score; a first-order model's float64 rows are returned as the model computed them (a saved folder of one
    predicts exactly what it predicted before)."""
    X, V, y = data
    sampled = _nimgp().fit(X, y, V)
    raw = sampled.predict_proba_with(lambda S: sampled._session.predictor(S), X, V)[0]
    assert np.abs(raw.sum(axis=1) - 1).max() > 1e-9  # what is mended: float32 sums
    proba = sampled.predict_proba(X, V)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=0, atol=4 * np.finfo(np.float64).eps)
    np.testing.assert_allclose(proba, raw, rtol=2e-7)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        log_loss(y, proba)
    first_order = NoisyGPClassifier(input_noise="first_order", **FAST).fit(X, y, V)
    computed = first_order.predict_proba_with(lambda S: first_order._session.predictor(S), X, V)[0]
    np.testing.assert_array_equal(first_order.predict_proba(X, V), computed)


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
    with pytest.raises(ValueError, match="'log_loss' is not a scikit-learn scorer name.*get_scorer_names"):
        noisy_scorer("log_loss")
    with pytest.raises(TypeError, match="metric function"):
        noisy_scorer(3)


@pytest.fixture(scope="module")
def three_classes():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(120, 2)) * [1.0, 30.0]
    V = (rng.uniform(0.05, 0.3, size=X.shape) * [1.0, 30.0]) ** 2
    return X, V, np.array(["bll", "fsrq", "psr"])[np.digitize(X[:, 0], [-0.5, 0.5])]


@pytest.mark.parametrize("name, metric, response", [
    ("neg_log_loss", lambda y, p, c: -log_loss(y, p, labels=c), "predict_proba"),
    ("accuracy", lambda y, p, c: accuracy_score(y, p), "predict"),
    ("roc_auc_ovr", lambda y, p, c: roc_auc_score(y, p, multi_class="ovr", labels=c), "predict_proba"),
    ("balanced_accuracy", lambda y, p, c: balanced_accuracy_score(y, p), "predict"),
])
def test_any_scikit_learn_scorer_name_scores_with_the_routed_x_var(name, metric, response, three_classes, routing):
    """cross_val_score and GridSearchCV with scikit-learn's scorers by name, each fold's score computed here by hand
    from a fit on the other folds and the test rows' own error bars."""
    X, V, y = three_classes
    est = _nimgp().set_fit_request(X_var=True)
    folds = StratifiedKFold(n_splits=2, shuffle=True, random_state=0)
    scores = cross_val_score(est, X, y, cv=folds, scoring=noisy_scorer(name), params={"X_var": V})
    for score, (train, test) in zip(scores, folds.split(X, y)):
        fold = _nimgp().fit(X[train], y[train], V[train])
        predicted = getattr(fold, response)(X[test], V[test])
        assert score == pytest.approx(metric(y[test], predicted, fold.classes_), rel=1e-6)
    search = GridSearchCV(est, {"num_inducing": [3, 5]}, cv=folds, scoring=noisy_scorer(name))
    search.fit(X, y, X_var=V)
    assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))


def test_a_scorer_given_by_name_says_how_to_pass_x_var(three_classes, routing):
    """scikit-learn's scorers call predict_proba(X) alone; the NaN it then records comes with the fix."""
    X, V, y = three_classes
    with pytest.warns(UserWarning, match=r"Scoring failed(.|\n)*scoring=gpal.estimators.model_selection."
                                         r"noisy_scorer\('neg_log_loss'\)"):
        scores = cross_val_score(_nimgp().set_fit_request(X_var=True), X, y, cv=2, scoring="neg_log_loss",
                                 params={"X_var": V})
    assert np.all(np.isnan(scores))


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
    # a metric with make_scorer's options: the binary Brier score reads the positive class' column
    brier = noisy_scorer(brier_score_loss, greater_is_better=False, pos_label=est.classes_[1])
    assert brier(est, X, y, X_var=V) == pytest.approx(
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

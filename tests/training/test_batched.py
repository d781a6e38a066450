"""Batched training and shared-trace prediction equal one model at a time; what cannot share a step is refused."""

import copy
import json
import re

import numpy as np
import pytest
import tensorflow as tf

from gpal import NoisyGPClassifier
from gpal.data.synthetic import synthetic_2d
from gpal.estimators.batched import NotBatchable, fit_batched, predict_proba_batched
from gpal.models.input_prior import fit_mixture_prior
from gpal.models.state import module_values
from gpal.models.svgp import build_model
from gpal.runs.repeated_splits import run_repeated_splits, select_methods, unit_path
from gpal.training.batched import BatchedTrainer
from gpal.training.svi import SharedTrainer, TrainData, TrainingError

STRATEGIES = ["none", "latent", "amortized", "first_order"]


# Under -n, every test here goes to one worker (the group conftest.py gives the tests of the module fixture), so that
# each step of the few signatures they train is traced once in a process, not once per worker.
pytestmark = pytest.mark.xdist_group("tests/training/test_batched.py")


def _problem(k, n=40, d=3, C=3):
    rng = np.random.default_rng(k)
    X = rng.normal(size=(n, d))
    X_var = rng.uniform(0.01, 0.2, size=(n, d))
    X_var[:, -1] = 0.0  # an exact feature, as in the catalogs
    y = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0.5)
    return X, X_var, y


def _model(k, strategy, likelihood="robustmax", num_inducing=6, n=40, prior=None):
    """Model ``k``; with ``prior`` (a ``MixturePrior``), a population prior of its values."""
    X, X_var, y = _problem(k, n=n)
    model = build_model(X, y, num_classes=3, input_noise=strategy, likelihood=likelihood, num_inducing=num_inducing,
                        X_var=X_var, seed=k)
    if prior is not None:
        model.strategy.prior = copy.deepcopy(prior)
    return model, TrainData.from_arrays(X, X_var, y)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_batched_training_equals_training_one_at_a_time(strategy):
    # Two models: each equality below is per model, and a third adds a model but no code path
    # (K > 1 is vectorised the same way; test_a_failing_model... batches three).
    settings = dict(epochs=3, batch_size=16, learning_rate=0.01)
    alone = []
    for k in range(2):
        model, data = _model(k, strategy)
        alone.append((model, SharedTrainer(model, seed=10 + k).fit(data, progress=False, **settings)))
    pairs = [_model(k, strategy) for k in range(2)]
    results = BatchedTrainer([m for m, _ in pairs], [d for _, d in pairs], [10, 11]).fit(**settings)
    for (model, result), (batched, _), got in zip(alone, pairs, results):
        expected, values = module_values(model), module_values(batched)
        assert set(values) == set(expected)
        for path in expected:
            np.testing.assert_allclose(values[path], expected[path], rtol=0, atol=1e-10, err_msg=path)
        np.testing.assert_allclose(got.history, result.history, rtol=1e-12)
        assert got.steps == result.steps == 9
    # the models really moved, and apart: equal values would hide a step applied to the wrong model
    first, second = module_values(pairs[0][0]), module_values(pairs[1][0])
    assert not np.allclose(first[".gp.q_mu"], second[".gp.q_mu"])


@pytest.mark.parametrize("prior", ["broad", "population"])  # a population prior: each group's own values
def test_groups_of_one_signature_share_one_traced_step_bit_for_bit(monkeypatch, prior):
    import gpal.training.batched as batched
    from gpal.training.shared import LentBySignature

    settings = dict(epochs=2, batch_size=16, learning_rate=0.01)

    def group(ks, seeds, n):
        # one prior for the group, another for each group
        population = None if prior == "broad" else fit_mixture_prior(*_problem(100 + ks[0], n=60)[:2], 2)
        # NIMGP: per-point tables whose row count differs below
        pairs = [_model(k, "latent", n=n, prior=population) for k in ks]
        trainer = BatchedTrainer([m for m, _ in pairs], [d for _, d in pairs], seeds)
        return trainer.fit(**settings), [module_values(m) for m, _ in pairs], trainer.step

    # the first group's step: traced for it, or kept from the strategies' test above (the same group: one trace fewer)
    _, _, first = group([0, 1], [10, 11], n=40)
    shared_results, shared_values, shared = group([2, 3], [12, 13], n=30)  # other values, seeds and rows
    assert shared is first and shared.experimental_get_tracing_count() == 1
    monkeypatch.setattr(batched, "_GROUP_STEPS", LentBySignature(8))
    own_results, own_values, own = group([2, 3], [12, 13], n=30)  # the same group, its step traced for it alone
    assert own is not shared and own.experimental_get_tracing_count() == 1
    for got, expected, got_result, expected_result in zip(shared_values, own_values, shared_results, own_results):
        assert set(got) == set(expected)
        for path in expected:
            np.testing.assert_array_equal(got[path], expected[path], err_msg=path)
        assert got_result.history == expected_result.history and got_result.steps == expected_result.steps == 4


def test_an_error_in_a_loaded_block_drops_the_models_and_frees_the_step(monkeypatch):
    import gpal.training.batched as batched
    from gpal.training.shared import LentBySignature

    monkeypatch.setattr(batched, "_GROUP_STEPS", LentBySignature(8))
    pairs = [_model(k, "latent", n=20) for k in range(2)]
    trainer = BatchedTrainer([m for m, _ in pairs], [d for _, d in pairs], [0, 1])
    with pytest.raises(RuntimeError, match="in the block"):
        with trainer.loaded() as group:
            assert group.models == trainer.models and group.data.X.numpy().shape[1] == 20
            raise RuntimeError("in the block")
    assert group.models == [] and group.data.X.numpy().shape[1] == 0  # no user model or training set kept
    with trainer.loaded() as again:
        assert again is group and again.models == trainer.models


def test_softmax_monte_carlo_elbo_batches_too():
    alone, _ = _model(0, "latent", likelihood="softmax")
    data = _model(0, "latent", likelihood="softmax")[1]
    SharedTrainer(alone, seed=5).fit(data, epochs=2, batch_size=20, learning_rate=0.01, progress=False)
    pairs = [_model(k, "latent", likelihood="softmax") for k in range(2)]
    BatchedTrainer([m for m, _ in pairs], [d for _, d in pairs], [5, 6]).fit(epochs=2, batch_size=20, learning_rate=0.01)
    np.testing.assert_allclose(module_values(pairs[0][0])[".gp.q_mu"], module_values(alone)[".gp.q_mu"], atol=1e-10)


@pytest.mark.parametrize("change, named", [
    (dict(num_inducing=5), "num_inducing is 5 where model 0 has 6"),
    (dict(strategy="latent"), "noise_variance is"),
    (dict(likelihood="softmax"), "likelihood"),
])
def test_models_of_another_shape_or_family_are_refused_by_name(change, named):
    a, data_a = _model(0, "none")
    b, data_b = _model(1, change.pop("strategy", "none"), **change)
    with pytest.raises(NotBatchable, match=named):
        BatchedTrainer([a, b], [data_a, data_b], [0, 1])


def test_training_sets_of_another_size_are_refused():
    a, data_a = _model(0, "none")
    X, X_var, y = _problem(1, n=30)
    b = build_model(X, y, num_classes=3, input_noise="none", likelihood="robustmax", num_inducing=6, seed=1)
    with pytest.raises(NotBatchable, match="training set 1 has shape"):
        BatchedTrainer([a, b], [data_a, TrainData.from_arrays(X, X_var, y)], [0, 1])


def test_a_failing_model_is_reported_and_the_others_train_as_alone():
    pairs = [_model(k, "none") for k in range(3)]
    X, X_var, y = _problem(1)
    X[5, 0] = np.nan  # model 1's loss turns NaN at the first minibatch holding row 5
    pairs[1] = (pairs[1][0], TrainData.from_arrays(X, X_var, y))
    start = module_values(pairs[1][0])
    results = BatchedTrainer([m for m, _ in pairs], [d for _, d in pairs], [0, 1, 2]).fit(epochs=2, batch_size=16,
                                                                                        learning_rate=0.01)
    assert isinstance(results[1], TrainingError) and "epoch 0" in str(results[1])
    for path, value in module_values(pairs[1][0]).items():  # left at its start, not half-trained
        np.testing.assert_array_equal(value, start[path])
    alone, data = _model(2, "none")
    SharedTrainer(alone, seed=2).fit(data, epochs=2, batch_size=16, learning_rate=0.01, progress=False)
    np.testing.assert_allclose(module_values(pairs[2][0])[".gp.q_mu"], module_values(alone)[".gp.q_mu"], atol=1e-10)


# ------------------------------------------------------------------ estimators
def _sets(n_sets=3):
    """(train, test) pairs of (X, y, X_var), three classes in each."""
    out = []
    for k in range(n_sets):
        X, X_var, y = _problem(k, n=60, d=2)
        out.append(((X[:40], y[:40], X_var[:40]), (X[40:], y[40:], X_var[40:])))
    return out


#: the estimators of the batched-estimator tests; those trained alone are shared by the tests that compare with them
PARAMS = dict(input_noise="latent", num_inducing=5, epochs=3, batch_size=20, n_samples=20)


@pytest.fixture(scope="module")
def alone():
    """NoisyGPClassifier(PARAMS, random_state=k) fitted alone on _sets()[k]'s training set, k = 0, 1 (read only)."""
    return [NoisyGPClassifier(random_state=k, **PARAMS).fit(*train) for k, (train, _) in enumerate(_sets(2))]


def test_fit_batched_and_predict_proba_batched_equal_the_estimators_alone(alone):
    # Two estimators, as in the other estimator tests here: one group step traced for all (a third adds no code path)
    params = PARAMS
    problems = _sets(2)
    expected = [est.predict_proba(test[0], test[2]) for est, (_, test) in zip(alone, problems)]
    together = fit_batched([NoisyGPClassifier(random_state=k, **params) for k in range(2)], [p[0] for p in problems])
    got = predict_proba_batched(together, [test[0] for _, test in problems], [test[2] for _, test in problems])
    for a, b, est, ref in zip(got, expected, together, alone):
        np.testing.assert_allclose(a, b, atol=1e-9)
        assert est.history_ == pytest.approx(ref.history_, rel=1e-12)
    assert not np.allclose(got[0], got[1][: len(got[0])])


def test_estimators_of_other_shapes_are_trained_in_groups_and_one_alone_exactly_as_fit(alone):
    alone_fits = alone
    problems = _sets(4)
    trains = [p[0] for p in problems]
    trains[3] = tuple(a[:30] for a in trains[3])  # another training-set size: a group of its own
    params = [dict(PARAMS, random_state=k) for k in range(4)]
    params[2]["input_noise"] = "first_order"  # another family: a group of its own
    fits = fit_batched([NoisyGPClassifier(**p) for p in params], trains)
    for k, (est, p, train) in enumerate(zip(fits, params, trains)):
        # 0 and 1 have the module's estimators alone (same params, same training set), 2 and 3 are fitted here
        alone = alone_fits[k] if k < 2 else NoisyGPClassifier(**p).fit(*train)
        X, _, X_var = train
        if est is fits[0] or est is fits[1]:  # trained together: equal up to rounding
            np.testing.assert_allclose(est.predict_proba(X, X_var), alone.predict_proba(X, X_var), atol=1e-9)
        else:
            np.testing.assert_array_equal(est.predict_proba(X, X_var), alone.predict_proba(X, X_var))
            assert est.history_ == alone.history_


def test_warm_started_estimators_continue_together_as_alone():
    params = dict(PARAMS, epochs=2, warm_start=True)  # PARAMS' model and draws: the step and predictor kept for them
    problems = _sets(2)
    first = [tuple(a[:30] for a in p[0]) for p in problems]
    alone = [NoisyGPClassifier(random_state=k, **params).fit(*f) for k, f in enumerate(first)]
    together = fit_batched([NoisyGPClassifier(random_state=k, **params) for k in range(2)], first)
    models = [est.model_ for est in together]
    trainer = together[0]._session.batched_trainer
    step = trainer.step
    for est, train in zip(alone, problems):
        est.fit(*train[0])
    fit_batched(together, [p[0] for p in problems])  # 40 rows now, not 30
    assert all(est._session.batched_trainer is trainer for est in together)  # the same group: kept, not traced again
    assert trainer.step is step and trainer.step.experimental_get_tracing_count() == 1
    for a, b, model, (train, _) in zip(together, alone, models, problems):
        assert a.model_ is model  # continued, not rebuilt
        assert len(a.history_) == 4
        np.testing.assert_allclose(a.predict_proba(train[0], train[2]), b.predict_proba(train[0], train[2]), atol=1e-9)


@pytest.mark.parametrize("second, reason", [
    (dict(epochs=4), "epochs=4"),
    (dict(early_stopping=True), "early_stopping"),
])
def test_estimators_that_cannot_share_a_step_are_refused(second, reason):
    params = dict(num_inducing=5, epochs=3)
    problems = _sets(2)
    with pytest.raises(NotBatchable, match=reason):
        fit_batched([NoisyGPClassifier(**params), NoisyGPClassifier(**{**params, **second})], [p[0] for p in problems])


def test_bad_data_fails_its_own_estimator_only():
    (good, _), ((X, y, X_var), _) = _sets(2)
    X = X.copy()
    X[3, 0] = np.nan
    out = fit_batched([NoisyGPClassifier(num_inducing=5, epochs=2) for _ in range(2)], [good, (X, y, X_var)],
                      errors="return")
    assert isinstance(out[0], NoisyGPClassifier) and hasattr(out[0], "model_")
    assert isinstance(out[1], ValueError) and "NaN" in str(out[1])
    with pytest.raises(ValueError, match="NaN"):
        fit_batched([NoisyGPClassifier(num_inducing=5, epochs=2) for _ in range(2)], [good, (X, y, X_var)])


# ------------------------------------------------------------- repeated splits
def test_repeated_splits_in_batches_equal_one_unit_at_a_time(tmp_path):
    data = synthetic_2d(n_train=120, n_test=1, seed=1).train
    methods = select_methods(["MGP", "NIMGP"], epochs=2, num_inducing=5, batch_size=30, n_samples=20, progress=False)
    args = dict(n_splits=3, test_size=0.25, seed=3, progress=False)
    run_repeated_splits(data, methods, tmp_path / "alone", **args)
    run_repeated_splits(data, methods, tmp_path / "batched", models_per_batch=2, **args)
    for method in methods:
        for k in range(3):
            a = json.loads(unit_path(tmp_path / "alone", method, k).read_text())
            b = json.loads(unit_path(tmp_path / "batched", method, k).read_text())
            assert a["test_ids"] == b["test_ids"] and a["estimator_seed"] == b["estimator_seed"]
            np.testing.assert_allclose(b["proba"], a["proba"], atol=1e-9)


def test_a_method_that_cannot_be_batched_runs_one_unit_at_a_time(tmp_path):
    data = synthetic_2d(n_train=80, n_test=1, seed=1).train
    methods = {"early": {"input_noise": "none", "epochs": 3, "num_inducing": 5, "early_stopping": True,
                         "validation_interval": 1}}
    summary = run_repeated_splits(data, methods, tmp_path, n_splits=2, test_size=0.25, models_per_batch=2,
                                  progress=False)
    assert summary["methods"]["early"]["n_splits"] == 2


def test_models_per_batch_must_be_a_positive_integer(tmp_path):
    data = synthetic_2d(n_train=40, n_test=1, seed=1).train
    with pytest.raises(ValueError, match="models_per_batch must be an integer >= 1"):
        run_repeated_splits(data, select_methods(["MGP"]), tmp_path, n_splits=1, models_per_batch=0, progress=False)


# ---------------------------------------------------------------------- kernels
def test_the_papers_kernel_by_name_trains_saves_and_clones(tmp_path):
    from sklearn.base import clone

    (train, (X_test, _, _)), = _sets(1)
    est = NoisyGPClassifier(kernel="se_ard_plus_noise", num_inducing=5, epochs=2).fit(*train[:2])
    kernel = est.model_.gp.kernels[0]
    white = [k for k in kernel.kernels if type(k).__name__ == "White"]
    assert len(white) == 1 and float(white[0].variance.numpy()) != 0.01  # learned from its start
    est.save(tmp_path / "m")
    again = NoisyGPClassifier.load(tmp_path / "m")
    np.testing.assert_array_equal(again.predict_proba(X_test), est.predict_proba(X_test))
    assert clone(est).kernel == "se_ard_plus_noise"
    # the white term adds sigma_0^2 to the prior variance at every input, and correlates no two
    X = tf.constant(X_test[:4])
    np.testing.assert_allclose(np.diag(kernel(X)) - kernel(X, full_cov=False), 0, atol=1e-12)
    np.testing.assert_allclose(kernel(X, X + 1e-9)[0, 0] + float(white[0].variance.numpy()), kernel(X)[0, 0], rtol=1e-6)


def test_an_unknown_kernel_name_is_refused_with_the_known_ones():
    from gpal.registry import KERNELS

    known = list(KERNELS)
    assert {"se_ard", "se_iso_plus_noise", "se_iso_plus_fixed_white"} <= set(known)
    with pytest.raises(ValueError, match=re.escape(f"kernel must be None, a kernel name {known}")):
        NoisyGPClassifier(kernel="matern").fit(np.zeros((4, 2)), [0, 1, 0, 1])


def test_a_batch_the_device_has_no_memory_for_is_halved_not_crashed(monkeypatch):
    import gpal.estimators.batched as batched

    sizes = []
    real_fit = BatchedTrainer.fit

    def fit_small_batches_only(self, **settings):
        sizes.append(len(self.models))
        if len(self.models) > 1:
            raise tf.errors.ResourceExhaustedError(None, None, "OOM when allocating tensor")
        return real_fit(self, **settings)

    monkeypatch.setattr(batched.BatchedTrainer, "fit", fit_small_batches_only)
    problems = _sets(3)
    fits = fit_batched([NoisyGPClassifier(num_inducing=5, epochs=1, random_state=k) for k in range(3)],
                       [p[0] for p in problems])
    assert sizes == [3, 2]  # then its models alone, each by its own trainer
    assert all(hasattr(f, "model_") for f in fits)

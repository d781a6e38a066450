"""The resumable pool-based loop and the oracles.

Loop logic runs on a fast stand-in (logistic regression on [X, X_var]); one short
run uses the real NoisyGPClassifier, killed and resumed.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression

from gpal.active import (
    ActiveLearningLoop,
    ConfigMismatch,
    FileOracle,
    LabelsPending,
    OracleError,
    SimulatedOracle,
    initial_pool_test_split,
    read_state,
    run_together,
)
from gpal.data.dataset import NoisyDataset
from gpal.estimators.base import GPClassifierMixin, check_fit_data, check_predict_data
from gpal.saved_models import classes_from_json, classes_to_json, load_model_dir, save_model_dir


class LogisticStandIn(GPClassifierMixin, BaseEstimator):
    """Logistic regression on [X, X_var]; ``epochs`` = L-BFGS iterations; warm start keeps the coefficients."""

    def __init__(self, epochs: int = 30, warm_start: bool = False, C: float = 1.0):
        self.epochs, self.warm_start, self.C = epochs, warm_start, C

    def fit(self, X, y=None, X_var=None):
        data = check_fit_data(X, y, X_var)
        if not (self.warm_start and hasattr(self, "lr_")):
            self.lr_ = LogisticRegression(C=self.C, warm_start=True)
        self.lr_.max_iter = self.epochs
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            self.lr_.fit(np.hstack([data.X, data.X_var]), data.classes[data.y])
        self.classes_ = data.classes
        self.n_features_in_ = data.X.shape[1]
        return self

    def predict_proba(self, X, X_var=None):
        Xa, V = check_predict_data(X, X_var, self.n_features_in_, needs_variance=False)
        return self.lr_.predict_proba(np.hstack([Xa, V]))

    def save(self, path):
        save_model_dir(path, "standin", 1, {"params": self.get_params(), "classes": classes_to_json(self.classes_),
                                            "n_features_in": self.n_features_in_},
                       {"coef": self.lr_.coef_, "intercept": self.lr_.intercept_})

    @classmethod
    def load(cls, path):
        config, arrays = load_model_dir(path, "standin", 1)
        est = cls(**config["params"])
        est.classes_ = classes_from_json(config["classes"])
        est.n_features_in_ = config["n_features_in"]
        est.lr_ = LogisticRegression(C=est.C, warm_start=True)
        est.lr_.coef_, est.lr_.intercept_, est.lr_.classes_ = arrays["coef"], arrays["intercept"], est.classes_
        return est


def blobs(n=120, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    centres = np.array([[0.0, 0.0], [2.0, 0.5], [0.5, 2.0]])
    X = centres[y] + rng.normal(size=(n, 2))
    return NoisyDataset(X=X, X_var=rng.uniform(0.01, 0.3, size=(n, 2)), y=y, class_names=("agn", "psr", "snr"),
                        feature_names=("f1", "f2"), ids=[f"J{i:04d}" for i in range(n)])


@pytest.fixture
def sets():
    return initial_pool_test_split(blobs(), n_initial=15, n_pool=60, n_test=45, seed=1)


class Kill(Exception):
    pass


def make_loop(sets, tmp_path, **kw):
    initial, pool, test = sets
    args = dict(acquisition="entropy", batch_size=3, n_queries=6, retrain_epochs=5, checkpoint_dir=tmp_path / "ck",
                progress=False)
    args.update(kw)
    oracle = args.pop("oracle", SimulatedOracle(pool))
    return ActiveLearningLoop(LogisticStandIn(epochs=40), initial, pool, oracle, test=test, **args)


def test_split_is_disjoint_without_replacement(sets):
    initial, pool, test = sets
    ids = [*initial.ids, *pool.ids, *test.ids]
    assert (len(initial), len(pool), len(test)) == (15, 60, 45) and len(set(ids)) == 120
    with pytest.raises(ValueError, match="only 120"):
        initial_pool_test_split(blobs(), 50, 50, 50)


@pytest.mark.parametrize("acquisition", ["entropy", {"name": "random", "seed": 2}, {"name": "margin", "batch": "diverse"},
                                         {"name": "entropy", "balance": True, "batch": "stochastic", "batch_seed": 3}])
def test_killed_and_resumed_run_equals_uninterrupted(sets, tmp_path, acquisition):
    reference = make_loop(sets, tmp_path / "a", acquisition=acquisition, checkpoint_dir=None).run()

    asked = []

    def oracle(query, queried, scores, proba, class_names):
        asked.extend(queried.ids.tolist())
        if query == 4 and len(asked) <= 12:  # dies once while being asked for query 4 (pending phase)
            raise Kill("oracle unreachable")
        return SimulatedOracle(sets[1])(query, queried, scores, proba, class_names)

    def die_after_two(query, row):
        if query == 2:
            raise Kill("killed after query 2")

    with pytest.raises(Kill, match="after query 2"):
        make_loop(sets, tmp_path, acquisition=acquisition, oracle=oracle, callback=die_after_two).run()
    assert len(read_state(tmp_path / "ck")["metrics"]) == 3  # steps 0, 1, 2 are durable
    with pytest.raises(Kill, match="unreachable"):
        make_loop(sets, tmp_path, acquisition=acquisition, oracle=oracle).run()
    state = read_state(tmp_path / "ck")
    assert state["pending"]["query"] == 4 and len(state["queries"]) == 3
    result = make_loop(sets, tmp_path, acquisition=acquisition, oracle=oracle).run()

    assert result.labelled_ids == reference.labelled_ids
    assert len(set(result.labelled_ids)) == 15 + 18
    pd.testing.assert_frame_equal(result.metrics, reference.metrics)
    # each source asked once, except the pending query 4 whose first asking got no answer
    pending = state["pending"]["ids"]
    assert sorted(asked) == sorted(result.labelled_ids[15:] + pending)
    assert sorted(p.name for p in (tmp_path / "ck").glob("model_*")) == ["model_0006"]


def test_metrics_after_every_query_and_estimator_untouched(sets, tmp_path):
    loop = make_loop(sets, tmp_path)
    result = loop.run()
    assert list(result.metrics.step) == list(range(7))
    assert list(result.metrics.n_labelled) == [15 + 3 * k for k in range(7)]
    for col in ("error", "nll", "ece"):
        assert result.metrics[col].notna().all()
    assert loop.estimator.get_params()["warm_start"] is False  # the user's estimator is cloned
    assert result.estimator.get_params()["warm_start"] is True and result.estimator.epochs == 5
    # a rerun of a finished checkpoint does nothing new and gives the same result
    again = make_loop(sets, tmp_path).run()
    assert again.labelled_ids == result.labelled_ids


def test_resume_with_changed_config_names_the_keys(sets, tmp_path):
    make_loop(sets, tmp_path, n_queries=1).run()
    with pytest.raises(ConfigMismatch, match=r"acquisition\.name.*batch_size|batch_size.*acquisition\.name"):
        make_loop(sets, tmp_path, n_queries=1, batch_size=2, acquisition="margin").run()
    more = make_loop(sets, tmp_path, n_queries=2).run()  # raising n_queries is allowed: ask for more labels
    assert len(more.queries) == 2


def test_bad_setups_are_clear_errors(sets, tmp_path):
    initial, pool, test = sets
    with pytest.raises(ValueError, match="pool has 60.*need 63.*smaller than the batches"):
        make_loop(sets, tmp_path, batch_size=21, n_queries=3)
    with pytest.raises(ValueError, match="pool and test sets share"):
        ActiveLearningLoop(LogisticStandIn(), initial, pool, SimulatedOracle(pool),
                           test=NoisyDataset.concatenate([test, pool.subset([0])]))
    with pytest.raises(ValueError, match="no epochs parameter"):
        ActiveLearningLoop(LogisticRegression(), initial, pool, SimulatedOracle(pool), retrain_epochs=3)
    with pytest.raises(TypeError, match="no save"):
        ActiveLearningLoop(LogisticRegression(), initial, pool, SimulatedOracle(pool))


def test_oracle_label_outside_classes_keeps_what_was_labelled(sets, tmp_path):
    def liar(query, queried, scores, proba, class_names):
        labels = SimulatedOracle(sets[1])(query, queried, scores, proba, class_names)
        return labels if query < 3 else ["blazar"] + labels[1:]

    with pytest.raises(OracleError, match="outside the known classes.*blazar"):
        make_loop(sets, tmp_path, oracle=liar).run()
    state = read_state(tmp_path / "ck")
    assert len(state["queries"]) == 2 and state["pending"]["query"] == 3
    assert make_loop(sets, tmp_path).run().labelled_ids == make_loop(sets, tmp_path / "b").run().labelled_ids


OUTCOMES = {"pwn": None, "nothing": None, "blazar": "agn"}


def test_a_follow_up_of_another_class_is_recorded_and_the_loop_goes_on(sets, tmp_path):
    """An outcome beyond the classes: recorded, out of the pool, trained on as its mapped class or not at all."""
    truth = dict(zip(sets[1].ids, sets[1].labels()))
    found = {}

    def observer(query, queried, scores, proba, class_names, outcomes=()):
        labels = [truth[i] for i in queried.ids]
        labels[0] = {1: "pwn", 2: "nothing", 3: "blazar"}.get(query, labels[0])
        found.update({queried.ids[0]: labels[0]})
        assert set(outcomes) == set(OUTCOMES)
        return labels

    result = make_loop(sets, tmp_path, oracle=observer, n_queries=4, outcomes=OUTCOMES).run()
    assert [q["labels"][0] for q in result.queries[:3]] == ["pwn", "nothing", "blazar"]
    queried = [i for q in result.queries for i in q["ids"]]
    assert len(queried) == len(set(queried)) == 12  # every queried source left the pool, none asked twice
    # trained on: the initial 15 and every query's sources but the pwn and the nothing-found (the blazar as agn)
    assert result.metrics["n_labelled"].tolist() == [15, 17, 19, 22, 25]
    state = read_state(tmp_path / "ck")
    loop = make_loop(sets, tmp_path, oracle=observer, n_queries=4, outcomes=OUTCOMES)
    trained = loop._labelled_now(state)
    by_label = {lab: i for i, lab in found.items()}
    assert by_label["pwn"] not in trained.ids and by_label["nothing"] not in trained.ids
    assert trained.labels()[trained.ids.tolist().index(by_label["blazar"])] == "agn"
    # without the outcomes, the same checkpoint is another run
    with pytest.raises(ConfigMismatch, match="outcomes"):
        make_loop(sets, tmp_path, oracle=observer, n_queries=4).run()


def test_a_near_miss_of_a_class_or_outcome_is_named(sets, tmp_path):
    def shouting(query, queried, scores, proba, class_names, outcomes=()):
        return ["PWN"] + ["agn"] * (len(queried) - 1)

    with pytest.raises(OracleError, match=r"outside the known classes \['agn', 'psr', 'snr'\] and outcomes "
                                          r"\['blazar', 'nothing', 'pwn'\].*'PWN' \(did you mean 'pwn'\? case matters\)"):
        make_loop(sets, tmp_path, oracle=shouting, outcomes=OUTCOMES).run()


@pytest.mark.parametrize("outcomes, message", [
    ({"psr": None}, "outcome 'psr' is already one of the classes"),
    ({"pwn": "pulsar"}, "outcome 'pwn' maps to 'pulsar', which is not one of the classes"),
    ({"": None}, "an outcome must be a non-empty label"),
])
def test_bad_outcomes_are_refused(sets, tmp_path, outcomes, message):
    with pytest.raises(ValueError, match=message):
        make_loop(sets, tmp_path, outcomes=outcomes)


def test_file_oracle_writes_the_twin_before_the_query_so_no_query_lacks_it(sets, tmp_path):
    queried = sets[1].subset([0, 1])
    args = (np.array([0.3, 0.2]), np.full((2, 2), 0.5), ("agn", "psr"))
    seen = []

    def failing(frame, path):
        seen.append(list(frame.columns))
        raise OSError("disk full")

    oracle = FileOracle(tmp_path / "labels", twin=failing)
    with pytest.raises(OSError, match="disk full"):
        oracle(1, queried, *args)
    assert seen == [["Source_Name", "score", "p_agn", "p_psr"]]  # the rows less label
    assert not oracle.path(1).exists()  # the query is not asked without its twin; a rerun writes both
    oracle.twin = lambda frame, path: frame.to_csv(path.with_suffix(".twin"), index=False)
    with pytest.raises(LabelsPending):
        oracle(1, queried, *args)
    assert pd.read_csv(oracle.path(1).with_suffix(".twin"))["Source_Name"].tolist() == queried.ids.tolist()


def test_file_oracle_round_trip_and_errors(sets, tmp_path):
    pool = sets[1]
    queried = pool.subset([0, 1, 2])
    classes = ("agn", "psr", "snr")
    oracle = FileOracle(tmp_path / "labels", timeout=0)
    proba = np.full((3, 3), 1 / 3)
    with pytest.raises(LabelsPending, match="query_0001.csv"):
        oracle(1, queried, np.array([0.3, 0.2, 0.1]), proba, classes)
    path = oracle.path(1)
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    assert list(frame.columns) == ["Source_Name", "score", "p_agn", "p_psr", "p_snr", "label"]
    assert frame.Source_Name.tolist() == queried.ids.tolist()

    def fill(labels, names=None):
        f = frame.copy()
        f["label"] = labels
        if names is not None:
            f["Source_Name"] = names
        f.to_csv(path, index=False)

    fill(["psr", "", "agn"])
    with pytest.raises(LabelsPending):
        oracle(1, queried, np.zeros(3), proba, classes)
    fill(["psr", "snr", "agn"])
    assert oracle(1, queried, np.zeros(3), proba, classes) == ["psr", "snr", "agn"]
    fill(["psr", "snr", "agn"])  # the file is never overwritten by a second ask
    assert oracle(1, queried, np.ones(3), proba, classes) == ["psr", "snr", "agn"]
    fill(["psr", "snr", "pulsar"])
    with pytest.raises(OracleError, match=r"outside the known classes.*=\'pulsar\'"):
        oracle(1, queried, np.zeros(3), proba, classes)
    fill(["psr", "snr", "agn"], names=[queried.ids[0], queried.ids[1], "4FGL J9999.9+9999"])
    with pytest.raises(OracleError, match=r"unknown \(not queried\).*J9999.*missing.*" + queried.ids[2]):
        oracle(1, queried, np.zeros(3), proba, classes)
    fill(["psr", "snr", "agn"], names=[queried.ids[0], queried.ids[1], queried.ids[0]])
    with pytest.raises(OracleError, match=f"labelled twice with different classes: {queried.ids[0]}: \\['agn', 'psr'\\]"):
        oracle(1, queried, np.zeros(3), proba, classes)
    fill(["psr", "pwn", "nothing"])  # outcomes beyond the classes, where the loop allows them
    assert oracle(1, queried, np.zeros(3), proba, classes, outcomes=["nothing", "pwn"]) == ["psr", "pwn", "nothing"]
    with pytest.raises(OracleError, match="outside the known classes"):
        oracle(1, queried, np.zeros(3), proba, classes)


def test_loop_with_file_oracle_waits_then_resumes(sets, tmp_path):
    oracle = FileOracle(tmp_path / "labels", timeout=0)
    with pytest.raises(LabelsPending):
        make_loop(sets, tmp_path, oracle=oracle, n_queries=2).run()
    path = oracle.path(1)
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    truth = dict(zip(sets[1].ids, sets[1].labels()))
    frame["label"] = [truth[i] for i in frame.Source_Name]
    frame.to_csv(path, index=False)
    with pytest.raises(LabelsPending, match="query 2"):
        make_loop(sets, tmp_path, oracle=oracle, n_queries=2).run()
    state = read_state(tmp_path / "ck")
    assert state["queries"][0]["ids"] == frame.Source_Name.tolist() and state["pending"]["query"] == 2


@pytest.mark.slow
@pytest.mark.parametrize("acquisition", [{"name": "bald", "n_samples": 8}, {"name": "epig", "n_samples": 8, "n_target": 10}])
def test_real_noisy_gp_classifier_killed_and_resumed(tmp_path, acquisition):
    from gpal.estimators.noisy_gp import NoisyGPClassifier
    from gpal.data.synthetic import waveform

    initial, pool, test = initial_pool_test_split(waveform(90, seed=0), 20, 40, 30, seed=0)
    initial, pool, test = (ds.with_features(ds.X, ds.X_var + 0.1) for ds in (initial, pool, test))
    est = NoisyGPClassifier(input_noise="first_order", num_inducing=8, epochs=8, batch_size=20, n_samples=5,
                            progress=False)

    def loop(ck, **kw):
        return ActiveLearningLoop(est, initial, pool, SimulatedOracle(pool), test=test, batch_size=2, n_queries=2,
                                  acquisition=acquisition, retrain_epochs=3,
                                  checkpoint_dir=ck, progress=False, **kw)

    reference = loop(tmp_path / "ref").run()

    def die(query, row):
        raise Kill

    with pytest.raises(Kill):
        loop(tmp_path / "ck", callback=die).run()
    result = loop(tmp_path / "ck").run()
    assert result.labelled_ids == reference.labelled_ids and len(set(result.labelled_ids)) == 24
    pd.testing.assert_frame_equal(result.metrics, reference.metrics)
    assert result.estimator.warm_start and len(result.estimator.history_) == 8 + 3 + 3
    assert all(min(q["scores"]) >= 0 for q in result.queries)  # mutual informations, from the posterior draws


class InterruptedOnce(LogisticStandIn):
    """Training 'interrupted by Ctrl-C' (stopped_early_) on the third fit of the process."""

    fits = 0

    def fit(self, X, y=None, X_var=None):
        super().fit(X, y, X_var)
        InterruptedOnce.fits += 1
        self.stopped_early_ = InterruptedOnce.fits == 3
        return self


def test_ctrl_c_during_training_checkpoints_nothing_half_trained(sets, tmp_path):
    initial, pool, test = sets
    reference = make_loop(sets, tmp_path / "ref").run()

    def loop():
        return ActiveLearningLoop(InterruptedOnce(epochs=40), initial, pool, SimulatedOracle(pool), test=test,
                                  acquisition="entropy", batch_size=3, n_queries=6, retrain_epochs=5, checkpoint_dir=tmp_path / "ck",
                                  progress=False)

    with pytest.raises(KeyboardInterrupt):
        loop().run()
    state = read_state(tmp_path / "ck")
    assert len(state["metrics"]) == 2 and len(state["queries"]) == 2  # query 2 labelled, its training not kept
    result = loop().run()
    assert result.labelled_ids == reference.labelled_ids
    pd.testing.assert_frame_equal(result.metrics, reference.metrics)


# ------------------------------------------------------------------ lock step
def _gp_loops(root, strategies, n_queries=2, oracle=None):
    """Waveform loops of one NoisyGPClassifier (shareable steps), one per strategy, checkpointed under ``root``."""
    from gpal.data.synthetic import waveform
    from gpal.estimators.noisy_gp import NoisyGPClassifier

    initial, pool, test = initial_pool_test_split(waveform(80, seed=2), 16, 34, 30, seed=0)
    est = NoisyGPClassifier(input_noise="latent", noise_variance="learned", num_inducing=6, epochs=4, batch_size=20,
                            n_samples=8, random_state=3)
    return [ActiveLearningLoop(est, initial, pool, oracle or SimulatedOracle(pool), test=test, acquisition=s,
                               batch_size=2, n_queries=n_queries, retrain_epochs=2, checkpoint_dir=root / s,
                               progress=False)
            for s in strategies]


@pytest.fixture(scope="module")
def gp_alone(tmp_path_factory):
    """Each strategy's loop of ``_gp_loops`` (two queries) run alone: the lock-step tests' reference (read only)."""
    strategies = ["entropy", "random", "margin"]
    return dict(zip(strategies, (loop.run() for loop in _gp_loops(tmp_path_factory.mktemp("alone"), strategies))))


@pytest.fixture
def batched_sizes(monkeypatch):
    """The number of models of every batched training step taken."""
    from gpal.training.batched import BatchedTrainer

    sizes, real_fit = [], BatchedTrainer.fit

    def spy(self, **settings):
        sizes.append(len(self.models))
        return real_fit(self, **settings)

    monkeypatch.setattr(BatchedTrainer, "fit", spy)
    return sizes


def test_loops_run_together_train_as_one_batch_and_equal_each_run_alone(tmp_path, batched_sizes, gp_alone):
    strategies = ["entropy", "random", "margin"]
    together = run_together(_gp_loops(tmp_path / "together", strategies))
    assert batched_sizes == [3, 3, 3]  # the initial fit and two retrainings, each one batched step for all
    for result, s in zip(together, strategies):
        alone = gp_alone[s]
        assert result.labelled_ids == alone.labelled_ids
        pd.testing.assert_frame_equal(result.metrics, alone.metrics, rtol=1e-6)
        assert len(result.estimator.history_) == 4 + 2 + 2


def test_loops_at_different_steps_resume_together(tmp_path, batched_sizes, gp_alone):
    strategies = ["entropy", "random"]
    run_together(_gp_loops(tmp_path, strategies[:1], n_queries=1))  # entropy has a query done, random nothing
    assert batched_sizes == []  # one loop alone trains as its own run would
    resumed = run_together(_gp_loops(tmp_path, strategies, n_queries=2))
    for result, ref in zip(resumed, (gp_alone[s] for s in strategies)):
        assert result.labelled_ids == ref.labelled_ids
        pd.testing.assert_frame_equal(result.metrics, ref.metrics, rtol=1e-6)
    assert 2 in batched_sizes  # once both had the same training-set size, they trained together


def test_a_loop_that_fails_gives_its_error_and_the_others_finish(tmp_path):
    class Refuses(SimulatedOracle):
        def __call__(self, query, queried, *args):
            raise OracleError("the telescope is closed")

    ok, bad = _gp_loops(tmp_path, ["entropy"]), _gp_loops(tmp_path / "bad", ["random"], oracle=None)
    bad[0].oracle = Refuses(bad[0].pool)
    results = run_together(ok + bad, errors="return")
    assert len(results[0].metrics) == 3
    assert isinstance(results[1], OracleError) and "closed" in str(results[1])
    with pytest.raises(OracleError, match="closed"):
        run_together(_gp_loops(tmp_path / "again", ["random"]) + [bad[0]])
    with pytest.raises(ValueError, match="errors must be"):
        run_together(ok, errors="ignore")


def test_loops_of_an_estimator_that_cannot_batch_run_one_at_a_time(sets, tmp_path):
    loops = [make_loop(sets, tmp_path / s, acquisition=s) for s in ("entropy", "random")]
    together = run_together(loops)
    for result, s in zip(together, ("entropy", "random")):
        alone = make_loop(sets, tmp_path / f"alone_{s}", acquisition=s).run()
        assert result.labelled_ids == alone.labelled_ids
        pd.testing.assert_frame_equal(result.metrics, alone.metrics)

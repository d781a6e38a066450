"""The repeated-split runner: same splits for the same seed, resume after interruption, summaries."""

import json

import numpy as np
import pytest

from gpal.data.dataset import NoisyDataset
from gpal.runs.executors import Executor
from gpal.runs.repeated_splits import run_repeated_splits, select_methods, summarize, unit_path
from gpal.evaluation.metrics import negative_log_likelihood


def _dataset(n=60, seed=0):
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(3), n // 3)
    X = rng.normal(size=(n, 2)) + y[:, None] * 1.5
    X_var = rng.uniform(0.01, 0.1, size=X.shape)
    return NoisyDataset(X, X_var, y, ("a", "b", "c"), ("f0", "f1"), [f"s{i}" for i in range(n)])


class NoisyCentroid:
    """Cheap stand-in estimator: softmax of negative distances to class means, with seeded jitter."""

    fits = []

    def __init__(self, seed):
        self.seed = seed

    def fit(self, X, y, X_var=None):
        NoisyCentroid.fits.append(self.seed)
        self.classes_ = np.unique(y)
        jitter = np.random.default_rng(self.seed).normal(scale=0.1, size=(len(self.classes_), X.shape[1]))
        self.centres_ = np.stack([X[y == c].mean(0) for c in self.classes_]) + jitter
        return self

    def predict_proba(self, X, X_var=None):
        logits = -((X[:, None, :] - self.centres_[None]) ** 2).sum(-1)
        e = np.exp(logits - logits.max(1, keepdims=True))
        return e / e.sum(1, keepdims=True)


class Reversed(NoisyCentroid):
    """Keeps its columns in reversed class order, to check the runner realigns them."""

    def fit(self, X, y, X_var=None):
        super().fit(X, y, X_var)
        self.classes_ = self.classes_[::-1]
        self.centres_ = self.centres_[::-1]
        return self


def _units(out, methods, k):
    return {(m, s): json.loads(unit_path(out, m, s).read_text()) for m in methods for s in range(k)}


def _without_timing(unit):
    return {k: v for k, v in unit.items() if not k.endswith("_seconds")}


def test_resume_recomputes_only_missing_unit(tmp_path):
    ds = _dataset()
    methods = {"centroid": NoisyCentroid, "centroid2": NoisyCentroid}
    NoisyCentroid.fits.clear()
    first = run_repeated_splits(ds, methods, tmp_path, n_splits=2, seed=7, progress=False)
    assert len(NoisyCentroid.fits) == 4
    before = _units(tmp_path, methods, 2)

    unit_path(tmp_path, "centroid2", 1).unlink()
    NoisyCentroid.fits.clear()
    second = run_repeated_splits(ds, methods, tmp_path, n_splits=2, seed=7, progress=False)
    assert len(NoisyCentroid.fits) == 1
    assert NoisyCentroid.fits[0] == before[("centroid2", 1)]["estimator_seed"]
    after = _units(tmp_path, methods, 2)
    for key in before:
        assert _without_timing(after[key]) == _without_timing(before[key])
    assert first["methods"]["centroid"]["nll"] == second["methods"]["centroid"]["nll"]

    NoisyCentroid.fits.clear()
    run_repeated_splits(ds, methods, tmp_path, n_splits=2, seed=7, progress=False)
    assert NoisyCentroid.fits == []  # nothing left to do


def test_unit_contents_and_summary(tmp_path):
    ds = _dataset()
    summary = run_repeated_splits(ds, {"c": NoisyCentroid}, tmp_path, n_splits=3, seed=1, progress=False)
    splits = list(ds.repeated_splits(3, test_size=0.1, seed=1))
    nlls = []
    for split in splits:
        unit = json.loads(unit_path(tmp_path, "c", split.index).read_text())
        assert unit["test_ids"] == ds.ids[split.test].tolist()
        assert unit["y_true"] == ds.y[split.test].tolist()
        proba = np.asarray(unit["proba"])
        assert unit["nll"] == pytest.approx(negative_log_likelihood(ds.y[split.test], proba))
        assert np.asarray(unit["confusion"]).sum() == len(split.test)
        nlls.append(unit["nll"])
    e = summary["methods"]["c"]
    assert e["n_splits"] == 3
    assert e["nll"]["mean"] == pytest.approx(np.mean(nlls))
    assert e["nll"]["se"] == pytest.approx(np.std(nlls, ddof=1) / np.sqrt(3))
    assert np.sum(e["confusion_mean"]) == pytest.approx(len(splits[0].test))
    assert json.loads((tmp_path / "summary.json").read_text())["methods"]["c"]["n_splits"] == 3
    md = (tmp_path / "summary.md").read_text()
    assert "| c | 3 |" in md and "a (pred.)" in md and "c (true)" in md


def test_estimator_class_order_is_realigned(tmp_path):
    ds = _dataset()
    s1 = run_repeated_splits(ds, {"fwd": NoisyCentroid, "rev": Reversed}, tmp_path, n_splits=2, progress=False)
    assert s1["methods"]["fwd"]["nll"]["mean"] == pytest.approx(s1["methods"]["rev"]["nll"]["mean"], rel=1e-12)
    assert s1["methods"]["fwd"]["confusion_mean"] == s1["methods"]["rev"]["confusion_mean"]


def test_summary_uses_common_splits_only(tmp_path):
    ds = _dataset()
    run_repeated_splits(ds, {"a": NoisyCentroid, "b": NoisyCentroid}, tmp_path, n_splits=3, progress=False)
    unit_path(tmp_path, "b", 2).unlink()
    s = summarize(tmp_path, write=False)
    assert s["n_common_splits"] == 2
    assert s["methods"]["a"]["n_splits"] == 2 and s["methods"]["a"]["splits"] == [0, 1]
    assert summarize(tmp_path, common_splits_only=False, write=False)["methods"]["a"]["n_splits"] == 3


def test_a_damaged_unit_is_named_by_the_report_and_recomputed_by_a_rerun(tmp_path):
    ds = _dataset()
    run_repeated_splits(ds, {"a": NoisyCentroid}, tmp_path, n_splits=2, progress=False)
    before = json.loads(unit_path(tmp_path, "a", 1).read_text())
    unit_path(tmp_path, "a", 1).write_bytes(b'{"split": 1, "nl\xff')  # a disk that filled up mid-write
    with pytest.raises(ValueError, match=r"split_0001\.json is corrupt .*delete it and rerun"):
        summarize(tmp_path, write=False)
    run_repeated_splits(ds, {"a": NoisyCentroid}, tmp_path, n_splits=2, progress=False)  # the runner redoes it
    assert _without_timing(json.loads(unit_path(tmp_path, "a", 1).read_text())) == _without_timing(before)


def test_recorded_failure_is_retried(tmp_path):
    ds = _dataset()

    class Flaky(NoisyCentroid):
        broken = True

        def fit(self, X, y, X_var=None):
            if Flaky.broken:
                raise FloatingPointError("NaN in ELBO")
            return super().fit(X, y, X_var)

    s = run_repeated_splits(ds, {"f": Flaky}, tmp_path, n_splits=2, on_error="record", progress=False)
    assert s["methods"]["f"]["n_failed"] == 2 and s["methods"]["f"]["n_splits"] == 0
    with pytest.raises(FloatingPointError, match="NaN in ELBO") as raised:  # its own type: the CLI maps it to exit 1
        run_repeated_splits(ds, {"f": Flaky}, tmp_path, n_splits=2, progress=False)
    assert raised.value.__notes__ == ["in unit 'f/split_0000'"]
    Flaky.broken = False
    s = run_repeated_splits(ds, {"f": Flaky}, tmp_path, n_splits=2, on_error="record", progress=False)
    assert s["methods"]["f"]["n_failed"] == 0 and s["methods"]["f"]["n_splits"] == 2


def test_other_dataset_in_same_folder_is_refused(tmp_path):
    run_repeated_splits(_dataset(seed=0), {"c": NoisyCentroid}, tmp_path, n_splits=1, progress=False)
    with pytest.raises(ValueError, match=r"holds a different run \(dataset\.sha256: '[0-9a-f]+' -> '[0-9a-f]+'\)"):
        run_repeated_splits(_dataset(seed=1), {"c": NoisyCentroid}, tmp_path, n_splits=1, progress=False)
    with pytest.raises(ValueError, match=r"holds a different run \(seed: 0 -> 5\)"):
        run_repeated_splits(_dataset(seed=0), {"c": NoisyCentroid}, tmp_path, n_splits=1, seed=5, progress=False)


@pytest.mark.parametrize("k", [0, -1, 1.5, True])
def test_bad_k_rejected(tmp_path, k):
    with pytest.raises(ValueError, match="n_splits"):
        run_repeated_splits(_dataset(), {"c": NoisyCentroid}, tmp_path, n_splits=k, progress=False)


def test_unknown_method_names_list_valid_ones():
    with pytest.raises(ValueError, match=r"unknown method\(s\) \['GPR'\].*'MGP', 'NIMGP', 'NIMGP-NN', 'NIMGP-FO'"):
        select_methods(["MGP", "GPR"])
    params = select_methods(["NIMGP-NN"], epochs=3)
    assert params == {"NIMGP-NN": {"epochs": 3, "input_noise": "amortized"}}


def test_bad_method_spec_rejected(tmp_path):
    with pytest.raises(TypeError, match="spec must be"):
        run_repeated_splits(_dataset(), {"c": 3}, tmp_path, n_splits=1, progress=False)
    with pytest.raises(ValueError, match="method name"):
        run_repeated_splits(_dataset(), {"a/b": NoisyCentroid}, tmp_path, n_splits=1, progress=False)


class LastFirstExecutor(Executor):
    """Runs the units in reverse and yields them in that order, as a cluster may finish them."""

    name = "last-first"

    def _results(self, fn, tasks):
        self.n_tasks = len(tasks)
        for i in reversed(range(len(tasks))):
            yield i, fn(*tasks[i])


def test_units_land_in_their_own_files_whatever_the_completion_order(tmp_path):
    ds = _dataset()
    methods = {"c": NoisyCentroid, "r": Reversed}
    run_repeated_splits(ds, methods, tmp_path / "plain", n_splits=3, seed=2, progress=False)
    ex = LastFirstExecutor()
    run_repeated_splits(ds, methods, tmp_path / "reversed", n_splits=3, seed=2, progress=False, executor=ex)
    assert ex.n_tasks == 6
    plain, rev = _units(tmp_path / "plain", methods, 3), _units(tmp_path / "reversed", methods, 3)
    for key in plain:
        assert rev[key]["method"] == key[0] and rev[key]["split"] == key[1]
        assert _without_timing(rev[key]) == _without_timing(plain[key])

    unit_path(tmp_path / "reversed", "r", 1).unlink()
    run_repeated_splits(ds, methods, tmp_path / "reversed", n_splits=3, seed=2, progress=False, executor=ex)
    assert ex.n_tasks == 1  # only the missing unit is sent to the executor
    assert _without_timing(_units(tmp_path / "reversed", methods, 3)[("r", 1)]) == _without_timing(plain[("r", 1)])


def test_recorded_failure_does_not_stop_other_units_on_an_executor(tmp_path):
    ds = _dataset()

    class FailsOnSplit1(NoisyCentroid):
        def fit(self, X, y, X_var=None):
            if len(NoisyCentroid.fits) == 1:  # the second unit the reversed executor runs: split 1
                NoisyCentroid.fits.append(None)
                raise FloatingPointError("NaN in ELBO")
            return super().fit(X, y, X_var)

    NoisyCentroid.fits.clear()
    s = run_repeated_splits(
        ds, {"f": FailsOnSplit1}, tmp_path, n_splits=3, on_error="record", progress=False, executor=LastFirstExecutor()
    )
    assert s["methods"]["f"]["n_failed"] == 1 and s["methods"]["f"]["n_splits"] == 2
    record = json.loads(unit_path(tmp_path, "f", 1).with_suffix(".error.json").read_text())
    assert record["unit"] == "f/split_0001" and "NaN in ELBO" in record["error"] and "FloatingPointError" in record["traceback"]


def test_executor_must_be_an_executor(tmp_path):
    with pytest.raises(TypeError, match="executor must be a gpal.runs.executors.Executor"):
        run_repeated_splits(_dataset(), {"c": NoisyCentroid}, tmp_path, n_splits=1, executor="local-dask")
    assert not (tmp_path / "config.json").exists()  # refused before anything was written


def test_an_interrupted_fit_is_never_saved_as_a_finished_unit(tmp_path):
    """Ctrl-C inside training keeps the parameters reached (stopped_early_); a unit must not keep that result."""
    ds = _dataset()

    class CtrlC(NoisyCentroid):
        interrupted = True

        def fit(self, X, y, X_var=None):
            super().fit(X, y, X_var)
            self.stopped_early_ = CtrlC.interrupted and len(NoisyCentroid.fits) == 2
            return self

    NoisyCentroid.fits.clear()
    with pytest.raises(KeyboardInterrupt, match="training interrupted"):
        run_repeated_splits(ds, {"c": CtrlC}, tmp_path, n_splits=3, progress=False)
    assert unit_path(tmp_path, "c", 0).exists() and not unit_path(tmp_path, "c", 1).exists()
    CtrlC.interrupted = False
    NoisyCentroid.fits.clear()
    s = run_repeated_splits(ds, {"c": CtrlC}, tmp_path, n_splits=3, progress=False)
    assert len(NoisyCentroid.fits) == 2 and s["methods"]["c"]["n_splits"] == 3  # the rerun computed 1 and 2 only


def test_an_interrupted_fit_is_not_recorded_as_a_failure(tmp_path):
    ds = _dataset()

    class CtrlC(NoisyCentroid):
        def fit(self, X, y, X_var=None):
            super().fit(X, y, X_var)
            self.stopped_early_ = True
            return self

    with pytest.raises(KeyboardInterrupt):
        run_repeated_splits(ds, {"c": CtrlC}, tmp_path, n_splits=1, on_error="record", progress=False)
    assert not list((tmp_path / "units").rglob("*.json"))


class Iterative(NoisyCentroid):
    """Keeps an iterative fit's account, as scikit-learn's estimators (``n_iter_``) and gpal's L-BFGS-B ones do."""

    def fit(self, X, y, X_var=None):
        super().fit(X, y, X_var)
        self.n_iter_, self.converged_ = np.array([7, 12]), self.seed % 2 == 0
        return self


def test_a_unit_keeps_the_fits_iteration_count_and_convergence_where_the_estimator_has_them(tmp_path):
    ds = _dataset()
    run_repeated_splits(ds, {"i": Iterative, "c": NoisyCentroid}, tmp_path, n_splits=2, seed=1, progress=False)
    for (method, _), unit in _units(tmp_path, ["i", "c"], 2).items():
        if method == "c":
            assert "n_iter" not in unit and "converged" not in unit  # nothing to report, nothing invented
        else:
            assert unit["n_iter"] == 12 and unit["converged"] == (unit["estimator_seed"] % 2 == 0)

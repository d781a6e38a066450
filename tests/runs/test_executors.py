"""Executors: in-process and Dask give the same results; units and chunks survive any completion order.

The Dask tests share one real LocalCluster (2 worker processes on 127.0.0.1) per session
(tests/conftest.py's ``dask_cluster``).
"""

import importlib.util
import json
import operator
import os
import sys
import time

import numpy as np
import pytest

from gpal.runs.executors import Executor, InProcessExecutor, make_executor
from gpal.runs.repeated_splits import run_repeated_splits, select_methods, unit_path

needs_dask = pytest.mark.skipif(
    importlib.util.find_spec("distributed") is None,
    reason='dask.distributed is not installed (pip install -e ".[dask]")',
)


# ------------------------------------------------------------------ in-process
def test_in_process_map_yields_every_task_in_order():
    ex = make_executor()
    assert isinstance(ex, InProcessExecutor) and ex.name == "in-process"
    assert list(ex.map(operator.mul, [(i, 3) for i in range(4)], progress=False)) == [(0, 0), (1, 3), (2, 6), (3, 9)]


def test_in_process_map_propagates_first_error():
    with make_executor("in-process") as ex:
        results = ex.map(int, [("1",), ("x",), ("3",)], progress=False)
        assert next(results) == (0, 1)
        with pytest.raises(ValueError, match="invalid literal"):
            next(results)


def test_tasks_must_be_tuples():
    with pytest.raises(TypeError, match="task 1 is list"):
        list(InProcessExecutor().map(int, [("1",), ["2"]], progress=False))


class _Recording(Executor):
    """Runs tasks last-first and records what ``map`` asked of it."""

    name = "recording"

    def __init__(self):
        self.started, self.closed = [], False

    def _results(self, fn, tasks):
        self.started.append(len(tasks))
        try:
            for i in reversed(range(len(tasks))):
                yield i, fn(*tasks[i])
        finally:
            self.closed = True


def test_map_checks_the_tasks_before_the_executor_runs_any_and_releases_them_when_left_early():
    ex = _Recording()
    with pytest.raises(TypeError, match="task 1 is list"):
        list(ex.map(int, [("1",), ["2"]], progress=False))
    assert ex.started == []
    results = ex.map(int, [("1",), ("2",), ("3",)], progress=False)
    assert next(results) == (2, 3)  # in the executor's order
    results.close()  # a caller that stops reading
    assert ex.started == [3] and ex.closed


def test_an_executor_that_skips_a_task_fails_rather_than_losing_it():
    class Skipping(_Recording):
        def _results(self, fn, tasks):
            yield 0, fn(*tasks[0])

    with pytest.raises(RuntimeError):
        list(Skipping().map(int, [("1",), ("2",)], progress=False))


@pytest.mark.parametrize("scheduler", ["dask", "tcp://", "tcp://host", "http://h:1", "local"])
def test_unknown_scheduler_lists_valid_forms(scheduler):
    with pytest.raises(ValueError, match="valid forms are in-process, local-dask, tcp://HOST:PORT"):
        make_executor(scheduler)


def test_bad_worker_counts():
    with pytest.raises(ValueError, match="n_workers must be an integer >= 1"):
        make_executor("local-dask", n_workers=0)
    with pytest.raises(ValueError, match="applies only to scheduler 'local-dask'"):
        make_executor(None, n_workers=2)
    with pytest.raises(ValueError, match="applies only to scheduler 'local-dask'"):
        make_executor("tcp://127.0.0.1:8786", n_workers=2)


def test_missing_distributed_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # makes `import distributed` fail
    with pytest.raises(ImportError, match=r'pip install -e "\.\[dask\]"'):
        make_executor("local-dask")


# ------------------------------------------- repeated splits: same seed, same bits
def _units(out, methods, n_splits):
    return {(m, k): json.loads(unit_path(out, m, k).read_text()) for m in methods for k in range(n_splits)}


@pytest.fixture(scope="module")
def split_runs(dask_cluster, tmp_path_factory):
    from gpal.data.synthetic import synthetic_2d

    # 300 training rows: more than one 256-row block of scikit-learn's k-means, whose rounding
    # then depends on its thread count unless the executors pin it (they do)
    data = synthetic_2d(n_train=400, n_test=1, seed=1).train
    methods = select_methods(["MGP", "NIMGP"], epochs=2, num_inducing=6, batch_size=150, n_samples=20, progress=False)
    local, dask = tmp_path_factory.mktemp("in_process"), tmp_path_factory.mktemp("local_dask")
    args = dict(n_splits=1, test_size=0.25, seed=3, progress=False)
    run_repeated_splits(data, methods, local, **args)
    run_repeated_splits(data, methods, dask, executor=dask_cluster, **args)
    return data, methods, args, local, dask


@needs_dask
def test_same_seed_same_unit_results_in_process_and_local_dask(split_runs):
    _, methods, args, local, dask = split_runs
    a, b = _units(local, methods, args["n_splits"]), _units(dask, methods, args["n_splits"])
    for key in a:
        assert a[key]["estimator_seed"] == b[key]["estimator_seed"]
        assert a[key]["nll"] == b[key]["nll"]  # bitwise: floats survive JSON exactly
        assert a[key]["proba"] == b[key]["proba"]
        assert a[key]["test_ids"] == b[key]["test_ids"]
    assert a[("MGP", 0)]["proba"] != a[("NIMGP", 0)]["proba"]  # the two methods really differ


@needs_dask
def test_interrupted_dask_run_recomputes_only_missing_unit(split_runs, dask_cluster):
    data, methods, args, _, dask = split_runs
    before = _units(dask, methods, args["n_splits"])
    kept = unit_path(dask, "MGP", 0)
    kept_mtime = kept.stat().st_mtime_ns
    unit_path(dask, "NIMGP", 0).unlink()
    run_repeated_splits(data, methods, dask, executor=dask_cluster, **args)
    assert kept.stat().st_mtime_ns == kept_mtime  # finished unit not rewritten
    redone = json.loads(unit_path(dask, "NIMGP", 0).read_text())
    assert redone["proba"] == before[("NIMGP", 0)]["proba"]


@needs_dask
def test_recorded_failure_through_dask_keeps_other_units(dask_cluster, tmp_path):
    from gpal.data.synthetic import synthetic_2d

    data = synthetic_2d(n_train=60, n_test=1, seed=1).train
    methods = {"bad": {"input_noise": "bogus"}}
    summary = run_repeated_splits(
        data, methods, tmp_path, n_splits=2, on_error="record", progress=False, executor=dask_cluster
    )
    assert summary["methods"]["bad"]["n_failed"] == 2
    record = json.loads(unit_path(tmp_path, "bad", 1).with_suffix(".error.json").read_text())
    assert "input_noise must be one of" in record["error"] and record["unit"] == "bad/split_0001"
    with pytest.raises(ValueError, match="input_noise must be one of") as raised:  # its own type, through Dask
        run_repeated_splits(data, methods, tmp_path, n_splits=2, progress=False, executor=dask_cluster)
    assert raised.value.__notes__[0].startswith("in unit 'bad/split_000")


# ------------------------------------------------------------ generic dask
@needs_dask
def test_local_dask_maps_with_results_by_index(dask_cluster):
    ex = dask_cluster
    assert ex.name == "local-dask" and len(ex.client.scheduler_info()["workers"]) == 2
    shared = np.arange(10.0)  # one object used by every task: sent to the cluster once
    got = dict(ex.map(np.multiply, [(shared, float(i)) for i in range(6)], progress=False))
    assert sorted(got) == list(range(6))
    for i, value in got.items():
        np.testing.assert_array_equal(value, shared * i)


@needs_dask
def test_local_dask_propagates_error_and_releases_tasks(dask_cluster):
    ex = dask_cluster
    with pytest.raises(ZeroDivisionError):
        list(ex.map(operator.truediv, [(1, 1), (1, 0), (1, 2), (1, 3)], progress=False))

    def left_behind():
        keys = ex.client.run_on_scheduler(lambda dask_scheduler: [str(k) for k in dask_scheduler.tasks])
        return [k for k in keys if k.startswith("truediv-")]

    deadline = time.monotonic() + 5
    while left_behind() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert left_behind() == []  # the map's tasks are released on the cluster


@needs_dask
def test_workers_limit_tensorflow_threads(dask_cluster):
    values = [v for _, v in dask_cluster.map(os.getenv, [("TF_NUM_INTRAOP_THREADS",)] * 4, progress=False)]
    assert values == ["1"] * 4


@needs_dask
def test_local_dask_workers_run_without_the_statistical_profiler(dask_cluster):
    """Nothing shows its samples (no dashboard), and it slowed a worker's TensorFlow import by a third."""
    import dask

    assert dask.config.get("distributed.worker.profile.enabled")  # this process's default: the setting is the cluster's
    states = dask_cluster.client.run(lambda: dask.config.get("distributed.worker.profile.enabled"))
    assert len(states) == 2 and not any(states.values())


def _tensorflow_loaded_and_frozen_objects() -> tuple[bool, int]:
    import gc
    import sys

    return "tensorflow" in sys.modules, gc.get_freeze_count()


@needs_dask
def test_a_worker_keeps_its_modules_out_of_the_collector_once_a_task_loaded_tensorflow(dask_cluster):
    """Each full collection (the one at the worker's exit among them) would walk TensorFlow's millions of objects."""
    assert len(list(dask_cluster.map(importlib.import_module, [("tensorflow",)] * 4, progress=False))) == 4
    states = dask_cluster.client.run(_tensorflow_loaded_and_frozen_objects)
    frozen = [count for loaded, count in states.values() if count]
    assert frozen and all(loaded for loaded, count in states.values() if count), states
    assert all(count > 100_000 for count in frozen), states  # TensorFlow's objects among them


@needs_dask
def test_tcp_executor_uses_existing_cluster_and_leaves_it_running(dask_cluster):
    address = dask_cluster.cluster.scheduler_address
    assert address.startswith("tcp://127.0.0.1:")
    with make_executor(address) as remote:
        assert remote.name == address and not remote.owns_cluster
        assert sorted(remote.map(operator.add, [(1, 2), (3, 4)], progress=False)) == [(0, 3), (1, 7)]
    assert list(dask_cluster.map(operator.neg, [(5,)], progress=False)) == [(0, -5)]  # cluster still up


# ------------------------------------------------------------ chunked prediction
@needs_dask
def test_chunked_prediction_through_local_dask_equals_in_process(dask_cluster, tmp_path):
    from gpal.estimators.noisy_gp import NoisyGPClassifier
    from gpal.catalog_jobs.prediction import predict_proba_chunked
    from gpal.data.synthetic import synthetic_2d

    problem = synthetic_2d(n_train=40, n_test=90, seed=1)
    # split_runs' NIMGP model (M = 6): its traces, in this process and on a worker, serve this one too
    clf = NoisyGPClassifier(input_noise="latent", epochs=3, num_inducing=6, n_samples=20, random_state=2, progress=False)
    clf.fit(problem.train).save(tmp_path / "model")
    kwargs = dict(chunk_size=20, progress=False)
    local = predict_proba_chunked(tmp_path / "model", problem.test, **kwargs)
    remote = predict_proba_chunked(tmp_path / "model", problem.test, executor=dask_cluster, **kwargs)
    assert remote.shape == (90, 3)
    np.testing.assert_array_equal(remote, local)


def test_executor_is_abstract():
    with pytest.raises(TypeError):
        Executor()


@needs_dask
def test_batches_of_units_go_to_dask_workers_with_the_same_results(split_runs, dask_cluster, tmp_path):
    data, methods, args, _, _ = split_runs
    batched = {**args, "n_splits": 2, "models_per_batch": 2}
    run_repeated_splits(data, methods, tmp_path / "in_process", **batched)
    run_repeated_splits(data, methods, tmp_path / "dask", executor=dask_cluster, **batched)
    a, b = _units(tmp_path / "in_process", methods, 2), _units(tmp_path / "dask", methods, 2)
    for key in a:
        assert a[key]["proba"] == b[key]["proba"]  # bitwise, as for single units


@needs_dask
def test_a_recorded_failure_in_a_batch_through_dask_names_its_unit(dask_cluster, tmp_path):
    from gpal.data.synthetic import synthetic_2d

    data = synthetic_2d(n_train=60, n_test=1, seed=1).train
    methods = {"bad": {"input_noise": "bogus"}}
    summary = run_repeated_splits(data, methods, tmp_path, n_splits=2, on_error="record", progress=False,
                                  executor=dask_cluster, models_per_batch=2)
    assert summary["methods"]["bad"]["n_failed"] == 2
    record = json.loads(unit_path(tmp_path, "bad", 1).with_suffix(".error.json").read_text())
    assert "input_noise must be one of" in record["error"] and record["unit"] == "bad/split_0001"

"""Run identity: fingerprints hash the bytes they always hashed, parameters as JSON, the same-run check."""

import numpy as np
import pytest

from gpal.data.dataset import NoisyDataset
from gpal.evaluation.metrics import proba_by_class
from gpal.identity import (
    DifferentRun,
    check_same_run,
    dataset_fingerprint,
    dataset_hashes,
    differences,
    digest,
    estimator_identity,
    jsonable,
)


def _dataset(dtype=np.float64, labels=np.int64, release="DR4"):
    rng = np.random.default_rng(25)
    X, X_var = rng.normal(size=(7, 3)), rng.uniform(0.01, 0.2, size=(7, 3))
    y = np.array([0, 1, 2, 0, 1, 2, 1], dtype=labels)
    return NoisyDataset(X.astype(dtype), X_var.astype(dtype), y, ("a", "b", "c"), ("f0", "f1", "f2"),
                        [f"4FGL J{i:04d}" for i in range(7)], meta={"release": release} if release else {})


# Digests computed by the code these functions replaced (gpal.runs.repeated_splits._dataset_fingerprint
# and gpal.active.loop._fingerprint of main at 984ab40) on the same data: folders and checkpoints those
# wrote must still be recognised as the same run, so the bytes hashed must never change.
def test_dataset_fingerprint_hashes_the_bytes_repeated_splits_folders_recorded():
    assert dataset_fingerprint(_dataset()) == {
        "n_samples": 7, "feature_names": ["f0", "f1", "f2"], "class_names": ["a", "b", "c"],
        "sha256": "cae47b9a7004f19a3ee420e7be0ead08b364888687b1e7c36569fa24e15615c0", "release": "DR4",
    }
    # values, error bars and labels in their own dtypes
    assert dataset_fingerprint(_dataset(np.float32, np.int32, release=None))["sha256"] == (
        "e507926619f3947e68410484bb5e755788f3d5ae9918da72e510feea4d89ef80")


def test_dataset_hashes_hash_the_bytes_active_learning_checkpoints_recorded():
    ids = "91b487f5a5f1f251cd19bf38d26b34cdb0a8eba80c689fbeb33710cafc060dc6"
    assert dataset_hashes(_dataset(), labels=True) == {
        "n": 7, "ids_sha256": ids, "values_sha256": "2d9a9c70550b2434cac2b8f2aebcc29c1a70b87d5dd248b1227858a0efa4f7f4"}
    assert dataset_hashes(_dataset(), labels=False)["values_sha256"] == (
        "19fb3e089e346f26dadc59e311fb499b82cc99ee858d32a781dcbecf854b2612")
    # float64 and int64 whatever the data set holds
    assert dataset_hashes(_dataset(np.float32, np.int32), labels=True)["values_sha256"] == (
        "034cdc7d6b753c43628cf07c628015eaa9e881a3dda7c4528af2c067a8a00f2b")


def test_digest_is_sha256_of_the_parts_in_order():
    import hashlib

    a = np.arange(6.0).reshape(2, 3)
    assert digest(a.T, "x") == hashlib.sha256(np.ascontiguousarray(a.T).tobytes() + b"x").hexdigest()
    assert digest(a, a) != digest(a)


class _Kernel:
    pass


def test_jsonable_plain_values_numbers_and_objects():
    value = {"n": np.int64(3), "x": np.float32(0.5), "flag": np.bool_(True), "sizes": (8, np.int32(4)),
             "options": {1: None}, "kernel": _Kernel(), "name": "se"}
    assert jsonable(value) == {"n": 3, "x": 0.5, "flag": True, "sizes": [8, 4], "options": {"1": None},
                               "kernel": "<test_identity._Kernel>", "name": "se"}
    assert type(jsonable(np.int64(3))) is int and type(jsonable(np.bool_(False))) is bool
    kernel = _Kernel()
    assert jsonable([kernel], describe=repr) == [repr(kernel)]
    assert jsonable({"kernel": kernel}, describe=None)["kernel"] is kernel  # left to the caller


def test_estimator_identity_names_the_class_and_leaves_out_what_does_not_decide_a_result():
    from sklearn.linear_model import LogisticRegression

    record = estimator_identity(LogisticRegression(C=np.float64(2.0)), leave_out=("verbose", "n_jobs"))
    assert record["class"] == "sklearn.linear_model._logistic.LogisticRegression"
    assert record["params"]["C"] == 2.0 and "verbose" not in record["params"] and "n_jobs" not in record["params"]


def test_same_run_check_names_every_difference():
    stored = {"data": {"n": 10, "sha": "a"}, "epochs": 3, "seed": 0}
    assert differences(stored, stored) == []
    assert differences(stored, {"data": {"n": 11, "sha": "a"}, "epochs": 3}) == ["data.n: 10 -> 11", "seed: 0 -> None"]
    check_same_run(stored, dict(stored), "out", "Choose another folder")
    with pytest.raises(DifferentRun, match=r"^out: it holds a different run \(epochs: 3 -> 4\)\. Choose another folder$"):
        check_same_run(stored, {**stored, "epochs": 4}, "out", "Choose another folder")
    with pytest.raises(FileExistsError):
        check_same_run(stored, {}, "out", "", error=FileExistsError)


def test_proba_by_class_puts_columns_in_the_wanted_order():
    proba = np.array([[0.2, 0.8], [0.6, 0.4]])
    np.testing.assert_array_equal(proba_by_class(proba, np.array([2, 0]), range(3)), [[0.8, 0, 0.2], [0.4, 0, 0.6]])
    np.testing.assert_array_equal(proba_by_class(proba, ["psr", "bll"], ["bll", "psr"]), proba[:, ::-1])
    with pytest.raises(ValueError, match="expected"):
        proba_by_class(proba, [0, 1, 2], range(3))
    with pytest.raises(ValueError, match="not among"):
        proba_by_class(proba, [0, 5], range(3))


def test_the_source_commit_is_read_once_a_process_so_a_commit_during_a_run_does_not_rename_it(monkeypatch):
    import subprocess

    from gpal import identity

    heads = iter(["aaaaaaaaaa", "bbbbbbbbbb"])

    def run(args, **kwargs):
        out = next(heads) if "rev-parse" in args else ""
        return subprocess.CompletedProcess(args, 0, stdout=out + "\n", stderr="")

    identity.source_commit.cache_clear()
    monkeypatch.setattr(identity.subprocess, "run", run)
    try:
        assert identity.source_commit() == "aaaaaaaaaa"
        assert identity.source_commit() == "aaaaaaaaaa"  # HEAD moved to bbbb..., the process still runs aaaa...'s code
    finally:
        identity.source_commit.cache_clear()  # later tests read the real repository

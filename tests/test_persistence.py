"""Atomic writes and saved-model folders: complete or absent, never half-written."""

import json

import numpy as np
import pytest

from gpal.runs.persistence import (
    atomic_output,
    classes_from_json,
    classes_to_json,
    load_model_dir,
    save_model_dir,
    write_json_atomic,
)


def test_atomic_output_keeps_old_content_when_interrupted(tmp_path):
    target = tmp_path / "table.csv"
    target.write_text("old")
    with pytest.raises(KeyboardInterrupt):
        with atomic_output(target) as tmp:
            tmp.write_text("half")
            raise KeyboardInterrupt
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["table.csv"]  # no temporary left behind


def test_unserialisable_json_writes_nothing(tmp_path):
    with pytest.raises(TypeError):
        write_json_atomic(tmp_path / "x.json", {"a": object()})
    assert not any(tmp_path.iterdir())


def test_model_dir_roundtrip_and_replacement(tmp_path):
    path = tmp_path / "model"
    save_model_dir(path, "gpal.Test", 1, {"a": 1}, {"w": np.arange(3.0)})
    save_model_dir(path, "gpal.Test", 1, {"a": 2}, {"w": np.ones(2)})
    config, arrays = load_model_dir(path, "gpal.Test", 1)
    assert config["a"] == 2 and np.array_equal(arrays["w"], np.ones(2))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]


def test_failed_save_leaves_previous_model(tmp_path):
    path = tmp_path / "model"
    save_model_dir(path, "gpal.Test", 1, {"a": 1}, {"w": np.zeros(1)})
    with pytest.raises(TypeError):
        save_model_dir(path, "gpal.Test", 1, {"a": object()}, {"w": np.ones(1)})
    assert load_model_dir(path, "gpal.Test", 1)[0]["a"] == 1


def test_non_finite_parameters_are_refused(tmp_path):
    with pytest.raises(ValueError, match=r"non-finite parameters: \['w'\]"):
        save_model_dir(tmp_path / "model", "gpal.Test", 1, {}, {"w": np.array([1.0, np.nan]), "n": np.arange(2)})
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize(
    "damage, error, message",
    [
        (lambda p: (p / "config.json").unlink(), FileNotFoundError, "not a saved gpal model"),
        (lambda p: (p / "config.json").write_text("{not json"), ValueError, "not valid JSON"),
        (lambda p: (p / "params.npz").write_bytes(b"garbage"), ValueError, "could not be read"),
        (lambda p: (p / "params.npz").unlink(), FileNotFoundError, "params.npz is missing"),
        (
            lambda p: (p / "config.json").write_text(json.dumps({"format": "other", "version": 1})),
            ValueError,
            "not a gpal.Test v1 model",
        ),
    ],
)
def test_corrupt_model_dirs_are_clear_errors(tmp_path, damage, error, message):
    path = tmp_path / "model"
    save_model_dir(path, "gpal.Test", 1, {}, {"w": np.zeros(1)})
    damage(path)
    with pytest.raises(error, match=message):
        load_model_dir(path, "gpal.Test", 1)


@pytest.mark.parametrize("classes", [np.array(["bll", "fsrq"]), np.array([3, 7]), np.array(["a", 2], dtype=object), np.array([0.5, 1.5])])
def test_classes_roundtrip_with_dtype(classes):
    back = classes_from_json(json.loads(json.dumps(classes_to_json(classes))))
    assert back.dtype == classes.dtype and list(back) == list(classes)


def test_unsaveable_labels():
    with pytest.raises(TypeError, match="cannot save class label"):
        classes_to_json(np.array([(1, 2), (3, 4)], dtype=object))


# ------------------------------------------------------------ claim_output_dir
def test_claim_output_dir_reuses_same_run_and_refuses_a_different_one(tmp_path):
    from gpal.runs.persistence import OutputInUse, claim_output_dir

    out = tmp_path / "run"
    claim_output_dir(out, {"seed": 0, "data": {"n": 10}})
    (out / "result.json").write_text("{}")
    assert claim_output_dir(out, {"seed": 0, "data": {"n": 10}}) == out  # resume keeps results
    assert (out / "result.json").exists()
    with pytest.raises(OutputInUse, match=r"data\.n: 10 -> 11"):
        claim_output_dir(out, {"seed": 0, "data": {"n": 11}})
    assert (out / "result.json").exists()  # refusal touches nothing
    claim_output_dir(out, {"seed": 0, "data": {"n": 11}}, force=True)
    assert not (out / "result.json").exists()
    assert json.loads((out / "run.json").read_text()) == {"seed": 0, "data": {"n": 11}}


def test_claim_output_dir_refuses_foreign_folder_and_bad_identity(tmp_path):
    from gpal.runs.persistence import OutputInUse, claim_output_dir

    (tmp_path / "thesis.tex").write_text("precious")
    with pytest.raises(OutputInUse, match="not empty"):
        claim_output_dir(tmp_path, {"seed": 0})
    assert (tmp_path / "thesis.tex").read_text() == "precious"
    with pytest.raises(ValueError):
        claim_output_dir(tmp_path / "new", {"x": float("nan")})
    assert not (tmp_path / "new").exists()

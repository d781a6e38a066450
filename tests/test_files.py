"""Atomic writes and saved-model folders: complete or absent, never half-written."""

import contextlib
import gzip
import json
import os
import stat
import time

import numpy as np
import pytest

from gpal.files import atomic_output, read_bytes, write_json_atomic
from gpal.saved_models import classes_from_json, classes_to_json, load_model_dir, save_model_dir


def test_atomic_output_keeps_old_content_when_interrupted(tmp_path):
    target = tmp_path / "table.csv"
    target.write_text("old")
    with pytest.raises(KeyboardInterrupt):
        with atomic_output(target) as tmp:
            tmp.write_text("half")
            raise KeyboardInterrupt
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["table.csv"]  # no temporary left behind


def test_gzip_files_read_as_gzip_itself_reads_them(tmp_path):
    rng = np.random.default_rng(0)
    first, second = rng.integers(0, 4, 300_000, dtype=np.uint8).tobytes(), b"a second member"
    cases = {
        "one.gz": gzip.compress(first),
        "two_members.gz": gzip.compress(first) + gzip.compress(second),
        "zero_padded.gz": gzip.compress(first) + gzip.compress(second) + b"\0" * 512,  # a tape's padding
    }
    for name, data in cases.items():
        (tmp_path / name).write_bytes(data)
        assert read_bytes(tmp_path / name) == gzip.decompress(data), name
    assert read_bytes(tmp_path / "one.gz", limit=len(first)) == first  # a file exactly at the bound is read

    bad = {
        "truncated.gz": (cases["one.gz"][:-100], "truncated or corrupt"),
        "trailing_junk.gz": (cases["one.gz"] + b"not gzip", "truncated or corrupt"),
        "bad_crc.gz": (cases["one.gz"][:-8] + bytes(4) + cases["one.gz"][-4:], "truncated or corrupt"),
        "bomb.gz": (cases["two_members.gz"], "decompresses to more than"),
    }
    for name, (data, message) in bad.items():
        (tmp_path / name).write_bytes(data)
        with pytest.raises(ValueError, match=message):
            read_bytes(tmp_path / name, limit=len(first) + len(second) - 1)
        with pytest.raises((OSError, EOFError)) if name != "bomb.gz" else contextlib.nullcontext():
            gzip.decompress(data)  # gzip refuses the same files


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
    from gpal.runs.output_dir import OutputInUse, claim_output_dir

    out = tmp_path / "run"
    claim_output_dir(out, {"seed": 0, "data": {"n": 10}})
    write_json_atomic(out / "result.json", {})
    assert claim_output_dir(out, {"seed": 0, "data": {"n": 10}}) == out  # resume keeps results
    assert (out / "result.json").exists()
    with pytest.raises(OutputInUse, match=r"data\.n: 10 -> 11"):
        claim_output_dir(out, {"seed": 0, "data": {"n": 11}})
    assert (out / "result.json").exists()  # refusal touches nothing
    claim_output_dir(out, {"seed": 0, "data": {"n": 11}}, force=True)
    assert not (out / "result.json").exists()
    assert json.loads((out / "run.json").read_text())["identity"] == {"seed": 0, "data": {"n": 11}}


def test_claim_output_dir_refuses_foreign_folder_and_bad_identity(tmp_path):
    from gpal.runs.output_dir import OutputInUse, claim_output_dir

    (tmp_path / "thesis.tex").write_text("precious")
    with pytest.raises(OutputInUse, match="not empty"):
        claim_output_dir(tmp_path, {"seed": 0})
    assert (tmp_path / "thesis.tex").read_text() == "precious"
    with pytest.raises(ValueError):
        claim_output_dir(tmp_path / "new", {"x": float("nan")})
    assert not (tmp_path / "new").exists()


def test_force_replaces_only_gpal_runs(tmp_path, monkeypatch):
    """--force empties a folder holding another gpal run, never a foreign folder, the working folder or home."""
    from gpal.runs.output_dir import OutputInUse, claim_output_dir

    (tmp_path / "thesis.tex").write_text("precious")
    with pytest.raises(OutputInUse, match="holds no record of a gpal run .*; --force only replaces gpal runs"):
        claim_output_dir(tmp_path, {"seed": 0}, force=True)
    assert (tmp_path / "thesis.tex").read_text() == "precious"
    run = tmp_path / "run"
    claim_output_dir(run, {"seed": 0})
    monkeypatch.chdir(run)
    with pytest.raises(OutputInUse, match="it is the working folder or a folder above it"):
        claim_output_dir(".", {"seed": 1}, force=True)
    with pytest.raises(OutputInUse, match="it is the working folder or a folder above it"):
        claim_output_dir(run, {"seed": 1}, force=True)
    assert json.loads((run / "run.json").read_text())["identity"] == {"seed": 0}
    monkeypatch.setenv("HOME", str(run))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(OutputInUse, match="it is the home folder or a folder above it"):
        claim_output_dir(run, {"seed": 1}, force=True)


def _claim_in_a_process(args):
    from gpal.runs.output_dir import OutputInUse, claim_output_dir

    folder, seed, start = args
    while time.time() < start:  # both processes leave the starting line together
        pass
    try:
        claim_output_dir(folder, {"seed": seed})
        return True
    except OutputInUse:
        return False


def test_of_two_processes_claiming_a_folder_for_different_runs_exactly_one_wins(tmp_path):
    import multiprocessing

    with multiprocessing.get_context("spawn").Pool(2) as pool:
        pool.map(abs, [1, 2])  # workers started before the race
        for trial in range(12):
            folder = tmp_path / f"race{trial}"
            start = time.time() + 0.3
            won = pool.map(_claim_in_a_process, [(folder, 0, start), (folder, 1, start)])
            assert sorted(won) == [False, True], (trial, won)
            assert json.loads((folder / "run.json").read_text())["identity"] == {"seed": won.index(True)}


def test_a_resumed_run_removes_what_a_killed_one_left_half_written(tmp_path):
    from gpal.runs.output_dir import claim_output_dir

    out = tmp_path / "run"
    claim_output_dir(out, {"seed": 0})
    leftovers = [out / ".units.json.0123456789ab.tmp", out / "units" / ".split_0001.json.a1b2c3d4e5f6.tmp",
                 out / ".model.old.k2_x9pq1"]
    kept = [out / "units" / "split_0000.json", out / ".hidden_by_the_user", out / ".notes.tmp"]
    for path in leftovers + kept:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{}")
    (out / ".model.k2_x9pq7").mkdir()
    (out / ".model.k2_x9pq7" / "config.json").write_text("{")
    claim_output_dir(out, {"seed": 0})
    assert not any(p.exists() for p in leftovers) and not (out / ".model.k2_x9pq7").exists()
    assert all(p.exists() for p in kept)


def test_saved_model_folders_have_ordinary_permissions(tmp_path):
    """A model folder is made as any other folder (umask applies), not 0700 like a private temporary one."""
    from gpal.saved_models import save_model_dir

    old = os.umask(0o022)
    try:
        save_model_dir(tmp_path / "model", "test", 1, {}, {"a": np.zeros(2)})
        save_model_dir(tmp_path / "model", "test", 1, {}, {"a": np.ones(2)})  # replacing keeps them too
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "model").stat().st_mode) == 0o755
    assert stat.S_IMODE((tmp_path / "model" / "params.npz").stat().st_mode) == 0o644
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model"]

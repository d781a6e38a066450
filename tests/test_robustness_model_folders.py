"""A model folder is one thing (issue 63): the record (training.json), the config (config.json) and the
parameters (params.npz) are bound by checksums written at save time, values are held to what the model's maths
allows, archive members are judged by their declared sizes before any is read, and each refusal names the file
and the field."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from gpal.cli import main
from gpal.saved_models import CorruptModel, MAX_EXPANSION

ROOT = Path(__file__).resolve().parents[1]


def _fails(capsys, argv, *phrases):
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err and err.strip().splitlines()[-1].startswith("gpal: error: "), err
    for phrase in phrases:
        assert phrase in err, (phrase, err)
    return err


def _json(path, edit):
    record = json.loads(path.read_text())
    edit(record)
    path.write_text(json.dumps(record, indent=1))


def _arrays(path, edit):
    arrays = dict(np.load(path))
    edit(arrays)
    np.savez(path, **arrays)


def _reorder_classes(record):
    record["classes"] = record["classes"][::-1]
    record["n_per_class"] = {name: record["n_per_class"][name] for name in record["classes"]}


def _drop_feature(record):
    record["features"].pop(0)
    record["feature_names"].pop(0)


CASES = {
    # (what is edited, the edit, what the message must hold)
    "kernel variance -1 in params.npz (predicted without a word)": (
        "model/params.npz", lambda p: _arrays(p, lambda a: a.__setitem__(".gp.kernels[0].variance", np.array(-1.0))),
        ["params.npz: array '.gp.kernels[0].variance' is not the one saved", "array_sha256"]),
    "class list reordered with its counts (predicted under the record's names)": (
        "training.json", lambda p: _json(p, _reorder_classes),
        ["training.json: fields 'classes', 'n_per_class' are not as gpal wrote them"]),
    "num_inducing '50' in the parameters (was \"'str' object cannot be interpreted as an integer\")": (
        "model/config.json", lambda p: _json(p, lambda c: c["params"].__setitem__("num_inducing", "50")),
        ["config.json: field 'params.num_inducing' must be an integer >= 1; got '50'"]),
    "num_inducing '50' in the structure (was \"'str' object cannot be interpreted as an integer\")": (
        "model/config.json", lambda p: _json(p, lambda c: c["structure"].__setitem__("num_inducing", "50")),
        ["config.json: field 'structure.num_inducing' must be an integer >= 1; got '50'"]),
    "a feature removed (was named as field 'format')": (
        "training.json", lambda p: _json(p, _drop_feature),
        ["training.json: fields 'features', 'feature_names' are not as gpal wrote them"]),
    "a config that still loads, from another save (its history edited)": (
        "model/config.json", lambda p: _json(p, lambda c: c["history"].__setitem__(0, 1.0)),
        ["config.json is not the file", "training.json was written with", "field 'model_files'['config.json']"]),
    "the record's checksum of the model edited": (
        "training.json", lambda p: _json(p, lambda r: r["model_files"]["params.npz"].__setitem__("sha256", "0" * 64)),
        ["training.json: field 'model_files' is not as gpal wrote it"]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_an_edited_model_folder_is_refused_naming_file_and_field(case, two_class_model, small_catalog, tmp_path,
                                                                  capsys):
    where, edit, phrases = CASES[case]
    folder = tmp_path / "trained"
    shutil.copytree(two_class_model, folder)
    edit(folder / where)
    out = tmp_path / "table.csv"
    _fails(capsys, ["predict", str(folder), "--catalog", str(small_catalog), "--out", str(out), "--no-progress"],
           *phrases)
    assert not out.exists()


def test_a_model_from_another_training_is_refused(two_class_model, small_catalog, tmp_path, capsys):
    """Both files of model/ from another save of the same settings (a second seed): each loads, the record binds."""
    other = tmp_path / "other"
    assert main(["train", "--catalog", str(small_catalog), "--classes", "bll,fsrq", "--epochs", "1",
                 "--num-inducing", "3", "--no-progress", "--seed", "1", "--out", str(other)]) == 0
    folder = tmp_path / "trained"
    shutil.copytree(two_class_model, folder)
    shutil.rmtree(folder / "model")
    shutil.copytree(other / "model", folder / "model")
    _fails(capsys, ["predict", str(folder), "--catalog", str(small_catalog), "--out", str(tmp_path / "t.csv"),
                    "--no-progress"], "is not the file", "field 'model_files'")


def test_a_positive_parameter_is_checked_where_no_checksum_binds_it(two_class_model, tmp_path):
    """A saved model without checksums (gpal <= 0.3 wrote none) still has its values held to the maths: a kernel
    variance whose stored (softplus-unconstrained) value makes it 0 is refused, naming the array."""
    from gpal.estimators import load_estimator

    folder = tmp_path / "model"
    shutil.copytree(two_class_model / "model", folder)
    _json(folder / "config.json", lambda c: c.pop("array_sha256"))
    _arrays(folder / "params.npz", lambda a: a.__setitem__(".gp.kernels[0].lengthscales",
                                                           np.full_like(a[".gp.kernels[0].lengthscales"], -800.0)))
    with pytest.raises(ValueError, match=r"params.npz: saved parameter '.kernels\[0\].lengthscales'|"
                                         r"params.npz: saved parameter '.gp.kernels\[0\].lengthscales' is a positive"):
        load_estimator(folder)


def _compressed_zeros(path, name, n_bytes):
    """A member of ``n_bytes`` of zeros after a .npy header, deflated (a thousandfold smaller on disk)."""
    import io

    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f8", "fortran_order": False, "shape": (n_bytes // 8,)})
    with zipfile.ZipFile(path, "a", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        with archive.open(name, "w", force_zip64=True) as member:
            member.write(header.getvalue())
            block = bytes(2**24)
            for _ in range(n_bytes // len(block)):
                member.write(block)


def test_a_compressed_bomb_is_refused_before_it_is_read(two_class_model, tmp_path):
    """600 MB of zeros deflated into a member of under 1 MB: refused from the zip directory's declared sizes, the
    process's peak memory staying under 500 MB (today it read the member: a peak above 600 MB)."""
    folder = tmp_path / "model"
    shutil.copytree(two_class_model / "model", folder)
    _compressed_zeros(folder / "params.npz", "bomb.npy", 600 * 2**20)
    assert (folder / "params.npz").stat().st_size < 50 * 2**20
    # the peak of this process's own memory (VmHWM, reset at exec; ru_maxrss would carry pytest's across the fork)
    probe = ("import re, sys\nfrom gpal.estimators import load_estimator\n"
             "try:\n    load_estimator(sys.argv[1])\nexcept ValueError as exc:\n    print(exc)\n"
             "print(int(re.search(r'VmHWM:\\s+(\\d+) kB', open('/proc/self/status').read()).group(1)) // 1024)\n")
    run = subprocess.run([sys.executable, "-c", probe, str(folder)], capture_output=True, text=True, cwd=ROOT,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}, timeout=300)
    message, peak_mib = run.stdout.strip().splitlines()
    assert "params.npz: member 'bomb.npy' would expand from" in message and f"{MAX_EXPANSION} times" in message
    assert int(peak_mib) < 500, peak_mib


def test_an_array_swapped_for_another_is_named_by_its_checksum(two_class_model, tmp_path):
    """The bare saved model (estimator.load) is bound too: config.json records each array's checksum, so values of
    the right dtype and shape from elsewhere are named where they would otherwise load."""
    from gpal.estimators import load_estimator

    folder = tmp_path / "model"
    shutil.copytree(two_class_model / "model", folder)
    _arrays(folder / "params.npz", lambda a: a.__setitem__(".gp.Z", a[".gp.Z"] + 1.0))
    with pytest.raises(CorruptModel, match=r"params.npz: array '.gp.Z' is not the one saved with .*config.json"):
        load_estimator(folder)


def test_a_catalog_path_too_long_for_the_system_is_named_as_the_catalog(tmp_path, capsys):
    long = str(tmp_path / ("x" * 300 + ".fits"))
    err = _fails(capsys, ["train", "--catalog", long, "--classes", "bll,fsrq", "--out", str(tmp_path / "m")],
                 "the catalog path (--catalog)", "File name too long", "characters")
    assert len(err) < 400
    assert not (tmp_path / "m").exists()

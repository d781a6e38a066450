"""Messages on an ASCII terminal, and no folder left by a refusal (issue 63)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

from gpal.cli import main

ROOT = Path(__file__).resolve().parents[1]


def _gpal_ascii(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONIOENCODING": "ascii"}
    return subprocess.run([sys.executable, "-m", "gpal.cli", *args], capture_output=True, env=env, cwd=ROOT,
                          timeout=900)


def test_a_refusal_naming_a_non_ascii_folder_prints_on_an_ascii_terminal(tmp_path):
    """Was a UnicodeEncodeError traceback while printing the message itself."""
    missing = tmp_path / "résultats"
    run = _gpal_ascii("predict", str(missing), "--out", str(tmp_path / "t.csv"))
    err = run.stderr.decode("ascii")
    assert run.returncode == 2, err
    assert "Traceback" not in err
    assert err.startswith("gpal: error: model folder ") and "r\\xe9sultats does not exist" in err


def test_the_work_done_is_reported_on_an_ascii_terminal(two_class_model, small_catalog, tmp_path, monkeypatch):
    """Was: the table written, then exit 2 while printing where (``'ascii' codec can't encode``).  In this process,
    with the streams an ASCII terminal gives (PYTHONIOENCODING=ascii: stdout strict, stderr escaping): a process of
    its own would load TensorFlow and the model again, and the refusal above runs the command's whole process."""
    streams = {name: io.TextIOWrapper(io.BytesIO(), encoding="ascii", errors=errors)
               for name, errors in (("stdout", "strict"), ("stderr", "backslashreplace"))}
    for name, stream in streams.items():
        monkeypatch.setattr(sys, name, stream)
    out = tmp_path / "résumé.csv"
    code = main(["predict", str(two_class_model), "--catalog", str(small_catalog), "--out", str(out), "--no-progress"])
    said = {}
    for name, stream in streams.items():
        stream.flush()
        said[name] = stream.buffer.getvalue().decode("ascii")
    assert code == 0, said["stderr"]
    assert "-> " + str(tmp_path).encode("ascii", "backslashreplace").decode() + "/r\\xe9sum\\xe9.csv" in said["stdout"]
    assert out.is_file()


def test_a_refusal_after_the_claim_leaves_no_folder_it_created(small_catalog, tmp_path, monkeypatch, capsys):
    from gpal.estimators.noisy_gp import NoisyGPClassifier

    def refuse(self, *args, **kwargs):
        raise ValueError("refused for the test, after the output folder was claimed")

    monkeypatch.setattr(NoisyGPClassifier, "fit", refuse)
    out = tmp_path / "new" / "résultats"
    assert main(["train", "--catalog", str(small_catalog), "--classes", "bll,fsrq", "--no-progress",
                 "--out", str(out)]) == 2
    assert "refused for the test" in capsys.readouterr().err
    assert not out.exists()
    kept = tmp_path / "kept"
    kept.mkdir()
    (kept / "mine.txt").write_text("a user's file")
    assert main(["train", "--catalog", str(small_catalog), "--classes", "bll,fsrq", "--no-progress",
                 "--out", str(kept)]) == 2  # not gpal's folder: refused before any claim, left as it was
    assert sorted(p.name for p in kept.iterdir()) == ["mine.txt"]

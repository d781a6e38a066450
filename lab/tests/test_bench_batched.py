"""lab/studies/bench_batched.py: its results record is made from a run's JSON, and a bad output is refused."""

from __future__ import annotations

import json
import re

import pytest

from conftest import repository_script


@pytest.fixture(scope="module")
def bench():
    return repository_script("lab/studies/bench_batched.py")


def _output(tmp_path, commit="abc1234", **change):
    """A made-up run: MGP alone at 2 ms a step, its K = 4 step 4 ms (speed-up 2), each configuration on one core."""
    per_step = {key: {"wall": wall, "cpu": wall} for key, wall in (("single", 0.002), ("1", 0.002), ("4", 0.004))}
    raw = {"args": {"n": 408, "d": 6, "classes": 3, "inducing": 20, "batch": 50, "ks": [1, 4]},
           "results": [{"method": "MGP", "per_step": per_step, "single_ms_per_step": 2.0,
                        "rows": [{"K": 1, "speedup_vs_one_after_another": 1.0},
                                 {"K": 4, "speedup_vs_one_after_another": 4 * 0.002 / 0.004}]}], **change}
    if commit:
        raw["commit"] = commit
    path = tmp_path / "batched.json"
    path.write_text(json.dumps(raw))
    return path


def test_the_record_holds_one_models_step_and_the_speed_up_at_each_k_above_one(bench, tmp_path):
    from result_records import read_record

    record_path = tmp_path / "timings.batched.json"
    assert bench.main(["--summarize", str(_output(tmp_path)), "--record", str(record_path)]) == 0
    record = read_record(record_path)
    (table,) = record["tables"]
    assert table["columns"] == ["method", "one model, ms per step", "K = 4"]
    assert table["rows"] == [["MGP", "2.00", "2.0×"]]
    assert "at the Fermi size, one core" in table["caption"]
    assert record["commit"] == "abc1234" and record["workflow"] == "lab/studies/batched.yaml"


def test_an_output_naming_no_commit_takes_the_given_one_and_is_refused_without(bench, tmp_path):
    path = _output(tmp_path, commit=None)
    assert bench.results_record(str(path), "556456c")["commit"] == "556456c"
    with pytest.raises(ValueError, match="name no commit"):
        bench.results_record(str(path))


def test_a_missing_or_foreign_output_is_refused_naming_the_file(bench, tmp_path, capsys):
    missing = tmp_path / "nothing.json"
    with pytest.raises(SystemExit):
        bench.main(["--summarize", str(missing), "--record", str(tmp_path / "r.json")])
    assert str(missing) in capsys.readouterr().err
    foreign = _output(tmp_path, args={"n": 408})
    with pytest.raises(ValueError, match=re.escape(f"{foreign}: no field 'args.d'")):
        bench.results_record(str(foreign))
    assert not (tmp_path / "r.json").exists()

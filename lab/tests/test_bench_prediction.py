"""lab/studies/bench_prediction.py: its results record is made from runs' JSON, and bad outputs are refused."""

from __future__ import annotations

import json
import re

import pytest

from conftest import repository_script


@pytest.fixture(scope="module")
def bench():
    return repository_script("lab/studies/bench_prediction.py")


def _run(tmp_path, name, d, rate, commit="abc1234", inducing=50):
    likelihoods = "softmax,robustmax" if d == 6 else "softmax"
    raw = {"commit": commit, "settings": {"d": d, "inducing": inducing, "classes": 3, "samples": 300,
                                          "likelihoods": likelihoods},
           "machine": {"load_average_start": [0.9, 1, 1], "load_average_end": [2.1, 1, 1]},
           "end_to_end": {"softmax": {"predict_sources_per_s": rate}}}
    path = tmp_path / name
    path.write_text(json.dumps(raw))
    return path


def test_the_record_gives_a_row_per_feature_count_with_its_range_over_runs(bench, tmp_path):
    from result_records import read_record

    runs = [_run(tmp_path, "a.json", 6, 8043.0), _run(tmp_path, "b.json", 6, 9960.0), _run(tmp_path, "c.json", 16, 5712.0)]
    out = tmp_path / "timings.prediction.json"
    bench.main(["--summarize", *map(str, runs), "--record", str(out)])
    record = read_record(out)
    assert record["tables"][0]["rows"] == [["d = 6", "8 000-10 000"], ["d = 16 (the main job's)", "5 700"]]
    assert "load average 0.9-2.1" in record["tables"][0]["caption"]
    lines = record["command"].splitlines()  # each run, then the record made from them all
    assert lines[2].startswith("python lab/studies/bench_prediction.py --d 16 --likelihoods softmax --json ")
    assert lines[3] == f"python lab/studies/bench_prediction.py --summarize {' '.join(map(str, runs))}"


def test_runs_of_another_model_or_without_softmax_are_refused_naming_the_file(bench, tmp_path):
    other = [_run(tmp_path, "a.json", 6, 8000.0), _run(tmp_path, "b.json", 16, 5000.0, inducing=100)]
    with pytest.raises(ValueError, match=re.escape(f"{other[1]}: M, C and draws")):
        bench.results_record([str(p) for p in other])
    robustmax = _run(tmp_path, "c.json", 6, 1.0)
    robustmax.write_text(robustmax.read_text().replace('"softmax"', '"robustmax"'))
    with pytest.raises(ValueError, match=re.escape(f"{robustmax}: no field 'end_to_end.softmax'")):
        bench.results_record([str(robustmax)])


def test_runs_kept_in_a_folder_give_a_line_per_feature_count(bench, tmp_path):
    runs = [_run(tmp_path, "d6_run1.json", 6, 8000.0), _run(tmp_path, "d6_run2.json", 6, 9000.0),
            _run(tmp_path, "d16_run1.json", 16, 5000.0)]
    record = bench.results_record(bench.output_files([tmp_path]))
    assert sorted(record["command"].splitlines()) == sorted([
        f"python lab/studies/bench_prediction.py --runs 2 --json {tmp_path}",
        f"python lab/studies/bench_prediction.py --d 16 --likelihoods softmax --json {tmp_path}"])
    assert len(runs) == 3 and record["tables"][0]["rows"][0] == ["d = 6", "8 000-9 000"]

"""lab/studies/bench_noisy_gp.py: its results record is made from a run's JSON, and a bad output is refused."""

from __future__ import annotations

import json
import re

import pytest

from conftest import repository_script


@pytest.fixture(scope="module")
def bench():
    return repository_script("lab/studies/bench_noisy_gp.py")


def _output(tmp_path, **change):
    wall = {"GPflow SVGP": 0.004, "MGP": 0.003, "NIMGP": 0.003, "NIMGP-NN": 0.0036, "NIMGP-FO": 0.0045}
    small = {"median_seconds_per_step": wall, "median_cpu_seconds_per_step": {k: 2 * v for k, v in wall.items()},
             "predict_sources_per_second": {"MGP": 238803.4, "NIMGP": 777.2}, **change}
    raw = {"commit": "abc1234", "environment": {"load_average_at_start": [3.04, 2.0, 1.0]},
           "args": {"n": 408, "d": 6, "classes": 3, "inducing": 20, "batch": 50, "repeats": 7}, "small": small}
    path = tmp_path / "noisy_gp.json"
    path.write_text(json.dumps(raw))
    return path


def test_the_record_holds_the_step_times_their_ratios_and_the_prediction_rates(bench, tmp_path):
    from result_records import read_record

    record_path = tmp_path / "timings.methods.json"
    assert bench.main(["--summarize", str(_output(tmp_path)), "--record", str(record_path)]) == 0
    record = read_record(record_path)
    rows = {row[0]: row[1:] for row in record["tables"][0]["rows"]}
    assert rows["GPflow SVGP, ms per step"] == ["4.00 (8.00)", "", ""]
    assert rows["MGP / GPflow SVGP"] == ["0.75 (0.75)", "≤ 1.1", ""]
    assert rows["NIMGP-FO / MGP"] == ["1.50 (1.50)", "≤ 2.0", f"{24.01 / 7.19:.2f}"]
    assert rows["MGP prediction, sources per second (deterministic)"][0] == "238,803"
    assert "load average 3.0 at the start" in record["tables"][0]["caption"]
    assert record["command"].startswith("python lab/studies/bench_noisy_gp.py --repeats 7 --json ")


def test_a_missing_or_incomplete_output_is_refused_naming_the_file(bench, tmp_path, capsys):
    missing = tmp_path / "nothing.json"
    with pytest.raises(SystemExit):
        bench.main(["--summarize", str(missing), "--record", str(tmp_path / "r.json")])
    assert str(missing) in capsys.readouterr().err
    partial = _output(tmp_path, predict_sources_per_second={"MGP": 1.0})
    with pytest.raises(ValueError, match=re.escape(f"{partial}: no prediction rate of 'NIMGP'")):
        bench.results_record(str(partial))
    with pytest.raises(SystemExit):
        bench.main(["--record", str(tmp_path / "r.json")])  # neither a run's --json nor a kept output

"""lab/studies/bench_predict_memory.py: /usr/bin/time -v read, the record made from kept runs, bad runs refused."""

from __future__ import annotations

import json
import re

import pytest

from conftest import repository_script


@pytest.fixture(scope="module")
def bench():
    return repository_script("lab/studies/bench_predict_memory.py")


def _run(tmp_path, name, rows, path, peak, wall, cpu, commit="abc1234"):
    raw = {"commit": commit, "model": "runs/mj", "rows": rows, "path": path, "classes": ["bll", "fsrq", "pulsar", "other"],
           "load_average_at_start": [9.0, 9.0, 9.0], "measured": {"peak_gib": peak, "wall_s": wall, "cpu_s": cpu}}
    out = tmp_path / name
    out.write_text(json.dumps(raw))
    return out


def test_time_v_report_gives_peak_gib_wall_and_cpu_seconds(bench):
    report = ("\tUser time (seconds): 800.5\n\tSystem time (seconds): 34.5\n"
              "\tElapsed (wall clock) time (h:mm:ss or m:ss): 0:32:27\n\tMaximum resident set size (kbytes): 1625292\n")
    assert bench.measured(report) == {"peak_gib": 1625292 / 2**20, "wall_s": 1947.0, "cpu_s": 835.0}


def test_the_record_has_a_row_per_run_in_the_order_given(bench, tmp_path):
    from result_records import read_record

    runs = [_run(tmp_path, "a.json", 10**6, "predict", 1.5501, 1947.2, 835.0),
            _run(tmp_path, "b.json", 50000, "whole", 1.18, 145.4, 49.31),
            _run(tmp_path, "c.json", 123456, 16384, 1.19, 389.0, 93.5)]
    out = tmp_path / "timings.memory.json"
    bench.main(["--summarize", *map(str, runs), "--record", str(out)])
    record = read_record(out)
    assert record["tables"][0]["rows"] == [
        ["10^6", "gpal predict (its blocks)", "4 classes", "1.55 GiB", "1947", "835"],
        ["5 x 10^4", "whole table", "4 classes", "1.18 GiB", "145", "49.3"],
        ["123 456", "blocks of 16 384", "4 classes", "1.19 GiB", "389", "93.5"]]
    lines = record["command"].splitlines()
    assert lines[0] == "gpal classify --out runs/mj --no-progress"
    assert lines[2] == f"python lab/studies/bench_predict_memory.py runs/mj --rows 50000 --whole --json {runs[1]}"
    assert lines[-1].startswith("python lab/studies/bench_predict_memory.py --summarize ")


def test_bad_kept_runs_are_refused_naming_the_file(bench, tmp_path, capsys):
    missing = tmp_path / "none.json"
    with pytest.raises(SystemExit):
        bench.main(["--summarize", str(missing), "--record", str(tmp_path / "r.json")])
    assert str(missing) in capsys.readouterr().err
    broken = _run(tmp_path, "a.json", 1000, "predict", 1.0, 1.0, 1.0)
    broken.write_text(broken.read_text().replace('"measured"', '"figures"'))
    with pytest.raises(ValueError, match=re.escape(f"{broken}: no field 'measured'")):
        bench.results_record([str(broken)])
    with pytest.raises(SystemExit):
        bench.main(["--rows", "10"])  # no model folder to predict with
    assert not (tmp_path / "r.json").exists()


def test_runs_kept_in_a_folder_are_recorded_together_and_rerun_into_it(bench, tmp_path):
    folder = tmp_path / "predict_memory"
    folder.mkdir()
    _run(folder, "rows1000000_predict.json", 10**6, "predict", 1.5, 1900.0, 830.0)
    _run(folder, "rows100000_blocks16384.json", 10**5, 16384, 1.2, 389.0, 93.5)
    record = bench.results_record(bench.output_files([folder]))
    assert [row[:2] for row in record["tables"][0]["rows"]] == [["10^6", "gpal predict (its blocks)"],
                                                                ["10^5", "blocks of 16 384"]]  # in the files' order
    assert record["command"].splitlines()[1:] == [  # the last, given --record, makes the record from the folder
        f"python lab/studies/bench_predict_memory.py runs/mj --rows 1000000 --json {folder}",
        f"python lab/studies/bench_predict_memory.py runs/mj --rows 100000 --block-rows 16384 --json {folder}"]

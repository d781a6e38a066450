"""lab/studies/time_main_job.py: /usr/bin/time's line read, the record made from kept runs, bad runs refused."""

from __future__ import annotations

import json
import re

import pytest

from conftest import repository_script


@pytest.fixture(scope="module")
def study():
    return repository_script("lab/studies/time_main_job.py")


def _run(catalog, wall, user, system, kb, load=0.5):
    return {"catalog": catalog, "gpal": "gpal", "wall_s": wall, "user_s": user, "sys_s": system, "max_rss_kb": kb,
            "load_average": load}


def _kept(tmp_path, **change):
    raw = {"commit": "abc1234", "args": {"catalogs": ["FL16Y", "4FGL"], "runs": 2},
           "runs": [_run("FL16Y", 15.2, 20.4, 2.6, 1_150_000, 0.3), _run("FL16Y", 16.0, 21.2, 2.9, 1_170_000, 1.8),
                    _run("4FGL", 13.7, 17.5, 2.4, 1_100_000)], **change}
    path = tmp_path / "main_job_time.json"
    path.write_text(json.dumps(raw))
    return path


def test_time_s_line_is_read_from_the_end_of_the_error_output(study):
    stderr = "gpal: training ...\n15.21 s 20.40 user 2.61 sys 1170000 KB\n"
    assert study.parse_time(stderr) == {"wall_s": 15.21, "user_s": 20.4, "sys_s": 2.61, "max_rss_kb": 1170000}
    with pytest.raises(ValueError, match="no line of /usr/bin/time"):
        study.parse_time("Command terminated by signal 9\n")


def test_the_record_gives_each_catalogs_ranges_and_the_pairs_ratio(study, tmp_path):
    from result_records import read_record

    this, before = _run("FL16Y", 15.0, 20.0, 3.0, 1), _run("FL16Y", 12.0, 17.0, 3.0, 1)
    out = tmp_path / "timings.json"
    path = _kept(tmp_path, baseline="5cecb1f", pairs=[{"this": this, "baseline": before}])
    assert study.main(["--summarize", str(path), "--record", str(out)]) == 0
    record = read_record(out)
    first, pairs = record["tables"]
    assert first["rows"] == [["gpal classify (FL16Y)", "15.2-16.0", "20.4-21.2 + 2.6-2.9", "1.2 GB"],
                             ["gpal classify --catalog 4FGL", "13.7", "17.5 + 2.4", "1.1 GB"]]
    assert pairs["rows"] == [["this commit", "15.0", "23.0"], ["5cecb1f", "12.0", "20.0"],
                             ["ratio (pair by pair, median)", "1.25", "1.15"]]
    assert record["command"].startswith("python lab/studies/time_main_job.py --catalogs FL16Y 4FGL ")
    assert record["workflow"] == "lab/studies/main_job_time.yaml"


def test_bad_kept_runs_are_refused_naming_the_file(study, tmp_path, capsys):
    missing = tmp_path / "none.json"
    with pytest.raises(SystemExit):
        study.main(["--summarize", str(missing), "--record", str(tmp_path / "r.json")])
    assert str(missing) in capsys.readouterr().err
    dirty = _kept(tmp_path, commit="abc1234+dirty")
    with pytest.raises(ValueError, match="needs the committed source"):
        study.results_record(str(dirty))
    no_runs = _kept(tmp_path, runs=[])
    with pytest.raises(ValueError, match=re.escape(f"{no_runs}: no runs of gpal classify")):
        study.results_record(str(no_runs))
    assert not (tmp_path / "r.json").exists()

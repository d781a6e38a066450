"""lab/studies/bench_scheduler.py: a run folder's units read, the record made from kept runs, bad runs refused."""

from __future__ import annotations

import hashlib
import json
import re

import numpy as np
import pytest

from conftest import repository_script

ARGS = {"rounds": 2, "splits": 1, "epochs": 5, "rows": 400, "chunk_size": 200, "cores": 2}


@pytest.fixture(scope="module")
def bench():
    return repository_script("lab/studies/bench_scheduler.py")


def _unit(folder, method, split, train, predict, proba, error=False):
    path = folder / "units" / method / f"split_{split:04d}{'.error' if error else ''}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"method": method, "split": split, "train_seconds": train, "predict_seconds": predict,
                                "proba": proba}))


def test_a_run_folders_units_give_their_seconds_and_a_bitwise_digest(bench, tmp_path):
    proba = [[0.1 + 0.2, 0.7 - 0.2 - 0.1], [0.5, 0.5]]
    _unit(tmp_path, "MGP", 0, 1.5, 0.25, proba)
    _unit(tmp_path, "NIMGP", 0, 3.0, 0.5, [[0.3, 0.4], [0.5, 0.5]])
    units = bench.unit_timings(tmp_path, 2)
    assert units["MGP/split_0000"]["fit_s"] == 1.5 and units["NIMGP/split_0000"]["predict_s"] == 0.5
    expected = hashlib.sha256(np.array(proba, dtype="<f8").tobytes()).hexdigest()
    assert units["MGP/split_0000"]["proba_sha256"] == expected
    # 0.1 + 0.2 and 0.3 print alike but differ in their last bit: the digests tell them apart
    assert units["MGP/split_0000"]["proba_sha256"] != units["NIMGP/split_0000"]["proba_sha256"]
    with pytest.raises(ValueError, match="2 finished units, expected 4"):
        bench.unit_timings(tmp_path, 4)
    _unit(tmp_path, "NIMGP", 1, 0, 0, [], error=True)
    with pytest.raises(ValueError, match=re.escape("units failed (['units/NIMGP/split_0001.error.json'])")):
        bench.unit_timings(tmp_path, 2)


def _workflow(folder, k, scheduler, wall, seconds, digests, commit="abc1234"):
    raw = {"commit": commit, "kind": "workflow", "round": k, "scheduler": scheduler, "args": ARGS, "wall_s": wall,
           "load_before": [1.0, 1.0, 1.0], "load_after": [1.5, 1.0, 1.0],
           "peak_mib": {"driver": [900.0], "workers": []},
           "units": {name: {"fit_s": fit, "predict_s": predict, "proba_sha256": digests[name]}
                     for name, (fit, predict) in seconds.items()}}
    (folder / f"round{k}_{scheduler}.json").write_text(json.dumps(raw))


def _predict(folder, scheduler, wall, workers, table="t1", commit="abc1234"):
    raw = {"commit": commit, "kind": "predict", "scheduler": scheduler, "args": ARGS, "pool_sources": 1274,
           "rows": 400, "wall_s": wall, "load_before": [0.5, 1.0, 1.0], "load_after": [2.0, 1.0, 1.0],
           "peak_mib": {"driver": [2048.0], "workers": workers}, "table_sha256": table}
    (folder / f"predict_{scheduler}.json").write_text(json.dumps(raw))


def _kept(folder, second_nimgp="b"):
    folder.mkdir()
    seconds = {"MGP/split_0000": (1.25, 0.5), "NIMGP/split_0000": (4.0, 2.25)}
    for k, wall in ((1, 10.0), (2, 12.0)):
        _workflow(folder, k, "in-process", wall, seconds, {"MGP/split_0000": "a", "NIMGP/split_0000": "b"})
        _workflow(folder, k, "local-dask", wall + 5.0, {n: (2 * f, p) for n, (f, p) in seconds.items()},
                  {"MGP/split_0000": "a", "NIMGP/split_0000": second_nimgp if k == 2 else "b"})
    _predict(folder, "in-process", 8.0, [])
    _predict(folder, "local-dask", 16.0, [1536.0, 1024.0])
    return folder


def test_the_record_gives_each_schedulers_walls_unit_sums_and_the_prediction(bench, tmp_path):
    from result_records import read_record

    folder = _kept(tmp_path / "kept")
    out = tmp_path / "scheduler.json"
    assert bench.main(["--summarize", str(folder), "--record", str(out)]) == 0
    record = read_record(out)
    units, predict = record["tables"]
    # sums by hand: in-process 1.25 + 0.5 + 4.0 + 2.25; local-dask the fits doubled, 2.5 + 0.5 + 8.0 + 2.25
    assert units["rows"] == [["`in-process`", "10.0 s", "12.0 s", "8.0 s / 8.0 s"],
                             ["`local-dask` (2 workers)", "15.0 s", "17.0 s", "13.2 s / 13.2 s"]]
    assert "All 2 units' probabilities were bitwise identical across the 4 runs." in units["caption"]
    assert "load average 1.0-1.5" in units["caption"]
    assert predict["rows"] == [["`in-process`", "400", "8.0 s", "50", "2.00 GiB", "none"],
                               ["`local-dask`", "400", "16.0 s", "25", "2.00 GiB", "1.00 GiB, 1.50 GiB"]]
    assert "The two tables were the same bytes." in predict["caption"]
    assert "load average 0.5-2.0 before and after" in predict["caption"]
    assert record["commit"] == "abc1234" and record["workflow"] == "lab/studies/scheduler.yaml"
    assert record["command"] == (f"python lab/studies/bench_scheduler.py --splits 1 --epochs 5 --rows 400 "
                                 f"--chunk-size 200 --json {folder}")


def test_a_unit_that_differed_between_runs_is_named(bench, tmp_path):
    folder = _kept(tmp_path / "kept", second_nimgp="c")
    record = bench.results_record(bench.output_files([str(folder)]), str(folder))
    assert "The probabilities of 1 of the 2 units differed across the 4 runs (NIMGP/split_0000)." \
        in record["tables"][0]["caption"]


def test_missing_runs_mixed_commits_and_a_dirty_source_are_refused(bench, tmp_path, capsys):
    folder = _kept(tmp_path / "kept")
    (folder / "round2_local-dask.json").unlink()
    with pytest.raises(ValueError, match=r"expected each scheduler \['in-process', 'local-dask'\] in each of 2 rounds"):
        bench.results_record(bench.output_files([str(folder)]), str(folder))
    _predict(folder, "local-dask", 16.0, [], commit="def5678")
    with pytest.raises(SystemExit):
        bench.main(["--summarize", str(folder), "--record", str(tmp_path / "r.json")])
    assert "a record needs all its runs at one commit" in capsys.readouterr().err
    assert not (tmp_path / "r.json").exists()
    dirty = _kept(tmp_path / "dirty")
    for path in dirty.glob("*.json"):
        path.write_text(path.read_text().replace('"abc1234"', '"abc1234+dirty"'))
    with pytest.raises(ValueError, match="a record needs the committed source that ran"):
        bench.results_record(bench.output_files([str(dirty)]), str(dirty))


def test_bad_options_are_refused_before_anything_runs(bench, capsys):
    with pytest.raises(SystemExit):
        bench.main(["--record", "r.json"])
    assert "--record needs --json FOLDER" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        bench.main(["--splits", "0"])
    assert "--splits must be >= 1; got 0" in capsys.readouterr().err

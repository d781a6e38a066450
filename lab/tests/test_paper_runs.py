"""lab/studies/bench_paper_runs.py: a papers workflow's run read past its record, on a hand-made run folder."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import yaml

from conftest import repository_script


@pytest.fixture(scope="module")
def script():
    return repository_script("lab/studies/bench_paper_runs.py")


def _unit(folder, method, split, y, proba, **own):
    path = folder / "units" / method / f"split_{split:04d}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    cost = [-math.log(p[t]) for t, p in zip(y, proba)]
    wrong = sum(max(range(len(p)), key=p.__getitem__) != t for t, p in zip(y, proba))
    unit = {"y_true": y, "proba": proba, "nll": sum(cost) / len(y), "error": wrong / len(y), "train_seconds": 2.0}
    path.write_text(json.dumps(unit | own))


def _run(tmp_path, **own):
    run = tmp_path / "run"
    (run / "toy").mkdir(parents=True)
    (run / "measurements.json").write_text(json.dumps(
        {"workflow": "toy", "command": "gpal workflow toy.yaml", "commit": "abc", "settings": {"methods": ["b", "a"]}}))
    # four rows, one wrong (row 3, true class 1 at 0.2): NLL parts by hand below
    _unit(run / "toy", "a", 0, [0, 1, 0, 1], [[0.9, 0.1], [0.4, 0.6], [0.7, 0.3], [0.8, 0.2]], **own)
    _unit(run / "toy", "a", 1, [0, 1], [[0.6, 0.4], [0.5, 0.5]])
    _unit(run / "toy", "b", 0, [1, 1], [[0.1, 0.9], [0.2, 0.8]])
    return run


def test_the_nll_splits_into_its_correct_and_wrong_rows_and_splits_are_averaged(script, tmp_path):
    result = script.read_run(_run(tmp_path))
    assert list(result["datasets"]["toy"]) == ["b", "a"]  # the workflow's order, not the alphabet's
    a0 = result["datasets"]["toy"]["a"]["splits"][0]
    correct = -(math.log(0.9) + math.log(0.6) + math.log(0.7)) / 4
    assert a0["nll_correct_rows"] == pytest.approx(correct)
    assert a0["nll_wrong_rows"] == pytest.approx(-math.log(0.2) / 4)
    assert a0["accuracy"] == 0.75
    assert (a0["confidence_mean"], a0["confidence_max"]) == pytest.approx((0.75, 0.9))
    # split 1: argmax of a tie takes class 0, so row 2 (true 1) is wrong: accuracy 0.5
    summary = result["datasets"]["toy"]["a"]["summary"]["accuracy"]
    assert summary["mean"] == pytest.approx(0.625) and summary["se"] == pytest.approx(0.125)
    assert result["datasets"]["toy"]["b"]["summary"]["accuracy"]["se"] is None
    assert (result["run_commit"], result["command"]) == ("abc", "gpal workflow toy.yaml")
    assert "| toy | a | 0 | 0.7500 |" in script.tables(result)


def test_a_unit_whose_probabilities_are_not_what_it_scored_is_refused(script, tmp_path):
    with pytest.raises(ValueError, match=r"split_0000.json: its probabilities give NLL .* the unit records 0.100000"):
        script.read_run(_run(tmp_path, nll=0.1))


def test_a_folder_that_is_not_a_papers_run_is_refused_naming_what_is_expected(script, tmp_path, capsys):
    with pytest.raises(SystemExit):
        script.main([str(tmp_path)])
    assert "no measurements.json; expected the folder of a papers workflow's run" in capsys.readouterr().err


def test_the_time_of_the_runs_command_is_kept_and_a_file_of_another_format_is_refused(script, tmp_path, capsys):
    timed = tmp_path / "run.time"
    timed.write_text('{"wall_seconds": 216.0, "user_seconds": 91.5}\n')
    out = tmp_path / "record.json"
    assert script.main([str(_run(tmp_path)), "--timed", str(timed), "--json", str(out)]) == 0
    assert json.loads(out.read_text())["command_time"] == {"wall_seconds": 216.0, "user_seconds": 91.5}
    assert "it took 216 s of wall time, 92 s of user CPU" in capsys.readouterr().out
    timed.write_text("0:03.60elapsed\n")
    with pytest.raises(SystemExit):
        script.main([str(tmp_path / "run"), "--timed", str(timed)])
    assert "not the time of a command" in capsys.readouterr().err


def test_the_kept_records_of_the_study_hold_what_their_splits_make():
    """Each record the study `paper_runs` names: the NLL's two parts add up to it, and a method's summary is the
    mean of its splits (a record edited by hand, or from another run, would not)."""
    root = Path(__file__).resolve().parents[2]
    study = yaml.safe_load((root / "lab/studies/paper_runs.yaml").read_text(encoding="utf-8"))
    assert study["records"]
    for name in study["records"]:
        record = json.loads((root / name).read_text(encoding="utf-8"))
        assert record["run_commit"] and record["command"].startswith("gpal workflow papers/"), name
        for methods in record["datasets"].values():
            for entry in methods.values():
                splits = entry["splits"].values()
                for s in splits:
                    assert s["nll_correct_rows"] + s["nll_wrong_rows"] == pytest.approx(s["nll"], rel=1e-9), name
                for key, cell in entry["summary"].items():
                    assert cell["mean"] == pytest.approx(sum(s[key] for s in splits) / len(splits)), (name, key)


def _other_run(tmp_path, labels_of_split_1=(0, 1)):
    """A second run of method c on the toy's splits 0 and 1 (a's test rows there: labels 0,1,0,1 and 0,1)."""
    run = tmp_path / "other"
    (run / "toy").mkdir(parents=True)
    (run / "measurements.json").write_text(json.dumps(
        {"workflow": "toy", "command": "gpal workflow toy.yaml --set x=1", "commit": "def", "settings": {"methods": ["c"]}}))
    _unit(run / "toy", "c", 0, [0, 1, 0, 1], [[0.5, 0.5], [0.5, 0.5], [0.5, 0.5], [0.5, 0.5]])
    _unit(run / "toy", "c", 1, list(labels_of_split_1), [[0.5, 0.5], [0.5, 0.5]])
    return run


def test_paired_differences_are_taken_split_by_split_on_the_same_rows(script, tmp_path):
    from scipy import stats

    run, other = _run(tmp_path), _other_run(tmp_path)
    out = script.paired(run, other)
    nll = next(r for r in out["rows"] if (r["method"], r["metric"]) == ("a", "nll"))
    # a's NLL per split by hand, minus c's ln 2 on every row
    a0 = -(math.log(0.9) + math.log(0.6) + math.log(0.7) + math.log(0.2)) / 4
    a1 = -(math.log(0.6) + math.log(0.5)) / 2
    diffs = [a0 - math.log(2), a1 - math.log(2)]
    assert nll["splits"] == [0, 1] and nll["per_split"] == pytest.approx(diffs)
    mean, sd = sum(diffs) / 2, abs(diffs[0] - diffs[1]) / math.sqrt(2)
    half = stats.t.ppf(0.975, 1) * sd / math.sqrt(2)
    assert (nll["mean"], nll["low"], nll["high"]) == pytest.approx((mean, mean - half, mean + half))
    assert {r["method"] for r in out["rows"]} == {"a"}  # b ran split 0 alone: named, not averaged
    assert out["fewer_than_two_splits"] == [{"dataset": "toy", "method": "b", "against": "c", "splits": [0]}]
    assert out["command"] == "gpal workflow toy.yaml --set x=1"


def test_paired_runs_on_other_rows_or_one_split_are_refused(script, tmp_path):
    run = _run(tmp_path)
    with pytest.raises(ValueError, match=r"split_0001.json: different test rows"):
        script.paired(run, _other_run(tmp_path, labels_of_split_1=(1, 1)))
    lone = tmp_path / "lone"
    (lone / "toy").mkdir(parents=True)
    (lone / "measurements.json").write_text(json.dumps({"workflow": "toy", "command": "c", "commit": "e"}))
    _unit(lone / "toy", "c", 0, [0, 1, 0, 1], [[0.5, 0.5]] * 4)
    with pytest.raises(ValueError, match=r"no method pair shares two or more splits"):
        script.paired(run, lone)


def _both_methods_on_two_splits(tmp_path, commit="abc"):
    run = _run(tmp_path)
    _unit(run / "toy", "b", 1, [0, 1], [[0.8, 0.2], [0.4, 0.6]])
    record = json.loads((run / "measurements.json").read_text())
    (run / "measurements.json").write_text(json.dumps(record | {"commit": commit}))
    return run


def test_a_table_record_holds_each_methods_mean_and_se_over_its_splits(script, tmp_path, capsys):
    run = _both_methods_on_two_splits(tmp_path)
    record = script.table_record(script.read_run(run), "lab/studies/s.yaml", "cmd")
    assert (record["commit"], record["workflow"], record["settings"]["splits"]) == ("abc", "lab/studies/s.yaml",
                                                                                   {"toy": 2})
    (table,) = record["tables"]
    assert table["caption"] == "toy" and table["columns"] == ["method", "gpal accuracy", "gpal NLL", "gpal ECE"]
    # b's NLL per split by hand: split 0 -ln 0.9, -ln 0.8; split 1 -ln 0.8, -ln 0.6
    nll = [-(math.log(0.9) + math.log(0.8)) / 2, -(math.log(0.8) + math.log(0.6)) / 2]
    mean, se = sum(nll) / 2, abs(nll[0] - nll[1]) / 2  # SE of two values: |a - b| / 2
    assert table["rows"][0][:1] + table["rows"][0][2:3] == ["b", f"{mean:.4f} ± {se:.4f}"]
    # kept with --json, the record remakes the same table without the run's folder
    kept, out = tmp_path / "kept.json", tmp_path / "table.json"
    script.main([str(run), "--json", str(kept)])
    script.main([str(kept), "--record", str(out), "--study", "lab/studies/s.yaml"])
    assert json.loads(out.read_text())["tables"] == record["tables"]


def test_a_table_record_of_uneven_splits_or_uncommitted_source_is_refused(script, tmp_path):
    with pytest.raises(ValueError, match=r"data set toy has splits \{'b': \[0\], 'a': \[0, 1\]\}"):
        script.table_record(script.read_run(_run(tmp_path)), "s.yaml", "cmd")
    dirty = _both_methods_on_two_splits(tmp_path / "d", commit="abc+dirty")
    with pytest.raises(ValueError, match="were made at 'abc\\+dirty'"):
        script.table_record(script.read_run(dirty), "s.yaml", "cmd")


def test_the_ece_is_the_one_the_run_declares(script, tmp_path):
    """A run whose workflow declares another paper's ECE (its ``ece`` block) is scored in it; a run declaring none in
    gpal's, as the compare workflow scores it."""
    from gpal.evaluation.calibration import expected_calibration_error

    run = _run(tmp_path)
    declared = {"n_bins": 10, "confidence": "midpoint", "binary": "positive", "empty_bins": "count"}
    plain = script.read_run(run)["datasets"]["toy"]["a"]["splits"][0]["ece"]
    record = json.loads((run / "measurements.json").read_text())
    record["settings"]["ece"] = declared
    (run / "measurements.json").write_text(json.dumps(record))
    theirs = script.read_run(run)["datasets"]["toy"]["a"]["splits"][0]["ece"]
    y, proba = [0, 1, 0, 1], [[0.9, 0.1], [0.4, 0.6], [0.7, 0.3], [0.8, 0.2]]
    assert plain == pytest.approx(expected_calibration_error(y, proba))
    assert theirs == pytest.approx(expected_calibration_error(y, proba, **declared)) and theirs != pytest.approx(plain)


def test_a_run_with_injected_noise_levels_is_read_level_by_level(script, tmp_path):
    run = _run(tmp_path)
    _unit(run / "wave" / "noise_0.25", "a", 0, [1, 0], [[0.3, 0.7], [0.6, 0.4]])
    datasets = script.read_run(run)["datasets"]
    assert set(datasets) == {"toy", "wave/noise_0.25"}
    assert datasets["wave/noise_0.25"]["a"]["splits"][0]["accuracy"] == 1.0

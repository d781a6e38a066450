"""lab/studies/bench_error_bars.py: its two results records, written from saved units, and the units it refuses."""

from __future__ import annotations

import json
import math
import statistics

import pytest

from conftest import repository_script

TRUE_CLASS = 0


@pytest.fixture(scope="module")
def bench():
    return repository_script("lab/studies/bench_error_bars.py")


def _unit(folder, task, rep, method, p_true, n=4, **extra):
    """A unit whose every test source is of class 0 with probability ``p_true``: its NLL is -log(p_true)."""
    folder.mkdir(parents=True, exist_ok=True)
    proba = [[p_true, (1 - p_true) / 2, (1 - p_true) / 2]] * n
    unit = {"task": task, "rep": rep, "method": method, "proba": proba, "y": [TRUE_CLASS] * n, "seconds": 1.0, **extra}
    (folder / f"rep{rep}_{method.replace(' ', '_')}.json").write_text(json.dumps(unit))


def _catalog_units(out, commit="abc1234"):
    for task in ("faint", "main", "bright"):
        for rep in (0, 1):
            for method, p in {"NIMGP pop": 0.5, "MGP": 0.25, "logistic": 0.2, "random_forest_isotonic +err": 0.4}.items():
                _unit(out / task, task, rep, method, p, commit=commit, n_train=10)


def test_the_catalog_record_shows_each_tasks_nlls_their_paired_difference_and_the_best_baseline(bench, tmp_path):
    _catalog_units(tmp_path)
    record = bench.results_record(tmp_path, "catalog")
    assert record["commit"] == "abc1234" and record["workflow"] == "lab/studies/error_bars.yaml"
    assert record["settings"]["repetitions"] == 2
    assert record["command"].startswith("python lab/studies/bench_error_bars.py --task faint main bright --reps 2")
    assert "'NIMGP pop'" in record["command"]  # a method name with a space, quoted to be run as shown
    rows = record["tables"][0]["rows"]
    assert [r[0] for r in rows] == ["faintest quarter", "the main job's random split",
                                    "brightest quarter (trained on the fainter three)"]
    gap = f"{math.log(0.25) - math.log(0.5):+.3f}".replace("-", "\u2212")  # every source the same: no spread
    assert rows[0][1:] == [f"{-math.log(0.5):.3f}", f"{-math.log(0.25):.3f}", f"{gap} [{gap}, {gap}]",
                           f"{-math.log(0.4):.3f} (forest, error columns as features)"]


def test_the_synthetic_record_gives_each_methods_gap_to_the_bayes_optimal_nll(bench, tmp_path):
    folder = tmp_path / "hetero"
    for rep, mgp in ((0, 0.5), (1, 0.25)):
        _unit(folder, "hetero", rep, "Bayes", 0.8)
        _unit(folder, "hetero", rep, "MGP", mgp, n_train=800, commit="abc1234")
        _unit(folder, "hetero", rep, "NIMGP pop", 0.5, n_train=800, commit="abc1234")
        _unit(folder, "hetero", rep, "NIMGP pop 2000 epochs M=50", 0.6, n_train=800, commit="abc1234")
    record = bench.results_record(tmp_path, "synthetic")
    rows = {r[0]: r[1:] for r in record["tables"][0]["rows"]}
    per_rep = [-math.log(0.5), -math.log(0.25)]
    se = statistics.stdev(per_rep) / math.sqrt(2)
    assert rows["MGP (no error bars)"][0] == f"{statistics.mean(per_rep):.3f} ± {se:.3f}"
    assert rows["Bayes-optimal"] == [f"{-math.log(0.8):.3f} ± 0.000", ""]
    gap = f"+{math.log(0.8) - math.log(0.6):.3f}"
    assert rows["NIMGP, population prior, 2000 epochs, M = 50"][1] == f"{gap} [{gap}, {gap}]"
    assert record["settings"]["train / test"] == "800 / 4" and record["commit"] == "abc1234"


def test_units_without_their_commit_need_it_named_and_a_contrary_one_is_refused(bench, tmp_path):
    _catalog_units(tmp_path, commit=None)
    with pytest.raises(ValueError, match="no commit: give the commit they ran at"):
        bench.results_record(tmp_path, "catalog")
    assert bench.results_record(tmp_path, "catalog", commit="def5678")["commit"] == "def5678"
    _unit(tmp_path / "main", "main", 0, "MGP", 0.25, commit="abc1234+dirty")
    with pytest.raises(ValueError, match="not --commit def5678"):
        bench.results_record(tmp_path, "catalog", commit="def5678")


def test_missing_or_broken_units_are_refused_naming_the_folder_or_file(bench, tmp_path):
    with pytest.raises(ValueError, match=r"faint: no units \(run the task first"):
        bench.results_record(tmp_path, "catalog")
    _catalog_units(tmp_path)
    (tmp_path / "bright" / "rep0_MGP.json").unlink()
    with pytest.raises(ValueError, match=r"bright: methods saved on other repetitions"):
        bench.results_record(tmp_path, "catalog")
    (tmp_path / "bright" / "rep0_MGP.json").write_text("{not json")
    with pytest.raises(ValueError, match=r"rep0_MGP.json is not a unit of this study"):
        bench.results_record(tmp_path, "catalog")


def test_record_names_the_tasks_it_can_write_and_a_mismatch_with_the_file_fails(bench, tmp_path, monkeypatch, capsys):
    with pytest.raises(SystemExit):
        bench.main(["--summarize", "--task", "faint", "--record", str(tmp_path / "r.json"), "--out", str(tmp_path)])
    assert "--record writes the record of the tasks faint main bright or hetero" in capsys.readouterr().err
    _catalog_units(tmp_path)
    path = tmp_path / "r.json"
    assert bench.main(["--summarize", "--task", "faint", "main", "bright", "--record", str(path), "--out", str(tmp_path)]) == 0
    record = json.loads(path.read_text())
    record["tables"][0]["rows"][0][1] = "0.000"
    path.write_text(json.dumps(record))
    monkeypatch.setenv("GPAL_RECORDS_CHECK", "1")
    (tmp_path / "summary.md").unlink()
    assert bench.main(["--summarize", "--task", "faint", "main", "bright", "--record", str(path), "--out", str(tmp_path)]) == 2
    assert "the file has '0.000'" in capsys.readouterr().err
    assert not (tmp_path / "summary.md").exists()  # a check writes nothing


def test_summarizing_without_units_says_how_to_fit_them_and_keeps_the_summary(bench, tmp_path, capsys):
    """Git keeps a task's summary, not its units: a summary of no units would overwrite the kept one."""
    (tmp_path / "summary.md").write_text("kept")
    _unit(tmp_path / "faint", "faint", 0, "MGP", 0.25)
    assert bench.main(["--summarize", "--task", "faint", "hetero", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "no units of hetero in" in err and "python lab/studies/run.py error_bars" in err
    assert (tmp_path / "summary.md").read_text() == "kept"

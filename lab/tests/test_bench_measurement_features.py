"""lab/studies/bench_measurement_features.py: its results record from kept summaries, and what it refuses."""

from __future__ import annotations

import pandas as pd
import pytest

from conftest import repository_script

MINUS = "\u2212"


@pytest.fixture(scope="module")
def bench():
    return repository_script("lab/studies/bench_measurement_features.py")


def _summaries(bench, commit=""):
    """Summary rows of every (check, subset, model, column) the record reads, each difference made up and distinct."""
    every, measured = bench._pooled_name(bench.RECORD_PAIRS), bench._pooled_name(bench.RECORD_MEASUREMENT_PAIRS)
    checks = [bench._check_name(p) for p in bench.RECORD_PAIRS]
    cells = {(measured, "all", "gp|fermi_dr4_measurements", "diff_gp"): 0.004,
             (measured, "fainter half", "gp|fermi_dr4_measurements", "diff_gp"): 0.009,
             (every, "all", "mgp|summary", "diff_gp"): -0.007, ("faint", "all", "mgp|summary", "diff_gp"): 0.059,
             (every, "all", "gp+w|summary", "diff_gp"): 0.041, (every, "all", "gp@prior|summary", "diff_gp"): -0.056,
             (every, "later pulsar", "gp@prior|summary", "diff_gp"): -0.368,
             (every, "later fsrq", "gp@prior|summary", "diff_gp"): 0.297,
             (checks[0], "all", "gp@prior|summary", "diff_gp"): -0.008}
    for i, check in enumerate(checks):
        cells[(check, "all", "gp+w|summary", "diff_gp")] = 0.030 + 0.005 * i
        cells[(check, "all", "logistic+w|summary", "diff")] = 0.040 + 0.030 * i
    rows = {}
    for (check, subset, model, column), value in cells.items():
        row = rows.setdefault((check, subset, model), {"check": check, "commit": commit, "subset": subset, "n": 10,
                                                       "model": model, "seeds": 3})
        row.update({column: value, f"{column}_low": value - 0.010, f"{column}_high": value + 0.020})
    return pd.DataFrame(list(rows.values()))


def test_the_record_reads_each_difference_from_the_summaries(bench, tmp_path):
    _summaries(bench, commit="abc1234").to_csv(tmp_path / "summary_x.csv", index=False)
    record = bench.results_record(tmp_path)
    assert record["commit"] == "abc1234" and record["workflow"] == "lab/studies/measurement_features.yaml"
    assert record["settings"] == {"checks": [bench._check_name(p) for p in bench.RECORD_PAIRS], "seeds": 3}
    assert record["command"].splitlines()[-1].endswith("--summarize")  # the record-writing command runs last
    rows = record["tables"][0]["rows"]
    assert rows[0][1] == "+0.004 [" + MINUS + "0.006, +0.024] (4FGL-DR4 + 4FGL -> FL16Y)"
    assert rows[0][2] == "fainter half +0.009 [" + MINUS + "0.001, +0.029]"
    assert rows[1][1] == f"{MINUS}0.007 [{MINUS}0.017, +0.013] (all four checks)"
    assert rows[1][2] == "the faintest quarter within 4FGL-DR4 +0.059 [+0.049, +0.079]"
    assert rows[2][2] == ("each check +0.030 to +0.045; logistic regression weighted, against unweighted: "
                          "each check +0.040 to +0.130")
    assert rows[3][2].startswith(f"later pulsars {MINUS}0.368 [{MINUS}0.378, {MINUS}0.348], later FSRQs +0.297")
    assert rows[3][2].endswith(f"4FGL-DR4 -> FL16Y alone {MINUS}0.008 [{MINUS}0.018, +0.012]")


def test_summaries_that_name_no_commit_need_it_given(bench, tmp_path):
    _summaries(bench).to_csv(tmp_path / "summary_x.csv", index=False)
    with pytest.raises(ValueError, match=r"name no commit: give the one their fits ran at \(--commit\)"):
        bench.results_record(tmp_path)
    assert bench.results_record(tmp_path, commit="def5678")["commit"] == "def5678"
    _summaries(bench, commit="mixed").to_csv(tmp_path / "summary_x.csv", index=False)
    with pytest.raises(ValueError, match="the fits ran at 'mixed'"):
        bench.results_record(tmp_path)


def test_missing_or_contradicting_summaries_are_refused_naming_the_folder_and_row(bench, tmp_path, capsys):
    assert bench.main(["--record", str(tmp_path / "r.json"), "--out", str(tmp_path)]) == 2
    assert "no summary_*.csv of the checks" in capsys.readouterr().err
    table = _summaries(bench)
    table[table["check"] != "faint"].to_csv(tmp_path / "summary_x.csv", index=False)
    with pytest.raises(ValueError, match=r"no summary row of mgp\|summary on 'faint' \(all\)"):
        bench.results_record(tmp_path, commit="abc1234")
    table.to_csv(tmp_path / "summary_x.csv", index=False)
    changed = table[table["check"] == "faint"].assign(diff_gp=0.5)
    changed.to_csv(tmp_path / "summary_faint.csv", index=False)
    with pytest.raises(ValueError, match=r"summaries \['summary_faint.csv', 'summary_x.csv'\] disagree"):
        bench.results_record(tmp_path, commit="abc1234")
    assert not (tmp_path / "r.json").exists()



def test_summarizing_without_saved_runs_says_how_to_fit_them(bench, tmp_path, capsys):
    """Git keeps the summaries, not the saved runs: a summary of none is refused, not printed empty."""
    assert bench.main(["--pairs", "3FGL:FL16Y", "--summarize", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "no saved runs of 3FGL:FL16Y in" in err and "python lab/studies/run.py measurement_features" in err
    assert not list(tmp_path.glob("summary_*.csv"))

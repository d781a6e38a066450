"""lab/studies/bench_discovery.py: its record from saved repetitions only (--summarize), and what it refuses."""

from __future__ import annotations

import json

import numpy as np
import pytest

from conftest import repository_script


@pytest.fixture(scope="module")
def bench():
    return repository_script("lab/studies/bench_discovery.py")


def _repetition(path, rep, commit="abc1234", n=120, pulsars=20):
    """A pool whose pulsars are the first ``pulsars`` sources, ranked by p(pulsar) in the order 0, 2, 4, ... first:
    the top k hold every even-numbered source below ``pulsars`` and no other pulsar."""
    is_target = np.arange(n) < pulsars
    p = np.where(np.arange(n) % 2 == 0, 1.0 - np.arange(n) / (2 * n), 0.01)
    path.mkdir(parents=True, exist_ok=True)
    (path / f"rep{rep}.json").write_text(json.dumps({"rep": rep, "p_target": p.tolist(), "ucb": p.tolist(),
                                                     "is_target": is_target.tolist(), "seconds": 1.0,
                                                     "commit": commit}))


def test_summarize_writes_the_record_from_the_saved_repetitions_without_fitting(bench, tmp_path, monkeypatch):
    monkeypatch.setattr(bench, "run_rep", lambda *a: pytest.fail("a repetition was fitted"))
    for rep in (0, 1):
        _repetition(tmp_path, rep)
    path = tmp_path / "record.json"
    assert bench.main(["--reps", "2", "--summarize", "--out", str(tmp_path), "--record", str(path)]) == 0
    record = json.loads(path.read_text())
    rows = {r[0]: r for r in record["tables"][0]["rows"]}
    assert record["commit"] == "abc1234" and record["settings"]["repetitions"] == 2
    # top 10: sources 0, 2, ..., 18, all pulsars; top 20: 0 .. 38, the 10 even ones below 20; random finds k / 6
    assert rows[10][1] == "10.0" and rows[10][2].startswith("6.00 [")
    assert rows[20][1] == "10.0" and rows[20][2].startswith("3.00 [")
    assert "(120, 16.7% pulsars)" in record["settings"]["pool"]


def test_summarize_refuses_a_missing_or_broken_repetition_naming_it(bench, tmp_path, capsys):
    _repetition(tmp_path, 0)
    assert bench.main(["--reps", "2", "--summarize", "--out", str(tmp_path)]) == 2
    assert "rep1.json: no saved repetition 1" in capsys.readouterr().err
    (tmp_path / "rep1.json").write_text(json.dumps({"rep": 1, "p_target": [0.5], "ucb": [0.5]}))
    with pytest.raises(ValueError, match=r"rep1.json is not a repetition of this study.*missing \['is_target'\]"):
        bench.load_units(tmp_path, 2)


def test_a_record_of_repetitions_at_several_commits_is_refused(bench, tmp_path, capsys):
    _repetition(tmp_path, 0)
    _repetition(tmp_path, 1, commit="def5678")
    assert bench.main(["--reps", "2", "--summarize", "--out", str(tmp_path), "--record", str(tmp_path / "r.json")]) == 2
    assert "a record needs one committed source" in capsys.readouterr().err
    assert not (tmp_path / "r.json").exists()

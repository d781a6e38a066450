"""workflows/studies/bench_paper002_curves.py: the results record it writes from kept runs, and its options."""

from __future__ import annotations

import json

import numpy as np
import pytest

from conftest import repository_script


@pytest.fixture(scope="module")
def curves():
    return repository_script("workflows/studies/bench_paper002_curves.py")


def _kept(path, cells, commit="abc1234"):
    """A kept run: per (rows, M) the given final accuracies of two methods, one per split."""
    results = []
    for (n, M), finals in cells.items():
        for split, (a, b) in enumerate(finals):
            traces = {m: {"method": m, "seconds": [1.0, 2.0], "accuracy": [0.5, acc], "nll": [0.7, 1 - acc],
                          "ece": [0.1, acc / 10]} for m, acc in (("vi-jj", a), ("vi-taylor", b))}
            results.append({"dataset": "magic", "split": split, "n_train": n, "M": M, "traces": traces, "claims": []})
    settings = {"datasets": "magic:50", "iters": 2, "svi_epochs": 2, "splits": 2, "seed": 0, "methods": "jj,taylor"}
    path.write_text(json.dumps({"commit": commit, "settings": settings, "results": results}))
    return str(path)


def test_the_record_holds_a_table_per_rows_and_m_with_mean_and_se_over_splits(curves, tmp_path):
    a = _kept(tmp_path / "a.json", {(2000, 50): [(0.80, 0.81), (0.84, 0.83), (0.82, 0.82)], (2000, 100): [(0.9, 0.9), (0.9, 0.88)]})
    b = _kept(tmp_path / "b.json", {(6000, 50): [(0.85, 0.86), (0.87, 0.86)]}, commit="def5678")
    record = curves.kept_record([a, b])
    assert [t["caption"] for t in record["tables"]] == ["magic_n2000_m50", "magic_n2000_m100", "magic_n6000_m50"]
    assert record["settings"]["splits"] == {"magic_n2000_m50": 3, "magic_n2000_m100": 2, "magic_n6000_m50": 2}
    assert record["commit"] == "abc1234, def5678" and record["workflow"] == "workflows/studies/paper002_curves.yaml"
    first = record["tables"][0]
    assert first["columns"] == ["method", "gpal accuracy", "gpal NLL", "gpal ECE"]
    # vi-jj: 0.80, 0.84, 0.82 -> mean 0.82, SD 0.02, SE 0.02 / sqrt(3)
    assert first["rows"][0] == ["vi-jj", f"0.8200 ± {0.02 / np.sqrt(3):.4f}", f"0.1800 ± {0.02 / np.sqrt(3):.4f}",
                                f"0.0820 ± {0.002 / np.sqrt(3):.4f}"]
    assert "--iters 2 --splits 2 --seed 0 --methods jj,taylor --json" in record["command"]  # no svi, no epochs


def test_a_table_two_runs_measured_or_of_one_split_is_refused(curves, tmp_path):
    a = _kept(tmp_path / "a.json", {(2000, 50): [(0.80, 0.81), (0.84, 0.83)]})
    with pytest.raises(ValueError, match=r"table magic_n2000_m50 is measured by two kept runs"):
        curves.kept_record([a, _kept(tmp_path / "b.json", {(2000, 50): [(0.8, 0.8), (0.8, 0.8)]})])
    with pytest.raises(ValueError, match=r"table magic_n2000_m50 has one split: no SE"):
        curves.kept_record([_kept(tmp_path / "c.json", {(2000, 50): [(0.8, 0.8)]})])
    (tmp_path / "old.json").write_text(json.dumps({"settings": {}, "results": []}))
    with pytest.raises(ValueError, match=r"not a kept run of this script with its commit"):
        curves.kept_record([str(tmp_path / "old.json")])


def test_bad_options_are_refused_before_anything_runs(curves, capsys):
    for argv, message in ((["--methods", "jj,nope"], r"--methods: unknown \['nope'\]"),
                          (["--record", "x.json"], r"--record and --kept go together")):
        with pytest.raises(SystemExit):
            curves.main(argv)
        assert message.replace("\\", "") in capsys.readouterr().err

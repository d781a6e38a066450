"""Papers 002 and 003's workflow files, each run whole at a tiny fixed-seed size: every (data set, method) of the
file appears in the comparison with a split's numbers, the file's protocol (its test fraction) is the one run, and
its measurements hold every split's value."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpal.runs.repeated_splits import unit_path
from gpal.workflows import load_workflow, run_workflow

PAPERS = Path(__file__).resolve().parents[2] / "gpal" / "workflows" / "files" / "papers"
TINY = ["protocol.splits=1", "training.epochs=1", "training.iters=2", "training.num_inducing=4"]
CASES = {
    "002_izmailov.yaml": ["datasets=[german:80]"],
    "003_milios_magic.yaml": ["datasets=[magic:80]"],
    "003_milios_letter.yaml": ["datasets=[letter:130]", "protocol.test_size=0.4"],  # 26 classes: 5 rows each
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CASES))
def test_paper_workflow_runs_tiny_and_tables_every_method(name, tmp_path):
    path = PAPERS / name
    full = load_workflow(path)
    overrides = TINY + CASES[name]
    tiny = load_workflow(path, overrides)
    out = run_workflow(path, overrides, out=tmp_path / "out", progress=False)
    table = json.loads((out / "comparison.json").read_text())
    sets = [f"{d.split(':')[0]}-n{d.split(':')[1]}" for d in tiny.config["datasets"]]
    assert [(r["dataset"], r["method"]) for r in table] == [(s, m) for s in sets for m in full.config["methods"]]
    for r in table:
        assert r["splits"] == 1 and r["failed"] == 0, r
        assert 0.0 <= float(r["accuracy"].split(" ± ")[0]) <= 1.0 and float(r["nll"].split(" ± ")[0]) > 0
        assert float(r["train_seconds"].split(" ± ")[0]) > 0
    unit = json.loads(unit_path(out / sets[0], full.config["methods"][0], 0).read_text())
    n_rows = int(tiny.config["datasets"][0].split(":")[1])
    assert len(unit["y_true"]) == pytest.approx(tiny.config["protocol"]["test_size"] * n_rows, abs=1)
    assert (out / "report.md").exists() and (out / "comparison.md").read_text().count("\n") == 2 + len(table)
    # each split's value per data set, method and metric, what a paper's table is set beside
    result = json.loads((out / "measurements.json").read_text())
    run_sets = {d.split(":")[0] for d in tiny.config["datasets"]}
    assert {(v["setting"], v["method"]) for v in result["values"]} == {
        (s, m) for s in run_sets for m in full.config["methods"]}
    assert all(len(v["values"]) == 1 for v in result["values"]) and result["budget"]["splits"] == 1

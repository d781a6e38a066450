"""workflows/papers/004_augmented.yaml at a tiny size: it runs, and its comparison holds the paper's orderings."""

import json
from pathlib import Path

from gpal.workflows import run_workflow

YAML = Path(__file__).resolve().parents[2] / "workflows" / "papers" / "004_augmented.yaml"


def test_the_augmented_model_workflow_runs_small_and_compares_orderings(tmp_path):
    tiny = ["datasets=[vehicle:120]", "methods=[ls-cavi, svgp-robustmax]", "protocol.splits=1",
            "training.epochs=2", "training.iters=3", "training.num_inducing=5"]
    out = run_workflow(YAML, tiny, out=tmp_path / "run", progress=False)
    result = json.loads((out / "paper_comparison.json").read_text())
    ran = {(r["setting"], r["method"], r["metric"]): r for r in result["rows"]}
    assert {k for k, r in ran.items() if r["n"] == 1} == {
        ("vehicle", m, k) for m in ("ls-cavi", "svgp-robustmax") for k in ("nll", "train_seconds")}
    assert all(r["verdict"] == "not run" for (s, _, _), r in ran.items() if s != "vehicle")
    orders = {(o["setting"], o["metric"]): o for o in result["orderings"]}
    assert set(orders) == {("vehicle", "nll"), ("vehicle", "train_seconds")}
    assert all(o["paper"] == "ls-cavi < svgp-robustmax" and o["pairs"] in ("0/1", "1/1") for o in orders.values())


def test_the_exact_finish_runs_in_the_workflow(tmp_path):
    tiny = ["datasets=[vehicle:120]", "methods=[ls-cavi-exact, svgp-robustmax]", "protocol.splits=1",
            "training.epochs=2", "training.iters=3", "training.num_inducing=5"]
    out = run_workflow(YAML, tiny, out=tmp_path / "run", progress=False)
    result = json.loads((out / "paper_comparison.json").read_text())
    ran = {(r["setting"], r["method"], r["metric"]): r for r in result["rows"] if r["n"] == 1}
    assert set(ran) == {("vehicle", m, k) for m in ("ls-cavi-exact", "svgp-robustmax") for k in ("nll", "train_seconds")}
    assert all(o["paper"] == "ls-cavi-exact < svgp-robustmax" for o in result["orderings"])

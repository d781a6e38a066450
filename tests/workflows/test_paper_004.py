"""gpal/workflows/files/papers/004_augmented.yaml at a tiny size: it runs, and its comparison holds the paper's orderings."""

import json
from pathlib import Path

from gpal.workflows import run_workflow

YAML = Path(__file__).resolve().parents[2] / "gpal" / "workflows" / "files" / "papers" / "004_augmented.yaml"


def test_the_augmented_model_workflow_runs_small_and_compares_orderings(tmp_path):
    tiny = ["datasets=[vehicle:120]", "methods=[ls-cavi, svgp-robustmax]", "protocol.splits=1",
            "training.epochs=2", "training.iters=3", "training.num_inducing=5"]
    out = run_workflow(YAML, tiny, out=tmp_path / "run", progress=False)
    result = json.loads((out / "paper_comparison.json").read_text())
    ran = {(r["setting"], r["method"], r["metric"]): r for r in result["rows"]}
    assert {k for k, r in ran.items() if r["n"] == 1} == {
        ("vehicle", m, k) for m in ("ls-cavi", "svgp-robustmax") for k in ("nll", "train_seconds", "ece", "accuracy")}
    assert all(r["verdict"] == "not run" for (s, _, _), r in ran.items() if s != "vehicle")
    orders = {o["metric"]: o for o in result["orderings"] if o["setting"] == "vehicle"}
    assert set(orders) == {"nll", "train_seconds", "ece", "accuracy"}
    assert all(orders[k]["paper"] == "ls-cavi < svgp-robustmax" and orders[k]["pairs"] in ("0/1", "1/1")
               for k in ("nll", "train_seconds", "ece"))
    # accuracy: "competitive or superior", tied ranks, so the paper orders no pair
    assert orders["accuracy"]["paper"] == "ls-cavi = svgp-robustmax" and orders["accuracy"]["claimed"] == 0


def test_the_exact_finish_runs_in_the_workflow(tmp_path):
    tiny = ["datasets=[vehicle:120]", "methods=[ls-cavi-exact, svgp-robustmax]", "protocol.splits=1",
            "training.epochs=2", "training.iters=3", "training.num_inducing=5"]
    out = run_workflow(YAML, tiny, out=tmp_path / "run", progress=False)
    result = json.loads((out / "paper_comparison.json").read_text())
    ran = {(r["setting"], r["method"], r["metric"]): r for r in result["rows"] if r["n"] == 1}
    assert set(ran) == {("vehicle", m, k) for m in ("ls-cavi-exact", "svgp-robustmax")
                        for k in ("nll", "train_seconds", "ece", "accuracy")}
    assert all(o["paper"] == "ls-cavi-exact < svgp-robustmax" for o in result["orderings"] if o["metric"] != "accuracy")

"""gpal/workflows/files/papers/004_augmented.yaml at a tiny size: it runs and measures what the paper orders."""

import json
from pathlib import Path

from gpal.workflows import run_workflow

YAML = Path(__file__).resolve().parents[2] / "gpal" / "workflows" / "files" / "papers" / "004_augmented.yaml"


def test_the_augmented_model_workflow_runs_small_and_measures_each_method(tmp_path):
    tiny = ["datasets=[vehicle:120]", "methods=[ls-cavi, svgp-robustmax]", "protocol.splits=1",
            "training.epochs=2", "training.iters=3", "training.num_inducing=5"]
    out = run_workflow(YAML, tiny, out=tmp_path / "run", progress=False)
    result = json.loads((out / "measurements.json").read_text())
    ran = {(v["setting"], v["method"], v["metric"]): v["values"] for v in result["values"]}
    assert set(ran) == {("vehicle", m, k) for m in ("ls-cavi", "svgp-robustmax")
                        for k in ("nll", "train_seconds", "ece", "accuracy", "error")}
    assert all(len(v) == 1 for v in ran.values()) and result["budget"] == {"splits": 1, "epochs": 2}


def test_the_exact_finish_runs_in_the_workflow(tmp_path):
    tiny = ["datasets=[vehicle:120]", "methods=[ls-cavi-exact, svgp-robustmax]", "protocol.splits=1",
            "training.epochs=2", "training.iters=3", "training.num_inducing=5"]
    out = run_workflow(YAML, tiny, out=tmp_path / "run", progress=False)
    result = json.loads((out / "measurements.json").read_text())
    assert {(v["setting"], v["method"]) for v in result["values"]} == {
        ("vehicle", m) for m in ("ls-cavi-exact", "svgp-robustmax")}

"""gpal/workflows/files/papers/004_augmented.yaml at a tiny size: it runs and measures each method the paper orders."""

import json
from pathlib import Path

from gpal.workflows import run_workflow

YAML = Path(__file__).resolve().parents[2] / "gpal" / "workflows" / "files" / "papers" / "004_augmented.yaml"


def test_the_augmented_model_workflow_runs_small_with_its_exact_finish_and_measures_each_method(tmp_path):
    # one run: the paper's CAVI, gpal's exact finish (its CAVI start then exact steps) and the robust-max baseline
    tiny = ["datasets=[vehicle:120]", "methods=[ls-cavi, ls-cavi-exact, svgp-robustmax]", "protocol.splits=1",
            "training.epochs=2", "training.iters=3", "training.num_inducing=5"]
    out = run_workflow(YAML, tiny, out=tmp_path / "run", progress=False)
    result = json.loads((out / "measurements.json").read_text())
    ran = {(v["setting"], v["method"], v["metric"]): v["values"] for v in result["values"]}
    assert set(ran) == {("vehicle", m, k) for m in ("ls-cavi", "ls-cavi-exact", "svgp-robustmax")
                        for k in ("nll", "train_seconds", "ece", "accuracy", "error")}
    assert all(len(v) == 1 for v in ran.values()) and result["budget"] == {"splits": 1, "epochs": 2}
    # the exact finish is another fit than the CAVI it starts from
    assert ran[("vehicle", "ls-cavi-exact", "nll")] != ran[("vehicle", "ls-cavi", "nll")]

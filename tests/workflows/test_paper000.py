"""Paper 000's workflows (gpal/workflows/files/papers/000_*.yaml) at a tiny fixed-seed size: the measurements they write."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpal.workflows import run_workflow

ROOT = Path(__file__).resolve().parents[2]
PAPERS = ROOT / "gpal" / "workflows" / "files" / "papers"
TINY = ["protocol.splits=2", "training.epochs=1", "training.num_inducing=4"]


def _measured(out: Path) -> tuple[dict, dict]:
    result = json.loads((out / "measurements.json").read_text())
    return result, {(v["setting"], v["method"], v["metric"]): v["values"] for v in result["values"]}


@pytest.mark.slow
def test_tables_3_4_measure_every_split(tmp_path):
    out = run_workflow(PAPERS / "000_tables_3_4.yaml",
                       [*TINY, "datasets=[twonorm:60, waveform:60]", "methods=[svgp-step, svgp-softmax]"],
                       out=tmp_path / "t34", progress=False)
    result, values = _measured(out)
    # the sets and methods run, each metric of every split: what a paper's table is set beside
    assert set(values) == {(s, m, k) for s in ("twonorm", "waveform") for m in ("svgp-step", "svgp-softmax")
                           for k in ("accuracy", "error", "nll", "ece", "train_seconds")}
    assert all(len(v) == 2 for v in values.values())
    accuracy, error = values[("twonorm", "svgp-step", "accuracy")], values[("twonorm", "svgp-step", "error")]
    assert all(0.0 <= a <= 1.0 for a in accuracy) and accuracy == pytest.approx([1 - e for e in error])
    assert result["budget"] == {"splits": 2, "epochs": 1}
    assert result["command"].startswith("gpal workflow ") and "--set protocol.splits=2" in result["command"]
    # Bayesian Benchmarks' plain random test sets; gpal's SE-ARD, since the paper's start needs the paper's budget
    assert result["settings"]["training"]["kernel"] is None
    assert result["settings"]["protocol"]["stratify"] is False


@pytest.mark.slow
def test_the_paper_000_workflows_draw_plain_random_test_sets_and_gpals_stratified_ones(tmp_path):
    from gpal.data.registry import load_dataset

    ds = load_dataset("twonorm", n=60, seed=0)
    drawn = {}
    for stratify in (False, True):
        out = run_workflow(PAPERS / "000_tables_3_4.yaml",
                           ["protocol.splits=2", "training.epochs=1", "training.num_inducing=4", "datasets=[twonorm:60]",
                            "methods=[svgp-probit]", f"protocol.stratify={str(stratify).lower()}"],
                           out=tmp_path / str(stratify), progress=False)
        units = sorted((out / "twonorm-n60" / "units" / "svgp-probit").glob("split_*.json"))
        drawn[stratify] = [json.loads(u.read_text())["test_ids"] for u in units]
        expected = [ds.ids[s.test].tolist() for s in ds.repeated_splits(2, 0.1, 0, stratify=stratify)]
        assert drawn[stratify] == expected
    assert drawn[False] != drawn[True]


@pytest.mark.slow
def test_fig_4_runs_fixed_and_learned_delta_side_by_side(tmp_path):
    out = run_workflow(PAPERS / "000_fig_4.yaml",
                       [*TINY, "datasets=[waveform_noise:60]", "methods=[svgp-step, svgp-step-fixed-delta]"],
                       out=tmp_path / "f4", progress=False)
    result, values = _measured(out)
    assert len(values[("waveform_noise", "svgp-step", "nll")]) == 2
    assert {m for _, m, _ in values} == {"svgp-step", "svgp-step-fixed-delta"}
    table = json.loads((out / "comparison.json").read_text())
    assert {r["method"] for r in table} == {"svgp-step", "svgp-step-fixed-delta"}


@pytest.mark.slow
def test_table_5_runs_the_matern_plus_se_kernel(tmp_path):
    out = run_workflow(PAPERS / "000_table_5.yaml", [*TINY, "datasets=[twonorm:60]", "methods=[svgp-probit]"],
                       out=tmp_path / "t5", progress=False)
    result, values = _measured(out)
    assert result["settings"]["training"]["kernel"] == "matern52_plus_se"
    assert len(values[("twonorm", "svgp-probit", "accuracy")]) == 2
    unit = json.loads(next((out / "twonorm-n60" / "units" / "svgp-probit").glob("split_*.json")).read_text())
    assert unit["n_test"] == 6

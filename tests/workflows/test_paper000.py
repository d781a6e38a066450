"""Paper 000's workflows (gpal/workflows/files/papers/000_*.yaml) at a tiny fixed-seed size: the comparison they write."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from conftest import repository_script
from gpal.workflows import run_workflow

ROOT = Path(__file__).resolve().parents[2]
PAPERS = ROOT / "gpal" / "workflows" / "files" / "papers"
TINY = ["protocol.splits=2", "training.epochs=1", "training.num_inducing=4"]


def _comparison(out: Path) -> tuple[dict, dict]:
    result = json.loads((out / "paper_comparison.json").read_text())
    return result, {(r["setting"], r["method"], r["metric"]): r for r in result["rows"]}


@pytest.mark.slow
def test_tables_3_4_compare_every_published_number(tmp_path):
    out = run_workflow(PAPERS / "000_tables_3_4.yaml",
                       [*TINY, "datasets=[twonorm:60, waveform:60]", "methods=[svgp-step, svgp-softmax]"],
                       out=tmp_path / "t34", progress=False)
    result, rows = _comparison(out)
    # 4 binary sets x 3 GPCs + 4 multi-class sets x 4 GPCs, accuracy and NLL each: every printed number has a row
    assert len(rows) == 2 * (4 * 3 + 4 * 4)
    ran = rows[("twonorm", "svgp-step", "accuracy")]
    assert ran["paper_mean"] == 0.9745 and ran["n"] == 2 and 0.0 <= ran["gpal_mean"] <= 1.0
    assert rows[("waveform", "svgp-softmax", "nll")]["paper_mean"] == 0.2832
    assert rows[("waveform", "svgp-softmax", "nll")]["n"] == 2
    assert rows[("magic", "svgp-logit", "nll")]["verdict"] == "not run"
    assert rows[("twonorm", "svgp-probit", "nll")]["verdict"] == "not run"  # a method the quick look left out
    # no spread printed: a run cell is judged by the methods' ordering, never by an interval against the paper
    assert all(r["low"] is None for r in rows.values())
    assert {r["verdict"] for r in rows.values() if r["n"]} <= {
        "ordering reproduced", "ordering contradicted", "ordering not resolved", "ordering: no pair claimed"}
    assert result["budget"] == {"run": {"splits": 2, "epochs": 1}, "paper": {"splits": 10}}
    assert "Tables III-IV" in (out / "paper_comparison.md").read_text()


@pytest.mark.slow
def test_fig_4_runs_fixed_and_learned_delta_side_by_side(tmp_path, capsys):
    out = run_workflow(PAPERS / "000_fig_4.yaml",
                       [*TINY, "datasets=[waveform_noise:60]", "methods=[svgp-step, svgp-step-fixed-delta]"],
                       out=tmp_path / "f4", progress=False)
    result, rows = _comparison(out)
    assert rows[("waveform_noise", "svgp-step", "nll")]["n"] == 2
    assert rows[("waveform_noise", "svgp-probit", "nll")]["verdict"] == "not run"
    table = json.loads((out / "comparison.json").read_text())
    assert {r["method"] for r in table} == {"svgp-step", "svgp-step-fixed-delta"}
    # the benchmark's paired table reads the same folder: one row for step, fixed minus learned
    repository_script("lab/studies/bench_paper000_delta.py").paired(out)
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| waveform_noise-n60 |")]
    assert len(lines) == 1 and lines[0].startswith("| waveform_noise-n60 | step | 2 |")


@pytest.mark.slow
def test_table_5_runs_the_matern_plus_se_kernel(tmp_path):
    out = run_workflow(PAPERS / "000_table_5.yaml", [*TINY, "datasets=[twonorm:60]", "methods=[svgp-probit]"],
                       out=tmp_path / "t5", progress=False)
    result, rows = _comparison(out)
    assert result["settings"]["training"]["kernel"] == "matern52_plus_se"
    assert rows[("twonorm", "svgp-probit", "accuracy")]["paper_mean"] == 0.9749
    assert rows[("twonorm", "svgp-probit", "accuracy")]["n"] == 2
    unit = json.loads(next((out / "twonorm-n60" / "units" / "svgp-probit").glob("split_*.json")).read_text())
    assert unit["n_test"] == 6


def test_inducing_study_measures_distance_to_a_known_boundary():
    study = repository_script("lab/studies/bench_paper000_inducing.py")
    xs, ys = np.linspace(-1.0, 1.0, 201), np.linspace(-2.0, 2.0, 101)
    labels = (xs[:, None] + 0.0 * ys[None, :] > 0.305).astype(int)  # boundary: the line x1 = 0.305
    boundary = study.boundary_points(labels, xs, ys)
    assert np.allclose(boundary[:, 0], 0.305)  # the midpoint between the grid nodes 0.30 and 0.31
    points = np.array([[0.3 + d, ys[63]] for d in (-0.6, -0.2, 0.1, 0.4, 0.5)])  # on a grid row: no offset in x2
    # the distance to a vertical line is |x1 - 0.305|; its median over the five points is that of the 0.4 offset
    assert study.median_distance(points, boundary) == pytest.approx(0.4 - 0.005, abs=1e-12)
    with pytest.raises(ValueError, match="no decision boundary"):
        study.median_distance(points, study.boundary_points(np.zeros_like(labels), xs, ys))
    with pytest.raises(ValueError, match="labels must have shape"):
        study.boundary_points(labels.T, xs, ys)


def test_inducing_and_curves_rules_read_intervals_by_their_side_of_zero():
    inducing = repository_script("lab/studies/bench_paper000_inducing.py")
    curves = repository_script("lab/studies/bench_paper000_curves.py")
    mean, _, low, high = curves.paired_t(np.array([1.0, 2.0, 3.0]))
    # mean 2, SE 1/sqrt(3), t(0.975, 2) = 4.3027
    assert (mean, low, high) == pytest.approx((2.0, 2.0 - 4.302653 / np.sqrt(3), 2.0 + 4.302653 / np.sqrt(3)))
    assert inducing.verdict([(-0.2, -0.3, -0.1), (-0.1, -0.2, -0.05)]) == "holds"
    assert inducing.verdict([(-0.2, -0.3, -0.1), (0.0, -0.1, 0.1)]) == "not resolved"
    assert inducing.verdict([(-0.2, -0.3, -0.1), (0.2, 0.1, 0.3)]) == "contradicted"
    assert curves.verdict([(0.2, 0.1, 0.3)] * 3) == "holds"
    assert curves.verdict([(0.2, 0.1, 0.3), (-0.2, -0.3, -0.1)]) == "contradicted"
    with pytest.raises(ValueError, match="two or more"):
        curves.paired_t(np.array([1.0]))


def test_delta_study_tests_only_the_fresh_splits_as_declared(tmp_path, capsys):
    """Splits 0-1 are far off and left out; on splits 2-5 the intervals are scipy's t intervals of the differences."""
    from scipy import stats

    nll_gap = [5.0, 5.0, 0.04, 0.05, 0.06, 0.07]
    acc_gap = [0.5, 0.5, 0.001, -0.001, 0.002, 0.0]
    for method, sign in (("svgp-logit", 0.0), ("svgp-logit-fixed-delta", 1.0)):
        folder = tmp_path / "run" / "waveform_noise" / "units" / method
        folder.mkdir(parents=True)
        for k in range(6):
            unit = {"nll": 0.3 + sign * nll_gap[k], "error": 0.2 - sign * acc_gap[k]}
            (folder / f"split_{k}.json").write_text(json.dumps(unit))
    repository_script("lab/studies/bench_paper000_delta.py").paired(tmp_path / "run", 2, 0.01)
    (line,) = [x for x in capsys.readouterr().out.splitlines() if x.startswith("| waveform_noise |")]
    d_nll, d_acc = np.array(nll_gap[2:]), np.array(acc_gap[2:])
    nll = stats.t.interval(0.95, 3, d_nll.mean(), stats.sem(d_nll))
    acc = stats.t.interval(0.90, 3, d_acc.mean(), stats.sem(d_acc))
    assert line.startswith("| waveform_noise | logit | 4 |")
    assert f"[{nll[0]:+.4f}, {nll[1]:+.4f}] above 0" in line
    assert f"[{acc[0]:+.4f}, {acc[1]:+.4f}] alike (±0.01)" in line

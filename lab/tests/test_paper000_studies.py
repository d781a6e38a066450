"""The studies of paper 000 (lab/studies/bench_paper000_*.py): the rules and tables they read runs by."""

from __future__ import annotations

import json

import numpy as np
import pytest

from conftest import repository_script


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
    # a run of GPCsm beside fewer than all three other GPCs can contradict the claim, never make it hold
    assert curves.verdict([(0.2, 0.1, 0.3)], complete=False) == "not resolved"
    assert curves.verdict([(-0.2, -0.3, -0.1)], complete=False) == "contradicted"
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


def test_curves_study_pairs_gpcsm_with_the_gpcs_that_ran_only():
    """Traces of GPCsm and GPC-I alone: one paired interval a checkpoint, the others absent, no 'holds'."""
    curves = repository_script("lab/studies/bench_paper000_curves.py")
    traces = [{"likelihood": lik, "split": s, "n_train": 4500, "epoch": list(curves.CHECKPOINTS),
               "nll": [base + 0.1 * s + 0.001 * k for k in range(len(curves.CHECKPOINTS))]}
              for s in range(3) for lik, base in (("step", 0.3), ("softmax", 0.5))]
    rows = curves.summarise(traces)
    assert [r["epoch"] for r in rows] == list(curves.CHECKPOINTS)
    for row in rows:
        assert set(row["gpcsm_minus"]) == {"GPC-I"} and set(row["mean_nll"]) == {"GPC-I", "GPCsm"}
        mean, low, high = row["gpcsm_minus"]["GPC-I"]
        assert mean == pytest.approx(0.2) and low == pytest.approx(0.2) and high == pytest.approx(0.2)
        assert row["verdict"] == "not resolved"  # above zero, but GPC-II and GPC-III did not run
        assert row["steps"] == row["epoch"] * 5  # 4500 rows in minibatches of 1024


def _prior_run(folder, prior, nll, error, datasets=("ringnorm",)):
    """A 000_tables_3_4 run folder as the prior study reads it: workflow.json and units per method and split."""
    options = {} if prior is None else {f"svgp-{lik}": {"likelihood_options": {"delta_prior": prior}}
                                        for lik in ("step", "probit", "logit")}
    folder.mkdir()
    (folder / "workflow.json").write_text(json.dumps({"seed": 0, "datasets": list(datasets), "out": str(folder),
                                                      "method_options": options}))
    for dataset in datasets:
        for lik in ("step", "probit", "logit"):
            units = folder / dataset / "units" / f"svgp-{lik}"
            units.mkdir(parents=True)
            for k, (n, e) in enumerate(zip(nll, error)):
                (units / f"split_{k:04d}.json").write_text(json.dumps({"nll": n, "error": e, "train_seconds": 1.0}))
    return folder


def test_prior_study_pairs_with_minus_without_by_split(tmp_path):
    study = repository_script("lab/studies/bench_paper000_prior.py")
    without = _prior_run(tmp_path / "without", None, [0.30, 0.20, 0.25], [0.10, 0.12, 0.11])
    with_prior = _prior_run(tmp_path / "with", [0.2, 5], [0.31, 0.22, 0.28], [0.10, 0.11, 0.11])
    study._check_sides(without, with_prior)
    rows = {(r["likelihood"], r["metric"]): r for r in study.paired(without, with_prior)}
    nll = rows[("step", "nll")]
    assert nll["per_split"] == pytest.approx([0.01, 0.02, 0.03]) and nll["mean"] == pytest.approx(0.02)
    # SE of 0.01, 0.02, 0.03 is 0.01 / sqrt(3); t(0.975, 2) = 4.302653
    assert (nll["low"], nll["high"]) == pytest.approx((0.02 - 4.302653 * 0.01 / np.sqrt(3),
                                                       0.02 + 4.302653 * 0.01 / np.sqrt(3)))
    assert rows[("logit", "accuracy")]["per_split"] == pytest.approx([0.0, 0.01, 0.0])  # accuracy = 1 - error
    with pytest.raises(SystemExit, match="svgp-step has delta_prior None, expected"):
        study._check_sides(without, without)
    config = json.loads((with_prior / "workflow.json").read_text())  # the workflow's prose is no setting
    (with_prior / "workflow.json").write_text(json.dumps({**config, "description": "reworded", "source": "/elsewhere"}))
    study._check_sides(without, with_prior)
    other = _prior_run(tmp_path / "other", [0.2, 5], [0.3] * 3, [0.1] * 3, datasets=("magic",))
    with pytest.raises(SystemExit, match=r"differ in \['datasets'\], not only in the prior"):
        study._check_sides(without, other)


def test_prior_study_keeps_a_single_split_without_an_interval(tmp_path):
    study = repository_script("lab/studies/bench_paper000_prior.py")
    without = _prior_run(tmp_path / "without", None, [0.30], [0.10])
    with_prior = _prior_run(tmp_path / "with", [0.2, 5], [0.29], [0.10])
    row = next(r for r in study.paired(without, with_prior) if r["metric"] == "nll")
    assert row["mean"] == pytest.approx(-0.01) and row["se"] is None and study.interval(row) == "–"
    assert study.difference(row) == "-1.0e-02"


def test_prior_study_refits_only_a_set_the_runs_ran(tmp_path):
    study = repository_script("lab/studies/bench_paper000_prior.py")
    without = _prior_run(tmp_path / "without", None, [0.30], [0.10])
    with_prior = _prior_run(tmp_path / "with", [0.2, 5], [0.29], [0.10])
    for folder in (without, with_prior):  # the settings a refit reads from the run
        config = json.loads((folder / "workflow.json").read_text())
        config.update(training={"epochs": 1, "iters": 1, "num_inducing": 4, "kernel": None}, protocol={"test_size": 0.1})
        (folder / "workflow.json").write_text(json.dumps(config))
    with pytest.raises(SystemExit, match=r"--learned-delta magic: the runs' data sets are \['ringnorm'\]"):
        study.learned_delta(without, with_prior, ["magic"])


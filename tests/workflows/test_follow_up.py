"""The follow_up workflow: end to end on a small DR4 cut, resume, pairing, paired statistics, refusal."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from gpal.evaluation.paired import area_under_curve, paired_differences
from gpal.workflows import WorkflowError, follow_up, load_workflow, run_workflow

YAML = Path(__file__).resolve().parents[2] / "gpal" / "workflows" / "files" / "dr4_follow_up.yaml"
STRATEGIES = ("entropy", "bald", "epig+balance", "random")
TINY = [f"strategies=[{', '.join(STRATEGIES)}]", "report_at=[2, 6]", "repetitions=2", "protocol.n_seed=6", "loop.n_queries=3", "loop.batch_size=2", "loop.retrain_epochs=2",
        "training.epochs=3", "training.num_inducing=5"]


def _tiny(catalog: Path) -> list[str]:
    return [*TINY, f"data.catalog={catalog}"]


@pytest.fixture(scope="module")
def tiny_run(small_catalog, tmp_path_factory, monkeypatch_module):
    """One run of the workflow (its curves in lock step, the default), counting how often a unit is computed."""
    calls = []
    make_loop = follow_up._follow_up_loop

    def counted(*args):
        calls.append((args[1], args[3]))  # (strategy, repetition)
        return make_loop(*args)

    monkeypatch_module.setattr(follow_up, "_follow_up_loop", counted)
    out = run_workflow(YAML, _tiny(small_catalog), out=tmp_path_factory.mktemp("fu") / "run", progress=False)
    return out, calls


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as mp:
        yield mp


def _units(out: Path) -> dict[tuple[str, int], dict]:
    return {(p.parent.name, int(p.stem.split("_")[1])): json.loads(p.read_text())
            for p in (out / "units").glob("*/rep_*.json")}


def test_runs_end_to_end_and_writes_tables_figures_and_report(tiny_run):
    out, calls = tiny_run
    assert sorted(calls) == sorted((s, r) for s in STRATEGIES for r in (0, 1))
    curves = pd.read_csv(out / "curves.csv")
    assert list(curves.columns) == ["strategy", "repetition", "n_observed", "nll", "accuracy", "ece"]
    assert len(curves) == 4 * 2 * (1 + 3)  # strategies x repetitions x (initial fit + queries)
    assert sorted(curves.n_observed.unique()) == [0, 2, 4, 6]
    assert curves[["nll", "ece"]].ge(0).all().all() and curves.accuracy.between(0, 1).all()
    for name in ("follow_up_curves.png", "follow_up_differences.pdf", "differences.md", "curves_summary.md"):
        assert (out / name).is_file(), name
    report = (out / "report.md").read_text()
    assert "entropy - random" in report and "EPIG, balanced - random" in report and "at 6 observed" in report
    assert "Classes of the queried sources" in report


def test_resume_computes_no_finished_unit_and_only_missing_ones(tiny_run, small_catalog):
    out, calls = tiny_run
    before = len(calls)
    run_workflow(YAML, _tiny(small_catalog), out=out, progress=False)
    assert len(calls) == before  # everything was done: nothing recomputed
    (out / "units" / "bald" / "rep_0001.json").unlink()
    run_workflow(YAML, [*_tiny(small_catalog), "repetitions=3"], out=out, progress=False)  # and extends the run
    # exactly the missing unit and the new repetition's, each once (one run for both: a run's report costs
    # as much as its units here)
    assert sorted(calls[before:]) == sorted([("bald", 1), *((s, 2) for s in STRATEGIES)])


def test_units_are_paired_within_a_repetition_and_differ_across(tiny_run, small_catalog):
    out, _ = tiny_run
    units = _units(out)
    config = load_workflow(YAML, _tiny(small_catalog)).config
    data = follow_up.load_labelled(config["data"])
    for rep in (0, 1):
        seed_set, pool, test, target = follow_up.make_sets(data, 0, rep, config["protocol"])
        expected = (sorted(seed_set.ids.tolist()), hashlib.sha256("\n".join(test.ids.tolist()).encode()).hexdigest())
        for strategy in STRATEGIES:
            u = units[(strategy, rep)]
            assert (sorted(u["seed_ids"]), u["test_ids_sha256"]) == expected
            queried = [i for q in u["queried"] for i in q]
            assert len(set(queried)) == 6 and set(queried) <= set(pool.ids.tolist())
        assert min(seed_set.class_counts().values()) >= 1  # every class in the seed set
        # the test set is half of the faint sources; the other half stays in the pool as EPIG's target
        faint_cut = np.quantile(data.aux["Signif_Avg"], config["protocol"]["faint_quantile"])
        n_faint = int(np.sum(data.aux["Signif_Avg"] <= faint_cut))
        assert test.aux["Signif_Avg"].max() <= faint_cut and test.n_samples == n_faint // 2
        assert set(target.ids.tolist()) <= set(pool.ids.tolist()) and target.aux["Signif_Avg"].max() <= faint_cut
        assert target.n_samples + test.n_samples + np.sum(seed_set.aux["Signif_Avg"] <= faint_cut) == n_faint
        # same initial model: step 0 is the same fit for every strategy
        step0 = {s: units[(s, rep)]["metrics"][0]["nll"] for s in STRATEGIES}
        assert np.ptp(list(step0.values())) < 1e-9
    assert units[("entropy", 0)]["seed_ids"] != units[("entropy", 1)]["seed_ids"]
    assert units[("entropy", 0)]["test_ids_sha256"] != units[("entropy", 1)]["test_ids_sha256"]


def test_paired_differences_and_areas_equal_a_numpy_computation(tiny_run):
    out, _ = tiny_run
    curves = pd.read_csv(out / "curves.csv")
    reps = sorted(curves.repetition.unique())  # 2, or 3 once the resume test has extended the run
    for strategy in ("entropy", "bald"):
        for metric in ("nll", "accuracy"):
            got = paired_differences(curves, metric, strategy, "random").set_index("n_observed")
            for budget in (2, 6):
                at = curves[curves.n_observed == budget].set_index(["strategy", "repetition"])[metric]
                d = np.array([at[(strategy, r)] - at[("random", r)] for r in reps])
                assert got.loc[budget, "mean"] == pytest.approx(d.mean(), abs=1e-12)
                assert got.loc[budget, "se"] == pytest.approx(d.std(ddof=1) / np.sqrt(len(reps)), abs=1e-12)
                assert got.loc[budget, "n"] == len(reps)
    areas = area_under_curve(curves, "nll")
    one = curves[(curves.strategy == "bald") & (curves.repetition == 1)].sort_values("n_observed")
    y = one.nll.to_numpy()
    assert areas[("bald", 1)] == pytest.approx((y[:-1] + y[1:]).sum() / 2 * 2 / 6)  # trapezoid, spacing 2, budget 6
    table = pd.read_csv(out / "differences.csv")
    row = table[(table.strategy == "entropy") & (table.metric == "accuracy") & (table.n_observed == 6)]
    assert row["mean"].item() == pytest.approx(
        paired_differences(curves, "accuracy", "entropy", "random").set_index("n_observed").loc[6, "mean"])


@pytest.mark.parametrize("override, message", [
    ("strategies=[entropy, oracle]", "'oracle' is not valid"),
    ("strategies=[entropy+greedy, random]", "modifiers must be distinct ones of"),
    ("protocol.test=brightest", r"protocol.test must be one of \['faint', 'stratified'\]; got 'brightest'"),
    ("protocol.n_seed=2", "fewer than the 3 classes"),
    ("loop.n_queries=500", "but the pool holds"),
    ("baseline=margin", "not among strategies"),
])
def test_bad_configuration_is_refused_before_anything_is_written(small_catalog, tmp_path, override, message):
    out = tmp_path / "never"
    with pytest.raises(WorkflowError, match=message):
        run_workflow(YAML, [*_tiny(small_catalog), override], out=out, progress=False)
    assert not out.exists()


def test_curves_in_lock_step_equal_one_curve_at_a_time(tiny_run, small_catalog, tmp_path):
    out, _ = tiny_run
    alone = run_workflow(YAML, [*_tiny(small_catalog), "repetitions=1", "loop.models_per_batch=1"], out=tmp_path / "one",
                         progress=False)
    together = pd.read_csv(out / "curves.csv")
    pd.testing.assert_frame_equal(pd.read_csv(alone / "curves.csv"),
                                  together[together.repetition == 0].reset_index(drop=True), rtol=1e-6)

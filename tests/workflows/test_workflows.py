"""Declarative workflows: schema checks, overrides, tiny end-to-end runs, resume, refusal and executors."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import numpy as np
import pytest

from conftest import BILLION_LAUGHS
from gpal.registry import WORKFLOWS
from gpal.runs.output_dir import OutputInUse
from gpal.workflows import WorkflowError, load_workflow, run_workflow
from gpal.workflows.shipped import shipped_workflows

SHIPPED = sorted(shipped_workflows().values())  # gpal/workflows/files/: *.yaml and papers/
TOY = Path(__file__).resolve().parents[2] / "gpal" / "workflows" / "files" / "toy_1d.yaml"
FERMI = Path(__file__).resolve().parents[2] / "gpal" / "workflows" / "files" / "fermi_4fgl.yaml"
TINY_TOY = [
    "data.n_train=60", "data.n_test=40", "training.epochs=2", "training.num_inducing=5", "training.n_samples=4",
    "methods=[MGP, NIMGP-FO]", "plot.grid_points=20",
]


def _write(tmp_path: Path, text: str, name: str = "wf.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_every_shipped_workflow_loads_and_each_kind_is_shipped():
    assert len(SHIPPED) >= 7 and len({p.stem for p in SHIPPED}) == len(SHIPPED)  # one copy of each
    kinds = {load_workflow(path).kind for path in SHIPPED}
    assert kinds == set(WORKFLOWS.names())


def test_unknown_keys_name_file_line_and_the_valid_keys(tmp_path):
    path = _write(tmp_path, "workflow: toy_1d\nseed: 1\nsplits: 3\n")
    with pytest.raises(WorkflowError, match=r"wf\.yaml:3: unknown key 'splits'; valid keys at top level: \[.*'data'.*'methods'"):
        load_workflow(path)
    path = _write(tmp_path, "workflow: toy_1d\ntraining:\n  epochs: 3\n  epoch: 4\n")
    with pytest.raises(WorkflowError, match=r"wf\.yaml:4: unknown key 'training\.epoch'; valid keys at training: \[.*'epochs'"):
        load_workflow(path)


def test_invalid_values_list_what_is_valid(tmp_path):
    path = _write(tmp_path, "workflow: repeated_splits\nprotocol:\n  splits: -1\n")
    with pytest.raises(WorkflowError, match=r"wf\.yaml:3: protocol\.splits must be an integer >= 1 and <= 1000; got -1"):
        load_workflow(path)
    path = _write(tmp_path, "workflow: repeated_splits\nmethods: [MGP, FOO]\n")
    with pytest.raises(WorkflowError, match=r"methods\[1\] must be one of \['MGP', 'NIMGP', 'NIMGP-NN', 'NIMGP-FO'\]; got 'FOO'"):
        load_workflow(path)
    path = _write(tmp_path, "workflow: toy-1d\n")
    with pytest.raises(WorkflowError, match=r"wf\.yaml:1: workflow must be one of \['repeated_splits', 'toy_1d'"):
        load_workflow(path)
    path = _write(tmp_path, "workflow: toy_1d\ntraining: {likelihood: robust}\n")
    with pytest.raises(WorkflowError, match=r"training\.likelihood must be a likelihood name \[.*'robustmax'.*\].*; got 'robust'"):
        load_workflow(path)


def test_bad_yaml_syntax_names_the_line(tmp_path):
    path = _write(tmp_path, "workflow: toy_1d\ndata:\n  n_train: [1, 2\nseed: 0\n")
    with pytest.raises(WorkflowError, match=r"wf\.yaml:4:\d+: invalid YAML"):
        load_workflow(path)


def test_a_yaml_alias_bomb_is_refused_at_once(tmp_path):
    """~300 bytes standing for 9**9 values: refused from the event stream, before anything is built or copied."""
    path = _write(tmp_path, BILLION_LAUGHS)
    assert len(BILLION_LAUGHS) < 400
    started = time.perf_counter()
    with pytest.raises(WorkflowError, match=r"wf\.yaml:2:\d+: YAML anchors and aliases \(&a / \*a\) are not accepted"):
        load_workflow(path, ["seed=1"])
    assert time.perf_counter() - started < 1.0
    with pytest.raises(WorkflowError, match=r"override 'seed=\[&s 1, \*s\]':1:\d+: YAML anchors and aliases"):
        load_workflow(TOY, ["seed=[&s 1, *s]"])


def test_a_key_given_twice_is_refused_with_both_lines(tmp_path):
    path = _write(tmp_path, "workflow: toy_1d\ntraining:\n  epochs: 3\n  num_inducing: 5\n  epochs: 30\n")
    with pytest.raises(WorkflowError, match=r"wf\.yaml:5: key training\.epochs is given twice \(first at line 3\)"):
        load_workflow(path)
    with pytest.raises(WorkflowError, match=r"key seed is given twice"):
        load_workflow(_write(tmp_path, "seed: 1\nworkflow: toy_1d\nseed: 2\n"))
    with pytest.raises(WorkflowError, match=r"key n_train is given twice"):
        load_workflow(TOY, ["data={n_train: 5, n_train: 6}"])


def test_overrides_are_yaml_values_on_dotted_keys():
    wf = load_workflow(FERMI, ["protocol.splits=3", "training.epochs=10", "methods=[MGP,NIMGP]", "seed=7"])
    assert wf.config["protocol"]["splits"] == 3 and wf.config["training"]["epochs"] == 10
    assert wf.config["methods"] == ["MGP", "NIMGP"] and wf.config["seed"] == 7
    with pytest.raises(WorkflowError, match=r"unknown key 'training\.epoch' .*valid keys at training: \[.*'epochs'"):
        load_workflow(FERMI, ["training.epoch=10"])
    with pytest.raises(WorkflowError, match=r"unknown key 'protocl' .*valid keys at top level"):
        load_workflow(FERMI, ["protocl.splits=2"])
    with pytest.raises(WorkflowError, match="KEY=VALUE"):
        load_workflow(FERMI, ["training.epochs"])
    with pytest.raises(WorkflowError, match=r"protocol\.splits must be an integer >= 1 and <= 1000; got 'many'"):
        load_workflow(FERMI, ["protocol.splits=many"])
    with pytest.raises(WorkflowError, match="kind cannot be overridden"):
        load_workflow(FERMI, ["workflow=toy_1d"])


def test_a_section_set_whole_keeps_the_files_other_keys(tmp_path):
    path = _write(tmp_path, "workflow: toy_1d\ntraining: {batch_size: 7, epochs: 9}\n")
    wf = load_workflow(path, ["training={epochs: 3}"])
    assert (wf.config["training"]["batch_size"], wf.config["training"]["epochs"]) == (7, 3)


def test_a_description_placeholder_is_the_runs_setting_or_a_clear_error(tmp_path):
    text = "workflow: toy_1d\ndescription: M = {training.num_inducing}, {training.epochs} epochs\n"
    workflow = load_workflow(_write(tmp_path, text), ["training.epochs=20"])
    assert workflow.config["description"] == "M = 100, 20 epochs"
    with pytest.raises(WorkflowError, match=r"wf.yaml.*\{training.epoch\} names no setting of this workflow"):
        load_workflow(_write(tmp_path, text.replace("{training.epochs}", "{training.epoch}")))


def test_nothing_is_written_when_validation_fails(tmp_path):
    out = tmp_path / "out"
    with pytest.raises(WorkflowError):
        run_workflow(TOY, ["training.epochs=-1"], out=out, progress=False)  # the estimator's own constraint
    assert not out.exists()


def test_more_splits_resume_the_same_run_but_other_settings_do_not():
    few, many = load_workflow(FERMI, ["protocol.splits=2"]), load_workflow(FERMI, ["protocol.splits=5"])
    assert few.identity == many.identity
    assert load_workflow(FERMI, ["training.epochs=5"]).identity != few.identity


@pytest.mark.slow
def test_repeated_splits_end_to_end(tmp_path):
    out = run_workflow(
        FERMI, ["protocol.splits=1", "training.epochs=2", "methods=[MGP]", "training.n_samples=4"],
        out=tmp_path / "fermi", progress=False,
    )
    unit = json.loads((out / "units" / "MGP" / "split_0000.json").read_text())
    assert unit["n_test"] == 46 and np.allclose(np.sum(unit["proba"], axis=1), 1.0)
    report = (out / "report.md").read_text()
    assert "| MGP | 1 |" in report
    measured = {(v["setting"], v["method"], v["metric"]): v["values"]
                for v in json.loads((out / "measurements.json").read_text())["values"]}
    assert measured[("4FGL", "MGP", "nll")] == [unit["nll"]] and measured[("4FGL", "MGP", "error")] == [unit["error"]]
    # the header states this run's settings, overrides included, not the file's defaults
    assert "batch 50, 2 epochs," in report and "750 epochs" not in report and "4 Monte Carlo input samples" in report
    for name in ("confusion_MGP.png", "confusion_MGP.pdf", "reliability.png", "summary.json", "results.csv"):
        assert (out / name).stat().st_size > 0, name


def _toy_results(out: Path) -> dict:
    rows = json.loads((out / "results.json").read_text())["results"]
    return {r["predictive"]: (r["nll"], r["error"], r["kl"]) for r in rows}


@pytest.fixture(scope="module")
def toy_run(tmp_path_factory):
    """One tiny in-process toy run, shared by the tests that compare against it."""
    return run_workflow(TOY, TINY_TOY, out=tmp_path_factory.mktemp("toy") / "toy", progress=False)


def test_toy_end_to_end_resume_refusal_and_force(toy_run, tmp_path):
    out = tmp_path / "toy"
    shutil.copytree(toy_run, out)
    for name in ("report.md", "predictive.png", "predictive.pdf", "results.json", "results.csv", "units/MGP.json"):
        assert (out / name).is_file(), name
    assert "| Bayes-optimal |" in (out / "report.md").read_text()
    first = _toy_results(out)
    assert set(first) == {"Bayes-optimal", "MGP", "NIMGP-FO"}

    # Interrupted run: one unit missing -> only it is recomputed, and identically.
    kept = out / "units" / "MGP.json"
    stamp = kept.stat().st_mtime_ns
    lost = json.loads((out / "units" / "NIMGP-FO.json").read_text())
    (out / "units" / "NIMGP-FO.json").unlink()
    run_workflow(TOY, TINY_TOY, out=out, progress=False)
    assert kept.stat().st_mtime_ns == stamp
    redone = json.loads((out / "units" / "NIMGP-FO.json").read_text())
    assert redone["proba"] == lost["proba"]
    assert _toy_results(out) == first

    # Another configuration into the same folder is refused, and replaces it with force.
    other = [*TINY_TOY, "training.epochs=3"]
    with pytest.raises(OutputInUse, match=r"training\.epochs: 2 -> 3"):
        run_workflow(TOY, other, out=out, progress=False)
    assert kept.stat().st_mtime_ns == stamp
    run_workflow(TOY, other, out=out, force=True, progress=False)
    assert json.loads((out / "workflow.json").read_text())["training"]["epochs"] == 3
    assert kept.stat().st_mtime_ns != stamp


def test_ctrl_c_during_a_unit_saves_nothing_and_exits_130(toy_run, tmp_path, monkeypatch):
    """Training keeps its parameters on Ctrl-C; the unit must not be saved as done (it would never be recomputed)."""
    from gpal.cli import EXIT_INTERRUPTED, main
    from gpal.estimators.noisy_gp import NoisyGPClassifier

    out = tmp_path / "toy"
    shutil.copytree(toy_run, out)
    (out / "units" / "NIMGP-FO.json").unlink()
    fit = NoisyGPClassifier.fit
    # A callback returning False stops training exactly as Ctrl-C does (stopped_early_).
    monkeypatch.setattr(NoisyGPClassifier, "fit", lambda self, X, y=None, X_var=None: fit(self, X, y, X_var, lambda *_: False))
    args = ["workflow", str(TOY), "--out", str(out), "--no-progress", *sum((["--set", o] for o in TINY_TOY), [])]
    assert main(args) == EXIT_INTERRUPTED
    assert not (out / "units" / "NIMGP-FO.json").exists()
    monkeypatch.undo()
    assert main(args) == 0
    assert (out / "units" / "NIMGP-FO.json").exists()


def test_a_dask_cluster_gives_the_in_process_results(toy_run, dask_cluster, tmp_path):
    """Through ``scheduler``: the session's local cluster (tests/conftest.py), named by its address (the tcp://
    form), so that its workers, TensorFlow imported, serve the Dask tests of tests/runs too."""
    here = toy_run
    there = run_workflow(TOY, TINY_TOY, out=tmp_path / "there", scheduler=dask_cluster.cluster.scheduler_address,
                         progress=False)
    for method in ("MGP", "NIMGP-FO"):
        a = json.loads((here / "units" / f"{method}.json").read_text())
        b = json.loads((there / "units" / f"{method}.json").read_text())
        assert a["proba"] == b["proba"] and a["grid_proba"] == b["grid_proba"]


def test_classify_params_are_the_selection_the_estimator_and_the_job(tmp_path, monkeypatch):
    """The params block is generated from what the job declares; the runner builds the objects the job takes."""
    import gpal.catalog_jobs.classify
    from gpal.catalog_jobs.selection import CatalogSelection
    from gpal.catalog_jobs.settings import main_job_estimator
    from gpal.estimators.settings import estimator_settings
    from gpal.identity import estimator_identity

    calls = []

    def fake(selection, estimator, out_dir, *, seed, force, progress, executor, **job):
        calls.append({"selection": selection, "estimator": estimator_identity(estimator), "out_dir": out_dir,
                      "seed": seed, "force": force, **job})
        return Path(out_dir) / "report.md"

    monkeypatch.setattr(gpal.catalog_jobs.classify, "classify_catalog", fake)
    path = _write(tmp_path, "workflow: classify\nseed: 3\nparams:\n  epochs: 20\n  classes: [bll, fsrq]\n"
                            "  learning_rate: 0.02\n")
    params = load_workflow(path).config["params"]
    assert set(params) == {*CatalogSelection.settings(), *estimator_settings(main_job_estimator()),
                           *gpal.catalog_jobs.classify.SETTINGS}
    assert (params["epochs"], params["input_noise"], params["features"], params["test_size"]) == (20, "latent",
                                                                                               "release", 0.2)  # the release's own preset
    with pytest.raises(WorkflowError, match=r"unknown key 'params\.epoch'; valid keys at params: \[.*'epochs'"):
        load_workflow(_write(tmp_path, "workflow: classify\nparams: {epoch: 20}\n", "typo.yaml"))
    with pytest.raises(WorkflowError, match=r"params\.epochs must be an integer >= 0 and <= 1000000; got 'many'"):
        load_workflow(path, ["params.epochs=many"])
    with pytest.raises(WorkflowError, match=r"params\.input_noise must be one of \['none', 'latent'"):
        load_workflow(path, ["params.input_noise=sideways"])
    out = run_workflow(path, out=tmp_path / "job", force=True, progress=False)
    call = calls.pop()
    assert call.pop("selection") == CatalogSelection(classes=("bll", "fsrq"))
    assert call.pop("estimator") == estimator_identity(main_job_estimator(epochs=20, learning_rate=0.02, random_state=3))
    assert call == {"out_dir": out, "seed": 3, "force": True, "test_size": 0.2, "select": None, "chunk_size": 20000,
                    "baselines": ["logistic", "random_forest_isotonic"], "target": None, "follow_up_significance": 4.0,
                    "follow_up_flags": [], "pool_prior": False, "candidate_significance": 5.0,
                    "candidate_max_ellipse": 0.1, "candidate_flags": [], "candidate_declination": [-90.0, 90.0],
                    "candidate_visible_from": None, "candidate_rows": None, "order": "by_class", "known_pulsars": None, "table_formats": [], "bcu_types": "none"}


@pytest.mark.slow
def test_synthetic_2d_tables_with_given_and_learned_noise(tmp_path):
    path = Path(__file__).resolve().parents[2] / "gpal" / "workflows" / "files" / "papers" / "001_synthetic_2d.yaml"
    tiny = ["repetitions=1", "data.n_train=40", "data.n_test=30", "data.noise_levels=[0.25]", "data.bayes_cells=20",
            "methods=[MGP, NIMGP-FO]", "training.epochs=1", "training.num_inducing=4", "training.n_samples=2"]
    out = run_workflow(path, tiny, out=tmp_path / "syn", progress=False)
    units = sorted(p.relative_to(out / "units").as_posix() for p in (out / "units").rglob("*.json"))
    assert units == ["rep_0000/noise_0.25/Bayes.json", "rep_0000/noise_0.25/MGP.json",
                     "rep_0000/noise_0.25/known/NIMGP-FO.json", "rep_0000/noise_0.25/learned/NIMGP-FO.json"]
    learned = json.loads((out / "units" / "rep_0000/noise_0.25/learned/NIMGP-FO.json").read_text())
    assert len(learned["learned_variance"]) == 2 and min(learned["learned_variance"]) > 0
    table = (out / "table_nll.md").read_text()
    assert "| learned | 0.25 |" in table
    # every problem's value per setting (mode/level), method and metric, the learned variance where there is one
    measured = {(v["setting"], v["method"], v["metric"]): v["values"]
                for v in json.loads((out / "measurements.json").read_text())["values"]}
    assert {k for k, v in measured.items() if v} == {
        (f"{mode}/0.25", m, k) for mode in ("known", "learned") for m in ("Bayes", "MGP", "NIMGP-FO")
        for k in ("nll", "error")} | {("learned/0.25", "NIMGP-FO", "learned_variance")}
    assert measured["learned/0.25", "NIMGP-FO", "learned_variance"] == pytest.approx(
        [np.mean(learned["learned_variance"])])  # one problem: the mean over its features
    bayes = json.loads((out / "units" / "rep_0000/noise_0.25/Bayes.json").read_text())
    assert measured["known/0.25", "Bayes", "error"] == pytest.approx([bayes["error"]])
    assert (out / "learned_variance.png").is_file() and "Table 3" in (out / "report.md").read_text()


@pytest.mark.slow
def test_active_learning_curves_and_report(tmp_path):
    import pandas as pd

    path = Path(__file__).resolve().parents[2] / "gpal" / "workflows" / "files" / "waveform_active_learning.yaml"
    tiny = ["repetitions=2", "data.n_initial=30", "data.n_pool=20", "data.n_test=30", "data.noise_levels=[0.5]",
            "strategies=[entropy, random, bald]", "methods=[MGP]", "loop.batch_size=1", "loop.n_queries=2",
            "loop.retrain_epochs=1", "acquisitions.bald.n_samples=4", "training.epochs=1", "training.num_inducing=4",
            "training.n_samples=2"]
    out = run_workflow(path, tiny, out=tmp_path / "al", progress=False)
    curves = pd.read_csv(out / "curves.csv")
    assert list(curves.columns) == ["method", "noise", "strategy", "repetition", "n_added", "error", "nll", "ece"]
    assert len(curves) == 3 * 2 * 3 and set(curves.strategy) == {"entropy", "random", "bald"}
    # Paired design: within a repetition every strategy starts from the same initial set, fit and test metrics.
    units = {(s, r): json.loads((out / "units" / "MGP" / "noise_0.5" / s / f"rep_{r:04d}.json").read_text())
             for s in ("entropy", "random", "bald") for r in (0, 1)}
    for r in (0, 1):
        assert units["entropy", r]["initial_ids"] == units["random", r]["initial_ids"] == units["bald", r]["initial_ids"]
        assert units["entropy", r]["metrics"][0] == units["random", r]["metrics"][0]
        assert all(len(units[s, r]["queried"]) == 2 for s in ("entropy", "random", "bald"))
    assert units["entropy", 0]["initial_ids"] != units["entropy", 1]["initial_ids"]
    # The differences are taken per repetition: recompute the NLL difference after the last query by hand.
    diff = pd.read_csv(out / "differences.csv")
    row = diff[(diff.strategy == "entropy") & (diff.metric == "nll") & (diff.n_observed == 2)].iloc[0]
    last = curves[curves.n_added == 2].pivot(index="repetition", columns="strategy", values="nll")
    d = (last["entropy"] - last["random"]).to_numpy()
    assert row["n"] == 2 and np.isclose(row["mean"], d.mean()) and np.isclose(row["se"], d.std(ddof=1) / np.sqrt(2))
    table = (out / "differences.md").read_text()
    assert "| MGP | 0.5 | entropy - random |" in table and "| MGP | 0.5 | BALD - random |" in table
    assert "| MGP | 0.5 |" in (out / "error_reduction.md").read_text()
    assert (out / "checkpoints" / "MGP" / "noise_0.5" / "bald" / "rep_0001" / "state.json").is_file()
    for name in ("al_waveform_curves", "al_waveform_differences", "al_waveform_error_reduction"):
        assert (out / f"{name}.pdf").is_file()
    # The curves ran in lock step, their retrainings batched (both repetitions' six curves in one batch); one
    # curve at a time gives the same curves. Repetition 0's three curves alone are the reference (as in
    # test_follow_up): the same comparison at the same tolerance, for half the separately traced retrainings.
    alone = run_workflow(path, tiny + ["repetitions=1", "loop.models_per_batch=1"], out=tmp_path / "alone",
                         progress=False)
    pd.testing.assert_frame_equal(pd.read_csv(alone / "curves.csv"),
                                  curves[curves.repetition == 0].reset_index(drop=True), rtol=1e-6)

"""What a study's command prints is kept in its record (lab/studies/records/<study>.json, `shared.keep_printed`):
the helper itself, and each study script that keeps its output through it, on a tiny input."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from conftest import repository_script

ROOT = Path(__file__).parents[2]


@pytest.fixture
def shared():
    """lab/studies/shared.py, the module the study scripts import by name."""
    sys.path.insert(0, str(ROOT / "lab" / "studies"))
    try:
        import shared
    finally:
        sys.path.remove(str(ROOT / "lab" / "studies"))
    return shared


@pytest.fixture
def records(tmp_path, monkeypatch, shared):
    """A folder the studies keep their records in, in place of lab/studies/records/."""
    folder = tmp_path / "records"
    folder.mkdir()
    monkeypatch.setattr(shared, "RECORDS", folder)
    return folder


def _kept(folder: Path, study: str) -> dict:
    record = json.loads((folder / f"{study}.json").read_text(encoding="utf-8"))
    assert record["study"] == study
    return record["commands"]


def test_keep_printed_keeps_each_command_apart_with_its_commit_and_json_lines_as_objects(records, capsys):
    from shared import keep_printed

    from gpal.identity import source_commit

    with keep_printed("demo", "lab/studies/demo.py", ["a", "--n", "3"]) as path:
        print('{"nll": 0.25, "n": 3}')
        print("| a | b |")
    with keep_printed("demo", "demo.py", ["b"]):
        print("[1, 2]")
        print('{"nll": NaN}')
    with keep_printed("demo", "demo.py", ["a", "--n", "3"]):
        print('{"nll": 0.5}')
    assert path == records / "demo.json"
    kept = _kept(records, "demo")
    assert kept["python lab/studies/demo.py a --n 3"] == {"commit": source_commit(), "printed": [{"nll": 0.5}]}
    assert kept["python lab/studies/demo.py b"]["printed"] == [[1, 2], '{"nll": NaN}']
    assert "| a | b |" in capsys.readouterr().out  # printed as before, too


def test_keep_printed_keeps_nothing_when_its_block_fails_and_refuses_another_studys_record(records):
    from shared import keep_printed

    with pytest.raises(RuntimeError), keep_printed("demo", "demo.py", []):
        print("half a table")
        raise RuntimeError("the study failed")
    assert not (records / "demo.json").exists()
    (records / "other.json").write_text(json.dumps({"study": "demo", "commands": {}}), encoding="utf-8")
    with pytest.raises(ValueError, match="not the record of study 'other'"), keep_printed("other", "other.py", []):
        pass


def test_a_record_names_its_commit_dirty_only_for_changes_outside_the_studies_and_pages_records(tmp_path, monkeypatch, shared):
    """A study rewriting its committed record is not a change to the code that ran; any other change is."""
    import subprocess

    import gpal.identity

    def git(*args):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=tmp_path, check=True,
                       capture_output=True)

    (tmp_path / "records").mkdir()
    (tmp_path / "records" / "s.json").write_text("{}")
    (tmp_path / "pages" / "records").mkdir(parents=True)
    (tmp_path / "pages" / "records" / "r.json").write_text("{}")
    (tmp_path / "code.py").write_text("x = 1\n")
    git("init", "-q")
    git("add", ".")
    git("commit", "-qm", "one")
    monkeypatch.setattr(shared, "ROOT", tmp_path)
    monkeypatch.setattr(shared, "RECORDS", tmp_path / "records")
    monkeypatch.setattr(shared, "PAGES", tmp_path / "pages")
    monkeypatch.setattr(gpal.identity, "source_commit", lambda: "abc+dirty")
    (tmp_path / "records" / "s.json").write_text('{"study": "s"}')
    (tmp_path / "pages" / "records" / "r.json").write_text('{"record": "r"}')
    assert shared.code_commit() == "abc"
    (tmp_path / "code.py").write_text("x = 2\n")
    assert shared.code_commit() == "abc+dirty"


def test_al_gain_keeps_its_table(records, tmp_path):
    rows = [{"method": m, "noise": 0.5, "strategy": "entropy", "repetition": r, "n_added": k,
             "error": 0.3 - 0.01 * k * (1 + (m == "MGP")) + 0.01 * r} for m in ("MGP", "NIMGP-NN")
            for r in range(3) for k in (0, 2)]
    pd.DataFrame(rows).to_csv(tmp_path / "curves.csv", index=False)
    repository_script("lab/studies/paper001_al_gain.py").main([str(tmp_path / "curves.csv"), "--after", "2"])
    (entry,) = _kept(records, "al_gain").values()
    assert entry["printed"][0].split() == ["noise", "MGP", "NIMGP-NN", "gap", "se", "low", "high", "n"]
    assert entry["printed"][1].split()[3] == "-0.0200"  # NIMGP-NN falls 0.02, MGP 0.04: every repetition


def test_list_cuts_keeps_its_table(records):
    repository_script("lab/studies/bench_list_cuts.py").main(
        str(ROOT / "catalogs/gll_psc_v35.fit.gz"), str(ROOT / "catalogs/gll_psc_v41.fit.gz"))
    (entry,) = _kept(records, "list_cuts").values()
    assert len(entry["printed"]) == 1 + 7 + 2 and entry["printed"][-1].startswith("| Flags != 0 |")


def test_mc_error_keeps_its_table(records):
    repository_script("lab/studies/bench_mc_error.py").main(
        ["--d", "2", "--train-n", "20", "--epochs", "1", "--rows", "3", "--samples", "4", "--repeats", "2"])
    (entry,) = _kept(records, "mc_error").values()
    assert entry["printed"][0].startswith("| estimator |") and len(entry["printed"]) == 5


def test_missing_errors_keeps_its_comparison_with_later_codes_in_the_runs_classes(records, tmp_path):
    from gpal.catalog_jobs.layout import TRAINING_RECORD

    rng = np.random.default_rng(0)
    truth = np.array(["a", "b"] * 10)
    later = np.array(["a", "c", "b", "x"] * 5)  # c is merged into b by the run's class spec; x is no class of it
    for run in ("exact", "population"):
        (tmp_path / run / "tables").mkdir(parents=True)
        p = rng.dirichlet([2, 2], size=truth.size)
        names = [f"s{i}" for i in range(truth.size)]
        pd.DataFrame({"Source_Name": names, "true_class": truth, "p_a": p[:, 0], "p_b": p[:, 1]}).to_csv(
            tmp_path / run / "tables" / "heldout.csv", index=False)
        pd.DataFrame({"Source_Name": names, "later_class": later, "CLASS1": ["bcu", ""] * 10,
                      "p_a_gpal": p[:, 0], "p_b_gpal": p[:, 1]}).to_csv(
            tmp_path / run / "tables" / "later_check_sources.csv", index=False)
        (tmp_path / run / TRAINING_RECORD).parent.mkdir(parents=True)
        (tmp_path / run / TRAINING_RECORD).write_text(json.dumps({"class_spec": "a,b=b+c"}), encoding="utf-8")
    repository_script("lab/studies/bench_missing_errors.py").main(
        [str(tmp_path / "exact"), str(tmp_path / "population")])
    (entry,) = _kept(records, "missing_errors").values()
    headers = [line for line in entry["printed"] if not line.startswith(" ")]
    assert headers == ["held-out: n=20, per class [10, 10]", "later classified: n=15, per class [5, 10]",
                       "later classified, bcu: n=10, per class [5, 5]", "later classified, unassociated: n=5, per class [0, 5]"]


def test_toy_1d_keeps_one_json_line_a_method(records, tmp_path):
    data = {"n_train": 30, "n_test": 40, "noise_std": 0.1, "variance": 1.0, "lengthscale": 0.75}
    (tmp_path / "units").mkdir()
    (tmp_path / "workflow.json").write_text(json.dumps({"data": data, "seed": 3, "methods": ["MGP", "NIMGP"]}))
    for method in ("MGP", "NIMGP"):
        (tmp_path / "units" / f"{method}.json").write_text(json.dumps({"proba": np.full((40, 3), 1 / 3).tolist()}))
    repository_script("lab/studies/paper001_toy_1d.py").main([str(tmp_path)])
    (entry,) = _kept(records, "toy_1d").values()
    assert [row["method"] for row in entry["printed"]] == ["Bayes-optimal", "MGP", "NIMGP"]
    assert entry["printed"][2]["nll_gap"] == 0.0


def test_synthetic_lengthscale_keeps_a_row_a_length_scale_and_noise(records):
    repository_script("lab/studies/paper001_synthetic_lengthscale.py").main(["--problems", "2", "--cells", "8"])
    (entry,) = _kept(records, "synthetic_lengthscale").values()
    assert [(r["lengthscale"], r["noise"]) for r in entry["printed"]] == [
        (1.4142, 0.1), (1.4142, 0.25), (1.4142, 0.5), (2.0, 0.1), (2.0, 0.25), (2.0, 0.5)]
    assert all(0 < r["bayes_error"] < 0.5 for r in entry["printed"])


def test_ringnorm_keeps_a_line_a_split_and_model(records):
    repository_script("lab/studies/bench_paper000_ringnorm.py").main(
        ["--splits", "2", "--models", "QDA", "--rows", "200"])
    (entry,) = _kept(records, "paper000_ringnorm").values()
    assert [(r["split"], r["model"]) for r in entry["printed"]] == [(0, "QDA"), (1, "QDA")]


def test_paper000_delta_keeps_its_paired_table(records, tmp_path):
    for method, nll in (("svgp-step", 0.3), ("svgp-step-fixed-delta", 0.5)):
        folder = tmp_path / "run" / "magic" / "units" / method
        folder.mkdir(parents=True)
        for k in range(2):
            (folder / f"split_{k}.json").write_text(json.dumps({"nll": nll + 0.01 * k, "error": 0.1}))
    repository_script("lab/studies/bench_paper000_delta.py").main(["paired", str(tmp_path / "run")])
    (entry,) = _kept(records, "paper000_delta").values()
    assert entry["printed"][-1].startswith("| magic | step | 2 | 0.3050 | 0.5050 | +0.2000 ± 0.0000 |")


def test_augmented_gap_keeps_its_paired_lines(records, tmp_path):
    rng = np.random.default_rng(0)
    y = np.array([0, 1, 2, 0])
    for method, nll in (("ls-cavi", 0.4), ("svgp-logistic_softmax", 0.3)):
        folder = tmp_path / "run" / "digits" / "units" / method
        folder.mkdir(parents=True)
        for k in range(2):
            unit = {"nll": nll + 0.01 * k, "error": 0.2, "train_seconds": 1.0 + k, "y_true": y.tolist(),
                    "proba": rng.dirichlet([1, 1, 1], size=y.size).tolist()}
            (folder / f"split_{k}.json").write_text(json.dumps(unit))
    repository_script("lab/studies/bench_augmented_gap.py").main(["paired", str(tmp_path / "run")])
    (entry,) = _kept(records, "augmented_gap").values()
    means, line = entry["printed"][:2], entry["printed"][2]
    assert [(m["method"], m["splits"], m["nll"], m["nll_se"], m["train_seconds"]) for m in means] == [
        ("ls-cavi", 2, 0.405, 0.005, 1.5), ("svgp-logistic_softmax", 2, 0.305, 0.005, 1.5)]
    assert (line["method"], line["against"], line["nll_difference"]) == ("ls-cavi", "svgp-logistic_softmax", 0.1)


def test_step_variants_keeps_its_lines(records):
    repository_script("lab/studies/bench_step_variants.py").main(["--fused-adam"])
    (entry,) = _kept(records, "step_variants").values()
    assert entry["printed"][0].startswith("fused ResourceApplyAdam against tf_keras' Adam after 200 steps")


def test_predict_chunks_keeps_its_table(records, monkeypatch):
    """The fit is the main job's: the table is written from recorded calls, as main writes it."""
    from shared import keep_printed

    script = repository_script("lab/studies/bench_predict_chunks.py")
    proba = np.full((4, 3), 1 / 3)
    calls = {18: [(1.0, 2.0, 30, 0.1)], 20: [(1.5, 3.0, 4000, 1.2)]}
    with keep_printed("predict_chunks", script.__file__, ["mj"]):
        script._print_table(4, 1, 20, calls, {18: proba, 20: proba})
    (entry,) = _kept(records, "predict_chunks").values()
    assert entry["printed"][-1] == "| 2^20 | 1.50-1.50 | 3.00-3.00 | 4000-4000 | 1.20-1.20 | True |"


def test_bcu_rule_keeps_its_selection(records, tmp_path, monkeypatch):
    script = repository_script("lab/studies/bench_bcu_rule.py")
    rules = {r: {"nll": 0.5, "nll_minus_lowest": {"diff": 0.0, "low": 0.0, "high": 0.0}, "balanced_accuracy": 0.7,
                 "balanced_accuracy_minus_today": {"diff": 0.0, "low": 0.0, "high": 0.0},
                 "later_pulsars_predicted_pulsar": "1/2"} for r in script.RULES}
    selection = {"sources": "9 bcu", "seeds": [0], "lowest_nll": "no rule", "tied_on_nll": ["no rule"],
                 "selected": "no rule", "rules": rules}
    monkeypatch.setattr(script, "select", lambda out, seeds: selection)
    script.main(["select", str(tmp_path)])
    (entry,) = _kept(records, "bcu_rule").values()
    assert entry["printed"][0].startswith("selection, 9 bcu; seeds [0]") and len(entry["printed"]) == 3 + len(rules)


def test_target_lists_keeps_what_its_parts_print(records, monkeypatch):
    script = repository_script("lab/studies/bench_target_lists.py")
    monkeypatch.setattr(script, "load", lambda folder: ())
    monkeypatch.setattr(script, "top", lambda: print("| pulsar | 3/50 |"))
    script.main("runs/targets-v20", "top")
    kept = _kept(records, "target_lists")
    assert kept["python lab/studies/bench_target_lists.py runs/targets-v20 top"]["printed"] == [
        "| pulsar | 3/50 |"]


def test_target_lists_undoes_the_bcu_rule_to_the_probabilities_it_was_applied_to():
    from gpal.catalogs.known_classes import apply_known_classes, class_weights

    script = repository_script("lab/studies/bench_target_lists.py")
    rng = np.random.default_rng(0)
    proba = rng.dirichlet(np.ones(4), size=6)
    class1 = np.array(["bcu", "", "BCU ", "bll", "bcu", "psr"])
    association = np.array([1.0, 0.3, 0.8, 0.5, 0.0, 1.0])
    weights = class_weights(["bll", "fsrq", "pulsar", "other"], {"pulsar": ["psr", "msp"], "other": ["snr"]},
                            {"bll": 50, "fsrq": 30, "pulsar": 15, "other": 5})
    ruled = apply_known_classes(proba, class1, weights, association=association)[0]
    assert not np.allclose(ruled[[0, 2]], proba[[0, 2]]) and np.allclose(ruled[[1, 3, 4, 5]], proba[[1, 3, 4, 5]])
    np.testing.assert_allclose(script.without_rule(ruled, pd.Series(class1), weights, association), proba, atol=1e-12)


def _write_units(folder: Path, method: str, units: list[dict]) -> None:
    (folder / "units" / method).mkdir(parents=True)
    for k, unit in enumerate(units):
        (folder / "units" / method / f"split_{k:04d}.json").write_text(json.dumps(unit))


def test_augmented_gap_pairs_a_kernel_step_probe_with_the_runs_splits(tmp_path):
    """paired_probe: the probe's means and, per compared method, the paired mean difference and its 95% t interval
    (checked against scipy); a split whose test labels differ from the run's is refused."""
    from scipy import stats

    script = repository_script("lab/studies/bench_augmented_gap.py")
    rng = np.random.default_rng(1)
    y = [0, 1, 2, 1, 0, 2]
    proba = rng.dirichlet([1, 1, 1], size=(3, len(y)))
    probe, run = tmp_path / "probe", tmp_path / "run"
    _write_units(probe, "ls-cavi-steps5", [{"nll": 0.5 - 0.1 * k, "error": 0.2, "train_seconds": 2.0, "y_true": y,
                                            "proba": proba[k].tolist()} for k in range(3)])
    _write_units(run, "ls-cavi", [{"nll": 0.6 + 0.05 * k * k, "error": 0.1 * k, "train_seconds": 1.0, "y_true": y,
                                   "proba": proba[k].tolist()} for k in range(3)])
    line = script.paired_probe(probe, run, "ls-cavi-steps5", ("ls-cavi",))
    assert (line["splits"], line["nll"], line["accuracy"], line["train_seconds"]) == (3, 0.4, 0.8, 2.0)
    d = np.array([-0.1, -0.25, -0.5])
    half = stats.t.ppf(0.975, 2) * d.std(ddof=1) / np.sqrt(3)
    assert line["minus_ls-cavi"]["nll"] == pytest.approx([d.mean(), d.mean() - half, d.mean() + half], abs=6e-4)
    assert line["minus_ls-cavi"]["ece"] == [0.0, 0.0, 0.0]  # same probabilities, same labels
    assert line["minus_ls-cavi"]["accuracy"][0] == pytest.approx(-0.1, abs=6e-4)
    moved = json.loads((run / "units" / "ls-cavi" / "split_0001.json").read_text())
    moved["y_true"] = [1, 0, 2, 1, 0, 2]
    (run / "units" / "ls-cavi" / "split_0001.json").write_text(json.dumps(moved))
    with pytest.raises(ValueError, match="split_0001: the test labels of ls-cavi-steps5 and of ls-cavi"):
        script.paired_probe(probe, run, "ls-cavi-steps5", ("ls-cavi",))


def test_a_study_refuses_a_name_it_does_not_know_naming_the_flag_and_the_choices(capsys):
    import argparse

    from shared import chosen

    parser = argparse.ArgumentParser(prog="study")
    assert chosen(parser, "--methods", "MGP,,NIMGP", ("MGP", "NIMGP")) == ["MGP", "NIMGP"]
    with pytest.raises(SystemExit):
        chosen(parser, "--methods", "MGP,NIMG", ("MGP", "NIMGP"))
    assert "--methods: unknown ['NIMG']; expected some of ['MGP', 'NIMGP']" in capsys.readouterr().err

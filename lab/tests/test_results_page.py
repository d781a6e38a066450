"""The results page (docs/results.md) and its records: current, rebuilt from records alone, bad records refused."""

from __future__ import annotations

import json
import os
import shlex
import shutil
from pathlib import Path

import pytest

import results_page
from generated_page import RECORDS
from result_records import make_record, make_table, read_record, table_markdown, write_record


def test_the_page_is_current_with_its_records():
    assert results_page.main(["--check"]) == 0, "docs/results.md is stale: run python lab/pages/results_page.py"


def test_every_record_names_its_command_and_a_commit():
    for path in sorted((RECORDS / "results").glob("*.json")):
        record = read_record(path)
        assert record["command"].strip() and record["commit"] not in ("", "unknown"), path
        assert not record["commit"].endswith("+dirty"), f"{path} was produced by uncommitted code"


def _folders(docs):
    """The generator's options for a page written to ``docs`` from the records in ``docs/results``."""
    return ["--docs", str(docs), "--records", str(docs / "results")]


@pytest.fixture
def docs(tmp_path):
    shutil.copytree(RECORDS / "results", tmp_path / "results")
    assert results_page.main(_folders(tmp_path)) == 0
    return tmp_path


def test_check_notices_a_changed_record(docs, capsys):
    assert results_page.main([*_folders(docs), "--check"]) == 0
    path = docs / "results" / "discovery.json"
    record = json.loads(path.read_text())
    record["tables"][0]["rows"][0][1] = "11.0"
    path.write_text(json.dumps(record))
    assert results_page.main([*_folders(docs), "--check"]) == 1
    assert "out of date" in capsys.readouterr().err
    assert results_page.main(_folders(docs)) == 0
    assert "| 10 | 11.0 |" in (docs / "results.md").read_text()


def test_a_missing_or_stray_record_is_named(docs, capsys):
    (docs / "results" / "discovery.json").rename(docs / "results" / "discover.json")
    assert results_page.main([*_folders(docs), "--check"]) == 2
    err = capsys.readouterr().err
    assert "discover.json" in err and "belong to no section" in err
    (docs / "results" / "discover.json").unlink()
    assert results_page.main([*_folders(docs), "--check"]) == 2
    assert "no record ['discovery']" in capsys.readouterr().err


def test_explanation_is_split_around_the_numbers(docs):
    (docs / "results" / "discovery.md").write_text("Before the table.\n\n<!-- numbers -->\n\nAfter the table.\n")
    results_page.main(_folders(docs))
    page = (docs / "results.md").read_text()
    section = page[page.index("## Discovery"):page.index("## \"None of these\"")]
    assert section.index("Before the table.") < section.index("```bash") < section.index("| 10 |")
    assert section.index("| 100 |") < section.index("After the table.")


def test_record_fields_are_checked(tmp_path):
    table = make_table(["a", "b"], [["x", 1.5]], "lr")
    with pytest.raises(ValueError, match="expected 2 cells"):
        make_table(["a", "b"], [["x"]])
    main_job = "gpal/workflows/files/main_job.yaml"
    with pytest.raises(ValueError, match="'commit' is empty"):
        make_record("t", "gpal classify", " ", [table], workflow=main_job)
    with pytest.raises(ValueError, match="no tables"):
        make_record("t", "gpal classify", "abc", [], workflow=main_job)
    with pytest.raises(ValueError, match="field 'workflow' is 'bench_open_sky.py'; expected the YAML file"):
        make_record("t", "gpal classify", "abc", [table], workflow="bench_open_sky.py")
    path = tmp_path / "r.json"
    for field in ("commit", "workflow"):
        path.write_text(json.dumps({**make_record("t", "c", "abc", [table], workflow=main_job), field: None}))
        with pytest.raises(ValueError, match=rf"r\.json: field '{field}' must be a str"):
            read_record(path)
    path.write_text("{")
    with pytest.raises(ValueError, match="not JSON"):
        read_record(path)


def test_table_markdown_aligns_and_escapes():
    text = table_markdown(make_table(["name", "value"], [["|b| < 10", 0.12345], ["n", 7]], "lr", caption="Cap."))
    assert text.splitlines() == ["Cap.", "", "| name | value |", "|---|---:|", "| \\|b\\| < 10 | 0.123 |", "| n | 7 |"]


def _classify_folder(path):
    """A finished classify folder's files, with numbers chosen so each row of the record can be worked by hand."""
    for sub in ("tables", "records"):
        (path / sub).mkdir(parents=True)
    (path / "run.json").write_text(json.dumps({"gpal_version": "9.9", "identity": {
        "catalog": {"release": "TESTCAT"}, "class_spec": "a,b", "baselines": ["logistic"], "seed": 3,
        "estimator": {"params": {"input_noise": "latent", "input_prior": "population", "likelihood": "softmax",
                                 "num_inducing": 7}}}}))
    interval = {m: [0.1, 0.9] for m in ("accuracy", "balanced_accuracy", "nll", "ece")}
    (path / "records" / "metrics.json").write_text(json.dumps({
        "heldout": {"n": 40, "accuracy": 0.8, "balanced_accuracy": 0.75, "nll": 0.5, "ece": 0.05, "n_bins": 15,
                    "intervals": interval, "classes": ["a", "b"]},
        "trained_on": {"a": 100, "b": 60},
        "comparison": [
            {"model": "gpal", "metric": "nll", "value": 0.5, "diff": 0.0, "diff_low": 0.0, "diff_high": 0.0},
            # logistic minus gpal = +0.1 [+0.02, +0.2], the page's sign: a positive NLL difference favours gpal
            {"model": "logistic", "metric": "nll", "value": 0.6, "diff": 0.1, "diff_low": 0.02, "diff_high": 0.2},
            {"model": "logistic", "metric": "ece", "value": 0.01, "diff": -0.04, "diff_low": -0.05, "diff_high": -0.03},
        ],
        "faintest_quarter": {"max_significance": 6.04, "n": 10, "models": {
            "gpal": {"nll": 0.7}, "gpal without error bars": {"nll": 0.8}, "logistic": {"nll": 0.9}}},
        "classified": {"n": 50, "select": "unassociated,bcu", "predicted": {"a": 30, "b": 18, "extended": 2},
                       "none_of_these": 9},
    }))
    left_out = {"snr": {"n": 3, "flagged": 3}, "glc": {"n": 5, "flagged": 1}}
    (path / "records" / "ood.json").write_text(json.dumps({"left_out": left_out}))
    (path / "tables" / "predicted_by_latitude.csv").write_text(
        "sources,latitude,n,a,b,extended,none of these (ood)\n"
        "unassociated,|b| <= 10,20,10,8,2,5\nunassociated,|b| > 10,25,15,10,0,2\nbcu,|b| > 10,5,5,0,0,2\n")


def test_a_classify_folder_becomes_its_record(tmp_path):
    _classify_folder(tmp_path / "run")
    record = results_page.classify_run_record(tmp_path / "run", "gpal classify --out runs/x", "abc1234")
    held, pool = (dict(map(tuple, t["rows"])) for t in record["tables"])
    assert held["NLL (nats)"] == "0.500 [0.100, 0.900]"
    assert held["logistic regression: NLL; it − gpal"] == "0.600; +0.100 [+0.020, +0.200]"
    assert held["logistic regression: ECE; it − gpal"] == "0.010; -0.040 [-0.050, -0.030]"
    assert held["faintest quarter (10 sources, `Signif_Avg` ≤ 6.0): gpal / without error bars / best baseline"] == \
        "0.700 / 0.800 / 0.900 (logistic regression)"
    assert pool["sources"] == "50 (2 of them extended, listed apart)"
    assert pool['flagged "none of these"'] == "9 (25% of the unassociated sources with |b| ≤ 10°, 8% elsewhere)"
    assert pool["labelled sources of classes never trained on, flagged"] == "4 of 8 (50%)"
    assert record["settings"]["trained on"] == 160 and record["commit"] == "abc1234"


def test_recording_refuses_uncommitted_code_and_names_a_bad_folder(tmp_path, monkeypatch):
    _classify_folder(tmp_path / "run")
    monkeypatch.setattr(results_page, "source_commit", lambda: "abc1234+dirty")
    with pytest.raises(ValueError, match="commit first"):
        results_page.record_run("main_job", tmp_path / "run", tmp_path, command="gpal classify --out runs/x")
    path = results_page.record_run("main_job", tmp_path / "run", tmp_path, command="gpal classify --out runs/x",
                                   commit="abc1234")
    assert read_record(path)["command"] == "gpal classify --out runs/x"
    with pytest.raises(ValueError, match="not a finished `gpal classify` folder"):
        results_page.record_run("main_job", tmp_path / "nothing", tmp_path, commit="abc1234")
    with pytest.raises(ValueError, match="no converter for record 'discovery'"):
        results_page.record_run("discovery", tmp_path / "run", tmp_path, commit="abc1234")


def test_write_record_refuses_a_bad_record_before_writing(tmp_path):
    with pytest.raises(ValueError, match="not a result record"):
        write_record(tmp_path / "x.json", {"title": "t"})
    assert not (tmp_path / "x.json").exists()


def _later_labels_folder(path, commit="abc1234"):
    path.mkdir(parents=True)
    rows = [  # check, model, measure, value, diff (gpal − model, as the study stores it), low, high, n
        ("4FGL:FL16Y", "gpal", "nll", 0.25, float("nan"), float("nan"), float("nan"), 552),
        ("4FGL:FL16Y", "gpal", "agn_pulsar_auc", 0.96, float("nan"), float("nan"), float("nan"), 80),
        ("4FGL:FL16Y", "logistic", "nll", 0.30, -0.05, -0.085, -0.017, 552),
        ("held-out:FL16Y", "gpal", "nll", 0.248, float("nan"), float("nan"), float("nan"), 601),
        ("held-out:FL16Y", "logistic", "nll", 0.262, -0.014, -0.037, 0.007, 601),
        ("4FGL:FL16Y", "gpal", "ece", 0.031, float("nan"), float("nan"), float("nan"), 552),
        ("4FGL:FL16Y", "logistic", "ece", 0.0404, -0.0094, -0.021, 0.0012, 552),
        *((check, model, f"ece_{cls}", value, float("nan"), float("nan"), float("nan"), n)
          for check, n, model, values in (("4FGL:FL16Y", 552, "gpal", (0.04, 0.0634, 0.036)),
                                          ("4FGL:FL16Y", 552, "logistic", (0.046, 0.071, 0.041)),
                                          ("held-out:FL16Y", 601, "gpal", (0.02, 0.03, float("nan"))))
          for cls, value in zip(("bll", "fsrq", "pulsar"), values)),
    ]
    import pandas as pd

    frame = pd.DataFrame(rows, columns=["check", "model", "measure", "value", "diff", "diff_low", "diff_high", "n"])
    frame.assign(commit=commit).to_csv(path / "later_labels.csv", index=False)
    (path / "workflow.json").write_text(json.dumps({"seeds": [0, 1, 2]}))


def test_a_later_labels_run_becomes_its_record_at_the_runs_commit(tmp_path):
    _later_labels_folder(tmp_path / "run")
    path = results_page.record_run("later_labels", tmp_path / "run", tmp_path,
                                   command="gpal workflow later_labels --out runs/ll")
    record = read_record(path)
    assert record["commit"] == "abc1234" and record["settings"]["seeds"] == [0, 1, 2]
    nll, ece, auc, per_class = record["tables"]  # NLL first, then each measure the run has, then each class's ECE
    assert nll["columns"] == ["check", "sources", "gpal NLL", "logistic NLL; it − gpal"]  # the page's one sign
    assert nll["rows"] == [["4FGL:FL16Y", "552", "0.250", "0.300; +0.050 [+0.017, +0.085]"],
                           ["held-out:FL16Y", "601", "0.248", "0.262; +0.014 [-0.007, +0.037]"]]
    assert ece["columns"] == ["check", "sources", "gpal ECE", "logistic ECE; it − gpal"]
    assert ece["rows"] == [["4FGL:FL16Y", "552", "0.031", "0.040; +0.009 [-0.001, +0.021]"],
                           ["held-out:FL16Y", "", "", ""]]
    assert auc["caption"].startswith("AGN-vs-pulsar AUC") and auc["rows"][0][1:3] == ["80", "0.960"]
    assert per_class["columns"] == ["check", "gpal", "logistic"]
    assert per_class["rows"] == [["4FGL:FL16Y", "0.040 / 0.063 / 0.036", "0.046 / 0.071 / 0.041"],
                                 ["held-out:FL16Y", "0.020 / 0.030 / –", "– / – / –"]]


def test_a_later_labels_run_of_uncommitted_code_is_refused(tmp_path):
    _later_labels_folder(tmp_path / "run", commit="abc1234+dirty")
    with pytest.raises(ValueError, match="needs the committed source"):
        results_page.record_run("later_labels", tmp_path / "run", tmp_path, command="c")


def test_producing_two_records_names_the_commit_taken_before_the_first(tmp_path, monkeypatch):
    # The first record rewritten makes the tree differ from its commit; the second must not be refused for that.
    docs = tmp_path / "docs"
    records = docs / "results"
    records.mkdir(parents=True)
    for name in ("main_job", "main_job.dr4"):
        shutil.copyfile(RECORDS / "results" / f"{name}.json", records / f"{name}.json")
    commits = iter(["abc1234", "abc1234+dirty"])
    monkeypatch.setattr(results_page, "source_commit", lambda: next(commits))

    def fake_run(argv, cwd, check, env):  # the command's run folder, made without running gpal
        _classify_folder(Path(argv[argv.index("--out") + 1]))

    monkeypatch.setattr(results_page.subprocess, "run", fake_run)
    monkeypatch.setattr(results_page, "render", lambda records: "")
    assert results_page.main(["--produce", "main_job", "main_job.dr4", *_folders(docs)]) == 0
    assert [read_record(records / f"{n}.json")["commit"] for n in ("main_job", "main_job.dr4")] == ["abc1234"] * 2


def test_producing_from_uncommitted_code_is_refused_before_any_run(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(results_page, "source_commit", lambda: "abc1234+dirty")
    monkeypatch.setattr(results_page.subprocess, "run", lambda *a, **k: pytest.fail("a run was started"))
    assert results_page.main(["--produce", "main_job", *_folders(tmp_path)]) == 2
    assert "commit first" in capsys.readouterr().err


def test_a_recorded_commands_leading_assignments_become_its_environment():
    env, argv = results_page.command_environment("OMP_NUM_THREADS=1 A_B=x=y gpal workflow w.yaml --set 'm=[a, b]'")
    assert argv == ["gpal", "workflow", "w.yaml", "--set", "m=[a, b]"]
    assert env["OMP_NUM_THREADS"] == "1" and env["A_B"] == "x=y" and env["PATH"] == os.environ["PATH"]
    assert results_page.command_environment("gpal classify --out DIR")[1][0] == "gpal"
    assert results_page.command_environment("gpal workflow w.yaml \\\n    --set a=1")[1] == ["gpal", "workflow", "w.yaml",
                                                                                     "--set", "a=1"]


def test_each_table_is_shown_under_its_workflow_command_record_and_commit():
    page = results_page.render(RECORDS / "results")
    section = page[page.index("## The open sky"):page.index("## BL Lacs")]
    record = read_record(RECORDS / "results" / "open_sky.json")
    head = (f"Workflow `lab/studies/open_sky.yaml`; record `lab/pages/records/results/open_sky.json`, commit "
            f"`{record['commit']}`:\n\n```bash\n{record['command']}\n```")
    assert head in section and section.index(head) < section.index("| ")


@pytest.mark.parametrize(("change", "message"), [
    ({"workflow": None}, r"discovery\.json: field 'workflow' must be a str"),
    ({"workflow": "lab/studies/gone.yaml"}, r"discovery\.json: its workflow lab/studies/gone\.yaml "
                                                  r"\(field 'workflow'\) does not exist"),
    ({"workflow": "lab/studies/open_sky.yaml"}, r"discovery\.json: its workflow lab/studies/open_sky\.yaml "
                                                      r"\(field 'workflow'\) does not list lab/pages/records/results/discovery\.json"),
    ({"command": "python lab/studies/bench_gone.py --reps 3"},
     r"discovery\.json: field 'command' names lab/studies/bench_gone\.py, which does not exist"),
    ({"command": "python benchmarks/discovery.py --reps 3"},  # where a study lived before lab/studies/
     r"discovery\.json: field 'command' names benchmarks/discovery\.py, which does not exist"),
])
def test_a_record_without_the_workflow_that_made_it_is_refused(docs, capsys, change, message):
    import re

    path = docs / "results" / "discovery.json"
    record = {**json.loads(path.read_text()), **change}  # a field changed to None is left out
    path.write_text(json.dumps({k: v for k, v in record.items() if v is not None}))
    assert results_page.main([*_folders(docs), "--check"]) == 2
    assert re.search(message, capsys.readouterr().err)


def test_the_lists_later_yield_ratios_are_the_open_sky_records():
    """`LATER_YIELD_RATIOS`, which the lists' headers and the report state, are the smallest and largest ratio of
    the default variant's target-list table in the open-sky record (a list with no member found has no ratio)."""
    import re

    from gpal.catalog_jobs.candidates import LATER_YIELD_RATIOS

    record = read_record(RECORDS / "results" / "open_sky.json")
    table = next(t for t in record["tables"] if t["caption"].startswith("The open sky variant's target lists"))
    ratios: dict[str, list[float]] = {}
    for row in table["rows"]:
        for column, cell in zip(table["columns"][1:], row[1:]):
            found = re.search(r"= (\d+\.\d+)", str(cell))
            if found:
                ratios.setdefault(column.removesuffix(" list"), []).append(float(found.group(1)))
    assert {cls: (min(r), max(r)) for cls, r in ratios.items()} == dict(LATER_YIELD_RATIOS)


def test_a_study_records_command_lines_run_in_order_and_the_last_writes_the_record(tmp_path, monkeypatch):
    shutil.copyfile(RECORDS / "results" / "other_features.json", tmp_path / "other_features.json")
    calls = []
    monkeypatch.setattr(results_page.subprocess, "run", lambda argv, cwd, check, env: calls.append(argv))
    results_page.produce("other_features", tmp_path, "abc1234")
    lines = read_record(tmp_path / "other_features.json")["command"].splitlines()
    assert len(lines) > 1 and calls[:-1] == [shlex.split(line) for line in lines[:-1]]
    assert calls[-1] == [*shlex.split(lines[-1]), "--record", str((tmp_path / "other_features.json").resolve())]


def test_a_recorded_commands_continued_lines_are_one_command():
    lines = results_page.command_lines("python a.py --x 1 \\\n    --y 2\n\npython b.py")
    assert [shlex.split(line) for line in lines] == [["python", "a.py", "--x", "1", "--y", "2"], ["python", "b.py"]]


def test_a_table9_summary_becomes_its_record_from_the_folder_or_the_kept_file(tmp_path):
    summary = ("| method | splits | test NLL | test error | train s / split | published NLL | published error |\n"
               "|---|---:|---|---|---|---|---|\n"
               "| MGP | 3 | 0.435 ± 0.022 | 0.080 ± 0.004 | 4.5 ± 0.0 | 0.377 ± 0.019 | 0.075 ± 0.004 |\n"
               "| NIMGP | 3 | 0.306 ± 0.016 | 0.083 ± 0.004 | 7.0 ± 0.1 | 0.246 ± 0.010 | 0.088 ± 0.004 |\n\n"
               "| predicted | method | bll (true) |\n|---|---|---|\n| bll (pred.) | MGP | 17.47 ± 0.10 |\n")
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "summary.md").write_text(summary, encoding="utf-8")
    record = results_page.table9_run_record(tmp_path / "run", "gpal workflow fermi_4fgl", "abc1234")
    assert record["tables"][0]["rows"] == [["MGP", "0.435 ± 0.022", "0.377 ± 0.019", "0.080 ± 0.004", "0.075 ± 0.004"],
                                           ["NIMGP", "0.306 ± 0.016", "0.246 ± 0.010", "0.083 ± 0.004", "0.088 ± 0.004"]]
    assert record["settings"] == {"splits": 3} and record["source"] == "summary.md of the run"
    kept = results_page.table9_run_record(tmp_path / "run" / "summary.md", "c", "abc1234")
    assert kept["tables"] == record["tables"]
    (tmp_path / "run" / "summary.md").write_text(summary.replace("published NLL", "paper NLL"), encoding="utf-8")
    with pytest.raises(ValueError, match=r"summary\.md: its first table lacks the columns \['published NLL'\]"):
        results_page.table9_run_record(tmp_path / "run", "c", "abc1234")
    with pytest.raises(ValueError, match=r"nowhere does not exist: expected a finished run folder holding summary\.md"):
        results_page.table9_run_record(tmp_path / "nowhere", "c", "abc1234")


def test_waveform_curves_become_their_record_with_random_last(tmp_path):
    import pandas as pd

    rows = [{"method": m, "noise": v, "strategy": s, "repetition": r, "n_added": n,
             "error": 0.3 - n * (0.01 if s != "random" else 0.0) + r / 100 + (m == "B") / 10}
            for m in ("A", "B") for v in (0.0, 0.5) for s in ("random", "bald") for r in (0, 1) for n in (0, 2, 4)]
    pd.DataFrame(rows).to_csv(tmp_path / "curves.csv", index=False)
    record = results_page.waveform_run_record(tmp_path, "gpal workflow w.yaml --out x", "abc1234")
    table = record["tables"][0]
    assert table["columns"] == ["method", "noise variance", "BALD", "random"]
    assert table["rows"][:2] == [["A", "0", "0.305 -> 0.265", "0.305 -> 0.305"],
                                 ["B", "0", "0.405 -> 0.365", "0.405 -> 0.405"]]
    assert table["rows"][2][1] == "0.5" and "after 4 added labels" in table["caption"]
    assert record["settings"] == {"repetitions": 2, "queries": "2, 2 sources each"}
    # BALD - random per repetition: 0, -0.02, -0.04 at 0, 2, 4 labels; trapezoid area over the budget 4: -0.08 / 4
    assert record["tables"][1]["rows"][:2] == [["A", "0", "BALD - random", "-0.020 ± 0.000", "[-0.020, -0.020]", "2/2"],
                                               ["B", "0", "BALD - random", "-0.020 ± 0.000", "[-0.020, -0.020]", "2/2"]]
    pd.DataFrame([r for r in rows if r["strategy"] == "random"]).to_csv(tmp_path / "curves.csv", index=False)
    assert len(results_page.waveform_run_record(tmp_path, "c", "abc1234")["tables"]) == 1  # nothing to pair
    pd.DataFrame(rows[:-1]).to_csv(tmp_path / "curves.csv", index=False)
    with pytest.raises(ValueError, match=r"curves\.csv: the curves end at different numbers of labels"):
        results_page.waveform_run_record(tmp_path, "c", "abc1234")
    pd.DataFrame(rows).drop(columns="error").to_csv(tmp_path / "curves.csv", index=False)
    with pytest.raises(ValueError, match=r"curves\.csv lacks the columns \['error'\]"):
        results_page.waveform_run_record(tmp_path / "curves.csv", "c", "abc1234")


def test_a_likelihood_comparison_folder_becomes_its_record(tmp_path):
    from gpal.workflows.compare import NOT_APPLICABLE

    rows = [{"dataset": d, "method": m, "nll": NOT_APPLICABLE if (d, m) == ("wine", "jj") else f"0.{i}{j}0 ± 0.010"}
            for i, d in enumerate(["wine", "4fgl-dr4"]) for j, m in enumerate(["dirichlet", "jj"])]
    (tmp_path / "comparison.json").write_text(json.dumps(rows))
    config = {"protocol": {"splits": 4, "injected_noise": [0.0]}, "training": {"epochs": 30, "iters": 50, "num_inducing": 20}}
    (tmp_path / "workflow.json").write_text(json.dumps(config))
    record = results_page.likelihoods_run_record(tmp_path, "gpal workflow compare_likelihoods", "abc1234")
    table = record["tables"][0]
    assert table["columns"] == ["method", "wine", "4fgl-dr4"]
    assert table["rows"] == [["dirichlet", "0.000 ± 0.010", "0.100 ± 0.010"], ["jj", "n/a", "0.110 ± 0.010"]]
    assert "over 4 splits" in table["caption"] and record["settings"]["epochs"] == 30
    config["protocol"]["injected_noise"] = [0.0, 0.5]
    (tmp_path / "workflow.json").write_text(json.dumps(config))
    with pytest.raises(ValueError, match="injected input noise"):
        results_page.likelihoods_run_record(tmp_path, "c", "abc1234")
    (tmp_path / "comparison.json").unlink()
    with pytest.raises(ValueError, match="is not a finished `gpal workflow` compare folder"):
        results_page.likelihoods_run_record(tmp_path, "c", "abc1234")


def test_rebuilding_in_check_mode_writes_no_page(docs, monkeypatch):
    from result_records import CHECK_VARIABLE

    page = docs / "results.md"
    page.write_text("stale\n", encoding="utf-8")
    monkeypatch.setenv(CHECK_VARIABLE, "1")
    assert results_page.main(_folders(docs)) == 1
    assert page.read_text(encoding="utf-8") == "stale\n"


def test_producing_the_likelihood_record_runs_its_command_into_a_folder_and_converts_it(tmp_path, monkeypatch):
    import gpal.workflows.compare  # noqa: F401  (imported before subprocess.run is faked: its imports run processes)

    records = tmp_path / "docs" / "results"
    records.mkdir(parents=True)
    shutil.copyfile(RECORDS / "results" / "likelihoods.json", records / "likelihoods.json")
    monkeypatch.setattr(results_page, "source_commit", lambda: "abc1234")

    def fake_run(argv, cwd, check, env):  # the workflow's run folder, made without running gpal
        assert argv[:3] == ["gpal", "workflow", "compare_likelihoods"]
        out = Path(argv[argv.index("--out") + 1])
        out.mkdir()
        (out / "comparison.json").write_text(json.dumps([{"dataset": "wine", "method": "dirichlet", "nll": "0.1 ± 0.0"}]))
        (out / "workflow.json").write_text(json.dumps({"protocol": {"splits": 1}, "training": {
            "epochs": 2, "iters": 3, "num_inducing": 4}}))

    monkeypatch.setattr(results_page.subprocess, "run", fake_run)
    monkeypatch.setattr(results_page, "render", lambda records: "")
    assert results_page.main(["--produce", "likelihoods", *_folders(tmp_path / "docs")]) == 0
    record = read_record(records / "likelihoods.json")
    assert record["commit"] == "abc1234" and record["tables"][0]["rows"] == [["dirichlet", "0.1 ± 0.0"]]


def test_every_record_of_the_page_has_a_writer():
    """No number on the page is typed in: each record is written by its study or converted from its run folder."""
    names = [n for section, _, parts in results_page.SECTIONS for n in (section, *(f"{section}.{p}" for p in parts))]
    assert not [n for n in names if n not in results_page.STUDY_RECORDS and n not in results_page.CONVERTERS]

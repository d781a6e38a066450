"""The study declarations of lab/studies/ (``<name>.yaml``) and their runner, ``run.py``."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import repository_script
from gpal.workflows.shipped import shipped_workflows

ROOT = Path(__file__).parents[2]
STUDIES = ROOT / "lab" / "studies"
DECLARATIONS = sorted(STUDIES.glob("*.yaml"))
SHIPPED = shipped_workflows()


@pytest.fixture(scope="module")
def runner():
    return repository_script("lab/studies/run.py")


@pytest.mark.parametrize("path", DECLARATIONS, ids=lambda p: p.stem)
def test_a_declaration_reads_and_its_commands_name_files_that_exist(path, runner):
    study = runner.read_study(path)
    for command in study["commands"]:
        for name in re.findall(r"(?:lab|benchmarks|gpal/workflows/files)/[\w/.-]+\.(?:py|yaml)", command):
            assert (ROOT / name).is_file(), f"{path.name}: its command {command!r} names {name}, which does not exist"
        for name in re.findall(r"gpal workflow\s+([\w/-]+)(?=\s|$)", command):
            assert name in SHIPPED, f"{path.name}: its command {command!r} runs {name}, which gpal does not ship"


def test_every_study_script_belongs_to_a_declaration(runner):
    named = set()
    for path in DECLARATIONS:
        study = runner.read_study(path)
        named.add(study.get("script"))
        named.update(w for c in study["commands"] for w in shlex.split(c) if w.endswith(".py"))
    scripts = {f"lab/studies/{p.name}" for p in STUDIES.glob("*.py")} - {
        "lab/studies/shared.py", "lab/studies/run.py"}
    assert not sorted(scripts - named), "a study script no declaration runs: declare it, or retire it"


def test_study_scripts_name_their_commit_through_shared_code_commit():
    """A study names the commit of its units and records by `shared.code_commit`: `gpal.identity.source_commit`
    calls the tree dirty once a first command has rewritten a record, so a second command would refuse its units."""
    calling = [p.name for p in sorted(STUDIES.glob("*.py")) if p.name != "shared.py"
               and "source_commit" in p.read_text(encoding="utf-8")]
    assert not calling, f"study scripts naming gpal.identity.source_commit, not shared.code_commit: {calling}"


def test_a_script_that_makes_a_docs_figure_is_a_study_not_part_of_the_site():
    """docs/ holds the site's pages and figures (and Sphinx's conf.py); a script drawing a figure there is a study
    here, declared, so the figure cites what remakes it."""
    built = {"_build", "jupyter_execute", "_generated", "api"}  # docs/.gitignore: what a build writes
    scripts = sorted(p.relative_to(ROOT).as_posix() for p in (ROOT / "docs").rglob("*.py")
                     if not built & set(p.relative_to(ROOT / "docs").parts) and p.name != "conf.py")
    assert not scripts, f"scripts in docs/: move them to lab/studies/ with a declaration: {scripts}"


def test_every_record_is_named_by_exactly_one_declaration(runner):
    """A reader remaking a page's number finds its commands and cost in one declaration (`check_records`)."""
    owners = runner.check_records()
    assert sorted(owners) == runner.record_files()
    assert owners["lab/pages/records/results/later_labels.json"] == "lab/studies/later_labels.yaml"
    assert len(owners) > 100


def _tree(root, declarations, records):
    """A repository top with declarations (name -> fields) and page records (path -> its workflow field)."""
    for path, workflow in records.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(json.dumps({"workflow": workflow}), encoding="utf-8")
    (root / "lab/studies/records").mkdir(parents=True, exist_ok=True)
    (root / "gpal/workflows/files").mkdir(parents=True, exist_ok=True)
    (root / "gpal/workflows/files/w.yaml").write_text("workflow: classify\n", encoding="utf-8")
    for name, fields in declarations.items():
        study = {"study": name, "title": "t", "workflow": "gpal/workflows/files/w.yaml", "commands": ["gpal workflow x"],
                 "records": [], "pages": [], "needs": {"runs": [], "cost": "not recorded"}, **fields}
        (root / f"lab/studies/{name}.yaml").write_text(yaml.safe_dump(study), encoding="utf-8")


def test_a_record_without_its_declaration_or_with_two_is_refused_naming_the_file(tmp_path, runner):
    a, b = "lab/pages/records/results/a.json", "lab/pages/records/results/b.json"
    _tree(tmp_path, {"one": {"records": [a]}}, {a: "gpal/workflows/files/w.yaml", b: "gpal/workflows/files/w.yaml"})
    with pytest.raises(ValueError, match=re.escape(f"{b}: a workflow record without its workflow")):
        runner.check_records(tmp_path)
    _tree(tmp_path, {"one": {"records": [a, b]}, "two": {"records": [b]}}, {})
    with pytest.raises(ValueError, match=re.escape(f"{b}: listed by 2 declarations")) as refused:
        runner.check_records(tmp_path)
    assert a not in str(refused.value)
    _tree(tmp_path, {"two": {"records": []}}, {})
    assert runner.check_records(tmp_path) == {a: "lab/studies/one.yaml", b: "lab/studies/one.yaml"}


def test_a_declaration_naming_a_missing_record_or_another_workflow_is_refused(tmp_path, runner):
    a = "lab/pages/records/results/a.json"
    _tree(tmp_path, {"one": {"records": [a, "lab/pages/records/results/gone.json"]}}, {a: "gpal/workflows/files/w.yaml"})
    with pytest.raises(ValueError, match=r"one\.yaml: field 'records' names 'lab/pages/records/results/gone"):
        runner.check_records(tmp_path)
    _tree(tmp_path, {"one": {"records": [a]}}, {a: "gpal/workflows/files/other.yaml"})
    with pytest.raises(ValueError, match=re.escape(f"{a}: its field 'workflow' is 'gpal/workflows/files/other.yaml'")):
        runner.check_records(tmp_path)
    _tree(tmp_path, {"one": {"records": [a], "script": "gpal/workflows/files/w.yaml"}}, {a: "gpal/workflows/files/w.yaml"})
    with pytest.raises(ValueError, match="exactly one of the fields"):
        runner.check_records(tmp_path)


def test_a_bad_declaration_is_refused_naming_the_field(tmp_path, runner):
    good = yaml.safe_load((STUDIES / "open_sky.yaml").read_text(encoding="utf-8"))
    cases = {"study": ("other", "field 'study' is 'other'"),
             "records": (["lab/pages/records/results/nowhere.json"], "nowhere.json"),
             "commands": ([], "field 'commands'"), "needs": ({"runs": []}, "field 'needs'")}
    for field, (value, message) in cases.items():
        path = tmp_path / "open_sky.yaml"
        path.write_text(yaml.safe_dump({**good, field: value}), encoding="utf-8")
        with pytest.raises(ValueError, match=re.escape(message)):
            runner.read_study(path)
    path.write_text(yaml.safe_dump({k: v for k, v in good.items() if k != "title"}), encoding="utf-8")
    with pytest.raises(ValueError, match="field 'title'"):
        runner.read_study(path)


def test_the_runner_prints_each_command_and_stops_at_the_first_failing_one(runner, capfd):
    study = {"commands": ["echo first", "exit 3", "echo never"]}
    assert runner.run(study) == 3
    out = capfd.readouterr()
    assert out.out.splitlines() == ["$ echo first", "first", "$ exit 3"]
    assert "status 3" in out.err
    assert runner.run(study, dry_run=True) == 0
    assert capfd.readouterr().out.splitlines() == ["$ echo first", "$ exit 3", "$ echo never"]


def test_an_unknown_study_is_refused_with_the_declared_ones(runner, capsys):
    assert runner.main(["no_such_study"]) == 2
    assert "open_sky" in capsys.readouterr().err


def _declared(path):
    return yaml.safe_load(path.read_text(encoding="utf-8"))


#: The studies whose rebuild can run here, and those waiting for outputs git does not keep (a rerun makes them).
AWAITING = [p for p in DECLARATIONS if repository_script("lab/studies/run.py").missing_outputs(_declared(p))]
REBUILT = [p for p in DECLARATIONS if "rebuild" in _declared(p) and p not in AWAITING]


@pytest.mark.parametrize("path", REBUILT, ids=lambda p: p.stem)
def test_a_study_rebuilds_its_committed_records_from_its_kept_outputs(path, runner, capfd):
    """The numbers a page shows are what the study's kept outputs make: its rebuild commands, in check mode,
    find every record it writes equal to the committed one (nothing is written)."""
    status = runner.main([path.stem, "--rebuild", "--check"])
    out, err = capfd.readouterr()
    assert status == 0, f"{path.name}: a record differs from what its outputs make:\n{err[-2000:]}"
    said = [line for line in out.splitlines() if line.startswith(("recorded ", "checked "))]
    assert said and all(line.endswith(": matches") for line in said), f"{path.name}: a check reported as {said}"


def test_check_mode_sets_the_records_variable_and_a_dry_run_imports_no_gpal(runner, capfd):
    from result_records import CHECK_VARIABLE

    study = {"study": "x", "commands": ["true"], "rebuild": [f"echo checking=${CHECK_VARIABLE}"]}
    assert runner.run(study, rebuild=True, check=True) == 0
    assert capfd.readouterr().out.splitlines()[-1] == "checking=1"
    done = subprocess.run([sys.executable, "-X", "importtime", "lab/studies/run.py", "open_sky", "--dry-run"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.startswith("$ "), done.stderr[-2000:]
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert "yaml" in imported and not {m for m in imported if m.split(".")[0] in ("gpal", "result_records")}


def test_check_mode_compares_a_record_and_writes_nothing(tmp_path, monkeypatch):
    from result_records import (CHECK_VARIABLE, RecordMismatch, make_record, make_table, outcome, read_record,
                                write_record)

    def record(value):
        return make_record("t", "python x.py", "abc1234", [make_table(["a"], [[value]])],
                           workflow="lab/studies/open_sky.yaml")

    monkeypatch.delenv(CHECK_VARIABLE, raising=False)
    path = write_record(tmp_path / "r.json", record(1.5))
    assert outcome(path) == f"recorded {path}"
    monkeypatch.setenv(CHECK_VARIABLE, "1")
    assert outcome(write_record(path, record(1.5))) == f"checked {path}: matches"
    with pytest.raises(RecordMismatch, match=r"tables\[0\]: rows\[0\]\[0\]: the file has 1.5, the study's outputs make 2.5"):
        write_record(path, record(2.5))
    assert read_record(path)["tables"][0]["rows"] == [[1.5]]


def test_rebuild_is_refused_for_a_study_without_rebuild_commands(runner, capsys):
    study = {"study": "x", "commands": ["echo hi"]}
    assert runner.run(study, rebuild=True) == 2
    assert "declares no 'rebuild'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        runner.main(["open_sky", "--check"])


@pytest.mark.parametrize("path", AWAITING, ids=lambda p: p.stem)
def test_a_rebuild_whose_outputs_git_does_not_keep_says_how_to_remake_them(path, runner, capfd):
    """Without its outputs a rebuild is refused before it runs, naming them and the study's command, not a traceback."""
    missing = runner.missing_outputs(runner.read_study(path))
    assert runner.main([path.stem, "--rebuild", "--check"]) == 2
    out, err = capfd.readouterr()
    assert not out and "Traceback" not in err
    assert f"python lab/studies/run.py {path.stem}" in err and all(m in err for m in missing)


def test_a_rebuild_runs_once_the_outputs_it_reads_are_there(tmp_path, runner, capfd):
    folder = tmp_path / "units"
    study = {"study": "x", "commands": ["true"], "rebuild": ["echo rebuilt"], "rebuild_reads": [f"{folder}/"],
             "needs": {"runs": [], "cost": "a minute"}}
    assert runner.run(study, rebuild=True) == 2
    assert f"missing: {folder}/; remake them by running the study: python lab/studies/run.py x" in \
        capfd.readouterr().err
    folder.mkdir()
    assert runner.run(study, rebuild=True) == 2  # an empty folder holds no output
    capfd.readouterr()
    (folder / "rep0.json").write_text("{}")
    assert runner.run(study, rebuild=True) == 0
    assert capfd.readouterr().out.splitlines()[-1] == "rebuilt"


def _python_on_path(folder, monkeypatch, script):
    """A ``python`` first on PATH that runs ``script`` (shell) instead of Python."""
    folder.mkdir()
    (folder / "python").write_text(f"#!/bin/sh\n{script}\n")
    (folder / "python").chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}:{os.environ['PATH']}")


def test_a_study_run_where_python_has_no_gpal_or_another_says_what_to_install(tmp_path, runner, monkeypatch, capfd):
    _python_on_path(tmp_path / "none", monkeypatch, "echo 'No module named gpal' >&2; exit 1")
    assert runner.main(["open_sky"]) == 2
    err = capfd.readouterr().err
    assert "cannot import gpal" in err and "python -m pip install -e '.[test]'" in err
    _python_on_path(tmp_path / "other", monkeypatch, "echo 0.0.1; echo /elsewhere/gpal/__init__.py")
    assert runner.main(["open_sky", "--rebuild"]) == 2
    err = capfd.readouterr().err
    assert "gpal 0.0.1 (/elsewhere/gpal/__init__.py), but this clone's lab is for gpal" in err
    assert runner.main(["open_sky", "--dry-run"]) == 0  # printing the commands needs no gpal

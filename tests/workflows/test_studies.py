"""The study declarations of workflows/studies/ (``<name>.yaml``) and their runner, ``run.py``."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import yaml

from conftest import repository_script

ROOT = Path(__file__).parents[2]
STUDIES = ROOT / "workflows" / "studies"
DECLARATIONS = sorted(STUDIES.glob("*.yaml"))


@pytest.fixture(scope="module")
def runner():
    return repository_script("workflows/studies/run.py")


@pytest.mark.parametrize("path", DECLARATIONS, ids=lambda p: p.stem)
def test_a_declaration_reads_and_its_commands_name_files_that_exist(path, runner):
    study = runner.read_study(path)
    for command in study["commands"]:
        for name in re.findall(r"(?:workflows|benchmarks)/[\w/.-]+\.(?:py|yaml)", command):
            assert (ROOT / name).is_file(), f"{path.name}: its command {command!r} names {name}, which does not exist"


def test_every_study_script_belongs_to_a_declaration(runner):
    named = set()
    for path in DECLARATIONS:
        study = runner.read_study(path)
        named.add(study["script"])
        named.update(w for c in study["commands"] for w in shlex.split(c) if w.endswith(".py"))
    scripts = {f"workflows/studies/{p.name}" for p in STUDIES.glob("*.py")} - {
        "workflows/studies/shared.py", "workflows/studies/run.py"}
    assert not sorted(scripts - named), "a study script no declaration runs: declare it, or retire it"


def test_a_bad_declaration_is_refused_naming_the_field(tmp_path, runner):
    good = yaml.safe_load((STUDIES / "open_sky.yaml").read_text(encoding="utf-8"))
    cases = {"study": ("other", "field 'study' is 'other'"), "records": (["docs/results/nowhere.json"], "nowhere.json"),
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

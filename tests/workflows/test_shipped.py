"""gpal.workflows.shipped: the shipped workflows are listed and run by name; unknown names list them."""

from __future__ import annotations

from pathlib import Path

import pytest

import gpal
from gpal.cli import main
from gpal.workflows import load_workflow
from gpal.workflows.shipped import resolve_workflow, shipped_dir, shipped_name, shipped_workflows, workflow_title

FILES = Path(gpal.__file__).resolve().parent / "workflows" / "files"


def test_every_yaml_of_the_packages_files_folder_is_shipped_by_name():
    shipped = shipped_workflows()
    every = {p.relative_to(FILES).with_suffix("").as_posix() for p in FILES.rglob("*.yaml")}
    assert set(shipped) == every and {"fermi_4fgl", "papers/001_synthetic_2d"} <= every
    for name, path in shipped.items():
        assert load_workflow(path).kind  # each one is a valid workflow file


def test_names_paths_and_unknown_names(tmp_path, monkeypatch):
    fermi = shipped_workflows()["fermi_4fgl"]
    assert resolve_workflow("fermi_4fgl") == fermi == resolve_workflow("fermi_4fgl.yaml")
    monkeypatch.chdir(tmp_path)  # outside the clone, the path older command lines wrote still names the shipped file
    assert resolve_workflow("workflows/fermi_4fgl.yaml") == fermi
    own = tmp_path / "mine.yaml"
    own.write_text("workflow: toy_1d\n")
    assert resolve_workflow(own) == own and resolve_workflow("mine.yaml") == Path("mine.yaml")
    with pytest.raises(FileNotFoundError, match=r"'papers/999_nothing' does not exist: no such file and no shipped "
                                                r"workflow of that name; shipped workflows are \[.*'fermi_4fgl'"):
        resolve_workflow("papers/999_nothing")


def test_a_run_of_a_shipped_file_names_it_by_name_whatever_path_ran_it(tmp_path, monkeypatch):
    import json

    from gpal.workflows import run_workflow

    toy = shipped_workflows()["toy_1d"]
    assert shipped_name(toy) == "toy_1d" and resolve_workflow(shipped_name(toy)) == toy
    assert shipped_name(FILES / "papers" / "002_izmailov.yaml") == "papers/002_izmailov"
    own = tmp_path / "toy_1d.yaml"
    own.write_text(toy.read_text())
    assert shipped_name(own) is None
    monkeypatch.chdir(FILES)  # a relative path to the shipped file, as another clone's absolute one, is the name
    tiny = ["data.n_train=12", "data.n_test=20", "training.epochs=1", "training.num_inducing=3", "training.n_samples=2",
            "methods=[MGP]"]
    for path, command in ((Path("toy_1d.yaml"), "gpal workflow toy_1d"), (own, f"gpal workflow {own}")):
        out = run_workflow(path, tiny, out=tmp_path / f"out_{path.stem}_{len(str(path))}", progress=False)
        assert json.loads((out / "measurements.json").read_text())["command"].startswith(command + " --set data.n_train")


def test_the_files_are_those_of_the_gpal_that_is_imported(tmp_path, monkeypatch):
    """An install (a copy of the package elsewhere) reads its own files, not a checkout's."""
    import gpal.workflows.shipped as shipped

    installed = tmp_path / "site" / "gpal" / "workflows"
    (installed / "files" / "papers").mkdir(parents=True)
    (installed / "files" / "papers" / "001_table5.yaml").write_text("workflow: compare\ntitle: Table 5\n")
    monkeypatch.setattr(shipped, "__file__", str(installed / "shipped.py"))
    assert shipped_dir() == installed / "files"
    assert list(shipped_workflows()) == ["papers/001_table5"]
    assert workflow_title(shipped_workflows()["papers/001_table5"]) == "Table 5"


def test_cli_lists_names_and_titles_and_refuses_unknown_names(capsys):
    assert main(["workflow", "--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(shipped_workflows())
    row = next(line for line in lines if line.startswith("fermi_4fgl "))
    assert row.split(None, 1)[1] == workflow_title(shipped_workflows()["fermi_4fgl"])
    assert "Tables 9-10" in row
    assert main(["workflow", "no_such_workflow"]) == 2
    err = capsys.readouterr().err
    assert "gpal: error: workflow 'no_such_workflow' does not exist: no such file and no shipped workflow" in err
    assert "toy_1d" in err
    assert main(["workflow"]) == 2
    assert "gpal workflow --list" in capsys.readouterr().err

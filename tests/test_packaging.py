"""The build ships what gpal reads at run time: the workflow files and the data files (no wheel is built here:
that needs the package index; docs/workflows.md records the wheel check)."""

from __future__ import annotations

import runpy
import tomllib
from fnmatch import fnmatch
from pathlib import Path

import setuptools

ROOT = Path(__file__).resolve().parents[1]


def _setup_kwargs(monkeypatch) -> dict:
    captured = {}
    monkeypatch.setattr(setuptools, "setup", lambda **kwargs: captured.update(kwargs))
    monkeypatch.chdir(ROOT)
    runpy.run_path(str(ROOT / "setup.py"))
    return captured


def _package_data(package: str) -> list[str]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"][package]


def test_every_workflow_file_is_packaged_and_no_yaml_of_the_lab(monkeypatch):
    from gpal.workflows.shipped import LAB_FOLDERS

    kwargs = _setup_kwargs(monkeypatch)
    assert kwargs["package_dir"]["gpal.workflow_files"] == "workflows"
    assert runpy.run_path(str(ROOT / "setup.py"))["LAB_FOLDERS"] == LAB_FOLDERS  # the build and the lister agree
    patterns = _package_data("gpal.workflow_files")
    excluded = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["exclude-package-data"][
        "gpal.workflow_files"]
    lab = 0
    for path in (ROOT / "workflows").rglob("*.yaml"):
        relative = path.relative_to(ROOT / "workflows")
        package = ".".join(["gpal.workflow_files", *relative.parent.parts])
        if relative.parts[0] in LAB_FOLDERS:  # a study's declaration, a page generator's record
            lab += 1
            assert package not in kwargs["packages"], package
            assert any(fnmatch(relative.as_posix(), p) for p in excluded), relative
            continue
        assert package in kwargs["packages"], package
        assert any(fnmatch(relative.as_posix(), p) or fnmatch(relative.as_posix(), p.removeprefix("**/"))
                   for p in patterns), relative
    assert lab


def test_no_script_of_the_lab_is_packaged(monkeypatch):
    """workflows/ ships as data, its YAML folders only: the studies and page generators beside them stay in the
    repository, and the package holds no page generator."""
    kwargs = _setup_kwargs(monkeypatch)
    shipped = [p for p in kwargs["packages"] if p.startswith("gpal.workflow_files")]
    for package in shipped:
        folder = ROOT / "workflows" / Path(*package.split(".")[2:])
        assert not list(folder.glob("*.py")), f"{package} would install the scripts of {folder}"
    assert "gpal.workflow_files.studies" not in shipped and "gpal.workflow_files.pages" not in shipped
    pages = {p.stem for p in (ROOT / "workflows" / "pages").glob("*.py")}
    assert pages and not {p.stem for p in (ROOT / "gpal").rglob("*.py")} & pages


def test_every_gpal_package_and_data_file_is_packaged(monkeypatch):
    packages = set(_setup_kwargs(monkeypatch)["packages"])
    on_disk = {".".join(p.relative_to(ROOT).parts) for p in (ROOT / "gpal").rglob("*")
               if p.is_dir() and p.name != "__pycache__"} | {"gpal"}
    assert on_disk <= packages, sorted(on_disk - packages)
    keel = ROOT / "gpal" / "data" / "keel_files"
    patterns = _package_data("gpal.data")
    for path in keel.iterdir():
        assert any(fnmatch(f"keel_files/{path.name}", p) for p in patterns), path.name


def test_every_shipped_catalog_is_packaged(monkeypatch):
    """The repository's catalogs/ folder is installed as gpal.catalogs.data, every file of it, and the loader reads
    that folder in a checkout."""
    from gpal.catalogs import CATALOG_DIR, RELEASES

    kwargs = _setup_kwargs(monkeypatch)
    assert kwargs["package_dir"]["gpal.catalogs.data"] == "catalogs"
    assert "gpal.catalogs.data" in kwargs["packages"]
    patterns = _package_data("gpal.catalogs.data")
    files = sorted(p.name for p in (ROOT / "catalogs").iterdir())
    assert {record.file for record in RELEASES.values()} <= set(files)
    for name in files:
        assert any(fnmatch(name, p) for p in patterns), name
    assert CATALOG_DIR.resolve() == (ROOT / "catalogs").resolve()

"""The build ships what gpal reads at run time: the workflow files and the data files (no wheel is built here:
that needs the package index; a plain ``pip install --no-deps .`` into a scratch environment lists the same
workflows as the checkout, ``gpal workflow --list``)."""

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


def test_every_workflow_file_is_packaged(monkeypatch):
    """The shipped workflows are package data of gpal.workflows (gpal/workflows/files/): every YAML file there is
    matched by a pattern, so a plain install lists the same workflows as a checkout."""
    kwargs = _setup_kwargs(monkeypatch)
    files = ROOT / "gpal" / "workflows"
    patterns = _package_data("gpal.workflows")
    found = sorted((files / "files").rglob("*.yaml"))
    assert len(found) > 5 and "gpal.workflows" in kwargs["packages"]
    for path in found:
        relative = path.relative_to(files).as_posix()
        assert any(fnmatch(relative, p) or fnmatch(relative, p.replace("**/", "")) for p in patterns), relative


def test_no_script_of_the_lab_is_packaged(monkeypatch):
    """The lab (lab/: studies, page generators, tools) stays in the repository: no package of the build is in it, and
    the package holds no page generator."""
    kwargs = _setup_kwargs(monkeypatch)
    assert not [p for p in kwargs["packages"] if not p.startswith("gpal")]
    assert set(kwargs["package_dir"]) == {"gpal.catalogs.data"}
    pages = {p.stem for p in (ROOT / "lab" / "pages").glob("*.py")}
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

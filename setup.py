"""The one build setting pyproject.toml cannot state: two top-level folders of the repository are installed as
packages of gpal, so any install carries them: workflows/ as ``gpal.workflow_files`` (its YAML folders only;
``gpal workflow NAME`` finds them, gpal/workflows/shipped.py) and catalogs/ as ``gpal.catalogs.data`` (the LAT
catalogs; gpal/catalogs/catalog.py finds them).  Everything else is in pyproject.toml."""

from pathlib import Path

from setuptools import find_namespace_packages, setup

#: The folders of workflows/ that hold workflow files; its scripts (studies/, pages/, tools/) are the lab, not the
#: package, so a folder without YAML is not installed.
WORKFLOW_FOLDERS = [sub for sub in find_namespace_packages(where="workflows")
                    if any(Path("workflows", *sub.split(".")).glob("*.yaml"))]

setup(
    packages=[
        *find_namespace_packages(include=["gpal*"]),  # what pyproject's packages.find did: data folders included
        "gpal.catalogs.data",
        "gpal.workflow_files",
        *(f"gpal.workflow_files.{sub}" for sub in WORKFLOW_FOLDERS),
    ],
    package_dir={"gpal.catalogs.data": "catalogs", "gpal.workflow_files": "workflows"},
)

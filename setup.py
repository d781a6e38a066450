"""The one build setting pyproject.toml cannot state: two top-level folders of the repository are installed as
packages of gpal, so any install carries them: workflows/ as ``gpal.workflow_files`` (its YAML folders only;
``gpal workflow NAME`` finds them, gpal/workflows/shipped.py) and catalogs/ as ``gpal.catalogs.data`` (the LAT
catalogs; gpal/catalogs/catalog.py finds them).  Everything else is in pyproject.toml."""

from pathlib import Path

from setuptools import find_namespace_packages, setup

#: The folders of workflows/ that are the lab, not the package (the studies with their declarations, the page
#: generators and their records, maintainers' tools): gpal.workflows.shipped.LAB_FOLDERS, which lists none of them.
LAB_FOLDERS = ("pages", "studies", "tools")
#: The folders of workflows/ that hold workflow files; a folder without YAML, or of the lab, is not installed.
WORKFLOW_FOLDERS = [sub for sub in find_namespace_packages(where="workflows")
                    if sub.split(".")[0] not in LAB_FOLDERS and any(Path("workflows", *sub.split(".")).glob("*.yaml"))]

setup(
    packages=[
        *find_namespace_packages(include=["gpal*"]),  # what pyproject's packages.find did: data folders included
        "gpal.catalogs.data",
        "gpal.workflow_files",
        *(f"gpal.workflow_files.{sub}" for sub in WORKFLOW_FOLDERS),
    ],
    package_dir={"gpal.catalogs.data": "catalogs", "gpal.workflow_files": "workflows"},
)

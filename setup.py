"""The one build setting pyproject.toml cannot state: two top-level folders of the repository are installed as
packages of gpal, so any install carries them: workflows/ as ``gpal.workflow_files`` (YAML only; ``gpal workflow
NAME`` finds them, gpal/workflows/shipped.py) and catalogs/ as ``gpal.catalogs.data`` (the LAT catalogs;
gpal/catalogs/catalog.py finds them).  Everything else is in pyproject.toml."""

from setuptools import find_namespace_packages, setup

setup(
    packages=[
        *find_namespace_packages(include=["gpal*"]),  # what pyproject's packages.find did: data folders included
        "gpal.catalogs.data",
        "gpal.workflow_files",
        *(f"gpal.workflow_files.{sub}" for sub in find_namespace_packages(where="workflows")),
    ],
    package_dir={"gpal.catalogs.data": "catalogs", "gpal.workflow_files": "workflows"},
)

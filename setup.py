"""The one build setting pyproject.toml cannot state: the repository's top-level workflows/ folder
is installed as the package ``gpal.workflow_files`` (YAML only), so ``gpal workflow NAME`` finds the
shipped workflows in any install (gpal/workflows/shipped.py).  Everything else is in pyproject.toml."""

from setuptools import find_namespace_packages, setup

setup(
    packages=[
        *find_namespace_packages(include=["gpal*"]),  # what pyproject's packages.find did: data folders included
        "gpal.workflow_files",
        *(f"gpal.workflow_files.{sub}" for sub in find_namespace_packages(where="workflows")),
    ],
    package_dir={"gpal.workflow_files": "workflows"},
)

"""The one build setting pyproject.toml cannot state: the repository's top-level catalogs/ folder is installed as the
package ``gpal.catalogs.data`` (the LAT catalogs; gpal/catalogs/catalog.py finds them), beside the packages that
pyproject's ``packages.find`` would list (a mapped package outside gpal/ cannot be added to a found list there).
Everything else is in pyproject.toml."""

from setuptools import find_namespace_packages, setup

setup(
    packages=[
        *find_namespace_packages(include=["gpal*"]),  # data folders included: gpal/workflows/files, keel_files
        "gpal.catalogs.data",
    ],
    package_dir={"gpal.catalogs.data": "catalogs"},
)

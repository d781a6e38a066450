"""The workflow files shipped with gpal, found by name in any install.

The YAML files live once, in the repository's top-level ``workflows/`` folder.  The build
(``setup.py``) maps that folder to the package ``gpal.workflow_files``, so a wheel or a plain
``pip install`` carries them; a source checkout used without installing (``PYTHONPATH``) reads
the folder itself.  A workflow's name is its path below the folder without ``.yaml``:
``fermi_4fgl``, ``papers/001_synthetic_2d``.  The folder's lab (`LAB_FOLDERS`: the studies' declarations, the
page generators' records, maintainers' tools) is YAML too but no workflow: it is neither installed nor listed.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import gpal

__all__ = ["LAB_FOLDERS", "PACKAGE", "resolve_workflow", "shipped_dir", "shipped_workflows", "workflow_title"]

#: The folders of the repository's workflows/ that are the lab, not workflow files (setup.py leaves them out too).
LAB_FOLDERS = ("pages", "studies", "tools")

#: the package the build maps the repository's workflows/ folder to
PACKAGE = "gpal.workflow_files"


def shipped_dir() -> Path:
    """The folder holding the shipped workflow files.

    Returns
    -------
    pathlib.Path
        The installed ``gpal/workflow_files`` folder, or a source checkout's ``workflows/``.
    """
    try:
        spec = importlib.util.find_spec(PACKAGE)
    except ModuleNotFoundError:
        spec = None
    if spec is not None and spec.submodule_search_locations:
        for location in spec.submodule_search_locations:
            if Path(location).is_dir():
                return Path(location)
    checkout = Path(gpal.__file__).resolve().parents[1]
    if (checkout / "pyproject.toml").is_file() and (checkout / "workflows").is_dir():
        return checkout / "workflows"
    raise FileNotFoundError(
        f"gpal's workflow files are missing: no package {PACKAGE} and {checkout} is not a gpal source checkout; "
        "reinstall gpal"
    )


def shipped_workflows() -> dict[str, Path]:
    """Every shipped workflow by name.

    Returns
    -------
    dict
        name (``papers/001_table5``) -> file, sorted by name.
    """
    root = shipped_dir()
    files = {p.relative_to(root).with_suffix("").as_posix(): p for p in root.rglob("*.yaml")
             if p.relative_to(root).parts[0] not in LAB_FOLDERS}
    return dict(sorted(files.items()))


def workflow_title(path: Path) -> str:
    """A workflow file's ``title`` (its name when it has none), read without validating the file.

    Returns
    -------
    str
        The title, or the file's stem with underscores as spaces (what `gpal.workflows.load_workflow` uses).
    """
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError:
        data = None
    title = data.get("title") if isinstance(data, dict) else None
    return str(title) if title else path.stem.replace("_", " ")


def resolve_workflow(name_or_path: str | os.PathLike) -> Path:
    """A workflow file: an existing path as given, else the shipped workflow of that name.

    The name may carry ``.yaml`` and the ``workflows/`` prefix of a clone's path.

    Returns
    -------
    pathlib.Path
        The file to load.

    Raises
    ------
    FileNotFoundError
        Neither a file nor a shipped name; the message lists the shipped workflows.
    """
    path = Path(name_or_path)
    if path.is_file():
        return path
    name = path.as_posix().removesuffix(".yaml")
    shipped = shipped_workflows()
    # "workflows/fermi_4fgl.yaml", as the docs write it in a clone, names the shipped file anywhere
    for candidate in (name, name.removeprefix("workflows/")):
        if candidate in shipped:
            return shipped[candidate]
    raise FileNotFoundError(
        f"workflow {str(name_or_path)!r} does not exist: no such file and no shipped workflow of that name; "
        f"shipped workflows are "
        f"{list(shipped)} (gpal workflow --list shows their titles)"
    )

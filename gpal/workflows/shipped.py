"""The workflow files shipped with gpal, found by name in any install.

They are package data of `gpal.workflows`, in its ``files/`` folder, so a checkout, an editable install and a
plain ``pip install`` read the same files.  A workflow's name is its path below that folder without ``.yaml``:
``fermi_4fgl``, ``papers/001_synthetic_2d``.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["resolve_workflow", "shipped_dir", "shipped_name", "shipped_workflows", "workflow_title"]


def shipped_dir() -> Path:
    """The folder holding the shipped workflow files.

    Returns
    -------
    pathlib.Path
        ``gpal/workflows/files`` of the gpal that is imported.
    """
    return Path(__file__).resolve().parent / "files"


def shipped_workflows() -> dict[str, Path]:
    """Every shipped workflow by name.

    Returns
    -------
    dict
        name (``papers/001_table5``) -> file, sorted by name.
    """
    root = shipped_dir()
    return dict(sorted((p.relative_to(root).with_suffix("").as_posix(), p) for p in root.rglob("*.yaml")))


def shipped_name(path: str | os.PathLike) -> str | None:
    """The name of the shipped workflow ``path`` is (``papers/002_izmailov``), or None for a file of one's own.

    A run's record names the workflow it ran by this name, so that its command reads the same, and runs the same
    file, in every clone and install.

    Returns
    -------
    str or None
        The name `resolve_workflow` takes back to the file.
    """
    file, root = Path(path).resolve(), shipped_dir()
    if file.suffix != ".yaml" or not file.is_relative_to(root):
        return None
    return file.relative_to(root).with_suffix("").as_posix()


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

    The name may carry ``.yaml``, and the ``workflows/`` prefix of the path a clone had for it before the files
    moved into the package.

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
    # "gpal/workflows/files/fermi_4fgl.yaml", as older command lines write it, names the shipped file anywhere
    for candidate in (name, name.removeprefix("workflows/")):
        if candidate in shipped:
            return shipped[candidate]
    raise FileNotFoundError(
        f"workflow {str(name_or_path)!r} does not exist: no such file and no shipped workflow of that name; "
        f"shipped workflows are "
        f"{list(shipped)} (gpal workflow --list shows their titles)"
    )

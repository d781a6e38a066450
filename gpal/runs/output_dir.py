"""The output folder of a run: claimed for one run, resumed by the same run, refused to another.

``run.json`` in the folder records the run's identity (`gpal.identity`), signed so that
no other tool's file of that name passes for it; a rerun of the same run resumes in the
folder, a different one is refused with the differences named. ``--force`` replaces a
run by removing what gpal listed as written there (`gpal.files.MANIFEST`) and nothing
else: a user's files in the folder are never deleted. Only the late stages (catalog
jobs, workflows, the CLI) claim folders.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from pathlib import Path
from typing import Any, Iterator, Mapping

from gpal.files import MANIFEST, remove_leftovers, remove_written, write_json_atomic
from gpal.identity import check_same_run
from gpal.interrupts import check_stop

__all__ = ["RUN_RECORD", "OutputInUse", "claim_output_dir", "discard_unused_claims", "forget_claims", "record_identity",
           "recorded_identity"]


#: The file in a run folder that records (and signs) the run's identity.
RUN_RECORD = "run.json"


class OutputInUse(FileExistsError):
    """An output folder already holds a different run; pass ``force`` to replace it."""


def claim_output_dir(
    path: str | os.PathLike, identity: Mapping[str, Any], force: bool = False, marker: str = RUN_RECORD
) -> Path:
    """Make ``path`` the output folder of the run described by ``identity`` (JSON-able).

    A folder holding the same run (same identity in ``marker``) is reused, so an
    interrupted run resumes; temporary files a killed run left in it are removed.
    A folder holding a different run is refused with the differences named, unless
    ``force``, which removes the files that run wrote (and only those). A non-empty
    folder without gpal's signed ``marker`` and manifest was not written by a gpal run
    and is refused even with ``force``, as are the working folder, the home folder and
    their ancestors. The check and the claim hold an exclusive lock on the folder, so
    of two processes claiming one folder for different runs exactly one succeeds.
    Never mixes the results of two runs.
    """
    check_stop()  # Ctrl-C in a command: nothing of this run is written yet
    path = Path(path)
    identity = json.loads(json.dumps(identity, sort_keys=True, allow_nan=False))  # fail before touching disk
    if path.exists() and not path.is_dir():
        raise NotADirectoryError(f"output {path} exists and is not a folder")
    if not path.exists():
        _CREATED.append(path.absolute())
    path.mkdir(parents=True, exist_ok=True)
    refusal = _refusal_to_empty(path)  # a property of the path alone, known before the folder is read
    with _folder_lock(path):
        marker_file = path / marker
        old = _read_marker(marker_file) if (path / MANIFEST).is_file() else None
        if old == identity:
            remove_leftovers(path)
            return path
        if any(path.iterdir()):
            if old is None:
                raise OutputInUse(
                    f"refusing to write into {path}: it is not empty and holds no record of a gpal run "
                    f"({marker} signed by gpal, and {MANIFEST}), so it is not a gpal run folder"
                    f"{'; --force only replaces gpal runs' if force else ''}. Choose another folder "
                    "or empty this one yourself"
                )
            if not force:
                check_same_run(old, identity, f"refusing to write into {path}",
                               "Choose another folder or pass --force to replace it", OutputInUse)
            if refusal:
                raise OutputInUse(refusal)
            remove_written(path)
        (path / MANIFEST).touch()
        write_json_atomic(marker_file, _signed(identity))
    return path


#: The output folders this process created, which `discard_unused_claims` may remove again.
_CREATED: list[Path] = []


def forget_claims() -> None:
    """Start a command afresh: the folders earlier commands of this process created are theirs to keep."""
    _CREATED.clear()


def discard_unused_claims() -> list[Path]:
    """Remove the output folders this process created and wrote nothing in but the claim (``run.json`` and the
    manifest): a command refused after claiming its folder leaves none behind.  Returns those removed."""
    removed = []
    while _CREATED:
        path = _CREATED.pop()
        try:
            names = {entry.name for entry in path.iterdir()}
        except OSError:
            continue
        if names <= {RUN_RECORD, MANIFEST} and (path / MANIFEST).is_file() and not any(
                line.strip() and line.strip() != RUN_RECORD
                for line in (path / MANIFEST).read_text(encoding="utf-8").splitlines()):
            for name in names:
                (path / name).unlink()
            path.rmdir()
            removed.append(path)
    return removed


#: What signs a run record: a key no other tool writes, over gpal's own canonical form of the identity.
_SIGNATURE = "gpal_run_signature"


def _signature(identity: Any) -> str:
    return hashlib.sha256(("gpal run\n" + json.dumps(identity, sort_keys=True)).encode()).hexdigest()


def _signed(identity: Any) -> dict[str, Any]:
    from gpal import __version__

    return {_SIGNATURE: _signature(identity), "gpal_version": __version__, "identity": identity}


def record_identity(folder: str | os.PathLike, identity: Mapping[str, Any]) -> None:
    """Sign ``identity`` as the run ``folder`` now holds (a run whose lists were cut again records their settings)."""
    write_json_atomic(Path(folder) / RUN_RECORD, _signed(identity))


def recorded_identity(folder: str | os.PathLike) -> Any:
    """The identity the gpal run in ``folder`` recorded, or None where there is no run gpal signed."""
    return _read_marker(Path(folder) / RUN_RECORD)


def _read_marker(marker_file: Path) -> Any:
    """The identity a gpal run recorded, or None where the file is missing, unreadable or not signed by gpal."""
    try:
        record = json.loads(marker_file.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(record, dict) or "identity" not in record or record.get(_SIGNATURE) != _signature(record["identity"]):
        return None
    return record["identity"]


@contextlib.contextmanager
def _folder_lock(path: Path) -> Iterator[None]:
    """An exclusive advisory lock on the folder itself (POSIX ``flock``), held while it is checked and claimed."""
    try:
        import fcntl
    except ImportError:  # not POSIX: no lock, the check and the claim as before
        yield
        return
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _refusal_to_empty(path: Path) -> str:
    """Why ``--force`` must not empty ``path`` (the folder a user works in, their home, or a folder above either),
    in words; empty where it may."""
    target = path.resolve()
    for what, precious in (("working folder", Path.cwd().resolve()), ("home folder", Path.home().resolve())):
        if target == precious or target in precious.parents:
            return f"refusing to empty {path}: it is the {what} or a folder above it. Choose another output folder"
    return ""

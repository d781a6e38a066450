"""Plain-file persistence: atomic writes, saved-model folders, JSON-safe class labels.

Everything gpal writes is either complete or absent: files go to a temporary
name beside the target and are moved into place only when fully written, so an
interrupted run never leaves a half-written table, figure or model.  Models are
a folder holding ``config.json`` and ``params.npz``: no pickle, nothing executed
on load.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import tempfile
from pathlib import Path
from typing import Any, Iterator, Mapping

import numpy as np

__all__ = [
    "OutputInUse",
    "atomic_output",
    "claim_output_dir",
    "classes_from_json",
    "classes_to_json",
    "load_model_dir",
    "save_model_dir",
    "write_json_atomic",
    "write_text_atomic",
]


@contextlib.contextmanager
def atomic_output(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; it replaces ``path`` only if the block succeeds."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    # Created as an ordinary file would be (mode 0o666 minus the umask), unlike mkstemp's 0o600.
    os.close(os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666))
    try:
        yield tmp
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_text_atomic(path: str | os.PathLike, text: str) -> Path:
    """Write UTF-8 text so that ``path`` holds either its old content or all of ``text``.

    The data reach the disk (fsync) before the rename, so a checkpoint survives a crash.
    """
    with atomic_output(path) as tmp:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
    return Path(path)


def write_json_atomic(path: str | os.PathLike, obj: Any, allow_nan: bool = False) -> Path:
    """JSON-encode first (so an unserialisable object writes nothing), then write atomically.

    NaN and infinities are refused unless ``allow_nan``: they are not valid JSON.
    """
    return write_text_atomic(path, json.dumps(obj, indent=1, allow_nan=allow_nan))


def save_model_dir(
    path: str | os.PathLike, fmt: str, version: int, config: Mapping[str, Any], arrays: Mapping[str, np.ndarray]
) -> Path:
    """Write ``config.json`` + ``params.npz`` as a folder that appears complete or not at all.

    An existing folder at ``path`` is replaced only after the new one is fully
    written, so a failed save leaves the previous model intact; a model with
    NaN or infinite parameters is refused, so none ever reaches disk.
    """
    bad = [k for k, v in arrays.items() if np.asarray(v).dtype.kind == "f" and not np.all(np.isfinite(v))]
    if bad:
        raise ValueError(f"refusing to save a model with non-finite parameters: {bad}")
    text = json.dumps({"format": fmt, "version": version, **config}, indent=1)  # fails before any write
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", dir=path.parent))
    try:
        (tmp / "config.json").write_text(text, encoding="utf-8")
        np.savez(tmp / "params.npz", **arrays)
        if path.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{path.name}.old.", dir=path.parent))
            os.replace(path, old / "model")
            os.replace(tmp, path)
            shutil.rmtree(old)
        else:
            os.replace(tmp, path)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)
    return path


def load_model_dir(path: str | os.PathLike, fmt: str, version: int) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """Read a folder written by ``save_model_dir``, checking it holds a ``fmt`` model of ``version``."""
    path = Path(path)
    config_file, params_file = path / "config.json", path / "params.npz"
    if not config_file.is_file():
        raise FileNotFoundError(f"{path} is not a saved gpal model: expected config.json and params.npz in it")
    try:
        config = json.loads(config_file.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{config_file} is not valid JSON ({exc}); the saved model is corrupt") from None
    if config.get("format") != fmt or config.get("version") != version:
        raise ValueError(
            f"{path} holds a {config.get('format')!r} v{config.get('version')} model, not a {fmt} v{version} model"
        )
    if not params_file.is_file():
        raise FileNotFoundError(f"{path} is an incomplete saved model: params.npz is missing")
    try:
        with np.load(params_file, allow_pickle=False) as npz:
            arrays = {k: npz[k] for k in npz.files}
    except (OSError, ValueError) as exc:
        raise ValueError(f"{params_file} could not be read ({exc}); the saved model is corrupt") from None
    return config, arrays


class OutputInUse(FileExistsError):
    """An output folder already holds a different run; pass ``force`` to replace it."""


def _differences(old: Any, new: Any, prefix: str = "") -> list[str]:
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        return [d for k in sorted(set(old) | set(new), key=str) for d in _differences(old.get(k), new.get(k), f"{prefix}{k}.")]
    return [] if old == new else [f"{prefix.rstrip('.')}: {old!r} -> {new!r}"]


def claim_output_dir(
    path: str | os.PathLike, identity: Mapping[str, Any], force: bool = False, marker: str = "run.json"
) -> Path:
    """Make ``path`` the output folder of the run described by ``identity`` (JSON-able).

    A folder holding the same run (same ``marker`` content) is reused, so an
    interrupted run resumes. A folder holding a different run, or files gpal did
    not write, is refused with the differences named, unless ``force``, which
    empties it first. Never mixes the results of two runs in one folder.
    """
    path = Path(path)
    identity = json.loads(json.dumps(identity, sort_keys=True, allow_nan=False))  # fail before touching disk
    marker_file = path / marker
    if path.exists() and not path.is_dir():
        raise NotADirectoryError(f"output {path} exists and is not a folder")
    if path.is_dir() and any(path.iterdir()):
        old = None
        if marker_file.is_file():
            try:
                old = json.loads(marker_file.read_text(encoding="utf-8"))
            except json.JSONDecodeError:
                old = None
        if old == identity:
            return path
        if not force:
            if old is None:
                why = f"it is not empty and has no readable {marker}, so it was not written by this kind of gpal run"
            else:
                why = "it holds a different run (" + "; ".join(_differences(old, identity)[:8]) + ")"
            raise OutputInUse(f"refusing to write into {path}: {why}. Choose another folder or pass --force to replace it")
        shutil.rmtree(path)
    path.mkdir(parents=True, exist_ok=True)
    write_json_atomic(marker_file, identity)
    return path


def classes_to_json(classes: np.ndarray) -> dict[str, Any]:
    """Class labels as JSON: their values and the numpy dtype they came in."""
    values = [c.item() if isinstance(c, np.generic) else c for c in classes]
    bad = [v for v in values if not isinstance(v, (str, int, float, bool))]
    if bad:
        raise TypeError(f"cannot save class label {bad[0]!r} of type {type(bad[0]).__name__}: use str, int, float or bool")
    return {"dtype": "object" if classes.dtype == object else classes.dtype.str, "values": values}


def classes_from_json(item: Mapping[str, Any]) -> np.ndarray:
    """Inverse of ``classes_to_json``: the same values with the same dtype."""
    if item["dtype"] == "object":
        out = np.empty(len(item["values"]), dtype=object)
        out[:] = item["values"]
        return out
    return np.asarray(item["values"], dtype=np.dtype(item["dtype"]))

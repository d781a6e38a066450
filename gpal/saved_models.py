"""Saved-model folders: ``config.json`` + ``params.npz`` written complete or not at all, and read back checked.

No pickle and nothing executed on load: the config is bounded JSON, the arrays an npz whose members are
checked (size, expansion, header) before they are read, and each array's checksum in the config binds
the two files, so damage is a `CorruptModel` naming the file and the field.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import zipfile
import zlib
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from gpal.files import memory_bytes, note_written, read_json, regular_file, temporary_dir

__all__ = [
    "ARRAY_CHECKSUMS",
    "CorruptModel",
    "MAX_EXPANSION",
    "NotAModelFolder",
    "SavedArrays",
    "SavedConfig",
    "array_sha256",
    "check_array_checksums",
    "classes_from_json",
    "classes_to_json",
    "corrupt_field",
    "load_model_dir",
    "save_model_dir",
]


def save_model_dir(
    path: str | os.PathLike, fmt: str, version: int, config: Mapping[str, Any], arrays: Mapping[str, np.ndarray]
) -> Path:
    """Write ``config.json`` + ``params.npz`` as a folder that appears complete or not at all.

    An existing model folder at ``path`` is replaced only after the new one is fully
    written, so a failed save leaves the previous model intact; anything else at
    ``path`` (a user's file or folder) is refused with `NotAModelFolder`, never
    replaced. A model with NaN or infinite parameters is refused, so none ever reaches disk.
    """
    bad = [k for k, v in arrays.items() if np.asarray(v).dtype.kind == "f" and not np.all(np.isfinite(v))]
    if bad:
        raise ValueError(f"refusing to save a model with non-finite parameters: {bad}")
    # each array's checksum in the config binds the two files: a params.npz edited or taken from another save is named
    checksums = {name: array_sha256(value) for name, value in arrays.items()}
    text = json.dumps({"format": fmt, "version": version, **config, ARRAY_CHECKSUMS: checksums}, indent=1)  # fails before any write
    path = Path(path)
    _refuse_to_replace(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    note_written(path)
    tmp = temporary_dir(path)
    try:
        with open(tmp / "config.json", "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        with open(tmp / "params.npz", "wb") as fh:
            np.savez(fh, **arrays)
            fh.flush()
            os.fsync(fh.fileno())
        if path.exists():
            old = temporary_dir(path)
            os.replace(path, old / "model")
            os.replace(tmp, path)
            shutil.rmtree(old)
        else:
            os.replace(tmp, path)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)
    return path


class NotAModelFolder(FileExistsError):
    """A save would replace something that is not a saved model: a user's file or folder."""


_MODEL_FILES = {"config.json", "params.npz"}


def _refuse_to_replace(path: Path) -> None:
    """Only a model folder (``config.json`` with a format, ``params.npz``, nothing else) may be replaced by a save."""
    if not (path.exists() or path.is_symlink()):
        return
    if path.is_symlink() or not path.is_dir():
        raise NotAModelFolder(f"refusing to save a model at {path}: it exists and is not a model folder. "
                              "Choose a new path, or remove it yourself")
    names = {entry.name for entry in path.iterdir()}
    if names and not (names <= _MODEL_FILES and _has_format(path / "config.json")):
        raise NotAModelFolder(
            f"refusing to save a model at {path}: it is a folder that holds other files than a saved model "
            f"({', '.join(sorted(names - _MODEL_FILES)) or 'a config.json without a model format'}). "
            "Choose a new path, or remove it yourself"
        )


def _has_format(config: Path) -> bool:
    try:
        return isinstance(json.loads(config.read_text(encoding="utf-8")).get("format"), str)
    except (OSError, ValueError, AttributeError):
        return False


class CorruptModel(ValueError):
    """A saved model folder that is not as ``save_model_dir`` wrote it: damaged, truncated or edited by hand.

    Its message names the file, the field and what was expected, so a user knows what broke
    rather than meeting a ``KeyError`` or a TensorFlow error, or predictions from NaN parameters.
    """


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def corrupt_field(config: Mapping[str, Any], key: str, problem: str) -> CorruptModel:
    """The error for field ``key`` of ``config``, named as in ``config.json`` when it was read by ``load_model_dir``."""
    source = getattr(config, "source", "the saved model's config")
    field = getattr(config, "prefix", "") + str(key)
    return CorruptModel(f"{source}: field {field!r} {problem}; the saved model is corrupt or was edited, save it again")


class SavedConfig(dict):
    """``config.json`` of a saved model: a field it lacks is a `CorruptModel` naming the file and the dotted field.

    Nested objects are ``SavedConfig`` too, so every family's loader gets the clear error
    for free where a plain dict would raise a bare ``KeyError``.
    """

    def __init__(self, data: Mapping[str, Any], source: Path, prefix: str = ""):
        super().__init__({k: _saved(v, source, f"{prefix}{k}") for k, v in data.items()})
        self.source, self.prefix = source, prefix

    def __missing__(self, key: str) -> Any:
        raise corrupt_field(self, key, "is missing")


def _saved(value: Any, source: Path, field: str) -> Any:
    if isinstance(value, dict):
        return SavedConfig(value, source, field + ".")
    if isinstance(value, list):
        return [_saved(v, source, f"{field}[{i}]") for i, v in enumerate(value)]
    return value


class SavedArrays(dict):
    """``params.npz`` of a saved model: an array it lacks is a `CorruptModel` naming the file."""

    def __init__(self, data: Mapping[str, np.ndarray], source: Path):
        super().__init__(data)
        self.source = source

    def __missing__(self, key: str) -> Any:
        raise CorruptModel(f"{self.source}: array {key!r} is missing; the saved model is corrupt or was edited, save it again")


def _no_constants(name: str) -> Any:
    raise ValueError(f"it holds {name}, which is not JSON and which a save never writes")


def _read_config(config_file: Path) -> SavedConfig:
    try:
        config = read_json(config_file, "saved model config", damaged="the saved model is corrupt",
                           parse_constant=_no_constants)
    except ValueError as exc:
        raise CorruptModel(f"{exc}; the saved model is corrupt") from None
    if not isinstance(config, dict):
        raise CorruptModel(f"{config_file} holds a JSON {type(config).__name__}, not the object a saved model has")
    return SavedConfig(config, config_file)


_NPY_HEADERS = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}

#: ``config.json``'s field holding the checksum of each array of ``params.npz`` (`array_sha256`), written by a save.
ARRAY_CHECKSUMS = "array_sha256"
#: How much larger than its compressed bytes a member of ``params.npz`` may declare itself.  A save writes its
#: members uncompressed (``numpy.savez``), so this only lets a re-compressed file through; with it a file under
#: 50 MB on disk is refused, or read, within 200 MB, where a compressed run of zeros would expand a thousandfold.
MAX_EXPANSION = 4


def array_sha256(value: Any) -> str:
    """The checksum of an array as a save writes it: its dtype, shape and bytes (C order)."""
    value = np.ascontiguousarray(value)
    digest = hashlib.sha256(f"{value.dtype.str}{value.shape}".encode())
    digest.update(value.tobytes())
    return digest.hexdigest()


def _check_members(params_file: Path) -> None:
    """Every member of ``params.npz`` a ``.npy`` array of numbers, within bounds, judged before any data is read.

    The zip directory's declared sizes first (a member that would expand past `MAX_EXPANSION` times its compressed
    bytes, or all of them past a quarter of memory, is refused unopened), then each ``.npy`` header (the array it
    announces must fit in the bytes its member declares): a zip bomb or a pickled member is refused unread.
    """
    limit = memory_bytes() // 4
    with zipfile.ZipFile(params_file) as archive:
        members = archive.infolist()
        for info in members:
            if info.compress_type != zipfile.ZIP_STORED and info.file_size > MAX_EXPANSION * max(info.compress_size, 1):
                raise CorruptModel(
                    f"{params_file}: member {info.filename!r} would expand from {info.compress_size} to "
                    f"{info.file_size} bytes, more than {MAX_EXPANSION} times (a save writes its arrays uncompressed); "
                    "the file is corrupt or was edited, and is not read")
        declared = sum(info.file_size for info in members)
        if declared > limit:
            raise CorruptModel(f"{params_file}: its arrays hold more than {limit} bytes (1/4 of memory); "
                               "a saved model is far smaller, the file is corrupt or was edited")
        for info in members:
            with archive.open(info) as member:
                try:
                    read_header = _NPY_HEADERS.get(np.lib.format.read_magic(member))
                    if read_header is None:
                        raise ValueError("a .npy format version numpy.savez does not write")
                    shape, _, dtype = read_header(member)
                except (ValueError, EOFError) as exc:
                    raise CorruptModel(f"{params_file}: member {info.filename!r} is not a numpy array ({exc}); "
                                       "the saved model is corrupt or was edited") from None
                header_bytes = member.tell()
            if dtype.hasobject or dtype.kind not in "biuf":
                raise CorruptModel(f"{params_file}: array {info.filename.removesuffix('.npy')!r} holds {dtype} values "
                                   "(pickled objects are never read); a saved model's arrays are numbers")
            data_bytes = int(np.prod(shape, dtype=object)) * dtype.itemsize
            if data_bytes != info.file_size - header_bytes:
                raise CorruptModel(
                    f"{params_file}: array {info.filename.removesuffix('.npy')!r} announces shape {shape} of {dtype} "
                    f"({data_bytes} bytes) but its member holds {info.file_size - header_bytes}; the saved model is "
                    "corrupt or was edited")


def _read_arrays(params_file: Path) -> SavedArrays:
    """Every array of ``params.npz``, each numeric and finite: a save refuses anything else."""
    regular_file(params_file, "saved model parameters")
    try:
        _check_members(params_file)
        with np.load(params_file, allow_pickle=False) as npz:
            arrays = {k: npz[k] for k in npz.files}
    except CorruptModel:
        raise
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error) as exc:
        raise CorruptModel(f"{params_file} could not be read ({str(exc) or type(exc).__name__}); the saved model is corrupt") from None
    for key, value in arrays.items():  # numbers: _check_members read their dtypes
        bad = int(np.size(value) - np.count_nonzero(np.isfinite(value)))
        if bad:
            raise CorruptModel(
                f"{params_file}: array {key!r} holds {bad} NaN or infinite value(s); a saved model's parameters "
                "are finite (a save refuses others), so the file is corrupt or was edited"
            )
    return SavedArrays(arrays, params_file)


def check_array_checksums(config: SavedConfig, arrays: SavedArrays) -> None:
    """The arrays are those the save of ``config`` wrote: each checksum it records matches (a config saved before
    the checksums were recorded has none to check).  A loader calls it once the values passed its own checks, which
    say more (an array's dtype, its shape, a value out of range)."""
    if ARRAY_CHECKSUMS not in config:
        return
    recorded = config[ARRAY_CHECKSUMS]
    if not isinstance(recorded, Mapping) or not all(isinstance(v, str) for v in recorded.values()):
        raise corrupt_field(config, ARRAY_CHECKSUMS, "must map each array of params.npz to its sha256")
    if set(recorded) != set(arrays):
        raise CorruptModel(
            f"{arrays.source}: holds arrays {sorted(set(arrays) - set(recorded))} the save did not write and lacks "
            f"{sorted(set(recorded) - set(arrays))} (field {ARRAY_CHECKSUMS!r} of {config.source}); the folder mixes "
            "two saves or was edited, save it again")
    for name in sorted(recorded):
        if array_sha256(arrays[name]) != recorded[name]:
            raise CorruptModel(
                f"{arrays.source}: array {name!r} is not the one saved with {config.source} (its checksum differs "
                f"from field {ARRAY_CHECKSUMS}[{name!r}]); the folder mixes two saves or was edited, save it again")


def load_model_dir(path: str | os.PathLike, fmt: str, version: int) -> tuple[SavedConfig, SavedArrays]:
    """Read a folder written by ``save_model_dir``, checking it holds a ``fmt`` model of ``version``.

    Damage is a `CorruptModel` naming the file: unreadable JSON or npz, non-finite or
    non-numeric arrays, and (through the returned mappings) any field or array a loader
    asks for that is missing.  The loader then calls `check_array_checksums`.
    """
    path = Path(path)
    config_file, params_file = path / "config.json", path / "params.npz"
    if not config_file.is_file() and os.path.lexists(config_file):
        regular_file(config_file, "saved model config")  # a link loop, a FIFO or a folder: say which
    if not config_file.is_file():
        raise FileNotFoundError(f"{path} is not a saved gpal model: expected config.json and params.npz in it")
    config = _read_config(config_file)
    if config.get("format") != fmt or config.get("version") != version:
        older = config.get("format") == fmt and isinstance(config.get("version"), int) and config["version"] < version
        raise ValueError(
            f"{path} holds a {config.get('format')!r} v{config.get('version')} model, not a {fmt} v{version} model"
            + ("; an earlier gpal saved it (CHANGELOG.md lists the breaks): refit it with this one" if older else "")
        )
    if not params_file.is_file():
        raise FileNotFoundError(f"{path} is an incomplete saved model: params.npz is missing")
    return config, _read_arrays(params_file)


def classes_to_json(classes: np.ndarray) -> dict[str, Any]:
    """Class labels as JSON: their values and the numpy dtype they came in."""
    values = [c.item() if isinstance(c, np.generic) else c for c in classes]
    bad = [v for v in values if not isinstance(v, (str, int, float, bool))]
    if bad:
        raise TypeError(f"cannot save class label {bad[0]!r} of type {type(bad[0]).__name__}: use str, int, float or bool")
    return {"dtype": "object" if classes.dtype == object else classes.dtype.str, "values": values}


def classes_from_json(item: Mapping[str, Any]) -> np.ndarray:
    """Inverse of ``classes_to_json``: the same values with the same dtype (a dtype that cannot hold them is refused)."""
    values = item["values"]
    if not isinstance(values, list):
        raise corrupt_field(item, "values", f"must be a list of class labels; got {_short(values)}")
    if item["dtype"] == "object":
        out = np.empty(len(values), dtype=object)
        out[:] = values
        return out
    try:
        out = np.asarray(values, dtype=np.dtype(item["dtype"]))
    except (TypeError, ValueError) as exc:
        out, why = None, f" ({exc})"
    else:
        why = f" (it reads them as {_short(out.tolist())})"
    if out is None or out.tolist() != values:
        raise corrupt_field(item, "dtype", f"must be a numpy dtype that holds the labels {_short(values)}{why}")
    return out

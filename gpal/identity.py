"""What makes two runs the same run: parameters as JSON, data fingerprints, the same-run check.

A foundation module: it imports nothing from gpal, and every stage may use it.

A resumable run (an output folder, a repeated-splits folder, an active-learning
checkpoint) records its identity as JSON when it starts; a later call resumes it
only if it describes the same run, and is refused otherwise with the differences
named (`check_same_run`).  An identity holds estimator parameters as JSON
(`jsonable`, `estimator_identity`) and fingerprints of the data (`dataset_fingerprint`,
`dataset_hashes`): hashes of the bytes of the arrays, so a different data set is
noticed without storing it.  The bytes each fingerprint hashes are part of the
identity that existing folders recorded: they must not change.
"""

from __future__ import annotations

import functools
import hashlib
import numbers
import subprocess
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np

__all__ = [
    "DifferentRun",
    "check_same_run",
    "dataset_fingerprint",
    "dataset_hashes",
    "differences",
    "digest",
    "estimator_identity",
    "jsonable",
    "source_commit",
    "type_name",
]


def type_name(value: Any) -> str:
    """An object that is not JSON, named by its type: ``<module.Class>`` (a class by itself)."""
    cls = value if isinstance(value, type) else type(value)
    return f"<{cls.__module__}.{cls.__qualname__}>"


def jsonable(value: Any, describe: Callable[[Any], Any] | None = type_name) -> Any:
    """``value`` as JSON: numbers (numpy's too) as int / float / bool, lists, tuples and dicts item by item.

    Anything else is replaced by ``describe(value)``: by default its type name, so that a
    custom object in a run's parameters is recorded (not its state); ``describe=repr``
    records its repr; ``describe=None`` leaves it as it is, for a caller that writes it
    itself (a saved model's kernel, as its config).
    """
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    if isinstance(value, (list, tuple)):
        return [jsonable(v, describe) for v in value]
    if isinstance(value, dict):
        return {str(k): jsonable(v, describe) for k, v in value.items()}
    return value if describe is None else describe(value)


def estimator_identity(estimator: Any, leave_out: Sequence[str] = ("progress",)) -> dict[str, Any]:
    """An estimator's class and its constructor parameters as JSON (those in ``leave_out`` do not decide a result)."""
    params = {k: v for k, v in estimator.get_params(deep=False).items() if k not in leave_out}
    return {"class": f"{type(estimator).__module__}.{type(estimator).__qualname__}", "params": jsonable(params)}


def digest(*parts: np.ndarray | str) -> str:
    """SHA-256 (hex) of the parts in order: an array's C-ordered bytes in its own dtype, a string's UTF-8."""
    h = hashlib.sha256()
    for part in parts:
        h.update(part.encode() if isinstance(part, str) else np.ascontiguousarray(part).tobytes())
    return h.hexdigest()


def dataset_fingerprint(ds: Any) -> dict[str, Any]:
    """A labelled data set (a ``NoisyDataset``) as a run records it: sizes, names, release and one hash.

    The hash covers the values, error bars and labels in their own dtypes and the source ids.
    """
    return {
        "n_samples": ds.n_samples,
        "feature_names": list(ds.feature_names),
        "class_names": list(ds.class_names),
        "sha256": digest(ds.X, ds.X_var, ds.y, "\n".join(ds.ids)),
        "release": ds.meta.get("release"),
    }


def dataset_hashes(ds: Any, labels: bool) -> dict[str, Any]:
    """A data set as an active-learning checkpoint records it: its size, a hash of its ids, one of its values.

    The values are hashed as float64 (and the labels, when ``labels``, as int64), so a pool
    without labels can be fingerprinted too.
    """
    values = [np.asarray(ds.X, dtype=np.float64), np.asarray(ds.X_var, dtype=np.float64)]
    if labels:
        values.append(np.asarray(ds.y, dtype=np.int64))
    return {"n": ds.n_samples, "ids_sha256": digest("\n".join(ds.ids.tolist())), "values_sha256": digest(*values)}


def differences(old: Any, new: Any, prefix: str = "") -> list[str]:
    """Every leaf where two identities differ, as ``dotted.key: old -> new`` (a missing key reads None)."""
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        return [d for k in sorted(set(old) | set(new), key=str) for d in differences(old.get(k), new.get(k), f"{prefix}{k}.")]
    return [] if old == new else [f"{prefix.rstrip('.')}: {old!r} -> {new!r}"]


class DifferentRun(ValueError):
    """A folder or checkpoint holds another run than the one asked for."""


def check_same_run(
    stored: Any, current: Any, where: str, remedy: str, error: type[Exception] = DifferentRun
) -> None:
    """Refuse to go on where ``stored`` (what a run recorded) differs from ``current``, naming the differences.

    Raises ``error("{where}: it holds a different run (a.b: old -> new; ...). {remedy}")``
    with up to eight differences.
    """
    found = differences(stored, current)
    if found:
        raise error(f"{where}: it holds a different run ({'; '.join(found[:8])}). {remedy}")


@functools.cache
def source_commit() -> str:
    """The commit of the gpal source that ran (``+dirty`` when it has uncommitted changes), or 'unknown'.

    A recorded result names it so that a number can be traced to the code that produced it. Read once a process:
    the code a process runs is the code it imported, so a commit made while a long run works does not rename it
    (a workflow asks when it starts).
    """
    here = Path(__file__).resolve().parent
    try:
        head = subprocess.run(["git", "rev-parse", "--short=10", "HEAD"], cwd=here, capture_output=True, text=True,
                              check=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=here,
                               capture_output=True, text=True, check=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return head + ("+dirty" if dirty else "")

"""Class specifications: which catalog classes a job uses, and which it merges into one.

A spec reads ``bll,fsrq,pulsar=psr+msp``: three classes, the last merging the
catalog's ``psr`` and ``msp`` codes. The default merge joins young and millisecond
pulsars, as the main job does.
"""

from __future__ import annotations

import types
from typing import Any, Mapping, Sequence

import numpy as np

__all__ = ["DEFAULT_MERGE", "UNASSOCIATED", "class1_codes", "format_class_spec", "merge_for", "parse_class_spec",
           "source_groups"]


#: The classes of the main job: blazars of both kinds and pulsars (young and millisecond together).
DEFAULT_MERGE = types.MappingProxyType({"pulsar": ("psr", "msp")})


# ------------------------------------------------------------------ class spec
def parse_class_spec(spec: str) -> tuple[tuple[str, ...], dict[str, tuple[str, ...]]]:
    """``"bll,fsrq,pulsar=psr+msp"`` -> ``(("bll", "fsrq", "pulsar"), {"pulsar": ("psr", "msp")})``.

    Comma-separated classes; a class is a CLASS1 code, or ``name=code+code`` to merge
    codes into one class.  Codes are checked against the catalog when it is used.
    """
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError("the class spec is empty; expected e.g. 'bll,fsrq,pulsar=psr+msp'")
    classes: list[str] = []
    merge: dict[str, tuple[str, ...]] = {}
    for item in (part.strip() for part in spec.split(",")):
        name, eq, codes = item.partition("=")
        name = name.strip()
        members = tuple(c.strip().lower() for c in codes.split("+")) if eq else ()
        if not name or (eq and not all(members)) or any(ch in name for ch in "+ "):
            raise ValueError(
                f"bad class {item!r} in class spec {spec!r}: expected CODE or NAME=CODE+CODE "
                "(e.g. 'bll,fsrq,pulsar=psr+msp')"
            )
        if name in classes:
            raise ValueError(f"class {name!r} appears twice in class spec {spec!r}")
        classes.append(name)
        if eq:
            merge[name] = members
    if len(classes) < 2:
        raise ValueError(f"a classifier needs at least two classes; class spec {spec!r} names {classes}")
    return tuple(classes), merge


def format_class_spec(classes: Sequence[str], merge: Mapping[str, Sequence[str]] | None = None) -> str:
    """Inverse of `parse_class_spec`."""
    merge = merge or {}
    return ",".join(f"{c}={'+'.join(merge[c])}" if c in merge else c for c in classes)


def merge_for(classes: Sequence[str], merge: Mapping[str, Sequence[str]] | None) -> dict[str, tuple[str, ...]]:
    """The merges to apply: the default one (also when ``merge`` is None) only where its class was chosen;
    any other as given (then checked).

    ``classes`` must be a list: a bare string such as ``"bll"`` would be read letter by letter.
    """
    if isinstance(classes, str):
        raise ValueError(
            f"classes must be a list of class names such as ['bll', 'fsrq', 'pulsar'], not the string {classes!r} "
            "(in a workflow file write classes: [bll, fsrq], or --set params.classes=[bll,fsrq])"
        )
    given = {str(k): (v,) if isinstance(v, str) else tuple(v) for k, v in (DEFAULT_MERGE if merge is None else merge).items()}
    if given == dict(DEFAULT_MERGE):  # also when a workflow passes the default as plain lists
        return {k: v for k, v in given.items() if k in classes}
    return given


def class1_codes(class1: Sequence[Any]) -> np.ndarray:
    """A table's CLASS1 values as codes: stripped, lower case (the catalogs write 'PSR' for an identified
    pulsar, 'psr' for an associated one, padded with blanks); '' where a source has none."""
    return np.char.lower(np.char.strip(np.asarray(class1, dtype=str)))


#: The group of the sources without a CLASS1 code.
UNASSOCIATED = "unassociated"


def source_groups(class1: Sequence[Any]) -> np.ndarray:
    """The group of each source: its CLASS1 code (`class1_codes`), `UNASSOCIATED` where it has none (empty, or
    missing: None or NaN, as a table read back may hold)."""
    raw = np.asarray(class1, dtype=object)
    missing = np.array([v is None or isinstance(v, float) and np.isnan(v) for v in raw], dtype=bool)
    codes = class1_codes(np.where(missing, "", raw))
    return np.where(codes == "", UNASSOCIATED, codes)

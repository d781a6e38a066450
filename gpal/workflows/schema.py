"""The small declarative schema that workflow YAML files are checked against.

A schema is a nested dict: a key maps to a `Field` (one value) or to another dict
(a section).  `validate` walks a parsed YAML document against it and returns the
complete configuration, defaults filled in, or raises `WorkflowError` naming the
file, the line, the dotted key and what would have been valid.  Nothing here
touches the disk beyond reading the YAML file, so a workflow is fully checked
before anything is written.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import yaml

__all__ = [
    "REQUIRED",
    "Field",
    "WorkflowError",
    "apply_overrides",
    "boolean",
    "choice",
    "identity",
    "integer",
    "list_of",
    "mapping",
    "mean_se_pair",
    "number",
    "optional",
    "read_yaml",
    "text",
    "validate",
]


class WorkflowError(ValueError):
    """A workflow file or override that does not fit the schema."""


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED = _Required()

Check = Callable[[Any], Any]  # returns the normalised value or raises ValueError(what was expected)


@dataclass(frozen=True)
class Field:
    """One value: how it is checked, its default, and a line of documentation.

    ``part_of_run=False`` marks a value that does not change what a unit computes
    (the number of splits or repetitions, a description): it is left out of the
    run's identity, so raising the splits resumes the same output folder (and adds
    units) instead of refusing it.
    """

    check: Check
    default: Any = REQUIRED
    doc: str = ""
    part_of_run: bool = True


Schema = Mapping[str, "Field | Schema"]


# ------------------------------------------------------------------ checkers
def integer(minimum: int | None = None) -> Check:
    def check(value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, numbers.Integral):
            raise ValueError(f"expected an integer{'' if minimum is None else f' >= {minimum}'}; got {value!r}")
        if minimum is not None and value < minimum:
            raise ValueError(f"expected an integer >= {minimum}; got {value!r}")
        return int(value)

    return check


def number(low: float | None = None, high: float | None = None, open_low: bool = False, open_high: bool = False) -> Check:
    lo = "" if low is None else f"{'>' if open_low else '>='} {low:g}"
    hi = "" if high is None else f"{'<' if open_high else '<='} {high:g}"
    want = "a number" + (f" {lo}" if lo else "") + (" and" if lo and hi else "") + (f" {hi}" if hi else "")

    def check(value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
            raise ValueError(f"expected {want}; got {value!r}")
        bad_low = low is not None and (value <= low if open_low else value < low)
        bad_high = high is not None and (value >= high if open_high else value > high)
        if bad_low or bad_high:
            raise ValueError(f"expected {want}; got {value!r}")
        return float(value)

    return check


def boolean(value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"expected true or false; got {value!r}")
    return value


def text(value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError(f"expected a non-empty string; got {value!r}")
    return value


def choice(options: Sequence[Any]) -> Check:
    options = list(options)

    def check(value: Any) -> Any:
        if isinstance(value, bool) or value not in options:
            raise ValueError(f"{value!r} is not valid; valid values are {options}")
        return value

    return check


def optional(inner: Check) -> Check:
    """``null`` or whatever ``inner`` accepts."""

    def check(value: Any) -> Any:
        if value is None:
            return None
        try:
            return inner(value)
        except ValueError as exc:
            raise ValueError(f"{exc} (or null)") from None

    return check


def list_of(inner: Check, min_length: int = 1, unique: bool = True) -> Check:
    def check(value: Any) -> list[Any]:
        if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
            raise ValueError(f"expected a list (e.g. [a, b]); got {value!r}")
        if len(value) < min_length:
            raise ValueError(f"expected a list of at least {min_length} item(s); got {list(value)!r}")
        items = []
        for k, item in enumerate(value):
            try:
                items.append(inner(item))
            except ValueError as exc:
                raise ValueError(f"item {k}: {exc}") from None
        if unique and len({repr(i) for i in items}) != len(items):
            raise ValueError(f"items must be distinct; got {items!r}")
        return items

    return check


def mean_se_pair(value: Any) -> list[float]:
    """A published result: ``[mean, standard error]``."""
    pair = list_of(number(), min_length=2, unique=False)(value)
    if len(pair) != 2:
        raise ValueError(f"expected [mean, standard error]; got {value!r}")
    return pair


def mapping(value_check: Check, key_check: Check = text) -> Check:
    """A free-form mapping (names chosen by the user) whose values ``value_check`` accepts."""

    def check(value: Any) -> dict[str, Any]:
        if not isinstance(value, Mapping):
            raise ValueError(f"expected a mapping (key: value); got {value!r}")
        out = {}
        for k, v in value.items():
            key = key_check(k)
            try:
                out[key] = value_check(v)
            except ValueError as exc:
                raise ValueError(f"entry {k!r}: {exc}") from None
        return out

    return check


# --------------------------------------------------------------------- YAML
@dataclass
class Document:
    """A parsed YAML file: its plain data and the line of every dotted key (for messages)."""

    path: Path
    data: Any
    lines: dict[str, int] = field(default_factory=dict)

    def where(self, dotted: str) -> str:
        line = self.lines.get(dotted)
        return f"{self.path}:{line}" if line else f"{self.path}"


def _refuse_aliases(source: str, where: str) -> None:
    """Refuse YAML anchors and aliases before anything is built from them.

    An alias repeats a node; nested ones expand exponentially (a ~300-byte file can
    stand for billions of values), and copying or validating that hangs. A workflow
    file is short enough to write its values out, so aliases are refused outright,
    from the event stream, which costs one pass over the text.
    """
    for event in yaml.parse(source, Loader=yaml.SafeLoader):
        anchor = getattr(event, "anchor", None)
        if isinstance(event, yaml.AliasEvent) or anchor is not None:
            mark = event.start_mark
            raise WorkflowError(
                f"{where}:{mark.line + 1}:{mark.column + 1}: YAML anchors and aliases (&{anchor} / *{anchor}) are "
                "not accepted in workflow files; write the values out"
            )


def _key_lines(node: Any, prefix: str, lines: dict[str, int], where: str) -> None:
    """Record the line of every dotted key, refusing a key given twice in one mapping (YAML would keep the last)."""
    if isinstance(node, yaml.MappingNode):
        seen: dict[str, int] = {}
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode):
                line = key.start_mark.line + 1
                if key.value in seen:
                    raise WorkflowError(
                        f"{where}:{line}: key {prefix}{key.value} is given twice (first at line {seen[key.value]}); "
                        "keep one"
                    )
                seen[key.value] = line
                dotted = f"{prefix}{key.value}"
                lines[dotted] = line
                _key_lines(value, dotted + ".", lines, where)
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            _key_lines(item, prefix, {}, where)  # mappings inside lists: duplicates only, no dotted lines


def read_yaml(path: str | Path) -> Document:
    """Parse ``path`` with the safe loader; syntax errors name the file and line."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"workflow file {path} does not exist")
    raw = path.read_bytes()
    try:
        source = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise WorkflowError(f"{path}:{line}: not UTF-8 text (byte {raw[exc.start]:#04x}); save the workflow file as UTF-8") from None
    try:
        _refuse_aliases(source, str(path))
        lines: dict[str, int] = {}
        _key_lines(yaml.compose(source, Loader=yaml.SafeLoader), "", lines, str(path))  # nodes only: nothing built
        data = yaml.safe_load(source)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
        problem = getattr(exc, "problem", None) or str(exc)
        raise WorkflowError(f"{where}: invalid YAML: {problem}") from None
    if not isinstance(data, dict):
        raise WorkflowError(f"{path}: a workflow file must be a mapping of keys (workflow: ..., ...); got {type(data).__name__}")
    return Document(path, data, lines)


# ---------------------------------------------------------------- overrides
def apply_overrides(data: dict[str, Any], overrides: Sequence[str], schema: Schema, source: str) -> dict[str, Any]:
    """Return a copy of ``data`` with each ``"dotted.key=VALUE"`` set (VALUE parsed as YAML).

    Every key must exist in ``schema`` (a value present in the schema but not in the
    file is fine: it replaces the default); an unknown key lists the valid keys at
    its level.
    """
    if isinstance(overrides, str):
        raise TypeError(f"overrides must be a list of KEY=VALUE strings; got the string {overrides!r}")
    data = _deep_copy(data)
    for item in overrides:
        if not isinstance(item, str) or "=" not in item:
            raise WorkflowError(f"override {item!r} must look like KEY=VALUE (e.g. protocol.splits=2)")
        key, raw = item.split("=", 1)
        parts = key.strip().split(".")
        if not all(parts):
            raise WorkflowError(f"override {item!r}: the key {key!r} is not a dotted key like training.epochs")
        try:
            _refuse_aliases(raw, f"override {item!r}")
            _key_lines(yaml.compose(raw, Loader=yaml.SafeLoader), "", {}, f"override {item!r}")
            value = yaml.safe_load(raw) if raw.strip() else None
        except yaml.YAMLError as exc:
            raise WorkflowError(f"override {item!r}: the value is not valid YAML ({getattr(exc, 'problem', exc)})") from None
        level: Any = schema
        target = data
        for depth, part in enumerate(parts):
            here = ".".join(parts[:depth]) or "top level"
            if not isinstance(level, Mapping):
                raise WorkflowError(
                    f"override {item!r}: {'.'.join(parts[:depth])} is a single value, not a section; set it whole"
                )
            if part not in level:
                raise WorkflowError(
                    f"override {item!r}: unknown key {'.'.join(parts[:depth + 1])!r} ({source}); "
                    f"valid keys at {here}: {sorted(level)}"
                )
            level = level[part]
            if depth == len(parts) - 1:
                merge = isinstance(level, Mapping) and isinstance(value, dict) and isinstance(target.get(part), dict)
                target[part] = _merged(target[part], value) if merge else value
            else:
                if not isinstance(target.get(part), dict):
                    target[part] = {}
                target = target[part]
    return data


def _merged(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """A section set whole on the command line keeps the file's keys it does not mention."""
    out = dict(old)
    for k, v in new.items():
        out[k] = _merged(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def _deep_copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _deep_copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_deep_copy(v) for v in value]
    return value


# --------------------------------------------------------------- validation
def validate(data: Any, schema: Schema, doc: Document, prefix: str = "") -> dict[str, Any]:
    """The complete configuration: every key of ``schema``, checked, defaults filled in."""
    here = prefix.rstrip(".") or "top level"
    if not isinstance(data, Mapping):
        raise WorkflowError(f"{doc.where(prefix.rstrip('.'))}: {here} must be a mapping of keys {sorted(schema)}; got {data!r}")
    unknown = [k for k in data if k not in schema]
    if unknown:
        key = f"{prefix}{unknown[0]}"
        raise WorkflowError(f"{doc.where(key)}: unknown key {key!r}; valid keys at {here}: {sorted(schema)}")
    out: dict[str, Any] = {}
    for key, spec in schema.items():
        dotted = f"{prefix}{key}"
        if isinstance(spec, Mapping):
            out[key] = validate(data.get(key) or {}, spec, doc, dotted + ".")
            continue
        if key not in data:
            if spec.default is REQUIRED:
                raise WorkflowError(f"{doc.where(prefix.rstrip('.'))}: missing required key {dotted!r} ({spec.doc})")
            out[key] = _deep_copy(spec.default)
            continue
        try:
            out[key] = spec.check(data[key])
        except ValueError as exc:
            raise WorkflowError(f"{doc.where(dotted)}: {dotted}: {exc}") from None
    return out


def identity(config: Mapping[str, Any], schema: Schema) -> dict[str, Any]:
    """``config`` without the values marked ``part_of_run=False``: what decides the units' results."""
    out = {}
    for key, value in config.items():
        spec = schema.get(key)
        if isinstance(spec, Mapping):
            out[key] = identity(value, spec)
        elif not (isinstance(spec, Field) and not spec.part_of_run):
            out[key] = value
    return out

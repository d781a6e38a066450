"""The small declarative schema that workflow YAML files are checked against.

A schema is a nested dict: a key maps to a `Field` (one value) or to another dict
(a section).  A field's rule is a `gpal.constraints.Constraint`, the vocabulary the
estimators' parameters and the library's functions are checked with.  `validate` walks a
parsed YAML document against the schema and returns the complete configuration,
defaults filled in, or raises `WorkflowError` naming the file, the line, the dotted key,
what was expected and what was given.  Nothing here touches the disk beyond reading the
YAML file, so a workflow is fully checked before anything is written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import yaml

from gpal.constraints import Constraint, Integer
from gpal.files import MAX_DEPTH, nesting_depth

__all__ = [
    "REQUIRED",
    "Field",
    "WorkflowError",
    "apply_overrides",
    "fields_from_settings",
    "fill_settings",
    "identity",
    "read_yaml",
    "validate",
]


class WorkflowError(ValueError):
    """A workflow file or override that does not fit the schema.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from gpal.workflows import WorkflowError, load_workflow
    >>> path = Path(tempfile.mkdtemp()) / "bad.yaml"
    >>> _ = path.write_text("workflow: toy_1d\\ntraining: {epochs: -1}\\n")
    >>> load_workflow(path)
    Traceback (most recent call last):
        ...
    gpal.workflows.schema.WorkflowError: .../bad.yaml:2: training.epochs must be an integer >= 0 and <= 1000000; got -1
    """


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED = _Required()


@dataclass(frozen=True)
class Field:
    """One value: the constraint it must meet, its default, and a line of documentation.

    ``part_of_run=False`` marks a value that does not change what a unit computes
    (the number of splits or repetitions, a description): it is left out of the
    run's identity, so raising the splits resumes the same output folder (and adds
    units) instead of refusing it.
    """

    constraint: Constraint
    default: Any = REQUIRED
    doc: str = ""
    part_of_run: bool = True

    def bounded(self) -> Constraint:
        """The constraint with gpal's ceiling on counts: an integer without a maximum of its own is at most
        `MAX_COUNT`, and `MAX_UNITS` where it counts units (splits, repetitions: ``part_of_run=False``), so a
        typo of a few zeros is refused at once rather than run for months or out of memory."""
        c = self.constraint
        if isinstance(c, Integer) and c.maximum is None:
            return Integer(c.minimum, MAX_COUNT if self.part_of_run else MAX_UNITS)
        return c


#: The most any count in a workflow file may be (sizes, epochs, queries), and the most units a run may have.
MAX_COUNT = 10**6
MAX_UNITS = 1000


Schema = Mapping[str, "Field | Schema"]


def yaml_form(value: Any) -> Any:
    """A default as a YAML file would write it (tuples as lists, mapping proxies as dicts)."""
    if isinstance(value, Mapping):
        return {k: yaml_form(v) for k, v in value.items()}
    if isinstance(value, Sequence) and not isinstance(value, str):
        return [yaml_form(v) for v in value]
    return value


def fields_from_settings(settings: Mapping[str, Any], **defaults: Any) -> dict[str, Field]:
    """Workflow fields from declared settings (`gpal.estimators.settings.Setting`: constraint, default, meaning).

    ``defaults`` replace a setting's own default; the constraint and the meaning stay the declaration's,
    so a workflow never restates what the estimator or the selection declares.
    """
    unknown = sorted(set(defaults) - set(settings))
    if unknown:
        raise TypeError(f"defaults for {unknown}, which are not among the settings {list(settings)}")
    return {name: Field(s.constraint, yaml_form(defaults.get(name, s.default)), s.doc) for name, s in settings.items()}


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


def _refuse_deep_nesting(source: str, where: str) -> None:
    """Refuse lists or mappings nested past `gpal.files.MAX_DEPTH` before the parser meets them."""
    depth = nesting_depth(source)
    if depth > MAX_DEPTH:
        raise WorkflowError(f"{where}: lists or mappings nest {depth} levels deep (at most {MAX_DEPTH})")


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
    _refuse_deep_nesting(source, str(path))
    try:
        _refuse_aliases(source, str(path))
        lines: dict[str, int] = {}
        _key_lines(yaml.compose(source, Loader=yaml.SafeLoader), "", lines, str(path))  # nodes only: nothing built
        data = yaml.safe_load(source)
    except RecursionError:
        raise WorkflowError(f"{path}: invalid YAML: lists or mappings nested thousands deep") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
        problem = getattr(exc, "problem", None) or str(exc)
        raise WorkflowError(f"{where}: invalid YAML: {problem}") from None
    if not isinstance(data, dict):
        raise WorkflowError(f"{path}: a workflow file must be a mapping of keys (workflow: ..., ...); got {type(data).__name__}")
    return Document(path, data, lines)


# ---------------------------------------------------------------- overrides
def parse_value(raw: str, where: str) -> Any:
    """A value written as YAML (an override, a command-line option) read as a workflow file is: no aliases,
    no key twice, no nesting past Python's; a WorkflowError (a ValueError) naming ``where`` otherwise."""
    _refuse_deep_nesting(raw, where)
    try:
        _refuse_aliases(raw, where)
        _key_lines(yaml.compose(raw, Loader=yaml.SafeLoader), "", {}, where)
        return yaml.safe_load(raw) if raw.strip() else None
    except RecursionError:
        raise WorkflowError(f"{where}: the value nests lists or mappings thousands deep") from None
    except yaml.YAMLError as exc:
        problem = " ".join(str(getattr(exc, "problem", None) or exc).split())
        raise WorkflowError(f"{where}: the value is not valid YAML ({problem})") from None


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
        value = parse_value(raw, f"override {item!r}")
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
            out[key] = spec.bounded().check(dotted, data[key])
        except ValueError as exc:  # InvalidParameter, or a parser's own ValueError
            raise WorkflowError(f"{doc.where(dotted)}: {exc}") from None
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


_PLACEHOLDER = re.compile(r"\{([A-Za-z_][\w]*(?:\.[A-Za-z_][\w]*)+)\}")


def fill_settings(text: str, config: Mapping[str, Any], where: str) -> str:
    """``text`` with each ``{section.key}`` replaced by that setting's value in ``config`` (overrides included).

    A report's words then state the run's own settings: a description that writes
    ``{training.epochs} epochs`` says 20 for a run given ``--set training.epochs=20``.  A
    placeholder that names no setting is a `WorkflowError` naming it.
    """
    def value(match: re.Match) -> str:
        node: Any = config
        for part in match.group(1).split("."):
            if not isinstance(node, Mapping) or part not in node:
                raise WorkflowError(f"{where}: {{{match.group(1)}}} names no setting of this workflow; write "
                                    "{section.key} of a key the file or its defaults have, e.g. {training.epochs}")
            node = node[part]
        return str(node)

    return _PLACEHOLDER.sub(value, text)

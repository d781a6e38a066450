"""The settings vocabulary: what an estimator declares, as the CLI, the workflows and the docs read it.

A `Setting` is a constraint, a default and a line of meaning. An estimator declares one
`gpal.constraints` constraint per constructor argument (``_parameters``) and documents each
under "Parameters" in its docstring; `estimator_settings` joins the two with the
estimator's values, so a parameter added to an estimator reaches the command line
(`gpal.cli`), the workflow files (`gpal.workflows.methods`, the ``classify`` and
``follow_up`` kinds) and their documentation without an edit anywhere else.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass
from typing import Any, Sequence

from gpal.constraints import Constraint

__all__ = ["JOB_OWNED", "Setting", "estimator_settings", "parameter_docs"]


@dataclass(frozen=True)
class Setting:
    """One value a caller may set: the constraint it must meet, its default, a line of documentation."""

    constraint: Constraint
    default: Any
    doc: str


#: Parameters the caller sets itself rather than offering them: the seed (a job's or a unit's ``seed``),
#: the progress bar (its ``progress``) and warm starts (a job fits once; the active-learning loop
#: warm-starts its refits).
JOB_OWNED = ("random_state", "progress", "warm_start")


def estimator_settings(estimator: Any, names: Sequence[str] | None = None) -> dict[str, Setting]:
    """Every parameter ``estimator`` declares but `JOB_OWNED` (or those in ``names``), its value there the default."""
    values = estimator.get_params(deep=False)
    docs = parameter_docs(type(estimator))
    declared = type(estimator)._parameters
    unknown = sorted(set(names or ()) - set(declared))
    if unknown:
        raise TypeError(f"{type(estimator).__name__} declares no parameter {unknown}; it declares {list(declared)}")
    chosen = [n for n in declared if n not in JOB_OWNED] if names is None else list(names)
    return {name: Setting(declared[name], values[name], docs.get(name, "")) for name in chosen}


_ENTRY = re.compile(r"^(\w+(?:, \w+)*)(?: : (.*))?$")
_CHOICE_LIST = re.compile(r'^(?:"\w+" \| )+"\w+"\s*')
_SENTENCE_END = re.compile(r"\.\s+(?=[A-Z(])")


def parameter_docs(cls: type) -> dict[str, str]:
    """Parameter name -> the first sentence of its entry under "Parameters" in ``cls``'s docstring.

    Entries read ``name`` or ``a, b`` (NumPy style), or ``name : "x" | "y"`` with the choices, each followed by
    its indented description; the list of quoted choices is dropped (a command line lists them itself).
    A parameter without an entry is left out.
    """
    lines = (inspect.getdoc(cls) or "").splitlines()
    if "Parameters" not in lines:
        return {}
    texts: dict[tuple[str, ...], list[str]] = {}
    current: list[str] | None = None
    start = lines.index("Parameters") + 2
    for number, line in enumerate(lines[start:], start):
        if lines[number + 1:number + 2] and set(lines[number + 1].strip()) == {"-"}:
            break  # the next section's title
        entry = _ENTRY.match(line)
        if entry:
            current = texts.setdefault(tuple(entry.group(1).split(", ")), [entry.group(2) or ""])
        elif line.startswith(" ") and current is not None:
            current.append(line.strip())
        elif line.strip():
            break  # the section ends at the first unindented line that is not an entry
    docs = {}
    for names, parts in texts.items():
        text = _CHOICE_LIST.sub("", " ".join(p for p in parts if p).replace("``", ""))
        docs.update(dict.fromkeys(names, _SENTENCE_END.split(text, maxsplit=1)[0].rstrip(".")))
    return docs

"""Settings a command or a workflow may change, declared once; and the main job's estimator.

A `Setting` is a constraint, a default and a line of meaning: the CLI generates an option
and the ``classify`` workflow a key from each, so neither lists the settings itself.  A
catalog job takes its estimator as an object and never names one of its parameters; a
parameter added to the estimator reaches the command line and the workflow files without
an edit here: `estimator_settings` lists what an estimator declares (``_parameters``: one
`gpal.constraints` constraint per constructor argument) with its value and the words of
the class docstring that document it.
"""

from __future__ import annotations

import inspect
import re
import types
from dataclasses import dataclass
from typing import Any

from gpal.constraints import Constraint
from gpal.estimators.noisy_gp import NoisyGPClassifier

__all__ = ["JOB_OWNED", "MAIN_JOB_ESTIMATOR", "Setting", "estimator_settings", "main_job_estimator"]


@dataclass(frozen=True)
class Setting:
    """One value a caller may set: the constraint it must meet, its default, a line of documentation."""

    constraint: Constraint
    default: Any
    doc: str


#: The main job's estimator (``gpal classify``, ``gpal train``, the ``classify`` workflow) where it differs
#: from NoisyGPClassifier's defaults: NIMGP with the population prior over the noiseless inputs, chosen by
#: the error-bar study (docs/results.md, issue 22).
MAIN_JOB_ESTIMATOR = types.MappingProxyType(
    {"input_noise": "latent", "input_prior": "population", "epochs": 300, "num_inducing": 50, "batch_size": 200})

#: Parameters a job sets itself rather than offering them: the seed (its ``seed``), the progress bar
#: (its ``progress``) and warm starts (a job fits once; the active-learning loop warm-starts its refits).
JOB_OWNED = ("random_state", "progress", "warm_start")


def main_job_estimator(**params: Any) -> NoisyGPClassifier:
    """The main job's NoisyGPClassifier, ``params`` replacing its settings."""
    return NoisyGPClassifier(**{**MAIN_JOB_ESTIMATOR, **params})


def estimator_settings(estimator: Any) -> dict[str, Setting]:
    """Every parameter ``estimator`` declares but `JOB_OWNED`, with its value there as the default."""
    values = estimator.get_params(deep=False)
    docs = parameter_docs(type(estimator))
    return {name: Setting(constraint, values[name], docs.get(name, ""))
            for name, constraint in type(estimator)._parameters.items() if name not in JOB_OWNED}


_ENTRY = re.compile(r"^(\w+(?:, \w+)*) : (.*)$")
_CHOICE_LIST = re.compile(r'^(?:"\w+" \| )+"\w+"\s*')
_SENTENCE_END = re.compile(r"\.\s+(?=[A-Z(])")


def parameter_docs(cls: type) -> dict[str, str]:
    """Parameter name -> the first sentence of its entry under "Parameters" in ``cls``'s docstring.

    Entries read ``name : text`` or ``a, b : text`` (NumPy style) with indented continuation
    lines; a leading list of quoted choices is dropped (a command line lists them itself).
    A parameter without an entry is left out.
    """
    lines = (inspect.getdoc(cls) or "").splitlines()
    if "Parameters" not in lines:
        return {}
    texts: dict[tuple[str, ...], list[str]] = {}
    current: list[str] | None = None
    for line in lines[lines.index("Parameters") + 2:]:
        entry = _ENTRY.match(line)
        if entry:
            current = texts.setdefault(tuple(entry.group(1).split(", ")), [entry.group(2)])
        elif line.startswith(" ") and current is not None:
            current.append(line.strip())
        elif line.strip():
            break  # the section ends at the first unindented line that is not an entry
    docs = {}
    for names, parts in texts.items():
        text = _CHOICE_LIST.sub("", " ".join(p for p in parts if p).replace("``", ""))
        docs.update(dict.fromkeys(names, _SENTENCE_END.split(text, maxsplit=1)[0].rstrip(".")))
    return docs

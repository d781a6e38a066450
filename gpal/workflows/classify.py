"""Workflow kind ``classify``: the main job, `gpal.catalog_jobs.classify.classify_catalog`, from a YAML file.

The ``params`` block holds classify_catalog's keyword arguments; its valid keys and
defaults are read from the function's signature, so the workflow file and the
library cannot drift apart.  classify_catalog claims and writes its output folder
itself (model, probability table, figures, ``report.md``), with the same
resume / refuse / ``force`` rules as every workflow.
"""

from __future__ import annotations

import inspect
import numbers
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from gpal.runs.executors import Executor
from gpal.constraints import Boolean, Constraint, Integer, Real, Satisfies
from gpal.workflows.schema import Field

__all__ = ["CLAIMS_OUTPUT_DIR", "run", "schema"]

CLAIMS_OUTPUT_DIR = True
#: classify_catalog arguments a workflow does not set in ``params``: the runner passes them.
_PASSED = ("out_dir", "seed", "force", "progress", "executor")


def _loose(default: Any) -> Constraint:
    """A constraint in the spirit of the default's type; classify_catalog validates the values themselves."""
    if isinstance(default, bool):
        return Boolean()
    if isinstance(default, numbers.Integral):
        return Integer()
    if isinstance(default, numbers.Real):
        return Real()
    if isinstance(default, str):
        return Satisfies(lambda v: isinstance(v, (str, list)), f"a string or a list (default {default!r})")
    if isinstance(default, Sequence):
        return Satisfies(lambda v: isinstance(v, (list, str)), f"a list or a string (default {list(default)!r})")
    if isinstance(default, Mapping):
        return Satisfies(lambda v: isinstance(v, (dict, type(None))), f"a mapping or None (default {dict(default)!r})")
    return Satisfies(lambda v: True, "anything")


def _plain(value: Any) -> Any:
    """The default as a plain YAML-like value (tuples become lists, mapping proxies dicts)."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, Sequence) and not isinstance(value, str):
        return [_plain(v) for v in value]
    return value


def schema() -> dict[str, Any]:
    from gpal.catalog_jobs.classify import classify_catalog

    params = {}
    for name, p in inspect.signature(classify_catalog).parameters.items():
        if name in _PASSED or p.kind not in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD):
            continue
        params[name] = Field(_loose(p.default), _plain(p.default), f"classify_catalog's {name} (default {p.default!r})")
    return {"params": params}


def run(config: dict[str, Any], out: Path, executor: Executor, progress: bool, force: bool = False) -> None:
    from gpal.catalog_jobs.classify import classify_catalog

    classify_catalog(out, **config["params"], seed=config["seed"], force=force, progress=progress, executor=executor)

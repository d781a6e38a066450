"""docs/architecture.md stays true: every module it names exists, and every module is named."""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path

import pytest

import gpal
from gpal.registry import ACQUISITIONS, ESTIMATORS, INPUT_NOISE, LIKELIHOODS

DOC = (Path(__file__).parents[1] / "docs" / "architecture.md").read_text(encoding="utf-8")


def _named_modules() -> set[str]:
    names = set(re.findall(r"`(gpal(?:\.\w+)+)`", DOC))
    # "`gpal.workflows.toy`, `synthetic`, ..." names siblings by their last part
    for row in re.findall(r"\| `(gpal\.workflows\.\w+)`((?:, `\w+`)+)", DOC):
        names |= {f"gpal.workflows.{short}" for short in re.findall(r"`(\w+)`", row[1])}
    return {n for n in names if not n.rsplit(".", 1)[-1][0].isupper() and "_PARAMETERS" not in n}


def _modules_of(name: str) -> str:
    """A dotted name may end in an attribute (gpal.estimators.base.RENAMED...): its module part."""
    parts = name.split(".")
    for end in range(len(parts), 0, -1):
        try:
            importlib.import_module(".".join(parts[:end]))
            return ".".join(parts[:end])
        except ModuleNotFoundError:
            continue
    raise AssertionError(f"{name} names no module")


@pytest.mark.parametrize("name", sorted(_named_modules()))
def test_named_module_imports(name):
    _modules_of(name)


def test_every_module_is_in_the_map():
    found = {m.name for m in pkgutil.walk_packages(gpal.__path__, "gpal.") if not m.ispkg}
    named = _named_modules()
    missing = sorted(found - named)
    assert not missing, f"modules missing from docs/architecture.md: {missing}"


def test_registries_resolve():
    for registry in (ESTIMATORS, LIKELIHOODS, INPUT_NOISE, ACQUISITIONS):
        for name in registry.names():
            assert isinstance(registry[name], type), (registry.what, name)


def _imported_gpal_modules(path: Path) -> set[str]:
    """Every gpal module a file imports, at the top or inside a function."""
    import ast

    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
    return {n for n in names if n.startswith("gpal.")}


def test_models_do_not_depend_on_the_layers_above_them():
    """The model layer holds maths only: training, estimators and everything later import it, never the reverse."""
    above = ("gpal.training", "gpal.estimators", "gpal.active", "gpal.evaluation", "gpal.runs",
             "gpal.catalog_jobs", "gpal.workflows", "gpal.cli")
    offenders = {
        str(path.relative_to(Path(gpal.__file__).parent)): sorted(m for m in _imported_gpal_modules(path) if m.startswith(above))
        for path in (Path(gpal.__file__).parent / "models").rglob("*.py")
    }
    assert not {k: v for k, v in offenders.items() if v}

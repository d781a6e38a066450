"""The lab (studies, page generators, maintainers' tools, the asv suite and their tests) uses gpal's public API only.

Public means a module without a ``_`` in its dotted name, and a name in that module's ``__all__`` (the API reference
is generated from the ``__all__`` of the public packages, docs/conf.py) or one of its submodules.  The lab is found
wherever it lives, ``lab/`` or the older ``workflows/``, and a test is the lab's when it imports a lab script or
``labkit``, or loads a lab script by its path.  Everything is read with ``ast``: nothing of gpal is imported.
"""

from __future__ import annotations

import ast
import re
from functools import lru_cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: The folders of the repository that are the lab (``workflows/`` holds it until it moves to ``lab/``; the asv suite).
LAB_FOLDERS = ("lab", "workflows", "benchmarks")


def lab_scripts(root: Path = ROOT) -> list[Path]:
    return sorted(p for folder in LAB_FOLDERS for p in (root / folder).rglob("*.py"))


def lab_tests(root: Path = ROOT) -> list[Path]:
    """The tests of ``tests/`` that load the lab: by a lab script's bare name, ``labkit``, or a lab script's path."""
    # a test's own neighbours (the lab's tests, their conftest) are not scripts a library test could load
    names = {p.stem for p in lab_scripts(root) if "tests" not in p.relative_to(root).parts[:2]} - {"__init__",
                                                                                                   "conftest"}
    names |= {"labkit"}
    by_path = re.compile(r"""["'](?:%s)/[\w/]+\.py["']""" % "|".join(LAB_FOLDERS))
    found = []
    for path in sorted((root / "tests").rglob("*.py")):
        if path.resolve() == Path(__file__).resolve():  # this file names lab paths in its examples only
            continue
        source = path.read_text(encoding="utf-8")
        imported = set()
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Import):
                imported |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                imported.add(node.module.split(".")[0])
        if imported & names or by_path.search(source):
            found.append(path)
    return found


def _module_file(module: str, root: Path) -> Path | None:
    base = root.joinpath(*module.split("."))
    for path in (base / "__init__.py", base.with_suffix(".py")):
        if path.is_file():
            return path
    return None


@lru_cache(maxsize=None)
def public_names(module: str, root: Path = ROOT) -> frozenset[str]:
    """The names in ``module``'s ``__all__`` (empty without one), read from its source.

    ``*other.__all__`` inside it is another module's list (`gpal.active`), ``*_LAZY`` a dict's keys (`gpal`).
    """
    tree = ast.parse(_module_file(module, root).read_text(encoding="utf-8"))
    bound, literals = {}, {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            bound.update({alias.asname or alias.name: f"{node.module}.{alias.name}" for alias in node.names})
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            literals[node.targets[0].id] = node.value
    value = literals.get("__all__")
    if value is None:
        return frozenset()
    names = set()
    for element in value.elts:
        if isinstance(element, ast.Constant):
            names.add(element.value)
        elif isinstance(element, ast.Starred) and isinstance(element.value, ast.Attribute):
            names |= public_names(bound[element.value.value.id], root)
        elif isinstance(element, ast.Starred) and isinstance(element.value, ast.Name):
            names |= {key.value for key in literals[element.value.id].keys}
    return frozenset(names)


def _private(module: str) -> bool:
    return any(part.startswith("_") for part in module.split("."))


def _is_module(name: str, root: Path) -> bool:
    return _module_file(name, root) is not None


def _check_name(module: str, name: str, root: Path) -> str | None:
    """Why ``module.name`` is not public API, or None when it is."""
    if _private(module):
        return f"{module} is a private module"
    if _is_module(f"{module}.{name}", root):
        return f"{module}.{name} is a private module" if name.startswith("_") else None
    if _module_file(module, root) is None:
        return f"{module} is no module of gpal"
    if name not in public_names(module, root) and not (name.startswith("__") and name.endswith("__")):  # __version__
        return f"{name} is not in {module}'s __all__"
    return None


def _dotted(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value)
        return None if head is None else f"{head}.{node.attr}"
    return None


def non_public_uses(source: str, where: str, root: Path = ROOT) -> list[str]:
    """``where:line name (why)`` for every gpal name ``source`` imports or reaches outside the public API.

    Covers ``from gpal.x import y``, ``import gpal.x [as m]``, a module bound by either and then used as ``m.attr``,
    and ``import_module("gpal.x")`` of a literal name.
    """
    tree = ast.parse(source)
    modules: dict[str, str] = {}  # a name bound to a gpal module -> that module
    found: dict[tuple[int, str], str] = {}

    def report(line: int, module: str, name: str | None) -> None:
        why = f"{module} is a private module" if name is None and _private(module) else (
            None if name is None else _check_name(module, name, root))
        if why:
            found.setdefault((line, module if name is None else f"{module}.{name}"), why)

    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").split(".")[0] == "gpal":
            for alias in node.names:
                report(node.lineno, node.module, alias.name)
                if _is_module(f"{node.module}.{alias.name}", root):
                    modules[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "gpal":
                    report(node.lineno, alias.name, None)
                    if alias.asname:
                        modules[alias.asname] = alias.name
                    else:
                        modules["gpal"] = "gpal"
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None))
              in ("import_module", "__import__") and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str) and node.args[0].value.split(".")[0] == "gpal"):
            report(node.lineno, node.args[0].value, None)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        dotted = _dotted(node)
        if dotted is None or dotted.split(".")[0] not in modules:
            continue
        parts = (modules[dotted.split(".")[0]] + dotted[len(dotted.split(".")[0]):]).split(".")
        # the longest module prefix, then the one name used from it
        for end in range(len(parts) - 1, 0, -1):
            if _is_module(".".join(parts[:end]), root):
                report(node.lineno, ".".join(parts[:end]), parts[end])
                break
    return [f"{where}:{line} {name} ({why})" for (line, name), why in sorted(found.items())]


def test_the_lab_imports_only_gpals_public_api():
    files = lab_scripts() + lab_tests()
    assert any("studies" in p.parts for p in files), "no lab found beside the package: LAB_FOLDERS is out of date"
    offenders = [hit for path in files
                 for hit in non_public_uses(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))]
    assert not offenders, ("the lab uses gpal names outside its public API; make the name public with a docstring "
                           "that says why a user calls it, or stop the lab needing it:\n" + "\n".join(offenders))


@pytest.mark.parametrize(("source", "caught"), [
    ("from gpal.catalogs.catalog import Catalog", []),
    ("from gpal.catalogs.catalog import _fits_rows", ["m.py:1 gpal.catalogs.catalog._fits_rows"]),
    ("from gpal.active import BALD, ActiveLearningLoop", []),             # *acquisition.__all__ is expanded
    ("from gpal import NoisyGPClassifier, Standardizer", []),              # *_LAZY's keys
    ("from gpal.evaluation import metrics\nmetrics.error_rate\nmetrics._clip", ["m.py:3 gpal.evaluation.metrics._clip"]),
    ("def f():\n    import gpal.runs.repeated_splits as r\n    return r._read_json",
     ["m.py:3 gpal.runs.repeated_splits._read_json"]),
    ("import gpal.estimators.noisy_gp\ngpal.estimators.noisy_gp.NoisyGPClassifier", []),
    ("import gpal\ngpal.__version__", []),
    ("import gpal.estimators.noisy_gp\ngpal.estimators.noisy_gp._x", ["m.py:2 gpal.estimators.noisy_gp._x"]),
    ("importlib.import_module('gpal.models._private')", ["m.py:1 gpal.models._private"]),
    ("from numpy import _core\nimport shared\nshared._x", []),
])
def test_a_name_outside_the_public_api_is_caught(source, caught):
    assert [hit.split(" (")[0] for hit in non_public_uses(source, "m.py")] == caught


def test_the_lab_tests_are_found_by_what_they_load(tmp_path):
    (tmp_path / "lab" / "studies").mkdir(parents=True)
    (tmp_path / "lab" / "studies" / "shared.py").write_text("")
    (tmp_path / "tests").mkdir()
    for name, text in {"test_a.py": "from shared import x", "test_b.py": "s = repository_script('lab/studies/s.py')",
                       "test_c.py": "import labkit.claim_rules", "test_d.py": "from gpal import x"}.items():
        (tmp_path / "tests" / name).write_text(text)
    assert [p.name for p in lab_tests(tmp_path)] == ["test_a.py", "test_b.py", "test_c.py"]

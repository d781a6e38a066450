"""docs/architecture.md stays true: every module it names exists, and every module is named."""

from __future__ import annotations

import ast
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


# ------------------------------------------------------------------ layering
#: The stages in pipeline order: a module imports only from its own stage and the stages before it.
#: A module of ``gpal/<folder>/`` belongs to the folder's stage; a top-level module (``gpal/registry.py``,
#: ``gpal/files.py``, ...) is a foundation module, which every stage may import and which imports
#: only foundation modules; the command (``gpal.cli`` and its modules) and the package ``gpal`` itself sit on top.
STAGES = ("foundation", "data", "catalogs", "models", "training", "evaluation", "estimators", "active", "runs",
          "catalog jobs", "workflows", "top")
PACKAGE = Path(gpal.__file__).parent


def _all_modules() -> dict[str, Path]:
    """Every module and package of gpal (``gpal`` itself included), by dotted name."""
    modules = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return modules


MODULES = _all_modules()


def stage(module: str) -> str:
    parts = module.split(".")
    if module in ("gpal", "gpal.cli") or module.startswith("gpal.cli."):
        return "top"
    if len(parts) == 2 and MODULES[module].name != "__init__.py":
        return "foundation"
    return parts[1].replace("_", " ")


def _imports(module: str) -> list[tuple[str, int]]:
    """The gpal modules ``module`` imports, at the top or inside a function, with their line numbers.

    ``from a.b import c`` imports the module ``a.b.c`` where there is one, else ``a.b``;
    relative imports are resolved against the module's package.
    """
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            subs = [f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in MODULES]
            found += [(name, node.lineno) for name in subs or [base]]
    return [(name, line) for name, line in found if name == "gpal" or name.startswith("gpal.")]


def test_every_module_has_a_stage_in_the_map():
    """The module map lists the stages in their order, each module in the rows of its own stage."""
    listed, current = {}, None
    for row in re.findall(r"^\| ([^|]*) \| (`gpal[^|]*) \|", DOC, flags=re.M):
        current = row[0].strip() or current
        first = re.match(r"`(gpal(?:\.\w+)+)`", row[1]).group(1)
        listed[first] = current
    assert list(dict.fromkeys(listed.values())) == list(STAGES), "the map's stages are not in pipeline order"
    wrong = {m: (s, stage(m)) for m, s in listed.items() if m in MODULES and s != stage(m)}
    assert not wrong, f"modules listed under another stage than their own (listed, actual): {wrong}"


def test_modules_import_only_their_own_and_earlier_stages():
    """Every import of every module (top-level and inside functions) goes to the same or an earlier stage.

    Foundation modules may be imported everywhere and import only each other; ``import gpal`` (the
    package, for ``__version__``) is free, since Python imports the package before any of its modules.
    """
    rank = {name: i for i, name in enumerate(STAGES)}
    offenders = []
    for module in sorted(MODULES):
        for target, line in _imports(module):
            if target == "gpal" or target not in MODULES and target.rpartition(".")[0] not in MODULES:
                continue
            target = target if target in MODULES else target.rpartition(".")[0]
            if rank[stage(target)] > rank[stage(module)]:
                offenders.append(f"{MODULES[module].relative_to(PACKAGE.parent)}:{line} ({stage(module)}) "
                                 f"imports {target} ({stage(target)})")
    assert not offenders, "imports from a later stage:\n" + "\n".join(offenders)


def test_no_import_cycles():
    """No module reaches itself through the imports of others, top-level or inside functions."""
    graph = {m: {t for t, _ in _imports(m) if t in MODULES and t != m} for m in MODULES}
    cycles, seen = [], set()
    for start in sorted(graph):
        # depth-first search for a path from a successor of ``start`` back to ``start``
        stack, parents = [start], {start: None}
        while stack:
            node = stack.pop()
            for nxt in sorted(graph[node]):
                if nxt == start:
                    path, at = [start], node
                    while at is not None:
                        path.append(at)
                        at = parents[at]
                    cycle = tuple(reversed(path))
                    if frozenset(cycle) not in seen:
                        seen.add(frozenset(cycle))
                        cycles.append(" -> ".join(cycle))
                elif nxt not in parents:
                    parents[nxt] = node
                    stack.append(nxt)
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


# ------------------------------------------------------------------ the library apart from the lab
#: The repository's folders beside the package that are not the library: the lab (studies, page generators, the
#: lab's package ``labkit``, its tests and tools) and benchmarks.  An installed gpal has none of them, so the library
#: must never import them, neither by the folder's name nor by a script's own (a script imports its siblings by bare
#: name: ``shared``, ``generated_page``) nor by a package's.
LAB_FOLDERS = ("benchmarks", "lab")
LAB = (*LAB_FOLDERS, *sorted({p.stem if p.stem != "__init__" else p.parent.name
                              for folder in LAB_FOLDERS for p in (PACKAGE.parent / folder).rglob("*.py")}))


def _lab_imports(source: str, where: str) -> list[str]:
    """The lab modules ``source`` imports: ``import``/``from`` statements, and ``import_module`` or ``__import__`` of a
    literal name, at the top or inside a function."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and not node.level:
            names = [(node.module or "", node.lineno)]
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", None))
              in ("import_module", "__import__") and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)):
            names = [(node.args[0].value, node.lineno)]
        else:
            continue
        found += [f"{where}:{line} imports {name}" for name, line in names if name.split(".")[0] in LAB]
    return found


def test_the_library_never_imports_the_lab():
    offenders = [hit for path in sorted(MODULES.values())
                 for hit in _lab_imports(path.read_text(encoding="utf-8"), str(path.relative_to(PACKAGE.parent)))]
    assert not offenders, "the library imports the lab:\n" + "\n".join(offenders)


@pytest.mark.parametrize(("source", "caught"), [
    ("import benchmarks.bench_open_sky", ["m.py:1 imports benchmarks.bench_open_sky"]),
    ("from lab import x", ["m.py:1 imports lab"]),
    ("def f():\n    from lab.tools.vendor_keel import main", ["m.py:2 imports lab.tools.vendor_keel"]),
    ("importlib.import_module('benchmarks.bench_4lac')", ["m.py:1 imports benchmarks.bench_4lac"]),
    ("__import__('vendor_keel')", ["m.py:1 imports vendor_keel"]),
    ("from generated_page import DOCS\nimport shared", ["m.py:1 imports generated_page", "m.py:2 imports shared"]),
    ("from labkit.claim_rules import RULE", ["m.py:1 imports labkit.claim_rules"]),
    ("from gpal.workflows import load_workflow\nfrom . import tools\nimport lab_extra", []),
])
def test_a_lab_import_is_caught_and_the_librarys_own_workflows_are_not(source, caught):
    assert _lab_imports(source, "m.py") == caught

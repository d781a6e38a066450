"""The installed package holds the library: every module is reached from what users call, none cites the lab.

A module is reached when the package ``gpal``, the command (``gpal.cli``) or a public package of the API reference
(docs/conf.py's ``PUBLIC_PACKAGES``, whose ``__all__`` the reference documents) leads to it through imports, including
the import paths the registries hold as text (``"gpal.workflows.toy"``) and the data sets' generators.  A page naming
a module is no caller: a module reached by nothing is code only the lab (or a page) calls, and belongs in the lab.
Read with ``ast``: nothing is imported.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "gpal"
def modules(package: Path = PACKAGE) -> dict[str, Path]:
    found = {}
    for path in package.rglob("*.py"):
        parts = path.relative_to(package.parent).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _owner(name: str, known: dict[str, Path]) -> str | None:
    """The module a dotted name is or lies in (``gpal.data.registry.load_dataset`` -> ``gpal.data.registry``)."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def imported(module: str, known: dict[str, Path]) -> set[str]:
    """The gpal modules ``module`` leads to: its imports (top level or in a function, relative ones resolved), the
    ``"gpal.x"`` / ``"gpal.x:Name"`` strings it holds (registry entries, lazy exports) and, for a
    ``f"gpal.data.{module}"`` import, the modules its ``_generated("name", ...)`` calls name."""
    path = known[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    source = path.read_text(encoding="utf-8")
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            names |= {f"{base}.{alias.name}" for alias in node.names} | {base}
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            match = re.fullmatch(r"(gpal(?:\.\w+)+)(?::[\w.]+)?", node.value)
            if match:
                names.add(match.group(1))
        elif isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant) \
                and str(node.values[0].value).startswith("gpal."):
            prefix = node.values[0].value
            names |= {prefix + name for name in re.findall(r'_generated\("(\w+)"', source)}
    return {owner for name in names if (owner := _owner(name, known))}


def public_roots(root: Path = ROOT, known: dict[str, Path] | None = None) -> set[str]:
    known = modules(root / "gpal") if known is None else known
    roots = {"gpal"} | {m for m in known if m == "gpal.cli" or m.startswith("gpal.cli.")}
    conf = ast.parse((root / "docs" / "conf.py").read_text(encoding="utf-8"))
    for node in conf.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and "PUBLIC_PACKAGES" in ast.unparse(node).split("=")[0]:
            roots |= set(ast.literal_eval(node.value))
    return roots


def unreached(root: Path = ROOT) -> list[str]:
    known = modules(root / "gpal")
    seen, stack = set(), sorted(public_roots(root, known))
    while stack:
        module = stack.pop()
        if module in seen:
            continue
        seen.add(module)
        parents = module.split(".")
        stack += [".".join(parents[:end]) for end in range(1, len(parents))]  # a module's import runs its packages'
        stack += sorted(imported(module, known) - seen)
    return sorted(set(known) - seen)


def test_every_module_is_reached_from_what_users_call():
    assert not unreached(), ("modules that neither the package, its command nor its public API leads to (code only "
                             f"the lab calls belongs in the lab): {unreached()}")


def test_a_module_only_the_lab_calls_is_found(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "conf.py").write_text('PUBLIC_PACKAGES = ("gpal.data",)\n')
    (tmp_path / "docs" / "guide.md").write_text("Call `gpal.shown.f` yourself.\n")  # a page is no caller
    files = {"__init__.py": "", "cli/__init__.py": "from gpal import registry\n",
             "registry.py": 'KINDS = {"toy": "gpal.kinds.toy"}\n', "kinds/__init__.py": "", "kinds/toy.py": "",
             "data/__init__.py": "from .gen import x\n", "data/gen.py": "", "shown.py": "", "lab_only.py": "",
             "kinds/only_the_lab.py": "import gpal.kinds.toy\n"}
    for name, text in files.items():
        (tmp_path / "gpal" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "gpal" / name).write_text(text)
    assert unreached(tmp_path) == ["gpal.kinds.only_the_lab", "gpal.lab_only", "gpal.shown"]


#: What a citation of the lab looks like: a study's or page generator's folder, or a record below one.
LAB_CITATION = re.compile(r"(?:workflows|lab)/(?:studies|pages|tools)\b|\b(?:studies|pages)/records\b|\blabkit\b")


@pytest.mark.parametrize("path", sorted(modules().values()), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_cites_the_lab(path):
    """A comment or docstring says why, for a user; the study and record behind a choice are the lab's own
    business (docs/ pages show the measurements)."""
    hits = [f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if LAB_CITATION.search(line)]
    assert not hits, "cites the lab:\n" + "\n".join(hits)


@pytest.mark.parametrize(("line", "cites"), [
    ("# (the study, lab/studies/select_default.yaml)", True),
    ("record lab/pages/records/results/open_sky.json", True),
    ("see studies/records/x.json", True),
    ("``records/pool_prior.json`` of the run folder", False),
    ('LAB_FOLDERS = ("pages", "studies", "tools")', False),
])
def test_a_lab_citation_is_recognised(line, cites):
    assert bool(LAB_CITATION.search(line)) is cites

"""The study scripts of workflows/studies/: no path edits, no script importing another, shared names that exist."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest

STUDIES = Path(__file__).parents[1] / "workflows" / "studies"
SCRIPTS = sorted(p for p in STUDIES.glob("*.py") if p.stem != "shared")


@pytest.fixture(scope="module")
def shared():
    spec = importlib.util.spec_from_file_location("shared", STUDIES / "shared.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_a_script_imports_gpal_or_the_shared_module_and_edits_no_path(script, shared):
    tree = ast.parse(script.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "path" and getattr(node.value, "id", "") == "sys":
            raise AssertionError(f"{script.name}:{node.lineno} uses sys.path: import workflows/studies/shared.py instead")
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            top = node.module.split(".")[0]
            assert (STUDIES / f"{top}.py") not in SCRIPTS, f"{script.name}:{node.lineno} imports the script {top}"
            assert top != "suite", f"{script.name}:{node.lineno}: the timing suite is another folder: shared.timing_suite"
            if top == "shared":
                missing = [a.name for a in node.names if not hasattr(shared, a.name)]
                assert not missing, f"{script.name}:{node.lineno}: workflows/studies/shared.py has no {missing}"
        if isinstance(node, ast.Import):
            names = [a.name.split(".")[0] for a in node.names]
            assert not [n for n in names if (STUDIES / f"{n}.py") in SCRIPTS or n == "suite"], f"{script.name}:{node.lineno}"


def test_a_study_reaches_the_timing_suites_harness(shared):
    arithmetic = shared.timing_suite("arithmetic")
    assert arithmetic.__file__ == str(shared.BENCHMARKS / "suite" / "arithmetic.py")
    assert arithmetic.step_flops(3, 200, 50, 16, 8)["total"] > 0


def test_the_synthetic_problem_has_error_bars_on_half_the_features(shared):
    X, X_var, y = shared.synthetic_problem(200, 6, 3, seed=1)
    assert X.shape == X_var.shape == (200, 6) and set(y) == {0, 1, 2}
    assert (X_var[:, :3] > 0).all() and (X_var[:, 3:] == 0).all()
    again = shared.synthetic_problem(200, 6, 3, seed=1)
    assert all((a == b).all() for a, b in zip((X, X_var, y), again))

"""The study scripts of lab/studies/: no path edits, no script importing another, shared names that exist."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import pytest

STUDIES = Path(__file__).parents[2] / "lab" / "studies"
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
            raise AssertionError(f"{script.name}:{node.lineno} uses sys.path: import lab/studies/shared.py instead")
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            top = node.module.split(".")[0]
            assert (STUDIES / f"{top}.py") not in SCRIPTS, f"{script.name}:{node.lineno} imports the script {top}"
            assert top != "suite", f"{script.name}:{node.lineno}: the timing suite is another folder: shared.timing_suite"
            if top == "shared":
                missing = [a.name for a in node.names if not hasattr(shared, a.name)]
                assert not missing, f"{script.name}:{node.lineno}: lab/studies/shared.py has no {missing}"
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


def test_the_exact_finish_curve_is_the_estimators_own_cavi_exact_fit(shared):
    """finish_curve (the augmented_gap study's ``finish``) scores the steps of ``inference="cavi_exact"``: its last
    point is the test NLL of that estimator fitted in one call, its first that of the collapsed sweeps alone."""
    import numpy as np

    from gpal import LogisticSoftmaxGPClassifier

    papers = shared.timing_suite("papers")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    y = np.where(X[:, 0] > 0.4, 2, np.where(X[:, 0] < -0.4, 0, 1))
    Xte, yte = X[::3] + 0.1, y[::3]
    curve = papers.finish_curve(X, y, Xte, yte, steps=4, every=2, sweeps=3, num_inducing=5)
    assert [point[0] for point in curve] == [0, 2, 4]

    def nll(**params):
        clf = LogisticSoftmaxGPClassifier(num_inducing=5, max_iter=3, **params).fit(X, y)
        return -np.mean(np.log(clf.predict_proba(Xte)[np.arange(len(yte)), yte]))

    assert curve[-1][2] == pytest.approx(nll(inference="cavi_exact", exact_steps=4), rel=1e-6)
    assert curve[0][2] == pytest.approx(nll(inference="cavi_collapsed"), rel=1e-6)

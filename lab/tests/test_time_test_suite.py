"""benchmarks/time_test_suite.py: what it reads from a CI run, and a failing run is never recorded."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from conftest import repository_script


@pytest.fixture(scope="module")
def suite_timer():
    return repository_script("benchmarks/time_test_suite.py")


def _repository(tmp_path: Path, ci_script: str) -> Path:
    """A git repository whose `.ci/run` is ``ci_script``."""
    repo = tmp_path / "repo"
    (repo / ".ci").mkdir(parents=True)
    (repo / ".ci" / "run").write_text(ci_script)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(repo)]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "ci"], check=True)
    return repo


def test_a_run_is_timed_from_a_clean_clone_and_its_summary_recorded(suite_timer, tmp_path):
    repo = _repository(tmp_path, 'echo "+ pytest"\necho "==== 12 passed, 1 skipped, 3 warnings in 7.50s (0:00:07) ===="\n')
    run = suite_timer.run_ci(repo)
    assert run["tests"] == "12 passed, 1 skipped, 3 warnings" and run["pytest_seconds"] == 7.5
    record = suite_timer.results_record(run)
    assert record["commit"] == run["commit"] and len(run["commit"]) == 7
    assert record["tables"][0]["rows"][0][1:] == ["12 passed, 1 skipped, 3 warnings", "0 min 08 s"]


def test_a_failing_or_silent_suite_is_not_recorded(suite_timer, tmp_path):
    with pytest.raises(SystemExit, match=r"\.ci/run failed \(exit 3\)"):
        suite_timer.run_ci(_repository(tmp_path / "a", "echo '1 passed in 1.0s'\nexit 3\n"))
    with pytest.raises(SystemExit, match="printed no pytest summary line"):
        suite_timer.run_ci(_repository(tmp_path / "b", "echo done\n"))

"""benchmarks/suite_cpu.py: each test's CPU seconds, its child processes' included, summed by file; a failing run
is never recorded."""

from __future__ import annotations

import pytest
from conftest import repository_script

_BURN = "import time\\nend = time.process_time() + {seconds}\\nwhile time.process_time() < end: pass\\n"


@pytest.fixture(scope="module")
def suite_cpu():
    return repository_script("benchmarks/suite_cpu.py")


def _suite(folder, failing=False):
    (folder / "test_own.py").write_text(
        "import time\n\ndef test_burns_in_its_process():\n"
        "    end = time.process_time() + 0.6\n    while time.process_time() < end: pass\n"
        + ("\ndef test_fails():\n    assert False\n" if failing else ""))
    (folder / "test_child.py").write_text(
        "import subprocess, sys\n\ndef test_burns_in_a_child():\n"
        f"    subprocess.run([sys.executable, '-c', '{_BURN.format(seconds=0.8)}'], check=True)\n\n"
        "def test_idle():\n    pass\n")
    return folder


@pytest.mark.slow
def test_cpu_of_a_test_and_of_the_processes_it_starts_is_counted_and_summed_by_file(suite_cpu, tmp_path):
    run = suite_cpu.profile_suite([], cwd=_suite(tmp_path))
    seconds = {t["test"]: t["own"] + t["children"] for t in run["tests"]}
    assert sorted(seconds) == ["test_child.py::test_burns_in_a_child", "test_child.py::test_idle",
                               "test_own.py::test_burns_in_its_process"]
    assert seconds["test_own.py::test_burns_in_its_process"] >= 0.6
    child = next(t for t in run["tests"] if t["test"].endswith("in_a_child"))
    assert child["children"] >= 0.8  # the child's seconds, not the parent's waiting
    assert seconds["test_child.py::test_idle"] < 0.3
    files, tests = suite_cpu.heaviest(run, n=1)
    assert files == [("test_child.py", pytest.approx(seconds["test_child.py::test_burns_in_a_child"]
                                                     + seconds["test_child.py::test_idle"]), 2)]
    assert tests == [("test_child.py::test_burns_in_a_child", seconds["test_child.py::test_burns_in_a_child"])]
    record = suite_cpu.results_record(run, "abc1234", "python benchmarks/suite_cpu.py", n=2)
    assert record["commit"] == "abc1234" and record["tables"][0]["rows"][0][0] == "`test_child.py`"
    assert record["tables"][0]["caption"].startswith("3 tests, ")


@pytest.mark.slow
def test_a_failing_suite_is_not_recorded(suite_cpu, tmp_path):
    with pytest.raises(SystemExit, match=r"pytest failed \(exit 1\)"):
        suite_cpu.profile_suite(["-n", "0"], cwd=_suite(tmp_path, failing=True))

"""benchmarks/compare_commits.py: which asv compare rows count as a regression, and a bad commit refused."""

from __future__ import annotations

import pytest
from conftest import repository_script


@pytest.fixture(scope="module")
def compare():
    return repository_script("benchmarks/compare_commits.py")


# the shape of asv 0.6's compare table
_TABLE = """
| Change   | Before [2b826061] <main~1>   |   After [f1b836f8] <main> | Ratio   | Benchmark (Parameter)   |
|----------|------------------------------|---------------------------|---------|-------------------------|
|          | n/a                          |                   36.635  | n/a     | training.A.track_x      |
| {mark}        | 52.6                         |                   67.07   | 1.28    | training.B.track_y      |
"""


@pytest.mark.parametrize("mark, slower", [("+", True), ("!", True), ("-", False), ("", False), ("~", False)])
def test_a_slower_or_failed_benchmark_is_a_regression(compare, mark, slower):
    assert compare.regressed(_TABLE.format(mark=mark)) is slower


def test_a_name_that_is_no_commit_is_refused(compare, capsys):
    assert compare.main(["HEAD", "no-such-commit-or-branch"]) == 2
    assert "'no-such-commit-or-branch' is not a commit" in capsys.readouterr().err

"""The test suite's own arrangement under pytest-xdist (``-n 2``): tests that share a fitted run go to one worker."""

import pytest


def test_tests_that_share_a_run_are_sent_to_one_worker(request):
    """conftest.py marks the tests that read one session- or module-scoped run (a fitted model, the main job, the Dask
    cluster) with one ``xdist_group``; pytest-xdist tells its scheduler by appending ``@group`` to their node ids.
    pytest 9.2 no longer reads the attribute that pytest-xdist 3.8 sets, and then every worker builds each run again
    (85 s of the suite's wall time and 136 CPU s: the suite under pytest 9.2.0 at af5b94e against 9.1.1 at b94e010,
    one run each)."""
    if not getattr(request.config.option, "loadgroup", False):
        pytest.skip("checks the grouping under pytest-xdist (-n 2)")
    grouped = [item for item in request.session.items if item.get_closest_marker("xdist_group")]
    if not grouped:
        pytest.skip("no test of this run shares a run with another")
    lost = [item.nodeid for item in grouped if "@" not in item.nodeid]
    assert not lost, (f"{len(lost)} grouped tests reach pytest-xdist's scheduler without their group (e.g. {lost[0]}): "
                      "this pytest and pytest-xdist do not work together under --dist loadgroup; install the "
                      'versions the test extras allow (pip install -e ".[test]")')


def test_slow_tests_of_no_group_are_sent_before_the_other_single_tests(request):
    """pytest-xdist sends the groups first, then single tests in collection order; conftest.py puts the tests marked
    ``slow`` first among the single tests, so that the run does not end with one worker on a 10 s test."""
    if not getattr(request.config.option, "loadgroup", False):
        pytest.skip("checks the order under pytest-xdist (-n 2)")
    singles = [item for item in request.session.items if not item.get_closest_marker("xdist_group")]
    slow = [i for i, item in enumerate(singles) if item.get_closest_marker("slow")]
    if not slow or len(slow) == len(singles):
        pytest.skip("this run has no slow single test, or only slow ones")
    assert slow == list(range(len(slow))), f"a single test precedes the slow one {singles[slow[-1]].nodeid}"

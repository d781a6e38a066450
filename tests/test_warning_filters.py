"""Warning filters changed by gpal in two threads at once are all undone (the main job reads catalogs beside a fit)."""

import threading
import warnings

from gpal.warning_filters import changed_filters


def test_two_threads_blocks_do_not_interleave_and_leave_no_filter_behind():
    before = list(warnings.filters)
    inside, release, done = threading.Event(), threading.Event(), threading.Event()

    def background():
        with changed_filters():
            warnings.simplefilter("ignore")
            inside.set()
            release.wait(10)

    def foreground():
        with changed_filters():
            warnings.simplefilter("error")
        done.set()

    first = threading.Thread(target=background)
    first.start()
    assert inside.wait(10)
    second = threading.Thread(target=foreground)
    second.start()
    # with plain catch_warnings the second block would enter now and, leaving first, restore "ignore"
    assert not done.wait(0.3)
    release.set()
    first.join(10)
    second.join(10)
    assert done.is_set() and warnings.filters == before


def test_a_block_inside_a_block_of_the_same_thread_enters():
    before = list(warnings.filters)
    with changed_filters():
        warnings.simplefilter("ignore")
        with changed_filters():
            warnings.simplefilter("error", UserWarning)
        assert warnings.filters[0][0] == "ignore"
    assert warnings.filters == before

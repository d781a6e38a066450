"""Warning filters changed for a block of code, safely beside gpal's background threads.

`warnings.catch_warnings` swaps the process's filters on entry and puts back what it saw on exit.  The main job
reads catalogs and fits models in a second thread (`gpal.runs.background`); when two threads' blocks overlap, the
one that leaves last puts back the filters the other had set, and a filter such as "ignore" outlives both blocks:
a caller's `pytest.warns` or ``catch_warnings(record=True)`` then misses what gpal warns about afterwards.  Every
gpal block that changes the filters for a moment goes through `changed_filters`, which holds one lock for the
block, so the blocks of two threads never interleave.  A block must not wait for another thread's work.
"""

from __future__ import annotations

import contextlib
import threading
import warnings
from typing import Iterator

__all__ = ["changed_filters"]

_LOCK = threading.RLock()


@contextlib.contextmanager
def changed_filters() -> Iterator[None]:
    """``warnings.catch_warnings()`` under gpal's one lock: set filters inside; they are undone on leaving."""
    with _LOCK, warnings.catch_warnings():
        yield

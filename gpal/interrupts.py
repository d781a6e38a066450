"""Ctrl-C in a command: the first asks the work to stop at its next safe point, the second ends the process at once.

Python's own handler raises ``KeyboardInterrupt`` wherever the main thread happens to be, inside
TensorFlow's callbacks and list operations too (``SystemError: Objects/listobject.c:338`` and a traceback
were the result, and a second Ctrl-C aborted the interpreter during its shutdown).  A command installs
`stopping_at_safe_points` instead: the first Ctrl-C only sets a flag, which the work reads at safe points
(`check_stop`: between training epochs, prediction chunks and the steps of a job) and answers by raising
`StopRequested` there, in the main thread (work beside it in a second thread is then stopped as after any failure), so that what is saved is whole and a rerun resumes; the second Ctrl-C meets the
system's default action and ends the process then, whatever the main thread is doing.  A library user keeps
Python's behaviour: without the handler, `check_stop` never raises.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from typing import Iterator

__all__ = ["StopRequested", "check_stop", "stop_requested", "stopping_at_safe_points"]

_REQUESTED = threading.Event()


class StopRequested(KeyboardInterrupt):
    """The work stopped at a safe point after Ctrl-C: what it saved is whole, a rerun resumes."""


def stop_requested() -> bool:
    """Whether Ctrl-C asked the command's work to stop."""
    return _REQUESTED.is_set()


def check_stop() -> None:
    """A safe point of the main thread: raise `StopRequested` (a ``KeyboardInterrupt``) once Ctrl-C has asked to stop.

    Elsewhere it does nothing: work in a second thread (`gpal.runs.background.alongside`) is stopped by the main
    thread once that has stopped, as any failure beside it stops it, so that it never takes the request for the end
    of its own work (a fit stopped early is not saved as finished)."""
    if _REQUESTED.is_set() and threading.current_thread() is threading.main_thread():
        raise StopRequested("stopped at a safe point after Ctrl-C")


@contextlib.contextmanager
def stopping_at_safe_points(prefix: str = "gpal: ", restore: bool = True) -> Iterator[None]:
    """While inside (a command's run, in the main thread), Ctrl-C asks the work to stop at its next safe point,
    saying so on stderr; a second Ctrl-C ends the process at once (the system's default action).  Elsewhere than
    in the main thread nothing changes (signals are the main thread's).  ``restore`` False (a process that ends
    after the block) leaves the handling in place to the end."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def first(signum: int, frame: object) -> None:
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # the second Ctrl-C: at once, even inside a long C call
        _REQUESTED.set()
        _tell(f"\n{prefix}stopping at the next safe point (Ctrl-C again to quit at once; either way a rerun of "
              "the same command resumes)\n")

    _REQUESTED.clear()
    previous = signal.signal(signal.SIGINT, first)
    try:
        yield
    finally:
        if restore:
            signal.signal(signal.SIGINT, previous)
            _REQUESTED.clear()


def _tell(text: str) -> None:
    """Write to stderr's file descriptor, unbuffered: a signal handler must not re-enter a buffered write the
    main thread may be in the middle of."""
    stream = sys.stderr
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):  # a stream without a descriptor (a test's capture)
        stream.write(text)
        return
    os.write(fd, text.encode(getattr(stream, "encoding", None) or "utf-8", errors="backslashreplace"))

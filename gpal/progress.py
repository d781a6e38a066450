"""Progress bars that redraw in place on a terminal and write a few plain lines into a log.

A tqdm bar redraws itself with a carriage return several times a second.  On a
terminal that is one line; in a log file (a batch job's stderr, ``2> run.log``) every
redraw stays, and a training run leaves thousands of ``\\r`` updates on one line.
``progress_bar`` keeps tqdm's own bar where stderr is a terminal or a notebook, and
elsewhere writes one line when the bar starts, one a minute at most while it runs and
one when it ends.
"""

from __future__ import annotations

import sys
from typing import Any, Iterable

__all__ = ["progress_bar", "LOG_INTERVAL_S"]

LOG_INTERVAL_S = 60.0
"""Seconds between two lines of a bar written into a log (not a terminal)."""


class _Lines:
    """A text stream that turns tqdm's in-place redraws into whole lines (and drops its bare newlines)."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        line = str(text).replace("\r", "").rstrip()
        if line:
            self._stream.write(line + "\n")
        return len(text)

    def flush(self) -> None:
        getattr(self._stream, "flush", lambda: None)()


def _redraws_in_place(stream: Any) -> bool:
    """Whether tqdm's carriage-return redraws land on a terminal (or a notebook widget draws the bar)."""
    from tqdm import autonotebook, std

    if autonotebook.tqdm is not std.tqdm:
        return True
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False


def progress_bar(iterable: Iterable | None = None, *, disable: bool = False, **kwargs: Any) -> Any:
    """A tqdm bar over ``iterable`` (or of ``total=``), redrawn in place only where stderr shows it in place.

    Keyword arguments are tqdm's (``total``, ``desc``, ``unit``, ``initial``, ...).
    """
    from tqdm.auto import tqdm

    if disable or _redraws_in_place(sys.stderr):
        return tqdm(iterable, disable=disable, **kwargs)
    from tqdm.std import tqdm as plain

    return plain(iterable, file=_Lines(sys.stderr), mininterval=LOG_INTERVAL_S, maxinterval=LOG_INTERVAL_S,
                 dynamic_ncols=False, **kwargs)

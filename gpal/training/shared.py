"""One kept object per model signature, lent to one fit at a time.

Tracing a training step or a set of conjugate updates costs as much as hundreds of steps, and an
experiment fits many models that differ only in their values.  `SharedTrainer`, `BatchedTrainer` and the
augmented model's trainers keep the compiled object of each signature here; a fit borrows it for a
``with`` block (`LentBySignature.lent`) with its lock held, so two threads never train through one
template at once, and a signature busy in another thread gets an object of its own (kept only if none
is kept by then).  The borrower's state goes into the object when the block starts and comes back
when it ends, however it ends, and the object is free again after.
"""

from __future__ import annotations

import contextlib
import threading
from collections import OrderedDict
from typing import Any, Callable, Generic, Iterator, Protocol, TypeVar

__all__ = ["Lendable", "LentBySignature"]


class Lendable(Protocol):
    """A kept object that works for one borrower at a time on the borrower's own state."""

    def take_from(self, borrower: Any) -> None:
        """Take on ``borrower``'s state (its model's values, optimiser state, data) to work on it."""

    def give_back(self, borrower: Any) -> None:
        """Give ``borrower`` the state worked on, and keep nothing of it that the next borrower could see."""


T = TypeVar("T", bound=Lendable)


class LentBySignature(Generic[T]):
    """The objects of the last ``size`` signatures used, most recently used last."""

    def __init__(self, size: int):
        self._size = size
        self._entries: "OrderedDict[str, tuple[threading.Lock, T]]" = OrderedDict()
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def lent(self, key: str, make: Callable[[], T], borrower: Any = None) -> Iterator[T]:
        """The kept object of ``key`` (or a new one from ``make()`` if it is busy or absent), lent for the block.

        With a ``borrower``, the object takes its state (``take_from``) before the block and gives it back
        (``give_back``) after it, an exception included; without one, the block only reads the object (its
        compiled functions).  The object's lock is released when the block ends, however it ends.
        """
        made, lock = self._borrow(key, make)
        try:
            if borrower is None:
                yield made
                return
            made.take_from(borrower)
            try:
                yield made
            finally:
                made.give_back(borrower)
        finally:
            lock.release()

    def _borrow(self, key: str, make: Callable[[], T]) -> tuple[T, threading.Lock]:
        """The kept object of ``key`` with its lock held, or a new one from ``make()`` if it is busy or absent."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and entry[0].acquire(blocking=False):
                self._entries.move_to_end(key)
                return entry[1], entry[0]
        lock = threading.Lock()
        lock.acquire()
        made = make()
        with self._lock:
            if key not in self._entries:
                self._entries[key] = (lock, made)
                while len(self._entries) > self._size:
                    self._entries.popitem(last=False)
        return made, lock

"""One kept object per model signature, lent to one fit at a time.

Tracing a training step or a set of conjugate updates costs as much as hundreds of steps, and an
experiment fits many models that differ only in their values.  `SharedTrainer` and the augmented
model's trainer keep the compiled object of each signature here; a fit borrows it with its lock held,
so two threads never train through one template at once, and a signature busy in another thread gets
an object of its own (kept only if none is kept by then).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Callable, Generic, TypeVar

__all__ = ["LentBySignature"]

T = TypeVar("T")


class LentBySignature(Generic[T]):
    """The objects of the last ``size`` signatures used, most recently used last."""

    def __init__(self, size: int):
        self._size = size
        self._entries: "OrderedDict[str, tuple[threading.Lock, T]]" = OrderedDict()
        self._lock = threading.Lock()

    def borrow(self, key: str, make: Callable[[], T]) -> tuple[T, threading.Lock]:
        """The kept object of ``key`` with its lock held, or a new one from ``make()`` if it is busy or absent.

        Returns
        -------
        tuple
            The object and its held lock, which the borrower releases when done.
        """
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

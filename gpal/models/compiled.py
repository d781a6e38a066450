"""Compiled TensorFlow functions made once per model instance.

TensorFlow counts a function's traces per code object, so the first trace of each
model's closure (the same code, made once per model) reads as "retracing" and, after
five models, prints a warning in any script that fits a few of them.  A
`functools.partial` has no code object, so each compiled function counts only its
own traces and the warning keeps its meaning: the same model traced again.
"""

from __future__ import annotations

import functools
import threading
from collections import OrderedDict
from typing import Any, Callable, Hashable

import tensorflow as tf

__all__ = ["KeptFunctions", "instance_function", "variable_specs"]


def instance_function(fn: Callable, **options: Any) -> Callable:
    """``tf.function(fn, **options)`` whose traces are counted apart from other instances' of the same code.

    AutoGraph is off unless ``options`` turn it on: gpal's compiled functions are straight-line graphs (their
    Python loops run over Python values, and unroll alike either way).  Converting the code they call cost 3.5-4 s
    of a first L-BFGS fit's 9.5 s, and it once mis-resolved the strategies' methods
    in the predictors."""
    return tf.function(functools.partial(fn), **{"autograph": False, **options})


def variable_specs(model: Any) -> dict[str, tf.TensorSpec]:
    """One ``TensorSpec`` per parameter of ``model`` by its path: the signature of a function traced on one model
    that reads another's values (``reading_values``)."""
    from gpal.models.state import module_variables

    return {path: tf.TensorSpec(var.shape, var.dtype) for path, var in module_variables(model).items()}


class KeptFunctions:
    """The last ``kept`` compiled functions by key, most recently used last, shared by a process's threads.

    A function traced once per model signature serves every later model of it; a few are kept so
    that a long script's memory does not grow with each signature it met once.
    """

    def __init__(self, kept: int):
        self.kept = kept
        self._functions: "OrderedDict[Hashable, Callable]" = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> Callable | None:
        """The function kept for ``key`` (now the most recently used), or None."""
        with self._lock:
            if key not in self._functions:
                return None
            self._functions.move_to_end(key)
            return self._functions[key]

    def keep(self, key: Hashable, fn: Callable) -> Callable:
        """Keep ``fn`` for ``key`` unless another thread kept one first; returns the kept one."""
        with self._lock:
            fn = self._functions.setdefault(key, fn)
            self._functions.move_to_end(key)
            while len(self._functions) > self.kept:
                self._functions.popitem(last=False)
            return fn

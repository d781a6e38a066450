"""Compiled TensorFlow functions made once per model instance.

TensorFlow counts a function's traces per code object, so the first trace of each
model's closure (the same code, made once per model) reads as "retracing" and, after
five models, prints a warning in any script that fits a few of them.  A
`functools.partial` has no code object, so each compiled function counts only its
own traces and the warning keeps its meaning: the same model traced again.
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import tensorflow as tf

__all__ = ["instance_function"]


def instance_function(fn: Callable, **options: Any) -> Callable:
    """``tf.function(fn, **options)`` whose traces are counted apart from other instances' of the same code."""
    return tf.function(functools.partial(fn), **options)

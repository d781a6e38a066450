"""Estimator parameters declared once, checked by one function.

Each estimator class lists a constraint per constructor argument in ``_parameters``;
``check_params`` validates them all before any TensorFlow work and raises one clear
message: the parameter, what was expected, what was given. The contract test checks
that every constructor argument has a constraint, so a new parameter cannot go unchecked.
"""

from __future__ import annotations

import abc
import math
import numbers
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from gpal.registry import KERNELS, LIKELIHOODS

__all__ = [
    "Boolean",
    "Constraint",
    "Integer",
    "InvalidParameter",
    "Options",
    "OneOf",
    "Optional",
    "Real",
    "Satisfies",
    "check_params",
    "KERNEL",
    "LIKELIHOOD",
    "SPARSE_GP_PARAMETERS",
]


class InvalidParameter(ValueError, TypeError):
    """A constructor argument out of its declared range or of the wrong type (as scikit-learn's)."""


class Constraint(abc.ABC):
    """A rule a parameter value must meet, and how to say it."""

    expected: str = ""

    @abc.abstractmethod
    def ok(self, value: Any) -> bool:
        """Whether ``value`` meets the rule."""

    def check(self, name: str, value: Any) -> None:
        if not self.ok(value):
            raise InvalidParameter(f"{name} must be {self.expected}; got {value!r}")


def _is_int(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _is_real(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)


@dataclass(frozen=True)
class Integer(Constraint):
    minimum: int

    @property
    def expected(self) -> str:  # type: ignore[override]
        return f"an integer >= {self.minimum}"

    def ok(self, value: Any) -> bool:
        return _is_int(value) and value >= self.minimum


@dataclass(frozen=True)
class Real(Constraint):
    """A finite number in an interval; ``None`` ends are open-ended."""

    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    meaning: str = ""

    @property
    def expected(self) -> str:  # type: ignore[override]
        parts = []
        if self.low is not None:
            parts.append(f"{'>' if self.low_open else '>='} {self.low:g}")
        if self.high is not None:
            parts.append(f"{'<' if self.high_open else '<='} {self.high:g}")
        text = "a finite number" + (" " + " and ".join(parts) if parts else "")
        return f"{text} ({self.meaning})" if self.meaning else text

    def ok(self, value: Any) -> bool:
        if not _is_real(value):
            return False
        if self.low is not None and (value <= self.low if self.low_open else value < self.low):
            return False
        return self.high is None or (value < self.high if self.high_open else value <= self.high)


@dataclass(frozen=True)
class OneOf(Constraint):
    options: Sequence[Any]

    @property
    def expected(self) -> str:  # type: ignore[override]
        return f"one of {list(self.options)}"

    def ok(self, value: Any) -> bool:
        return any(value == option and type(value) is type(option) for option in self.options)


class Boolean(Constraint):
    expected = "True or False"

    def ok(self, value: Any) -> bool:
        return isinstance(value, bool) or type(value).__name__ == "bool_"


@dataclass(frozen=True)
class Optional(Constraint):
    """``None`` or whatever ``inner`` accepts."""

    inner: Constraint

    @property
    def expected(self) -> str:  # type: ignore[override]
        return f"None or {self.inner.expected}"

    def ok(self, value: Any) -> bool:
        return value is None or self.inner.ok(value)


class Options(Constraint):
    """A dict with string keys (options passed through to a part of the model)."""

    expected = "None or a dict of option name -> value"

    def ok(self, value: Any) -> bool:
        return value is None or (isinstance(value, Mapping) and all(isinstance(k, str) for k in value))


@dataclass(frozen=True)
class Satisfies(Constraint):
    """Any rule written as a predicate, with the words that describe it."""

    predicate: Callable[[Any], bool]
    description: str

    @property
    def expected(self) -> str:  # type: ignore[override]
        return self.description

    def ok(self, value: Any) -> bool:
        try:
            return bool(self.predicate(value))
        except (TypeError, ValueError):
            return False


def check_params(estimator: Any, constraints: Mapping[str, Constraint]) -> None:
    """Check every constructor argument of ``estimator`` against its declared constraint."""
    for name, constraint in constraints.items():
        constraint.check(name, getattr(estimator, name))


def is_gpflow_kernel(value: Any) -> bool:
    import gpflow

    return isinstance(value, gpflow.kernels.Kernel)


def _is_kernel(value: Any) -> bool:
    return value is None or (isinstance(value, str) and value in KERNELS) or is_gpflow_kernel(value)


KERNEL = Satisfies(_is_kernel, f"None, a kernel name {list(KERNELS.names())} or a gpflow kernel (copied per latent function)")

#: The arguments every sparse-GP family takes, stated once; a family adds its own beside them.
SPARSE_GP_PARAMETERS: dict[str, Constraint] = {
    "num_inducing": Integer(1),
    "kernel": KERNEL,
    "standardize": Boolean(),
    "random_state": Integer(0),
    "progress": Boolean(),
}


def _is_likelihood(value: Any) -> bool:
    if isinstance(value, str):
        return value.lower() in LIKELIHOODS
    from gpal.models.likelihoods.base import Likelihood

    return isinstance(value, Likelihood)


LIKELIHOOD = Satisfies(_is_likelihood, f"a likelihood name {list(LIKELIHOODS.names())} or a gpal.models.Likelihood")

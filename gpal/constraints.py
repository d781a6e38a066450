"""The one vocabulary of value constraints: estimator parameters, function arguments, workflow fields.

A `Constraint` says what a value must be and checks it: ``constraint.check(name, value)``
returns the value in its plain form (an ``int``, a ``float``, a ``list``) or raises
`InvalidParameter` with one message: the name, what was expected, what was given
("epochs must be an integer >= 1; got 0").  Estimators declare one per constructor
argument (``_parameters``, checked by `check_params`); a library function declares one per
argument it checks (`check_values`); a workflow ``Field`` holds one per key.  This module
imports nothing from gpal, so every layer (the model layer included) can use it.
"""

from __future__ import annotations

import abc
import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Callable, Iterable

__all__ = [
    "AnyOf",
    "Boolean",
    "Constraint",
    "Integer",
    "InvalidParameter",
    "ListOf",
    "MappingOf",
    "OneOf",
    "Optional",
    "Options",
    "Parsed",
    "Real",
    "SEED",
    "Satisfies",
    "Text",
    "check_params",
    "check_values",
]


class InvalidParameter(ValueError, TypeError):
    """A value out of its declared range or of the wrong type (as scikit-learn's, both a ValueError and a TypeError)."""


class Constraint(abc.ABC):
    """A rule a value must meet, how to say it, and the value's plain form."""

    expected: str = ""

    @abc.abstractmethod
    def ok(self, value: Any) -> bool:
        """Whether ``value`` meets the rule."""

    def plain(self, value: Any) -> Any:
        """An accepted value in its plain form (a subclass turns numbers into int / float)."""
        return value

    def check(self, name: str, value: Any) -> Any:
        """``value`` in its plain form, or `InvalidParameter` naming ``name``, what was expected and what was given."""
        if not self.ok(value):
            raise InvalidParameter(f"{name} must be {self.expected}; got {value!r}")
        return self.plain(value)

    def choices(self) -> tuple[str, ...] | None:
        """The names it accepts where they can be listed (a command line offers them as choices), else None."""
        return None


class _Compound(Constraint):
    """A constraint whose check names the part that failed (an item, a key); ``ok`` is "check passes"."""

    def ok(self, value: Any) -> bool:
        try:
            self.check("value", value)
        except InvalidParameter:
            return False
        return True

    @abc.abstractmethod
    def check(self, name: str, value: Any) -> Any:
        """As `Constraint.check`, the message naming the failing part."""


def _is_int(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _is_real(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)


@dataclass(frozen=True)
class Integer(Constraint):
    """An integer (not a bool), at least ``minimum`` and at most ``maximum`` when they are given."""

    minimum: int | None = None
    maximum: int | None = None

    @property
    def expected(self) -> str:  # type: ignore[override]
        bounds = [f">= {self.minimum}"] * (self.minimum is not None) + [f"<= {self.maximum}"] * (self.maximum is not None)
        return " and ".join(["an integer " + bounds[0], *bounds[1:]]) if bounds else "an integer"

    def ok(self, value: Any) -> bool:
        return (_is_int(value) and (self.minimum is None or value >= self.minimum)
                and (self.maximum is None or value <= self.maximum))

    def plain(self, value: Any) -> int:
        return int(value)


#: A seed: k-means (scikit-learn) and numpy's legacy generators take 32-bit seeds, so a larger one is refused here.
SEED = Integer(0, 2**32 - 1)


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

    def plain(self, value: Any) -> float:
        return float(value)


@dataclass(frozen=True)
class OneOf(Constraint):
    """One of ``options``, of the same type (so ``True`` is not ``1`` and ``1`` is not ``"1"``).

    ``options`` may be a registry (`gpal.registry.Registry`): it is read at each check, so a name a
    user registers later is accepted and offered.
    """

    options: Sequence[Any]

    @property
    def expected(self) -> str:  # type: ignore[override]
        return f"one of {list(self.options)}"

    def ok(self, value: Any) -> bool:
        return any(value == option and type(value) is type(option) for option in self.options)

    def choices(self) -> tuple[str, ...] | None:
        return tuple(self.options) if all(isinstance(o, str) for o in self.options) else None


class Boolean(Constraint):
    expected = "True or False"

    def ok(self, value: Any) -> bool:
        return isinstance(value, bool) or type(value).__name__ == "bool_"

    def plain(self, value: Any) -> bool:
        return bool(value)


class Text(Constraint):
    expected = "a non-empty string"

    def ok(self, value: Any) -> bool:
        return isinstance(value, str) and bool(value)


@dataclass(frozen=True)
class Optional(Constraint):
    """``None`` or whatever ``inner`` accepts."""

    inner: Constraint

    @property
    def expected(self) -> str:  # type: ignore[override]
        return f"None or {self.inner.expected}"

    def ok(self, value: Any) -> bool:
        return value is None or self.inner.ok(value)

    def check(self, name: str, value: Any) -> Any:
        if value is None:
            return None
        if isinstance(self.inner, _Compound):  # its own message names the item or key that failed
            return self.inner.check(name, value)
        return super().check(name, value)

    def choices(self) -> tuple[str, ...] | None:
        return self.inner.choices()


@dataclass(frozen=True)
class AnyOf(Constraint):
    """Whatever one of ``alternatives`` accepts (the first that does gives the plain form)."""

    alternatives: tuple[Constraint, ...]

    @property
    def expected(self) -> str:  # type: ignore[override]
        return " or ".join(c.expected for c in self.alternatives)

    def ok(self, value: Any) -> bool:
        return any(c.ok(value) for c in self.alternatives)

    def plain(self, value: Any) -> Any:
        return next(c.plain(value) for c in self.alternatives if c.ok(value))


class Options(Constraint):
    """A dict with string keys (options passed through to a part of the model)."""

    expected = "None or a dict of option name -> value"

    def ok(self, value: Any) -> bool:
        return value is None or (isinstance(value, Mapping) and all(isinstance(k, str) for k in value))


@dataclass(frozen=True)
class Satisfies(Constraint):
    """Any rule written as a predicate, with the words that describe it.

    ``names``: the strings it accepts, where the rule also takes objects but its names can be
    listed (a registry's, read at each use so that later registrations count): a command line offers
    them as its choices, and ``{names}`` in ``description`` is replaced by their list.
    """

    predicate: Callable[[Any], bool]
    description: str
    names: Iterable[str] = ()

    @property
    def expected(self) -> str:  # type: ignore[override]
        return self.description.replace("{names}", str(list(self.names)))

    def ok(self, value: Any) -> bool:
        try:
            return bool(self.predicate(value))
        except (TypeError, ValueError):
            return False

    def choices(self) -> tuple[str, ...] | None:
        return tuple(self.names) or None


@dataclass(frozen=True)
class Parsed(_Compound):
    """A value a function reads and returns in its plain form, raising ValueError with its own words otherwise.

    For rules whose message is best said by the code that knows them (a data set name with
    an optional ``:ROWS``, a catalog release or file); the message is prefixed by the name.
    """

    parse: Callable[[Any], Any]
    description: str

    @property
    def expected(self) -> str:  # type: ignore[override]
        return self.description

    def check(self, name: str, value: Any) -> Any:
        try:
            return self.parse(value)
        except (TypeError, ValueError) as exc:
            raise InvalidParameter(f"{name}: {exc}") from None


@dataclass(frozen=True)
class ListOf(_Compound):
    """A list (any non-string sequence) of ``min_length`` to ``max_length`` items, each meeting ``item``."""

    item: Constraint
    min_length: int = 1
    max_length: int | None = None
    unique: bool = True

    @property
    def expected(self) -> str:  # type: ignore[override]
        if self.max_length == self.min_length:
            size = f"{self.min_length}"
        else:
            size = f"{self.min_length} or more" if self.max_length is None else f"{self.min_length} to {self.max_length}"
        return f"a list of {size}{' distinct' if self.unique else ''} item(s), each {self.item.expected}"

    def check(self, name: str, value: Any) -> list[Any]:
        if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
            raise InvalidParameter(f"{name} must be {self.expected} (e.g. [a, b]); got {value!r}")
        if len(value) < self.min_length or (self.max_length is not None and len(value) > self.max_length):
            raise InvalidParameter(f"{name} must be {self.expected}; got {list(value)!r}")
        items = [self.item.check(f"{name}[{k}]", v) for k, v in enumerate(value)]
        if self.unique and len({repr(i) for i in items}) != len(items):
            raise InvalidParameter(f"{name} must hold distinct items; got {items!r}")
        return items


@dataclass(frozen=True)
class MappingOf(_Compound):
    """A mapping whose keys meet ``keys`` (names chosen by the user) and whose values meet ``values``."""

    values: Constraint
    keys: Constraint = Text()

    @property
    def expected(self) -> str:  # type: ignore[override]
        return f"a mapping of {self.keys.expected} -> {self.values.expected}"

    def check(self, name: str, value: Any) -> dict[Any, Any]:
        if not isinstance(value, Mapping):
            raise InvalidParameter(f"{name} must be {self.expected} (key: value); got {value!r}")
        return {self.keys.check(f"a key of {name}", k): self.values.check(f"{name}[{k!r}]", v) for k, v in value.items()}


def check_values(constraints: Mapping[str, Constraint], values: Mapping[str, Any]) -> dict[str, Any]:
    """Each named value checked against its constraint; the values in their plain form."""
    return {name: constraint.check(name, values[name]) for name, constraint in constraints.items()}


def check_params(obj: Any, constraints: Mapping[str, Constraint]) -> None:
    """Check every attribute of ``obj`` named in ``constraints`` (an estimator's constructor arguments)."""
    check_values(constraints, {name: getattr(obj, name) for name in constraints})

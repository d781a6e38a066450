"""An ``input_noise`` setting and the strategy it names: a registered name, an `InputNoise` subclass or a
stateless instance resolved to a fresh strategy for one training set, the name a saved model records for it, and a
user's own strategies registered from their code.

The strategies themselves (what each does to the marginals) are `gpal.models.input_noise`'s.
"""

from __future__ import annotations

import copy
from typing import Any

from gpal.models.input_noise import InputNoise
from gpal.registry import INPUT_NOISE

__all__ = ["make_strategy", "register_input_noise", "registered_name", "strategy_class", "strategy_from_config",
           "unregister_input_noise"]


def strategy_class(spec: Any) -> type[InputNoise]:
    """The strategy class of an ``input_noise`` setting: a registered name, an `InputNoise` subclass, or an instance
    holding no variables (``NoInputNoise()``, ``FirstOrder()``).

    An instance with variables (``LatentInputs``' q(x_i) per row, ``AmortizedInputs``' network) is sized for one
    training set and refused: its class is built for each training set instead.

    Returns
    -------
    type
        The `InputNoise` subclass.
    """
    if isinstance(spec, str):
        return INPUT_NOISE.get_class(spec)
    if isinstance(spec, type) and issubclass(spec, InputNoise):
        return spec
    if isinstance(spec, InputNoise):
        if spec.variables:
            held = ", ".join(f"{v.name.split(':')[0]} {v.numpy().shape}" for v in spec.variables)
            raise ValueError(f"input_noise={spec!r} holds variables sized for one training set ({held}); give its "
                             f"class {type(spec).__qualname__} or its name {spec.name!r}, built for each training set")
        return type(spec)
    raise TypeError(f"input_noise must be a name {list(INPUT_NOISE)}, an InputNoise subclass or an InputNoise "
                    f"instance; got {spec!r}")


def make_strategy(spec: Any, **settings: Any) -> InputNoise:
    """A fresh strategy for one training set from an ``input_noise`` setting (see `strategy_class`).

    A name or a class is built by its ``build(**settings)``; an instance is copied, so that fitting never
    changes the object a user passed.

    Returns
    -------
    InputNoise
        The untrained strategy (never ``spec`` itself).
    """
    cls = strategy_class(spec)
    return copy.deepcopy(spec) if isinstance(spec, InputNoise) else cls.build(**settings)


def registered_name(cls: type[InputNoise]) -> str:
    """The name a saved model records for the strategy class ``cls``, refused where loading would not find ``cls``.

    Returns
    -------
    str
        ``cls.name``, under which ``cls`` itself is registered.
    """
    name = cls.name if isinstance(cls.name, str) else None  # a subclass naming none has tf.Module's property
    holder = None if name is None else INPUT_NOISE.get(name)
    if holder is not cls:
        held = ("it has no name" if name is None else f"its name {name!r} is registered to no class"
                if holder is None else f"its name {name!r} is {holder.__qualname__}'s")
        raise ValueError(f"input-noise strategy {cls.__qualname__} is not registered ({held}), so a saved model "
                         f"could not load it; register it first: gpal.register_input_noise('a_name', "
                         f"{cls.__qualname__})")
    return name


def register_input_noise(name: str, cls: type, *, replace: bool = False) -> None:
    """Make the strategy ``cls`` (a subclass of `InputNoise`) known as ``name`` to ``NoisyGPClassifier``,
    ``--input-noise``, the workflows and saved models, from a user's own code.

    ``name`` becomes the class's ``name``.  A name already registered is refused unless ``replace``; a built-in
    cannot be unregistered, but can be replaced.
    """
    INPUT_NOISE.register_named(name, cls, InputNoise, replace=replace)


def unregister_input_noise(name: str) -> None:
    """Forget a strategy a user registered; a built-in one stays."""
    INPUT_NOISE.unregister(name)


def strategy_from_config(config: dict[str, Any]) -> InputNoise:
    """Inverse of ``InputNoise.get_config``.

    Returns
    -------
    InputNoise
        The strategy registered under the config's ``name``, built from the rest of it.
    """
    config = dict(config)
    return INPUT_NOISE.get_class(config.pop("name", None))(**config)

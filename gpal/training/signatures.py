"""What models must share to be served by one compiled function, and the template such a function is traced on.

Tracing a training step or a predictor costs as much as hundreds of its calls, and an experiment fits many
models that differ only in their values.  `model_signature` is what models must share to be trained in one
batched step; `trace_key` what a compiled function of a model depends on but its values and training-set size
(the key of `gpal.training.svi.SharedTrainer`'s trainers, `gpal.training.batched`'s group steps and
`gpal.training.session`'s predictors); `template_copy` the private copy of the first such model that the
function is traced on.
"""

from __future__ import annotations

import itertools
import json
import threading
import weakref
from typing import Any

import numpy as np
import tensorflow as tf
from gpflow.utilities import parameter_dict

from gpal.models.input_prior import MixturePrior
from gpal.models.module_copy import module_copy
from gpal.models.state import stored_variable
from gpal.models.svgp import NoisySVGP

__all__ = ["lend_prior", "model_signature", "population_prior", "template_copy", "trace_key"]


# Settings that only seed a model's initial values: models that differ in them still share a step.
_INITIAL_ONLY = {"strategy": ("seed",)}


def model_signature(model: NoisySVGP) -> dict[str, Any]:
    """What models must share to be trained in one step or predicted by one trace: all but their values."""
    structure = model.structure()
    for part, keys in _INITIAL_ONLY.items():
        structure[part] = {k: v for k, v in structure[part].items() if k not in keys}
    variables = {path: (tuple(stored_variable(v).shape), stored_variable(v).dtype.name, bool(stored_variable(v).trainable), _transform_name(v))
                 for path, v in parameter_dict(model).items()}
    return {"structure": structure, "variables": variables}


def _transform_name(var: Any) -> str | None:
    transform = getattr(var, "transform", None)
    return None if transform is None else type(transform).__name__


def trace_key(model: NoisySVGP) -> str:
    """What a compiled function of ``model`` depends on but its values and training-set size, as a string.

    Models of one key compute alike, so one trace serves them all (``SharedTrainer``, ``ModelSession.function``):
    the ``model_signature`` without ``num_data`` (it only sizes the per-point tables, which compiled functions
    read at any row count), the classes of the model's parts (a plugged-in subclass computes otherwise under
    the same config) and any attribute a part sets over its class's (a patched method or setting).  A population
    prior enters by its shape: compiled code reads its values from variables, which a template takes from the
    model it serves (`lend_prior`) or a shared function takes as arguments (`population_prior`).
    """
    signature = model_signature(model)
    for part in (signature["structure"], signature["structure"]["strategy"]):
        part.pop("num_data", None)
    prior = signature["structure"]["strategy"].get("population_prior")
    if prior is not None:  # its values are read from variables (`lend_prior`), so only its shape is traced
        signature["structure"]["strategy"]["population_prior"] = {"kind": prior["kind"],
                                                                  "shape": list(np.shape(prior["means"]))}
    parts = [model, *model.submodules]
    signature["classes"] = sorted({f"{type(m).__module__}.{type(m).__qualname__}@{_token(type(m))}" for m in parts})
    signature["overrides"] = sorted(f"{type(m).__qualname__}.{name}={value!r}@{_token(value)}" for m in parts
                                    for name, value in vars(m).items() if hasattr(type(m), name))
    return json.dumps(signature, sort_keys=True, default=str)


# id(object) -> (a weak reference to it, its token): an address a dead object leaves is given a new token.
_TOKENS: dict[int, tuple[Any, int]] = {}
_NEXT_TOKEN = itertools.count(1)
_TOKENS_LOCK = threading.Lock()


def _token(obj: Any) -> int:
    """A number for ``obj`` that no other object gets, not even one later made at its address (``id`` alone would
    let a new class reuse a dead one's traces); 0 for what cannot be weakly referred to (values, not behaviour)."""
    try:
        ref = weakref.ref(obj)
    except TypeError:
        return 0
    with _TOKENS_LOCK:
        known = _TOKENS.get(id(obj))
        if known is not None and known[0]() is obj:
            return known[1]
        token = next(_NEXT_TOKEN)
        _TOKENS[id(obj)] = (ref, token)
        return token


def population_prior(model: NoisySVGP) -> MixturePrior | None:
    """The model's population prior (None under the broad one or without latent inputs)."""
    prior = getattr(model.strategy, "prior", None)
    return prior if isinstance(prior, MixturePrior) else None


def lend_prior(template: NoisySVGP, model: NoisySVGP) -> None:
    """The template's population prior at ``model``'s values, before the template trains or predicts for it."""
    prior = population_prior(template)
    if prior is not None:
        prior.assign(population_prior(model))


def template_copy(model: NoisySVGP) -> NoisySVGP:
    """A copy of ``model`` (20 times faster to make than ``NoisySVGP.from_structure``'s build) whose variables of
    unknown row count (per-point tables) stay so, as a plain deep copy would fix them at their present rows."""
    memo = {id(v): tf.Variable(v, shape=v.shape, trainable=v.trainable, name=v.name.split(":")[0])
            for v in model.variables if not v.shape.is_fully_defined()}
    return module_copy(model, memo)

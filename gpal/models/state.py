"""Plain-file state of gpflow objects: kernel structure as JSON, parameter values as arrays.

A saved model is its structure (which kernel, which shapes) plus the values of
its variables.  Parameters are stored unconstrained, as gpflow holds them, so a
reloaded model predicts bit for bit as the saved one.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import re
from typing import Any, Iterator, Mapping

import gpflow
import numpy as np
from gpflow.utilities import parameter_dict

__all__ = [
    "assign_module_values",
    "assign_saved_values",
    "kernel_from_config",
    "kernel_from_state",
    "kernel_state",
    "kernel_to_config",
    "module_values",
    "module_variables",
    "reading_values",
    "stored_variable",
]

_KERNEL_PARAMS = ("variance", "lengthscales", "alpha", "period")


def kernel_to_config(kernel: gpflow.kernels.Kernel) -> dict[str, Any]:
    """Structure of a gpflow kernel (class, active dims, parameter shapes), for plain-file saving.

    Supports gpflow's stationary kernels, Linear, the static kernels (Constant,
    White) and sums and products of them; other kernels raise ``NotImplementedError`` naming the class.
    """
    cls = type(kernel)
    if getattr(gpflow.kernels, cls.__name__, None) is not cls:
        raise NotImplementedError(f"cannot save kernel class {cls.__module__}.{cls.__qualname__}: not a gpflow kernel")
    if isinstance(kernel, gpflow.kernels.Combination):
        if not isinstance(kernel, (gpflow.kernels.Sum, gpflow.kernels.Product)):
            raise NotImplementedError(f"cannot save combination kernel {cls.__name__}")
        return {"class": cls.__name__, "kernels": [kernel_to_config(k) for k in kernel.kernels]}
    if not isinstance(kernel, (gpflow.kernels.Stationary, gpflow.kernels.Linear, gpflow.kernels.Static)):
        raise NotImplementedError(f"cannot save kernel class {cls.__name__}")
    dims = kernel.active_dims
    params = {p: list(getattr(kernel, p).shape) for p in _KERNEL_PARAMS if hasattr(kernel, p)}
    return {
        "class": cls.__name__,
        "active_dims": (
            {"indices": dims.tolist()} if isinstance(dims, np.ndarray) else {"slice": [dims.start, dims.stop, dims.step]}
        ),
        "params": params,
    }


def _origin(saved: Any) -> str:
    """``"FILE: "`` when ``saved`` was read from a model folder (it carries its ``source``), so messages name the file."""
    source = getattr(saved, "source", None)
    return f"{source}: " if source else ""


def _saved_kernel_class(config: Mapping[str, Any]) -> type:
    """The gpflow class a saved kernel config names, if it is one ``kernel_to_config`` writes."""
    name = config["class"]
    cls = getattr(gpflow.kernels, name, None) if isinstance(name, str) else None
    combination = "kernels" in config
    allowed = (gpflow.kernels.Sum, gpflow.kernels.Product) if combination else (
        gpflow.kernels.Stationary, gpflow.kernels.Linear, gpflow.kernels.Static)
    if not (isinstance(cls, type) and issubclass(cls, allowed)) or inspect.isabstract(cls):
        raise ValueError(
            f"{_origin(config)}kernel class {name!r} is not one gpal saves: expected a gpflow "
            + ("Sum or Product" if combination else "stationary kernel, Linear, Constant or White")
        )
    return cls


@functools.lru_cache(maxsize=None)
def _kernel_param_names(cls: type) -> tuple[str, ...]:
    """The saved parameters a kernel class has, sorted: read off one default instance per class, since building a
    kernel creates its parameters (TensorFlow variables and their transforms, milliseconds each)."""
    probe = cls()
    return tuple(sorted(p for p in _KERNEL_PARAMS if hasattr(probe, p)))


def kernel_from_config(config: Mapping[str, Any]) -> gpflow.kernels.Kernel:
    """Inverse of ``kernel_to_config`` (parameter values are placeholders of the right shape).

    An edited config (unknown class, parameters the class does not have) is refused by name.
    """
    cls = _saved_kernel_class(config)
    if "kernels" in config:
        return cls([kernel_from_config(k) for k in config["kernels"]])
    params = config["params"]
    expected = list(_kernel_param_names(cls))
    shapes_ok = all(isinstance(s, list) and all(isinstance(n, int) and n >= 0 for n in s) for s in params.values())
    if sorted(params) != expected or not shapes_ok:
        raise ValueError(
            f"{_origin(config)}saved {cls.__name__} kernel has parameters {dict(params)}; "
            f"expected the shapes (lists of sizes) of {expected}"
        )
    dims = config["active_dims"]
    active = slice(*dims["slice"]) if "slice" in dims else dims["indices"]
    kwargs = {p: np.ones(shape) if shape else 1.0 for p, shape in params.items()}
    return cls(active_dims=active, **kwargs)


def stored_variable(var: Any) -> Any:
    """The variable that holds a parameter's value: a gpflow ``Parameter``'s unconstrained one, else ``var``."""
    return var.unconstrained_variable if isinstance(var, gpflow.Parameter) else var


def module_variables(module: Any) -> dict[str, Any]:
    """Every variable of a gpflow module by path, as stored (a parameter's unconstrained variable): what
    ``reading_values`` takes from another model of the same structure."""
    return {key: stored_variable(var) for key, var in parameter_dict(module).items()}


def module_values(module: Any) -> dict[str, np.ndarray]:
    """Every variable of a gpflow module by path; parameters in their unconstrained (stored) form."""
    return {key: var.numpy() for key, var in module_variables(module).items()}


def assign_module_values(module: Any, values: Mapping[str, np.ndarray]) -> None:
    """Inverse of ``module_values`` on a module of the same structure; mismatched names or shapes are named."""
    _assign(module, values, _origin(values))


def assign_saved_values(module: Any, values: Mapping[str, np.ndarray], origin: str | None = None) -> None:
    """`assign_module_values` for values read from a file: each array must also have its variable's dtype
    (float64, not integers or booleans cast silently) and its exact current shape (a per-point table's rows too)."""
    origin = _origin(values) if origin is None else origin
    variables = parameter_dict(module)
    for key in sorted(set(variables) & set(values)):
        raw, value = stored_variable(variables[key]), np.asarray(values[key])
        if value.dtype != raw.dtype.as_numpy_dtype:
            raise ValueError(f"{origin}saved parameter {key!r} holds {value.dtype} values; the model stores "
                             f"{raw.dtype.name}: the file is corrupt or was edited")
        if value.shape != tuple(raw.value().shape):
            raise ValueError(f"{origin}saved parameter {key!r} has shape {value.shape}, but the model its config "
                             f"describes has {tuple(raw.value().shape)}: the config and the parameters disagree")
    _assign(module, values, origin)
    for key, var in variables.items():
        if isinstance(var, gpflow.Parameter) and _positive(var.transform) and not np.all(var.numpy() > 0):
            raise ValueError(f"{origin}saved parameter {key!r} is a positive quantity (a variance, a lengthscale) but "
                             f"its stored value {_shown(values[key])} makes it {_shown(var.numpy())}: the file is "
                             "corrupt or was edited")


def _positive(transform: Any) -> bool:
    """Whether a parameter's transform maps onto the positive numbers (gpflow's ``positive()``: a softplus or an
    exponential, shifted by a lower bound >= 0)."""
    import tensorflow_probability as tfp

    bijectors = transform.bijectors if isinstance(transform, tfp.bijectors.Chain) else [transform]
    return any(isinstance(b, (tfp.bijectors.Softplus, tfp.bijectors.Exp)) for b in bijectors) and all(
        isinstance(b, (tfp.bijectors.Softplus, tfp.bijectors.Exp))
        or isinstance(b, tfp.bijectors.Shift) and np.all(np.asarray(b.shift) >= 0) for b in bijectors)


def _shown(value: Any) -> str:
    value = np.asarray(value)
    return repr(value.item()) if value.size == 1 else f"min {value.min():.4g}"


def _assign(module: Any, values: Mapping[str, np.ndarray], origin: str) -> None:
    variables = parameter_dict(module)
    if set(variables) != set(values):
        raise ValueError(
            f"{origin}saved parameters do not match the model: missing {sorted(set(variables) - set(values))}, "
            f"unexpected {sorted(set(values) - set(variables))}"
        )
    for key, var in variables.items():
        raw, value = stored_variable(var), np.asarray(values[key])
        if not raw.shape.is_compatible_with(value.shape):
            raise ValueError(
                f"{origin}saved parameter {key!r} has shape {value.shape}, but the model its config describes "
                f"has {tuple(raw.shape)}: the config and the parameters disagree"
            )
        raw.assign(value)


def kernel_state(kernel: gpflow.kernels.Kernel, prefix: str) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """A kernel's structure (JSON) and its values as arrays keyed ``prefix + path``."""
    return kernel_to_config(kernel), {prefix + k: v for k, v in module_values(kernel).items()}


def kernel_from_state(config: Mapping[str, Any], arrays: Mapping[str, np.ndarray], prefix: str) -> gpflow.kernels.Kernel:
    """Inverse of ``kernel_state``: the kernel rebuilt with the values saved under ``prefix``."""
    kernel = kernel_from_config(config)
    assign_saved_values(kernel, {k[len(prefix) :]: v for k, v in arrays.items() if k.startswith(prefix)}, _origin(arrays))
    return kernel


_PATH_STEP = re.compile(r"\.(\w+)|\[(\d+)\]")


def _owner(module: Any, path: str) -> tuple[Any, str | int]:
    """The container holding the variable at a ``parameter_dict`` path, and its attribute name or index."""
    steps = _PATH_STEP.findall(path)
    owner = module
    for name, index in steps[:-1]:
        owner = getattr(owner, name) if name else owner[int(index)]
    name, index = steps[-1]
    return owner, (name if name else int(index))


@contextlib.contextmanager
def reading_values(module: Any, values: Mapping[str, Any]) -> Iterator[None]:
    """While inside, every variable of ``module`` reads as ``values[path]`` (unconstrained, as stored).

    The keys are those of ``module_values``.  A gpflow ``Parameter`` keeps its transform and reads
    the given tensor in place of its variable; a plain variable (per-point tables, network weights,
    jitter) is swapped in its container.  Traced inside a ``tf.function`` or ``tf.vectorized_map``,
    one model's code then serves any values of its shape: several models share one trace.
    """
    restore = []
    try:
        for path, var in parameter_dict(module).items():
            if isinstance(var, gpflow.Parameter):
                restore.append((var, None, var._pretransformed_input))
                var._pretransformed_input = values[path]
            else:
                owner, key = _owner(module, path)
                restore.append((owner, key, var))
                _put(owner, key, values[path])
        yield
    finally:
        for owner, key, old in reversed(restore):
            if key is None:
                owner._pretransformed_input = old
            else:
                _put(owner, key, old)


def _put(owner: Any, key: str | int, value: Any) -> None:
    if isinstance(key, int):
        owner[key] = value
    else:
        object.__setattr__(owner, key, value)  # past tf.Module's tracking: a tensor only stands in while tracing

"""Plain-file state of gpflow objects: kernel structure as JSON, parameter values as arrays.

A saved model is its structure (which kernel, which shapes) plus the values of
its variables.  Parameters are stored unconstrained, as gpflow holds them, so a
reloaded model predicts bit for bit as the saved one.
"""

from __future__ import annotations

from typing import Any, Mapping

import gpflow
import numpy as np
from gpflow.utilities import parameter_dict

__all__ = [
    "assign_module_values",
    "kernel_from_config",
    "kernel_from_state",
    "kernel_state",
    "kernel_to_config",
    "module_values",
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


def kernel_from_config(config: Mapping[str, Any]) -> gpflow.kernels.Kernel:
    """Inverse of ``kernel_to_config`` (parameter values are placeholders of the right shape)."""
    cls = getattr(gpflow.kernels, config["class"])
    if "kernels" in config:
        return cls([kernel_from_config(k) for k in config["kernels"]])
    dims = config["active_dims"]
    active = slice(*dims["slice"]) if "slice" in dims else dims["indices"]
    kwargs = {p: np.ones(shape) if shape else 1.0 for p, shape in config["params"].items()}
    return cls(active_dims=active, **kwargs)


def _raw(var: Any) -> Any:
    return var.unconstrained_variable if isinstance(var, gpflow.Parameter) else var


def module_values(module: Any) -> dict[str, np.ndarray]:
    """Every variable of a gpflow module by path; parameters in their unconstrained (stored) form."""
    return {key: _raw(var).numpy() for key, var in parameter_dict(module).items()}


def assign_module_values(module: Any, values: Mapping[str, np.ndarray]) -> None:
    """Inverse of ``module_values`` on a module of the same structure; mismatches are named."""
    variables = parameter_dict(module)
    if set(variables) != set(values):
        raise ValueError(
            f"saved parameters do not match the model: missing {sorted(set(variables) - set(values))}, "
            f"unexpected {sorted(set(values) - set(variables))}"
        )
    for key, var in variables.items():
        _raw(var).assign(values[key])


def kernel_state(kernel: gpflow.kernels.Kernel, prefix: str) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """A kernel's structure (JSON) and its values as arrays keyed ``prefix + path``."""
    return kernel_to_config(kernel), {prefix + k: v for k, v in module_values(kernel).items()}


def kernel_from_state(config: Mapping[str, Any], arrays: Mapping[str, np.ndarray], prefix: str) -> gpflow.kernels.Kernel:
    """Inverse of ``kernel_state``: the kernel rebuilt with the values saved under ``prefix``."""
    kernel = kernel_from_config(config)
    assign_module_values(kernel, {k[len(prefix) :]: v for k, v in arrays.items() if k.startswith(prefix)})
    return kernel

"""Full-batch L-BFGS-B (scipy) over TensorFlow variables, packed into one flat vector.

scipy optimises a float64 vector; the model keeps its parameters in ``tf.Variable``s (for
gpflow parameters, their unconstrained variables).  ``pack`` / ``unpack`` map between the
two in the order of the variable list, ``make_objective`` turns a compiled loss-and-gradients
function into scipy's ``fun(x) -> (f, g)``, and ``minimize`` runs L-BFGS-B and leaves the
variables at the answer.  Written here rather than through ``gpflow.optimizers.Scipy``,
which traces a new graph on every call: the callers trace their objective once per model.
"""

from __future__ import annotations

import math
from typing import Callable, Sequence

import numpy as np
import scipy.optimize
import tensorflow as tf

__all__ = ["make_objective", "minimize", "pack", "unpack"]

Objective = Callable[[np.ndarray], tuple[float, np.ndarray]]


def pack(tensors: Sequence[tf.Variable | tf.Tensor]) -> np.ndarray:
    """The values of ``tensors`` (variables or their gradients), flattened and concatenated in order."""
    return np.concatenate([t.numpy().ravel() for t in tensors])


def unpack(variables: Sequence[tf.Variable], x: np.ndarray) -> None:
    """Assign consecutive slices of ``x`` to ``variables``, each reshaped to its variable's shape."""
    start = 0
    for v in variables:
        size = int(np.prod(v.shape))
        v.assign(x[start : start + size].reshape(v.shape))
        start += size


def make_objective(
    variables: Sequence[tf.Variable],
    loss_and_gradients: Callable[[], tuple[tf.Tensor, Sequence[tf.Tensor]]],
    *,
    failure_value: float | None = None,
) -> Objective:
    """scipy's ``fun(x) -> (loss, gradient)``: assigns ``x`` to ``variables`` (left so) and evaluates.

    With ``failure_value``, a failed evaluation (TensorFlow's ``InvalidArgumentError``, e.g. a
    Cholesky that fails on CPU, or a non-finite loss or gradient, as it does on GPU) returns
    ``(failure_value, 0)``: L-BFGS-B's line search backtracks from a large finite value but
    gives up at inf.  Without it errors propagate.
    """

    def objective(x: np.ndarray) -> tuple[float, np.ndarray]:
        unpack(variables, x)
        if failure_value is None:
            loss, grads = loss_and_gradients()
            return float(loss), pack(grads)
        try:
            loss, grads = loss_and_gradients()
        except tf.errors.InvalidArgumentError:
            return failure_value, np.zeros_like(x)
        grad = pack(grads)
        if not (np.isfinite(float(loss)) and np.all(np.isfinite(grad))):
            return failure_value, np.zeros_like(x)
        return float(loss), grad

    return objective


def minimize(
    objective: Objective,
    variables: Sequence[tf.Variable],
    *,
    max_iter: int | None = None,
    max_fun: int | None = None,
    keep_best: bool = False,
) -> scipy.optimize.OptimizeResult:
    """L-BFGS-B on ``objective`` from the current values of ``variables``, which it leaves at the answer.

    The answer is scipy's ``x``; with ``keep_best`` it is instead the best point evaluated (the
    start is evaluated first), restored even if the run is interrupted: scipy may stop on
    ``max_fun`` at an untried line-search point, and this keeps the loss from increasing.
    """
    if not variables:
        raise ValueError("minimize needs at least one variable")
    options = {} if max_iter is None else {"maxiter": int(max_iter)}
    if max_fun is not None:
        options["maxfun"] = int(max_fun)
    x0 = pack(variables)
    if not keep_best:
        result = scipy.optimize.minimize(objective, x0, jac=True, method="L-BFGS-B", options=options)
        unpack(variables, result.x)
        return result
    best = {"f": math.inf, "x": x0}

    def fun(x: np.ndarray) -> tuple[float, np.ndarray]:
        f, g = objective(x)
        if f < best["f"]:
            best.update(f=f, x=x.copy())
        return f, g

    try:
        return scipy.optimize.minimize(fun, x0, jac=True, method="L-BFGS-B", options=options)
    finally:
        unpack(variables, best["x"])

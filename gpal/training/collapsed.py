"""Fitting paper 003's regressions: the Dirichlet GP (L-BFGS-B on the collapsed bound, per alpha_eps and
first-order round) and GP regression on the labels (its GPR + Platt baseline).

The label transforms, the bounds and the posteriors are the models'
(``gpal.models.families.dirichlet``, ``gpal.models.families.gpr_platt``); the optimal q(u) is
closed form there, so only the kernel, the noise variance or the inducing inputs are optimised here.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import tensorflow as tf
from scipy.optimize import OptimizeResult

from gpal.models.compiled import instance_function
from gpal.models.families.dirichlet import (
    DirichletPosterior, HeteroskedasticSGPR, class_frequency_offset, dirichlet_targets,
)
from gpal.models.families.gpr_platt import LabelRegression, regression_mean
from gpal.training import lbfgs

__all__ = ["PRIOR_MEANS", "VARIANCE_STARTS", "FitRecord", "fit_dirichlet_gp", "fit_label_regression", "maximize_bound"]

#: GPD's prior mean: gpal's zero (the paper's eq. 7), or its authors' class-frequency offset.
PRIOR_MEANS = ("zero", "class_frequency")
#: Where GPD's kernel variance starts: the kernel's own value, or var(y~) of the regressed targets (its authors').
VARIANCE_STARTS = ("kernel", "targets")


def maximize_bound(model: HeteroskedasticSGPR, max_iter: int) -> OptimizeResult:
    """Maximise the model's bound over the kernel and Z by L-BFGS-B on unconstrained values.

    The objective (``model.loss_and_gradients``) is traced once per model.
    """
    variables = model.trainable_variables
    return lbfgs.minimize(lbfgs.make_objective(variables, model.loss_and_gradients), variables, max_iter=max_iter)


@dataclass
class FitRecord:
    """What one fit did: per round the final negative bound, L-BFGS iterations, convergence, seconds."""

    alpha_epsilon: float
    rounds: list[dict[str, float]]

    def to_dict(self) -> dict[str, Any]:
        return {"alpha_epsilon": self.alpha_epsilon, "rounds": self.rounds}


def fit_dirichlet_gp(
    model: HeteroskedasticSGPR,
    codes: np.ndarray,
    alpha_epsilon: float,
    *,
    X_var: np.ndarray | None = None,
    first_order_rounds: int = 0,
    max_iter: int = 1000,
    prior_mean: str = "zero",
    variance_start: str = "kernel",
) -> tuple[DirichletPosterior, FitRecord]:
    """Fit GPD for one alpha_eps from the model's initial kernel and Z (``model.reset``).

    With ``X_var`` (standardised like the model's inputs), round 0 fits with the label
    noise sigma2 and each of the ``first_order_rounds`` refits uses
    sigma2 + Delta(previous posterior) (module docstring).  ``prior_mean="class_frequency"``
    regresses y~ - m (`class_frequency_offset`) and ``variance_start="targets"`` starts the kernel
    variance at the variance of the regressed targets: both as paper 003's authors' code does.
    """
    if prior_mean not in PRIOR_MEANS:
        raise ValueError(f"prior_mean must be one of {PRIOR_MEANS}; got {prior_mean!r}")
    if variance_start not in VARIANCE_STARTS:
        raise ValueError(f"variance_start must be one of {VARIANCE_STARTS}; got {variance_start!r}")
    C = int(model.Y.shape[1])
    Y, sigma2 = dirichlet_targets(codes, C, alpha_epsilon)
    offset = class_frequency_offset(Y, codes, C) if prior_mean == "class_frequency" else np.zeros(C)
    Y = Y - offset
    model.reset()
    model.set_targets(Y, sigma2)
    if variance_start == "targets":
        variance = getattr(model.kernel, "variance", None)
        if variance is None:
            raise ValueError(f"variance_start='targets' sets the kernel's variance, and {type(model.kernel).__name__} "
                             "has none; use a single kernel such as 'se_ard' or 'se_iso'")
        variance.assign(float(np.var(Y)))
    record = FitRecord(float(alpha_epsilon), [])
    for r in range(1 + (first_order_rounds if X_var is not None else 0)):
        if r > 0:
            model.noise.assign(sigma2 + model.posterior().extra_variance(model.X, X_var).numpy())
        start = time.perf_counter()
        try:
            result = maximize_bound(model, max_iter)
        except tf.errors.InvalidArgumentError as err:
            raise RuntimeError(
                f"Cholesky failed while fitting the Dirichlet GP (alpha_epsilon={alpha_epsilon}, round {r}): "
                f"{err.message}. Try standardising the inputs or fewer inducing points."
            ) from None
        record.rounds.append(
            {
                "neg_bound": float(result.fun),
                "n_iter": int(result.nit),
                "converged": bool(result.success),
                "seconds": time.perf_counter() - start,
            }
        )
    return model.posterior(offset), record


def fit_label_regression(kernel: Any, Z: np.ndarray, X: np.ndarray, Y: np.ndarray,
                         max_iter: int) -> tuple[LabelRegression, OptimizeResult]:
    """Titsias' SGPR on the targets Y (N, K) centred: kernel and noise variance by L-BFGS-B on its bound, Z fixed.

    The kernel is trained in place; the result's mean is ``regression_mean`` at the optimum.
    """
    import gpflow

    Yc = Y - Y.mean(axis=0)
    model = gpflow.models.SGPR((tf.constant(X), tf.constant(Yc)), kernel, inducing_variable=np.array(Z, dtype=np.float64),
                               noise_variance=max(float(Yc.var()) / 2.0, 1e-3))
    gpflow.set_trainable(model.inducing_variable, False)
    variables = list(model.trainable_variables)

    def loss_and_gradients() -> tuple[tf.Tensor, list[tf.Tensor]]:
        with tf.GradientTape(watch_accessed_variables=False) as tape:
            tape.watch(variables)
            loss = model.training_loss() / X.shape[0]
        return loss, tape.gradient(loss, variables)

    objective = lbfgs.make_objective(variables, instance_function(loss_and_gradients), failure_value=1e10)
    result = lbfgs.minimize(objective, variables, max_iter=max_iter, keep_best=True)
    return regression_mean(kernel, Z, X, Y, float(model.likelihood.variance.numpy())), result

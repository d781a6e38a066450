"""The constraints the estimator families share, declared once.

Each estimator class lists a constraint per constructor argument in ``_parameters``
(the vocabulary is `gpal.constraints`); ``GPClassifierMixin.validate_params`` checks them
all before any TensorFlow work and raises one clear message: the parameter, what was
expected, what was given. The contract test checks that every constructor argument has
a constraint, so a new parameter cannot go unchecked.  Here: the constraints several
families use (the kernel, the likelihood, the sparse-GP arguments).
"""

from __future__ import annotations

from typing import Any

from gpal.constraints import SEED, Boolean, Constraint, Integer, Satisfies
from gpal.registry import KERNELS, LIKELIHOODS

__all__ = ["KERNEL", "LIKELIHOOD", "SPARSE_GP_PARAMETERS"]


def is_gpflow_kernel(value: Any) -> bool:
    import gpflow

    return isinstance(value, gpflow.kernels.Kernel)


def _is_kernel(value: Any) -> bool:
    return value is None or (isinstance(value, str) and value in KERNELS) or is_gpflow_kernel(value)


KERNEL = Satisfies(_is_kernel, f"None, a kernel name {list(KERNELS.names())} or a gpflow kernel (copied per latent function)",
                   names=KERNELS.names())

#: The arguments every sparse-GP family takes, stated once; a family adds its own beside them.
SPARSE_GP_PARAMETERS: dict[str, Constraint] = {
    "num_inducing": Integer(1),
    "kernel": KERNEL,
    "standardize": Boolean(),
    "random_state": SEED,
    "progress": Boolean(),
}


def _is_likelihood(value: Any) -> bool:
    if isinstance(value, str):
        return value.lower() in LIKELIHOODS
    from gpal.models.likelihoods.base import Likelihood

    return isinstance(value, Likelihood)


LIKELIHOOD = Satisfies(_is_likelihood, f"a likelihood name {list(LIKELIHOODS.names())} or a gpal.models.Likelihood",
                       names=LIKELIHOODS.names())

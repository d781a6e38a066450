"""The kernel every gpal family starts from when the user gives none.

Squared exponential with one length scale per feature (ARD), all starting at
sqrt(d) on standardised inputs: the expected scaled squared distance between two
points, sum_j (x_j - x'_j)^2 / l^2, is then about 2 whatever the dimension d, so
the kernel starts neither near-diagonal in many dimensions (where gradients of the
bound vanish and L-BFGS stops at once, as it did on 64-d digits with l = 1) nor
flat in few.  For d = 1 this is GPflow's usual unit length scale.
"""

from __future__ import annotations

import gpflow
import numpy as np

from gpal.registry import KERNELS

__all__ = ["default_kernel", "default_lengthscale", "make_kernel", "matern52_plus_se", "se_ard_plus_noise", "se_isotropic"]

#: The initial sigma_0^2 of ``se_ard_plus_noise``: small beside the unit signal variance, then learned.
INITIAL_NOISE_TERM = 0.01


def default_lengthscale(n_features: int) -> float:
    """sqrt(d): the starting length scale of every feature."""
    if isinstance(n_features, bool) or not isinstance(n_features, (int, np.integer)) or n_features < 1:
        raise ValueError(f"n_features must be an integer >= 1; got {n_features!r}")
    return float(np.sqrt(n_features))


def default_kernel(n_features: int) -> gpflow.kernels.SquaredExponential:
    """A fresh SE-ARD kernel, unit variance, length scales sqrt(d)."""
    return gpflow.kernels.SquaredExponential(lengthscales=np.full(n_features, default_lengthscale(n_features)))


def se_isotropic(n_features: int) -> gpflow.kernels.SquaredExponential:
    """SE with one length scale shared by all features (unit variance, length scale sqrt(d)).

    Paper 003's kernel (Milios et al. 2018 run ``ARD=False`` in dirichletGPC's ``src/evaluation.py``,
    whose start mean(std(X)) sqrt(d) is sqrt(d) on standardised inputs): fewer parameters than SE-ARD,
    for when the features are on comparable scales.
    """
    return gpflow.kernels.SquaredExponential(lengthscales=default_lengthscale(n_features))


def se_ard_plus_noise(n_features: int) -> gpflow.kernels.Sum:
    """The noisy-input paper's kernel (paper 001, sec. 2): SE-ARD + sigma_0^2 I[x = x'], sigma_0^2 learned.

    The white term adds sigma_0^2 to the prior variance of f at every input but correlates no two
    inputs: it widens the latent marginals, so a source far from every inducing point is predicted
    less confidently than by SE-ARD alone.
    """
    return default_kernel(n_features) + gpflow.kernels.White(variance=INITIAL_NOISE_TERM)


def matern52_plus_se(n_features: int) -> gpflow.kernels.Sum:
    """Paper 000's Table V kernel (its ref. [33]'s): Matern 5/2 + SE, both ARD with variance 5, learned.

    The paper starts the Matern part at length scale 0.1 sqrt(d) (short-range structure) and the SE
    part at sqrt(d) (the smooth trend, as `default_kernel`); whether its length scales were one per
    feature is not said, here they are.
    """
    ell = default_lengthscale(n_features)
    return (gpflow.kernels.Matern52(variance=5.0, lengthscales=np.full(n_features, 0.1 * ell))
            + gpflow.kernels.SquaredExponential(variance=5.0, lengthscales=np.full(n_features, ell)))


def make_kernel(kernel: "str | gpflow.kernels.Kernel | None", n_features: int) -> gpflow.kernels.Kernel:
    """A fresh kernel for ``n_features`` inputs: a name in ``gpal.registry.KERNELS``, a kernel (copied), None (SE-ARD)."""
    if kernel is None:
        return default_kernel(n_features)
    if isinstance(kernel, str):
        return KERNELS.get_class(kernel)(n_features)
    return gpflow.utilities.deepcopy(kernel)

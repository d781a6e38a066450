"""Likelihoods: how labels depend on the latent functions, and nothing about inputs.

Each module defines subclasses of ``Likelihood``; defining one registers it in
``LIKELIHOODS`` by its ``name``. A new built-in likelihood is a new module here and its ``"module:Class"`` line in
``gpal.registry.LIKELIHOODS``, which imports it on first use; re-exporting it below is a convenience, not needed.
A user's own is registered from their code (`register_likelihood`).
"""

from gpal.models.likelihoods.base import (
    LIKELIHOODS,
    Likelihood,
    MonteCarloLikelihood,
    RobustMax,
    likelihood_from_config,
    make_likelihood,
    register_likelihood,
    unregister_likelihood,
)
from gpal.models.likelihoods.gaussian_noise import (
    GaussianNoiseLikelihood,
    LogitLikelihood,
    ProbitLikelihood,
    StepLikelihood,
)
from gpal.models.likelihoods.logistic_softmax import LogisticSoftmaxLikelihood
from gpal.models.likelihoods.softmax import SoftmaxLikelihood

__all__ = [
    "LIKELIHOODS",
    "GaussianNoiseLikelihood",
    "Likelihood",
    "LogisticSoftmaxLikelihood",
    "LogitLikelihood",
    "MonteCarloLikelihood",
    "ProbitLikelihood",
    "RobustMax",
    "SoftmaxLikelihood",
    "StepLikelihood",
    "likelihood_from_config",
    "make_likelihood",
    "register_likelihood",
    "unregister_likelihood",
]

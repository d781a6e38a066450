"""Model layer: sparse variational multi-latent GP, input-noise strategies, likelihoods.

A model is a choice of parts: ``LatentGPs`` (kernels, inducing points, whitened
q(u)) + an ``InputNoise`` strategy + a ``NoiseVariance`` spec + a ``Likelihood``,
assembled by ``NoisySVGP`` and initialised from data by ``build_model``.
"""

from gpal.models.input_noise import (
    NOISE_VARIANCE_MODES,
    STRATEGIES,
    AmortizedInputs,
    FirstOrder,
    InputNoise,
    LatentInputs,
    NoInputNoise,
    NoiseVariance,
)
from gpal.models.likelihoods import LIKELIHOODS, Likelihood, RobustMax, likelihood_from_config, make_likelihood
from gpal.models.svgp import LatentGPs, NoisySVGP, build_model
from gpal.models.gaussian_noise import GaussianNoiseLikelihood, LogitLikelihood, ProbitLikelihood, StepLikelihood
from gpal.models.logistic_softmax import LogisticSoftmaxLikelihood
from gpal.models.softmax import SoftmaxLikelihood

# The likelihood family, by name, for NoisyGPClassifier(likelihood=...) and saved configs.
for _cls in (
    GaussianNoiseLikelihood,
    StepLikelihood,
    ProbitLikelihood,
    LogitLikelihood,
    SoftmaxLikelihood,
    LogisticSoftmaxLikelihood,
):
    LIKELIHOODS[_cls.kind] = _cls
del _cls

__all__ = [
    "AmortizedInputs",
    "FirstOrder",
    "GaussianNoiseLikelihood",
    "InputNoise",
    "LIKELIHOODS",
    "LatentGPs",
    "LatentInputs",
    "Likelihood",
    "LogisticSoftmaxLikelihood",
    "LogitLikelihood",
    "NOISE_VARIANCE_MODES",
    "NoInputNoise",
    "NoiseVariance",
    "NoisySVGP",
    "ProbitLikelihood",
    "RobustMax",
    "STRATEGIES",
    "SoftmaxLikelihood",
    "StepLikelihood",
    "build_model",
    "likelihood_from_config",
    "make_likelihood",
]

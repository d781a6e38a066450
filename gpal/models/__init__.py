"""Model layer: sparse variational multi-latent GP, input-noise strategies, likelihoods.

A model is a choice of parts: ``LatentGPs`` (kernels, inducing points, whitened
q(u)) + an ``InputNoise`` strategy + a ``NoiseVariance`` spec + a ``Likelihood``,
assembled by ``NoisySVGP`` and initialised from data by ``build_model``.

GPflow is imported here with check_shapes' docstring rewriting off: at import, check_shapes parses
every decorated docstring to append its shapes (2 of GPflow's 4 CPU seconds of import on a 2-core
laptop), for ``help()`` pages that no run reads.  Shapes are still checked.
"""

import check_shapes

check_shapes.set_rewrite_docstrings(None)


from gpal.models.input_noise import AmortizedInputs, FirstOrder, InputNoise, LatentInputs, NoInputNoise
from gpal.models.latent_gps import LatentGPs
from gpal.models.likelihoods import (
    LIKELIHOODS,
    GaussianNoiseLikelihood,
    Likelihood,
    LogisticSoftmaxLikelihood,
    LogitLikelihood,
    ProbitLikelihood,
    RobustMax,
    SoftmaxLikelihood,
    StepLikelihood,
    likelihood_from_config,
    make_likelihood,
)
from gpal.models.noise_variance import NOISE_VARIANCE_MODES, NoiseVariance
from gpal.models.svgp import NoisySVGP, build_model

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
    "SoftmaxLikelihood",
    "StepLikelihood",
    "build_model",
    "likelihood_from_config",
    "make_likelihood",
]

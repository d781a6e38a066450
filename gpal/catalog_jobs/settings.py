"""The main job's estimator: where it differs from NoisyGPClassifier's defaults, stated once.

Its settings (CLI options, the ``classify`` workflow's keys) are generated from what the
estimator declares (`gpal.estimators.settings`); a catalog job takes its estimator as an
object and never names one of its parameters.
"""

from __future__ import annotations

import types
from typing import Any

from gpal.estimators.noisy_gp import NoisyGPClassifier

__all__ = ["MAIN_JOB_ESTIMATOR", "main_job_estimator"]

#: The main job's estimator (``gpal classify``, ``gpal train``, the ``classify`` workflow) where it differs
#: from NoisyGPClassifier's defaults: NIMGP with the population prior over the noiseless inputs, chosen by
#: the error-bar study (docs/results.md, issue 22); 50 epochs at Adam's step 0.03, as good on held-out
#: and later labels as 300 at 0.01 in six times fewer steps (the training-length study, docs/performance.md).
MAIN_JOB_ESTIMATOR = types.MappingProxyType(
    {"input_noise": "latent", "input_prior": "population", "epochs": 50, "learning_rate": 0.03, "num_inducing": 50,
     "batch_size": 200})


def main_job_estimator(**params: Any) -> NoisyGPClassifier:
    """The main job's NoisyGPClassifier, ``params`` replacing its settings."""
    return NoisyGPClassifier(**{**MAIN_JOB_ESTIMATOR, **params})

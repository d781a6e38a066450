"""The main job's estimator: where it differs from NoisyGPClassifier's defaults, stated once.

Its settings (CLI options, the ``classify`` workflow's keys) are generated from what the
estimator declares (`gpal.estimators.settings`); a catalog job takes its estimator as an
object and never names one of its parameters.
"""

from __future__ import annotations

import types
import warnings
from typing import TYPE_CHECKING, Any

from gpal.estimators.params import NOISY_GP_PARAMETERS, input_prior_used
from gpal.registry import ROWS_PER_PRIOR_COMPONENT

if TYPE_CHECKING:
    from gpal.estimators.noisy_gp import NoisyGPClassifier

__all__ = ["MAIN_JOB_ESTIMATOR", "MAIN_JOB_PARAMETERS", "FewRowsWarning", "main_job_estimator", "prior_for_rows"]

#: The main job's estimator (``gpal classify``, ``gpal train``, the ``classify`` workflow) where it differs
#: from NoisyGPClassifier's defaults: NIMGP with the population prior over the noiseless inputs, chosen by
#: where the catalog's error bars pay (docs/results.md, "Where the error bars pay"); 50 epochs at Adam's step 0.03,
#: as good on held-out and later labels as 300 at 0.01 in six times fewer steps (docs/calibration.md).
#: Every epoch runs (``tol=None``): the length was chosen so.
MAIN_JOB_ESTIMATOR = types.MappingProxyType(
    {"input_noise": "latent", "input_prior": "population", "epochs": 50, "learning_rate": 0.03, "num_inducing": 50,
     "batch_size": 200, "tol": None})


#: The parameters the main job's estimator declares, read without importing it (scikit-learn, pandas): what the
#: command line's parser needs to answer a mistyped option.
MAIN_JOB_PARAMETERS = NOISY_GP_PARAMETERS


def main_job_estimator(**params: Any) -> NoisyGPClassifier:
    """The main job's NoisyGPClassifier, ``params`` replacing its settings."""
    from gpal.estimators.noisy_gp import NoisyGPClassifier

    return NoisyGPClassifier(**{**MAIN_JOB_ESTIMATOR, **params})


class FewRowsWarning(UserWarning):
    """The model was adapted to the few training rows it has (a smaller population prior, or the broad prior)."""


def prior_for_rows(estimator: Any, n_rows: int) -> dict[str, Any] | None:
    """Adapt ``estimator`` (in place) to ``n_rows`` training rows: a population prior of fewer components where its
    ``prior_components`` need more rows than there are (`ROWS_PER_PRIOR_COMPONENT` each), the broad prior below
    one component's rows; said in a `FewRowsWarning`.  A campaign starts from a handful of labels.

    Returns
    -------
    dict or None
        The parameters changed (for the run's record), None where the prior fits the rows as it is.
    """
    asked = int(estimator.prior_components)
    fits = int(n_rows) // ROWS_PER_PRIOR_COMPONENT
    if input_prior_used(estimator) != "population" or fits >= asked:
        return None
    changed = {"prior_components": fits} if fits >= 1 else {"input_prior": "broad"}
    estimator.set_params(**changed)
    now = f"a {fits}-component population prior" if fits >= 1 else "the broad prior N(0, prior_variance I)"
    warnings.warn(f"{n_rows} training rows are too few for a {asked}-component population prior "
                  f"({ROWS_PER_PRIOR_COMPONENT} rows per component); the model uses {now}", FewRowsWarning,
                  stacklevel=2)
    return changed

"""gpal: Gaussian-process classification of catalog sources with noisy inputs.

Importing gpal is cheap: TensorFlow-backed pieces load on first use.
"""

from importlib import import_module
from typing import Any

from gpal.quiet import quiet_tensorflow_unless_chosen

# Before any gpal module imports TensorFlow: its CUDA probing lines read like failures to a library user too.
quiet_tensorflow_unless_chosen()

__version__ = "0.4.0"

_LAZY = {
    # loaded on first use too: ``gpal --help`` and ``gpal --version`` import this package and need none of them
    "NoisyDataset": "gpal.data.dataset",
    "Split": "gpal.data.splits",
    "Standardizer": "gpal.data.standardizer",
    "load_catalog": "gpal.catalogs",
    "NoisyGPClassifier": "gpal.estimators.noisy_gp",
    "DirichletGPClassifier": "gpal.estimators.dirichlet",
    "LogisticBoundGPClassifier": "gpal.estimators.logistic_bound",
    "LogisticSoftmaxGPClassifier": "gpal.estimators.logistic_softmax",
    "GPRPlattClassifier": "gpal.estimators.gpr_platt",
    "PopulationOutlierScore": "gpal.estimators.outliers",
    "fit_batched": "gpal.estimators.batched",
    "predict_proba_batched": "gpal.estimators.batched",
    # a user's own releases, presets, acquisitions, likelihoods and input-noise strategies, registered at run time
    # (docs/extending.md)
    "register_release": "gpal.catalogs.releases",
    "unregister_release": "gpal.catalogs.releases",
    "register_preset": "gpal.catalogs.features.presets",
    "unregister_preset": "gpal.catalogs.features.presets",
    "register_acquisition": "gpal.active.base",
    "unregister_acquisition": "gpal.active.base",
    "register_likelihood": "gpal.models.likelihoods.base",
    "unregister_likelihood": "gpal.models.likelihoods.base",
    "register_input_noise": "gpal.models.input_noise_setting",
    "unregister_input_noise": "gpal.models.input_noise_setting",
}

__all__ = [*_LAZY]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'gpal' has no attribute {name!r}")


def __dir__() -> list[str]:
    """The public names, the lazily loaded ones included (tab completion and ``dir(gpal)`` list them)."""
    return sorted(set(__all__) | {"__version__"})

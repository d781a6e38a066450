"""The extension points, by name: estimator families, likelihoods, input-noise strategies, acquisitions.

Each registry maps a name to a class. Built-in entries are written here as
``"module:Class"`` and imported on first use, so the names (for the CLI's
``choices=``, the workflow schemas and the docs) cost no TensorFlow import. A class
defined elsewhere can join with ``register`` (likelihoods and acquisitions do so
themselves when they declare a name). Adding a built-in is one line here; nothing
else keeps a list.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any, Iterator, MutableMapping

__all__ = ["ACQUISITIONS", "ESTIMATORS", "FOLLOW_UP_ACQUISITION", "INPUT_NOISE", "INPUT_PRIORS", "KERNELS",
           "LATENT_INPUT_STRATEGIES", "LIKELIHOODS", "Registry"]

#: Priors over the noiseless inputs (``gpal.models.input_prior``): the paper's broad N(0, s I), or a
#: mixture deconvolved from the sources.  Two fixed choices, not an extension point, named here so the
#: CLI offers them without importing TensorFlow.
INPUT_PRIORS = ("broad", "population")
#: The input-noise strategies with latent noiseless inputs, the ones an input prior is a prior of.
LATENT_INPUT_STRATEGIES = ("latent", "amortized")
#: The acquisition ``gpal active`` uses by default and the main job ranks its follow-up candidates by:
#: BALD won the simulated DR4 follow-up study (docs/active_learning.md), and it scores what a label
#: can teach the model rather than how ambiguous a faint source is whatever we learn.
FOLLOW_UP_ACQUISITION = "bald"


class Registry(MutableMapping[str, type]):
    """Names -> classes; built-in entries are import paths resolved on first use."""

    def __init__(self, what: str, entries: dict[str, str]):
        self.what = what
        self._entries: dict[str, type | str] = dict(entries)

    def names(self) -> tuple[str, ...]:
        """The registered names, in registration order, without importing anything."""
        return tuple(self._entries)

    def __getitem__(self, name: str) -> type:
        entry = self._entries[name]
        if isinstance(entry, str):
            module, attr = entry.split(":")
            entry = self._entries[name] = getattr(import_module(module), attr)
        return entry

    def get_class(self, name: Any) -> type:
        """The class registered as ``name``, or an error listing the valid names."""
        if not isinstance(name, str) or name not in self._entries:
            raise ValueError(f"unknown {self.what} {name!r}; choose one of {list(self._entries)}")
        return self[name]

    def register(self, name: str, cls: type) -> None:
        """Add ``cls`` as ``name``; the built-in entry of that name must be this very class."""
        entry = self._entries.get(name)
        if isinstance(entry, str):
            if entry != f"{cls.__module__}:{cls.__qualname__}":
                raise ValueError(f"{self.what} name {name!r} is taken by {entry}")
        elif entry is not None and entry is not cls and entry.__qualname__ != cls.__qualname__:
            raise ValueError(f"{self.what} name {name!r} is taken by {entry.__module__}:{entry.__qualname__}")
        self._entries[name] = cls

    def __setitem__(self, name: str, cls: type) -> None:
        self._entries[name] = cls

    def __delitem__(self, name: str) -> None:
        del self._entries[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __repr__(self) -> str:
        return f"Registry({self.what!r}, {list(self._entries)})"


ESTIMATORS = Registry("estimator family", {
    "noisy_gp": "gpal.estimators.noisy_gp:NoisyGPClassifier",
    "dirichlet": "gpal.estimators.dirichlet:DirichletGPClassifier",
    "logistic_bound": "gpal.estimators.logistic_bound:LogisticBoundGPClassifier",
    "logistic_softmax": "gpal.estimators.logistic_softmax:LogisticSoftmaxGPClassifier",
})

LIKELIHOODS = Registry("likelihood", {
    "softmax": "gpal.models.likelihoods.softmax:SoftmaxLikelihood",
    "robustmax": "gpal.models.likelihoods.base:RobustMax",
    "step": "gpal.models.likelihoods.gaussian_noise:StepLikelihood",
    "probit": "gpal.models.likelihoods.gaussian_noise:ProbitLikelihood",
    "logit": "gpal.models.likelihoods.gaussian_noise:LogitLikelihood",
    "gaussian_noise": "gpal.models.likelihoods.gaussian_noise:GaussianNoiseLikelihood",
    "logistic_softmax": "gpal.models.likelihoods.logistic_softmax:LogisticSoftmaxLikelihood",
})

#: Kernel factories ``n_features -> kernel`` by name, for settings that cannot hold a kernel object.
KERNELS = Registry("kernel", {
    "se_ard": "gpal.models.kernels:default_kernel",
    "se_ard_plus_noise": "gpal.models.kernels:se_ard_plus_noise",
})

INPUT_NOISE = Registry("input_noise", {
    "none": "gpal.models.input_noise:NoInputNoise",
    "latent": "gpal.models.input_noise:LatentInputs",
    "amortized": "gpal.models.input_noise:AmortizedInputs",
    "first_order": "gpal.models.input_noise:FirstOrder",
})

ACQUISITIONS = Registry("acquisition", {
    "entropy": "gpal.active.acquisition:PredictiveEntropy",
    "random": "gpal.active.acquisition:RandomSampling",
    "bald": "gpal.active.acquisition:BALD",
    "epig": "gpal.active.acquisition:EPIG",
    "margin": "gpal.active.acquisition:Margin",
    "least_confidence": "gpal.active.acquisition:LeastConfidence",
    "discovery": "gpal.active.acquisition:Discovery",
})

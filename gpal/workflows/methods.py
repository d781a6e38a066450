"""The paper's four classifiers and their shared training settings, as schema sections.

Every noisy-input workflow names a subset of MGP / NIMGP / NIMGP-NN / NIMGP-FO and
one ``training`` block of `gpal.NoisyGPClassifier` settings shared by them; this
module turns both into the parameter dicts `gpal.runs.repeated_splits` and the classifier take.
The block's defaults are the classifier's own (a kind replaces some, e.g. the paper's
batch size), so a setting a workflow file leaves out is what ``NoisyGPClassifier()`` uses.
"""

from __future__ import annotations

from typing import Any, Mapping

from gpal.constraints import AnyOf, Boolean, Integer, ListOf, OneOf, Optional, Real
from gpal.estimators.noisy_gp import NoisyGPClassifier
from gpal.registry import KERNELS, LIKELIHOODS, NOISE_VARIANCE_MODES
from gpal.runs.repeated_splits import NOISY_INPUT_METHODS, select_methods
from gpal.workflows.schema import Field

__all__ = ["AUTO", "classifier_params", "methods_field", "num_inducing_for", "training_schema"]

AUTO = "auto"

#: The ``training`` block: NoisyGPClassifier parameter -> (constraint, documentation).
_TRAINING = {
    "noise_variance": (OneOf(NOISE_VARIANCE_MODES), "input-noise variances: the data's error bars, learned, or both"),
    "likelihood": (OneOf(LIKELIHOODS.names()), "likelihood of the sparse GP"),
    "num_inducing": (AnyOf((OneOf([AUTO]), Integer(1))),
                     "inducing points per latent function, or 'auto' = min(100, 5% of the training rows)"),
    "batch_size": (Integer(1), "Adam minibatch size"),
    "epochs": (Integer(1), "training epochs"),
    "learning_rate": (Real(0, low_open=True), "Adam learning rate"),
    "n_samples": (Integer(1), "Monte Carlo input samples at prediction"),
    "prior_variance": (Real(0, low_open=True), "variance of the prior on noiseless inputs"),
    "hidden_sizes": (ListOf(Integer(1), unique=False), "hidden layers of NIMGP-NN's network"),
    "epsilon": (Real(0, 1, low_open=True, high_open=True), "robust-max label-flip probability"),
    "learn_epsilon": (Boolean(), "learn epsilon instead of fixing it"),
    "standardize": (Boolean(), "standardise inputs on the training rows"),
    "kernel": (Optional(OneOf(KERNELS.names())), "kernel of every latent function by name: null or se_ard is SE-ARD, "
               "se_ard_plus_noise adds the paper's learned sigma_0^2 I[x = x'] term"),
}


def methods_field(default: list[str] | None = None) -> Field:
    return Field(
        ListOf(OneOf(list(NOISY_INPUT_METHODS))),
        default=list(default or NOISY_INPUT_METHODS),
        doc=f"classifiers to run, a list from {list(NOISY_INPUT_METHODS)}",
    )


def _plain(value: Any) -> Any:
    """A default as a YAML file would write it (a tuple as a list)."""
    return list(value) if isinstance(value, tuple) else value


def training_schema(**defaults: Any) -> dict[str, Field]:
    """NoisyGPClassifier settings shared by every method; ``defaults`` replace the classifier's own."""
    unknown = sorted(set(defaults) - set(_TRAINING))
    if unknown:
        raise TypeError(f"training_schema got defaults for {unknown}, which are not training settings {list(_TRAINING)}")
    own = NoisyGPClassifier().get_params(deep=False)
    d = {name: _plain(own[name]) for name in _TRAINING} | defaults
    return {name: Field(constraint, d[name], doc) for name, (constraint, doc) in _TRAINING.items()}


def num_inducing_for(training: Mapping[str, Any], n_train: int) -> int:
    """The ``num_inducing`` setting with 'auto' resolved as in the paper: min(100, 5% of N)."""
    value = training["num_inducing"]
    return max(1, min(100, int(0.05 * n_train))) if value == AUTO else int(value)


def classifier_params(methods: list[str], training: Mapping[str, Any], n_train: int) -> dict[str, dict[str, Any]]:
    """Method name -> NoisyGPClassifier parameters (no seed: the runner gives each unit its own)."""
    common = {**training, "num_inducing": num_inducing_for(training, n_train),
              "hidden_sizes": tuple(training["hidden_sizes"]), "progress": False}
    if common.get("kernel") is None:  # the estimator's default, left unnamed so existing method specs still match
        del common["kernel"]
    return select_methods(methods, **common)

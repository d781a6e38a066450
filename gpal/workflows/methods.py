"""The paper's four classifiers and their shared training settings, as schema sections.

Every noisy-input workflow names a subset of MGP / NIMGP / NIMGP-NN / NIMGP-FO and
one ``training`` block of `gpal.NoisyGPClassifier` settings shared by them; this
module turns both into the parameter dicts `gpal.runs.repeated_splits` and the classifier take.
"""

from __future__ import annotations

from typing import Any, Mapping

from gpal.runs.repeated_splits import NOISY_INPUT_METHODS, select_methods
from gpal.workflows.schema import Field, boolean, choice, integer, list_of, number

__all__ = ["AUTO", "classifier_params", "methods_field", "num_inducing_for", "training_schema"]

AUTO = "auto"


def _num_inducing(value: Any) -> Any:
    return value if value == AUTO else integer(1)(value)


def methods_field(default: list[str] | None = None) -> Field:
    return Field(
        list_of(choice(list(NOISY_INPUT_METHODS))),
        default=list(default or NOISY_INPUT_METHODS),
        doc=f"classifiers to run, a list from {list(NOISY_INPUT_METHODS)}",
    )


def training_schema(**defaults: Any) -> dict[str, Field]:
    """NoisyGPClassifier settings shared by every method; ``defaults`` replace the classifier's own."""
    from gpal.registry import KERNELS, LIKELIHOODS

    d = {
        "noise_variance": "known", "likelihood": "robustmax", "num_inducing": 100, "batch_size": 50,
        "epochs": 750, "learning_rate": 0.01, "n_samples": 300, "prior_variance": 1000.0, "hidden_sizes": [50],
        "epsilon": 1e-3, "learn_epsilon": False, "standardize": True, "kernel": "se_ard", **defaults,
    }
    return {
        "noise_variance": Field(choice(["known", "learned", "both"]), d["noise_variance"],
                                "input-noise variances: the data's error bars, learned, or both"),
        "likelihood": Field(choice(LIKELIHOODS.names()), d["likelihood"], "likelihood of the sparse GP"),
        "num_inducing": Field(_num_inducing, d["num_inducing"],
                              "inducing points per latent function, or 'auto' = min(100, 5% of the training rows)"),
        "batch_size": Field(integer(1), d["batch_size"], "Adam minibatch size"),
        "epochs": Field(integer(1), d["epochs"], "training epochs"),
        "learning_rate": Field(number(0, open_low=True), d["learning_rate"], "Adam learning rate"),
        "n_samples": Field(integer(1), d["n_samples"], "Monte Carlo input samples at prediction"),
        "prior_variance": Field(number(0, open_low=True), d["prior_variance"], "variance of the prior on noiseless inputs"),
        "hidden_sizes": Field(list_of(integer(1), unique=False), d["hidden_sizes"], "hidden layers of NIMGP-NN's network"),
        "epsilon": Field(number(0, 1, open_low=True, open_high=True), d["epsilon"], "robust-max label-flip probability"),
        "learn_epsilon": Field(boolean, d["learn_epsilon"], "learn epsilon instead of fixing it"),
        "standardize": Field(boolean, d["standardize"], "standardise inputs on the training rows"),
        "kernel": Field(choice(KERNELS.names()), d["kernel"], "kernel of every latent function: SE-ARD, or SE-ARD plus "
                        "the paper's learned sigma_0^2 I[x = x'] term"),
    }


def num_inducing_for(training: Mapping[str, Any], n_train: int) -> int:
    """The ``num_inducing`` setting with 'auto' resolved as in the paper: min(100, 5% of N)."""
    value = training["num_inducing"]
    return max(1, min(100, int(0.05 * n_train))) if value == AUTO else int(value)


def classifier_params(methods: list[str], training: Mapping[str, Any], n_train: int) -> dict[str, dict[str, Any]]:
    """Method name -> NoisyGPClassifier parameters (no seed: the runner gives each unit its own)."""
    common = {**training, "num_inducing": num_inducing_for(training, n_train),
              "hidden_sizes": tuple(training["hidden_sizes"]), "progress": False}
    if common.get("kernel") == "se_ard":  # the estimator's default, left unnamed so existing run folders still match
        del common["kernel"]
    return select_methods(methods, **common)

"""The paper's four classifiers and their shared training settings, as schema sections.

Every noisy-input workflow names a subset of MGP / NIMGP / NIMGP-NN / NIMGP-FO and
one ``training`` block of `gpal.NoisyGPClassifier` settings shared by them; this
module turns both into the parameter dicts `gpal.runs.repeated_splits` and the classifier take.
The block is generated from what the classifier declares (constraints, defaults, meanings:
`gpal.estimators.settings`); a kind replaces some defaults (e.g. the paper's batch size), so a
setting a workflow file leaves out is what ``NoisyGPClassifier()`` uses, but for `WORKFLOW_TRAINING`.
"""

from __future__ import annotations

import warnings
from dataclasses import replace
from typing import Any, Mapping, Sequence

from gpal.constraints import AnyOf, ListOf, MappingOf, OneOf, Options
from gpal.estimators.noisy_gp import NoisyGPClassifier
from gpal.estimators.settings import estimator_settings
from gpal.registry import INPUT_NOISE, Q_X_FORMS, Q_X_UPDATES
from gpal.runs.repeated_splits import NOISY_INPUT_METHODS, select_methods
from gpal.workflows.schema import Field, fields_from_settings

__all__ = ["AUTO", "AUTO_ALL_ROWS", "TRAINING", "WORKFLOW_TRAINING", "check_noisy_input_options", "classifier_params",
           "merged", "method_options_field", "method_training", "methods_field", "noisy_input_method_options",
           "num_inducing_for", "training_schema"]

AUTO = "auto"
#: ``num_inducing`` as paper 001's authors' UCI scripts set it: min(100, 5 % of all the data set's rows, training and
#: test; GPInputNoise experiments/uci/*/test_real.py, the inducing rows' size), where ``AUTO`` counts the training rows.
AUTO_ALL_ROWS = "auto_all_rows"

#: The ``training`` block: the NoisyGPClassifier parameters a noisy-input workflow may set. Each field's
#: constraint, default and meaning are the estimator's own (`gpal.estimators.settings`); ``num_inducing``
#: also takes 'auto', the paper's rule (`num_inducing_for`).
TRAINING = ("noise_variance", "likelihood", "num_inducing", "batch_size", "epochs", "learning_rate", "n_samples",
            "prior_variance", "hidden_sizes", "likelihood_options", "standardize", "kernel",
            "initial_learned_variance", "inducing_start", "q_x_form", "q_x_update", "share_kernel_and_inducing", "tol")


#: The training settings a workflow starts from where the estimator's defaults are the main job's instead: the values
#: the workflows' records were made with (100 inducing points, batch 50, Adam's step 0.01, paper 001's batch and step).
#: A script that fits `gpal.NoisyGPClassifier` itself and means to train as a workflow does passes these.
WORKFLOW_TRAINING = {"num_inducing": 100, "batch_size": 50, "learning_rate": 0.01}


def methods_field(default: list[str] | None = None) -> Field:
    return Field(
        ListOf(OneOf(list(NOISY_INPUT_METHODS))),
        default=list(default or NOISY_INPUT_METHODS),
        doc=f"classifiers to run, a list from {list(NOISY_INPUT_METHODS)}",
    )


def training_schema(**defaults: Any) -> dict[str, Field]:
    """NoisyGPClassifier settings shared by every method; ``defaults`` replace the classifier's own."""
    unknown = sorted(set(defaults) - set(TRAINING))
    if unknown:
        raise TypeError(f"training_schema got defaults for {unknown}, which are not training settings {list(TRAINING)}")
    fields = fields_from_settings(estimator_settings(NoisyGPClassifier(), TRAINING),
                                  **{**WORKFLOW_TRAINING, **defaults})
    inducing = fields["num_inducing"]
    fields["num_inducing"] = replace(inducing, constraint=AnyOf((OneOf([AUTO, AUTO_ALL_ROWS]), inducing.constraint)),
                                     doc=f"{inducing.doc}; or '{AUTO}' = min(100, 5% of the training rows), or "
                                         f"'{AUTO_ALL_ROWS}' = min(100, 5% of all the rows, training and test, as "
                                         "paper 001's authors count them)")
    return fields


def num_inducing_for(training: Mapping[str, Any], n_train: int, n_rows: int | None = None) -> int:
    """The ``num_inducing`` setting with 'auto' resolved as in the paper, min(100, 5% of the ``n_train`` training
    rows), and 'auto_all_rows' as its authors' scripts, min(100, 5% of the data set's ``n_rows``)."""
    value = training["num_inducing"]
    if value == AUTO_ALL_ROWS:
        if n_rows is None:
            raise ValueError(f"num_inducing={AUTO_ALL_ROWS!r} counts a data set's training and test rows, which this "
                             f"workflow does not split; use {AUTO!r} (5% of the training rows) or a number")
        return max(1, min(100, int(0.05 * n_rows)))
    return max(1, min(100, int(0.05 * n_train))) if value == AUTO else int(value)


def classifier_params(methods: list[str], training: Mapping[str, Any], n_train: int,
                      n_rows: int | None = None) -> dict[str, dict[str, Any]]:
    """Method name -> NoisyGPClassifier parameters (no seed: the runner gives each unit its own), for ``n_train``
    training rows of a data set of ``n_rows`` (None: a workflow that does not split one).

    ``q_x_form`` and ``q_x_update`` are the q(x_i) of the methods that have one per training row (``q_x_form``:
    NIMGP and NIMGP-NN; ``q_x_update``: NIMGP) and how Adam moves it; the others run as they would without them.
    """
    common = {**training, "num_inducing": num_inducing_for(training, n_train, n_rows),
              "hidden_sizes": tuple(training["hidden_sizes"]), "progress": False}
    if common.get("kernel") is None:  # the estimator's default, left unnamed so existing method specs still match
        del common["kernel"]
    if not common.get("share_kernel_and_inducing", True):  # likewise
        del common["share_kernel_and_inducing"]
    defaults = {"q_x_form": Q_X_FORMS[0], "q_x_update": Q_X_UPDATES[0]}
    q_x = {name: common.pop(name, default) for name, default in defaults.items()}
    params = select_methods(methods, **common)
    for name, value in q_x.items():
        if value == defaults[name]:  # the default left unnamed, so existing method specs still match
            continue
        for method in params.values():
            if value in getattr(INPUT_NOISE.get_class(method["input_noise"]), f"{name}s"):  # q_x_forms, q_x_updates
                method[name] = value
    return params


def method_options_field(block: str) -> Field:
    """The ``method_options`` of a workflow whose methods are the noisy-input ones: method -> settings of ``block``."""
    return Field(MappingOf(Options()), {},
                 f"method -> settings of the {block} block that replace the block's for that method alone, its "
                 "likelihood_options merged key by key (e.g. paper 001's authors' MGP: {likelihood_options: "
                 "{flip_spread: all}}); checked when the file loads")


def merged(own: Mapping[str, Any], options: Mapping[str, Any]) -> dict[str, Any]:
    """``own`` settings with ``options`` in place, ``likelihood_options`` merged key by key: what makes the method
    itself (GPCsm's bound, a fixed delta, robust-max's flip rate) stays, an option adds to it, never drops it."""
    params = {**own, **options}
    if "likelihood_options" in own and "likelihood_options" in options:
        params["likelihood_options"] = {**(own["likelihood_options"] or {}), **(options["likelihood_options"] or {})}
    return params


def method_training(method: str, training: Mapping[str, Any],
                    method_options: Mapping[str, Mapping[str, Any]] | None) -> dict[str, Any]:
    """The training settings ``method`` runs with: the block's, with its ``method_options`` in place (`merged`)."""
    options = (method_options or {}).get(method)
    return merged(training, options) if options else dict(training)


def check_noisy_input_options(method: str, options: Mapping[str, Any], training: Mapping[str, Any] | None,
                              block: str) -> dict[str, Any]:
    """A noisy-input method's ``method_options``: settings of the workflow's ``block`` (its ``training`` block),
    checked by building the method's estimator as the run will, the block with them in place."""
    options = dict(options or {})
    settings = list(TRAINING if training is None else training)
    unknown = sorted(set(options) - set(settings))
    if unknown:
        raise ValueError(f"method_options.{method}: the noisy-input methods take settings of the {block} block "
                         f"{settings}; {unknown} is not one")
    if training is None:
        raise ValueError(f"method_options.{method} replaces settings of the {block} block, which this run has not")
    params = classifier_params([method], merged(training, options), 100, 100)[method]
    try:
        NoisyGPClassifier(**params).validate_params()
    except ValueError as err:
        raise ValueError(f"method_options.{method}: {err}") from None
    return options


def noisy_input_method_options(method_options: Mapping[str, Mapping[str, Any]], methods: Sequence[str],
                               training: Mapping[str, Any], block: str) -> dict[str, dict[str, Any]]:
    """``method -> settings`` of a workflow whose methods are all noisy-input ones, each `check_noisy_input_options`'d.

    A name that is not one of the methods is refused; the options of a method the run leaves out
    (``--set methods=...``) are not used, and a warning says so.
    """
    out = {}
    for method, options in method_options.items():
        if method not in NOISY_INPUT_METHODS:
            raise ValueError(f"method_options names {method!r}, which is not a method of this workflow; valid names "
                             f"are {list(NOISY_INPUT_METHODS)}")
        if method not in methods:
            warnings.warn(f"method_options.{method} is not used: the run's methods {list(methods)} leave {method} out",
                          UserWarning, stacklevel=2)
            continue
        out[method] = check_noisy_input_options(method, options, training, block)
    return out

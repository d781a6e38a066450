"""A fitted ``NoisyGPClassifier`` as plain data and back: ``config.json`` (parameters, fitted
attributes, the model's structure) and ``params.npz`` (the model's values), never a pickle."""

from __future__ import annotations

from typing import Any

import numpy as np

from gpal.estimators.params import AUTO, AUTO_WITH_ERROR_BARS, choose_input_noise, model_spec
from gpal.registry import INPUT_PRIORS
from gpal.training.session import ModelSession

__all__ = ["noisy_gp_from_state", "noisy_gp_state"]


def noisy_gp_state(est: Any) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The fitted ``est`` as plain data.

    Returns
    -------
    config : dict
        JSON-able parameters, fitted attributes, model structure and training history.
    arrays : dict of numpy.ndarray
        The model's values by path.
    """
    from gpal.models.likelihoods.base import saved_config
    from gpal.models.state import kernel_to_config, module_values

    saved_config(est.model_.likelihood)  # refused here, before a file is written, if loading would find another
    params = est._saved_params()
    if params["kernel"] is not None and not isinstance(params["kernel"], str):
        params["kernel"] = {"kernel_config": kernel_to_config(params["kernel"])}
    if not isinstance(params["likelihood"], str):
        params["likelihood"] = {"likelihood_config": params["likelihood"].get_config()}
    params["hidden_sizes"] = [int(h) for h in params["hidden_sizes"]]  # any sequence of integers, an array too
    params["input_noise"] = _input_noise_state(params["input_noise"], type(est.model_.strategy))
    config = {
        "params": params,
        **est._fitted_state(),
        "structure": est.model_.structure(),
        "history": [float(h) for h in est.history_],
        "stopped_early": bool(est.stopped_early_),
    }
    if params["input_noise"] == AUTO:  # the fit's choice: the model's strategy and prior
        config["input_choice"] = {"input_noise": est.input_noise_, "input_prior": est.input_prior_}
    return config, module_values(est.model_)


def noisy_gp_from_state(cls: type, config: dict[str, Any], arrays: dict[str, np.ndarray]) -> Any:
    """Inverse of ``noisy_gp_state``: an estimator of class ``cls``, fitted.

    Returns
    -------
    NoisyGPClassifier
        The estimator, with its model's saved values.
    """
    from gpal.saved_models import CorruptModel
    from gpal.models.likelihoods.base import likelihood_from_config
    from gpal.models.state import assign_saved_values, kernel_from_config
    from gpal.models.svgp import NoisySVGP

    params = _former_parameters_as_options(dict(config["params"]))
    params.setdefault("tol", None)  # a folder of an earlier gpal: its fit ran every epoch
    params.setdefault("initial_learned_variance", 0.01)  # earlier gpal's only starts
    params.setdefault("inducing_start", "kmeans")
    params.setdefault("q_x_form", "relative")
    params.setdefault("q_x_update", "batch_rows")
    params.setdefault("train_inducing", True)  # earlier gpal trained them always
    params.setdefault("share_kernel_and_inducing", False)  # earlier gpal gave each latent function its own
    if isinstance(params["kernel"], dict):
        params["kernel"] = kernel_from_config(params["kernel"]["kernel_config"])
    if isinstance(params["likelihood"], dict):
        params["likelihood"] = likelihood_from_config(params["likelihood"]["likelihood_config"])
    if isinstance(params["input_noise"], dict):
        params["input_noise"] = _input_noise_from_state(params["input_noise"])
    params["hidden_sizes"] = tuple(params["hidden_sizes"])
    clf = cls(**params)
    clf.input_noise_, clf.input_prior_ = _input_choice(config, clf)
    clf._restore_fitted_state(config)  # checks the saved sizes before the model is built from them
    model = NoisySVGP.from_structure(config["structure"])
    assign_saved_values(model, arrays)
    if not float(model.gp.jitter.numpy()) > 0:
        raise CorruptModel(f"{getattr(arrays, 'source', 'params.npz')}: array '.gp.jitter' must be > 0 (the "
                           f"Cholesky jitter); got {model.gp.jitter.numpy()!r}: the file is corrupt or was edited")
    session = ModelSession.loaded(model, clf.classes_, model_spec(clf))
    clf._keep(session, clf.n_features_in_, clf.standardizer_, config["history"], config["stopped_early"])
    return clf


def _input_choice(config: dict[str, Any], clf: Any) -> tuple[Any, str]:
    """The saved fit's input noise and prior: ``input_noise="auto"``'s recorded choice, else the parameters (with
    ``input_prior="auto"`` resolved as at the fit, which for a named strategy does not depend on the data)."""
    from gpal.saved_models import CorruptModel

    if clf.input_noise != AUTO:
        return choose_input_noise(clf, None)
    choice = config.get("input_choice")
    if not (isinstance(choice, dict) and choice.get("input_noise") in ("none", AUTO_WITH_ERROR_BARS[0])
            and choice.get("input_prior") in (*INPUT_PRIORS, None)):
        raise CorruptModel(f"config.json: input_noise='auto' needs the fit's choice, 'input_choice': "
                           f"{{'input_noise': 'none' or {AUTO_WITH_ERROR_BARS[0]!r}, 'input_prior': one of "
                           f"{list(INPUT_PRIORS)} or null}}; got {choice!r}: the file is corrupt or was edited")
    if choice["input_noise"] == "none":  # exact inputs have no input prior (an earlier gpal recorded 'broad')
        return "none", None
    return choice["input_noise"], choice["input_prior"]


def _input_noise_state(setting: Any, strategy: type) -> Any:
    """The ``input_noise`` setting as JSON: a name as it is, a class by its registered name, an instance by its
    config; refused (`registered_name`) where the model's strategy class could not be found again on loading."""
    from gpal.models.input_noise_setting import registered_name

    name = registered_name(strategy)
    if isinstance(setting, str):
        return setting
    return {"input_noise_class": name} if isinstance(setting, type) else {"input_noise_config": setting.get_config()}


def _input_noise_from_state(saved: dict[str, Any]) -> Any:
    """Inverse of `_input_noise_state` for a class or an instance."""
    from gpal.models.input_noise_setting import strategy_class, strategy_from_config

    if "input_noise_class" in saved:
        return strategy_class(saved["input_noise_class"])
    return strategy_from_config(saved["input_noise_config"])


#: What folders of an earlier gpal record as estimator parameters and is now a likelihood option: robust-max's.
_FORMER_ROBUSTMAX_PARAMETERS = ("epsilon", "learn_epsilon")


def _former_parameters_as_options(params: dict[str, Any]) -> dict[str, Any]:
    """``params`` of a saved folder with robust-max's former parameters read into ``likelihood_options``, where they
    now live; a model of another likelihood never read them, so there they are dropped."""
    former = {name: params.pop(name) for name in _FORMER_ROBUSTMAX_PARAMETERS if name in params}
    if former and isinstance(params["likelihood"], str) and params["likelihood"].lower() == "robustmax":
        params["likelihood_options"] = {**former, **(params.get("likelihood_options") or {})}
    return params

"""The constraints the estimator families share, declared once.

Each estimator class lists a constraint per constructor argument in ``_parameters``
(the vocabulary is `gpal.constraints`); ``GPClassifierMixin.validate_params`` checks them
all before any TensorFlow work and raises one clear message: the parameter, what was
expected, what was given. The contract test checks that every constructor argument has
a constraint, so a new parameter cannot go unchecked.  Here: the constraints several
families use (the kernel, the likelihood, the sparse-GP arguments), and ``NoisyGPClassifier``'s
(which the workflows' training block reads too) with the rules between them.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from gpal.constraints import SEED, Boolean, Constraint, Integer, OneOf, Optional, Options, Real, Satisfies
from gpal.data.standardizer import SCALINGS
from gpal.training.session import ModelSpec
from gpal.registry import (INDUCING_STARTS, INFERENCE, INPUT_NOISE, INPUT_PRIORS, KERNELS, LIKELIHOODS, NOISE_VARIANCE_MODES,
                           Q_X_FORMS, Q_X_UPDATES, ROWS_PER_PRIOR_COMPONENT)

__all__ = ["AUTO", "AUTO_WITH_ERROR_BARS", "INPUT_NOISE_SETTING", "KERNEL", "LIKELIHOOD", "NOISY_GP_PARAMETERS", "RANDOM_STATE", "SPARSE_GP_PARAMETERS",
           "auto_declines", "check_input_prior", "check_named_likelihood_options", "check_shared_latents", "choose_input_noise", "gives_error_bars", "input_noise_class", "input_prior_used", "model_spec"]


def _is_random_state(value: Any) -> bool:
    import numpy as np

    return value is None or SEED.ok(value) or isinstance(value, (np.random.RandomState, np.random.Generator))


#: scikit-learn's ``random_state``: None (fresh randomness at each fit), a seed, or a numpy generator that the fit
#: draws its seed from (`gpal.estimators.base.fit_seed`).
RANDOM_STATE = Satisfies(_is_random_state, f"None, an integer seed in [0, {2**32 - 1}], a numpy.random.RandomState "
                         "or a numpy.random.Generator")


def is_gpflow_kernel(value: Any) -> bool:
    import gpflow

    return isinstance(value, gpflow.kernels.Kernel)


def _is_kernel(value: Any) -> bool:
    return value is None or (isinstance(value, str) and value in KERNELS) or is_gpflow_kernel(value)


KERNEL = Satisfies(_is_kernel, "None, a kernel name {names} or a gpflow kernel (copied per latent function)",
                   names=KERNELS)

#: The arguments every sparse-GP family takes, stated once; a family adds its own beside them.
SPARSE_GP_PARAMETERS: dict[str, Constraint] = {
    "num_inducing": Integer(1),
    "kernel": KERNEL,
    "standardize": Boolean(),
    "scaling": OneOf(SCALINGS),
    "random_state": RANDOM_STATE,
    "progress": Boolean(),
}


def _is_likelihood(value: Any) -> bool:
    if isinstance(value, str):
        return value.lower() in LIKELIHOODS
    from gpal.models.likelihoods.base import Likelihood

    return isinstance(value, Likelihood)


LIKELIHOOD = Satisfies(_is_likelihood, "a likelihood name {names} or a gpal.models.Likelihood", names=LIKELIHOODS)


#: ``input_noise``'s choice made at fit (`choose_input_noise`): the error bars used where X_var is given.
AUTO = "auto"
#: What ``input_noise="auto"`` fits where X_var has a non-zero entry: NIMGP with the population prior, the one
#: strategy whose use of the error bars measurements favour (docs/methods.md, "When to use which").
AUTO_WITH_ERROR_BARS = ("latent", "population")


def _is_input_noise(value: Any) -> bool:
    if isinstance(value, str):
        return value == AUTO or value in INPUT_NOISE  # a name is checked without importing the strategies
    from gpal.models.input_noise_setting import strategy_class

    return strategy_class(value) is not None  # it raises for what it refuses, which Satisfies reads as False


INPUT_NOISE_SETTING = Satisfies(
    _is_input_noise, f"one of {{names}} or '{AUTO}' (the error bars used where X_var is given), an InputNoise subclass (built for each training set) or an InputNoise instance "
    "holding no variables (one that holds some is sized for one training set: give its class or name)",
    names=INPUT_NOISE)

#: ``NoisyGPClassifier``'s constructor arguments.
NOISY_GP_PARAMETERS: dict[str, Constraint] = {
    **SPARSE_GP_PARAMETERS,
    "input_noise": INPUT_NOISE_SETTING,
    "noise_variance": OneOf(NOISE_VARIANCE_MODES),
    "likelihood": LIKELIHOOD,
    "likelihood_options": Options(),
    "inference": OneOf(INFERENCE),
    "inference_options": Options(),
    "batch_size": Integer(1),
    "epochs": Integer(0),
    "learning_rate": Real(0, 1, low_open=True, meaning="Adam's step size"),
    "n_samples": Integer(1),
    "prior_variance": Real(0, low_open=True),
    "input_prior": OneOf((AUTO, *INPUT_PRIORS)),
    "prior_components": Integer(1),
    "hidden_sizes": Satisfies(lambda s: all(isinstance(h, numbers.Integral) and h >= 1 for h in s),
                              "a sequence of positive integers"),
    "initial_learned_variance": Real(0, low_open=True, meaning="the learned input-noise variance's start"),
    "inducing_start": OneOf(INDUCING_STARTS),
    "train_inducing": Boolean(),
    "share_kernel_and_inducing": Boolean(),
    "q_x_form": OneOf(Q_X_FORMS),
    "q_x_update": OneOf(Q_X_UPDATES),
    "warm_start": Boolean(),
    "early_stopping": Boolean(),
    "validation_fraction": Real(0, 1, low_open=True, high_open=True, meaning="a fraction of the training rows"),
    "n_iter_no_change": Integer(1),
    "tol": Optional(Real(0, low_open=True)),
    "validation_interval": Integer(1),
}


def choose_input_noise(est: Any, X_var: Any) -> tuple[Any, str | None]:
    """The ``input_noise`` and ``input_prior`` a fit of ``est`` given ``X_var`` (None: not given) uses: its own
    settings, or for ``input_noise="auto"`` NIMGP where X_var has a non-zero entry and `auto_declines` finds nothing
    against it, exact inputs ("none") otherwise; ``input_prior="auto"`` resolved by `_prior_for`.

    Returns
    -------
    tuple
        (input_noise, input_prior); what the fit keeps as ``input_noise_``, ``input_prior_`` (the prior None for a
        strategy without latent inputs: it has no prior over the noiseless inputs).
    """
    if not _is_auto(est.input_noise):
        return est.input_noise, _prior_if_latent(est.input_noise, _prior_for(est, uses_error_bars=False))
    if gives_error_bars(X_var) and auto_declines(est, len(X_var)) is None:
        return AUTO_WITH_ERROR_BARS[0], _prior_for(est, uses_error_bars=True)
    return "none", None


def _prior_if_latent(input_noise: Any, prior: str) -> str | None:
    """``prior`` where the ``input_noise`` strategy has latent inputs; None where it has none (MGP, NIMGP-FO), as no
    prior over noiseless inputs enters its model."""
    from gpal.models.input_noise_setting import strategy_class

    return prior if strategy_class(input_noise).latent_inputs else None


def gives_error_bars(X_var: Any) -> bool:
    """Whether ``X_var`` (None: not given) has a non-zero entry: all zeros ask for exact inputs."""
    return X_var is not None and bool(np.any(np.asarray(X_var, dtype=np.float64) > 0))


def _prior_for(est: Any, uses_error_bars: bool) -> str:
    """``est``'s ``input_prior`` as its model has it: a named prior is itself; ``"auto"`` is the population prior
    where ``input_noise="auto"`` uses the error bars (`AUTO_WITH_ERROR_BARS`), and the paper's broad prior for a named
    strategy (what its papers measured) or a model without latent inputs."""
    if not _is_auto(est.input_prior):
        return est.input_prior
    return AUTO_WITH_ERROR_BARS[1] if uses_error_bars else INPUT_PRIORS[0]


def auto_declines(est: Any, n_rows: int) -> str | None:
    """Why ``input_noise="auto"`` fits exact inputs although given error bars, in words (None: it uses them): the
    conjugate schemes model exact inputs, and a population prior needs `ROWS_PER_PRIOR_COMPONENT` rows a
    component (a prior fitted to fewer follows their noise)."""
    if est.inference != "svi":
        return f"inference={est.inference!r} models exact inputs; use inference='svi' to use them"
    if _prior_for(est, uses_error_bars=True) == "population" and n_rows < int(est.prior_components) * ROWS_PER_PRIOR_COMPONENT:
        return (f"{n_rows} training rows are too few for the population prior's prior_components="
                f"{est.prior_components} ({ROWS_PER_PRIOR_COMPONENT} rows each); "
                + (f"with prior_components={n_rows // ROWS_PER_PRIOR_COMPONENT} or fewer, or "
                   if n_rows >= ROWS_PER_PRIOR_COMPONENT else "")
                + "with input_prior='broad' (the paper's prior) it uses them")
    return None


def _is_auto(setting: Any) -> bool:
    return isinstance(setting, str) and setting == AUTO


def _resolved(est: Any) -> tuple[Any, str]:
    """``est``'s input noise and prior as its model has them: the fit's choice (``input_noise_``, ``input_prior_``)
    where either is ``"auto"``, before a fit what `choose_input_noise` gives without error bars."""
    if hasattr(est, "input_noise_") and (_is_auto(est.input_noise) or _is_auto(est.input_prior)):
        return est.input_noise_, est.input_prior_
    return choose_input_noise(est, None)


def input_noise_class(est: Any) -> type:
    """The strategy class of ``est``'s ``input_noise`` (a name, a class or an instance; ``"auto"``: the fit's
    choice), whose declarations (``latent_inputs``, ``uses_noise_variance``, ...) say what the model does.

    Returns
    -------
    type
        A `gpal.models.input_noise.InputNoise` subclass.
    """
    from gpal.models.input_noise_setting import strategy_class

    return strategy_class(_resolved(est)[0])


def input_prior_used(est: Any) -> str | None:
    """The prior over noiseless inputs ``est``'s model applies: its ``input_prior`` (with ``input_noise="auto"``, the
    fit's choice) where the input-noise strategy has latent inputs, None where it has none (MGP, NIMGP-FO ignore
    ``input_prior``).

    Returns
    -------
    str or None
        "broad", "population" or None.
    """
    return _resolved(est)[1]


def model_spec(est: Any) -> ModelSpec:
    """``est``'s model parameters resolved into what ``build_model`` takes, once: the named likelihood's
    ``likelihood_options``, the input prior as `input_prior_used` says (broad where unused).

    Returns
    -------
    gpal.training.session.ModelSpec
        The spec; equal specs build the same model from the same rows.
    """
    return ModelSpec(input_noise=_resolved(est)[0], noise_variance=est.noise_variance, likelihood=est.likelihood,
                     likelihood_options=dict(est.likelihood_options or {}), num_inducing=est.num_inducing, kernel=est.kernel,
                     prior_variance=float(est.prior_variance), input_prior=input_prior_used(est) or "broad",
                     prior_components=int(est.prior_components), hidden_sizes=tuple(int(h) for h in est.hidden_sizes),
                     initial_learned_variance=float(est.initial_learned_variance),
                     inducing_start=est.inducing_start, train_inducing=bool(est.train_inducing),
                     q_x_form=est.q_x_form, q_x_update=est.q_x_update,
                     share_kernel_and_inducing=bool(est.share_kernel_and_inducing), seed=_model_seed(est))


def _model_seed(est: Any) -> int:
    """The seed ``est``'s model is built from: the one its fit drew (``random_seed_``), or before any fit an integer
    ``random_state`` itself; None or a generator gives its seed only when a fit draws it."""
    if hasattr(est, "random_seed_"):
        return int(est.random_seed_)
    if SEED.ok(est.random_state):
        return int(est.random_state)
    raise ValueError(f"random_state={est.random_state!r} gives a seed only when fit draws it (random_seed_); "
                     "fit first, or give an integer random_state")


def check_shared_latents(est: Any) -> None:
    """`gpal.models.svgp.check_shared_inducing_start` before any data: the model's rule, refused at validation."""
    if est.share_kernel_and_inducing:  # imported only then: the model module loads GPflow
        from gpal.models.svgp import check_shared_inducing_start

        check_shared_inducing_start(True, est.inducing_start)


def check_input_prior(est: Any) -> None:
    """Refuse a population prior, fitted with the measured variances, where the variances are learned instead.

    The strategy (whose registry entry imports TensorFlow) is asked last, so a valid estimator is checked
    without loading it: a command refuses bad input before TensorFlow loads."""
    if _is_auto(est.input_noise) and est.noise_variance == "learned":
        raise ValueError(f"input_noise={AUTO!r} chooses how to use the measured variances, which "
                         "noise_variance='learned' ignores; name an input_noise of "
                         f"{list(INPUT_NOISE.having('latent_inputs'))} to learn them")
    if est.input_prior == "population" and est.noise_variance == "learned" and input_prior_used(est) == "population":
        raise ValueError(f"input_prior={est.input_prior!r} is fitted with the measured variances; "
                         "use noise_variance='known' or 'both'")


def check_named_likelihood_options(est: Any, likelihood_name: str | None) -> None:
    """Refuse ``likelihood_options`` that go with a configured ``Likelihood`` object, that the named likelihood
    does not take, or whose values are out of the ranges it declares."""
    options = est.likelihood_options or {}
    if options and likelihood_name is None:
        raise ValueError("likelihood_options apply to a likelihood given by name; a Likelihood object is already configured")
    if options:
        from gpal.models.likelihoods.base import check_likelihood_options

        check_likelihood_options(likelihood_name, options)

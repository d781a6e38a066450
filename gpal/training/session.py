"""A noisy-input sparse GP kept together with its trainer and compiled functions, across refits and predictions.

An active-learning loop refits one estimator on one more row, then predicts pools of any
size, hundreds of times; tracing a training step or a predictor costs more than running it.
A ``ModelSession`` holds one ``NoisySVGP``, the ``ModelSpec`` it was built from, its
trainer and its compiled predictors, each traced once per model signature and serving every
model of that signature with its own values.  A warm-started refit that would build the same
model again keeps the session; any other fit starts a new one.  A ``ModelSpec`` is what the estimator
says a model is built from (``NoisyGPClassifier.model_spec``), its fields ``build_model``'s keywords.
"""

from __future__ import annotations

import contextlib
import functools
import json
import warnings
from dataclasses import dataclass, fields
from typing import Any, Callable, Mapping

import numpy as np

from gpal.training.early_stopping import ValidationMonitor

__all__ = ["ModelSession", "ModelSpec"]


@dataclass(frozen=True)
class ModelSpec:
    """What a ``NoisySVGP`` is built from beside its training data: ``build_model``'s keywords, each field one.

    The estimator resolves its parameters into one (``gpal.estimators.params.model_spec``): the named
    likelihood's options, the input prior as the strategy applies it.
    Two equal specs build the same model from the same rows, so a warm refit may keep a session.
    """

    input_noise: Any  # a name, an InputNoise subclass or a template instance (``build_model``'s)
    noise_variance: str
    likelihood: Any
    likelihood_options: Mapping[str, Any]
    num_inducing: int
    kernel: Any
    prior_variance: float
    input_prior: str
    prior_components: int
    hidden_sizes: tuple[int, ...]
    initial_learned_variance: float
    inducing_start: str
    seed: int
    train_inducing: bool = True
    q_x_form: str = "relative"
    q_x_update: str = "batch_rows"
    share_kernel_and_inducing: bool = False

    def build(self, Z: np.ndarray, Z_var: np.ndarray, y: np.ndarray, num_classes: int,
              prior_inputs: tuple[np.ndarray, np.ndarray] | None = None) -> Any:
        """``build_model`` of this spec on standardised training arrays.

        Returns
        -------
        NoisySVGP
            The untrained model.
        """
        from gpal.models.svgp import build_model

        return build_model(Z, y, num_classes=num_classes, X_var=Z_var, prior_inputs=prior_inputs,
                           **{f.name: getattr(self, f.name) for f in fields(self)})


class ModelSession:
    """One model, the ``ModelSpec`` it was built from (None: not built from one, never kept), the
    class labels its latent functions stand for, its trainer and its compiled functions."""

    def __init__(self, model: Any, classes: np.ndarray, *, seed: int, built_with: ModelSpec | None = None):
        self.model = model
        self.classes = classes
        self.seed = int(seed)
        self.built_with = built_with
        self.compiled: dict[tuple, Callable] = {}
        self._trainer: Any = None
        #: The ``BatchedTrainer`` this model was last trained in with others (``fit_batched``), kept so
        #: that the same group refitted (active-learning curves in lock step) traces nothing again.
        self.batched_trainer: Any = None

    @classmethod
    def for_fit(cls, spec: ModelSpec, classes: np.ndarray, Z: np.ndarray, Z_var: np.ndarray, y: np.ndarray,
                *, prior_inputs: tuple[np.ndarray, np.ndarray] | None = None,
                previous: "ModelSession | None" = None) -> "ModelSession":
        """The session a fit on standardised ``Z``, ``Z_var``, codes ``y`` trains.

        ``previous`` (a warm start's) is kept while rebuilding would make the same model (an equal
        ``spec`` and M = min(num_inducing, distinct rows) inducing points), its per-point
        q(x_i) restarted at the observations; otherwise a model is built and continues from its values.
        """
        if previous is not None and previous._rebuilds_as_itself(spec, Z):
            previous.model.strategy.restart(len(y))  # NIMGP's q(x_i) start again at the observations
            previous.model.num_data = len(y)
            previous.classes = classes
            return previous
        model = spec.build(Z, Z_var, y, len(classes), prior_inputs)
        if previous is not None:
            _continue_from(model, previous.model)
        return cls(model, classes, seed=spec.seed, built_with=spec)

    def _rebuilds_as_itself(self, spec: ModelSpec, Z: np.ndarray) -> bool:
        """Whether ``spec.build`` on inputs ``Z`` would make this model again (to be filled with its values)."""
        if self.built_with != spec:
            return False
        return self.model.gp.num_inducing == min(int(spec.num_inducing), len(np.unique(Z, axis=0)))

    @classmethod
    def loaded(cls, model: Any, classes: np.ndarray, spec: ModelSpec) -> "ModelSession":
        """A saved model, built from ``spec`` as a fit would: a warm-started refit may keep it."""
        return cls(model, classes, seed=spec.seed, built_with=spec)

    @classmethod
    def of_augmented(cls, augmented: Any, classes: np.ndarray, spec: ModelSpec, n_samples: int,
                     num_data: int) -> "ModelSession":
        """The q(u) of an augmented logistic-softmax fit (CAVI, natural gradient) as a ``NoisySVGP`` of exact inputs.

        Its predictive Monte Carlo takes ``n_samples`` draws seeded by the spec's seed, as the
        augmented estimator's does.  Not built from ``spec`` by ``build_model``, so a refit never keeps it.
        """
        from gpal.models.families.augmented_logistic_softmax import as_latent_gps
        from gpal.models.input_noise import NoInputNoise
        from gpal.models.likelihoods.logistic_softmax import LogisticSoftmaxLikelihood
        from gpal.models.svgp import NoisySVGP

        C, seed = len(classes), spec.seed
        options = {"num_predict_samples": int(n_samples), "seed": seed, **spec.likelihood_options}
        likelihood = LogisticSoftmaxLikelihood(C, **options)
        return cls(NoisySVGP(as_latent_gps(augmented), NoInputNoise(), likelihood, None, num_data, C), classes, seed=seed)

    def can_continue(self, classes: np.ndarray, n_features: int) -> bool:
        """Whether a warm start on data of these classes and features may continue this model (warns when not)."""
        width = int(self.model.gp.Z.shape[-1])
        if len(classes) == len(self.classes) and all(a == b for a, b in zip(classes, self.classes)) and n_features == width:
            return True
        warnings.warn(
            f"warm_start ignored: the data have classes {list(classes)} and {n_features} features, "
            f"the fitted model {list(self.classes)} and {width}; starting afresh",
            stacklevel=3,
        )
        return False

    def trainer(self) -> Any:
        """The model's ``gpal.training.svi.SharedTrainer``: its step is traced once per model signature."""
        if self._trainer is None:
            from gpal.training.svi import SharedTrainer

            self._trainer = SharedTrainer(self.model, seed=self.seed)
        return self._trainer

    def function(self, key: tuple, make: Callable[[Any], Callable]) -> Callable:
        """``make(model)``, an ``(X, X_var, seed)`` function of a model, compiled for any number of rows once per
        ``key`` and model ``trace_key`` (``_shared_function``), called on this session's model."""
        if key not in self.compiled:
            from gpal.models.state import module_variables
            from gpal.training.signatures import population_prior

            prior = population_prior(self.model)
            self.compiled[key] = functools.partial(_shared_function(self.model, key, make), module_variables(self.model),
                                                   {} if prior is None else prior.tensors())
        return self.compiled[key]

    def input_draws(self, n_draws: int) -> int:
        """Draws of p(x | x~) per prediction: ``n_draws`` where the model's strategy samples its inputs, else 1.

        Returns
        -------
        int
            The number of input draws.
        """
        return int(n_draws) if self.model.strategy.stochastic_prediction else 1

    def predictor(self, input_draws: int) -> Callable:
        """Compiled ``(X, X_var, seed) -> [probabilities, MC errors]`` over ``input_draws`` draws of each input."""
        import tensorflow as tf

        S = int(input_draws)
        return self.function(("predict", S), lambda model: lambda a, b, seed: tf.stack(model.predict_proba_and_error(a, b, seed, S)))

    def sampler(self, n_samples: int, input_draws: int | None) -> Callable:
        """Compiled per-row draws of p(y | f) (``NoisySVGP.sample_conditional_proba``)."""
        S, K = int(n_samples), input_draws
        return self.function(("sample", S, K), lambda model: lambda a, b, seed: model.sample_conditional_proba(a, b, seed, S, K))

    def joint_sampler(self, n_samples: int, input_draws: int) -> Callable:
        """Compiled posterior draws of p(y | x) shared by every row (``NoisySVGP.sample_function_proba``)."""
        S, K = int(n_samples), int(input_draws)
        return self.function(("joint", S, K), lambda model: lambda a, b, seed: model.sample_function_proba(a, b, seed, S, K))

    def validation_monitor(self, input_draws: int, X: np.ndarray, X_var: np.ndarray, y: np.ndarray,
                           **settings: Any) -> ValidationMonitor:
        """Early stopping of the model's training on held-out rows, scored by its compiled predictions.

        The predictions take a seed stream of their own; ``settings`` are ``ValidationMonitor``'s.
        """
        from gpal.models.chunked import stream_seed
        from gpal.models.state import assign_module_values, module_values

        fn, seed = self.predictor(input_draws), stream_seed(self.seed, "validation")
        return ValidationMonitor(lambda A, B: fn(A, B, seed)[0].numpy(), lambda: module_values(self.model),
                                 lambda state: assign_module_values(self.model, state), X, X_var, y, **settings)


@functools.lru_cache(maxsize=None)
def _shared() -> Any:
    """(trace key, function key) -> compiled (values, X, X_var, seed) function, a few kept per process (made on first
    use: gpal.models imports TensorFlow)."""
    from gpal.models.compiled import KeptFunctions

    return KeptFunctions(kept=32)


def _shared_function(model: Any, key: tuple, make: Callable[[Any], Callable]) -> Callable:
    """``(values, prior, X, X_var, seed) -> make(model)(X, X_var, seed)`` for any model of ``model``'s ``trace_key``.

    Tracing a predictor costs as much as hundreds of calls, and an experiment fits many models that
    differ only in their values.  The function is traced once on a private copy of the first such
    model, reading the variables given as ``values`` (``module_values``' paths) in place of its own
    (``reading_values``) and its population prior's as ``prior`` (``MixturePrior.tensors``; empty without
    one), so each call computes with the caller's model: the same arithmetic as a function of that model's
    own (tested bit for bit).
    """
    import tensorflow as tf

    from gpal.models.compiled import instance_function, variable_specs
    from gpal.models.state import reading_values
    from gpal.training.signatures import population_prior, template_copy, trace_key

    shared = _shared()
    full_key = json.dumps([trace_key(model), repr(key)])
    kept = shared.get(full_key)
    if kept is not None:
        return kept
    template = template_copy(model)
    fn = make(template)
    template_prior = population_prior(template)

    def call(values: dict[str, Any], prior: dict[str, Any], X: Any, X_var: Any, seed: Any) -> Any:
        with reading_values(template, values), (template_prior.reading(prior) if prior else contextlib.nullcontext()):
            return fn(X, X_var, seed)

    rows = tf.TensorSpec([None, int(template.gp.Z.shape[-1])], tf.float64)
    prior_specs = {} if template_prior is None else {
        name: tf.TensorSpec(value.shape, tf.float64) for name, value in template_prior.arrays().items()}
    return shared.keep(full_key, instance_function(call, input_signature=[
        variable_specs(template), prior_specs, rows, rows, tf.TensorSpec([2], tf.int64)]))


def _continue_from(model: Any, previous: Any) -> None:
    """Copy every global variable of ``previous`` into ``model``; per-point q(x_i) stay at their start.

    A variable whose shape changed (the inducing points and q(u) when the number of
    distinct training inputs passed a smaller ``num_inducing``) starts afresh, with a warning:
    a warm start that silently restarts q(u) would look like a converged one.
    """
    from gpflow.utilities import parameter_dict

    from gpal.models.state import module_values

    per_point = {id(v) for v in model.strategy.per_point_variables}
    old = module_values(previous)
    restarted = []
    for key, var in parameter_dict(model).items():
        raw = getattr(var, "unconstrained_variable", var)
        if id(var) in per_point or key not in old:
            continue
        if tuple(old[key].shape) != tuple(raw.shape):
            restarted.append(f"{key} {tuple(old[key].shape)} -> {tuple(raw.shape)}")
            continue
        raw.assign(old[key])
    if restarted:
        warnings.warn(
            "warm_start continued the model but restarted parameters whose size changed: "
            + "; ".join(restarted) + " (the number of inducing points follows the distinct training inputs "
            "up to num_inducing); give the refit enough epochs to converge again",
            stacklevel=4,
        )

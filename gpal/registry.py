"""Every list of names, once: the extension points, the fixed choices and the defaults layers share.

Extension points (estimator families, likelihoods, input-noise strategies, acquisitions,
workflow kinds) are registries mapping a name to a class (or, for workflow kinds, a
module). Built-in entries are written here as ``"module:Class"`` (``"module"`` for a
module) and imported on first use, so the names (for the CLI's ``choices=``, the
workflow schemas, the constraints and the docs) cost no TensorFlow import. A class
defined elsewhere can join with ``register`` (likelihoods and acquisitions do so
themselves when they declare a name; ``gpal.register_acquisition`` and ``gpal.register_likelihood`` are the
calls a user's own code makes). Fixed choices that are not extension points
(input priors, noise-variance modes, inference schemes, logistic bounds) are tuples
here. Adding a built-in is one line here; nothing else keeps a list. A default that
several layers share (the likelihood, the follow-up acquisition) is stated here once.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any, Iterator, MutableMapping

__all__ = ["ACQUISITIONS", "AUGMENTED_INFERENCE", "BROAD_PRIOR_VARIANCE", "CONJUGATE_INFERENCE", "DEFAULT_HIDDEN_SIZES",
           "DEFAULT_INPUT_NOISE", "DEFAULT_INPUT_PRIOR", "DEFAULT_LIKELIHOOD", "DEFAULT_NOISE_VARIANCE",
           "DEFAULT_NUM_INDUCING", "DEFAULT_PRIOR_COMPONENTS", "ESTIMATORS",
           "FOLLOW_UP_ACQUISITION", "INDUCING_STARTS", "INFERENCE", "INITIAL_LEARNED_VARIANCE", "INPUT_NOISE", "INPUT_PRIORS", "KERNELS", "LIKELIHOODS",
           "LOCALS_FAMILIES", "LOGISTIC_BOUNDS", "MODELS_PER_BATCH", "NOISE_VARIANCE_MODES", "ON_ERROR",
           "PER_MODEL_ERRORS", "Q_X_FORMS", "Q_X_UPDATES", "ROWS_PER_PRIOR_COMPONENT", "Registry", "SVGP_NUM_INDUCING", "WORKFLOWS"]

#: Priors over the noiseless inputs (``gpal.models.input_prior``): the paper's broad N(0, s I), or a
#: mixture deconvolved from the sources.  Two fixed choices, not an extension point, named here so the
#: CLI offers them without importing TensorFlow.
INPUT_PRIORS = ("broad", "population")
#: How a sparse GP's inducing inputs start (``gpal.models.svgp.build_model``), the default first: gpal's k-means
#: centres shared by the latent functions, or paper 001's authors' own random training rows per latent function.
INDUCING_STARTS = ("kmeans", "random_per_latent")
#: How NIMGP's and NIMGP-NN's q(x_i) is parameterised (``gpal.models.input_noise.LatentInputs``,
#: ``AmortizedInputs``), the default first: relative to p(x_i | x~_i) (gpal's), or an absolute mean and log-variance
#: (paper 001's authors': free per row from x~_i and 1e-5; from two networks started near N(0, I)).
Q_X_FORMS = ("relative", "free")
#: How Adam moves NIMGP's q(x_i) table (``gpal.training.adam.RowAdam``), the default first: only the minibatch's rows,
#: each row's moments and bias correction its own (gpal's), or every row at every step with a zero gradient for the
#: rows outside the batch, as paper 001's authors' TensorFlow 1 ``AdamOptimizer`` moves a gathered variable.
Q_X_UPDATES = ("batch_rows", "every_row")
#: The start of a learned input-noise variance per feature (``build_model``, ``NoisyGPClassifier``).
INITIAL_LEARNED_VARIANCE = 0.01
#: The variance s of the paper's broad prior N(0, s I) on the noiseless inputs, the default of
#: ``NoisyGPClassifier``, ``build_model`` and the strategies with latent inputs (wide against standardised inputs).
BROAD_PRIOR_VARIANCE = 1000.0
#: Where the input-noise variances come from (``gpal.models.noise_variance.NoiseVariance``): the data's
#: measured ``X_var``, one learned per-feature vector, or their sum.
NOISE_VARIANCE_MODES = ("known", "learned", "both")
#: The model's defaults, each stated here once: ``NoisyGPClassifier``'s (and the other GP
#: estimators' inducing points) and ``build_model``'s, its API without an estimator.
#: Exact inputs (MGP): the input-noise strategy a model has unless asked for another.
DEFAULT_INPUT_NOISE = "none"
#: The input-noise variances are the data's measured ``X_var``.
DEFAULT_NOISE_VARIANCE = NOISE_VARIANCE_MODES[0]
#: The paper's broad prior on the noiseless inputs.
DEFAULT_INPUT_PRIOR = INPUT_PRIORS[0]
#: Inducing points per latent function (fewer when there are fewer training rows).
DEFAULT_NUM_INDUCING = 100
#: The same for the sparse variational GP of ``NoisyGPClassifier`` and ``build_model``: the main job's, as fast a fit
#: with error bars as 100 is not for the same test NLL (docs/methods.md, "Training length").
SVGP_NUM_INDUCING = 50
#: Components of the population prior's deconvolved mixture.
DEFAULT_PRIOR_COMPONENTS = 8
#: Training rows the population prior's mixture needs per component (``check_prior_rows``).
ROWS_PER_PRIOR_COMPONENT = 10
#: Hidden-layer widths of NIMGP-NN's amortised q(x_i | x~_i) network.
DEFAULT_HIDDEN_SIZES = (50,)
#: The conjugate schemes of the augmented logistic-softmax model (``gpal.training.cavi``): paper 004's CAVI and
#: natural-gradient SVI on its mean-field q(lambda) q(n, omega) q(u), and gpal's CAVI with lambda integrated out.
CONJUGATE_INFERENCE = ("cavi", "natural_gradient", "cavi_collapsed")
#: How ``LogisticSoftmaxGPClassifier`` trains: a conjugate scheme, or gpal's collapsed CAVI finished on the exact
#: ELBO (``gpal.models.families.augmented_exact``; not a ``NoisyGPClassifier`` option).
AUGMENTED_INFERENCE = (*CONJUGATE_INFERENCE, "cavi_exact")
#: q(lambda, n) of the augmented logistic-softmax model: lambda integrated out (gpal's), or the paper's mean field.
LOCALS_FAMILIES = ("collapsed", "mean_field")
#: How ``NoisyGPClassifier`` trains: stochastic variational inference, or a conjugate scheme.
INFERENCE = ("svi", *CONJUGATE_INFERENCE)
#: What a grid does with a failing unit (``run_units``, ``run_repeated_splits``, workflows' ``on_error``):
#: record it and go on, or stop.
ON_ERROR = ("record", "raise")
#: What a call on many models does with one that fails (``fit_batched``, ``run_together``):
#: raise it, or return it in that model's place.
PER_MODEL_ERRORS = ("raise", "return")
#: The bounds of the binary logistic likelihood (``gpal.models.families.logistic_bounds``): Jaakkola-Jordan
#: (xi analytic, or numerical with the hyperparameters: full, or both: hybrid), Taylor.
LOGISTIC_BOUNDS = ("jj", "jj-full", "jj-hybrid", "taylor")
#: The product's likelihood, the default of ``NoisyGPClassifier``, ``build_model``, the workflows'
#: ``training`` block and the main job: softmax (Monte Carlo ELBO) gave the best held-out NLL (its Gumbel
#: bound's within noise) and calibration on the 4FGL-DR4 main job (docs/methods.md); robust-max makes confident mistakes where classes overlap (docs/results.md, "Likelihoods and model
#: families"). The paper reproductions state ``robustmax`` themselves.
DEFAULT_LIKELIHOOD = "softmax"
#: Models trained in one batched step by default (``fit_batched``, ``run_together``, the workflows'
#: ``models_per_batch``): one step's fixed cost is shared by all of them, so at the Fermi size most of the gain
#: is there by 16 models, 64 take a little more of it, and more gain little (docs/results.md, "Many models at once").
MODELS_PER_BATCH = 64
#: The acquisition ``gpal active`` uses by default and the main job ranks its follow-up candidates by:
#: BALD did best in a simulated DR4 follow-up (docs/active_learning.md), and it scores what a label
#: can teach the model rather than how ambiguous a faint source is whatever we learn.
FOLLOW_UP_ACQUISITION = "bald"


class Registry(MutableMapping[str, Any]):
    """Names -> classes (or modules); built-in entries are import paths resolved on first use.

    A registry is one live object: code that imported it by name sees every entry registered later,
    so a user's own class joins with `register` and every reader (choices, constraints, lookups) has it.
    """

    def __init__(self, what: str, entries: dict[str, str], register_with: str | None = None):
        self.what = what
        self._entries: dict[str, Any] = dict(entries)
        self._builtin = frozenset(entries)
        #: the public call that adds a user's entry, named where a name is unknown (a model saved with a class of
        #: the user's own is loaded in a process that has not registered it)
        self.register_with = register_with

    def names(self) -> tuple[str, ...]:
        """The registered names, in registration order, without importing anything."""
        return tuple(self._entries)

    def __getitem__(self, name: str) -> Any:
        entry = self._entries[name]
        if isinstance(entry, str):
            module, _, attr = entry.partition(":")
            entry = import_module(module)
            entry = self._entries[name] = getattr(entry, attr) if attr else entry
        return entry

    def get_class(self, name: Any) -> Any:
        """The class (or module) registered as ``name``, or an error listing the valid names."""
        if not isinstance(name, str) or name not in self._entries:
            own = (f" (a class of your own: register it first, {self.register_with}({name!r}, cls))"
                   if self.register_with and isinstance(name, str) else "")
            raise ValueError(f"unknown {self.what} {name!r}; choose one of {list(self._entries)}{own}")
        return self[name]

    def having(self, capability: str) -> tuple[str, ...]:
        """The names whose class declares ``capability`` true (e.g. ``INPUT_NOISE.having("latent_inputs")``).

        A capability is a class attribute, so this imports the classes: call it where they are used.

        Returns
        -------
        tuple of str
            Those names, in registration order.
        """
        return tuple(name for name in self._entries if getattr(self[name], capability))

    def register(self, name: str, cls: Any, *, replace: bool = False) -> None:
        """Add ``cls`` as ``name``; a name already taken by another class is refused unless ``replace``.

        The same class registered again (a built-in's import path naming it, a module reloaded) is no clash.
        """
        if not isinstance(name, str) or not name:
            raise TypeError(f"{self.what} names are non-empty strings; got {name!r}")
        entry = self._entries.get(name)
        if entry is not None and not replace and not _same(entry, cls):
            taken = entry if isinstance(entry, str) else f"{entry.__module__}:{entry.__qualname__}"
            raise ValueError(f"{self.what} name {name!r} is already registered ({taken}); "
                             "pass replace=True to replace it")
        self._entries[name] = cls

    def register_named(self, name: str, cls: Any, base: type, *, replace: bool = False) -> None:
        """Register ``cls``, a subclass of ``base``, as ``name``, which becomes its ``name`` (what its configs hold).

        For a class written without a ``name`` of its own (one that declares a name registered itself when it
        was defined, and may only be registered under that name).
        """
        if not (isinstance(cls, type) and issubclass(cls, base)):
            raise TypeError(f"{self.what} {name!r} must be a subclass of {base.__module__}.{base.__qualname__}; "
                            f"got {cls!r}")
        own = cls.__dict__.get("name")
        if isinstance(own, str) and own and own != name:
            raise ValueError(f"{cls.__qualname__} declares the name {own!r}: register it as {own!r}, or write it "
                             "without a name of its own")
        self.register(name, cls, replace=replace)
        cls.name = name

    def unregister(self, name: str) -> None:
        """Remove the entry a user registered as ``name``; a built-in entry stays (the defaults rely on it)."""
        if name not in self._entries:
            raise KeyError(f"no {self.what} {name!r} is registered; registered: {list(self._entries)}")
        if name in self._builtin:
            raise ValueError(f"{self.what} {name!r} is built in and cannot be unregistered; "
                             "register another under its name with replace=True")
        del self._entries[name]

    def __setitem__(self, name: str, cls: Any) -> None:
        self.register(name, cls)

    def __delitem__(self, name: str) -> None:
        self.unregister(name)

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    # one registry is one object (Mapping's __eq__ would import every entry to compare them)
    __eq__ = object.__eq__
    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"Registry({self.what!r}, {list(self._entries)})"


def _same(entry: Any, cls: Any) -> bool:
    """Whether a registered entry is ``cls``: itself, its import path, or the same class defined again by a reload.

    Only a module-level class is reloaded: two classes a function made share a ``<locals>`` qualname and are two.
    """
    if isinstance(entry, str):
        return entry == f"{getattr(cls, '__module__', '')}:{getattr(cls, '__qualname__', '')}"
    qualname = getattr(cls, "__qualname__", "")
    return entry is cls or "<locals>" not in qualname and (
        getattr(entry, "__module__", None), getattr(entry, "__qualname__", None)) == (
        getattr(cls, "__module__", ""), qualname)


ESTIMATORS = Registry("estimator family", {
    "noisy_gp": "gpal.estimators.noisy_gp:NoisyGPClassifier",
    "dirichlet": "gpal.estimators.dirichlet:DirichletGPClassifier",
    "logistic_bound": "gpal.estimators.logistic_bound:LogisticBoundGPClassifier",
    "logistic_softmax": "gpal.estimators.logistic_softmax:LogisticSoftmaxGPClassifier",
    "gpr_platt": "gpal.estimators.gpr_platt:GPRPlattClassifier",
})

LIKELIHOODS = Registry("likelihood", {
    "softmax": "gpal.models.likelihoods.softmax:SoftmaxLikelihood",
    "robustmax": "gpal.models.likelihoods.base:RobustMax",
    "step": "gpal.models.likelihoods.gaussian_noise:StepLikelihood",
    "probit": "gpal.models.likelihoods.gaussian_noise:ProbitLikelihood",
    "logit": "gpal.models.likelihoods.gaussian_noise:LogitLikelihood",
    "gaussian_noise": "gpal.models.likelihoods.gaussian_noise:GaussianNoiseLikelihood",
    "logistic_softmax": "gpal.models.likelihoods.logistic_softmax:LogisticSoftmaxLikelihood",
}, register_with="gpal.register_likelihood")

#: Kernel factories ``n_features -> kernel`` (or, marked by `gpal.models.kernels.starts_from_rows`,
#: ``training rows, seed -> kernel``) by name, for
#: settings that cannot hold a kernel object.
KERNELS = Registry("kernel", {
    "se_ard": "gpal.models.kernels:default_kernel",
    "se_iso": "gpal.models.kernels:se_isotropic",
    "se_iso_plus_noise": "gpal.models.kernels:se_iso_plus_noise",
    "se_iso_plus_fixed_white": "gpal.models.kernels:se_iso_plus_fixed_white",
    "se_iso_spread": "gpal.models.kernels:se_iso_spread",
    "se_iso_plus_fixed_white_spread": "gpal.models.kernels:se_iso_plus_fixed_white_spread",
    "se_ard_plus_noise": "gpal.models.kernels:se_ard_plus_noise",
    "se_ard_plus_noise_median": "gpal.models.kernels:se_ard_plus_noise_median",
    "se_ard_plus_noise_median_log": "gpal.models.kernels:se_ard_plus_noise_median_log",
    "matern52_plus_se": "gpal.models.kernels:matern52_plus_se",
    "matern52_plus_se_iso": "gpal.models.kernels:matern52_plus_se_iso",
    "se_ard_liu": "gpal.models.kernels:se_ard_liu",
    "se_iso_liu": "gpal.models.kernels:se_iso_liu",
})

#: Input-noise strategies (``gpal.models.input_noise.InputNoise``); each declares what it is (latent
#: inputs, use of the noise variances, conjugate inference) and builds itself, see docs/architecture.md.
INPUT_NOISE = Registry("input_noise", {
    "none": "gpal.models.input_noise:NoInputNoise",
    "latent": "gpal.models.input_noise:LatentInputs",
    "amortized": "gpal.models.input_noise:AmortizedInputs",
    "first_order": "gpal.models.input_noise:FirstOrder",
}, register_with="gpal.register_input_noise")

ACQUISITIONS = Registry("acquisition", {
    "entropy": "gpal.active.acquisition:PredictiveEntropy",
    "random": "gpal.active.acquisition:RandomSampling",
    "bald": "gpal.active.acquisition:BALD",
    "epig": "gpal.active.acquisition:EPIG",
    "margin": "gpal.active.acquisition:Margin",
    "least_confidence": "gpal.active.acquisition:LeastConfidence",
    "discovery": "gpal.active.acquisition:Discovery",
}, register_with="gpal.register_acquisition")

#: Workflow kinds (``workflow:`` in a YAML file) -> the module holding its ``schema()`` and
#: ``run(config, out, executor, progress)``; an optional ``check(config)`` raises ValueError for what
#: no single key can check (e.g. a budget against the data).
WORKFLOWS = Registry("workflow kind", {
    "repeated_splits": "gpal.workflows.splits",
    "toy_1d": "gpal.workflows.toy",
    "synthetic_2d": "gpal.workflows.synthetic",
    "active_learning": "gpal.workflows.active_learning",
    "compare": "gpal.workflows.compare",
    "classify": "gpal.workflows.classify",
    "follow_up": "gpal.workflows.follow_up",
    "epoch_times": "gpal.workflows.epoch_times",
    "later_labels": "gpal.workflows.later_labels",
})

"""Workflow kind ``compare``: gpal's likelihoods and model families on the data sets available offline.

Every (data set, method) pair runs through `gpal.runs.repeated_splits.run_repeated_splits`
(random splits, stratified unless ``protocol.stratify`` is false, 90/10 unless ``protocol.test_size`` says otherwise, one resumable JSON file per split and method under
``<out>/<data set>/units/``).  The result is one table of test accuracy, test NLL,
top-label ECE (15 equal-width bins) and training seconds, each as mean ± standard
error over splits: ``comparison.md`` / ``.json`` / ``.csv``, a figure and ``report.md``.

Methods:

- ``MGP``, ``NIMGP``, ``NIMGP-NN``, ``NIMGP-FO``: the noisy-input paper's four classifiers with
  the settings of the ``noisy_input`` block (its sec. 5.3: robust-max, batch 50, input-noise
  variance learned), for its Tables 5-6 with ``protocol.injected_noise``;
- ``svgp-<likelihood>``: ``NoisyGPClassifier(input_noise="none", likelihood=...)`` for every
  likelihood of `gpal.registry.LIKELIHOODS` (Adam, minibatch 50, ``epochs``);
- ``svgp-<step|probit|logit>-fixed-delta``: the same with the label-flip delta held at its
  starting value 1e-3 instead of learned (paper 000, sec. IV-B1 and Fig. 4);
- ``svgp-softmax-mc``: the softmax likelihood with E_q[log softmax_y(f)] estimated by Monte Carlo
  (``SOFTMAX_MC_SAMPLES`` reparameterised draws, GPflow's ``Softmax`` count; seeded, so the same draws at
  every step): the variational softmax GPC that paper 003's text compares against (``svgp-softmax`` is
  paper 000's GPCsm, its closed-form Gumbel bound);
- ``svgp-softmax-mc-lbfgs``: the same GPC trained as paper 003's authors train theirs, full-batch L-BFGS-B on the
  ELBO (one fixed set of Monte Carlo draws), at most ``iters`` iterations (`gpal.workflows.lbfgs_svgp`);
- ``dirichlet``: ``DirichletGPClassifier`` (alpha_eps chosen from 0.1/0.01/0.001 by training MNLL);
- ``gpr-platt``: ``GPRPlattClassifier`` (GP regression on the labels, Platt-scaled on 20 % of the
  training rows: paper 003's baseline);
- ``ls-cavi`` / ``ls-natgrad``: ``LogisticSoftmaxGPClassifier`` (augmented logistic-softmax) with paper 004's
  full-batch CAVI or minibatch natural gradients on its mean-field factorisation; gpal's variants:
  ``ls-cavi-collapsed`` (CAVI with lambda integrated out) and ``ls-cavi-exact`` (50 collapsed sweeps, then
  100 natural-gradient steps on the exact ELBO, ``inference="cavi_exact"``; each count capped by ``iters``);
- ``robustmax-natgrad``: paper 004's robust-max baseline as the paper trains it, natural gradients on q(u) and
  Adam on the rest (`gpal.workflows.robustmax_natgrad`; minibatch 50, ``epochs``);
- ``jj``, ``jj-full``, ``jj-hybrid``, ``taylor``: ``LogisticBoundGPClassifier`` (binary only; the table
  says "n/a (binary only)" on multi-class data sets).

``method_options`` gives a method estimator settings beyond these (e.g. paper 003's authors' GPD:
``dirichlet: {prior_mean: class_frequency, train_inducing: false, kernel: se_iso}``; paper 000's authors' Beta prior
on the flip rate: ``svgp-step: {likelihood_options: {delta_prior: [0.2, 5]}}``); each option is
checked by the estimator before anything runs.  ``ece`` says how ECE is computed (default gpal's:
top-label, 15 bins, mean confidence; `gpal.evaluation.calibration.expected_calibration_error`), so a
paper's workflow can measure it as the paper did.
Measured input variances are not passed to any estimator (``use_variances=False``): the
likelihood comparison sees exact inputs, and the noisy-input methods learn the noise level.
``protocol.injected_noise`` runs every data set once per listed variance, with Gaussian noise of
that variance (in units of the training split's standard deviation) added to the train and test
rows of each split; its measurements then name settings ``NAME/LEVEL``.
Iteration budgets: minibatch methods run ``epochs`` passes over the training rows;
full-batch methods (CAVI sweeps, vi-JJ/Taylor outer iterations, Dirichlet and GPR L-BFGS)
stop at ``iters`` iterations or earlier on their own convergence test.  Data sets
take an optional ``:N`` suffix: generators draw N rows, fixed sets are subsampled
(seeded, stratified) to at most N rows.
"""

from __future__ import annotations

import importlib
import inspect
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from gpal.constraints import Boolean, Integer, ListOf, MappingOf, OneOf, Optional, Options, Parsed, Real
from gpal.data.dataset import NoisyDataset
from gpal.data.standardizer import SCALINGS
from gpal.data.registry import DATASETS as BENCHMARK_DATASETS
from gpal.data.registry import DatasetEntry, load_dataset, parse_dataset
from gpal.evaluation.calibration import BINARY_SCORES, CONFIDENCES, EMPTY_BINS, expected_calibration_error
from gpal.evaluation.metrics import format_mean_se, mean_se
from gpal.files import atomic_output, write_json_atomic, write_text_atomic
from gpal.registry import ESTIMATORS, KERNELS, LIKELIHOODS, LOGISTIC_BOUNDS
from gpal.runs.executors import Executor
from gpal.runs.repeated_splits import NOISY_INPUT_METHODS, run_repeated_splits, summarize, unit_path
from gpal.workflows.methods import (WORKFLOW_TRAINING, check_noisy_input_options, classifier_params, merged,
                                    training_schema)
from gpal.workflows.measurements import Produced, write_measurements
from gpal.workflows.schema import Field

__all__ = [
    "DATASETS", "DEFAULT_DATASETS", "GPAL_ECE", "METHODS", "NOT_APPLICABLE", "SOFTMAX_MC", "SOFTMAX_MC_LBFGS", "SOFTMAX_MC_SAMPLES", "EstimatorFactory",
    "check", "check_method_options", "check_methods",
    "comparison_markdown", "dataset_tag", "measured_values", "method_ece", "method_spec", "produces", "run", "run_comparison",
    "schema",
    "settings_of",
]

BINARY_ONLY = LOGISTIC_BOUNDS
#: The Gaussian-noise likelihoods whose label-flip delta a method may hold fixed (paper 000, Fig. 4).
FIXED_DELTA = ("step", "probit", "logit")
FIXED_DELTA_SUFFIX = "-fixed-delta"
#: The softmax GPC with a Monte Carlo ELBO (paper 003's GPC), beside ``svgp-softmax``, paper 000's bound.
SOFTMAX_MC = "svgp-softmax-mc"
#: Its draws per point and step: GPflow's ``MonteCarloLikelihood`` default (``num_monte_carlo_points``).
SOFTMAX_MC_SAMPLES = 100
#: The same GPC trained as paper 003's authors train theirs: full-batch L-BFGS-B on the ELBO, capped by ``iters``.
SOFTMAX_MC_LBFGS = "svgp-softmax-mc-lbfgs"
METHODS = (
    *NOISY_INPUT_METHODS,
    *(f"svgp-{lik}" for lik in LIKELIHOODS.names()),
    *(f"svgp-{lik}{FIXED_DELTA_SUFFIX}" for lik in FIXED_DELTA),
    SOFTMAX_MC,
    SOFTMAX_MC_LBFGS,
    "dirichlet",
    "gpr-platt",
    "ls-cavi",
    "ls-natgrad",
    "ls-cavi-collapsed",
    "ls-cavi-exact",
    "robustmax-natgrad",
    *BINARY_ONLY,
)
#: Estimator families of the paper workflows alone, beside `gpal.registry.ESTIMATORS`: name -> "module:Class".
PAPER_BASELINES = {"robustmax_natgrad": "gpal.workflows.robustmax_natgrad:NaturalGradientRobustMax",
                   "lbfgs_svgp": "gpal.workflows.lbfgs_svgp:LbfgsSVGPClassifier"}


def estimator_class(family: str) -> type:
    """The class of an estimator family: a registered one, or a paper workflow's baseline (`PAPER_BASELINES`)."""
    if family in PAPER_BASELINES:
        module, _, name = PAPER_BASELINES[family].partition(":")
        return getattr(importlib.import_module(module), name)
    return ESTIMATORS.get_class(family)

NOT_APPLICABLE = "n/a (binary only)"
#: gpal's ECE (`expected_calibration_error`'s defaults), the ``ece`` block's default.
GPAL_ECE = {"n_bins": 15, "confidence": "mean", "binary": "top_label", "empty_bins": "skip"}
#: The minibatch methods' batch rows and the svgp- methods' Adam step: the workflows' (`WORKFLOW_TRAINING`), not the
#: estimator's own defaults, which are the main job's.
BATCH_SIZE, LEARNING_RATE = WORKFLOW_TRAINING["batch_size"], WORKFLOW_TRAINING["learning_rate"]
# ls-cavi-exact: CAVI's start and the exact steps after it, each capped by ``iters`` (docs/papers/004_numbers.md).
CAVI_EXACT_SWEEPS, CAVI_EXACT_STEPS = 50, 100


# ------------------------------------------------------------------ data sets
def _fgl(n: int | None, seed: int) -> NoisyDataset:
    from gpal.catalogs import load_catalog

    return load_catalog("4FGL").dataset(classes=["bll", "fsrq", "psr"], min_significance=30, features="villacampa2021")


def _fgl_dr4(n: int | None, seed: int) -> NoisyDataset:
    from gpal.catalogs import load_catalog

    # the paper's features and its rule for a missing error (drop the source), as the recorded comparisons ran
    return load_catalog("4FGL-DR4").dataset(classes=["bll", "fsrq"], features="villacampa2021")


#: gpal.data's data sets and two catalog selections (catalogs come after gpal.data in the pipeline)
DATASETS: dict[str, DatasetEntry] = {
    **BENCHMARK_DATASETS,
    "4fgl": DatasetEntry(_fgl, "4FGL, Signif_Avg > 30, bll/fsrq/psr, 6 features"),
    "4fgl-dr4": DatasetEntry(_fgl_dr4, "4FGL-DR4, all significances, bll vs fsrq, 6 features"),
}
#: what the workflow runs when its file names no data sets
DEFAULT_DATASETS = ("synthetic_2d", "waveform", "wine", "digits", "4fgl", "4fgl-dr4")


# -------------------------------------------------------------------- methods
@dataclass(frozen=True)
class EstimatorFactory:
    """``seed -> unfitted estimator`` for a family outside NoisyGPClassifier.

    Its ``repr`` lists every setting, and gpal.runs.repeated_splits stores that repr in the
    folder's config, so rerunning with other settings into the same folder is refused
    rather than mixed.
    """

    family: str
    params: tuple[tuple[str, Any], ...]

    def __call__(self, seed: int) -> Any:
        return estimator_class(self.family)(**dict(self.params), random_state=seed, progress=False)


def method_spec(name: str, n_train: int, epochs: int, iters: int, num_inducing: int,
                noisy_input: Mapping[str, Any] | None = None, kernel: str | None = None,
                options: Mapping[str, Any] | None = None, n_rows: int | None = None) -> Any:
    """The experiments-runner spec (parameter dict or factory) of one method on ``n_train`` rows of a data set of
    ``n_rows`` (training and test; None: ``n_train``).

    ``options``: estimator settings that replace the method's own (the workflow's ``method_options``), but for
    ``likelihood_options``, merged key by key into the method's own; for a noisy-input method, settings of the
    ``noisy_input`` block that replace the block's for it alone, its ``likelihood_options`` merged likewise.
    """
    if options and name in NOISY_INPUT_METHODS and noisy_input is not None:
        noisy_input, options = merged(noisy_input, options), None
    spec = _method_spec(name, n_train, epochs, iters, num_inducing, noisy_input, kernel,
                        n_train if n_rows is None else n_rows)
    if not options:
        return spec
    params = merged(dict(spec.params) if isinstance(spec, EstimatorFactory) else spec, options)
    if isinstance(spec, EstimatorFactory):
        return EstimatorFactory(spec.family, tuple(params.items()))
    return params


def _method_spec(name: str, n_train: int, epochs: int, iters: int, num_inducing: int,
                 noisy_input: Mapping[str, Any] | None, kernel: str | None, n_rows: int) -> Any:
    """`method_spec` without options.

    The noisy-input paper's methods (MGP, NIMGP, NIMGP-NN, NIMGP-FO) take every setting from
    ``noisy_input`` (the workflow's ``noisy_input`` block), not from ``epochs`` / ``num_inducing``.
    ``kernel``: a name from `gpal.registry.KERNELS` for the ``svgp-`` methods (None: their default SE-ARD);
    the other families have kernels of their own, so naming one for them is refused.
    """
    if kernel is not None and not name.startswith("svgp-"):
        raise ValueError(f"method {name!r} has its own kernel; a kernel ({kernel!r}) can only be set for the svgp- methods")
    if name in NOISY_INPUT_METHODS:
        if noisy_input is None:
            raise ValueError(f"method {name!r} needs the noisy_input settings (the workflow's noisy_input block)")
        return classifier_params([name], dict(noisy_input), n_train, n_rows)[name]
    if name == SOFTMAX_MC_LBFGS:
        return EstimatorFactory("lbfgs_svgp", (
            ("likelihood", "softmax"),
            ("likelihood_options", {"elbo": "monte_carlo", "num_elbo_samples": SOFTMAX_MC_SAMPLES}),
            ("num_inducing", num_inducing), *(() if kernel is None else (("kernel", kernel),)), ("max_iter", iters)))
    if name.startswith("svgp-"):
        likelihood = name[len("svgp-") :]
        options = {}
        if likelihood == "softmax":  # paper 000's GPCsm trains softmax through its closed-form Gumbel bound
            options = {"likelihood_options": {"elbo": "bound"}}
        elif name == SOFTMAX_MC:
            likelihood = "softmax"
            options = {"likelihood_options": {"elbo": "monte_carlo", "num_elbo_samples": SOFTMAX_MC_SAMPLES}}
        elif likelihood.endswith(FIXED_DELTA_SUFFIX):  # delta stays at the likelihood's starting 1e-3
            likelihood = likelihood[: -len(FIXED_DELTA_SUFFIX)]
            options = {"likelihood_options": {"learn_delta": False}}
        return {
            "input_noise": "none",
            "likelihood": likelihood,
            **options,
            "num_inducing": num_inducing,
            **({} if kernel is None else {"kernel": kernel}),  # left out by default: earlier runs' specs still match
            "batch_size": BATCH_SIZE,
            "learning_rate": LEARNING_RATE,
            "epochs": epochs,
            "progress": False,
        }
    if name == "dirichlet":
        return EstimatorFactory("dirichlet", (("num_inducing", num_inducing), ("max_iter", iters)))
    if name == "gpr-platt":
        return EstimatorFactory("gpr_platt", (("num_inducing", num_inducing), ("max_iter", iters)))
    if name == "ls-cavi":
        return EstimatorFactory("logistic_softmax", (("inference", "cavi"), ("num_inducing", num_inducing), ("max_iter", iters)))
    if name == "ls-cavi-collapsed":
        return EstimatorFactory("logistic_softmax", (("inference", "cavi_collapsed"), ("num_inducing", num_inducing),
                                                     ("max_iter", iters)))
    if name == "ls-cavi-exact":
        return EstimatorFactory("logistic_softmax", (("inference", "cavi_exact"), ("num_inducing", num_inducing),
                                                     ("max_iter", min(iters, CAVI_EXACT_SWEEPS)),
                                                     ("exact_steps", min(iters, CAVI_EXACT_STEPS))))
    if name == "robustmax-natgrad":
        return EstimatorFactory("robustmax_natgrad", (("num_inducing", num_inducing), ("batch_size", BATCH_SIZE),
                                                      ("epochs", epochs)))
    if name == "ls-natgrad":
        from gpal.training.budget import minibatch_steps

        steps = minibatch_steps(epochs, n_train, BATCH_SIZE)  # NoisyGPClassifier(inference="natural_gradient")'s rule
        return EstimatorFactory(
            "logistic_softmax",
            (("inference", "natural_gradient"), ("batch_size", BATCH_SIZE), ("num_inducing", num_inducing), ("max_iter", steps)),
        )
    return EstimatorFactory("logistic_bound", (("method", name), ("num_inducing", num_inducing), ("max_iter", iters)))


def check_methods(names: Sequence[str]) -> list[str]:
    """Validated, de-duplicated method names."""
    names = list(dict.fromkeys(n.strip() for n in names if n.strip()))
    if not names:
        raise ValueError(f"no methods selected; valid names are {list(METHODS)}")
    unknown = [n for n in names if n not in METHODS]
    if unknown:
        raise ValueError(f"unknown method(s) {unknown}; valid names are {list(METHODS)}")
    if any(n.startswith("ls-") for n in names):
        try:
            importlib.import_module("gpal.estimators.logistic_softmax")
        except ImportError as exc:
            raise ValueError(f"the ls- methods need gpal.estimators.logistic_softmax, which does not import: {exc}") from exc
    return names


def check_method_options(options: Mapping[str, Mapping[str, Any]], methods: Sequence[str],
                         noisy_input: Mapping[str, Any] | None = None) -> dict[str, dict[str, Any]]:
    """``method -> estimator settings``, each checked by building the method's estimator with them.

    An unknown method, a setting its estimator does not have, or a value it refuses is named before
    anything runs; the options of a known method the run leaves out are not used.  A noisy-input method's options
    are settings of the ``noisy_input`` block (e.g. paper 001's authors' MGP: its own ``likelihood_options``),
    checked on the block they replace.
    """
    out = {}
    for method, opts in options.items():
        if method not in METHODS:
            raise ValueError(f"method_options names {method!r}, which is not a method; valid names are {list(METHODS)}")
        if method not in methods:  # a workflow's options for a method this run leaves out (--set methods=...)
            continue
        opts = dict(opts or {})
        if method in NOISY_INPUT_METHODS:
            out[method] = check_noisy_input_options(method, opts, noisy_input, "noisy_input")
            continue
        spec = method_spec(method, 100, 1, 1, 1, options=opts)
        cls = estimator_class(spec.family) if isinstance(spec, EstimatorFactory) else ESTIMATORS.get_class("noisy_gp")
        params = dict(spec.params) if isinstance(spec, EstimatorFactory) else spec
        names = sorted(inspect.signature(cls.__init__).parameters.keys() - {"self"})
        unknown = sorted(set(opts) - set(names))
        if unknown:
            raise ValueError(f"method_options.{method}: {cls.__name__} has no setting(s) {unknown}; "
                             f"its settings are {names}")
        estimator = cls(**params)  # a baseline of PAPER_BASELINES checks its settings when made
        if hasattr(estimator, "validate_params"):
            estimator.validate_params()
        out[method] = opts
    return out


def _checked_options(method_options: Mapping[str, Mapping[str, Any]], methods: Sequence[str],
                     scaling: str, noisy_input: Mapping[str, Any] | None = None) -> dict[str, dict[str, Any]]:
    """Each method's estimator settings, `check_method_options`'d: the run's ``scaling`` where it is not z-scores
    (every method's estimator must take it: refused before anything runs), under the method's own options."""
    if scaling != "zscore":
        method_options = {**method_options, **{m: {"scaling": scaling, **(method_options.get(m) or {})}
                                               for m in methods}}
    return check_method_options(method_options, methods, noisy_input)


# ---------------------------------------------------------------------- runs
def _cell(values: Sequence[float], digits: int) -> str:
    m, se = mean_se(np.asarray(values, dtype=np.float64))
    return format_mean_se(m, se, digits)


def dataset_tag(name: str, n: int | None, level: float | None = None) -> str:
    """The folder and table name of a data set at a size (and injected noise level, when the run has levels): where
    a run's results of that data set are, for whoever reads the run folder."""
    return (name if n is None else f"{name}-n{n}") + ("" if level is None else f"/noise_{level:g}")


def settings_of(datasets: Sequence[str], injected_noise: Sequence[float],
                registry: Mapping[str, DatasetEntry] = DATASETS) -> list[tuple[str, int | None, float | None, str]]:
    """``(name, rows, level, setting)`` per data set and injected level; the setting is what its measurements name.

    Without injected noise (levels ``[0]``) a setting is the data set's name; with levels it is
    ``NAME/LEVEL`` (``vehicle/0.25``) and the level is part of the folder.
    """
    levelled = list(injected_noise) != [0.0]
    out = []
    for token in datasets:
        name, n = parse_dataset(token, registry)
        for level in injected_noise:
            out.append((name, n, level if levelled else None, f"{name}/{level:g}" if levelled else name))
    return out


#: The per-split metrics of its measurements (`gpal.workflows.measurements`).
METRICS = ("accuracy", "error", "nll", "ece", "train_seconds")


def method_ece(y_true: Any, proba: Any, ece: Mapping[str, Any] | None, method: str) -> float:
    """A method's ECE as an ``ece`` block defines it (None: gpal's); a method in its ``top_label_methods`` is binned
    by its top label on two classes whatever ``binary`` says (paper 003's code does so for its GPD, which gives a
    column per class)."""
    keywords = dict(ece or GPAL_ECE)
    if method in keywords.pop("top_label_methods", ()):
        keywords["binary"] = "top_label"
    return expected_calibration_error(np.asarray(y_true), np.asarray(proba), **keywords)


def _unit_ece(unit: Mapping[str, Any], ece: Mapping[str, Any] | None, method: str) -> float:
    return method_ece(unit["y_true"], unit["proba"], ece, method)


def _unit_metrics(unit: Mapping[str, Any], ece: Mapping[str, Any] | None, method: str) -> dict[str, float]:
    return {"accuracy": 1.0 - unit["error"], "error": unit["error"], "nll": unit["nll"],
            "ece": _unit_ece(unit, ece, method), "train_seconds": unit["train_seconds"]}


def measured_values(out: str | Path, datasets: Sequence[str], methods: Sequence[str], n_splits: int,
                    injected_noise: Sequence[float] = (0.0,),
                    registry: Mapping[str, DatasetEntry] = DATASETS,
                    ece: Mapping[str, Any] | None = None) -> dict[tuple[str, str, str], list[float]]:
    """``(setting, method, metric) -> value per finished split`` of a comparison folder (`settings_of`).

    ``ece``: `expected_calibration_error`'s keywords (default ``GPAL_ECE``).
    """
    measured: dict[tuple[str, str, str], list[float]] = {}
    for name, n, level, setting in settings_of(datasets, injected_noise, registry):
        for m in methods:
            for unit in _rows_for(Path(out) / dataset_tag(name, n, level), m, range(n_splits)):
                for metric, value in _unit_metrics(unit, ece, m).items():
                    measured.setdefault((setting, m, metric), []).append(value)
    return measured


def produces(config: Mapping[str, Any]) -> Produced:
    """The settings (data set, or data set/level), methods and metrics its measurements hold."""
    settings = [s[-1] for s in settings_of(config["datasets"], config["protocol"]["injected_noise"])]
    return Produced(settings, config["methods"], METRICS)


def _rows_for(out: Path, method: str, splits: Sequence[int]) -> list[dict[str, Any]]:
    rows = []
    for k in splits:
        path = unit_path(out, method, k)
        if path.exists():
            rows.append(json.loads(path.read_text()))
    return rows


def run_comparison(
    datasets: Sequence[str],
    methods: Sequence[str],
    n_splits: int,
    epochs: int,
    out: str | Path,
    seed: int = 0,
    iters: int = 100,
    num_inducing: int = 20,
    progress: bool = True,
    registry: Mapping[str, DatasetEntry] = DATASETS,
    executor: Executor | None = None,
    injected_noise: Sequence[float] = (0.0,),
    noisy_input: Mapping[str, Any] | None = None,
    test_size: float = 0.1,
    kernel: str | None = None,
    method_options: Mapping[str, Mapping[str, Any]] | None = None,
    ece: Mapping[str, Any] | None = None,
    paper: str | None = None,
    scaling: str = "zscore",
    stratify: bool = True,
) -> list[dict[str, Any]]:
    """Run (or resume) every method x data set and write ``comparison.md`` / ``.json`` / ``.csv``.

    ``registry`` maps data-set names to `gpal.data.registry.DatasetEntry` (default ``DATASETS``:
    gpal.data's sets and the two catalog selections); ``executor`` runs the units (default: in this
    process).  Each data set runs once per ``injected_noise`` variance (input noise added to train
    and test rows in units of the training split's standard deviation, paper 001 sec. 5.3);
    ``noisy_input`` holds the settings of the noisy-input methods and ``kernel`` names the ``svgp-``
    methods' kernel (`method_spec`).  ``scaling``: how every method scales its inputs, fitted on each split's
    training rows: "zscore" (gpal's) or "range" (each feature's training range onto [-1, 1], paper 003's code);
    a method's own ``scaling`` in ``method_options`` overrides it.  ``stratify``: each test set keeps the classes'
    shares (gpal's), or is a plain random draw (paper 000's Bayesian Benchmarks).

    Returns one row per (data set, method): metric cells as "mean ± SE" strings, or
    ``NOT_APPLICABLE`` for a binary-only method on a multi-class data set.  Failed
    units are recorded by the runner and retried on the next call.
    """
    methods = check_methods(methods)
    try:
        method_options = _checked_options(method_options or {}, methods, scaling, noisy_input)
    except ValueError as err:
        raise ValueError(f"{err} (the workflow of {paper})" if paper else str(err)) from None
    out = Path(out)
    table = []
    loaded: dict[tuple[str, int | None], NoisyDataset] = {}
    for name, n, level, _ in settings_of(datasets, injected_noise, registry):
        ds = loaded.get((name, n)) or loaded.setdefault((name, n), load_dataset(name, n=n, seed=seed, registry=registry))
        tag = dataset_tag(name, n, level)
        n_train = ds.n_samples - next(ds.repeated_splits(1, test_size, seed, stratify)).test.size
        usable = [m for m in methods if ds.n_classes == 2 or m not in BINARY_ONLY]
        specs = {m: method_spec(m, n_train, epochs, iters, num_inducing, noisy_input,
                                kernel if m.startswith("svgp-") else None, method_options.get(m), ds.n_samples)
                 for m in usable}
        folder = out / tag
        if specs:
            run_repeated_splits(
                ds, specs, folder, n_splits=n_splits, test_size=test_size, seed=seed, stratify=stratify,
                use_variances=False, on_error="record", progress=progress, executor=executor,
                injected_variance=level or 0.0,
            )
            summary = summarize(folder, methods=list(specs), splits=list(range(n_splits)), common_splits_only=False)
        for m in methods:
            row = {"dataset": tag, "n": ds.n_samples, "classes": ds.n_classes, "method": m}
            if m not in specs:
                row.update(splits=0, accuracy=NOT_APPLICABLE, nll=NOT_APPLICABLE, ece=NOT_APPLICABLE, train_seconds=NOT_APPLICABLE)
                table.append(row)
                continue
            entry = summary["methods"][m]
            units = _rows_for(folder, m, entry["splits"])
            row.update(splits=len(units), failed=entry["n_failed"])
            if units:
                nll_mean, nll_se = mean_se(np.asarray([u["nll"] for u in units], dtype=np.float64))
                row.update(
                    accuracy=_cell([1.0 - u["error"] for u in units], 3),
                    nll=format_mean_se(nll_mean, nll_se, 3),
                    nll_mean=float(nll_mean),
                    nll_se=float(nll_se) if math.isfinite(nll_se) else None,
                    ece=_cell([_unit_ece(u, ece, m) for u in units], 3),
                    train_seconds=_cell([u["train_seconds"] for u in units], 1),
                )
            else:
                row.update(accuracy="failed", nll="failed", ece="failed", train_seconds="failed")
            table.append(row)
    write_json_atomic(out / "comparison.json", table)
    write_text_atomic(out / "comparison.md", comparison_markdown(table))
    with atomic_output(out / "comparison.csv") as tmp:
        pd.DataFrame(table).to_csv(tmp, index=False)
    return table


def comparison_markdown(table: Sequence[Mapping[str, Any]]) -> str:
    """One Markdown table, a row per (data set, method)."""
    lines = [
        "| data set | n | C | method | splits | test accuracy | test NLL | ECE | train s |",
        "|---|---:|---:|---|---:|---|---|---|---|",
    ]
    for r in table:
        lines.append(
            f"| {r['dataset']} | {r['n']} | {r['classes']} | {r['method']} | {r['splits']} | {r['accuracy']} "
            f"| {r['nll']} | {r['ece']} | {r['train_seconds']} |"
        )
    return "\n".join(lines) + "\n"




# ------------------------------------------------------------------ workflow
def _dataset_token(value: Any) -> str:
    parse_dataset(value, DATASETS)
    return value


def _method_name(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"expected a method name, one of {list(METHODS)}; got {value!r}")
    return check_methods([value])[0]


def schema() -> dict[str, Any]:
    return {
        "datasets": Field(ListOf(Parsed(_dataset_token, f"NAME or NAME:ROWS with NAME in {list(DATASETS)}")),
                          list(DEFAULT_DATASETS),
                          "data sets as NAME or NAME:ROWS (docs/datasets.md): "
                          + "; ".join(f"{k} = {e.description}" for k, e in DATASETS.items())),
        "methods": Field(ListOf(Parsed(_method_name, f"one of {list(METHODS)}")), list(METHODS),
                         f"methods, a list from {list(METHODS)}"),
        "protocol": {
            "splits": Field(Integer(1), 5, "random train/test splits", part_of_run=False),
            "test_size": Field(Real(0, 1, low_open=True, high_open=True), 0.1, "test fraction of each split"),
            "stratify": Field(Boolean(), True, "each test set keeps the classes' shares (gpal's), or false: a plain "
                              "random draw (paper 000's Bayesian Benchmarks)"),
            "injected_noise": Field(ListOf(Real(0)), [0.0], "input-noise variances injected into train and test "
                                    "rows, in units of the training split's standard deviation (paper 001, sec. 5.3)"),
        },
        "training": {
            "epochs": Field(Integer(1), 100, "passes over the data for minibatch methods"),
            "iters": Field(Integer(1), 100, "iteration cap of full-batch methods"),
            "num_inducing": Field(Integer(1), 20, "inducing points for every method but the noisy-input ones"),
            "scaling": Field(OneOf(list(SCALINGS)), "zscore", "how every method scales its inputs, fitted on each "
                             "split's training rows: z-scores (gpal's) or each feature's range onto [-1, 1] (paper "
                             "003's code)"),
            "kernel": Field(Optional(OneOf(list(KERNELS.names()))), None,
                            f"kernel of the svgp- methods, one of {list(KERNELS.names())} (null: SE-ARD); "
                            "the other families keep their own"),
        },
        "method_options": Field(MappingOf(Options()), {},
                                "method -> estimator settings of its own (a paper's choices, e.g. dirichlet: "
                                "{prior_mean: class_frequency}); checked by the estimator before anything runs"),
        "ece": {
            "n_bins": Field(Integer(1), 15, "equal-width bins of the ECE", part_of_run=False),
            "confidence": Field(OneOf(list(CONFIDENCES)), "mean", "a bin's confidence: the mean score of its "
                                "points (gpal's) or its midpoint (paper 003's code)", part_of_run=False),
            "binary": Field(OneOf(list(BINARY_SCORES)), "top_label", "the score on two-class sets: top-label "
                            "confidence (gpal's) or p(y=1) against y = 1 (paper 003's code)", part_of_run=False),
            "empty_bins": Field(OneOf(list(EMPTY_BINS)), "skip", "empty bins left out (gpal's) or counted as "
                                "one point of accuracy 0 (paper 003's code)", part_of_run=False),
            "top_label_methods": Field(ListOf(Parsed(_method_name, f"one of {list(METHODS)}"), min_length=0), [],
                                       "methods binned by their top label on two-class sets whatever `binary` says "
                                       "(paper 003's code: its GPD, which gives a column per class)", part_of_run=False),
        },
        # paper 001's sec. 5.3 settings: robust-max, label flips 1e-3 fixed, batch 50, input-noise variance learned
        "noisy_input": training_schema(likelihood="robustmax",
                                       likelihood_options={"epsilon": 1e-3, "learn_epsilon": False}, batch_size=50,
                                       noise_variance="learned", num_inducing="auto", epochs=1000),
    }


def _paper_of(config: Mapping[str, Any]) -> str:
    """The workflow's title (a paper's workflow names its paper there): for errors."""
    return config["title"] or "this workflow"


def check(config: Mapping[str, Any]) -> None:
    """Refuse ``method_options`` a method's estimator does not take, naming the paper, when the file is loaded."""
    try:
        _checked_options(config["method_options"], config["methods"], config["training"]["scaling"],
                         config["noisy_input"])
    except ValueError as err:
        raise ValueError(f"{err} (the workflow of {_paper_of(config)})") from None


def run(config: dict[str, Any], out: Path, executor: Executor, progress: bool) -> None:
    from gpal.evaluation.plots import save_figure
    from gpal.evaluation.reports import write_report

    t, levels = config["training"], config["protocol"]["injected_noise"]
    table = run_comparison(
        config["datasets"], config["methods"], config["protocol"]["splits"], t["epochs"], out, seed=config["seed"],
        iters=t["iters"], num_inducing=t["num_inducing"], progress=progress, executor=executor,
        injected_noise=levels, noisy_input=config["noisy_input"], test_size=config["protocol"]["test_size"],
        kernel=t["kernel"], method_options=config["method_options"], ece=config["ece"],
        paper=_paper_of(config), scaling=t["scaling"], stratify=config["protocol"]["stratify"],
    )
    figures = {"Test NLL per data set and method (mean ± SE over splits)": save_figure(plot_nll(table), out / "nll")}
    measured = measured_values(out, config["datasets"], config["methods"], config["protocol"]["splits"], levels,
                               ece=config["ece"])
    noisy = config["noisy_input"]
    budget = {"splits": config["protocol"]["splits"], "epochs": t["epochs"]}
    if all(m in NOISY_INPUT_METHODS for m in config["methods"]):  # the noisy-input paper's budget is its block's
        budget.update(epochs=noisy["epochs"], n_samples=noisy["n_samples"])
    write_measurements(out, config, produces(config), measured, budget)
    text = "\n".join([
        config["description"] or "", "",
        f"{config['protocol']['splits']} split(s), test fraction {config['protocol']['test_size']:g}; "
        f"minibatch methods {t['epochs']} epochs, full-batch methods at most "
        f"{t['iters']} iterations, M = {t['num_inducing']}. Also as `comparison.csv` / `comparison.json`.", "",
        comparison_markdown(table),
    ])
    write_report(out, config["title"], figures=figures, text=text)


def plot_nll(table: Sequence[Mapping[str, Any]]) -> Any:
    """Horizontal bars of test NLL: one panel per data set, one bar per method."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    frame = pd.DataFrame(table)
    sets = list(dict.fromkeys(frame["dataset"]))
    fig = Figure(figsize=(3.2 * len(sets), 0.3 * frame["method"].nunique() + 1.6), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, len(sets), sharey=True, squeeze=False)[0]
    for ax, name in zip(axes, sets):
        part = frame[frame["dataset"] == name]
        mean = part.get("nll_mean", pd.Series(np.nan, index=part.index)).astype(float).to_numpy()
        se = part.get("nll_se", pd.Series(np.nan, index=part.index)).astype(float).to_numpy()
        ax.barh(np.arange(len(part)), np.nan_to_num(mean), xerr=np.nan_to_num(se), color="C0")
        ax.set_yticks(np.arange(len(part)), part["method"])
        ax.set(title=name, xlabel="test NLL")
        ax.grid(axis="x", alpha=0.3)
    axes[0].invert_yaxis()
    return fig

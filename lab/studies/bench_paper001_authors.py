#!/usr/bin/env python
"""Paper 001's methods as its authors coded them (GPInputNoise), run beside gpal's on waveform or wine
(``--dataset``) at injected input noise 0.1, 0.25 or 0.5 (``--level``): the same rows, splits and noisy inputs; test
error and NLL of both, per split.  ``--dataset synthetic`` runs the authors' code on gpal's own 2-D problems (those
of ``gpal workflow papers/001_synthetic_2d``, one a split), with their synthetic scripts' settings, beside the
workflow's own fit ("gpal as authors"); ``--variance known`` gives the methods the input variance, as those scripts
do, where by default they learn it from 0.1, as their UCI scripts do.

GPInputNoise is github.com/cvillacampa/GPInputNoise at commit 0e9268a (plain TensorFlow 1, no GPflow). It is read from
a git-ignored folder, fetched once by hand, and is neither shipped nor copied into gpal (its MNIST and synthetic
data are large files the study does not need, so only the package and the two UCI folders are checked out)::

    git clone --no-checkout https://github.com/cvillacampa/GPInputNoise lab/authors/GPInputNoise && \\
        git -C lab/authors/GPInputNoise checkout 0e9268a -- gp_input_noise experiments/uci/waveform \
            experiments/uci/wine

Without it the study says so and exits having run nothing.

The authors' side follows ``experiments/uci/<dataset>/<level>/<method>/test_real.py`` (the same script for both
sets, and the same generate_data.py): the rows of their
``data/X.txt`` and ``Y.txt``, split ``fold`` of the 100 permutations and the noise of ``data/generate_data.py``
(seed 0; made here in memory rather than saved as .npy), a 90/10 split standardised on its training rows, the noise
added after; SE-ARD started at the median distance, per class its own random training rows as inducing inputs
(M = min(100, 5 % of all rows) = 50), the learned input variance started at 0.1, Adam 1e-3, 1000 epochs of batch
50. Each of their fits runs in a subprocess of this script (``--authors-unit``), because their code needs
TensorFlow 1's graph mode, which is process-wide and would break gpal's eager TensorFlow 2.

gpal's side "gpal as authors" is ``NoisyGPClassifier`` with the parameters `gpal workflow papers/001_uci_input_noise`
gives each method (its ``noisy_input`` block and the method's ``method_options``, which set every option gpal has as
the authors' code does) and the rows not scaled again (``standardize=False``: the authors' rows arrive scaled on their
clean rows, as their scripts scale them, where the workflow's data sets arrive raw), fitted on the same noisy training rows and scored on the same noisy test rows, so the sides
are paired by split. Two things differ from the workflow itself: it generates waveform's 1000 rows with gpal's own
generator and splits with gpal's seeds, where this study uses the authors' rows, splits and noise draws; and its
random inducing rows are gpal's draws, without replacement, not the authors' (with replacement). The side "gpal" is
the workflow's parameters with gpal's own choice of the two the workflow took from the authors last (`GPAL_OWN`:
GPflow's softplus, MGP's label flips over the other classes), the noisy rows scaled again to unit spread as the
workflow scales them, and the other sides change it one difference at a time.

Each fit is cached as a unit (``--units``), so a rerun resumes (``--first-split`` runs later splits in a second
process beside the first); ``--json`` writes the record (the commands: ``lab/studies/paper001_authors.yaml``)::

    PYTHONPATH=$PWD/lab/studies python lab/studies/bench_paper001_authors.py --splits 3 \\
        --sides 'authors,gpal,gpal unscaled' --json lab/studies/records/papers/paper001_authors_waveform.json

Each unit keeps where its kernel ended, and the authors' their test NLL every 100 epochs (from the file their fit
writes after each epoch; the probe record's gpal units hold gpal's too, read at their commit from the estimator's
internals, which the study no longer reaches into). ``--sides`` adds "gpal unscaled":
"gpal" with ``standardize=False``, gpal on the noisy inputs as the authors' scripts scale them, to isolate the
estimator's second standardisation; "gpal log", "gpal log2": the kernel's parameters stepped by Adam as logarithms,
the length scales as log l or, as the authors', log l^2 (gpal's kernel ``se_ard_plus_noise_median_log``), to isolate
how the parameters Adam steps move the fit over the paper's epochs; "gpal floor": MGP's label flips spread over all
classes as the authors' MGP spreads them.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
import types
from pathlib import Path
from typing import Any, Sequence

import numpy as np

STUDIES = Path(__file__).resolve().parent
ROOT = STUDIES.parents[1]

COMMIT = "0e9268a"
FETCH = ("git clone --no-checkout https://github.com/cvillacampa/GPInputNoise lab/authors/GPInputNoise && "
         f"git -C lab/authors/GPInputNoise checkout {COMMIT} -- gp_input_noise experiments/uci/waveform "
         "experiments/uci/wine")
#: gpal's method name -> the authors' module and class (test_real.py line 5 of each method's folder).
METHODS = {"MGP": ("gp_input_noise.mgpc", "MGPC"), "NIMGP": ("gp_input_noise.nimgpc_learn_noise", "NIMGPC"),
           "NIMGP-FO": ("gp_input_noise.nimgpc_fo_learn_noise", "NIMGPC_FO"),
           "NIMGP-NN": ("gp_input_noise.nimgpc_nn_learn_noise", "NIMGPC_NN")}
#: The same with the input variance given (``--variance known``): the classes their synthetic scripts run
#: (experiments/synthetic/noise_*/<method>/test_toy.py line 5), which take the variance as an input of fit and
#: predict; MGP has none.
METHODS_KNOWN = {**METHODS, "NIMGP": ("gp_input_noise.nimgpc", "NIMGPC"),
                 "NIMGP-FO": ("gp_input_noise.nimgpc_fo", "NIMGPC_FO"),
                 "NIMGP-NN": ("gp_input_noise.nimgpc_nn", "NIMGPC_NN")}
#: How the input variance reaches the methods on gpal's synthetic problems: the synthetic workflow's modes.
VARIANCES = ("learned", "known")
#: "gpal unscaled": the workflow's parameters but standardize=False, so that gpal learns on the inputs as the
#: authors' scripts give them (spread sqrt(1 + level)), not scaled again to unit spread.
#: "gpal log" and "gpal log2": the workflow's parameters with the kernel's variances and length scales stepped by Adam
#: as logarithms, not through GPflow's softplus, so that a step of 1e-3 moves them by a share of their value, not
#: by an absolute amount: the variances as log sigma^2 both, the length scales as log l ("gpal log") or as the
#: authors' log l^2 (rbf_ard.py 19-21, 37-38, 44; "gpal log2", half the relative step of "gpal log").
#: "gpal floor": the "gpal" side with MGP's label flips spread over all classes, as the authors' MGP spreads them
#: (mgpc.py 164, 174; their other methods spread them over the others, as gpal's do): the other methods' fits are
#: the "gpal" side's, so the side runs MGP only.  "gpal as authors": the workflow as shipped, every option gpal has for
#: a difference from the authors' code set as theirs (that floor, their kernel: log l^2 and log sigma^2 stepped, their
#: jitter under the noise term), on the inputs as their scripts give them (``standardize=False``: the rows here are
#: theirs, scaled on the clean rows before the noise, where the workflow's data sets arrive in their own units).
#: "gpal as authors without floor": that side with MGP's label flips spread over the other classes, as eq. 2
#: and the authors' other methods spread them, to measure the floor with their kernel (MGP only).
SIDES = ("authors", "gpal", "gpal unscaled", "gpal log", "gpal log2", "gpal floor", "gpal as authors",
         "gpal as authors without floor")
#: The "gpal" side: the workflow's parameters with gpal's own choice for the two differences the workflow has since
#: taken the authors' for (the kernel stepped through GPflow's softplus, MGP's flips over the others), and the noisy
#: rows scaled again as the workflow scales them: its defaults when the records' "gpal" units were made, which the
#: other sides change one by one.
GPAL_OWN = {"kernel": "se_ard_plus_noise_median", "standardize": True}
#: The sides that differ from "gpal" for MGP only.
MGP_ONLY_SIDES = ("gpal floor", "gpal as authors without floor")
#: Each logarithmic side's kernel: "gpal log2" is gpal's kernel option for the authors' parameterisation, "gpal log"
#: the same with the length scales stepped as log l (`_register_log_l_kernel`).
LOG_KERNEL = {"gpal log": None, "gpal log2": "se_ard_plus_noise_median_log"}
#: The name the "gpal log" side registers its kernel under.
LOG_L_KERNEL = "paper001-authors-study:log-l"
#: The injected input-noise variances of generate_data.py (its noise01, noise25, noise5, drawn in this order).
LEVELS = (0.1, 0.25, 0.5)
WORKFLOW = "papers/001_uci_input_noise"


#: The UCI sets whose authors' rows the study reads (each ``experiments/uci/<name>/data``), and gpal's synthetic problems.
DATASETS = ("waveform", "wine", "synthetic")
#: The shipped workflow whose problems ``synthetic`` reads (its seed and data block; split k is its repetition k).
SYNTHETIC_WORKFLOW = "papers/001_synthetic_2d"
#: The authors' training per kind of data set: Adam's step, epochs, batch, and the inducing rows a class from the
#: number of rows. The UCI scripts' (test_real.py 50-58); the synthetic scripts' (test_toy.py 33, 40) with the
#: epochs of gpal's record of that workflow (100 of the paper's 750: `--set training.epochs=100`), which the study
#: pairs with, and the learned input variance started at 0.1, as the UCI scripts start it (their synthetic scripts
#: give the variance).
TRAINING = {"uci": {"learning_rate": 0.001, "epochs": 1000, "batch": 50, "inducing": lambda n: min(100, int(n * 0.05))},
            "synthetic": {"learning_rate": 0.01, "epochs": 100, "batch": 200, "inducing": lambda n: 100}}


def training(dataset: str, epochs: int | None = None) -> dict[str, Any]:
    """The authors' training for ``dataset``, with ``epochs`` in place of its own when given (``--epochs``)."""
    settings = TRAINING["synthetic" if dataset == "synthetic" else "uci"]
    return settings if epochs is None else {**settings, "epochs": epochs}


def data_folder(dataset: str) -> Path:
    return Path("experiments/uci") / dataset / "data"


def present(folder: Path, dataset: str) -> bool:
    return (folder / "gp_input_noise" / "mgpc.py").is_file() and (
        dataset == "synthetic" or (folder / data_folder(dataset) / "X.txt").is_file())


def shipped_config(name: str, overrides: Sequence[str] = ()) -> dict[str, Any]:
    """The shipped workflow ``name``'s settings, its defaults filled (``overrides`` as ``--set`` takes them)."""
    from gpal.workflows import load_workflow
    from gpal.workflows.shipped import shipped_dir

    return load_workflow(shipped_dir() / f"{name}.yaml", list(overrides)).config


def synthetic_split(fold: int, level: float):
    """gpal's problem ``fold`` of the synthetic workflow at injected noise ``level``: its noisy training and test
    inputs and labels, as the workflow's record fits and scores them."""
    from gpal.workflows.synthetic import repetition_problem

    config = shipped_config(SYNTHETIC_WORKFLOW)
    problem = repetition_problem(config["data"], config["seed"], fold, level)
    train, test = problem.train, problem.test
    return (np.asarray(train.X), np.asarray(train.y), np.asarray(test.X), np.asarray(test.y),
            len(train.y) + len(test.y))


def noisy_split(folder: Path, fold: int, level: float, dataset: str):
    """The authors' training and test rows of split ``fold``, standardised on the training rows, noise added
    (``generate_data.py`` then test_real.py lines 8-34); gpal's synthetic problems are `synthetic_split`'s."""
    X = np.loadtxt(folder / data_folder(dataset) / "X.txt")
    Y = np.loadtxt(folder / data_folder(dataset) / "Y.txt").astype(int)
    rng = np.random.RandomState(0)  # generate_data.py's np.random.seed(0), its draws in its order
    splits = np.stack([rng.permutation(X.shape[0]) for _ in range(100)])
    noise = {variance: rng.normal(size=(100, *X.shape)) * np.sqrt(variance) for variance in LEVELS}
    eps = noise[level][fold]
    indices = splits[fold]
    n_train = int(len(indices) * 0.9)
    train, test = indices[:n_train], indices[n_train:]
    mean, std = X[train].mean(0), X[train].std(0)
    return ((X[train] - mean) / std + eps[train], Y[train], (X[test] - mean) / std + eps[test], Y[test], len(X))


def tensorflow1_shim() -> None:
    """Make ``import tensorflow as tf`` in the authors' modules give TensorFlow 1's API, without editing their files."""
    import tensorflow.compat.v1 as tf1

    tf1.disable_v2_behavior()  # graph mode, sessions and placeholders, as TensorFlow 1 ran them
    # tf.contrib was removed in TensorFlow 2; their likelihoods use only contrib.distributions.Normal (the standard
    # normal's cdf, e.g. mgpc.py 153), which compat.v1 still has as tf.distributions.Normal.
    tf1.contrib = types.SimpleNamespace(distributions=types.SimpleNamespace(Normal=tf1.distributions.Normal))
    sys.modules["tensorflow"] = tf1


def fit_authors(folder: Path, method: str, fold: int, level: float, work: Path, dataset: str, epochs: int,
                variance: str = "learned") -> dict[str, Any]:
    """One of their fits as test_real.py runs it; in its own process (TensorFlow 1 graph mode)."""
    import importlib

    from shared import authors_code

    tensorflow1_shim()
    authors_code(folder)
    import tensorflow as tf

    known = variance == "known" and method != "MGP"
    module, name = (METHODS_KNOWN if known else METHODS)[method]
    model_class = getattr(importlib.import_module(module), name)
    # Written for Python 2: NIMGP's fit asks predict for batches of ``test_targets.shape[0] / 10`` rows
    # (nimgpc_learn_noise.py 306, nimgpc.py 286), a float under Python 3, which its np.arange indices cannot index
    # with; Python 2's integer division gave the whole number this restores. The batch is predict's last argument,
    # after the inputs and, with the variance known, their variances.
    predict = model_class.predict
    n_args = 3 if known else 2

    def whole_batches(self, *args):
        args = [*args, *[None] * (n_args - len(args))]
        return predict(self, *args[:-1], None if args[-1] is None else int(args[-1]))

    model_class.predict = whole_batches
    from gp_input_noise.rbf_ard import RBF_ARD

    if dataset == "synthetic":  # drawn by the parent process: gpal does not import under TensorFlow 1's API
        rows = np.load(work / f"{unit_name('authors', 'rows', level, fold, dataset)}.npz")
        X_train, y_train, X_test, y_test = (rows[k] for k in ("X_train", "y_train", "X_test", "y_test"))
        n_rows = len(y_train) + len(y_test)
    else:
        X_train, y_train, X_test, y_test, n_rows = noisy_split(folder, fold, level, dataset)
    y_train, y_test = y_train[:, None], y_test[:, None]
    np.random.seed(0)
    n_classes = int(np.max(y_train) + 1)  # their np.int64 fails MGPC's dtype argument under TensorFlow 2's compat.v1
    sample = X_train[np.random.choice(np.arange(X_train.shape[0]), size=1000), :]
    dist2 = (np.sum(sample**2, 1, keepdims=True) - 2.0 * sample @ sample.T + np.sum(sample**2, 1, keepdims=True).T)
    log_l = 0.5 * np.log(np.median(dist2[np.triu_indices(1000, 1)]))
    kernels = [RBF_ARD(log_l * np.ones(X_train.shape[1]).astype(np.float32), -20.0, 1.0) for _ in range(n_classes)]
    settings = training(dataset, epochs)
    Z = np.stack([X_train[np.random.choice(np.arange(X_train.shape[0]), size=settings["inducing"](n_rows)),
                          :].astype(np.float32) for _ in range(n_classes)])
    # NIMGP-NN's networks: two layers in their synthetic scripts (test_toy.py 36), one in their UCI scripts
    layers = {"n_layers": 2} if method == "NIMGP-NN" and dataset == "synthetic" else {}
    if method == "MGP":
        model = model_class(kernels, Z, n_classes, X_train.shape[0])
    elif known:
        model = model_class(kernels, Z, n_classes, X_train, **layers)
    else:
        model = model_class(kernels, Z, n_classes, X_train, 0.1, **layers)
    # the variance given, a value per input and row as their synthetic scripts pass it (test_toy.py 18-19)
    given_train, given_test = ((np.zeros_like(X_train) + level,), (np.zeros_like(X_test) + level,)) if known else ((), ())
    np.random.seed(0)
    start, cpu = time.perf_counter(), time.process_time()
    # their fit appends each epoch's test error and NLL to results/<name>, relative to the working directory
    (work / "results").mkdir(exist_ok=True)
    os.chdir(work)
    model.fit(X_train, y_train, *given_train, tf.train.AdamOptimizer(learning_rate=settings["learning_rate"]),
              settings["epochs"], settings["batch"], X_test, y_test, *given_test,
              f"{unit_name('authors', method, level, fold, dataset, variance)}_trace.txt")
    proba, labels = model.predict(X_test, *given_test)
    # their kernel's signal variance exp(log_sigma) and length scales sqrt(exp(log_lengthscales)) (rbf_ard.py 37-44)
    log_sigma, log_l2 = model.session.run([[k.log_sigma for k in kernels], [k.log_lengthscales for k in kernels]])
    return {"seconds": time.perf_counter() - start, "cpu_seconds": time.process_time() - cpu,
            "error": float(np.mean(labels != y_test[:, 0])),
            "nll": float(-np.mean(np.log(proba[np.arange(len(y_test)), y_test[:, 0]]))), "M": int(Z.shape[1]),
            "kernel": {"signal_variance": [float(np.exp(v[0])) for v in log_sigma],
                       "mean_lengthscale": [float(np.mean(np.exp(0.5 * v))) for v in log_l2]}}


def gpal_params(method: str, n_train: int, n_rows: int) -> dict[str, Any]:
    """The NoisyGPClassifier parameters the shipped workflow gives ``method`` (its noisy_input block with the
    method's own ``method_options``)."""
    from gpal.workflows.compare import method_spec

    config = shipped_config(WORKFLOW)
    return method_spec(method, n_train, 1, 1, 1, dict(config["noisy_input"]), None,
                       config["method_options"].get(method), n_rows)


def gpal_kernel(clf) -> dict[str, list[float]]:
    """Each class's signal variance and mean length scale (in the authors' input units: the estimator's scaling
    undone), as the authors' unit records theirs."""
    scale = 1.0 if clf.standardizer_ is None else clf.standardizer_.scale
    se = [k.kernels[0] if hasattr(k, "kernels") else k for k in clf.model_.gp.kernels]
    return {"signal_variance": [float(k.variance.numpy()) for k in se],
            "mean_lengthscale": [float(np.mean(k.lengthscales.numpy() * scale)) for k in se]}


def _register_log_l_kernel() -> str:
    """gpal's ``se_ard_plus_noise_median_log`` (the authors' log l^2, log sigma^2) with its length scales stepped as
    log l instead, twice the authors' relative step: registered under a name of the study's through gpal's public
    kernel registry, so that the estimator builds it from its own scaled rows."""
    import gpflow
    import tensorflow_probability as tfp

    from gpal.models.kernels import make_kernel, starts_from_rows
    from gpal.registry import KERNELS

    @starts_from_rows
    def factory(X, seed: int = 0):
        kernel = make_kernel(LOG_KERNEL["gpal log2"], X.shape[1], X, seed)
        se = kernel.kernels[0]
        se.lengthscales = gpflow.Parameter(se.lengthscales.numpy(), transform=tfp.bijectors.Exp())
        return kernel

    KERNELS.register(LOG_L_KERNEL, factory, replace=True)
    return LOG_L_KERNEL


def side_params(side: str, method: str, shipped: dict[str, Any]) -> dict[str, Any]:
    """The parameters of gpal's ``side`` (`SIDES`) for ``method``, from those the shipped workflow gives it."""
    if side == "gpal as authors":
        return {**shipped, "standardize": False}
    if side == "gpal as authors without floor":
        return {**shipped, "standardize": False, "likelihood_options": {
            k: v for k, v in shipped["likelihood_options"].items() if k != "flip_spread"}}
    params = {**shipped, **GPAL_OWN, "likelihood_options": {
        k: v for k, v in shipped["likelihood_options"].items() if k != "flip_spread"}}
    if side == "gpal unscaled":
        params["standardize"] = False
    if side in LOG_KERNEL:
        params["kernel"] = LOG_KERNEL[side] or _register_log_l_kernel()
    if side == "gpal floor" and method == "MGP":
        params["likelihood_options"]["flip_spread"] = "all"
    return params


def fit_synthetic_gpal(method: str, fold: int, level: float, epochs: int, variance: str = "learned") -> dict[str, Any]:
    """gpal's fit of ``method`` (the input variance ``variance``: learned or known) on its synthetic problem ``fold``
    as the synthetic workflow fits it (its parameters and seed, its repetition's problem) but for the number of
    epochs."""
    from gpal import NoisyGPClassifier
    from gpal.evaluation.metrics import error_rate, negative_log_likelihood
    from gpal.runs.units import derived_seed
    from gpal.workflows.methods import classifier_params, method_training
    from gpal.workflows.synthetic import repetition_problem

    config = shipped_config(SYNTHETIC_WORKFLOW, [f"training.epochs={epochs}"])
    training = {**method_training(method, config["training"], config["method_options"]), "noise_variance": variance}
    params = classifier_params([method], training, config["data"]["n_train"])[method]
    problem = repetition_problem(config["data"], config["seed"], fold, level)
    clf = NoisyGPClassifier(**params, random_state=derived_seed(config["seed"], fold, 1))
    start, cpu = time.perf_counter(), time.process_time()
    clf.fit(problem.train)
    proba = clf.predict_proba(problem.test)
    return {"seconds": time.perf_counter() - start, "cpu_seconds": time.process_time() - cpu,
            "error": float(error_rate(problem.test.y, proba)),
            "nll": float(negative_log_likelihood(problem.test.y, proba)), "M": int(params["num_inducing"]),
            "params": {k: repr(v) for k, v in params.items()}}


def fit_gpal(folder: Path, method: str, fold: int, level: float, dataset: str, side: str = "gpal") -> dict[str, Any]:
    """gpal's fit of ``method`` on the authors' split with the parameters of ``side`` (`side_params`).  (The units of
    the probe record also kept gpal's test NLL every 100 epochs, read from the estimator's internals at the commit
    that made them; the study keeps to gpal's public API now and records none.)"""
    from gpal import NoisyGPClassifier
    from gpal.evaluation.metrics import error_rate, negative_log_likelihood

    X_train, y_train, X_test, y_test, n_rows = noisy_split(folder, fold, level, dataset)
    params = side_params(side, method, gpal_params(method, len(y_train), n_rows))
    clf = NoisyGPClassifier(**params, random_state=fold)
    start, cpu = time.perf_counter(), time.process_time()
    clf.fit(X_train, y_train)
    proba = clf.predict_proba(X_test)
    return {"seconds": time.perf_counter() - start, "cpu_seconds": time.process_time() - cpu,
            "error": float(error_rate(y_test, proba)), "nll": float(negative_log_likelihood(y_test, proba)),
            "M": int(params["num_inducing"]), "params": {k: repr(v) for k, v in params.items()},
            "kernel": gpal_kernel(clf)}


def run_unit(path: Path, make) -> dict[str, Any]:
    """One fit's scores, from its cached unit when an earlier run made it."""
    if path.is_file():
        return json.loads(path.read_text(encoding="utf-8"))
    unit = make()
    path.write_text(json.dumps(unit, indent=1), encoding="utf-8")
    return unit


def authors_path(trace: Path, epochs: int, every: int = 100) -> dict[str, Any]:
    """Test error and NLL every ``every`` epochs and at the last from the file their fit appends after each of its
    ``epochs`` (its columns: test error, test NLL, mean expected log-likelihood, seconds; ``mgpc.py`` 243-257), and the
    epoch of the lowest test NLL: where their run's NLL was on its way."""
    table = np.loadtxt(trace, ndmin=2)
    if len(table) != epochs:  # NIMGP's and NIMGP-NN's fits write once, after the last epoch (nimgpc_learn_noise.py 306)
        return {"note": f"their fit wrote {len(table)} line(s), not one an epoch"}
    rows = sorted({*range(every - 1, epochs, every), epochs - 1})
    lowest = int(np.argmin(table[:, 1]))
    return {"epoch": [r + 1 for r in rows], "error": table[rows, 0].tolist(), "nll": table[rows, 1].tolist(),
            "lowest_nll": {"epoch": lowest + 1, "nll": float(table[lowest, 1])}}


def unit_name(side: str, method: str, level: float, fold: int, dataset: str, variance: str = "learned") -> str:
    # waveform's units carry no set name: they were cached before the study read a second set; nor does a learned
    # variance, which every unit had before the study ran the variance known
    prefix = ("" if dataset == "waveform" else f"{dataset}_") + ("known_" if variance == "known" else "")
    return f"{prefix}{side.replace(' ', '_')}_{method}_{level:g}_s{fold}"


def authors_subprocess(folder: Path, method: str, fold: int, level: float, units: Path, dataset: str, epochs: int,
                       variance: str) -> dict[str, Any]:
    out = units / f"{unit_name('authors', method, level, fold, dataset, variance)}.out.json"
    log = units / f"{unit_name('authors', method, level, fold, dataset, variance)}.log"
    rows = units / f"{unit_name('authors', 'rows', level, fold, dataset)}.npz"
    if dataset == "synthetic" and not rows.is_file():  # one problem's rows serve each of its methods' fits
        X_train, y_train, X_test, y_test, _ = synthetic_split(fold, level)
        np.savez(rows, X_train=X_train, y_train=y_train, X_test=X_test, y_test=y_test)
    with log.open("w", encoding="utf-8") as stream:  # their fit prints every epoch's bound
        subprocess.run([sys.executable, __file__, "--authors-unit", method, str(fold), f"{level:g}", str(out),
                        "--authors", str(folder), "--dataset", dataset,
                        *(["--epochs", str(epochs), "--variance", variance] if dataset == "synthetic" else [])],
                       check=True, stdout=stream,
                       stderr=subprocess.STDOUT)
    return json.loads(out.read_text(encoding="utf-8"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--authors", default=str(ROOT / "lab" / "authors" / "GPInputNoise"),
                        help=f"GPInputNoise's checkout ({COMMIT})")
    parser.add_argument("--splits", type=int, default=1, help="the authors' splits 0 .. N-1")
    parser.add_argument("--first-split", type=int, default=0,
                        help="start at this split (to run some splits of a record in another process beside it)")
    parser.add_argument("--dataset", default="waveform", choices=DATASETS, help="whose authors' rows to read")
    parser.add_argument("--level", type=float, default=0.25, choices=LEVELS,
                        help="the injected input-noise variance (one of the authors' noise files)")
    parser.add_argument("--methods", default="MGP,NIMGP,NIMGP-FO", help=f"some of {list(METHODS)}, comma-separated")
    parser.add_argument("--sides", default="authors,gpal", help=f"some of {list(SIDES)}, comma-separated")
    parser.add_argument("--units", default=str(ROOT / "runs" / "paper001_authors"), help="one cached JSON per fit")
    parser.add_argument("--epochs", type=int, help="synthetic only: the epochs of both sides (default: the record's "
                        f"{TRAINING['synthetic']['epochs']}); give another --units folder")
    parser.add_argument("--variance", default="learned", choices=VARIANCES,
                        help="synthetic only: the input variance learned by the methods (from 0.1) or given them")
    parser.add_argument("--json", help="write the record here")
    parser.add_argument("--cached-only", action="store_true",
                        help="fit nothing: record the units already made, naming the others as not run")
    parser.add_argument("--authors-unit", nargs=4, metavar=("METHOD", "SPLIT", "LEVEL", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    folder = Path(args.authors)
    level, dataset = args.level, args.dataset
    if args.epochs is not None:
        if dataset != "synthetic" or args.epochs < 1:
            parser.error("--epochs is a positive number of epochs for --dataset synthetic (the UCI scripts' 1000 "
                         "are what their records compare)")
    if args.variance != "learned" and dataset != "synthetic":
        parser.error("--variance known is for --dataset synthetic (the UCI scripts learn the variance)")
    variance = args.variance
    settings = training(dataset, args.epochs)
    if args.authors_unit:
        method, fold, level, out = args.authors_unit
        Path(out).write_text(json.dumps(fit_authors(folder, method, int(fold), float(level), Path(out).parent,
                                                    dataset, settings["epochs"], variance)), encoding="utf-8")
        return 0
    if not present(folder, dataset):
        print(f"skipped: GPInputNoise is not at {folder}. It is paper 001's authors' code, fetched once by hand "
              f"(git-ignored, never shipped):\n    {FETCH}")
        return 0
    from shared import chosen, code_commit

    methods = chosen(parser, "--methods", args.methods, METHODS)
    if args.json and args.first_split:
        parser.error("--json records splits 0 .. N-1: leave out --first-split (the splits another process ran are "
                     "read from their units)")
    sides = chosen(parser, "--sides", args.sides, SIDES)
    if dataset == "synthetic" and not set(sides) <= {"authors", "gpal as authors"}:
        parser.error("--dataset synthetic runs the sides 'authors' and 'gpal as authors' (the synthetic workflow's "
                     f"fit, {SYNTHETIC_WORKFLOW})")
    commit = code_commit()  # at the start: the code that ran
    units_dir = Path(args.units).resolve()  # their fit changes the working directory
    units_dir.mkdir(parents=True, exist_ok=True)
    units, not_run = [], []
    folds = range(args.first_split, args.splits)
    for fold in folds:
        for method in methods:
            for side in sides:
                if side in MGP_ONLY_SIDES and method != "MGP":
                    continue

                def make(side=side, method=method, fold=fold):
                    fit = (authors_subprocess(folder, method, fold, level, units_dir, dataset, settings["epochs"], variance)
                           if side == "authors"
                           else fit_synthetic_gpal(method, fold, level, settings["epochs"], variance)
                           if dataset == "synthetic" else fit_gpal(folder, method, fold, level, dataset, side))
                    return {"dataset": dataset, "level": level, "split": fold, "method": method, "side": side, **fit}

                name = unit_name(side, method, level, fold, dataset, variance)
                if args.cached_only and not (units_dir / f"{name}.json").is_file():
                    not_run.append({"split": fold, "method": method, "side": side})
                    print(f"not run: {name}", flush=True)
                    continue
                unit = run_unit(units_dir / f"{name}.json", make)
                if side == "authors" and "path" not in unit:
                    unit["path"] = authors_path(units_dir / "results" / f"{name}_trace.txt", settings["epochs"])
                units.append(unit)
                print(json.dumps({k: unit[k] for k in ("level", "split", "method", "side", "error", "nll", "seconds")}),
                      flush=True)
    print("\n| method | split | " + " | ".join(f"{side}: error, NLL" for side in sides) + " |\n|---|---|"
          + "---|" * len(sides))
    for fold in folds:
        for method in methods:
            mine = {u["side"]: u for u in units if u["method"] == method and u["split"] == fold}
            print(f"| {method} | {fold} | " + " | ".join(f"{mine[side]['error']:.3f}, {mine[side]['nll']:.3f}"
                                                         if side in mine else "–" for side in sides) + " |")
    if args.json:
        from gpal.files import write_json_atomic

        write_json_atomic(Path(args.json), {
            "workflow": "lab/studies/paper001_authors.yaml",
            "commit": commit,
            "authors_code": {"repository": "github.com/cvillacampa/GPInputNoise", "commit": COMMIT},
            "settings": {"dataset": (f"gpal's problems of {SYNTHETIC_WORKFLOW} (split k: its repetition k)"
                                     if dataset == "synthetic" else f"{dataset} (the authors' X.txt, "
                                     f"{len(np.loadtxt(folder / data_folder(dataset) / 'Y.txt'))} rows)"),
                         "injected_noise": level, **({"variance": variance} if dataset == "synthetic" else {}),
                         "splits": args.splits, "methods": methods, "sides": sides,
                         "epochs": settings["epochs"], "batch_size": settings["batch"],
                         "learning_rate": settings["learning_rate"],
                         "gpal_workflow": SYNTHETIC_WORKFLOW if dataset == "synthetic" else WORKFLOW},
            "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "load": list(os.getloadavg())},
            "units": units,
            **({"not_run": not_run} if not_run else {}),
        })
        print(f"recorded {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python
"""Paper 000, sec. IV-A1 and Fig. 2: "the variational inference framework pushes the optimized inducing points towards
the decision boundaries" -- where gpal's GPCs leave learned inducing inputs on the paper's two 2-D toy problems.

Data: banana (KEEL's copy of the set the paper takes from its ref. [27]), all 5 300 rows; three classes from three
latent functions drawn from a GP prior with y = argmax_c f_c(x) (gpal's ``synthetic_2d`` recipe without input noise:
SE kernel, variance 0.5, length scale sqrt(2), x uniform on [-2.5, 2.5]^2; the paper states no kernel or size),
5 000 rows (banana's size), a new draw per seed. As the paper: M = 32 learned inducing inputs (k-means start), a Matern 3/2 kernel
(ARD here), 5 000 Adam steps (minibatches of 100 here, the paper states none; learning rate 0.01, the paper's UCI
rate). Inputs standardised.

The rule, fixed before the run: the decision boundary is the fitted model's own (where the predicted class changes on
a ``GRID`` x ``GRID`` grid over the training rows' box, the curves Fig. 2 draws); per fit, the median Euclidean
distance to it of the learned inducing inputs (all latent functions' pooled) minus (a) that of the same inputs at
their k-means start and (b) that of as many training rows drawn at random. Over the seeds, each difference's mean
with its 95 % Student-t interval: the claim holds for a data set and likelihood where both intervals lie below 0,
is contradicted where one lies above 0, and is not resolved otherwise.

    PYTHONPATH=$PWD nice -n 10 python lab/studies/bench_paper000_inducing.py --seeds 5 \
        --json lab/studies/records/papers/paper000_inducing.json --figure docs/figures/paper000_inducing.png
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
from typing import Any

import numpy as np
from scipy import spatial

from gpal.files import write_json_atomic
from shared import committed_source, paired_t

#: The GPCs per problem: the binary set has no softmax GPC in the paper.
PROBLEMS = {"banana": ("step", "probit", "logit"), "gp_prior_3class": ("step", "probit", "logit", "softmax")}
NUM_INDUCING = 32
STEPS = 5000
BATCH_SIZE = 100
LEARNING_RATE = 0.01
#: Grid cells per axis on which the fitted decision boundary is located.
GRID = 200


def boundary_points(labels: np.ndarray, xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """Midpoints between horizontally or vertically adjacent grid nodes of different label, (k, 2).

    ``labels[i, j]`` is the class at (xs[i], ys[j]); a boundary is then located to within half a grid step.
    """
    labels = np.asarray(labels)
    if labels.shape != (xs.size, ys.size):
        raise ValueError(f"labels must have shape (len(xs), len(ys)) = {(xs.size, ys.size)}; got {labels.shape}")
    gx, gy = np.meshgrid(xs, ys, indexing="ij")
    across_x = labels[1:, :] != labels[:-1, :]
    across_y = labels[:, 1:] != labels[:, :-1]
    mid_x = np.stack([(gx[1:, :] + gx[:-1, :])[across_x] / 2, gy[1:, :][across_x]], axis=1)
    mid_y = np.stack([gx[:, 1:][across_y], (gy[:, 1:] + gy[:, :-1])[across_y] / 2], axis=1)
    return np.concatenate([mid_x, mid_y])


def median_distance(points: np.ndarray, boundary: np.ndarray) -> float:
    """Median over ``points`` (n, 2) of the Euclidean distance to the nearest of ``boundary`` (k, 2)."""
    if len(boundary) == 0:
        raise ValueError("no decision boundary on the grid: every grid node has the same predicted class")
    return float(np.median(spatial.cKDTree(boundary).query(points)[0]))


def verdict(intervals: list[tuple[float, float, float]]) -> str:
    """Holds where every (mean, low, high) interval of learned minus reference lies below 0."""
    if any(low > 0 for _, low, _ in intervals):
        return "contradicted"
    if all(high < 0 for _, _, high in intervals):
        return "holds"
    return "not resolved"


def problem(name: str, seed: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Standardised inputs, labels and class count of one toy problem."""
    from gpal.data import load_dataset
    from gpal.data.standardizer import Standardizer
    from gpal.data.synthetic import synthetic_2d

    if name == "banana":
        ds = load_dataset("banana", seed=seed)
    elif name == "gp_prior_3class":
        ds = synthetic_2d(n_train=5000, n_test=1, noise_variance=0.0, seed=seed).train
    else:
        raise ValueError(f"problem must be one of {sorted(PROBLEMS)}; got {name!r}")
    return Standardizer.fit(ds.X).transform_arrays(ds.X)[0], ds.y, ds.n_classes


def fit(X: np.ndarray, y: np.ndarray, n_classes: int, likelihood: str, seed: int) -> dict[str, Any]:
    """One GPC with learned inducing inputs; its start and end inducing inputs and predicted labels on the grid."""
    import gpflow
    import tensorflow as tf

    from gpal.models.svgp import build_model
    from gpal.training.svi import TrainData, Trainer

    model = build_model(X, y, num_classes=n_classes, input_noise="none", likelihood=likelihood,
                        likelihood_options={"elbo": "bound"} if likelihood == "softmax" else {},
                        kernel=gpflow.kernels.Matern32(lengthscales=np.ones(X.shape[1])),
                        num_inducing=NUM_INDUCING, seed=seed)
    start = model.gp.Z.numpy().copy()
    epochs = -(-STEPS // -(-len(y) // BATCH_SIZE))  # whole epochs of at least STEPS steps in all
    Trainer(model, seed=seed).fit(TrainData.from_arrays(X, np.zeros_like(X), y), epochs=epochs, batch_size=BATCH_SIZE,
                                  learning_rate=LEARNING_RATE, progress=False)
    xs = np.linspace(X[:, 0].min(), X[:, 0].max(), GRID)
    ys = np.linspace(X[:, 1].min(), X[:, 1].max(), GRID)
    nodes = np.stack(np.meshgrid(xs, ys, indexing="ij"), axis=-1).reshape(-1, 2)
    proba = model.predict_proba(tf.constant(nodes), tf.zeros_like(tf.constant(nodes)), tf.constant([seed, 7], tf.int64))
    labels = proba.numpy().argmax(axis=1).reshape(GRID, GRID)
    return {"start": start.reshape(-1, 2), "end": model.gp.Z.numpy().reshape(-1, 2), "labels": labels,
            "xs": xs, "ys": ys, "accuracy": float(np.mean(
                model.predict_proba(tf.constant(X), tf.zeros_like(tf.constant(X)),
                                    tf.constant([seed, 8], tf.int64)).numpy().argmax(1) == y))}


def measure(X: np.ndarray, result: dict[str, Any], seed: int) -> dict[str, float]:
    """The rule's three medians for one fit: learned, k-means start, random training rows (as many)."""
    boundary = boundary_points(result["labels"], result["xs"], result["ys"])
    rows = np.random.default_rng([seed, 1]).choice(len(X), size=len(result["end"]), replace=False)
    return {"learned": median_distance(result["end"], boundary), "start": median_distance(result["start"], boundary),
            "random": median_distance(X[rows], boundary), "training_accuracy": result["accuracy"]}


def figure(panels: list[tuple[str, str, np.ndarray, np.ndarray, dict[str, Any]]], path: str) -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(4.6 * len(panels), 4.2), layout="constrained")
    FigureCanvasAgg(fig)
    for ax, (name, lik, X, y, r) in zip(fig.subplots(1, len(panels), squeeze=False)[0], panels):
        ax.scatter(X[:, 0], X[:, 1], c=y, s=2, cmap="tab10", vmin=0, vmax=9, alpha=0.4, rasterized=True)
        ax.contour(r["xs"], r["ys"], r["labels"].T, levels=np.arange(r["labels"].max()) + 0.5, colors="k",
                   linewidths=1)
        ax.scatter(*r["start"].T, marker="x", s=18, c="grey", label="k-means start")
        ax.scatter(*r["end"].T, marker="o", s=22, facecolors="none", edgecolors="k", label="learned")
        ax.set(title=f"{name}, {lik}, M = {NUM_INDUCING} (seed 0)", xlabel="x1 (standardised)",
               ylabel="x2 (standardised)")
        ax.legend(loc="lower right", fontsize=8)
    fig.savefig(path, dpi=110)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", type=int, default=5, help="seeds 0 .. N-1 (default 5)")
    p.add_argument("--json", help="write settings, per-fit medians and the intervals here")
    p.add_argument("--figure", help="write seed 0's banana (probit) and three-class (softmax) fits here")
    args = p.parse_args(argv)
    if args.seeds < 2:
        p.error(f"--seeds must be >= 2 for an interval; got {args.seeds}")
    commit = committed_source() if args.json else "not recorded"
    fits, summary, panels = [], [], []
    lines = ["| problem | likelihood | seeds | median distance: learned, k-means start, random rows "
             "| learned - start | learned - random | rule |", "|---|---|---:|---|---|---|---|"]
    for name, likelihoods in PROBLEMS.items():
        per = {lik: [] for lik in likelihoods}
        for seed in range(args.seeds):
            X, y, C = problem(name, seed)
            for lik in likelihoods:
                r = fit(X, y, C, lik, seed)
                per[lik].append({"seed": seed, **measure(X, r, seed)})
                print(f"{name} {lik} seed {seed}: {per[lik][-1]}", file=sys.stderr, flush=True)
                if seed == 0 and (name, lik) in (("banana", "probit"), ("gp_prior_3class", "softmax")):
                    panels.append((name, lik, X, y, r))
        for lik, rows in per.items():
            learned = np.array([r["learned"] for r in rows])
            vs = {ref: paired_t(learned - np.array([r[ref] for r in rows])) for ref in ("start", "random")}
            vs = {ref: (mean, low, high) for ref, (mean, _, low, high) in vs.items()}
            summary.append({"problem": name, "likelihood": lik, "seeds": len(rows), "verdict": verdict(list(vs.values())),
                            "median": {k: float(np.mean([r[k] for r in rows])) for k in ("learned", "start", "random")},
                            "learned_minus": vs})
            s = summary[-1]
            lines.append(f"| {name} | {lik} | {len(rows)} | " + ", ".join(f"{v:.3f}" for v in s["median"].values())
                         + " | " + " | ".join(f"{m:+.3f} [{lo:+.3f}, {hi:+.3f}]" for m, lo, hi in vs.values())
                         + f" | {s['verdict']} |")
            fits += [{"problem": name, "likelihood": lik, **r} for r in rows]
    sys.stdout.write("\n".join(lines) + "\n")
    if args.json:
        write_json_atomic(args.json, {
            "commit": commit, "settings": {"seeds": args.seeds, "num_inducing": NUM_INDUCING, "steps": STEPS,
                                           "batch_size": BATCH_SIZE, "learning_rate": LEARNING_RATE, "grid": GRID, "kernel": "Matern32 ARD"},
            "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "load": os.getloadavg()},
            "summary": summary, "fits": fits})
    if args.figure:
        figure(panels, args.figure)
    return 0


if __name__ == "__main__":
    sys.exit(main())

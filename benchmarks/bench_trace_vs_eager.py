#!/usr/bin/env python
"""What a small fit pays to trace its training step, against running the same step eagerly.

For each input-noise strategy, on a small problem (n = 60, d = 2, C = 3, M = 10, batch 50:
the size of most tests and of an active-learning refit), times a ``Trainer``'s first fit of
one epoch (its trace and two steps), a compiled step once traced, and the same step's Python
function run eagerly.  The crossover (steps below which eager pays) is the first fit's time
over the eager step's excess.

    PYTHONPATH=$PWD python benchmarks/bench_trace_vs_eager.py
"""

from __future__ import annotations

import time

import numpy as np
import tensorflow as tf

from gpal.models.svgp import build_model
from gpal.training.svi import TrainData, Trainer


def main() -> None:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    X_var = np.full_like(X, 0.05)
    y = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0)
    data = TrainData.from_arrays(X, X_var, y)
    idx = tf.constant(np.arange(50), tf.int64)
    for strategy in ("none", "latent", "first_order", "amortized"):
        model = build_model(X, y, num_classes=3, input_noise=strategy, num_inducing=10, X_var=X_var, seed=0)
        trainer = Trainer(model)
        start = time.perf_counter()
        trainer.fit(data, epochs=1, batch_size=50, learning_rate=0.01, progress=False)
        first = time.perf_counter() - start
        start = time.perf_counter()
        steps = trainer.fit(data, epochs=20, batch_size=50, learning_rate=0.01, progress=False).steps
        compiled = (time.perf_counter() - start) / steps
        eager = trainer.step.python_function
        eager(idx, tf.constant(0, tf.int64))
        start = time.perf_counter()
        for i in range(5):
            eager(idx, tf.constant(i, tf.int64))
        eager_step = (time.perf_counter() - start) / 5
        print(f"{strategy:12s} first fit (trace + 2 steps) {first:6.2f} s   compiled step {compiled * 1e3:6.1f} ms   "
              f"eager step {eager_step * 1e3:7.1f} ms   eager pays below {first / (eager_step - compiled):4.1f} steps")


if __name__ == "__main__":
    main()

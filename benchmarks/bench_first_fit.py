#!/usr/bin/env python
"""What each estimator family's first fit in a fresh process pays, and how much of it is tracing.

A user's script fits once: its first fit traces every compiled function the estimator uses.  For
each family, in a process of its own (so that no trace or converted function is cached from
another), fits a small problem (60 rows, 2 features; 2 classes for the binary L-BFGS family, 3 for
the others) and reports the fit's wall seconds, the outermost traces it made and their seconds (a
wrapper on TensorFlow's ``func_graph_from_py_func``), the functions AutoGraph converted, and a hash of
the probabilities on the training rows, so that two versions of gpal can be compared bit for bit.

    PYTHONPATH=$PWD python benchmarks/bench_first_fit.py
    PYTHONPATH=/path/to/older/checkout python benchmarks/bench_first_fit.py   # the same script, older gpal
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import time

FAMILIES = {
    "logistic_bound": ("LogisticBoundGPClassifier", {"num_inducing": 5}, 2),
    "logistic_softmax": ("LogisticSoftmaxGPClassifier", {"num_inducing": 5}, 3),
    "noisy_gp": ("NoisyGPClassifier", {"num_inducing": 5, "epochs": 3}, 3),
    "dirichlet": ("DirichletGPClassifier", {"num_inducing": 5}, 3),
}


def one_fit(family: str) -> dict:
    """The first fit of ``family`` in this process, timed."""
    import numpy as np
    from tensorflow.python.autograph.impl import api as autograph_api
    from tensorflow.python.framework import func_graph

    import gpal

    traces, depth, converted = [], [0], [0]
    trace = func_graph.func_graph_from_py_func

    def timed_trace(*args, **kwargs):
        depth[0] += 1
        start = time.perf_counter()
        try:
            return trace(*args, **kwargs)
        finally:
            depth[0] -= 1
            if depth[0] == 0:
                traces.append(time.perf_counter() - start)

    convert = autograph_api.converted_call

    def counted_conversion(*args, **kwargs):
        converted[0] += 1
        return convert(*args, **kwargs)

    func_graph.func_graph_from_py_func = timed_trace
    autograph_api.converted_call = counted_conversion
    name, options, classes = FAMILIES[family]
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    y = (X[:, 0] > 0).astype(int) + (classes == 3) * (X[:, 1] > 0.5)
    estimator = getattr(gpal, name)(**options)
    start = time.perf_counter()
    estimator.fit(X, y)
    seconds = time.perf_counter() - start
    proba = np.ascontiguousarray(estimator.predict_proba(X))
    return {"family": family, "fit_s": round(seconds, 2), "traces": len(traces), "trace_s": round(sum(traces), 2),
            "autograph_conversions": converted[0], "proba_sha256": hashlib.sha256(proba.tobytes()).hexdigest()[:16]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--one", choices=sorted(FAMILIES), help=argparse.SUPPRESS)  # the child process's family
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one_fit(args.one)))
        return
    print("| family | first fit s | traces | tracing s | AutoGraph conversions | probabilities (sha256) |")
    print("|---|---|---|---|---|---|")
    for family in FAMILIES:
        done = subprocess.run([sys.executable, __file__, "--one", family], capture_output=True, text=True, check=True)
        row = json.loads(done.stdout.strip().splitlines()[-1])
        print(f"| {family} | {row['fit_s']} | {row['traces']} | {row['trace_s']} | {row['autograph_conversions']} | "
              f"{row['proba_sha256']} |")


if __name__ == "__main__":
    main()

#!/usr/bin/env python
"""The Fermi repeated-splits workflow with every kernel starting at length scale 1 (GPflow's default)
instead of gpal's sqrt(d): the initialisation difference of the Table 9 account (docs/results.md).

Same data, splits, seeds and settings as ``gpal/workflows/files/fermi_4fgl.yaml``; only the kernel's
starting length scales differ, so its units pair with a run of the workflow split by split
(``lab/studies/table9_account.py``).

    .venv/bin/python lab/studies/fermi_unit_lengthscales.py runs/fermi_unit_lengthscales --methods MGP NIMGP
"""

from __future__ import annotations

import argparse
import sys

import gpflow
import numpy as np

from gpal.workflows import load_workflow
from gpal.workflows.shipped import resolve_workflow
from gpal.workflows.methods import classifier_params
from gpal.workflows.splits import dataset_and_training_size
from gpal.runs.repeated_splits import run_repeated_splits


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("out")
    p.add_argument("--methods", nargs="+", default=["MGP", "NIMGP"])
    p.add_argument("--splits", type=int, default=100)
    p.add_argument("--models-per-batch", type=int, default=50)
    args = p.parse_args(argv)
    config = load_workflow(resolve_workflow("fermi_4fgl"), overrides=[f"methods=[{','.join(args.methods)}]"]).config
    dataset, n_train = dataset_and_training_size(config)
    d = dataset.X.shape[1]
    methods = {name: {**params, "kernel": gpflow.kernels.SquaredExponential(lengthscales=np.ones(d))}
               for name, params in classifier_params(config["methods"], config["training"], n_train).items()}
    protocol = config["protocol"]
    summary = run_repeated_splits(dataset, methods, args.out, n_splits=args.splits, test_size=protocol["test_size"],
                                  seed=config["seed"], stratify=protocol["stratify"],
                                  use_variances=protocol["use_variances"], on_error=protocol["on_error"],
                                  models_per_batch=args.models_per_batch)
    for name, entry in summary["methods"].items():
        print(name, entry["n_splits"], entry.get("nll"), entry.get("error"))
    return 0


if __name__ == "__main__":
    sys.exit(main())

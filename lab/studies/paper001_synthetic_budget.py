"""Paper 001's 2-D problem 0 at the synthetic workflow's defaults (the authors' settings): how the test NLL moves with
the epochs, one fit per (method, epochs), to choose the budget of the workflow's record.

    python lab/studies/paper001_synthetic_budget.py learned 0.25 MGP,NIMGP-NN 300,750

The arguments: the noise mode, the injected variance, the methods and the epoch counts. Each fit is the one the
workflow would make for repetition 0 (its problem, parameters and seed) at those epochs and 100 prediction samples;
one JSON line a fit: its test NLL and error, wall and CPU seconds, kept in
``lab/studies/records/paper001_synthetic_budget.json``.
"""

from __future__ import annotations

import argparse
import json
import time

from gpal import NoisyGPClassifier
from gpal.evaluation.metrics import error_rate, negative_log_likelihood
from gpal.runs.units import derived_seed
from gpal.workflows import load_workflow
from gpal.workflows.methods import classifier_params, method_training
from gpal.workflows.shipped import resolve_workflow
from gpal.workflows.synthetic import repetition_problem
from shared import keep_printed  # the script's folder, first on its path

WORKFLOW = "papers/001_synthetic_2d"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("mode", choices=["known", "learned"])
    parser.add_argument("level", type=float)
    parser.add_argument("methods", type=lambda s: s.split(","))
    parser.add_argument("epochs", type=lambda s: [int(e) for e in s.split(",")])
    args = parser.parse_args(argv)
    with keep_printed("paper001_synthetic_budget", __file__, argv):  # the study's yaml and claims cite its NLLs
        _fits(args)


def _fits(args: argparse.Namespace) -> None:
    for epochs in args.epochs:
        config = load_workflow(resolve_workflow(WORKFLOW), [f"training.epochs={epochs}", "training.n_samples=100"]).config
        data, seed = config["data"], config["seed"]
        problem = repetition_problem(data, seed, 0, args.level)
        for method in args.methods:
            training = {**method_training(method, config["training"], config["method_options"]),
                        "noise_variance": args.mode}
            params = {**classifier_params([method], training, data["n_train"])[method],
                      "random_state": derived_seed(seed, 0, 1)}  # the workflow's seed of repetition 0
            wall, cpu = time.perf_counter(), time.process_time()
            proba = NoisyGPClassifier(**params).fit(problem.train).predict_proba(problem.test)
            print(json.dumps({"method": method, "mode": args.mode, "level": args.level, "epochs": epochs,
                              "n_samples": 100, "nll": negative_log_likelihood(problem.test.y, proba),
                              "error": error_rate(problem.test.y, proba), "wall_s": time.perf_counter() - wall,
                              "cpu_s": time.process_time() - cpu}), flush=True)


if __name__ == "__main__":
    main()

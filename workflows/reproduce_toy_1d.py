"""The 1-D three-class GP-prior toy of the noisy-input GP paper (sec. 5.1, Table 1).

Trains MGP, NIMGP, NIMGP-NN and NIMGP-FO on ``gpal.synthetic.toy_1d`` and reports
test NLL and error next to the Bayes-optimal predictive, plus the mean
KL(Bayes || model) over test points: how far each predictive is from the best
possible one.  Writes ``results.json`` and ``results.md`` to ``--out``.

    python workflows/reproduce_toy_1d.py --out runs/toy_1d
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from gpal import NoisyGPClassifier
from gpal.metrics import error_rate, negative_log_likelihood
from gpal.persistence import write_json_atomic, write_text_atomic
from gpal.synthetic import toy_1d

METHODS = {"MGP": "none", "NIMGP": "latent", "NIMGP-NN": "amortized", "NIMGP-FO": "first_order"}
PUBLISHED_NLL = {"MGP": 0.884, "NIMGP": 0.286, "NIMGP-NN": 0.347, "NIMGP-FO": 0.495}


def kl_from_bayes(bayes: np.ndarray, proba: np.ndarray) -> float:
    """Mean over points of KL(p_Bayes || p_model), in nats."""
    p = np.clip(bayes, 1e-300, 1.0)
    q = np.clip(proba, 1e-300, 1.0)
    return float(np.mean(np.sum(np.where(bayes > 0, bayes * (np.log(p) - np.log(q)), 0.0), axis=1)))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default="runs/toy_1d", help="output folder")
    p.add_argument("--n-train", type=int, default=1000)
    p.add_argument("--n-test", type=int, default=1000)
    p.add_argument("--noise-std", type=float, default=0.1)
    p.add_argument("--epochs", type=int, default=750)
    p.add_argument("--num-inducing", type=int, default=100)
    p.add_argument("--batch-size", type=int, default=200)
    p.add_argument("--n-samples", type=int, default=300, help="prediction samples of p(x* | x~*)")
    p.add_argument("--methods", default=",".join(METHODS), help=f"comma-separated subset of {list(METHODS)}")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    methods = [m for m in args.methods.split(",") if m]
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        p.error(f"unknown method(s) {unknown}; valid: {list(METHODS)}")

    problem = toy_1d(args.n_train, args.n_test, args.noise_std, seed=args.seed)
    test = problem.test
    bayes = problem.bayes_proba(test.X)
    rows = {"Bayes-optimal": {"nll": negative_log_likelihood(test.y, bayes), "error": error_rate(test.y, bayes), "kl": 0.0}}
    for name in methods:
        clf = NoisyGPClassifier(
            input_noise=METHODS[name],
            num_inducing=args.num_inducing,
            batch_size=args.batch_size,
            epochs=args.epochs,
            n_samples=args.n_samples,
            seed=args.seed,
        )
        start = time.perf_counter()
        clf.fit(problem.train)
        proba = clf.predict_proba(test)
        rows[name] = {
            "nll": negative_log_likelihood(test.y, proba),
            "error": error_rate(test.y, proba),
            "kl": kl_from_bayes(bayes, proba),
            "seconds": time.perf_counter() - start,
        }
    lines = ["| predictive | test NLL | test error | KL(Bayes ‖ model) | published NLL |", "|---|---:|---:|---:|---:|"]
    for name, r in rows.items():
        lines.append(
            f"| {name} | {r['nll']:.3f} | {r['error']:.3f} | {r['kl']:.3f} | {PUBLISHED_NLL.get(name, '–')} |"
        )
    table = "\n".join(lines) + "\n"
    write_json_atomic(f"{args.out}/results.json", {"args": vars(args), "results": rows})
    write_text_atomic(f"{args.out}/results.md", table)
    sys.stdout.write(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())

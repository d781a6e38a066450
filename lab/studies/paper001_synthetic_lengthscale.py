"""Which GP-prior length scale makes gpal's 2-D problems as hard as paper 001's (sec. 5.2)?

The paper writes l = 2 for its squared-exponential prior; `gpal/workflows/files/papers/001_synthetic_2d.yaml`
reads that as a length scale of sqrt(2) (l dividing the squared distance).  The Bayes-optimal test
error and NLL of the problems do not depend on any classifier, so they show, at no training cost,
how hard each reading makes the problems; the paper's best methods reach an error of 0.108 (noise
0.1), 0.158 (0.25) and 0.21 (0.5), which the Bayes error must not exceed.

    python lab/studies/paper001_synthetic_lengthscale.py --problems 20

One JSON line a length scale and noise, kept in ``lab/studies/records/synthetic_lengthscale.json``.
"""

from __future__ import annotations

import argparse
import json
from typing import Iterator

import numpy as np

from gpal.evaluation.metrics import error_rate, negative_log_likelihood
from gpal.workflows.synthetic import repetition_problem
from shared import keep_printed  # the script's folder, first on its path


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--problems", type=int, default=20)
    parser.add_argument("--cells", type=int, default=200, help="quadrature cells per axis of the Bayes predictive")
    args = parser.parse_args(argv)
    with keep_printed("synthetic_lengthscale", __file__, argv):  # docs/papers/001_numbers.md cites the Bayes errors
        for row in bayes_rows(args.problems, args.cells):
            print(json.dumps(row), flush=True)


def bayes_rows(problems: int, cells: int) -> Iterator[dict]:
    """Per length scale and noise: the Bayes-optimal test error and NLL, mean and SE over ``problems`` problems."""
    for lengthscale in (np.sqrt(2.0), 2.0):
        for noise in (0.1, 0.25, 0.5):
            data = {"n_train": 1000, "n_test": 1000, "noise_levels": [noise], "variance": 0.5,
                    "lengthscale": float(lengthscale)}
            err, nll = [], []
            for rep in range(problems):
                problem = repetition_problem(data, 0, rep, noise)
                proba = problem.bayes_proba(problem.test.X, n_cells=cells)
                err.append(error_rate(problem.test.y, proba))
                nll.append(negative_log_likelihood(problem.test.y, proba))
            yield {"lengthscale": round(float(lengthscale), 4), "noise": noise, "problems": problems,
                   "bayes_error": float(np.mean(err)), "bayes_error_se": float(np.std(err, ddof=1) / np.sqrt(len(err))),
                   "bayes_nll": float(np.mean(nll)), "bayes_nll_se": float(np.std(nll, ddof=1) / np.sqrt(len(nll)))}


if __name__ == "__main__":
    main()

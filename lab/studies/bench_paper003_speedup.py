#!/usr/bin/env python
"""Paper 003's speed-up claim (Milios et al., sec. 5 and Fig. 5): the Dirichlet GP (GPD) reaches GP classification's
quality "at a fraction of the computational time", measured here at equal quality rather than at a fixed budget.

One stratified split of a binary gpal data set (optionally capped, seeded), inputs standardised on the training
rows.  GPD is fitted to convergence (L-BFGS-B) at the paper's alpha_eps for the set (0.01 for MAGIC) and, separately,
with alpha_eps chosen from 0.1 / 0.01 / 0.001 by training MNLL (three fits: what the rule costs).  Two GPCs are
traced along their training clocks (evaluation excluded): gpal's minibatch SVGP with the probit likelihood (Adam,
lr 0.01, test set evaluated after every epoch) and vi-JJ (paper 002's logistic GPC, closed-form q(u) and L-BFGS-B on
the hyperparameters, evaluated after every outer iteration: the full-batch, converging optimiser the paper's GPC
used).  For each GPC: the seconds until its test MNLL (and, separately, its test error) first comes within a stated
slack of GPD's (``--slack-nll``, ``--slack-error``), and that time over GPD's fit time, the speed-up at equal quality.  A GPC that never reaches GPD's value within its
budget gets no time (its speed-up is then at least its budget over GPD's time).

Before the timed runs every method runs once on 100 rows, so that TensorFlow's one-off start-up falls on none.

    PYTHONPATH=$PWD python lab/studies/bench_paper003_speedup.py --dataset magic:3000 --json runs/paper003_speedup.json
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

import numpy as np

from shared import Trace, make_problem, trace_svi, trace_vi
from gpal.files import write_json_atomic

#: Sec. 5's alpha_eps chosen by training MNLL, per data set.
PAPER_ALPHA = {"magic": 0.01, "letter": 0.001}


def fit_gpd(p, num_inducing: int, max_iter: int, seed: int, alpha: float | None) -> dict[str, Any]:
    """One ``DirichletGPClassifier`` fit (alpha None: chosen from the paper's grid), its seconds and test quality."""
    from gpal import DirichletGPClassifier
    from gpal.evaluation.metrics import error_rate, negative_log_likelihood

    start = time.perf_counter()
    clf = DirichletGPClassifier(alpha_epsilon=alpha, num_inducing=num_inducing, max_iter=max_iter,
                                random_state=seed).fit(p.X, p.y)
    seconds = time.perf_counter() - start
    proba = clf.predict_proba(p.X_test)
    return {"alpha_epsilon": alpha if alpha is not None else float(clf.alpha_epsilon_), "seconds": seconds,
            "nll": negative_log_likelihood(p.y_test, proba), "error": error_rate(p.y_test, proba)}


def first_reaching(trace: Trace, metric: str, target: float) -> float | None:
    """The clock reading at which ``trace`` first has ``metric`` at or below ``target`` (None: never)."""
    values = trace.nll if metric == "nll" else [1.0 - a for a in trace.accuracy]
    hits = np.nonzero(np.asarray(values) <= target + 1e-12)[0]
    return float(trace.seconds[hits[0]]) if hits.size else None


def run(args: argparse.Namespace) -> dict[str, Any]:
    from gpal.data.registry import parse_dataset

    name, n = parse_dataset(args.dataset)
    p = make_problem(args.dataset.split(":")[0], args.seed, rows=n, test_size=args.test_size)
    warm = make_problem(name, args.seed, rows=100, test_size=0.3)
    fit_gpd(warm, 5, 5, args.seed, PAPER_ALPHA.get(name, 0.01))
    trace_svi(warm, 1, 5, 50, args.seed, likelihood="probit")
    trace_vi(warm, "jj", 1, 5, args.seed)

    alpha = PAPER_ALPHA.get(name, 0.01)
    gpd = fit_gpd(p, args.num_inducing, args.max_iter, args.seed, alpha)
    print("GPD", gpd, file=sys.stderr, flush=True)
    gpd_selected = fit_gpd(p, args.num_inducing, args.max_iter, args.seed, None)
    print("GPD (alpha selected)", gpd_selected, file=sys.stderr, flush=True)
    traces = {"svgp-probit": trace_svi(p, args.svi_epochs, args.num_inducing, args.batch_size, args.seed,
                                       likelihood="probit"),
              "vi-jj": trace_vi(p, "jj", args.iters, args.num_inducing, args.seed)}
    slack = {"nll": args.slack_nll, "error": args.slack_error}
    rows = []
    for method, trace in traces.items():
        row = {"method": method, "budget_seconds": trace.seconds[-1], "final_nll": trace.nll[-1],
               "final_error": 1.0 - trace.accuracy[-1], "best_nll": min(trace.nll)}
        for metric in ("nll", "error"):
            seconds = first_reaching(trace, metric, gpd[metric] + slack[metric])
            row[f"seconds_to_gpd_{metric}"] = seconds
            row[f"speedup_{metric}"] = None if seconds is None else seconds / gpd["seconds"]
            row[f"speedup_{metric}_at_least"] = trace.seconds[-1] / gpd["seconds"] if seconds is None else None
        rows.append(row)
        print(row, file=sys.stderr, flush=True)
    return {"settings": vars(args) | {"n_train": len(p.y), "n_test": len(p.y_test)}, "load": os.getloadavg(),
            "gpd": gpd, "gpd_alpha_selected": gpd_selected, "gpc": rows,
            "traces": {m: {"seconds": t.seconds, "accuracy": t.accuracy, "nll": t.nll} for m, t in traces.items()}}


def table(result: dict[str, Any]) -> str:
    gpd = result["gpd"]
    lines = [f"GPD (alpha_eps {gpd['alpha_epsilon']:g}): {gpd['seconds']:.1f} s, test MNLL {gpd['nll']:.4f}, "
             f"error {gpd['error']:.4f}; with alpha_eps selected from three: {result['gpd_alpha_selected']['seconds']:.1f} s",
             "", f"| GPC | budget s | final MNLL | final error | s to GPD's MNLL + {result['settings']['slack_nll']:g} (x GPD) | "
             f"s to GPD's error + {result['settings']['slack_error']:g} (x GPD) |",
             "|---|---:|---:|---:|---|---|"]
    for r in result["gpc"]:
        cells = []
        for metric in ("nll", "error"):
            s = r[f"seconds_to_gpd_{metric}"]
            cells.append(f"{s:.1f} ({r[f'speedup_{metric}']:.1f}x)" if s is not None
                         else f"never (> {r[f'speedup_{metric}_at_least']:.1f}x)")
        lines.append(f"| {r['method']} | {r['budget_seconds']:.1f} | {r['final_nll']:.4f} | {r['final_error']:.4f} | "
                     f"{cells[0]} | {cells[1]} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dataset", default="magic:3000", help="NAME or NAME:ROWS (binary)")
    parser.add_argument("--test-size", type=float, default=0.25)
    parser.add_argument("--num-inducing", type=int, default=50)
    parser.add_argument("--max-iter", type=int, default=200, help="GPD's L-BFGS-B iterations at most")
    parser.add_argument("--svi-epochs", type=int, default=60)
    parser.add_argument("--batch-size", type=int, default=50)
    parser.add_argument("--iters", type=int, default=30, help="vi-JJ's outer iterations")
    parser.add_argument("--slack-nll", type=float, default=0.01, help="'equal' test MNLL: within this of GPD's")
    parser.add_argument("--slack-error", type=float, default=0.005, help="'equal' test error: within this of GPD's")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", help="write the result here")
    args = parser.parse_args(argv)
    result = run(args)
    print(table(result))
    if args.json:
        write_json_atomic(args.json, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())

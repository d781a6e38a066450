#!/usr/bin/env python
"""Paper 003's Fig. 5 (right): GPD's test error as its inducing points grow, its training time beside GPC's at the
smallest number of inducing points.

The paper (sec. 5, Fig. 5 right) fits GPD on LETTER at M = 500, 800, 1000 and 1600 inducing points and GP
classification (GPC) at the smallest M only, and states that GPD's error "drops significantly as the budget is
increased; however, the latter remains a fraction of the original GPC computational effort".  Here, on repeated
stratified splits of a gpal data set (``NAME:ROWS``, the rows drawn as the compare workflow draws them, so split k
is gpal/workflows/files/papers/003_milios_letter.yaml's split k at the same rows and seed): GPD (``DirichletGPClassifier``, the
paper's alpha_eps for the set, L-BFGS-B to convergence or ``--max-iter``) at each M of ``--inducing``, and the
softmax GPC of that workflow (``svgp-softmax-mc``: Monte Carlo ELBO, minibatch Adam, ``--epochs``) at the smallest.

Each fit records wall seconds, CPU seconds of this process (`time.process_time`) and the load average before and
after it: on a machine shared with other jobs the wall time measures the others too, so the times are compared in
CPU seconds, TensorFlow and the BLAS held to one thread each so that CPU seconds are one core's work.  The verdicts
follow docs/papers.md's rule (`labkit.verdicts.order_verdict`, t intervals over the splits): "error falls"
is GPD's error at the largest M ahead of its error at the smallest; "time a fraction of GPC's" is each GPD's CPU
seconds ahead of GPC's, per GPC budget.  One split gives no interval and no verdict.  The paper's GPC ran to
convergence and this one runs a fixed number of epochs, so a longer GPC can run apart (``--methods gpc --epochs``) and
``--summarize`` pools the kept runs' fits; each GPC fit keeps its per-epoch training loss, to show whether it was still
learning when its budget ended.

    PYTHONPATH=$PWD python lab/studies/bench_paper003_inducing.py --dataset letter:3000 --json runs/gpd.json
    PYTHONPATH=$PWD python lab/studies/bench_paper003_inducing.py --methods gpc --epochs 300 --json runs/gpc.json
    PYTHONPATH=$PWD python lab/studies/bench_paper003_inducing.py --summarize runs/gpd.json runs/gpc.json
"""

from __future__ import annotations

import os

# One thread each, before TensorFlow starts: a fit's CPU seconds are then one core's work, whatever else runs.
os.environ.setdefault("TF_NUM_INTRAOP_THREADS", "1")
os.environ.setdefault("TF_NUM_INTEROP_THREADS", "1")

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from typing import Any, Callable, Mapping, Sequence  # noqa: E402

import numpy as np  # noqa: E402

from shared import environment, run_commit  # noqa: E402

#: Sec. 5's alpha_eps chosen by training MNLL, per data set (LETTER 0.001; MAGIC and the other binary sets 0.01).
PAPER_ALPHA = {"letter": 0.001, "magic": 0.01}
GPD, GPC = "gpd", "gpc"
METRICS = ("error", "nll", "cpu_seconds", "wall_seconds")


def timed(fit: Callable[[], Any]) -> tuple[Any, dict[str, float]]:
    """``fit()``'s result with its wall and CPU seconds and the 1-minute load average before and after it."""
    load_before = os.getloadavg()[0]
    wall, cpu = time.perf_counter(), time.process_time()
    result = fit()
    return result, {"wall_seconds": time.perf_counter() - wall, "cpu_seconds": time.process_time() - cpu,
                     "load_before": load_before, "load_after": os.getloadavg()[0]}


def make_estimator(kind: str, num_inducing: int, n_train: int, args: argparse.Namespace, seed: int) -> Any:
    """GPD at the paper's alpha_eps, or the compare workflow's softmax GPC (``svgp-softmax-mc``)."""
    from gpal import DirichletGPClassifier, NoisyGPClassifier
    from gpal.workflows.compare import SOFTMAX_MC, method_spec

    if kind == GPD:
        return DirichletGPClassifier(alpha_epsilon=args.alpha, num_inducing=num_inducing, max_iter=args.max_iter,
                                     random_state=seed)
    params = method_spec(SOFTMAX_MC, n_train, args.epochs, args.max_iter, num_inducing)
    return NoisyGPClassifier(**params, random_state=seed)


def fit_once(kind: str, num_inducing: int, train: Any, test: Any, args: argparse.Namespace, seed: int
             ) -> dict[str, Any]:
    """One timed fit and its test error and MNLL."""
    from gpal.evaluation.metrics import error_rate, negative_log_likelihood

    clf = make_estimator(kind, num_inducing, train.n_samples, args, seed)
    _, seconds = timed(lambda: clf.fit(train.X, train.y))
    proba = clf.predict_proba(test.X)
    fit = {"method": kind, "num_inducing": num_inducing, "epochs": args.epochs if kind == GPC else None, **seconds,
           "error": error_rate(test.y, proba), "nll": negative_log_likelihood(test.y, proba)}
    if kind == GPC:  # whether the GPC still improves at the end of its budget: its per-epoch training loss
        fit["loss_history"] = [float(v) for v in clf.history_]
    return fit


def label(fit: Mapping[str, Any]) -> str:
    if fit["method"] == GPD:
        return f"GPD M={fit['num_inducing']}"
    return f"GPC M={fit['num_inducing']}, {fit['epochs']} epochs"


def summarize(fits: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Mean ± SE over the splits per method, M and GPC budget, and the two verdicts by the papers page's rule.

    ``fits``: the runs' per-fit dicts (``method``, ``num_inducing``, ``epochs``, the `METRICS`).  "Error falls":
    GPD at its largest M against its smallest; "time a fraction": each GPD against each GPC budget at GPD's
    smallest M (the paper's GPC, Fig. 5 right).
    """
    from gpal.evaluation.metrics import mean_se
    try:
        from labkit.verdicts import order_verdict
    except ModuleNotFoundError as exc:  # gpal installed without the lab beside it
        raise SystemExit(f"{__file__} needs the lab's package labkit: from the repository's top, pip install -e lab"
                         ) from exc

    rows: dict[str, dict[str, Any]] = {}
    for fit in fits:
        row = rows.setdefault(label(fit), {"values": {m: [] for m in METRICS}})
        for metric in METRICS:
            row["values"][metric].append(float(fit[metric]))
    for name, row in rows.items():
        n = len(row["values"]["error"])
        row["n"] = n
        for metric, values in row["values"].items():
            mean, se = mean_se(np.asarray(values))
            row[metric] = {"mean": float(mean), "se": float(se) if n > 1 else None}

    def verdict(better: str, worse: str, metric: str) -> str:
        a, b = rows[better], rows[worse]
        if min(a["n"], b["n"]) < 2:
            return "one split: no interval"
        as_row = lambda name, r: {"method": name, "n": r["n"], "gpal_mean": r[metric]["mean"],  # noqa: E731
                                  "gpal_se": r[metric]["se"]}
        return order_verdict(as_row(better, a), as_row(worse, b), higher_is_better=False,
                             where=f"{better} vs {worse} ({metric})")

    inducing = sorted({f["num_inducing"] for f in fits if f["method"] == GPD})
    if len(inducing) < 2:
        raise ValueError(f"the fits hold GPD at M = {inducing}: 'error falls' needs two or more M")
    gpd = {m: label({"method": GPD, "num_inducing": m}) for m in inducing}
    budgets = sorted({f["epochs"] for f in fits if f["method"] == GPC and f["num_inducing"] == inducing[0]})
    time_pairs, time_fraction = {}, {}
    for epochs in budgets:
        gpc = label({"method": GPC, "num_inducing": inducing[0], "epochs": epochs})
        pairs = time_pairs[gpc] = {gpd[m]: verdict(gpd[m], gpc, "cpu_seconds") for m in inducing}
        time_fraction[gpc] = ("reproduced" if all(v == "reproduced" for v in pairs.values()) else
                              "contradicted" if "contradicted" in pairs.values() else "not resolved")
    # Still learning at the end of its budget?  Its training loss, the mean of the 10 epochs before each 100th.
    losses: dict[str, dict[int, list[float]]] = {}
    for fit in fits:
        history = fit.get("loss_history") or []
        for epoch in range(100, len(history) + 1, 100):
            losses.setdefault(label(fit), {}).setdefault(epoch, []).append(float(np.mean(history[epoch - 10:epoch])))
    for name, marks in losses.items():
        rows[name]["training_loss_at_epoch"] = {e: float(np.mean(v)) for e, v in marks.items()}
    return {"rows": {name: {k: v for k, v in row.items() if k != "values"} for name, row in rows.items()},
            "verdicts": {"error_falls": verdict(gpd[inducing[-1]], gpd[inducing[0]], "error"),
                         "time_fraction": time_fraction, "time_pairs": time_pairs}}


def table(summary: Mapping[str, Any]) -> str:
    """The summary as a Markdown table and the two verdicts."""
    def cell(stat: Mapping[str, Any], digits: int) -> str:
        return f"{stat['mean']:.{digits}f}" + ("" if stat["se"] is None else f" ± {stat['se']:.{digits}f}")

    lines = ["| fit | n | test error | test MNLL | CPU s | wall s |", "|---|---:|---:|---:|---:|---:|"]
    for name, r in summary["rows"].items():
        lines.append(f"| {name} | {r['n']} | {cell(r['error'], 4)} | {cell(r['nll'], 4)} | "
                     f"{cell(r['cpu_seconds'], 1)} | {cell(r['wall_seconds'], 1)} |")
    v = summary["verdicts"]
    for name, r in summary["rows"].items():
        if "training_loss_at_epoch" in r:
            marks = ", ".join(f"{e}: {x:.4f}" for e, x in r["training_loss_at_epoch"].items())
            lines.append(f"{name}: mean training loss of the 10 epochs before epoch {marks}")
    lines += ["", f"error falls from the smallest M to the largest: {v['error_falls']}"]
    for gpc, verdict in v["time_fraction"].items():
        pairs = ", ".join(f"{k}: {x}" for k, x in v["time_pairs"][gpc].items())
        lines.append(f"each GPD's CPU time below {gpc}'s: {verdict} ({pairs})")
    return "\n".join(lines)


def run(args: argparse.Namespace, commit: str) -> dict[str, Any]:
    from threadpoolctl import threadpool_limits

    from gpal.data import load_dataset
    from gpal.data.registry import parse_dataset

    name, n_rows = parse_dataset(args.dataset)
    data = load_dataset(name, n=n_rows, seed=args.seed)
    start = environment()
    fits = []
    with threadpool_limits(limits=1):
        warm = load_dataset(name, n=200, seed=args.seed)
        quick = argparse.Namespace(**{**vars(args), "max_iter": 2, "epochs": 1})
        for kind in args.methods:  # TensorFlow's one-off start-up falls on no timed fit
            make_estimator(kind, 5, warm.n_samples, quick, args.seed).fit(warm.X, warm.y)
        for split in data.repeated_splits(args.splits, args.test_size, args.seed):
            train, test = data.subset(split.train), data.subset(split.test)
            plan = ([(GPD, m) for m in args.inducing] if GPD in args.methods else []) + (
                [(GPC, min(args.inducing))] if GPC in args.methods else [])
            for kind, m in plan:
                fit = {"split": split.index, **fit_once(kind, m, train, test, args, args.seed)}
                fits.append(fit)
                print(fit, file=sys.stderr, flush=True)
    return {"commit": commit, "settings": vars(args) | {"n_train": int(train.n_samples), "n_test": int(test.n_samples)},
            "environment": start, "load_at_end": os.getloadavg(), "fits": fits}


def pooled(paths: Sequence[str]) -> dict[str, Any]:
    """The fits of several kept runs (one with GPD's ladder, one with a longer GPC, say) summarised together, each
    run's commit and settings named; the runs must share the data set, rows, splits and seed, or pooling is refused."""
    from shared import output_field, read_outputs

    outputs = read_outputs(paths)
    same = ("dataset", "test_size", "splits", "seed")
    first = {k: output_field(outputs[0], paths[0], "settings", k) for k in same}
    fits = []
    for raw, path in zip(outputs, paths):
        settings = output_field(raw, path, "settings")
        differing = {k: settings.get(k) for k in same if settings.get(k) != first[k]}
        if differing:
            raise ValueError(f"{path}: {differing} against {paths[0]}'s {first}: only runs on the same splits pool")
        # a run of the first version of this script names its GPC's epochs in its settings only
        fits += [{"epochs": settings["epochs"] if f["method"] == GPC else None, **f}
                 for f in output_field(raw, path, "fits")]
    return {"runs": {str(p): {"commit": output_field(r, p, "commit"), "settings": output_field(r, p, "settings")}
                     for r, p in zip(outputs, paths)}, "fits": fits, **summarize(fits)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dataset", default="letter:3000", help="NAME or NAME:ROWS")
    parser.add_argument("--inducing", type=int, nargs="+", default=[50, 100, 200],
                        help="GPD's inducing points, two or more; GPC runs at the smallest")
    parser.add_argument("--splits", type=int, default=3)
    parser.add_argument("--test-size", type=float, default=0.25)
    parser.add_argument("--alpha", type=float, default=None,
                        help="GPD's alpha_eps (default: the paper's for the data set, sec. 5)")
    parser.add_argument("--max-iter", type=int, default=200, help="GPD's L-BFGS-B iterations at most")
    parser.add_argument("--epochs", type=int, default=100, help="GPC's epochs of minibatch Adam")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--methods", nargs="+", choices=(GPD, GPC), default=[GPD, GPC],
                        help="fit GPD at each M, GPC at the smallest, or both")
    parser.add_argument("--summarize", nargs="+", metavar="JSON",
                        help="summarise kept runs' fits together (no fitting); --json writes the summary")
    parser.add_argument("--json", help="write the result here")
    args = parser.parse_args(argv)
    if args.summarize:
        try:
            result = pooled(args.summarize)
        except ValueError as exc:
            parser.error(str(exc))
        print(table(result))
        if args.json:
            from gpal.files import write_json_atomic

            write_json_atomic(args.json, result)
        return 0
    if len(set(args.inducing)) < 2 or min(args.inducing) < 1:
        parser.error(f"--inducing needs two or more distinct positive counts (a ladder of M); got {args.inducing}")
    if args.splits < 1:
        parser.error(f"--splits must be 1 or more; got {args.splits}")
    name = args.dataset.split(":")[0].strip().lower()
    if args.alpha is None:
        if name not in PAPER_ALPHA:
            parser.error(f"the paper gives no alpha_eps for {name!r} (it does for {sorted(PAPER_ALPHA)}); "
                         "pass --alpha")
        args.alpha = PAPER_ALPHA[name]
    args.inducing = sorted(set(args.inducing))
    commit = run_commit(parser, bool(args.json))
    result = run(args, commit)
    if GPD in args.methods:
        result.update(summarize(result["fits"]))
        print(table(result))
    if args.json:
        from gpal.files import write_json_atomic

        write_json_atomic(args.json, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())

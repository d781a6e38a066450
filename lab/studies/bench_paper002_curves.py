#!/usr/bin/env python
"""Paper 002's quality-against-time comparison (Izmailov & Kropotov, sec. 5, Figs. 4-5): test accuracy along the
training clock of vi-JJ, vi-JJ-full, vi-JJ-hybrid, vi-Taylor and svi, and the orderings its text states.

Protocol (sec. 5.1): features standardised (here on the training split), 80 % train / 20 % test (stratified,
seeded), squared-exponential kernel (SE-ARD here; ``--kernel se_iso_plus_noise`` is gplib's, the authors' code's,
and ``--scheme gplib`` their optimiser), inducing inputs the k-means centres and not optimised; vi-JJ,
vi-Taylor and vi-JJ-hybrid with n_upd = 3 analytic updates and n_fun = 5 L-BFGS-B evaluations per outer
iteration; svi with minibatches of 50 on german and about n/100 elsewhere.  Differences: svi is gpal's SVGP with
the paper-000 logit likelihood (a probit through Gaussian noise of variance 2.897, within 0.009 of the logistic)
trained by Adam at lr 0.01, not Hensman et al.'s Bernoulli-logistic ELBO by AdaDelta at a tuned rate; the paper's
M per data set is printed only in its figure titles, so M is an argument.

Clocks run over set-up, tracing and training and pause while the test set is evaluated (after every outer
iteration of the vi methods, every epoch of svi).  Before the timed runs every method runs once on 100 rows, so
that TensorFlow's one-off start-up falls on none of them.

The paper's claims, checked per data set on the traces (tolerances are this script's, stated in each claim):

* german: svi takes longer than every vi method to reach the best final accuracy (less 0.01); the vi methods end
  within 0.02 of each other ("similar results");
* magic: vi-JJ and vi-Taylor start poorly (first-iteration accuracy at least 0.02 below their final) but reach the
  target before svi; vi-JJ-hybrid starts better than both; vi-JJ-full ends at least 0.02 below the best final
  accuracy ("cannot converge to a reasonable quality").

Over two or more splits the first-iteration claims are also judged on the run, each lead paired within a split
(`first_iterations`): final minus first accuracy against 0.02, vi-JJ-hybrid's first accuracy minus vi-JJ's and
vi-Taylor's against 0, each by its 95 % t interval over the splits.

    PYTHONPATH=$PWD python lab/studies/bench_paper002_curves.py --datasets german:50,magic:100:6000 \
        --json runs/paper002_curves.json --figure runs/paper002_curves.png

The papers page reads the final numbers of kept runs as a results record (`result_records`): one table per data
set, training rows and M, each method's final test accuracy, NLL and ECE as mean ± SE over the splits run
(``settings.splits.<table>``), written from the kept JSON files, nothing run::

    PYTHONPATH=$PWD python lab/studies/bench_paper002_curves.py \
        --record lab/pages/records/papers/tables/paper002_curves.json --kept runs/a.json runs/b.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
from pathlib import Path
from typing import Any

import numpy as np

from gpal.files import write_json_atomic
from shared import Problem, Trace, make_problem, paired_t, record_from_kept, run_commit, trace_svi, trace_vi

VI_METHODS = ("jj", "jj-full", "jj-hybrid", "taylor")
METHODS = (*VI_METHODS, "svi")
#: "Reached the optimal quality": within this accuracy of the best final accuracy of all methods.
TARGET_SLACK = 0.01
#: "Similar" final accuracies, "poor" first iterations, "cannot converge": differences of at least this.
MARGIN = 0.02


def paper_batch_size(n_train: int) -> int:
    """Sec. 5.1: 50 for the small sets (german, svmguide), about n/100 otherwise."""
    return 50 if n_train < 2000 else max(1, n_train // 100)


def first_index(method: str, authors: bool) -> int:
    """Where a trace's first iteration is: as the authors record it, a vi method's trace starts at the prior
    (t = 0, q(u) = N(0, I)) and its first iteration is the next point."""
    return 1 if authors and method != "svi" else 0


def claims(name: str, traces: dict[str, Trace], authors: bool = False) -> list[dict[str, Any]]:
    """The orderings paper 002 states for ``name`` (german, magic), each with its numbers and whether it holds."""
    final = {m: t.accuracy[-1] for m, t in traces.items()}
    first = {m: t.accuracy[first_index(m, authors)] for m, t in traces.items()}
    target = max(final.values()) - TARGET_SLACK
    reach = {m: t.seconds_to(target) for m, t in traces.items()}
    vi = [f"vi-{m}" for m in VI_METHODS]

    def later(a: float | None, b: float | None) -> bool:
        """a later than b: a never reached while b was, or both reached and a after b."""
        return b is not None and (a is None or a > b)

    def row(claim: str, holds: bool, numbers: dict[str, Any]) -> dict[str, Any]:
        return {"dataset": name, "claim": claim, "holds": bool(holds), "numbers": numbers}

    if name == "german":
        return [
            row(f"svi reaches the best final accuracy (less {TARGET_SLACK}) later than every vi method",
                all(later(reach["svi"], reach[m]) for m in vi), {"target": target, "seconds_to_target": reach}),
            row(f"the vi methods end within {MARGIN} of each other",
                max(final[m] for m in vi) - min(final[m] for m in vi) <= MARGIN, {"final_accuracy": final}),
        ]
    if name == "magic":
        return [
            row(f"vi-JJ and vi-Taylor start poorly (first iteration >= {MARGIN} below their final accuracy)",
                all(final[m] - first[m] >= MARGIN for m in ("vi-jj", "vi-taylor")),
                {"first_accuracy": first, "final_accuracy": final}),
            row("vi-JJ and vi-Taylor reach the target before svi",
                all(later(reach["svi"], reach[m]) for m in ("vi-jj", "vi-taylor")),
                {"target": target, "seconds_to_target": reach}),
            row("vi-JJ-hybrid starts better than vi-JJ and vi-Taylor",
                all(first["vi-jj-hybrid"] > first[m] for m in ("vi-jj", "vi-taylor")), {"first_accuracy": first}),
            row(f"vi-JJ-full ends >= {MARGIN} below the best final accuracy",
                max(final.values()) - final["vi-jj-full"] >= MARGIN, {"final_accuracy": final}),
        ]
    return []


def _lead(diffs: list[float], margin: float) -> dict[str, Any]:
    """A paired lead over the splits and its verdict: reproduced where the 95 % t interval lies above ``margin``,
    contradicted where it lies below, as `labkit.verdicts.order_verdict` reads a lead of declared size."""
    mean, se, low, high = paired_t(diffs)
    verdict = "reproduced" if low > margin else "contradicted" if high < margin else "not resolved"
    return {"per_split": diffs, "mean": mean, "se": se, "low": low, "high": high, "margin": margin, "verdict": verdict}


def first_iterations(results: list[dict[str, Any]], authors: bool = False) -> dict[str, Any]:
    """The first-iteration claims over the splits of each data set, paired within a split: per vi method its final
    minus its first-iteration accuracy against MARGIN ("poor quality on the first iterations"), and vi-JJ-hybrid's
    first-iteration accuracy minus vi-JJ's and vi-Taylor's against 0 ("better quality on the first iterations"),
    with the seconds each first iteration ended at.  The per-split claims judge one split; these judge the run.
    ``authors``: the traces were recorded as the authors record them (`first_index`)."""
    i = 1 if authors else 0
    out: dict[str, Any] = {}
    for name in dict.fromkeys(r["dataset"] for r in results):
        runs = [r for r in results if r["dataset"] == name]
        if len(runs) < 2:
            continue
        vi = [m for m in runs[0]["traces"] if m != "svi"]
        entry: dict[str, Any] = {"first_seconds": {m: [r["traces"][m]["seconds"][i] for r in runs] for m in vi}}
        # a run of one iteration (--iters 1: the first iterations alone) has no later accuracy to drop to
        if all(len(r["traces"][m]["accuracy"]) > i + 1 for r in runs for m in vi):
            entry["drop"] = {m: _lead([r["traces"][m]["accuracy"][-1] - r["traces"][m]["accuracy"][i] for r in runs],
                                      MARGIN) for m in vi}
        if "vi-jj-hybrid" in vi:
            entry["hybrid_lead"] = {m: _lead([r["traces"]["vi-jj-hybrid"]["accuracy"][i] - r["traces"][m]["accuracy"][i]
                                              for r in runs], 0.0)
                                    for m in ("vi-jj", "vi-taylor") if m in vi}
        out[name] = entry
    return out


def run(args: argparse.Namespace, commit: str) -> dict[str, Any]:
    specs = [(token.split(":") + [None])[:3] for token in args.datasets.split(",")]
    methods = args.methods.split(",")
    # the authors' optimiser and record (gplib: LogisticBoundGPClassifier's scheme and fit(record=...))
    authors = {"scheme": "gplib", "record": "authors"} if args.as_authors else {"scheme": args.scheme}
    authors["kernel"] = args.kernel
    warm = make_problem(specs[0][0], args.seed, 200)
    rows = np.random.default_rng(args.seed).permutation(len(warm.y))[:100]  # both classes, whatever the row order
    tiny = Problem("warm-up", warm.X[rows], warm.y[rows], warm.X_test[:20], warm.y_test[:20])
    for m in methods:
        if m == "svi":
            trace_svi(tiny, 1, 5, 50, args.seed, kernel=args.kernel)
        else:
            trace_vi(tiny, m, 1, 5, args.seed, **authors)
    results = []
    for name, M, rows in specs:
        for split in range(args.splits):
            p = make_problem(name, args.seed + split, None if rows is None else int(rows))
            traces = {f"vi-{m}": trace_vi(p, m, args.iters, int(M), args.seed + split, **authors)
                      for m in methods if m != "svi"}
            if "svi" in methods:
                traces["svi"] = trace_svi(p, args.svi_epochs, int(M), paper_batch_size(len(p.y)), args.seed + split,
                                          kernel=args.kernel)
            for t in traces.values():
                i = first_index(t.method, args.as_authors)
                print(f"{name} split {split} {t.method}: first {t.accuracy[i]:.3f} at {t.seconds[i]:.1f} s, "
                      f"final {t.accuracy[-1]:.3f} at {t.seconds[-1]:.1f} s", file=sys.stderr, flush=True)
            results.append({"dataset": name, "split": split, "n_train": len(p.y), "n_test": len(p.y_test),
                            "d": p.X.shape[1], "M": int(M), "batch_size": paper_batch_size(len(p.y)),
                            "traces": {m: t.as_dict() for m, t in traces.items()},
                            # the orderings compare all five methods; a run of some has none to check
                            "claims": claims(name, traces, args.as_authors) if set(methods) == set(METHODS) else []})
    return {"commit": commit, "settings": {k: v for k, v in vars(args).items() if k not in ("json", "figure")},
            "machine": {"platform": platform.platform(), "cpus": os.cpu_count(), "load": os.getloadavg()},
            "results": results, "first_iterations": first_iterations(results, args.as_authors)}


def table(result: dict[str, Any]) -> str:
    lines = ["| data set | split | method | first acc. (s) | final acc. (s) |", "|---|---:|---|---|---|"]
    for r in result["results"]:
        for m, t in r["traces"].items():
            lines.append(f"| {r['dataset']} (n = {r['n_train']}, d = {r['d']}, M = {r['M']}) | {r['split']} | {m} "
                         f"| {t['accuracy'][0]:.3f} ({t['seconds'][0]:.1f}) | {t['accuracy'][-1]:.3f} ({t['seconds'][-1]:.1f}) |")
    lines += ["", "| data set | split | paper's claim | holds |", "|---|---:|---|---|"]
    for r in result["results"]:
        for c in r["claims"]:
            lines.append(f"| {r['dataset']} | {r['split']} | {c['claim']} | {'yes' if c['holds'] else 'no'} |")
    lines += ["", "| data set | lead, paired over the splits | mean ± SE | 95 % t interval | against | verdict |",
              "|---|---|---|---|---:|---|"]
    for name, entry in result.get("first_iterations", {}).items():
        leads = [(f"{m}: final - first accuracy", v) for m, v in entry.get("drop", {}).items()]
        leads += [(f"vi-jj-hybrid - {m}: first accuracy", v) for m, v in entry.get("hybrid_lead", {}).items()]
        for label, v in leads:
            lines.append(f"| {name} | {label} | {v['mean']:.4f} ± {v['se']:.4f} | [{v['low']:.4f}, {v['high']:.4f}] "
                         f"| {v['margin']} | {v['verdict']} |")
    return "\n".join(lines) + "\n"


def _mean_se(values: list[float]) -> str:
    """'mean ± SE' over the splits (SE: the sample SD over sqrt(n)), as the papers page reads a cell."""
    v = np.asarray(values, dtype=float)
    return f"{v.mean():.4f} ± {v.std(ddof=1) / np.sqrt(v.size):.4f}"


def kept_record(paths: list[str]) -> dict[str, Any]:
    """The results record of kept runs: a table per (data set, training rows, M), each method's final test
    accuracy, NLL and ECE over the splits, the splits per table in ``settings.splits``.  Each table comes from one
    kept run, so its numbers share a commit; a table two runs measured, or one split alone (no SE), is refused.  A
    run with another optimiser or kernel than gpal's own (``--scheme``, ``--kernel``) names its tables so
    (``magic_n15216_m50_scheme_gplib_kernel_se_iso_plus_noise``), beside gpal's."""
    from result_records import make_record, make_table

    tables, splits, commands, commits, source = [], {}, [], [], []
    for path in paths:
        kept = json.loads(Path(path).read_text(encoding="utf-8"))
        if not isinstance(kept, dict) or not {"commit", "settings", "results"} <= set(kept):
            raise ValueError(f"{path}: not a kept run of this script with its commit (keys 'commit', 'settings', "
                             f"'results'); rerun it at a committed source")
        settings = kept["settings"]
        scheme, kernel = settings.get("scheme", "gpal"), settings.get("kernel")
        tag = ("" if scheme == "gpal" else f"_scheme_{scheme}") + ("" if kernel is None else f"_kernel_{kernel}")
        cells: dict[str, list] = {}
        for r in kept["results"]:
            cells.setdefault(f"{r['dataset']}_n{r['n_train']}_m{r['M']}{tag}", []).append(r)
        for caption, runs in cells.items():
            if caption in splits or len(runs) < 2:
                raise ValueError(f"{path}: table {caption} " + ("is measured by two kept runs" if caption in splits
                                 else "has one split: no SE") + "; each table needs one run of two or more splits")
            splits[caption] = len(runs)
            rows = [[m] + [_mean_se([r["traces"][m][k][-1] for r in runs]) for k in ("accuracy", "nll", "ece")]
                    for m in runs[0]["traces"]]
            tables.append(make_table(["method", "gpal accuracy", "gpal NLL", "gpal ECE"], rows, "lrrr", caption))
        svi = f" --svi-epochs {settings['svi_epochs']}" if "svi" in settings["methods"].split(",") else ""
        chosen = ("" if scheme == "gpal" else f" --scheme {scheme}") + ("" if kernel is None else f" --kernel {kernel}")
        commands.append(f"PYTHONPATH=$PWD python lab/studies/bench_paper002_curves.py --datasets "
                        f"{settings['datasets']} --iters {settings['iters']}{svi} --splits {settings['splits']} "
                        f"--seed {settings['seed']} --methods {settings['methods']}{chosen} --json {path}")
        commits.append(kept["commit"])
        source.append(path)
    return make_record("Paper 002 (Izmailov & Kropotov): final test accuracy, NLL and ECE per data set, n and M",
                       " && ".join(commands), ", ".join(dict.fromkeys(commits)), tables,
                       {"splits": splits, "iters": "as each command", "kept": source}, ", ".join(source),
                       workflow="lab/studies/paper002_curves.yaml")


def figure(result: dict[str, Any], path: str) -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    runs = [r for r in result["results"] if r["split"] == 0]
    fig = Figure(figsize=(5 * len(runs), 3.6), layout="constrained")
    FigureCanvasAgg(fig)
    for ax, r in zip(fig.subplots(1, len(runs), squeeze=False)[0], runs):
        for m, t in r["traces"].items():
            ax.plot(t["seconds"], t["accuracy"], marker=".", label=m)
        ax.set(xscale="log", xlabel="training seconds (evaluation excluded)", ylabel="test accuracy",
               title=f"{r['dataset']}, n = {r['n_train']}, d = {r['d']}, m = {r['M']}")
        ax.grid(alpha=0.3)
        ax.legend()
    fig.savefig(path, dpi=120)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--datasets", default="german:50,magic:100",
                   help="NAME:M or NAME:M:ROWS (ROWS: a seeded stratified subsample), comma-separated (default german:50,magic:100)")
    p.add_argument("--iters", type=int, default=50, help="outer iterations of the vi methods (default 50)")
    p.add_argument("--svi-epochs", type=int, default=50, help="svi epochs (default 50)")
    p.add_argument("--splits", type=int, default=1, help="80/20 splits per data set (default 1)")
    p.add_argument("--seed", type=int, default=0, help="split s runs at seed + s (default 0)")
    p.add_argument("--methods", default=",".join(METHODS),
                   help=f"comma-separated among {','.join(METHODS)} (default all; the orderings need all)")
    p.add_argument("--as-authors", action="store_true",
                   help="the vi methods as gplib runs and records them: its optimiser (scheme='gplib'), and each "
                        "trace from the start (q(u) = N(0, I)) with q one step stale (record='authors')")
    p.add_argument("--scheme", choices=("gpal", "gplib"), default="gpal",
                   help="the vi methods' optimiser: gpal's own (default) or the authors' gplib's")
    p.add_argument("--kernel", default=None, help="every method's kernel, a name of gpal.registry.KERNELS "
                   "(default SE-ARD; se_iso_plus_noise is the authors' gplib's)")
    p.add_argument("--json", help="write the commit, settings, traces and claims here")
    p.add_argument("--figure", help="write the accuracy-against-time figure (split 0) here")
    p.add_argument("--record", help="write the results record of the kept runs --kept here, run nothing")
    p.add_argument("--kept", nargs="+", default=[], help="kept --json outputs the --record is made from")
    args = p.parse_args(argv)
    if args.record or args.kept:
        if not (args.record and args.kept):
            p.error("--record and --kept go together: the record's path and the kept runs it is made from")
        record_from_kept(p, args.record, lambda: kept_record(args.kept))
        return 0
    if min(args.iters, args.svi_epochs, args.splits) < 1:
        p.error("--iters, --svi-epochs and --splits must be >= 1")
    if args.as_authors and args.scheme != "gpal":
        p.error("--as-authors runs gplib's optimiser already; leave --scheme out")
    from gpal.registry import KERNELS

    if args.kernel is not None and args.kernel not in KERNELS:
        p.error(f"--kernel: unknown {args.kernel!r}; choose among {list(KERNELS.names())}")
    unknown = sorted(set(args.methods.split(",")) - set(METHODS))
    if unknown or not args.methods:
        p.error(f"--methods: unknown {unknown or [args.methods]}; choose among {','.join(METHODS)}")
    result = run(args, run_commit(p, bool(args.json)))
    sys.stdout.write(table(result))
    if args.json:
        write_json_atomic(args.json, result, allow_nan=True)
    if args.figure:
        figure(result, args.figure)
    return 0


if __name__ == "__main__":
    sys.exit(main())

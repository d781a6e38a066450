"""Prediction's chunk size (`gpal.models.chunked.PREDICT_BUDGET`) on the main job's pool: time, page faults, bits.

Loads a finished main job's model (``gpal classify --out DIR``), builds the pool it classifies (FL16Y's unassociated
and bcu sources) and predicts it at each ``--budgets`` (log2 of the evaluations per chunk), the budgets alternated
``--repeats`` times after one call that traces.  Per call: wall and CPU seconds, minor page faults and system CPU
seconds (`resource.getrusage`); and whether the probabilities equal the first budget's bit for bit.  2^18 was chosen at
001b5bf (2^20 before) with a scratch script; this one replaced it at 65b8194 and measured the choice again:

    gpal classify --out runs/main_job --no-progress
    PYTHONPATH=$PWD python lab/studies/bench_predict_chunks.py runs/main_job --budgets 20 19 18 17 16

Its table is kept in ``lab/studies/records/predict_chunks.json``.
"""

from __future__ import annotations

import argparse
import resource
import time
import warnings

import numpy as np

from shared import keep_printed  # the script's folder, first on its path


def main(argv: list[str] | None = None) -> None:
    import gpal.models.chunked as chunked
    from gpal.catalog_jobs.model_folders import load_trained
    from gpal.catalog_jobs.prediction import DEFAULT_SELECT, selection_pool
    from gpal.catalog_jobs.selection import CatalogSelection

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", help="a finished main job's folder (gpal classify --out)")
    parser.add_argument("--budgets", type=int, nargs="+", default=[20, 18], help="log2 of the evaluations per chunk")
    parser.add_argument("--repeats", type=int, default=4)
    args = parser.parse_args(argv)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the selection's repaired and dropped rows, said by the main job already
        catalog, data = CatalogSelection().load()
        pool = selection_pool(catalog, list(DEFAULT_SELECT), data.meta["features"])
    estimator = load_trained(args.model).estimator
    estimator.predict_proba(pool)  # traced once: every budget runs the same compiled function
    calls: dict[int, list[tuple[float, float, int, float]]] = {b: [] for b in args.budgets}
    first: dict[int, np.ndarray] = {}
    for _ in range(args.repeats):
        for budget in args.budgets:
            chunked.PREDICT_BUDGET = 2 ** budget
            before = resource.getrusage(resource.RUSAGE_SELF)
            wall, cpu = time.perf_counter(), time.process_time()
            proba = estimator.predict_proba(pool)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            after = resource.getrusage(resource.RUSAGE_SELF)
            calls[budget].append((wall, cpu, after.ru_minflt - before.ru_minflt, after.ru_stime - before.ru_stime))
            first.setdefault(budget, proba)
    with keep_printed("predict_chunks", __file__, argv):  # cited by gpal.models.chunked and docs/benchmarks.md
        _print_table(pool.n_samples, args.repeats, args.budgets[0], calls, first)


def _print_table(sources: int, repeats: int, reference_budget: int, calls: dict, first: dict) -> None:
    reference = first[reference_budget]
    print(f"{sources} sources, {repeats} calls per budget (min-max)")
    print("| budget | wall s | CPU s | minor page faults | system CPU s | same bits as 2^%d |" % reference_budget)
    print("|---|---|---|---|---|---|")
    for budget, rows in calls.items():
        cols = list(zip(*rows))
        cells = [f"{min(c):.2f}-{max(c):.2f}" for c in (cols[0], cols[1])] + [f"{min(cols[2])}-{max(cols[2])}",
                                                                             f"{min(cols[3]):.2f}-{max(cols[3]):.2f}"]
        print(f"| 2^{budget} | " + " | ".join(cells) + f" | {np.array_equal(first[budget], reference)} |")


if __name__ == "__main__":
    main()

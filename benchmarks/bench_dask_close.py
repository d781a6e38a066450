"""How long a ``local-dask`` executor takes to close once its workers have loaded gpal's models.

Starts ``make_executor("local-dask", n_workers=2)``, runs two rounds of tasks that import `gpal.models.svgp` on its
workers (through the executor, as gpal's runs do), then times ``close()``, ``--repeats`` clusters one after the
other.  A worker's exit used to walk TensorFlow's objects in its last garbage collection; session 29
(docs/performance.md) froze them after the first task and measured it with this script at each commit:

    PYTHONPATH=$PWD python benchmarks/bench_dask_close.py --repeats 2
"""

from __future__ import annotations

import argparse
import importlib
import time


def main(argv: list[str] | None = None) -> None:
    from gpal.runs.executors import make_executor

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args(argv)
    for _ in range(args.repeats):
        executor = make_executor("local-dask", n_workers=2)
        for _round in range(2):
            list(executor.map(importlib.import_module, [("gpal.models.svgp",)] * 4, progress=False))
        start = time.perf_counter()
        executor.close()
        print(f"close: {time.perf_counter() - start:.2f} s", flush=True)


if __name__ == "__main__":
    main()

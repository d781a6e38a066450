#!/usr/bin/env python
"""Active-learning curves in lock step (``loop.models_per_batch``) against one curve at a time.

Runs the waveform active-learning workflow twice in fresh processes, the same reduced grid
each time: once with ``loop.models_per_batch=1`` (every curve its own loop, as before) and
once with ``--per-batch K`` (the curves of a method in lock step, each query's retrainings one
batched fit).  Records wall and CPU seconds of each run and how far the two runs' curves agree:
the batched step equals one at a time up to rounding, which an acquisition's ranking may
amplify into a different query, so the share of identical queries is reported too.

    .venv/bin/python benchmarks/bench_active_batched.py --json docs/studies/active_batched.json
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
GRID = ["repetitions=4", "methods=[MGP, NIMGP]", "data.noise_levels=[0, 0.5]", "strategies=[entropy, random]",
        "loop.n_queries=5", "loop.retrain_epochs=50", "training.epochs=100", "training.n_samples=50"]


def run(out: Path, per_batch: int, overrides: list[str]) -> dict[str, float]:
    """One workflow run in its own process; its wall and CPU seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([str(Path(sys.executable).parent / "gpal"), "workflow", str(ROOT / "workflows" / "waveform_active_learning.yaml"),
                    "--out", str(out), "--no-progress", *[a for o in overrides + [f"loop.models_per_batch={per_batch}"]
                                                     for a in ("--set", o)]], check=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {"wall_s": time.perf_counter() - start,
            "cpu_s": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)}


def agreement(a: Path, b: Path) -> dict[str, float]:
    """Largest metric difference between two runs' curves and the share of identical queries."""
    ca, cb = (pd.read_csv(p / "curves.csv") for p in (a, b))
    same = 0
    total = 0
    for unit in sorted((a / "units").rglob("rep_*.json")):
        qa = json.loads(unit.read_text())["queried"]
        qb = json.loads((b / unit.relative_to(a)).read_text())["queried"]
        same += sum(x == y for x, y in zip(qa, qb))
        total += len(qa)
    return {"max_abs_metric_difference": float(np.max(np.abs(ca[["error", "nll", "ece"]].to_numpy()
                                                             - cb[["error", "nll", "ece"]].to_numpy()))),
            "identical_queries": same, "queries": total}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--per-batch", type=int, default=16)
    parser.add_argument("--set", action="append", default=[], help="extra workflow overrides")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    overrides = GRID + args.set
    with tempfile.TemporaryDirectory() as tmp:
        alone = run(Path(tmp) / "alone", 1, overrides)
        together = run(Path(tmp) / "together", args.per_batch, overrides)
        result = {"grid": overrides, "per_batch": args.per_batch, "one_at_a_time": alone, "lock_step": together,
                  "speedup_wall": alone["wall_s"] / together["wall_s"], "speedup_cpu": alone["cpu_s"] / together["cpu_s"],
                  **agreement(Path(tmp) / "alone", Path(tmp) / "together")}
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()

"""What the bcu blazar-type split costs the main job: ``gpal classify --bcu-types 4lac`` against ``none``, CPU seconds.

Runs the main job (FL16Y, its defaults) ``--pairs`` times with each setting, the two alternated, each in a fresh
folder, each a process of its own; a run's CPU seconds are its process's user + system time
(`resource.RUSAGE_CHILDREN`), its wall seconds the command's.  Prints each pair and the mean of the per-pair ratios
of CPU seconds with its 95% paired t interval; the split would be the default only if it cost under 10% more.

    python lab/studies/bench_bcu_split_cost.py --pairs 3

Its output is kept in ``lab/studies/records/bcu_split_cost.json``.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import tempfile
import time
from pathlib import Path

from shared import keep_printed, paired_t  # the script's folder, first on its path

SETTINGS = ("none", "4lac")


def timed_classify(bcu_types: str, out: Path) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one ``gpal classify --bcu-types`` process writing ``out``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.perf_counter()
    subprocess.run(["gpal", "classify", "--bcu-types", bcu_types, "--out", str(out), "--no-progress"], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - wall
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, wall


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=3, help="runs of each setting, alternated (at least 2)")
    args = parser.parse_args(argv)
    if args.pairs < 2:
        parser.error(f"--pairs must be at least 2 for a paired interval; got {args.pairs}")
    runs: dict[str, list[tuple[float, float]]] = {s: [] for s in SETTINGS}
    loads = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory(prefix="bcu_split_cost_") as folder:
        for k in range(args.pairs):
            for setting in SETTINGS if k % 2 == 0 else SETTINGS[::-1]:
                runs[setting].append(timed_classify(setting, Path(folder) / f"{setting}_{k}"))
                print(f"# pair {k + 1}/{args.pairs}, --bcu-types {setting}: {runs[setting][-1][0]:.1f} CPU s",
                      flush=True)
    loads.append(os.getloadavg()[0])
    with keep_printed("bcu_split_cost", __file__, argv):
        print(f"gpal classify on FL16Y, --bcu-types none against 4lac, {args.pairs} pairs alternated, each in a "
              f"fresh folder; 1-minute load {loads[0]:.1f} at the start, {loads[1]:.1f} at the end")
        print("| pair | none: CPU s | 4lac: CPU s | ratio | none: wall s | 4lac: wall s |")
        print("|---|---|---|---|---|---|")
        ratios = []
        for k, ((cpu_n, wall_n), (cpu_b, wall_b)) in enumerate(zip(runs["none"], runs["4lac"])):
            ratios.append(cpu_b / cpu_n)
            print(f"| {k + 1} | {cpu_n:.1f} | {cpu_b:.1f} | {ratios[-1]:.3f} | {wall_n:.1f} | {wall_b:.1f} |")
        mean, _, low, high = paired_t(ratios)
        print(f"CPU ratio 4lac / none: {mean:.3f} [{low:.3f}, {high:.3f}] (95% t interval over pairs)")


if __name__ == "__main__":
    main()

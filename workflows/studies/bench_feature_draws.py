"""How many Monte Carlo draws the features need: error bars at N draws against a many-draw reference.

Builds the default release's labelled selection with the default features (`CatalogSelection()`)
at each ``--draws`` and at ``--reference`` draws, and prints per Monte Carlo feature the median and
the largest relative error of the error bars (standard deviations) against the reference, with the
CPU seconds each build took.  At 3c19b05 it weighed 512 draws against 2048 and 2048 stayed
(`gpal.catalogs.features.MC_DRAWS`; its error against a many-draw reference: docs/catalogs.md, "The model"):

    PYTHONPATH=$PWD python workflows/studies/bench_feature_draws.py --reference 16384 --draws 512 1024 2048
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def _build(draws: int):
    import gpal.catalogs.features as features
    from gpal.catalog_jobs.selection import CatalogSelection

    features.MC_DRAWS = draws  # a study knob: every source at this many draws
    c0 = time.process_time()  # the blocks run in threads: process CPU, not the main thread's
    _, data = CatalogSelection().load()
    return data, time.process_time() - c0


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", type=int, default=16384, help="draws of the reference (a power of 2)")
    parser.add_argument("--draws", type=int, nargs="+", default=[512, 1024, 2048], help="draws to weigh (powers of 2)")
    args = parser.parse_args(argv)
    reference, cpu = _build(args.reference)
    sd_ref = np.sqrt(reference.X_var)
    noisy = [j for j in range(sd_ref.shape[1]) if np.nanmax(sd_ref[:, j]) > 0]
    print(f"reference: {args.reference} draws, {cpu:.1f} CPU s; features with error bars: "
          f"{[reference.feature_names[j] for j in noisy]}")
    print("| draws | CPU s | " + " | ".join(f"{reference.feature_names[j]} median / max" for j in noisy) + " |")
    print("|---" * (len(noisy) + 2) + "|")
    for draws in args.draws:
        data, cpu = _build(draws)
        with np.errstate(divide="ignore", invalid="ignore"):
            rel = np.abs(np.sqrt(data.X_var) - sd_ref) / np.where(sd_ref > 0, sd_ref, np.nan)
        cells = [f"{np.nanmedian(rel[:, j]):.4f} / {np.nanmax(rel[:, j]):.3f}" for j in noisy]
        print(f"| {draws} | {cpu:.2f} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()

"""Paper 001's 2-D problems: one method minus another on the same problems of a synthetic run, per setting, paired
by problem (mean and 95 % t interval of the test-NLL difference), for the claims the workflow's unpaired record
leaves open; or, with one method, its mean test NLL, error and learned input variance per setting (a run of a
method alone, beside the record's).

    python lab/studies/paper001_synthetic_paired.py runs/papers/001_synthetic_2d_eq2 NIMGP-FO MGP
    python lab/studies/paper001_synthetic_paired.py runs/papers/001_synthetic_2d_nn_free NIMGP-NN

One JSON line a setting, kept in ``lab/studies/records/paper001_synthetic_paired.json``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from shared import keep_printed  # the script's folder, first on its path


def paired(run: Path, a: str, b: str) -> list[dict]:
    """``a`` minus ``b``'s test NLL per (mode, noise) setting of the run's results.csv, paired by repetition."""
    frame = pd.read_csv(run / "results.csv")
    rows = []
    for (mode, noise), group in frame.groupby(["mode", "noise"]):
        nll = group.pivot_table(index="repetition", columns="method", values="nll")
        if not {a, b} <= set(nll.columns):
            continue
        d = (nll[a] - nll[b]).dropna().to_numpy()
        if len(d) < 2:
            raise ValueError(f"{run}: {mode}/{noise:g} has {len(d)} problem(s) with both {a} and {b}; need 2 or more")
        mean, se = float(d.mean()), float(d.std(ddof=1) / np.sqrt(len(d)))
        t = float(stats.t.ppf(0.975, len(d) - 1))
        rows.append({"setting": f"{mode}/{noise:g}", "a": a, "b": b, "problems": len(d), "a_mean": float(nll[a].mean()),
                     "b_mean": float(nll[b].mean()), "mean": mean, "se": se, "low": mean - t * se, "high": mean + t * se})
    if not rows:
        raise ValueError(f"{run}: no setting holds both {a!r} and {b!r}")
    return rows


def means(run: Path, method: str) -> list[dict]:
    """``method``'s mean test NLL, error and learned input variance (the mean over features and problems; None where
    the variance was given) per (mode, noise) setting of the run's results.csv."""
    frame = pd.read_csv(run / "results.csv")
    frame = frame[frame["method"] == method]
    if frame.empty:
        raise ValueError(f"{run}: no fits of {method!r}")
    return [{"setting": f"{mode}/{noise:g}", "method": method, "problems": len(g), "nll": float(g["nll"].mean()),
             "error": float(g["error"].mean()),
             "learned_variance": None if g["learned_variance"].isna().all() else float(g["learned_variance"].mean())}
            for (mode, noise), g in frame.groupby(["mode", "noise"])]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("run", type=Path, help="a synthetic_2d run folder (its results.csv)")
    parser.add_argument("a")
    parser.add_argument("b", nargs="?", help="the method set against a (none: a's means alone)")
    args = parser.parse_args(argv)
    with keep_printed("paper001_synthetic_paired", __file__, argv):
        for row in (means(args.run, args.a) if args.b is None else paired(args.run, args.a, args.b)):
            print(json.dumps(row))


if __name__ == "__main__":
    main()

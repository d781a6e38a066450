"""Paper 001, Fig. 7: does NIMGP-NN's test error fall further under entropy selection than MGP's?

Fig. 7 plots, per method and injected noise, the test error's reduction from the initial fit after
each added label (entropy selection), and sec. 5.5 reads it as "the reduction is higher for NIMGP-NN
than for the other methods, and the difference is bigger ... as we increase the variance of the
input noise".  In gpal's waveform study every method of a repetition starts from the same split and
initial labels, so the two methods' reductions are paired by repetition: the per-repetition
difference NIMGP-NN minus MGP carries no split-to-split noise, and its mean gets a Student t
interval over the repetitions (`gpal.workflows.verdicts.interval`, n - 1 degrees of freedom).

    python workflows/studies/paper001_al_gain.py workflows/studies/records/waveform_al_paired_curves.csv --after 40
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np
import pandas as pd

from gpal.workflows.verdicts import interval

METHODS = ("MGP", "NIMGP-NN")


def reductions(curves: pd.DataFrame, after: int, strategy: str = "entropy") -> pd.DataFrame:
    """Per method, noise and repetition: test error at the initial fit minus after ``after`` labels."""
    missing = {"method", "noise", "strategy", "repetition", "n_added", "error"} - set(curves.columns)
    if missing:
        raise ValueError(f"the curves lack the columns {sorted(missing)}; expected the waveform study's "
                         "method, noise, strategy, repetition, n_added, error")
    rows = curves[curves["strategy"] == strategy].set_index(["method", "noise", "repetition", "n_added"])["error"]
    start = rows.xs(0, level="n_added")
    try:
        end = rows.xs(after, level="n_added")
    except KeyError:
        raise ValueError(f"--after {after}: no curve reaches {after} added labels; the most is "
                         f"{int(curves['n_added'].max())}") from None
    return (start - end).rename("reduction").reset_index()


def paired_gaps(curves: pd.DataFrame, after: int) -> pd.DataFrame:
    """Per noise level: mean NIMGP-NN minus MGP reduction, its SE, 95 % t interval and the repetitions."""
    wide = reductions(curves, after).pivot_table(index=["noise", "repetition"], columns="method", values="reduction")
    absent = [m for m in METHODS if m not in wide.columns]
    if absent:
        raise ValueError(f"the curves hold no {absent} rows; expected both of {list(METHODS)}")
    gap = (wide["NIMGP-NN"] - wide["MGP"]).dropna()
    out = []
    for noise, d in gap.groupby(level="noise"):
        n = len(d)
        se = float(np.std(d, ddof=1) / math.sqrt(n))
        low, high = interval(float(d.mean()), se, n - 1)
        out.append({"noise": noise, "MGP": float(wide.loc[noise, "MGP"].mean()),
                    "NIMGP-NN": float(wide.loc[noise, "NIMGP-NN"].mean()), "gap": float(d.mean()), "se": se,
                    "low": low, "high": high, "n": n})
    return pd.DataFrame(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("curves", type=Path, help="the study's per-repetition curves (CSV)")
    parser.add_argument("--after", type=int, default=40, help="labels added (default 40)")
    args = parser.parse_args()
    print(paired_gaps(pd.read_csv(args.curves), args.after).to_string(index=False, float_format="%.4f"))


if __name__ == "__main__":
    main()

"""Paper 001, Figs. 6-7: is NIMGP-NN's test error lower, and does it fall further, than MGP's?

Fig. 7 plots, per method and injected noise, the test error's reduction from the initial fit after
each added label (entropy selection), and sec. 5.5 reads it as "the reduction is higher for NIMGP-NN
than for the other methods, and the difference is bigger ... as we increase the variance of the
input noise".  In gpal's waveform study every method of a repetition starts from the same split and
initial labels, so the two methods' reductions are paired by repetition: the per-repetition
difference NIMGP-NN minus MGP carries no split-to-split noise, and its mean gets a Student t
interval over the repetitions (`labkit.verdicts.interval`, n - 1 degrees of freedom).
Sec. 5.5 also names NIMGP-NN "the best performing method" on Fig. 6's curves; ``--errors`` gives the
paired difference of the test errors themselves after ``--after`` labels, per selection strategy.

    python lab/studies/paper001_al_gain.py lab/studies/records/waveform_al_paired_curves.csv --after 40
    python lab/studies/paper001_al_gain.py lab/studies/records/waveform_al_paired_curves.csv --errors
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from shared import keep_printed, paired_t  # the script's folder, first on its path

METHODS = ("MGP", "NIMGP-NN")


def _need_columns(curves: pd.DataFrame) -> None:
    missing = {"method", "noise", "strategy", "repetition", "n_added", "error"} - set(curves.columns)
    if missing:
        raise ValueError(f"the curves lack the columns {sorted(missing)}; expected the waveform study's "
                         "method, noise, strategy, repetition, n_added, error")


def _after(curves: pd.DataFrame, after: int) -> pd.DataFrame:
    rows = curves[curves["n_added"] == after]
    if rows.empty:
        raise ValueError(f"--after {after}: no curve reaches {after} added labels; the most is "
                         f"{int(curves['n_added'].max())}")
    return rows


def _paired(wide: pd.DataFrame, by: list[str]) -> list[dict]:
    """Per group of ``by``: mean NIMGP-NN minus MGP over the repetitions, its SE and 95 % t interval."""
    absent = [m for m in METHODS if m not in wide.columns]
    if absent:
        raise ValueError(f"the curves hold no {absent} rows; expected both of {list(METHODS)}")
    gap = (wide["NIMGP-NN"] - wide["MGP"]).dropna()
    out = []
    for key, d in gap.groupby(level=by):
        mean, se, low, high = paired_t(d)
        key = key if isinstance(key, tuple) else (key,)
        out.append({**dict(zip(by, key)), "MGP": float(wide.loc[key, "MGP"].mean()),
                    "NIMGP-NN": float(wide.loc[key, "NIMGP-NN"].mean()), "gap": mean, "se": se,
                    "low": low, "high": high, "n": len(d)})
    return out


def reductions(curves: pd.DataFrame, after: int, strategy: str = "entropy") -> pd.DataFrame:
    """Per method, noise and repetition: test error at the initial fit minus after ``after`` labels."""
    _need_columns(curves)
    _after(curves, after)
    rows = curves[curves["strategy"] == strategy].set_index(["method", "noise", "repetition", "n_added"])["error"]
    start = rows.xs(0, level="n_added")
    end = rows.xs(after, level="n_added")
    return (start - end).rename("reduction").reset_index()


def paired_gaps(curves: pd.DataFrame, after: int) -> pd.DataFrame:
    """Per noise level: mean NIMGP-NN minus MGP reduction, its SE, 95 % t interval and the repetitions."""
    wide = reductions(curves, after).pivot_table(index=["noise", "repetition"], columns="method", values="reduction")
    return pd.DataFrame(_paired(wide, ["noise"]))


def paired_errors(curves: pd.DataFrame, after: int) -> pd.DataFrame:
    """Per strategy and noise level: mean NIMGP-NN minus MGP test error after ``after`` labels, SE, 95 % t interval."""
    _need_columns(curves)
    wide = _after(curves, after).pivot_table(index=["strategy", "noise", "repetition"], columns="method",
                                             values="error")
    return pd.DataFrame(_paired(wide, ["strategy", "noise"]))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("curves", type=Path, help="the study's per-repetition curves (CSV)")
    parser.add_argument("--after", type=int, default=40, help="labels added (default 40)")
    parser.add_argument("--errors", action="store_true",
                        help="the test errors after --after labels, per strategy, not their fall from the start")
    args = parser.parse_args(argv)
    table = (paired_errors if args.errors else paired_gaps)(pd.read_csv(args.curves), args.after)
    with keep_printed("al_gain", __file__, argv):  # docs/papers.md cites these rows
        print(table.to_string(index=False, float_format="%.4f"))


if __name__ == "__main__":
    main()

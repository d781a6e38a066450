"""Paired comparison of active-learning strategies against a baseline strategy.

Studies that compare query strategies give every strategy of a repetition the same
split, initial set and initial model, so the per-repetition difference of a strategy
to the baseline carries no split-to-split noise.  Curves are tidy frames with columns
``strategy``, ``repetition``, ``n_observed`` (labels added) and one column per metric;
accuracy is the higher-is-better metric, every other one is lower-is-better.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd

__all__ = [
    "area_under_curve", "difference_table", "draw_differences", "draw_strategy_curves", "higher_is_better",
    "paired_differences", "strategy_name", "strategy_style",
]

#: Okabe-Ito colours (distinguishable in colour-blind vision and in greyscale print); the baseline is black.
_COLOURS = {"entropy": "#0072B2", "bald": "#D55E00", "margin": "#009E73", "least_confidence": "#CC79A7"}
_NAMES = {"bald": "BALD", "least_confidence": "least confidence"}
_HIGHER_IS_BETTER = {"accuracy"}


def higher_is_better(metric: str) -> bool:
    """Whether a larger value of ``metric`` is better (accuracy) or worse (error, NLL, ECE)."""
    return metric in _HIGHER_IS_BETTER


def strategy_name(strategy: str) -> str:
    """How a strategy is written in tables and legends."""
    return _NAMES.get(strategy, strategy)


def strategy_style(strategy: str, baseline: str) -> dict[str, Any]:
    """Line colour and style: the baseline dashed black, each other strategy its own colour."""
    if strategy == baseline:
        return {"color": "black", "ls": "--"}
    return {"color": _COLOURS.get(strategy, "0.4"), "ls": "-"}


def paired_differences(curves: pd.DataFrame, metric: str, strategy: str, baseline: str) -> pd.DataFrame:
    """Per budget: mean and SE over repetitions of (strategy - baseline), each repetition paired with itself."""
    from gpal.evaluation.metrics import mean_se

    wide = curves.pivot_table(index=["repetition", "n_observed"], columns="strategy", values=metric)
    diff = (wide[strategy] - wide[baseline]).dropna().unstack("n_observed")
    rows = [{"n_observed": b, "mean": m, "se": s, "n": int(col.dropna().size)}
            for b, col in diff.items() for m, s in [mean_se(col.dropna().to_numpy())]]
    return pd.DataFrame(rows)


def area_under_curve(curves: pd.DataFrame, metric: str) -> pd.Series:
    """Per (strategy, repetition): the metric averaged over the budget (trapezoid area / budget)."""
    def area(frame: pd.DataFrame) -> float:
        frame = frame.sort_values("n_observed")
        x, y = frame["n_observed"].to_numpy(float), frame[metric].to_numpy(float)
        return float(np.sum((y[1:] + y[:-1]) / 2 * np.diff(x)) / (x[-1] - x[0]))

    return curves.groupby(["strategy", "repetition"])[["n_observed", metric]].apply(area)


def _budgets(observed: Sequence[int]) -> list[int]:
    """The budgets shown in a table: about a quarter, half and all of the curve."""
    observed = np.sort(np.asarray(observed))
    picks = [observed[np.argmin(np.abs(observed - q * observed[-1]))] for q in (0.25, 0.5, 1.0)]
    return [int(b) for b in dict.fromkeys(picks) if b > 0]


def difference_table(curves: pd.DataFrame, strategies: Sequence[str], baseline: str,
                     metrics: dict[str, str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Shown table (mean ± SE of paired differences at a few budgets, 95% t-interval of the area difference)
    and its full data (every budget).  ``metrics`` maps a metric column to its label."""
    from scipy import stats

    from gpal.evaluation.metrics import format_mean_se, mean_se

    budgets = _budgets(curves["n_observed"].unique())
    areas = {metric: area_under_curve(curves, metric).unstack("strategy") for metric in metrics}
    shown, data = [], []
    for strategy in (s for s in strategies if s != baseline):
        for metric, label in metrics.items():
            diff = paired_differences(curves, metric, strategy, baseline)
            data.append(diff.assign(strategy=strategy, baseline=baseline, metric=metric))
            pair = areas[metric][[strategy, baseline]].dropna()
            d = (pair[strategy] - pair[baseline]).to_numpy()
            m, se = mean_se(d)
            half = stats.t.ppf(0.975, d.size - 1) * se if d.size > 1 else np.nan
            better = int(np.sum(d > 0) if higher_is_better(metric) else np.sum(d < 0))
            row = {"difference": f"{strategy_name(strategy)} - {strategy_name(baseline)}", "metric": label}
            for b in budgets:
                at = diff.set_index("n_observed").loc[b]
                row[f"at {b} observed"] = format_mean_se(at["mean"], at["se"])
            row["area (mean over budget)"] = format_mean_se(m, se)
            row["area 95% interval"] = f"[{m - half:.3f}, {m + half:.3f}]"
            row["repetitions better"] = f"{better}/{d.size}"
            shown.append(row)
    return pd.DataFrame(shown), pd.concat(data, ignore_index=True)


def draw_strategy_curves(ax: Any, curves: pd.DataFrame, strategies: Sequence[str], baseline: str, metric: str,
                         n_marked: int = 11) -> None:
    """Mean over repetitions per strategy against labels added; SE as narrow bars at ``n_marked`` budgets.

    Bars at a few budgets, nudged apart per strategy, keep three strategies legible
    in print where overlapping shaded bands would not be.
    """
    from gpal.evaluation.metrics import mean_se

    budgets = np.sort(curves["n_observed"].unique())
    marked = np.isin(budgets, budgets[np.unique(np.linspace(0, len(budgets) - 1, min(len(budgets), n_marked))
                                                 .round().astype(int))])
    nudge = 0.012 * (budgets[-1] - budgets[0] or 1)
    for k, strategy in enumerate(strategies):
        frame = curves[curves.strategy == strategy]
        if frame.empty:
            continue
        mean, se = np.array([mean_se(frame.loc[frame.n_observed == b, metric].to_numpy()) for b in budgets]).T
        style = strategy_style(strategy, baseline)
        ax.plot(budgets, mean, lw=1.5, label=strategy_name(strategy), **style)
        ax.errorbar(budgets[marked] + (k - (len(strategies) - 1) / 2) * nudge, mean[marked],
                    yerr=np.nan_to_num(se[marked]), fmt="none", ecolor=style["color"], elinewidth=0.9, capsize=2)
    ax.grid(alpha=0.3)


def draw_differences(ax: Any, curves: pd.DataFrame, strategies: Sequence[str], baseline: str, metric: str) -> None:
    """(strategy - baseline) mean ± SE against labels added, for every strategy but the baseline, and zero."""
    ax.axhline(0, color="black", lw=0.8)
    for strategy in (s for s in strategies if s != baseline):
        d = paired_differences(curves, metric, strategy, baseline)
        colour = strategy_style(strategy, baseline)["color"]
        se = d["se"].fillna(0).to_numpy()
        ax.fill_between(d["n_observed"], d["mean"] - se, d["mean"] + se, color=colour, alpha=0.22, lw=0)
        ax.plot(d["n_observed"], d["mean"], color=colour, lw=1.5,
                label=f"{strategy_name(strategy)} − {strategy_name(baseline)}")
    ax.grid(alpha=0.3)

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

from gpal.evaluation.metrics import format_mean_se, mean_se

__all__ = [
    "area_under_curve", "difference_table", "draw_differences", "draw_strategy_curves", "higher_is_better",
    "paired_differences", "strategy_name", "strategy_style",
]

#: Okabe-Ito colours (distinguishable in colour-blind vision and in greyscale print); the baseline is black.
_COLOURS = {"entropy": "#0072B2", "bald": "#D55E00", "margin": "#009E73", "least_confidence": "#CC79A7",
            "epig": "#E69F00", "discovery": "#56B4E9"}
_NAMES = {"bald": "BALD", "least_confidence": "least confidence", "epig": "EPIG"}
#: Strategy modifiers (``entropy+balance``): how they are written and drawn.
_MODIFIER_NAMES = {"balance": "balanced", "stochastic": "stochastic"}
_MODIFIER_LINES = {"balance": ":", "stochastic": "-."}
_HIGHER_IS_BETTER = {"accuracy"}


def higher_is_better(metric: str) -> bool:
    """Whether a larger value of ``metric`` is better (accuracy) or worse (error, NLL, ECE)."""
    return metric in _HIGHER_IS_BETTER


def strategy_name(strategy: str) -> str:
    """How a strategy (``name`` or ``name+modifier+...``) is written in tables and legends."""
    name, *mods = strategy.split("+")
    return ", ".join([_NAMES.get(name, name), *(_MODIFIER_NAMES.get(m, m) for m in mods)])


def strategy_style(strategy: str, baseline: str) -> dict[str, Any]:
    """Line colour and style: the baseline dashed black, each acquisition its own colour, a modifier its own line."""
    if strategy == baseline:
        return {"color": "black", "ls": "--"}
    name, *mods = strategy.split("+")
    return {"color": _COLOURS.get(name, "0.4"), "ls": _MODIFIER_LINES.get(mods[-1], "-") if mods else "-"}


def paired_differences(curves: pd.DataFrame, metric: str, strategy: str, baseline: str) -> pd.DataFrame:
    """Per budget: mean and SE over repetitions of (strategy - baseline), each repetition paired with itself."""
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


def _t_interval(mean: float, se: float, n: int) -> tuple[float, float]:
    """The 95% t-interval of a mean of ``n`` paired differences with standard error ``se``."""
    from scipy import stats

    half = stats.t.ppf(0.975, n - 1) * se if n > 1 else np.nan
    return mean - half, mean + half


def difference_table(curves: pd.DataFrame, strategies: Sequence[str], baseline: str,
                     metrics: dict[str, str], budgets: Sequence[int] | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Shown table (paired differences at a few budgets, 95% t-interval of the area difference) and its full
    data (every budget).  ``metrics`` maps a metric column to its label.  ``budgets`` (default: about a
    quarter, half and all of the curve) are shown as mean ± SE, or, when given, with their 95% t-interval."""
    with_intervals = budgets is not None
    observed = set(int(b) for b in curves["n_observed"].unique())
    budgets = _budgets(list(observed)) if budgets is None else [int(b) for b in budgets if int(b) in observed]
    areas = {metric: area_under_curve(curves, metric).unstack("strategy") for metric in metrics}
    shown, data = [], []
    for strategy in (s for s in strategies if s != baseline):
        for metric, label in metrics.items():
            diff = paired_differences(curves, metric, strategy, baseline)
            data.append(diff.assign(strategy=strategy, baseline=baseline, metric=metric))
            pair = areas[metric][[strategy, baseline]].dropna()
            d = (pair[strategy] - pair[baseline]).to_numpy()
            m, se = mean_se(d)
            low, high = _t_interval(m, se, d.size)
            better = int(np.sum(d > 0) if higher_is_better(metric) else np.sum(d < 0))
            row = {"difference": f"{strategy_name(strategy)} - {strategy_name(baseline)}", "metric": label}
            for b in budgets:
                at = diff.set_index("n_observed").loc[b]
                if with_intervals:
                    blow, bhigh = _t_interval(at["mean"], at["se"], int(at["n"]))
                    row[f"at {b} observed [95%]"] = f"{at['mean']:.3f} [{blow:.3f}, {bhigh:.3f}]"
                else:
                    row[f"at {b} observed"] = format_mean_se(at["mean"], at["se"])
            row["area (mean over budget)"] = format_mean_se(m, se)
            row["area 95% interval"] = f"[{low:.3f}, {high:.3f}]"
            row["repetitions better"] = f"{better}/{d.size}"
            shown.append(row)
    return pd.DataFrame(shown), pd.concat(data, ignore_index=True)


def draw_strategy_curves(ax: Any, curves: pd.DataFrame, strategies: Sequence[str], baseline: str, metric: str,
                         n_marked: int = 11) -> None:
    """Mean over repetitions per strategy against labels added; SE as narrow bars at ``n_marked`` budgets.

    Bars at a few budgets, nudged apart per strategy, keep three strategies legible
    in print where overlapping shaded bands would not be.
    """
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

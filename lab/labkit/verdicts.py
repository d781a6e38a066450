"""Verdicts on a paper's numbers beside a run's: t intervals over the repeats run.

A paper workflow's comparison (`labkit.paper_comparison`) judges every published number with this
rule, from the paper's mean, SE and repeats and gpal's mean, SE and n per setting, method and
metric, so a comparison recorded under an older rule is judged anew by this one.

A difference between two means with standard errors from few repeats is not normal: with gpal's
SE over n = 2-5 splits, a 95 % interval must use Student's t with n - 1 degrees of freedom (12.7
at n = 2, 3.18 at n = 4), not 2.  Two SEs are combined as sqrt(se_a² + se_b²) with the
Welch-Satterthwaite degrees of freedom (`combined`).  The two unit verdicts:

- a *value* (gpal's mean against the paper's): *differs* where the 95 % interval of the difference
  excludes 0; *reproduced* only where a margin is declared and the 90 % interval lies inside
  ±margin (two one-sided tests at 5 %, TOST); otherwise *not resolved* (`value_verdict`);
- an *order* (the paper's method a ahead of b): *reproduced* where gpal's 95 % interval of the
  difference lies on the paper's side of 0, *contradicted* where it lies on the other, otherwise
  *not resolved*; a lead the paper gives a size ("cannot reach a reasonable quality") is set
  against a declared margin in place of 0 (`order_verdict`).

A verdict needs an SE: a row with fewer than two repeats has none, and `value_verdict` and
`order_verdict` refuse it (ValueError); the comparison tables show such a row as "one split: no
interval".  gpal's methods run on the same splits, so combining their SEs as if independent
overstates the noise of a difference where the methods move together: the rule errs towards
"not resolved".
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any, Iterable, Mapping, Sequence

from scipy import stats

__all__ = ["LEVEL", "TOST_LEVEL", "combined", "gap", "higher_is_better", "interval", "judge_rows", "order_verdict",
           "orderings", "pair_counts", "value_verdict"]

#: Two-sided level of the intervals that resolve a difference; TOST uses the 1 - 2 (1 - LEVEL / 2) interval (90 %).
LEVEL = 0.95
#: The two-sided level whose interval inside ±margin is TOST with each one-sided test at 1 - LEVEL (0.90).
TOST_LEVEL = 1 - 2 * (1 - LEVEL)
_ONE_SPLIT = "one split: no interval"


def _finite(x: Any) -> bool:
    return x is not None and isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def combined(se_a: float, n_a: int, se_b: float | None = None, n_b: int | None = None) -> tuple[float, float]:
    """(SE, degrees of freedom) of a difference of two means: sqrt(se_a² + se_b²) with Welch-Satterthwaite's dof.

    ``se_b`` None is a number without spread (a paper's printed mean): the SE and dof are a's alone.
    """
    if n_a < 2 or (se_b is not None and (n_b is None or n_b < 2)):
        raise ValueError(f"a t interval needs two or more repeats on each side; got n = {n_a}"
                         + ("" if se_b is None else f" and {n_b}"))
    if se_b is None:
        return se_a, float(n_a - 1)
    va, vb = se_a**2, se_b**2
    se = math.sqrt(va + vb)
    if se == 0:
        return 0.0, float(min(n_a, n_b) - 1)
    return se, (va + vb) ** 2 / (va**2 / (n_a - 1) + vb**2 / (n_b - 1))


def interval(difference: float, se: float, dof: float, level: float = LEVEL) -> tuple[float, float]:
    """The two-sided ``level`` t interval of ``difference``."""
    half = float(stats.t.ppf(0.5 + level / 2, dof)) * se
    return difference - half, difference + half


def _need(where: str, n: int, se: Any) -> None:
    if n < 2 or not _finite(se):
        raise ValueError(f"{where}: a verdict needs two or more repeats and their SE; got n = {n}, SE = {se!r}")


def value_verdict(paper_mean: float, paper_se: float | None, paper_n: int, gpal_mean: float, gpal_se: float,
                  n: int, margin: float | None = None, where: str = "value") -> dict[str, Any]:
    """gpal's mean against the paper's: {difference, low, high, dof, verdict} (module docstring).

    ``paper_se`` None is a number printed without spread; ``paper_n`` is the paper's repeats.
    """
    _need(where, n, gpal_se)
    se, dof = combined(gpal_se, n, paper_se if _finite(paper_se) else None, paper_n)
    difference = gpal_mean - paper_mean
    low, high = interval(difference, se, dof)
    verdict = "differs" if low > 0 or high < 0 else "not resolved"
    if margin is not None:
        t_low, t_high = interval(difference, se, dof, TOST_LEVEL)
        if -margin < t_low and t_high < margin:
            verdict = "reproduced"
    return {"difference": difference, "low": low, "high": high, "dof": dof, "verdict": verdict}


def gap(better: Mapping[str, Any], worse: Mapping[str, Any], where: str) -> tuple[float, float, float]:
    """(gpal's mean of worse minus better's, combined SE, dof): the difference of two rows that a pair's verdict
    reads, for a rule of one's own on the same rows; ValueError where either row has fewer than two repeats."""
    _need(f"{where} ({better['method']})", better["n"], better.get("gpal_se"))
    _need(f"{where} ({worse['method']})", worse["n"], worse.get("gpal_se"))
    se, dof = combined(better["gpal_se"], better["n"], worse["gpal_se"], worse["n"])
    return worse["gpal_mean"] - better["gpal_mean"], se, dof


def order_verdict(better: Mapping[str, Any], worse: Mapping[str, Any], higher_is_better: bool,
                  where: str = "pair", margin: float = 0.0) -> str:
    """'reproduced', 'contradicted' or 'not resolved': is gpal's ``better`` ahead of ``worse`` (rows of one setting)
    by more than ``margin``?  A paper's "b cannot reach a reasonable quality" claims a lead of some size, not any
    lead: with a margin the 95 % interval of the lead is set against it rather than against 0."""
    difference, se, dof = gap(better, worse, where)
    low, high = interval(-difference if higher_is_better else difference, se, dof)  # > 0: better is ahead
    return "reproduced" if low > margin else "contradicted" if high < margin else "not resolved"


def _separated(a: Mapping[str, Any], b: Mapping[str, Any], spread: str, paper_n: int) -> bool:
    """Does the paper separate a from b: by its own 95 % interval where it prints SEs, by any difference otherwise?"""
    if spread in ("SE", "SD") and _finite(a.get("paper_se")) and _finite(b.get("paper_se")) and paper_n >= 2:
        se, dof = combined(a["paper_se"], paper_n, b["paper_se"], paper_n)
        low, high = interval(a["paper_mean"] - b["paper_mean"], se, dof)
        return low > 0 or high < 0
    return not math.isclose(a["paper_mean"], b["paper_mean"], rel_tol=0.0, abs_tol=1e-12)


def _judge_pair(a: Mapping[str, Any], b: Mapping[str, Any], spread: str, paper_n: int, higher_is_better: bool
                ) -> dict | None:
    """{"better", "worse", "verdict"} with the paper's better method first, or None where the paper claims no order."""
    if not _separated(a, b, spread, paper_n):
        return None
    paper_sign = 1.0 if spread == "rank" or not higher_is_better else -1.0  # rank 1 is the best whatever the metric
    if paper_sign * (a["paper_mean"] - b["paper_mean"]) > 0:
        a, b = b, a
    pair = {"better": a["method"], "worse": b["method"]}
    if min(a["n"], b["n"]) < 2 or not (_finite(a.get("gpal_se")) and _finite(b.get("gpal_se"))):
        return {**pair, "verdict": _ONE_SPLIT}
    return {**pair, "verdict": order_verdict(a, b, higher_is_better)}


def higher_is_better(metric: str) -> bool:
    """Which way a metric improves, as the orderings read it: accuracy is the one metric recorded where higher is
    better (error, NLL, ECE, seconds: lower)."""
    return metric == "accuracy"


def _ranked(means: Mapping[str, float], higher: bool) -> str:
    """'NIMGP < NIMGP-NN = NIMGP-FO < MGP': best first, equal numbers shown as ties."""
    sign = -1.0 if higher else 1.0
    names = sorted(means, key=lambda m: sign * means[m])
    text = names[0]
    for before, name in zip(names, names[1:]):
        text += (" = " if means[name] == means[before] else " < ") + name
    return text


def _groups(rows: Sequence[Mapping[str, Any]]) -> dict[tuple[str, str], list[Mapping[str, Any]]]:
    """Rows run by gpal (n >= 1), per (setting, metric), in the rows' order."""
    groups: dict[tuple[str, str], list] = {}
    for r in rows:
        if r["n"] >= 1 and _finite(r["gpal_mean"]):
            groups.setdefault((r["setting"], r["metric"]), []).append(r)
    return groups


def _ordering_verdict(verdicts: Sequence[str]) -> str:
    """One verdict for a method's claimed pairs: contradicted if any, reproduced if all, else not resolved."""
    if not verdicts:
        return "ordering: no pair claimed"
    if "contradicted" in verdicts:
        return "ordering contradicted"
    if all(v == "reproduced" for v in verdicts):
        return "ordering reproduced"
    return "ordering " + (_ONE_SPLIT if _ONE_SPLIT in verdicts else "not resolved")


def orderings(rows: Sequence[Mapping[str, Any]], spread: str, paper_n: int = 1) -> list[dict]:
    """Per (setting, metric) with two or more methods run: both orders, every claimed pair and the verdict."""
    out = []
    for (setting, metric), group in _groups(rows).items():
        if len(group) < 2:
            continue
        higher = higher_is_better(metric)
        pairs = [p for i, a in enumerate(group) for b in group[i + 1:]
                 if (p := _judge_pair(a, b, spread, paper_n, higher)) is not None]
        counts = Counter(p["verdict"] for p in pairs)
        out.append({
            "setting": setting, "metric": metric,
            "paper": _ranked({r["method"]: r["paper_mean"] for r in group}, higher and spread != "rank"),
            "gpal": _ranked({r["method"]: r["gpal_mean"] for r in group}, higher),
            "claimed": len(pairs), "reproduced": counts["reproduced"], "contradicted": counts["contradicted"],
            "not_resolved": counts["not resolved"] + counts[_ONE_SPLIT],
            "pairs": f"{counts['reproduced']}/{len(pairs)}",
            "contradicted_pairs": [f"{p['better']} < {p['worse']}" for p in pairs if p["verdict"] == "contradicted"],
            "pair_verdicts": pairs,
            "verdict": _ordering_verdict([p["verdict"] for p in pairs]),
        })
    return out


def judge_rows(rows: Iterable[Mapping[str, Any]], spread: str, paper_n: int = 1) -> list[dict]:
    """The rows with ``difference``, ``low``, ``high`` and ``verdict`` (re)computed by this module's rule.

    A row whose paper number has an SE gets a value verdict ("differs" or "not resolved": no margin
    is declared for a table row); the others carry their claimed pairs' ordering verdict.
    """
    rows = [dict(r) for r in rows]
    for r in rows:
        for key in ("paper_se", "gpal_se", "gpal_mean"):
            r[key] = r[key] if _finite(r.get(key)) else None
    by_method: dict[tuple[str, str, str], list[str]] = {}
    for o in orderings(rows, spread, paper_n):
        for p in o["pair_verdicts"]:
            for name in (p["better"], p["worse"]):
                by_method.setdefault((o["setting"], name, o["metric"]), []).append(p["verdict"])
    for r in rows:
        r["difference"] = (math.nan if spread == "rank" or r["gpal_mean"] is None
                           else r["gpal_mean"] - r["paper_mean"])
        r["low"] = r["high"] = math.nan
        if r["n"] == 0 or r["gpal_mean"] is None:
            r["verdict"] = "not run"
        elif r["paper_se"] is not None and spread not in ("none", "rank"):
            if r["n"] < 2 or r["gpal_se"] is None:
                r["verdict"] = _ONE_SPLIT
            else:
                v = value_verdict(r["paper_mean"], r["paper_se"], paper_n, r["gpal_mean"], r["gpal_se"], r["n"])
                r["low"], r["high"] = v["low"], v["high"]
                r["verdict"] = "differs" if v["verdict"] == "differs" else "interval covers 0"
        else:
            r["verdict"] = _ordering_verdict(by_method.get((r["setting"], r["method"], r["metric"]), []))
    return rows


def pair_counts(ordered: Sequence[Mapping[str, Any]]) -> Counter:
    """Claimed pairs over several orderings, counted by verdict ("one split: no interval" kept apart)."""
    return Counter(p["verdict"] for o in ordered for p in o["pair_verdicts"])

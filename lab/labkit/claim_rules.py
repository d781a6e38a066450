"""The rules that judge the papers page's claims, beyond what a run's comparison with a paper judges.

A paper workflow's comparison (`labkit.verdicts`) sets each published number and each of the paper's
orderings against the run.  The papers page also judges the claims of a paper's text: that two methods perform
alike, and how many repeats would decide a claim left open.  Those rules and the rule's wording at the top of
docs/papers.md live here, the project's own check of its reproductions:

- *alike* (the paper says a and b perform similarly): *alike* where the 90 % interval of gpal's difference lies
  inside ±margin (TOST), *apart* where the 95 % interval lies outside it, otherwise *not resolved*; without a
  declared margin "similar" cannot be shown (`alike_verdict`);
- *repeats to resolve*: the fewest repeats at which an open unit would be decided if the recorded means and
  spreads held (`repeats_to_resolve`, searched up to `MAX_REPEATS`).
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from labkit.verdicts import TOST_LEVEL, gap, interval

__all__ = ["MAX_REPEATS", "RULE", "alike_verdict", "repeats_to_resolve"]

#: The most repeats `repeats_to_resolve` searches: beyond it a unit is called out of reach of repeats.
MAX_REPEATS = 1000

#: The rule in words, stated once at the top of docs/papers.md.
RULE = """\
**How the verdicts are reached.** Intervals: Student's t over the repeats run (Welch-Satterthwaite for two means);
a record of one repeat is refused. *Values*: **differs** where gpal's minus
the paper's 95 % interval excludes 0, **reproduced** only where its 90 % interval lies inside a declared margin
(TOST). *Orders*: reproduced where the lead's 95 % interval lies on the paper's side of 0 (or of a declared
margin), **contradicted** on the other. *Similar*: TOST against a declared margin only. Else a unit is *open*. A
claim is reproduced when all its units are, contradicted (differs) when any is resolved against it, else **not
resolved at this budget**, with the repeats that would decide its open units at the recorded means and spreads
(fits, hours on 2 cores; "not by 1000": none up to 1000 would). **Not comparable**: a stated setting difference
(hardware, a method not the paper's) decides it. *(judgement)*: by hand, evidence beside it. Margins declared
before the runs: 004's, 002's grid, first-iteration and vi-JJ-full's, 000's δ confirmation; the others after.
Shared splits: SEs combined as independent (towards "open")."""


def alike_verdict(a: Mapping[str, Any], b: Mapping[str, Any], margin: float | None, where: str = "pair") -> str:
    """'alike', 'apart', 'not resolved' or 'no margin': are gpal's a and b within ±margin of each other (TOST)?"""
    difference, se, dof = gap(a, b, where)
    if margin is None:
        return "no margin"
    t_low, t_high = interval(difference, se, dof, TOST_LEVEL)
    if -margin < t_low and t_high < margin:
        return "alike"
    low, high = interval(difference, se, dof)
    return "apart" if low > margin or high < -margin else "not resolved"


def repeats_to_resolve(verdict_at: Callable[[int], str], n: int, cap: int = MAX_REPEATS) -> int | None:
    """The fewest repeats above ``n`` (up to ``cap``) at which ``verdict_at(repeats)`` is no longer "not resolved",
    or None.  ``verdict_at`` judges the recorded means with each SE shrunk by sqrt(n / repeats): what "more repeats
    of the same setting" would give if the means and spreads held.  Both the SE and the t quantile fall with the
    repeats, so a unit once resolved stays resolved and the answer is found by bisection."""
    if n < 2:
        raise ValueError(f"repeats_to_resolve needs the two or more repeats a verdict was made from; got n = {n}")
    if verdict_at(cap) == "not resolved":
        return None
    low, high = n, cap  # verdict_at(low) open (the recorded verdict), verdict_at(high) resolved
    while high - low > 1:
        middle = (low + high) // 2
        if verdict_at(middle) == "not resolved":
            low = middle
        else:
            high = middle
    return high

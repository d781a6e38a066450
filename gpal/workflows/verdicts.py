"""Verdicts on a paper's numbers: a value within its noise, and an ordering judged pair by pair.

Every verdict of docs/papers.md comes from here, computed from a comparison's rows (the paper's
mean and SE, gpal's mean, SE and n per setting, method and metric), so a record made under an
older rule is judged by this one when the page is built.

*Values*: where the paper gives a spread and gpal ran two or more repeats, a published number is
*reproduced* when |gpal - paper| is within `AGREEMENT` combined standard errors, else it *differs*.

*Orderings*, pair by pair within one setting and metric (`judge_pair`).  A pair of methods is a
claim of the paper only where the paper separates them: by more than `AGREEMENT` combined SEs of
its own numbers where it prints spreads, by any difference at its printed precision where it prints
none (equal printed numbers are a tie), by different ranks where it states only an order.  gpal
*reproduces* a claimed pair when its own difference has the paper's sign and exceeds `AGREEMENT`
combined SEs of gpal's means, *contradicts* it when the reversed difference does, and otherwise
leaves it *not resolved* (always so with one repeat: no SE, so "not resolved at one split").
gpal's methods run on the same splits, so combining their SEs as if independent overstates the
noise of a difference where the methods move together: the rule errs towards "not resolved".
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Any, Iterable, Mapping, Sequence

__all__ = ["AGREEMENT", "RULE", "gpal_gap", "judge_pair", "judge_rows", "orderings", "pair_counts", "value_verdict"]

#: Within this many combined standard errors a published number counts as reproduced, and beyond it
#: a difference between two methods counts as resolved.
AGREEMENT = 2.0

#: The rule in words, stated once at the top of docs/papers.md.
RULE = f"""\
**How the verdicts are reached.** *Values*: where the paper prints a spread and gpal ran two or more
repeats, a number is *reproduced* when gpal's mean is within {AGREEMENT:g} combined standard errors
(|d| / sqrt(se_p² + se_g²) ≤ {AGREEMENT:g}) of the paper's, and *differs* otherwise.
*Orderings*, pair by pair within a setting and metric: a pair of methods is a claim of the paper
only where the paper separates them, by more than {AGREEMENT:g} combined SEs of its own numbers where it
prints spreads, by any difference at its printed precision where it prints none (equal printed
numbers are a tie and claim nothing), by different ranks where it states only an order. gpal
*reproduces* a claimed pair when its difference has the paper's sign and exceeds {AGREEMENT:g} combined SEs
of gpal's two means, *contradicts* it when the reversed difference does, and otherwise the pair is
*not resolved* (with one repeat gpal has no SE: "not resolved at one split"). gpal's SEs are over
the same splits for every method and are combined as if independent, which errs towards "not
resolved". A method's row without a value verdict carries the verdict of its claimed pairs:
contradicted if any is, reproduced if all are, not resolved otherwise."""

_ONE_SPLIT = "not resolved at one split"


def _finite(x: Any) -> bool:
    return x is not None and isinstance(x, (int, float)) and math.isfinite(x)


def value_verdict(paper_mean: float, paper_se: float | None, gpal_mean: float, gpal_se: float | None,
                  n: int) -> tuple[float, str | None]:
    """(z, "reproduced" / "differs"), or (nan, None) where the paper has no spread or gpal no SE."""
    if n < 2 or not _finite(paper_se) or not _finite(gpal_se):
        return math.nan, None
    combined = math.hypot(paper_se, gpal_se)
    gap = abs(gpal_mean - paper_mean)
    z = gap / combined if combined > 0 else (0.0 if gap == 0 else math.inf)
    return z, ("reproduced" if z <= AGREEMENT else "differs")


def _separated(mean_a: float, se_a: float | None, mean_b: float, se_b: float | None, spread: str) -> bool:
    """Does the paper separate a from b (module docstring)?"""
    if spread in ("SE", "SD") and _finite(se_a) and _finite(se_b):
        return abs(mean_a - mean_b) > AGREEMENT * math.hypot(se_a, se_b)
    return not math.isclose(mean_a, mean_b, rel_tol=0.0, abs_tol=1e-12)  # printed numbers, ranks: any difference


def gpal_gap(a: Mapping[str, Any], b: Mapping[str, Any]) -> tuple[float, float] | None:
    """(gpal's mean of b minus a's, `AGREEMENT` combined SEs of the two), or None with fewer than 2 repeats."""
    if min(a["n"], b["n"]) < 2 or not (_finite(a.get("gpal_se")) and _finite(b.get("gpal_se"))):
        return None
    return b["gpal_mean"] - a["gpal_mean"], AGREEMENT * math.hypot(a["gpal_se"], b["gpal_se"])


def judge_pair(a: Mapping[str, Any], b: Mapping[str, Any], spread: str, higher_is_better: bool) -> dict | None:
    """The verdict on one pair of rows (same setting and metric), or None where the paper claims no order.

    Returns ``{"better": name, "worse": name, "verdict": ...}`` with the paper's better method first;
    the verdict is "reproduced", "contradicted", "not resolved" or "not resolved at one split".
    """
    if spread == "rank":  # rank 1 is the best whatever the metric
        paper_sign = 1.0
    else:
        paper_sign = -1.0 if higher_is_better else 1.0
    if not _separated(a["paper_mean"], a.get("paper_se"), b["paper_mean"], b.get("paper_se"), spread):
        return None
    if paper_sign * (a["paper_mean"] - b["paper_mean"]) > 0:
        a, b = b, a  # a is the paper's better method
    pair = {"better": a["method"], "worse": b["method"]}
    gap = gpal_gap(a, b)
    if gap is None:
        return {**pair, "verdict": _ONE_SPLIT}
    difference, noise = gap
    advantage = -difference if higher_is_better else difference  # > 0: gpal agrees that a is better
    if advantage > noise:
        return {**pair, "verdict": "reproduced"}
    if -advantage > noise:
        return {**pair, "verdict": "contradicted"}
    return {**pair, "verdict": "not resolved"}


def _higher_is_better(metric: str) -> bool:
    return metric == "accuracy"


def _ranked(means: Mapping[str, float], higher_is_better: bool) -> str:
    """'NIMGP < NIMGP-NN = NIMGP-FO < MGP': best first, equal numbers shown as ties."""
    sign = -1.0 if higher_is_better else 1.0
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


def _summary(verdicts: Sequence[str]) -> str:
    """One verdict for several claimed pairs: contradicted if any, reproduced if all, else not resolved."""
    if "contradicted" in verdicts:
        return "contradicted"
    if all(v == "reproduced" for v in verdicts):
        return "reproduced"
    return _ONE_SPLIT if _ONE_SPLIT in verdicts else "not resolved"


def _ordering_verdict(verdicts: Sequence[str]) -> str:
    """'ordering reproduced', 'ordering contradicted', 'ordering not resolved [at one split]', 'ordering: no pair claimed'."""
    return "ordering: no pair claimed" if not verdicts else "ordering " + _summary(verdicts)


def orderings(rows: Sequence[Mapping[str, Any]], spread: str) -> list[dict]:
    """Per (setting, metric) with two or more methods run: both orders, every claimed pair and the verdict."""
    out = []
    for (setting, metric), group in _groups(rows).items():
        if len(group) < 2:
            continue
        higher = _higher_is_better(metric) and spread != "rank"
        pairs = [p for i, a in enumerate(group) for b in group[i + 1:]
                 if (p := judge_pair(a, b, spread, _higher_is_better(metric))) is not None]
        counts = Counter(p["verdict"] for p in pairs)
        out.append({
            "setting": setting, "metric": metric,
            "paper": _ranked({r["method"]: r["paper_mean"] for r in group}, higher),
            "gpal": _ranked({r["method"]: r["gpal_mean"] for r in group}, _higher_is_better(metric)),
            "claimed": len(pairs), "reproduced": counts["reproduced"], "contradicted": counts["contradicted"],
            "not_resolved": counts["not resolved"] + counts[_ONE_SPLIT],
            "pairs": f"{counts['reproduced']}/{len(pairs)}",
            "contradicted_pairs": [f"{p['better']} < {p['worse']}" for p in pairs if p["verdict"] == "contradicted"],
            "pair_verdicts": pairs,
            "verdict": _ordering_verdict([p["verdict"] for p in pairs]),
        })
    return out


def judge_rows(rows: Iterable[Mapping[str, Any]], spread: str) -> list[dict]:
    """The rows with ``z``, ``difference`` and ``verdict`` (re)computed from their numbers by this module's rule."""
    rows = [dict(r) for r in rows]
    for r in rows:
        for key in ("paper_se", "gpal_se", "gpal_mean"):
            r[key] = r[key] if _finite(r.get(key)) else None
    by_method: dict[tuple[str, str, str], list[str]] = {}
    for o in orderings(rows, spread):
        for p in o["pair_verdicts"]:
            for name in (p["better"], p["worse"]):
                by_method.setdefault((o["setting"], name, o["metric"]), []).append(p["verdict"])
    for r in rows:
        r["difference"] = (math.nan if spread == "rank" or r["gpal_mean"] is None
                           else r["gpal_mean"] - r["paper_mean"])
        r["z"], verdict = value_verdict(r["paper_mean"], r["paper_se"], r["gpal_mean"], r["gpal_se"], r["n"])
        if r["n"] == 0 or r["gpal_mean"] is None:
            r["verdict"] = "not run"
        elif verdict is not None:
            r["verdict"] = verdict
        else:
            r["verdict"] = _ordering_verdict(by_method.get((r["setting"], r["method"], r["metric"]), []))
    return rows


def pair_counts(ordered: Sequence[Mapping[str, Any]]) -> Counter:
    """Claimed pairs over several orderings, counted by verdict ("not resolved at one split" kept apart)."""
    return Counter(p["verdict"] for o in ordered for p in o["pair_verdicts"])

"""A paper's headline claims, each with its verdict and evidence: the table at the head of its section of docs/papers.md.

The claims of a paper are declared once, in ``docs/papers/claims/<NNN>.yaml``::

    paper: "Liu et al., ... (paper 000)"          # the records' source.paper: the section it heads
    claims:
      - claim: "GPCsm has the lowest NLL on the multi-class sets"
        checks:                                    # verdict computed from the recorded comparisons
          - {workflow: 000_tables_3_4, metric: nll, settings: [waveform, satimage],
             better: [svgp-softmax], worse: [svgp-step, svgp-probit, svgp-logit]}
        explained: "[paper 000's page](papers/000_liu.md)"   # optional: what explains a difference
      - claim: "The proposed GPCs beat GPCep, GPCaug and ORTH"
        verdict: not checked                       # or a verdict stated with its evidence
        evidence: "gpal implements none of the three"

A check is one of three kinds (``kind``, default ``order``), each judged by the rule of
`gpal.workflows.verdicts` on gpal's rows of the named workflow's record:

- ``order``: every method of ``better`` ahead of every method of ``worse`` in ``metric``, per setting;
- ``alike``: no two of ``methods`` resolved apart (a claim of similar results);
- ``values``: the paper's numbers of ``methods`` reproduced within 2 combined SEs.

The claim's verdict: *differs* (*differs, explained* with ``explained``) if any pair is resolved
against the claim, *reproduced* if all are resolved for it (and every setting named was run),
*not resolved at this budget* otherwise, *not run yet* where nothing named was run or recorded.  Stated verdicts are for what no
record holds: an experiment recorded elsewhere (its page is the evidence), data that cannot be had
offline, or a method gpal does not implement.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any, Mapping, Sequence

import yaml

from gpal.workflows.reference import judged
from gpal.workflows.verdicts import gpal_gap, judge_pair

__all__ = ["STATED", "claims_in", "claims_markdown", "judge_claim", "load_claims", "verdict_tally"]

#: Verdicts a declaration may state (with its evidence) instead of a check.
STATED = ("reproduced", "differs", "differs, explained", "not resolved at this budget", "cannot be checked offline",
          "not checked")
_KINDS = {"order": {"workflow", "metric", "settings", "better", "worse", "kind"},
          "alike": {"workflow", "metric", "settings", "methods", "kind"},
          "values": {"workflow", "metric", "settings", "methods", "kind"}}
_CLAIM_KEYS = {"claim", "checks", "explained", "verdict", "evidence"}


def _names(where: str, value: Any) -> list[str]:
    if not isinstance(value, list) or not value or not all(isinstance(v, (str, int, float)) for v in value):
        raise ValueError(f"{where} must be a non-empty list of names; got {value!r}")
    return [str(v) for v in value]


def _parse_check(where: str, check: Any) -> dict:
    if not isinstance(check, Mapping):
        raise ValueError(f"{where} must be a mapping; got {check!r}")
    kind = check.get("kind", "order")
    if kind not in _KINDS:
        raise ValueError(f"{where}.kind must be one of {sorted(_KINDS)}; got {kind!r}")
    required = _KINDS[kind] - {"kind", "settings"}
    missing, unknown = sorted(required - set(check)), sorted(set(check) - _KINDS[kind])
    if missing or unknown:
        raise ValueError(f"{where} ({kind}) needs keys {sorted(required)} (optionally 'settings'); "
                         f"missing {missing}, unknown {unknown}")
    parsed = {"kind": kind, "workflow": str(check["workflow"]), "metric": str(check["metric"]),
              "settings": None if check.get("settings") is None else _names(f"{where}.settings", check["settings"])}
    for key in _KINDS[kind] & {"better", "worse", "methods"}:
        parsed[key] = _names(f"{where}.{key}", check[key])
    if kind != "order" and len(parsed["methods"]) < (1 if kind == "values" else 2):
        raise ValueError(f"{where}.methods: an '{kind}' check needs {'one' if kind == 'values' else 'two'} or more")
    return parsed


def load_claims(path: Path) -> dict:
    """One paper's declaration, checked: ``{"paper": ..., "claims": [...]}`` (ValueError naming the file and claim)."""
    try:
        block = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ValueError(f"{path}: not valid YAML ({exc})") from None
    if not isinstance(block, Mapping) or set(block) != {"paper", "claims"} or not isinstance(block["claims"], list):
        raise ValueError(f"{path} must hold 'paper' (the records' source.paper) and 'claims' (a list)")
    claims = []
    for i, claim in enumerate(block["claims"]):
        where = f"{path.name}: claims[{i}]"
        if not isinstance(claim, Mapping) or not isinstance(claim.get("claim"), str) or set(claim) - _CLAIM_KEYS:
            raise ValueError(f"{where} must be a mapping with 'claim' (text) and keys among {sorted(_CLAIM_KEYS)}; "
                             f"got {claim!r}")
        if ("checks" in claim) == ("verdict" in claim):
            raise ValueError(f"{where} ({claim['claim'][:50]!r}) needs either 'checks' or a stated 'verdict'")
        if "verdict" in claim:
            if claim["verdict"] not in STATED or not isinstance(claim.get("evidence"), str) or "explained" in claim:
                raise ValueError(f"{where}: a stated verdict is one of {list(STATED)} with its 'evidence' (text); "
                                 f"got verdict {claim['verdict']!r}, evidence {claim.get('evidence')!r}")
            claims.append(dict(claim))
            continue
        checks = claim["checks"] if isinstance(claim["checks"], list) else [claim["checks"]]
        claims.append({**claim, "checks": [_parse_check(f"{where}.checks[{j}]", c) for j, c in enumerate(checks)]})
    return {"paper": str(block["paper"]), "claims": claims}


def _rows_by_key(result: Mapping[str, Any]) -> dict[tuple[str, str, str], dict]:
    rows, _ = judged(result)
    return {(r["setting"], r["method"], r["metric"]): r for r in rows}


def _apart(a: Mapping[str, Any], b: Mapping[str, Any]) -> str:
    """'apart', 'alike' or 'not resolved at one split': are two of gpal's means resolved apart?"""
    gap = gpal_gap(a, b)
    if gap is None:
        return "not resolved at one split"
    return "apart" if abs(gap[0]) > gap[1] else "alike"


def _judge_check(check: Mapping[str, Any], result: Mapping[str, Any], where: str) -> Counter:
    """Counts of the check's verdicts over its settings and pairs (or values)."""
    rows = _rows_by_key(result)
    metric = check["metric"]
    methods = check.get("methods") or [*check["better"], *check["worse"]]
    settings = check["settings"] or list(dict.fromkeys(s for s, _, _ in rows))
    for setting in settings:
        for method in methods:
            if (setting, method, metric) not in rows:
                known = sorted({(s, m) for s, m, k in rows if k == metric})
                raise ValueError(f"{where}: the record of {check['workflow']} has no {metric!r} of {method!r} in "
                                 f"setting {setting!r}; it holds (setting, method) {known}")
    counts: Counter = Counter()
    for setting in settings:
        got = {m: rows[(setting, m, metric)] for m in methods}
        if any(r["verdict"] == "not run" for r in got.values()):  # every pair (or value) of the setting
            counts["not run"] += {"values": len(methods), "alike": len(methods) * (len(methods) - 1) // 2,
                                  "order": len(check.get("better", ())) * len(check.get("worse", ()))}[check["kind"]]
            continue
        if check["kind"] == "values":
            for r in got.values():
                counts[r["verdict"] if r["verdict"] in ("reproduced", "differs") else "not resolved"] += 1
        elif check["kind"] == "alike":
            for i, a in enumerate(methods):
                for b in methods[i + 1:]:
                    counts[_apart(got[a], got[b])] += 1
        else:
            for a in check["better"]:
                for b in check["worse"]:
                    claimed = ({**got[a], "paper_mean": 1.0, "paper_se": None},
                               {**got[b], "paper_mean": 2.0, "paper_se": None})
                    counts[judge_pair(*claimed, "rank", metric == "accuracy")["verdict"]] += 1
    return counts


_AGAINST = {"order": "contradicted", "alike": "apart", "values": "differs"}
_FOR = {"order": "reproduced", "alike": "alike", "values": "reproduced"}
_UNIT = {"order": "pairs", "alike": "pairs", "values": "values"}
#: The order counts are shown in: for the claim, against it, neither.
_SHOWN = ("reproduced", "alike", "contradicted", "apart", "differs", "not resolved", "not resolved at one split",
          "not run")


def judge_claim(claim: Mapping[str, Any], results: Mapping[str, Mapping[str, Any]], where: str = "claim",
                known: Sequence[str] | None = None) -> tuple[str, str]:
    """(verdict, evidence in Markdown) of one declared claim against the recorded comparisons ``results``.

    A check naming a workflow without a record is "not recorded yet" if it is one of ``known``
    (the shipped workflows' names), and an error otherwise (a misspelt name is not a pending run).
    """
    if "verdict" in claim:
        return claim["verdict"], claim["evidence"]
    against = for_ = total = not_run = 0
    evidence: list[str] = []
    grouped: dict[tuple, Counter] = {}
    for check in claim["checks"]:
        name = check["workflow"]
        if name not in results:
            if known is not None and name not in known:
                raise ValueError(f"{where}: no workflow {name!r} is recorded or shipped; recorded are {sorted(results)}")
            evidence.append(f"`{name}`: not recorded yet")
            not_run += 1
            continue
        counts = _judge_check(check, results[name], where)
        total += sum(counts.values()) - counts["not run"]
        not_run += counts["not run"]
        against += counts[_AGAINST[check["kind"]]]
        for_ += counts[_FOR[check["kind"]]]
        key = (name, check["metric"], tuple(check["settings"] or ()), _UNIT[check["kind"]])
        grouped[key] = grouped.get(key, Counter()) + counts
    evidence = [f"`{name}` {metric} ({', '.join(settings) or 'every setting'}), {sum(counts.values())} {unit}: "
                + ", ".join(f"{v} {counts[v]}" for v in _SHOWN if counts[v])
                for (name, metric, settings, unit), counts in grouped.items()] + evidence
    if total == 0:
        verdict = "not run yet"
    elif against:
        verdict = "differs, explained" if claim.get("explained") else "differs"
    elif for_ == total and not not_run:  # a setting not run leaves the claim open
        verdict = "reproduced"
    else:
        verdict = "not resolved at this budget"
    if claim.get("explained"):
        evidence.append(claim["explained"])
    if claim.get("evidence"):
        evidence.append(claim["evidence"])
    return verdict, "; ".join(evidence)


def claims_markdown(declared: Mapping[str, Any], results: Mapping[str, Mapping[str, Any]], source: str,
                    known: Sequence[str] | None = None) -> str:
    """The claims table of one paper: claim, verdict, evidence (``source`` names the declaration in errors)."""
    lines = ["| the paper's claim | verdict | evidence |", "|---|---|---|"]
    for i, claim in enumerate(declared["claims"]):
        verdict, evidence = judge_claim(claim, results, f"{source}: claims[{i}]", known)
        lines.append(f"| {claim['claim']} | **{verdict}** | {evidence} |")
    return "\n".join(lines) + "\n"


def claims_in(folder: Path) -> list[tuple[Path, dict]]:
    """Every declaration in ``folder`` (``<NNN>.yaml``), in file order; none if the folder is absent."""
    return [(p, load_claims(p)) for p in sorted(folder.glob("*.yaml"))] if folder.is_dir() else []


def verdict_tally(declared: Sequence[Mapping[str, Any]], results: Mapping[str, Mapping[str, Any]]) -> Counter:
    """How many claims got each verdict (the page's summary)."""
    return Counter(judge_claim(c, results)[0] for d in declared for c in d["claims"])

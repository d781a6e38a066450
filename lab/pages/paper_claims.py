"""A paper's headline claims, each with its verdict, the setting it was judged in and the evidence.

The claims of a paper are declared once, in ``lab/pages/records/papers/claims/<NNN>.yaml``::

    paper: "Liu et al., ... (paper 000)"          # the records' source.paper: the section it heads
    implementation: "..."                          # is gpal's the authors' method: the differences, in words
    headline: [...]                                # the paper's numbers beside gpal's (`paper_headline`)
    claims:
      - claim: "GPC-I, II and III perform similarly"
        checks:                                    # verdict computed from the recorded comparisons
          - {kind: alike, workflow: 000_tables_3_4, metric: accuracy,
             methods: [svgp-step, svgp-probit, svgp-logit], margin: 0.01}
        differences: "3 of the paper's 10 splits"  # optional: how the setting differs from the paper's
        evidence: "..."                           # optional: words beside the computed counts
      - claim: "Table 9's NLLs"
        checks:                                    # a table of a results record (records/results/<name>.json)
          - {kind: values, record: results/published, table: 0, metric: NLL,
             methods: [MGP], repeats: {gpal: settings.splits, paper: 100}}
      - claim: "B cannot reach a reasonable quality"
        checks:                                    # a study's table kept beside the records (records/papers/tables/)
          - {record: tables/paper002_curves, table: magic_n15216_m50, metric: accuracy, better: [A], worse: [B],
             margin: 0.02, repeats: {gpal: settings.splits.magic_n15216_m50}}
          - {kind: values, record: tables/paper001_side_by_side, table: "wine, injected noise 0.5", metric: NLL,
             methods: [MGP], repeats: {gpal: cells, paper: 100}}   # each cell's "mean ± SE (n)" gives its n
      - claim: "Seconds per epoch (Table 8)"
        checks: [...]
        not_comparable: "a P100 GPU against 2 CPU cores"   # the setting decides: the verdict is "not comparable"
      - claim: "The proposed GPCs beat GPCep"
        verdict: not checked                       # a verdict written by hand: shown as (judgement)
        evidence: "gpal implements none of the three"
      - claim: "GPD is calibrated without a post-hoc step"
        checks: [...]
        against: {kind: gpal, why: "no class-mean offset"}   # a contradicted claim says which kind it is
    settings:                                      # the data & budget table, one row per record
      - record: 001_uci_input_noise
        M: {gpal: {field: settings.noisy_input.num_inducing}, paper: "min(100, 5 % of N)"}
        epochs: {gpal: {field: budget.run.epochs}, paper: {field: budget.paper.epochs}}
        optimiser: {gpal: "Adam 0.001", paper: "not stated"}

A check is one of three kinds (``kind``, default ``order``), judged by `labkit.verdicts`:
``order`` (every method of ``better`` ahead of every method of ``worse``, per setting; by more than
``margin`` where one is declared; a negative margin asks only that it be behind by less, as a claim of
"competitive or superior" does), ``alike``
(every two of ``methods`` within ``margin`` by TOST), ``values`` (gpal's numbers of ``methods``
against the paper's; reproduced only within a declared ``margin``).  A margin is in the metric's
units and belongs to the claim, declared before the run it judges.  A ``record`` names a results record
(``results/<name>``) or a table a study keeps for this page (``tables/<name>``, in records/papers/tables/); only a
``values`` check needs the paper's column and repeats there.  A claim found "contradicted" says why, in
``against``: ``kind: paper`` (the claim does not hold with gpal running the authors' method), ``gpal`` (gpal runs
something else: ``why`` names the difference), ``setting`` (the data or budget differ: ``why`` names how) or
``reading`` (the paper's words admit a reading the measurement does not contradict: ``why`` names both); where
no run with the authors' choice has shown it yet, ``why`` says so and names the run that would, with its cost.
A contradicted or differing claim without it, or ``against`` on any other, is refused.  A claim's verdict is computed
from its checks (`labkit.claim_rules.RULE`); a field, record, table or
setting that does not exist, or a record with fewer than two repeats, is refused with the file
and the field named.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from pathlib import Path
from typing import Any, Mapping, Sequence

import yaml

from labkit.paper_comparison import judged
from labkit.verdicts import higher_is_better, order_verdict, value_verdict
from labkit.claim_rules import alike_verdict, repeats_to_resolve

from paper_budget import parse_needs, to_resolve
from paper_headline import parse_headline

__all__ = ["AGAINST_KINDS", "STATED", "SETTING_COLUMNS", "claim_rows", "claims_in", "claims_markdown", "judge_claim", "load_claims", "to_decide_markdown",
           "settings_markdown", "verdict_tally"]

#: Verdicts a declaration may state by hand (with its evidence); the page marks them "(judgement)".
STATED = ("reproduced", "differs", "contradicted", "not comparable", "not resolved at this budget", "not measured",
          "cannot be checked offline", "not checked")
#: ``repeats.gpal`` of a check whose table carries each cell's own repeats, "mean ± SE (n)" (tables that gather
#: runs of different lengths, one per setting).
CELL_REPEATS = "cells"
#: The columns of a paper's data & budget table, in order.
SETTING_COLUMNS = ("data", "rows", "M", "kernel", "likelihood", "optimiser", "repeats", "epochs")
_KINDS = {"order": {"workflow", "record", "table", "repeats", "metric", "settings", "better", "worse", "kind",
                    "margin"},
          "alike": {"workflow", "record", "table", "repeats", "metric", "settings", "methods", "margin", "kind"},
          "values": {"workflow", "record", "table", "repeats", "metric", "settings", "methods", "margin", "kind"}}
_CLAIM_KEYS = {"claim", "checks", "verdict", "evidence", "differences", "not_comparable", "against"}
#: The kinds of "contradicted" (``against.kind``), as the claims table words them.
AGAINST_KINDS = {"paper": "the paper's claim does not hold with gpal running the authors' method",
                 "gpal": "gpal differs", "setting": "the setting differs",
                 "reading": "the claim as read here"}
_AGAINST = {"contradicted", "apart", "differs"}
#: The claim verdicts that say which kind of difference from the paper they are (``against``).
_SAYS_WHY = ("contradicted", "differs")
_FOR = {"reproduced", "alike"}
#: The order counts are shown in: for the claim, against it, neither.
_SHOWN = ("reproduced", "alike", "contradicted", "apart", "differs", "not resolved", "no margin", "not run")
#: How a count reads on the page, count first ("15 within ±0.01, 9 not resolved"): a pair that is alike or apart
#: names the margin it was judged against, so a reader needs no test's name to read it.
_WORD = {"alike": "within ±{margin}", "apart": "apart beyond ±{margin}"}


#: How a record's metric reads on the page.
_METRIC_WORDS = {"nll": "NLL", "ece": "ECE", "train_seconds": "training time", "ratio_to_MGP": "time per epoch"}


def _source(name: str, record: Mapping[str, Any] | None) -> str:
    """What a reader can run to remake a check's numbers, named once per claim: the workflow (``workflow
    `papers/000_tables_3_4```) or the study (``study `paper002_curves```) its record names, not the record's file."""
    made_by = str((record or {}).get("workflow") or "")
    if made_by.startswith("lab/studies/"):
        return f"study `{Path(made_by).stem}`"
    shipped = "gpal/workflows/files/"
    if made_by.startswith(shipped):
        return f"workflow `{made_by.removeprefix(shipped).removesuffix('.yaml')}`"
    return f"workflow `{name.split('/')[-1]}`"


def _counted(counts: Counter, margin: float | None) -> str:
    """The unit verdicts as the page words them: "15 within ±0.01, 9 not resolved"."""
    shown = [v for v in _SHOWN if counts[v]]
    words = {**_WORD, "differs": "differs" if counts["differs"] == 1 else "differ"}
    text = ", ".join(f"{counts[v]} " + words.get(v, v).format(margin=f"{margin:g}" if margin else "") for v in shown)
    if margin is not None and margin < 0:
        text += f" (behind by less than {-margin:g} counts for the claim)"
    elif margin is not None and not {"alike", "apart"} & set(shown):
        text += f" (margin ±{margin:g})"
    return text


def _names(where: str, value: Any) -> list[str]:
    if not isinstance(value, list) or not value or not all(isinstance(v, (str, int, float)) for v in value):
        raise ValueError(f"{where} must be a non-empty list of names; got {value!r}")
    return [str(v) for v in value]


def _text(where: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{where} must be a non-empty text; got {value!r}")
    return value.strip()


def _parse_check(where: str, check: Any) -> dict:
    if not isinstance(check, Mapping):
        raise ValueError(f"{where} must be a mapping; got {check!r}")
    kind = check.get("kind", "order")
    if kind not in _KINDS:
        raise ValueError(f"{where}.kind must be one of {sorted(_KINDS)}; got {kind!r}")
    required = {"metric"} | ({"better", "worse"} if kind == "order" else {"methods"})
    missing, unknown = sorted(required - set(check)), sorted(set(check) - _KINDS[kind])
    if missing or unknown:
        raise ValueError(f"{where} ({kind}) needs keys {sorted(required)} and 'workflow' or 'record' (optionally "
                         f"{sorted(_KINDS[kind] - required - {'kind', 'workflow', 'record'})}); "
                         f"missing {missing}, unknown {unknown}")
    if ("workflow" in check) == ("record" in check):
        raise ValueError(f"{where} names its numbers by 'workflow' (records/papers/<workflow>.json) or by 'record' "
                         f"(records/<record>.json) with 'table' and 'repeats'; got keys {sorted(check)}")
    parsed = {"kind": kind, "metric": str(check["metric"]),
              "settings": None if check.get("settings") is None else _names(f"{where}.settings", check["settings"])}
    if "workflow" in check:
        if "table" in check or "repeats" in check:
            raise ValueError(f"{where}: 'table' and 'repeats' go with 'record', not with 'workflow'")
        parsed["workflow"] = str(check["workflow"])
    else:
        repeats = check.get("repeats")
        # only a values check sets gpal's numbers against the paper's, so only it needs the paper's repeats
        keys = {"gpal", "paper"} if kind == "values" else {"gpal"}
        if ("table" not in check or not isinstance(repeats, Mapping)
                or not keys <= set(repeats) <= {"gpal", "paper"}):
            raise ValueError(f"{where}: a 'record' check needs 'table' (its index or caption) and 'repeats' "
                             f"{{gpal: <field of the record>" + (", paper: <the paper's repeats>" if kind == "values"
                                                                else "") + f"}}; got {dict(check)!r}")
        paper = repeats.get("paper")
        if paper is not None and (isinstance(paper, bool) or not isinstance(paper, int) or paper < 2):
            raise ValueError(f"{where}.repeats.paper must be an integer >= 2; got {paper!r}")
        parsed.update(record=str(check["record"]), table=check["table"],
                      repeats={"gpal": _text(f"{where}.repeats.gpal", repeats["gpal"]), "paper": paper})
    for key in _KINDS[kind] & {"better", "worse", "methods"} & set(check):
        parsed[key] = _names(f"{where}.{key}", check[key])
    if kind != "order" and len(parsed["methods"]) < (1 if kind == "values" else 2):
        raise ValueError(f"{where}.methods: an '{kind}' check needs {'one' if kind == 'values' else 'two'} or more")
    margin = check.get("margin")
    if margin is not None and (isinstance(margin, bool) or not isinstance(margin, (int, float))
                               or not math.isfinite(margin) or margin == 0 or (margin < 0 and kind != "order")):
        raise ValueError(f"{where}.margin must be a positive number (in the metric's units; an 'order' check's may "
                         f"be negative: behind by less than it); got {margin!r}")
    parsed["margin"] = None if margin is None else float(margin)
    return parsed


def _parse_setting(where: str, entry: Any) -> dict:
    if not isinstance(entry, Mapping) or "record" not in entry:
        raise ValueError(f"{where} must be a mapping with 'record' and columns among {list(SETTING_COLUMNS)}; "
                         f"got {entry!r}")
    unknown = sorted(set(entry) - {"record", *SETTING_COLUMNS})
    if unknown:
        raise ValueError(f"{where}: unknown columns {unknown}; the columns are {list(SETTING_COLUMNS)}")
    out = {"record": str(entry["record"])}
    for column in SETTING_COLUMNS:
        cell = entry.get(column)
        if not isinstance(cell, Mapping) or set(cell) != {"gpal", "paper"}:
            raise ValueError(f"{where}.{column} must be {{gpal: ..., paper: ...}} (text, or {{field: a.b.c}} of the "
                             f"record; the paper's is 'not stated' where its text does not say); got {cell!r}")
        out[column] = {}
        for side in ("gpal", "paper"):
            value = cell[side]
            if isinstance(value, Mapping):
                if set(value) != {"field"}:
                    raise ValueError(f"{where}.{column}.{side} must be a text or {{field: a.b.c}}; got {value!r}")
                out[column][side] = {"field": _text(f"{where}.{column}.{side}.field", value["field"])}
            else:
                out[column][side] = _text(f"{where}.{column}.{side}", str(value) if value is not None else None)
    return out


def load_claims(path: Path) -> dict:
    """One paper's declaration, checked: ``{"paper", "claims", "settings"}`` (ValueError naming the file and field)."""
    try:
        block = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ValueError(f"{path}: not valid YAML ({exc})") from None
    if (not isinstance(block, Mapping)
            or not {"paper", "claims"} <= set(block) <= {"paper", "claims", "settings", "needs", "implementation",
                                                         "headline"}
            or not isinstance(block["claims"], list)):
        raise ValueError(f"{path} must hold 'paper' (the records' source.paper), 'claims' (a list) and optionally "
                         f"'implementation' (is gpal's the authors' method, in words), 'headline' (the paper's "
                         f"numbers beside gpal's), 'settings' (the data & budget table) and 'needs' (what the "
                         f"paper's budget would cost)")
    claims = []
    for i, claim in enumerate(block["claims"]):
        where = f"{path.name}: claims[{i}]"
        if not isinstance(claim, Mapping) or not isinstance(claim.get("claim"), str) or set(claim) - _CLAIM_KEYS:
            raise ValueError(f"{where} must be a mapping with 'claim' (text) and keys among {sorted(_CLAIM_KEYS)}; "
                             f"got {claim!r}")
        for key in ("evidence", "differences", "not_comparable"):
            if key in claim:
                _text(f"{where}.{key}", claim[key])
        if "against" in claim:
            against = claim["against"]
            if (not isinstance(against, Mapping) or against.get("kind") not in AGAINST_KINDS
                    or set(against) - {"kind", "why"} or (against["kind"] != "paper" and "why" not in against)):
                raise ValueError(f"{where}.against must be {{kind: one of {sorted(AGAINST_KINDS)}, why: the "
                                 f"difference (for all but paper)}}; got {against!r}")
            if "why" in against:
                _text(f"{where}.against.why", against["why"])
        if ("checks" in claim) == ("verdict" in claim):
            raise ValueError(f"{where} ({claim['claim'][:50]!r}) needs either 'checks' or a stated 'verdict'")
        if "verdict" in claim:
            if claim["verdict"] not in STATED or "evidence" not in claim or "not_comparable" in claim:
                raise ValueError(f"{where}: a stated verdict is one of {list(STATED)} with its 'evidence' (text); "
                                 f"got verdict {claim['verdict']!r}, evidence {claim.get('evidence')!r}")
            claims.append(dict(claim))
            continue
        checks = claim["checks"] if isinstance(claim["checks"], list) else [claim["checks"]]
        claims.append({**claim, "checks": [_parse_check(f"{where}.checks[{j}]", c) for j, c in enumerate(checks)]})
    settings = block.get("settings") or []
    if not isinstance(settings, list):
        raise ValueError(f"{path}: 'settings' must be a list of rows, one per record; got {settings!r}")
    return {"paper": str(block["paper"]), "claims": claims,
            "implementation": _text(f"{path.name}: implementation", block["implementation"])
            if "implementation" in block else "",
            "headline": parse_headline(f"{path.name}: headline", block.get("headline")),
            "settings": [_parse_setting(f"{path.name}: settings[{i}]", s) for i, s in enumerate(settings)],
            "needs": parse_needs(f"{path.name}: needs", block.get("needs"))}


def field(record: Mapping[str, Any], path: str, where: str) -> Any:
    """The value at dotted ``path`` of a record (ValueError naming ``where`` and what the record holds there)."""
    value: Any = record
    for i, key in enumerate(path.split(".")):
        if not isinstance(value, Mapping) or key not in value:
            held = sorted(value) if isinstance(value, Mapping) else type(value).__name__
            raise ValueError(f"{where}: the record has no field {path!r} ({'.'.join(path.split('.')[:i]) or 'its top'} "
                             f"holds {held})")
        value = value[key]
    return value


def _results_rows(check: Mapping[str, Any], record: Mapping[str, Any], where: str) -> dict[tuple, dict]:
    """Rows {(setting, method, metric): row} read from a results record's table (cells 'mean ± SE')."""
    tables = record.get("tables") or []
    table = check["table"]
    found = (tables[table] if isinstance(table, int) and 0 <= table < len(tables)
             else next((t for t in tables if t.get("caption") == table), None))
    if found is None:
        raise ValueError(f"{where}.table: {check['record']} has no table {table!r}; it holds "
                         f"{len(tables)} (captions {[t.get('caption') for t in tables]})")
    columns = {f"{side} {check['metric']}": side for side in (("gpal", "paper") if check["kind"] == "values"
                                                              else ("gpal",))}
    missing = sorted(set(columns) - set(found["columns"]))
    if missing:
        raise ValueError(f"{where}.metric: table {table!r} of {check['record']} has no columns {missing}; "
                         f"its columns are {found['columns']}")
    from_cells = check["repeats"]["gpal"] == CELL_REPEATS
    n = None if from_cells else _record_repeats(check, record, where)
    rows = {}
    for cells in found["rows"]:
        values = dict(zip(found["columns"], cells))
        row = {"setting": str(table), "method": str(cells[0]), "metric": check["metric"], "n": n,
               "paper_n": check["repeats"]["paper"], "printed": None, "paper_mean": None, "paper_se": None}
        for column, side in columns.items():
            parts = re.fullmatch(r"\s*([-+0-9.eE]+)\s*±\s*([0-9.eE]+)\s*(?:\((\d+)\))?\s*", str(values[column]))
            if not parts or (from_cells and side == "gpal" and parts.group(3) is None):
                raise ValueError(f"{where}: {check['record']} cell {column!r} of {cells[0]!r} is {values[column]!r}, "
                                 f"not 'mean ± SE'" + (" with its repeats, '(n)'" if from_cells else ""))
            row[f"{side}_mean"], row[f"{side}_se"] = float(parts.group(1)), float(parts.group(2))
            if from_cells and side == "gpal":
                row["n"] = int(parts.group(3))
        rows[(row["setting"], row["method"], row["metric"])] = row
    return rows


def _record_repeats(check: Mapping[str, Any], record: Mapping[str, Any], where: str) -> int:
    """gpal's repeats for every cell of a check's table, from the record's field ``repeats.gpal``."""
    n_text = str(field(record, check["repeats"]["gpal"], f"{where}.repeats.gpal"))
    n_match = re.match(r"\s*(\d+)", n_text)
    if not n_match:
        raise ValueError(f"{where}.repeats.gpal: {check['repeats']['gpal']!r} is {n_text!r}, not a count of repeats")
    if int(n_match.group(1)) < 2:
        raise ValueError(f"{where}.repeats.gpal: {check['repeats']['gpal']!r} of {check['record']} is {n_text!r}; "
                         "a verdict needs two or more repeats")
    return int(n_match.group(1))


def _workflow_rows(result: Mapping[str, Any]) -> dict[tuple, dict]:
    rows, _ = judged(result)
    return {(r["setting"], r["method"], r["metric"]): {**r, "paper_n": result["source"]["repeats"],
                                                       "spread": result["source"]["spread"]} for r in rows}


def _at(row: Mapping[str, Any], repeats: int | None) -> Mapping[str, Any]:
    """The row as if run ``repeats`` times at its mean and spread (its SE shrunk by sqrt(n / repeats))."""
    if repeats is None:
        return row
    return {**row, "gpal_se": row["gpal_se"] * math.sqrt(row["n"] / repeats), "n": repeats}


def _unit(check: Mapping[str, Any], got: Mapping[str, Mapping[str, Any]], a: str, b: str | None, where: str,
          repeats: int | None = None) -> str:
    """One unit's verdict: a value (b None), an ordered pair (a ahead of b) or an alike pair; at the recorded
    repeats, or as if run ``repeats`` times (`_at`)."""
    got = {m: _at(got[m], repeats) for m in ((a,) if b is None else (a, b))}
    if check["kind"] == "values":
        r = got[a]
        if r.get("spread") == "rank":
            raise ValueError(f"{where}: the paper states ranks here, not numbers: a 'values' check needs numbers")
        paper_se = r["paper_se"] if r.get("paper_se") is not None else None
        return value_verdict(r["paper_mean"], paper_se, r["paper_n"], r["gpal_mean"], r["gpal_se"], r["n"],
                             check["margin"], where)["verdict"]
    if check["kind"] == "alike":
        return alike_verdict(got[a], got[b], check["margin"], where)
    return order_verdict(got[a], got[b], higher_is_better(check["metric"]), where, check["margin"] or 0.0)


def _judge_check(check: Mapping[str, Any], rows: Mapping[tuple, dict], name: str, where: str
                 ) -> tuple[Counter, Counter, dict[str, list]]:
    """(counts of the check's unit verdicts, signs of gpal - paper for values, per setting the repeats run and the
    repeats each open unit needs (None: more than `labkit.claim_rules.MAX_REPEATS`)) over its settings."""
    metric = check["metric"]
    methods = check.get("methods") or [*check["better"], *check["worse"]]
    settings = check["settings"] or list(dict.fromkeys(s for s, _, k in rows if k == metric))
    if not settings:
        raise ValueError(f"{where}: the record of {name} holds no {metric!r} rows (an empty record)")
    for setting in settings:
        for method in methods:
            if (setting, method, metric) not in rows:
                known = sorted({(s, m) for s, m, k in rows if k == metric})
                raise ValueError(f"{where}: the record of {name} has no {metric!r} of {method!r} in "
                                 f"setting {setting!r}; it holds (setting, method) {known}")
    counts: Counter = Counter()
    signs: Counter = Counter()
    needed: dict[str, list] = {}
    for setting in settings:
        got = {m: rows[(setting, m, metric)] for m in methods}
        if check["kind"] == "values":
            units = [(m, None) for m in methods]
        elif check["kind"] == "alike":
            units = [(a, b) for i, a in enumerate(methods) for b in methods[i + 1:]]
        else:
            units = [(a, b) for a in check["better"] for b in check["worse"]]
        for a, b in units:
            if any(got[m]["n"] == 0 or got[m]["gpal_mean"] is None for m in (a, b) if m is not None):
                counts["not run"] += 1
                continue
            at = f"{where}: {name} {setting}/{a if b is None else a + ' vs ' + b}/{metric}"
            verdict = _unit(check, got, a, b, at)
            counts[verdict] += 1
            if verdict == "not resolved":
                ran = max(got[m]["n"] for m in (a, b) if m is not None)
                need = repeats_to_resolve(lambda k: _unit(check, got, a, b, at, k), ran)
                needed.setdefault(setting, [ran]).append(need)
            if b is None:
                signs["above" if got[a]["gpal_mean"] > got[a]["paper_mean"] else "below"] += 1
    return counts, signs, needed


def _rows_for(check: Mapping[str, Any], results: Mapping[str, Mapping[str, Any]],
              others: Mapping[str, Mapping[str, Any]], where: str) -> tuple[str, dict | None]:
    """(the record's name, its rows), or rows None for a shipped workflow not recorded yet."""
    if "workflow" in check:
        name = check["workflow"]
        return name, (_workflow_rows(results[name]) if name in results else None)
    name = check["record"]
    if name not in others:
        raise ValueError(f"{where}.record: no record {name!r} (lab/pages/records/results/<name>.json or "
                         f"records/papers/tables/<name>.json); known are {sorted(others)}")
    return name, _results_rows(check, others[name], where)


def judge_claim(claim: Mapping[str, Any], results: Mapping[str, Mapping[str, Any]], where: str = "claim",
                known: Sequence[str] | None = None, others: Mapping[str, Mapping[str, Any]] | None = None,
                costs: Mapping[tuple[str, str], tuple[int, float]] | None = None) -> tuple[str, str]:
    """(verdict, evidence in Markdown) of one declared claim against the recorded comparisons ``results``, the
    repeats that would decide an open claim last (`_judged` keeps them apart)."""
    verdict, evidence, to_decide = _judged(claim, results, where, known, others, costs)
    return verdict, "; ".join(p for p in (evidence, to_decide) if p)


def _judged(claim: Mapping[str, Any], results: Mapping[str, Mapping[str, Any]], where: str = "claim",
            known: Sequence[str] | None = None, others: Mapping[str, Mapping[str, Any]] | None = None,
            costs: Mapping[tuple[str, str], tuple[int, float]] | None = None) -> tuple[str, str, str]:
    """(verdict, evidence in Markdown, the repeats that would decide it or "") of one declared claim.

    ``others`` are the results records a check may name by ``record``.  A check naming a workflow
    without a record is "not recorded yet" if it is one of ``known`` (the shipped workflows' names),
    and an error otherwise (a misspelt name is not a pending run).  A claim left open says how many repeats of
    its settings would decide it, with their fits and hours where ``costs`` ((record, setting) -> fits a repeat,
    minutes a fit) price them.
    """
    if "verdict" in claim:
        return claim["verdict"], claim["evidence"], ""
    total: Counter = Counter()
    grouped: dict[tuple, list] = {}  # (record, metric, kind, margin) -> [counts, signs, settings]
    pending = []
    needed: dict[tuple[str, str], list] = {}
    kinds_against = set()
    for j, check in enumerate(claim["checks"]):
        at = f"{where}.checks[{j}]"
        if "workflow" in check and check["workflow"] not in results:
            if known is not None and check["workflow"] not in known:
                raise ValueError(f"{at}.workflow: no workflow {check['workflow']!r} is recorded or shipped; "
                                 f"recorded are {sorted(results)}")
            pending.append(f"`{check['workflow']}`: not recorded yet")
            total["not run"] += 1
            continue
        name, rows = _rows_for(check, results, others or {}, at)
        counts, signs, open_units = _judge_check(check, rows, name, at)
        for setting, (ran, *needs) in open_units.items():
            needed.setdefault((name, setting), [ran]).extend(needs)
        total += counts
        if any(counts[v] for v in _AGAINST):
            kinds_against.add(check["kind"])
        group = grouped.setdefault((name, check["metric"], check["kind"], check.get("margin")), [Counter(), Counter(), []])
        group[0].update(counts)
        group[1].update(signs)
        # a table named by its caption is the setting it judges (an index names nothing a reader could find)
        named = [check["table"]] if isinstance(check.get("table"), str) else []
        group[2] += [s for s in (check["settings"] or named) if s not in group[2]]
    evidence, previous = [], None
    for (name, metric, kind, margin), (counts, signs, settings) in grouped.items():
        # settings are named up to two (more are read in the claims file); a workflow of one setting is named by it
        # (003_milios_magic), and a run named just before is not named again
        where = "" if len(settings) > 2 or settings in ([], [name.rsplit("_", 1)[-1]]) else f" ({', '.join(settings)})"
        label = _METRIC_WORDS.get(metric, metric)
        if len(settings) == 1 and settings[0] in label.split():  # "time per epoch", not "time per epoch (epoch)"
            where = ""
        n = sum(counts.values())
        # a values check sets gpal's numbers against the paper's; the others compare two methods
        if kind == "values":
            unit = "of the paper's numbers" if n != 1 else "paper's number"
        else:
            unit = "comparisons" if n != 1 else "comparison"
        # the record's workflow or study is named once, at its first group; a setting named just before, not again
        if previous is None or previous[0] != name:
            head = f"{_source(name, results.get(name) or (others or {}).get(name))}: {label}{where}"
        else:
            head = label if previous[1] == where else f"{label}{where}"
        previous = (name, where)
        text = f"{head}, {n} {unit}: " + _counted(counts, margin)
        if signs:
            text += f"; gpal above the paper in {signs['above'] or 'none'}"
        evidence.append(text)
    evidence += pending
    run = sum(total.values()) - total["not run"]
    if claim.get("not_comparable"):
        verdict = "not comparable"
    elif run == 0:
        verdict = "not run yet"
    elif any(total[v] for v in _AGAINST):
        verdict = "differs" if kinds_against == {"values"} else "contradicted"
    elif sum(total[v] for v in _FOR) == run and not total["not run"]:
        verdict = "reproduced"
    else:
        verdict = "not resolved at this budget"
    to_decide = to_resolve(needed, costs or {}) if verdict == "not resolved at this budget" and needed else ""
    if claim.get("not_comparable"):
        evidence.append(claim["not_comparable"])
    if claim.get("evidence"):
        evidence.append(claim["evidence"])
    return verdict, "; ".join(evidence), to_decide


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def claim_rows(declared: Mapping[str, Any], results: Mapping[str, Mapping[str, Any]], source: str,
               known: Sequence[str] | None = None, others: Mapping[str, Mapping[str, Any]] | None = None,
               costs: Mapping[tuple[str, str], tuple[int, float]] | None = None) -> list[dict]:
    """Each claim judged: {claim, verdict, judgement, differences, evidence}.  A verdict is judgement where a hand
    set it: stated (``verdict``) or put over the computed one (``not_comparable``)."""
    out = []
    for i, claim in enumerate(declared["claims"]):
        where = f"{source}: claims[{i}]"
        verdict, evidence, to_decide = _judged(claim, results, where, known, others, costs)
        if (verdict in _SAYS_WHY) != ("against" in claim):
            raise ValueError(f"{where} ({claim['claim'][:50]!r}) is {verdict}: "
                             + ("say which kind in 'against' ({kind: paper | gpal | setting | reading, why: ...})"
                                if verdict in _SAYS_WHY else "'against' belongs to a contradicted or differing claim "
                                                             "only"))
        out.append({"claim": claim["claim"], "verdict": verdict, "against": claim.get("against"),
                    "judgement": "verdict" in claim or "not_comparable" in claim,
                    "differences": claim.get("differences") or "–", "evidence": evidence, "to_decide": to_decide})
    return out


def claims_markdown(rows: Sequence[Mapping[str, Any]]) -> str:
    """The claims table of one paper: claim, verdict, setting differences, evidence."""
    lines = ["| claim | verdict | setting differences | evidence |", "|---|---|---|---|"]
    for r in rows:
        verdict = f"**{r['verdict']}**" + (" (judgement)" if r["judgement"] else "")
        if r.get("against"):
            kind, why = AGAINST_KINDS[r["against"]["kind"]], r["against"].get("why")
            verdict += f": {kind}" + (f" — {why}" if why else "")
        lines.append(f"| {_cell(r['claim'])} | {verdict} | {_cell(r['differences'])} | {_cell(r['evidence'])} |")
    return "\n".join(lines) + "\n"


def to_decide_markdown(rows: Sequence[Mapping[str, Any]]) -> str:
    """The open claims, each with the repeats of its recorded settings that would decide it, for the numbers page
    (the papers page keeps the verdicts, this page their price)."""
    open_rows = [r for r in rows if r.get("to_decide")]
    if not open_rows:
        return ""
    lines = ["| claim | more repeats of the recorded settings that would decide it |", "|---|---|"]
    lines += [f"| {_cell(r['claim'])} | {_cell(r['to_decide'])} |" for r in open_rows]
    return "\n".join(lines) + "\n"


def _setting_value(value: Any, records: Sequence[tuple[str, Mapping[str, Any]]], where: str) -> str:
    """A cell of the data & budget table: the text, or the field of each part ('4 (vehicle), 2 (waveform)')."""
    if isinstance(value, str):
        return value
    got = [(part, field(record, value["field"], where)) for part, record in records]
    shown = {part: ("–" if v is None else ", ".join(map(str, v)) if isinstance(v, list) else str(v)) for part, v in got}
    if len(set(shown.values())) == 1:
        return next(iter(shown.values()))
    return ", ".join(f"{v} ({part})" for part, v in shown.items())


def settings_markdown(declared: Mapping[str, Any], parts_of: Mapping[str, Sequence[tuple[str, Mapping[str, Any]]]],
                      source: str) -> str:
    """The data & budget table of one paper: per record, each column as gpal ran it against the paper's."""
    if not declared["settings"]:
        return ""
    lines = ["| record | " + " | ".join(SETTING_COLUMNS) + " |", "|---|" + "---|" * len(SETTING_COLUMNS)]
    for i, entry in enumerate(declared["settings"]):
        where = f"{source}: settings[{i}]"
        if entry["record"] not in parts_of:
            raise ValueError(f"{where}.record: no record {entry['record']!r} in lab/pages/records/papers; "
                             f"recorded are {sorted(parts_of)}")
        records = [(part or entry["record"], r) for part, r in parts_of[entry["record"]]]
        cells = []
        for column in SETTING_COLUMNS:
            gpal = _setting_value(entry[column]["gpal"], records, f"{where}.{column}.gpal")
            paper = _setting_value(entry[column]["paper"], records, f"{where}.{column}.paper")
            cells.append(_cell(gpal if gpal == paper else f"{gpal} (paper: {paper})"))
        lines.append(f"| `{entry['record']}` | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def claims_in(folder: Path) -> list[tuple[Path, dict]]:
    """Every declaration in ``folder`` (``<NNN>.yaml``), in file order; none if the folder is absent."""
    return [(p, load_claims(p)) for p in sorted(folder.glob("*.yaml"))] if folder.is_dir() else []


def verdict_tally(rows: Sequence[Mapping[str, Any]]) -> list[tuple[str, int, int]]:
    """(verdict, claims, of which by judgement), most frequent first: the page's summary, counted from ``rows``."""
    counts = Counter(r["verdict"] for r in rows)
    judged_by_hand = Counter(r["verdict"] for r in rows if r["judgement"])
    return [(v, c, judged_by_hand[v]) for v, c in counts.most_common()]

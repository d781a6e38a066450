"""The papers' claims tables: declarations checked, verdicts computed from made-up recorded comparisons."""

import json

import pytest

from gpal.workflows.paper_claims import judge_claim, load_claims
from gpal.workflows.papers_page import render


def _row(setting, method, metric, values, paper=1.0):
    n = len(values)
    mean = sum(values) / n
    se = None if n < 2 else (sum((v - mean) ** 2 for v in values) / (n - 1)) ** 0.5 / n ** 0.5
    return {"setting": setting, "method": method, "metric": metric, "paper_mean": paper, "paper_se": None,
            "gpal_mean": mean, "gpal_se": se, "n": n, "printed": None}


def _record(rows, paper="P (paper 9)", name="wf"):
    return {"workflow": name, "title": name, "command": f"gpal workflow {name}.yaml", "commit": "abc",
            "source": {"paper": paper, "table": "T", "spread": "none", "repeats": 3, "budget": {"splits": 3}},
            "budget": {"run": {"splits": 3}, "paper": {"splits": 3}}, "rows": rows, "corrections": {}, "notes": ""}


RESULTS = {"wf": _record([
    _row("a", "A", "nll", [0.10, 0.11, 0.12]), _row("a", "B", "nll", [0.30, 0.31, 0.32]),   # A well ahead of B
    _row("b", "A", "nll", [0.50, 0.51, 0.52]), _row("b", "B", "nll", [0.20, 0.21, 0.22]),   # B well ahead of A
    _row("c", "A", "nll", [0.20, 0.40, 0.30]), _row("c", "B", "nll", [0.25, 0.35, 0.31]),   # inside the noise
    _row("d", "A", "nll", [0.10]), _row("d", "B", "nll", [0.90]),                            # one split
    *({**_row("e", m, "nll", [0.0]), "n": 0, "gpal_mean": None} for m in ("A", "B")),        # not run
])}


def _claim(settings, **extra):
    return {"claim": "A beats B", "checks": [{"kind": "order", "workflow": "wf", "metric": "nll", "settings": settings,
                                              "better": ["A"], "worse": ["B"]}], **extra}


def test_order_verdicts_follow_the_pair_rule():
    assert judge_claim(_claim(["a"]), RESULTS)[0] == "reproduced"
    verdict, evidence = judge_claim(_claim(["a", "b"]), RESULTS)
    assert verdict == "differs" and "2 pairs: reproduced 1, contradicted 1" in evidence
    assert judge_claim(_claim(["b"], explained="the reason"), RESULTS) == (
        "differs, explained", "`wf` nll (b), 1 pairs: contradicted 1; the reason")
    assert judge_claim(_claim(["a", "c"]), RESULTS)[0] == "not resolved at this budget"  # a reversal in the noise
    verdict, evidence = judge_claim(_claim(["d"]), RESULTS)
    assert verdict == "not resolved at this budget" and "not resolved at one split 1" in evidence
    assert judge_claim(_claim(["e"]), RESULTS) == ("not run yet", "`wf` nll (e), 1 pairs: not run 1")
    assert judge_claim(_claim(["a", "e"]), RESULTS)[0] == "not resolved at this budget"  # e leaves it open


def test_alike_and_stated_claims():
    alike = {"claim": "A and B alike", "checks": [{"kind": "alike", "workflow": "wf", "metric": "nll",
                                                   "settings": ["c"], "methods": ["A", "B"]}]}
    assert judge_claim(alike, RESULTS)[0] == "reproduced"
    alike["checks"][0]["settings"] = ["c", "a"]  # resolved apart on a
    assert judge_claim(alike, RESULTS)[0] == "differs"
    stated = {"claim": "on MNIST", "verdict": "cannot be checked offline", "evidence": "not shipped"}
    assert judge_claim(stated, RESULTS) == ("cannot be checked offline", "not shipped")


def test_a_workflow_not_recorded_is_pending_and_a_misspelt_one_an_error():
    claim = _claim(["a"])
    claim["checks"][0]["workflow"] = "later"
    assert judge_claim(claim, RESULTS, known=["later", "wf"]) == ("not run yet", "`later`: not recorded yet")
    with pytest.raises(ValueError, match="no workflow 'later' is recorded or shipped"):
        judge_claim(claim, RESULTS, known=["wf"])
    with pytest.raises(ValueError, match=r"has no 'nll' of 'A' in setting 'z'"):
        judge_claim(_claim(["z"]), RESULTS)


def test_bad_declarations_name_the_file_and_claim(tmp_path):
    path = tmp_path / "009.yaml"
    cases = {
        "claims:\n  - {claim: x}\n": r"must hold 'paper'",
        "paper: P\nclaims:\n  - {claim: x}\n": r"claims\[0\] \('x'\) needs either 'checks' or a stated 'verdict'",
        "paper: P\nclaims:\n  - {claim: x, verdict: fine, evidence: e}\n": r"a stated verdict is one of",
        "paper: P\nclaims:\n  - {claim: x, verdict: differs}\n": r"with its 'evidence'",
        "paper: P\nclaims:\n  - {claim: x, checks: [{workflow: wf, metric: nll, better: [A]}]}\n":
            r"claims\[0\]\.checks\[0\] \(order\) needs keys .*missing \['worse'\]",
        "paper: P\nclaims:\n  - {claim: x, checks: [{kind: alike, workflow: wf, metric: nll, methods: [A]}]}\n":
            r"an 'alike' check needs two or more",
    }
    for text, message in cases.items():
        path.write_text(text)
        with pytest.raises(ValueError, match=message):
            load_claims(path)


def test_the_page_opens_each_paper_with_its_claims(tmp_path):
    records = tmp_path / "papers"
    (records / "claims").mkdir(parents=True)
    (records / "wf.json").write_text(json.dumps(RESULTS["wf"]))
    (records / "other.json").write_text(json.dumps(_record(RESULTS["wf"]["rows"], paper="An earlier paper",
                                                           name="other")))
    (records / "claims" / "009.yaml").write_text(
        'paper: "P (paper 9)"\nclaims:\n'
        '  - {claim: A beats B on a, checks: [{workflow: wf, metric: nll, settings: [a], better: [A], worse: [B]}]}\n')
    page = render(records)
    assert page.index("## P (paper 9)") < page.index("## An earlier paper")  # declared papers first
    assert "| A beats B on a | **reproduced** | `wf` nll (a), 1 pairs: reproduced 1 |" in page
    assert "Claims over the five papers: reproduced 1." in page and "How the verdicts are reached" in page
    (records / "claims" / "009.yaml").write_text('paper: "Q"\nclaims: []\n')
    with pytest.raises(ValueError, match=r"paper 'Q' is not the source\.paper of any record"):
        render(records)
    (records / "claims" / "009.yaml").write_text(
        'paper: "P (paper 9)"\nclaims:\n  - {claim: x, verdict: reproduced, evidence: "[here](papers/wf.md)"}\n')
    with pytest.raises(ValueError, match=r"links to papers/wf\.md, which is part of this page"):
        render(records)

"""The papers' claims tables: declarations checked, verdicts computed from made-up recorded comparisons."""

import json

import pytest

from paper_claims import claim_rows, judge_claim, load_claims
from papers_page import render, render_pages


def _row(setting, method, metric, values, paper=1.0, paper_se=None):
    n = len(values)
    mean = sum(values) / n
    se = None if n < 2 else (sum((v - mean) ** 2 for v in values) / (n - 1)) ** 0.5 / n ** 0.5
    return {"setting": setting, "method": method, "metric": metric, "paper_mean": paper, "paper_se": paper_se,
            "gpal_mean": mean, "gpal_se": se, "n": n, "printed": None}


def _record(rows, paper="P (paper 9)", name="wf", spread="none"):
    # the workflow and the command name a file that exists (the page refuses a record whose workflow is gone)
    return {"workflow": "gpal/workflows/files/toy_1d.yaml", "title": name, "command": "gpal workflow toy_1d",
            "commit": "abc",
            "settings": {"training": {"num_inducing": 20}},
            "source": {"paper": paper, "table": "T", "spread": spread, "repeats": 3, "budget": {"splits": 3}},
            "budget": {"run": {"splits": 3}, "paper": {"splits": 3}}, "rows": rows, "corrections": {}, "notes": ""}


RESULTS = {"wf": _record([
    _row("a", "A", "nll", [0.10, 0.11, 0.12]), _row("a", "B", "nll", [0.30, 0.31, 0.32]),   # A well ahead of B
    _row("b", "A", "nll", [0.50, 0.51, 0.52]), _row("b", "B", "nll", [0.20, 0.21, 0.22]),   # B well ahead of A
    _row("c", "A", "nll", [0.20, 0.40, 0.30]), _row("c", "B", "nll", [0.25, 0.35, 0.31]),   # inside the noise
    _row("d", "A", "nll", [0.10]), _row("d", "B", "nll", [0.90]),                            # one split
    *({**_row("e", m, "nll", [0.0]), "n": 0, "gpal_mean": None} for m in ("A", "B")),        # not run
]), "vals": _record([
    _row("a", "A", "nll", [1.00, 1.02, 0.98], paper=1.0, paper_se=0.005),   # on the paper's number
    _row("a", "B", "nll", [1.50, 1.52, 1.48], paper=1.0, paper_se=0.005),   # far above it
], name="vals", spread="SE")}


def _claim(settings, **extra):
    return {"claim": "A beats B", "checks": [{"kind": "order", "workflow": "wf", "metric": "nll", "settings": settings,
                                              "better": ["A"], "worse": ["B"], "margin": None}], **extra}


def test_order_verdicts_follow_the_pair_rule():
    assert judge_claim(_claim(["a"]), RESULTS)[0] == "reproduced"
    verdict, evidence = judge_claim(_claim(["a", "b"]), RESULTS)
    assert verdict == "contradicted" and "2 comparisons: 1 reproduced, 1 contradicted" in evidence
    assert judge_claim(_claim(["b"], evidence="the reason"), RESULTS) == (
        "contradicted", "workflow `toy_1d`: NLL (b), 1 comparison: 1 contradicted; the reason")
    assert judge_claim(_claim(["a", "c"]), RESULTS)[0] == "not resolved at this budget"  # a reversal in the noise
    assert judge_claim(_claim(["e"]), RESULTS) == ("not run yet", "workflow `toy_1d`: NLL (e), 1 comparison: 1 not run")
    assert judge_claim(_claim(["a", "e"]), RESULTS)[0] == "not resolved at this budget"  # e leaves it open
    # a setting that decides the claim overrides the counts, with its reason beside them
    verdict, evidence = judge_claim(_claim(["a"], not_comparable="another machine"), RESULTS)
    assert verdict == "not comparable" and evidence.endswith("; another machine")


def test_an_order_with_a_negative_margin_asks_only_not_behind_by_more():
    """"Competitive or superior": A behind B by less than the margin is enough; behind by more contradicts."""
    def competitive(settings, margin):
        claim = _claim(settings)
        claim["checks"][0]["margin"] = margin
        return judge_claim(claim, RESULTS)[0]

    assert competitive(["c"], -0.5) == "reproduced"  # level within the noise, far inside the margin
    assert competitive(["b"], -0.1) == "contradicted"  # A's NLL 0.3 above B's
    assert competitive(["b"], -0.5) == "reproduced"
    assert competitive(["c"], None) == "not resolved at this budget"


def test_a_one_split_or_empty_record_is_refused_with_the_claim_named():
    with pytest.raises(ValueError, match=r"009\.yaml: claims\[0\]\.checks\[0\]: wf d/A vs B/nll \(A\): a verdict "
                                         r"needs two or more repeats"):
        judge_claim(_claim(["d"]), RESULTS, "009.yaml: claims[0]")
    empty = {"wf": _record([])}
    with pytest.raises(ValueError, match=r"claims\[0\]\.checks\[0\]: the record of wf holds no 'nll' rows"):
        judge_claim(_claim(None), empty, "claims[0]")


def test_alike_needs_its_margin_and_values_are_judged_against_the_paper():
    alike = {"claim": "A and B alike", "checks": [{"kind": "alike", "workflow": "wf", "metric": "nll",
                                                   "settings": ["c"], "methods": ["A", "B"], "margin": 0.2}]}
    assert judge_claim(alike, RESULTS)[0] == "reproduced"
    alike["checks"][0]["margin"] = None  # "similar" without a margin cannot be shown
    verdict, evidence = judge_claim(alike, RESULTS)
    assert verdict == "not resolved at this budget" and "1 no margin" in evidence
    alike["checks"][0].update(settings=["c", "a"], margin=0.05)  # resolved apart on a, beyond the margin
    assert judge_claim(alike, RESULTS)[0] == "contradicted"
    values = {"claim": "the table", "checks": [{"kind": "values", "workflow": "vals", "metric": "nll",
                                                "settings": None, "methods": ["A"], "margin": 0.1}]}
    assert judge_claim(values, RESULTS)[0] == "reproduced"
    values["checks"][0]["methods"] = ["A", "B"]
    verdict, evidence = judge_claim(values, RESULTS)
    assert verdict == "differs" and "NLL, 2 of the paper's numbers: 1 reproduced, 1 differs (margin ±0.1); gpal above the paper in 1" in evidence
    stated = {"claim": "on MNIST", "verdict": "cannot be checked offline", "evidence": "not shipped"}
    assert judge_claim(stated, RESULTS) == ("cannot be checked offline", "not shipped")
    (row,) = claim_rows({"claims": [stated]}, RESULTS, "009.yaml")
    assert row["judgement"] and row["differences"] == "–"
    # a reason put over the computed verdict is a hand's too; a computed verdict is not
    overridden, computed = claim_rows({"claims": [_claim(["a"], not_comparable="another machine"), _claim(["a"])]},
                                      RESULTS, "009.yaml")
    assert overridden["verdict"] == "not comparable" and overridden["judgement"] and not computed["judgement"]


def test_a_workflow_not_recorded_is_pending_and_a_misspelt_one_an_error():
    claim = _claim(["a"])
    claim["checks"][0]["workflow"] = "later"
    assert judge_claim(claim, RESULTS, known=["later", "wf"]) == ("not run yet", "`later`: not recorded yet")
    with pytest.raises(ValueError, match=r"checks\[0\]\.workflow: no workflow 'later' is recorded or shipped"):
        judge_claim(claim, RESULTS, known=["wf"])
    with pytest.raises(ValueError, match=r"has no 'nll' of 'A' in setting 'z'"):
        judge_claim(_claim(["z"]), RESULTS)


def test_a_results_table_is_read_and_a_missing_record_or_table_named():
    published = {"settings": {"splits": "100 random 90/10", "one": 1}, "tables": [{"caption": "", "columns": [
        "method", "gpal NLL", "paper NLL"], "rows": [["M", "0.435 ± 0.022", "0.377 ± 0.019"],
                                                     ["N", "0.306 ± 0.016", "0.246 ± 0.010"]]}]}
    check = {"kind": "values", "record": "results/published", "table": 0, "metric": "NLL", "settings": None,
             "methods": ["M", "N"], "repeats": {"gpal": "settings.splits", "paper": 100}, "margin": None}
    verdict, evidence = judge_claim({"claim": "x", "checks": [check]}, {}, "f.yaml: claims[0]",
                                    others={"results/published": published})
    # N: 0.060 / sqrt(0.016² + 0.010²) = 3.2 SEs at ~167 dof; M: 2.0 SEs, just beyond t's 1.97
    assert verdict == "differs" and "2 differ; gpal above the paper in 2" in evidence
    for bad, message in (({"record": "results/nope"}, r"claims\[0\]\.checks\[0\]\.record: no record 'results/nope'"),
                         ({"table": 3}, r"claims\[0\]\.checks\[0\]\.table: results/published has no table 3"),
                         ({"metric": "ECE"}, r"checks\[0\]\.metric: table 0 of results/published has no columns"),
                         ({"repeats": {"gpal": "settings.n", "paper": 100}},
                          r"checks\[0\]\.repeats\.gpal: the record has no field 'settings\.n'"),
                         ({"repeats": {"gpal": "settings.one", "paper": 100}},  # one split: no interval
                          r"f\.yaml: claims\[0\]\.checks\[0\]\.repeats\.gpal: 'settings\.one' of results/published "
                          r"is '1'; a verdict needs two or more repeats")):
        with pytest.raises(ValueError, match=message):
            judge_claim({"claim": "x", "checks": [{**check, **bad}]}, {}, "f.yaml: claims[0]",
                        others={"results/published": published})


def test_a_study_table_needs_no_paper_column_unless_values_are_checked():
    kept = {"settings": {"splits": {"t": 3}}, "tables": [{"caption": "t", "columns": [
        "method", "gpal accuracy"], "rows": [["A", "0.870 ± 0.003"], ["B", "0.866 ± 0.003"], ["C", "0.820 ± 0.003"]]}]}
    others = {"tables/kept": kept}
    base = {"record": "tables/kept", "table": "t", "metric": "accuracy", "settings": None,
            "repeats": {"gpal": "settings.splits.t", "paper": None}}
    alike = {**base, "kind": "alike", "methods": ["A", "B"], "margin": 0.02}
    verdict, evidence = judge_claim({"claim": "x", "checks": [alike]}, {}, others=others)
    assert verdict == "reproduced" and evidence.startswith("workflow `kept`: accuracy (t), 1 comparison: 1 within ±0.02")
    # a lead of a size: C behind A by 0.05 is beyond 0.02, B behind A by 0.004 is resolved short of it
    order = {**base, "kind": "order", "better": ["A"], "worse": ["C"], "margin": 0.02}
    assert judge_claim({"claim": "x", "checks": [order]}, {}, others=others)[0] == "reproduced"
    assert judge_claim({"claim": "x", "checks": [{**order, "worse": ["B"]}]}, {}, others=others)[0] == "contradicted"
    values = {**base, "kind": "values", "methods": ["A"], "margin": 0.01, "repeats": {"gpal": "settings.splits.t",
                                                                                      "paper": 10}}
    with pytest.raises(ValueError, match=r"table 't' of tables/kept has no columns \['paper accuracy'\]"):
        judge_claim({"claim": "x", "checks": [values]}, {}, others=others)


def test_a_tables_cells_may_carry_their_own_repeats():
    """repeats.gpal "cells": each gpal cell's "(n)" is its repeats, so a table of runs of different lengths is judged
    per cell; a cell without its count is refused."""
    kept = {"settings": {}, "tables": [{"caption": "t", "columns": ["method", "paper NLL", "gpal NLL"], "rows": [
        ["A", "0.849 ± 0.018", "1.117 ± 0.090 (3)"], ["B", "0.849 ± 0.018", "1.117 ± 0.090 (30)"]]}]}
    check = {"kind": "values", "record": "tables/kept", "table": "t", "metric": "NLL", "settings": None,
             "methods": ["A", "B"], "repeats": {"gpal": "cells", "paper": 100}, "margin": None}
    # the same gap, 2.9 SEs: Welch's dof about 2 for A's 3 repeats (t 4.2: open), about 31 for B's 30 (t 2.0: differs)
    verdict, evidence = judge_claim({"claim": "x", "checks": [check]}, {}, others={"tables/kept": kept})
    assert verdict == "differs" and "2 of the paper's numbers: 1 differs, 1 not resolved" in evidence, evidence
    with pytest.raises(ValueError, match=r"cell 'gpal NLL' of 'A' is '1\.1 ± 0\.04'.*with its repeats"):
        bad = {**kept, "tables": [{**kept["tables"][0], "rows": [["A", "0.849 ± 0.018", "1.1 ± 0.04"]]}]}
        judge_claim({"claim": "x", "checks": [{**check, "methods": ["A"]}]}, {}, others={"tables/kept": bad})


def test_a_kept_table_names_the_study_that_lists_it(tmp_path):
    import yaml

    records = tmp_path / "papers"
    (records / "claims").mkdir(parents=True)
    (records / "tables").mkdir()
    (records / "wf.json").write_text(json.dumps(RESULTS["wf"]))
    table = {"workflow": "lab/studies/paper002_curves.yaml", "command": "c", "source": "s",
             "settings": {"splits": {"t": 3}}, "tables": [{"caption": "t", "columns": ["method", "gpal NLL"],
                                                          "rows": [["A", "0.10 ± 0.01"], ["B", "0.30 ± 0.01"]]}]}
    (records / "tables" / "paper002_curves.json").write_text(json.dumps(table))
    check = {"record": "tables/paper002_curves", "table": "t", "metric": "NLL", "better": ["A"], "worse": ["B"],
             "repeats": {"gpal": "settings.splits.t"}}
    (records / "claims" / "009.yaml").write_text(yaml.safe_dump(
        {"paper": "P (paper 9)", "claims": [{"claim": "A beats B", "checks": [check]}]}))
    assert "| A beats B | **reproduced** | – | study `paper002_curves`: NLL (t), 1 comparison: 1 reproduced |" \
        in render(records)
    (records / "tables" / "paper002_curves.json").write_text(json.dumps({**table, "workflow": "lab/studies/plane.yaml"}))
    with pytest.raises(ValueError, match=r"does not list lab/pages/records/papers/tables/paper002_curves\.json"):
        render(records)


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
        "paper: P\nclaims:\n  - {claim: x, checks: [{kind: alike, workflow: wf, metric: nll, methods: [A, B], "
        "margin: -1}]}\n": r"checks\[0\]\.margin must be a positive number",
        "paper: P\nclaims:\n  - {claim: x, checks: [{kind: values, record: r, metric: nll, methods: [A]}]}\n":
            r"checks\[0\]: a 'record' check needs 'table'",
        "paper: P\nclaims: []\nsettings:\n  - {record: wf, M: 5}\n": r"settings\[0\]\.data must be \{gpal: \.\.\., paper",
        "paper: P\nclaims:\n  - {claim: x, verdict: contradicted, evidence: e, against: {kind: paper2}}\n":
            r"claims\[0\]\.against must be \{kind: one of",
        "paper: P\nclaims:\n  - {claim: x, verdict: contradicted, evidence: e, against: {kind: gpal}}\n":
            r"claims\[0\]\.against must be",
        "paper: P\nclaims:\n  - {claim: x, verdict: contradicted, evidence: e, against: {kind: reading}}\n":
            r"claims\[0\]\.against must be \{kind: one of \['gpal', 'paper', 'reading', 'setting'\], why",
    }
    for text, message in cases.items():
        path.write_text(text)
        with pytest.raises(ValueError, match=message):
            load_claims(path)


def _settings(record="wf", field="settings.training.num_inducing"):
    columns = ("data", "rows", "M", "kernel", "likelihood", "optimiser", "repeats", "epochs")
    cells = {c: {"gpal": "g", "paper": "g"} for c in columns}
    cells["M"] = {"gpal": {"field": field}, "paper": "100"}
    cells["epochs"] = {"gpal": "g", "paper": "not stated"}
    return {"record": record, **cells}


def test_the_page_opens_each_paper_with_its_claims_and_its_numbers_page_with_the_settings(tmp_path):
    import yaml

    records = tmp_path / "papers"
    (records / "claims").mkdir(parents=True)
    (records / "wf.json").write_text(json.dumps(RESULTS["wf"]))
    (records / "wf.md").write_text("Why the numbers are as they are.\n")
    (records / "other.json").write_text(json.dumps(_record(RESULTS["wf"]["rows"], paper="An earlier paper",
                                                           name="other")))
    declared = {"paper": "P (paper 9)", "settings": [_settings()],
                "claims": [{"claim": "A beats B on a", "checks": [{"workflow": "wf", "metric": "nll", "settings": ["a"],
                                                                   "better": ["A"], "worse": ["B"]}]},
                           {"claim": "y", "verdict": "differs", "evidence": "by hand", "differences": "other data",
                            "against": {"kind": "setting", "why": "other data"}}]}
    (records / "claims" / "009.yaml").write_text(yaml.safe_dump(declared))
    pages = render_pages(records)
    page = pages["papers.md"]
    assert page.index("## P (paper 9)") < page.index("## An earlier paper")  # declared papers first
    assert "| A beats B on a | **reproduced** | – | workflow `toy_1d`: NLL (a), 1 comparison: 1 reproduced |" in page
    assert "| y | **differs** (judgement): the setting differs — other data | other data | by hand |" in page
    assert "Claims (2) by verdict (by judgement): reproduced 1 (0), differs 1 (1)." in page  # the tally
    budget = "| `wf` | g | g | 20 (paper: 100) | g | g | g | g | g (paper: not stated) |"  # M from the record
    assert budget in pages["papers/009_numbers.md"] and budget not in page  # the page keeps only the claims
    assert "Why the numbers" in pages["papers/009_numbers.md"] and "Why the numbers" not in page
    assert "papers/other_numbers.md" in pages and "How the verdicts are reached" not in page  # the rule in one
    assert "How the verdicts are reached" in pages["papers/009_numbers.md"]                   # sentence, in full there
    for bad, message in (({"settings": [_settings(record="nope")]}, r"009\.yaml: settings\[0\]\.record: no record 'nope'"),
                         ({"settings": [_settings(field="settings.M")]},
                          r"009\.yaml: settings\[0\]\.M\.gpal: the record has no field 'settings\.M'")):
        (records / "claims" / "009.yaml").write_text(yaml.safe_dump({**declared, **bad}))
        with pytest.raises(ValueError, match=message):
            render(records)
    (records / "claims" / "009.yaml").write_text('paper: "Q"\nclaims: []\n')
    with pytest.raises(ValueError, match=r"paper 'Q' is not the source\.paper of any record"):
        render(records)
    (records / "claims" / "009.yaml").write_text(
        'paper: "P (paper 9)"\nclaims:\n  - {claim: x, verdict: reproduced, evidence: "[here](papers/wf.md)"}\n')
    with pytest.raises(ValueError, match=r"links to papers/wf\.md, an explanation shown on the numbers page"):
        render(records)



def test_a_record_every_claim_calls_not_comparable_says_so_on_its_numbers_page(tmp_path):
    import yaml

    records = tmp_path / "papers"
    (records / "claims").mkdir(parents=True)
    rows = [_row("a", "A", "nll", [0.10, 0.11, 0.12], paper=1.0), _row("a", "B", "nll", [0.30, 0.31, 0.32], paper=2.0)]
    (records / "wf.json").write_text(json.dumps(_record(rows)))
    on_a = {"workflow": "wf", "metric": "nll", "settings": ["a"], "better": ["A"], "worse": ["B"]}
    declared = {"paper": "P (paper 9)", "claims": [{"claim": "A beats B", "checks": [on_a],
                                                     "not_comparable": "a GPU against a CPU"}]}
    (records / "claims" / "009.yaml").write_text(yaml.safe_dump(declared))
    numbers = render_pages(records)["papers/009_numbers.md"]
    assert "| a | A | nll | 1.000 | 0.110 ± 0.006 (3) | – | not comparable |" in numbers
    assert "ordering reproduced" not in numbers and "| 1 | 1 | 0 | 0 | not comparable |" in numbers
    # the counts the intervals give stay, after the reason
    assert ("Not comparable: a GPU against a CPU. The intervals alone would give: Pairs the paper orders: 1; "
            "gpal reproduces 1, contradicts 0, leaves 0 not resolved.") in numbers
    # a claim judged on the record keeps its verdicts
    declared["claims"].append({"claim": "A beats B again", "checks": [on_a]})
    (records / "claims" / "009.yaml").write_text(yaml.safe_dump(declared))
    numbers = render_pages(records)["papers/009_numbers.md"]
    assert "| not comparable |" not in numbers and "Not comparable: a GPU" not in numbers
    assert "| a | A | nll | 1.000 | 0.110 ± 0.006 (3) | – | ordering reproduced |" in numbers


def test_evidence_names_a_workflow_and_its_settings_once():
    """A second metric of the same run is not introduced again; a workflow named after its one setting
    (``003_milios_magic``) is not followed by it."""
    both = {"wf": _record([_row("a", "A", m, [0.10, 0.11, 0.12]) for m in ("nll", "error")]
                          + [_row("a", "B", m, [0.30, 0.31, 0.32]) for m in ("nll", "error")])}
    two = {"claim": "A beats B", "checks": [
        {"kind": "order", "workflow": "wf", "metric": m, "settings": ["a"], "better": ["A"], "worse": ["B"],
         "margin": None} for m in ("nll", "error")]}
    assert judge_claim(two, both)[1] == ("workflow `toy_1d`: NLL (a), 1 comparison: 1 reproduced; error, 1 comparison: "
                                         "1 reproduced")
    named = {"wf_a": RESULTS["wf"]}
    one = {"claim": "A beats B", "checks": [{"kind": "order", "workflow": "wf_a", "metric": "nll", "settings": ["a"],
                                              "better": ["A"], "worse": ["B"], "margin": None}]}
    assert judge_claim(one, named)[1] == "workflow `toy_1d`: NLL, 1 comparison: 1 reproduced"


def test_an_open_claim_names_the_repeats_and_hours_that_would_decide_it():
    """A pair 0.1 apart is open at 3 splits; a scan of order_verdict at the same means, SEs shrunk by sqrt(3 / k),
    finds where it resolves, and the claim prices the extra splits at 2 fits of 3 minutes each."""
    from labkit.verdicts import order_verdict

    a, b = _row("c", "A", "nll", [0.10, 0.20, 0.15]), _row("c", "B", "nll", [0.20, 0.30, 0.25])
    results = {"wf": _record([a, b])}
    shrunk = lambda row, k: {**row, "gpal_se": row["gpal_se"] * (3 / k) ** 0.5, "n": k}  # noqa: E731
    k = next(k for k in range(4, 1001) if order_verdict(shrunk(a, k), shrunk(b, k), False) != "not resolved")
    assert k > 3 and order_verdict(a, b, False) == "not resolved"
    verdict, evidence = judge_claim(_claim(["c"]), results, costs={("wf", "c"): (2, 3.0)})
    hours = (k - 3) * 2 * 3.0 / 60 / 2
    assert verdict == "not resolved at this budget"
    assert evidence.endswith(f"all by {k} repeats (+{(k - 3) * 2} fits, {hours:.2g} h)")
    assert judge_claim(_claim(["c"]), results)[1].endswith(f"all by {k} repeats (not priced: `wf` keeps no fits a repeat)")
    # the papers page shows the verdict and its counts; the repeats that would decide it go to the numbers page
    (row,) = claim_rows({"claims": [_claim(["c"])]}, results, "009.yaml", costs={("wf", "c"): (2, 3.0)})
    assert row["evidence"] == "workflow `toy_1d`: NLL (c), 1 comparison: 1 not resolved"
    assert row["to_decide"] == f"all by {k} repeats (+{(k - 3) * 2} fits, {hours:.2g} h)"


def test_an_open_value_no_count_of_repeats_decides_is_said_so():
    """gpal's A sits on the paper's number (difference 0, no margin): no count of repeats makes it differ or match."""
    check = {"kind": "values", "workflow": "vals", "metric": "nll", "settings": ["a"], "methods": ["A"],
             "margin": None}
    verdict, evidence = judge_claim({"claim": "A's value", "checks": [check]}, RESULTS)
    assert verdict == "not resolved at this budget" and evidence.endswith("1 paper's number: 1 not resolved; gpal above the paper in none; 1 not by 1000")


def test_a_contradicted_claim_says_which_kind_and_only_it_may():
    against = {"kind": "gpal", "why": "a shared kernel"}
    rows = claim_rows({"claims": [_claim(["b"], against=against), _claim(["a"])]}, RESULTS, "009.yaml")
    assert rows[0]["verdict"] == "contradicted" and rows[0]["against"] == against
    from paper_claims import claims_markdown
    assert "**contradicted**: gpal differs — a shared kernel |" in claims_markdown(rows)
    with pytest.raises(ValueError, match=r"009\.yaml: claims\[0\] \('A beats B'\) is contradicted: say which kind"):
        claim_rows({"claims": [_claim(["b"])]}, RESULTS, "009.yaml")
    with pytest.raises(ValueError, match=r"claims\[0\] \('A beats B'\) is reproduced: 'against' belongs to a "
                                         r"contradicted or differing claim only"):
        claim_rows({"claims": [_claim(["a"], against=against)]}, RESULTS, "009.yaml")


def test_a_claim_contradicted_only_as_read_here_says_the_reading_and_needs_it():
    against = {"kind": "reading", "why": "read at the last checkpoint"}
    (row,) = claim_rows({"claims": [_claim(["b"], against=against)]}, RESULTS, "009.yaml")
    from paper_claims import claims_markdown
    assert "**contradicted**: the claim as read here — read at the last checkpoint |" in claims_markdown([row])

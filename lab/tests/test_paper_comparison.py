"""A paper's published numbers beside a run's measurements: parsing, the key checks, the comparison's numbers."""

import json
import math

import numpy as np
import pytest
from scipy import stats

from gpal.registry import WORKFLOWS
from gpal.workflows import load_workflow, run_workflow
from gpal.workflows.measurements import Produced
from labkit.paper_comparison import (PUBLISHED, _fmt, budget_line, check_reference, compare_run, comparison_markdown,
                                     comparison_rows, main, parse_reference, published, read_published,
                                     unpublished_rows)
from labkit.verdicts import orderings

ROOT = PUBLISHED.parents[3].parent


SOURCE = {"paper": "P", "table": "T1", "spread": "SE", "repeats": 4}


def _ref(values, **extra):
    return parse_reference({"source": {**SOURCE, **extra.pop("source", {})}, "values": values, **extra})


def test_parse_names_the_bad_key():
    with pytest.raises(ValueError, match=r"reference\.values\.a\.MGP\.nll\[1\] \(the spread\) must be >= 0"):
        _ref({"a": {"MGP": {"nll": [1.0, -0.1]}}})
    with pytest.raises(ValueError, match=r"reference\.source\.spread must be one of \['SE', 'SD', 'none', 'rank'\]"):
        _ref({"a": {"MGP": {"nll": 1.0}}}, source={"spread": "CI"})
    with pytest.raises(ValueError, match=r"corrects 'a/NIMGP/nll', which reference\.values does not hold"):
        _ref({"a": {"MGP": {"nll": 1.0}}}, corrections={"a/NIMGP/nll": {"printed": [9.0, 1.0], "reason": "x"}})
    ref = _ref({0.1: {"MGP": {"nll": 0.5}}})
    assert ref["values"] == {"0.1": {"MGP": {"nll": [0.5, None]}}}  # a bare mean has no spread
    assert ref["source"]["budget"] == {"repeats": 4}


def test_check_reference_refuses_what_is_not_produced():
    produced = Produced(["a"], ["MGP", "NIMGP"], ["nll", "error"])
    check_reference(_ref({"a": {"MGP": {"nll": 1.0}}}), produced)
    for values, key in (({"b": {"MGP": {"nll": 1.0}}}, r"reference\.values\.b: .*no setting 'b'"),
                        ({"a": {"GP": {"nll": 1.0}}}, r"reference\.values\.a\.GP: .*no method 'GP'"),
                        ({"a": {"MGP": {"ece": 1.0}}}, r"reference\.values\.a\.MGP\.ece: .*no metric 'ece'")):
        with pytest.raises(ValueError, match=key):
            check_reference(_ref(values), produced)


def test_rows_match_a_hand_computation_and_sd_becomes_se():
    ref = _ref({"a": {"MGP": {"nll": [1.0, 0.4]}, "NIMGP": {"nll": [0.5, 0.04]}}}, source={"spread": "SD"})
    assert published(ref, "a")["MGP"]["nll"] == [1.0, 0.2]  # SD 0.4 over 4 repeats -> SE 0.2
    mgp, nimgp = [1.1, 1.3, 1.2, 1.4], [0.2, 0.3, 0.1, 0.2]
    rows = {r["method"]: r for r in comparison_rows(ref, {("a", "MGP", "nll"): mgp, ("a", "NIMGP", "nll"): nimgp})}
    se = np.std(mgp, ddof=1) / 2
    assert rows["MGP"]["gpal_se"] == pytest.approx(se) and rows["MGP"]["n"] == 4
    # the 95 % interval's lower end is where Welch's t test (scipy's own) of the shifted difference has p = 0.05
    low = rows["MGP"]["low"]
    shifted = stats.ttest_ind_from_stats(1.25 - low, np.std(mgp, ddof=1), 4, 1.0, 0.4, 4, equal_var=False)
    assert shifted.pvalue == pytest.approx(0.05, abs=1e-9) and rows["MGP"]["high"] == pytest.approx(0.5 - low)
    assert rows["MGP"]["verdict"] == "interval covers 0"  # 1.25 vs 1.0: no margin, so not "reproduced"
    assert rows["NIMGP"]["verdict"] == "differs" and rows["NIMGP"]["high"] < 0  # 0.2 vs 0.5 with SEs 0.04, 0.02
    one_split = comparison_rows(ref, {("a", "MGP", "nll"): [1.0], ("a", "NIMGP", "nll"): [2.0]})
    assert {r["verdict"] for r in one_split} == {"one split: no interval"}
    # 1.0 ± 0.2 against 0.5 ± 0.02 over 4 repeats is 2.5 SEs apart, inside t's 3.1 at Welch's 3.06 dof: no claim
    (o,) = orderings(one_split, "SD", 4)
    assert o["claimed"] == 0


def test_cells_the_paper_does_not_print_are_kept_apart_with_their_mean_and_se():
    ref = _ref({"a": {"MGP": {"nll": [1.0, 0.1]}}})
    measured = {("a", "MGP", "nll"): [1.0, 2.0], ("a", "MGP", "learned_variance"): [],
                ("a", "Bayes", "error"): [0.1, 0.2, 0.6], ("b", "MGP", "nll"): [3.0]}
    rows = {(r["setting"], r["method"], r["metric"]): r for r in unpublished_rows(ref, measured)}
    assert set(rows) == {("a", "Bayes", "error"), ("b", "MGP", "nll")}  # published and unmeasured cells are not
    assert rows["a", "Bayes", "error"]["gpal_mean"] == pytest.approx(0.3) and rows["a", "Bayes", "error"]["n"] == 3
    assert rows["a", "Bayes", "error"]["gpal_se"] == pytest.approx(np.std([0.1, 0.2, 0.6], ddof=1) / math.sqrt(3))
    assert math.isnan(rows["b", "MGP", "nll"]["gpal_se"])


def _rows(ref, measured):
    return comparison_rows(ref, measured)


def test_without_spread_the_ordering_decides_on_resolved_pairs():
    ref = _ref({"a": {"MGP": {"nll": 0.9, "accuracy": 0.8}, "NIMGP": {"nll": 0.3, "accuracy": 0.9}}},
               source={"spread": "none"})
    measured = {("a", "MGP", "nll"): [0.7, 0.72], ("a", "NIMGP", "nll"): [0.2, 0.22],
                ("a", "MGP", "accuracy"): [0.95, 0.96], ("a", "NIMGP", "accuracy"): [0.90, 0.91]}
    verdicts = {(r["method"], r["metric"]): r["verdict"] for r in _rows(ref, measured)}
    assert verdicts[("MGP", "nll")] == "ordering reproduced"
    assert verdicts[("MGP", "accuracy")] == "ordering contradicted"  # accuracy is ranked highest first
    assert _rows(ref, {})[0]["verdict"] == "not run"
    # one split: no SE, so no pair is resolved either way
    single = {k: v[:1] for k, v in measured.items()}
    assert {r["verdict"] for r in _rows(ref, single)} == {"ordering one split: no interval"}


def test_a_resolved_reversal_contradicts_and_noise_does_not():
    ref = _ref({"a": {"A": {"error": 0.10}, "B": {"error": 0.20}}}, source={"spread": "none"})
    # gpal reverses the pair by 0.1 with SEs of 0.005: resolved, contradicted
    rows = _rows(ref, {("a", "A", "error"): [0.295, 0.305], ("a", "B", "error"): [0.195, 0.205]})
    (o,) = orderings(rows, "none")
    assert (o["claimed"], o["contradicted"], o["contradicted_pairs"]) == (1, 1, ["A < B"])
    assert o["verdict"] == "ordering contradicted"
    # the same reversal inside gpal's noise (SEs 0.1): not resolved, not counted against the paper
    rows = _rows(ref, {("a", "A", "error"): [0.1, 0.5], ("a", "B", "error"): [0.0, 0.4]})
    (o,) = orderings(rows, "none")
    assert (o["contradicted"], o["not_resolved"], o["verdict"]) == (0, 1, "ordering not resolved")


def test_pairs_the_paper_does_not_separate_are_no_claim():
    # SEs printed: 0.50 ± 0.02 against 0.52 ± 0.02 is 0.7 combined SEs apart, no claim; 0.30 is far from both
    ref = _ref({"a": {"A": {"nll": [0.50, 0.02]}, "B": {"nll": [0.52, 0.02]}, "C": {"nll": [0.30, 0.01]}}})
    measured = {("a", "A", "nll"): [0.60, 0.62], ("a", "B", "nll"): [0.40, 0.42],  # A and B reversed, resolved
                ("a", "C", "nll"): [0.20, 0.22]}
    (o,) = orderings(_rows(ref, measured), "SE", 4)
    assert o["claimed"] == 2 and {(p["better"], p["worse"]) for p in o["pair_verdicts"]} == {("C", "A"), ("C", "B")}
    assert o["verdict"] == "ordering reproduced"
    # ties at the printed precision claim nothing either
    ref = _ref({"a": {"A": {"error": 0.2}, "B": {"error": 0.2}, "C": {"error": 0.1}}}, source={"spread": "none"})
    measured = {("a", "A", "error"): [0.30, 0.31], ("a", "B", "error"): [0.20, 0.21], ("a", "C", "error"): [0.05, 0.06]}
    (o,) = orderings(_rows(ref, measured), "none")
    assert (o["paper"], o["gpal"], o["claimed"], o["pairs"]) == ("C < A = B", "C < B < A", 2, "2/2")


def test_no_spread_and_ranks_are_compared_by_ordering():
    for spread in ("none", "rank"):
        with pytest.raises(ValueError, match=rf"a\.A\.nll has a spread, but reference\.source\.spread is '{spread}'"):
            _ref({"a": {"A": {"nll": [1.0, 0.1]}}}, source={"spread": spread})
    # ranks: 1 is the best whatever the metric, so rank 1 in accuracy is the highest accuracy
    ref = _ref({"a": {"GPC": {"accuracy": 1, "nll": 1}, "GPD": {"accuracy": 2, "nll": 2}}}, source={"spread": "rank"})
    measured = {("a", "GPC", "accuracy"): [0.90, 0.92], ("a", "GPD", "accuracy"): [0.80, 0.82],
                ("a", "GPC", "nll"): [0.40, 0.42], ("a", "GPD", "nll"): [0.30, 0.32]}
    rows = {(r["method"], r["metric"]): r for r in comparison_rows(ref, measured)}
    assert rows[("GPC", "accuracy")]["verdict"] == "ordering reproduced"
    assert rows[("GPC", "nll")]["verdict"] == "ordering contradicted"
    assert math.isnan(rows[("GPC", "nll")]["difference"]) and math.isnan(rows[("GPC", "nll")]["low"])
    result = {"source": ref["source"], "budget": {"run": {"repeats": 2}, "paper": {"repeats": 4}},
              "rows": list(rows.values()), "corrections": {}}
    text = comparison_markdown(result)
    assert "| a | GPC | accuracy | rank 1 | 0.910 ± 0.010 (2) |" in text and "ranks (1 the best" in text
    assert "Pairs the paper orders: 2; gpal reproduces 1, contradicts 1, leaves 0 not resolved." in text
    # a record's stored verdicts are not trusted: the page judges its numbers anew
    stale = {**result, "rows": [{**r, "verdict": "ordering differs"} for r in result["rows"]]}
    assert comparison_markdown(stale) == text


def test_small_numbers_keep_their_digits():
    assert _fmt(0.0004, None, printed=True) == "0.0004"  # a published 0.0004 is not shown as 0.000
    assert _fmt(0.0256, 0.007, printed=True) == "0.0256 ± 0.0070"
    assert _fmt(0.16, 0.004, printed=True) == "0.160 ± 0.004"
    assert _fmt(0.00041234, None) == "0.00041"  # a measured small mean: two significant digits
    assert _fmt(0.99951, 0.00021) == "0.9995 ± 0.0002"  # an SE of 0.0002 needs four decimals
    assert _fmt(0.1234, 0.0123) == "0.123 ± 0.012" and _fmt(92.81, 86.4) == "92.810 ± 86.400"
    assert _fmt(1e-12, None) == "0.000000" and _fmt(float("nan"), None) == "–"  # at most MAX_DECIMALS


def test_budget_line_says_when_it_is_reduced():
    assert budget_line({"splits": 10, "epochs": 750}, {"splits": 100, "epochs": 750}) == \
        "splits 10 (paper 100), epochs 750: reduced from the paper's"
    assert budget_line({"splits": 100}, {"splits": 100}) == "splits 100: the paper's"
    # a count the paper does not state is never called the paper's
    assert budget_line({"splits": 5, "epochs": 100}, {"repeats": 1}) == \
        "splits 5 (paper: not stated), epochs 100 (paper: not stated)"


@pytest.mark.parametrize("path", sorted(PUBLISHED.glob("*.yaml")), ids=lambda p: p.stem)
def test_every_published_file_names_only_what_its_workflow_produces(path):
    reference = read_published(path)
    workflow = load_workflow(ROOT / reference["workflow"])
    assert workflow.path.stem == path.stem  # a run finds its paper's numbers by its workflow's stem
    check_reference(reference, WORKFLOWS[workflow.kind].produces(workflow.config))


def _published(tmp_path, values):
    path = tmp_path / "toy_ref.yaml"
    path.write_text("\n".join([
        "workflow: gpal/workflows/files/toy_1d.yaml",
        "source: {paper: P, table: T1, spread: SE, repeats: 1, budget: {repeats: 1, epochs: 750}}",
        f"values: {json.dumps(values)}", "notes: the explanation"]) + "\n")
    return path


def test_a_bad_published_file_is_named(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("source: {paper: P}\n")
    with pytest.raises(ValueError, match=r"bad\.yaml: expected a mapping with 'workflow'"):
        read_published(path)
    path.write_text("workflow: w.yaml\nsource: {paper: P, table: T, spread: SE, repeats: 0}\nvalues: {a: {M: {nll: 1}}}\n")
    with pytest.raises(ValueError, match=r"bad\.yaml: reference\.source\.repeats .* got 0"):
        read_published(path)


def test_a_run_is_compared_from_its_measurements(tmp_path, capsys):
    path = _published(tmp_path, {"toy_1d": {"MGP": {"nll": [0.88, 0.08], "error": 0.125},
                                            "NIMGP-FO": {"nll": [0.49, 0.05], "error": 0.128},
                                            "NIMGP": {"nll": [0.29, 0.02]}}})
    tiny = ["data.n_train=60", "data.n_test=40", "training.epochs=2", "training.num_inducing=5",
            "training.n_samples=4", "plot.grid_points=20", "methods=[MGP, NIMGP-FO]"]
    workflow = ROOT / "gpal" / "workflows" / "files" / "toy_1d.yaml"
    out = run_workflow(workflow, tiny, out=tmp_path / "run", progress=False)
    result = compare_run(out, path)
    assert result["command"].startswith("gpal workflow toy_1d --set data.n_train=60")  # the shipped name, not a path
    assert result["budget"] == {"run": {"repeats": 1, "epochs": 2}, "paper": {"repeats": 1, "epochs": 750}}
    assert [(r["method"], r["metric"], r["n"]) for r in result["rows"]] == [
        ("MGP", "nll", 1), ("MGP", "error", 1), ("NIMGP-FO", "nll", 1), ("NIMGP-FO", "error", 1), ("NIMGP", "nll", 0)]
    assert {r["verdict"] for r in result["rows"]} == {"one split: no interval", "ordering one split: no interval",
                                                      "not run"}
    # what the paper does not print is kept apart: the Bayes-optimal predictive, the KL
    assert ("Bayes-optimal", "kl") in {(r["method"], r["metric"]) for r in result["unpublished"]}
    assert main([str(out), "--published", str(path)]) == 0
    assert "epochs 2 (paper 750): reduced" in (out / "paper_comparison.md").read_text()
    assert (out / "paper_comparison.csv").read_text().startswith("setting,method,metric,paper_mean")
    assert json.loads((out / "paper_comparison.json").read_text()) == result
    # the default published file is the one named by the run's workflow
    assert compare_run(out)["source"] == read_published(PUBLISHED / "toy_1d.yaml")["source"]
    assert main([str(tmp_path)]) == 2
    assert "measurements.json does not exist" in capsys.readouterr().err

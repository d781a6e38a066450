"""What the paper's own repeats would cost: counts from made-up records, minutes as declared or recorded."""

import pytest

from paper_budget import fit_costs, needs_markdown, parse_needs, to_resolve


def _rows(ran, not_run, metric="nll", seconds=None):
    rows = [{"setting": s, "method": m, "metric": metric, "gpal_mean": 0.5} for s, m in ran]
    rows += [{"setting": s, "method": m, "metric": metric, "gpal_mean": None} for s, m in not_run]
    if seconds is not None:
        rows += [{"setting": s, "method": m, "metric": "train_seconds", "gpal_mean": seconds} for s, m in ran]
    return rows


def _record(rows, run=3, paper=10):
    return {"rows": rows, "budget": {"run": {"splits": run}, "paper": {"splits": paper}}}


RAN = [("a", "A"), ("a", "B"), ("b", "A"), ("b", "B")]
NOT_RUN = [("c", "A"), ("c", "B")]


def test_the_table_counts_the_fits_the_papers_repeats_add():
    parts = {"wf": [(None, _record(_rows(RAN, NOT_RUN)))]}
    needs = parse_needs("t", [{"record": "wf", "minutes": 2.0, "source": "timed"}])
    row = needs_markdown(needs, parts, "t").splitlines()[2]
    # 4 fits a split, 7 splits more: 28 fits of 2 min, two at once on 2 cores = 0.47 h; c at 10 splits: 20 fits
    assert row == "| `wf` | 3 (10) | 4 | 28 | 2 | 0.47 | 1: c (20) |"


def test_minutes_from_the_records_training_seconds_and_per_part():
    parts = {"wf": [(None, _record(_rows(RAN, [], seconds=90.0), run=10, paper=10))]}
    needs = parse_needs("t", [{"record": "wf", "minutes": "train_seconds", "source": "the record's"}])
    assert needs_markdown(needs, parts, "t").splitlines()[2] == "| `wf` | 10 (10) | 4 | 0 | 1.5 | 0 | – |"
    two = {"wf": [("x", _record(_rows(RAN[:2], []))), ("y", _record(_rows(RAN[2:], [])))]}
    needs = parse_needs("t", [{"record": "wf", "minutes": {"x": 1.0, "y": 3.0}, "source": "timed"}])
    rows = needs_markdown(needs, two, "t").splitlines()[2:4]
    assert rows == ["| `wf` x | 3 (10) | 2 | 14 | 1 | 0.12 | – |", "| `wf` y | 3 (10) | 2 | 14 | 3 | 0.35 | – |"]


@pytest.mark.parametrize("entry, words", [
    ({"record": "wf", "minutes": 2.0}, "exactly 'record', 'minutes'"),
    ({"record": "wf", "minutes": -1, "source": "s"}, "positive number"),
    ({"record": "wf", "minutes": {"x": "fast"}, "source": "s"}, "positive number"),
])
def test_a_bad_entry_is_refused_naming_it(entry, words):
    with pytest.raises(ValueError, match=r"claims.yaml: needs\[0\]") as info:
        parse_needs("claims.yaml: needs", [entry])
    assert words in str(info.value)


def test_an_unknown_record_or_part_or_budget_is_refused():
    parts = {"wf": [("x", _record(_rows(RAN, [])))]}
    with pytest.raises(ValueError, match="no record 'other'"):
        needs_markdown(parse_needs("t", [{"record": "other", "minutes": 1, "source": "s"}]), parts, "t")
    with pytest.raises(ValueError, match="names parts"):
        needs_markdown(parse_needs("t", [{"record": "wf", "minutes": {"y": 1}, "source": "s"}]), parts, "t")
    with pytest.raises(ValueError, match="no train_seconds values"):
        needs_markdown(parse_needs("t", [{"record": "wf", "minutes": "train_seconds", "source": "s"}]), parts, "t")
    unstated = {"wf": [(None, {"rows": _rows(RAN, []), "budget": {"run": {"splits": 3}, "paper": {"splits": "?"}}})]}
    with pytest.raises(ValueError, match="states no numeric splits"):
        needs_markdown(parse_needs("t", [{"record": "wf", "minutes": 1, "source": "s"}]), unstated, "t")


def test_settings_no_part_ran_are_the_records_row_not_a_parts():
    two = {"wf": [("x", _record(_rows(RAN[:2], NOT_RUN))), ("y", _record(_rows(RAN[2:], NOT_RUN)))]}
    needs = parse_needs("t", [{"record": "wf", "minutes": 1.0, "source": "timed"}])
    rows = needs_markdown(needs, two, "t").splitlines()[2:5]
    assert rows == ["| `wf` x | 3 (10) | 2 | 14 | 1 | 0.12 | – |", "| `wf` y | 3 (10) | 2 | 14 | 1 | 0.12 | – |",
                    "| `wf`, no part | – | – | – | – | – | 1: c (20) |"]


def test_an_uncovered_settings_fits_are_its_own_methods_not_the_records():
    """A binary set has no softmax GPC: c is run with two methods, d with one, so 10 splits add 30 fits, not 40."""
    parts = {"wf": [(None, _record(_rows(RAN, NOT_RUN + [("d", "A")])))]}
    needs = parse_needs("t", [{"record": "wf", "minutes": 2.0, "source": "timed"}])
    assert needs_markdown(needs, parts, "t").splitlines()[2].endswith("| 2: c, d (30) |")


def test_a_run_cut_in_epochs_counts_all_the_papers_repeats():
    """4 repeats at 100 of the paper's 750 epochs are not 4 of its 100: all 100 run at 750, 4 fits each."""
    cut = {"rows": _rows(RAN, []), "budget": {"run": {"repeats": 4, "epochs": 100, "n_samples": 300},
                                              "paper": {"repeats": 100, "epochs": 750, "n_samples": 300}}}
    needs = parse_needs("t", [{"record": "wf", "minutes": 4.5, "source": "timed at 750 epochs"}])
    row = needs_markdown(needs, {"wf": [(None, cut)]}, "t").splitlines()[2]
    assert row == "| `wf` | 4 (100); epochs cut: all rerun | 4 | 400 | 4.5 | 15 | – |"  # 400 x 4.5 min / 60 / 2


def test_a_record_no_need_prices_is_priced_from_its_own_training_seconds():
    """Undeclared records cost what their own mean train_seconds say; one that records no time has no minutes."""
    parts = {"timed": [(None, _record(_rows(RAN, [], seconds=30.0)))], "untimed": [(None, _record(_rows(RAN, [])))],
             "declared": [(None, _record(_rows(RAN, [], seconds=30.0)))]}
    needs = parse_needs("t", [{"record": "declared", "minutes": 2.0, "source": "timed"}])
    costs = fit_costs(needs, parts, "t")
    assert costs[("timed", "a")] == (2, 0.5) and costs[("untimed", "b")] == (2, None)
    assert costs[("declared", "a")] == (2, 2.0)  # the declaration wins over the record's seconds


def test_open_units_are_priced_in_fits_and_hours_or_said_untimed():
    """a's two open units need 10 and 6 repeats after 3 (7 more of 2 fits), b's one 5 (2 more), its other none up
    to 1000: 18 fits, at 0.5 min each two at a time 0.075 h."""
    needed = {("wf", "a"): [3, 10, 6], ("wf", "b"): [3, 5, None]}
    assert to_resolve(needed, {("wf", "a"): (2, 0.5), ("wf", "b"): (2, 0.5)}) == \
        "3 by 10 repeats (+18 fits, 0.075 h); 1 not by 1000"
    assert to_resolve(needed, {("wf", "a"): (2, 0.5), ("wf", "b"): (2, None)}) == \
        "3 by 10 repeats (+18 fits, no time recorded); 1 not by 1000"
    assert to_resolve({**needed, ("tables/x", "c"): [2, 4]}, {("wf", "a"): (2, 0.5)}) == \
        "4 by 10 repeats (not priced: `tables/x`, `wf` keep no fits a repeat); 1 not by 1000"  # b's, c's unknown
    assert to_resolve({("tables/x", "c"): [2, 4]}, {}) == "all by 4 repeats (not priced: `tables/x` keeps no fits a repeat)"

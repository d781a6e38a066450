"""lab/studies/bench_pulsar_order.py: how it counts a list's later pulsars and chooses an order."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from conftest import repository_script


@pytest.fixture(scope="module")
def bench():
    return repository_script("lab/studies/bench_pulsar_order.py")


def test_later_pulsars_are_counted_by_name_in_the_first_k_rows(bench):
    later = pd.Series({"a": "psr", "b": "bll", "c": "MSP".lower(), "d": ""})
    found = bench.hits(pd.Series(["c ", "b", "x", "a"]), later)  # names padded as a catalog writes them; x unlinked
    assert found.tolist() == [True, False, False, True]
    assert bench.counted(found, 2) == (1, 2) and bench.counted(found, 100) == (2, 4)  # a short list counted whole
    assert bench.cell(0, 0) == "–" and bench.cell(2, 4).startswith("2 [")


def _measured(rows):
    frame = pd.DataFrame(rows, columns=["earlier", "later", "rule", "k", "found", "n"])
    return frame.assign(list=0, later_pulsars=0)


def test_an_order_replaces_the_probability_order_only_by_holding_more_at_50_on_the_pairs_before_fl16y(bench):
    rules = list(bench.RULES)
    tie = [("4FGL", "4FGL-DR4", rule, k, 10 + (rule == rules[1] and k == 25), 50) for rule in rules for k in bench.TOP]
    assert bench.chosen(_measured(tie)) == rules[1]  # equal at 50: the top 25 decides
    even = [("4FGL", "4FGL-DR4", rule, k, 10, 50) for rule in rules for k in bench.TOP]
    assert bench.chosen(_measured(even)) == "probability"
    # what a pair ending in FL16Y holds does not enter the choice
    confirm = even + [("4FGL", "FL16Y", rules[2], 50, 40, 50)]
    assert bench.chosen(_measured(confirm)) == "probability"
    sums = bench.summed(_measured(confirm), ("FL16Y",))
    assert sums["found"].tolist() == [40] and np.all(sums["n"] == 50)


def test_a_score_ranks_by_the_product_of_its_columns_a_missing_value_last(bench):
    rows = pd.DataFrame({"Source_Name": list("abcd"), "p_pulsar": [0.9, 0.5, 0.8, 0.7],
                         "Signif_Avg": [5.0, 12.0, 6.0, 20.0], "Conf_95_SemiMajor": 0.05,
                         "Energy_Flux100": [1e-11, 3e-11, np.nan, 3e-11]})
    # p x S: 4.5, 6.0, 4.8, 14.0
    assert bench.RULES["p_pulsar x significance"].rank(rows)["Source_Name"].tolist() == list("dbca")
    # energy flux: b and d tie (then the probability order: d at 0.7 before b at 0.5); c has none, last
    assert bench.RULES["energy flux"].rank(rows)["Source_Name"].tolist() == list("dbac")
    # the cut at 0.7: a, c, d (by significance: d, c, a) before b
    assert bench.RULES["p_pulsar at least 0.7 first, by significance"].rank(rows)["Source_Name"].tolist() == list("dcab")
    assert bench.default_rule() in bench.RULES and bench.RULES[bench.default_rule()].order

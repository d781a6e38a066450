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


def test_a_rank_product_weighs_its_columns_alike_and_a_band_rule_puts_its_rows_first(bench):
    rows = pd.DataFrame({"Source_Name": list("abcd"), "p_pulsar": [0.9, 0.5, 0.8, 0.7],
                         "Signif_Avg": [5.0, 12.0, 6.0, 20.0], "Conf_95_SemiMajor": [0.02, 0.09, 0.05, np.nan],
                         "abs_GLAT": [40.0, 1.0, 10.0, 0.5], "LP_EPeak": [1500.0, 2500.0, np.nan, 200.0]})
    # ranks of S (d 1, b 2, c 3, a 4) times |b|'s (a 1, c 2, b 3, d 4): a 4, b 6, c 6, d 4; ties as by significance
    assert bench.RULES["ranks: significance x |b|"].rank(rows)["Source_Name"].tolist() == list("dabc")
    # the ellipse smallest first (a 1, c 2, b 3, d missing: 4): a 4, b 6, c 6, d 4
    assert bench.RULES["ranks: significance x small ellipse"].rank(rows)["Source_Name"].tolist() == list("dabc")
    # the peak in 0.5-3 GeV (a, b) first by significance, then the others (c has none)
    assert bench.RULES["peak energy 0.5-3 GeV first, by significance"].rank(rows)["Source_Name"].tolist() == list("badc")
    assert bench.RULES[bench.OFFERED].order == "off_plane_first"


def test_the_log_parabola_peak_energy_is_the_catalogs_where_it_gives_one(bench):
    from gpal.catalogs import load_catalog

    ours = bench.catalog_columns("4FGL-DR4")["LP_EPeak"].to_numpy()
    table = load_catalog("4FGL-DR4").table
    theirs = np.asarray(table["LP_EPeak"].filled(np.nan) if hasattr(table["LP_EPeak"], "filled") else table["LP_EPeak"],
                        np.float64)
    given = np.isfinite(theirs)
    assert given.sum() > 5000 and np.all(np.isfinite(ours[given]))
    np.testing.assert_allclose(ours[given], theirs[given], rtol=1e-3)

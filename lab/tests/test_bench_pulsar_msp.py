"""lab/studies/bench_pulsar_msp.py: the two pulsar classes read as one list, the pulsars typed msp, the chosen list."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from conftest import repository_script


@pytest.fixture(scope="module")
def bench():
    return repository_script("lab/studies/bench_pulsar_msp.py")


def test_a_source_is_listed_as_a_pulsar_when_psr_and_msp_together_are_its_most_probable(bench):
    frame = pd.DataFrame({"Source_Name": ["a", "b", "c"], "p_bll": [0.4, 0.1, 0.5], "p_fsrq": [0.0, 0.0, 0.0],
                          "p_psr": [0.3, 0.1, 0.4], "p_msp": [0.3, 0.7, 0.1], "p_other": [0.0, 0.1, 0.0],
                          "predicted_class": ["bll", "msp", "extended"]})
    merged = bench.pulsar_as_one(frame)
    assert [c for c in merged.columns if c.startswith("p_")] == ["p_pulsar", "p_bll", "p_fsrq", "p_other"]
    assert merged["p_pulsar"].tolist() == pytest.approx([0.6, 0.8, 0.5])
    # a: neither pulsar class beats bll alone, together they do; c: an extended source stays one
    assert merged["predicted_class"].tolist() == ["pulsar", "pulsar", "extended"]
    assert merged[bench.MSP_FIRST].tolist() == [False, True, False]
    assert merged[bench.MSP].tolist() == [0.3, 0.7, 0.1]


def test_the_atnf_periods_type_dr4s_pulsars_as_dr4_does(bench):
    """An independent check: 4FGL-DR4 types its pulsars itself; every one the shipped ATNF catalogue times is typed
    the same by its period alone."""
    from gpal.catalogs import load_catalog

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dr4 = load_catalog("4FGL-DR4")
    rows = np.flatnonzero(np.isin(dr4.class_codes, ["psr", "msp"]))
    names = [bench._pulsar_name(a) for a in np.asarray(dr4.table["ASSOC1"]).astype(str)[rows]]
    msp, how = bench.msp_types(names, bench.atnf_periods(), {})
    timed = how == "ATNF period"
    assert timed.sum() > 200
    assert np.array_equal(msp[timed], dr4.class_codes[rows][timed] == "msp")
    assert (dr4.class_codes[rows][timed] == "msp").sum() > 100  # both types are there to tell apart


def test_a_coarse_name_takes_the_one_pulsar_it_names_and_an_untimed_one_the_newest_class(bench):
    period = {"J0248+4230": 0.0026, "J1536-4948": 0.0033, "J1536-4912": 0.5}
    msp, how = bench.msp_types(["J0248+42", "J1536-49", "J9999+99", "J0000+00", "J0248+4230"], period,
                               {"J9999+99": "msp"})
    assert msp.tolist() == [True, False, True, False, True]
    assert how.tolist() == ["ATNF period", "neither: psr", "FL16Y's class", "neither: psr", "ATNF period"]


def test_a_list_row_drawn_twice_counts_twice_in_its_place(bench):
    hit = np.array([True, False, True, False])
    assert bench._first_k(hit, np.ones(4, int), 2) == 1
    assert bench._first_k(hit, np.array([2, 0, 1, 1]), 2) == 2  # the first row twice, the second not drawn
    assert bench._first_k(hit, np.array([0, 3, 1, 0]), 3) == 0


def _measured(bench, found):
    """A measure frame: (model, order) -> top-50 count on a pair ending before FL16Y (the other ks equal)."""
    rows = [{"earlier": "4FGL", "later": later, "model": key[0], "order": key[1], "label": "later pulsars", "k": k,
             "found": count, "n": 50} for later, counts in found.items() for key, count in counts.items()
            for k in bench.TOP]
    return pd.DataFrame(rows)


def test_a_new_list_replaces_todays_default_only_by_holding_more_before_fl16y(bench):
    even = {key: 10 for key in bench.RULES}
    assert bench.chosen(_measured(bench, {"4FGL-DR4": even})) == next(iter(bench.RULES))
    better = dict(even)
    better[("psr, msp apart", "p_msp")] = 11
    assert bench.chosen(_measured(bench, {"4FGL-DR4": better})) == ("psr, msp apart", "p_msp")
    # what the pairs ending in FL16Y hold does not enter the choice
    assert bench.chosen(_measured(bench, {"4FGL-DR4": even, "FL16Y": better})) == next(iter(bench.RULES))

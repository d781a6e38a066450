"""lab/studies/bench_pulsar_rank.py: how it counts later pulsars by a score and the gain's bootstrap."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from conftest import repository_script


@pytest.fixture(scope="module")
def bench():
    return repository_script("lab/studies/bench_pulsar_rank.py")


def _lists(bench, found):
    lists = object.__new__(bench.Lists)
    lists.rows = {"4FGL": pd.DataFrame({"Source_Name": [f"s{i}" for i in range(len(found))]})}
    lists.found = {("4FGL", "4FGL-DR4"): np.asarray(found, bool)}
    return lists


def test_later_pulsars_are_counted_among_the_highest_scores_first(bench):
    found = np.zeros(120, bool)
    found[[0, 30, 60, 110]] = True
    lists = _lists(bench, found)
    pairs = [("4FGL", "4FGL-DR4")]
    assert bench.top_counts(lists, {"4FGL": -np.arange(120.0)}, pairs) == {25: 1, 50: 2, 100: 3}
    assert bench.top_counts(lists, {"4FGL": np.arange(120.0)}, pairs) == {25: 1, 50: 1, 100: 3}  # 110 first


def test_a_score_against_itself_gains_nothing_and_a_perfect_one_gains_with_an_interval_above_zero(bench):
    rng = np.random.default_rng(1)
    found = rng.random(200) < 0.2
    lists = _lists(bench, found)
    pairs = [("4FGL", "4FGL-DR4")]
    noise = {"4FGL": rng.random(200)}
    same = bench.paired_gain(lists, noise, noise, pairs, n_boot=50)
    assert all(value == (0, 0.0, 0.0) for value in same.values())
    perfect = {"4FGL": found + rng.random(200) * 0.5}
    gain = bench.paired_gain(lists, perfect, noise, pairs, n_boot=200)
    chance = int(found[np.argsort(-noise["4FGL"], kind="stable")][:50].sum())
    assert gain[50][0] == min(50, int(found.sum())) - chance and gain[50][1] > 0


def test_features_read_logs_with_floors_and_a_missing_history_as_none(bench):
    rows = pd.DataFrame({"p_pulsar": [0.5, 1.0], "Signif_Avg": [np.e, 10.0], "GLAT": [-3.0, 4.0],
                         "Signif_Curvature": [0.0, 1.0], "Variability_Index": [0.5, np.e],
                         "Conf_95_SemiMajor": [0.05, 0.1], "Flux1000": [1e-9, 2e-9],
                         "unassociated_releases": ["", "3"]})
    x = bench.features(rows)
    assert x.shape == (2, len(bench.FEATURES)) and np.isfinite(x).all()
    named = dict(zip(bench.FEATURES, x.T))
    assert named["logit p_pulsar"][0] == 0 and named["log Signif_Avg"][0] == pytest.approx(1)
    assert named["|b|"].tolist() == [3, 4] and named["log Signif_Curvature"][0] == pytest.approx(np.log(0.1))
    assert named["log Variability_Index"].tolist() == pytest.approx([0, 1])
    assert named["unassociated_releases"].tolist() == [0, 3]


def test_a_row_of_another_list_within_the_same_source_radius_is_kept_out_of_a_fit(bench):
    from astropy import units as u
    from astropy.coordinates import SkyCoord

    lists = object.__new__(bench.Lists)
    lists.rows = {"4FGL": pd.DataFrame({"x": [0, 1, 2]}), "4FGL-DR2": pd.DataFrame({"x": [0]})}
    lists.sky = {"4FGL": SkyCoord([10.0, 10.0, 10.0] * u.deg, [0.0, 0.15, 0.25] * u.deg),
                 "4FGL-DR2": SkyCoord([10.0] * u.deg, [0.0] * u.deg)}
    assert bench.SAME_SOURCE == 0.2
    assert lists.apart("4FGL", "4FGL-DR2").tolist() == [False, False, True]
    assert lists.apart("4FGL", None).tolist() == [True, True, True]

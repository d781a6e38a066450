"""lab/studies/paper001_al_gain.py: the paired NIMGP-NN minus MGP error reduction of paper 001's Fig. 7."""

from __future__ import annotations


import pandas as pd
import pytest
from scipy import stats

from conftest import repository_script


@pytest.fixture(scope="module")
def gain():
    return repository_script("lab/studies/paper001_al_gain.py")


def _curves(errors):
    """errors[(method, repetition)] = (initial, after 2 labels); random rows that must be ignored."""
    rows = []
    for (method, rep), (start, end) in errors.items():
        for strategy, last in (("entropy", end), ("random", 0.9)):
            rows += [{"method": method, "noise": 0.5, "strategy": strategy, "repetition": rep, "n_added": k,
                      "error": e} for k, e in ((0, start), (1, (start + last) / 2), (2, last))]
    return pd.DataFrame(rows)


def test_the_gap_and_its_interval_match_a_hand_computation(gain):
    curves = _curves({("MGP", 0): (0.30, 0.25), ("NIMGP-NN", 0): (0.30, 0.22),
                      ("MGP", 1): (0.40, 0.38), ("NIMGP-NN", 1): (0.41, 0.37),
                      ("MGP", 2): (0.20, 0.19), ("NIMGP-NN", 2): (0.20, 0.18)})
    row = gain.paired_gaps(curves, after=2).iloc[0]
    d = [0.08 - 0.05, 0.04 - 0.02, 0.02 - 0.01]  # NIMGP-NN's reduction minus MGP's, per repetition
    mean, se = sum(d) / 3, stats.sem(d)
    half = stats.t.ppf(0.975, 2) * se
    assert (row["n"], row["gap"], row["se"]) == (3, pytest.approx(mean), pytest.approx(se))
    assert (row["low"], row["high"]) == (pytest.approx(mean - half), pytest.approx(mean + half))
    assert row["MGP"] == pytest.approx((0.05 + 0.02 + 0.01) / 3)


def test_bad_curves_are_refused_by_name(gain):
    curves = _curves({("MGP", 0): (0.3, 0.2), ("NIMGP-NN", 0): (0.3, 0.2)})
    with pytest.raises(ValueError, match="--after 5: no curve reaches 5"):
        gain.paired_gaps(curves, after=5)
    with pytest.raises(ValueError, match=r"lack the columns \['error'\]"):
        gain.paired_gaps(curves.drop(columns="error"), after=2)
    with pytest.raises(ValueError, match=r"no \['NIMGP-NN'\] rows"):
        gain.paired_gaps(curves[curves["method"] == "MGP"], after=2)


def test_the_paired_errors_match_a_hand_computation_per_strategy(gain):
    curves = _curves({("MGP", 0): (0.30, 0.25), ("NIMGP-NN", 0): (0.30, 0.22),
                      ("MGP", 1): (0.40, 0.38), ("NIMGP-NN", 1): (0.41, 0.37),
                      ("MGP", 2): (0.20, 0.19), ("NIMGP-NN", 2): (0.20, 0.18)})
    table = gain.paired_errors(curves, after=2).set_index("strategy")
    d = [0.22 - 0.25, 0.37 - 0.38, 0.18 - 0.19]  # NIMGP-NN's error minus MGP's after 2 labels, per repetition
    mean, se = sum(d) / 3, stats.sem(d)
    half = stats.t.ppf(0.975, 2) * se
    entropy = table.loc["entropy"]
    assert (entropy["n"], entropy["gap"], entropy["se"]) == (3, pytest.approx(mean), pytest.approx(se))
    assert (entropy["low"], entropy["high"]) == (pytest.approx(mean - half), pytest.approx(mean + half))
    # every random curve ends at 0.9 for both methods: no gap, no spread
    assert (table.loc["random", "gap"], table.loc["random", "se"]) == (pytest.approx(0.0), pytest.approx(0.0))
    with pytest.raises(ValueError, match="--after 3: no curve reaches 3"):
        gain.paired_errors(curves, after=3)

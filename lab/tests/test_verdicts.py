"""The verdict rule: t intervals over few repeats and TOST margins, checked against scipy's Welch t test."""

import numpy as np
import pytest
from scipy import stats

from labkit.verdicts import combined, order_verdict, value_verdict


def _row(method, values):
    v = np.asarray(values, dtype=float)
    return {"method": method, "gpal_mean": float(v.mean()), "gpal_se": float(v.std(ddof=1) / np.sqrt(v.size)),
            "n": int(v.size)}


def test_welch_degrees_of_freedom_and_interval_match_scipys_test():
    a, b = [0.31, 0.35, 0.29, 0.40], [0.20, 0.27, 0.22]
    ra, rb = _row("A", a), _row("B", b)
    se, dof = combined(ra["gpal_se"], 4, rb["gpal_se"], 3)
    welch = stats.ttest_ind(a, b, equal_var=False)
    assert (ra["gpal_mean"] - rb["gpal_mean"]) / se == pytest.approx(welch.statistic)
    assert welch.df == pytest.approx(dof)  # scipy reports Welch-Satterthwaite's dof
    # B ahead of A (lower NLL) is resolved exactly when Welch's two-sided p is below 0.05
    expected = "reproduced" if welch.pvalue < 0.05 else "not resolved"
    assert order_verdict(rb, ra, higher_is_better=False) == expected
    assert order_verdict(ra, rb, higher_is_better=False) == ("contradicted" if welch.pvalue < 0.05 else "not resolved")


def test_few_repeats_use_t_not_two_standard_errors():
    # 2.5 SEs apart at n = 3 each: beyond 2 SEs, inside t's 2.78 (4 dof)
    ra, rb = {"method": "A", "gpal_mean": 0.0, "gpal_se": 0.1, "n": 3}, {"method": "B", "gpal_mean": 0.25 * np.sqrt(2) * 1.0, "gpal_se": 0.1, "n": 3}
    assert order_verdict(ra, rb, higher_is_better=False) == "not resolved"
    rb["n"] = ra["n"] = 50  # the same gap with many repeats is resolved
    assert order_verdict(ra, rb, higher_is_better=False) == "reproduced"


def test_a_value_is_reproduced_only_inside_a_declared_margin():
    # gpal 0.50 ± 0.01 over 5 repeats against the paper's 0.49 ± 0.01 over 100
    kwargs = dict(paper_mean=0.49, paper_se=0.01, paper_n=100, gpal_mean=0.50, gpal_se=0.01, n=5)
    assert value_verdict(**kwargs)["verdict"] == "not resolved"  # no margin: agreement is not shown
    assert value_verdict(**kwargs, margin=0.05)["verdict"] == "reproduced"
    assert value_verdict(**kwargs, margin=0.02)["verdict"] == "not resolved"  # the 90 % interval crosses 0.02
    # TOST against scipy: both one-sided tests at the margin reject at 5 % exactly when reproduced
    sd_g, sd_p = 0.01 * np.sqrt(5), 0.01 * np.sqrt(100)
    for margin in (0.02, 0.05):
        lower = stats.ttest_ind_from_stats(0.50 + margin, sd_g, 5, 0.49, sd_p, 100, equal_var=False,
                                           alternative="greater").pvalue
        upper = stats.ttest_ind_from_stats(0.50 - margin, sd_g, 5, 0.49, sd_p, 100, equal_var=False,
                                           alternative="less").pvalue
        assert (max(lower, upper) < 0.05) == (value_verdict(**kwargs, margin=margin)["verdict"] == "reproduced")
    far = value_verdict(**{**kwargs, "gpal_mean": 0.60})
    assert far["verdict"] == "differs" and far["low"] > 0


def test_an_empty_or_one_split_row_is_refused():
    one = {"method": "A", "gpal_mean": 0.5, "gpal_se": None, "n": 1}
    with pytest.raises(ValueError, match=r"here \(A\): a verdict needs two or more repeats and their SE; got n = 1"):
        order_verdict(one, _row("B", [0.1, 0.2]), False, where="here")
    with pytest.raises(ValueError, match=r"got n = 0"):
        value_verdict(0.5, 0.1, 10, 0.5, None, 0)


def test_an_order_with_a_margin_sets_the_lead_against_it():
    # B behind A by 0.05 in accuracy, SE of the lead about 0.004 over 3 + 3 splits
    a, b = _row("A", [0.87, 0.875, 0.88]), _row("B", [0.82, 0.825, 0.83])
    assert order_verdict(a, b, True) == order_verdict(a, b, True, margin=0.02) == "reproduced"
    assert order_verdict(a, b, True, margin=0.1) == "contradicted"  # the lead is resolved below 0.1
    assert order_verdict(a, b, True, margin=0.05) == "not resolved"  # the lead's interval straddles it
    # the bound sits where Welch's one-sided test of lead = margin rejects at 2.5 %
    lead = stats.ttest_ind_from_stats(0.875 - 0.02, 0.005, 3, 0.825, 0.005, 3, equal_var=False, alternative="greater")
    assert lead.pvalue < 0.025

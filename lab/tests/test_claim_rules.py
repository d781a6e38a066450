"""The papers page's claim rules (lab/labkit/claim_rules.py): "alike" by TOST, and the repeats an open unit needs."""

import numpy as np
import pytest

from labkit.verdicts import value_verdict
from labkit.claim_rules import alike_verdict, repeats_to_resolve


def _row(method, values):
    v = np.asarray(values, dtype=float)
    return {"method": method, "gpal_mean": float(v.mean()), "gpal_se": float(v.std(ddof=1) / np.sqrt(v.size)),
            "n": int(v.size)}


def test_alike_needs_a_margin_and_apart_needs_the_interval_beyond_it():
    a, b = _row("A", [0.80, 0.81, 0.80, 0.82]), _row("B", [0.81, 0.80, 0.81, 0.82])
    assert alike_verdict(a, b, None) == "no margin"
    assert alike_verdict(a, b, 0.05) == "alike"
    far = _row("C", [0.60, 0.61, 0.60, 0.62])
    assert alike_verdict(a, far, 0.05) == "apart"
    assert alike_verdict(a, far, 0.19) == "not resolved"  # 0.2 apart: the interval straddles the margin


def test_repeats_to_resolve_is_the_first_count_a_linear_search_finds():
    """Bisection against a plain scan: gpal's mean 0.06 above a paper's 1.00 (SE 0.005), SE 0.04 at 4 repeats."""
    def at(k):
        return value_verdict(1.0, 0.005, 100, 1.06, 0.04 * np.sqrt(4 / k), k)["verdict"]

    scan = next(k for k in range(5, 1001) if at(k) != "not resolved")
    assert at(4) == "not resolved" and repeats_to_resolve(at, 4) == scan
    # inside the paper's own 95 % interval (|0.008| < 1.96 x 0.005) no count of gpal's repeats decides it
    assert repeats_to_resolve(lambda k: value_verdict(1.0, 0.005, 100, 1.008, 0.04 * np.sqrt(4 / k), k)["verdict"],
                              4) is None
    with pytest.raises(ValueError, match="two or more repeats"):
        repeats_to_resolve(at, 1)


def test_alike_is_tost_at_five_percent_each_side():
    """Alike exactly where both of Welch's one-sided tests at the margin reject at 5 % (scipy's, independently)."""
    from scipy import stats

    a, b = _row("A", [0.80, 0.81, 0.80, 0.82]), _row("B", [0.81, 0.83, 0.82, 0.84])
    sd = {r["method"]: r["gpal_se"] * np.sqrt(r["n"]) for r in (a, b)}
    for margin in (0.01, 0.02, 0.03, 0.05):
        lower = stats.ttest_ind_from_stats(b["gpal_mean"] + margin, sd["B"], 4, a["gpal_mean"], sd["A"], 4,
                                           equal_var=False, alternative="greater").pvalue
        upper = stats.ttest_ind_from_stats(b["gpal_mean"] - margin, sd["B"], 4, a["gpal_mean"], sd["A"], 4,
                                           equal_var=False, alternative="less").pvalue
        assert (max(lower, upper) < 0.05) == (alike_verdict(a, b, margin) == "alike"), margin


@pytest.mark.parametrize("script", ["lab/pages/papers_page.py", "lab/studies/paper001_toy_1d.py"])
def test_a_lab_script_without_labkit_says_what_to_install(script, monkeypatch):
    import runpy
    import sys
    from pathlib import Path

    path = Path(__file__).parents[2] / script
    if not path.is_file():  # the lab moved (lab/pages, lab/studies)
        path = Path(__file__).parents[2] / "lab" / Path(script).relative_to("workflows")
    for name in ("labkit", "labkit.claim_rules"):  # as where the lab is not installed
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.syspath_prepend(str(path.parent))
    with pytest.raises(SystemExit, match=r"needs the lab's package labkit: from the repository's top, "
                                         r"pip install -e lab"):
        runpy.run_path(str(path))

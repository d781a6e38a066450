"""Paired bootstrap comparison: intervals checked against the normal approximation and known cases."""

import numpy as np
import pytest
from sklearn.metrics import balanced_accuracy_score

from gpal.comparison import balanced_accuracy, bootstrap_comparison


def _case(n=400, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    good = 0.7 * np.eye(3)[y] + 0.3 * rng.dirichlet([1, 1, 1], n)
    poor = rng.dirichlet([1, 1, 1], n)
    return y, good, poor


def test_bootstrap_interval_of_the_nll_matches_its_standard_error():
    y, good, _ = _case()
    table = bootstrap_comparison(y, {"m": good}, reference="m", n_boot=4000, random_state=1)
    row = table[(table.model == "m") & (table.metric == "nll")].iloc[0]
    loss = -np.log(good[np.arange(y.size), y])
    se = loss.std(ddof=1) / np.sqrt(y.size)
    assert row.value == pytest.approx(loss.mean())
    assert (row.high - row.low) / (2 * 1.96) == pytest.approx(se, rel=0.1)


def test_paired_differences():
    y, good, poor = _case()
    table = bootstrap_comparison(y, {"good": good, "poor": poor, "same": good.copy()}, reference="good", n_boot=500)
    same = table[table.model == "same"]
    assert np.all(same["diff"] == 0) and np.all(same.diff_low == 0) and np.all(same.diff_high == 0)
    poor_nll = table[(table.model == "poor") & (table.metric == "nll")].iloc[0]
    assert poor_nll.diff_low > 0 and poor_nll.p_below_zero == 0  # the poor model is worse on every resample


def test_balanced_accuracy_matches_scikit_learn():
    y, _, poor = _case()
    assert balanced_accuracy(y, poor) == pytest.approx(balanced_accuracy_score(y, poor.argmax(axis=1)))


@pytest.mark.parametrize("probas, reference, message", [
    ({"a": np.full((5, 3), 1 / 3)}, "b", "reference 'b' is not among"),
    ({"a": np.full((4, 3), 1 / 3)}, "a", "must be \\(5, C\\)"),
    ({"a": np.full((5, 3), np.nan)}, "a", "contain NaN"),
])
def test_bad_input_is_named(probas, reference, message):
    with pytest.raises(ValueError, match=message):
        bootstrap_comparison(np.zeros(5, dtype=int), probas, reference=reference)

"""Paired bootstrap comparison: intervals against the normal approximation, paired differences, inputs."""

import time

import numpy as np
import pytest
from sklearn.metrics import balanced_accuracy_score

from gpal.evaluation.calibration import brier_score, expected_calibration_error
from gpal.evaluation.comparison import (METRICS, balanced_accuracy, bootstrap_comparison, difference_text,
                                       resampled_metrics)
from gpal.evaluation.metrics import negative_log_likelihood


def _case(n=400, seed=0, n_classes=3):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n)
    good = 0.7 * np.eye(n_classes)[y] + 0.3 * rng.dirichlet(np.ones(n_classes), n)
    poor = 0.3 * np.eye(n_classes)[y] + 0.7 * rng.dirichlet(np.ones(n_classes), n)
    return y, good, poor


def _row(table, model, metric):
    return table[(table.model == model) & (table.metric == metric)].iloc[0]


def test_table_layout_and_full_set_values():
    y, good, poor = _case()
    table = bootstrap_comparison(y, {"good": good, "poor": poor}, reference="good", n_boot=200)
    assert list(table.columns) == ["model", "metric", "value", "low", "high", "diff", "diff_low", "diff_high",
                                   "p_below_zero"]
    assert list(zip(table.model, table.metric)) == [(m, k) for m in ("good", "poor") for k in METRICS]
    assert _row(table, "poor", "nll").value == pytest.approx(negative_log_likelihood(y, poor), rel=1e-12)
    assert _row(table, "poor", "brier").value == pytest.approx(brier_score(y, poor), rel=1e-12)
    assert _row(table, "poor", "ece").value == pytest.approx(expected_calibration_error(y, poor), rel=1e-12)
    assert _row(table, "poor", "nll")["diff"] == pytest.approx(
        negative_log_likelihood(y, poor) - negative_log_likelihood(y, good), rel=1e-12)
    assert np.all(table.low <= table.high)


def test_bootstrap_se_of_the_nll_matches_the_standard_error_of_the_mean():
    y, good, _ = _case()
    table = bootstrap_comparison(y, {"m": good}, reference="m", n_boot=4000, random_state=1)
    row = _row(table, "m", "nll")
    loss = -np.log(good[np.arange(y.size), y])
    se = loss.std(ddof=1) / np.sqrt(y.size)
    assert (row.high - row.low) / (2 * 1.959964) == pytest.approx(se, rel=0.1)


def test_every_interval_holds_its_value_the_ece_too():
    """The ECE of a resample exceeds the sample's (binning noise adds miscalibration): a plain percentile interval
    can miss the value; the bias-corrected one is the percentile interval shifted by median - value."""
    y, good, poor = _case()
    table = bootstrap_comparison(y, {"good": good, "poor": poor}, reference="good", n_boot=500, random_state=3)
    assert np.all((table.low <= table.value) & (table.value <= table.high))
    assert np.all((table.diff_low <= table["diff"]) & (table["diff"] <= table.diff_high))
    # by hand for the ECE of "good": the same resamples, percentiles shifted by their median's bias
    index = np.random.default_rng(3).integers(0, y.size, size=(500, y.size))
    draws = np.array([expected_calibration_error(y[i], good[i]) for i in index])
    value = expected_calibration_error(y, good)
    assert np.median(draws) > value  # resampling biases the ECE upward
    low, mid, high = np.percentile(draws, [2.5, 50, 97.5])
    row = _row(table, "good", "ece")
    assert (row.low, row.high) == pytest.approx((low - (mid - value), high - (mid - value)), rel=1e-12)


def test_a_model_against_itself_differs_by_exactly_zero():
    y, good, poor = _case()
    table = bootstrap_comparison(y, {"good": good, "poor": poor, "copy": good.copy()}, reference="good",
                                 n_boot=300)
    for model in ("good", "copy"):
        rows = table[table.model == model]
        assert np.all(rows["diff"] == 0) and np.all(rows.diff_low == 0) and np.all(rows.diff_high == 0)
        assert np.all(rows.p_below_zero == 0)


def test_a_clearly_better_model_has_its_difference_interval_on_the_right_side():
    y, good, poor = _case()
    table = bootstrap_comparison(y, {"poor": poor, "good": good}, reference="poor", n_boot=500)
    for metric in ("nll", "brier"):
        row = _row(table, "good", metric)
        assert row["diff"] < 0 and row.diff_high < 0 and row.p_below_zero == 1.0
    for metric in ("accuracy", "balanced_accuracy"):
        row = _row(table, "good", metric)
        assert row["diff"] > 0 and row.diff_low > 0 and row.p_below_zero == 0.0


def test_a_difference_reads_as_the_other_model_minus_the_reference_and_parses_back():
    y, good, poor = _case()
    row = _row(bootstrap_comparison(y, {"poor": poor, "good": good}, reference="good", n_boot=200), "poor", "nll")
    text = difference_text(row["diff"], row.diff_low, row.diff_high)
    assert text.startswith("+")  # the worse model minus the reference: positive NLL
    diff, low, high = (float(x) for x in text.replace("[", "").replace("]", "").replace(",", "").split())
    assert (diff, low, high) == (round(row["diff"], 3), round(row.diff_low, 3), round(row.diff_high, 3))
    assert difference_text(-0.0214, -0.04149, 0.0025) == "-0.021 [-0.041, +0.003]"
    assert difference_text(0.5, 0.26, 0.74, digits=1) == "+0.5 [+0.3, +0.7]"


def test_vectorised_resamples_match_the_metrics_on_each_resample():
    y, _, poor = _case(n=60, n_classes=4)
    y[:3] = 3  # class 3 rare, so some resamples miss it and balanced accuracy must skip it
    y[3:][y[3:] == 3] = 0
    index = np.random.default_rng(5).integers(0, y.size, size=(200, y.size))
    assert any(3 not in y[i] for i in index)
    draws = resampled_metrics(y, poor, index, n_bins=15)
    for b, i in enumerate(index):
        assert draws["nll"][b] == pytest.approx(negative_log_likelihood(y[i], poor[i]), rel=1e-12)
        assert draws["brier"][b] == pytest.approx(brier_score(y[i], poor[i]), rel=1e-12)
        assert draws["accuracy"][b] == pytest.approx(np.mean(poor[i].argmax(1) == y[i]), rel=1e-12)
        assert draws["balanced_accuracy"][b] == pytest.approx(balanced_accuracy(y[i], poor[i]), rel=1e-12)
        assert draws["ece"][b] == pytest.approx(expected_calibration_error(y[i], poor[i]), rel=1e-12)  # another sum order


def test_balanced_accuracy_matches_scikit_learn():
    y, _, poor = _case(n_classes=4)
    assert balanced_accuracy(y, poor) == pytest.approx(balanced_accuracy_score(y, poor.argmax(axis=1)), rel=1e-12)


def test_full_size_comparison_is_fast():
    y, good, poor = _case(n=526, n_classes=4)
    probas = {"a": good, "b": poor, "c": 0.5 * (good + poor), "d": np.full_like(good, 0.25)}
    start = time.perf_counter()
    bootstrap_comparison(y, probas, reference="a", n_boot=2000)
    assert time.perf_counter() - start < 10.0


@pytest.mark.parametrize("y, probas, reference, message", [
    (np.zeros(5, int), {"a": np.full((5, 3), 1 / 3)}, "b", "reference 'b' is not among"),
    (np.zeros(5, int), {"a": np.full((4, 3), 1 / 3)}, "a", r"must have shape \(5, C\)"),
    (np.full(5, 3), {"a": np.full((5, 3), 1 / 3)}, "a", r"with C > 3"),
    (np.zeros(5, int), {"a": np.full((5, 3), np.nan)}, "a", "contain NaN"),
    (np.zeros(5, int), {"a": np.full((5, 3), 1.5)}, "a", r"must lie in \[0, 1\]"),
    (np.zeros(5), {"a": np.full((5, 3), 1 / 3)}, "a", "integer class codes"),
    (np.zeros((5, 1), int), {"a": np.full((5, 3), 1 / 3)}, "a", "1-D array"),
])
def test_bad_input_is_named(y, probas, reference, message):
    with pytest.raises(ValueError, match=message):
        bootstrap_comparison(y, probas, reference=reference)


def test_too_few_resamples_are_refused():
    with pytest.raises(ValueError, match="n_boot must be an integer >= 10"):
        bootstrap_comparison(np.zeros(5, int), {"a": np.full((5, 3), 1 / 3)}, reference="a", n_boot=5)


def test_bias_corrected_interval_stays_inside_the_metric_range():
    # Resamples biased low (median 0.95) of a value near the top (0.97) shift the upper limit past 1: clipped.
    from gpal.evaluation.comparison import RANGES, _bias_corrected

    draws = np.linspace(0.90, 1.00, 101)
    low, high = _bias_corrected(draws, 0.97, RANGES["balanced_accuracy"])
    assert high == 1.0
    assert low == pytest.approx(np.percentile(draws, 2.5) + 0.02)
    unclipped_low, unclipped_high = _bias_corrected(draws, 0.97, (-np.inf, np.inf))
    assert unclipped_high > 1.0 and unclipped_low == pytest.approx(low)

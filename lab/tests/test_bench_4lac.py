"""lab/studies/bench_4lac.py: the bcu it scores, its NLL of q, its paired intervals and the fallback's rows."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import repository_script


@pytest.fixture(scope="module")
def bench():
    return repository_script("lab/studies/bench_4lac.py")


def test_the_nll_of_q_is_minus_the_log_of_the_true_types_probability(bench):
    truth = np.array([True, False, False])
    q = np.array([0.8, 0.3, 0.1])
    binary_nll = repository_script("lab/studies/shared.py").binary_nll
    assert binary_nll(truth, q) == pytest.approx(-(np.log(0.8) + np.log(0.7) + np.log(0.9)) / 3)


def test_paired_intervals_hold_the_difference_and_the_reference_differs_by_nothing(bench, monkeypatch):
    monkeypatch.setattr(bench, "N_BOOT", 200)
    rng = np.random.default_rng(1)
    truth = np.r_[np.ones(10, bool), np.zeros(40, bool)]
    good = np.where(truth, 0.9, 0.1)[None, :] + rng.normal(0, 0.05, (3, 50))
    noise = rng.uniform(0.05, 0.95, (3, 50))
    q = {bench.REFERENCE: np.clip(good, 0.01, 0.99), "noise": noise}
    out = bench.measures(truth, q)
    assert out[bench.REFERENCE]["auc"][0] == pytest.approx(1.0)
    assert out[bench.REFERENCE]["auc"][3:] == [0.0, 0.0, 0.0]
    auc, nll = out["noise"]["auc"], out["noise"]["nll"]
    assert auc[1] <= auc[0] <= auc[2] and auc[5] < 0  # noise ranks worse, all through its interval
    assert nll[3] > 0 and nll[4] > 0  # and is surer where it is wrong
    assert nll[0] == pytest.approx(np.mean([-np.log(np.where(truth, v, 1 - v)).mean() for v in noise]))


@pytest.mark.slow
def test_the_dr4_bcu_scored_are_the_issues(bench):
    picked = bench.scored("4FGL-DR4")
    assert (picked["fsrq"].size, picked["fsrq"].sum(), picked["in_4lac"].sum(), picked["peak"].sum()) == (264, 16, 242, 139)
    assert not (picked["peak"] & np.isnan(picked["log_nu_syn"])).any()

"""lab/studies/bench_bcu_split.py: which sources it scores, their q, and its paired intervals."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from conftest import repository_script


@pytest.fixture(scope="module")
def bench():
    return repository_script("lab/studies/bench_bcu_split.py")


def _later_sources(folder, p_bll, p_fsrq):
    (folder / "tables").mkdir(parents=True)
    pd.DataFrame({"Source_Name": ["a", "b", "c", "d"], "CLASS1": ["bcu", "BCU ", "", "bcu"],
                  "later_class": ["fsrq", "bll", "fsrq", "psr"], "p_bll_gpal": p_bll, "p_fsrq_gpal": p_fsrq,
                  "p_bll_logistic": [0.1] * 4, "p_fsrq_logistic": [0.3] * 4}
                 ).to_csv(folder / "tables" / "later_check_sources.csv", index=False)
    return folder


def test_it_scores_the_later_typed_bcu_by_their_q(bench, tmp_path):
    folders = {"4lac": _later_sources(tmp_path / "on", [0.2, 0.6, 0.5, 0.1], [0.6, 0.2, 0.5, 0.1]),
               "none": _later_sources(tmp_path / "off", [0.4, 0.4, 0.5, 0.1], [0.4, 0.4, 0.5, 0.1])}
    got = bench.scores(folders)
    assert got["ids"].tolist() == ["a", "b"]  # the bcu FL16Y typed bll or fsrq
    np.testing.assert_array_equal(got["truth"], [True, False])
    np.testing.assert_allclose(got[bench.SPLIT], [0.75, 0.25])
    np.testing.assert_allclose(got[bench.NONE], [0.5, 0.5])
    np.testing.assert_allclose(got[bench.LOGISTIC], [0.75, 0.75])  # the none run's baseline
    folders["none"] = _later_sources(tmp_path / "other", [0.4] * 4, [0.4] * 4)
    pd.read_csv(folders["none"] / "tables" / "later_check_sources.csv").assign(Source_Name=list("wxyz")).to_csv(
        folders["none"] / "tables" / "later_check_sources.csv", index=False)
    with pytest.raises(RuntimeError, match="scored other sources"):
        bench.scores(folders)


def test_paired_intervals_hold_the_difference_and_the_reference_differs_by_nothing(bench, monkeypatch):
    monkeypatch.setattr(bench, "N_BOOT", 200)
    rng = np.random.default_rng(1)
    truth = np.r_[np.ones(10, bool), np.zeros(40, bool)]
    good = np.clip(np.where(truth, 0.9, 0.1)[None, :] + rng.normal(0, 0.05, (3, 50)), 0.01, 0.99)
    noise = rng.uniform(0.05, 0.95, (3, 50))
    out = bench.measures(truth, {bench.REFERENCE: good, "noise": noise})
    assert out[bench.REFERENCE]["auc"][0] == pytest.approx(1.0)
    assert out[bench.REFERENCE]["auc"][3:] == [0.0, 0.0, 0.0]
    auc, nll = out["noise"]["auc"], out["noise"]["nll"]
    assert auc[1] <= auc[0] <= auc[2] and auc[5] < 0  # noise ranks worse, all through its interval
    assert nll[3] > 0 and nll[4] > 0  # and is surer where it is wrong
    # the NLL of q: -log q for an FSRQ, -log(1 - q) for a BL Lac, averaged over sources and seeds
    expected = np.mean([-np.log(np.where(truth, v, 1 - v)).mean() for v in noise])
    assert nll[0] == pytest.approx(expected)


def test_the_stacked_split_reads_the_held_out_blazars_only(bench):
    """Held-out BL Lacs whose q is low and FSRQs whose q is high: the stacked q of the bcu keeps that order."""
    from gpal.catalogs import load_catalog
    from gpal.catalogs.lac import read_4lac

    catalog, lac = load_catalog("4FGL-DR4"), read_4lac()
    names = [str(n) for n in catalog.names[:40]]
    q = np.r_[np.full(20, 0.1), np.full(20, 0.9)]
    held = pd.DataFrame({"Source_Name": names + ["x"], "true_class": ["bll"] * 20 + ["fsrq"] * 20 + ["psr"],
                         "p_bll": np.r_[1 - q, 0.0], "p_fsrq": np.r_[q, 0.0]})
    got = bench.stacked(catalog, held, np.array([0.2, 0.8]), names[:2], lac, seed=0)
    assert got.shape == (2,) and got[0] < 0.5 < got[1]


def test_the_fsrqs_shares_of_the_auc_lost_sum_to_one_minus_the_auc(bench):
    from gpal.evaluation.metrics import roc_auc

    rng = np.random.default_rng(2)
    truth = rng.random(60) < 0.2
    q = np.round(rng.random(60), 1)  # ties between the types count half
    lost = bench.auc_lost(truth, q)
    assert (lost[~truth] == 0).all() and (lost >= 0).all()
    assert lost.sum() == pytest.approx(1 - roc_auc(truth.astype(int), q))
    # an FSRQ below every BL Lac costs 1 / n_FSRQ, one above them all nothing
    lost = bench.auc_lost(np.array([True, True, False, False]), np.array([0.0, 1.0, 0.4, 0.6]))
    np.testing.assert_allclose(lost, [0.5, 0.0, 0.0, 0.0])

"""lab/studies/bench_plane.py: the labels it trains on, the votes and the paired differences of its summary."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import numpy as np
import pytest

STUDIES = Path(__file__).parents[2] / "lab" / "studies"


@pytest.fixture
def plane(monkeypatch):
    """The script imported by name (it imports lab/studies/shared.py by name, as when run; its dataclass needs its
    module in sys.modules), both modules forgotten afterwards."""
    monkeypatch.syspath_prepend(str(STUDIES))
    for name in ("bench_plane", "shared"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    yield importlib.import_module("bench_plane")
    for name in ("bench_plane", "shared"):
        sys.modules.pop(name, None)


def test_every_fine_class_sums_into_the_coarse_group_of_its_codes(plane):
    from gpal.catalogs.schemes import coarse_group

    for name, codes in plane.FINE_CLASSES.items():
        assert {coarse_group(c) for c in codes} == {plane.group_of_class(name)}, name
    assert plane.group_of_class("snr_pwn") == "other" and plane.group_of_class("bcu") == "agn"


@pytest.mark.parametrize("labels", ["coarse", "fine"])
def test_unk_trains_only_when_asked_and_then_as_other(plane, labels):
    codes = np.array(["bll", "unk", "psr", "snr", "unk", "bcu"])
    rows, y, classes = plane.training_labels(codes, plane.Variant(labels=labels, unk="out"))
    assert list(rows) == [0, 2, 3, 5]
    rows, y, classes = plane.training_labels(codes, plane.Variant(labels=labels, unk="other"))
    assert list(rows) == list(range(6))
    assert [plane.group_of_class(classes[k]) for k in y] == ["agn", "other", "pulsar", "other", "other", "agn"]


def _unit(variant, seed, scores, codes=("bll", "psr", "snr", "spp")):
    from dataclasses import asdict

    return {"variant": asdict(variant), "seed": seed, "seconds": 1.0, "test_codes": list(codes), "scores": scores}


def test_a_vote_averages_its_members_where_all_ran_with_group_weights(plane):
    V = plane.Variant
    members = plane.VOTES["vote_rf_lr_gb"]
    scores = {m: np.random.default_rng(k).dirichlet(np.ones(3), 4).tolist() for k, m in enumerate(members)}
    complete = {V(m): {0: _unit(V(m), 0, scores[m])} for m in members}
    complete[V("random_forest", weights="none")] = {0: _unit(V("random_forest", weights="none"), 0, scores[members[0]])}
    votes = plane.votes(complete, [0])
    assert list(votes) == [V("vote_rf_lr_gb")]  # no vote where only one member ran, none of unweighted members
    expected = np.mean([scores[m] for m in members], axis=0)
    np.testing.assert_allclose(votes[V("vote_rf_lr_gb")][0]["scores"], expected)


def test_paired_difference_of_a_variant_with_itself_is_zero_and_other_test_sources_are_refused(plane):
    V = plane.Variant
    good = [[0.9, 0.05, 0.05], [0.1, 0.8, 0.1], [0.1, 0.1, 0.8], [0.2, 0.1, 0.7]]
    bad = [[0.1, 0.8, 0.1]] * 4
    a = {0: _unit(V(), 0, good), 1: _unit(V(), 1, good)}
    b = {0: _unit(V(), 0, bad), 1: _unit(V(), 1, bad)}
    rng = np.random.default_rng(0)
    assert plane._paired(a, a, [0, 1], rng) == (0.0, 0.0, 0.0, 0.0)
    mean, _, low, high = plane._paired(a, b, [0, 1], rng)
    assert mean == pytest.approx(1 - 1 / 3) and low <= mean <= high
    moved = {0: _unit(V(), 0, good, codes=("bll", "psr", "snr", "unk")), 1: a[1]}
    with pytest.raises(ValueError, match="different held-out sources"):
        plane._paired(a, moved, [0, 1], rng)


@pytest.mark.parametrize("train", ["plane", "sky"])
def test_cross_validation_scores_each_plane_source_once_a_repeat_and_never_trains_on_it(plane, train):
    rng = np.random.default_rng(3)
    y = rng.integers(0, 6, 400)
    y[:2] = 6  # a code with fewer sources than folds, as gc
    glat = rng.uniform(-90, 90, y.size)
    at_plane = np.nonzero(np.abs(glat) <= plane.PLANE_DEG)[0]
    variant = plane.Variant(train=train)
    assignments = []
    for repeat in range(2):
        fold_of = plane.cv_folds(y, 5, repeat)
        assignments.append(fold_of)
        scored = []
        for fold in range(5):
            tr_rows, te_rows = plane.unit_rows(glat, np.nonzero(fold_of != fold)[0], np.nonzero(fold_of == fold)[0], variant)
            assert np.intersect1d(tr_rows, te_rows).size == 0
            assert np.all(np.abs(glat[te_rows]) <= plane.PLANE_DEG)
            assert (np.all(np.abs(glat[tr_rows]) <= plane.PLANE_DEG)) == (train == "plane")
            # stratified: each code's share of a test fold is its share of the whole, to one source
            for code in range(6):
                assert abs(np.sum(y[fold_of == fold] == code) - np.sum(y == code) / 5) < 1
            scored.append(te_rows)
        scored = np.concatenate(scored)
        assert np.array_equal(np.sort(scored), at_plane)  # every plane source, once
    assert not np.array_equal(*assignments)  # each repeat its own shuffle


def test_cross_validation_fits_each_vote_member_and_the_pooled_recall_is_the_plain_one_at_unit_weights(plane):
    fitted = plane.cv_fitted()
    for v in plane.CV_VARIANTS:
        members = plane.VOTES.get(v.model, (v.model,))
        assert all(plane.replace(v, model=m) in fitted for m in members)
    assert fitted[-1].model == "gp" and fitted[0].model != "gp"
    rng = np.random.default_rng(0)
    groups = np.array(plane.GROUPS)
    truth = groups[rng.integers(0, 3, 50)]
    pred = groups[rng.integers(0, 3, (2, 50))]
    recalls = plane.pooled_recalls(truth, pred, np.ones((1, 50)))[0]
    assert np.mean(recalls) == pytest.approx(plane._ba(np.tile(truth, 2), pred.ravel()))
    doubled = plane.pooled_recalls(truth, pred, np.ones((1, 50)) * 2)[0]
    np.testing.assert_allclose(doubled, recalls)


def test_soft_agn_cleaning_drops_only_soft_outlier_training_agn_and_fits_on_the_fit_rows_only(plane):
    rng = np.random.default_rng(5)
    n_agn = 400
    codes = np.array(["bcu"] * n_agn + ["psr"] * 4 + ["bll"] * 4 + ["snr"] * 2)
    # uniform: no source drawn lies beyond sqrt(3) SD in any parameter, so within chi-square 3 dof's 97.5% (9.35)
    Z = np.column_stack([rng.uniform(1.9, 2.5, codes.size), rng.uniform(-0.5, 1.5, codes.size),
                         rng.uniform(7.0, 8.0, codes.size)])
    soft_agn, hard_agn, soft_psr, held_out_soft_agn = n_agn - 1, n_agn - 2, n_agn, n_agn + 4
    Z[[soft_agn, held_out_soft_agn]] = [3.8, 0.5, 7.5]   # far in the soft tail
    Z[hard_agn] = [0.6, 0.5, 7.5]                        # as far, but harder than the median
    Z[soft_psr] = [3.8, 0.5, 7.5]
    assert [codes[i] for i in (soft_agn, hard_agn, soft_psr, held_out_soft_agn)] == ["bcu", "bcu", "psr", "bll"]
    held_out = np.array([held_out_soft_agn, n_agn + 8])
    fit_rows = np.setdiff1d(np.arange(codes.size), held_out)
    train_rows = fit_rows[fit_rows >= n_agn - 50]  # a training region: part of the fitted rows
    dropped = plane.soft_agn_outliers(Z, codes, fit_rows, train_rows, 0.975)
    assert dropped.shape == train_rows.shape
    assert set(train_rows[dropped]) == {soft_agn}
    # the held-out rows take no part in the fit: moving them anywhere changes nothing
    moved = Z.copy()
    moved[held_out] = [[9.0, 9.0, 20.0], [-5.0, -9.0, 0.0]]
    np.testing.assert_array_equal(plane.soft_agn_outliers(moved, codes, fit_rows, train_rows, 0.975), dropped)
    # the Gaussian is the fitted rows' AGN: fitted to a softer population, the soft AGN is no outlier
    softer = Z.copy()
    softer[: n_agn - 50, 0] += 1.5
    assert not plane.soft_agn_outliers(softer, codes, fit_rows, train_rows, 0.975)[list(train_rows).index(soft_agn)]


def test_no_cleaning_keeps_the_slugs_and_names_of_the_units_saved_before_the_axis(plane):
    v = plane.Variant("gp", "plane", "coarse", "extended")
    assert v.slug == "gp_plane_coarse_extended_out_groups" and v.name == "gp / plane / coarse / extended / out / groups"
    assert plane.replace(v, clean="soft_agn").slug == "gp_plane_coarse_extended_out_groups_soft_agn"

"""What the catalog knows (a bcu is a blazar) applied to a classifier's probabilities: Bayes' rule with the bcu's
own prior, believed as far as the source's Bayesian association probability, checked against the rule written out
by hand."""

import numpy as np
import pytest

from conftest import write_small_catalog
from gpal.catalogs import load_catalog
from gpal.catalogs.known_classes import (
    NON_BLAZAR_SHARE, apply_known_classes, association_weight, class_weights, known_class_rule, outside_group,
)

CLASSES, MERGE, COUNTS = ["bll", "fsrq", "pulsar"], {"pulsar": ("psr", "msp")}, {"bll": 1459, "fsrq": 667, "pulsar": 274}


def test_a_bcu_gets_bayes_rule_with_its_own_prior_and_other_sources_are_left_alone():
    proba = np.array([[0.2, 0.1, 0.7], [0.2, 0.1, 0.7], [0.5, 0.5, 0.0]])
    labels = ["bcu", "", "BCU "]
    got, error = apply_known_classes(proba, labels, class_weights(CLASSES, MERGE, COUNTS), np.full(3, 0.01))
    # by hand: p(c | x, bcu) ~ p(c | x) * prior_bcu(c) / prior_train(c), the blazars keeping their training ratio
    train = np.array([1459, 667, 274]) / 2400
    bcu_prior = np.array([(1 - NON_BLAZAR_SHARE) * train[0] / train[:2].sum(),
                          (1 - NON_BLAZAR_SHARE) * train[1] / train[:2].sum(), NON_BLAZAR_SHARE])
    expected = proba[0] * bcu_prior / train
    np.testing.assert_allclose(got[0], expected / expected.sum(), rtol=1e-12)
    np.testing.assert_array_equal(got[1], proba[1])  # unassociated: as the model says
    np.testing.assert_allclose(got[2], proba[2])  # no pulsar probability to move
    assert np.argmax(got[0]) == 0  # p_pulsar 0.7 from the features is not enough against the bcu prior
    # the Monte Carlo error scales with the renormalisation (first order): w_max / sum(w p)
    w = class_weights(CLASSES, MERGE, COUNTS)["bcu"]
    np.testing.assert_allclose(error[0], 0.01 * w.max() / (w @ proba[0]))
    assert error[1] == 0.01


def test_the_rule_applies_only_where_the_classes_split_blazars_from_others():
    assert class_weights(["bll", "fsrq"], {}, {"bll": 5, "fsrq": 5}) == {}  # all blazar classes: nothing to move
    assert class_weights(["psr", "msp"], {}, {"psr": 5, "msp": 5}) == {}  # no blazar class: nothing to say
    assert known_class_rule(["psr", "msp"], {}, {"psr": 5, "msp": 5}) is None
    assert "probability of pulsar is weighted by a * 0.099 + 1 - a" in known_class_rule(CLASSES, MERGE, COUNTS)
    assert known_class_rule(CLASSES, MERGE, COUNTS).isascii()  # a FITS header keeps it
    assert outside_group(["bcu", "", "bll"], CLASSES, MERGE).tolist() == [[False, False, True], [False] * 3,
                                                                          [False] * 3]


def _bayes(p, prior_bcu):
    train = np.array([1459, 667, 274]) / 2400
    posterior = p * prior_bcu / train
    return posterior / posterior.sum()


def test_the_association_probability_says_how_far_the_blazar_prior_is_believed():
    proba = np.tile([0.2, 0.1, 0.7], (4, 1))
    labels = ["bcu", "bcu", "bcu", ""]
    association = np.array([1.0, 0.0, 0.5, 0.0])
    got, error = apply_known_classes(proba, labels, class_weights(CLASSES, MERGE, COUNTS), np.full(4, 0.01),
                                     association)
    train = np.array([1459, 667, 274]) / 2400
    bcu_prior = np.array([(1 - NON_BLAZAR_SHARE) * train[0] / train[:2].sum(),
                          (1 - NON_BLAZAR_SHARE) * train[1] / train[:2].sum(), NON_BLAZAR_SHARE])
    np.testing.assert_allclose(got[0], _bayes(proba[0], bcu_prior), rtol=1e-12)  # a = 1: Bayes with the bcu prior
    np.testing.assert_array_equal(got[1], proba[1])  # a = 0 (no Bayesian association): the features' probabilities
    # a = 0.5: the pulsar weight halfway between the blazar prior's (its ratio to a blazar's) and 1
    ratio = (bcu_prior[2] / train[2]) / (bcu_prior[0] / train[0])
    half = proba[2] * np.array([1.0, 1.0, 0.5 * ratio + 0.5])
    np.testing.assert_allclose(got[2], half / half.sum(), rtol=1e-12)
    assert got[0, 2] < got[2, 2] < got[1, 2]
    np.testing.assert_array_equal(got[3], proba[3])  # not a bcu: whatever its association
    # the Monte Carlo error scales with the row's own weights: max(v) / sum(v p)
    v = np.array([1.0, 1.0, 0.5 * ratio + 0.5])
    np.testing.assert_allclose(error[2], 0.01 * v.max() / (v @ proba[2]), rtol=1e-12)
    assert error[1] == 0.01 and error[3] == 0.01
    # no association given: every label taken as given (a = 1)
    np.testing.assert_allclose(apply_known_classes(proba, labels, class_weights(CLASSES, MERGE, COUNTS))[0][1],
                               got[0], rtol=1e-12)


@pytest.mark.parametrize("association, match", [
    (np.array([0.5, 1.2]), r"in \[0, 1\].*values \[1\.2\]"),
    (np.array([0.5, np.nan]), r"in \[0, 1\].*values \[nan\]"),
    (np.array([0.5]), r"one probability in \[0, 1\] per source \(2\); got shape \(1,\)"),
])
def test_an_association_that_is_not_one_probability_per_source_is_refused(association, match):
    with pytest.raises(ValueError, match=match):
        apply_known_classes(np.full((2, 3), 1 / 3), ["bcu", "bcu"], class_weights(CLASSES, MERGE, COUNTS),
                            association=association)


def test_association_weight_reads_assoc_prob_bay_a_missing_one_as_0_and_a_catalog_without_it_as_1(small_catalog,
                                                                                                    tmp_path):
    from astropy.table import Table

    from gpal.catalogs.catalog import HDU_NAME

    catalog = load_catalog(small_catalog)
    raw = np.asarray(Table.read(small_catalog, hdu=HDU_NAME)["ASSOC_PROB_BAY"], dtype=float)
    given, missing = np.nonzero((raw > 0) & (raw < 1))[0][:3], np.nonzero(np.isnan(raw))[0][:3]
    assert given.size and missing.size  # the small catalog holds both kinds
    ids = catalog.names[np.concatenate([given, missing])].tolist()
    a = association_weight(catalog, ids)
    np.testing.assert_allclose(a[:given.size], raw[given], rtol=1e-6)
    np.testing.assert_array_equal(a[given.size:], 0.0)
    older = load_catalog(write_small_catalog(tmp_path / "no_bay.fits", drop_column="ASSOC_PROB_BAY"))
    np.testing.assert_array_equal(association_weight(older, ids), 1.0)

"""What the catalog knows (a bcu is a blazar) applied to a classifier's probabilities: Bayes' rule with the bcu's
own prior, checked against the rule written out by hand."""

import numpy as np

from gpal.catalogs.known_classes import (
    NON_BLAZAR_SHARE, apply_known_classes, class_weights, known_class_rule, outside_group,
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
    assert "probability of pulsar is weighted by 0.099" in known_class_rule(CLASSES, MERGE, COUNTS)
    assert outside_group(["bcu", "", "bll"], CLASSES, MERGE).tolist() == [[False, False, True], [False] * 3,
                                                                          [False] * 3]

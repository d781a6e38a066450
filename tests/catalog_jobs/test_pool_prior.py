"""The pool prior: a group's class mix estimated by EM, checked against simulated groups of known mix and against
a direct maximum-likelihood fit of the mixture weights (every group moved: ``moved=None``); by default only the
unassociated sources move and the bcu keep their probabilities."""

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize
from scipy.stats import norm

from gpal.catalogs.classes import source_groups
from gpal.catalog_jobs.pool_prior import (
    MOVED_GROUPS, adjust_table, adjust_to_pool, mixes_text, training_prior,
)
from gpal.catalog_jobs.layout import POOL_PRIOR_FILE
from gpal.catalog_jobs.tables import EXTENDED, ClassifiedSources
from gpal.files import read_json, write_json_atomic

CLASSES = ("bll", "fsrq", "pulsar")
MEANS = np.array([-3.0, 0.0, 3.0])
TRAIN = np.array([0.57, 0.31, 0.12])
#: Two groups mixed as the study found the DR4 unassociated and bcu sources (issue 36).
MIXES = {"unassociated": np.array([0.31, 0.09, 0.60]), "bcu": np.array([0.70, 0.25, 0.05])}


def _posterior(x, prior):
    joint = norm.pdf(x[:, None], MEANS[None], 1.0) * prior
    return joint / joint.sum(axis=1, keepdims=True)


def _pool(n, seed):
    """Sources of both groups, and the probabilities a model trained with the TRAIN mix gives them."""
    rng = np.random.default_rng(seed)
    groups = np.repeat(list(MIXES), n)
    y = np.concatenate([rng.choice(3, size=n, p=mix) for mix in MIXES.values()])
    x = rng.normal(MEANS[y], 1.0)
    return x, groups, _posterior(x, TRAIN)


def _mle_mix(p, prior):
    """The mixture weights maximising sum_i log sum_c pi_c p(c | x_i) / prior_c, by a general-purpose optimiser."""
    ratio = p / prior

    def loss(theta):
        pi = np.exp(np.append(theta, 0.0))
        pi /= pi.sum()
        return -np.log(ratio @ pi).sum()

    theta = minimize(loss, np.zeros(p.shape[1] - 1), method="Nelder-Mead",
                     options={"xatol": 1e-10, "fatol": 1e-12, "maxiter": 20000}).x
    pi = np.exp(np.append(theta, 0.0))
    return pi / pi.sum()


def test_each_group_gets_its_own_known_mix():
    n = 20000
    x, groups, p = _pool(n, seed=0)
    result = adjust_to_pool(p, groups, TRAIN, CLASSES, moved=None)
    assert set(result.groups) == set(MIXES) and result.left_as_given == {}
    for group, mix in MIXES.items():
        found = np.array(list(result.groups[group]["prior"].values()))
        assert result.groups[group]["n"] == n and result.groups[group]["converged"]
        assert np.all(np.abs(found - mix) < 4 * np.sqrt(mix * (1 - mix) / n)), (group, found, mix)
        rows = groups == group
        # the adjusted probabilities are the exact posteriors under the group's estimated mix
        np.testing.assert_allclose(result.proba[rows], _posterior(x[rows], found), atol=1e-4)
    assert result.training_prior == dict(zip(CLASSES, TRAIN.tolist()))


def test_the_mix_is_the_maximum_likelihood_mix_and_a_fixed_point():
    _, groups, p = _pool(1500, seed=1)
    result = adjust_to_pool(p, groups, TRAIN, CLASSES, moved=None)
    for group in MIXES:
        rows = groups == group
        found = np.array(list(result.groups[group]["prior"].values()))
        np.testing.assert_allclose(found, _mle_mix(p[rows], TRAIN), atol=1e-4)
        # EM's fixed point: the mean adjusted probability is the mix itself
        np.testing.assert_allclose(result.proba[rows].mean(axis=0), found, atol=1e-4)
    np.testing.assert_allclose(result.proba.sum(axis=1), 1.0, atol=1e-12)


def test_a_pool_mixed_as_the_training_sources_is_left_alone():
    rng = np.random.default_rng(2)
    x = rng.normal(MEANS[rng.choice(3, size=400, p=TRAIN)], 1.0)
    p = _posterior(x, TRAIN)
    prior = p.mean(axis=0)  # the model's own mean prediction: EM has nothing to move
    result = adjust_to_pool(p, np.full(x.size, "unassociated"), prior, CLASSES)
    np.testing.assert_allclose(result.proba, p, atol=1e-12)
    np.testing.assert_allclose(list(result.groups["unassociated"]["prior"].values()), prior, atol=1e-4)


def test_groups_are_adjusted_independently():
    _, groups, p = _pool(800, seed=3)
    together = adjust_to_pool(p, groups, TRAIN, CLASSES, moved=None)
    rows = groups == "bcu"
    alone = adjust_to_pool(p[rows], groups[rows], TRAIN, CLASSES, moved=None)
    np.testing.assert_array_equal(together.proba[rows], alone.proba)
    assert together.groups["bcu"] == alone.groups["bcu"]


def test_by_default_only_the_unassociated_sources_move_and_the_bcu_keep_their_probabilities():
    n = 5000
    _, groups, p = _pool(n, seed=5)
    result = adjust_to_pool(p, groups, TRAIN, CLASSES)
    every = adjust_to_pool(p, groups, TRAIN, CLASSES, moved=None)
    bcu, unassociated = groups == "bcu", groups == "unassociated"
    np.testing.assert_array_equal(result.proba[bcu], p[bcu])  # left exactly as the model gave them
    assert not np.allclose(every.proba[bcu], p[bcu], atol=1e-3)  # though the bcu here are mixed otherwise
    # the unassociated sources move toward their own (pulsar-rich) mix, as when every group moves
    np.testing.assert_array_equal(result.proba[unassociated], every.proba[unassociated])
    mix, before = MIXES["unassociated"], p[unassociated].mean(axis=0)
    assert np.abs(result.proba[unassociated].mean(axis=0) - mix).sum() < 0.5 * np.abs(before - mix).sum()
    assert result.proba[unassociated, 2].mean() > before[2]
    assert list(result.groups) == ["unassociated"] == list(MOVED_GROUPS)
    assert result.left_as_given == {"bcu": {"n": n}}
    assert result.record()["left_as_given"] == {"bcu": {"n": n}}


def test_groups_from_class1():
    assert source_groups(["", " bcu ", "BCU", "  "]).tolist() == ["unassociated", "bcu", "bcu", "unassociated"]


def test_training_prior_from_counts():
    np.testing.assert_allclose(training_prior({"pulsar": 1, "bll": 2, "fsrq": 1}, CLASSES), [0.5, 0.25, 0.25])
    with pytest.raises(ValueError, match=r"no sources of \['pulsar'\]"):
        training_prior({"bll": 2, "fsrq": 1}, CLASSES)


@pytest.mark.parametrize("proba, groups, message", [
    (np.zeros((0, 3)), np.array([], str), "the pool is empty"),
    (np.full((2, 3), 0.3), np.array(["a", "a"]), r"must sum to 1 .*row 0 sums to 0.9"),
    (np.array([[0.5, 0.5, 0.0], [np.nan, 0.5, 0.5]]), np.array(["a", "a"]), "row 1 sums to nan"),
    (np.full((2, 2), 0.5), np.array(["a", "a"]), r"\(n, 3\) array"),
    (np.full((2, 3), 1 / 3), np.array(["a"]), "one label per row"),
])
def test_bad_input_is_named(proba, groups, message):
    with pytest.raises(ValueError, match=message):
        adjust_to_pool(proba, groups, TRAIN, CLASSES)


def test_a_table_is_adjusted_and_its_extended_sources_keep_their_class(tmp_path):
    _, groups, p = _pool(50, seed=4)
    frame = pd.DataFrame({"Source_Name": [f"S{i}" for i in range(p.shape[0])],
                          "CLASS1": np.where(groups == "bcu", "bcu", ""),
                          **{f"p_{c}": p[:, k] for k, c in enumerate(CLASSES)}})
    frame["predicted_class"] = np.where(np.arange(len(frame)) == 0, EXTENDED,
                                        np.asarray(CLASSES, dtype=object)[p.argmax(axis=1)])
    frame["entropy"] = 0.0
    table, result = adjust_table(ClassifiedSources(frame, {"X": 1}), CLASSES, TRAIN)
    q = table.frame[[f"p_{c}" for c in CLASSES]].to_numpy()
    np.testing.assert_array_equal(q, adjust_to_pool(p, groups, TRAIN, CLASSES).proba)
    np.testing.assert_array_equal(q[groups == "bcu"], p[groups == "bcu"])  # the bcu rows as the model gave them
    assert table.frame["predicted_class"].iloc[0] == EXTENDED
    assert (table.frame["predicted_class"].iloc[1:] == np.asarray(CLASSES)[q[1:].argmax(axis=1)]).all()
    np.testing.assert_allclose(table.frame["entropy"], -(q * np.log(q)).sum(axis=1), atol=1e-12)
    assert table.meta == {"X": 1, "POOLMIX": mixes_text(result.groups)}  # the header says where they were moved
    assert frame["entropy"].eq(0.0).all()  # the given table is left as it was
    write_json_atomic(tmp_path / POOL_PRIOR_FILE, result.record())  # as the main job writes it
    assert read_json(tmp_path / POOL_PRIOR_FILE) == result.record()

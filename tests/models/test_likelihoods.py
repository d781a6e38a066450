"""RobustMax: Gauss-Hermite quadrature against Monte Carlo and against GPflow's implementation."""

import gpflow
import numpy as np
import pytest
import tensorflow as tf

from gpal.models.likelihoods.base import Likelihood, RobustMax, likelihood_from_config, make_likelihood

C = 4


def _marginals(n=6, seed=0):
    rng = np.random.default_rng(seed)
    Fmu = rng.normal(0.0, 1.5, (n, C))
    Fvar = rng.uniform(0.05, 2.0, (n, C))
    Y = rng.integers(0, C, n)
    return Fmu, Fvar, Y


def _monte_carlo(Fmu, Fvar, eps, n_draws=200_000, seed=1, spread="others"):
    """Per point: draws of p(y=c|f) and log p(y=c|f) over f ~ q, for every c.  ``spread="all"``: the rule as paper
    001's authors code their MGP (mgpc.py 164, 174), 1 - eps on the arg-max plus eps / C on every class."""
    rng = np.random.default_rng(seed)
    f = Fmu[None] + np.sqrt(Fvar)[None] * rng.standard_normal((n_draws, *Fmu.shape))
    is_max = np.eye(C)[f.argmax(-1)]  # (S, n, C): 1 where c is the argmax
    if spread == "all":
        probs = (1 - eps) * is_max + eps / C
    else:
        probs = (1 - eps) * is_max + eps / (C - 1) * (1 - is_max)
    return probs, np.log(probs)


def test_variational_expectations_match_monte_carlo():
    Fmu, Fvar, Y = _marginals()
    eps = 0.05  # large enough that both branches of the likelihood matter
    lik = RobustMax(C, epsilon=eps)
    got = lik.variational_expectations(tf.constant(Fmu), tf.constant(Fvar), tf.constant(Y)).numpy()
    _, logp = _monte_carlo(Fmu, Fvar, eps)
    per_draw = logp[:, np.arange(len(Y)), Y]
    mc, se = per_draw.mean(0), per_draw.std(0) / np.sqrt(per_draw.shape[0])
    assert got.shape == (len(Y),)
    np.testing.assert_array_less(np.abs(got - mc), 5 * se + 1e-4)


def test_predict_proba_matches_monte_carlo_and_sums_to_one():
    Fmu, Fvar, _ = _marginals(seed=3)
    eps = 1e-3
    p = RobustMax(C, epsilon=eps).predict_proba(tf.constant(Fmu), tf.constant(Fvar)).numpy()
    probs, _ = _monte_carlo(Fmu, Fvar, eps)
    mc, se = probs.mean(0), probs.std(0) / np.sqrt(probs.shape[0])
    np.testing.assert_array_less(np.abs(p - mc), 5 * se + 1e-4)
    np.testing.assert_allclose(p.sum(1), 1.0, atol=1e-12)
    assert (p > 0).all()


def test_agrees_with_gpflow_robustmax():
    """GPflow's MultiClass(RobustMax) is an independent quadrature implementation of the same integral."""
    Fmu, Fvar, Y = _marginals(n=20, seed=5)
    eps = 1e-3
    ours = RobustMax(C, epsilon=eps).variational_expectations(tf.constant(Fmu), tf.constant(Fvar), tf.constant(Y))
    theirs = gpflow.likelihoods.MultiClass(C, invlink=gpflow.likelihoods.RobustMax(C, epsilon=eps))
    ref = theirs.variational_expectations(np.zeros((20, 1)), tf.constant(Fmu), tf.constant(Fvar), Y[:, None].astype(float))
    # GPflow squeezes each normal CDF into [1e-4, 1 - 1e-4], which moves its values by ~1e-5; its
    # 20-node Gauss-Hermite rule is itself off by up to ~5e-4 in P where the classes' variances differ
    # by more than ~5x (see tests/models/test_quadrature.py), so compare where it is accurate.
    similar = Fvar.max(axis=1) / Fvar.min(axis=1) < 5
    assert similar.sum() >= 10
    np.testing.assert_allclose(ours.numpy()[similar], ref.numpy()[similar], rtol=0, atol=5e-5)


def test_default_panel_order_has_converged():
    """8 Gauss-Legendre points per panel agree with 40 at any variance ratio."""
    rng = np.random.default_rng(7)
    Fmu, Y = rng.normal(0, 1.5, (50, C)), rng.integers(0, C, 50)
    Fvar = np.exp(rng.uniform(np.log(1e-3), np.log(10.0), (50, C)))  # ratios up to 1e4
    args = tf.constant(Fmu), tf.constant(Fvar), tf.constant(Y)
    coarse = RobustMax(C).variational_expectations(*args).numpy()
    fine = RobustMax(C, num_quadrature=40).variational_expectations(*args).numpy()
    np.testing.assert_allclose(coarse, fine, rtol=0, atol=1e-7)  # ~1e-9 in P, times |log eps| ~ 8


def test_confident_marginals_give_finite_values_and_gradients():
    Fmu = tf.Variable([[30.0, -30.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]], dtype=tf.float64)
    Fvar = tf.Variable([[1e-14, 1e-14, 1e-14, 1e-14], [1e-3, 50.0, 1.0, 1.0]], dtype=tf.float64)
    lik = RobustMax(C, learn_epsilon=True)
    with tf.GradientTape() as tape:
        ve = lik.variational_expectations(Fmu, Fvar, tf.constant([1, 0]))
        total = tf.reduce_sum(ve)
    grads = tape.gradient(total, [Fmu, Fvar, lik.epsilon.unconstrained_variable])
    assert np.isfinite(ve.numpy()).all()
    assert all(np.isfinite(g.numpy()).all() for g in grads)
    # point 0 is certainly mislabelled: E log p = log(eps / (C - 1))
    np.testing.assert_allclose(ve.numpy()[0], np.log(1e-3 / (C - 1)), rtol=1e-6)


def test_epsilon_trainable_only_when_learned():
    assert len(RobustMax(C).trainable_variables) == 0
    learned = RobustMax(C, epsilon=0.01, learn_epsilon=True)
    assert len(learned.trainable_variables) == 1
    np.testing.assert_allclose(learned.epsilon.numpy(), 0.01)


def test_config_round_trip_and_factory():
    lik = RobustMax(3, epsilon=0.02, learn_epsilon=True, num_quadrature=30)
    again = likelihood_from_config(lik.get_config())
    assert isinstance(again, RobustMax) and again.get_config() == lik.get_config()
    made = make_likelihood(lik, num_classes=5)  # a template object is copied, not shared
    assert make_likelihood(RobustMax(num_quadrature=30), 3).get_config()["num_quadrature"] == 30
    assert made is not lik and made.num_classes == 5 and made.num_latent(5) == 5
    assert isinstance(make_likelihood("RobustMax", 3, epsilon=0.1), Likelihood)


@pytest.mark.parametrize(
    "kwargs, match",
    [({"num_classes": 1}, "at least 2 classes"), ({"num_classes": 3, "epsilon": 0.0}, "epsilon"),
     ({"num_classes": 3, "epsilon": 1.5}, "epsilon")],
)
def test_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        RobustMax(**kwargs)


def test_unknown_likelihood_name():
    with pytest.raises(ValueError, match=r"likelihood must be one of \[.*'probit'.*'robustmax'.*'softmax'"):
        make_likelihood("heaviside", 3)


def test_a_likelihood_registers_under_its_declared_name():
    assert RobustMax.name == "robustmax" == RobustMax(2).name
    assert likelihood_from_config.__globals__["LIKELIHOODS"]["robustmax"] is RobustMax


def test_flip_spread_over_all_classes_is_the_authors_rule():
    """``flip_spread="all"`` against Monte Carlo of paper 001's authors' MGP rule, written out independently: the
    ELBO term and the predictive probabilities, and the floor log(eps / C) of a row that is certainly mislabelled."""
    Fmu, Fvar, Y = _marginals(seed=11)
    eps = 0.05
    lik = RobustMax(C, epsilon=eps, flip_spread="all")
    args = tf.constant(Fmu), tf.constant(Fvar)
    probs, logp = _monte_carlo(Fmu, Fvar, eps, spread="all")
    per_draw = logp[:, np.arange(len(Y)), Y]
    got = lik.variational_expectations(*args, tf.constant(Y)).numpy()
    np.testing.assert_array_less(np.abs(got - per_draw.mean(0)), 5 * per_draw.std(0) / np.sqrt(len(per_draw)) + 1e-4)
    p = lik.predict_proba(*args).numpy()
    np.testing.assert_array_less(np.abs(p - probs.mean(0)), 5 * probs.std(0) / np.sqrt(len(probs)) + 1e-4)
    np.testing.assert_allclose(p.sum(1), 1.0, atol=1e-12)
    certain = tf.constant([[30.0, -30.0, 0.0, 0.0]], tf.float64), tf.constant([[1e-14] * C], tf.float64)
    np.testing.assert_allclose(lik.variational_expectations(*certain, tf.constant([1])).numpy(), np.log(eps / C),
                               rtol=1e-6)
    np.testing.assert_allclose(lik.variational_expectations(*certain, tf.constant([0])).numpy(),
                               np.log(1 - eps + eps / C), rtol=1e-6)
    # the default spread differs from it: the same rows are not scored alike
    others = RobustMax(C, epsilon=eps).variational_expectations(*args, tf.constant(Y)).numpy()
    assert np.abs(others - got).max() > 1e-3


def test_flip_spread_is_kept_by_the_config_and_checked():
    lik = RobustMax(C, epsilon=1e-3, flip_spread="all")
    again = likelihood_from_config(lik.get_config())
    assert again.flip_spread == "all"
    assert float(again.flip()) == pytest.approx(1e-3 * (C - 1) / C)
    assert make_likelihood(RobustMax(flip_spread="all"), C).flip_spread == "all"
    with pytest.raises(ValueError, match="flip_spread.*one of \\['others', 'all'\\]"):
        RobustMax(C, flip_spread="winner")
    with pytest.raises(ValueError, match="flip_spread"):
        make_likelihood("robustmax", C, flip_spread="every")

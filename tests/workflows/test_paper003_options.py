"""Paper 003's options for its authors' choices (dirichletGPC): inputs scaled to [-1, 1] on the training rows, GPD's
ECE by its top label, GPR + Platt's inducing inputs from every training row; each against an independent computation."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from gpal.data.standardizer import Standardizer
from gpal.estimators.gpr_platt import GPRPlattClassifier
from gpal.models.svgp import kmeans_inducing
from gpal.workflows.compare import method_ece, method_spec


def _oneminusone(X, Xtest):
    """dirichletGPC's src/datasets.py normalise_oneminusone, restated: min-max of the training rows, then 2 x - 1."""
    low, high = X.min(0), X.max(0)
    ranges = np.where(high - low == 0, 1.0, high - low)
    return (X - low) / ranges * 2 - 1, (Xtest - low) / ranges * 2 - 1


def test_range_scaling_is_the_authors_min_max_of_the_training_rows():
    rng = np.random.default_rng(3)
    X = np.column_stack([rng.normal(5, 3, 40), rng.exponential(2, 40), np.full(40, 7.0)])  # the last one constant
    Xtest = np.column_stack([rng.normal(5, 6, 15), rng.exponential(4, 15), np.full(15, 7.0)])
    want_train, want_test = _oneminusone(X, Xtest)
    scaler = Standardizer.fit(X, to="range")
    np.testing.assert_allclose(scaler.transform_arrays(X)[0], want_train, atol=1e-12)
    np.testing.assert_allclose(scaler.transform_arrays(Xtest)[0], want_test, atol=1e-12)
    assert np.abs(want_test[:, :2]).max() > 1  # the test rows were not part of the fit
    with pytest.raises(ValueError, match="to must be one of"):
        Standardizer.fit(X, to="minmax")


def test_an_estimator_scales_by_its_training_rows_alone():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(60, 2)) * [1.0, 20.0] + [0.0, 100.0]
    y = (X[:, 0] > 0).astype(int)
    clf = GPRPlattClassifier(num_inducing=5, max_iter=5, scaling="range").fit(X[:45], y[:45])
    Xtest = X[45:] * 3  # far outside the training range
    np.testing.assert_allclose(clf._prediction_inputs(Xtest, None)[0], _oneminusone(X[:45], Xtest)[1], atol=1e-12)
    with pytest.raises(ValueError, match="scaling"):
        GPRPlattClassifier(scaling="minmax").fit(X, y)


def test_the_workflows_scaling_reaches_every_methods_estimator():
    spec = method_spec("dirichlet", 100, 1, 2, 4, options={"scaling": "range"})
    assert dict(spec.params)["scaling"] == "range"
    assert method_spec("svgp-softmax-mc", 100, 1, 2, 4, options={"scaling": "range"})["scaling"] == "range"


def _calibration_test(p, y, nbins=10):
    """dirichletGPC's src/evaluation.py calibration_test, restated: top label for a two-column p, p(y=1) for one."""
    edges = np.linspace(0, 1, nbins + 1)
    if p.ndim > 1 and p.shape[1] != 1:
        pred, p = p.argmax(1), p.max(1)
    else:
        pred = np.ones(p.size)
    gaps, sizes = [], []
    for i in range(nbins):
        inside = (p > edges[i]) & (p <= edges[i + 1])
        size = max(inside.sum(), 1)
        gaps.append(abs(np.sum(y[inside] == pred[inside]) / size - (edges[i] + edges[i + 1]) / 2))
        sizes.append(size)
    return float(np.dot(gaps, sizes) / np.sum(sizes))


def test_gpds_ece_by_its_top_label_as_the_authors_code_bins_two_columns():
    rng = np.random.default_rng(5)
    p1 = rng.uniform(0.02, 0.98, 200)
    y = (rng.uniform(size=200) < p1 ** 0.7).astype(int)  # miscalibrated on purpose
    proba = np.column_stack([1 - p1, p1])
    ece = {"n_bins": 10, "confidence": "midpoint", "binary": "positive", "empty_bins": "count",
           "top_label_methods": ["dirichlet"]}
    gpd, other = method_ece(y, proba, ece, "dirichlet"), method_ece(y, proba, ece, "gpr-platt")
    assert gpd == pytest.approx(_calibration_test(proba, y), abs=1e-12)  # two columns: the top label
    assert other == pytest.approx(_calibration_test(p1, y), abs=1e-12)  # one column: p(y = 1)
    assert gpd != pytest.approx(other, abs=1e-3)


def test_gpr_platt_takes_its_inducing_inputs_from_every_training_row_when_asked():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(80, 3))
    y = (X[:, 0] + 0.3 * rng.normal(size=80) > 0).astype(int)
    kw = dict(num_inducing=6, max_iter=3, random_state=2)
    everyone = GPRPlattClassifier(inducing_rows="all", **kw).fit(X, y)
    own = GPRPlattClassifier(**kw).fit(X, y)
    Xs = everyone.standardizer_.transform_arrays(X)[0]
    # the set the other families start from on these rows (GPD, the SVGPs: k-means of every training row, same seed)
    np.testing.assert_allclose(everyone.regression_.Z, kmeans_inducing(Xs, 6, everyone.random_seed_), atol=1e-12)
    assert not np.allclose(own.regression_.Z, everyone.regression_.Z)


def test_the_authors_gpc_kernel_holds_its_white_term_at_1e_4():
    from gpal.models.kernels import make_kernel

    kernel = make_kernel("se_iso_plus_fixed_white", 3)
    X = np.random.default_rng(7).normal(size=(4, 3))
    se = kernel.kernels[0]
    np.testing.assert_allclose(np.diag(kernel(X).numpy()), se.variance.numpy() + 1e-4, rtol=1e-12)
    np.testing.assert_allclose(kernel(X, X[::-1]).numpy(), se(X, X[::-1]).numpy(), rtol=1e-12)  # no cross terms
    assert kernel.kernels[1].variance not in kernel.trainable_variables and len(kernel.trainable_variables) == 2


@pytest.mark.slow
def test_the_lbfgs_gpc_minimises_its_full_batch_elbo():
    import tensorflow as tf

    from gpal.workflows.compare import method_spec

    rng = np.random.default_rng(8)
    X = rng.normal(size=(60, 2))
    y = (X[:, 0] + 0.4 * rng.normal(size=60) > 0).astype(int)
    clf = method_spec("svgp-softmax-mc-lbfgs", 60, 1, 300, 5, kernel="se_iso_plus_fixed_white",
                      options={"train_inducing": False})(0).fit(X, y)
    model = clf.estimator_.model_
    Xs = clf.estimator_.standardizer_.transform_arrays(X)[0]
    start = clf._estimator(0).fit(X, y).model_  # the same model before any step

    def loss(m):  # the fit's objective, recomputed here: -ELBO per row with the fit's fixed draws
        return float(-m.elbo(tf.constant(Xs), tf.zeros((60, 2), tf.float64), tf.constant(y, tf.int64),
                             tf.range(60, dtype=tf.int64), tf.constant([0, 0], tf.int64), num_data=60) / 60)

    assert clf.converged_ and 0 < clf.n_iter_ < 300, clf.history_
    assert loss(model) == pytest.approx(clf.history_["loss_per_row"], rel=1e-9)
    assert loss(model) < loss(start) - 0.05
    np.testing.assert_array_equal(model.gp.Z.numpy(), start.gp.Z.numpy())  # held, as the authors hold theirs
    proba = clf.predict_proba(X)
    assert proba.shape == (60, 2) and np.mean(proba.argmax(1) == y) > 0.8


def test_the_lbfgs_gpc_warns_that_it_shows_no_progress_bar():
    from gpal.workflows.lbfgs_svgp import LbfgsSVGPClassifier

    with pytest.warns(UserWarning, match=r"shows no progress bar .*progress=True is ignored"):
        LbfgsSVGPClassifier(progress=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        LbfgsSVGPClassifier(progress=False)  # as the workflows make it: silent


def test_the_lbfgs_gpc_shares_one_kernel_and_inducing_set_when_asked():
    """The authors' GPC is GPflow 1's SVGP with one kernel for all classes; the option reaches the optimised model."""
    from gpal.workflows.lbfgs_svgp import LbfgsSVGPClassifier

    rng = np.random.default_rng(9)
    X = rng.normal(size=(45, 2))
    y = np.repeat([0, 1, 2], 15)
    shared = LbfgsSVGPClassifier(num_inducing=4, max_iter=2, share_kernel_and_inducing=True).fit(X + y[:, None], y)
    own = LbfgsSVGPClassifier(num_inducing=4, max_iter=2).fit(X + y[:, None], y)
    assert shared.estimator_.model_.gp.shared and len(shared.estimator_.model_.gp.kernels) == 1
    assert shared.estimator_.model_.gp.Z.shape == (1, 4, 2)
    assert not own.estimator_.model_.gp.shared and len(own.estimator_.model_.gp.kernels) == 3
    assert "share_kernel_and_inducing=True" in repr(shared)


@pytest.mark.parametrize("name", ["003_milios_letter", "003_milios_magic"])
def test_the_paper_003_gpcs_share_one_kernel_and_inducing_set_as_the_authors_svgp(name):
    """dirichletGPC's evaluate_vgp builds one SVGP with one kernel and one Z for all its latent functions: every
    softmax GPC of the workflows shares them; the one-latent probit GPC has nothing to share."""
    from gpal.workflows import load_workflow
    from gpal.workflows.shipped import shipped_dir

    config = load_workflow(shipped_dir() / "papers" / f"{name}.yaml").config
    options = config["method_options"]
    # ... trained full-batch by L-BFGS-B with GPflow 1's ScipyOptimizer cap, as evaluate_vgp's opt.minimize
    assert "svgp-softmax-mc-lbfgs" in config["methods"] and config["training"]["iters"] == 1000
    for method in ("svgp-softmax-mc", "svgp-softmax-mc-lbfgs", "svgp-robustmax"):
        if method in options:
            assert options[method]["share_kernel_and_inducing"] is True, method
    assert "share_kernel_and_inducing" not in options.get("svgp-probit", {})

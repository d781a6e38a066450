"""gpal.catalog_jobs.later_labels: pairs without later labels refused; measures and paired intervals checked against
scikit-learn's metrics and against themselves."""

import numpy as np
import pytest
from sklearn.metrics import balanced_accuracy_score, log_loss, roc_auc_score

from gpal.catalog_jobs import later_labels
from gpal.evaluation.calibration import expected_calibration_error
from gpal.catalog_jobs.later_labels import PAIRS, check_pairs, measure_check


def test_the_shipped_pairs_have_later_labels_and_others_are_refused_by_name():
    assert check_pairs(PAIRS) == [tuple(p.split(":")) for p in PAIRS]
    with pytest.raises(ValueError, match="'FL16Y:4FGL-DR4' has no later labels.*FL16Y is the newest shipped release"):
        check_pairs(["FL16Y:4FGL-DR4"])
    with pytest.raises(ValueError, match="no later labels.*give a later release of 4FGL-DR2"):
        check_pairs(["4FGL:3FGL"])
    with pytest.raises(ValueError, match="EARLIER:LATER"):
        check_pairs(["4FGL-FL16Y"])
    with pytest.raises(ValueError, match="'4FGL-DR9' is not a shipped release"):
        check_pairs(["4FGL-DR9:FL16Y"])


def test_the_workflow_exits_2_before_any_fit_for_a_pair_without_later_labels(tmp_path, capsys):
    from gpal.cli import main

    status = main(["workflow", "gpal/workflows/files/later_labels.yaml", "--set", 'checks.pairs=["FL16Y:4FGL-DR4"]',
                   "--out", str(tmp_path / "run")])
    assert status == 2
    assert "FL16Y is the newest shipped release" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def _scored(rng, n=400):
    label = rng.integers(0, 3, n)
    label[:20] = -1  # later classes outside the three: not scored
    unassociated = rng.random(n) < 0.5
    return {"label": label, "agn_pulsar": unassociated & (label >= 0), "pulsar": label == 2,
            "faint": np.zeros(n, bool)}


def test_measures_are_scikit_learns_and_a_model_against_itself_differs_by_zero(monkeypatch):
    rng = np.random.default_rng(0)
    scored = _scored(rng)
    monkeypatch.setattr(later_labels, "scored_rows", lambda check, seed: scored)
    y = scored["label"]
    good = np.full((y.size, 3), 0.1)
    good[np.arange(y.size), np.maximum(y, 0)] = 0.8
    good = 0.5 * good + 0.5 * rng.dirichlet([1, 1, 1], y.size)
    noise = rng.dirichlet([1, 1, 1], y.size)
    probabilities = {0: {"gpal": good, "same": good.copy(), "noise": noise}}
    table = measure_check("A:B", [0], probabilities, n_boot=300).set_index(["model", "measure"])
    three = y >= 0
    assert table.loc[("gpal", "nll"), "value"] == pytest.approx(log_loss(y[three], good[three], labels=[0, 1, 2]))
    assert table.loc[("gpal", "ece"), "value"] == pytest.approx(expected_calibration_error(y[three], good[three]))
    assert table.loc[("noise", "balanced_accuracy"), "value"] == pytest.approx(
        balanced_accuracy_score(y[three], noise[three].argmax(1)))
    rows = scored["agn_pulsar"]
    assert table.loc[("gpal", "agn_pulsar_auc"), "value"] == pytest.approx(roc_auc_score(y[rows] == 2, good[rows, 2]))
    assert table.loc[("gpal", "pulsar_blazar_auc"), "value"] == pytest.approx(
        roc_auc_score(y[three] == 2, good[three, 2]))
    blazar = np.isin(y, [0, 1])
    assert table.loc[("noise", "bll_fsrq_auc"), "value"] == pytest.approx(
        roc_auc_score(y[blazar] == 1, noise[blazar, 1] / noise[blazar, :2].sum(1)))
    for measure in ("nll", "ece", "balanced_accuracy", "agn_pulsar_auc", "pulsar_blazar_auc", "bll_fsrq_auc"):
        same = table.loc[("same", measure)]
        assert same["diff"] == 0 and same["diff_low"] == 0 and same["diff_high"] == 0
    # gpal minus the noise: lower NLL, higher AUC, intervals that exclude zero
    assert table.loc[("noise", "nll"), "diff_high"] < 0 < table.loc[("noise", "agn_pulsar_auc"), "diff_low"]
    # shown as every table of gpal shows a difference: the noise minus gpal, a positive NLL and a negative AUC
    shown = later_labels.paired_table(table.reset_index().assign(check="A:B", n=1), ["gpal", "noise"]).set_index("model")
    noise_nll, noise_auc = table.loc[("noise", "nll")], table.loc[("noise", "agn_pulsar_auc")]
    assert shown.loc["noise", "nll"] == (f"{noise_nll['value']:.3f} (+{-noise_nll['diff']:.3f} "
                                         f"[+{-noise_nll['diff_high']:.3f}, +{-noise_nll['diff_low']:.3f}])")
    assert shown.loc["noise", "agn_pulsar_auc"].startswith(f"{noise_auc['value']:.3f} (-")


def test_seeds_are_averaged_and_the_interval_pairs_each_seed_with_itself(monkeypatch):
    rng = np.random.default_rng(1)
    scored = _scored(rng)
    monkeypatch.setattr(later_labels, "scored_rows", lambda check, seed: scored)
    a, b = rng.dirichlet([1, 1, 1], (2, scored["label"].size))
    three = scored["label"] >= 0
    table = measure_check("A:B", [0, 1], {0: {"gpal": a, "m": b}, 1: {"gpal": b, "m": a}}, n_boot=200)
    row = table.set_index(["model", "measure"]).loc[("m", "nll")]
    both = (log_loss(scored["label"][three], a[three]) + log_loss(scored["label"][three], b[three])) / 2
    assert row["value"] == pytest.approx(both) and row["seeds"] == 2
    # swapped between the seeds: the same mean on both sides, an interval about zero
    assert row["diff"] == pytest.approx(0, abs=1e-12) and row["diff_low"] < 0 < row["diff_high"]


def _pool_at_mix(rng, mix, n):
    """n rows of probabilities whose mean is exactly ``mix``: random rows pulled toward a row chosen to make it so."""
    rows = rng.dirichlet([1, 1, 1], n)
    lam = 0.3
    anchor = (np.asarray(mix) - lam * rows.mean(0)) / (1 - lam)
    assert (anchor > 0).all()
    return lam * rows + (1 - lam) * anchor


def test_the_pool_prior_leaves_a_pool_at_the_training_mix_as_gpal_gave_it():
    rng = np.random.default_rng(3)
    train_y = np.repeat([0, 1, 2], [60, 15, 25])  # training mix 0.60 / 0.15 / 0.25
    proba = np.vstack([_pool_at_mix(rng, [0.6, 0.15, 0.25], 150), _pool_at_mix(rng, [0.6, 0.15, 0.25], 80)])
    class1 = np.array([""] * 150 + ["bcu"] * 80)
    moved = later_labels.moved_to_pool(proba, class1, train_y, every_group=True)
    np.testing.assert_allclose(moved, proba, atol=1e-6)


def test_the_pool_prior_moves_each_group_toward_its_own_mix():
    rng = np.random.default_rng(4)
    train_mix, pool_mix = np.array([0.6, 0.15, 0.25]), np.array([0.15, 0.05, 0.8])
    train_y = np.repeat([0, 1, 2], [60, 15, 25])
    n = 2000
    y = rng.choice(3, n, p=pool_mix)
    means = np.array([[0.0, 0.0], [2.0, 0.0], [0.0, 2.0]])
    x = means[y] + rng.normal(size=(n, 2))
    likelihood = np.exp(-0.5 * ((x[:, None, :] - means) ** 2).sum(-1))  # p(x | class), up to a common factor
    proba = train_mix * likelihood
    proba /= proba.sum(1, keepdims=True)  # what a model calibrated on the training mix says
    truth = pool_mix * likelihood
    truth /= truth.sum(1, keepdims=True)  # what it should say on this pool
    at_training = _pool_at_mix(rng, train_mix, 300)
    moved = later_labels.moved_to_pool(np.vstack([proba, at_training]), np.array([""] * n + ["bcu"] * 300), train_y,
                                       every_group=True)
    # the unassociated group, skewed to pulsars, moves toward its mix and toward the posteriors of that mix
    assert proba[:, 2].mean() < moved[:n, 2].mean() == pytest.approx(pool_mix[2], abs=0.03)
    assert abs(moved[:n].mean(0) - pool_mix).sum() < 0.5 * abs(proba.mean(0) - pool_mix).sum()
    assert np.abs(moved[:n] - truth).mean() < 0.5 * np.abs(proba - truth).mean()
    assert log_loss(y, moved[:n], labels=[0, 1, 2]) < log_loss(y, proba, labels=[0, 1, 2])
    # the bcu group, at the training mix, stays where gpal put it
    np.testing.assert_allclose(moved[n:], at_training, atol=1e-6)
    # as gpal classify moves them (the default): the same unassociated rows, the bcu exactly as given even when
    # skewed, and the same rows as the library's own pool prior gives
    from gpal.catalog_jobs.pool_prior import adjust_to_pool
    skewed = np.vstack([proba, proba[:300]])
    groups = np.array([""] * n + ["bcu"] * 300)
    only = later_labels.moved_to_pool(skewed, groups, train_y)
    np.testing.assert_allclose(only[:n], moved[:n])
    np.testing.assert_array_equal(only[n:], skewed[n:])
    np.testing.assert_array_equal(only, adjust_to_pool(skewed, np.where(groups == "", "unassociated", groups),
                                                       train_mix, later_labels.CLASSES).proba)
    assert not np.allclose(later_labels.moved_to_pool(skewed, groups, train_y, every_group=True)[n:], skewed[n:],
                           atol=1e-3)


def test_gpal_pool_is_derived_from_gpals_fit_and_leaves_held_out_rows_alone(monkeypatch):
    rng = np.random.default_rng(5)
    train = type("Rows", (), {"y": np.repeat([0, 1, 2], [50, 20, 30])})()
    gpal = rng.dirichlet([1, 1, 1], 40)
    monkeypatch.setattr(later_labels, "check_data", lambda check, seed: (train, None, np.array([""] * 40)))
    held = later_labels.check_probabilities("held-out:FL16Y", 0, {"gpal": {"proba": gpal.tolist()}}, pool_prior=True)
    np.testing.assert_array_equal(held["gpal+pool"], held["gpal"])
    np.testing.assert_array_equal(held["gpal+pool_unassociated"], held["gpal"])
    with pytest.raises(ValueError, match="gpal\\+pool moves gpal's probabilities: fit gpal too"):
        later_labels.check_probabilities("held-out:FL16Y", 0, {"logistic": {"proba": gpal.tolist()}}, pool_prior=True)
    for derived in ("gpal+pool", "gpal+pool_unassociated"):
        with pytest.raises(ValueError, match="no fit of its own"):
            later_labels.fit_unit("held-out:FL16Y", 0, derived)


def _dataset(n, class1, y=None):
    from gpal.data.dataset import NoisyDataset

    rng = np.random.default_rng(n)
    return NoisyDataset(X=rng.normal(size=(n, 2)), X_var=np.full((n, 2), 0.01), y=y, feature_names=("a", "b"),
                        class_names=later_labels.CLASSES if y is not None else (),
                        ids=np.array([f"{class1 or 'u'}{i}" for i in range(n)]),
                        aux={"CLASS1": np.array([class1] * n)})


def test_the_bcu_class_adds_the_pools_bcu_rows_alone_as_a_fourth_class_after_the_three():
    from gpal.data.dataset import NoisyDataset

    train = _dataset(6, "bll", y=np.array([0, 1, 2, 0, 1, 2]))
    pool = NoisyDataset.concatenate([_dataset(4, "BCU "), _dataset(3, "")])
    four = later_labels.with_bcu_class(train, pool)
    assert four.class_names == (*later_labels.CLASSES, "bcu")
    assert four.class_counts() == {"bll": 2, "fsrq": 2, "pulsar": 2, "bcu": 4}
    assert list(four.ids) == [*train.ids, *pool.ids[:4]]  # the unassociated sources stay out
    np.testing.assert_array_equal(four.X[:6], train.X)
    np.testing.assert_array_equal(four.y[:6], train.y)


def test_folding_the_bcu_class_keeps_p_pulsar_and_the_fsrq_share_and_sums_to_one():
    rng = np.random.default_rng(3)
    proba = rng.dirichlet([1, 1, 1, 1], 50)
    proba[0] = [0.0, 0.0, 0.4, 0.6]  # no blazar probability of its own: the bcu's goes half to each
    folded = later_labels.fold_bcu(proba)
    np.testing.assert_allclose(folded.sum(1), 1.0)
    np.testing.assert_allclose(folded[:, 2], proba[:, 2])
    np.testing.assert_allclose(folded[1:, 1] / folded[1:, :2].sum(1), proba[1:, 1] / proba[1:, :2].sum(1))
    np.testing.assert_allclose(folded[0], [0.3, 0.3, 0.4])


def test_the_bcu_variant_reads_the_estimators_columns_by_class_name(monkeypatch):
    from gpal.catalog_jobs import settings

    fitted = {}

    class Sorted:  # as NoisyGPClassifier: columns in the order of the sorted class names
        def __init__(self, **params):
            pass

        def fit(self, data, sample_weight=None):
            fitted["classes"] = data.class_names
            self.classes_ = np.array(sorted(data.class_names))
            return self

        def predict_proba(self, X, X_var):
            by_name = {"bll": 0.1, "fsrq": 0.3, "pulsar": 0.2, "bcu": 0.4}
            return np.tile([by_name[c] for c in self.classes_], (len(X), 1))

    monkeypatch.setattr(settings, "main_job_estimator", Sorted)
    train = _dataset(6, "bll", y=np.array([0, 1, 2, 0, 1, 2]))
    pool = _dataset(4, "bcu")
    proba = later_labels._gp_proba({"bcu_class": True}, 0, train, pool.X, pool.X_var, pool=pool)
    assert fitted["classes"] == (*later_labels.CLASSES, "bcu")
    np.testing.assert_allclose(proba, np.tile([0.2, 0.6, 0.2], (4, 1)))


@pytest.mark.parametrize("variant, kernel_name", [("gpal_kernel_variance10", None), ("gpal_kernel_variance20", None),
                                                  ("gpal_linear", "se_plus_linear")])
def test_a_kernel_variance_variant_starts_the_squared_exponential_there_and_nothing_else(monkeypatch, variant,
                                                                                        kernel_name):
    import gpflow

    from gpal.catalog_jobs import settings
    from gpal.models.kernels import default_kernel

    given = {}

    class Recording:  # the estimator's constructor arguments, as the variant builds them
        def __init__(self, **params):
            given.update(params)
            self.classes_ = np.array(later_labels.CLASSES)

        def fit(self, data, sample_weight=None):
            return self

        def predict_proba(self, X, X_var):
            return np.full((len(X), 3), 1 / 3)

    monkeypatch.setattr(settings, "main_job_estimator", Recording)
    train = _dataset(6, "bll", y=np.array([0, 1, 2, 0, 1, 2]))
    variance = later_labels.GP_VARIANTS[variant].get("kernel_variance")
    later_labels._gp_proba(later_labels.GP_VARIANTS[variant], 0, train, train.X, train.X_var)
    kernel = given["kernel"]
    assert "kernel_variance" not in given  # a setting of the variant, not of the estimator
    squared_exponential = kernel if kernel_name is None else kernel.kernels[0]
    assert isinstance(squared_exponential, gpflow.kernels.SquaredExponential)
    assert float(squared_exponential.variance.numpy()) == pytest.approx(1.0 if variance is None else variance)
    if kernel_name is None:  # the estimator's default kernel, its length scales unchanged
        np.testing.assert_array_equal(squared_exponential.lengthscales.numpy(), default_kernel(2).lengthscales.numpy())
    else:
        assert isinstance(kernel.kernels[1], gpflow.kernels.Linear)


def test_the_class_variances_variant_starts_each_class_kernel_at_its_own_variance(monkeypatch):
    from gpal.catalog_jobs import settings
    from gpal.data.dataset import NoisyDataset

    made = []
    main_job_estimator = settings.main_job_estimator
    monkeypatch.setattr(settings, "main_job_estimator", lambda **params: made.append(main_job_estimator(**params))
                        or made[-1])
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1, 2], 10)
    train = NoisyDataset(X=rng.normal(size=(30, 2)) + y[:, None], X_var=np.full((30, 2), 0.01), y=y,
                         feature_names=("a", "b"), class_names=later_labels.CLASSES, ids=np.arange(30).astype(str))
    small = {"input_prior": "broad", "num_inducing": 5, "epochs": 0}  # no step: the kernels stay where they start
    variances = later_labels.GP_VARIANTS["gpal_class_kernel_variances"]["class_kernel_variances"]
    proba = later_labels._gp_proba({**later_labels.GP_VARIANTS["gpal_class_kernel_variances"], **small}, 0, train,
                                   train.X, train.X_var)
    assert proba.shape == (30, 3)
    np.testing.assert_allclose([k.variance.numpy() for k in made[-1].model_.gp.kernels], variances)
    later_labels._gp_proba(small, 0, train, train.X, train.X_var)
    np.testing.assert_allclose([k.variance.numpy() for k in made[-1].model_.gp.kernels], 1.0)
    with pytest.raises(ValueError, match="2 variances for 3 latent functions"):
        later_labels._gp_proba({"class_kernel_variances": (1.0, 2.0), **small}, 0, train, train.X, train.X_var)
    with pytest.raises(ValueError, match="share_kernel_and_inducing=True gives every class one kernel"):
        later_labels._gp_proba({**later_labels.GP_VARIANTS["gpal_class_kernel_variances"], **small,
                                "share_kernel_and_inducing": True}, 0, train, train.X, train.X_var)

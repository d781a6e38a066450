"""lab/studies/bench_paper002_gplib.py: without gplib it says where to get it and runs nothing; its predictive rule and
its marginals against independent computations; its summary's differences and target."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate, stats
from scipy.special import expit

from conftest import repository_script


@pytest.fixture(scope="module")
def study():
    return repository_script("lab/studies/bench_paper002_gplib.py")


def test_without_gplib_it_says_where_to_get_it_and_runs_nothing(study, tmp_path, capsys):
    units = tmp_path / "units"
    assert study.main(["--gplib", str(tmp_path / "nowhere"), "--units", str(units), "--json", str(tmp_path / "r.json")]) == 0
    out = capsys.readouterr().out
    assert "skipped" in out and "git clone https://github.com/izmailovpavel/gplib" in out and "37560b2" in out
    assert not units.exists() and not (tmp_path / "r.json").exists()


def test_the_probability_is_the_logistic_integrated_over_the_gaussian(study):
    mean, var = np.array([-2.0, 0.0, 0.7, 3.0]), np.array([0.3, 4.0, 1e-9, 9.0])
    by_quad = [integrate.quad(lambda f, m=m, v=v: expit(f) * np.exp(-(f - m) ** 2 / (2 * v)) / np.sqrt(2 * np.pi * v),
                              m - 12 * np.sqrt(v), m + 12 * np.sqrt(v), points=[m])[0] if v > 1e-6 else expit(m)
               for m, v in zip(mean, var)]
    np.testing.assert_allclose(study.probability(mean, var), by_quad, atol=1e-7)


def test_the_marginals_are_those_of_the_joint_gaussian(study):
    """q(f(x)) from q(u) = N(mu, Sigma): against the Gaussian's conditional, composed by hand on a joint covariance."""
    rng = np.random.default_rng(0)
    A = rng.normal(size=(7, 7))
    K = A @ A.T + 7 * np.eye(7)  # joint prior covariance of (f(x_1..3), u_1..4)
    K_xx, K_xm, K_mm = K[:3, :3], K[:3, 3:], K[3:, 3:]
    mu, B = rng.normal(size=4), rng.normal(size=(4, 4))
    Sigma = B @ B.T + np.eye(4)
    W = K_xm @ np.linalg.inv(K_mm)
    cov = K_xx - W @ K_xm.T + W @ Sigma @ W.T  # E over q(u) of p(f | u): law of total covariance
    mean, var = study.marginals(K_xm, K_mm, np.diag(K_xx), mu, Sigma)
    np.testing.assert_allclose(mean, W @ mu)
    np.testing.assert_allclose(var, np.diag(cov))


def _unit(split, side, acc, nll):
    return {"dataset": "german", "split": split, "method": "jj", "side": side, "accuracy": acc, "nll": nll, "seconds": 1.0}


def test_the_summary_pairs_gpal_with_gplib_by_split_and_judges_the_mean_against_the_target(study):
    units = [_unit(0, "gplib", 0.80, 0.45), _unit(1, "gplib", 0.70, 0.55),
             _unit(0, "gpal (scheme gplib)", 0.81, 0.44), _unit(1, "gpal (scheme gplib)", 0.70, 0.56),
             _unit(0, "gpal (scheme gpal)", 0.85, 0.40), _unit(1, "gpal (scheme gpal)", 0.74, 0.50)]
    (row,) = study.summary(units)
    near, far = row["gpal (scheme gplib) - gplib"], row["gpal (scheme gpal) - gplib"]
    assert near["accuracy"]["mean"] == pytest.approx(0.005) and near["nll"]["largest"] == pytest.approx(-0.01)
    assert near["within"] and not far["within"]  # 0.045 accuracy, -0.05 NLL: outside 0.02
    assert row["gplib"]["accuracy"] == pytest.approx(0.75) and row["splits"] == 2


def _fit(split, method, side, acc, nll=0.4):
    return {"dataset": "magic", "split": split, "method": method, "side": side, "accuracy": acc, "nll": nll,
            "seconds": 1.0}


def test_a_failed_fit_leaves_its_split_out_of_every_side_and_is_named(study):
    """The claim rule on the splits every fit scored: a failed gplib fit on split 2 takes split 2 out of gpal's pairs
    too, and says why; each lead is the mean of the per-split differences, judged against the declared margin."""
    sides = ["gplib", "gpal (scheme gplib)"]
    units = []
    for s, (full, taylor) in enumerate([(0.84, 0.852), (0.85, 0.855), (0.80, 0.90), (0.845, 0.85), (0.84, 0.848)]):
        units += [_fit(s, "jj-full", "gplib", full), _fit(s, "taylor", "gplib", taylor),
                  _fit(s, "jj-full", "gpal (scheme gplib)", full + 0.003), _fit(s, "taylor", "gpal (scheme gplib)", taylor)]
    units[8] = {**units[8], "accuracy": None, "nll": None, "failed": "LinAlgError: not positive definite"}
    claim = study.claim_rule(units, ["jj-full", "taylor"], sides)["magic"]
    assert claim["splits"] == [0, 1, 3, 4]
    assert claim["left_out"] == {2: ["vi-jj-full gplib: LinAlgError: not positive definite"]}
    gplib = claim["sides"]["gplib"]["leads"]["vi-taylor accuracy"]
    d = np.array([0.012, 0.005, 0.005, 0.008])
    assert gplib["per_split"] == pytest.approx(d)
    half = stats.t.ppf(0.975, 3) * d.std(ddof=1) / 2  # the 95 % t interval's half width, 4 splits
    assert [gplib["mean"], gplib["low"], gplib["high"]] == pytest.approx([0.0075, 0.0075 - half, 0.0075 + half])
    assert gplib["high"] < study.MARGIN and gplib["verdict"] == "contradicted"
    assert claim["sides"]["gpal (scheme gplib)"]["verdict"] == "contradicted"
    # the rule's other reading: a lead resolved above the margin reproduces the claim
    wide = [{**u, "accuracy": u["accuracy"] + (0.05 if u["method"] == "taylor" else 0.0)} for u in units if u["accuracy"]]
    assert study.claim_rule(wide, ["jj-full", "taylor"], sides)["magic"]["sides"]["gplib"]["verdict"] == "reproduced"


def test_the_summary_pairs_only_the_splits_both_sides_scored(study):
    units = [_unit(0, "gplib", 0.80, 0.45), _unit(2, "gplib", 0.70, 0.55),
             _unit(0, "gpal (scheme gplib)", 0.81, 0.44), _unit(1, "gpal (scheme gplib)", 0.60, 0.90),
             _unit(2, "gpal (scheme gplib)", 0.72, 0.56)]
    (row,) = study.summary(units)
    near = row["gpal (scheme gplib) - gplib"]
    assert near["splits"] == [0, 2] and near["accuracy"]["mean"] == pytest.approx(0.015)


def test_a_fit_worse_than_the_majority_class_is_kept_as_diverged_with_its_scores(study):
    y = np.array([0, 0, 0, 1])  # the majority class is 0.75 of the rows
    kept = study.diverged(_fit(7, "taylor", "gplib", 0.25, 17.9), y)
    assert kept["accuracy"] is None and kept["nll"] is None and kept["failed"].startswith("diverged")
    assert kept["diverged_scores"] == {"accuracy": 0.25, "nll": 17.9}
    assert study.diverged(_fit(7, "taylor", "gplib", 0.75), y)["accuracy"] == 0.75  # the majority's own share stays

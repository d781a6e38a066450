"""lab/studies/bench_paper002_gplib.py: without gplib it says where to get it and runs nothing; its predictive rule and
its marginals against independent computations; its summary's differences and target."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate
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

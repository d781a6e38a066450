"""benchmarks/heteroscedastic.py's Bayes answer, against a numerical integral over the noiseless inputs."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
from scipy.integrate import trapezoid
from scipy.stats import norm

SCRIPT = Path(__file__).parents[1] / "benchmarks" / "heteroscedastic.py"


def _module():
    spec = importlib.util.spec_from_file_location("heteroscedastic", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_bayes_answer_is_the_integral_over_the_noiseless_inputs():
    bench = _module()
    task = bench.make_task(50, 6, d=2, seed=4)
    means = np.random.default_rng(4).normal(scale=bench.SPREAD, size=(3, 2))  # the recipe's first draw
    grid = np.linspace(-12, 12, 4801)
    for x_obs, var, logp in zip(task["X_test"], task["X_var_test"], task["bayes_known"]):
        # p(x~ | c) = prod_j  integral N(x_j; mu_cj, 1) N(x~_j; x_j, var_j) dx_j, by the trapezoid rule
        like = [np.prod([trapezoid(norm.pdf(grid, mu[j], 1.0) * norm.pdf(x_obs[j], grid, np.sqrt(var[j])), grid)
                         for j in range(2)]) for mu in means]
        np.testing.assert_allclose(np.exp(logp), np.array(like) / np.sum(like), rtol=1e-6)

"""lab/studies/paper001_toy_1d.py: per-test-point paired NLL and error gaps against MGP on paper 001's 1-D toy,
and each predictive's distance from the Bayes-optimal one."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats

from conftest import repository_script
from gpal.data.synthetic import toy_1d

DATA = {"n_train": 30, "n_test": 40, "noise_std": 0.1, "variance": 1.0, "lengthscale": 0.75}


@pytest.fixture(scope="module")
def toy():
    return repository_script("lab/studies/paper001_toy_1d.py")


def _run(tmp_path, probas):
    (tmp_path / "units").mkdir()
    (tmp_path / "workflow.json").write_text(json.dumps({"data": DATA, "seed": 3, "methods": list(probas)}))
    for method, proba in probas.items():
        (tmp_path / "units" / f"{method}.json").write_text(json.dumps({"proba": proba.tolist()}))
    return tmp_path


def test_gaps_match_a_hand_computation_and_a_sharper_predictive_wins(toy, tmp_path):
    problem = toy_1d(DATA["n_train"], DATA["n_test"], DATA["noise_std"], seed=3)
    y = np.searchsorted(np.unique(problem.train.y), problem.test.y)
    flat = np.full((len(y), 3), 1 / 3)
    sharp = np.full((len(y), 3), 0.05)
    sharp[np.arange(len(y)), y] = 0.9
    sharp[::7] = np.roll(sharp[::7], 1, axis=1)  # every 7th point wrong
    rows = toy.paired(_run(tmp_path, {"MGP": flat, "NIMGP": sharp}), margin=0.01)
    bayes_row, mgp, nimgp = rows
    bayes = problem.bayes_proba(problem.test.X)
    assert bayes_row["method"] == "Bayes-optimal"
    assert bayes_row["nll"] == pytest.approx(-np.log(bayes[np.arange(len(y)), y]).mean())
    assert bayes_row["error"] == pytest.approx(np.mean(np.argmax(bayes, axis=1) != y))
    # KL(Bayes || uniform) is log 3 less the Bayes predictive's entropy
    assert mgp["kl"] == pytest.approx(np.mean(np.log(3) - stats.entropy(bayes, axis=1)))
    gap = -np.log(sharp[np.arange(len(y)), y]) - np.log(3)
    assert mgp["nll"] == pytest.approx(np.log(3))
    assert nimgp["nll_gap"] == pytest.approx(gap.mean()) and nimgp["nll_se"] == pytest.approx(stats.sem(gap))
    half = stats.t.ppf(0.975, len(y) - 1) * stats.sem(gap)
    assert nimgp["nll_low"] == pytest.approx(gap.mean() - half)
    assert nimgp["nll_verdict"] == "reproduced"
    wrong = (np.argmax(sharp, axis=1) != y).astype(float) - (np.argmax(flat, axis=1) != y)
    assert nimgp["error_gap"] == pytest.approx(wrong.mean())


def test_an_unfinished_run_is_refused_by_name(toy, tmp_path):
    run = _run(tmp_path, {"MGP": np.full((DATA["n_test"], 3), 1 / 3)})
    config = json.loads((run / "workflow.json").read_text())
    (run / "workflow.json").write_text(json.dumps({**config, "methods": ["MGP", "NIMGP"]}))
    with pytest.raises(FileNotFoundError, match="has not finished method 'NIMGP'"):
        toy.paired(run, margin=0.01)

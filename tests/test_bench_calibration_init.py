"""workflows/studies/bench_calibration_init.py's cross-validation: folds, their pooling and the calibrated model's ECE."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import numpy as np
import pytest

STUDIES = Path(__file__).parents[1] / "workflows" / "studies"


@pytest.fixture
def bench(monkeypatch):
    """The script imported by name, as when run, and forgotten afterwards."""
    monkeypatch.syspath_prepend(str(STUDIES))
    monkeypatch.delitem(sys.modules, "bench_calibration_init", raising=False)
    yield importlib.import_module("bench_calibration_init")
    sys.modules.pop("bench_calibration_init", None)


def _labels(rng: np.random.Generator, n: int = 103) -> np.ndarray:
    return rng.choice(3, size=n, p=[0.6, 0.3, 0.1])


def test_the_folds_hold_out_every_row_once_and_keep_each_class_share(bench):
    y = _labels(np.random.default_rng(0))
    folds = bench.cv_folds(y, seed=3)
    assert len(folds) == bench.N_FOLDS
    assert np.array_equal(np.sort(np.concatenate(folds)), np.arange(y.size))
    for held_out in folds:
        counts = np.bincount(y[held_out], minlength=3)
        assert np.all(np.abs(counts - np.bincount(y) / bench.N_FOLDS) <= 1)
    assert not all(np.array_equal(a, b) for a, b in zip(folds, bench.cv_folds(y, seed=4)))


def _saved_folds(out: Path, bench, y: np.ndarray, proba: dict[str, np.ndarray], seed: int) -> None:
    """Fold files as `cv` writes them, from probabilities already known for every row."""
    (out / "cv").mkdir(parents=True, exist_ok=True)
    for k, held_out in enumerate(bench.cv_folds(y, seed)):
        np.savez(out / "cv" / f"CAT.seed{seed}.fold{k}.npz", index=held_out, label=y[held_out],
                 class_names=np.array(["a", "b", "c"]), **{m: p[held_out] for m, p in proba.items()})


def test_pooling_puts_each_fold_back_in_the_rows_order_and_a_model_against_itself_differs_by_nothing(bench,
                                                                                                    tmp_path):
    rng = np.random.default_rng(1)
    y = _labels(rng)
    proba = {m: rng.dirichlet(np.ones(3), size=y.size) for m in ("gpal", "logistic")}
    proba["same_as_logistic"] = proba["logistic"]
    _saved_folds(tmp_path, bench, y, proba, seed=0)
    pooled = bench.pooled_folds(tmp_path, "CAT", 0)
    assert np.array_equal(pooled["label"], y)
    assert all(np.array_equal(pooled[m], p) for m, p in proba.items())
    assert bench.pooled_folds(tmp_path, "CAT", 1) is None

    result = bench.cv_analyse(tmp_path, ["CAT"], [0])["catalogs"]["CAT"]
    assert result["n"] == y.size and result["class_names"] == ["a", "b", "c"]
    assert result["models"]["same_as_logistic"]["minus_logistic"]["ece"] == [0.0, 0.0]
    assert result["models"]["gpal"]["minus_logistic"]["nll"] != [0.0, 0.0]
    assert len(result["models"]["gpal"]["class_ece"]) == 3
    assert 0 < result["models"]["gpal"]["calibrated_ece"] < 1
    assert result["models"]["same_as_logistic"]["minus_logistic"]["class_ece_2"] == [0.0, 0.0]
    assert (tmp_path / "calibration_cv.md").read_text().count("| gpal |") == 1


def test_a_fold_missing_from_the_pool_is_refused(bench, tmp_path):
    rng = np.random.default_rng(2)
    y = _labels(rng)
    _saved_folds(tmp_path, bench, y, {"gpal": rng.dirichlet(np.ones(3), size=y.size)}, seed=0)
    (tmp_path / "cv" / "CAT.seed0.fold0.npz").unlink()
    with pytest.raises(ValueError, match="every row once"):
        bench.pooled_folds(tmp_path, "CAT", 0)


def test_labels_drawn_from_the_probabilities_give_the_ece_a_calibrated_model_is_expected_to_show(bench):
    from gpal.evaluation.calibration import calibrated_ece

    rng = np.random.default_rng(3)
    proba = rng.dirichlet([8.0, 1.0, 1.0], size=400)
    draws = bench.calibrated_ece_draws(proba, seed=0, n_draws=400)
    assert draws.shape == (400,) and draws.std() > 0
    # the exact expectation (a Poisson-binomial per bin) within four standard errors of the draws' mean
    assert abs(draws.mean() - calibrated_ece(proba, bench.N_BINS)) < 4 * draws.std() / np.sqrt(draws.size)


def test_repeats_scoring_the_same_sources_alike_share_one_resample_and_leave_the_interval_as_one_repeat_gives(
        bench, tmp_path):
    rng = np.random.default_rng(4)
    y = _labels(rng, 200)
    proba = {m: rng.dirichlet(np.ones(3), size=y.size) for m in ("gpal", "logistic")}
    for seed in (0, 1):
        _saved_folds(tmp_path, bench, y, proba, seed)
    one, two = (bench.cv_analyse(tmp_path, ["CAT"], seeds)["catalogs"]["CAT"]["models"]["gpal"]["minus_logistic"]
                for seeds in ([0], [0, 1]))
    assert one == two


def test_each_class_ece_of_the_resample_holding_every_row_once_is_the_class_ece_of_the_rows(bench):
    from gpal.evaluation.calibration import class_reliability

    rng = np.random.default_rng(5)
    y = _labels(rng, 300)
    proba = rng.dirichlet(np.ones(3), size=y.size)
    proba[:4, 0] = np.linspace(0.0, 1.0, bench.N_BINS + 1)[[0, 1, 7, 15]]  # scores on bin edges
    proba[:4, 1:] = (1.0 - proba[:4, :1]) / 2
    every_row = np.stack([np.arange(y.size), rng.permutation(y.size)])
    for c in range(3):
        resampled = bench.resampled_class_eces(y, proba, c, every_row)
        assert resampled == pytest.approx([class_reliability(y, proba, c, bench.N_BINS).ece] * 2, abs=1e-12)

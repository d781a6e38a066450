"""lab/studies/bench_calibration_init.py's cross-validation (folds, their pooling, the calibrated model's
ECE), its later-label record and its summary."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

import numpy as np
import pytest

STUDIES = Path(__file__).parents[2] / "lab" / "studies"


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


def _later_labels_run(folder: Path, commit: str = "abc1234567") -> dict[tuple[str, str, str], float]:
    """A later_labels workflow folder as the workflow writes it (``later_labels.csv``, ``workflow.json``), every check
    with gpal, var20 and logistic regression, each value and interval distinct; the values by (check, model, measure)."""
    import pandas as pd

    from gpal.catalog_jobs.later_labels import HELD_OUT, PAIRS

    rng = np.random.default_rng(5)
    rows, values = [], {}
    for check in [*PAIRS, *(f"held-out:{r}" for r in HELD_OUT)]:
        n = int(rng.integers(100, 600))
        for model in ("gpal", "gpal_kernel_variance20", "logistic"):
            for measure in ("nll", "ece", "balanced_accuracy", "bll_fsrq_auc", "ece_bll"):
                value = float(rng.uniform(0.01, 0.9))
                row = {"check": check, "model": model, "measure": measure, "n": n, "value": value,
                       "seed_sd": 0.01, "seeds": 5, "commit": commit}
                if model != "gpal":
                    diff = float(rng.normal(0, 0.01))
                    row.update(diff=diff, diff_low=diff - 0.004, diff_high=diff + 0.003)
                rows.append(row)
                values[check, model, measure] = row
    folder.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_csv(folder / "later_labels.csv", index=False)
    (folder / "workflow.json").write_text(json.dumps(
        {"workflow": "later_labels", "seeds": [0, 1, 2, 3, 4], "n_boot": 1000,
         "models": ["gpal", "gpal_kernel_variance20", "logistic"]}), encoding="utf-8")
    return values


def test_the_later_label_record_holds_the_runs_values_and_each_interval_as_var20_minus_gpal(bench, tmp_path):
    run = tmp_path / "run"
    rows = _later_labels_run(run)
    result = bench.later_labels(run, tmp_path / "record")
    assert result["commit"] == "abc1234567" and result["seeds"] == [0, 1, 2, 3, 4]
    assert result["commands"][0].startswith("OMP_NUM_THREADS=1 nice -n 10 gpal workflow later_labels")
    assert '--set "models=[gpal, gpal_kernel_variance20, logistic]" --set "seeds=[0, 1, 2, 3, 4]"' in result["commands"][0]
    assert "n_boot" not in result["commands"][0]
    assert list(result["checks"])[0] == "3FGL:FL16Y" and len(result["checks"]) == 7
    for check, c in result["checks"].items():
        assert c["n"] == rows[check, "gpal", "nll"]["n"]
        for model in ("gpal", "logistic"):
            assert c[model] == pytest.approx({m: rows[check, model, m]["value"] for m in ("nll", "ece")})
        for measure in ("nll", "ece", "balanced_accuracy", "bll_fsrq_auc"):
            r = rows[check, "gpal_kernel_variance20", measure]  # diff is gpal minus the model
            assert c["variant_minus_gpal"][measure] == pytest.approx([-r["diff"], -r["diff_high"], -r["diff_low"]])
    table = (tmp_path / "record" / "later_labels_var20.md").read_text(encoding="utf-8")
    first = result["checks"]["3FGL:FL16Y"]
    nll = first["variant_minus_gpal"]["nll"]
    assert (f"| 3FGL -> FL16Y | {first['n']} | {first['gpal']['nll']:.3f} / {first['gpal']['ece']:.3f} | "
            f"{nll[0]:+.3f} [{nll[1]:+.3f}, {nll[2]:+.3f}] |") in table
    assert "| FL16Y held out |" in table and "abc1234567" in table
    assert (tmp_path / "record" / "later_labels_var20.json").is_file()


@pytest.mark.parametrize("commit", ["abc1234567+dirty", "unknown"])
def test_a_later_label_run_at_no_committed_source_is_refused(bench, tmp_path, commit):
    _later_labels_run(tmp_path, commit)
    with pytest.raises(ValueError, match="committed source"):
        bench.later_labels(tmp_path, tmp_path)
    assert not (tmp_path / "later_labels_var20.json").exists()


def test_a_later_label_run_without_var20_or_of_fewer_checks_is_refused(bench, tmp_path):
    import pandas as pd

    _later_labels_run(tmp_path)
    measures = pd.read_csv(tmp_path / "later_labels.csv")
    measures[measures["model"] != "gpal_kernel_variance20"].to_csv(tmp_path / "later_labels.csv", index=False)
    with pytest.raises(ValueError, match="no nll of gpal_kernel_variance20"):
        bench.later_labels(tmp_path, tmp_path)
    measures[measures["check"] != "held-out:FL16Y"].to_csv(tmp_path / "later_labels.csv", index=False)
    with pytest.raises(ValueError, match="every check"):
        bench.later_labels(tmp_path, tmp_path)


def test_the_summary_check_passes_on_its_rendering_and_refuses_an_edited_file_writing_nothing(bench, tmp_path,
                                                                                              monkeypatch, capsys):
    import shutil

    from result_records import CHECK_VARIABLE

    for name in bench.SUMMARY_RECORDS:
        shutil.copy(bench.RECORD / name, tmp_path / name)
    monkeypatch.delenv(CHECK_VARIABLE, raising=False)
    assert bench.summary(tmp_path) == 0
    rendered = (tmp_path / bench.SUMMARY).read_text(encoding="utf-8")
    fl16y = json.loads((tmp_path / "calibration_init_seeds0-9.json").read_text(encoding="utf-8"))["catalogs"]["FL16Y"]
    var20 = fl16y["models"]["var20"]
    row = (f"| FL16Y ({fl16y['n']}) | var20 | {var20['nll']:.3f} | {var20['ece']:.3f} "
           f"({np.std([r['ece'] for r in var20['per_seed']], ddof=1):.3f}) |")
    assert row in rendered  # the ten-split record's mean and its spread over the splits
    monkeypatch.setenv(CHECK_VARIABLE, "1")
    assert bench.summary(tmp_path) == 0 and capsys.readouterr().out.strip().endswith(": matches")
    edited = rendered.replace(row, row.replace("| var20 |", "| var20 | 0.000 |"), 1)
    (tmp_path / bench.SUMMARY).write_text(edited, encoding="utf-8")
    assert bench.summary(tmp_path) == 1 and "is not what `summary` renders" in capsys.readouterr().err
    assert (tmp_path / bench.SUMMARY).read_text(encoding="utf-8") == edited

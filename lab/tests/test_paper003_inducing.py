"""lab/studies/bench_paper003_inducing.py: its summary and verdicts on made-up fits, and its refusals."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from conftest import repository_script


@pytest.fixture(scope="module")
def bench():
    return repository_script("lab/studies/bench_paper003_inducing.py")


def _fits(errors, cpu):
    """Fits of three splits: {(method, M): per-split values}."""
    return [{"split": k, "method": method, "num_inducing": m, "epochs": 100 if method == "gpc" else None,
             "error": errors[(method, m)][k], "nll": 0.5, "cpu_seconds": cpu[(method, m)][k],
             "wall_seconds": 2 * cpu[(method, m)][k]}
            for (method, m) in errors for k in range(3)]


def test_summary_means_intervals_and_verdicts_follow_the_papers_page_rule(bench):
    errors = {("gpd", 10): [0.30, 0.31, 0.29], ("gpd", 40): [0.20, 0.21, 0.19], ("gpc", 10): [0.25, 0.25, 0.25]}
    cpu = {("gpd", 10): [1.0, 1.1, 0.9], ("gpd", 40): [5.0, 5.2, 4.8], ("gpc", 10): [3.0, 3.1, 2.9]}
    fits = _fits(errors, cpu)
    for fit in fits:
        if fit["method"] == "gpc":
            fit["loss_history"] = list(np.linspace(2.0, 1.0, 100) + fit["split"])
    summary = bench.summarize(fits)
    row = summary["rows"]["GPD M=40"]
    assert row["n"] == 3
    assert row["error"]["mean"] == pytest.approx(0.20)
    assert row["error"]["se"] == pytest.approx(np.std([0.20, 0.21, 0.19], ddof=1) / math.sqrt(3))
    # error at M=40 ahead of M=10: Welch t interval of 0.10 with equal SEs, 4 degrees of freedom, excludes 0
    se = math.sqrt(2) * 0.01 / math.sqrt(3)
    assert 0.10 - stats.t.ppf(0.975, 4) * se > 0
    assert summary["verdicts"]["error_falls"] == "reproduced"
    # GPD at M=10 is faster than GPC, at M=40 slower: the time half is resolved against the claim
    gpc = "GPC M=10, 100 epochs"
    assert summary["verdicts"]["time_pairs"] == {gpc: {"GPD M=10": "reproduced", "GPD M=40": "contradicted"}}
    assert summary["verdicts"]["time_fraction"] == {gpc: "contradicted"}
    # the loss of epochs 91-100 averaged over the three splits (offsets 0, 1, 2)
    assert summary["rows"][gpc]["training_loss_at_epoch"] == {100: pytest.approx(np.linspace(2, 1, 100)[90:].mean() + 1)}


def test_one_split_gives_no_interval_and_no_verdict(bench):
    fits = [{"method": method, "num_inducing": m, "epochs": 5 if method == "gpc" else None, "error": e, "nll": 0.5,
             "cpu_seconds": c, "wall_seconds": c}
            for method, m, e, c in (("gpd", 10, 0.3, 1.0), ("gpd", 40, 0.2, 2.0), ("gpc", 10, 0.25, 3.0))]
    summary = bench.summarize(fits)
    assert summary["rows"]["GPC M=10, 5 epochs"]["error"]["se"] is None
    assert summary["verdicts"]["error_falls"] == "one split: no interval"
    assert summary["verdicts"]["time_fraction"] == {"GPC M=10, 5 epochs": "not resolved"}
    with pytest.raises(ValueError, match="needs two or more M"):
        bench.summarize(fits[:1] + fits[2:])


def test_runs_on_other_splits_are_not_pooled(bench, tmp_path, capsys):
    import json

    paths = []
    for k, splits in enumerate((3, 2)):
        paths.append(tmp_path / f"run{k}.json")
        paths[-1].write_text(json.dumps({"commit": "abc", "fits": [], "settings": {
            "dataset": "letter:3000", "test_size": 0.25, "splits": splits, "seed": 0, "epochs": 100}}))
    with pytest.raises(SystemExit):
        bench.main(["--summarize", *map(str, paths)])
    assert "only runs on the same splits pool" in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["--inducing", "50"], "two or more distinct positive counts"),
    (["--inducing", "0", "50"], "two or more distinct positive counts"),
    (["--dataset", "wine:100", "--inducing", "5", "10"], "no alpha_eps for 'wine'"),
])
def test_bad_options_are_refused_with_what_was_expected(bench, argv, message, capsys):
    with pytest.raises(SystemExit):
        bench.main(argv)
    assert message in capsys.readouterr().err

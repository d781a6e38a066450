"""lab/studies/bench_paper002_curves.py: the results record it writes from kept runs, and its options."""

from __future__ import annotations

import json

import numpy as np
import pytest

from conftest import repository_script


@pytest.fixture(scope="module")
def curves():
    return repository_script("lab/studies/bench_paper002_curves.py")


def _kept(path, cells, commit="abc1234", **chosen):
    """A kept run: per (rows, M) the given final accuracies of two methods, one per split; ``chosen`` its
    ``--scheme`` and ``--kernel``."""
    results = []
    for (n, M), finals in cells.items():
        for split, (a, b) in enumerate(finals):
            traces = {m: {"method": m, "seconds": [1.0, 2.0], "accuracy": [0.5, acc], "nll": [0.7, 1 - acc],
                          "ece": [0.1, acc / 10]} for m, acc in (("vi-jj", a), ("vi-taylor", b))}
            results.append({"dataset": "magic", "split": split, "n_train": n, "M": M, "traces": traces, "claims": []})
    settings = {"datasets": "magic:50", "iters": 2, "svi_epochs": 2, "splits": 2, "seed": 0, "methods": "jj,taylor",
                **chosen}
    path.write_text(json.dumps({"commit": commit, "settings": settings, "results": results}))
    return str(path)


def test_the_record_holds_a_table_per_rows_and_m_with_mean_and_se_over_splits(curves, tmp_path):
    a = _kept(tmp_path / "a.json", {(2000, 50): [(0.80, 0.81), (0.84, 0.83), (0.82, 0.82)], (2000, 100): [(0.9, 0.9), (0.9, 0.88)]})
    b = _kept(tmp_path / "b.json", {(6000, 50): [(0.85, 0.86), (0.87, 0.86)]}, commit="def5678")
    record = curves.kept_record([a, b])
    assert [t["caption"] for t in record["tables"]] == ["magic_n2000_m50", "magic_n2000_m100", "magic_n6000_m50"]
    assert record["settings"]["splits"] == {"magic_n2000_m50": 3, "magic_n2000_m100": 2, "magic_n6000_m50": 2}
    assert record["commit"] == "abc1234, def5678" and record["workflow"] == "lab/studies/paper002_curves.yaml"
    first = record["tables"][0]
    assert first["columns"] == ["method", "gpal accuracy", "gpal NLL", "gpal ECE"]
    # vi-jj: 0.80, 0.84, 0.82 -> mean 0.82, SD 0.02, SE 0.02 / sqrt(3)
    assert first["rows"][0] == ["vi-jj", f"0.8200 ± {0.02 / np.sqrt(3):.4f}", f"0.1800 ± {0.02 / np.sqrt(3):.4f}",
                                f"0.0820 ± {0.002 / np.sqrt(3):.4f}"]
    assert "--iters 2 --splits 2 --seed 0 --methods jj,taylor --json" in record["command"]  # no svi, no epochs


def test_a_table_two_runs_measured_or_of_one_split_is_refused(curves, tmp_path):
    a = _kept(tmp_path / "a.json", {(2000, 50): [(0.80, 0.81), (0.84, 0.83)]})
    with pytest.raises(ValueError, match=r"table magic_n2000_m50 is measured by two kept runs"):
        curves.kept_record([a, _kept(tmp_path / "b.json", {(2000, 50): [(0.8, 0.8), (0.8, 0.8)]})])
    with pytest.raises(ValueError, match=r"table magic_n2000_m50 has one split: no SE"):
        curves.kept_record([_kept(tmp_path / "c.json", {(2000, 50): [(0.8, 0.8)]})])
    (tmp_path / "old.json").write_text(json.dumps({"settings": {}, "results": []}))
    with pytest.raises(ValueError, match=r"not a kept run of this script with its commit"):
        curves.kept_record([str(tmp_path / "old.json")])


def test_a_run_with_the_authors_optimiser_and_kernel_is_its_own_table_beside_gpals(curves, tmp_path):
    a = _kept(tmp_path / "a.json", {(15216, 50): [(0.86, 0.87), (0.87, 0.87)]})
    b = _kept(tmp_path / "b.json", {(15216, 50): [(0.85, 0.86), (0.86, 0.86)]}, scheme="gplib",
              kernel="se_iso_plus_noise")
    record = curves.kept_record([a, b])
    assert [t["caption"] for t in record["tables"]] == [
        "magic_n15216_m50", "magic_n15216_m50_scheme_gplib_kernel_se_iso_plus_noise"]
    assert record["tables"][1]["rows"][0][1].startswith("0.8550 ± ")
    first, second = record["command"].split(" && ")
    assert "--scheme" not in first and "--methods jj,taylor --scheme gplib --kernel se_iso_plus_noise --json" in second


def test_bad_options_are_refused_before_anything_runs(curves, capsys):
    for argv, message in ((["--methods", "jj,nope"], r"--methods: unknown \['nope'\]"),
                          (["--kernel", "gplib_se"], r"--kernel: unknown 'gplib_se'"),
                          (["--as-authors", "--scheme", "gplib"], r"--as-authors runs gplib's optimiser already"),
                          (["--record", "x.json"], r"--record and --kept go together")):
        with pytest.raises(SystemExit):
            curves.main(argv)
        assert message.replace("\\", "") in capsys.readouterr().err


def test_first_iteration_leads_are_paired_t_intervals_over_the_splits(curves):
    from scipy import stats

    def trace(first, final):
        return {"seconds": [1.0, 5.0], "accuracy": [first, final]}

    # vi-jj drops by 0.05, 0.055, 0.06 (clearly past 0.02); vi-taylor by 0.001-0.003 (clearly short of it);
    # vi-jj-hybrid starts 0.001 above, 0.001 below and level with vi-jj: not resolved against 0
    firsts = [(0.80, 0.85, 0.801), (0.81, 0.86, 0.809), (0.82, 0.87, 0.82)]
    drops = [(0.05, 0.001), (0.055, 0.002), (0.06, 0.003)]
    results = [{"dataset": "magic", "traces": {"vi-jj": trace(jj, jj + dj), "vi-taylor": trace(ta, ta + dt),
                                               "vi-jj-hybrid": trace(hy, hy + 0.01)}}
               for (jj, ta, hy), (dj, dt) in zip(firsts, drops)]
    out = curves.first_iterations(results)["magic"]
    jj = out["drop"]["vi-jj"]
    half = stats.t.ppf(0.975, 2) * 0.005 / np.sqrt(3)  # SD of 0.05, 0.055, 0.06 is 0.005
    assert (jj["mean"], jj["low"], jj["high"]) == pytest.approx((0.055, 0.055 - half, 0.055 + half))
    assert jj["verdict"] == "reproduced" and out["drop"]["vi-taylor"]["verdict"] == "contradicted"
    lead = out["hybrid_lead"]["vi-jj"]
    assert lead["per_split"] == pytest.approx([0.001, -0.001, 0.0]) and lead["verdict"] == "not resolved"
    assert out["hybrid_lead"]["vi-taylor"]["verdict"] == "contradicted"  # 0.049-0.05 behind on every split
    assert out["first_seconds"]["vi-jj"] == [1.0, 1.0, 1.0]
    assert curves.first_iterations(results[:1]) == {}  # one split: no interval, no entry


def test_as_the_authors_record_it_the_first_iteration_is_the_point_after_the_start(curves):
    """--as-authors: each vi trace opens with the start (q(u) = N(0, I), one half everywhere), which is not an
    iteration; svi's first epoch stays its first point."""
    def run(split, jj, hybrid):
        return {"dataset": "magic", "split": split,
                "traces": {"vi-jj": {"accuracy": jj}, "vi-jj-hybrid": {"accuracy": hybrid}}}

    results = [run(0, [0.65, 0.80, 0.86], [0.65, 0.84, 0.86]), run(1, [0.64, 0.82, 0.87], [0.64, 0.85, 0.87]),
               run(2, [0.66, 0.81, 0.85], [0.66, 0.83, 0.85])]
    results = [{**r, "traces": {m: {**t, "seconds": [0.0, 1.0, 2.0]} for m, t in r["traces"].items()}} for r in results]
    authors = curves.first_iterations(results, authors=True)["magic"]
    assert authors["drop"]["vi-jj"]["per_split"] == pytest.approx([0.06, 0.05, 0.04])
    assert authors["hybrid_lead"]["vi-jj"]["per_split"] == pytest.approx([0.04, 0.03, 0.02])
    assert authors["first_seconds"]["vi-jj"] == [1.0, 1.0, 1.0]
    gpal = curves.first_iterations(results)["magic"]  # gpal's record: the first point is the first iteration
    assert gpal["drop"]["vi-jj"]["per_split"] == pytest.approx([0.21, 0.23, 0.19])
    assert curves.first_index("svi", True) == 0 and curves.first_index("vi-jj", True) == 1


def test_a_run_of_the_first_iteration_alone_judges_the_hybrids_lead_and_no_drop(curves):
    """--iters 1 --as-authors: each trace is the start and the first iteration; nothing after it to drop to."""
    results = [{"dataset": "magic", "split": s,
                "traces": {m: {"seconds": [0.0, 1.0], "accuracy": [0.5, acc]}
                           for m, acc in (("vi-jj", jj), ("vi-jj-hybrid", hybrid))}}
               for s, (jj, hybrid) in enumerate([(0.80, 0.82), (0.81, 0.82), (0.83, 0.83)])]
    out = curves.first_iterations(results, authors=True)["magic"]
    assert "drop" not in out
    assert out["hybrid_lead"]["vi-jj"]["per_split"] == pytest.approx([0.02, 0.01, 0.0])
    assert "final - first" not in curves.table({"results": [], "first_iterations": {"magic": out}})

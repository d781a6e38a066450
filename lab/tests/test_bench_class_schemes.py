"""lab/studies/bench_class_schemes.py: the results page's two records, written from the study's outputs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from conftest import repository_script
from result_records import read_record


@pytest.fixture(scope="module")
def bench():
    return repository_script("lab/studies/bench_class_schemes.py")


def _ood_csv(bench, folder, commit=None):
    """Two seeds of the page's scheme and one of another; share of class k flagged at seed s: (k + s) / 20."""
    rows = []
    for scheme, seeds in ((bench.PAGE_SCHEME, (0, 1)), ("with_other", (0,))):
        for seed in seeds:
            row = {"scheme": scheme, "seed": seed, "false-positive rate": 0.04 + seed / 100, "left-out flagged": 0.3}
            row.update({f"flagged {code} ({k + 5})": (k + seed) / 20 for k, code in enumerate(bench.PAGE_LEFT_OUT)})
            rows.append(row)
    frame = pd.DataFrame(rows)
    if commit:
        frame["commit"] = commit
    folder.mkdir(exist_ok=True)
    frame.to_csv(folder / "ood.csv", index=False)
    return folder


def test_none_of_these_is_the_page_schemes_mean_over_seeds(bench, tmp_path):
    record = bench.none_of_these_record(_ood_csv(bench, tmp_path), commit="abc1234")
    rows = record["tables"][0]["rows"]
    assert rows[0][1] == "0.045" and rows[1][1] == "0.300"  # (0.04 + 0.05) / 2; the other scheme left out
    assert rows[2] == ["pulsar wind nebulae (pwn, 5)", "0.025"]  # class 0: (0 + 1/20) / 2
    assert ["spp (9)", f"{(4 + 0.5) / 20:.3f}"] in rows  # a code the page names as it is
    assert len(rows) == 2 + len(bench.PAGE_LEFT_OUT)
    assert record["settings"]["seeds"] == [0, 1] and record["commit"] == "abc1234"
    assert record["command"] == "python lab/studies/bench_class_schemes.py --seeds 0 1"
    assert record["workflow"] == "lab/studies/class_schemes.yaml"


def test_outputs_name_their_commit_and_a_bad_one_is_refused(bench, tmp_path):
    assert bench.none_of_these_record(_ood_csv(bench, tmp_path, "abc1234"))["commit"] == "abc1234"
    with pytest.raises(ValueError, match="not at the commit given"):
        bench.none_of_these_record(tmp_path, commit="fff0000")
    with pytest.raises(ValueError, match=r"\+dirty"):
        bench.none_of_these_record(_ood_csv(bench, tmp_path, "abc1234+dirty"))
    with pytest.raises(ValueError, match="ood.csv names no commit"):
        bench.none_of_these_record(_ood_csv(bench, tmp_path / "bare"))


def test_missing_or_incomplete_outputs_are_refused_naming_the_file(bench, tmp_path):
    with pytest.raises(ValueError, match=r"ood\.csv: not a readable output"):
        bench.none_of_these_record(tmp_path, commit="abc1234")
    folder = _ood_csv(bench, tmp_path)
    frame = pd.read_csv(folder / "ood.csv")
    frame.drop(columns=[c for c in frame if c.startswith("flagged glc")]).to_csv(folder / "ood.csv", index=False)
    with pytest.raises(ValueError, match=r"ood\.csv has no share flagged of the left-out classes \['glc'\]"):
        bench.none_of_these_record(folder, commit="abc1234")
    frame.drop(columns="left-out flagged").to_csv(folder / "ood.csv", index=False)
    with pytest.raises(ValueError, match=r"ood\.csv lacks the columns \['left-out flagged'\]"):
        bench.none_of_these_record(folder, commit="abc1234")
    frame[frame.scheme != bench.PAGE_SCHEME].to_csv(folder / "ood.csv", index=False)
    with pytest.raises(ValueError, match="no rows of the scheme"):
        bench.none_of_these_record(folder, commit="abc1234")


def test_the_faint_record_is_mean_and_se_of_the_probes_seeds(bench, tmp_path):
    shares = {"left-out flagged": [0.30, 0.40], "faintest held-out quarter flagged": [0.05, 0.07]}
    rows = [{"variant": v, "seed": s, **{k: x[s] + i / 100 for k, x in shares.items()}, "unassociated flagged": 0.2,
             "commit": "abc1234"} for i, v in enumerate([*bench.PAGE_SCORES, "distance, 4 components"]) for s in (0, 1)]
    pd.DataFrame(rows).to_csv(tmp_path / "ood_probe.csv", index=False)
    record = bench.faint_record(tmp_path)
    table = record["tables"][0]
    se = np.std([0.30, 0.40], ddof=1) / np.sqrt(2)
    assert table["rows"][0] == ["distance, 8 components (the default)", f"0.350 ± {se:.3f}", "0.060 ± 0.010"]
    assert [r[0] for r in table["rows"]] == list(bench.PAGE_SCORES.values())  # the page's three, not the fourth
    assert table["rows"][2][1] == f"0.370 ± {se:.3f}"
    assert "over 2 seeds" in table["caption"] and record["command"].endswith("--ood-probe --seeds 0 1")
    pd.DataFrame(rows[2:]).to_csv(tmp_path / "ood_probe.csv", index=False)
    with pytest.raises(ValueError, match=r"ood_probe\.csv has no rows of the scores \['distance, 8 components"):
        bench.faint_record(tmp_path)
    pd.DataFrame(rows[1:]).to_csv(tmp_path / "ood_probe.csv", index=False)
    with pytest.raises(ValueError, match=r"ood_probe\.csv: not every row ran on the seeds \[0, 1\]"):
        bench.faint_record(tmp_path)


def test_kept_writes_the_record_and_check_mode_compares_it(bench, tmp_path, monkeypatch, capsys):
    from result_records import CHECK_VARIABLE

    folder, path = _ood_csv(bench, tmp_path / "out"), tmp_path / "none_of_these.json"
    argv = ["--out", str(folder), "--kept", "--commit", "abc1234", "--record", str(path)]
    assert bench.main(argv) == 0
    assert read_record(path)["tables"][0]["rows"][2][1] == "0.025"
    monkeypatch.setenv(CHECK_VARIABLE, "1")
    assert bench.main(argv) == 0
    assert bench.main([*argv[:3], "--commit", "fff0000", *argv[5:]]) == 2
    assert "the study's outputs make 'fff0000'" in capsys.readouterr().err  # the file is not touched
    with pytest.raises(SystemExit):
        bench.main(["--kept", "--out", str(folder)])


def _unit(scheme, seed, classes):
    """A made-up unit: six held-out sources, each model giving its true class 0.5 and the rest 0.25 each (two
    classes) or 0.5 / (C - 1), so its NLL over the scheme's sources is log 2 and its accuracy 1."""
    codes = ["bll", "fsrq", "psr", "msp", "snr", "unk"]
    true = {"bll": 0, "fsrq": 0, "psr": 1, "msp": 1, "snr": 2, "unk": 2}
    proba = [[0.5 if k == true[c] else 0.5 / (len(classes) - 1) for k in range(len(classes))] for c in codes]
    return {"seed": seed, "scheme": scheme, "classes": classes, "commit": "abc1234", "test_codes": codes,
            "test_glat": [30.0, 5.0, 2.0, 50.0, 1.0, 3.0], "proba": {"gp": proba, "logistic": proba},
            "ood_test_score": [0.1, 0.2, 0.9, 0.1, 0.8, 0.7], "ood_threshold": 0.5, "ood_check_rows": [0, 2, 4],
            "left_out_codes": ["unk", "pwn"], "left_out_score": [0.9, 0.1]}


def test_a_subset_of_schemes_is_summarised_with_the_measures_it_has(bench, tmp_path, capsys):
    """A scheme without the main three as classes (agn_pulsar_other) has no main-three NLL: run alone (``--schemes
    agn_pulsar_other``), its summary leaves that column out instead of failing on it."""
    import json

    for seed in (0, 1):
        unit = _unit("agn_pulsar_other", seed, ["agn", "pulsar", "other"])
        (tmp_path / f"unit_agn_pulsar_other_{seed}.json").write_text(json.dumps(unit))
    bench.summarize(tmp_path)
    assert "agn_pulsar_other" in capsys.readouterr().out
    metrics = pd.read_csv(tmp_path / "metrics.csv")
    assert "main-three NLL" not in metrics and len(metrics) == 4  # two seeds, two models
    assert np.allclose(metrics["NLL"], np.log(2)) and np.allclose(metrics["accuracy"], 1.0)
    ood = pd.read_csv(tmp_path / "ood.csv")
    assert np.allclose(ood["false-positive rate"], 2 / 3) and np.allclose(ood["left-out flagged"], 0.5)

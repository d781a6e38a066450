"""Paper 001's side-by-side table: gpal's runs at the authors' settings beside the paper and the authors' code."""

from __future__ import annotations

import json

import pytest

from conftest import repository_script


@pytest.fixture(scope="module")
def study():
    return repository_script("lab/studies/paper001_side_by_side.py")


def _row(setting, method, metric, mean, se, n, paper, paper_se):
    return {"setting": setting, "method": method, "metric": metric, "gpal_mean": mean, "gpal_se": se, "n": n,
            "paper_mean": paper, "paper_se": paper_se}


def _workflow_record(path, settings, methods, rows):
    path.write_text(json.dumps({"commit": "abc", "source": {}, "rows": rows,
                                "settings": {**settings, "methods": methods}}), encoding="utf-8")
    return str(path)


def _unit(side, method, split, nll, error, level=0.25):
    return {"dataset": "waveform", "level": level, "split": split, "method": method, "side": side, "nll": nll,
            "error": error}


def test_gpal_runs_off_the_authors_settings_are_left_out_and_their_code_is_paired_by_rows(study, tmp_path):
    authors = study.authors_settings()
    # a run from before NIMGP's Adam step was an option and before MGP took the authors' label flips
    old = {**authors, "noisy_input": {k: v for k, v in authors["noisy_input"].items() if k != "q_x_update"},
           "method_options": {}}
    rows = [_row("waveform/0.25", m, k, 0.9 if k == "nll" else 0.2, 0.01, 3, 0.85, 0.02)
            for m in ("MGP", "NIMGP") for k in ("nll", "error")]
    first = _workflow_record(tmp_path / "a.json", old, ["MGP", "NIMGP"], rows)
    mgp = [_row("waveform/0.25", "MGP", k, 0.95 if k == "nll" else 0.2, 0.01, 3, 0.85, 0.02) for k in ("nll", "error")]
    nimgp = [_row("waveform/0.25", "NIMGP", k, 0.8 if k == "nll" else 0.25, 0.02, 3, 0.84, 0.02)
             for k in ("nll", "error")]
    second = _workflow_record(tmp_path / "b.json", authors, ["MGP", "NIMGP"], nimgp + mgp)
    theirs = tmp_path / "c.json"
    theirs.write_text(json.dumps({"commit": "def", "authors_code": {}, "units": [
        _unit("authors", "MGP", 0, 0.5, 0.1), _unit("authors", "MGP", 1, 0.7, 0.2),
        _unit("gpal as authors", "MGP", 0, 0.4, 0.1), _unit("gpal as authors", "MGP", 1, 0.6, 0.2),
        _unit("gpal", "MGP", 0, 9.0, 0.9)]}), encoding="utf-8")
    record = study.kept_record([first, second], [str(theirs)])
    (table,) = record["tables"]
    assert table["caption"] == "waveform, injected noise 0.25"
    cells = {r[0]: dict(zip(table["columns"], r)) for r in table["rows"]}
    # NIMGP from the run at every setting of the authors', not the older run with gpal's Adam step
    assert cells["NIMGP"]["gpal NLL"] == "0.800 ± 0.020 (3)"
    assert cells["MGP"]["gpal NLL"] == "0.950 ± 0.010 (3)"
    assert record["settings"]["left_out"] == {first: ["MGP (likelihood_options not the workflow's)",
                                                      "NIMGP (q_x_update not the workflow's)"]}
    assert cells["MGP"]["paper NLL"] == "0.85 ± 0.02"
    assert cells["MGP"]["authors' code NLL"] == "0.600 ± 0.100 (2)"
    assert cells["MGP"]["gpal, the authors' rows NLL"] == "0.500 ± 0.100 (2)"
    assert cells["NIMGP"]["authors' code NLL"] == "not run"


def test_a_setting_two_runs_measure_or_the_authors_code_ran_alone_is_refused(study, tmp_path):
    authors = study.authors_settings()
    rows = [_row("waveform/0.25", "MGP", k, 0.9, 0.01, 3, 0.85, 0.02) for k in ("nll", "error")]
    one = _workflow_record(tmp_path / "a.json", authors, ["MGP"], rows)
    two = _workflow_record(tmp_path / "b.json", authors, ["MGP"], rows)
    with pytest.raises(ValueError, match="waveform/0.25/MGP/nll at the authors' settings is measured by"):
        study.kept_record([one, two], [])
    theirs = tmp_path / "c.json"
    theirs.write_text(json.dumps({"commit": "d", "authors_code": {}, "units": [
        _unit("authors", "MGP", 0, 0.5, 0.1, level=0.9)]}), encoding="utf-8")
    with pytest.raises(ValueError, match=r"the authors' code ran \['waveform/0.9'\], which Tables 5-6"):
        study.kept_record([one], [str(theirs)])


def test_a_level_only_the_authors_code_ran_gets_its_table_with_gpal_not_run(study, tmp_path):
    rows = [_row("waveform/0.25", "MGP", k, 0.9, 0.01, 3, 0.85, 0.02) for k in ("nll", "error")]
    rows += [{**_row("waveform/0.5", "MGP", k, None, None, 0, 1.01, 0.02), "gpal_mean": None} for k in ("nll", "error")]
    one = _workflow_record(tmp_path / "a.json", study.authors_settings(), ["MGP"], rows)
    theirs = tmp_path / "c.json"
    theirs.write_text(json.dumps({"commit": "d", "authors_code": {}, "units": [
        _unit("authors", "MGP", 0, 0.9, 0.2, level=0.5), _unit("authors", "MGP", 1, 1.1, 0.3, level=0.5)]}),
        encoding="utf-8")
    record = study.kept_record([one], [str(theirs)])
    assert [t["caption"] for t in record["tables"]] == ["waveform, injected noise 0.25", "waveform, injected noise 0.5"]
    cells = dict(zip(record["tables"][1]["columns"], record["tables"][1]["rows"][0]))
    assert (cells["paper NLL"], cells["gpal NLL"], cells["authors' code NLL"]) == ("1.01 ± 0.02", "not run",
                                                                                  "1.000 ± 0.100 (2)")

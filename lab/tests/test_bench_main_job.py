"""lab/studies/bench_main_job.py: its two results records are made from runs' JSON, bad outputs are refused."""

from __future__ import annotations

import json
import re

import pytest

from conftest import repository_script


@pytest.fixture(scope="module")
def bench():
    return repository_script("lab/studies/bench_main_job.py")


def _write(path, raw):
    path.write_text(json.dumps(raw))
    return path


def _job(tmp_path, **change):
    """A made-up job: each part's (wall, CPU) seconds; the EM inside the model's set-up, the twin beside the fit."""
    seconds = {"import TensorFlow, GPflow, gpal's models": (2.0, 2.5), "selection and features": (3.0, 4.0),
               "GP fit (model)": (4.0, 7.0), "GP fit (model) / model set-up (standardise, prior, build)": (1.25, 1.5),
               "GP fit (model) / model set-up (standardise, prior, build) / extreme deconvolution (EM)": (1.0, 1.2),
               "GP fit (model) / SVI loop": (2.5, 5.0), "baselines and error-blind twin": (6.0, 10.0),
               "baselines and error-blind twin / scikit-learn baselines": (3.0, 5.0),
               "baselines and error-blind twin / GP fit (error-blind twin)": (2.5, 4.0),
               "baselines and error-blind twin / GP prediction (twin)": (0.5, 1.0),
               "outlier score": (0.5, 0.5), "classify the selection": (1.0, 2.0), "follow-up ranking": (0.5, 0.5),
               "report": (1.0, 1.0)}
    parts = {k: {"wall": w, "cpu": c / 2, "process_cpu": c, "calls": 1} for k, (w, c) in seconds.items()}
    job = {"import_cli": [0.25, 0.25], "import_job": [0.5, 0.75], "job": [12.0, 20.0], "parts": parts,
           "svi_steps": {"GP fit (model) / SVI loop": 600}, "classified": 3615, **change}
    return _write(tmp_path / "job.json", {"commit": "abc1234", "load_average_at_start": [1.0, 1.0, 1.0],
                                          "extra_args": [], "job": job})


def _step(tmp_path, name, wall, cpu, gemm, load=0.9, commit="abc1234"):
    shapes = {"n": 2103, "d": 16, "classes": 3, "inducing": 50, "batch": 200, "prior_components": 8}
    return _write(tmp_path / name, {"commit": commit, "load_average_at_start": [load, 1.0, 1.0], "extra_args": [],
                                    "step": {"shapes": shapes, "wall_s": wall, "cpu_s": cpu, "gemm_s": gemm}})


def test_the_parts_record_sums_each_part_and_names_what_is_inside_the_fit(bench, tmp_path):
    from result_records import read_record

    out = tmp_path / "timings.parts.json"
    bench.main(["--summarize", str(_job(tmp_path)), "--record", str(out)])
    rows = read_record(out)["tables"][0]["rows"]
    assert rows[0] == ["import `gpal.cli` and the command's modules", "0.8", "1.0"]
    assert rows[3] == ["GP fit: the population prior's EM 1.0 s, building 0.2 s, 600 SVI steps 2.5 s", "4.0", "7.0"]
    assert rows[4][0] == "beside the fit: the baselines 3.0 s, then the GP without error bars (fit 2.5 s, prediction 0.5 s)"
    assert rows[5] == ["outlier score, classification of 3615 sources, follow-up ranking", "2.0", "3.0"]
    assert rows[-1] == ["**total**", "**12.8**", "**21.0**"]  # the job and the imports before it


def test_the_step_record_gives_the_range_over_runs_of_each_runs_own_ratio(bench, tmp_path):
    from result_records import read_record

    runs = [_step(tmp_path, "a.json", 0.004, 0.006, 0.002, 0.8), _step(tmp_path, "b.json", 0.0055, 0.0085, 0.0025, 1.1)]
    out = tmp_path / "timings.step.json"
    bench.main(["--summarize", *map(str, runs), "--record", str(out)])
    record = read_record(out)
    assert record["tables"][0]["rows"] == [["one step of the main job's model (2 runs), ms", "4.0-5.5", "6.0-8.5"],
                                           ["the matrix products of its shapes in NumPy on one core, ms",
                                            "2.00-2.50 (CPU)", ""],
                                           ["step / its GEMMs (the same run's)", "2.0-2.2", "3.0-3.4"]]
    assert "load 0.8-1.1" in record["source"] and record["command"].count("--step --no-job") == 2


def test_bad_outputs_are_refused_naming_the_file(bench, tmp_path, capsys):
    no_twin = _job(tmp_path, parts={"report": {"wall": 1.0, "process_cpu": 1.0}})
    with pytest.raises(ValueError, match=re.escape(f"{no_twin}: the job's parts lack")):
        bench.parts_record(str(no_twin))
    mixed = [_step(tmp_path, "a.json", 0.004, 0.006, 0.002), _step(tmp_path, "b.json", 0.004, 0.006, 0.002, commit="f00")]
    with pytest.raises(ValueError, match="name the commits"):
        bench.step_record([str(p) for p in mixed])
    missing = tmp_path / "none.json"
    with pytest.raises(SystemExit):
        bench.main(["--summarize", str(missing), "--record", str(tmp_path / "r.json")])
    assert str(missing) in capsys.readouterr().err and not (tmp_path / "r.json").exists()


def test_step_runs_kept_in_a_folder_name_the_runs_option(bench, tmp_path):
    runs = [_step(tmp_path, f"step_run{k}.json", 0.004, 0.006, 0.002) for k in (1, 2)]
    record = bench.step_record([str(p) for p in runs])
    assert record["command"] == f"python lab/studies/bench_main_job.py --step --no-job --runs 2 --json {tmp_path}"

"""`gpal gpu-check` on this machine: its no-GPU path runs end to end and says so; bad settings are refused."""

from __future__ import annotations

import json

import pytest

from gpal.catalog_jobs.device_check import WORKLOADS, check_devices, format_check
from gpal.cli import main

tf = pytest.importorskip("tensorflow")
NO_GPU = not tf.config.list_physical_devices("GPU")


@pytest.mark.skipif(not NO_GPU, reason="this machine has a GPU: the no-GPU path is not the one that runs")
def test_without_a_gpu_the_check_times_the_cpu_says_so_and_exits_0(tmp_path, capsys):
    record_path = tmp_path / "check.json"
    code = main(["gpu-check", "--workloads", "main_job", "--epochs", "3", "--json", str(record_path), "--no-progress"])
    out = capsys.readouterr().out
    assert code == 0
    assert "sees no GPU" in out and "tensorflow[and-cuda]" in out
    record = json.loads(record_path.read_text())
    assert record["gpus"] == []
    assert [g["device"] for g in record["gemm"]] == ["/CPU:0"] and record["gemm"][0]["gflops"] > 0
    (timing,) = record["timings"]
    assert timing["workload"] == "main_job" and timing["device"] == "/CPU:0"
    assert timing["placed_on"].endswith("CPU:0")  # the model's variables were made on the device asked for
    assert timing["steps_per_epoch"] == 11  # 2103 rows in mini-batches of the main job's 200
    assert timing["seconds_per_step"] > 0 and timing["published_epoch_seconds"] is None


def test_an_mnist_epoch_is_scaled_to_300_steps_and_set_beside_the_papers_p100_time():
    record = check_devices(["mnist_mgp"], epochs=3, mnist_steps=1, gemm_size=64, cpu=True)
    (timing,) = record["timings"]
    assert timing["steps_per_epoch"] == 300  # 60 000 rows / 200
    assert timing["epoch_seconds"] == pytest.approx(300 * timing["seconds_per_step"])
    assert timing["published_epoch_seconds"] == 7.19
    assert timing["ratio_to_published"] == pytest.approx(timing["epoch_seconds"] / 7.19)
    assert "ratio" in format_check(record)


@pytest.mark.parametrize("kwargs, words", [
    ({"workloads": ["main_jobs"]}, "unknown workload(s) ['main_jobs']"),
    ({"epochs": 2}, "epochs must be an integer >= 3"),
    ({"mnist_steps": 0}, "mnist_steps must be a positive integer"),
])
def test_bad_settings_are_refused_before_any_work(kwargs, words):
    with pytest.raises(ValueError, match=words.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        check_devices(**{"workloads": list(WORKLOADS)[:1], **kwargs})

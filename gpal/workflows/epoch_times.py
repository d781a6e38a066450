"""Workflow kind ``epoch_times``: training seconds per epoch of each noisy-input method, and its ratio to MGP.

Paper 001's Table 8 times an epoch of MGP / NIMGP / NIMGP-NN / NIMGP-FO on MNIST (60 000 rows, 784
features, 10 classes, mini-batches of 200) on a GPU.  A step's cost depends only on the shapes, so
each unit fits the method on generated rows of those shapes
(`gpal.catalog_jobs.device_check.workload_problem`) and times ``protocol.timed_steps`` mini-batches
per epoch with `gpal.catalog_jobs.device_check.time_training_step` (the first epoch, which traces the
step, left out), scaled to a full epoch, twice: in wall seconds and in the process's CPU seconds.
The ratio to MGP is taken from CPU seconds, which other processes on a shared machine do not inflate.  One unit per (repeat, method), repeat-major, so the methods
alternate in time and a change in the machine's load falls on all of them; the ratio to MGP is taken
within each repeat.  Units: ``units/rep_0001/NIMGP.json``.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Mapping

import pandas as pd

from gpal.constraints import Integer
from gpal.runs.executors import Executor
from gpal.runs.units import run_units
from gpal.workflows.methods import classifier_params, methods_field, training_schema
from gpal.workflows.measurements import Produced, write_measurements
from gpal.workflows.schema import Field

__all__ = ["METRICS", "produces", "run", "schema", "time_epoch"]

#: What a unit records: wall and CPU seconds per full epoch, and (per repeat) the CPU time over MGP's.
METRICS = ("epoch_seconds", "epoch_cpu_seconds", "ratio_to_MGP")
BASELINE = "MGP"


def schema() -> dict[str, Any]:
    return {
        "data": {
            "n_rows": Field(Integer(1), 60_000, "rows of the data set whose epoch is timed (MNIST's training set)"),
            "n_features": Field(Integer(1), 784, "features (MNIST: 28 x 28 pixels)"),
            "n_classes": Field(Integer(2), 10, "classes"),
        },
        "methods": methods_field(),
        "protocol": {
            "timed_steps": Field(Integer(1), 20, "mini-batches per timed epoch (scaled to the full epoch)"),
            "epochs": Field(Integer(3), 4, "epochs of each timed fit; the first traces the step and is left out"),
            "repeats": Field(Integer(1), 3, "timed fits per method, alternating methods", part_of_run=False),
        },
        # no epochs: a timed fit runs protocol.epochs
        "training": {k: f for k, f in training_schema(num_inducing=100, batch_size=200, n_samples=500,
                                                      noise_variance="learned").items() if k != "epochs"},
    }


def produces(config: Mapping[str, Any]) -> Produced:
    return Produced(["epoch"], config["methods"], METRICS)


def check(config: Mapping[str, Any]) -> None:
    if BASELINE not in config["methods"]:
        raise ValueError(f"methods must include {BASELINE}: every time is also given as a ratio to its time")


def time_epoch(params: dict[str, Any], name: str, data: dict[str, int], timed_steps: int, epochs: int) -> dict:
    """One timed fit: seconds per step on this machine's CPU, scaled to the data set's full epoch."""
    from gpal.catalog_jobs.device_check import Workload, time_training_step

    batch = params["batch_size"]
    workload = Workload(name, f"{name}, an epoch of {data['n_rows']} rows", timed_steps * batch, data["n_features"],
                        data["n_classes"], params, full_epoch_steps=-(-data["n_rows"] // batch))
    wall = time_training_step(workload, epochs=epochs)
    cpu = time_training_step(workload, epochs=epochs, clock=time.process_time)
    return {"seconds_per_step": wall.seconds_per_step, "steps_per_epoch": wall.steps_per_epoch,
            "epoch_seconds": wall.epoch_seconds, "epoch_cpu_seconds": cpu.epoch_seconds}


def run(config: dict[str, Any], out: Path, executor: Executor, progress: bool) -> None:
    from gpal.evaluation.reports import write_report, write_table

    data, protocol = config["data"], config["protocol"]
    n_train = data["n_rows"]
    params = classifier_params(config["methods"], config["training"], n_train)
    units = {f"rep_{r:04d}/{m}": (params[m], m, data, protocol["timed_steps"], protocol["epochs"])
             for r in range(protocol["repeats"]) for m in config["methods"]}
    results = run_units(executor, time_epoch, units, out, desc="timed fits", progress=progress)
    frame = pd.DataFrame([{"repeat": int(name.split("/")[0][4:]), "method": name.split("/")[1], **r}
                          for name, r in results.items()])
    # CPU seconds: on a machine shared with other processes, wall time measures the load as much as the method
    baseline = frame[frame["method"] == BASELINE].set_index("repeat")["epoch_cpu_seconds"]
    frame["ratio_to_MGP"] = frame["epoch_cpu_seconds"] / frame["repeat"].map(baseline)
    measured = {("epoch", m, metric): list(part[metric]) for m, part in frame.groupby("method", sort=False)
                for metric in METRICS}
    write_measurements(out, config, produces(config), measured, {"repeats": protocol["repeats"]})
    summary = frame.groupby("method", sort=False)[list(METRICS)].agg(["mean", "sem"])
    shown = pd.DataFrame({
        "method": summary.index,
        "wall s / epoch": [f"{m:.2f} ± {s:.2f}" for m, s in summary["epoch_seconds"].to_numpy()],
        "CPU s / epoch": [f"{m:.2f} ± {s:.2f}" for m, s in summary["epoch_cpu_seconds"].to_numpy()],
        "ratio to MGP": [f"{m:.2f} ± {s:.2f}" for m, s in summary["ratio_to_MGP"].to_numpy()],
    })
    tables = {f"Seconds per epoch on this CPU, mean ± SE over {protocol['repeats']} timed fits": write_table(
        out / "epoch_times", shown, data=frame)}
    text = "\n".join([
        config["description"] or "", "",
        f"Generated rows of the data set's shapes ({data['n_rows']} x {data['n_features']}, {data['n_classes']} classes); "
        f"{protocol['timed_steps']} mini-batches of {config['training']['batch_size']} timed per epoch and scaled to the "
        f"full epoch; {protocol['epochs']} epochs per fit, the first left out; each fit timed twice, in wall and in "
        "CPU seconds; the ratio to MGP from CPU seconds.",
    ])
    write_report(out, config["title"], tables=tables, text=text)

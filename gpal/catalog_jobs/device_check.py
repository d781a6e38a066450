"""Which devices gpal computes on, and how fast: the one-command check for a machine with a GPU.

`check_devices` reports what TensorFlow was built with and which GPUs it sees, then, on each
device, times a float64 matrix product (gpal's GP algebra is float64, and many consumer GPUs run
float64 at a small fraction of their float32 rate) and fits of the workloads that matter through
the public estimator, placed on that device with ``tf.device``:

- ``main_job``: the main job's model (`gpal.catalog_jobs.settings.MAIN_JOB_ESTIMATOR`) at 4FGL-DR4's
  training size (2103 sources, 16 features, 3 classes; the main job on FL16Y trains on 2400);
- ``mnist_mgp`` / ``mnist_nimgp``: an epoch of the MNIST experiment of the noisy-input paper
  (Villacampa-Calvo et al. 2021, sec. 5.4: 60 000 rows, 784 features, 10 classes, mini-batches of
  200, M = 100) beside the paper's TESLA P100 seconds per epoch (its Table 8).  MNIST itself is not
  shipped; a step's cost depends only on the shapes, so generated rows of the same shapes are used.
  The paper's kernel is a polynomial ARD kernel, gpal's an SE-ARD one: the times compare the
  machines at the same shapes, not the kernels.

A step's time comes from a real fit: the estimator's per-epoch callback stamps each epoch, the
first epoch (which traces the compiled step) is left out, and the median of the others is divided
by the steps of an epoch.  An MNIST epoch is timed on ``mnist_steps`` mini-batches and scaled to
the 300 of a full epoch (SVI's step does not depend on the number of rows).

Without a GPU the check says so, times the CPU alone and succeeds: there is nothing to fix.
"""

from __future__ import annotations

import math
import platform
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from gpal.identity import source_commit

__all__ = [
    "WORKLOADS", "StepTiming", "Workload", "check_devices", "format_check", "main_job_workload", "time_training_step",
    "workload_problem", "write_record",
]


@dataclass(frozen=True)
class Workload:
    """A fit whose step is timed: its data shapes, the estimator's settings and a published time if any."""

    name: str
    what: str
    n_rows: int
    n_features: int
    n_classes: int
    params: dict[str, Any]
    #: seconds per epoch published for this workload (with ``published_on``), or None
    published_epoch_seconds: float | None = None
    published_on: str = ""
    #: the steps of one full epoch when the timed fit uses fewer rows than the real data set (None: the fit's own)
    full_epoch_steps: int | None = None


def main_job_workload() -> Workload:
    """The main job's model at 4FGL-DR4's training size (2103 sources of 16 features, 3 classes)."""
    from gpal.catalog_jobs.settings import MAIN_JOB_ESTIMATOR

    return Workload("main_job", "the main job's model (NIMGP, population prior, M = 50)", 2103, 16, 3,
                    dict(MAIN_JOB_ESTIMATOR))


# Paper 001 (Villacampa-Calvo et al. 2021), sec. 5.4 and Table 8: MNIST, mini-batch 200, M = min(100, 5% of N),
# 500 prediction samples; average seconds per training epoch on a TESLA P100: MGP 7.19 ± 0.007, NIMGP 11.93 ± 0.011.
_MNIST_ROWS, _MNIST_BATCH = 60_000, 200
_MNIST = dict(num_inducing=100, batch_size=_MNIST_BATCH, learning_rate=0.01, n_samples=500)


def _mnist_workload(name: str, method: str, input_noise: str, seconds: float, steps: int) -> Workload:
    return Workload(name, f"an MNIST epoch of paper 001's Table 8, {method}", steps * _MNIST_BATCH, 784, 10,
                    {**_MNIST, "input_noise": input_noise}, seconds, "TESLA P100 (paper 001, Table 8)",
                    _MNIST_ROWS // _MNIST_BATCH)


#: The workloads by name; each builds its `Workload` for a number of timed MNIST mini-batches.
WORKLOADS: dict[str, Callable[[int], Workload]] = {
    "main_job": lambda steps: main_job_workload(),
    "mnist_mgp": lambda steps: _mnist_workload("mnist_mgp", "MGP", "none", 7.19, steps),
    "mnist_nimgp": lambda steps: _mnist_workload("mnist_nimgp", "NIMGP", "latent", 11.93, steps),
}


@dataclass
class StepTiming:
    """One workload's training step timed on one device (`time_training_step`)."""

    workload: str
    device: str
    placed_on: str
    seconds_per_step: float
    steps_per_epoch: int
    epoch_seconds: float
    published_epoch_seconds: float | None
    published_on: str

    def record(self) -> dict[str, Any]:
        ratio = None if self.published_epoch_seconds is None else self.epoch_seconds / self.published_epoch_seconds
        return {**self.__dict__, "ratio_to_published": ratio}


@dataclass
class _Check:
    environment: dict[str, Any]
    gpus: list[dict[str, Any]]
    gemm: list[dict[str, Any]] = field(default_factory=list)
    timings: list[dict[str, Any]] = field(default_factory=list)


def _environment(tf: Any) -> dict[str, Any]:
    import gpal

    build = dict(tf.sysconfig.get_build_info())
    return {
        "gpal": gpal.__version__, "commit": source_commit(), "python": platform.python_version(),
        "machine": platform.machine(), "processor": platform.processor() or platform.machine(),
        "tensorflow": tf.__version__, "built_with_cuda": bool(tf.test.is_built_with_cuda()),
        "cuda": build.get("cuda_version"), "cudnn": build.get("cudnn_version"),
    }


def _gpus(tf: Any) -> list[dict[str, Any]]:
    found = []
    for index, device in enumerate(tf.config.list_physical_devices("GPU")):
        details = tf.config.experimental.get_device_details(device)
        found.append({"device": f"/GPU:{index}", "name": details.get("device_name", device.name),
                      "compute_capability": details.get("compute_capability")})
    return found


def _gemm_rate(tf: Any, device: str, n: int, repeats: int) -> dict[str, Any]:
    """GFLOP/s of an n x n float64 matrix product on ``device`` (2 n^3 flops, median of ``repeats``)."""
    with tf.device(device):
        a = tf.random.stateless_normal((n, n), seed=(1, 2), dtype=tf.float64)
        b = tf.random.stateless_normal((n, n), seed=(3, 4), dtype=tf.float64)
        (a @ b).numpy()  # the first product loads the kernels
        seconds = []
        for _ in range(repeats):
            start = time.perf_counter()
            (a @ b).numpy()  # .numpy() waits for the device
            seconds.append(time.perf_counter() - start)
    median = float(np.median(seconds))
    return {"device": device, "n": n, "seconds": median, "gflops": 2 * n**3 / median / 1e9}


def workload_problem(workload: Workload, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows of the workload's shapes: Gaussian inputs, labels from a random linear map, small input variances."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((workload.n_rows, workload.n_features))
    y = np.argmax(X @ rng.standard_normal((workload.n_features, workload.n_classes)), axis=1)
    y[: workload.n_classes] = np.arange(workload.n_classes)  # every class present
    return X, y, np.full_like(X, 0.05)


def time_training_step(workload: Workload, device: str = "/CPU:0", epochs: int = 3,
                       clock: Callable[[], float] = time.perf_counter) -> StepTiming:
    """Fit ``workload`` for ``epochs`` on ``device``; a step's seconds from the epochs after the first (which traces).

    ``clock`` is wall time by default; ``time.process_time`` (the CPU seconds of all of the process's
    threads) makes ratios between fits robust to other processes sharing the machine.
    """
    import tensorflow as tf

    from gpal.estimators.noisy_gp import NoisyGPClassifier

    X, y, X_var = workload_problem(workload)
    stamps: list[float] = []
    clf = NoisyGPClassifier(**{**workload.params, "epochs": epochs, "random_state": 0})
    with tf.device(device):
        clf.fit(X, y, X_var=X_var, callback=lambda epoch, elbo: stamps.append(clock()))
    steps = math.ceil(workload.n_rows / clf.batch_size)
    per_step = float(np.median(np.diff(stamps))) / steps  # the first epoch traces the step: left out by the diff
    full_steps = workload.full_epoch_steps or steps
    return StepTiming(workload.name, device, clf.model_.trainable_variables[0].device, per_step, full_steps,
                   per_step * full_steps, workload.published_epoch_seconds, workload.published_on)


def check_devices(workloads: Sequence[str] = ("main_job", "mnist_mgp", "mnist_nimgp"), *, epochs: int = 4,
                  mnist_steps: int = 20, gemm_size: int = 2048, cpu: bool = True,
                  say: Callable[[str], None] = lambda message: None) -> dict[str, Any]:
    """Report TensorFlow's build and GPUs, and time each workload on every GPU (and the CPU if ``cpu``).

    ``epochs`` (>= 3: the first traces the step and at least two are timed) is the length of each timed fit;
    ``mnist_steps`` the mini-batches of a timed MNIST epoch.  Returns the record `format_check` prints.
    """
    unknown = [name for name in workloads if name not in WORKLOADS]
    if unknown:
        raise ValueError(f"unknown workload(s) {unknown}; expected some of {sorted(WORKLOADS)}")
    if isinstance(epochs, bool) or not isinstance(epochs, int) or epochs < 3:
        raise ValueError(f"epochs must be an integer >= 3 (one traces the step, two or more are timed), got {epochs!r}")
    if isinstance(mnist_steps, bool) or not isinstance(mnist_steps, int) or mnist_steps < 1:
        raise ValueError(f"mnist_steps must be a positive integer, got {mnist_steps!r}")
    import tensorflow as tf

    check = _Check(_environment(tf), _gpus(tf))
    devices = [gpu["device"] for gpu in check.gpus] + (["/CPU:0"] if cpu or not check.gpus else [])
    for device in devices:
        say(f"{device}: float64 GEMM {gemm_size} x {gemm_size}")
        check.gemm.append(_gemm_rate(tf, device, gemm_size, repeats=5))
        for name in workloads:
            workload = WORKLOADS[name](mnist_steps)
            say(f"{device}: {workload.what}, {epochs} epochs")
            check.timings.append(time_training_step(workload, device, epochs).record())
    return {"format": "gpal.device_check", "version": 1, **check.__dict__}


def format_check(record: dict[str, Any]) -> str:
    """The record as the terminal shows it: what TensorFlow sees, then one line per device and workload."""
    env = record["environment"]
    lines = [f"gpal {env['gpal']} (commit {env['commit']}), TensorFlow {env['tensorflow']}, "
             f"built with CUDA: {'yes (CUDA ' + str(env['cuda']) + ')' if env['built_with_cuda'] else 'no'}"]
    if record["gpus"]:
        lines += [f"GPU {gpu['device']}: {gpu['name']} (compute capability {gpu['compute_capability']})"
                  for gpu in record["gpus"]]
    else:
        lines += ["TensorFlow sees no GPU: gpal computes on the CPU here. On a Linux machine with an NVIDIA driver, "
                  "`pip install \"tensorflow[and-cuda]>=2.16,<2.22\"` installs the CUDA libraries TensorFlow needs "
                  "(docs/gpu.md)."]
    lines += [f"{g['device']}: float64 GEMM {g['n']} x {g['n']} {g['gflops']:.1f} GFLOP/s" for g in record["gemm"]]
    for t in record["timings"]:
        line = (f"{t['device']}: {t['workload']}: {1e3 * t['seconds_per_step']:.2f} ms a step, "
                f"{t['epoch_seconds']:.2f} s an epoch of {t['steps_per_epoch']} steps (variables on {t['placed_on']})")
        if t["published_epoch_seconds"] is not None:
            line += f"; {t['published_on']}: {t['published_epoch_seconds']:.2f} s, ratio {t['ratio_to_published']:.2f}"
        lines.append(line)
    return "\n".join(lines)


def write_record(record: dict[str, Any], path: str | Path) -> Path:
    """Write the record as JSON (atomically: a reader never sees half a file)."""
    from gpal.files import write_json_atomic

    path = Path(path)
    write_json_atomic(path, record)
    return path

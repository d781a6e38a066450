"""The papers' timing claims: an MNIST epoch of the noisy-input paper (Table 8) on this machine's CPU."""

from __future__ import annotations

from gpal.catalog_jobs.device_check import WORKLOADS, time_training_step

from .sizes import pick


class MnistEpoch:
    """Seconds per MNIST epoch (60 000 rows, 784 features, 10 classes, B = 200, M = 100), scaled from timed steps.

    The paper's TESLA P100 figures (Villacampa-Calvo et al. 2021, Table 8: MGP 7.19 s, NIMGP 11.93 s) are in
    `gpal.catalog_jobs.device_check.WORKLOADS`; ``gpal gpu-check`` sets a GPU's time beside them.
    """

    params = [pick(["mnist_mgp", "mnist_nimgp"], ["mnist_mgp"])]
    param_names = ["workload"]
    timeout = 900
    number, repeat = 1, 1

    def setup(self, workload: str) -> None:
        self.timing = time_training_step(WORKLOADS[workload](pick(10, 1)), "/CPU:0", epochs=3)

    def track_epoch_seconds(self, workload: str) -> float:
        return self.timing.epoch_seconds

    track_epoch_seconds.unit = "s"

    def track_ratio_to_p100(self, workload: str) -> float:
        return self.timing.epoch_seconds / self.timing.published_epoch_seconds

    track_ratio_to_p100.unit = "ratio"

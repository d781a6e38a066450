"""Prediction: class probabilities of the main job's unassociated sources with their error bars (NIMGP)."""

from __future__ import annotations

import time

from gpal import NoisyGPClassifier
from gpal.catalog_jobs.device_check import Workload, main_job_workload, workload_problem

from .sizes import pick

#: FL16Y's unassociated and bcu sources, the main job's pool.
POOL_SOURCES = 3615


class Prediction:
    """NIMGP prediction with 300 input draws per source (the estimator's default ``n_samples``)."""

    timeout = 600
    number, repeat = 1, 1

    def setup(self) -> None:
        job = main_job_workload()
        train = Workload(**{**job.__dict__, "n_rows": pick(job.n_rows, 300)})
        X, y, X_var = workload_problem(train)
        self.clf = NoisyGPClassifier(**{**job.params, "epochs": 1}).fit(X, y, X_var=X_var)
        pool = Workload(**{**job.__dict__, "n_rows": pick(POOL_SOURCES, 50)})
        self.X, _, self.X_var = workload_problem(pool, seed=1)
        self.clf.predict_proba(self.X[:10], self.X_var[:10])  # traces the predictive: not a user's per-call cost

    def track_sources_per_second(self) -> float:
        start = time.perf_counter()
        self.clf.predict_proba(self.X, self.X_var)
        return len(self.X) / (time.perf_counter() - start)

    track_sources_per_second.unit = "sources/s"

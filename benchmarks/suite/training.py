"""Training: one SVI step of the main job's model against its arithmetic, a warm refit, batched fits, a fit on new
data, the estimator's default fit given error bars."""

from __future__ import annotations

import numpy as np

from gpal import NoisyGPClassifier, fit_batched
from gpal.catalog_jobs.device_check import Workload, main_job_workload, time_training_step, workload_problem

from .arithmetic import gemm_seconds, step_flops
from .sizes import SMOKE, pick


def _main_job() -> Workload:
    workload = main_job_workload()
    return workload if not SMOKE else Workload(**{**workload.__dict__, "n_rows": 400})


class MainJobStep:
    """One step of the main job's model (NIMGP, population prior, M = 50, B = 200, d = 16, C = 3)."""

    timeout = 600
    number, repeat = 1, 1  # a track_ benchmark measures inside; asv's own repeats would refit for nothing

    def setup(self) -> None:
        self.workload = _main_job()
        self.timing = time_training_step(self.workload, "/CPU:0", epochs=pick(6, 3))

    def track_step_ms(self) -> float:
        return 1e3 * self.timing.seconds_per_step

    track_step_ms.unit = "ms"

    def track_step_over_gemm(self) -> float:
        """Wall time of a step over the CPU time of the GEMMs of its shapes (see `arithmetic`): 1 is the floor."""
        p = self.workload.params
        gemm = gemm_seconds(self.workload.n_classes, p["batch_size"], p["num_inducing"], self.workload.n_features,
                            K=8, repeats=pick(200, 5))
        return self.timing.seconds_per_step / gemm

    track_step_over_gemm.unit = "ratio"

    def track_gflops(self) -> float:
        p = self.workload.params
        flops = step_flops(self.workload.n_classes, p["batch_size"], p["num_inducing"], self.workload.n_features, 8)
        return flops["total"] / self.timing.seconds_per_step / 1e9

    track_gflops.unit = "GFLOP/s"


class WarmRefit:
    """An active-learning query's refit: one epoch from the fitted state (``warm_start=True``)."""

    timeout = 600

    def setup(self) -> None:
        workload = _main_job()
        self.X, self.y, self.X_var = workload_problem(workload)
        self.clf = NoisyGPClassifier(**{**workload.params, "epochs": 1, "warm_start": True}).fit(
            self.X, self.y, X_var=self.X_var)  # traces the step: the timed refits reuse it

    def time_refit_one_epoch(self) -> None:
        self.clf.fit(self.X, self.y, X_var=self.X_var)


class BatchedFits:
    """K fits that differ in their seed: one batched fit (`gpal.fit_batched`) against K fits one after another."""

    params = [pick([4], [2])]
    param_names = ["models"]
    timeout = 900
    number, repeat = 1, pick(3, 1)

    def setup(self, models: int) -> None:
        workload = Workload(**{**_main_job().__dict__, "params": {**_main_job().params, "input_prior": "broad"}})
        self.data = [workload_problem(workload, seed=k) for k in range(models)]
        self.make = lambda k: NoisyGPClassifier(**{**workload.params, "epochs": pick(5, 1), "random_state": k})

    def time_batched(self, models: int) -> None:
        fit_batched([self.make(k) for k in range(models)], self.data)

    def time_one_at_a_time(self, models: int) -> None:
        for k, (X, y, X_var) in enumerate(self.data):
            self.make(k).fit(X, y, X_var=X_var)


class FitOnNewData:
    """A default fit given error bars on data the process has not fitted yet (a fold of a cross-validation, a grid
    search's candidate): its population prior is new, its compiled step and predictor are those of the first fit."""

    timeout = 600

    def setup(self) -> None:
        self.workload, self.seed = _main_job(), 0
        self._fit_and_predict()  # the process's first fit traces

    def _fit_and_predict(self) -> None:
        X, y, X_var = workload_problem(self.workload, seed=self.seed)
        self.seed += 1  # each call's data (and so its prior) new, as asv repeats the call
        NoisyGPClassifier(**{**self.workload.params, "epochs": 1}).fit(X, y, X_var=X_var).predict_proba(X, X_var=X_var)

    def time_fit_and_predict(self) -> None:
        self._fit_and_predict()


def _heteroscedastic():
    """``benchmarks/heteroscedastic.py`` (outside asv's benchmark folder), loaded from its file."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location("heteroscedastic", Path(__file__).parents[1] / "heteroscedastic.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class DefaultFitGivenErrorBars:
    """``NoisyGPClassifier()`` with its defaults given X_var (NIMGP, population prior, its stop rule) on the
    heteroscedastic task of ``benchmarks/heteroscedastic.py`` at n = 2000, d = 10: the fit's wall and CPU time, the
    epochs its stop ran and its test NLL (a faster fit must not buy its time with a worse model)."""

    timeout = 1200
    number, repeat = 1, 1  # each benchmark is one whole fit

    def setup(self) -> None:
        self.bench = _heteroscedastic()
        self.task = self.bench.make_task(pick(2000, 200), pick(2000, 200), pick(10, 3), seed=0)

    def _fit(self) -> NoisyGPClassifier:
        t = self.task
        return NoisyGPClassifier(random_state=0).fit(t["X"], t["y"], t["X_var"])

    def time_fit(self) -> None:
        self._fit()

    def track_fit_cpu_seconds(self) -> float:
        """The fit's CPU time (user and system): on a shared machine the cost that wall time hides."""
        started = self.bench.cpu_seconds()
        self._fit()
        return self.bench.cpu_seconds() - started

    track_fit_cpu_seconds.unit = "s"

    def track_epochs(self) -> float:
        return float(len(self._fit().history_))

    track_epochs.unit = "epochs"

    def track_test_nll(self) -> float:
        t = self.task
        proba = self._fit().predict_proba(t["X_test"], t["X_var_test"])
        return self.bench.nll(np.log(np.maximum(proba, 1e-300)), t["y_test"])

    track_test_nll.unit = "nats"

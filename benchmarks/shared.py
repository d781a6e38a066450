"""What several benchmark scripts share: synthetic problems, the machine's description, timing, the faint-source task.

Not a script: the scripts beside it import it by name (Python puts a script's own folder first on its path),
so each shared piece is written once and no script imports another.
"""

from __future__ import annotations

import os
import platform
import time
import warnings
from typing import Any, Callable

import numpy as np

#: gpal's methods of the noisy-input paper, by the ``input_noise`` each is.
METHODS = {"MGP": "none", "NIMGP": "latent", "NIMGP-NN": "amortized", "NIMGP-FO": "first_order"}
#: The main job's model shapes (FL16Y's training rows, features, classes, inducing points, batch, prior components).
MAIN_JOB_SHAPES = {"n": 2103, "d": 16, "classes": 3, "inducing": 50, "batch": 200, "prior_components": 8}
#: The GP settings of the faint-source studies (error bars, discovery).
GP_SHARED = dict(likelihood="softmax", num_inducing=50, batch_size=200, epochs=300)


def synthetic_problem(n: int, d: int, n_classes: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Standardised-looking inputs with class-dependent means and per-point error bars on half the features."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n)
    centres = rng.normal(scale=1.5, size=(n_classes, d))
    X = centres[y] + rng.normal(size=(n, d))
    X_var = rng.uniform(0.01, 0.2, size=(n, d))
    X_var[:, d // 2 :] = 0.0  # like the catalog: some features have no error bar
    return X, X_var, y


def environment() -> dict[str, Any]:
    """The software and machine a timing was taken on, and how busy the machine was."""
    import gpflow
    import tensorflow as tf

    gpus = tf.config.list_physical_devices("GPU")
    return {
        "python": platform.python_version(),
        "tensorflow": tf.__version__,
        "gpflow": gpflow.__version__,
        "device": ", ".join(tf.config.experimental.get_device_details(g).get("device_name", g.name) for g in gpus)
        or f"CPU ({platform.processor() or platform.machine()})",
        "cpu_count": os.cpu_count(),
        "load_average_at_start": os.getloadavg(),
    }


def median_seconds(fn: Callable[[], Any], repeats: int) -> float:
    """Median wall seconds of ``repeats`` calls, after one call that traces."""
    fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def dr4_sources():
    """The labelled bll / fsrq / pulsar sources and the unassociated + bcu pool (X, X_var) of 4FGL-DR4."""
    from gpal.catalogs import load_catalog
    from gpal.catalogs.classes import DEFAULT_MERGE

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        catalog = load_catalog("4FGL-DR4")
        data = catalog.dataset(classes=("bll", "fsrq", "pulsar"), merge=DEFAULT_MERGE, features="fermi_dr4")
        pool = catalog.pool(select=("unassociated", "bcu"), features="fermi_dr4")
    return data, (pool.X, pool.X_var)


def significance_task(task: str, rep: int, dr4):
    """(training, test, None, GP settings, unlabelled pool) of a task on `dr4_sources`.

    ``faint``: tested on the faintest quarter by ``Signif_Avg``, trained on the rest; ``bright``: the brightest
    quarter; ``main``: the main job's random 80/20 split.  Repetition ``rep`` trains on a 90% subsample.
    """
    data, pool = dr4
    significance = data.X[:, list(data.feature_names).index("log(Signif_Avg)")]
    unlabelled = pool
    if task == "main":
        pool, test = data.split(test_size=0.2, seed=0)
    else:
        faint = significance <= np.quantile(significance, 0.25)
        bright = significance > np.quantile(significance, 0.75)
        test_rows = faint if task == "faint" else bright
        pool, test = data.subset(np.nonzero(~test_rows)[0]), data.subset(np.nonzero(test_rows)[0])
    keep = np.sort(np.random.default_rng([rep, 11]).permutation(pool.n_samples)[: int(0.9 * pool.n_samples)])
    return pool.subset(keep), test, None, dict(GP_SHARED), unlabelled

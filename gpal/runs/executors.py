"""Where independent units of work run: in this process, or on a Dask cluster.

A workflow (splits x methods x noise levels) and chunked prediction are lists of
independent tasks ``fn(*args)``.  An `Executor` runs them and yields ``(index,
result)`` as each finishes, so the caller can write every result the moment it
arrives: results on disk are complete or absent whichever executor ran them.

Three forms, chosen by `make_executor`:

* ``"in-process"`` (default): a plain loop, no extra dependency.
* ``"local-dask"``: a Dask ``LocalCluster`` on this machine (worker processes, one
  thread each, loopback only, no dashboard), closed on exit.
* ``"tcp://HOST:PORT"``: a client to a running Dask scheduler (e.g. started by
  dask-jobqueue on a batch system); only the client is closed on exit.

Workers receive only the task function (a module-level gpal function, pickled by
reference, so the workers need gpal installed) and its arguments (numpy arrays,
`NoisyDataset`s, parameter dicts).  An argument shared by several tasks (the data
set of every unit) is sent to the cluster once, not once per task.

Same seed, same bits, any executor.  Every unit draws its randomness from its own
explicit seed, but that alone is not enough: the last bits of a multithreaded
reduction depend on how many threads share it (scikit-learn's k-means, used to
place inducing points, gives different centres with 1 and 2 OpenMP threads, and
Dask's nanny starts workers with ``OMP_NUM_THREADS=1``).  So every executor runs
each task with the native numpy / scipy / scikit-learn pools (BLAS, OpenMP) at one
thread.  TensorFlow's own pools do not change gpal's results and are left alone
in-process; in a Dask worker they are capped at the worker's thread count (1 for
``local-dask``), so N workers on N cores do not start N x N threads.  Local
workers have no memory limit: a TensorFlow process's footprint is mostly its
runtime, and Dask pausing or killing a worker mid-fit would only lose work.
"""

from __future__ import annotations

import abc
import contextlib
import gc
import logging
import os
import re
import sys
from collections import Counter
from typing import Any, Callable, Iterator, Sequence
from uuid import uuid4

from gpal.data.dataset import NoisyDataset
from gpal.files import usable_cores
from gpal.interrupts import check_stop
from gpal.quiet import quiet_tensorflow_if_asked

__all__ = ["DaskExecutor", "Executor", "InProcessExecutor", "SCHEDULER_FORMS", "as_executor", "make_executor"]

#: The valid values of ``scheduler`` (and of the CLI's ``--scheduler``).
SCHEDULER_FORMS = ("in-process", "local-dask", "tcp://HOST:PORT")
_TCP = re.compile(r"^tcp://[^\s:/]+:\d{1,5}$")


class Executor(abc.ABC):
    """Runs independent tasks and yields their results as they finish.

    Examples
    --------
    >>> from gpal.runs.executors import Executor, make_executor
    >>> with make_executor() as executor:               # None / "in-process", "local-dask" or "tcp://HOST:PORT"
    ...     isinstance(executor, Executor), dict(executor.map(divmod, [(7, 2), (9, 4)], progress=False))
    (True, {0: (3, 1), 1: (2, 1)})
    """

    name: str

    def map(
        self, fn: Callable[..., Any], tasks: Sequence[tuple], *, desc: str | None = None, progress: bool = True
    ) -> Iterator[tuple[int, Any]]:
        """Call ``fn(*tasks[i])`` for every i; yield ``(i, result)`` as each finishes (``_results`` runs them).

        Tasks are checked before any runs.  The first exception propagates (pending tasks are cancelled).  One
        tqdm bar counts finished tasks unless ``progress`` is false; Ctrl-C stops between tasks.

        Yields
        ------
        index, result : tuple
            The task's position in ``tasks`` and what ``fn`` returned for it.
        """
        tasks = _check_tasks(tasks)
        with _bar(len(tasks), desc, progress) as bar, contextlib.closing(self._results(fn, tasks)) as results:
            for _ in range(len(tasks)):  # one result a task
                check_stop()  # Ctrl-C in a command: between tasks
                i, result = next(results)
                bar.update(1)
                yield i, result

    @abc.abstractmethod
    def _results(self, fn: Callable[..., Any], tasks: list[tuple]) -> Iterator[tuple[int, Any]]:
        """``(i, fn(*tasks[i]))`` for every task of the checked list ``tasks``, in the order they finish; closing the
        iterator early releases the tasks not yet finished."""

    def close(self) -> None:
        """Release what this executor started (nothing for in-process)."""

    def __enter__(self) -> "Executor":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


def _check_tasks(tasks: Sequence[tuple]) -> list[tuple]:
    tasks = list(tasks)
    bad = [i for i, t in enumerate(tasks) if not isinstance(t, tuple)]
    if bad:
        kind = type(tasks[bad[0]]).__name__
        raise TypeError(f"each task must be a tuple of arguments for fn; task {bad[0]} is {kind}")
    return tasks


def _call(fn: Callable[..., Any], args: tuple) -> Any:
    """``fn(*args)`` with the native BLAS / OpenMP pools at one thread, so its rounding is the same everywhere."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        return fn(*args)


def _bar(total: int, desc: str | None, progress: bool) -> Any:
    from gpal.progress import progress_bar

    return progress_bar(total=total, desc=desc or "tasks", unit="task", disable=not progress)


class InProcessExecutor(Executor):
    """Runs tasks one after another in this process (the default; no Dask needed).

    Examples
    --------
    >>> from gpal.runs.executors import InProcessExecutor
    >>> executor = InProcessExecutor()
    >>> list(executor.map(pow, [(2, 3), (3, 2)], desc="powers", progress=False))   # in task order here
    [(0, 8), (1, 9)]
    """

    name = "in-process"

    def _results(self, fn: Callable[..., Any], tasks: list[tuple]) -> Iterator[tuple[int, Any]]:
        """Each task in turn, in task order (BLAS / OpenMP at one thread)."""
        for i, args in enumerate(tasks):
            yield i, _call(fn, args)


# ------------------------------------------------------------------------- dask
_threads_configured = False


def _limit_tensorflow_threads(n_threads: int) -> None:
    """Cap TensorFlow's thread pools in this worker process at ``n_threads`` (once, before TF starts).

    Environment variables set by whoever started the worker win.  If TensorFlow is
    already running in this process its pools cannot change any more; it is left as is.
    """
    global _threads_configured
    if _threads_configured:
        return
    _threads_configured = True
    intra = int(os.environ.setdefault("TF_NUM_INTRAOP_THREADS", str(n_threads)))
    inter = int(os.environ.setdefault("TF_NUM_INTEROP_THREADS", str(n_threads)))
    if "tensorflow" in sys.modules:
        import tensorflow as tf

        try:
            tf.config.threading.set_intra_op_parallelism_threads(intra)
            tf.config.threading.set_inter_op_parallelism_threads(inter)
        except RuntimeError:  # TensorFlow already initialised in this worker
            pass


_modules_frozen = False


def _freeze_modules_once_tensorflow_loaded() -> None:
    """Once a task has loaded TensorFlow in this worker, move the objects alive now (its modules', millions) out
    of Python's cyclic collector (`gc.freeze`, once): they live as long as the worker, and every full collection,
    the one at the worker's exit among them, walked them all again.  A local cluster whose two workers loaded
    gpal's models closed in 1.5 s, 0.2 s frozen."""
    global _modules_frozen
    if _modules_frozen or "tensorflow" not in sys.modules:
        return
    _modules_frozen = True
    gc.collect()  # the task's own garbage is not kept
    gc.freeze()


def _run_on_worker(fn: Callable[..., Any], *args: Any) -> Any:
    """What a Dask worker executes for one task: thread limits, then ``fn(*args)``."""
    from distributed import get_worker

    quiet_tensorflow_if_asked()
    _limit_tensorflow_threads(max(1, int(get_worker().state.nthreads)))
    try:
        return _call(fn, args)
    finally:
        _freeze_modules_once_tensorflow_loaded()


def _shareable(arg: Any) -> bool:
    """Arguments worth sending to the cluster once when several tasks use the same object."""
    import numpy as np

    return isinstance(arg, (np.ndarray, NoisyDataset))


class DaskExecutor(Executor):
    """Runs tasks on a Dask cluster through a ``distributed.Client``.

    Built by `make_executor`; ``owns_cluster`` says whether closing it also stops the
    cluster (``local-dask``) or only disconnects (``tcp://``).

    Examples
    --------
    >>> from operator import add
    >>> from gpal.runs.executors import make_executor
    >>> with make_executor("local-dask", n_workers=1) as executor:    # a LocalCluster, closed on exit
    ...     executor, executor.owns_cluster, sorted(executor.map(add, [(1, 2), (3, 4)], progress=False))
    (DaskExecutor('local-dask'), True, [(0, 3), (1, 7)])
    """

    def __init__(self, client: Any, name: str, cluster: Any = None) -> None:
        self.client = client
        self.cluster = cluster
        self.name = name

    @property
    def owns_cluster(self) -> bool:
        return self.cluster is not None

    def _results(self, fn: Callable[..., Any], tasks: list[tuple]) -> Iterator[tuple[int, Any]]:
        """Every task sent to the cluster (shared arguments scattered once), in the order they finish."""
        from distributed import as_completed

        uses = Counter(id(a) for args in tasks for a in args if _shareable(a))
        shared: dict[int, Any] = {}
        for args in tasks:
            for a in args:
                if uses.get(id(a), 0) > 1 and id(a) not in shared:
                    shared[id(a)] = self.client.scatter(a, hash=False)
        label = getattr(fn, "__name__", "task")
        futures = [
            self.client.submit(
                _run_on_worker, fn, *(shared.get(id(a), a) for a in args), key=f"{label}-{i}-{uuid4().hex}"
            )
            for i, args in enumerate(tasks)
        ]
        index = {f.key: i for i, f in enumerate(futures)}
        try:
            for future in as_completed(futures):
                yield index[future.key], future.result()  # re-raises the task's exception here
        finally:  # release everything on the cluster, also after an error or an abandoned loop
            self.client.cancel(futures + list(shared.values()))

    def close(self) -> None:
        self.client.close()
        if self.cluster is not None:
            self.cluster.close()


def _import_distributed() -> Any:
    try:
        import distributed
    except ImportError as exc:
        raise ImportError(
            "a Dask scheduler needs dask.distributed, which is not installed; "
            'install it with: pip install -e ".[dask]"'
        ) from exc
    return distributed


def make_executor(scheduler: str | None = None, n_workers: int | None = None) -> Executor:
    """The executor for ``scheduler``: None / "in-process", "local-dask" or "tcp://HOST:PORT".

    ``n_workers`` applies to "local-dask" only (default: the cores this process may
    use); the size of an existing cluster is set where it is started.

    Returns
    -------
    Executor
        An `InProcessExecutor` or a `DaskExecutor`; use it as a context manager so it is closed.
    """
    if scheduler is not None and not isinstance(scheduler, str):
        raise TypeError(f"scheduler must be a string, one of {list(SCHEDULER_FORMS)}; got {scheduler!r}")
    if n_workers is not None and (isinstance(n_workers, bool) or not isinstance(n_workers, int) or n_workers < 1):
        raise ValueError(f"n_workers must be an integer >= 1; got {n_workers!r}")
    if scheduler in (None, "in-process"):
        if n_workers is not None:
            raise ValueError("n_workers applies only to scheduler 'local-dask'; the in-process executor has no workers")
        return InProcessExecutor()
    if scheduler == "local-dask":
        distributed = _import_distributed()
        import dask

        # No dashboard, so no use for the workers' statistical profiler: every 10 ms it walks the running task's
        # stack and reads its source lines, which made TensorFlow's import in a worker 9.0 s instead of 6.5 s
        # on a 2-core machine.  Each worker's nanny keeps the configuration it was started with.
        with dask.config.set({"distributed.worker.profile.enabled": False}):
            cluster = distributed.LocalCluster(
                n_workers=n_workers or usable_cores(),
                threads_per_worker=1,
                processes=True,
                host="127.0.0.1",
                dashboard_address=None,
                memory_limit=0,
                silence_logs=logging.ERROR,  # not the nanny's "still alive after 4 s, killing" at every shutdown
            )
        try:
            client = distributed.Client(cluster)
        except BaseException:
            cluster.close()
            raise
        return DaskExecutor(client, "local-dask", cluster=cluster)
    if _TCP.match(scheduler):
        if n_workers is not None:
            raise ValueError(
                f"n_workers applies only to scheduler 'local-dask'; the cluster at {scheduler} has its own workers"
            )
        distributed = _import_distributed()
        try:
            client = distributed.Client(scheduler, timeout="30s")
        except OSError as exc:
            raise ConnectionError(f"could not connect to the Dask scheduler at {scheduler}: {exc}") from exc
        return DaskExecutor(client, scheduler)
    raise ValueError(f"unknown scheduler {scheduler!r}; valid forms are {', '.join(SCHEDULER_FORMS)}")


def as_executor(executor: Executor | None) -> Executor:
    """``executor``, or the in-process one for None; anything else is a TypeError naming what is expected.

    Returns
    -------
    Executor
        ``executor`` itself, or a new `InProcessExecutor`.
    """
    if executor is None:
        return InProcessExecutor()
    if not isinstance(executor, Executor):
        raise TypeError(f"executor must be a gpal.runs.executors.Executor (see make_executor); got {type(executor).__name__}")
    return executor

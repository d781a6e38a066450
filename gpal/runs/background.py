"""Independent work run in a second thread while the main thread does its own.

On a 2-core laptop a compiled TensorFlow step or a NumPy array operation releases the GIL, so two
fits in two threads take about the time of one: the main job trains the error-blind twin and the
baselines beside the model this way.  Work in the background must be stoppable: when the block
beside it fails or is interrupted, the work is told to stop (`abandon_if` raises `Abandoned` at
its next check) and waited for, so nothing is written after the run gave up.  `preload` imports heavy
modules (TensorFlow and the models) in a second thread while the main thread builds its data.

`run_steps` is the small runner a job's steps go through: the job lists its steps in order and says
which work runs beside which of them (`Beside`); the steps themselves know nothing of threads.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Mapping, Optional, Sequence

from gpal.runs.timings import StepTimes

__all__ = ["Abandoned", "Beside", "abandon_if", "alongside", "preload", "run_steps"]


class Abandoned(Exception):
    """Raised inside background work whose run has stopped: it ends without writing anything."""


def abandon_if(stop: threading.Event) -> None:
    """Raise `Abandoned` once ``stop`` is set; a training callback or a loop calls it between units of work."""
    if stop.is_set():
        raise Abandoned("the run beside this work stopped")


@contextlib.contextmanager
def alongside(work: Optional[Callable[[threading.Event], None]]) -> Iterator[Callable[[], None]]:
    """Run ``work(stop)`` in a second thread during the block; yields ``wait``.

    ``wait()`` returns once the work is done and raises what it raised; the block calls it where it needs
    the work's result.  ``work`` None yields a ``wait`` that does nothing.  Leaving the block by an
    exception sets ``stop``, waits for the work to end and re-raises the block's exception.

    Yields
    ------
    Callable[[], None]
        ``wait``: blocks until the work has finished and re-raises its exception, if any.
    """
    if work is None:
        yield lambda: None
        return
    stop = threading.Event()
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="gpal-alongside") as pool:
        future = pool.submit(work, stop)
        try:
            yield future.result
        except BaseException:
            stop.set()
            raise
        future.result()  # a block that never waited still hears of the work's failure


@dataclass(frozen=True)
class Beside:
    """Work run in a second thread from just before step ``start`` until step ``until`` has ended.

    ``work(results, stop)`` sees the results of the steps before ``start`` and must end soon after ``stop``
    is set (`abandon_if`); what it returns is the result named ``name``.  ``work`` None: nothing to run
    (``name``'s result is None).
    """

    name: str
    work: Optional[Callable[[Mapping[str, Any], threading.Event], Any]]
    start: str
    until: str


def run_steps(steps: Sequence[tuple[str, Callable[[Mapping[str, Any]], Any]]],
              beside: Sequence[Beside] = (), imports: Sequence[str] = (), times: Optional[StepTimes] = None
              ) -> dict[str, Any]:
    """Run ``steps`` (name, ``step(results)``) in order, each ``beside`` work in a second thread over its span.

    Each step sees the results of the steps before it.  Where a step fails or is interrupted, the work beside it
    is told to stop and waited for, and the step's exception is raised; work that fails has its exception
    raised at the end of its span.  ``imports``: modules the steps and the work import lazily, imported first
    in this thread; two threads importing packages whose compiled modules import each other (scikit-learn's
    ``cluster`` and ``ensemble`` both reach ``sklearn.tree``) can stop in Python's import-lock deadlock error.
    ``times``: each step and each work beside them is timed into it under its name.

    Returns
    -------
    dict
        Step name and work name -> result.
    """
    names = [name for name, _ in steps]
    for b in beside:
        if b.start not in names or b.until not in names or names.index(b.until) < names.index(b.start):
            raise ValueError(f"{b.name} runs beside the steps {b.start!r} to {b.until!r}; the steps are {names}")
    for module in imports:
        importlib.import_module(module)
    results: dict[str, Any] = {}
    with contextlib.ExitStack() as stack:
        running: list[tuple[Beside, Callable[[], Any]]] = []
        for name, step in steps:
            for b in beside:
                if b.start == name:
                    work = None if b.work is None else _bound(b.work, dict(results), b.name, times)
                    running.append((b, stack.enter_context(_alongside_result(work))))
            with times.timed(name) if times is not None else contextlib.nullcontext():
                results[name] = step(results)
            for b, wait in reversed(running):  # the work started last is waited for first
                if b.until == name:
                    results[b.name] = wait()
    return results


def _bound(work: Callable[[Mapping[str, Any], threading.Event], Any], results: Mapping[str, Any], name: str,
           times: Optional[StepTimes]) -> Callable[[threading.Event], Any]:
    def run(stop: threading.Event) -> Any:
        with times.timed(name, beside=True) if times is not None else contextlib.nullcontext():
            return work(results, stop)

    return run


@contextlib.contextmanager
def _alongside_result(work: Optional[Callable[[threading.Event], Any]]) -> Iterator[Callable[[], Any]]:
    """`alongside`, whose ``wait`` also returns what the work returned."""
    if work is None:
        yield lambda: None
        return
    box: list[Any] = []
    with alongside(lambda stop: box.append(work(stop))) as wait:
        def result() -> Any:
            wait()
            return box[0]

        yield result


def preload(*modules: str, lifelong: bool = False) -> threading.Thread:
    """Start importing ``modules``, one after the other, in a second thread; the main thread's own import of one
    then waits for it.

    A job that will train imports TensorFlow (seconds of mostly Python work) beside its feature
    computation (NumPy and SciPy ufuncs, which release the GIL), so the two share the cores; what the
    job's end needs (its figures' matplotlib) can follow in the same thread.  The thread is not a daemon:
    a process that ends early (a refused input) waits for the imports to finish rather than tear an
    extension down half loaded.  A failed import is left to the main thread's own, which raises it where
    the module is needed; the modules after it are still imported.

    ``lifelong`` (a command's own process, whose modules live until it ends): Python's cyclic garbage
    collector pauses while the modules import, and their objects then leave its collections
    (`gc.freeze`).  TensorFlow brings millions of objects, and every full collection walked them all again,
    holding the GIL: the main job's collections took about four times longer without this (a ``gc.callbacks``
    probe).  Nothing
    changes when the modules
    are already imported.

    Returns
    -------
    threading.Thread
        The started thread (join it to wait for the imports).
    """
    thread = threading.Thread(target=_import, args=modules, kwargs={"lifelong": lifelong}, name="gpal-preload")
    thread.start()
    return thread


def _import(*modules: str, lifelong: bool = False) -> None:
    pause = lifelong and gc.isenabled() and not all(module in sys.modules for module in modules)
    if pause:
        gc.disable()
    try:
        for module in modules:
            try:
                importlib.import_module(module)
            except Exception:  # noqa: BLE001  the main thread imports it again and reports the failure there
                pass
    finally:
        if pause:
            gc.freeze()
            gc.enable()

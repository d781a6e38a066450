"""Bounds on the memory and time a fit or a prediction asks for, checked before it starts.

Settings valid one by one (``epochs`` 10^9, a billion hidden units, inducing points or
Monte Carlo draws) can ask for years of training or terabytes of memory: TensorFlow then
dies with an allocation error after the output folder is claimed, or trains on for ever.
Every size is instead weighed here against the data and the machine, before any work:
memory over half of the machine's is refused; a run expected to take over `WARN_SECONDS`
is warned of with its expected time, and one over `REFUSE_SECONDS` is refused.  The
estimates are coarse (a fixed cost per optimiser step plus the floating-point work at
`FLOPS`, calibrated on the compiled epochs of ``NoisyGPClassifier``: within 1.8 times the CPU seconds a step took
from 1 to 40 ms, lab study estimator_default), so the bounds are set far from any run a user means to make.
"""

from __future__ import annotations

import warnings

from gpal.files import memory_bytes

__all__ = ["FIT_WARN_SECONDS", "FLOPS", "REFUSE_SECONDS", "ROW_SECONDS", "STEP_SECONDS", "WARN_SECONDS", "check_memory",
           "check_time", "duration", "minibatch_steps", "rows_per_step"]

#: Fixed cost of one optimiser step inside a compiled epoch, its cost per row of the step (the elementwise work the
#: flops leave out: the likelihood's Monte Carlo terms, the input draws) and the floating-point rate of its
#: arithmetic, fitted to the CPU seconds of a step of NoisyGPClassifier on 2000 rows of 10 features and 3 classes
#: (exact and latent inputs, 20 to 200 inducing points, 50 to 1000 rows a step: 0.9 to 36 ms, each estimated within
#: 0.6 to 1.4 times), each measured in a process of its own with TensorFlow's pools at one thread: a process whose
#: idle pool threads spin counts the spin as CPU seconds of its steps (about 1 to 2 ms a step here).
STEP_SECONDS = 0.0005
ROW_SECONDS = 1e-5
FLOPS = 5e9
#: Expected times above which a run is warned of, and refused.
WARN_SECONDS = 3600.0
#: An estimator's fit (a user at a prompt or in a notebook) is warned of sooner.
FIT_WARN_SECONDS = 600.0
REFUSE_SECONDS = 30 * 24 * 3600.0
#: The share of the machine's memory one allocation may take.
MEMORY_SHARE = 0.5


def rows_per_step(batch_size: int, n_rows: int) -> int:
    """The rows an optimiser step takes: ``batch_size``, at most the ``n_rows`` there are, at least one."""
    return max(1, min(int(batch_size), int(n_rows)))


def minibatch_steps(epochs: int, n_rows: int, batch_size: int) -> int:
    """The steps of ``epochs`` passes over ``n_rows`` in minibatches of ``batch_size`` (the last one partial).

    Returns
    -------
    int
        ``epochs * ceil(n_rows / rows_per_step(batch_size, n_rows))``.
    """
    return int(epochs) * -(-int(n_rows) // rows_per_step(batch_size, n_rows))


def duration(seconds: float) -> str:
    """``seconds`` in the unit a person reads: "40 min", "3.2 h", "5.1e+07 years"."""
    for unit, size in (("years", 365.25 * 86400), ("days", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds / size:.3g} {unit}"
    return f"{seconds:.2g} s"


def _bytes(n: float) -> str:
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n:.0f} bytes"


def check_memory(nbytes: float, what: str, fix: str) -> None:
    """Refuse ``what`` (the settings that ask, by name) when it needs more than half the machine's memory."""
    limit = memory_bytes() * MEMORY_SHARE
    if nbytes > limit:
        raise ValueError(f"{what} needs about {_bytes(nbytes)} of memory, more than half of this machine's "
                         f"{_bytes(memory_bytes())}; {fix}")


def check_time(seconds: float, what: str, fix: str, warn_seconds: float = WARN_SECONDS) -> None:
    """Refuse ``what`` when expected to take over `REFUSE_SECONDS`; warn with the expected time over ``warn_seconds``
    (`WARN_SECONDS` for a job; a caller in an interactive session says so sooner)."""
    if seconds > REFUSE_SECONDS:
        raise ValueError(f"{what} would take about {duration(seconds)} (gpal refuses runs expected to take over "
                         f"{duration(REFUSE_SECONDS)}); {fix}")
    if seconds > warn_seconds:
        warnings.warn(f"{what} is expected to take about {duration(seconds)}; {fix} for a shorter run", stacklevel=3)

"""Learning-curve units (the ``active_learning`` and ``follow_up`` workflows) run as one batch in lock step."""

from __future__ import annotations

import time
from typing import Any, Callable

__all__ = ["curves_in_lock_step"]


def curves_in_lock_step(names: list[str], units: list[tuple], make_loop: Callable[..., Any],
                        result: Callable[[Any, float], dict[str, Any]]) -> list[Any]:
    """A ``run_units`` batch: the loops ``make_loop(*unit)`` run together (`gpal.active.run_together`).

    Each query's retrainings are one batched fit where the loops' estimators allow.

    Returns
    -------
    list
        Per unit, ``result(loop, seconds)`` with ``seconds`` its share of the batch's time, or the
        exception that stopped its curve.
    """
    from gpal.active import run_together

    start = time.perf_counter()
    loops = [make_loop(*unit) for unit in units]
    outcomes = run_together(loops, max_models=len(loops), errors="return")
    seconds = (time.perf_counter() - start) / len(loops)
    return [out if isinstance(out, Exception) else result(loop, seconds) for out, loop in zip(outcomes, loops)]

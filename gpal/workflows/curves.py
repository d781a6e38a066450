"""Learning-curve units (the ``active_learning`` and ``follow_up`` workflows): the acquisitions' options they
offer, and their units run as one batch in lock step."""

from __future__ import annotations

import time
from typing import Any, Callable, Mapping

from gpal.workflows.schema import Field, fields_from_settings

__all__ = ["acquisition_fields", "acquisition_options", "curves_in_lock_step"]

#: Which acquisition option a ``loop`` key sets: key -> (acquisition, option).
Offered = Mapping[str, "tuple[str, str]"]


def acquisition_fields(offered: Offered, **defaults: Any) -> dict[str, Field]:
    """The ``loop`` fields of the acquisition options a workflow offers, declared by the acquisitions.

    The constraint, the default and the meaning are the acquisition's
    (`gpal.active.acquisition_settings`); ``defaults`` (by key) replace the default, as a study
    chooses its own cost.

    Returns
    -------
    dict
        Key -> `gpal.workflows.schema.Field`, in the order of ``offered``.
    """
    from gpal.active.acquisition import acquisition_settings

    settings = {key: acquisition_settings(name)[option] for key, (name, option) in offered.items()}
    fields = fields_from_settings(settings, **defaults)
    return {key: Field(f.constraint, f.default, f"{offered[key][0]}: {f.doc}") for key, f in fields.items()}


def acquisition_options(offered: Offered, loop: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Per acquisition, the options a workflow's ``loop`` section sets (see `acquisition_fields`).

    Returns
    -------
    dict
        Acquisition name -> {option: value}.
    """
    options: dict[str, dict[str, Any]] = {}
    for key, (name, option) in offered.items():
        options.setdefault(name, {})[option] = loop[key]
    return options


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

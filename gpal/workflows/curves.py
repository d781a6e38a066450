"""Learning-curve units (the ``active_learning`` and ``follow_up`` workflows): each acquisition's options as
they offer them, and their units run as one batch in lock step."""

from __future__ import annotations

import inspect
import time
from typing import Any, Callable, Iterable, Mapping, Sequence

from gpal.constraints import Optional
from gpal.workflows.schema import Field, fields_from_settings

__all__ = ["ACQUISITIONS_SECTION", "acquisition_config", "acquisition_section", "check_strategy_options",
           "curves_in_lock_step"]

#: The top-level section of a learning-curve workflow that holds every acquisition's options, one
#: sub-section per acquisition (``acquisitions.bald.n_samples``).
ACQUISITIONS_SECTION = "acquisitions"


def acquisition_section(owned: Mapping[str, Sequence[str]] | None = None,
                        **defaults: Mapping[str, Any]) -> dict[str, dict[str, Field]]:
    """The ``acquisitions`` section: per registered acquisition, a field per option it declares.

    The constraint, the default and the meaning are the acquisition's
    (`gpal.active.acquisition_settings`), so an acquisition or an option added by the recipe is a
    workflow key without an edit here.  ``owned`` (acquisition -> options) are those the study
    sets itself (a repetition's seed); ``defaults`` (acquisition -> {option: value}) replace an
    option's default, as a study chooses its own cost.  An option the acquisition requires is
    None here until set (`check_strategy_options` asks for it where the acquisition is a strategy).
    An acquisition left with no option has no sub-section.

    Returns
    -------
    dict
        Acquisition name -> {option: `gpal.workflows.schema.Field`}, in the registry's order.
    """
    from gpal.active.base import acquisition_settings
    from gpal.registry import ACQUISITIONS

    unknown = sorted(set(defaults) - set(ACQUISITIONS.names()))
    if unknown:
        raise TypeError(f"defaults for {unknown}, which are not acquisitions {list(ACQUISITIONS.names())}")
    section = {}
    for name in ACQUISITIONS.names():
        settings = {option: s if s.default is not inspect.Parameter.empty else _unset_until_given(s)
                    for option, s in acquisition_settings(name).items() if option not in (owned or {}).get(name, ())}
        fields = fields_from_settings(settings, **defaults.get(name, {}))
        if fields:
            section[name] = fields
    return section


def _unset_until_given(setting: Any) -> Any:
    """A required option as a workflow field holds it: None until set (a study may not use that acquisition)."""
    from gpal.estimators.settings import Setting

    constraint = setting.constraint if isinstance(setting.constraint, Optional) else Optional(setting.constraint)
    return Setting(constraint, None, f"{setting.doc} (required where the acquisition is a strategy)")


def check_strategy_options(names: Iterable[str], section: Mapping[str, Any]) -> None:
    """Refuse a strategy whose acquisition requires an option the ``acquisitions`` section leaves unset."""
    from gpal.active.base import acquisition_settings

    for name in dict.fromkeys(names):
        declared = acquisition_settings(name)
        for option, value in section.get(name, {}).items():
            if value is None and declared[option].default is inspect.Parameter.empty:
                raise ValueError(f"strategy {name!r} needs {ACQUISITIONS_SECTION}.{name}.{option} "
                                 f"({declared[option].doc}); set it in the file or with --set")


def acquisition_config(name: str, section: Mapping[str, Any], **set_by_study: Any) -> dict[str, Any]:
    """The config of acquisition ``name`` in one learning curve: its options from the ``acquisitions`` section
    (see `acquisition_section`) and those the study sets itself (``set_by_study``: a seed, target sources).

    Returns
    -------
    dict
        ``name`` and the options, as `gpal.active.make_acquisition` takes them.
    """
    return {"name": name, **section.get(name, {}), **set_by_study}


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

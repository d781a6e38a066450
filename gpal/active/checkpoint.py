"""The active-learning loop's checkpoint folder: its state and the model of its last checkpointed step.

Checkpoint folder (all writes atomic)::

    state.json     config, labelled ids in query order, every query's ids / scores /
                   probabilities / labels, a pending query (asked, not yet answered),
                   metrics after every step, the name of the current model folder
    model_0007/    the model after query 7, written by the estimator's own ``save``

A model folder is written before the state that names it, and older model folders are removed
after, so the state always names a complete model.  The loop (`gpal.active.loop`) decides what the
state holds and when it is written; the report of a run (`gpal.active.report`) and the learning-curve
workflows read it here without a loop.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from gpal.files import write_json_atomic

__all__ = ["STATE_FILE", "Checkpoint", "new_state", "read_state"]

_FORMAT = "gpal.active.loop"
_VERSION = 1
#: The checkpoint's state, in its folder; what marks a folder as a loop's checkpoint.
STATE_FILE = "state.json"


def new_state(config: dict[str, Any], initial_ids: list[str], metrics: dict[str, Any]) -> dict[str, Any]:
    """The state of a loop at step 0: its ``config``, the initial labelled ids and the initial model's ``metrics``.

    Returns
    -------
    dict
        The state, with no query, nothing pending and no model folder yet.
    """
    return {"format": _FORMAT, "version": _VERSION, "config": config, "initial_ids": initial_ids, "queries": [],
            "pending": None, "metrics": [metrics], "model": None}


def read_state(checkpoint_dir: str | Path) -> dict[str, Any]:
    """The loop state stored in ``checkpoint_dir`` (``state.json``), checked for format.

    Returns
    -------
    dict
        The state: config, initial ids, queries, a pending query, metrics per step, the model folder.
    """
    path = Path(checkpoint_dir) / STATE_FILE
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise ValueError(f"{path} is not valid JSON ({err}); the checkpoint is corrupt") from None
    if state.get("format") != _FORMAT or state.get("version") != _VERSION:
        raise ValueError(f"{path} is not a {_FORMAT} v{_VERSION} checkpoint")
    return state


class Checkpoint:
    """A loop's checkpoint in ``folder``; with ``folder`` None nothing is kept (a run that cannot be resumed)."""

    def __init__(self, folder: str | Path | None):
        self.folder = None if folder is None else Path(folder)

    def holds_state(self) -> bool:
        """Whether there is a checkpoint to resume."""
        return self.folder is not None and (self.folder / STATE_FILE).exists()

    def save(self, state: dict[str, Any]) -> None:
        """Write ``state``."""
        if self.folder is not None:
            write_json_atomic(self.folder / STATE_FILE, state)

    def save_model(self, state: dict[str, Any], estimator: Any, step: int) -> None:
        """The model of ``step`` first, then the state that names it; older model folders go last."""
        if self.folder is None:
            return
        name = f"model_{step:04d}"
        estimator.save(self.folder / name)
        state["model"] = name
        self.save(state)
        self._remove_stale_models(keep=name)

    def load_model(self, state: dict[str, Any], estimator_class: Any) -> Any:
        """The model ``state`` names, loaded by ``estimator_class``; model folders it does not name are removed."""
        estimator = estimator_class.load(self.folder / state["model"])
        self._remove_stale_models(keep=state["model"])
        return estimator

    def _remove_stale_models(self, keep: str) -> None:
        for path in self.folder.glob("model_*"):
            if path.is_dir() and path.name != keep:
                shutil.rmtree(path)

"""Deep copies of GPflow modules (models, kernels) that survive TensorFlow Probability's shared bijector cache.

Every TFP bijector caches its values in one store shared by all bijectors of the process, and GPflow's
`gpflow.utilities.deepcopy` first clears a module's entries from it: it lists them, then deletes each.  An entry
whose tensor dies in between (a finished trace's graph collected by Python's garbage collector, in this thread or
another: gpal traces a predictor beside the training, and the main job trains two models at once) is deleted by
its weak reference's callback first, and GPflow's delete then raises ``KeyError``.  Here an entry already gone is
what clearing wanted, so the clearing is tried again; each try deletes entries for good, so a few always suffice.
"""

from __future__ import annotations

import copy
from typing import Any, TypeVar

from gpflow.utilities import reset_cache_bijectors

__all__ = ["module_copy"]

M = TypeVar("M")

#: Clearings tried before the last one's error is raised: each lost race deletes at least one entry for good.
_CLEARINGS = 8


def module_copy(module: M, memo: dict[int, Any] | None = None) -> M:
    """``copy.deepcopy(module, memo)`` with the module's bijectors' cached values dropped first, as
    `gpflow.utilities.deepcopy` does, but without its ``KeyError`` when a cached tensor dies meanwhile."""
    for _ in range(_CLEARINGS - 1):
        try:
            reset_cache_bijectors(module)
            break
        except KeyError:  # an entry listed for deletion was deleted by its tensor's death: clear what is left
            continue
    else:
        reset_cache_bijectors(module)
    return copy.deepcopy(module, memo)

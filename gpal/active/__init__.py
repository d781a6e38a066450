"""Active learning: acquisition functions, oracles and the resumable pool-based loop.

The modAL adapter lives in `gpal.active.modal` and is imported only on request
(importing it makes modAL's ``ActiveLearner.teach`` work on scikit-learn >= 1.8).

Each name is imported from its module when first used: ``gpal active``'s parser reads the acquisitions' options
(`acquisition_settings`) without the loop's and the oracles' pandas and scikit-learn, so that a mistyped option is
answered at once.
"""

from importlib import import_module
from typing import Any

from gpal.active import acquisition

#: The module of each name that is not an acquisition's.
_MODULE_OF = {
    "ActiveLearningLoop": "loop", "ConfigMismatch": "loop", "LoopResult": "loop", "initial_pool_test_split": "loop",
    "read_state": "checkpoint", "run_together": "loop",
    "FileOracle": "oracles", "LabelsPending": "oracles", "OracleError": "oracles", "SimulatedOracle": "oracles",
}

__all__ = [*acquisition.__all__, *_MODULE_OF]


def __getattr__(name: str) -> Any:
    module = "acquisition" if name in acquisition.__all__ else _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'gpal.active' has no attribute {name!r}")
    value = globals()[name] = getattr(import_module(f"gpal.active.{module}"), name)  # found once
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})

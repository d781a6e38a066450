"""Active learning: acquisition functions, oracles and the resumable pool-based loop.

The modAL adapter lives in `gpal.active.modal` and is imported only on request
(importing it makes modAL's ``ActiveLearner.teach`` work on scikit-learn >= 1.8).
"""

from gpal.active import acquisition
from gpal.active.acquisition import (
    ACQUISITIONS,
    BALD,
    EPIG,
    Acquisition,
    Discovery,
    LeastConfidence,
    Margin,
    PredictiveEntropy,
    RandomSampling,
    epig_scores,
    expected_yield,
    greedy_diverse,
    acquisition_settings,
    make_acquisition,
    power_sample,
    register_acquisition,
    top_k,
    unregister_acquisition,
)
from gpal.active.checkpoint import read_state
from gpal.active.loop import ActiveLearningLoop, ConfigMismatch, LoopResult, initial_pool_test_split, run_together
from gpal.active.oracles import FileOracle, LabelsPending, OracleError, SimulatedOracle

__all__ = [
    *acquisition.__all__,
    "ActiveLearningLoop",
    "ConfigMismatch",
    "LoopResult",
    "initial_pool_test_split",
    "read_state",
    "run_together",
    "FileOracle",
    "LabelsPending",
    "OracleError",
    "SimulatedOracle",
]

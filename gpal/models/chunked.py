"""A compiled prediction evaluated over row chunks, and the seed streams that keep its draws apart.

Prediction evaluates the GP at (rows x input draws) inputs, so a catalog predicted at once
would not fit in memory; chunks of rows keep it bounded.  A compiled predictor takes
``(X, X_var, seed)`` and its draws are shared by all the rows of a call, so giving every
chunk the same seed makes a source's probability independent of the chunking and of the
other rows predicted with it.  Each kind of prediction has a seed stream of its own (the
second word of the seed), apart from each other and from training's, whose steps are
numbered from 0.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Callable

import numpy as np
import tensorflow as tf

from gpal.files import usable_cores

__all__ = ["PREDICT_BUDGET", "STREAMS", "chunk_evaluations", "in_chunks", "prediction_threads", "stream_seed"]

# Evaluations per chunk.  2^18 (97 sources of 300 draws, 3 classes: ~6 MB per (inputs, M) array) keeps each
# chunk's arrays under glibc's 32 MB mmap threshold, so the next chunk reuses their memory; at 2^20 some are
# mapped afresh and faulted in (thousands of page faults a call where 2^18 has a dozen,
# for about a tenth more CPU time, the same bits); 2^16 and 2^17 are slower: more calls, each with its fixed cost.
PREDICT_BUDGET = 2**18

#: The second word of the seed of each kind of prediction: predict_proba, early stopping's validation
#: predictions, per-row latent draws (sample_proba), posterior draws shared by every call (sample_joint_proba).
STREAMS = {"predict": -1, "validation": -7, "sample": -(10**6), "joint": -(10**6) - 1}


def stream_seed(random_state: int, stream: str) -> tf.Tensor:
    """The ``[random_state, STREAMS[stream]]`` seed tensor of a compiled prediction."""
    return tf.constant([int(random_state), STREAMS[stream]], dtype=tf.int64)


def _row_evaluations(input_draws: int, num_classes: int, latent_draws: int, values: int | None = None) -> int:
    # an evaluation is one latent draw's p(y | f), C values; a likelihood holding more weighs that many more
    weight = 1 if values is None else max(1, -(-int(values) // num_classes))
    return input_draws * max(num_classes**2, latent_draws * weight)


def chunk_evaluations(input_draws: int, num_classes: int, latent_draws: int) -> int:
    """The evaluations of the largest chunk `in_chunks` makes: ``PREDICT_BUDGET``, or one row when a row holds more."""
    return max(PREDICT_BUDGET, _row_evaluations(input_draws, num_classes, latent_draws))


def in_chunks(fn: Callable, X: np.ndarray, X_var: np.ndarray, seed: tf.Tensor, *, input_draws: int, num_classes: int,
              latent_draws: int, values: int | None = None) -> np.ndarray:
    """``fn(X, X_var, seed)`` over row chunks, concatenated along its row axis (axis 1: draws or parts come first),
    in `prediction_threads` threads.

    A row holds ``input_draws`` input draws, each with C^2 quadrature terms or ``latent_draws``
    latent values, whichever is more; the chunks in flight hold ``PREDICT_BUDGET`` of those evaluations.  A latent value's
    p(y | f) counts as one evaluation when it holds its C probabilities, and as ``values`` / C when the likelihood
    holds ``values`` at once (`gpal.models.likelihoods.base.Likelihood.values_per_evaluation`: a quadrature's
    nodes), so the chunk's memory, not its count of draws, stays within the budget.
    """
    threads = prediction_threads()
    # the chunks in flight share the budget, so that threads hold no more memory than one thread's chunk
    rows = max(1, PREDICT_BUDGET // threads // _row_evaluations(input_draws, num_classes, latent_draws, values))
    starts = range(0, X.shape[0], rows)

    def chunk(start: int) -> np.ndarray:
        return fn(X[start : start + rows], X_var[start : start + rows], seed).numpy()

    threads = min(threads, len(starts))
    if threads > 1:  # each chunk's arithmetic is the same in any thread, so the bits are too
        with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="gpal-chunks") as pool:
            return np.concatenate(list(pool.map(chunk, starts)), axis=1)
    return np.concatenate([chunk(start) for start in starts], axis=1)


def prediction_threads() -> int:
    """Threads that evaluate chunks at once: one where TensorFlow splits each op over a pool of threads (its
    default), and the cores this process may use where its ops run on one thread each (``TF_NUM_INTRAOP_THREADS=1``,
    as ``gpal``'s commands set it), at most ``OMP_NUM_THREADS`` where a scheduler set that (a Dask worker's nanny
    sets 1), so a chunk's op never waits for a pool the other chunks hold.  FL16Y's 3615 unassociated and bcu
    sources: 0.77 s on two cores in two threads, 1.3 s in one (1.0 s with TensorFlow's pool of two)."""
    setting = os.environ.get("TF_NUM_INTRAOP_THREADS", "")  # the runtime reads it; the config API says 0 (unset)
    intra = tf.config.threading.get_intra_op_parallelism_threads() or (int(setting) if setting.isdigit() else 0)
    if intra != 1:
        return 1
    cores = usable_cores()
    limit = os.environ.get("OMP_NUM_THREADS", "")
    return max(1, min(cores, int(limit)) if limit.isdigit() and int(limit) > 0 else cores)

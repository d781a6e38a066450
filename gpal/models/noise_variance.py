"""The input-noise variances V of a model: where they come from, apart from how a strategy uses them.

``NoiseVariance`` decides V: the measured per-point variances (``known``), one learned positive
vector shared by all points (``learned``), or their sum (``both``).  ``NoisySVGP`` computes V from
a batch's ``X_var`` and hands it to its input-noise strategy (`gpal.models.input_noise`).
"""

from __future__ import annotations

from typing import Any

import gpflow
import numpy as np
import tensorflow as tf
from check_shapes import check_shapes
from gpflow.utilities import positive

from gpal.constraints import OneOf
from gpal.registry import NOISE_VARIANCE_MODES

__all__ = ["NOISE_VARIANCE_MODES", "NoiseVariance"]

_LEARNED_VARIANCE_FLOOR = 1e-8  # learned variances stay strictly positive (no log 0)


class NoiseVariance(gpflow.base.Module):
    """The input-noise variances V (B, d) of a batch, from its measured ``X_var``.

    Examples
    --------
    >>> import tensorflow as tf
    >>> from gpal.models import NoiseVariance
    >>> both = NoiseVariance("both", num_features=2, initial_learned=0.01)   # measured + one learned vector
    >>> both(tf.constant([[0.04, 0.0]], tf.float64)).numpy()
    array([[0.05, 0.01]])
    >>> both.get_config()
    {'mode': 'both', 'num_features': 2, 'initial_learned': 0.01}
    """

    def __init__(self, mode: str, num_features: int, initial_learned: float = 0.01):
        super().__init__(name="noise_variance")
        OneOf(NOISE_VARIANCE_MODES).check("noise_variance", mode)
        if not initial_learned > _LEARNED_VARIANCE_FLOOR:
            raise ValueError(f"initial learned variance must be > {_LEARNED_VARIANCE_FLOOR}; got {initial_learned}")
        self.mode = mode
        self.num_features = int(num_features)
        self.initial_learned = float(initial_learned)
        if mode != "known":
            self.learned = gpflow.Parameter(
                np.full(self.num_features, self.initial_learned),
                transform=positive(lower=_LEARNED_VARIANCE_FLOOR),
                dtype=tf.float64,
                name="learned_input_variance",
            )

    @check_shapes("X_var: [B, D]", "return: [B, D]")
    def __call__(self, X_var: tf.Tensor) -> tf.Tensor:
        if self.mode == "known":
            return X_var
        learned = tf.broadcast_to(tf.convert_to_tensor(self.learned), tf.shape(X_var))
        return learned if self.mode == "learned" else X_var + learned

    def get_config(self) -> dict[str, Any]:
        """JSON-able description: ``NoiseVariance(**config)`` rebuilds it.

        Returns
        -------
        dict
            ``mode``, ``num_features`` and ``initial_learned``: the constructor's arguments.
        """
        return {"mode": self.mode, "num_features": self.num_features, "initial_learned": self.initial_learned}

"""The input-noise variances of each mode, and a mode that is none refused."""

import numpy as np
import pytest
import tensorflow as tf

from gpal.models.noise_variance import NoiseVariance


def test_noise_variance_modes():
    X_var = tf.constant([[0.1, 0.0], [0.2, 0.0]], tf.float64)
    np.testing.assert_array_equal(NoiseVariance("known", 2)(X_var).numpy(), X_var.numpy())
    learned = NoiseVariance("learned", 2, initial_learned=0.05)
    np.testing.assert_allclose(learned(X_var).numpy(), 0.05)
    np.testing.assert_allclose(NoiseVariance("both", 2, initial_learned=0.05)(X_var).numpy(), X_var.numpy() + 0.05)
    assert len(learned.trainable_variables) == 1 and not learned.trainable_variables[0].shape == ()
    with pytest.raises(ValueError, match="noise_variance must be one of"):
        NoiseVariance("measured", 2)

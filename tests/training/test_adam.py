"""gpal's Adam against tf_keras' (the arithmetic it reproduces in fewer operations)."""

import numpy as np
import pytest
import tensorflow as tf
import tf_keras

from gpal.training.adam import Adam


def _run(optimizer, variables, gradients) -> list[np.ndarray]:
    optimizer.build(variables)
    step = tf.function(lambda grads: optimizer.apply_gradients(zip(grads, variables)), autograph=False)
    for grads in gradients:
        step(grads)
    return [v.numpy() for v in variables]


def test_equals_tf_keras_adam_bit_for_bit_over_a_hundred_steps():
    """Dense gradients of several shapes, a float32 learning rate cast to float64, changed mid-run: every value
    tf_keras' Adam gives, to the last bit (the trainers' bit-for-bit comparisons rest on it)."""
    rng = np.random.default_rng(0)
    shapes = [(3, 5, 4), (5, 3), (3, 15), (4,), ()]
    start = [rng.normal(size=s) for s in shapes]
    gradients = [[tf.constant(rng.normal(scale=10.0 ** rng.integers(-4, 2), size=s)) for s in shapes]
                 for _ in range(100)]
    results = []
    for optimizer in (tf_keras.optimizers.Adam(learning_rate=0.03), Adam(learning_rate=0.03)):
        variables = [tf.Variable(x) for x in start]
        first = _run(optimizer, variables, gradients[:60])
        optimizer.learning_rate = 0.01
        results.append((first, _run(optimizer, variables, gradients[60:])))
    for (keras_first, keras_last), (ours_first, ours_last) in zip(*[[(a, b) for a, b in zip(*r)] for r in results]):
        np.testing.assert_array_equal(ours_first, keras_first)
        np.testing.assert_array_equal(ours_last, keras_last)
    assert not np.allclose(results[1][1][0], start[0])  # they moved


def test_zeroed_state_restarts_as_a_new_optimiser():
    rng = np.random.default_rng(1)
    grads = [[tf.constant(rng.normal(size=(4,)))] for _ in range(5)]
    fresh = Adam(0.1)
    v = tf.Variable(np.ones(4))
    _run(fresh, [v], grads)
    reused = Adam(0.1)
    w = tf.Variable(np.zeros(4))
    _run(reused, [w], grads[::-1])
    for var in reused.variables:
        var.assign(tf.zeros_like(var))
    w.assign(np.ones(4))
    step = tf.function(lambda g: reused.apply_gradients(zip(g, [w])), autograph=False)
    for g in grads:
        step(g)
    np.testing.assert_array_equal(w.numpy(), v.numpy())


def test_refuses_other_variables_than_built_and_mixed_dtypes():
    a, b = tf.Variable(np.zeros(2)), tf.Variable(np.zeros(3))
    adam = Adam()
    adam.build([a, b])
    with pytest.raises(ValueError, match="variables of build"):
        adam.apply_gradients([(tf.zeros(3, tf.float64), b), (tf.zeros(2, tf.float64), a)])
    with pytest.raises(TypeError, match="one dtype"):
        Adam().build([a, tf.Variable(np.zeros(2, np.float32))])

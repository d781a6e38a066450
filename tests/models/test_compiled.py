"""gpal's compiled functions are traced without AutoGraph: their graphs are straight-line code, and converting the
code they call costs seconds a trace, which a first fit would pay on every model it compiles."""

import numpy as np
import pytest
import tensorflow as tf
from tensorflow.python.autograph.impl import api as autograph_api

from gpal.models.compiled import instance_function


@pytest.fixture
def conversions(monkeypatch):
    """The functions AutoGraph converts while the test runs (TensorFlow's tracing calls ``converted_call``)."""
    seen = []
    original = autograph_api.converted_call

    def counting(f, *args, **kwargs):
        seen.append(getattr(f, "__qualname__", repr(f)))
        return original(f, *args, **kwargs)

    monkeypatch.setattr(autograph_api, "converted_call", counting)
    return seen


def _halved_three_times(x):
    for _ in range(3):  # a loop over Python values: unrolled the same way with or without AutoGraph
        x = x / 2.0
    return x


def test_instance_functions_trace_without_autograph_unless_asked(conversions):
    x = tf.constant(8.0, tf.float64)
    assert float(instance_function(_halved_three_times)(x)) == 1.0
    assert conversions == []
    assert float(instance_function(_halved_three_times, autograph=True)(x)) == 1.0
    assert conversions  # the count sees AutoGraph where it runs


def test_the_lbfgs_and_dirichlet_fits_convert_no_code(conversions):
    """Their objectives are compiled per model, so each fit traces them: none may go through AutoGraph."""
    from gpal import DirichletGPClassifier, LogisticBoundGPClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(24, 2))
    y = (X[:, 0] > 0).astype(int)
    LogisticBoundGPClassifier(num_inducing=3, max_iter=3).fit(X, y)
    DirichletGPClassifier(num_inducing=3, max_iter=3, alpha_grid=(0.01,)).fit(X, y)
    assert conversions == []

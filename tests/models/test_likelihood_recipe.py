"""A likelihood added the way docs/architecture.md ("How to add ...") says: its class and its registry line.

The class is defined in the test (a tempered softmax whose option ``temperature`` is declared in
``_options``) and the ``"module:Class"`` line is added to ``LIKELIHOODS`` for the test's duration; the
estimator then fits, predicts, refuses a bad option by name, and saves and loads with nothing else edited.  This
is the contributor's route (a likelihood shipped in gpal); a user's, `gpal.register_likelihood` from their own
code, is tested in ``tests/test_registry.py`` and ``tests/test_extending_doc.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("gpflow")

import tensorflow as tf  # noqa: E402
from check_shapes import inherit_check_shapes  # noqa: E402

from gpal.constraints import Real  # noqa: E402
from gpal.estimators.noisy_gp import NoisyGPClassifier  # noqa: E402
from gpal.models.likelihoods.base import Likelihood, likelihood_from_config  # noqa: E402
from gpal.registry import LIKELIHOODS  # noqa: E402

NAME = "test_tempered_softmax"
#: Fixed standard-normal draws: the likelihood's expectations are averages over f = mean + sd * eps.
_EPS = np.random.default_rng(0).standard_normal(64)


@pytest.fixture
def tempered(monkeypatch):
    """The throwaway likelihood: its registry line (as a built-in entry is written), then its class."""
    qualname = "tempered.<locals>.TemperedSoftmax"
    monkeypatch.setitem(LIKELIHOODS, NAME, f"{__name__}:{qualname}")  # removed again after the test

    class TemperedSoftmax(Likelihood):
        """p(y | f) = softmax(f / temperature)_y, expectations over 64 fixed draws of f."""

        name = NAME
        _options = {"temperature": Real(0, low_open=True, meaning="a softmax temperature")}

        def __init__(self, num_classes: int | None = None, temperature: float = 1.0):
            super().__init__(name=self.name)
            self.num_classes = num_classes
            self.temperature = float(self._options["temperature"].check("temperature", temperature))

        def _draws(self, Fmu, Fvar):
            eps = tf.constant(_EPS, Fmu.dtype)[:, None, None]
            return (Fmu[None] + tf.sqrt(Fvar)[None] * eps) / self.temperature  # (S, N, L)

        @inherit_check_shapes
        def _variational_expectations(self, Fmu, Fvar, Y):
            log_p = tf.nn.log_softmax(self._draws(Fmu, Fvar), axis=-1)
            onehot = tf.one_hot(tf.cast(Y, tf.int32), tf.shape(Fmu)[1], dtype=Fmu.dtype)  # (N, L)
            return tf.reduce_mean(tf.reduce_sum(log_p * onehot, axis=-1), axis=0)

        @inherit_check_shapes
        def _predict_proba(self, Fmu, Fvar):
            return tf.reduce_mean(tf.nn.softmax(self._draws(Fmu, Fvar), axis=-1), axis=0)

        def get_config(self):
            return {"name": self.name, "num_classes": self.num_classes, "temperature": self.temperature}

    assert TemperedSoftmax.__qualname__ == qualname
    return TemperedSoftmax


def _problem(n=60, seed=0):
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1, 2], n // 3)
    X = rng.normal(size=(n, 2)) + 2.5 * np.stack([np.cos(2.1 * y), np.sin(2.1 * y)], axis=1)
    return X, y


def _estimator(**options):
    return NoisyGPClassifier(likelihood=NAME, likelihood_options=options, input_noise="none", num_inducing=6,
                             epochs=30, batch_size=60, learning_rate=0.05, random_state=0)


def test_the_class_and_its_registry_line_are_all_a_likelihood_needs(tempered, tmp_path):
    assert LIKELIHOODS[NAME] is tempered  # the line resolves to the class its definition registered
    X, y = _problem()
    clf = _estimator(temperature=0.5).fit(X, y)
    assert isinstance(clf.model_.likelihood, tempered) and clf.model_.likelihood.temperature == 0.5
    assert clf.history_[-1] < clf.history_[0]  # its ELBO term trains the model
    proba = clf.predict_proba(X)
    assert proba.shape == (60, 3) and np.allclose(proba.sum(axis=1), 1.0)
    assert (clf.predict(X) == y).mean() > 0.8  # three well-separated blobs
    clf.save(tmp_path / "model")  # saved by name, with its options; loaded through the registry
    loaded = NoisyGPClassifier.load(tmp_path / "model")
    assert loaded.likelihood == NAME and loaded.likelihood_options == {"temperature": 0.5}
    np.testing.assert_allclose(loaded.predict_proba(X), proba, rtol=1e-6, atol=1e-9)
    # a Likelihood object's config round-trips through the registry too
    rebuilt = likelihood_from_config(tempered(num_classes=3, temperature=2.0).get_config())
    assert isinstance(rebuilt, tempered) and rebuilt.temperature == 2.0


def test_an_option_out_of_its_declared_range_is_refused_by_name(tempered):
    X, y = _problem()
    refused = _estimator(temperature=-1.0)
    with pytest.raises(ValueError, match=r"likelihood_options\['temperature'\] must be"):
        refused.fit(X, y)
    assert not hasattr(refused, "model_")  # before any model was built
    with pytest.raises(ValueError, match=r"has no option\(s\) \['epsilon'\]; its options are \['temperature'\]"):
        _estimator(epsilon=0.1).fit(X, y)


def test_the_registry_forgets_it_after_the_test():
    assert NAME not in LIKELIHOODS

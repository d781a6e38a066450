"""An epoch's steps in one compiled call (``Trainer.steps``): the updates of one call per step, and the same guards."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

from gpal.models.state import module_values
from gpal.models.svgp import build_model
from gpal.training import svi
from gpal.training.svi import TrainData, Trainer, TrainingError


def _problem(n=30, d=2, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d)), np.arange(n) % 3, rng.uniform(0.01, 0.1, (n, d))


def _model(X, y, X_var):
    return build_model(X, y, num_classes=3, num_inducing=5, input_noise="latent", X_var=X_var, seed=0)


def _one_call_per_step(trainer, perms, batch_size, first_step, epoch, done, *, max_jitter):
    """The epoch as training ran it before ``Trainer.steps``: one guarded call of ``Trainer.step`` per minibatch."""
    for j, start in enumerate(range(0, perms.shape[1], batch_size)):
        idx = tf.constant(perms[0, start:start + batch_size], tf.int64)
        done.append(np.array([svi._guarded_step(trainer.model, trainer.step, idx, first_step + j, epoch, max_jitter)]))


def test_an_epoch_in_one_call_equals_one_call_per_step_to_rounding(monkeypatch):
    """Equal to rounding, not bit for bit: inside the loop TensorFlow optimises and runs the step as a function of
    the loop's graph, and a per-point table's update can round otherwise (1e-17 here; the main job's model gives
    the same bits over an epoch, `benchmarks/bench_step_variants.py --epoch-loop`)."""
    X, y, X_var = _problem()
    data = TrainData.from_arrays(X, X_var, y)
    settings = dict(epochs=3, batch_size=8, learning_rate=0.02, progress=False)  # 4 minibatches, the last of 6 rows
    looped = _model(X, y, X_var)
    got = Trainer(looped, seed=3).fit(data, **settings)
    stepped = _model(X, y, X_var)
    monkeypatch.setattr(Trainer, "_epoch_steps", _one_call_per_step)
    expected = Trainer(stepped, seed=3).fit(data, **settings)
    np.testing.assert_allclose(got.history, expected.history, rtol=1e-13)
    assert got.steps == expected.steps == 12
    for key, value in module_values(stepped).items():
        np.testing.assert_allclose(module_values(looped)[key], value, rtol=0, atol=1e-13, err_msg=key)


class _ScriptedSteps:
    """A stand-in for ``Trainer.steps``: completes ``completes`` steps of the call with ``losses``, then raises
    ``error`` (if any); records each call's first minibatch."""

    def __init__(self, trainer, script):
        self.trainer, self.script, self.calls = trainer, list(script), []

    def __call__(self, perm, batch_size, first_batch, count, first_step):
        self.calls.append(int(first_batch))
        losses, error = self.script.pop(0) if self.script else ([1.0] * int(count), None)
        self.trainer._losses.assign(np.array(losses, dtype=np.float64))
        self.trainer._done.assign(len(losses))
        if error is not None:
            raise error


def _scripted_trainer(monkeypatch, script, retried_loss=7.0):
    X, y, X_var = _problem()
    trainer = Trainer(_model(X, y, X_var))
    trainer.load(TrainData.from_arrays(X, X_var, y), learning_rate=0.01)
    scripted = _ScriptedSteps(trainer, script)
    monkeypatch.setattr(trainer, "steps", scripted)
    retried = []
    monkeypatch.setattr(trainer, "step", lambda idx, number: retried.append(int(number)) or tf.constant(retried_loss,
                                                                                                          tf.float64))
    return trainer, scripted, retried


def test_a_failed_factorisation_mid_epoch_keeps_the_steps_before_it_and_retries_that_step_alone(monkeypatch):
    failure = tf.errors.InvalidArgumentError(None, None, "Cholesky decomposition was not successful")
    trainer, scripted, retried = _scripted_trainer(monkeypatch, [([1.0, 2.0], failure)])
    perms = np.arange(30)[None]
    done = []
    trainer._epoch_steps(perms, 8, 100, 0, done, max_jitter=1e-2)
    assert [float(d[0]) for d in done] == [1.0, 2.0, 7.0, 1.0]  # two steps, the retried third, the loop's fourth
    assert retried == [102] and scripted.calls == [0, 3]
    np.testing.assert_allclose(trainer.model.gp.jitter.numpy(), 1e-5)  # 1e-6 failed once


def test_a_non_finite_loss_mid_epoch_is_a_training_error_naming_its_step(monkeypatch):
    trainer, _, retried = _scripted_trainer(monkeypatch, [([1.0, 2.0, np.nan], None)])
    done = []
    with pytest.raises(TrainingError, match="epoch 4, step 102"):
        trainer._epoch_steps(np.arange(30)[None], 8, 100, 4, done, max_jitter=1e-2)
    assert [float(d[0]) for d in done] == [1.0, 2.0] and retried == []  # K_ZZ factorises: not a jitter problem


def test_an_interrupt_counts_the_steps_the_call_completed(monkeypatch):
    trainer, _, _ = _scripted_trainer(monkeypatch, [([1.0, 2.0, 3.0], KeyboardInterrupt())])
    done = []
    with pytest.raises(KeyboardInterrupt):
        trainer._epoch_steps(np.arange(30)[None], 8, 0, 0, done, max_jitter=1e-2)
    assert len(done) == 3

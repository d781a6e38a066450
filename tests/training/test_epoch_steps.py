"""An epoch's steps in one compiled call (``Trainer.steps``): the updates of one call per step, and the same guards."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

from gpal.models.state import assign_module_values, module_values
from gpal.models.svgp import build_model
from gpal.training import svi
from gpal.training.svi import TrainData, Trainer, TrainingError


def _problem(n=30, d=2, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d)), np.arange(n) % 3, rng.uniform(0.01, 0.1, (n, d))


def _model(X, y, X_var):
    return build_model(X, y, num_classes=3, num_inducing=5, input_noise="latent", X_var=X_var, seed=0)


@pytest.fixture(scope="module")
def latent():
    """A trainer of the latent model, the model's start (each fit here starts from it) and its training set: the
    tests that fit the model share its step, traced once."""
    X, y, X_var = _problem()
    model = _model(X, y, X_var)
    return Trainer(model, seed=3), module_values(model), TrainData.from_arrays(X, X_var, y)


def _one_call_per_step(trainer, perms, batch_size, first_step, epoch, done, *, max_jitter):
    """The epoch as training ran it before ``Trainer.steps``: one guarded call of ``Trainer.step`` per minibatch."""
    for j, start in enumerate(range(0, perms.shape[1], batch_size)):
        idx = tf.constant(perms[0, start:start + batch_size], tf.int64)
        done.append(np.array([svi._guarded_step(trainer.model, trainer.step, idx, first_step + j, epoch, max_jitter)]))


def test_an_epoch_in_one_call_equals_one_call_per_step_to_rounding(monkeypatch, latent):
    """Equal to rounding, not bit for bit: inside the loop TensorFlow optimises and runs the step as a function of
    the loop's graph, and a per-point table's update can round otherwise (1e-17 here; the main job's model gives
    the same bits over an epoch, `lab/studies/bench_step_variants.py --epoch-loop`)."""
    trainer, start, data = latent
    settings = dict(epochs=3, batch_size=8, learning_rate=0.02, progress=False)  # 4 minibatches, the last of 6 rows
    monkeypatch.setattr(svi, "LOOP_MIN_STEPS", 12)  # this fit's 12 steps in 3 calls
    calls = []
    assign_module_values(trainer.model, start)
    steps = trainer.steps
    monkeypatch.setattr(trainer, "steps", lambda *args: calls.append(args) or steps(*args))
    got = trainer.fit(data, **settings)
    assert len(calls) == 3
    looped = module_values(trainer.model)
    assign_module_values(trainer.model, start)  # again from the start, one call a step
    monkeypatch.setattr(Trainer, "_epoch_steps", _one_call_per_step)
    expected = trainer.fit(data, **settings)
    np.testing.assert_allclose(got.history, expected.history, rtol=1e-13)
    assert got.steps == expected.steps == 12
    for key, value in module_values(trainer.model).items():
        np.testing.assert_allclose(looped[key], value, rtol=0, atol=1e-13, err_msg=key)


class _ScriptedSteps:
    """A stand-in for ``Trainer.steps``: each call completes the steps its script entry gives (their losses), then
    raises the entry's error (if any); calls past the script complete every step with loss 1.  Records each call's
    (first minibatch, count, first step number)."""

    def __init__(self, trainer, script):
        self.trainer, self.script, self.calls = trainer, list(script), []

    def __call__(self, perm, batch_size, first_batch, count, first_step):
        self.calls.append((int(first_batch), int(count), int(first_step)))
        losses, error = self.script.pop(0) if self.script else ([1.0] * int(count), None)
        self.trainer._losses.assign(np.array(losses, dtype=np.float64))
        self.trainer._done.assign(len(losses))
        if error is not None:
            raise error


def _scripted_trainer(monkeypatch, script):
    X, y, X_var = _problem()
    trainer = Trainer(_model(X, y, X_var))
    trainer.load(TrainData.from_arrays(X, X_var, y), learning_rate=0.01)
    scripted = _ScriptedSteps(trainer, script)
    monkeypatch.setattr(trainer, "steps", scripted)
    monkeypatch.setattr(trainer, "step", lambda *args: pytest.fail("a retried step goes through Trainer.steps too"))
    return trainer, scripted


def test_a_failed_factorisation_mid_epoch_keeps_the_steps_before_it_and_retries_that_step_alone(monkeypatch):
    failure = tf.errors.InvalidArgumentError(None, None, "Cholesky decomposition was not successful")
    trainer, scripted = _scripted_trainer(monkeypatch, [([1.0, 2.0], failure), ([7.0], None)])
    done = []
    trainer._epoch_steps(np.arange(30)[None], 8, 100, 0, done, max_jitter=1e-2)
    assert [float(d[0]) for d in done] == [1.0, 2.0, 7.0, 1.0]  # two steps, the retried third, the loop's fourth
    assert scripted.calls == [(0, 4, 100), (0, 1, 102), (3, 1, 103)]  # the retry: step 102 alone, on its rows
    np.testing.assert_allclose(trainer.model.gp.jitter.numpy(), 1e-5)  # 1e-6 failed once


def test_a_non_finite_loss_mid_epoch_is_a_training_error_naming_its_step(monkeypatch):
    trainer, scripted = _scripted_trainer(monkeypatch, [([1.0, 2.0, np.nan], None)])
    done = []
    with pytest.raises(TrainingError, match="epoch 4, step 102"):
        trainer._epoch_steps(np.arange(30)[None], 8, 100, 4, done, max_jitter=1e-2)
    assert [float(d[0]) for d in done] == [1.0, 2.0] and len(scripted.calls) == 1  # K_ZZ factorises: no retry


def test_a_short_fit_takes_one_call_a_step(monkeypatch, latent):
    trainer, start, data = latent
    assign_module_values(trainer.model, start)
    monkeypatch.setattr(trainer, "steps", lambda *args: pytest.fail("a 12-step fit compiled the epoch loop"))
    result = trainer.fit(data, epochs=3, batch_size=8, learning_rate=0.02, progress=False)
    assert result.steps == 12 and np.isfinite(result.history).all()


def test_an_interrupt_counts_the_steps_the_call_completed(monkeypatch):
    trainer, _ = _scripted_trainer(monkeypatch, [([1.0, 2.0, 3.0], KeyboardInterrupt())])
    done = []
    with pytest.raises(KeyboardInterrupt):
        trainer._epoch_steps(np.arange(30)[None], 8, 0, 0, done, max_jitter=1e-2)
    assert len(done) == 3


def test_a_failed_factorisation_in_the_loop_is_retried_with_growing_jitter(monkeypatch):
    """The real loop: K_ZZ = 1 1^T - 2e-5 I (eigenvalues -2e-5 and 6 - 2e-5) factorises from jitter 1e-4 on."""
    import gpflow

    class Indefinite(gpflow.kernels.SquaredExponential):
        def K(self, X, X2=None):
            K = super().K(X, X2)
            return K - 2e-5 * tf.eye(tf.shape(X)[0], dtype=K.dtype) if X2 is None else K

    monkeypatch.setattr(svi, "LOOP_MIN_STEPS", 1)
    X, y, X_var = _problem()
    model = build_model(X, y, num_classes=3, num_inducing=6, kernel=Indefinite(lengthscales=np.ones(2)))
    model.gp.Z.assign(np.zeros((3, 6, 2)))
    result = Trainer(model).fit(TrainData.from_arrays(X, X_var, y), epochs=2, batch_size=10, learning_rate=0.01,
                                progress=False)
    assert len(result.history) == 2 and np.isfinite(result.history).all() and result.steps == 6
    np.testing.assert_allclose(model.gp.jitter.numpy(), 1e-4)  # 1e-6 and 1e-5 failed

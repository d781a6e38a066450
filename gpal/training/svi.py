"""Compiled minibatch training of a ``NoisySVGP`` by maximising its ELBO with Adam.

Batching is by index: the full training arrays live once on the device and each
step gathers rows ``idx`` of X, X_var and y together, and hands ``idx`` itself to
the model (NIMGP's strategy, ``LatentInputs``, keeps one q(x_i) per row).  A point's
features, error bars, label and q(x_i) therefore never come apart, whatever the
shuffling.  Shared parameters follow tf_keras' Adam arithmetic (``gpal.training.adam``); per-point tables follow a
row-wise Adam that touches only the batch's rows, or every row as paper 001's authors' code does (see ``RowAdam``).

Guards:

* a non-finite loss or gradient is never applied (gradients are zeroed in-graph,
  so at most Adam's momentum moves the parameters), and training stops with ``TrainingError`` naming the epoch and step;
* a failed Cholesky of K_ZZ (an error on CPU, NaNs on GPU) is retried with the
  jitter multiplied by 10 until ``max_jitter``, then ``CholeskyError``;
* KeyboardInterrupt or a callback returning ``False`` stops cleanly, keeping the
  parameters of the last completed step.

``Trainer`` keeps one compiled step per model: the training arrays sit in variables of
unknown row count and Adam's state is reset rather than rebuilt, so the warm-started
refits of active learning, each on a larger training set, never trace the step again.
An epoch's steps run in one compiled call (``Trainer.steps``), so Python dispatches once an epoch,
not once a step; a step that fails a guard is retried alone.
``SharedTrainer`` goes further: every model of one signature (all but its values) is trained
by one ``Trainer`` of a template model, because tracing the step costs far more than running a
small step (seconds against milliseconds).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import Any, Callable, ContextManager, NamedTuple

import numpy as np
import tensorflow as tf

from gpal.interrupts import check_stop
from gpal.models.compiled import instance_function
from gpal.models.state import assign_module_values, module_values
from gpal.models.svgp import NoisySVGP
from gpal.training.adam import Adam, RowAdam
from gpal.training.budget import minibatch_steps, rows_per_step
from gpal.training.shared import LentBySignature
from gpal.training.signatures import lend_prior, template_copy, trace_key

__all__ = [
    "LOOP_MIN_STEPS",
    "is_long_fit",
    "TrainData",
    "TrainResult",
    "SharedTrainer",
    "Trainer",
    "TrainingError",
    "CholeskyError",
    "make_optimizer",
    "moves_every_row",
    "one_step_at_a_time",
    "run_epochs",
]


class TrainingError(FloatingPointError):
    """The ELBO became NaN or infinite; the model keeps the last finite parameters."""


class CholeskyError(RuntimeError):
    """K_ZZ stayed numerically non-positive-definite even with the largest allowed jitter."""


class TrainData(NamedTuple):
    """Full training arrays as float64/int64 tensors: X (n, d), X_var (n, d), y (n,), sample_weight (n,) or None."""

    X: tf.Tensor
    X_var: tf.Tensor
    y: tf.Tensor
    sample_weight: tf.Tensor | None = None

    @classmethod
    def from_arrays(cls, X: np.ndarray, X_var: np.ndarray, y: np.ndarray,
                    sample_weight: np.ndarray | None = None) -> "TrainData":
        return cls(
            tf.constant(X, dtype=tf.float64), tf.constant(X_var, dtype=tf.float64), tf.constant(y, dtype=tf.int64),
            None if sample_weight is None else tf.constant(sample_weight, dtype=tf.float64),
        )


@dataclass
class TrainResult:
    """Per-epoch mean training loss (negative ELBO estimate) and how training ended."""

    history: list[float] = field(default_factory=list)
    stopped_early: bool = False
    steps: int = 0


def make_optimizer(learning_rate: float = 0.01) -> Adam:
    """Adam with tf_keras' arithmetic in a few operations (``gpal.training.adam``); default betas as in the paper."""
    return Adam(learning_rate=learning_rate)


def _compiled_step(model, optimizer, data, base, base_seed) -> tuple[Callable, "RowAdam | None"]:
    """The compiled training step ``step(idx, step_number) -> loss`` and the row-wise Adam of its per-point tables
    (None without any).

    ``idx`` (int64, (B,)) selects the minibatch rows of ``data``; ``step_number`` (int64 scalar) with
    ``base_seed`` fixes the reparameterisation noise, so a run is reproducible.  The step applies one Adam
    update of all trainable variables and returns the loss (negative ELBO estimate) it was computed at; if the
    loss or any gradient is not finite, the gradients are replaced by zeros, so nothing non-finite reaches the
    parameters.  ``data`` holds variables: the step reads the rows present at each call, and the ELBO's scale
    N / |B| takes N from them.  ``base``: the model's ``training_base`` of ``data`` (variables), whose rows each
    step gathers; ``base_seed``: an int64 scalar variable (read at each step).
    """
    per_point = list(model.strategy.per_point_variables)
    per_point_ids = {id(v) for v in per_point}
    shared = [v for v in model.trainable_variables if id(v) not in per_point_ids]
    variables = shared + per_point
    optimizer.build(shared)  # slots made eagerly, so the step is traced once, not twice
    row_adam = RowAdam(per_point, optimizer, every_row=moves_every_row(model)) if per_point else None

    def step(idx: tf.Tensor, step_number: tf.Tensor) -> tf.Tensor:
        X = tf.gather(data.X, idx)
        X_var = tf.gather(data.X_var, idx)
        y = tf.gather(data.y, idx)
        weight = None if data.sample_weight is None else tf.gather(data.sample_weight, idx)
        rows_base = None if base is None else tuple(tf.gather(table, idx) for table in base)
        with tf.GradientTape(watch_accessed_variables=False) as tape:
            tape.watch(variables)
            loss = -model.elbo(X, X_var, y, idx, tf.stack([base_seed, step_number]), num_data=tf.shape(data.y)[0],
                               sample_weight=weight, base=rows_base)
        grads = tape.gradient(loss, variables)
        finite = tf.math.is_finite(loss)
        for g in grads:
            finite = tf.logical_and(finite, tf.reduce_all(tf.math.is_finite(_values(g))))
        grads = [_zero_unless(finite, g) for g in grads]
        optimizer.apply_gradients(zip(grads[: len(shared)], shared))
        if row_adam is not None:
            row_adam.apply(grads[len(shared) :])
        return loss

    signature = [tf.TensorSpec([None], tf.int64), tf.TensorSpec([], tf.int64)]
    return instance_function(step, input_signature=signature, reduce_retracing=True), row_adam


#: The fewest steps in a fit for which ``Trainer.fit`` runs an epoch's steps in one call (``Trainer.steps``): the
#: loop's first call costs more per model signature than a step's and saves a little on every step after it, so
#: shorter fits (the tests', active learning's refits) take one call a step.
LOOP_MIN_STEPS = 200


def is_long_fit(epochs: int, batch_size: int, n: int) -> bool:
    """Whether ``epochs`` over ``n`` rows in minibatches of ``batch_size`` take `LOOP_MIN_STEPS` steps or more."""
    return minibatch_steps(epochs, n, batch_size) >= LOOP_MIN_STEPS


def _compiled_steps(step: Callable, done: tf.Variable, losses: tf.Variable) -> Callable:
    """``steps(perm, batch_size, first_batch, count, first_step)``: ``count`` of ``step``'s updates in one call, on
    the minibatches ``perm[j B : (j + 1) B]`` from ``j = first_batch`` on, numbered from ``first_step``.

    One Python call and one dispatch for an epoch's steps instead of one per step: the same updates in the same
    order, equal to rounding (tested: TensorFlow optimises the step inside the loop's graph, and a sum may
    round otherwise, 1e-17 after a few steps), at a fifth to a third less time where a second fit shares
    the cores.  The loop stops after the first non-finite loss, whose step (gradients
    zeroed) has run, so that the caller can retry it as a step alone would be retried; ``done`` counts the
    steps completed and ``losses`` holds their losses, read by the caller however the call ended (a failed
    Cholesky raises out of the loop; the steps before it have been applied).
    """

    def steps(perm: tf.Tensor, batch_size: tf.Tensor, first_batch: tf.Tensor, count: tf.Tensor,
              first_step: tf.Tensor) -> None:
        done.assign(tf.zeros([], tf.int64))
        losses.assign(tf.zeros(tf.reshape(count, [1]), tf.float64))

        def body(j: tf.Tensor, finite: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
            start = (first_batch + j) * batch_size
            loss = step(perm[start:start + batch_size], first_step + j)
            losses.scatter_nd_update(tf.reshape(j, [1, 1]), tf.reshape(loss, [1]))
            done.assign_add(tf.ones([], tf.int64))
            return j + 1, tf.math.is_finite(loss)

        tf.while_loop(lambda j, finite: tf.logical_and(j < count, finite), body,
                      (tf.zeros([], tf.int64), tf.constant(True)), parallel_iterations=1)

    signature = [tf.TensorSpec([None], tf.int64)] + [tf.TensorSpec([], tf.int64)] * 4
    return instance_function(steps, input_signature=signature)


def moves_every_row(model: NoisySVGP) -> bool:
    """Whether the model's per-point tables take paper 001's authors' Adam, every row at every step
    (``q_x_update="every_row"``, `RowAdam`)."""
    return getattr(model.strategy, "q_x_update", None) == "every_row"


def _values(g: tf.Tensor | tf.IndexedSlices) -> tf.Tensor:
    return g.values if isinstance(g, tf.IndexedSlices) else g


def _zero_unless(ok: tf.Tensor, g: tf.Tensor | tf.IndexedSlices) -> tf.Tensor | tf.IndexedSlices:
    """``g`` if ``ok`` else zeros; per-row q(x_i) gradients stay sparse, so a step costs O(batch), not O(n)."""
    if isinstance(g, tf.IndexedSlices):
        return tf.IndexedSlices(tf.where(ok, g.values, tf.zeros_like(g.values)), g.indices, g.dense_shape)
    return tf.where(ok, g, tf.zeros_like(g))


def cholesky_failed(err: tf.errors.InvalidArgumentError) -> bool:
    """Whether a step's error is K_ZZ's Cholesky failing (on a CPU it raises; on a GPU it gives NaN)."""
    return "cholesky" in str(err).lower() or "not invertible" in str(err).lower()


def cholesky_error(epoch: int, step_number: int, jitter: float, max_jitter: float) -> CholeskyError:
    """The error of a fit whose K_ZZ stayed singular up to ``max_jitter``."""
    return CholeskyError(
        f"Cholesky of the inducing-point covariance failed at epoch {epoch}, step {step_number} "
        f"even with jitter {jitter:g} (limit {max_jitter:g}); inducing points may have collapsed or "
        "kernel hyper-parameters degenerated. Try standardising inputs, fewer inducing points or a "
        "smaller learning rate."
    )


def cholesky_ok(model: NoisySVGP) -> bool:
    try:
        return bool(tf.reduce_all(tf.math.is_finite(model.gp.cholesky_Kzz())))
    except tf.errors.InvalidArgumentError:
        return False


class Trainer:
    """One compiled training step for ``model``, reused by every ``fit`` of it.

    The step reads the training arrays from variables whose row count may change and
    Adam's state is zeroed at the start of each fit (as a new optimiser would start),
    so a warm-started refit on a grown training set costs its steps and no tracing.
    Per-point tables (NIMGP's q(x_i)) must have one row per training row at each fit.
    """

    def __init__(self, model: NoisySVGP, *, seed: int = 0):
        d = int(model.gp.Z.shape[-1])
        self.model = model
        self.seed = int(seed)
        self.data = TrainData(
            tf.Variable(np.zeros((0, d)), dtype=tf.float64, shape=[None, d], trainable=False),
            tf.Variable(np.zeros((0, d)), dtype=tf.float64, shape=[None, d], trainable=False),
            tf.Variable(np.zeros(0, np.int64), dtype=tf.int64, shape=[None], trainable=False),
            tf.Variable(np.zeros(0), dtype=tf.float64, shape=[None], trainable=False),
        )
        self.optimizer = make_optimizer()
        # The per-row constants of training (`NoisySVGP.training_base`), refreshed at each fit, when the model has any.
        self.base = None if not model.has_training_base else tuple(
            tf.Variable(np.zeros((0, d)), dtype=tf.float64, shape=[None, d], trainable=False) for _ in range(2))
        # A variable, so that ``seed`` may change between fits (``SharedTrainer``) without a new trace.
        self._base_seed = tf.Variable(self.seed, dtype=tf.int64, trainable=False)
        self.step, self._row_adam = _compiled_step(model, self.optimizer, self.data, self.base, self._base_seed)
        # What a call of ``steps`` completed, read however it ended.
        self._done = tf.Variable(0, dtype=tf.int64, trainable=False)
        self._losses = tf.Variable(np.zeros(0), dtype=tf.float64, shape=[None], trainable=False)
        self.steps = _compiled_steps(self.step, self._done, self._losses)

    def load(self, data: TrainData, *, learning_rate: float) -> int:
        """Start a fit on ``data``: its arrays (and training base) into the step's variables, Adam at
        ``learning_rate`` with zero state, so ``step`` may then run (or be timed) alone; returns the row count."""
        n = int(data.X.shape[0])
        for table in self.model.strategy.per_point_variables:
            rows = int(tf.shape(table)[0])
            if rows != n:
                raise ValueError(f"{table.name} has {rows} rows for {n} training rows; restart the strategy first")
        if data.sample_weight is None:  # weights of 1 give the unweighted ELBO exactly
            data = data._replace(sample_weight=tf.ones([n], tf.float64))
        for var, value in zip(self.data, data):
            var.assign(value)
        if self.base is not None:
            for var, value in zip(self.base, self.model.training_base(data.X, data.X_var)):
                var.assign(value)
        for var in self.optimizer.variables:
            var.assign(tf.zeros_like(var))
        self.optimizer.learning_rate = learning_rate
        if self._row_adam is not None:
            self._row_adam.reset()
        self._base_seed.assign(self.seed)
        return n

    def fit(
        self,
        data: TrainData,
        *,
        epochs: int,
        batch_size: int,
        learning_rate: float,
        progress: bool = True,
        callback: Callable[[int, float], bool | None] | None = None,
        max_jitter: float = 1e-2,
    ) -> TrainResult:
        """Optimise the model for ``epochs`` passes over ``data`` in shuffled minibatches, with a fresh Adam; a fit of
        `LOOP_MIN_STEPS` steps or more runs an epoch in one compiled call (``steps``).

        ``epochs``, ``batch_size`` and ``learning_rate`` have no defaults here: the estimator's
        (`gpal.NoisyGPClassifier`) are the library's, stated there once.

        ``callback(epoch, mean_loss)`` runs after every epoch; returning ``False`` stops training.
        Ctrl-C stops it too.  Both keep the last completed step's parameters and set ``stopped_early``.
        """
        n = self.load(data, learning_rate=learning_rate)
        result = TrainResult()

        def guarded_step(rows: np.ndarray, step_number: int, epoch: int) -> np.ndarray:
            idx = tf.constant(rows[0], dtype=tf.int64)
            return np.array([_guarded_step(self.model, self.step, idx, step_number, epoch, max_jitter)])

        looped = is_long_fit(epochs, batch_size, n)
        run_epochs(partial(self._epoch_steps, max_jitter=max_jitter) if looped else one_step_at_a_time(guarded_step),
                   n, [self.seed], [result], epochs=epochs, batch_size=batch_size, progress=progress,
                   desc=f"training ({self.model.strategy.name})",
                   callback=None if callback is None else lambda epoch, losses: callback(epoch, float(losses[0])))
        return result

    def _epoch_steps(self, perms: np.ndarray, batch_size: int, first_step: int, epoch: int, done: list[np.ndarray],
                     *, max_jitter: float) -> None:
        """An epoch's steps in as few calls of ``steps`` as the guards allow; each completed step's loss goes to
        ``done`` (``run_epochs``), and a failed step is retried as ``_guarded_step`` retries a step alone."""
        perm = tf.constant(perms[0], dtype=tf.int64)
        batches = -(-perm.shape[0] // batch_size)
        j = 0  # the first step not yet completed with a finite loss
        while j < batches:
            cholesky_failed_here = False
            self._done.assign(0)  # an error before the call's own reset leaves no count of the last call's behind
            try:
                self.steps(perm, *(tf.constant(v, tf.int64) for v in (batch_size, j, batches - j, first_step + j)))
            except tf.errors.InvalidArgumentError as err:
                if not cholesky_failed(err):
                    raise
                cholesky_failed_here = True
            finally:
                completed = self._losses.numpy()[: int(self._done.numpy())]
                # the call stops at a non-finite loss, whose step (its update zeroed) is retried: not done
                finite = completed[: np.isfinite(completed).sum()] if completed.size else completed
                done.extend(np.array([loss]) for loss in finite)
                j += finite.size
            if not cholesky_failed_here:
                if finite.size == completed.size:
                    continue  # every step of the call was finite (j == batches)
                if cholesky_ok(self.model):
                    raise _training_error(float(completed[-1]), epoch, first_step + j)
            _raise_jitter(self.model, epoch, first_step + j, max_jitter)
            idx = perm[j * batch_size:(j + 1) * batch_size]
            done.append(np.array([_guarded_step(self.model, self._step_alone, idx, first_step + j, epoch, max_jitter)]))
            j += 1

    def _step_alone(self, idx: tf.Tensor, step_number: tf.Tensor) -> tf.Tensor:
        """One step, through ``steps``: the one compiled function that training runs, so that no second one is
        made ready to run (a trace costs as much as hundreds of steps: the module's docstring)."""
        one = tf.constant(1, tf.int64)
        self.steps(idx, tf.constant(int(idx.shape[0]), tf.int64), tf.constant(0, tf.int64), one, step_number)
        return self._losses[0]

    def take_from(self, shared: SharedTrainer) -> None:
        """Lent to ``shared`` as its signature's template: train its model's values, with its seed, next."""
        assign_module_values(self.model, module_values(shared.model))
        lend_prior(self.model, shared.model)
        self.seed = shared.seed

    def give_back(self, shared: SharedTrainer) -> None:
        """The trained values into ``shared``'s model."""
        assign_module_values(shared.model, module_values(self.model))


class SharedTrainer:
    """``Trainer.fit`` for ``model``, run by the one ``Trainer`` kept for all models of its signature.

    Models that differ only in their values and training-set size (``model_signature``
    but ``num_data``, and the classes of their parts: same structure, likelihood, prior and shapes) trace
    the same step, so a ``Trainer`` of a private template model (a copy of the first such model) serves
    them all: a fit copies the model's values into the template, trains it with the model's ``seed``
    and copies the values back, also before each ``callback`` call (and back in after it, as
    a callback may restore a state) and when training stops with an error.  The results equal
    a ``Trainer`` of the model's own bit for bit (tested).  A fit finding its signature's
    trainer busy in another thread uses a template of its own.
    """

    def __init__(self, model: NoisySVGP, *, seed: int = 0):
        self.model = model
        self.seed = int(seed)

    @property
    def step(self) -> Callable[[tf.Tensor, tf.Tensor], tf.Tensor]:
        """The compiled step (``Trainer.step``) that trains this model and the others of its signature."""
        with _signature_trainer(self.model) as trainer:
            return trainer.step

    def fit(self, data: TrainData, *, callback: Callable[[int, float], bool | None] | None = None,
            **settings: Any) -> TrainResult:
        """``Trainer.fit``'s training of ``self.model`` on ``data``; ``settings`` are its keyword arguments."""
        with _signature_trainer(self.model, self) as trainer:
            template = trainer.model

            def synced(epoch: int, loss: float) -> bool | None:
                assign_module_values(self.model, module_values(template))
                keep_going = callback(epoch, loss)
                assign_module_values(template, module_values(self.model))
                return keep_going

            return trainer.fit(data, callback=None if callback is None else synced, **settings)


# Signature -> the Trainer of a template model, lent to one fit at a time; a few kept per process.
_TRAINERS: LentBySignature[Trainer] = LentBySignature(8)


def _signature_trainer(model: NoisySVGP, shared: SharedTrainer | None = None) -> ContextManager[Trainer]:
    """The kept ``Trainer`` of ``model``'s signature (a new one if it is busy or absent), lent for a ``with`` block
    to ``shared`` (None: only to read its compiled step)."""
    return _TRAINERS.lent(trace_key(model), lambda: Trainer(template_copy(model)), shared)


def one_step_at_a_time(guarded_step: Callable[[np.ndarray, int, int], np.ndarray]) -> Callable:
    """``run_epochs``' epoch of ``guarded_step(rows, step_number, epoch) -> losses`` called once per minibatch."""

    def epoch_steps(perms: np.ndarray, batch_size: int, first_step: int, epoch: int, done: list[np.ndarray]) -> None:
        for j, start in enumerate(range(0, perms.shape[1], batch_size)):
            done.append(guarded_step(perms[:, start : start + batch_size], first_step + j, epoch))

    return epoch_steps


def run_epochs(
    epoch_steps: Callable[[np.ndarray, int, int, int, list[np.ndarray]], None],
    n: int,
    seeds: list[int],
    results: list[TrainResult | Exception],
    *,
    epochs: int,
    batch_size: int,
    progress: bool,
    desc: str,
    callback: Callable[[int, np.ndarray], bool | None] | None = None,
) -> None:
    """The epoch loop of K models trained one at a time (K = 1, ``Trainer``) or together (``BatchedTrainer``).

    Each epoch, model k's minibatches come from its own permutation of the ``n`` rows, drawn from
    ``default_rng([seeds[k], 1])``; ``epoch_steps(perms, batch_size, first_step, epoch, done)`` takes the
    epoch's steps, step j on the rows ``perms[:, j B : (j + 1) B]`` (K, B), row k model k's minibatch, numbered
    ``first_step + j``, and appends each completed step's K losses to ``done`` as it goes (so a Ctrl-C counts
    what was done; `one_step_at_a_time` makes it of a one-step function).  It raises for a model
    trained alone, and may instead put the exception in ``results[k]`` to freeze model k.  The loop
    appends each epoch's mean loss to the ``results`` still ``TrainResult``, counts their steps and
    sets their ``stopped_early`` when ``callback(epoch, mean_losses)`` returns ``False`` or on Ctrl-C.
    """
    from gpal.progress import progress_bar

    batch_size = rows_per_step(batch_size, n)
    rngs = [np.random.default_rng([int(seed), 1]) for seed in seeds]
    bar = progress_bar(range(int(epochs)), disable=not progress, desc=desc, unit="epoch")
    steps = 0
    try:
        for epoch in bar:
            check_stop()  # Ctrl-C in a command: between epochs (in either thread of the main job)
            perms = np.stack([rng.permutation(n) for rng in rngs])
            losses: list[np.ndarray] = []
            try:
                epoch_steps(perms, batch_size, steps, epoch, losses)
            finally:
                steps += len(losses)
            means = np.mean(losses, axis=0)  # for K = 1 the same bits as the mean of the one model's losses
            training = [r for r in results if isinstance(r, TrainResult)]  # a failed model's slot holds its error
            for k, result in enumerate(results):
                if isinstance(result, TrainResult):
                    result.history.append(float(means[k]))
            if training:
                bar.set_postfix(loss=f"{np.mean([r.history[-1] for r in training]):.4g}", refresh=False)
            if callback is not None and callback(epoch, means) is False:
                for result in training:
                    result.stopped_early = True
                break
    except KeyboardInterrupt:
        for result in results:
            if isinstance(result, TrainResult):
                result.stopped_early = True
    finally:
        for result in results:  # the steps taken, a partial epoch's included (Ctrl-C)
            if isinstance(result, TrainResult):
                result.steps = steps
        bar.close()


def _guarded_step(model, step, idx, step_number, epoch, max_jitter) -> float:
    """One step with the Cholesky retry and the non-finite-loss check."""
    while True:
        try:
            loss = float(step(idx, tf.constant(step_number, dtype=tf.int64)))
            if np.isfinite(loss) or cholesky_ok(model):
                break
        except tf.errors.InvalidArgumentError as err:
            if not cholesky_failed(err):
                raise
        _raise_jitter(model, epoch, step_number, max_jitter)
    if not np.isfinite(loss):
        raise _training_error(loss, epoch, step_number)
    return loss


def _raise_jitter(model: NoisySVGP, epoch: int, step_number: int, max_jitter: float) -> None:
    """K_ZZ's jitter times 10 after a failed factorisation; `CholeskyError` past ``max_jitter``."""
    jitter = float(model.gp.jitter.numpy())
    if jitter * 10 > max_jitter:
        raise cholesky_error(epoch, step_number, jitter, max_jitter)
    model.gp.jitter.assign(jitter * 10)


def _training_error(loss: float, epoch: int, step_number: int) -> TrainingError:
    """The error that stops training at a non-finite loss (a failed factorisation ruled out)."""
    return TrainingError(
        f"training loss became {loss} at epoch {epoch}, step {step_number}; the update was not applied and the "
        "model keeps the parameters of the previous step. Try a smaller learning rate or check the inputs."
    )

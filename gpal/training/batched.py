"""K independent ``NoisySVGP`` fits of one family and shape, trained as one batched model.

An experiment grid (splits x methods x seeds) trains many small models, and at the Fermi
size a training step is a few milliseconds of dispatch around little arithmetic.  Here
every variable of the K models is stacked along a leading dimension, and one compiled step
evaluates all K ELBOs by vectorising the model's own code (``tf.vectorized_map`` over a
template model whose variables are read from the stacked values), takes their gradients and
applies one Adam update.  Nothing of the model's maths is written twice.

Each model follows the path it would follow alone (``gpal.training.svi``, whose epoch loop
``run_epochs`` serves both): its own minibatch permutations from ``default_rng([seed, 1])``, its own input draws from ``(seed, step)``, Adam
per element (Adam, with tf_keras' arithmetic, on a stacked variable is K Adams), the row-wise Adam on per-point
tables, the non-finite guard, the Cholesky retry with its own jitter.  So the results equal
one-at-a-time training up to floating-point rounding (tested).  A model whose training fails
(non-finite ELBO, Cholesky beyond ``max_jitter``) is frozen and reported; the others go on.
On a GPU, where a failed Cholesky gives NaN rather than an error, the model whose factor
failed skips that step (alone it would retry it).

Models that differ in anything but their values (family, likelihood, shapes, training-set
size, a per-model prior) are refused with ``NotBatchable`` naming the difference.

Tracing the step costs as much as hundreds of steps, so it is traced once per group signature
(the models' ``trace_key`` and their number K), as ``SharedTrainer`` does for one model: a
``BatchedTrainer`` borrows the kept step of its signature for each fit, copying its models'
values, data and seeds into the step's variables and the trained values back.  The results equal
a step traced for the group alone bit for bit (tested).
"""

from __future__ import annotations

from typing import Any, Callable, ContextManager, Sequence

import numpy as np
import tensorflow as tf
from gpflow.utilities import parameter_dict

from gpal.models.compiled import instance_function
from gpal.models.state import assign_module_values, module_values, reading_values, stored_variable
from gpal.models.svgp import NoisySVGP
from gpal.training.adam import RowAdam
from gpal.training.shared import LentBySignature
from gpal.training.signatures import lend_prior, model_signature, template_copy, trace_key
from gpal.training.svi import (TrainData, TrainingError, TrainResult, cholesky_error, cholesky_failed,
                               cholesky_ok, make_optimizer, moves_every_row, one_step_at_a_time, run_epochs)

__all__ = ["NotBatchable", "BatchedTrainer", "GroupStep", "check_batchable"]


class NotBatchable(ValueError):
    """The models cannot share one batched step; the message names what differs."""


def check_batchable(models: Sequence[NoisySVGP], datas: Sequence[TrainData]) -> None:
    """``NotBatchable`` unless every model has the first one's structure and training-set shape."""
    if not models:
        raise NotBatchable("no models to train")
    if len(models) != len(datas):
        raise NotBatchable(f"{len(models)} models but {len(datas)} training sets")
    first, shape = model_signature(models[0]), tuple(datas[0].X.shape)
    for k, (model, data) in enumerate(zip(models, datas)):
        if data.sample_weight is not None:
            raise NotBatchable(f"training set {k} has sample weights, which batched training does not apply")
        if tuple(data.X.shape) != shape:
            raise NotBatchable(f"training set {k} has shape {tuple(data.X.shape)}, training set 0 {shape}")
        signature = model_signature(model)
        for part in ("structure", "variables"):
            if signature[part] != first[part]:
                raise NotBatchable(f"model {k} differs from model 0 in its {part}: {_first_difference(first[part], signature[part])}")


def _first_difference(a: Any, b: Any, where: str = "") -> str:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b), key=str):
            if a.get(key) != b.get(key):
                return _first_difference(a.get(key), b.get(key), f"{where}.{key}" if where else str(key))
    return f"{where or 'value'} is {b!r} where model 0 has {a!r}"


# ------------------------------------------------------------------- the trainer
class BatchedTrainer:
    """One compiled step that trains ``models`` (all of one signature) together on their own data.

    ``seeds[k]`` plays the role of ``Trainer(models[k], seed=...)``'s seed.  ``fit`` leaves each
    model with its trained values, as K ``Trainer.fit`` calls would.  The step is the one kept for
    every group of the models' signature and size (``GroupStep``), so another group, or the same
    models given new training sets by ``load`` (a warm-started refit on a grown set), trace nothing.
    """

    def __init__(self, models: Sequence[NoisySVGP], datas: Sequence[TrainData], seeds: Sequence[int]):
        if len(seeds) != len(models):
            raise ValueError(f"{len(models)} models but {len(seeds)} seeds")
        self.models = list(models)
        self.seeds = [int(s) for s in seeds]
        self.load(datas)

    def load(self, datas: Sequence[TrainData]) -> None:
        """Train on ``datas`` at the next fit, from the models' values then, with a fresh Adam.

        The models may have been refitted or restarted since (a warm start's per-point tables
        have one row per new training row); they must still share one signature.
        """
        check_batchable(self.models, datas)
        self.datas = list(datas)

    @property
    def step(self) -> Callable[[tf.Tensor, tf.Tensor], tuple[tf.Tensor, tf.Tensor]]:
        """The compiled step (``GroupStep.step``) that trains these models and every group of their signature."""
        with self._lent() as group:
            return group.step

    def _lent(self, loaded: bool = False) -> ContextManager["GroupStep"]:
        """The kept step of this group's signature and size, lent for a ``with`` block (with these models, data and
        seeds loaded if ``loaded``)."""
        first = self.models[0]
        return _GROUP_STEPS.lent(f"{len(self.models)} models of {trace_key(first)}",
                                 lambda: GroupStep(template_copy(first), len(self.models)), self if loaded else None)

    def loaded(self) -> ContextManager["GroupStep"]:
        """The kept step of this group's signature, lent for a ``with`` block with these models, data and seeds loaded.

        Returns
        -------
        ContextManager[GroupStep]
            Whose ``GroupStep``'s ``step`` and ``losses`` act on these models in the block (``fit`` writes their
            values back); the models and data are dropped from it when the block ends.
        """
        return self._lent(loaded=True)

    def fit(self, *, epochs: int, batch_size: int, learning_rate: float, progress: bool = False,
            max_jitter: float = 1e-2, callback: Callable[[int, np.ndarray], bool | None] | None = None
            ) -> list[TrainResult | Exception]:
        """Train every model for ``epochs`` passes; a ``TrainResult`` per model, or the exception that stopped it.
        ``callback(epoch, mean_losses)`` (one per model) runs after every epoch; returning False stops them all."""
        with self.loaded() as group:
            return group.fit(epochs=epochs, batch_size=batch_size, learning_rate=learning_rate, progress=progress,
                             max_jitter=max_jitter, callback=callback)


class GroupStep:
    """The stacked variables, Adam and compiled step of K models of one signature, lent to one group at a time.

    ``template`` is a private model of the signature: the step reads its code with the stacked
    values in place of its variables, so its own values never matter.  Seeds and training sets
    sit in variables (of any row count), so a group of other values, seeds or size ``n`` trains
    through the same trace.
    """

    def __init__(self, template: NoisySVGP, K: int):
        self.template = template
        self.K = K
        d = int(template.gp.Z.shape[-1])
        self.models: list[NoisySVGP] = []
        self.data = TrainData(
            tf.Variable(np.zeros((K, 0, d)), trainable=False, shape=[K, None, d]),
            tf.Variable(np.zeros((K, 0, d)), trainable=False, shape=[K, None, d]),
            tf.Variable(np.zeros((K, 0), np.int64), trainable=False, shape=[K, None]),
        )
        self.seeds = tf.Variable(np.zeros(K, np.int64), trainable=False, name="model_seeds")
        entries = parameter_dict(self.template)
        per_point = {id(v) for v in self.template.strategy.per_point_variables}
        self.per_point_paths = [p for p, v in entries.items() if id(v) in per_point]
        self.stacked: dict[str, tf.Variable] = {}
        for path, var in entries.items():
            stored = stored_variable(var)
            if path in self.per_point_paths:  # one table of K n rows, so the row-wise Adam serves it as it is
                shape = tf.TensorShape([None]).concatenate(stored.shape[1:])
                start = np.zeros((0,) + tuple(stored.shape[1:]), stored.dtype.as_numpy_dtype)
            else:
                shape = tf.TensorShape([K]).concatenate(stored.shape)
                start = np.zeros(shape, stored.dtype.as_numpy_dtype)
            self.stacked[path] = tf.Variable(start, trainable=bool(stored.trainable), shape=shape, name=f"stacked{path}")
        self.jitter_path = next(p for p, v in entries.items() if v is self.template.gp.jitter)
        self.active = tf.Variable(np.ones(K, bool), trainable=False, name="active_models")
        self.shared = [v for p, v in self.stacked.items() if v.trainable and p not in self.per_point_paths]
        self.tables = [self.stacked[p] for p in self.per_point_paths]
        self.optimizer = make_optimizer()
        self.optimizer.build(self.shared)
        self.row_adam = (RowAdam(self.tables, self.optimizer, every_row=moves_every_row(self.template))
                         if self.tables else None)
        self.step = self._compile()

    def load(self, models: Sequence[NoisySVGP], datas: Sequence[TrainData], seeds: Sequence[int]) -> None:
        """Start a fit of ``models`` on ``datas``: their current values and seeds, fresh Adam, every model active."""
        K = self.K
        self.models = list(models)
        lend_prior(self.template, self.models[0])  # one prior for the group (`check_batchable`)
        self.seeds.assign(np.asarray(seeds, np.int64))
        self.n = int(datas[0].X.shape[0])
        for var, i in zip(self.data, range(3)):
            var.assign(np.stack([np.asarray(d[i]) for d in datas]))
        self.initial = [module_values(m) for m in self.models]
        for path, var in self.stacked.items():
            stacked = np.stack([v[path] for v in self.initial])
            if path in self.per_point_paths:
                stacked = stacked.reshape((K * self.n,) + stacked.shape[2:])
            var.assign(stacked)
        for var in self.optimizer.variables:
            var.assign(tf.zeros_like(var))
        if self.row_adam is not None:
            self.row_adam.reset()
        self.active.assign(np.ones(K, bool))

    def take_from(self, trainer: BatchedTrainer) -> None:
        """Lent to ``trainer``: its models, data and seeds loaded (nothing of them kept if loading fails)."""
        try:
            self.load(trainer.models, trainer.datas, trainer.seeds)
        except BaseException:
            self.unload()
            raise

    def give_back(self, trainer: BatchedTrainer) -> None:
        """The models and data dropped (``fit`` has written the trained values back)."""
        self.unload()

    def unload(self) -> None:
        """Drop the models and the per-row arrays: a kept step holds no user model or training set between fits."""
        self.models, self.initial = [], []
        for var in self.data[:3]:  # X, X_var, y (no sample weights)
            var.assign(tf.zeros([self.K, 0, *var.shape[2:]], var.dtype))
        for var in self.tables:
            var.assign(tf.zeros([0, *var.shape[1:]], var.dtype))
        if self.row_adam is not None:
            self.row_adam.reset()

    def _values(self) -> dict[str, tf.Tensor]:
        K = self.K
        values = {}
        for path, var in self.stacked.items():
            value = tf.convert_to_tensor(var)
            if path in self.per_point_paths:
                value = tf.reshape(value, tf.concat([[K, tf.shape(value)[0] // K], tf.shape(value)[1:]], axis=0))
            values[path] = value
        return values

    def losses(self, idx: tf.Tensor, step_number: tf.Tensor) -> tf.Tensor:
        """The K models' negative ELBOs on minibatch rows ``idx`` (K, batch) at ``step_number``, (K,)."""
        template, K, n = self.template, self.K, tf.shape(self.data.X)[1]
        X, X_var, y = (tf.gather(a, idx, batch_dims=1) for a in (self.data.X, self.data.X_var, self.data.y))
        step_seeds = tf.stack([tf.convert_to_tensor(self.seeds), tf.fill([K], step_number)], axis=1)
        # Each model's draws from its own seed, outside the vectorised trace (stateless draws
        # cannot be vectorised over seeds); a strategy that draws nothing gets zeros it ignores.
        draws = [template.strategy.training_noise(X[k], step_seeds[k]) for k in range(K)]
        noise = tf.zeros_like(X) if draws[0] is None else tf.stack(draws)

        def one_model(args: tuple) -> tf.Tensor:
            values, X, X_var, y, idx, seed, noise = args
            with reading_values(template, values):
                return -template.elbo(X, X_var, y, idx, seed, num_data=n, noise=noise)

        return tf.vectorized_map(one_model, (self._values(), X, X_var, y, idx, step_seeds, noise),
                                 fallback_to_while_loop=False)

    def _compile(self) -> Callable[[tf.Tensor, tf.Tensor], tuple[tf.Tensor, tf.Tensor]]:
        K = self.K
        trainable = self.shared + self.tables

        def step(idx: tf.Tensor, step_number: tf.Tensor) -> tuple[tf.Tensor, tf.Tensor]:
            with tf.GradientTape(watch_accessed_variables=False) as tape:
                tape.watch(trainable)
                losses = self.losses(idx, step_number)
                total = tf.reduce_sum(losses)
            grads = [tf.convert_to_tensor(g) for g in tape.gradient(total, trainable)]  # leading: model (tables: K n rows)
            finite = tf.math.is_finite(losses)
            for g in grads:
                finite = tf.logical_and(finite, tf.reduce_all(tf.math.is_finite(tf.reshape(g, [K, -1])), axis=1))
            keep = tf.logical_and(finite, self.active)  # a failed or frozen model is not moved (NaN * 0 would be)
            grads = [tf.where(tf.reshape(tf.repeat(keep, tf.shape(g)[0] // K), [-1] + [1] * (g.shape.rank - 1)),
                              g, tf.zeros_like(g)) for g in grads]
            self.optimizer.apply_gradients(zip(grads[: len(self.shared)], self.shared))
            if self.row_adam is not None:
                n = tf.shape(self.data.X, out_type=idx.dtype)[1]
                rows = tf.reshape(idx + n * tf.range(K, dtype=idx.dtype)[:, None], [-1])
                self.row_adam.apply([_rows_of(g, rows) for g in grads[len(self.shared):]])
            return losses, finite

        signature = [tf.TensorSpec([K, None], tf.int64), tf.TensorSpec([], tf.int64)]
        return instance_function(step, input_signature=signature)

    # ------------------------------------------------------------ running
    def fit(self, *, epochs: int, batch_size: int, learning_rate: float, progress: bool = False,
            max_jitter: float = 1e-2, callback: Callable[[int, np.ndarray], bool | None] | None = None
            ) -> list[TrainResult | Exception]:
        """Train the loaded models for ``epochs`` passes (``callback`` as `BatchedTrainer.fit`'s); a ``TrainResult``
        per model, or the exception that stopped it."""
        K = self.K
        self.optimizer.learning_rate = learning_rate
        results: list[TrainResult | Exception] = [TrainResult() for _ in range(K)]

        def guarded_step(rows: np.ndarray, step_number: int, epoch: int) -> np.ndarray:
            return self._guarded_step(tf.constant(rows, dtype=tf.int64), step_number, epoch, results, max_jitter)

        try:
            run_epochs(one_step_at_a_time(guarded_step), self.n, self.seeds.numpy().tolist(), results, epochs=epochs,
                       batch_size=batch_size, progress=progress, desc=f"training {K} models", callback=callback)
        finally:
            self._write_back(results)
        return results

    def _guarded_step(self, idx: tf.Tensor, step_number: int, epoch: int, results: list, max_jitter: float) -> np.ndarray:
        while True:
            try:
                losses, finite = self.step(idx, tf.constant(step_number, tf.int64))
                break
            except tf.errors.InvalidArgumentError as err:
                if not cholesky_failed(err):
                    raise
                self._raise_jitter(self._failed_choleskys(), step_number, epoch, results, max_jitter)
        losses, finite = losses.numpy(), finite.numpy()
        bad = [k for k in np.flatnonzero(~finite) if isinstance(results[k], TrainResult)]
        if bad:
            failed_factor = set(self._failed_choleskys())
            self._raise_jitter([k for k in bad if k in failed_factor], step_number, epoch, results, max_jitter)
            for k in bad:
                if k not in failed_factor:
                    self._stop(k, results, TrainingError(
                        f"training loss became {losses[k]} at epoch {epoch}, step {step_number}; the update was not "
                        "applied. Try a smaller learning rate or check the inputs."))
        return losses

    def _failed_choleskys(self) -> list[int]:
        """The active models whose K_ZZ + jitter I has no Cholesky factor at their current values."""
        values = {p: v.numpy() for p, v in self._values().items()}
        failed = []
        for k in np.flatnonzero(self.active.numpy()):
            with reading_values(self.template, {p: tf.constant(v[k]) for p, v in values.items()}):
                ok = cholesky_ok(self.template)
            if not ok:
                failed.append(int(k))
        return failed

    def _raise_jitter(self, models: list[int], step_number: int, epoch: int, results: list, max_jitter: float) -> None:
        jitter = self.stacked[self.jitter_path]
        for k in models:
            value = float(jitter[k].numpy())
            if value * 10 > max_jitter:
                self._stop(k, results, cholesky_error(epoch, step_number, value, max_jitter))
            else:
                jitter.scatter_nd_update([[k]], [value * 10])

    def _stop(self, k: int, results: list, error: Exception) -> None:
        """Freeze model k at its starting values (a valid Cholesky factor), so the others can go on."""
        results[k] = error
        self.active.scatter_nd_update([[k]], [False])
        for path, var in self.stacked.items():
            start = self.initial[k][path]
            if path in self.per_point_paths:
                var[k * self.n:(k + 1) * self.n].assign(start)
            else:
                var[k].assign(start)

    def _write_back(self, results: list) -> None:
        values = {p: v.numpy() for p, v in self._values().items()}
        for k, model in enumerate(self.models):
            if isinstance(results[k], TrainResult):
                assign_module_values(model, {p: v[k] for p, v in values.items()})


# "K models of <trace key>" -> the step of such groups, lent to one fit at a time; a few kept per process.
_GROUP_STEPS: LentBySignature[GroupStep] = LentBySignature(8)


def _rows_of(g: tf.Tensor, rows: tf.Tensor) -> tf.IndexedSlices:
    """The batch rows of a (K n, ...) table gradient, as the sparse gradient the row-wise Adam takes."""
    return tf.IndexedSlices(tf.gather(g, rows), rows, tf.shape(g, out_type=tf.int64))


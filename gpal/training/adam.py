"""Adam with tf_keras' arithmetic in a fixed handful of operations, whatever the number of variables.

tf_keras' Adam updates each variable on its own (about 40 graph operations per variable with
its bookkeeping: 364 of the main job's 2663-operation training step for 9 variables), and at
the main job's size a step's time is those operations' dispatch, not their arithmetic.  Here
the moments of all variables live in one flat vector each: a step concatenates the gradients,
updates both moments and forms every variable's change in one pass, then splits the change
back.  Each element follows tf_keras' formulas in tf_keras' order (the same float32 learning
rate cast to float64, the same bias correction folded into the step size), so the values equal
tf_keras' Adam bit for bit for dense gradients (tested); an ``IndexedSlices`` gradient is made
dense first, where tf_keras would take its sparse branch (equal up to rounding).

Per-point tables (a q(x_i) per training row, of a row count that changes between fits) take ``RowAdam``,
which moves only the rows of a step's minibatch, or, as paper 001's authors' TensorFlow 1 code does, every row.
"""

from __future__ import annotations

from typing import Iterable

import numpy as np
import tensorflow as tf

__all__ = ["Adam", "RowAdam"]


class Adam:
    """Adam over a fixed list of variables of one dtype (``build``), tf_keras' defaults and arithmetic.

    ``variables`` (the step count and the two moment vectors) may be zeroed to restart, as the
    trainers do at each fit; ``learning_rate`` may be set between steps without a new trace.
    """

    def __init__(self, learning_rate: float = 0.001, beta_1: float = 0.9, beta_2: float = 0.999,
                 epsilon: float = 1e-7):
        self.beta_1, self.beta_2, self.epsilon = float(beta_1), float(beta_2), float(epsilon)
        # float32, as tf_keras keeps it (floatx): a step size of 0.03 is 0.029999999329447746 in float64 there too
        self._learning_rate = tf.Variable(learning_rate, dtype=tf.float32, trainable=False, name="learning_rate")
        self.iterations = tf.Variable(0, dtype=tf.int64, trainable=False, name="iterations")
        self._built: list[tf.Variable] | None = None

    @property
    def learning_rate(self) -> tf.Variable:
        return self._learning_rate

    @learning_rate.setter
    def learning_rate(self, value: float) -> None:
        self._learning_rate.assign(value)

    def build(self, var_list: Iterable[tf.Variable]) -> None:
        """The moment vectors for ``var_list``, whose order ``apply_gradients`` must then follow (once: a second
        call keeps the state, as tf_keras' does)."""
        var_list = list(var_list)
        if self._built is not None:
            if [id(v) for v in var_list] != [id(v) for v in self._built]:
                raise ValueError("this Adam was built for other variables")
            return
        dtypes = {v.dtype for v in var_list}
        if len(dtypes) > 1:
            raise TypeError(f"Adam updates variables of one dtype; got {sorted(d.name for d in dtypes)}")
        if any(not v.shape.is_fully_defined() for v in var_list):
            raise ValueError("Adam's variables must have fixed shapes (per-point tables take RowAdam)")
        self._built = var_list
        self._sizes = [int(np.prod(v.shape)) for v in var_list]
        dtype = var_list[0].dtype if var_list else tf.float64
        total = sum(self._sizes)
        self.m = tf.Variable(tf.zeros([total], dtype), trainable=False, name="m")
        self.v = tf.Variable(tf.zeros([total], dtype), trainable=False, name="v")

    @property
    def variables(self) -> list[tf.Variable]:
        """The optimiser's state: step count and moments (all zero for a fresh start)."""
        return [self.iterations] + ([self.m, self.v] if self._built is not None else [])

    def apply_gradients(self, grads_and_vars: Iterable[tuple[tf.Tensor, tf.Variable]]) -> None:
        """One Adam step of the built variables (in ``build``'s order) along their gradients."""
        pairs = list(grads_and_vars)
        grads, variables = [g for g, _ in pairs], [v for _, v in pairs]
        if self._built is None or [id(v) for v in variables] != [id(v) for v in self._built]:
            raise ValueError("apply_gradients must be given the variables of build(), in the same order")
        if not variables:
            return
        dtype = variables[0].dtype
        lr = tf.cast(self._learning_rate, dtype)
        local_step = tf.cast(self.iterations + 1, dtype)
        beta_1_power = tf.pow(tf.cast(self.beta_1, dtype), local_step)
        beta_2_power = tf.pow(tf.cast(self.beta_2, dtype), local_step)
        alpha = lr * tf.sqrt(1 - beta_2_power) / (1 - beta_1_power)
        flat = tf.concat([tf.reshape(tf.convert_to_tensor(g), [-1]) for g in grads], axis=0)
        self.m.assign_add((flat - self.m) * (1 - self.beta_1))
        self.v.assign_add((tf.square(flat) - self.v) * (1 - self.beta_2))
        change = (self.m * alpha) / (tf.sqrt(self.v) + self.epsilon)
        for var, part in zip(variables, tf.split(change, self._sizes)):
            var.assign_sub(tf.reshape(part, var.shape))
        self.iterations.assign_add(1)


class RowAdam:
    """Adam for per-point tables: by default it touches only the minibatch's rows.

    tf_keras' Adam decays every row's moments and moves every row on every step,
    O(n d) work for a q(x_i) table; here a row's moments, step count and value
    change only when the row is in the batch, so a step costs O(|B| d) and each
    q(x_i) follows Adam over its own sequence of gradients.  Hyper-parameters are
    those of the shared optimiser.

    ``every_row``: paper 001's authors' update instead (``q_x_update="every_row"``).  Their q(x_i) table is a
    TensorFlow 1 variable read through ``tf.gather``, whose gradient is sparse, and TF1's ``AdamOptimizer`` applies a
    sparse gradient by decaying every row's moments, adding the batch rows' gradients, and moving every row by
    its moments with the optimiser's one step count (``tensorflow/python/training/adam.py``,
    ``_apply_sparse_shared``).  So a row keeps moving on its momentum between its batches; that is Adam on the
    dense gradient, zero outside the batch, which this mode applies.
    """

    def __init__(self, variables: list[tf.Variable], optimizer: Adam, *, every_row: bool = False):
        self.variables = variables
        self.optimizer = optimizer
        self.every_row = bool(every_row)
        # Any row count: ``reset`` resizes them when the table grows between fits.
        self.m = [tf.Variable(tf.zeros_like(v), trainable=False, shape=_rows_unknown(v)) for v in variables]
        self.v = [tf.Variable(tf.zeros_like(v), trainable=False, shape=_rows_unknown(v)) for v in variables]
        self.t = [tf.Variable(tf.zeros(tf.shape(v)[:1], v.dtype), trainable=False, shape=[None]) for v in variables]

    def reset(self) -> None:
        """Fresh moments and step counts, one row per current row of each table."""
        for var, m, v, t in zip(self.variables, self.m, self.v, self.t):
            m.assign(tf.zeros_like(var))
            v.assign(tf.zeros_like(var))
            t.assign(tf.zeros(tf.shape(var)[:1], var.dtype))

    def apply(self, grads: list[tf.IndexedSlices | tf.Tensor]) -> None:
        """One Adam update of the rows each gradient names (a dense gradient names every row), or with
        ``every_row`` of every row."""
        opt = self.optimizer
        lr = tf.cast(opt.learning_rate, tf.float64)
        b1, b2, eps = (tf.constant(float(x), tf.float64) for x in (opt.beta_1, opt.beta_2, opt.epsilon))
        for g, var, m, v, t in zip(grads, self.variables, self.m, self.v, self.t):
            if self.every_row:
                # rows outside the batch: gradient zero (a sparse gradient made dense sums a repeated row's parts,
                # as TF1 does before its sparse update); every row then shares the optimiser's step count
                if isinstance(g, tf.IndexedSlices):
                    g = tf.math.unsorted_segment_sum(g.values, g.indices, tf.shape(var, out_type=g.indices.dtype)[0])
                t.assign_add(tf.ones_like(t))
                m.assign(b1 * m + (1.0 - b1) * g)
                v.assign(b2 * v + (1.0 - b2) * tf.square(g))
                correction = (tf.sqrt(1.0 - tf.pow(b2, t)) / (1.0 - tf.pow(b1, t)))[:, None]
                var.assign_sub(lr * correction * m / (tf.sqrt(v) + eps))
                continue
            if not isinstance(g, tf.IndexedSlices):  # dense gradient (rows not gathered): rows with any signal
                g = tf.IndexedSlices(g, tf.range(tf.shape(g)[0]), tf.shape(g, out_type=tf.int32))
            rows, pos = tf.unique(g.indices)
            values = tf.math.unsorted_segment_sum(g.values, pos, tf.size(rows))
            t_rows = tf.gather(t, rows) + 1.0
            m_rows = b1 * tf.gather(m, rows) + (1.0 - b1) * values
            v_rows = b2 * tf.gather(v, rows) + (1.0 - b2) * tf.square(values)
            correction = (tf.sqrt(1.0 - tf.pow(b2, t_rows)) / (1.0 - tf.pow(b1, t_rows)))[:, None]
            t.scatter_update(tf.IndexedSlices(t_rows, rows))
            m.scatter_update(tf.IndexedSlices(m_rows, rows))
            v.scatter_update(tf.IndexedSlices(v_rows, rows))
            var.scatter_sub(tf.IndexedSlices(lr * correction * m_rows / (tf.sqrt(v_rows) + eps), rows))


def _rows_unknown(v: tf.Variable) -> tf.TensorShape:
    return tf.TensorShape([None]).concatenate(v.shape[1:])

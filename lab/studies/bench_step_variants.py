"""Ways to make the main job's SVI step cheaper, measured.

First run at 3c19b05; what was not adopted and why: docs/results.md, "One SVI step against its arithmetic".

Each check builds the main job's model on a synthetic problem of its shapes (``MAIN_JOB_SHAPES``):

- ``--xla``: the ELBO and its gradient compiled by XLA (``jit_compile=True``; the row-wise Adam
  of the per-point tables, a dynamic-shape ``tf.unique``, stays outside) against the plain step;
- ``--parallel``: the model's and its error-blind twin's steps, each alone and both in two threads,
  as the main job runs them; set ``TF_NUM_INTRAOP_THREADS`` / ``TF_NUM_INTEROP_THREADS`` in the
  environment to compare TensorFlow's thread pools;
- ``--fused-adam``: TensorFlow's fused ``ResourceApplyAdam`` against tf_keras' Adam on float64
  variables with the same hyper-parameters: the largest difference after 200 steps;
- ``--epoch-loop``: ``Trainer.steps`` (an epoch's steps in one call) against ``Trainer.step`` once a
  minibatch (adopted at 64b555c).

    PYTHONPATH=$PWD python lab/studies/bench_step_variants.py --xla --parallel --fused-adam
    TF_NUM_INTRAOP_THREADS=1 TF_NUM_INTEROP_THREADS=1 PYTHONPATH=$PWD python lab/studies/bench_step_variants.py --parallel

What a command prints is kept in ``lab/studies/records/step_variants.json`` (the thread settings are printed
with ``--parallel``'s rows).
"""

from __future__ import annotations

import argparse
import os
import threading
import time

import numpy as np

from shared import MAIN_JOB_SHAPES, keep_printed, synthetic_problem


def _trainer(input_noise: str, seed: int):
    from gpal.models.svgp import build_model
    from gpal.training.svi import TrainData, Trainer

    s = MAIN_JOB_SHAPES
    X, X_var, y = synthetic_problem(s["n"], s["d"], s["classes"], seed)
    noisy = dict(input_prior="population", prior_components=s["prior_components"]) if input_noise != "none" else {}
    model = build_model(X, y, num_classes=s["classes"], input_noise=input_noise, num_inducing=s["inducing"],
                        X_var=X_var, seed=0, **noisy)
    trainer = Trainer(model, seed=0)
    trainer.load(TrainData.from_arrays(X, X_var, y), learning_rate=0.01)
    return trainer, s


def _batches(n: int, batch: int, count: int, seed: int):
    import tensorflow as tf

    rng = np.random.default_rng(seed)
    return [tf.constant(rng.choice(n, batch, replace=False), tf.int64) for _ in range(count)]


def _time_steps(step, batches, repeats: int = 3) -> tuple[float, float]:
    """Median wall and CPU milliseconds per step (the loss fetched to the host, as training does)."""
    import tensorflow as tf

    walls, cpus = [], []
    for _ in range(repeats):
        w0, c0 = time.perf_counter(), time.process_time()
        for i, idx in enumerate(batches):
            float(step(idx, tf.constant(i, tf.int64)))
        walls.append((time.perf_counter() - w0) / len(batches) * 1e3)
        cpus.append((time.process_time() - c0) / len(batches) * 1e3)
    return float(np.median(walls)), float(np.median(cpus))


def xla() -> None:
    import tensorflow as tf

    from gpal.training.adam import RowAdam
    from gpal.training.svi import make_optimizer

    trainer, s = _trainer("latent", 0)
    model, data, base = trainer.model, trainer.data, trainer.base
    batches = _batches(s["n"], s["batch"], 100, 0)
    float(trainer.step(batches[0], tf.constant(0, tf.int64)))
    print("plain step: %.2f ms wall, %.2f ms CPU" % _time_steps(trainer.step, batches))

    per_point = list(model.strategy.per_point_variables)
    shared = [v for v in model.trainable_variables if all(v is not p for p in per_point)]
    optimizer = make_optimizer(0.01)
    optimizer.build(shared)
    row_adam = RowAdam(per_point, optimizer)
    base_seed = tf.Variable(tf.constant(0, tf.int64))

    @tf.function(jit_compile=True, autograph=False)
    def loss_and_grads(idx, step_number):
        rows_base = None if base is None else tuple(tf.gather(t, idx) for t in base)
        with tf.GradientTape(watch_accessed_variables=False) as tape:
            tape.watch(shared + per_point)
            loss = -model.elbo(tf.gather(data.X, idx), tf.gather(data.X_var, idx), tf.gather(data.y, idx), idx,
                               tf.stack([base_seed, step_number]), num_data=tf.shape(data.y)[0], base=rows_base)
        return loss, tape.gradient(loss, shared + per_point)

    @tf.function(autograph=False, input_signature=[tf.TensorSpec([None], tf.int64), tf.TensorSpec([], tf.int64)])
    def step(idx, step_number):
        loss, grads = loss_and_grads(idx, step_number)
        optimizer.apply_gradients(zip(grads[: len(shared)], shared))
        row_adam.apply(grads[len(shared):])
        return loss

    t0 = time.perf_counter()
    float(step(batches[0], tf.constant(0, tf.int64)))
    print("XLA: first call (trace + compile) %.1f s; step %.2f ms wall, %.2f ms CPU"
          % (time.perf_counter() - t0, *_time_steps(step, batches)))


def parallel(steps: int = 200) -> None:
    import tensorflow as tf

    jobs = []
    for noise, seed in (("latent", 0), ("none", 1)):
        trainer, s = _trainer(noise, seed)
        batches = _batches(s["n"], s["batch"], steps, seed)
        float(trainer.step(batches[0], tf.constant(0, tf.int64)))
        jobs.append((trainer.step, batches))

    def run(job):
        step, batches = job
        for i, idx in enumerate(batches):
            float(step(idx, tf.constant(i, tf.int64)))

    print(f"TF_NUM_INTRAOP_THREADS={os.environ.get('TF_NUM_INTRAOP_THREADS', 'default')}, "
          f"TF_NUM_INTEROP_THREADS={os.environ.get('TF_NUM_INTEROP_THREADS', 'default')}")
    for name, which in (("model alone", [0]), ("twin alone", [1]), ("both in two threads", [0, 1])):
        wall, cpu = _timed_threads(run, jobs, which)
        print(f"{name}: {steps} steps each, {wall:.2f} s wall, {cpu:.2f} s CPU")


def _timed_threads(run, jobs, which) -> tuple[float, float]:
    """Wall and process CPU seconds of ``run(jobs[k])`` for each k of ``which``, one thread each, all at once."""
    w0, c0 = time.perf_counter(), time.process_time()
    threads = [threading.Thread(target=run, args=(jobs[k],)) for k in which]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - w0, time.process_time() - c0


def epoch_loop(epochs: int = 20) -> None:
    """``Trainer.steps`` (an epoch's steps in one call) against ``Trainer.step`` called once a minibatch: the values
    after one epoch from one state, and the time alone and with the twin beside it in a second thread."""
    import tensorflow as tf

    from gpal.models.state import assign_module_values, module_values

    jobs = []
    for noise, seed in (("latent", 0), ("none", 1)):
        trainer, s = _trainer(noise, seed)
        rng = np.random.default_rng(seed)
        perms = [tf.constant(rng.permutation(s["n"]), tf.int64) for _ in range(epochs)]
        B, count = s["batch"], -(-s["n"] // s["batch"])
        trainer.steps(perms[0], *(tf.constant(v, tf.int64) for v in (B, 0, count, 0)))  # both functions made ready
        float(trainer.step(perms[0][:B], tf.constant(0, tf.int64)))
        jobs.append((trainer, perms, B, count))

    def one_call_each(job):
        trainer, perms, B, count = job
        for e, perm in enumerate(perms):
            for j in range(count):
                float(trainer.step(perm[j * B:(j + 1) * B], tf.constant(e * count + j, tf.int64)))

    def loop_calls(job):
        trainer, perms, B, count = job
        for e, perm in enumerate(perms):
            trainer.steps(perm, *(tf.constant(v, tf.int64) for v in (B, 0, count, e * count)))
            trainer._losses.numpy()

    trainer, perms, B, count = jobs[0]
    row_adam = trainer._row_adam
    state = list(trainer.optimizer.variables) + ([] if row_adam is None else [*row_adam.m, *row_adam.v, *row_adam.t])
    start, state_start = module_values(trainer.model), [v.numpy() for v in state]
    one_call_each((trainer, perms[:1], B, count))
    after_one = module_values(trainer.model)
    assign_module_values(trainer.model, start)
    for v, value in zip(state, state_start):
        v.assign(value)
    loop_calls((trainer, perms[:1], B, count))
    after_loop = module_values(trainer.model)
    worst = max(float(np.max(np.abs(after_one[k] - after_loop[k]))) for k in after_one)
    print(f"one epoch ({count} steps) one call a step against one call: parameters' largest difference {worst:.3g}")
    for name, run in (("one call per step", one_call_each), ("an epoch per call", loop_calls)):
        for label, which in (("model alone", [0]), ("model and twin in two threads", [0, 1])):
            wall, cpu = _timed_threads(run, jobs, which)
            print(f"{name}, {label}: {epochs * count} steps each, {wall:.2f} s wall, {cpu:.2f} s CPU")


def fused_adam(steps: int = 200) -> None:
    import tensorflow as tf
    import tf_keras

    rng = np.random.default_rng(0)
    shapes = [(3, 50, 50), (3, 50), (16,), ()]
    keras_vars = [tf.Variable(rng.normal(size=s)) for s in shapes]
    fused_vars = [tf.Variable(v.numpy()) for v in keras_vars]
    optimizer = tf_keras.optimizers.Adam(learning_rate=0.03)
    optimizer.build(keras_vars)
    m = [tf.Variable(tf.zeros_like(v)) for v in fused_vars]
    v2 = [tf.Variable(tf.zeros_like(v)) for v in fused_vars]
    iterations = tf.Variable(0, dtype=tf.int64)

    @tf.function
    def keras_step(grads):
        optimizer.apply_gradients(zip(grads, keras_vars))

    @tf.function
    def fused_step(grads):
        iterations.assign_add(1)
        t = tf.cast(iterations, tf.float64)
        lr, b1, b2, eps = (tf.cast(x, tf.float64) for x in (optimizer.learning_rate, optimizer.beta_1,
                                                             optimizer.beta_2, optimizer.epsilon))
        for var, mm, vv, g in zip(fused_vars, m, v2, grads):
            tf.raw_ops.ResourceApplyAdam(var=var.handle, m=mm.handle, v=vv.handle, beta1_power=tf.pow(b1, t),
                                         beta2_power=tf.pow(b2, t), lr=lr, beta1=b1, beta2=b2, epsilon=eps, grad=g)

    for _ in range(steps):
        grads = [tf.constant(rng.normal(size=s)) for s in shapes]
        keras_step(grads)
        fused_step(grads)
    worst = max(float(np.max(np.abs(a.numpy() - b.numpy()))) for a, b in zip(keras_vars, fused_vars))
    print(f"fused ResourceApplyAdam against tf_keras' Adam after {steps} steps: largest difference {worst:.3g}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--xla", action="store_true", help="the step's ELBO and gradient compiled by XLA")
    parser.add_argument("--parallel", action="store_true", help="the model's and the twin's steps in two threads")
    parser.add_argument("--fused-adam", action="store_true", help="ResourceApplyAdam against tf_keras' Adam")
    parser.add_argument("--epoch-loop", action="store_true", help="Trainer.steps (an epoch a call) against Trainer.step")
    args = parser.parse_args(argv)
    with keep_printed("step_variants", __file__, argv):  # docs/results.md cites these timings
        if args.xla:
            xla()
        if args.parallel:
            parallel()
        if args.fused_adam:
            fused_adam()
        if args.epoch_loop:
            epoch_loop()


if __name__ == "__main__":
    main()

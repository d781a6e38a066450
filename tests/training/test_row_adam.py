"""The row-wise Adam of per-point tables (NIMGP's q(x_i)) against Adam written out in numpy, in both of its modes:
gpal's, which moves a row only in its batches, and paper 001's authors', which moves every row at every step."""

import numpy as np
import pytest
import tensorflow as tf

from gpal.training.adam import Adam, RowAdam

LR, B1, B2, EPS = 0.05, 0.9, 0.999, 1e-7
#: a table of 6 rows, the batches of 3 steps (row 5 in none) and a table's gradient on its rows
BATCHES = [[0, 1], [2, 3], [4, 0]]


def _gradients(seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.normal(size=(len(rows), 2)) for rows in BATCHES]


def _numpy_adam(start: np.ndarray, every_row: bool) -> list[np.ndarray]:
    """The table after each step: Adam on the dense gradient (zero off the batch) with one step count (every_row),
    or Adam per row over that row's own gradients, the other rows untouched."""
    x, m, v, t = start.copy(), np.zeros_like(start), np.zeros_like(start), np.zeros(len(start))
    after = []
    for rows, g in zip(BATCHES, _gradients()):
        dense = np.zeros_like(start)
        dense[rows] = g
        moved = np.arange(len(start)) if every_row else np.array(rows)
        t[moved] += 1
        m[moved] = B1 * m[moved] + (1 - B1) * dense[moved]
        v[moved] = B2 * v[moved] + (1 - B2) * dense[moved] ** 2
        # tf_keras' and TF1's order: bias corrections folded into the step size, epsilon after
        step = np.float64(np.float32(LR)) * np.sqrt(1 - B2 ** t[moved]) / (1 - B1 ** t[moved])
        x[moved] -= step[:, None] * m[moved] / (np.sqrt(v[moved]) + EPS)
        after.append(x.copy())
    return after


def _row_adam(start: np.ndarray, every_row: bool) -> list[np.ndarray]:
    """The table after each step of ``RowAdam``, given the sparse gradients a gathered variable gets."""
    table = tf.Variable(start, shape=[None, 2])
    adam = RowAdam([table], Adam(LR), every_row=every_row)
    after = []
    for rows, g in zip(BATCHES, _gradients()):
        adam.apply([tf.IndexedSlices(tf.constant(g), tf.constant(rows, tf.int64), tf.shape(table, out_type=tf.int64))])
        after.append(table.numpy())
    return after


@pytest.mark.parametrize("every_row", [False, True])
def test_row_adam_equals_adam_written_out_in_numpy(every_row):
    start = np.random.default_rng(1).normal(size=(6, 2))
    for ours, reference in zip(_row_adam(start, every_row), _numpy_adam(start, every_row)):
        np.testing.assert_allclose(ours, reference, rtol=1e-13, atol=1e-15)


def test_every_row_keeps_moving_rows_off_the_batch_where_gpals_leaves_them():
    """Rows 0 and 1 are out of step 2's batch: the authors' Adam moves them on their momentum, gpal's does not;
    row 5, never in a batch, has no momentum and stays in both."""
    start = np.random.default_rng(2).normal(size=(6, 2))
    authors, gpal = _row_adam(start, every_row=True), _row_adam(start, every_row=False)
    np.testing.assert_array_equal(gpal[1][[0, 1]], gpal[0][[0, 1]])
    assert np.all(np.abs(authors[1][[0, 1]] - authors[0][[0, 1]]) > 1e-3)
    for run in (authors, gpal):
        np.testing.assert_array_equal(run[-1][5], start[5])
    # in the first step, the rows of the batch move alike under both (one step count, no history)
    np.testing.assert_allclose(authors[0], gpal[0], rtol=1e-14)


def test_reset_restarts_every_row_as_a_new_optimiser():
    start = np.random.default_rng(3).normal(size=(6, 2))
    table = tf.Variable(start, shape=[None, 2])
    adam = RowAdam([table], Adam(LR), every_row=True)
    adam.apply([tf.constant(np.ones((6, 2)))])
    table.assign(start)
    adam.reset()
    for rows, g in zip(BATCHES, _gradients()):
        adam.apply([tf.IndexedSlices(tf.constant(g), tf.constant(rows, tf.int64), tf.shape(table, out_type=tf.int64))])
    np.testing.assert_allclose(table.numpy(), _numpy_adam(start, every_row=True)[-1], rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("q_x_update", ["batch_rows", "every_row"])
def test_the_estimators_q_x_update_reaches_the_training_step(q_x_update):
    """NIMGP built as the estimator builds it: after a step on rows 0-4, a step on rows 5-9 moves q(x_i) of rows
    0-4 too with the authors' update, and leaves them with gpal's."""
    from gpal.estimators.noisy_gp import NoisyGPClassifier
    from gpal.estimators.params import model_spec
    from gpal.training.svi import TrainData, Trainer

    rng = np.random.default_rng(4)
    X, V, y = rng.normal(size=(10, 2)), np.full((10, 2), 0.1), np.arange(10) % 3
    est = NoisyGPClassifier(input_noise="latent", likelihood="robustmax", num_inducing=4, q_x_update=q_x_update)
    model = model_spec(est).build(X, V, y, num_classes=3)
    trainer = Trainer(model)
    trainer.load(TrainData.from_arrays(X, V, y), learning_rate=0.05)
    table = model.strategy.q_offset
    trainer.step(tf.range(5, dtype=tf.int64), tf.constant(0, tf.int64))
    first = table.numpy()
    trainer.step(tf.range(5, 10, dtype=tf.int64), tf.constant(1, tf.int64))
    moved = np.abs(table.numpy()[:5] - first[:5]).max()
    assert (moved > 1e-3) if q_x_update == "every_row" else (moved == 0.0)


@pytest.mark.parametrize("input_noise", ["amortized", "first_order", "none"])
def test_every_row_is_refused_without_a_q_per_row_naming_the_option_and_the_paper(input_noise):
    from gpal.models.svgp import build_model

    X, y = np.random.default_rng(5).normal(size=(12, 2)), np.arange(12) % 3
    with pytest.raises(ValueError, match=rf"q_x_update='every_row' is paper 001's.*input_noise in \['latent'\].*{input_noise}"):
        build_model(X, y, num_classes=3, num_inducing=4, input_noise=input_noise, q_x_update="every_row",
                    X_var=np.full_like(X, 0.1))
    with pytest.raises(ValueError, match="q_x_update.*batch_rows.*every_row"):
        build_model(X, y, num_classes=3, num_inducing=4, input_noise="latent", q_x_update="dense")


def test_the_two_updates_never_share_a_compiled_step_and_a_saved_structure_keeps_it():
    from gpal.models.svgp import NoisySVGP, build_model
    from gpal.training.signatures import trace_key

    X, y = np.random.default_rng(6).normal(size=(12, 2)), np.arange(12) % 3
    authors, gpal = (build_model(X, y, num_classes=3, num_inducing=4, input_noise="latent", q_x_update=update,
                                 X_var=np.full_like(X, 0.1)) for update in ("every_row", "batch_rows"))
    assert trace_key(authors) != trace_key(gpal)
    assert NoisySVGP.from_structure(authors.structure()).strategy.q_x_update == "every_row"


def test_the_authors_update_trains_in_a_batched_group_as_alone():
    """The batched trainer stacks the models' q(x_i) tables into one: moving every row of it at each step is each
    model's own every-row update, so a group fit equals fits alone."""
    from gpal.estimators.batched import fit_batched
    from gpal.estimators.noisy_gp import NoisyGPClassifier

    params = dict(input_noise="latent", num_inducing=5, epochs=3, batch_size=20, n_samples=20, q_x_update="every_row")
    sets = []
    for k in range(2):
        rng = np.random.default_rng(10 + k)
        X = rng.normal(size=(50, 2))
        sets.append((X, (X[:, 0] > 0).astype(int) + (X[:, 1] > 0.5), np.full((50, 2), 0.1)))
    alone = [NoisyGPClassifier(random_state=k, **params).fit(*s) for k, s in enumerate(sets)]
    together = fit_batched([NoisyGPClassifier(random_state=k, **params) for k in range(2)], sets)
    with together[0]._session.batched_trainer.loaded() as group:  # trained as a group, with the authors' update
        assert group.row_adam.every_row
    for a, b in zip(together, alone):
        np.testing.assert_allclose(a.model_.strategy.q_offset.numpy(), b.model_.strategy.q_offset.numpy(), atol=1e-9)
        assert a.history_ == pytest.approx(b.history_, rel=1e-12)
    batch_rows = NoisyGPClassifier(random_state=0, **{**params, "q_x_update": "batch_rows"}).fit(*sets[0])
    assert not np.allclose(batch_rows.model_.strategy.q_offset.numpy(), alone[0].model_.strategy.q_offset.numpy())

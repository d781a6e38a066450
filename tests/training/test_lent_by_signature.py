"""A kept object is lent for a ``with`` block: the borrower's state goes in and comes back, and the object is free
again after the block, however it ends."""

import threading

import numpy as np
import pytest

from gpal.models.state import module_values
from gpal.training.shared import LentBySignature


class _Kept:
    """A lendable that records what it was asked to do."""

    def __init__(self, fail_taking=False):
        self.calls, self.fail_taking = [], fail_taking

    def take_from(self, borrower):
        self.calls.append(("take", borrower))
        if self.fail_taking:
            raise RuntimeError("cannot take")

    def give_back(self, borrower):
        self.calls.append(("give", borrower))


def test_an_exception_in_the_block_gives_the_state_back_and_frees_the_object():
    kept, borrower = LentBySignature(2), object()
    with pytest.raises(ValueError, match="inside"):
        with kept.lent("k", _Kept, borrower) as first:
            assert first.calls == [("take", borrower)]
            raise ValueError("inside")
    assert first.calls == [("take", borrower), ("give", borrower)]
    with kept.lent("k", lambda: pytest.fail("a second object made: the first stayed lent")) as again:
        assert again is first
    assert first.calls == [("take", borrower), ("give", borrower)]  # lent without a borrower: only read


def test_a_failed_take_gives_nothing_back_and_frees_the_object():
    kept, made = LentBySignature(2), []

    def make():
        made.append(_Kept(fail_taking=not made))
        return made[-1]

    with pytest.raises(RuntimeError, match="cannot take"):
        with kept.lent("k", make, "borrower"):
            pytest.fail("the block ran after a failed take")
    assert made[0].calls == [("take", "borrower")]
    made[0].fail_taking = False
    with kept.lent("k", make, "borrower") as again:
        assert again is made[0]


def test_a_busy_object_makes_another_and_the_first_stays_kept():
    kept = LentBySignature(2)
    with kept.lent("k", _Kept) as first:
        other_thread = []
        thread = threading.Thread(target=lambda: other_thread.append(kept.lent("k", _Kept).__enter__()))
        thread.start()
        thread.join()
        assert other_thread[0] is not first
    with kept.lent("k", _Kept) as again:
        assert again is first


def test_a_shared_fit_stopped_by_an_error_gives_its_model_the_trained_values_and_frees_the_trainer():
    from gpal.models.svgp import build_model
    from gpal.training.svi import SharedTrainer, TrainData, _signature_trainer

    rng = np.random.default_rng(0)
    X, X_var = rng.normal(size=(30, 2)), rng.uniform(0.01, 0.2, size=(30, 2))
    y = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0.5)
    model = build_model(X, y, num_classes=3, input_noise="none", num_inducing=5, X_var=X_var, seed=0)
    start = module_values(model)[".gp.q_mu"]
    seen = []

    def callback(epoch, loss):
        seen.append(module_values(model)[".gp.q_mu"])
        raise KeyError("stop here")

    with pytest.raises(KeyError, match="stop here"):
        SharedTrainer(model, seed=0).fit(TrainData.from_arrays(X, X_var, y), epochs=3, batch_size=10,
                                         learning_rate=0.03, progress=False, callback=callback)
    after = module_values(model)[".gp.q_mu"]
    assert not np.array_equal(after, start)  # the epoch's steps reached the model
    np.testing.assert_array_equal(after, seen[0])
    with _signature_trainer(model) as first, _signature_trainer(model) as second:
        assert second is not first  # the kept one was free to lend (first), so a second borrower gets its own
    with _signature_trainer(model) as again:
        assert again is first

"""Early stopping on the negative log-likelihood of held-out validation rows.

The training ELBO keeps improving long after the predictive probabilities stop
improving (and, for over-confident likelihoods such as robust-max, after they start
to degrade), so the ELBO cannot say when to stop.  The validation NLL measures the
quantity gpal is judged on.  The monitor is the training loop's per-epoch callback:
every ``interval`` epochs it scores the validation rows, keeps a copy of the best
parameters, and asks the loop to stop after ``patience`` checks without an
improvement larger than ``tol``; ``restore`` then puts the best parameters back.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

__all__ = ["ValidationMonitor"]


class ValidationMonitor:
    """Per-epoch training callback: validation NLL every ``interval`` epochs, best state kept.

    ``predict(X, X_var)`` returns class probabilities of the model being trained;
    ``snapshot()`` / ``restore_state(state)`` copy its parameters out and back.
    ``nll(y, proba)`` scores them: the estimator passes the metric it is judged on
    (``gpal.evaluation.metrics.negative_log_likelihood``), so training needs no evaluation code.
    ``then`` is a further callback (the user's), called every epoch; its False stops too.
    """

    def __init__(
        self,
        predict: Callable[[np.ndarray, np.ndarray], np.ndarray],
        snapshot: Callable[[], Any],
        restore_state: Callable[[Any], None],
        X: np.ndarray,
        X_var: np.ndarray,
        y: np.ndarray,
        *,
        nll: Callable[[np.ndarray, np.ndarray], float],
        interval: int,
        patience: int,
        tol: float = 1e-4,
        then: Callable[[int, float], bool | None] | None = None,
    ):
        self._predict, self._snapshot, self._restore = predict, snapshot, restore_state
        self._X, self._X_var, self._y, self._nll = X, X_var, y, nll
        self.interval, self.patience, self.tol, self._then = int(interval), int(patience), float(tol), then
        self.history: list[tuple[int, float]] = []  # (epochs done, validation NLL)
        self.best_nll = np.inf
        self.best_epoch = 0
        self._best_state: Any = None
        self._checks_without_gain = 0
        self.exhausted = False  # True once patience ran out (the monitor asked the loop to stop)

    def __call__(self, epoch: int, loss: float) -> bool | None:
        keep_going = None if self._then is None else self._then(epoch, loss)
        if (epoch + 1) % self.interval == 0:
            keep_going = self.check(epoch + 1) and keep_going is not False
        return False if keep_going is False else None

    def check(self, epochs_done: int) -> bool:
        """Score the validation rows now; False once ``patience`` checks brought no gain above ``tol``."""
        nll = self._nll(self._y, self._predict(self._X, self._X_var))
        self.history.append((int(epochs_done), float(nll)))
        if nll < self.best_nll - self.tol:
            self.best_nll, self.best_epoch = float(nll), int(epochs_done)
            self._best_state = self._snapshot()
            self._checks_without_gain = 0
        else:
            self._checks_without_gain += 1
        self.exhausted = self._checks_without_gain >= self.patience
        return not self.exhausted

    def restore(self) -> None:
        """Put the best parameters seen back (no-op before the first check)."""
        if self._best_state is not None:
            self._restore(self._best_state)

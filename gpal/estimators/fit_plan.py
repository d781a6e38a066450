"""A ``NoisyGPClassifier`` SVI fit in public steps, so that a caller can train many of them together.

``fit_data`` checks the parameters and data; ``plan_fit`` does everything else before training
(standardiser, model session, training arrays, validation monitor); the plan's model is then
trained on its ``train_data``, by its own trainer (``train_plan``) or in one step with others
(``gpal.estimators.batched.fit_batched``); ``complete_fit`` sets the fitted attributes from the
``TrainResult``.  ``NoisyGPClassifier.fit`` is these in a row.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any, Callable, Iterator, NamedTuple

import numpy as np

from gpal.data.dataset import NoisyDataset
from gpal.data.splits import holdout_per_class
from gpal.estimators.base import (FitData, check_fit_data, check_predict_data, check_variance_scale, warn_ignored_noise,
                                  warn_standardised_without_variances)
from gpal.estimators.params import (AUTO, auto_declines, choose_input_noise, gives_error_bars, input_noise_class,
                                    input_prior_used, model_spec)
from gpal.evaluation.metrics import negative_log_likelihood
from gpal.registry import INPUT_NOISE
from gpal.training.session import ModelSession

__all__ = ["TREND_EPOCHS", "BoundStop", "FitPlan", "complete_fit", "fit_data", "plan_fit", "train_plan"]


class FitPlan(NamedTuple):
    """A fit up to its training: the estimator, its validated data, standardiser, model session, training
    arrays and callback."""

    estimator: Any
    data: FitData
    standardizer: Any
    session: ModelSession
    train_data: Any
    continued: bool  # a warm start: the history goes on
    monitor: Any
    callback: Callable | None

    @property
    def model(self) -> Any:
        """The model to train."""
        return self.session.model


def fit_data(estimator: Any, X: Any, y: Any, X_var: Any, unlabelled: Any = None) -> tuple[FitData, Any]:
    """Checked parameters, then the checked training data and the unlabelled inputs of the prior.

    Returns
    -------
    data : FitData
        The training data.
    extra : tuple of numpy.ndarray or None
        (X_u, V_u) of the unlabelled sources the population prior is also fitted to, or None.
    """
    est = estimator
    est._start_fit(X)
    given = X.X_var if isinstance(X, NoisyDataset) else X_var
    est.input_noise_, est.input_prior_ = choose_input_noise(est, given)
    auto = isinstance(est.input_noise, str) and est.input_noise == AUTO
    # input_noise="auto" that had no error bars to use: X_var at prediction is then ignored, and said to be (a fit
    # given error bars it declined has said why already; "none" by name is the user's choice, warned of at fit)
    est._fitted_without_error_bars = auto and not gives_error_bars(given)
    if X_var is None and not isinstance(X, NoisyDataset) and est.needs_X_var:
        raise ValueError(
            f"input_noise={est.input_noise!r} with noise_variance={est.noise_variance!r} uses the measured "
            "input variances, so fit needs X_var (n, d); pass zeros for exact features"
        )
    data = check_fit_data(X, y, X_var, owner=type(est).__name__)
    if est.needs_X_var:
        # a DataFrame's column names (kept by _start_fit) name the features the warnings are about
        names = getattr(est, "feature_names_in_", None)
        names = data.feature_names if names is None else tuple(str(n) for n in names)
        check_variance_scale(data.X, data.X_var, names, type(est).__name__, stacklevel=4)
        if not isinstance(X, NoisyDataset):  # a data set's scalings carry its X_var with X
            warn_standardised_without_variances(data.X, data.X_var, names, type(est).__name__, stacklevel=4)
    elif X_var is not None or (auto and isinstance(X, NoisyDataset)):
        # given by hand, or to 'auto' in a NoisyDataset (which always carries variances: MGP twins read it on purpose)
        declined = auto_declines(est, data.X.shape[0]) if auto else None
        warn_ignored_noise(data.X_var, f"{type(est).__name__}(input_noise={est.input_noise!r}, noise_variance="
                           f"{est.noise_variance!r})", stacklevel=4, fix=declined or _USE_THE_ERROR_BARS)
    extra = _unlabelled_inputs(est, unlabelled, data.X.shape[1])
    n = data.X.shape[0]
    est.check_sizes(n, data.X.shape[1], len(data.classes), n_prior_rows=n + (0 if extra is None else len(extra[0])))
    return data, extra


#: How a NoisyGPClassifier uses measured error bars; docs/methods.md ("when to use which") says why this one.
_USE_THE_ERROR_BARS = ("input_noise='latent', input_prior='population' uses them, as the default input_noise='auto' "
                       "does with inference='svi'")


def plan_fit(estimator: Any, data: FitData, extra: Any = None, callback: Callable | None = None,
             weight: np.ndarray | None = None) -> FitPlan:
    """Everything before training ``data`` (from ``fit_data``): standardiser, model session (kept or new),
    training arrays, validation monitor.

    Returns
    -------
    FitPlan
        The plan; its ``model`` is to be trained on its ``train_data``.
    """
    from gpal.training.svi import TrainData

    est = estimator
    previous = getattr(est, "_session", None) if est.warm_start else None
    if previous is not None and not previous.can_continue(data.classes, data.X.shape[1]):
        previous = None
    standardizer, Z, Z_var = est._standardize_fit(data, keep=previous is not None)
    y = data.y
    if est.early_stopping:
        fit_rows, val_rows = holdout_per_class(y, float(est.validation_fraction),
                                               np.random.default_rng([est.random_seed_, 7]),
                                               "early stopping holds out a validation share",
                                               "set early_stopping=False or add labelled rows")
        (Z, Z_val), (Z_var, Z_var_val), (y, y_val) = ((a[fit_rows], a[val_rows]) for a in (Z, Z_var, y))
        weight = None if weight is None else weight[fit_rows]
    prior_inputs = None if extra is None else _standardised_prior_inputs(standardizer, Z, Z_var, *extra)
    session = ModelSession.for_fit(model_spec(est), data.classes, Z, Z_var, y,
                                   prior_inputs=prior_inputs, previous=previous)
    monitor = None
    if est.early_stopping:
        monitor = session.validation_monitor(
            session.input_draws(est.n_samples), Z_val, Z_var_val, y_val,
            nll=negative_log_likelihood, interval=int(est.validation_interval),
            patience=int(est.n_iter_no_change), then=callback,
        )
    if monitor is None and est.tol is not None:
        window = TREND_EPOCHS if input_noise_class(est).latent_inputs else None
        monitor = BoundStop(float(est.tol), int(est.n_iter_no_change), then=callback, window=window)
    return FitPlan(est, data, standardizer, session, TrainData.from_arrays(Z, Z_var, y, weight), previous is not None,
                   monitor, callback if monitor is None else monitor)


def train_plan(plan: FitPlan, progress: bool) -> Any:
    """SVI on a planned fit by the model's own trainer, then the fitted attributes.

    Returns
    -------
    NoisyGPClassifier
        The plan's estimator, fitted.
    """
    est = plan.estimator
    with _predictor_traced_beside(plan):
        result = plan.session.trainer().fit(plan.train_data, epochs=int(est.epochs), batch_size=int(est.batch_size),
                                            learning_rate=float(est.learning_rate), progress=progress,
                                            callback=plan.callback)
    return complete_fit(plan, result)


@contextlib.contextmanager
def _predictor_traced_beside(plan: FitPlan) -> Iterator[None]:
    """During a long fit, its model's predictor traced in a second thread: tracing is Python work that holds the GIL,
    training is compiled epochs that release it, so the first ``predict_proba`` after the fit does not wait for its
    trace (the main job's held-out check: about 0.9 s of its 1.1 s).  A fit of fewer than ``LOOP_MIN_STEPS`` steps
    is left alone: its predictions may never come, and a trace would cost it more than it hides.  A failed trace is
    dropped here; the prediction traces again and raises the error there."""
    from gpal.training.svi import is_long_fit

    est = plan.estimator
    if not (hasattr(est, "n_samples") and is_long_fit(est.epochs, est.batch_size, int(plan.train_data.X.shape[0]))):
        yield
        return

    def trace() -> None:
        try:
            plan.session.predictor(plan.session.input_draws(int(est.n_samples))).func.get_concrete_function()
        except Exception:  # noqa: BLE001  the prediction's own trace raises it where the user sees it
            pass

    thread = threading.Thread(target=trace, name="gpal-trace")
    thread.start()
    try:
        yield
    finally:
        thread.join()


def complete_fit(plan: FitPlan, result: Any) -> Any:
    """The fitted attributes of the plan's estimator from its ``TrainResult``.

    Returns
    -------
    NoisyGPClassifier
        The plan's estimator, fitted.
    """
    est, monitor = plan.estimator, plan.monitor
    interrupted = result.stopped_early
    if monitor is not None:
        # The monitor's own stop is the plan, not an interruption; a user's callback or Ctrl-C still is.
        interrupted = result.stopped_early and not monitor.exhausted
        monitor.restore()
    history = (list(est.history_) if plan.continued else []) + result.history
    est._keep(plan.session, plan.data.X.shape[1], plan.standardizer, history, interrupted)
    validated = monitor is not None and not isinstance(monitor, BoundStop)
    est.validation_history_ = list(monitor.history) if validated else []
    est.best_epoch_ = monitor.best_epoch if validated else len(result.history)
    est.converged_ = bool(monitor is not None and monitor.exhausted)
    return est


#: The epochs whose bound's trend the stop of a model with latent inputs reads (`BoundStop`): its inputs are sampled,
#: so its bound is noisy, and each training row's q(x_i) moves once an epoch, so its bound falls slowly while its
#: test NLL still improves; docs/methods.md ("Training length") gives the measurements.
TREND_EPOCHS = 40


class BoundStop:
    """The training's stop when the bound stops improving (scikit-learn's ``tol`` / ``n_iter_no_change`` of its
    stochastic solvers): after ``patience`` epochs in a row whose mean negative ELBO is not below the best so far by
    more than ``tol`` times its size; with a ``window``, after ``patience`` epochs in a row at which the
    least-squares trend of the last ``window`` epochs predicts that as many epochs again would lower it by no more
    than ``tol`` times its size.  The trend is for a model that samples its inputs: no later epoch of its noisy bound
    beats a lucky low one while the model still improves.  A callback, handing each epoch on to ``then`` (a user's,
    which may still stop)."""

    def __init__(self, tol: float, patience: int, then: Callable | None = None, window: int | None = None):
        self.tol, self.patience, self.then, self.window = tol, patience, then, window
        self.losses: list[float] = []
        self.best, self.waited, self.exhausted = np.inf, 0, False

    def predicted_fall(self) -> float:
        """The fall of the bound over the next ``window`` epochs that the trend of the last ``window`` predicts
        (NaN without a window, or before ``window`` epochs have run)."""
        if self.window is None or len(self.losses) < self.window:
            return float("nan")
        last = np.asarray(self.losses[-self.window:])
        t = np.arange(self.window) - (self.window - 1) / 2
        return float(-(t @ (last - last.mean())) / (t @ t) * self.window)

    def _improved(self, loss: float) -> bool | None:
        """Whether this epoch counts as a gain (None: the trend's window is not full yet)."""
        if self.window is None:
            gained = loss < self.best - self.tol * abs(self.best if np.isfinite(self.best) else loss)
            self.best = loss if gained else self.best
            return gained
        fall = self.predicted_fall()
        return None if fall != fall else fall > self.tol * abs(np.mean(self.losses[-self.window:]))

    def __call__(self, epoch: int, loss: float) -> bool | None:
        self.losses.append(float(loss))
        improved = self._improved(float(loss))
        if improved is not None:
            self.waited = 0 if improved else self.waited + 1
        self.exhausted = self.waited >= self.patience
        if self.then is not None and self.then(epoch, loss) is False:
            return False
        return False if self.exhausted else None

    def restore(self) -> None:
        """Nothing to restore: the parameters reached are kept (the bound is the training's own)."""


def _unlabelled_inputs(est: Any, unlabelled: Any, n_features: int) -> tuple[np.ndarray, np.ndarray] | None:
    if unlabelled is None:
        return None
    if input_prior_used(est) != "population":
        raise ValueError(f"unlabelled inputs shape the population prior only; input_noise={est.input_noise!r} "
                         f"with input_prior={est.input_prior!r} has none (use an input_noise of "
                         f"{list(INPUT_NOISE.having('latent_inputs'))} with input_prior='population', "
                         "or leave unlabelled out)")
    X_u, V_u = unlabelled if isinstance(unlabelled, tuple) else (unlabelled, None)
    return check_predict_data(X_u, V_u, n_features, needs_variance=True)


def _standardised_prior_inputs(standardizer: Any, Z: np.ndarray, Z_var: np.ndarray, X_u: np.ndarray,
                               V_u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if standardizer is not None:
        X_u, V_u = standardizer.transform_arrays(X_u, V_u)
    return np.vstack([Z, X_u]), np.vstack([Z_var, V_u])

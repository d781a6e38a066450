"""Many ``NoisyGPClassifier``s that differ only in their data and ``random_state``, fitted and predicted together.

An experiment grid fits one estimator per (split, seed).  ``fit_batched`` trains them as one
batched model (``gpal.training.batched``: one compiled step for all) and ``predict_proba_batched``
predicts each by the one compiled trace kept per model signature.  Results equal ``fit`` and
``predict_proba`` one at a time up to rounding.  Estimators of another family or size share a
call but not a step: they are trained in groups of one model signature (an estimator alone in
its group is fitted exactly as ``fit`` would).  Estimators that cannot be trained this way at
all (another class, training setting, early stopping, conjugate inference) raise
``NotBatchable`` naming why, and the caller fits them apart.  A warm-started estimator
continues its fitted model, as its own ``fit`` would (an active-learning retraining).
"""

from __future__ import annotations

from typing import Any, Literal, Sequence

import numpy as np
import tensorflow as tf

from gpal.constraints import OneOf, check_values
from gpal.data.dataset import NoisyDataset
from gpal.estimators.fit_plan import complete_fit, fit_data, plan_fit, train_plan
from gpal.estimators.noisy_gp import NoisyGPClassifier
from gpal.registry import MODELS_PER_BATCH, PER_MODEL_ERRORS
from gpal.training.batched import BatchedTrainer, NotBatchable
from gpal.training.signatures import model_signature

__all__ = ["NotBatchable", "fit_batched", "predict_proba_batched"]

# How a step is taken: estimators trained together must agree on these.
_TRAINING = ("epochs", "batch_size", "learning_rate")


def _check_estimators(estimators: Sequence[Any]) -> None:
    if not estimators:
        raise NotBatchable("no estimators to fit")
    for k, est in enumerate(estimators):
        if type(est) is not NoisyGPClassifier:
            raise NotBatchable(f"estimator {k} is a {type(est).__name__}; batched fitting is for NoisyGPClassifier")
        if est.inference != "svi" or est.early_stopping:
            raise NotBatchable(f"estimator {k} has inference={est.inference!r}, early_stopping={est.early_stopping!r}; "
                               "batched fitting takes SVI steps without early stopping")
        for name in _TRAINING:
            if getattr(est, name) != getattr(estimators[0], name):
                raise NotBatchable(f"estimator {k} has {name}={getattr(est, name)!r}, estimator 0 "
                                   f"{getattr(estimators[0], name)!r}")


def _as_arrays(item: Any) -> tuple[Any, Any, Any]:
    if isinstance(item, NoisyDataset):
        return item, None, None
    X, y, X_var = (tuple(item) + (None,))[:3]
    return X, y, X_var


def fit_batched(estimators: Sequence[NoisyGPClassifier], data: Sequence[Any], *, max_models: int = MODELS_PER_BATCH,
                errors: Literal["raise", "return"] = "raise", progress: bool = False) -> list[Any]:
    """Fit ``estimators[k]`` on ``data[k]`` (a ``NoisyDataset`` or an ``(X, y, X_var)`` tuple), all together.

    At most ``max_models`` share a step; a batch the device has no memory for is halved.

    Returns
    -------
    list
        The fitted estimators, in order; with ``errors="return"`` an estimator whose fit
        failed (bad data, a non-finite ELBO) is replaced by its exception and the others are kept.

    Examples
    --------
    >>> import numpy as np
    >>> from gpal import NoisyGPClassifier, fit_batched
    >>> rng = np.random.default_rng(0)
    >>> sets = [(rng.normal(size=(40, 2)), rng.integers(0, 3, 40)) for _ in range(3)]
    >>> fits = fit_batched([NoisyGPClassifier(num_inducing=5, epochs=2, random_state=k) for k in range(3)], sets)
    >>> [f.predict_proba(X).shape for f, (X, _) in zip(fits, sets)]
    [(40, 3), (40, 3), (40, 3)]
    """
    check_values({"errors": OneOf(PER_MODEL_ERRORS)}, {"errors": errors})
    if len(estimators) != len(data):
        raise ValueError(f"{len(estimators)} estimators but {len(data)} data sets")
    _check_estimators(estimators)
    out: list[Any] = list(estimators)

    def failed(k: int, exc: Exception) -> None:
        if errors == "raise":
            raise exc
        out[k] = exc

    plans = {}
    for k, (est, item) in enumerate(zip(estimators, data)):
        try:
            plans[k] = plan_fit(est, *fit_data(est, *_as_arrays(item)))
        except Exception as exc:  # noqa: BLE001 - reported per estimator
            failed(k, exc)
    first = estimators[0]
    settings = dict(epochs=int(first.epochs), batch_size=int(first.batch_size),
                    learning_rate=float(first.learning_rate), progress=progress)

    def train(ks: list[int]) -> None:
        if len(ks) == 1:  # alone in its group: exactly its own fit
            (k,) = ks
            try:
                train_plan(plans[k], progress=progress)
            except Exception as exc:  # noqa: BLE001 - reported per estimator
                failed(k, exc)
            return
        models, datas = [plans[k].model for k in ks], [plans[k].train_data for k in ks]
        seeds = [estimators[k].random_seed_ for k in ks]
        try:
            trainer = _kept_trainer([plans[k].session for k in ks], models, seeds)
            if trainer is None:
                trainer = BatchedTrainer(models, datas, seeds)
            else:
                trainer.load(datas)
            for k in ks:
                plans[k].session.batched_trainer = trainer
            results = trainer.fit(**settings, callback=_together([plans[k].callback for k in ks]))
        except tf.errors.ResourceExhaustedError:
            train(ks[: len(ks) // 2])
            train(ks[len(ks) // 2:])
            return
        for k, result in zip(ks, results):
            if isinstance(result, Exception):
                failed(k, result)
            else:
                complete_fit(plans[k], result)

    groups: dict[str, list[int]] = {}
    for k in sorted(plans):  # models that can share a step: one signature, one training-set shape
        key = repr((model_signature(plans[k].model), tuple(plans[k].train_data.X.shape)))
        groups.setdefault(key, []).append(k)
    for group in groups.values():
        for start in range(0, len(group), max(1, int(max_models))):
            train(group[start:start + int(max_models)])
    return out


def _together(stops: Sequence[Any]) -> Any:
    """One callback for a batch from the models' own (each a `gpal.estimators.fit_plan.BoundStop` or None): the batch
    stops once every model's bound has stopped improving, so a model trains as long as the longest alone would (at
    most its ``epochs``); a model without a stop (``tol=None``) runs every epoch, and the batch with it."""
    if any(stop is None for stop in stops):
        return None

    done = [False] * len(stops)  # a model whose stop came stays stopped, as alone it would be

    def callback(epoch: int, losses: np.ndarray) -> bool | None:
        for k, (stop, loss) in enumerate(zip(stops, losses)):
            done[k] = done[k] or stop(epoch, float(loss)) is False
        return False if all(done) else None

    return callback


def _kept_trainer(sessions: Sequence[Any], models: Sequence[Any], seeds: Sequence[int]) -> BatchedTrainer | None:
    """The batched trainer these very models (same objects, order and seeds) were last trained in, if any."""
    trainer = sessions[0].batched_trainer
    if trainer is None or any(s.batched_trainer is not trainer for s in sessions):
        return None
    same = len(trainer.models) == len(models) and all(a is b for a, b in zip(trainer.models, models))
    return trainer if same and trainer.seeds == list(seeds) else None


def predict_proba_batched(estimators: Sequence[NoisyGPClassifier], X: Sequence[Any],
                          X_var: Sequence[Any] | None = None) -> list[np.ndarray]:
    """``estimators[k].predict_proba(X[k], X_var[k])`` for every k.

    Each estimator's predictor is already the one trace kept per model signature
    (``ModelSession.function``), so the estimators of one batch trace it once between them.

    Returns
    -------
    list of numpy.ndarray
        One (n_k, C) array of probabilities per estimator.
    """
    X_var = [None] * len(estimators) if X_var is None else X_var
    if not len(estimators) == len(X) == len(X_var):
        raise ValueError(f"{len(estimators)} estimators, {len(X)} input sets and {len(X_var)} variance sets")
    return [est.predict_proba(rows, rows_var) for est, rows, rows_var in zip(estimators, X, X_var)]

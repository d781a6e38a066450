"""The pool-based active-learning loop, checkpointed after every step so it can be killed and resumed.

One query = select a batch from the pool with the acquisition, ask the oracle,
add the labelled rows, retrain (warm start: the previous solution is the starting
point, as in sec. 5.5 of the noisy-input GP paper), score the test set.

The state advances in three durable phases per query, each written to the checkpoint
folder (`gpal.active.checkpoint`): (1) the selected batch is written as *pending* before
the oracle is asked, (2) the oracle's labels are written as soon as they arrive, (3) the
retrained model and its metrics are written.  A run
killed anywhere resumes at the phase it stopped in: a label once answered is never
asked for again nor lost, and the resumed run ends with exactly the labelled ids and
metrics of an uninterrupted run with the same seed (the model is reloaded from the
checkpoint, which equals the one that was in memory).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Literal, Mapping, Sequence

import numpy as np
import pandas as pd
from sklearn.base import clone

from gpal.active.acquisition import Acquisition, make_acquisition
from gpal.active.checkpoint import Checkpoint, new_state, read_state
from gpal.active.oracles import check_labels
from gpal.constraints import Integer, OneOf, Optional, check_values
from gpal.data.dataset import NoisyDataset
from gpal.estimators.base import raise_if_interrupted
from gpal.evaluation.metrics import proba_by_class
from gpal.evaluation.reports import prediction_metrics
from gpal.identity import DifferentRun, check_same_run, dataset_hashes, estimator_identity
from gpal.registry import FOLLOW_UP_ACQUISITION, MODELS_PER_BATCH, PER_MODEL_ERRORS

__all__ = ["ActiveLearningLoop", "LoopResult", "ConfigMismatch", "initial_pool_test_split", "run_together"]

#: The loop's own numeric settings.
_SETTINGS = {"batch_size": Integer(1), "n_queries": Integer(0), "retrain_epochs": Optional(Integer(0))}


class ConfigMismatch(DifferentRun):
    """Resuming a checkpoint with a configuration other than the one it was started with.

    Examples
    --------
    >>> import numpy as np
    >>> from gpal import NoisyDataset, NoisyGPClassifier
    >>> from gpal.active import ActiveLearningLoop, SimulatedOracle, initial_pool_test_split
    >>> X = np.random.default_rng(0).normal(size=(60, 2))
    >>> data = NoisyDataset(X=X, X_var=np.full_like(X, 0.01), y=(X[:, 0] > 0).astype(np.int64),
    ...                     class_names=("bll", "fsrq"), feature_names=(), ids=None)
    >>> labelled, pool, test = initial_pool_test_split(data, n_initial=10, n_pool=30, n_test=20, seed=0)
    >>> import tempfile
    >>> folder = tempfile.mkdtemp()
    >>> def loop(batch_size):
    ...     return ActiveLearningLoop(NoisyGPClassifier(num_inducing=5, epochs=2), labelled, pool,
    ...                               SimulatedOracle(data), batch_size=batch_size, n_queries=0,
    ...                               checkpoint_dir=folder, progress=False)
    >>> _ = loop(batch_size=1).run()       # fits the initial model and checkpoints it
    >>> loop(batch_size=3).run()           # the same folder, another configuration
    Traceback (most recent call last):
        ...
    gpal.active.loop.ConfigMismatch: cannot resume ...: it holds a different run (batch_size: 1 -> 3). ...
    """


@dataclass
class LoopResult:
    """What a finished (or resumed-and-finished) loop produced.

    Examples
    --------
    >>> import numpy as np
    >>> from gpal import NoisyDataset, NoisyGPClassifier
    >>> from gpal.active import ActiveLearningLoop, SimulatedOracle, initial_pool_test_split
    >>> X = np.random.default_rng(0).normal(size=(60, 2))
    >>> data = NoisyDataset(X=X, X_var=np.full_like(X, 0.01), y=(X[:, 0] > 0).astype(np.int64),
    ...                     class_names=("bll", "fsrq"), feature_names=(), ids=None)
    >>> labelled, pool, test = initial_pool_test_split(data, n_initial=10, n_pool=30, n_test=20, seed=0)
    >>> loop = ActiveLearningLoop(NoisyGPClassifier(num_inducing=5, epochs=2), labelled, pool,
    ...                           SimulatedOracle(data), test=test, n_queries=0, progress=False)
    >>> result = loop.run()                # no query: the initial fit and its test metrics only
    >>> len(result.labelled_ids), result.queries
    (10, [])
    >>> list(result.metrics.columns)
    ['step', 'n_labelled', 'nll', 'error', 'brier', 'ece', 'mce', 'classwise_ece']
    >>> result.estimator.classes_          # the loop fits on class codes
    array([0, 1])
    """

    labelled_ids: list[str]  # initial labelled set, then queried sources in query order
    queries: list[dict[str, Any]]  # per query: number, ids, scores, proba, labels
    metrics: pd.DataFrame  # one row per step (0 = initial fit): n_labelled and test metrics
    estimator: Any


def initial_pool_test_split(
    dataset: NoisyDataset, n_initial: int, n_pool: int, n_test: int, seed: int = 0
) -> tuple[NoisyDataset, NoisyDataset, NoisyDataset]:
    """Disjoint (initial labelled, pool, test) sets drawn without replacement from one seeded permutation.

    Returns
    -------
    initial, pool, test : NoisyDataset
        Disjoint subsets of ``dataset`` of the requested sizes.
    """
    check_values(dict.fromkeys(("n_initial", "n_pool", "n_test"), Integer(1)),
                 {"n_initial": n_initial, "n_pool": n_pool, "n_test": n_test})
    if n_initial + n_pool + n_test > dataset.n_samples:
        raise ValueError(
            f"{n_initial} initial + {n_pool} pool + {n_test} test = {n_initial + n_pool + n_test} rows, "
            f"but the data set has only {dataset.n_samples}"
        )
    perm = np.random.default_rng(seed).permutation(dataset.n_samples)
    cuts = np.cumsum([n_initial, n_pool, n_test])
    return tuple(dataset.subset(np.sort(part)) for part in np.split(perm[: cuts[-1]], cuts[:-1]))


def _checked_outcomes(outcomes: Mapping[str, str | None] | None, class_names: Sequence[str]) -> dict[str, str | None]:
    """The outcomes as a dict, each mapped to a class or None; a clear error for one that is a class or maps to none."""
    out = dict(outcomes or {})
    for label, trained_as in out.items():
        if not isinstance(label, str) or not label:
            raise ValueError(f"an outcome must be a non-empty label; got {label!r}")
        if label in class_names:
            raise ValueError(f"outcome {label!r} is already one of the classes {list(class_names)}")
        if trained_as is not None and trained_as not in class_names:
            raise ValueError(f"outcome {label!r} maps to {trained_as!r}, which is not one of the classes "
                             f"{list(class_names)} (None: recorded, never trained on)")
    return out


def _check_disjoint(named: dict[str, NoisyDataset]) -> None:
    for name, ds in named.items():
        ids = ds.ids.tolist()
        if len(set(ids)) != len(ids):
            dup = sorted({i for i in ids if ids.count(i) > 1})
            raise ValueError(f"{name} set has duplicated source ids, e.g. {dup[:5]}")
    names = list(named)
    for a in range(len(names)):
        for b in range(a + 1, len(names)):
            common = sorted(set(named[names[a]].ids.tolist()) & set(named[names[b]].ids.tolist()))
            if common:
                raise ValueError(
                    f"{names[a]} and {names[b]} sets share {len(common)} source(s), e.g. {common[:5]}; "
                    "they must be disjoint"
                )


class ActiveLearningLoop:
    """Pool-based active learning for any gpal classifier with ``fit``/``predict_proba``/``save``/``load``.

    Parameters
    ----------
    estimator
        unfitted classifier; cloned, never modified.  Its own ``epochs`` train
        the initial model; ``retrain_epochs`` (if given) every retraining after a query.
    labelled
        the initial labelled ``NoisyDataset``; its ``class_names`` are the classes.
    pool
        unlabelled candidates (its ``y``, if any, is ignored: labels come from the oracle).
    oracle
        ``oracle(query, queried, scores, proba, class_names) -> class names``
        (see `gpal.active.oracles`); given ``outcomes``, it is also passed ``outcomes=``
        (the labels it may answer beyond the classes).
    test
        labelled test set scored after every step (error, NLL, ECE, ...); optional.
    acquisition
        an `Acquisition`, its name or its config dict (default
        `gpal.registry.FOLLOW_UP_ACQUISITION`, BALD: it scores what a label can teach the model).
    batch_size, n_queries
        sources per query and number of queries.  ``n_queries`` may
        be raised when resuming, to ask for more labels.
    warm_start
        retrain from the previous solution (needs a ``warm_start`` parameter).
    checkpoint_dir
        where the state lives; an existing checkpoint is resumed.
    outcomes
        labels a follow-up may give beyond the classes, each mapped to the class it is
        trained on (e.g. ``{"psr": "pulsar", "snr": "other"}``) or to None: recorded, out of the
        pool, never trained on (another population the model has no class for, or
        `gpal.active.oracles.NOTHING_FOUND`).  None: only the classes.
    callback
        ``callback(query, metrics_row)`` after each checkpointed query.

    Examples
    --------
    >>> import numpy as np
    >>> from gpal import NoisyDataset, NoisyGPClassifier
    >>> from gpal.active import ActiveLearningLoop, SimulatedOracle, initial_pool_test_split
    >>> X = np.random.default_rng(0).normal(size=(60, 2))
    >>> data = NoisyDataset(X=X, X_var=np.full_like(X, 0.01), y=(X[:, 0] > 0).astype(np.int64),
    ...                     class_names=("bll", "fsrq"), feature_names=(), ids=None)
    >>> labelled, pool, test = initial_pool_test_split(data, n_initial=10, n_pool=30, n_test=20, seed=0)
    >>> loop = ActiveLearningLoop(NoisyGPClassifier(num_inducing=5, epochs=2), labelled, pool,
    ...                           SimulatedOracle(data), test=test, acquisition="entropy",
    ...                           batch_size=2, n_queries=2, progress=False)
    >>> result = loop.run()
    >>> result.metrics["n_labelled"].tolist()      # after the initial fit and each query
    [10, 12, 14]
    >>> [len(q["ids"]) for q in result.queries], len(result.labelled_ids)
    ([2, 2], 14)
    """

    def __init__(
        self,
        estimator: Any,
        labelled: NoisyDataset,
        pool: NoisyDataset,
        oracle: Callable[..., Sequence[str]],
        test: NoisyDataset | None = None,
        acquisition: str | dict[str, Any] | Acquisition = FOLLOW_UP_ACQUISITION,
        batch_size: int = 1,
        n_queries: int = 10,
        retrain_epochs: int | None = None,
        warm_start: bool = True,
        checkpoint_dir: str | Path | None = None,
        n_bins: int = 15,
        progress: bool = True,
        callback: Callable[[int, dict[str, Any]], None] | None = None,
        outcomes: Mapping[str, str | None] | None = None,
    ):
        check_values(_SETTINGS, {"batch_size": batch_size, "n_queries": n_queries, "retrain_epochs": retrain_epochs})
        if not isinstance(labelled, NoisyDataset) or not labelled.is_labelled:
            raise TypeError("labelled must be a labelled NoisyDataset (the initial training set)")
        if not isinstance(pool, NoisyDataset):
            raise TypeError(f"pool must be a NoisyDataset; got {type(pool).__name__}")
        if pool.feature_names != labelled.feature_names:
            raise ValueError(f"pool features {list(pool.feature_names)} differ from the labelled set's "
                             f"{list(labelled.feature_names)}")
        if test is not None:
            if not test.is_labelled or test.class_names != labelled.class_names:
                raise ValueError(f"test must be labelled with the classes of the labelled set "
                                 f"{list(labelled.class_names)}")
            if test.feature_names != labelled.feature_names:
                raise ValueError(f"test features {list(test.feature_names)} differ from the labelled set's")
        _check_disjoint({"labelled": labelled, "pool": pool, **({"test": test} if test is not None else {})})
        if batch_size * n_queries > pool.n_samples:
            raise ValueError(
                f"the pool has {pool.n_samples} source(s) but {n_queries} queries of batch_size {batch_size} need "
                f"{batch_size * n_queries}: the pool is smaller than the batches; lower n_queries or batch_size"
            )
        params = estimator.get_params(deep=False)
        if warm_start and "warm_start" not in params:
            raise ValueError(f"{type(estimator).__name__} has no warm_start parameter; pass warm_start=False "
                             "to retrain from scratch after every query")
        if retrain_epochs is not None and "epochs" not in params:
            raise ValueError(f"{type(estimator).__name__} has no epochs parameter, so retrain_epochs cannot be set")
        for method in ("save", "load"):
            if not callable(getattr(estimator, method, None)):
                raise TypeError(f"{type(estimator).__name__} has no {method}(); the loop checkpoints models with it")
        self.estimator = estimator
        self.labelled, self.pool, self.test, self.oracle = labelled, pool, test, oracle
        self.acquisition = make_acquisition(acquisition)
        self.acquisition.bind_classes(labelled.class_names)  # the estimator is fitted on their codes
        self.batch_size, self.n_queries = int(batch_size), int(n_queries)
        self.retrain_epochs, self.warm_start = retrain_epochs, bool(warm_start)
        self.checkpoint_dir = None if checkpoint_dir is None else Path(checkpoint_dir)
        self.checkpoint = Checkpoint(self.checkpoint_dir)
        self.n_bins, self.progress, self.callback = n_bins, progress, callback
        self.class_names = labelled.class_names
        self.outcomes = _checked_outcomes(outcomes, self.class_names)

    # ---------------------------------------------------------------- config
    def config(self) -> dict[str, Any]:
        """Everything that decides the result; a resumed run must match it.

        Not part of it: ``n_queries`` (raise it to ask for more labels) and the oracle
        (a fixed or replaced oracle may answer the pending query; its labels are checked).

        Returns
        -------
        dict
            Estimator identity, acquisition config, loop settings, classes and data fingerprints.
        """
        return {
            **({"outcomes": dict(sorted(self.outcomes.items()))} if self.outcomes else {}),
            "estimator": estimator_identity(self.estimator),
            "acquisition": self.acquisition.config(),
            "batch_size": self.batch_size,
            "retrain_epochs": self.retrain_epochs,
            "warm_start": self.warm_start,
            "n_bins": self.n_bins,
            "class_names": list(self.class_names),
            "data": {
                "labelled": dataset_hashes(self.labelled, labels=True),
                "pool": dataset_hashes(self.pool, labels=False),
                "test": None if self.test is None else dataset_hashes(self.test, labels=True),
            },
        }

    def _check_resume(self, stored: dict[str, Any]) -> None:
        check_same_run(stored, self.config(), f"cannot resume {self.checkpoint_dir}",
                       "Use the original configuration to resume, or a new checkpoint_dir to start afresh.",
                       ConfigMismatch)

    # ----------------------------------------------------------------- state
    def _labelled_now(self, state: dict[str, Any]) -> NoisyDataset:
        """Initial labelled set plus every answered query's sources of a trained class (an outcome counts as the class
        it maps to; one mapped to None is left out), in query order (aux columns dropped: not features)."""
        parts = [replace(self.labelled, aux={})]
        code = {c: k for k, c in enumerate(self.class_names)}
        trained_as = {**{c: c for c in self.class_names}, **self.outcomes}
        for q in state["queries"]:
            kept = [(i, trained_as[label]) for i, label in zip(q["ids"], q["labels"]) if trained_as[label] is not None]
            if kept:
                rows = self.pool.by_ids([i for i, _ in kept])
                y = np.array([code[c] for _, c in kept], dtype=np.int64)
                parts.append(replace(rows, y=y, class_names=self.class_names, aux={}))
        return NoisyDataset.concatenate(parts)

    def _remaining_pool(self, state: dict[str, Any]) -> NoisyDataset:
        taken = {i for q in state["queries"] for i in q["ids"]}
        return self.pool.subset(np.array([i not in taken for i in self.pool.ids.tolist()], dtype=bool))

    # ------------------------------------------------------------- modelling
    def _proba(self, estimator: Any, ds: NoisyDataset) -> np.ndarray:
        """Predicted probabilities with column c = class code c (classes absent from training get 0)."""
        return proba_by_class(estimator.predict_proba(ds.X, X_var=ds.X_var), estimator.classes_,
                              range(len(self.class_names)))

    def _metrics(self, estimator: Any, step: int, n_labelled: int) -> dict[str, Any]:
        row: dict[str, Any] = {"step": step, "n_labelled": n_labelled}
        if self.test is not None:
            row.update(prediction_metrics(self.test.y, self._proba(estimator, self.test), n_bins=self.n_bins))
        return row

    def _retrain_params(self, estimator: Any) -> None:
        params = {}
        if self.warm_start:
            params["warm_start"] = True
        if self.retrain_epochs is not None:
            params["epochs"] = self.retrain_epochs
        estimator.set_params(**params)

    # ------------------------------------------------------------------- run
    def _resume(self) -> tuple[dict[str, Any], Any] | None:
        """The checkpointed state and model, or None where there is no checkpoint yet."""
        if not self.checkpoint.holds_state():
            return None
        state = read_state(self.checkpoint_dir)
        self._check_resume(state["config"])
        return state, self.checkpoint.load_model(state, type(self.estimator))

    def _initial_state(self, estimator: Any) -> dict[str, Any]:
        """Step 0's state from the model fitted on the initial labelled set, checkpointed."""
        state = new_state(self.config(), self.labelled.ids.tolist(), self._metrics(estimator, 0, self.labelled.n_samples))
        self.checkpoint.save_model(state, estimator, 0)
        return state

    def _ask(self, state: dict[str, Any], estimator: Any, query: int) -> None:
        """Select (or recall the pending) batch for ``query``, get its labels and record them durably."""
        pending = state["pending"]
        if pending is None or pending["query"] != query:
            remaining = self._remaining_pool(state)
            self.acquisition.observe_labelled(self._labelled_now(state).y)
            idx, scores = self.acquisition(estimator, remaining, self.batch_size)
            chosen = remaining.subset(idx)
            pending = {
                "query": query,
                "ids": chosen.ids.tolist(),
                "scores": np.asarray(scores, dtype=np.float64).tolist(),
                "proba": self._proba(estimator, chosen).tolist(),
            }
            state["pending"] = pending
            self.checkpoint.save(state)
        queried = self.pool.by_ids(pending["ids"])
        outcomes = {"outcomes": sorted(self.outcomes)} if self.outcomes else {}
        labels = self.oracle(query, queried, np.asarray(pending["scores"]), np.asarray(pending["proba"]),
                             self.class_names, **outcomes)
        labels = check_labels(labels, pending["ids"], self.class_names, f"oracle (query {query})", sorted(self.outcomes))
        state["queries"].append({**pending, "labels": labels})
        state["pending"] = None
        self.checkpoint.save(state)

    def _record(self, state: dict[str, Any], estimator: Any, query: int) -> dict[str, Any]:
        """Score and checkpoint the model retrained after ``query``; its metrics row."""
        row = self._metrics(estimator, query, self._labelled_now(state).n_samples)
        state["metrics"].append(row)
        self.checkpoint.save_model(state, estimator, query)
        if self.callback is not None:
            self.callback(query, row)
        return row

    def _result(self, state: dict[str, Any], estimator: Any) -> LoopResult:
        return LoopResult(
            labelled_ids=state["initial_ids"] + [i for q in state["queries"] for i in q["ids"]],
            queries=state["queries"],
            metrics=pd.DataFrame(state["metrics"]),
            estimator=estimator,
        )

    def run(self) -> LoopResult:
        """Run (or resume) until ``n_queries`` queries are labelled, trained on and scored.

        Returns
        -------
        LoopResult
            Labelled ids, queries, metrics per step and the last fitted estimator.
        """
        return run_together([self], progress=self.progress)[0]


def run_together(loops: Sequence[ActiveLearningLoop], *, max_models: int = MODELS_PER_BATCH,
                 errors: Literal["raise", "return"] = "raise", progress: bool = False) -> list[Any]:
    """Run (or resume) ``loops`` in lock step, retraining the models of one query together.

    A grid of learning curves (strategies x repetitions x noise levels) retrains one small
    model per curve and query; where the loops' estimators can share a training step
    (`gpal.estimators.batched.fit_batched`: ``NoisyGPClassifier``s of one family and training
    setting, on training sets of one size), each query's retrainings are one batched fit of up
    to ``max_models`` models, the rest are fitted one at a time.  Each loop keeps its own
    checkpoint, acquisition and oracle, and resumes where it stopped; loops resumed at different
    queries advance the furthest behind first until they are level.  A loop fitted alone
    follows exactly the path of its own ``run``; fitted with others, its models equal that
    path's up to floating-point rounding, which an acquisition's ranking may amplify over
    many queries.

    Returns
    -------
    One ``LoopResult`` per loop, in order; with ``errors="return"`` a loop that failed (its
    fit, acquisition or oracle raised) gives its exception instead and the others go on.
    """
    from gpal.progress import progress_bar

    check_values({"max_models": Integer(1), "errors": OneOf(PER_MODEL_ERRORS)}, {"max_models": max_models, "errors": errors})
    out: list[Any] = [None] * len(loops)
    running: dict[int, tuple[dict[str, Any], Any]] = {}

    def failed(k: int, exc: Exception) -> None:
        if errors == "raise":
            raise exc
        out[k] = exc
        running.pop(k, None)

    fresh = {}
    for k, loop in enumerate(loops):
        try:
            resumed = loop._resume()
        except Exception as exc:  # noqa: BLE001 - reported per loop
            failed(k, exc)
            continue
        if resumed is None:
            fresh[k] = clone(loop.estimator)
        else:
            running[k] = resumed
    for k, exc in _fit_together({k: (est, loops[k].labelled) for k, est in fresh.items()}, max_models).items():
        failed(k, exc)
    for k, est in fresh.items():
        if out[k] is None:
            running[k] = (loops[k]._initial_state(est), est)
    for k, (_, est) in running.items():
        loops[k]._retrain_params(est)

    total = sum(loops[k].n_queries for k in running)
    done = sum(min(len(state["metrics"]) - 1, loops[k].n_queries) for k, (state, _) in running.items())
    with progress_bar(total=total, initial=done, disable=not progress, unit="query",
              desc=f"active learning ({', '.join(dict.fromkeys(loop.acquisition.name for loop in loops))})") as bar:
        while True:
            waiting = {k: len(state["metrics"]) for k, (state, _) in running.items()
                       if len(state["metrics"]) <= loops[k].n_queries}
            if not waiting:
                break
            # The loops furthest behind go first, so resumed loops catch up and then train together.
            due = {k: query for k, query in waiting.items() if query == min(waiting.values())}
            for k, query in due.items():
                state, est = running[k]
                if len(state["queries"]) < query:
                    try:
                        loops[k]._ask(state, est, query)
                    except Exception as exc:  # noqa: BLE001 - reported per loop
                        failed(k, exc)
            retrain = {k: (running[k][1], loops[k]._labelled_now(running[k][0])) for k in due if k in running}
            for k, exc in _fit_together(retrain, max_models).items():
                failed(k, exc)
            for k in retrain:
                if k in running:
                    row = loops[k]._record(running[k][0], running[k][1], due[k])
                    bar.update(1)
                    if "error" in row:
                        bar.set_postfix(error=f"{row['error']:.3f}", refresh=False)
    for k, (state, est) in running.items():
        out[k] = loops[k]._result(state, est)
    return out


def _fit_together(work: dict[int, tuple[Any, NoisyDataset]], max_models: int) -> dict[int, Exception]:
    """Fit each ``work[k] = (estimator, data)``, together where they can share a step; the failures by k.

    An interrupted fit (Ctrl-C) raises ``FitInterrupted`` for all: the checkpoints hold the last
    finished step.
    """
    from gpal.estimators.batched import NotBatchable, fit_batched  # TensorFlow, only when fitting

    kept = "the checkpoint holds the last finished step"
    failures: dict[int, Exception] = {}
    if len(work) > 1:
        try:
            fitted = fit_batched([est for est, _ in work.values()], [(d.X, d.y, d.X_var) for _, d in work.values()],
                                 max_models=max_models, errors="return")
        except NotBatchable:
            fitted = None
        if fitted is not None:
            for k, result in zip(work, fitted):
                if isinstance(result, Exception):
                    failures[k] = result
                else:
                    raise_if_interrupted(result, kept)
            return failures
    for k, (estimator, data) in work.items():
        try:
            estimator.fit(data.X, data.y, X_var=data.X_var)
        except Exception as exc:  # noqa: BLE001 - reported per loop
            failures[k] = exc
            continue
        raise_if_interrupted(estimator, kept)
    return failures

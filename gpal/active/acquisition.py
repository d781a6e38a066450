"""Acquisition functions: which pool sources are most worth a (costly) label.

Every acquisition is a small callable with modAL's query-strategy signature::

    indices, scores = strategy(model, X_pool, n_instances=1)

so the same object drives gpal's own loop (`gpal.active.loop`) and modAL's
``ActiveLearner``.  ``model`` is any gpal classifier (or a modAL learner wrapping
one); ``X_pool`` is a ``NoisyDataset`` (features and their variances travel
together), a plain (n, d) array, or the ``[X | X_var]`` array of
`gpal.active.modal`.  ``scores`` are those of the chosen rows, larger = more
informative, in the order chosen.

Batches: ``batch="top_k"`` takes the k best scores; ``batch="diverse"`` picks
greedily, damping each candidate's score by its similarity to the rows already
chosen, so a batch does not spend k labels on k near-copies of one source;
``batch="stochastic"`` draws k without replacement with probability proportional
to score^beta (power acquisition, Kirsch et al. 2023), which spreads a batch over
the many nearly-as-good sources instead of one region of input space.
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np

from gpal.constraints import Boolean, Integer, OneOf, Optional, Real, Text
from gpal.data.dataset import NoisyDataset
from gpal.estimators.base import entropy
from gpal.estimators.settings import Setting, parameter_docs
from gpal.evaluation.prior_shift import estimate_target_prior
from gpal.identity import digest
from gpal.registry import ACQUISITIONS

__all__ = [
    "Acquisition",
    "PredictiveEntropy",
    "RandomSampling",
    "BALD",
    "EPIG",
    "epig_scores",
    "Discovery",
    "expected_yield",
    "Margin",
    "LeastConfidence",
    "ACQUISITIONS",
    "acquisition_settings",
    "make_acquisition",
    "top_k",
    "greedy_diverse",
    "power_sample",
]

_BATCH_RULES = ("top_k", "diverse", "stochastic")
#: At least two draws: the spread of one draw is no spread.
_DRAWS = Integer(2)


def _estimator(model: Any) -> Any:
    """The classifier behind a modAL learner (which passes itself to the strategy), else the model."""
    return getattr(model, "estimator", model)


def _pool_features(model: Any, X_pool: Any) -> np.ndarray:
    """Features only (no variances) of a pool given as a NoisyDataset, a [X | X_var] array or plain X."""
    if isinstance(X_pool, NoisyDataset):
        return X_pool.X
    split = getattr(_estimator(model), "split_inputs", None)
    if split is not None:
        return split(X_pool)[0]
    return np.asarray(X_pool, dtype=np.float64)


def _pool_size(X_pool: Any) -> int:
    """Rows of a pool given as a NoisyDataset or an array."""
    return len(X_pool) if isinstance(X_pool, NoisyDataset) else np.shape(X_pool)[0]


def _predict_proba(model: Any, X_pool: Any) -> np.ndarray:
    """Predictive class probabilities (n, C) of the pool, with its variances when it has them."""
    if isinstance(X_pool, NoisyDataset):
        return np.asarray(_estimator(model).predict_proba(X_pool.X, X_var=X_pool.X_var), dtype=np.float64)
    return np.asarray(model.predict_proba(X_pool), dtype=np.float64)


def _sample_proba(model: Any, X_pool: Any, n_samples: int, joint: bool = False, **options: Any) -> np.ndarray:
    """p(y | f_s) for draws of latent functions (and inputs), (S, n, C): the epistemic spread.

    ``joint``: draws shared by every row and call (``sample_joint_proba``), for scores that
    relate one source's label to another's; otherwise ``sample_proba``'s per-row draws.
    ``options`` go to that method.
    """
    est = _estimator(model)
    method = "sample_joint_proba" if joint else "sample_proba"
    if not callable(getattr(est, method, None)):
        raise TypeError(
            f"this acquisition needs a model with {method}(X, X_var, n_samples) (e.g. NoisyGPClassifier); "
            f"{type(est).__name__} has none"
        )
    sample = getattr(est, method)
    if isinstance(X_pool, NoisyDataset):
        samples = sample(X_pool.X, X_var=X_pool.X_var, n_samples=n_samples, **options)
    else:
        samples = sample(X_pool, n_samples=n_samples, **options)
    return np.asarray(samples, dtype=np.float64)


def top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k largest scores, best first; ties go to the lower index (deterministic).

    Returns
    -------
    numpy.ndarray
        (k,) row indices.
    """
    scores = np.asarray(scores, dtype=np.float64)
    return np.argsort(-scores, kind="stable")[:k]


def greedy_diverse(scores: np.ndarray, features: np.ndarray, k: int, lengthscale: float | None = None,
                   n_candidates: int | None = None) -> np.ndarray:
    """Greedy batch: repeatedly take argmax of ``score_i * (1 - max_j exp(-|x_i - x_j|^2 / 2 l^2))`` over chosen j.

    Distances are measured on features scaled by the candidates' standard deviation.
    Only the ``n_candidates`` best-scored rows (default max(10 k, 100)) compete, which
    keeps the cost O(n_candidates^2).  ``lengthscale`` defaults to the median pairwise
    distance among candidates.  A chosen row is never chosen again.

    Returns
    -------
    numpy.ndarray
        (k,) row indices, in the order chosen.
    """
    scores = np.asarray(scores, dtype=np.float64)
    if not 1 <= k <= scores.shape[0]:
        raise ValueError(f"cannot pick a batch of {k} from {scores.shape[0]} candidate(s)")
    if (scores < 0).any():
        raise ValueError("greedy_diverse needs non-negative scores (it damps them multiplicatively)")
    m = min(scores.shape[0], n_candidates or max(10 * k, 100))
    cand = top_k(scores, m)
    Z = np.asarray(features, dtype=np.float64)[cand]
    Z = (Z - Z.mean(axis=0)) / np.where(Z.std(axis=0) > 0, Z.std(axis=0), 1.0)
    d2 = np.sum((Z[:, None, :] - Z[None, :, :]) ** 2, axis=-1)
    if lengthscale is None:
        off = d2[np.triu_indices(m, 1)]
        lengthscale = float(np.sqrt(np.median(off))) if off.size and np.median(off) > 0 else 1.0
    similarity = np.exp(-d2 / (2.0 * lengthscale**2))
    closest = np.zeros(m)  # max similarity to anything chosen so far
    available = np.ones(m, dtype=bool)
    chosen = []
    for _ in range(k):
        value = np.where(available, scores[cand] * (1.0 - closest), -np.inf)
        j = int(np.argmax(value))  # first maximum: deterministic
        chosen.append(j)
        available[j] = False
        closest = np.maximum(closest, similarity[j])
    return cand[np.array(chosen, dtype=np.int64)]


def power_sample(scores: np.ndarray, k: int, beta: float, rng: np.random.Generator) -> np.ndarray:
    """k indices drawn without replacement with probability proportional to score^beta, in draw order.

    Gumbel-top-k: the k largest beta log s_i + G_i with G_i standard Gumbel are an ordered draw
    without replacement from p_i proportional to s_i^beta; beta -> infinity is top-k, beta = 0 uniform.
    Zero scores are drawn only after every positive one.

    Returns
    -------
    numpy.ndarray
        (k,) row indices, in draw order.
    """
    scores = np.asarray(scores, dtype=np.float64)
    if not 1 <= k <= scores.shape[0]:
        raise ValueError(f"cannot draw a batch of {k} from {scores.shape[0]} candidate(s)")
    if (scores < 0).any():
        raise ValueError("power_sample needs non-negative scores (it draws proportionally to score^beta)")
    with np.errstate(divide="ignore"):
        keys = beta * np.log(scores) + rng.gumbel(size=scores.shape[0])
    return top_k(np.where(np.isfinite(keys), keys, -np.inf), k)


class Acquisition:
    """Base: subclasses define ``scores(model, X_pool) -> (n,)``; ``__call__`` turns them into a batch.

    ``batch`` is "top_k", "diverse" (see `greedy_diverse`; ``lengthscale`` is passed on to
    it) or "stochastic" (see `power_sample`: ``beta`` is the power, ``batch_seed`` seeds the
    draw together with the pool size, so a resumed loop draws what an uninterrupted one would).

    A subclass that declares its own ``name`` registers itself in `gpal.registry.ACQUISITIONS`
    under it (a built-in must also have its line there, so the names cost no import).

    Examples
    --------
    An acquisition of one's own: ``scores`` is all it writes (without a ``name`` of its
    own it stays out of the registry).

    >>> import numpy as np
    >>> from gpal import NoisyDataset
    >>> from gpal.active import Acquisition
    >>> class FarFromCentre(Acquisition):
    ...     def scores(self, model, X_pool):
    ...         return np.linalg.norm(X_pool.X, axis=1)
    >>> pool = NoisyDataset(X=[[0.0, 0.1], [3.0, 0.0], [0.0, -2.0]], X_var=None, y=None,
    ...                     class_names=(), feature_names=(), ids=None)
    >>> rows, scores = FarFromCentre()(None, pool, n_instances=2)   # (model, pool, batch size), as modAL calls it
    >>> rows, scores
    (array([1, 2]), array([3., 2.]))
    """

    name = "acquisition"
    #: The constraint of each option a subclass adds to the batch rule's (its constructor's keyword
    #: arguments, each documented under "Parameters"): `acquisition_settings` reads them, and with
    #: them the command line and the workflows; `config` records their values.
    _parameters: dict[str, Any] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        undeclared = [option for option in cls._parameters if option not in inspect.signature(cls.__init__).parameters]
        if undeclared:  # the default and the meaning of an option are its constructor argument's
            raise TypeError(f"{cls.__name__} declares options {undeclared} its constructor does not take")
        if "name" in cls.__dict__ and cls.name:
            ACQUISITIONS.register(cls.name, cls)

    def __init__(self, batch: str = "top_k", lengthscale: float | None = None, beta: float = 1.0,
                 batch_seed: int = 0, balance: bool = False):
        self.batch = OneOf(_BATCH_RULES).check("batch", batch)
        self.lengthscale = Optional(Real(0, low_open=True)).check("lengthscale", lengthscale)
        self.beta = Real(0).check("beta", beta)
        self.batch_seed = Integer(0).check("batch_seed", batch_seed)
        self.balance = Boolean().check("balance", balance)
        self._labelled_codes: np.ndarray | None = None

    def _set_options(self, **values: Any) -> None:
        """Each option checked against its declared constraint (`_parameters`) and kept as an attribute."""
        for option, value in values.items():
            setattr(self, option, self._parameters[option].check(option, value))

    def scores(self, model: Any, X_pool: Any) -> np.ndarray:  # pragma: no cover - abstract
        """How much a label of each pool row is worth (``model`` fitted, ``X_pool`` as the module says).

        Returns
        -------
        numpy.ndarray
            (n,) finite scores, one per pool row; larger = more worth a label.
        """
        raise NotImplementedError

    def bind_classes(self, class_names: Any) -> None:
        """Told by a loop that fits its model on class codes which names the codes stand for; most ignore it."""

    def config(self) -> dict[str, Any]:
        """JSON description; equal configs select equal batches (the loop's resume check uses it).

        Returns
        -------
        dict
            ``name``, the batch rule and every declared option (`_parameters`) but those at None.
        """
        config = {"name": self.name, "batch": self.batch, "lengthscale": self.lengthscale}
        if self.batch == "stochastic":  # only then part of what decides a batch
            config.update(beta=self.beta, batch_seed=self.batch_seed)
        if self.balance:
            config["balance"] = True
        options = {option: getattr(self, option) for option in self._parameters}
        return {**config, **{option: value for option, value in options.items() if value is not None}}

    def observe_labelled(self, codes: Any) -> None:
        """Told by a loop, before each query, the class codes of the labelled set (what ``balance`` corrects)."""
        self._labelled_codes = np.asarray(codes, dtype=np.int64)

    def _target_for_prior(self, X_pool: Any) -> Any:
        """The sources whose class mix the labelled set should follow: the pool (subclasses with a target: theirs)."""
        return X_pool

    def class_weights(self, model: Any, X_pool: Any) -> np.ndarray:
        """w_i = sum_c p(c | x_i) pi_t(c) / pi_l(c): how much labelling x_i moves the labelled class mix towards the target's.

        pi_l is the labelled set's class mix (told by ``observe_labelled``; smoothed by one source
        per class), pi_t the target's, estimated from the model's probabilities on the target by
        the EM of Saerens et al. (2002) with pi_l as the training prior
        (`gpal.evaluation.prior_shift`).  Uncertainty sampling piles up the overlapping and rare
        classes, so the retrained model's prior drifts from the population's; weighting the
        scores by w keeps the labelled mix near the target's.  Ones before the loop has said
        anything.

        Returns
        -------
        numpy.ndarray
            (n,) weights w_i, ones before the loop has told the labelled classes.
        """
        n_pool = _pool_size(X_pool)
        if self._labelled_codes is None:
            return np.ones(n_pool)
        classes = np.asarray(_estimator(model).classes_)
        counts = np.array([np.sum(self._labelled_codes == c) for c in classes], dtype=np.float64) + 1.0
        labelled_prior = counts / counts.sum()
        target = self._target_for_prior(X_pool)
        proba = _predict_proba(model, X_pool)
        target_proba = proba if target is X_pool else _predict_proba(model, target)
        target_prior = estimate_target_prior(target_proba, labelled_prior).prior
        return proba @ (target_prior / labelled_prior)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.config().items() if k != "name")
        return f"{type(self).__name__}({args})"

    def __call__(self, model: Any, X_pool: Any, n_instances: int = 1) -> tuple[np.ndarray, np.ndarray]:
        n_instances = Integer(1).check("n_instances", n_instances)
        n_pool = _pool_size(X_pool)
        if n_instances > n_pool:
            raise ValueError(
                f"cannot query {n_instances} source(s) from a pool of {n_pool}: the pool is smaller than the batch"
            )
        scores = np.asarray(self.scores(model, X_pool), dtype=np.float64)
        if scores.shape != (n_pool,) or not np.isfinite(scores).all():
            raise ValueError(f"{self.name} produced scores of shape {scores.shape} (finite: "
                             f"{bool(np.isfinite(scores).all())}); expected ({n_pool},) finite values")
        if self.balance:
            scores = scores * self.class_weights(model, X_pool)
        if self.batch == "top_k":
            idx = top_k(scores, n_instances)
        elif self.batch == "stochastic":
            idx = power_sample(scores, n_instances, self.beta, np.random.default_rng([self.batch_seed, n_pool]))
        else:
            idx = greedy_diverse(scores, _pool_features(model, X_pool), n_instances, self.lengthscale)
        return idx, scores[idx]


class PredictiveEntropy(Acquisition):
    """H[p(y | x, D)]: the paper's criterion (sec. 5.5); total uncertainty, aleatoric included.

    Examples
    --------
    >>> import numpy as np
    >>> from gpal import NoisyDataset, NoisyGPClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2))
    >>> model = NoisyGPClassifier(num_inducing=5, epochs=2).fit(X[:30], np.where(X[:30, 0] > 0, "psr", "bll"))
    >>> pool = NoisyDataset(X=X[30:], X_var=None, y=None, class_names=(), feature_names=(), ids=None)
    >>> from gpal.active import PredictiveEntropy
    >>> rows, scores = PredictiveEntropy()(model, pool, n_instances=3)
    >>> rows.shape, np.allclose(scores, model.predictive_entropy(pool.X[rows]))
    ((3,), True)
    """

    name = "entropy"

    def scores(self, model: Any, X_pool: Any) -> np.ndarray:
        return entropy(_predict_proba(model, X_pool))


class Margin(Acquisition):
    """1 - (p_first - p_second): high when the two most probable classes are close.

    Examples
    --------
    >>> import numpy as np
    >>> from gpal import NoisyDataset, NoisyGPClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2))
    >>> model = NoisyGPClassifier(num_inducing=5, epochs=2).fit(X[:30], np.where(X[:30, 0] > 0, "psr", "bll"))
    >>> pool = NoisyDataset(X=X[30:], X_var=None, y=None, class_names=(), feature_names=(), ids=None)
    >>> from gpal.active import Margin
    >>> rows, scores = Margin()(model, pool, n_instances=3)
    >>> p = np.sort(model.predict_proba(pool.X[rows]), axis=1)
    >>> np.allclose(scores, 1 - (p[:, -1] - p[:, -2]))
    True
    """

    name = "margin"

    def scores(self, model: Any, X_pool: Any) -> np.ndarray:
        p = np.sort(_predict_proba(model, X_pool), axis=1)
        return 1.0 - (p[:, -1] - p[:, -2])


class LeastConfidence(Acquisition):
    """1 - max_c p_c: high when even the best guess is unsure.

    Examples
    --------
    >>> import numpy as np
    >>> from gpal import NoisyDataset, NoisyGPClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2))
    >>> model = NoisyGPClassifier(num_inducing=5, epochs=2).fit(X[:30], np.where(X[:30, 0] > 0, "psr", "bll"))
    >>> pool = NoisyDataset(X=X[30:], X_var=None, y=None, class_names=(), feature_names=(), ids=None)
    >>> from gpal.active import LeastConfidence
    >>> rows, scores = LeastConfidence(batch="diverse")(model, pool, n_instances=3)   # spread over the pool
    >>> np.allclose(scores, 1 - model.predict_proba(pool.X[rows]).max(axis=1))
    True
    """

    name = "least_confidence"

    def scores(self, model: Any, X_pool: Any) -> np.ndarray:
        return 1.0 - _predict_proba(model, X_pool).max(axis=1)


class RandomSampling(Acquisition):
    """Uniform random scores: the baseline every acquisition must beat.

    The draw depends only on ``seed`` and the pool size, not on hidden state, so a
    resumed loop (whose pool has shrunk by exactly the labelled rows) draws what an
    uninterrupted run would have drawn.

    Parameters
    ----------
    seed : the seed of the draw (with the pool size).

    Examples
    --------
    >>> import numpy as np
    >>> from gpal import NoisyDataset
    >>> from gpal.active import RandomSampling
    >>> pool = NoisyDataset(X=np.zeros((10, 1)), X_var=None, y=None, class_names=(), feature_names=(), ids=None)
    >>> first, _ = RandomSampling(seed=3)(None, pool, n_instances=4)   # the model is not asked
    >>> again, _ = RandomSampling(seed=3)(None, pool, n_instances=4)
    >>> first.tolist() == again.tolist(), RandomSampling(seed=3).config()["name"]
    (True, 'random')
    """

    name = "random"
    _parameters = {"seed": Integer(0)}

    def __init__(self, seed: int = 0, **batching: Any):
        super().__init__(**batching)
        self._set_options(seed=seed)

    def scores(self, model: Any, X_pool: Any) -> np.ndarray:
        n_pool = _pool_size(X_pool)
        return np.random.default_rng([self.seed, n_pool]).random(n_pool)


class _Targeted:
    """The column of a target class (``self.target``, a class name) in a model's probabilities."""

    target: str | None
    _code: int | None = None  # the target's class code, once a loop says what its codes mean

    def bind_classes(self, class_names: Any) -> None:
        """The model is fitted on codes of ``class_names`` (as the active-learning loop does): find the target's code."""
        if self.target is None:
            return
        names = [str(c) for c in class_names]
        if self.target not in names:
            raise ValueError(f"{self.name} target {self.target!r} is not one of the classes {names}")
        self._code = names.index(self.target)

    def column(self, model: Any) -> int | None:
        """The target's column in the model's probabilities (None: the model has not seen the target class yet).

        Returns
        -------
        int or None
            The column index, or None.
        """
        classes = list(getattr(_estimator(model), "classes_", ()))
        names = [str(c) for c in classes]
        if self.target in names:
            return names.index(self.target)
        if self._code is None:
            raise ValueError(f"{self.name} target {self.target!r} is not a class of the model; its classes are {names}")
        return classes.index(self._code) if self._code in classes else None


class BALD(_Targeted, Acquisition):
    """Mutual information I[y; f | x~, D] = H[E_s p(y | f_s)] - E_s H[p(y | f_s)] (Houlsby et al. 2011).

    Only the epistemic part of the uncertainty: a source whose label is noisy whatever the
    model (inputs in an overlap region) scores low.  The draws f_s are draws of the source's
    latent marginals (the residual beyond the inducing points counts: a label settles it too),
    each averaged over ``input_draws`` draws of the noiseless inputs where the model samples
    them, so a source's large error bars count as noise, not as disagreement a label could
    settle.  Needs ``sample_proba(X, X_var, n_samples, input_draws)``, as ``NoisyGPClassifier``
    has; the draws are seeded by the model's ``random_state``, so repeated calls agree.

    With a ``target`` class (e.g. ``"pulsar"``) the label asked about is only "target or not":
    y is replaced by [y = target], whose probabilities are (p_target, 1 - p_target), so a source
    scores high where a label would settle whether it is of the target class, not where it
    would tell two other classes apart.  A model that has not seen the target scores 0.

    Parameters
    ----------
    n_samples : Monte Carlo draws of the latent functions per pool source (cost grows linearly).
    input_draws : draws of the noiseless inputs each latent draw is averaged over.
    target : the class a label should teach about, as gpal classify --target (None: every class).

    Examples
    --------
    >>> import numpy as np
    >>> from gpal import NoisyDataset, NoisyGPClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2))
    >>> model = NoisyGPClassifier(num_inducing=5, epochs=2).fit(X[:30], np.where(X[:30, 0] > 0, "psr", "bll"))
    >>> pool = NoisyDataset(X=X[30:], X_var=None, y=None, class_names=(), feature_names=(), ids=None)
    >>> from gpal.active import BALD
    >>> rows, scores = BALD(n_samples=20, input_draws=4)(model, pool, n_instances=3)
    >>> rows.shape, bool((scores >= 0).all()), bool(np.all(np.diff(scores) <= 0))   # best first
    ((3,), True, True)
    """

    name = "bald"
    _parameters = {"n_samples": _DRAWS, "input_draws": Integer(1), "target": Optional(Text())}

    def __init__(self, n_samples: int = 100, input_draws: int = 16, target: str | None = None, **batching: Any):
        super().__init__(**batching)
        self._set_options(n_samples=n_samples, input_draws=input_draws, target=target)

    def scores(self, model: Any, X_pool: Any) -> np.ndarray:
        c = None if self.target is None else self.column(model)
        if self.target is not None and c is None:  # the model has not seen the target: p_target = 0, nothing to learn
            return np.zeros(_pool_size(X_pool))
        samples = _sample_proba(model, X_pool, self.n_samples, input_draws=self.input_draws)
        if c is not None:
            samples = np.stack([samples[..., c], 1.0 - samples[..., c]], axis=-1)
        mi = entropy(samples.mean(axis=0)) - entropy(samples).mean(axis=0)
        return np.maximum(mi, 0.0)  # >= 0 exactly; tiny negatives are round-off


def epig_scores(pool_draws: np.ndarray, target_draws: np.ndarray, max_bytes: int = 2**26) -> np.ndarray:
    """Expected predictive information gain of each pool row about the target rows (Bickford Smith et al. 2023).

    ``pool_draws`` (S, N, C) and ``target_draws`` (S, M, C) are p(y | x, draw s) for S joint
    posterior draws (the same draws for both).  With p(y, y*) = mean_s p_s(y | x) p_s(y* | x*),
    EPIG(x) = mean over targets x* of I[y; y*] = H[y] + H[y*] - H[y, y*]: how much labelling x
    is expected to tell about the labels of the sources we want to classify.  Pool rows are
    taken in chunks so that the (rows, M, C, C) joint stays below ``max_bytes``.

    Returns
    -------
    numpy.ndarray
        (N,) EPIG per pool row, >= 0.
    """
    P, Q = np.asarray(pool_draws, dtype=np.float64), np.asarray(target_draws, dtype=np.float64)
    if P.ndim != 3 or Q.ndim != 3 or P.shape[0] != Q.shape[0] or P.shape[2] != Q.shape[2]:
        raise ValueError(f"pool_draws (S, N, C) and target_draws (S, M, C) must share S and C; got {P.shape}, {Q.shape}")
    S, N, C = P.shape
    M = Q.shape[1]
    target_entropy = entropy(Q.mean(axis=0)).mean()
    Q_flat = Q.reshape(S, M * C)
    rows = max(1, max_bytes // (8 * M * C * C))
    out = np.empty(N)
    for start in range(0, N, rows):
        part = P[:, start : start + rows]  # (S, n, C)
        joint = (part.reshape(S, -1).T @ Q_flat / S).reshape(-1, C, M, C)  # (n, C, M, C)
        joint_entropy = -np.sum(joint * np.log(np.maximum(joint, 1e-300)), axis=(1, 3))  # (n, M)
        out[start : start + rows] = entropy(part.mean(axis=0)) + target_entropy - joint_entropy.mean(axis=1)
    return np.maximum(out, 0.0)  # >= 0 exactly; tiny negatives are round-off


class EPIG(Acquisition):
    """Expected predictive information gain: a label's worth is what it tells about the target sources.

    BALD values what a label tells about the model's parameters, wherever in input space that
    is; EPIG (Bickford Smith et al. 2023) values what it tells about the predictions we care
    about: those for ``target``, the sources to be classified (for gpal, the unassociated
    ones).  ``target`` is a ``NoisyDataset`` or an (m, d) array of such sources (their labels
    are never read); None takes the pool itself as the target.  ``n_target`` of them, drawn
    with ``seed`` (a fresh subset whenever the target's size changes), enter each query, and
    ``n_samples`` joint posterior draws (``sample_joint_proba``) give the joint predictive.
    Cost O(S (N + m) M^2 + N m C^2 S) for N pool and m target rows, M inducing points.

    Parameters
    ----------
    n_target : target sources a label is valued by in each query (drawn at random from more).
    n_samples : joint posterior draws that give the joint predictive.
    seed : the seed of the draw of the target sources.

    Examples
    --------
    >>> import numpy as np
    >>> from gpal import NoisyDataset, NoisyGPClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2))
    >>> model = NoisyGPClassifier(num_inducing=5, epochs=2).fit(X[:30], np.where(X[:30, 0] > 0, "psr", "bll"))
    >>> pool = NoisyDataset(X=X[30:], X_var=None, y=None, class_names=(), feature_names=(), ids=None)
    >>> from gpal.active import EPIG
    >>> targets = rng.normal(size=(20, 2))                  # the sources we want classified
    >>> rows, scores = EPIG(target=targets, n_target=10, n_samples=20)(model, pool, n_instances=2)
    >>> rows.shape, bool((scores >= 0).all())
    ((2,), True)
    """

    name = "epig"
    _parameters = {"n_target": Integer(1), "n_samples": _DRAWS, "seed": Integer(0)}  # target: data, checked below

    def __init__(self, target: Any = None, n_target: int = 200, n_samples: int = 100, seed: int = 0, **batching: Any):
        super().__init__(**batching)
        if target is not None and not isinstance(target, NoisyDataset):
            target = np.asarray(target, dtype=np.float64)
            if target.ndim != 2 or target.shape[0] == 0 or not np.isfinite(target).all():
                raise ValueError(f"target must be a NoisyDataset or a non-empty finite (m, d) array; got shape "
                                 f"{target.shape}")
        self.target = target
        self._set_options(n_target=n_target, n_samples=n_samples, seed=seed)

    def config(self) -> dict[str, Any]:
        """The declared options' config, and the target sources (data, not an option) by their size and digest.

        Returns
        -------
        dict
            `Acquisition.config`'s, with ``target``: None (the pool) or its ``n`` and ``sha256``.
        """
        target = None
        if self.target is not None:
            values = self.target.X if isinstance(self.target, NoisyDataset) else self.target
            variances = self.target.X_var if isinstance(self.target, NoisyDataset) else np.zeros_like(values)
            target = {"n": int(values.shape[0]), "sha256": digest(values, variances)}
        return {**super().config(), "target": target}

    def _target_for_prior(self, X_pool: Any) -> Any:
        return self._target_rows(X_pool)

    def _target_rows(self, X_pool: Any) -> Any:
        target = X_pool if self.target is None else self.target
        m = _pool_size(target)
        if m <= self.n_target:
            return target
        rows = np.sort(np.random.default_rng([self.seed, m]).choice(m, self.n_target, replace=False))
        return target.subset(rows) if isinstance(target, NoisyDataset) else np.asarray(target)[rows]

    def scores(self, model: Any, X_pool: Any) -> np.ndarray:
        draws = lambda rows: _sample_proba(model, rows, self.n_samples, joint=True)  # noqa: E731
        return epig_scores(draws(X_pool), draws(self._target_rows(X_pool)))


class Discovery(_Targeted, Acquisition):
    """Targeted search: rank sources by the probability of being of class ``target``.

    score = p(target | x, D) + ``exploration`` x sd_s p(target | f_s): with ``exploration`` 0 the
    plain ranking a radio search takes from a classifier; above 0 an upper-confidence bound
    that also favours sources whose target probability the model is unsure of (its spread
    over ``n_samples`` joint draws of latent functions and inputs, as BALD uses).
    ``target`` must be one of the model's ``classes_``.  What a batch is expected to yield:
    `expected_yield`.

    Parameters
    ----------
    target : the class searched for, e.g. pulsar.
    exploration : weight of the model's uncertainty about the target probability (0: plain ranking by probability).
    n_samples : joint draws of latent functions and inputs the uncertainty is the spread over.

    Examples
    --------
    >>> import numpy as np
    >>> from gpal import NoisyDataset, NoisyGPClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 2))
    >>> model = NoisyGPClassifier(num_inducing=5, epochs=2).fit(X[:30], np.where(X[:30, 0] > 0, "psr", "bll"))
    >>> pool = NoisyDataset(X=X[30:], X_var=None, y=None, class_names=(), feature_names=(), ids=None)
    >>> from gpal.active import Discovery, expected_yield
    >>> rows, scores = Discovery(target="psr")(model, pool, n_instances=3)   # the likeliest pulsars
    >>> np.allclose(scores, model.predict_proba(pool.X[rows])[:, 1])         # classes_ = ['bll', 'psr']
    True
    >>> sorted(expected_yield(scores))
    ['expected', 'high', 'low', 'n', 'rate', 'sd']
    """

    name = "discovery"
    _parameters = {"target": Text(), "exploration": Real(0), "n_samples": _DRAWS}

    def __init__(self, target: str, exploration: float = 0.0, n_samples: int = 100, **batching: Any):
        super().__init__(**batching)
        self._set_options(target=target, exploration=exploration, n_samples=n_samples)

    def scores(self, model: Any, X_pool: Any) -> np.ndarray:
        c = self.column(model)
        if c is None:  # no labelled source of the target yet: every candidate is as likely as the next
            return np.zeros(_pool_size(X_pool))
        p = _predict_proba(model, X_pool)[:, c]
        if self.exploration == 0:
            return p
        return p + self.exploration * _sample_proba(model, X_pool, self.n_samples)[:, :, c].std(axis=0)


def expected_yield(p_target: Any, level: float = 0.95) -> dict[str, float]:
    """How many of the chosen sources turn out to be of the target class, if the probabilities are calibrated.

    The count is a sum of independent Bernoulli(p_i) (Poisson-binomial): mean sum p_i, variance
    sum p_i (1 - p_i); the interval is the exact central ``level`` interval of that
    distribution, computed by convolution (no normal approximation, so a small batch of
    confident candidates gets an honest, asymmetric range).

    Returns
    -------
    dict
        ``n`` (sources), ``expected`` (sum p_i), ``sd``, ``low`` and ``high`` (the interval's
        integer bounds) and ``rate`` (mean p_i).
    """
    p = np.asarray(p_target, dtype=np.float64).reshape(-1)
    if p.size == 0 or not np.all((p >= 0) & (p <= 1)):
        raise ValueError(f"p_target must be a non-empty array of probabilities in [0, 1]; got {p.size} value(s)")
    Real(0, 1, low_open=True, high_open=True).check("level", level)
    pmf = np.array([1.0])
    for q in p:  # the distribution of the count, one source at a time
        pmf = np.convolve(pmf, [1.0 - q, q])
    cdf = np.cumsum(pmf)
    tail = (1.0 - level) / 2.0
    low = int(np.searchsorted(cdf, tail, side="left"))
    high = int(np.searchsorted(cdf, 1.0 - tail, side="left"))
    return {"n": int(p.size), "expected": float(p.sum()), "sd": float(np.sqrt(np.sum(p * (1.0 - p)))),
            "low": low, "high": min(high, p.size), "rate": float(p.mean())}


def acquisition_settings(name: str) -> dict[str, Setting]:
    """The options acquisition ``name`` adds to the batch rule's, as the command line and the workflows offer them.

    Each joins its declared constraint (``_parameters``), its constructor default
    (``inspect.Parameter.empty`` where it has none) and the first sentence of its "Parameters"
    entry, so an option is declared once, beside its acquisition.

    Returns
    -------
    dict
        Option name -> `gpal.estimators.settings.Setting`; a ValueError names the valid acquisitions.
    """
    if name not in ACQUISITIONS:
        raise ValueError(f"unknown acquisition {name!r}; choose one of {sorted(ACQUISITIONS)}")
    cls = ACQUISITIONS[name]
    defaults = inspect.signature(cls.__init__).parameters
    docs = parameter_docs(cls)
    return {option: Setting(constraint, defaults[option].default, docs.get(option, ""))
            for option, constraint in cls._parameters.items()}


def make_acquisition(spec: str | dict[str, Any] | Acquisition) -> Acquisition:
    """An acquisition from its name, its ``config()`` dict, or itself.

    Returns
    -------
    Acquisition
        A new acquisition (``spec`` itself if it is one); a ValueError names the valid names, or the options
        ``name`` takes; a value out of its declared range is a `gpal.constraints.InvalidParameter`.
    """
    if isinstance(spec, Acquisition):
        return spec
    params = {"name": spec} if isinstance(spec, str) else dict(spec)
    name = params.pop("name", None)
    if name not in ACQUISITIONS:
        raise ValueError(f"unknown acquisition {name!r}; choose one of {sorted(ACQUISITIONS)}")
    unknown = sorted(set(params) - set(inspect.signature(ACQUISITIONS[name].__init__).parameters) - {"self"}
                     - set(inspect.signature(Acquisition.__init__).parameters))
    if unknown:  # a config written by hand (a workflow file): bad input, named
        raise ValueError(f"acquisition {name!r} takes no options {unknown}; it takes "
                         f"{sorted(acquisition_settings(name))} and the batch rule's")
    return ACQUISITIONS[name](**params)

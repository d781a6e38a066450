"""Acquisition functions: which pool sources are most worth a (costly) label.

Every acquisition is a small callable with modAL's query-strategy signature::

    indices, scores = strategy(model, X_pool, n_instances=1)

so the same object drives gpal's own loop (`gpal.active.loop`) and modAL's
``ActiveLearner``.  ``model`` is any gpal classifier (or a modAL learner wrapping
one); ``X_pool`` is a ``NoisyDataset`` (features and their variances travel
together), a plain (n, d) array, or the ``[X | X_var]`` array of
`gpal.active.modal`.  ``scores`` are those of the chosen rows, larger = more
informative, in the order chosen.

Here: the built-in acquisitions (each registered under its ``name`` in
`gpal.registry.ACQUISITIONS`) and what they compute.  The base class, its declared options and
`make_acquisition` are `gpal.active.base`'s; the batch rules (``batch="top_k"``, ``"diverse"``,
``"stochastic"``) `gpal.active.batches`'; both are importable from here too.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gpal.active.base import (Acquisition, acquisition_settings, make_acquisition, register_acquisition,
                              unregister_acquisition)
from gpal.active.batches import greedy_diverse, power_sample, top_k
from gpal.active.pool_access import estimator_of, pool_proba, pool_size, sample_pool_proba
from gpal.constraints import Integer, Optional, Real, Text
from gpal.data.dataset import NoisyDataset
from gpal.evaluation.metrics import entropy
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
    "register_acquisition",
    "unregister_acquisition",
    "top_k",
    "greedy_diverse",
    "power_sample",
]

#: At least two draws: the spread of one draw is no spread.
_DRAWS = Integer(2)


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
        return entropy(pool_proba(model, X_pool))


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
        p = np.sort(pool_proba(model, X_pool), axis=1)
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
        return 1.0 - pool_proba(model, X_pool).max(axis=1)


class RandomSampling(Acquisition):
    """Uniform random scores: the baseline every acquisition must beat.

    The draw depends only on ``seed`` and the pool size, not on hidden state, so a
    resumed loop (whose pool has shrunk by exactly the labelled rows) draws what an
    uninterrupted run would have drawn.

    Parameters
    ----------
    seed
        the seed of the draw (with the pool size).

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
        n_pool = pool_size(X_pool)
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
        classes = list(getattr(estimator_of(model), "classes_", ()))
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
    n_samples
        Monte Carlo draws of the latent functions per pool source (cost grows linearly).
    input_draws
        draws of the noiseless inputs each latent draw is averaged over.
    target
        the class a label should teach about, as gpal classify --target (None: every class).

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
            return np.zeros(pool_size(X_pool))
        samples = sample_pool_proba(model, X_pool, self.n_samples, input_draws=self.input_draws)
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
    n_target
        target sources a label is valued by in each query (drawn at random from more).
    n_samples
        joint posterior draws that give the joint predictive.
    seed
        the seed of the draw of the target sources.

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
        m = pool_size(target)
        if m <= self.n_target:
            return target
        rows = np.sort(np.random.default_rng([self.seed, m]).choice(m, self.n_target, replace=False))
        return target.subset(rows) if isinstance(target, NoisyDataset) else np.asarray(target)[rows]

    def scores(self, model: Any, X_pool: Any) -> np.ndarray:
        draws = lambda rows: sample_pool_proba(model, rows, self.n_samples, joint=True)  # noqa: E731
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
    target
        the class searched for, e.g. pulsar.
    exploration
        weight of the model's uncertainty about the target probability (0: plain ranking by probability).
    n_samples
        joint draws of latent functions and inputs the uncertainty is the spread over.

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
            return np.zeros(pool_size(X_pool))
        p = pool_proba(model, X_pool)[:, c]
        if self.exploration == 0:
            return p
        return p + self.exploration * sample_pool_proba(model, X_pool, self.n_samples)[:, :, c].std(axis=0)


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


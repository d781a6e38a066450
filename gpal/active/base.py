"""The acquisition base class: options declared once, and the call that turns scores into a batch.

An acquisition declares each option it adds to the batch rule's once, as a constraint in
``_parameters`` beside its constructor argument (the default) and its "Parameters" entry (the
meaning); its ``config`` (what the loop's resume check compares), `acquisition_settings` (what the
command line and the workflows offer) and `make_acquisition` (an acquisition from its name or
config) are derived from that declaration.
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np

from gpal.active.batches import BATCH_RULES, greedy_diverse, power_sample, top_k
from gpal.active.pool_access import estimator_of, pool_features, pool_proba, pool_size
from gpal.constraints import Boolean, Integer, OneOf, Optional, Real
from gpal.estimators.settings import Setting, parameter_docs
from gpal.evaluation.prior_shift import estimate_target_prior
from gpal.registry import ACQUISITIONS

__all__ = ["Acquisition", "acquisition_settings", "make_acquisition", "register_acquisition", "unregister_acquisition"]


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
        self.batch = OneOf(BATCH_RULES).check("batch", batch)
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
        n_pool = pool_size(X_pool)
        if self._labelled_codes is None:
            return np.ones(n_pool)
        classes = np.asarray(estimator_of(model).classes_)
        counts = np.array([np.sum(self._labelled_codes == c) for c in classes], dtype=np.float64) + 1.0
        labelled_prior = counts / counts.sum()
        target = self._target_for_prior(X_pool)
        proba = pool_proba(model, X_pool)
        target_proba = proba if target is X_pool else pool_proba(model, target)
        target_prior = estimate_target_prior(target_proba, labelled_prior).prior
        return proba @ (target_prior / labelled_prior)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.config().items() if k != "name")
        return f"{type(self).__name__}({args})"

    def __call__(self, model: Any, X_pool: Any, n_instances: int = 1) -> tuple[np.ndarray, np.ndarray]:
        n_instances = Integer(1).check("n_instances", n_instances)
        n_pool = pool_size(X_pool)
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
            idx = greedy_diverse(scores, pool_features(model, X_pool), n_instances, self.lengthscale)
        return idx, scores[idx]


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


def register_acquisition(name: str, cls: type, *, replace: bool = False) -> None:
    """Make the acquisition ``cls`` (a subclass of `Acquisition`) known as ``name`` to ``gpal active``, the
    learning-curve workflows and `make_acquisition`, from a user's own code.

    ``name`` becomes the class's ``name`` (what its ``config()`` and a resumed loop's check hold).  A name
    already registered is refused unless ``replace``; a built-in cannot be unregistered, but can be replaced.

    Examples
    --------
    >>> import numpy as np
    >>> from gpal.active import Acquisition, make_acquisition, register_acquisition, unregister_acquisition
    >>> class FarFromCentre(Acquisition):
    ...     def scores(self, model, X_pool):
    ...         return np.linalg.norm(X_pool.X, axis=1)
    >>> register_acquisition("far_from_centre", FarFromCentre)
    >>> make_acquisition("far_from_centre").config()["name"]
    'far_from_centre'
    >>> unregister_acquisition("far_from_centre")
    """
    ACQUISITIONS.register_named(name, cls, Acquisition, replace=replace)


def unregister_acquisition(name: str) -> None:
    """Forget an acquisition a user registered; a built-in one stays."""
    ACQUISITIONS.unregister(name)

"""The pool prior (``gpal classify`` and ``gpal predict``, off by default; ``--pool-prior`` turns it on): the
unassociated sources' probabilities moved to their own class mix.

A model trained on associated sources carries their class mix into its probabilities; the unassociated
sources it classifies are mixed otherwise (many more pulsars).  Their mix is estimated from the model's
probabilities alone by the EM of Saerens, Latinne & Decaestecker (2002; `gpal.evaluation.prior_shift`), and
their probabilities are moved to it.  Nothing is refitted and no label is used, so the held-out check is
unchanged.  Only the unassociated group moves (`MOVED_GROUPS`): a bcu already carries what the catalog knows
of it through the bcu rule (`gpal.catalogs.known_classes`), so a second prior on the bcu would count that
knowledge twice; the unassociated sources have no such knowledge.  Every other group keeps the model's
probabilities, and `gpal.catalog_jobs.layout.POOL_PRIOR_FILE` records it as left as given.

The shares EM estimates are those of the blazar and pulsar classes (`ESTIMATED_CODES`); a class of the sky's
other populations (an ``other`` class: remnants, binaries, star-forming regions, clusters ...) keeps its training
share.  Why: those populations are the faint, soft sources the unassociated ones resemble most, so the covariate
shift draws EM's estimate towards them: on 4FGL-DR4, left free, it drew nearly all the unassociated sources into
``other``, where FL16Y later classed few of them (docs/results.md, "The open sky").

Why off: with the open sky's ``other`` class among the trained classes (`gpal.catalogs.schemes.DEFAULT_SCHEME`),
moving the unassociated sources to the mix EM finds makes the lists promise more pulsars and fewer blazars than
later releases found (docs/results.md, "The open sky").  It was on while the model knew three classes
only, where it lowered the later-label NLL (docs/results.md, "The pool prior"): there it stood in for the populations
the model did not know.  Why the unassociated only: measured on later labels (the pool-prior table), where moving the
bcu too loses on three of the five checks.  Caveat: the
unassociated-only form was chosen after seeing the per-group results on those same checks; no release later
than FL16Y exists to test the choice independently.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from gpal.catalog_jobs.main_job_settings import APPLIED_BY_DEFAULT
from gpal.catalog_jobs.proba_columns import proba_columns
from gpal.catalog_jobs.tables import EXTENDED, ClassifiedSources
from gpal.catalogs.classes import UNASSOCIATED, merge_for, source_groups
from gpal.evaluation.metrics import entropy
from gpal.evaluation.prior_shift import estimate_target_prior

__all__ = ["APPLIED_BY_DEFAULT", "ESTIMATED_CODES", "MOVED_GROUPS", "PoolPrior", "adjust_table", "adjust_to_pool",
           "held_classes", "mixes_text", "training_prior"]

#: The groups (`gpal.catalogs.classes.source_groups`) the pool prior moves; every other keeps the model's
#: probabilities.
MOVED_GROUPS = (UNASSOCIATED,)
#: The CLASS1 codes of the classes whose share in a moved group EM estimates; a class holding none keeps its
#: training share.
ESTIMATED_CODES = ("bll", "fsrq", "bcu", "psr", "msp")
#: Rows of probabilities must sum to 1 within this.
_SUM_TOL = 1e-6


@dataclass(frozen=True)
class PoolPrior:
    """The adjusted probabilities, per moved group the mix they were moved to, and the groups left as given."""

    proba: np.ndarray
    #: Class -> share among the training sources (what the model's probabilities carry).
    training_prior: dict[str, float]
    #: Group -> {"n": sources, "prior": class -> estimated share, "n_iter": EM updates, "converged": bool}.
    groups: dict[str, dict[str, Any]]
    #: Group -> {"n": sources} of the groups whose probabilities were left as the model gave them.
    left_as_given: dict[str, dict[str, int]]

    def record(self) -> dict[str, Any]:
        """What `gpal.catalog_jobs.layout.POOL_PRIOR_FILE` holds."""
        return {"training_prior": self.training_prior, "groups": self.groups, "left_as_given": self.left_as_given}


def training_prior(n_per_class: Mapping[str, int], classes: Sequence[str]) -> np.ndarray:
    """The class shares of the training sources (a trained model's ``n_per_class``), in ``classes`` order.

    Returns
    -------
    numpy.ndarray
        (C,) shares summing to 1.
    """
    missing = [c for c in classes if int(n_per_class.get(c, 0)) <= 0]
    if missing:
        raise ValueError(f"the training counts {dict(n_per_class)} have no sources of {missing}; the pool prior needs "
                         "every class's training share")
    counts = np.array([float(n_per_class[c]) for c in classes])
    return counts / counts.sum()


def held_classes(classes: Sequence[str], merge: Mapping[str, Sequence[str]] | None = None) -> np.ndarray:
    """Which ``classes`` (with the CLASS1 codes ``merge`` gives them; None: the default merge) keep their training
    share when a group is moved: those holding none of `ESTIMATED_CODES`.

    Returns
    -------
    numpy.ndarray
        (C,) boolean mask.
    """
    codes = merge_for(list(classes), merge)
    return np.array([not {c.lower() for c in codes.get(name, (name,))} & set(ESTIMATED_CODES) for name in classes])


def adjust_to_pool(proba: np.ndarray, groups: Sequence[Any], prior: np.ndarray, classes: Sequence[str],
                   moved: Sequence[str] | None = MOVED_GROUPS,
                   merge: Mapping[str, Sequence[str]] | None = None) -> PoolPrior:
    """``proba`` (rows summing to 1, made by a model whose training class shares are ``prior``) with the rows of
    each group in ``moved`` (``groups``: one label per row, e.g. `gpal.catalogs.classes.source_groups`) moved to
    that group's own class mix estimated by EM from its rows alone; the other rows are left as given.  ``moved``:
    the pool prior's `MOVED_GROUPS`; None moves every group (the alternative the later-label checks compare it with).
    ``merge``: the CLASS1 codes of each class (`held_classes`: the other populations keep their training share).

    Returns
    -------
    PoolPrior
        The adjusted (n, C) probabilities and each group's estimated mix.
    """
    p = np.asarray(proba, dtype=np.float64)
    labels = np.asarray(groups)
    if p.ndim != 2 or p.shape[1] != len(classes):
        raise ValueError(f"proba must be an (n, {len(classes)}) array, one column per class {list(classes)}; "
                         f"got shape {p.shape}")
    if p.shape[0] == 0:
        raise ValueError("no sources to move to their own class mix: the pool is empty")
    if labels.shape != (p.shape[0],):
        raise ValueError(f"groups must give one label per row of proba ({p.shape[0]}); got shape {labels.shape}")
    sums = p.sum(axis=1)
    off = np.flatnonzero(~(np.abs(sums - 1.0) <= _SUM_TOL))
    if off.size:
        raise ValueError(f"each row of proba must sum to 1 (within {_SUM_TOL:g}); {off.size} do not, e.g. row "
                         f"{off[0]} sums to {sums[off[0]]:.6g}")
    held = held_classes(classes, merge)
    adjusted = p.copy()
    found: dict[str, dict[str, Any]] = {}
    left: dict[str, dict[str, int]] = {}
    for group in dict.fromkeys(labels.tolist()):
        rows = labels == group
        if moved is not None and group not in moved:
            left[str(group)] = {"n": int(rows.sum())}
            continue
        result = estimate_target_prior(p[rows], prior, held=held if held.any() else None)
        adjusted[rows] = result.proba
        found[str(group)] = {"n": int(rows.sum()), "prior": dict(zip(classes, np.round(result.prior, 4).tolist())),
                             "n_iter": int(result.n_iter), "converged": bool(result.converged),
                             "held": [c for c, h in zip(classes, held) if h]}
    return PoolPrior(adjusted, dict(zip(classes, np.round(np.asarray(prior, float), 4).tolist())), found, left)


def mixes_text(groups: Mapping[str, Mapping[str, Any]], digits: int = 2, counts: bool = False) -> str:
    """Each group's estimated mix as text (``PoolPrior.groups``), e.g. "unassociated bll 0.31, fsrq 0.09, pulsar
    0.60; bcu ...", with each group's number of sources where ``counts``: the one wording of the log, the later
    check and the report.

    Returns
    -------
    str
        The groups' mixes, "; "-separated.
    """
    parts = []
    for group, g in groups.items():
        size = f" ({g['n']} sources)" if counts else ""
        parts.append(f"{group}{size} " + ", ".join(f"{c} {v:.{digits}f}" for c, v in g["prior"].items()))
    return "; ".join(parts)


def adjust_table(table: ClassifiedSources, classes: Sequence[str], prior: np.ndarray,
                 merge: Mapping[str, Sequence[str]] | None = None) -> tuple[ClassifiedSources, PoolPrior]:
    """A classified table (`gpal.catalog_jobs.prediction.predict_catalog`) with the probabilities of the
    `MOVED_GROUPS` (by CLASS1) moved to their mix by `adjust_to_pool`, its ``predicted_class`` (extended sources keep theirs) and ``entropy`` with them.

    Returns
    -------
    tuple
        The adjusted table and the `PoolPrior` it came from.
    """
    columns = proba_columns(classes)
    result = adjust_to_pool(table.frame[columns].to_numpy(), source_groups(table.frame["CLASS1"]), prior, classes,
                            merge=merge)
    frame = table.frame.copy()
    frame[columns] = result.proba
    extended = frame["predicted_class"].to_numpy() == EXTENDED
    frame["predicted_class"] = np.where(extended, EXTENDED, np.asarray(classes, dtype=object)[result.proba.argmax(axis=1)])
    frame["entropy"] = entropy(result.proba)
    return ClassifiedSources(frame, {**table.meta, "POOLMIX": mixes_text(result.groups)}), result

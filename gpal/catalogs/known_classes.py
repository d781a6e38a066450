"""What the catalog already knows about a source's class, applied to a classifier's probabilities.

The classifier sees gamma-ray features only.  A catalog label can still narrow the answer: a
``bcu`` is a blazar of uncertain type (its counterpart is a blazar-like radio / infrared source;
Abdollahi et al. 2020, 4FGL, sec. 5.2), so it is almost always a BL Lac or an FSRQ.  Almost: of
the 4FGL (v20) bcu sources that 4FGL-DR4 classifies as bll, fsrq, psr or msp, 3 of 239 became
millisecond pulsars (209 bll, 27 fsrq; `NON_BLAZAR_SHARE`).

The rule is Bayes' with a prior of its own for the group (`KNOWN_GROUPS`), believed as far as the
source's association is.  The blazar prior gives the classes that hold none of the blazar codes the
share `NON_BLAZAR_SHARE` (the blazar classes keep their training proportions between them); each
class's weight ``w`` is its prior for a bcu over its training share, scaled so the blazars' is 1
(`class_weights`).  A bcu source's class c is weighted by ``a * w_c + 1 - a`` and the row
renormalised, ``a`` its counterpart's Bayesian association probability (``ASSOC_PROB_BAY``;
`association_weight`): ``a = 1`` is Bayes' rule with the blazar prior, ``a = 0`` leaves the features'
probabilities (the weights interpolate between the two; a mixture of the priors would differ by the
blazars' own weight, 1.11 for FL16Y, at ``0 < a < 1``).  For the main job (FL16Y: 274 pulsars of 2400) a
bcu with ``a = 1`` has its pulsar probability weighted by about 0.1 against the blazars'.  The weights
depend on the model's training counts and the source's ``a``.  A model whose classes all hold a blazar
code, or none does, leaves the source as it is.

Why ``a``: the bcu label says the counterpart is a blazar, not that the gamma-ray source is its
counterpart.  Five rules (the prior with ``a`` = 1, 0, ``ASSOC_PROB_BAY``, the larger of it and
``ASSOC_PROB_LR``, 0.5) were chosen among on the bcu of 3FGL and 4FGL that 4FGL-DR4 later
classified, then tested on FL16Y's labels: the Bayesian probability gave the lowest NLL in selection and
kept it on the later labels, because a counterpart the Bayesian method doubts is also the one whose label
is least likely to hold for the gamma-ray source (docs/results.md shows the comparison).
"""

from __future__ import annotations

import types
from typing import Any, Mapping, Sequence

import numpy as np

from gpal.catalogs.classes import class1_codes

__all__ = ["BLAZAR_CODES", "KNOWN_GROUPS", "NON_BLAZAR_SHARE", "apply_known_classes", "association_weight",
           "class_weights", "known_class_rule", "outside_group"]

#: CLASS1 codes of blazars, of known type or not.
BLAZAR_CODES = ("bll", "fsrq", "bcu")
#: A bcu's prior probability of a class outside the blazars: 4FGL (v20) bcu that 4FGL-DR4 classifies in the main
#: job's classes, 3 msp of 239 (209 bll, 27 fsrq), counted through the release links (`gpal.catalogs.links`): a
#: bcu is a blazar with a small chance of being something else, and this is how small it was on a later release.
NON_BLAZAR_SHARE = 3 / 239
#: CLASS1 code -> (the codes its sources mostly are, the prior share of the other classes).
KNOWN_GROUPS: Mapping[str, tuple[tuple[str, ...], float]] = types.MappingProxyType(
    {"bcu": (BLAZAR_CODES, NON_BLAZAR_SHARE)})


def _members(classes: Sequence[str], merge: Mapping[str, Sequence[str]], codes: Sequence[str]) -> np.ndarray:
    """Which classes hold one of ``codes``."""
    return np.array([bool({c.lower() for c in merge.get(name, (name,))} & set(codes)) for name in classes])


def class_weights(classes: Sequence[str], merge: Mapping[str, Sequence[str]],
                  n_per_class: Mapping[str, int]) -> dict[str, np.ndarray]:
    """CLASS1 code -> the weight of each class's probability for a source so labelled (the codes the rule changes
    nothing for are left out).

    A class of the group gets (1 - share) / (the group's training share), any other share / (their training share);
    the weights are scaled so that the group's are 1.

    Returns
    -------
    dict of str to numpy.ndarray
        Code -> (C,) positive weights.
    """
    counts = np.array([float(n_per_class[name]) for name in classes])
    prior = counts / counts.sum()
    weights = {}
    for label, (codes, share) in KNOWN_GROUPS.items():
        member = _members(classes, merge, codes)
        if not member.any() or member.all():
            continue
        inside = (1 - share) / prior[member].sum()
        outside = share / prior[~member].sum()
        weights[label] = np.where(member, 1.0, outside / inside)
    return weights


def association_weight(catalog: Any, ids: Sequence[str]) -> np.ndarray:
    """Each source's ``a``, how far the rule believes its label: the Bayesian association probability of its
    counterpart (``ASSOC_PROB_BAY``) in ``catalog`` (a `gpal.catalogs.Catalog`), at the sources named ``ids``.

    Where the Bayesian method gave no probability (NaN) ``a`` is 0, as where it gave 0: the label then rests on
    another method alone.  A catalog without the column (3FGL's layout, or a file that lacks it) gives 1 for every
    source: nothing there says a label is in doubt, so it is taken as given.

    Returns
    -------
    numpy.ndarray
        (len(ids),) floats in [0, 1].
    """
    column = catalog.columns.assoc_prob_bay
    if column is None or column not in catalog.table.colnames:
        return np.ones(len(ids))
    return np.nan_to_num(catalog.values_of("assoc_prob_bay", ids), nan=0.0)


def apply_known_classes(proba: np.ndarray, class1: Sequence[str], weights: Mapping[str, np.ndarray],
                        mc_error: np.ndarray | None = None,
                        association: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """``proba`` (n, C) with each row of a `KNOWN_GROUPS` label weighted and renormalised: class c by
    ``a * w_c + 1 - a`` (``w`` from `class_weights`, ``a`` the row's ``association``, `association_weight`).

    ``association`` (n,) in [0, 1]; None takes every label as given (``a = 1``).  ``mc_error`` (n,), the largest
    Monte Carlo standard error of each row, is scaled to first order (p_i' = v_i p_i / S with v the row's weights:
    its error is about max(v) / S times p_i's, the normaliser's own noise neglected).

    Returns
    -------
    tuple
        The probabilities (n, C) and the scaled errors (None without ``mc_error``).
    """
    proba = np.array(proba, dtype=np.float64, copy=True)
    error = None if mc_error is None else np.array(mc_error, dtype=np.float64, copy=True)
    labels = class1_codes(class1)
    if association is None:
        a = np.ones(labels.size)
    else:
        a = np.asarray(association, dtype=np.float64)
        if a.shape != labels.shape or not np.all((a >= 0) & (a <= 1)):
            raise ValueError(f"association must be one probability in [0, 1] per source ({labels.size}); got shape "
                             f"{a.shape}" + ("" if a.shape != labels.shape else
                                             f" with values {np.unique(a[~((a >= 0) & (a <= 1))])[:5].tolist()}"))
    for label, w in weights.items():
        rows = labels == label
        if not rows.any():
            continue
        believed = a[rows, None]
        row_weights = believed * w + 1 - believed
        weighted = proba[rows] * row_weights
        total = weighted.sum(axis=1, keepdims=True)
        proba[rows] = weighted / total
        if error is not None:
            error[rows] = error[rows] * row_weights.max(axis=1) / total[:, 0]
    return proba, error


def outside_group(class1: Sequence[str], classes: Sequence[str], merge: Mapping[str, Sequence[str]]) -> np.ndarray:
    """Where a source's label puts a class outside its group (a bcu and the pulsar class): what a target list of
    that class leaves out, however probable the features make it.

    Returns
    -------
    numpy.ndarray
        (n, C) booleans.
    """
    labels = class1_codes(class1)
    out = np.zeros((labels.size, len(classes)), dtype=bool)
    for label, (codes, _) in KNOWN_GROUPS.items():
        member = _members(classes, merge, codes)
        if member.any() and not member.all():
            out[labels == label] = ~member
    return out


def known_class_rule(classes: Sequence[str], merge: Mapping[str, Sequence[str]],
                     n_per_class: Mapping[str, int]) -> str | None:
    """The rule in words for a model of ``classes`` (None: it changes nothing for them); ASCII, as FITS headers
    keep it."""
    parts = []
    for label, w in class_weights(classes, merge, n_per_class).items():
        codes, share = KNOWN_GROUPS[label]
        others = [name for name, weight in zip(classes, w) if weight != 1.0]
        parts.append(f"a {label} source is a blazar ({'/'.join(codes)}) with prior probability {1 - share:.3f} as far "
                     "as its association holds: its probability of "
                     f"{', '.join(others)} is weighted by a * {w.min():.3f} + 1 - a against the blazar classes' and "
                     "the row renormalised, a its counterpart's Bayesian association probability (ASSOC_PROB_BAY; "
                     "0 where that method gave none, 1 in a catalog without the column)")
    return "; ".join(parts) or None

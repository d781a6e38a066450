"""What the catalog already knows about a source's class, applied to a classifier's probabilities.

The classifier sees gamma-ray features only.  A catalog label can still narrow the answer: a
``bcu`` is a blazar of uncertain type (its counterpart is a blazar-like radio / infrared source;
Abdollahi et al. 2020, 4FGL, sec. 5.2), so it is almost always a BL Lac or an FSRQ.  Almost: of
the 4FGL (v20) bcu sources that 4FGL-DR4 classifies as bll, fsrq, psr or msp, 3 of 239 became
millisecond pulsars (209 bll, 27 fsrq; `NON_BLAZAR_SHARE`).

The rule is Bayes' with a prior of its own for the group (`KNOWN_GROUPS`): a bcu source's prior
share of the classes that hold none of the blazar codes is `NON_BLAZAR_SHARE` (the blazar classes
keep their training proportions between them), where the model's training set gave them their
training share.  So each class's probability is weighted by (its prior for a bcu) / (its training
share), and the row renormalised: for the main job (FL16Y: 274 pulsars of 2400) the pulsar
probability of a bcu is weighted by about 0.1 against the blazars'.  The weights depend only on the
model's training counts, never on the source.  A model whose classes all hold a blazar code, or none
does, leaves the source as it is.  docs/targets.md measures the rule on later labels (bcu only:
4FGL-DR4 -> FL16Y and 4FGL -> FL16Y).
"""

from __future__ import annotations

import types
from typing import Mapping, Sequence

import numpy as np

from gpal.catalogs.classes import class1_codes

__all__ = ["BLAZAR_CODES", "KNOWN_GROUPS", "NON_BLAZAR_SHARE", "apply_known_classes", "class_weights",
           "known_class_rule", "outside_group"]

#: CLASS1 codes of blazars, of known type or not.
BLAZAR_CODES = ("bll", "fsrq", "bcu")
#: A bcu's prior probability of a class outside the blazars: 4FGL (v20) bcu that 4FGL-DR4 classifies in the main
#: job's classes, 3 msp of 239 (209 bll, 27 fsrq), counted through the release links (`gpal.catalogs.links`).
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


def apply_known_classes(proba: np.ndarray, class1: Sequence[str], weights: Mapping[str, np.ndarray],
                        mc_error: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """``proba`` (n, C) with each row of a `KNOWN_GROUPS` label weighted (`class_weights`) and renormalised.

    ``mc_error`` (n,), the largest Monte Carlo standard error of each row, is scaled to first order
    (p_i' = w_i p_i / S: its error is about w_i / S times p_i's, the normaliser's own noise neglected).

    Returns
    -------
    tuple
        The probabilities (n, C) and the scaled errors (None without ``mc_error``).
    """
    proba = np.array(proba, dtype=np.float64, copy=True)
    error = None if mc_error is None else np.array(mc_error, dtype=np.float64, copy=True)
    labels = class1_codes(class1)
    for label, w in weights.items():
        rows = labels == label
        if not rows.any():
            continue
        weighted = proba[rows] * w
        total = weighted.sum(axis=1, keepdims=True)
        proba[rows] = weighted / total
        if error is not None:
            error[rows] = error[rows] * w.max() / total[:, 0]
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
    """The rule in words for a model of ``classes`` (None: it changes nothing for them)."""
    parts = []
    for label, w in class_weights(classes, merge, n_per_class).items():
        codes, share = KNOWN_GROUPS[label]
        others = [name for name, weight in zip(classes, w) if weight != 1.0]
        parts.append(f"a {label} source is a blazar ({'/'.join(codes)}) with prior probability {1 - share:.3f}: "
                     f"its probability of {', '.join(others)} is weighted by {w.min():.3f} against the blazar "
                     "classes' and the row renormalised")
    return "; ".join(parts) or None

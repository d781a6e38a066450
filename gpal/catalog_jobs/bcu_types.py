"""The bcu's BL Lac / FSRQ split by a blazar-type model that reads the counterpart's SED from 4LAC-DR3.

Why: a bcu (a blazar of uncertain type) is classified as a blazar by the catalog's label (the bcu rule of
`gpal.catalogs.known_classes`), but which blazar it is the main four-class model decides from gamma-ray
measurements alone.  A model of the main job's estimator trained on the release's BL Lacs and FSRQs only, with
the 4LAC-DR3 synchrotron peak and high-energy peak (`gpal.catalogs.lac.lac_features`) beside the main job's
features, gives the bcu that FL16Y later typed a lower NLL of q = p_fsrq / (p_bll + p_fsrq) than a model of all
classes: the synchrotron peak is what separates the two blazar types, and the gamma-ray features see it only
indirectly (docs/results.md, the bcu section, has the measurements).

What: `fit_bcu_types` trains that model on every labelled bll and fsrq source of the job (not only the training
split: the held-out check never reads it) and saves it with its record in the run folder's ``model/``
beside the main model's training record (`gpal.catalog_jobs.layout`), so ``gpal predict`` with the folder splits the bcu as ``gpal classify`` did
(`split_bcu`, the one hook, in `gpal.catalog_jobs.prediction.predict_catalog`, which reads the folder and 4LAC once
for a catalog classified in blocks of rows through a `BcuSplitter`; ``gpal check-later`` on the folder scores what
it split).

The rule: for a source whose CLASS1 is bcu, with T = p_bll + p_fsrq after the bcu rule and q the blazar-type
model's p_fsrq, p_bll' = T (1 - q) and p_fsrq' = T q; every other class, and every source that is not a bcu,
keeps its probability (the unassociated sources are not split: nothing measured says it pays there).  A bcu
without a 4LAC row or without a peak is split too: its missing value is the population's median with the
population's variance as error bar (`lac_features`), the treatment the measurement above used.  A release that
names no 4FGL source (3FGL) cannot be joined to 4LAC: its bcu keep the main model's split, and the table's
``BCUSPLIT`` keyword says why.

Why it is asked for (``--bcu-types 4lac``) and not the default: it costs the main job about a fifth more CPU
time (docs/results.md, the bcu section), for a better NLL of q on the bcu and an AUC that moves within the
noise.  The cost is mostly fixed (a second model's TensorFlow functions traced and compiled: its shapes, two classes and the
20 inputs, are not the main model's, so none of the main model's is shared; and its population prior's
deconvolution), so fewer epochs or inducing points cut little of it, and the cheap splits without a GP (logistic
regression on the peaks, or on the main model's logit q and the peaks) are worse on later labels.

Why its AUC on 4FGL and DR2 does not rise: every later-typed bcu of those releases has a 4LAC row; the AUC goes
to a few later FSRQs whose counterparts look like BL Lacs on everything
4LAC measures (synchrotron peaks above 10^14 Hz: 4FGL J0132.7-0804, J0154.3-0236, J0317.8-4414), which no feature
without a spectrum ranks as FSRQs; more of 4LAC's SED (the peaks' fluxes, the Compton dominance:
`gpal.catalogs.lac.LAC_QUANTITIES`) does not help, so the model reads the two peaks only.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from gpal.catalog_jobs.layout import BCU_TYPES_DIR, BCU_TYPES_FILE
from gpal.catalog_jobs.main_job_settings import BCU_TYPES, BCU_TYPES_DEFAULT
from gpal.catalog_jobs.model_folders import loaded_estimator
from gpal.catalogs.classes import class1_codes
from gpal.catalogs.lac import LAC_FEATURES, LAC_RELEASE, join_4lac, lac_features, read_4lac, unshared
from gpal.data.dataset import NoisyDataset
from gpal.estimators.base import raise_if_interrupted
from gpal.evaluation.metrics import proba_by_class
from gpal.files import read_json, write_json_atomic

__all__ = ["BCU_TYPES", "BCU_TYPES_DEFAULT", "BLAZARS", "NOT_SPLIT", "BcuSplit", "BcuSplitter", "fit_bcu_types",
           "read_lac", "split_bcu", "split_note", "split_rule"]

#: The two blazar classes the rule splits between (the main model's class names).
BLAZARS = ("bll", "fsrq")
_FORMAT = "gpal.bcu_types"
#: How the ``BCUSPLIT`` note of a table whose bcu were not split begins (the reason follows).
NOT_SPLIT = "bcu not split by type: "


def split_rule(proba: np.ndarray, q: np.ndarray, rows: np.ndarray, classes: Sequence[str]) -> np.ndarray:
    """``proba`` (n, C) with the ``rows`` (bool, n) split between bll and fsrq by ``q`` (one p_fsrq per selected
    row): p_bll' = T (1 - q), p_fsrq' = T q, T = p_bll + p_fsrq; the other classes and rows as given."""
    proba = np.array(proba, dtype=np.float64, copy=True)
    q = np.asarray(q, dtype=np.float64)
    rows = np.asarray(rows, dtype=bool)
    if rows.shape != (proba.shape[0],) or q.shape != (int(rows.sum()),):
        raise ValueError(f"split_rule needs one bool per row of proba ({proba.shape[0]}) and one q per selected row; "
                         f"got rows {rows.shape} and q {q.shape}")
    if not np.all((q >= 0) & (q <= 1)):
        outside = np.unique(q[~((q >= 0) & (q <= 1))])[:5]
        raise ValueError(f"q must be probabilities in [0, 1]; got values outside: {outside}")
    bll, fsrq = (list(classes).index(c) for c in BLAZARS)
    total = proba[rows, bll] + proba[rows, fsrq]
    proba[rows, bll], proba[rows, fsrq] = total * (1 - q), total * q
    return proba


def _skip_reason(classes: Sequence[str], catalog: Any) -> str | None:
    """Why the split cannot apply to ``catalog`` with a model of ``classes`` (None: it can)."""
    missing = [c for c in BLAZARS if c not in classes]
    if missing:
        return f"the classes {list(classes)} have no {' and no '.join(missing)} to split the bcu between"
    if catalog.record.links.get("4FGL") is None:
        return f"{catalog.release} names no 4FGL source, so {LAC_RELEASE} (4FGL-DR3 names) cannot be joined to it"
    return None


def _blazar_rows(data: NoisyDataset, catalog: Any, lac: Any) -> NoisyDataset:
    """The labelled bll and fsrq rows of ``data`` (y: 0 bll, 1 fsrq) with the 4LAC features after their own."""
    labels = data.labels()
    picked = data.subset(np.nonzero(np.isin(labels, BLAZARS))[0])
    y = (picked.labels() == BLAZARS[1]).astype(np.int64)
    picked = replace(picked, y=y, class_names=BLAZARS)
    return _with_lac(picked, join_4lac(catalog, [str(i) for i in picked.ids], lac), lac)


def _with_lac(data: NoisyDataset, joined: Any, lac: Any) -> NoisyDataset:
    """``data`` with the 4LAC features of its rows (``joined``: their `join_4lac` rows; ``lac``: the population)."""
    X, V = lac_features(joined, lac)
    return replace(data, X=np.hstack([data.X, X]), X_var=np.hstack([data.X_var, V]),
                   feature_names=(*data.feature_names, *LAC_FEATURES))


def read_lac(lac_files: Sequence[str | os.PathLike] | None = None) -> Any:
    """4LAC-DR3 (`read_4lac`: the shipped files when None), an unreadable or missing file named with what to do."""
    try:
        return read_4lac(lac_files)
    except (FileNotFoundError, ValueError) as exc:
        raise type(exc)(f"{exc}; the bcu split reads it (--bcu-types none classifies the bcu without it)") from None


def fit_bcu_types(estimator: Any, data: NoisyDataset, catalog: Any, folder: str | os.PathLike, *,
                  lac: Any = None, callback: Any = None) -> dict[str, Any]:
    """Fit the blazar-type model on the bll and fsrq rows of ``data`` (the job's labelled sources of ``catalog``,
    the main model's features) with the 4LAC features, save it in ``folder`` (the run's trained-model folder, beside
    its ``training.json``) with its record, and return the record.  ``estimator``: an unfitted copy of the main job's (its settings and seed).  ``lac``:
    `read_4lac`'s table (the shipped files when None).  Where the split cannot apply (no bll or fsrq class, a
    release without 4FGL names) no model is fitted and the record says why.  A folder holding the record
    already is reused.  ``callback(epoch, loss)``: the estimator's training callback (a job stops it by raising)."""
    folder = Path(folder)
    record_file = folder / BCU_TYPES_FILE
    if record_file.is_file():
        return read_json(record_file, "bcu-types record", damaged="the run folder is corrupt")
    reason = _skip_reason(list(data.class_names), catalog)
    record: dict[str, Any] = {"format": _FORMAT, "version": 1, "model": False, "reason": reason}
    if reason is None:
        lac = read_lac() if lac is None else lac
        blazars = _blazar_rows(data, catalog, lac)
        estimator.fit(blazars, **({} if callback is None else {"callback": callback}))
        raise_if_interrupted(estimator, "the blazar-type model was not saved; rerun the same command")
        estimator.save(folder / BCU_TYPES_DIR)
        record.update(model=True, feature_names=list(blazars.feature_names),
                      n_per_class=blazars.class_counts(), lac_files=[Path(f).name for f in lac.attrs.get("files", [])])
    folder.mkdir(parents=True, exist_ok=True)  # it may finish before the main model's save makes the folder
    write_json_atomic(record_file, record)  # last: it marks the model complete
    return record


def _split_record(folder: Path) -> dict[str, Any] | None:
    """The blazar-type record saved in the trained-model ``folder``; None where it holds none."""
    record_file = folder / BCU_TYPES_FILE
    if not record_file.is_file():
        return None
    record = read_json(record_file, "bcu-types record", damaged="the run folder is corrupt")
    if not isinstance(record, dict) or record.get("format") != _FORMAT:
        raise ValueError(f"{record_file} is not a {_FORMAT} record; the run folder is corrupt")
    return record


@dataclass(frozen=True)
class BcuSplit:
    """What a table's ``BCUSPLIT`` keyword says (`note`): why its bcu were not split, or how many were and what
    4LAC gave them.  Counts add up (``+``): a table classified in blocks of rows adds its blocks' and says it once,
    without joining its bcu to 4LAC again."""

    #: why the bcu were not split (None: they were)
    reason: str | None
    #: the blazar-type model's training sources of each class (its record's ``n_per_class``)
    n_bll: int | None = None
    n_fsrq: int | None = None
    #: the bcu classified, those with a 4LAC row and those with a synchrotron peak
    bcu: int = 0
    in_lac: int = 0
    peaks: int = 0

    def __add__(self, other: "BcuSplit") -> "BcuSplit":
        if (self.reason, self.n_bll, self.n_fsrq) != (other.reason, other.n_bll, other.n_fsrq):
            raise ValueError(f"cannot add the bcu counts of two different splits: {self} and {other}")
        return replace(self, bcu=self.bcu + other.bcu, in_lac=self.in_lac + other.in_lac,
                       peaks=self.peaks + other.peaks)

    @property
    def note(self) -> str:
        if self.reason is not None:
            return NOT_SPLIT + self.reason
        if not self.bcu:
            return NOT_SPLIT + "no bcu among the classified sources"
        return (f"the {self.bcu} bcu's p_bll and p_fsrq split by a blazar-type model (the main job's estimator on "
                f"{self.n_bll} bll and {self.n_fsrq} fsrq, their features and {LAC_RELEASE}'s synchrotron and "
                f"high-energy peaks): {self.in_lac} of them have a {LAC_RELEASE} row, {self.peaks} a synchrotron "
                f"peak; {self.bcu - self.peaks} without one took the population's median with its spread as error "
                "bar")


class BcuSplitter:
    """The bcu split (`split_bcu`) of one trained-model ``folder`` (beside its ``training.json``) on one catalog,
    its record, 4LAC-DR3 and its blazar-type model read once (``lac``: `read_4lac`'s table, read here when None and
    needed; ``joinable``: `unshared` of it on ``catalog``, where the caller made it) and applied to the whole
    selection or to each block of its rows in turn.  ``classes``: the main model's, in any order (its training
    record's: whether bll and fsrq are among them)."""

    def __init__(self, folder: str | os.PathLike, catalog: Any, classes: Sequence[str], lac: Any = None,
                 joinable: Any = None):
        self.folder, self.catalog = Path(folder), catalog
        self.record = _split_record(self.folder)
        self.lac, self._joinable, self._estimator = None, joinable, None
        if self.record is None:
            return
        reason = self.record.get("reason") or _skip_reason(classes, catalog)
        counts = self.record.get("n_per_class", {})
        #: the split's note before any bcu is counted
        self.empty = BcuSplit(reason, counts.get("bll"), counts.get("fsrq"))
        if reason is None:
            self.lac = read_lac() if lac is None else lac

    def _joined(self, bcu_ids: Sequence[str], own: Any) -> Any:
        """`join_4lac` of the bcu ``bcu_ids``: on the whole catalog, or on ``own`` (the catalog of their block of
        rows) with 4LAC less the rows two of the whole catalog's sources name (`unshared`: made on the first block),
        which joins each as the whole catalog would without a pass over all its rows."""
        ids = [str(i) for i in bcu_ids]
        if own is None:
            return join_4lac(self.catalog, ids, self.lac)
        if self._joinable is None:
            self._joinable = unshared(self.catalog, self.lac)
        return join_4lac(own, ids, self._joinable)

    def counts(self, bcu_ids: Sequence[str], own: Any = None) -> BcuSplit | None:
        """The `BcuSplit` of a table whose bcu are ``bcu_ids`` (None: the folder holds no blazar-type record);
        ``own`` as `split`'s."""
        return None if self.record is None else self._counts(bcu_ids, own)[0]

    def _counts(self, bcu_ids: Sequence[str], own: Any) -> tuple[BcuSplit, Any]:
        if self.empty.reason is not None or not len(bcu_ids):
            return self.empty, None
        joined = self._joined(bcu_ids, own)
        return replace(self.empty, bcu=len(bcu_ids), in_lac=int((joined["LAC_Name"] != "").sum()),
                       peaks=int(joined["log_nu_syn"].notna().sum())), joined

    def split(self, pool: NoisyDataset, proba: np.ndarray, classes: Sequence[str], mc_error: np.ndarray | None = None,
              own: Any = None) -> tuple[np.ndarray, np.ndarray | None, BcuSplit | None]:
        """`split_bcu` of ``pool``'s rows (``classes``: ``proba``'s columns), the note as its `BcuSplit`; ``own``: the
        catalog of the pool's block of rows (`gpal.catalogs.Catalog.rows`; None: the pool is of the whole catalog)."""
        if self.record is None:
            return proba, mc_error, None
        bcu = class1_codes(pool.aux["CLASS1"]) == "bcu"
        counts, joined = self._counts(pool.ids[bcu], own)
        if joined is None:
            return proba, mc_error, counts
        rows = _with_lac(pool.subset(np.nonzero(bcu)[0]), joined, self.lac)
        if self._estimator is None:  # loaded by the first block that has bcu, not by every block
            self._estimator = loaded_estimator(self.folder / BCU_TYPES_DIR)  # never a path read from the record
        estimator = self._estimator
        if estimator.reports_mc_error:
            p, error = estimator.predict_proba(rows.X, rows.X_var, return_mc_error=True)
            q_error = proba_by_class(error, estimator.classes_, BLAZARS)[:, 1]
        else:
            p, q_error = estimator.predict_proba(rows.X, rows.X_var), np.zeros(rows.n_samples)
        q = np.clip(proba_by_class(p, estimator.classes_, BLAZARS)[:, 1], 0.0, 1.0)
        split = split_rule(proba, q, bcu, classes)
        if mc_error is not None:
            total = proba[bcu][:, [list(classes).index(c) for c in BLAZARS]].sum(axis=1)
            mc_error = np.array(mc_error, dtype=np.float64, copy=True)
            mc_error[bcu] = np.hypot(mc_error[bcu], total * q_error)
        return split, mc_error, counts


def split_bcu(folder: str | os.PathLike, catalog: Any, pool: NoisyDataset, proba: np.ndarray,
              classes: Sequence[str], mc_error: np.ndarray | None = None,
              lac: Any = None) -> tuple[np.ndarray, np.ndarray | None, str | None]:
    """The bcu rows of ``pool`` (sources of ``catalog`` with the main model's features) split by the blazar-type
    model saved in the trained-model ``folder`` (beside its ``training.json``) (`split_rule`); their Monte Carlo errors (``mc_error``, the largest per row) combined
    with T times q's to first order.  ``lac``: `read_4lac`'s table (read when None).

    Returns
    -------
    tuple
        The probabilities, the errors and the note the table's ``BCUSPLIT`` keyword carries (`split_note`; None:
        ``folder`` holds no blazar-type record, the job ran with ``bcu_types="none"``).
    """
    proba, mc_error, counts = BcuSplitter(folder, catalog, classes, lac).split(pool, proba, classes, mc_error)
    return proba, mc_error, None if counts is None else counts.note


def split_note(folder: str | os.PathLike, catalog: Any, bcu_ids: Sequence[str], classes: Sequence[str],
               lac: Any = None) -> str | None:
    """The ``BCUSPLIT`` keyword of a table whose bcu sources are ``bcu_ids`` (of ``catalog``), as `split_bcu`
    splits them with the trained-model ``folder`` (None: ``folder`` holds no blazar-type record)."""
    counts = BcuSplitter(folder, catalog, classes, lac).counts(bcu_ids)
    return None if counts is None else counts.note

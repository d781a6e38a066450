"""Predicting with a saved model: load any gpal family, and predict millions of rows in chunks.

A catalog of millions of sources does not fit one ``predict_proba`` call on one
core, so `predict_proba_chunked` cuts the rows into chunks and sends each chunk
through an `Executor` as the task ``(model folder, X rows, X_var rows)``.  A worker
loads the saved model once and keeps it (`loaded_estimator`: keyed on the folder and the
modification time of its ``config.json``), so chunks do not reload it; in the process that
read the folder's record (`load_trained`), its estimator is that same loaded model.  The model folder must be
readable at the same path on every worker (a shared file system on a cluster).

Each row's probabilities depend only on the model and that row: the Monte Carlo
draws of a stochastic prediction are common random numbers seeded by the
estimator, so the result is the same whichever executor runs the chunks, in
whatever order they finish, and equals one unchunked ``predict_proba`` call.
"""

from __future__ import annotations

import inspect
import itertools
import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

import numpy as np
import pandas as pd

import gpal
from gpal.active import make_acquisition
from gpal.catalog_jobs.main_job_settings import DEFAULT_CHUNK_SIZE, DEFAULT_SELECT
from gpal.catalog_jobs.bcu_types import BcuSplitter
from gpal.catalog_jobs.layout import OOD_FILE, located
from gpal.catalog_jobs.model_folders import (
    TrainedModel, check_catalog_columns, check_features, load_trained, loaded_estimator,
)
from gpal.catalog_jobs.none_of_these import outlier_flags, read_outlier_record, saved_outliers
from gpal.catalog_jobs.proba_columns import MC_ERROR_COLUMN, with_proba
from gpal.catalog_jobs.pool_prior import APPLIED_BY_DEFAULT, adjust_table, training_prior
from gpal.catalog_jobs.tables import EXTENDED, ClassifiedSources
from gpal.catalogs import load_catalog, repaired_text
from gpal.catalogs.known_classes import apply_known_classes, association_weight, class_weights, known_class_rule
from gpal.catalogs.psrcat import catalogue_words
from gpal.catalogs.lac import lac_table_columns
from gpal.catalogs.releases import DEFAULT_RELEASE, RELEASES
from gpal.catalogs.search_history import named_by, search_history
from gpal.catalogs.targets import flag_legend, target_columns
from gpal.constraints import Integer
from gpal.data.dataset import NoisyDataset
from gpal.estimators.base import check_predict_data, entropy
from gpal.files import read_json
from gpal.registry import FOLLOW_UP_ACQUISITION
from gpal.runs.executors import Executor, as_executor

__all__ = ["BLOCK_ROWS", "DEFAULT_CHUNK_SIZE", "DEFAULT_SELECT", "known_class_probabilities", "known_columns",
           "known_index", "predict_catalog",
           "predict_catalog_blocks", "predict_proba_chunked", "scores_information", "selection_pool", "with_information"]



def _predict_chunk(model_dir: str, X: np.ndarray, X_var: np.ndarray) -> np.ndarray:
    """One chunk as an executor task: probabilities and their Monte Carlo errors, stacked (2, rows, C).

    Families whose predictions involve no Monte Carlo (or do not report it) give zero errors.
    """
    estimator = loaded_estimator(model_dir)
    if estimator.reports_mc_error:
        proba, error = estimator.predict_proba(X, X_var, return_mc_error=True)
    else:
        proba = estimator.predict_proba(X, X_var)
        error = np.zeros_like(proba)
    return np.stack([np.asarray(proba, dtype=np.float64), np.asarray(error, dtype=np.float64)])


#: With a progress bar, rows go in about this many tasks (of at least _MIN_TASK_ROWS rows), so that the bar moves.
_PROGRESS_STEPS = 20
_MIN_TASK_ROWS = 200


def _progress_step(n: int, chunk_size: int) -> int:
    """Rows per task when progress is shown: at most ``chunk_size``, small enough for the bar to move."""
    return min(chunk_size, max(_MIN_TASK_ROWS, -(-n // _PROGRESS_STEPS)))


def predict_proba_chunked(
    model_dir: str | os.PathLike,
    X: Any,
    X_var: Any = None,
    *,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    executor: Executor | None = None,
    progress: bool = True,
    return_mc_error: bool = False,
) -> Any:
    """Class probabilities (N, C) of the model saved in ``model_dir``, columns in ``classes_`` order.

    With ``return_mc_error`` also their Monte Carlo standard errors (N, C).  A row's
    probability does not depend on ``chunk_size`` or on the other rows, so with
    ``progress`` the rows go in smaller tasks (about 20) for the bar to move.

    ``X`` (N, d) and ``X_var`` (or a ``NoisyDataset`` as ``X``) are checked against the
    model before any chunk runs.  Rows go in chunks of ``chunk_size`` through
    ``executor`` (in this process if None); the result is in row order whatever
    order the chunks finish in.
    """
    chunk_size = Integer(1).check("chunk_size", chunk_size)
    executor = as_executor(executor)
    path = str(Path(model_dir).resolve())
    estimator = loaded_estimator(path)  # a folder that is no saved model is named first
    Xa, Va = check_predict_data(X, X_var, estimator.n_features_in_, estimator.needs_X_var,
                                owner=f"the {type(estimator).__name__} saved in {path}")
    n = Xa.shape[0]
    if n == 0:
        raise ValueError("predict needs at least one row; X is empty")
    step = _progress_step(n, int(chunk_size)) if progress else int(chunk_size)
    starts = range(0, n, step)
    tasks = [(path, Xa[s : s + step], Va[s : s + step]) for s in starts]
    out = np.empty((2, n, len(estimator.classes_)))
    for i, both in executor.map(_predict_chunk, tasks, desc=f"predicting {n} rows", progress=progress):
        out[:, starts[i] : starts[i] + both.shape[1]] = both
    return (out[0], out[1]) if return_mc_error else out[0]


# ------------------------------------------------------------- catalog selections
def _table_meta(trained: TrainedModel, catalog: Any, n_sources: int, counted: Mapping[str, Any],
                select: Sequence[str]) -> dict[str, str]:
    """FITS-safe keywords (<= 8 characters), identical in the CSV header: ``n_sources`` classified, ``counted`` the
    selection's ``dropped`` and ``repaired`` (a `NoisyDataset`'s ``meta``)."""
    cfg = read_json(trained.model_dir / "config.json", "saved model config")
    t = trained.training
    return {
        "CREATOR": f"gpal {gpal.__version__}",
        "CATALOG": catalog.release,
        "CATVER": catalog.version,
        "CATFILE": catalog.path.name,
        "SELECT": ",".join(select),
        "NSOURCES": str(n_sources),
        "DROPPED": ",".join(counted.get("dropped", {})),
        "REPAIRED": repaired_text(counted.get("repaired", {})),
        "MODEL": str(trained.folder.resolve()),
        "MODELFMT": f"{cfg.get('format')} v{cfg.get('version')}",
        "CLASSES": t.get("class_spec", ",".join(t["classes"])),
        "FEATURES": ",".join(t["feature_names"]),
        "TRAINCAT": f"{t['catalog'].get('release')} {t['catalog'].get('version')}",
        "TRAINSEL": json.dumps({"min_significance": t.get("min_significance"), "n_per_class": t.get("n_per_class"),
                                "trained_on": t.get("trained_on")}, sort_keys=True),
        "FITCONF": json.dumps(t["estimator"]["params"], sort_keys=True),
        "KNOWNCLS": known_class_rule(trained.classes, t.get("merge", {}), t["n_per_class"]) or "",
        **flag_legend(catalog.record.flag_meanings),
    }


def select_tokens(select: str | Sequence[str]) -> tuple[str, ...]:
    tokens = [select] if isinstance(select, str) else list(select)
    out: list[str] = []
    for token in tokens:
        out += [t.strip().lower() for t in str(token).split(",") if t.strip()]
    if not out:
        raise ValueError("select must name at least one of 'unassociated', 'bcu', 'all' or a class code")
    return tuple(dict.fromkeys(out))


def _codes(catalog: Any, select: Sequence[str]) -> list[str]:
    """The class codes ``select`` takes; ``all``: every code of the catalog, labelled or not."""
    if "all" in select:
        if len(select) > 1:
            raise ValueError(f"select 'all' already takes every source; do not combine it with {list(select)[1:]}")
        return sorted({c or "unassociated" for c in catalog.class_codes})
    return list(select)


def selection_pool(catalog: Any, select: Sequence[str], features: Any) -> NoisyDataset:
    """Sources to classify, as ``gpal predict --select`` picks them (``all``: every source of the catalog, labelled or
    not), for scoring the same rows with a model of one's own."""
    return catalog.pool(select=_codes(catalog, select), features=features)


def known_class_probabilities(trained: TrainedModel, class1: Any, proba: np.ndarray,
                              mc_error: np.ndarray | None = None,
                              association: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """The model's probabilities of sources labelled ``class1`` with what the catalog knows applied (a bcu is a
    blazar as far as its association holds: `gpal.catalogs.known_classes`; ``association`` from
    `association_weight`), and the rows' Monte Carlo errors scaled alike."""
    t = trained.training
    weights = class_weights(trained.classes, t.get("merge", {}), t["n_per_class"])
    return apply_known_classes(proba, np.asarray(class1, dtype=str), weights, mc_error, association)


def scores_information(estimator: Any) -> bool:
    """Whether ``estimator`` can score ``information``: BALD draws its latent functions and noiseless inputs
    (``sample_proba(..., input_draws)``, as every `NoisyGPClassifier` of ``gpal classify`` and ``gpal train``)."""
    sample = getattr(estimator, "sample_proba", None)
    return callable(sample) and "input_draws" in inspect.signature(sample).parameters


#: Pool rows scored at once by `with_information`: BALD holds (draws, rows, classes) probabilities twice over, 3 kB a
#: row at 100 draws of 4 classes, GiBs for a survey-size pool. A row's draws are seeded alike in any chunk, so its
#: score is the same up to round-off (TensorFlow's sums depend on the batch's rows: another chunk size can move a
#: score in its last bits); the default chunk size gives tasks of these rows.
_SCORE_ROWS = 8192


def with_information(table: ClassifiedSources, trained: TrainedModel, pool: NoisyDataset, target: str | None = None,
                     chunk_size: int = _SCORE_ROWS, executor: Executor | None = None,
                     progress: bool = False) -> ClassifiedSources:
    """The table with an ``information`` column, what each source's label would teach the model about ``target``
    (every class when None: the follow-up score, `FOLLOW_UP_ACQUISITION`), and its ``TARGET`` keyword.

    Scored in tasks of at most ``chunk_size`` rows through ``executor``, as the probabilities are: the score draws
    the latent functions and noiseless inputs of every row, several times the probabilities' work."""
    if pool.ids.tolist() != table.frame["Source_Name"].tolist():
        raise RuntimeError("the classified table and the selection differ in their sources; cannot rank them")
    step = min(Integer(1).check("chunk_size", chunk_size), _SCORE_ROWS)
    starts = range(0, pool.n_samples, step)
    path = str(Path(trained.model_dir).resolve())
    tasks = [(path, pool.X[s:s + step], None if pool.X_var is None else pool.X_var[s:s + step], target)
             for s in starts]
    scores = np.zeros(pool.n_samples)
    for i, chunk in as_executor(executor).map(_score_chunk, tasks, desc=f"scoring information of {pool.n_samples} rows",
                                              progress=progress):
        scores[starts[i]:starts[i] + chunk.size] = chunk
    return replace(table, frame=table.frame.assign(information=scores), meta={**table.meta, "TARGET": target or ""})


def _score_chunk(model_dir: str, X: np.ndarray, X_var: np.ndarray | None, target: str | None) -> np.ndarray:
    """One task of `with_information`: the follow-up score of these rows."""
    rows = NoisyDataset(X=X, X_var=X_var, y=None, class_names=(), feature_names=(), ids=None)
    acquisition = make_acquisition({"name": FOLLOW_UP_ACQUISITION, "target": target})
    return np.asarray(acquisition.scores(loaded_estimator(model_dir), rows), dtype=np.float64)


#: Sources looked up at once by `_known` (a multiple of 64, as `_SCORE_ROWS`).
_KNOWN_ROWS = 16384


#: The columns of what is already known about a source (`gpal.catalogs.known_sources`) a classified table carries.
KNOWN_COLUMNS = ("known_class", "known_as", "known_reason", "ATNF_pulsars")


def known_index(cat: Any, pulsars: str | os.PathLike | None = None) -> Any:
    """What `predict_catalog` looks up of each source of ``cat`` (a `Catalog`), made once (a
    `gpal.catalogs.known_sources.KnownIndex`: the shipped releases before it, never a later one, whose classes a check
    on later labels would read as its own answers; the ATNF pulsars of ``pulsars``, the shipped copy when None).
    It warns of nothing (the links' ambiguities are its notes), so a caller may make it in a second thread."""
    from gpal.catalogs.known_sources import KnownIndex
    from gpal.catalogs.psrcat import PSRCAT_FILE

    return KnownIndex(cat, pulsars=PSRCAT_FILE if pulsars is None else pulsars, releases=_earlier(cat))


def _earlier(cat: Any) -> list[str]:
    order = list(RELEASES)
    return order[:order.index(cat.release)] if cat.release in order else []


class _Lookups:
    """What a classified table adds to each source beside its probabilities, read once for all its rows (a table
    made in blocks of rows reads it once, not once a block): the releases before the catalog's and the ATNF Pulsar
    Catalogue, indexed (what is known of a source, `_known`), 4LAC (its counterpart's SED) and, where the model
    folder has one, its blazar-type split of the bcu (`BcuSplitter`, on the same 4LAC)."""

    def __init__(self, trained: TrainedModel, cat: Any, pulsars: str | os.PathLike | None, known: Any = None):
        from gpal.catalogs.lac import read_4lac, unshared

        if known is not None and known.catalog is not cat:
            raise ValueError(f"the known-sources index given was made for another catalog ({known.catalog.release}, "
                             f"{known.catalog.n_rows} rows) than the one classified ({cat.release}, {cat.n_rows} rows); "
                             "make it with known_index(catalog, pulsars) of the same Catalog object")
        self.known = known_index(cat, pulsars) if known is None else known
        lac = read_4lac()
        # a block's join reads the whole catalog's sharing
        linked = cat.record.links.get("4FGL") in cat.table.colnames
        self.lac = unshared(cat, lac) if linked else lac
        # the record's classes: the estimator, loaded, would check its files before the prediction names a damage
        self.bcu = BcuSplitter(trained.record_file.parent, cat, trained.training["classes"], lac,
                               joinable=self.lac if linked else None)


def known_columns(cat: Any, ids: Sequence[str], index: Any = None) -> tuple[pd.DataFrame, str]:
    """What is already known about each source of ``cat`` named ``ids`` beyond its CLASS1 (`KNOWN_COLUMNS`), from
    the catalog's CLASS2, the shipped releases before it and the ATNF Pulsar Catalogue (``index``, a `known_index`
    of ``cat``, made here when None), with its search history
    (`gpal.catalogs.search_history.HISTORY_COLUMNS`) and the published lists that named it (``named_by``); and in
    words what was checked and what could not be.  The
    classified tables and ``gpal active``'s query files vet their sources with it alike.

    Returns
    -------
    tuple of (pandas.DataFrame, str)
        One row per id, in order; the note of what was checked (``KNOWNFROM``).
    """
    index = known_index(cat) if index is None else index
    # looked up per chunk of rows: a source's ellipse can hold many counterparts (a catalog of repeated rows: one per
    # copy), each a (row, separation) pair until its words are made, so the whole catalog at once grew by GiBs; what
    # is known of a source depends on it alone
    parts = [index.about(ids[start:start + _KNOWN_ROWS]) for start in range(0, len(ids), _KNOWN_ROWS)]
    found = pd.concat(parts, ignore_index=True)
    own = (found["known_route"] == "CLASS1").to_numpy()  # the CLASS1 column says that already
    out = found[list(KNOWN_COLUMNS)].copy().reset_index(drop=True)
    out.loc[own, ["known_class", "known_as", "known_reason"]] = ""
    # how long each source has waited: what a committee asks of a target searched before
    earlier = _earlier(cat)
    history = search_history(found, cat.record, earlier)
    out = pd.concat([out, history.reset_index(drop=True)], axis=1)
    out["named_by"] = named_by(found, ids, cat.record)  # and whether a published search already named it
    out["typed_before"] = _typed_before(found, earlier)
    catalogue = parts[0].attrs.get("pulsar_catalogue")  # the same in every part
    class2 = cat.columns.class2 is not None and cat.columns.class2 in cat.table.colnames
    checked = (f"{'CLASS2' if class2 else 'no CLASS2 (the catalog has none)'}, "
               f"{', '.join(earlier) or 'no earlier release'}, "
               + (f"known pulsars of {catalogue_words(catalogue['file'], catalogue['version'])}" if catalogue
                  else "no pulsar catalogue")
               # a catalog no earlier release is linked to (no ASSOC_FGL) has no search history: said, not guessed
               + (f"; search history back to {history.attrs['checked'][0]}" if history.attrs["checked"] else
                  "; no search history (no earlier release linked to this catalog)"))
    return out, checked


def _typed_before(found: pd.DataFrame, earlier: Sequence[str]) -> np.ndarray:
    """Where the catalog calls a source a bcu or leaves it unassociated, the newest earlier release that typed it a
    BL Lac or an FSRQ ('4FGL-DR4 bll'; '' for none): a blazar candidate whose type is already known (an earlier
    type is weaker than the catalog's own bcu, so it is no ``known_class``, but a spectroscopist skips it)."""
    own = found["CLASS1"].fillna("").astype(str).str.strip().str.lower().to_numpy()
    typed = np.full(len(found), "", dtype=object)
    for release in reversed(list(earlier)):  # the newest first: it wins
        column = f"{release}_class"
        if column not in found:
            continue
        cls = found[column].fillna("").astype(str).str.strip().str.lower().to_numpy()
        hit = (typed == "") & np.isin(own, ["", "bcu"]) & np.isin(cls, ["bll", "fsrq"])
        typed[hit] = [f"{release} {c}" for c in cls[hit]]
    return typed


def _classified_frame(trained: TrainedModel, cat: Any, pool: NoisyDataset, lookups: _Lookups,
                      outliers: Mapping[str, Any] | None, chunk_size: int,
                      executor: Any) -> tuple[pd.DataFrame, str, str]:
    """The rows of ``pool``'s sources in a classified table (`predict_catalog`, before any pool prior or
    ``information``), and the notes of what is known (``KNOWNFROM``) and of the 4LAC join (``LACFROM``)."""
    proba, mc_error = predict_proba_chunked(trained.model_dir, pool.X, pool.X_var, chunk_size=chunk_size,
                                            executor=executor, progress=False, return_mc_error=True)
    classes, ids = trained.classes, pool.ids.tolist()
    # a block's own rows where it has them: a lookup by name over every row of a large catalog, once a block, cost
    # more than the block's work; what is known of a source reads the whole catalog (another source's counterpart
    # can lie in its ellipse)
    block = cat.rows(slice(*pool.meta["block"])) if "block" in pool.meta else None
    own = cat if block is None else block
    proba, mc_error = known_class_probabilities(trained, pool.aux["CLASS1"], proba, mc_error.max(axis=1),
                                                association_weight(own, ids))
    # a classify folder's blazar-type model splits each bcu between bll and fsrq (keyword BCUSPLIT says how)
    # (its note is said of the whole table's bcu, the blocks' counts added: `_classified_blocks`)
    proba, mc_error, bcu_split = lookups.bcu.split(pool, proba, classes, mc_error, own=block)
    frame = pd.DataFrame({"Source_Name": pool.ids, "CLASS1": pool.aux["CLASS1"]})
    with_proba(frame, classes, proba)
    targets = target_columns(own, ids)
    frame["predicted_class"] = np.where(targets["extended"], EXTENDED,
                                        np.asarray(classes, dtype=object)[np.argmax(proba, axis=1)])
    frame["entropy"] = entropy(proba)
    frame[MC_ERROR_COLUMN] = mc_error  # the largest Monte Carlo standard error of the row's probabilities
    known, notes = known_columns(cat, ids, lookups.known)
    lac, lac_notes = lac_table_columns(own, ids, lookups.lac)  # what a spectroscopist points at; shown only
    frame = pd.concat([frame, targets.drop(columns="Source_Name"), known, lac], axis=1)
    frame.attrs.update(lac_rows=lac.attrs.get("lac_rows"), bcu_split=bcu_split)
    # "none of these", where the folder saved its score or the caller holds it
    flags = saved_outliers(trained.folder, pool) if outliers is None else outlier_flags(outliers, pool)
    if flags is not None:
        frame["ood_score"], frame["ood"] = flags
    return frame, notes, lac_notes


def _checked(model: str | os.PathLike | TrainedModel, catalog: Any) -> tuple[TrainedModel, Any]:
    """The model folder and the catalog, the catalog refused unless it holds every column the model's features are
    built from, as they were at training (`check_catalog_columns`)."""
    trained = model if isinstance(model, TrainedModel) else load_trained(model)
    cat = load_catalog(catalog) if isinstance(catalog, (str, os.PathLike)) else catalog
    check_catalog_columns(trained, cat)
    return trained, cat


def predict_catalog(
    model: str | os.PathLike | TrainedModel,
    catalog: Any = DEFAULT_RELEASE,
    select: str | Sequence[str] = ("unassociated",),
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    executor: Any = None,
    progress: bool = True,
    pool: NoisyDataset | None = None,
    information: bool = True,
    target: str | None = None,
    pool_prior: bool = APPLIED_BY_DEFAULT,
    outliers: Mapping[str, Any] | None = None,
    pulsars: str | os.PathLike | None = None,
    rows: int | None = None,
    known: Any = None,
) -> ClassifiedSources:
    """Class probabilities of the selected sources of ``catalog`` (a name, path or `Catalog`).

    ``select``: ``"unassociated"``, ``"bcu"``, other CLASS1 codes, or ``"all"``.  A source the catalog
    labels bcu is classified as the blazar it is (`known_class_probabilities`; keyword ``KNOWNCLS``).  A model
    folder of ``gpal classify`` adds each source's ``ood_score`` and ``ood`` ("none of these": the score the
    folder saved, `gpal.catalog_jobs.none_of_these.saved_outliers`; ``outliers``: the record of that score, as
    ``ood.json`` holds it, where the caller holds it and the folder does not yet).  With ``information`` (and a model that
    `scores_information`), the ``information`` column of ``gpal classify``: what the source's label would teach
    the model about ``target`` (`with_information`).  With ``pool_prior`` the unassociated sources'
    probabilities are moved to their own class mix, as ``gpal classify`` moves them (`gpal.catalog_jobs.pool_prior`;
    keyword ``POOLMIX``); ``information`` stays the model's own.
    The catalog must hold every column the model's features are built from.
    Prediction is chunked (``chunk_size`` rows) and runs on ``executor``
    (`gpal.runs.executors.make_executor`; in this process when None).  ``pool``: the
    selection already built from this catalog with the model's features (`selection_pool`),
    so a caller that has it does not build it twice.  What is already known of each source beyond its CLASS1
    (`KNOWN_COLUMNS`: its CLASS2, the earlier shipped releases, the ATNF pulsars inside its ellipse from
    ``pulsars``, a psrcat.db file, the shipped copy when None) is in the table, keyword ``KNOWNFROM`` saying where
    (``known``: the `known_index` of ``catalog`` and ``pulsars``, where the caller made it beside other work);
    each source's 4LAC-DR3 counterpart SED (`gpal.catalogs.lac.LAC_TABLE_COLUMNS`) too, keyword ``LACFROM``.  A folder
    of ``gpal classify`` that saved a blazar-type model splits each bcu between bll and fsrq by it
    (`gpal.catalog_jobs.bcu_types.split_bcu`, keyword ``BCUSPLIT``).  The sources are classified ``rows`` at a time
    (`BLOCK_ROWS` when None), as `predict_catalog_blocks` classifies them: the features and the table are whole, the
    temporaries of the classification one block's.
    """
    from gpal.progress import progress_bar

    trained, cat = _checked(model, catalog)
    tokens = select_tokens(select)
    if pool is None:
        pool = selection_pool(cat, tokens, trained.training["features"])
    check_features(trained, pool)
    rows = _block_rows(rows)
    frames, notes = [], {}
    with progress_bar(total=pool.n_samples, desc=f"classifying {pool.n_samples} sources", unit="sources",
                      disable=not progress) as bar:
        blocks = (pool.subset(np.arange(start, min(start + rows, pool.n_samples)))
                  for start in range(0, pool.n_samples, rows))
        for _, frame, notes in _classified_blocks(trained, cat, blocks, _Lookups(trained, cat, pulsars, known),
                                                  outliers, chunk_size, executor, bar):
            frames.append(frame)
    table = ClassifiedSources(pd.concat(frames, ignore_index=True),
                              {**_table_meta(trained, cat, pool.n_samples, pool.meta, tokens), **notes})
    if pool_prior:
        classes = trained.classes
        table, _ = adjust_table(table, classes, training_prior(trained.training["n_per_class"], classes),
                                trained.training.get("merge", {}))
    if information and scores_information(trained.estimator):
        table = with_information(table, trained, pool, target, chunk_size, executor, progress)
    return table


#: Catalog rows `predict_catalog_blocks` takes at once (and sources `predict_catalog`): tens of MB of features and
#: table whatever the catalog's rows.  Larger blocks cost memory for no CPU time, smaller ones gain little memory,
#: since the model's own arrays dominate the peak (docs/performance.md).
#: A multiple of `_KNOWN_ROWS` and `_SCORE_ROWS`, so each row's chunks are those of one call.
BLOCK_ROWS = 32768


def predict_catalog_blocks(
    model: str | os.PathLike | TrainedModel,
    catalog: Any = DEFAULT_RELEASE,
    select: str | Sequence[str] = ("unassociated",),
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    executor: Any = None,
    progress: bool = True,
    information: bool = True,
    target: str | None = None,
    pulsars: str | os.PathLike | None = None,
    rows: int | None = None,
) -> Iterator[ClassifiedSources]:
    """`predict_catalog`'s table (without a pool prior) in blocks of ``rows`` catalog rows (`BLOCK_ROWS` when None):
    memory holds one block's features and rows, whatever the catalog's size, and the rows are `predict_catalog`'s,
    value for value.

    Features, probabilities, what is known of each source, the outlier flags and ``information`` are each a row's
    own (the features' population errors are the whole catalog's: `gpal.catalogs.Catalog.pool_blocks`).  The pool
    prior moves every probability by the mix of all sources, so it has no blocks: `predict_catalog` applies it.

    Yields
    ------
    ClassifiedSources
        Each block's rows, in catalog order; the keywords of the last one are the whole table's (``NSOURCES``,
        ``DROPPED``, ``REPAIRED``, ``LACFROM``, ``BCUSPLIT``), those before it their block's and the blocks' before.
    """
    from gpal.progress import progress_bar

    trained, cat = _checked(model, catalog)
    tokens = select_tokens(select)
    features = trained.training["features"]
    codes = _codes(cat, tokens)
    blocks = cat.pool_blocks(select=codes, features=features, rows=_block_rows(rows))
    first = next(blocks)  # a selection or catalog to refuse is refused before the model loads
    check_features(trained, first)
    # read once, not once a block
    lookups, outliers = _Lookups(trained, cat, pulsars), read_outlier_record(located(trained.folder, OOD_FILE))
    # whether to score `information` is asked of the model after its first prediction, as `predict_catalog` asks:
    # a saved size the model cannot predict at is then refused by the prediction, which names it
    scored = None
    selected = int(np.isin(cat.class_codes, ["" if c == "unassociated" else c for c in codes]).sum())
    with progress_bar(total=selected, desc=f"classifying {selected} sources", unit="sources",
                      disable=not progress) as bar:
        for pool, frame, notes in _classified_blocks(trained, cat, itertools.chain([first], blocks), lookups,
                                                     outliers, chunk_size, executor, bar):
            whole = pool.meta.get("blocks")  # the last block: the whole selection's counts
            meta = {**_table_meta(trained, cat, pool.n_samples if whole is None else whole["n_samples"],
                                  pool.meta if whole is None else whole, tokens), **notes}
            table = ClassifiedSources(frame, meta)
            scored = information and scores_information(trained.estimator) if scored is None else scored
            if scored:
                table = with_information(table, trained, pool, target, chunk_size, executor)  # the blocks' bar
            yield table


def _block_rows(rows: int | None) -> int:
    """The rows of a block: ``rows``, checked, or `BLOCK_ROWS` when None."""
    return BLOCK_ROWS if rows is None else Integer(1).check("rows", rows)


def _classified_blocks(trained: TrainedModel, cat: Any, pools: Iterator[NoisyDataset], lookups: _Lookups,
                       outliers: Mapping[str, Any] | None, chunk_size: int, executor: Any,
                       bar: Any) -> Iterator[tuple[NoisyDataset, pd.DataFrame, dict[str, str]]]:
    """Each of ``pools`` (one selection's sources in blocks, in order), its rows of the classified table
    (`_classified_frame`) and the keywords of every row so far: ``KNOWNFROM``, ``LACFROM`` and, where the model
    folder splits the bcu, ``BCUSPLIT`` (each of all the blocks' rows, as one table's would be)."""
    from gpal.catalogs.lac import lac_note

    n, lac_rows, split = 0, 0, None
    for pool in pools:
        frame, known, lac_notes = _classified_frame(trained, cat, pool, lookups, outliers, chunk_size, executor)
        n += pool.n_samples
        lac_rows = None if lac_rows is None or frame.attrs["lac_rows"] is None else lac_rows + frame.attrs["lac_rows"]
        split = frame.attrs["bcu_split"] if split is None else split + frame.attrs["bcu_split"]
        frame.attrs.clear()
        notes = {"KNOWNFROM": known,
                 "LACFROM": lac_notes if lac_rows is None else lac_note(cat, lac_rows, n, lookups.lac),
                 **({"BCUSPLIT": split.note} if split is not None else {})}
        bar.update(pool.n_samples)
        yield pool, frame, notes

"""The main job `classify_catalog` (``gpal classify``).

Train on the associated sources, check on a held-out split against the baselines a
user would reach for, classify the unassociated ones, write the report.
"""

from __future__ import annotations

import inspect
import os
import threading
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from gpal.catalog_jobs.bcu_types import fit_bcu_types, read_lac
from gpal.catalog_jobs.follow_up import check_target
from gpal.catalog_jobs.job_settings import check_settings, header_of, recorded_settings
from gpal.catalog_jobs.layout import (
    BASELINES_FILE, CLASSIFICATIONS_CSV, CLASSIFICATIONS_FITS, DEFAULT_OUT_DIR, ERROR_BLIND_MODEL_DIR, ESTIMATOR_DIR,
    HELDOUT_FILE, KIND, LAYOUT_VERSION, OOD_FILE, POOL_PRIOR_FILE, REPORT_FILE, SIGNIFICANCE_COLUMN, TIMINGS_FILE,
    TRAINED_DIR,
    refuse_flat,
)
from gpal.catalog_jobs.main_job_settings import DEFAULT_BASELINES, DEFAULT_SELECT, DEFAULT_TEST_SIZE, SETTINGS
from gpal.catalog_jobs.model_folders import (
    Log, TrainedModel, check_sizes, no_log, fit_or_reuse, job_estimator, load_trained, open_job, require_per_class,
)
from gpal.catalog_jobs.later_check import (
    LaterCheckInputs, check_later, later_check_files, later_check_inputs, later_check_table, later_release_of,
    link_releases, read_later_table,
)
from gpal.catalog_jobs.none_of_these import check_outliers, left_out_codes, left_out_sources
from gpal.catalog_jobs.pool_prior import (
    MOVED_GROUPS, adjust_table, mixes_text, training_prior,
)
from gpal.catalog_jobs.prediction import (
    known_index, predict_catalog, select_tokens, selection_pool, with_information,
)
from gpal.catalog_jobs.proba_columns import proba_of, with_proba
from gpal.catalog_jobs.report import ERROR_BLIND_MODEL, report_files
from gpal.catalog_jobs.report.figures import held_out_figures
from gpal.catalog_jobs.report.inputs import FinishedRun, HeldOutRun, read_baselines
from gpal.catalog_jobs.selection import CatalogSelection
from gpal.catalog_jobs.tables import (
    ClassifiedSources, as_read_back, dated, extra_names, rendered_and_read_back,
)
from gpal.catalogs.classes import class1_codes
from gpal.catalogs.targets import target_columns
from gpal.data.dataset import NoisyDataset
from gpal.evaluation.baselines import fit_baselines, fit_baselines_on, min_training_per_class
from gpal.evaluation.metrics import proba_by_class
from gpal.files import atomic_output, json_text, write_files
from gpal.registry import FOLLOW_UP_ACQUISITION
from gpal.runs.background import Beside, abandon_if, run_steps
from gpal.runs.output_dir import claim_output_dir
from gpal.runs.timings import StepTimes, since_process_start

__all__ = ["DEFAULT_BASELINES", "DEFAULT_TEST_SIZE", "SETTINGS", "classify_catalog"]


#: The gpal models fitted beside the main one for comparison -> the folder each is saved in.
COMPARED_MODEL_DIRS = {ERROR_BLIND_MODEL: ERROR_BLIND_MODEL_DIR}


# -------------------------------------------------------------------- main job
def classify_catalog(
    selection: CatalogSelection,
    estimator: Any,
    out_dir: str | os.PathLike = DEFAULT_OUT_DIR,
    *,
    seed: int = 0,
    force: bool = False,
    progress: bool = True,
    executor: Any = None,
    log: Log = no_log,
    **settings: Any,
) -> Path:
    """The main job: train on associated sources, check on a held-out split, classify the rest.

    ``settings`` are the job's own (`SETTINGS`, each checked against its constraint; any left out keeps its
    default): ``test_size``, ``select``, ``chunk_size``, ``baselines``, ``target``, the target-list cuts, the
    follow-up settings and ``pool_prior`` below.  Trains a copy of ``estimator`` (the main job's is
    `gpal.catalog_jobs.settings.main_job_estimator`) on a stratified ``1 - test_size`` share
    of the labelled sources of ``selection`` (`CatalogSelection`: catalog, classes, cut,
    features), scores it on the rest (accuracy, NLL, Brier, ECE, confusion matrix, reliability
    diagram) beside the ``baselines`` and, with that same model, classifies the ``select``
    sources (default: the unassociated and bcu sources, less bcu where the classes train on
    them).  ``seed`` draws the split and seeds the baselines and the outlier score; the
    estimator's own seed is its ``random_state``.  Each classified source also gets an
    ``ood`` flag ("none of these": `gpal.catalog_jobs.none_of_these`), its target columns
    (`gpal.catalogs.targets`) and ``information``, what its label would teach about ``target``
    (every class when None); an extended source's ``predicted_class`` is ``extended``.  Writes into
    ``out_dir`` (the layout of `gpal.catalog_jobs.layout`) ``classifications.csv`` / ``.ecsv`` / ``.fits`` (and
    ``.mrt`` / ``.vot`` for the ``table_formats`` asked, each list likewise), in ``lists/`` the target lists
    (`gpal.catalog_jobs.candidates`: per class, or the ``target`` class, the sources most probably of it through
    the target-list cuts, `gpal.catalog_jobs.candidates.CUTS`) and the other lists (`gpal.catalog_jobs.follow_up`:
    sources of ``follow_up_significance`` sigma or more, none of the ``follow_up_flags``), and ``report.md``, whose
    path it returns, beside the trained-model folder ``model/``, ``tables/`` (the held-out predictions among
    them), ``figures/`` and ``records/`` (``metrics.json``, ``ood.json``).  With ``pool_prior`` (off by default)
    the unassociated sources' probabilities are moved to their own class mix (`gpal.catalog_jobs.pool_prior`,
    ``records/pool_prior.json``).  With ``bcu_types='4lac'`` each bcu's p_bll + p_fsrq is split between
    them by a blazar-type model with 4LAC-DR3's SED peaks, saved in ``model/`` (`gpal.catalog_jobs.bcu_types`).
    Rerunning with the same settings reuses the saved model; other settings, and a
    folder of gpal <= 0.3's flat layout, are refused unless ``force``.  ``progress`` shows the prediction's bar
    (the estimator's ``progress`` its training's); ``log`` receives one line per step (the
    command prints them).
    """
    times = StepTimes()
    times.add("start-up", *since_process_start())  # the process until the job began: imports, the command line
    with times.timed("catalog and features"):
        job = _plan(selection, job_estimator(estimator), settings, seed)  # a refused command leaves nothing
    refuse_flat(out_dir, force)
    folder = claim_output_dir(out_dir, job.identity, force=force)
    later_baselines: dict[str, np.ndarray] = {}  # the baselines' probabilities of job.later_pool, fitted once
    comparison = None
    if not (folder / BASELINES_FILE).is_file():
        log("fitting, alongside the model, the baselines and the same GP without the error bars, to measure what "
            "they buy")
        comparison = partial(_write_baselines, job, folder, later_baselines, times)
    results = run_steps(
        [("fit", lambda done: _fit(job, folder, log)),
         ("held-out check", lambda done: _check_held_out(job, done["fit"], log)),
         ("classification", lambda done: _classify_sources(job, done["fit"], done["outlier score"],
                                                           done["known sources"], executor, progress, log, times)),
         ("later-release check", lambda done: _check_later(job, folder, done, later_baselines, log)),
         ("lists and report", lambda done: _report_files(folder, done, comparison is None, log))],
        # beside the model's fit: the baselines and the twin, which keeps the second core busy to the end, and the
        # blazar-type model, which the classification needs (in the main thread it added its whole fit to the wall
        # time), and the outlier score, which needs only the training split (its density is the model's population
        # prior, fitted once for both); beside the classification: the held-out figures (NumPy and TensorFlow free
        # the GIL)
        beside=[Beside("error-blind model and baselines", comparison and (lambda done, stop: comparison(stop)), "fit",
                       "classification"),
                Beside("bcu-type model", lambda done, stop: _fit_bcu_types(job, folder, log, stop), "fit",
                       "held-out check"),
                Beside("outlier score", lambda done, stop: _fit_outliers(job, log), "fit", "held-out check"),
                # what is known of each source (the earlier releases, loaded and linked; the ATNF pulsars): a second
                # of reading that the classification needs and the fit does not
                Beside("known sources", lambda done, stop: known_index(job.catalog, job.settings["known_pulsars"]),
                       "fit", "held-out check"),
                Beside("held-out figures", lambda done, stop: held_out_figures(done["held-out check"].run,
                                                                               partial(abandon_if, stop)),
                       "classification", "classification")],
        imports=_IMPORTED_BEFORE_THREADS, times=times)
    # the steps return what they made; it is written together at the end, each file atomically (only the models
    # and the comparison, which a rerun reuses, are saved as soon as they are fitted)
    files = {HELDOUT_FILE: results["held-out check"].csv, OOD_FILE: json_text(results["outlier score"]),
             **results["classification"].files, **results["later-release check"][0], **results["lists and report"]}
    with times.timed("writing"):
        write_files(folder, files)
    write_files(folder, {TIMINGS_FILE: json_text(times.record())})
    return folder / REPORT_FILE


@dataclass(frozen=True)
class _MainJob:
    """What the main job runs on, all checked before its folder is claimed."""

    catalog: Any
    data: NoisyDataset
    estimator: Any
    settings: Mapping[str, Any]
    header: dict[str, Any]
    identity: dict[str, Any]
    seed: int
    merge: Mapping[str, Sequence[str]]
    tokens: list[str]
    pool: NoisyDataset
    left_out: list[str]
    train: NoisyDataset
    test: NoisyDataset
    #: The later release the classifications are checked against (None: the catalog is the newest).
    later: str | None
    #: The sources the later check scores, where they are the ones classified (else it builds its own).
    later_pool: NoisyDataset | None
    #: 4LAC-DR3 as `gpal.catalogs.lac.read_4lac` reads it, for the bcu split (None: ``bcu_types`` is 'none').
    lac: Any


def _plan(selection: CatalogSelection, estimator: Any, given: Mapping[str, Any], seed: int) -> _MainJob:
    """The settings checked, the catalog read, the split drawn and the sizes checked: everything that can be
    refused, so a refused command leaves nothing."""
    values = check_settings(SETTINGS, given, "classify_catalog")
    check_target(values["target"], selection.class_groups()[0])
    cat, data, identity = open_job(KIND, selection, estimator)
    trained_codes = [code for codes in data.meta["cuts"]["classes"].values() for code in codes]
    select = values["select"]
    tokens = select_tokens([t for t in DEFAULT_SELECT if t not in trained_codes] if select is None else select)
    header = header_of(SETTINGS, values)  # the lists and the report read the cuts and follow-up settings back
    job_values = {name: values[name] for name in ("test_size", "chunk_size", "baselines", "target", "pool_prior",
                                                  "known_pulsars", "table_formats", "bcu_types")}
    if job_values["known_pulsars"] is not None:  # a missing or malformed file is refused before any work
        from gpal.catalogs.psrcat import read_psrcat

        read_psrcat(job_values["known_pulsars"])
    lac = read_lac() if job_values["bcu_types"] == "4lac" else None  # a missing or damaged 4LAC, likewise
    values.require_all_read("classify_catalog")
    pool = selection_pool(cat, tokens, data.meta["features"])  # an unknown selection fails before training, not after
    test_size, baselines = job_values["test_size"], job_values["baselines"]
    train, test = data.split(test_size=test_size, seed=seed, stratify=True)
    require_per_class(train, min_training_per_class(baselines),
                      f"the training split ({1 - test_size:.0%}) with baselines {list(baselines)}")
    require_per_class(test, 1, f"the held-out check (a stratified {test_size:.0%} of each class)")
    check_sizes(estimator, train)
    later = later_release_of(cat.release)
    moves = list(MOVED_GROUPS) if values.peek("pool_prior") else False  # the rule, so another rule is another run
    return _MainJob(
        catalog=cat, data=data, estimator=estimator, settings=job_values, header=header,
        # the layout too: a folder another layout wrote is another run, never resumed into a mix of the two
        identity={**identity, "layout": LAYOUT_VERSION, "seed": seed,
                  **recorded_settings(SETTINGS, {**values.as_dict(), "select": tokens, "pool_prior": moves})},
        seed=seed, merge=selection.class_groups()[1], tokens=tokens, pool=pool,
        left_out=left_out_codes(cat, trained_codes, tokens), train=train, test=test, later=later,
        # the later check scores the unassociated + bcu sources: reuse them where the job classifies exactly those
        later_pool=pool if later is not None and list(tokens) == list(DEFAULT_SELECT) else None, lac=lac)


def _fit(job: _MainJob, folder: Path, log: Log) -> TrainedModel:
    """The model trained on the training split (or the one a rerun finds saved)."""
    trained_on = f"training split: {job.train.n_samples} of {job.data.n_samples} sources, stratified, seed {job.seed}"
    fit_or_reuse(job.estimator, job.train, folder / TRAINED_DIR, job.merge, trained_on, log, ESTIMATOR_DIR)
    return load_trained(folder)


def _fit_bcu_types(job: _MainJob, folder: Path, log: Log, stop: threading.Event) -> None:
    """The blazar-type model that splits the bcu (`gpal.catalog_jobs.bcu_types`), with ``bcu_types='4lac'`` and bcu
    among the sources to classify; `predict_catalog` applies it from the folder, as ``gpal predict`` does.  Its
    training ends at the next epoch once ``stop`` is set (the run stopped), and nothing is saved."""
    if job.lac is None or not (class1_codes(job.pool.aux["CLASS1"]) == "bcu").any():
        return
    log("fitting the blazar-type model that splits the bcu between bll and fsrq (with 4LAC-DR3's SED peaks; "
        "--bcu-types none leaves the main model's split)")
    estimator = job_estimator(job.estimator).set_params(progress=False)
    stops = "callback" in inspect.signature(estimator.fit).parameters  # a family that takes no callback runs on
    fit_bcu_types(estimator, job.data, job.catalog, folder / TRAINED_DIR, lac=job.lac,
                  callback=(lambda epoch, loss: abandon_if(stop)) if stops else None)


@dataclass(frozen=True)
class _HeldOut:
    """The model's held-out predictions: as the report reads them, and ``tables/heldout.csv``'s text."""

    run: HeldOutRun
    csv: str


def _check_held_out(job: _MainJob, trained: TrainedModel, log: Log) -> _HeldOut:
    """The model's probabilities of the held-out sources, and their table."""
    baselines = job.settings["baselines"]
    log(f"checking on {job.test.n_samples} held-out sources" + (f" beside {', '.join(baselines)}" if baselines else ""))
    proba = trained.estimator.predict_proba(job.test)
    held = pd.DataFrame({"Source_Name": job.test.ids, "true_class": job.test.labels(), SIGNIFICANCE_COLUMN:
                         target_columns(job.catalog, job.test.ids.tolist())[SIGNIFICANCE_COLUMN]})
    with_proba(held, trained.classes, proba)
    # the report reads these values as they are: the table's decimals read back to them (parse_heldout)
    return _HeldOut(HeldOutRun(trained.training, held), held.to_csv(index=False))


def _fit_outliers(job: _MainJob, log: Log) -> dict[str, Any]:
    """The "none of these" score fitted on the training split (`gpal.catalog_jobs.none_of_these`): its record, as
    ``ood.json`` holds it (its values JSON's own, so the job flags the sources as ``gpal predict`` with the folder
    will)."""
    log("fitting the outlier score ('none of these') on the training split"
        + (f", checking it on the {len(job.left_out)} labelled classes left out" if job.left_out else ""))
    held_out_classes = left_out_sources(job.catalog, job.left_out, job.data.meta["features"])
    return check_outliers(job.train, job.test, held_out_classes, job.seed)


@dataclass(frozen=True)
class _Classified:
    """The classified sources: as their tables hold them, their probabilities before any move, and their files."""

    table: ClassifiedSources
    #: The selected sources' probabilities before the pool prior moved them (the later check moves its own).
    pool_proba: np.ndarray
    #: What the pool prior moved them to (None: off).
    pool_prior: dict[str, Any] | None
    #: The classifications (CSV, its ECSV twin, FITS) and the pool prior's record, by path in the run folder.
    files: dict[str, str | bytes]


def _classify_sources(job: _MainJob, trained: TrainedModel, outliers: Mapping[str, Any], known: Any,
                      executor: Any, progress: bool, log: Log, times: StepTimes) -> _Classified:
    """The selected sources classified and flagged by the ``outliers`` record, the unassociated moved to their class
    mix (with ``pool_prior``) and ranked for follow-up."""
    log(f"classifying the {' + '.join(job.tokens)} sources of {job.catalog.release}")
    table = dated(predict_catalog(trained, job.catalog, job.tokens, chunk_size=job.settings["chunk_size"],
                                  executor=executor, progress=progress, pool=job.pool, information=False,
                                  pool_prior=False, outliers=outliers,  # moved below, where its record is made
                                  pulsars=job.settings["known_pulsars"], known=known))
    table = replace(table, meta={**table.meta, **job.header})
    pool_proba = proba_of(table.frame, trained.classes)
    record = None
    if job.settings["pool_prior"]:
        table, moved = adjust_table(table, trained.classes, training_prior(trained.training["n_per_class"],
                                                                           trained.classes),
                                    trained.training.get("merge", {}))
        record = moved.record()
        log(f"moved the unassociated sources' classifications to their own class mix (pool prior; "
            f"--no-pool-prior turns it off): {mixes_text(moved.groups)}")
    target = job.settings["target"]
    log(f"ranking them for follow-up ({FOLLOW_UP_ACQUISITION}: what a label would teach the model about "
        + (f"{target})" if target else "every class)"))
    with times.timed("information", within="classification"):
        table = with_information(table, trained, job.pool, target, job.settings["chunk_size"], executor, progress)
    files, written = rendered_and_read_back(table, [CLASSIFICATIONS_CSV, CLASSIFICATIONS_FITS,
                                                    *extra_names(CLASSIFICATIONS_CSV, job.settings["table_formats"])])
    prior_file = {} if record is None else {POOL_PRIOR_FILE: json_text(record)}
    return _Classified(written, pool_proba, record, {**prior_file, **files})


def _finished(folder: Path, done: Mapping[str, Any], reused: bool) -> FinishedRun:
    """The run as the report reads it, from the steps' results (``reused``: the comparison an earlier run wrote)."""
    held_out, classified = done["held-out check"], done["classification"]
    # a rerun reuses the comparison its first run wrote
    baselines = read_baselines(folder / BASELINES_FILE) if reused else done["error-blind model and baselines"]
    return FinishedRun(held_out.run.training, held_out.run.held, classified.table, baselines,
                       outliers=done["outlier score"], pool_prior=classified.pool_prior,
                       later=done["later-release check"][1])


def _report_files(folder: Path, done: Mapping[str, Any], reused: bool, log: Log) -> dict[str, Any]:
    """The lists, the report's records, tables and sky maps, and ``report.md`` (the held-out figures were drawn
    beside the classification; the sky maps drawn beside the lists and tables measured 20 MiB more peak memory,
    the two at once, for no wall time measurable on a shared machine)."""
    log("writing the target lists, the other lists and the report")
    return report_files(_finished(folder, done, reused), folder, held_out_figures=done["held-out figures"])


def _check_later(job: _MainJob, folder: Path, done: Mapping[str, Any], later_baselines: Mapping[str, np.ndarray],
                 log: Log) -> tuple[dict[str, str], pd.DataFrame | None]:
    """Where the catalog is older than the newest release, the classified sources scored by the classes the later
    release gives them (``gpal check-later``), beside the compared models saved in the run folder: its files, and the
    measures as their table holds them (none: the catalog is the newest)."""
    if job.later is None:
        return {}, None
    trained, classified = done["fit"], done["classification"]
    compared = {name: folder / sub for name, sub in COMPARED_MODEL_DIRS.items() if (folder / sub).is_dir()}
    log(f"checking the classifications against {job.later} (gpal check-later)")
    baselines = list(job.settings["baselines"])
    if job.later_pool is None:  # another selection than the default's sources: the check classifies those itself
        inputs = later_check_inputs(trained, job.later, earlier=job.catalog.path, baselines=baselines, seed=job.seed,
                                    compared=compared)
    else:  # the baselines were fitted beside the model unless an earlier run had fitted them
        baseline_proba = dict(later_baselines) or fit_baselines(job.train.X, job.train.y, job.later_pool.X,
                                                                names=baselines, random_state=job.seed)
        inputs = LaterCheckInputs(trained, link_releases(trained, job.later, earlier=job.catalog.path), job.later_pool,
                                  job.train, classified.pool_proba, baseline_proba, compared)
    check = check_later(inputs, seed=job.seed, pool_prior=job.settings["pool_prior"], classified=classified.table.frame)
    return later_check_files(check), as_read_back(later_check_table(check), read_later_table)


# what the fit (k-means inducing points), the baselines and the known-sources index beside it import lazily: the
# first two both reach sklearn.tree, and the two imports at once stopped a main job in Python's import deadlock error
_IMPORTED_BEFORE_THREADS = ("sklearn.cluster", "sklearn.ensemble", "sklearn.calibration", "sklearn.linear_model",
                            "scipy.spatial", "gpal.catalogs.known_sources", "gpal.estimators.outliers")


def _error_blind_twin(estimator: Any) -> dict[str, Any]:
    """The main job's estimator with the error bars ignored (MGP), when it uses them: what they bought is the difference."""
    from sklearn.base import clone

    from gpal.models.input_noise_setting import strategy_class

    if strategy_class(getattr(estimator, "input_noise", "none")).name == "none":
        return {}
    return {ERROR_BLIND_MODEL: clone(estimator).set_params(input_noise="none", progress=False)}


def _write_baselines(job: _MainJob, folder: Path, later_baselines: dict[str, np.ndarray], times: StepTimes,
                     stop: threading.Event) -> pd.DataFrame:
    """Held-out probabilities of the baselines, fitted on the same training rows and features (values only),
    and of the error-blind twin (`_error_blind_twin`: fitted here on the same rows, and saved in
    ``COMPARED_MODEL_DIRS`` for the later-release check); the table, written last, marks them all done.
    The same fitted baselines' probabilities of ``job.later_pool`` (None: no later check will score it) go into
    ``later_baselines``: the later check fits nothing again.  Returns the table as written.

    Once ``stop`` is set (the model's fit beside it failed or was interrupted), a model's training ends at its next
    epoch by raising `Abandoned`, and nothing is written.  (The baselines run after the twin, not in a thread
    beside it: the two fits already keep both cores busy, and a third thread measured no faster.)"""
    train, test, later_pool, seed = job.train, job.test, job.later_pool, job.seed
    names, models = list(job.settings["baselines"]), _error_blind_twin(job.estimator)
    tests = [test.X] if later_pool is None else [test.X, later_pool.X]
    with times.timed("baselines", beside=True):
        fitted = fit_baselines_on(train.X, train.y, tests, names=list(names), random_state=seed) if names else {}
    probas = {name: proba[0] for name, proba in fitted.items()}
    if later_pool is not None:
        later_baselines.update({name: proba[1] for name, proba in fitted.items()})
    for name, model in models.items():
        with times.timed(name, beside=True):
            model.fit(train, callback=lambda epoch, loss: abandon_if(stop))
            model.save(folder / COMPARED_MODEL_DIRS[name])
            # its columns follow model.classes_ (sorted), the baselines' the data's class order
            probas[name] = proba_by_class(model.predict_proba(test), model.classes_, test.class_names)
    frames = []
    for name, proba in probas.items():
        frame = pd.DataFrame({"model": name, "Source_Name": test.ids, "true_class": test.labels()})
        with_proba(frame, test.class_names, proba)
        frames.append(frame)
    table = (pd.concat(frames, ignore_index=True) if frames
             else pd.DataFrame(columns=["model", "Source_Name", "true_class"]))
    with atomic_output(folder / BASELINES_FILE) as tmp:
        table.to_csv(tmp, index=False)
    return table

"""The verbs' bodies: each reads its parsed options, calls one library function and prints what it returns.

`gpal.cli.parser` binds each to its verb (``run``); messages go to stderr beside the progress bars, results to
stdout.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, Callable

from gpal.cli.options import ESTIMATOR, JOB, given
from gpal.interrupts import check_stop


def _say(message: str) -> None:
    """A step of the work, on stderr beside the progress bars (stdout keeps the results); a safe point to stop at."""
    check_stop()
    print(f"gpal: {message}", file=sys.stderr, flush=True)


# ------------------------------------------------------------ what a job runs on
def _features(value: str | None) -> Any:
    """A preset name, or comma-separated column specs such as 'LP_Index,log:Signif_Avg'."""
    from gpal.catalogs.features import FEATURE_PRESETS, RELEASE_PRESET

    if value is None or "," not in value and ":" not in value and value.lower() in {*FEATURE_PRESETS, RELEASE_PRESET}:
        return value
    return [v.strip() for v in value.split(",") if v.strip()]


def _selection(args: argparse.Namespace) -> Any:
    from gpal.catalog_jobs.selection import CatalogSelection

    return CatalogSelection(catalog=args.catalog, classes=args.classes, min_significance=args.min_significance,
                            features=_features(args.features), missing_errors=args.missing_errors)


def _estimator(args: argparse.Namespace, make: Callable[..., Any], progress: bool) -> Any:
    """The verb's estimator (``make``) with the settings given on the command line."""
    return make(**given(args, ESTIMATOR), random_state=args.seed, progress=progress)


# ---------------------------------------------------------------- catalog
def catalog_summary(args: argparse.Namespace) -> int:
    from gpal.catalogs import load_catalog

    catalog = load_catalog(args.catalog)
    print(catalog.summary(_features(args.features)))
    return 0


# ------------------------------------------------------------------ train
def train(args: argparse.Namespace) -> int:
    from gpal.catalog_jobs.model_folders import train_catalog_model
    from gpal.catalog_jobs.settings import main_job_estimator

    folder = train_catalog_model(_selection(args), _estimator(args, main_job_estimator, not args.no_progress),
                                 args.out, force=args.force, log=_say)
    print(f"model saved in {folder} (predict with: gpal predict {folder} --catalog ... --out table.csv)")
    return 0


# ---------------------------------------------------------------- predict
def predict(args: argparse.Namespace) -> int:
    from collections import Counter

    from gpal.catalog_jobs.follow_up import check_target
    from gpal.catalog_jobs.model_folders import load_trained
    from gpal.catalog_jobs.prediction import predict_catalog, predict_catalog_blocks
    from gpal.catalog_jobs.tables import check_table_path, write_probability_blocks
    from gpal.catalogs import load_catalog
    from gpal.runs.executors import make_executor

    out = check_table_path(args.out, args.force)  # before any work
    trained = load_trained(args.model_dir)  # the record only: TensorFlow loads after the catalog checks
    target = check_target(args.target, trained.training["classes"])  # the record: no model loaded yet
    catalog = load_catalog(args.catalog)
    counts: Counter = Counter()
    with make_executor(args.scheduler) as executor:
        options = dict(chunk_size=args.chunk_size, executor=executor, progress=not args.no_progress, target=target)
        # in blocks of rows, written as they come: memory does not grow with the catalog; the pool prior moves every
        # row by the mix of all of them, so with it the table is made whole
        tables = ([predict_catalog(trained, catalog, args.select, pool_prior=True, **options)] if args.pool_prior
                  else predict_catalog_blocks(trained, catalog, args.select, **options))
        write_probability_blocks(_counted(tables, counts), out, force=args.force)
    print(f"{sum(counts.values())} sources ({', '.join(f'{c} {n}' for c, n in counts.most_common())}) -> {out}")
    return 0


def _counted(tables: Any, counts: Any) -> Any:
    """The blocks of a table as they come, their predicted classes added to ``counts``."""
    for table in tables:
        counts.update(table.frame["predicted_class"])
        yield table


# --------------------------------------------------------------- classify
def classify(args: argparse.Namespace) -> int:
    from gpal.catalog_jobs.classify import classify_catalog
    from gpal.catalog_jobs.report import headline
    from gpal.catalog_jobs.settings import main_job_estimator
    from gpal.runs.background import preload
    from gpal.runs.executors import make_executor

    selection, estimator = _selection(args), _estimator(args, main_job_estimator, not args.no_progress)
    # The job's astropy first (the catalog reader's; the ECSV writer's YAML, which loads astropy.coordinates): each
    # of its config items scans every loaded module (inspect.getmodule), and beside or after TensorFlow's thousands
    # of modules those imports spent 4 s in os.path.realpath (0.4 s for the YAML's 0.08)
    import astropy.io.fits  # noqa: F401
    import astropy.io.misc.yaml  # noqa: F401
    import astropy.table  # noqa: F401

    # TensorFlow beside the selection's features (the job trains or loads a model), then the report's matplotlib;
    # modules that live as long as the process, out of the garbage collector's way
    preload("gpal.models", "gpal.evaluation.plots", lifelong=True)
    with make_executor(args.scheduler) as executor:
        written = classify_catalog(selection, estimator, args.out, seed=args.seed, force=args.force,
                                   progress=not args.no_progress, executor=executor, log=_say, **given(args, JOB))
    print("\n".join(headline(written.parent)))
    print(f"report: {written}")
    if args.verbose:
        _print_times(written.parent)
    return 0


def _print_times(folder: Any) -> None:
    """Where the run's time went, as its record holds it (stderr, beside the steps' messages)."""
    import json

    from gpal.catalog_jobs.layout import TIMINGS_FILE
    from gpal.runs.timings import format_times

    record = json.loads((folder / TIMINGS_FILE).read_text())
    print("\n".join(["gpal: where the time went (CPU: the whole process's over each step's span)",
                     *format_times(record)]), file=sys.stderr)


# ------------------------------------------------------------ check-later
def check_later(args: argparse.Namespace) -> int:
    from pathlib import Path

    from gpal.catalog_jobs.later_check import check_later, later_check_inputs, write_later_check
    from gpal.catalog_jobs.layout import LATER_CHECK_SOURCES_FILE

    baselines = [b.strip() for b in args.baselines.split(",") if b.strip()]
    inputs = later_check_inputs(args.trained, args.later, earlier=args.earlier, baselines=baselines, seed=args.seed)
    check = check_later(inputs, seed=args.seed)
    path = write_later_check(check, args.out or args.trained)
    print(check.markdown())
    print(f"tables: {path} (the scored sources beside it, {Path(LATER_CHECK_SOURCES_FILE).name})")
    return 0


# ----------------------------------------------------------------- active
def active(args: argparse.Namespace) -> int:
    from gpal.catalog_jobs.active import run_active
    from gpal.catalog_jobs.settings import main_job_estimator

    written = run_active(_selection(args), _estimator(args, main_job_estimator, progress=False), args.out,
                         seed=args.seed, force=args.force, progress=not args.no_progress, **given(args, JOB))
    print(f"report: {written}")
    return 0


# ----------------------------------------------------------------- report
def report(args: argparse.Namespace) -> int:
    settings = given(args, JOB)
    if settings:  # the lists cut again: the classify folder's own, without the other kinds' modules
        from gpal.catalog_jobs.report.recut import recut_lists

        print(f"report: {recut_lists(args.run_dir, **settings)}")
        return 0
    from gpal.workflows.run_folders import rebuild_report

    print(f"report: {rebuild_report(args.run_dir)}")
    return 0


# --------------------------------------------------------------- workflow
def workflow(args: argparse.Namespace) -> int:
    from gpal.workflows.shipped import resolve_workflow, shipped_workflows, workflow_title

    if args.list:
        shipped = shipped_workflows()
        width = max(map(len, shipped), default=0)
        for name, path in shipped.items():
            print(f"{name:<{width}}  {workflow_title(path)}")
        return 0
    if args.file is None:
        raise ValueError("give a workflow: a shipped name (gpal workflow --list) or a FILE.yaml")
    from gpal.workflows import run_workflow

    folder = run_workflow(resolve_workflow(args.file), overrides=args.set, out=args.out, scheduler=args.scheduler,
                          force=args.force, progress=not args.no_progress)
    print(f"results in {folder}")
    return 0


# ------------------------------------------------------------- gpu-check
def gpu_check(args: argparse.Namespace) -> int:
    from gpal.catalog_jobs.device_check import check_devices, format_check, write_record

    record = check_devices(args.workloads, epochs=args.epochs, mnist_steps=args.mnist_steps, cpu=not args.gpu_only,
                           say=_say if not args.no_progress else (lambda message: None))
    print(format_check(record))
    if args.json:
        print(f"record: {write_record(record, args.json)}")
    return 0


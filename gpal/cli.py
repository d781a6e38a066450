"""The ``gpal`` command: each verb parses its options, calls one library function and prints what it returns.

The options of a job's settings are generated from what the library declares: an
estimator's parameters (`gpal.estimators.settings.estimator_settings`) and a job's own
settings (``SETTINGS`` of `gpal.catalog_jobs.classify`, `campaign_settings()` of `gpal.catalog_jobs.active`), with
choices from the registries, the value's form from the constraints and defaults from the
library (which checks the values); so a setting added there is an option here without an edit.

Exit codes: 0 done; 2 bad input (the message says what and what was expected);
1 the work itself failed (training diverged); 3 an active-learning run waits for
labels; 130 interrupted (rerun the same command to resume).  A ``TypeError`` is not bad
input: the command line hands the library values of the types it declares, so one is a bug
in gpal and ends with its traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import io
import os
import sys
import warnings
from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

import gpal
from gpal.interrupts import check_stop, stopping_at_safe_points

if TYPE_CHECKING:
    from gpal.constraints import Constraint

# The rest of gpal is imported inside the functions, after `main` has taken Ctrl-C over: an interruption while the
# catalog and SciPy modules load (seconds on a busy machine) is then a clean stop, not a traceback.

EXIT_BAD_INPUT = 2
EXIT_FAILED = 1
EXIT_LABELS_PENDING = 3
EXIT_INTERRUPTED = 130

_SCHEDULER_HELP = (
    "where prediction chunks run: 'in-process' (default), 'local-dask' (a Dask LocalCluster on this machine) "
    "or 'tcp://HOST:PORT' (an existing Dask scheduler, see docs/scaling.md)"
)
#: The prefixes of the ``dest`` of generated options, the estimator's and the job's, apart from the verb's own.
_ESTIMATOR, _JOB = "estimator:", "job:"


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


def _given(args: argparse.Namespace, prefix: str) -> dict[str, Any]:
    """The generated options given on the command line (one not given keeps the library's default)."""
    return {dest[len(prefix):]: value for dest, value in vars(args).items() if dest.startswith(prefix)}


def _estimator(args: argparse.Namespace, make: Callable[..., Any], progress: bool) -> Any:
    """The verb's estimator (``make``) with the settings given on the command line."""
    return make(**_given(args, _ESTIMATOR), random_state=args.seed, progress=progress)


# ---------------------------------------------------------------- catalog
def _catalog_summary(args: argparse.Namespace) -> int:
    from gpal.catalogs import load_catalog

    catalog = load_catalog(args.catalog)
    print(catalog.summary(_features(args.features)))
    return 0


# ------------------------------------------------------------------ train
def _train(args: argparse.Namespace) -> int:
    from gpal.catalog_jobs.model_folders import train_catalog_model
    from gpal.catalog_jobs.settings import main_job_estimator

    folder = train_catalog_model(_selection(args), _estimator(args, main_job_estimator, not args.no_progress),
                                 args.out, force=args.force, log=_say)
    print(f"model saved in {folder} (predict with: gpal predict {folder} --catalog ... --out table.csv)")
    return 0


# ---------------------------------------------------------------- predict
def _predict(args: argparse.Namespace) -> int:
    from gpal.catalog_jobs.follow_up import check_target
    from gpal.catalog_jobs.model_folders import load_trained
    from gpal.catalog_jobs.prediction import predict_catalog
    from gpal.catalog_jobs.tables import check_table_path, write_probability_table
    from gpal.catalogs import load_catalog
    from gpal.runs.executors import make_executor

    out = check_table_path(args.out, args.force)  # before any work
    trained = load_trained(args.model_dir)  # the record only: TensorFlow loads after the catalog checks
    target = check_target(args.target, trained.training["classes"])  # the record: no model loaded yet
    catalog = load_catalog(args.catalog)
    with make_executor(args.scheduler) as executor:
        table = predict_catalog(trained, catalog, args.select, chunk_size=args.chunk_size, executor=executor,
                                progress=not args.no_progress, target=target, pool_prior=args.pool_prior)
    write_probability_table(table, out, force=args.force)
    counts = table.frame["predicted_class"].value_counts()
    print(f"{len(table.frame)} sources ({', '.join(f'{c} {n}' for c, n in counts.items())}) -> {out}")
    return 0


# --------------------------------------------------------------- classify
def _classify(args: argparse.Namespace) -> int:
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
        report = classify_catalog(selection, estimator, args.out, seed=args.seed, force=args.force,
                                  progress=not args.no_progress, executor=executor, log=_say, **_given(args, _JOB))
    print("\n".join(headline(report.parent)))
    print(f"report: {report}")
    return 0


# ------------------------------------------------------------ check-later
def _check_later(args: argparse.Namespace) -> int:
    from pathlib import Path

    from gpal.catalog_jobs.later_check import (
        LATER_CHECK_SOURCES_FILE, check_later, later_check_inputs, write_later_check,
    )

    baselines = [b.strip() for b in args.baselines.split(",") if b.strip()]
    inputs = later_check_inputs(args.trained, args.later, earlier=args.earlier, baselines=baselines, seed=args.seed)
    check = check_later(inputs, seed=args.seed)
    path = write_later_check(check, args.out or args.trained)
    print(check.markdown())
    print(f"tables: {path} (the scored sources beside it, {Path(LATER_CHECK_SOURCES_FILE).name})")
    return 0


# ----------------------------------------------------------------- active
def _active(args: argparse.Namespace) -> int:
    from gpal.catalog_jobs.active import run_active
    from gpal.catalog_jobs.settings import main_job_estimator

    report = run_active(_selection(args), _estimator(args, main_job_estimator, progress=False), args.out,
                        seed=args.seed, force=args.force, progress=not args.no_progress, **_given(args, _JOB))
    print(f"report: {report}")
    return 0


# ----------------------------------------------------------------- report
def _report(args: argparse.Namespace) -> int:
    from gpal.workflows.run_folders import rebuild_report

    print(f"report: {rebuild_report(args.run_dir)}")
    return 0


# --------------------------------------------------------------- workflow
def _workflow(args: argparse.Namespace) -> int:
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
def _gpu_check(args: argparse.Namespace) -> int:
    from gpal.catalog_jobs.device_check import check_devices, format_check, write_record

    record = check_devices(args.workloads, epochs=args.epochs, mnist_steps=args.mnist_steps, cpu=not args.gpu_only,
                           say=_say if not args.no_progress else (lambda message: None))
    print(format_check(record))
    if args.json:
        print(f"record: {write_record(record, args.json)}")
    return 0


# ----------------------------------------------------------------- parser
def _add_catalog(parser: argparse.ArgumentParser) -> None:
    from gpal.catalogs.catalog import DEFAULT_RELEASE, RELEASES

    parser.add_argument(
        "--catalog", default=DEFAULT_RELEASE,
        help=f"a shipped release ({', '.join(RELEASES)}; default {DEFAULT_RELEASE}) or the path of a gll_psc_v*.fit[.gz] file",
    )


def _add_selection(parser: argparse.ArgumentParser, classes: str | None, features: str | None) -> None:
    """The options of a `CatalogSelection`: ``classes`` None makes --classes required."""
    from gpal.catalogs.features import MISSING_ERROR_REPAIRS, RELEASE_PRESET
    from gpal.catalogs.schemes import CLASS_SCHEMES

    _add_catalog(parser)
    parser.add_argument(
        "--classes", default=classes, required=classes is None,
        help=f"a class scheme ({', '.join(CLASS_SCHEMES)}: docs/catalogs.md) or classes, comma-separated, where "
        f"NAME=CODE+CODE merges CLASS1 codes into one class (e.g. {CLASS_SCHEMES['blazar_pulsar'].spec}); codes are "
        "case-insensitive" + (f" (default {classes})" if classes else ""))
    parser.add_argument("--min-significance", type=float, default=None,
                        help="keep sources with Signif_Avg above this (default: no cut)")
    shown = ("'release': the catalog release's own preset, fermi_dr4 on 4FGL layouts, fermi_3fgl on 3FGL"
             if features == RELEASE_PRESET else repr(features) if features else "the paper's six, preset 'default'")
    parser.add_argument("--features", default=features,
                        help=f"feature preset (default {shown}; 'villacampa2021' is the paper's six) or comma-separated "
                        "columns, 'log:COL' for a log transform (error bars from Unc_COL when present)")
    parser.add_argument("--missing-errors", choices=tuple(MISSING_ERROR_REPAIRS), default=None,
                        help="a value whose error the catalog does not give: 'exact' (variance 0) or 'population' "
                        "(the median error of the sources that have one); default: as the features say")


def _yaml_value(text: str) -> Any:
    """Lists and mappings as YAML: --hidden-sizes "[50, 50]", --likelihood-options "{num_samples: 50}" (read as
    workflow files are: no anchors or aliases, which could stand for billions of values)."""
    from gpal.workflows.schema import parse_value

    return parse_value(text, "the value")


def _parse_text(constraint: Constraint) -> Callable[[str], Any]:
    """How the text of an option becomes the value ``constraint`` is about: a number, None, a list, or YAML."""
    from gpal.constraints import Integer, ListOf, Optional, Real

    if isinstance(constraint, Optional):
        inner = _parse_text(constraint.inner)
        return lambda text: None if text.lower() in ("none", "null") else inner(text)
    if isinstance(constraint, Integer):
        return int
    if isinstance(constraint, Real):
        return float
    if isinstance(constraint, ListOf):  # also comma-separated: --baselines logistic,random_forest_isotonic
        item = _parse_text(constraint.item)
        return lambda text: _yaml_value(text) if text.lstrip().startswith("[") else [
            item(t.strip()) for t in text.split(",") if t.strip()]
    return _yaml_value


def _option(name: str, constraint: Constraint) -> dict[str, Any]:
    """The argparse keywords of a setting: its choices, an --x / --no-x pair, or a type read as its constraint says.

    Only the form is checked here; the library checks the value (its range, how it goes with the others)
    and refuses it as every bad input is refused: ``gpal: error: ...``, exit code 2.
    """
    from gpal.constraints import Boolean

    choices = constraint.choices()
    if choices:
        return {"choices": choices}
    if isinstance(constraint, Boolean):
        return {"action": argparse.BooleanOptionalAction}
    parse = _parse_text(constraint)

    def value(text: str) -> Any:
        try:
            return parse(text)
        except ValueError as exc:
            shown = repr(text) if len(text) <= 80 else repr(text[:77]) + "..."
            why = f" ({str(exc).removeprefix('the value: ')})" if str(exc).startswith("the value") else ""
            raise argparse.ArgumentTypeError(f"{name} must be {constraint.expected}; got {shown}{why}") from None

    return {"type": value, "metavar": name.upper()}


def _add_settings(group: Any, settings: Mapping[str, Any], prefix: str, flags: Mapping[str, str] | None = None) -> None:
    """An option per `gpal.catalog_jobs.settings.Setting`, its default the library's; ``flags`` renames some."""
    for name, setting in settings.items():
        flag = (flags or {}).get(name, "--" + name.replace("_", "-"))
        default = list(setting.default) if isinstance(setting.default, tuple) else setting.default
        words = (setting.doc or name.replace("_", " ")) + ("" if default is None else f"; default {default}")
        group.add_argument(flag, dest=prefix + name, default=argparse.SUPPRESS, help=words.replace("%", "%%"),
                           **_option(name, setting.constraint))


def _add_estimator(parser: argparse.ArgumentParser, estimator: Any, seed_help: str,
                   flags: Mapping[str, str] | None = None) -> None:
    """An option per parameter ``estimator`` declares, its value there the default; and --seed."""
    from gpal.estimators.settings import estimator_settings

    group = parser.add_argument_group(
        f"{type(estimator).__name__} settings",
        "every parameter the estimator declares (docs/methods.md); an option not given keeps the default shown")
    _add_settings(group, estimator_settings(estimator), _ESTIMATOR, flags)
    group.add_argument("--seed", type=int, default=0, help=f"{seed_help} (default 0)")


def _add_common(parser: argparse.ArgumentParser, force_help: str) -> None:
    parser.add_argument("--force", action="store_true", help=force_help)
    parser.add_argument("--no-progress", action="store_true", help="do not show progress bars")
    parser.add_argument("--quiet", action="store_true",
                        help="do not print what was done to the data (rows dropped for NaN values, missing errors read "
                        "as exact, ambiguous links), which is printed whatever PYTHONWARNINGS says")
    parser.add_argument("--verbose", action="store_true",
                        help="keep TensorFlow's own start-up messages (absl, CUDA probing) on stderr, for debugging")


def build_parser() -> argparse.ArgumentParser:
    from gpal.catalogs.catalog import RELEASES
    from gpal.catalogs.releases import NEWEST_RELEASE
    from gpal.evaluation.baselines import BASELINES
    from gpal.catalog_jobs.active import campaign_settings
    from gpal.catalog_jobs.classify import SETTINGS as MAIN_JOB_SETTINGS
    from gpal.catalog_jobs.layout import DEFAULT_OUT_DIR
    from gpal.catalog_jobs.prediction import DEFAULT_CHUNK_SIZE, DEFAULT_SELECT
    from gpal.catalog_jobs.pool_prior import APPLIED_BY_DEFAULT
    from gpal.catalog_jobs.selection import CatalogSelection
    from gpal.catalog_jobs.settings import main_job_estimator

    main_job = CatalogSelection()
    parser = argparse.ArgumentParser(
        prog="gpal",
        description="Gaussian-process classification of Fermi-LAT catalog sources with noisy inputs. "
        "See docs/cli.md for every verb with examples.",
    )
    parser.add_argument("--version", action="version", version=f"gpal {gpal.__version__}")
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")

    catalog = verbs.add_parser("catalog", help="inspect a LAT catalog (any shipped release or FITS file)")
    catalog_verbs = catalog.add_subparsers(dest="catalog_verb", required=True, metavar="ACTION")
    summary = catalog_verbs.add_parser("summary", help="print the release, its class counts and the feature preset")
    _add_catalog(summary)
    summary.add_argument("--features", default=main_job.features,
                         help="feature preset or comma-separated columns to describe (default: the main job's, "
                         "the catalog release's own preset)")
    summary.set_defaults(run=_catalog_summary)

    train = verbs.add_parser("train", help="train a classifier on labelled catalog sources and save it",
                             description="Fit a NoisyGPClassifier (the main job's settings unless given) on every "
                             "selected labelled source and save it with a record of what it was trained on "
                             "(training.json).")
    _add_selection(train, classes=None, features=main_job.features)
    train.add_argument("--out", required=True, help="folder to write the model into (model/, training.json)")
    _add_estimator(train, main_job_estimator(), "seed of every random choice")
    _add_common(train, "replace a folder that holds a different model")
    train.set_defaults(run=_train)

    predict = verbs.add_parser("predict", help="write class probabilities of catalog sources to CSV, FITS, MRT or VOTable",
                               description="Classify catalog sources with a model from gpal train or gpal classify.")
    predict.add_argument("model_dir", metavar="MODEL_DIR", help="the --out folder of gpal train or gpal classify")
    _add_catalog(predict)
    selection = ",".join(DEFAULT_SELECT)
    predict.add_argument("--select", default=selection,
                         help=f"which sources: 'unassociated', 'bcu', any CLASS1 code, a comma-separated list of these "
                         f"(default {selection!r}, as gpal classify), or 'all'")
    predict.add_argument("--chunk-size", type=int, default=DEFAULT_CHUNK_SIZE,
                         help=f"rows per prediction task (default {DEFAULT_CHUNK_SIZE})")
    predict.add_argument("--target", default=None, metavar="CLASS",
                         help="the information column scores what a label would teach about this class of the model "
                         "(default: every class, as gpal classify)")
    predict.add_argument("--pool-prior", action=argparse.BooleanOptionalAction, default=APPLIED_BY_DEFAULT,
                         help="move the unassociated sources' probabilities to their own class mix, as gpal classify "
                         "--pool-prior does (default: the model's own probabilities, as gpal classify)")
    predict.add_argument("--scheduler", default=None, help=_SCHEDULER_HELP)
    predict.add_argument("--out", required=True, help="output table: FILE.csv (with FILE.ecsv), FILE.fits, FILE.mrt (an "
                         "AAS journal's machine-readable table) or FILE.vot (VOTable, for VO tools)")
    _add_common(predict, "overwrite an existing output file")
    predict.set_defaults(run=_predict)

    classify = verbs.add_parser(
        "classify", help="the main job: train, check on held-out sources, classify the unassociated ones",
        description="Train the default noisy-input classifier on associated sources of the class scheme (default: bll, "
        "fsrq and pulsar = psr+msp), check it on a held-out 20% split, classify every unassociated and bcu source, flag "
        "those unlike every training source (ood), and write tables, figures, sky maps and report.md.  Rerunning with "
        "the same options reuses the trained model.")
    classify.add_argument("--out", default=DEFAULT_OUT_DIR, help=f"output folder (default ./{DEFAULT_OUT_DIR})")
    _add_selection(classify, classes=main_job.classes, features=main_job.features)
    _add_settings(classify.add_argument_group("main job settings"), MAIN_JOB_SETTINGS, _JOB)
    classify.add_argument("--scheduler", default=None, help=_SCHEDULER_HELP)
    _add_estimator(classify, main_job_estimator(), "seed of the split and of training")
    _add_common(classify, "replace an output folder that holds a different run")
    classify.set_defaults(run=_classify)

    later = verbs.add_parser(
        "check-later", help="score a trained model's classifications by the classes a later release gives them",
        description="Classify the unassociated and bcu sources of the model's release, link them to a later release "
        "(ASSOC_FGL or kept names) and score the model beside baselines refitted on its training rows: NLL and "
        "balanced accuracy over the model's classes, AGN-vs-pulsar AUC, the none-of-these flag on later 'other' sources, top-k pulsar yield, "
        "with paired bootstrap intervals.")
    later.add_argument("--trained", required=True, help="the --out folder of gpal classify or gpal train")
    later.add_argument("--later", default=NEWEST_RELEASE,
                       help=f"the later release ({', '.join(RELEASES)}; default {NEWEST_RELEASE}) or its file")
    later.add_argument("--earlier", default=None,
                       help="the model's catalog file, where it was trained on a file that is not a shipped release")
    later.add_argument("--baselines", default=",".join(BASELINES),
                       help=f"comma-separated, from {', '.join(BASELINES)} (default: all of them)")
    later.add_argument("--seed", type=int, default=0, help="seed of the baselines and the bootstrap (default 0)")
    later.add_argument("--out", default=None, help="folder for tables/later_check.csv and later_check_sources.csv "
                       "(default: the --trained folder)")
    later.set_defaults(run=_check_later)

    active = verbs.add_parser(
        "active", help="choose which sources to label next (simulated or with labels typed into files)",
        description="Pool-based active learning, checkpointed after every query: rerun the same command to resume "
        "(raise --queries to continue). --oracle simulated hides the labels of labelled catalog sources and reveals "
        "them on request; --oracle file writes DIR/queries/query_NNNN.csv for the observers to fill in (exit code 3 "
        "until they have).")
    _add_selection(active, classes=main_job.classes, features=main_job.features)
    active.add_argument("--out", required=True, help="run folder (checkpoint/, report.md, learning curves)")
    _add_settings(active.add_argument_group("campaign settings"), campaign_settings(), _JOB)
    _add_estimator(active, main_job_estimator(), "seed of every random choice", flags={"batch_size": "--train-batch-size"})
    _add_common(active, "replace a folder that holds a different run")
    active.set_defaults(run=_active)

    report = verbs.add_parser("report", help="rebuild the figures, tables and report.md of a finished run folder")
    report.add_argument("run_dir", metavar="RUN_DIR",
                        help="a gpal classify output, an active-learning run or a repeated-splits experiment folder")
    report.set_defaults(run=_report)

    workflow = verbs.add_parser("workflow", help="run a declarative workflow, shipped (by name) or a YAML file; "
                                "see docs/workflows.md")
    workflow.add_argument("file", metavar="NAME|FILE.yaml", nargs="?",
                          help="a shipped workflow's name (e.g. fermi_4fgl; --list shows them) or a workflow file")
    workflow.add_argument("--list", action="store_true", help="list the shipped workflows (name and title) and exit")
    workflow.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                          help="override a parameter, e.g. --set protocol.splits=2 --set training.epochs=20 (repeatable)")
    workflow.add_argument("--out", default=None, help="output folder (default: the file's 'out')")
    workflow.add_argument("--scheduler", default=None, help=_SCHEDULER_HELP.replace("prediction chunks", "units"))
    _add_common(workflow, "replace an output folder that holds a different run")
    workflow.set_defaults(run=_workflow)

    from gpal.catalog_jobs.device_check import WORKLOADS

    gpu = verbs.add_parser("gpu-check", help="say whether TensorFlow sees a GPU and time gpal's training step on it "
                           "(and on the CPU); without a GPU it says so and exits 0, see docs/gpu.md")
    gpu.add_argument("--workloads", type=lambda text: [w.strip() for w in text.split(",") if w.strip()],
                     default=list(WORKLOADS), metavar="NAME,...",
                     help=f"what to time, among {', '.join(WORKLOADS)} (default: all)")
    gpu.add_argument("--epochs", type=int, default=4, help="epochs of each timed fit; the first is left out (default 4)")
    gpu.add_argument("--mnist-steps", type=int, default=20,
                     help="mini-batches of a timed MNIST epoch, scaled to the 300 of a full one (default 20)")
    gpu.add_argument("--gpu-only", action="store_true", help="do not time the CPU beside the GPUs")
    gpu.add_argument("--json", default=None, metavar="FILE", help="also write the record as JSON")
    gpu.add_argument("--no-progress", action="store_true", help="do not print each step on stderr")
    gpu.set_defaults(run=_gpu_check)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command of ``argv`` (None: this process's command line) and return its exit status.

    With None the process ends when this returns, and its last objects leave Python's garbage collector
    (`gc.freeze`): the collection at Python's exit otherwise walks TensorFlow's millions of objects, 2.6 s after
    the main job (0.3 s frozen).  Nothing that needs finalising is among them: outputs are written and closed
    before a command returns, and exit handlers (`atexit`, `weakref.finalize`) still run.
    """
    # the process's own command keeps the handler to its end: Python's exit waits for the threads still importing
    # (`preload`), and a Ctrl-C meanwhile is the system's at once rather than a KeyboardInterrupt in that wait
    with stopping_at_safe_points(restore=argv is not None), _escaping_what_cannot_be_shown():
        code = _run(argv)
    if argv is None:
        gc.freeze()
    return code


@contextlib.contextmanager
def _escaping_what_cannot_be_shown() -> Any:
    """Messages reach any terminal: a character its encoding lacks (an ASCII terminal, a folder named 'résultats')
    is written as an escape (r\\xe9sultats) instead of failing the command after its work was done."""
    changed = []
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper) and stream.errors == "strict":
            stream.reconfigure(errors="backslashreplace")
            changed.append(stream)
    try:
        yield
    finally:
        for stream in changed:
            stream.reconfigure(errors="strict")


def _run(argv: Sequence[str] | None) -> int:
    # TensorFlow's import then loads tf_keras (GPflow's optimisers) instead of Keras 3, which gpal never uses:
    # a quarter of the import's CPU.  Only the command's own process: a library user's tf.keras is left alone.
    os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
    args = build_parser().parse_args(argv)
    from gpal.active.oracles import LabelsPending

    from gpal.quiet import loud_tensorflow, quiet_tensorflow

    if getattr(args, "verbose", False):
        loud_tensorflow()  # importing gpal quieted TensorFlow unless the user set its log level
    else:
        quiet_tensorflow()

    from gpal.runs.output_dir import discard_unused_claims, forget_claims

    forget_claims()
    code = _run_verb(args, LabelsPending)
    if code in (EXIT_BAD_INPUT, EXIT_FAILED):
        discard_unused_claims()  # a refusal leaves no folder it created
    return code


def _run_verb(args: argparse.Namespace, LabelsPending: type) -> int:
    from gpal.catalog_jobs.settings import FewRowsWarning
    from gpal.catalogs.catalog import DroppedRowsWarning, RepairedRowsWarning
    from gpal.catalogs.links import AmbiguousLinkWarning

    with warnings.catch_warnings():
        warnings.showwarning = lambda message, *_, **__: print(f"gpal: warning: {message}", file=sys.stderr)
        # what was done to the data is said whatever Python's warning filters say (PYTHONWARNINGS=ignore is common
        # on clusters); --quiet is the way to silence it.  The library keeps them Python warnings.
        for category in (DroppedRowsWarning, RepairedRowsWarning, AmbiguousLinkWarning, FewRowsWarning):
            warnings.filterwarnings("ignore" if getattr(args, "quiet", False) else "default", category=category)
        try:
            code = args.run(args)
            check_stop()  # Ctrl-C during the last step: the work is done, and a rerun says so at once
            return code
        except LabelsPending as exc:
            print(f"gpal: waiting for labels: {exc}", file=sys.stderr)
            return EXIT_LABELS_PENDING
        except KeyboardInterrupt:
            return _interrupted()
        except FloatingPointError as exc:  # gpal.training.svi.TrainingError: the ELBO became non-finite
            print(f"gpal: error: training failed: {exc}", file=sys.stderr)
            return EXIT_FAILED
        except (ValueError, OSError) as exc:  # a bad value (InvalidParameter is one), a missing or unreadable file
            _error(str(exc))
            return EXIT_BAD_INPUT
        except Exception as exc:
            why = _user_caused(exc)
            if why is None:
                raise
            _error(why)
            return EXIT_BAD_INPUT


def _interrupted() -> int:
    print("gpal: interrupted; rerun the same command to resume", file=sys.stderr)
    return EXIT_INTERRUPTED


def _error(message: str) -> None:
    """One ``gpal: error:`` line, however many lines the message had."""
    print(f"gpal: error: {' '.join(message.split())}", file=sys.stderr)


def _user_caused(exc: Exception) -> str | None:
    """What to say of a failure the input caused (the settings asked for too much), or None for a bug.

    The library bounds sizes before any work (`gpal.training.budget`); this is the net under it:
    a Cholesky failure (settings the model cannot train with), memory or TensorFlow's resource
    limits, a number or a nesting past Python's.
    """
    from gpal.training.svi import CholeskyError

    if isinstance(exc, CholeskyError):
        return f"training failed: {exc}"
    if isinstance(exc, MemoryError) or type(exc).__name__ == "ResourceExhaustedError":
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
        return (f"out of memory ({first}); lower the sizes asked for (--n-samples, --num-inducing, --hidden-sizes, "
                "--batch-size, --chunk-size)")
    if isinstance(exc, OverflowError):
        return f"a value is too large for the computation ({exc}); give smaller settings"
    if isinstance(exc, RecursionError):
        return "an input is nested too deeply to read (a list or mapping inside thousands of others)"
    return None


if __name__ == "__main__":
    sys.exit(main())

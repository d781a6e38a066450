"""The ``gpal`` command line: its verbs, each with its options and the body that runs it (`gpal.cli.verbs`).

A job's settings are not listed here: `gpal.cli.options` generates their options from the library's declarations.
"""

from __future__ import annotations

import argparse
from typing import Any, Callable, Sequence

import gpal
from gpal.cli import verbs
from gpal.cli.options import JOB, add_estimator, add_settings

_SCHEDULER_HELP = (
    "where prediction chunks run: 'in-process' (default), 'local-dask' (a Dask LocalCluster on this machine) "
    "or 'tcp://HOST:PORT' (an existing Dask scheduler, see docs/scaling.md)"
)


def _add_catalog(parser: argparse.ArgumentParser) -> None:
    from gpal.catalogs.releases import DEFAULT_RELEASE, RELEASES

    parser.add_argument(
        "--catalog", default=DEFAULT_RELEASE,
        help=f"a shipped release ({', '.join(RELEASES)}; default {DEFAULT_RELEASE}) or the path of a catalog file: the LAT's gll_psc_v*.fit[.gz], or the same table as ECSV or VOTable (with the "
             "header keyword CDS-NAME, or source names that say the release)",
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


def _add_common(parser: argparse.ArgumentParser, force_help: str) -> None:
    parser.add_argument("--force", action="store_true", help=force_help)
    parser.add_argument("--no-progress", action="store_true", help="do not show progress bars")
    parser.add_argument("--quiet", action="store_true",
                        help="do not print what was done to the data (rows dropped for NaN values, missing errors read "
                        "as exact, ambiguous links), which is printed whatever PYTHONWARNINGS says")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="keep TensorFlow's own start-up messages (absl, CUDA probing) on stderr, for debugging; "
                        "gpal classify also prints each step's wall and CPU seconds")


def _telescope(text: str) -> str | None:
    """A telescope's name, checked here: an unknown one is answered with the known ones and how to give another's
    declinations, before anything is loaded."""
    from gpal.catalog_jobs.visibility import declination_range

    if text.lower() in ("none", "null"):
        return None
    try:
        declination_range(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def _add_settings_and_visibility(group: Any, settings: dict[str, Any]) -> None:
    """The options of a job's ``settings``, the visibility cut's read by `_telescope`."""
    add_settings(group, {name: s for name, s in settings.items() if name != "candidate_visible_from"}, JOB)
    group.add_argument("--candidate-visible-from", dest=JOB + "candidate_visible_from", default=argparse.SUPPRESS,
                       type=_telescope, metavar="TELESCOPE",
                       help=settings["candidate_visible_from"].doc + "; none: every declination")


def build_parser(only: Sequence[str] | None = None, described: bool = True) -> argparse.ArgumentParser:
    """The ``gpal`` parser: every verb with its options, the verb's body bound as ``run``.

    ``only``: the verbs whose options are added (None: every verb's); the others are listed by name and help, which
    is all ``gpal --help``, ``gpal --version`` and a mistyped verb need.  Their options' defaults and choices come
    from the catalogs, the jobs and the registries, a second or more of imports that a command not running them
    need not wait for.  ``described`` False: the estimator's options are read from its declared parameters, without
    their help texts and defaults, which need the estimator imported; a verb's ``--help`` then builds the described
    parser and prints its help.  A mistyped option is so answered in a fraction of a second.
    """
    parser = argparse.ArgumentParser(
        prog="gpal",
        description="Gaussian-process classification of Fermi-LAT catalog sources with noisy inputs. "
        "See docs/cli.md for every verb with examples.",
    )
    parser.add_argument("--version", action="version", version=f"gpal {gpal.__version__}")
    commands = parser.add_subparsers(dest="verb", required=True, metavar="VERB")
    for name, (summary, add_options) in VERBS.items():
        verb = commands.add_parser(name, help=summary, add_help=described)
        if not described:
            verb.add_argument("-h", "--help", action=_DescribedHelp, verb=name, help="show this help message and exit")
        if only is None or name in only:
            add_options(verb, described)
    return parser


class _DescribedHelp(argparse.Action):
    """``--help`` of a parser built without the estimator's descriptions: the described parser's help."""

    def __init__(self, option_strings: Sequence[str], dest: str, verb: str, help: str) -> None:
        super().__init__(option_strings, dest=dest, default=argparse.SUPPRESS, nargs=0, help=help)
        self.verb = verb

    def __call__(self, parser: argparse.ArgumentParser, namespace: Any, values: Any, option_string: Any = None) -> None:
        build_parser(only=(self.verb,)).parse_args([self.verb, "--help"])  # prints the help and exits


def _add_main_job_estimator(parser: argparse.ArgumentParser, described: bool, seed_help: str,
                            flags: dict[str, str] | None = None) -> None:
    """The options of the main job's estimator: ``described``, with the help and defaults the estimator gives (which
    imports it, scikit-learn and pandas with it); else from its declared parameters alone, all a parse needs."""
    from gpal.catalog_jobs.settings import MAIN_JOB_PARAMETERS, main_job_estimator

    add_estimator(parser, main_job_estimator() if described else MAIN_JOB_PARAMETERS, seed_help, flags)


def _catalog(catalog: argparse.ArgumentParser, described: bool) -> None:
    from gpal.catalog_jobs.main_job_settings import DEFAULT_FEATURES

    catalog_verbs = catalog.add_subparsers(dest="catalog_verb", required=True, metavar="ACTION")
    summary = catalog_verbs.add_parser("summary", help="print the release, its class counts and the feature preset")
    _add_catalog(summary)
    summary.add_argument("--features", default=DEFAULT_FEATURES,
                         help="feature preset or comma-separated columns to describe (default: the main job's, "
                         "the catalog release's own preset)")
    summary.set_defaults(run=verbs.catalog_summary)


def _train(train: argparse.ArgumentParser, described: bool) -> None:
    from gpal.catalog_jobs.main_job_settings import DEFAULT_FEATURES

    train.description = ("Fit a NoisyGPClassifier (the main job's settings unless given) on every selected labelled "
                         "source and save it with a record of what it was trained on (training.json).")
    _add_selection(train, classes=None, features=DEFAULT_FEATURES)
    train.add_argument("--out", required=True, help="folder to write the model into (model/, training.json)")
    _add_main_job_estimator(train, described, "seed of every random choice")
    _add_common(train, "replace a folder that holds a different model")
    train.set_defaults(run=verbs.train)


def _predict(predict: argparse.ArgumentParser, described: bool) -> None:
    from gpal.catalog_jobs.main_job_settings import APPLIED_BY_DEFAULT, DEFAULT_CHUNK_SIZE, DEFAULT_SELECT

    predict.description = "Classify catalog sources with a model from gpal train or gpal classify."
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
    predict.set_defaults(run=verbs.predict)


def _classify(classify: argparse.ArgumentParser, described: bool) -> None:
    from gpal.catalog_jobs.main_job_settings import SETTINGS as MAIN_JOB_SETTINGS
    from gpal.catalog_jobs.main_job_settings import DEFAULT_FEATURES
    from gpal.catalog_jobs.layout import DEFAULT_OUT_DIR
    from gpal.catalogs.schemes import CLASS_SCHEMES, DEFAULT_SCHEME

    classify.description = (
        "Train the default noisy-input classifier on associated sources of the class scheme (default: "
        f"{DEFAULT_SCHEME}, {CLASS_SCHEMES[DEFAULT_SCHEME].spec}), check it on a held-out 20% split, classify every "
        "unassociated and bcu source, flag "
        "those unlike every training source (ood), and write tables, figures, sky maps and report.md.  Rerunning with "
        "the same options reuses the trained model.")
    classify.add_argument("--out", default=DEFAULT_OUT_DIR, help=f"output folder (default ./{DEFAULT_OUT_DIR})")
    _add_selection(classify, classes=DEFAULT_SCHEME, features=DEFAULT_FEATURES)
    _add_settings_and_visibility(classify.add_argument_group("main job settings"), MAIN_JOB_SETTINGS)
    classify.add_argument("--scheduler", default=None, help=_SCHEDULER_HELP)
    _add_main_job_estimator(classify, described, "seed of the split and of training")
    _add_common(classify, "replace an output folder that holds a different run")
    classify.set_defaults(run=verbs.classify)


def _check_later(later: argparse.ArgumentParser, described: bool) -> None:
    from gpal.catalogs.releases import NEWEST_RELEASE, RELEASES
    from gpal.evaluation.baselines import BASELINES

    later.description = (
        "Classify the unassociated and bcu sources of the model's release, link them to a later release "
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
    later.set_defaults(run=verbs.check_later)


def _active(active: argparse.ArgumentParser, described: bool) -> None:
    from gpal.catalog_jobs.campaign_settings import campaign_settings
    from gpal.catalog_jobs.main_job_settings import DEFAULT_FEATURES
    from gpal.catalogs.schemes import DEFAULT_SCHEME

    active.description = (
        "Pool-based active learning, checkpointed after every query: rerun the same command to resume "
        "(raise --queries to continue). --oracle simulated hides the labels of labelled catalog sources and reveals "
        "them on request; --oracle file writes DIR/queries/query_NNNN.csv for the observers to fill in (exit code 3 "
        "until they have).")
    _add_selection(active, classes=DEFAULT_SCHEME, features=DEFAULT_FEATURES)
    active.add_argument("--out", required=True, help="run folder (checkpoint/, report.md, learning curves)")
    _add_settings_and_visibility(active.add_argument_group("campaign settings"), campaign_settings())
    _add_main_job_estimator(active, described, "seed of every random choice", {"batch_size": "--train-batch-size"})
    _add_common(active, "replace a folder that holds a different run")
    active.set_defaults(run=verbs.active)


def _report(report: argparse.ArgumentParser, described: bool) -> None:
    from gpal.catalog_jobs.list_settings import LIST_SETTINGS

    report.description = ("Rebuild the report of a finished run folder.  With a list option, the lists of a gpal "
                          "classify folder are cut again (and its tables and report.md with them) in seconds, without "
                          "training or predicting; the figures are kept.")
    report.add_argument("run_dir", metavar="RUN_DIR",
                        help="a gpal classify output, an active-learning run or a repeated-splits experiment folder")
    lists = report.add_argument_group("list options (a gpal classify folder; one not given keeps the folder's)")
    _add_settings_and_visibility(lists, LIST_SETTINGS)
    report.set_defaults(run=verbs.report)


def _workflow(workflow: argparse.ArgumentParser, described: bool) -> None:
    workflow.add_argument("file", metavar="NAME|FILE.yaml", nargs="?",
                          help="a shipped workflow's name (e.g. fermi_4fgl; --list shows them) or a workflow file")
    workflow.add_argument("--list", action="store_true", help="list the shipped workflows (name and title) and exit")
    workflow.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                          help="override a parameter, e.g. --set protocol.splits=2 --set training.epochs=20 (repeatable)")
    workflow.add_argument("--out", default=None, help="output folder (default: the file's 'out')")
    workflow.add_argument("--scheduler", default=None, help=_SCHEDULER_HELP.replace("prediction chunks", "units"))
    _add_common(workflow, "replace an output folder that holds a different run")
    workflow.set_defaults(run=verbs.workflow)


def _gpu_check(gpu: argparse.ArgumentParser, described: bool) -> None:
    from gpal.catalog_jobs.device_check import WORKLOADS

    gpu.add_argument("--workloads", type=lambda text: [w.strip() for w in text.split(",") if w.strip()],
                     default=list(WORKLOADS), metavar="NAME,...",
                     help=f"what to time, among {', '.join(WORKLOADS)} (default: all)")
    gpu.add_argument("--epochs", type=int, default=4, help="epochs of each timed fit; the first is left out (default 4)")
    gpu.add_argument("--mnist-steps", type=int, default=20,
                     help="mini-batches of a timed MNIST epoch, scaled to the 300 of a full one (default 20)")
    gpu.add_argument("--gpu-only", action="store_true", help="do not time the CPU beside the GPUs")
    gpu.add_argument("--json", default=None, metavar="FILE", help="also write the record as JSON")
    gpu.add_argument("--no-progress", action="store_true", help="do not print each step on stderr")
    gpu.set_defaults(run=verbs.gpu_check)


#: Each verb: its line in ``gpal --help`` and the function that adds its options.
VERBS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None]]] = {
    "catalog": ("inspect a LAT catalog (any shipped release or FITS file)", _catalog),
    "train": ("train a classifier on labelled catalog sources and save it", _train),
    "predict": ("write class probabilities of catalog sources to CSV, FITS, MRT or VOTable", _predict),
    "classify": ("the main job: train, check on held-out sources, classify the unassociated ones", _classify),
    "check-later": ("score a trained model's classifications by the classes a later release gives them", _check_later),
    "active": ("choose which sources to label next (simulated or with labels typed into files)", _active),
    "report": ("rebuild the figures, tables and report.md of a finished run folder", _report),
    "workflow": ("run a declarative workflow, shipped (by name) or a YAML file; see docs/workflows.md", _workflow),
    "gpu-check": ("say whether TensorFlow sees a GPU and time gpal's training step on it (and on the CPU); without a "
                  "GPU it says so and exits 0, see docs/gpu.md", _gpu_check),
}

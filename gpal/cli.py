"""The ``gpal`` command: each verb is a thin layer over the library.

Exit codes: 0 done; 2 bad input (the message says what and what was expected);
1 the work itself failed (training diverged); 3 an active-learning run waits for
labels; 130 interrupted (rerun the same command to resume).
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path
from typing import Any, Sequence

import gpal
from gpal.catalogs import load_catalog
from gpal.catalogs.catalog import DEFAULT_RELEASE, RELEASES
from gpal.catalogs.features import FEATURE_PRESETS
from gpal.catalogs.schemes import CLASS_SCHEMES, resolve_classes
from gpal.quiet import quiet_tensorflow
from gpal.registry import ACQUISITIONS, FOLLOW_UP_ACQUISITION, INPUT_NOISE, INPUT_PRIORS, LIKELIHOODS
from gpal.runs.executors import make_executor
from gpal.runs.output_dir import claim_output_dir

EXIT_BAD_INPUT = 2
EXIT_FAILED = 1
EXIT_LABELS_PENDING = 3
EXIT_INTERRUPTED = 130

_SCHEDULER_HELP = (
    "where prediction chunks run: 'in-process' (default), 'local-dask' (a Dask LocalCluster on this machine) "
    "or 'tcp://HOST:PORT' (an existing Dask scheduler, see docs/scaling.md)"
)


# ---------------------------------------------------------------- catalog
def _catalog_summary(args: argparse.Namespace) -> int:
    catalog = load_catalog(args.catalog)
    print(catalog.summary(args.features))
    return 0


# ------------------------------------------------------------------ train
def _features(value: str | None) -> Any:
    """A preset name, or comma-separated column specs such as 'LP_Index,log:Signif_Avg'."""
    if value is None or "," not in value and ":" not in value and value.lower() in _presets():
        return value
    return [v.strip() for v in value.split(",") if v.strip()]


def _presets() -> list[str]:
    return sorted(FEATURE_PRESETS)


def _say(message: str) -> None:
    """A step of the work, on stderr beside the progress bars (stdout keeps the results)."""
    print(f"gpal: {message}", file=sys.stderr, flush=True)


def _train(args: argparse.Namespace) -> int:
    from gpal.catalog_jobs.model_folders import train_catalog_model

    classes, merge = resolve_classes(args.classes)
    folder = train_catalog_model(
        args.out, catalog=args.catalog, classes=classes, merge=merge, min_significance=args.min_significance,
        features=_features(args.features), input_noise=args.input_noise, input_prior=args.input_prior,
        likelihood=args.likelihood,
        epochs=args.epochs, num_inducing=args.num_inducing, batch_size=args.batch_size, seed=args.seed,
        force=args.force, progress=not args.no_progress, log=_say,
    )
    print(f"model saved in {folder} (predict with: gpal predict {folder} --catalog ... --out table.csv)")
    return 0


# ---------------------------------------------------------------- predict
def _predict(args: argparse.Namespace) -> int:
    from gpal.catalog_jobs.model_folders import load_trained
    from gpal.catalog_jobs.prediction import predict_catalog
    from gpal.catalog_jobs.tables import check_table_path, write_probability_table

    out = check_table_path(args.out, args.force)  # before any work
    trained = load_trained(args.model_dir)  # the record only: TensorFlow loads after the catalog checks
    catalog = load_catalog(args.catalog)
    with make_executor(args.scheduler) as executor:
        table = predict_catalog(trained, catalog, args.select, chunk_size=args.chunk_size, executor=executor,
                                progress=not args.no_progress)
    write_probability_table(table, out, force=args.force)
    counts = table.frame["predicted_class"].value_counts()
    print(f"{len(table.frame)} sources ({', '.join(f'{c} {n}' for c, n in counts.items())}) -> {out}")
    return 0


# --------------------------------------------------------------- classify
def _classify(args: argparse.Namespace) -> int:
    from gpal.catalog_jobs.classify import classify_catalog
    from gpal.catalog_jobs.report import headline

    with make_executor(args.scheduler) as executor:
        report = classify_catalog(
            args.out, catalog=args.catalog, classes=args.classes, epochs=args.epochs, num_inducing=args.num_inducing,
            seed=args.seed,
            chunk_size=args.chunk_size, force=args.force, progress=not args.no_progress, executor=executor, log=_say,
        )
    print("\n".join(headline(report.parent)))
    print(f"report: {report}")
    return 0


# ----------------------------------------------------------------- active
def _active(args: argparse.Namespace) -> int:
    from gpal.active import ActiveLearningLoop, FileOracle, SimulatedOracle, initial_pool_test_split, make_acquisition
    from gpal.estimators.noisy_gp import NoisyGPClassifier

    classes, merge = resolve_classes(args.classes)
    acquisition = make_acquisition({"name": args.acquisition, **_acquisition_options(args, classes)})
    estimator = NoisyGPClassifier(input_noise=args.input_noise, input_prior=args.input_prior, epochs=args.epochs,
                                  num_inducing=args.num_inducing,
                                  batch_size=args.batch_size_train, random_state=args.seed, progress=False)
    estimator.validate_params()
    catalog = load_catalog(args.catalog)
    data = catalog.dataset(classes=list(classes), merge={k: list(v) for k, v in merge.items()},
                           min_significance=args.min_significance)
    if args.oracle == "simulated":
        n_pool = args.pool or data.n_samples - args.initial - args.test
        labelled, pool, test = initial_pool_test_split(data, args.initial, n_pool, args.test, seed=args.seed)
        oracle: Any = SimulatedOracle(pool)
    else:
        labelled, test = data.split(test_size=args.test_size, seed=args.seed)
        pool = catalog.pool(select=[s.strip() for s in args.select.split(",") if s.strip()])
        oracle = FileOracle(Path(args.out) / "queries")
    identity = {"kind": "gpal.active", "catalog": catalog.provenance(), "classes": args.classes,
                "min_significance": args.min_significance, "oracle": args.oracle, "acquisition": acquisition.config(),
                "batch_size": args.batch_size, "initial": args.initial, "pool": args.pool, "test": args.test,
                "test_size": args.test_size, "select": args.select, "input_noise": args.input_noise,
                "input_prior": args.input_prior,
                "epochs": args.epochs, "retrain_epochs": args.retrain_epochs, "num_inducing": args.num_inducing,
                "seed": args.seed}
    # The loop checks its settings against the data here, before the folder is claimed, so a refused
    # command leaves nothing behind and its corrected form is not "a different run".
    loop = ActiveLearningLoop(estimator, labelled, pool, oracle, test=test, acquisition=acquisition,
                              batch_size=args.batch_size, n_queries=args.queries, retrain_epochs=args.retrain_epochs,
                              checkpoint_dir=Path(args.out) / "checkpoint", progress=not args.no_progress)
    out = claim_output_dir(args.out, identity, force=args.force)
    loop.run()
    print(f"report: {_report_active(out)}")
    return 0


def _acquisition_options(args: argparse.Namespace, classes: Sequence[str]) -> dict[str, Any]:
    """The acquisition's own settings from the command line, checked before anything is read or written."""
    if args.acquisition == "discovery":
        if args.target is None:
            raise ValueError(f"--acquisition discovery needs --target, one of the classes {list(classes)}")
        if args.target not in classes:
            raise ValueError(f"--target {args.target!r} is not one of the classes {list(classes)}")
        return {"target": args.target, "exploration": args.exploration}
    if args.target is not None:
        raise ValueError(f"--target applies to --acquisition discovery, not {args.acquisition!r}")
    return {"seed": args.seed} if args.acquisition == "random" else {}


def _discovery_yields(state: dict[str, Any]) -> str:
    """Expected (from the probabilities at query time) and found target sources per answered query."""
    import numpy as np

    from gpal.active import expected_yield

    config = state["config"]["acquisition"]
    if config.get("exploration"):
        return (f" Discovery of `{config['target']}` with exploration {config['exploration']}: scores are upper "
                "bounds, not probabilities, so no expected yield is stated.")
    found = sum(lab == config["target"] for q in state["queries"] for lab in q["labels"])
    scores = [s for q in state["queries"] for s in q["scores"]]
    if not scores:
        return ""
    expected = expected_yield(np.clip(scores, 0.0, 1.0))
    return (f" Discovery of `{config['target']}`: {found} of {expected['n']} observed sources were `{config['target']}`; "
            f"the probabilities at query time expected {expected['expected']:.1f} (95% range {expected['low']}-"
            f"{expected['high']} if they are calibrated).")


def _report_active(folder: Path) -> Path:
    """Learning curves, the query log and report.md of an active-learning run (``checkpoint/state.json``)."""
    import pandas as pd

    from gpal.active import read_state
    from gpal.evaluation.plots import plot_learning_curves, save_figure
    from gpal.evaluation.reports import write_report, write_table

    checkpoint = folder / "checkpoint" if (folder / "checkpoint" / "state.json").is_file() else folder
    state = read_state(checkpoint)
    curves = pd.DataFrame(state["metrics"])
    acquisition = state["config"]["acquisition"]["name"]
    tables = {"Test metrics after each query": write_table(folder / "learning_curve", curves.round(4), data=curves)}
    queries = pd.DataFrame([{"query": q["query"], "Source_Name": i, "score": s, "label": lab}
                            for q in state["queries"] for i, s, lab in zip(q["ids"], q["scores"], q["labels"])],
                           columns=["query", "Source_Name", "score", "label"])
    tables["Queried sources"] = write_table(folder / "queries_log", queries.round(4), data=queries)
    figures = {}
    if "error" in curves and len(curves) > 1:
        tidy = curves.assign(method=state["config"]["estimator"]["class"].rsplit(".", 1)[-1], strategy=acquisition,
                             repetition=0)
        for metric in ("error", "nll"):
            fig = plot_learning_curves(tidy, metric=metric, title=f"test {metric} against labelled sources")
            figures[f"Learning curve: test {metric}"] = save_figure(fig, folder / f"learning_curve_{metric}")
    pending = state.get("pending")
    text = (f"Active learning with acquisition `{acquisition}`, batch size {state['config']['batch_size']}: "
            f"{len(state['initial_ids'])} initial labelled sources, {len(state['queries'])} queries answered."
            + (f" Query {pending['query']} waits for labels ({len(pending['ids'])} sources)." if pending else "")
            + (_discovery_yields(state) if acquisition == "discovery" else ""))
    return write_report(folder, "gpal active", figures, tables, text)


# ----------------------------------------------------------------- report
def _report_experiment(folder: Path) -> Path:
    """Summary, mean confusion matrices and pooled reliability diagrams of a repeated-splits folder."""
    import json

    from gpal.runs.repeated_splits import summarize
    from gpal.workflows.splits import write_splits_report

    # A folder written by `gpal workflow` keeps its title, description and reference in workflow.json.
    workflow = json.loads((folder / "workflow.json").read_text()) if (folder / "workflow.json").is_file() else {}
    return write_splits_report(
        folder,
        summarize(folder),
        workflow.get("title") or "gpal repeated-splits experiment",
        workflow.get("description") or "",
        workflow.get("reference"),
    )


def _report(args: argparse.Namespace) -> int:
    from gpal.catalog_jobs.layout import HELDOUT_FILE, is_classify_folder
    from gpal.catalog_jobs.model_folders import TRAINING_FILE
    from gpal.catalog_jobs.report import write_classify_report

    folder = Path(args.run_dir)
    if not folder.is_dir():
        raise FileNotFoundError(f"run folder {folder} does not exist")
    if is_classify_folder(folder):
        report = write_classify_report(folder)
    elif (folder / "checkpoint" / "state.json").is_file() or (folder / "state.json").is_file():
        report = _report_active(folder)
    elif (folder / "config.json").is_file() and (folder / "units").is_dir():
        report = _report_experiment(folder)
    else:
        raise ValueError(
            f"{folder} is not a gpal run folder; expected one of: a gpal classify output ({TRAINING_FILE} and "
            f"{HELDOUT_FILE}), an active-learning run (checkpoint/state.json or state.json), or a repeated-splits "
            "experiment (config.json and units/)"
        )
    print(f"report: {report}")
    return 0


# --------------------------------------------------------------- workflow
def _workflow(args: argparse.Namespace) -> int:
    from gpal.workflows import run_workflow

    folder = run_workflow(args.file, overrides=args.set, out=args.out, scheduler=args.scheduler, force=args.force,
                          progress=not args.no_progress)
    print(f"results in {folder}")
    return 0


# ----------------------------------------------------------------- parser
def _add_catalog(parser: argparse.ArgumentParser, default: str | None = DEFAULT_RELEASE) -> None:
    parser.add_argument(
        "--catalog", default=default, required=default is None,
        help=f"a shipped release ({', '.join(RELEASES)}" + (f"; default {default}" if default else "")
        + ") or the path of a gll_psc_v*.fit[.gz] file",
    )


def _add_model_options(parser: argparse.ArgumentParser, epochs: int, num_inducing: int, input_noise: str,
                       input_prior: str) -> None:
    parser.add_argument("--input-noise", choices=INPUT_NOISE.names(), default=input_noise,
                        help="how the catalog error bars enter: none (MGP), latent (NIMGP), amortized (NIMGP-NN) or "
                        f"first_order (NIMGP-FO); default {input_noise}")
    parser.add_argument("--input-prior", choices=INPUT_PRIORS, default=input_prior,
                        help="prior over the noiseless inputs of latent / amortized: broad (the paper's N(0, 1000 I)) or "
                        f"population (a mixture deconvolved from the training sources); default {input_prior}")
    parser.add_argument("--epochs", type=int, default=epochs, help=f"training epochs (default {epochs})")
    parser.add_argument("--num-inducing", type=int, default=num_inducing,
                        help=f"inducing points per latent function (default {num_inducing})")
    parser.add_argument("--seed", type=int, default=0, help="seed of every random choice (default 0)")


def _add_common(parser: argparse.ArgumentParser, force_help: str) -> None:
    parser.add_argument("--force", action="store_true", help=force_help)
    parser.add_argument("--no-progress", action="store_true", help="do not show progress bars")
    parser.add_argument("--verbose", action="store_true",
                        help="keep TensorFlow's own start-up messages (absl, CUDA probing) on stderr, for debugging")


def _defaults(fn: Any) -> dict[str, Any]:
    """A library function's keyword defaults, so the command's defaults cannot drift from the library's."""
    import inspect

    return {k: p.default for k, p in inspect.signature(fn).parameters.items() if p.default is not p.empty}


def build_parser() -> argparse.ArgumentParser:
    from gpal.catalog_jobs.classify import DEFAULT_SELECT, classify_catalog
    from gpal.catalog_jobs.model_folders import train_catalog_model

    trained, main_job = _defaults(train_catalog_model), _defaults(classify_catalog)

    class_help = (f"a class scheme ({', '.join(CLASS_SCHEMES)}: docs/catalogs.md) or classes, comma-separated, where "
                  f"NAME=CODE+CODE merges CLASS1 codes into one class (e.g. {CLASS_SCHEMES['blazar_pulsar'].spec}); "
                  "codes are case-insensitive")
    parser = argparse.ArgumentParser(
        prog="gpal",
        description="Gaussian-process classification of Fermi-LAT catalog sources with noisy inputs. "
        "See docs/cli.md for every verb with examples.",
    )
    parser.add_argument("--version", action="version", version=f"gpal {gpal.__version__}")
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")

    catalog = verbs.add_parser("catalog", help="inspect a 4FGL-family catalog")
    catalog_verbs = catalog.add_subparsers(dest="catalog_verb", required=True, metavar="ACTION")
    summary = catalog_verbs.add_parser("summary", help="print the release, its class counts and the feature preset")
    _add_catalog(summary)
    summary.add_argument("--features", default=None,
                         help="feature preset to describe (default: the preset of Villacampa-Calvo et al. 2021)")
    summary.set_defaults(run=_catalog_summary)

    train = verbs.add_parser("train", help="train a classifier on labelled catalog sources and save it",
                             description="Fit a NoisyGPClassifier on every selected labelled source and save it with "
                             "a record of what it was trained on (training.json).")
    _add_catalog(train)
    train.add_argument("--classes", required=True, help=class_help)
    train.add_argument("--min-significance", type=float, default=None,
                       help="keep sources with Signif_Avg above this (default: no cut)")
    train.add_argument("--features", default=trained["features"],
                       help=f"feature preset (default {trained['features']!r}; 'villacampa2021' is the paper's six) or comma-separated "
                       "columns, 'log:COL' for a log transform (error bars from Unc_COL when present)")
    _add_model_options(train, trained["epochs"], trained["num_inducing"], trained["input_noise"], trained["input_prior"])
    train.add_argument("--likelihood", choices=LIKELIHOODS.names(), default=trained["likelihood"],
                       help=f"likelihood of the sparse GP (default {trained['likelihood']}; docs/methods.md)")
    train.add_argument("--batch-size", type=int, default=trained["batch_size"],
                       help=f"minibatch size (default {trained['batch_size']})")
    train.add_argument("--out", required=True, help="folder to write the model into (model/, training.json)")
    _add_common(train, "replace a folder that holds a different model")
    train.set_defaults(run=_train)

    predict = verbs.add_parser("predict", help="write class probabilities of catalog sources to CSV or FITS",
                               description="Classify catalog sources with a model from gpal train or gpal classify.")
    predict.add_argument("model_dir", metavar="MODEL_DIR", help="the --out folder of gpal train or gpal classify")
    _add_catalog(predict)
    selection = ",".join(DEFAULT_SELECT)
    predict.add_argument("--select", default=selection,
                         help=f"which sources: 'unassociated', 'bcu', any CLASS1 code, a comma-separated list of these "
                         f"(default {selection!r}, as gpal classify), or 'all'")
    chunk = main_job["chunk_size"]
    predict.add_argument("--chunk-size", type=int, default=chunk, help=f"rows per prediction task (default {chunk})")
    predict.add_argument("--scheduler", default=None, help=_SCHEDULER_HELP)
    predict.add_argument("--out", required=True, help="output table, FILE.csv or FILE.fits")
    _add_common(predict, "overwrite an existing output file")
    predict.set_defaults(run=_predict)

    classify = verbs.add_parser(
        "classify", help="the main job: train, check on held-out sources, classify the unassociated ones",
        description="Train the default noisy-input classifier on associated sources of the class scheme (default: bll, "
        "fsrq and pulsar = psr+msp), check it on a held-out 20% split, classify every unassociated and bcu source, flag "
        "those unlike every training source (ood), and write tables, figures, sky maps and report.md.  Rerunning with "
        "the same options reuses the trained model.")
    classify.add_argument("--out", default=main_job["out_dir"], help=f"output folder (default ./{main_job['out_dir']})")
    _add_catalog(classify, default=main_job["catalog"])
    classify.add_argument("--classes", default=main_job["classes"], help=class_help + f" (default {main_job['classes']})")
    for option, what in [("epochs", "training epochs"), ("num_inducing", "inducing points per latent function"),
                         ("seed", "seed of the split and of training"), ("chunk_size", "rows per prediction task")]:
        classify.add_argument(f"--{option.replace('_', '-')}", type=int, default=main_job[option],
                              help=f"{what} (default {main_job[option]})")
    classify.add_argument("--scheduler", default=None, help=_SCHEDULER_HELP)
    _add_common(classify, "replace an output folder that holds a different run")
    classify.set_defaults(run=_classify)

    active = verbs.add_parser(
        "active", help="choose which sources to label next (simulated or with labels typed into files)",
        description="Pool-based active learning, checkpointed after every query: rerun the same command to resume "
        "(raise --queries to continue). --oracle simulated hides the labels of labelled catalog sources and reveals "
        "them on request; --oracle file writes DIR/queries/query_NNNN.csv for the observers to fill in (exit code 3 "
        "until they have).")
    _add_catalog(active)
    active.add_argument("--classes", required=True, help=class_help)
    active.add_argument("--min-significance", type=float, default=None, help="Signif_Avg cut on labelled sources")
    active.add_argument("--out", required=True, help="run folder (checkpoint/, report.md, learning curves)")
    active.add_argument("--acquisition", choices=ACQUISITIONS.names(), default=FOLLOW_UP_ACQUISITION,
                        help=f"how the next sources are chosen (default {FOLLOW_UP_ACQUISITION}, the winner of the "
                        "simulated DR4 campaign; discovery: the most probable sources of --target, for a targeted search)")
    active.add_argument("--target", default=None, help="discovery: the class searched for, e.g. pulsar")
    active.add_argument("--exploration", type=float, default=0.0,
                        help="discovery: weight of the model's uncertainty about the target probability (default 0: "
                        "plain ranking by probability)")
    active.add_argument("--batch-size", type=int, default=1, help="sources labelled per query (default 1)")
    active.add_argument("--queries", type=int, default=10, help="number of queries (default 10)")
    active.add_argument("--oracle", choices=("simulated", "file"), default="simulated",
                        help="who labels: simulated (catalog labels) or file (you, in DIR/queries/*.csv)")
    active.add_argument("--initial", type=int, default=30, help="simulated: initially labelled sources (default 30)")
    active.add_argument("--pool", type=int, default=None, help="simulated: pool size (default: all the rest)")
    active.add_argument("--test", type=int, default=500, help="simulated: test sources (default 500)")
    active.add_argument("--test-size", type=float, default=0.2,
                        help="file oracle: share of labelled sources kept for testing (default 0.2)")
    active.add_argument("--select", default=selection,
                        help=f"file oracle: the pool, 'unassociated', 'bcu' or CLASS1 codes, comma-separated "
                        f"(default {selection!r}, the sources gpal classify classifies)")
    # Exact inputs by default, not the main job's NIMGP: its population prior needs >= 80 labelled sources and a
    # campaign starts from --initial; which model a campaign should retrain is issue 23's study.
    _add_model_options(active, epochs=200, num_inducing=30, input_noise="none", input_prior=trained["input_prior"])
    active.add_argument("--retrain-epochs", type=int, default=50, help="epochs of each warm-started retraining (default 50)")
    active.add_argument("--train-batch-size", dest="batch_size_train", type=int, default=50,
                        help="training minibatch size (default 50)")
    _add_common(active, "replace a folder that holds a different run")
    active.set_defaults(run=_active)

    report = verbs.add_parser("report", help="rebuild the figures, tables and report.md of a finished run folder")
    report.add_argument("run_dir", metavar="RUN_DIR",
                        help="a gpal classify output, an active-learning run or a repeated-splits experiment folder")
    report.set_defaults(run=_report)

    workflow = verbs.add_parser("workflow", help="run a declarative workflow (workflows/*.yaml), see docs/workflows.md")
    workflow.add_argument("file", metavar="FILE.yaml", help="the workflow file")
    workflow.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                          help="override a parameter, e.g. --set protocol.splits=2 --set training.epochs=20 (repeatable)")
    workflow.add_argument("--out", default=None, help="output folder (default: the file's 'out')")
    workflow.add_argument("--scheduler", default=None, help=_SCHEDULER_HELP.replace("prediction chunks", "units"))
    _add_common(workflow, "replace an output folder that holds a different run")
    workflow.set_defaults(run=_workflow)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from gpal.active.oracles import LabelsPending

    if not getattr(args, "verbose", False):
        quiet_tensorflow()

    with warnings.catch_warnings():
        warnings.showwarning = lambda message, *_, **__: print(f"gpal: warning: {message}", file=sys.stderr)
        try:
            return args.run(args)
        except LabelsPending as exc:
            print(f"gpal: waiting for labels: {exc}", file=sys.stderr)
            return EXIT_LABELS_PENDING
        except KeyboardInterrupt:
            print("gpal: interrupted; rerun the same command to resume", file=sys.stderr)
            return EXIT_INTERRUPTED
        except FloatingPointError as exc:  # gpal.training.svi.TrainingError: the ELBO became non-finite
            print(f"gpal: error: training failed: {exc}", file=sys.stderr)
            return EXIT_FAILED
        except (ValueError, TypeError, OSError) as exc:
            print(f"gpal: error: {exc}", file=sys.stderr)
            return EXIT_BAD_INPUT


if __name__ == "__main__":
    sys.exit(main())

"""The gpal command line, through its entry point and in-process."""

import json
import shutil
import subprocess
import sys

import numpy as np
import pytest

from gpal.catalogs.search_history import HISTORY_COLUMNS
from gpal.cli import build_parser, main
from gpal.catalog_jobs.tables import read_probability_table
from gpal.catalogs.features import FEATURE_PRESETS
from gpal.catalog_jobs.prediction import KNOWN_COLUMNS
from gpal.catalogs.lac import LAC_TABLE_COLUMNS, read_4lac
from gpal.catalogs.targets import EXTENDED_FIELD_COLUMNS, SEXAGESIMAL_COLUMNS, TARGET_COLUMNS
from conftest import SMALL, write_small_catalog

TINY = ["--epochs", "2", "--num-inducing", "5", "--no-progress"]


@pytest.fixture(scope="module")
def model_dir(small_catalog, tmp_path_factory):
    out = tmp_path_factory.mktemp("train") / "model"
    code = main(["train", "--catalog", str(small_catalog), "--classes", "bll,fsrq,pulsar=psr+msp", "--out", str(out), *TINY])
    assert code == 0
    return out


def test_catalog_summary_prints_release_counts_and_preset(capsys):
    assert main(["catalog", "summary", "--catalog", "4FGL"]) == 0
    out = capsys.readouterr().out
    assert "4FGL (CDS-NAME 4FGL, version v20, data release 1)" in out
    assert "bll 1131" in out and "unassociated 1337" in out
    for feature in ["Flux1000", "log(Signif_Avg)", "log(LP_SigCurv)", "log(Pivot_Energy)", "LP_Index", "LP_beta"]:
        assert feature in out


def test_catalog_summary_describes_the_main_jobs_features_by_default(capsys):
    from gpal.catalog_jobs.selection import CatalogSelection
    from gpal.catalogs import load_catalog

    main_job = CatalogSelection()
    assert main(["catalog", "summary"]) == 0
    out = capsys.readouterr().out.splitlines()
    described = [line.split()[0] for line in out[out.index(next(l for l in out if l.startswith("features"))) + 1:]]
    assert described == [f.label for f in main_job.features_of(load_catalog(main_job.catalog))]
    assert len(described) == 16 and any("the main job's" in line for line in out)


def test_unknown_catalog_is_a_clear_error_with_exit_code_2(capsys):
    assert main(["catalog", "summary", "--catalog", "5FGL"]) == 2
    err = capsys.readouterr().err
    assert "gpal: error: unknown catalog release '5FGL'" in err and "4FGL-DR4" in err


def test_entry_point_runs_as_a_program():
    done = subprocess.run([sys.executable, "-m", "gpal.cli", "catalog", "summary"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    # the default catalog is the newest release, FL16Y, with its 2114 unassociated sources (issue 34's count)
    assert "release   FL16Y" in done.stdout and "unassociated 2114" in done.stdout


@pytest.mark.parametrize(
    "verb, options",
    [(["catalog", "summary"], ["--catalog", "gll_psc_v*.fit"]),
     (["train"], ["--classes", "NAME=CODE+CODE", "--input-noise", "--likelihood", "--min-significance", "--features", "--force"]),
     (["predict"], ["MODEL_DIR", "--select", "--chunk-size", "--scheduler", "local-dask", "tcp://HOST:PORT", "--force"]),
     (["classify"], ["--out", "gpal-output", "--epochs", "--seed", "--force", "--no-progress"]),
     (["active"], ["--acquisition", "bald", "--oracle", "--queries", "--batch-size", "exit code 3"]),
     (["report"], ["RUN_DIR", "experiment folder", "active-learning run"]),
     (["check-later"], ["--trained", "--later", "FL16Y", "--earlier", "--baselines", "paired bootstrap"]),
     (["workflow"], ["NAME|FILE.yaml", "--list", "--set", "KEY=VALUE", "--scheduler", "--out", "--force"])],
)
def test_help_explains_every_verb(capsys, verb, options):
    with pytest.raises(SystemExit) as done:
        main([*verb, "--help"])
    assert done.value.code == 0
    text = " ".join(capsys.readouterr().out.split())  # argparse wraps lines
    for option in options:
        assert option in text, option


def _in_a_fresh_process(argv, heavy):
    """``gpal argv`` run in a new interpreter; its last two lines: the exit code, then which of ``heavy`` it imported."""
    probe = ("import sys; from gpal.cli import main\n"
             f"try: main({argv!r})\n"
             "except SystemExit as e: print('exit', e.code)\n"
             f"print([m for m in {tuple(heavy)!r} if m in sys.modules])")
    return subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("argv, code, says", [(["--help"], 0, "check-later"), (["--version"], 0, "gpal 0."),
                                              (["clasify"], 2, "invalid choice: 'clasify'"), ([], 2, "VERB")])
def test_help_version_and_a_mistyped_verb_import_nothing_heavy(argv, code, says):
    # a fresh process: what this one imported for the other tests is not what the command needs
    done = _in_a_fresh_process(argv, ('tensorflow', 'pandas', 'scipy', 'astropy', 'gpal.catalogs', 'gpal.plugins'))
    assert done.stdout.splitlines()[-2:] == [f"exit {code}", "[]"], done.stdout + done.stderr
    assert says in done.stdout + done.stderr


@pytest.mark.parametrize("argv, says", [
    (["report", "--nosuch"], "RUN_DIR"),
    (["report", "run", "--nosuch"], "unrecognized arguments: --nosuch"),
    (["report", "run", "--candidate-visible-from", "NOWHERE"], "known: FAST, GBT, Parkes, MeerKAT"),
    (["predict", "model"], "required: --out"),
    (["predict", "model", "--out", "p.csv", "--chunk-size", "many"], "invalid int value: 'many'"),
    (["classify", "--nosuch"], "unrecognized arguments: --nosuch"),
    (["classify", "--candidate-visible-from", "NOWHERE"], "known: FAST, GBT, Parkes, MeerKAT"),
    (["classify", "--epochs", "many"], "epochs must be an integer"),
    (["train", "--classes", "bll,fsrq"], "required: --out"),
    (["active", "--out", "run", "--acquisition", "nosuch"], "invalid choice: 'nosuch'"),
])
def test_an_argument_error_is_answered_before_the_work_is_imported(argv, says):
    # a fresh process: the parser alone answers, from the light declarations of the jobs' settings
    done = _in_a_fresh_process(argv, ('tensorflow', 'pandas', 'sklearn', 'scipy.stats', 'astropy',
                                      'gpal.catalogs.catalog', 'gpal.catalog_jobs.candidates'))
    assert done.stdout.splitlines()[-2:] == ["exit 2", "[]"], done.stdout + done.stderr
    assert says in done.stderr
    if "NOWHERE" in argv:
        assert "--candidate-declination=MIN,MAX" in done.stderr  # how to give another telescope's sky


@pytest.mark.parametrize("verb", ["train", "classify", "active"])
def test_the_parser_without_the_estimators_descriptions_takes_the_same_options(verb):
    from gpal.catalog_jobs.settings import MAIN_JOB_PARAMETERS, main_job_estimator

    assert type(main_job_estimator())._parameters is MAIN_JOB_PARAMETERS

    def options(described):
        sub = build_parser(only=(verb,), described=described)._subparsers._group_actions[0].choices[verb]
        return {a.dest: (tuple(a.option_strings), a.choices, a.nargs, a.required) for a in sub._actions}

    described, light = options(True), options(False)
    assert light == described
    argv = [verb, "--out", "run", "--epochs", "7", "--kernel", "se_iso", "--no-standardize", "--seed", "3"]
    argv += ["--classes", "bll,fsrq"] if verb == "train" else []
    assert (vars(build_parser(only=(verb,), described=False).parse_args(argv))
            == vars(build_parser(only=(verb,)).parse_args(argv)))


def test_workflow_arguments_reach_run_workflow():
    args = build_parser().parse_args(["workflow", "w.yaml", "--set", "splits=2", "--set", "methods=[MGP]",
                                      "--scheduler", "local-dask", "--force", "--no-progress"])
    assert (args.file, args.set, args.scheduler, args.force, args.no_progress) == (
        "w.yaml", ["splits=2", "methods=[MGP]"], "local-dask", True, True)
    assert build_parser().parse_args(["workflow", "w.yaml"]).set == []


# --------------------------------------------------------- estimator options
def _parsed_estimator(argv, make):
    from gpal.cli import verbs

    return verbs._estimator(build_parser().parse_args(argv), make, progress=False)


def test_estimator_options_take_their_types_and_ranges_from_the_constraints(capsys):
    from gpal.catalog_jobs.settings import main_job_estimator

    base = ["train", "--classes", "bll,fsrq", "--out", "x"]
    estimator = _parsed_estimator([*base, "--learning-rate", "1e-3", "--hidden-sizes", "[20, 10]", "--no-standardize",
                                   "--likelihood-options", "{num_samples: 5}", "--epochs", "7", "--seed", "4"],
                                  main_job_estimator)
    expected = {"learning_rate": 0.001, "hidden_sizes": [20, 10], "standardize": False, "epochs": 7, "random_state": 4,
                "likelihood_options": {"num_samples": 5}, "input_noise": "latent", "num_inducing": 50}
    assert {k: estimator.get_params()[k] for k in expected} == expected  # the rest: the main job's
    for bad, message in [(["--epochs", "many"], "epochs must be an integer >= 0; got 'many'"),  # the form: argparse
                         (["--hidden-sizes", "[50"], "hidden_sizes must be a sequence of positive integers; got '[50'"),
                         (["--input-noise", "sideways"], "invalid choice: 'sideways'")]:
        with pytest.raises(SystemExit):
            build_parser().parse_args([*base, *bad])
        assert message in capsys.readouterr().err
    for bad, message in [(["--epochs", "-1"], r"epochs must be an integer >= 0; got -1"),  # the value: the estimator
                         (["--learning-rate", "0"], r"learning_rate must be a finite number > 0 and <= 1 \(Adam's step size\); got 0\.0")]:
        with pytest.raises(ValueError, match=message):
            _parsed_estimator([*base, *bad], main_job_estimator).validate_params()
    # gpal active: its own --batch-size is the query's, the estimator's is --train-batch-size
    active = _parsed_estimator(["active", "--classes", "bll,fsrq", "--out", "x", "--batch-size", "3",
                                "--train-batch-size", "20"], main_job_estimator)
    assert active.batch_size == 20


def test_active_retrains_the_main_jobs_model_on_its_selection(monkeypatch, tmp_path, capsys):
    """One answer to "which source next": gpal active's defaults are gpal classify's model, classes and features."""
    import gpal.catalog_jobs.active as active
    from gpal.catalog_jobs.selection import CatalogSelection
    from gpal.catalog_jobs.settings import main_job_estimator

    seen = {}
    monkeypatch.setattr(active, "run_active", lambda selection, estimator, out, **settings: seen.update(
        selection=selection, estimator=estimator, settings=settings) or tmp_path / "report.md")
    assert main(["active", "--out", str(tmp_path / "x"), "--no-progress"]) == 0, capsys.readouterr().err
    assert seen["selection"] == CatalogSelection()
    assert seen["estimator"].get_params() == main_job_estimator(random_state=0, progress=False).get_params()


def test_job_options_are_generated_from_the_jobs_declared_settings():
    from gpal.cli.options import JOB, given

    args = build_parser().parse_args(["classify", "--select", "bcu", "--baselines", "logistic", "--test-size", "0.3"])
    assert given(args, JOB) == {"select": "bcu", "baselines": ["logistic"], "test_size": 0.3}
    args = build_parser().parse_args(["active", "--classes", "bll,fsrq", "--out", "x", "--oracle", "file",
                                      "--queries", "3", "--pool", "none"])
    assert given(args, JOB) == {"oracle": "file", "queries": 3, "pool": None}


def test_a_new_estimator_parameter_is_an_option_and_a_workflow_key_without_an_edit(monkeypatch, capsys):
    import inspect

    import gpal.catalog_jobs.settings as settings
    from gpal.constraints import Integer
    from gpal.estimators.noisy_gp import NoisyGPClassifier
    from gpal.workflows.classify import schema

    class Tempo(NoisyGPClassifier):
        """A classifier with one more parameter.

        Parameters
        ----------
        tempo : how fast it learns.
        """

        _parameters = {**NoisyGPClassifier._parameters, "tempo": Integer(1)}

        def __init__(self, tempo=4, **params):
            super().__init__(**params)
            self.tempo = tempo

    signature = inspect.signature(NoisyGPClassifier.__init__)
    Tempo.__init__.__signature__ = signature.replace(parameters=[
        *signature.parameters.values(), inspect.Parameter("tempo", inspect.Parameter.KEYWORD_ONLY, default=4)])
    monkeypatch.setattr(settings, "main_job_estimator",
                        lambda **params: Tempo(**{**settings.MAIN_JOB_ESTIMATOR, **params}))
    assert _parsed_estimator(["classify", "--tempo", "7"], settings.main_job_estimator).tempo == 7
    with pytest.raises(ValueError, match="tempo must be an integer >= 1; got 0"):
        _parsed_estimator(["classify", "--tempo", "0"], settings.main_job_estimator).validate_params()
    with pytest.raises(SystemExit):
        build_parser().parse_args(["classify", "--help"])
    assert "--tempo TEMPO how fast it learns; default 4" in " ".join(capsys.readouterr().out.split())
    field = schema()["params"]["tempo"]
    assert (field.default, field.doc) == (4, "how fast it learns")


# ------------------------------------------------------------- train / predict
def test_train_writes_a_model_folder_with_its_provenance(model_dir):
    training = json.loads((model_dir / "training.json").read_text())
    assert training["class_spec"] == "bll,fsrq,pulsar=psr+msp"
    assert training["n_per_class"] == {"bll": SMALL["bll"], "fsrq": SMALL["fsrq"], "pulsar": SMALL["psr"] + SMALL["msp"]}
    assert training["catalog"]["release"] == "4FGL-DR4" and training["catalog"]["file"] == "small_dr4.fits"
    assert training["estimator"]["params"]["epochs"] == 2 and len(training["features"]) == len(FEATURE_PRESETS["fermi_dr4"])
    assert (model_dir / "model" / "params.npz").is_file()


@pytest.mark.parametrize("suffix", [".csv", ".fits"])
def test_predict_writes_a_table_with_metadata(model_dir, small_catalog, tmp_path, capsys, suffix):
    out = tmp_path / f"bcu{suffix}"
    code = main(["predict", str(model_dir), "--catalog", str(small_catalog), "--select", "bcu", "--chunk-size", "7",
                 "--out", str(out), "--no-progress"])
    assert code == 0, capsys.readouterr().err
    table = read_probability_table(out)
    position = [*TARGET_COLUMNS]
    position[position.index("DEC") + 1:position.index("DEC") + 1] = ["RA_hms", "DEC_dms"]
    at = position.index("DEC_Counterpart") + 1
    position[at:at] = ["RA_Counterpart_hms", "DEC_Counterpart_dms"]
    assert set(position) >= set(SEXAGESIMAL_COLUMNS)
    position[position.index("Extended_Source_Name") + 1:position.index("Extended_Source_Name") + 1] = list(
        EXTENDED_FIELD_COLUMNS)
    assert list(table.frame.columns) == ["Source_Name", "CLASS1", "p_bll", "p_fsrq", "p_pulsar", "predicted_class",
                                         "entropy", "p_mc_se", *position, *KNOWN_COLUMNS, *HISTORY_COLUMNS, "named_by", "typed_before",
                                         *LAC_TABLE_COLUMNS,
                                         "information"]
    assert (table.frame["information"] >= 0).all() and table.meta["TARGET"] == ""  # BALD about every class
    # each bcu's 4LAC-DR3 counterpart SED, joined by name (the small catalog keeps DR4's names)
    lac = read_4lac().set_index("Source_Name")
    inside = table.frame["Source_Name"].isin(lac.index).to_numpy()
    assert inside.any() and table.meta["LACFROM"].endswith(f"{inside.sum()} of {SMALL['bcu']} sources have a 4LAC row")
    shown = table.frame[inside].set_index("Source_Name")
    np.testing.assert_allclose(shown["LAC_log_nu_syn"], lac.loc[shown.index, "log_nu_syn"], rtol=1e-6)
    assert (shown["LAC_counterpart"] == lac.loc[shown.index, "counterpart"]).all()
    assert (table.frame.loc[~inside, "LAC_counterpart"] == "").all() and table.frame.loc[~inside, "LAC_Redshift"].isna().all()
    assert len(table.frame) == SMALL["bcu"] and set(table.frame["CLASS1"].str.lower()) == {"bcu"}
    np.testing.assert_allclose(table.frame[["p_bll", "p_fsrq", "p_pulsar"]].sum(axis=1), 1.0, atol=1e-9)
    assert table.meta["CATALOG"] == "4FGL-DR4" and table.meta["SELECT"] == "bcu"
    assert table.meta["MODEL"] == str(model_dir.resolve()) and table.meta["MODELFMT"] == "gpal.NoisyGPClassifier v2"
    assert table.meta["FEATURES"].split(",")[0] == "log10(Flux1000)" and table.meta["FITCONF"]["num_inducing"] == 5
    assert table.meta["NSOURCES"] == SMALL["bcu"] and table.meta["TRAINSEL"]["n_per_class"]["fsrq"] == SMALL["fsrq"]
    printed = capsys.readouterr().out
    assert f"{SMALL['bcu']} sources (" in printed and str(out) in printed


def test_predict_scores_information_about_a_target_class(model_dir, small_catalog, tmp_path, capsys):
    out = tmp_path / "psr.csv"
    argv = ["predict", str(model_dir), "--catalog", str(small_catalog), "--select", "bcu", "--out", str(out),
            "--no-progress"]
    assert main([*argv, "--target", "pulsar"]) == 0, capsys.readouterr().err
    table = read_probability_table(out)
    # about one binary question (pulsar or not) a label teaches at most ln 2
    assert table.meta["TARGET"] == "pulsar" and (table.frame["information"] <= np.log(2) + 1e-9).all()
    _fails(capsys, [*argv, "--target", "agn", "--force"], "target 'agn' is not a class of the model",
           "['bll', 'fsrq', 'pulsar']")


# ------------------------------------------------------------------ bad input
def _fails(capsys, argv, *phrases):
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.splitlines()[-1].startswith("gpal: error: ") and "Traceback" not in err
    for phrase in phrases:
        assert phrase in err, (phrase, err)


def test_check_later_refuses_a_release_without_a_link_before_any_fitting(model_dir, small_catalog, capsys):
    assert main(["check-later", "--trained", str(model_dir), "--earlier", str(small_catalog), "--later", "3FGL"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gpal: error: 3FGL does not link to 4FGL-DR4") and err.count("\n") == 1
    assert not (model_dir / "tables").exists()  # nothing written


def test_unknown_class_code(small_catalog, tmp_path, capsys):
    out = tmp_path / "m"
    _fails(capsys, ["train", "--catalog", str(small_catalog), "--classes", "bll,xyz", "--out", str(out), *TINY],
           "unknown class code(s) ['xyz']", "codes present")
    _fails(capsys, ["train", "--catalog", str(small_catalog), "--classes", "bll,pulsar=psr+", "--out", str(out), *TINY],
           "bad class 'pulsar=psr+'", "NAME=CODE+CODE")
    assert not out.exists()


def test_missing_and_corrupt_model_folders(model_dir, small_catalog, tmp_path, capsys):
    out = tmp_path / "t.csv"
    _fails(capsys, ["predict", str(tmp_path / "nowhere"), "--catalog", str(small_catalog), "--out", str(out)],
           "does not exist")
    corrupt = tmp_path / "corrupt"
    shutil.copytree(model_dir, corrupt)
    (corrupt / "model" / "params.npz").write_bytes(b"not an npz file")
    _fails(capsys, ["predict", str(corrupt), "--catalog", str(small_catalog), "--out", str(out)], "corrupt")
    shutil.rmtree(corrupt / "model")
    _fails(capsys, ["predict", str(corrupt), "--catalog", str(small_catalog), "--out", str(out)], "not a saved gpal model")
    assert not out.exists()


def test_catalog_missing_a_feature_column(model_dir, tmp_path, capsys):
    lacking = write_small_catalog(tmp_path / "lacking.fits", drop_column="LP_beta")
    out = tmp_path / "t.fits"
    _fails(capsys, ["predict", str(model_dir), "--catalog", str(lacking), "--out", str(out)],
           "lacks column(s) ['LP_beta']", "lacking.fits")
    assert not out.exists()


def test_existing_output_needs_force(model_dir, small_catalog, tmp_path, capsys):
    out = tmp_path / "t.csv"
    out.write_text("keep me")
    argv = ["predict", str(model_dir), "--catalog", str(small_catalog), "--out", str(out), "--no-progress"]
    _fails(capsys, argv, "already exists", "--force")
    assert out.read_text() == "keep me"
    assert main([*argv, "--force"]) == 0  # the default selection is gpal classify's: unassociated and bcu
    assert len(read_probability_table(out).frame) == SMALL[""] + SMALL["bcu"]


def test_unknown_select_and_scheduler_and_suffix(model_dir, small_catalog, tmp_path, capsys):
    out = tmp_path / "t.csv"
    base = ["predict", str(model_dir), "--catalog", str(small_catalog), "--out", str(out), "--no-progress"]
    _fails(capsys, [*base, "--select", "unassociated,nebula"], "unknown class code(s) ['nebula']", "bcu")
    _fails(capsys, [*base, "--select", "all,bcu"], "select 'all' already takes every source")
    _fails(capsys, [*base, "--scheduler", "slurm"], "unknown scheduler 'slurm'", "local-dask", "tcp://HOST:PORT")
    _fails(capsys, [*base, "--out", str(tmp_path / "t.xlsx")], "must end in one of", ".fits")
    assert list(tmp_path.iterdir()) == []


def test_report_on_an_unknown_folder_says_what_it_expected(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("hello")
    _fails(capsys, ["report", str(tmp_path)], "not a gpal run folder", "training.json and tables/heldout.csv", "state.json",
           "units/")
    _fails(capsys, ["report", str(tmp_path / "missing")], "does not exist")


# ------------------------------------------------------------------- reports
class _Nearest:
    """A stand-in estimator (no TensorFlow): class frequencies of the nearest training point, smoothed."""

    def __init__(self, seed):
        self.seed = seed

    def fit(self, X, y, X_var=None):
        self.X_, self.y_, self.classes_ = np.asarray(X), np.asarray(y), np.unique(y)
        return self

    def predict_proba(self, X, X_var=None):
        nearest = np.argmin(((np.asarray(X)[:, None] - self.X_[None]) ** 2).sum(-1), axis=1)
        proba = np.full((len(X), len(self.classes_)), 0.1)
        proba[np.arange(len(X)), self.y_[nearest]] = 1.0
        return proba / proba.sum(axis=1, keepdims=True)


def test_report_rebuilds_a_repeated_splits_experiment(tmp_path, capsys):
    from gpal.runs.repeated_splits import run_repeated_splits
    from gpal.data.synthetic import waveform

    data = waveform(90, seed=0)
    run_repeated_splits(data, {"nearest": _Nearest}, tmp_path, n_splits=3, test_size=0.2, progress=False)
    assert main(["report", str(tmp_path)]) == 0
    text = (tmp_path / "report.md").read_text()
    assert "confusion_nearest.png" in text and "reliability.png" in text and "| nearest | 3 |" in text
    assert (tmp_path / "confusion_nearest.pdf").is_file()


#: The classes of both gpal active tests: their models then share one trace of each compiled function.
ACTIVE_CLASSES = "bll,fsrq,pulsar=psr+msp"


@pytest.mark.slow
def test_active_simulated_run_resumes_and_reports(small_catalog, tmp_path, capsys):
    out = tmp_path / "al"
    base = ["active", "--catalog", str(small_catalog), "--classes", ACTIVE_CLASSES, "--out", str(out), "--initial", "10",
            "--pool", "20", "--test", "30", "--batch-size", "2", "--input-noise", "none", *TINY]
    argv = [*base, "--retrain-epochs", "1"]
    assert main([*argv, "--queries", "1"]) == 0, capsys.readouterr().err
    first = json.loads((out / "checkpoint" / "state.json").read_text())
    assert main([*argv, "--queries", "2"]) == 0  # resumes: one more query, the first one kept
    state = json.loads((out / "checkpoint" / "state.json").read_text())
    assert state["queries"][0]["ids"] == first["queries"][0]["ids"] and len(state["queries"]) == 2
    assert [m["n_labelled"] for m in state["metrics"]] == [10, 12, 14]
    text = (out / "report.md").read_text()
    assert "learning_curve_error.png" in text and "2 queries answered" in text
    _fails(capsys, [*base, "--retrain-epochs", "5", "--queries", "2"], "refusing to write", "retrain_epochs")


def test_active_discovery_reports_expected_and_found_targets(small_catalog, tmp_path, capsys):
    out = tmp_path / "search"
    base = ["active", "--catalog", str(small_catalog), "--classes", ACTIVE_CLASSES, "--out", str(out),
            "--initial", "15", "--pool", "40", "--test", "30", "--batch-size", "3", "--queries", "1",
            "--retrain-epochs", "1", "--input-noise", "none", *TINY]
    _fails(capsys, [*base, "--acquisition", "discovery"], "needs --target (the class searched for, e.g. pulsar)")
    _fails(capsys, [*base, "--acquisition", "discovery", "--target", "psr"],
           "discovery target 'psr' is not one of the classes ['bll', 'fsrq', 'pulsar']")
    _fails(capsys, [*base, "--acquisition", "entropy", "--target", "pulsar"], "--target applies to --acquisition bald or discovery")
    _fails(capsys, [*base, "--target", "psr"], "bald target 'psr' is not one of the classes")
    assert not out.exists()  # refused before the folder is claimed
    assert main([*base, "--acquisition", "discovery", "--target", "pulsar"]) == 0, capsys.readouterr().err
    state = json.loads((out / "checkpoint" / "state.json").read_text())
    found = sum(label == "pulsar" for label in state["queries"][0]["labels"])
    expected = sum(state["queries"][0]["scores"])  # with no exploration the scores are the target probabilities
    assert f"Discovery of `pulsar`: {found} of 3 observed sources were `pulsar`; the probabilities at query time " \
           f"expected {expected:.1f}" in (out / "report.md").read_text()


def test_workflow_errors_reach_the_user_with_exit_code_2(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text(f"workflow: classify\nout: {tmp_path / 'out'}\nparams:\n  epoch: 3\n")
    _fails(capsys, ["workflow", str(bad)], "unknown key 'params.epoch'", "epochs")
    _fails(capsys, ["workflow", str(tmp_path / "nope.yaml")], "does not exist")
    assert not (tmp_path / "out").exists()


def test_the_command_asks_tensorflow_for_tf_keras_unless_the_user_chose(monkeypatch, capsys):
    """Keras 3, which gpal never uses, is a quarter of TensorFlow's import: the command's process skips it, but an
    environment that chose otherwise keeps its choice."""
    import os

    monkeypatch.delenv("TF_USE_LEGACY_KERAS", raising=False)
    assert main(["catalog", "summary", "--catalog", "4FGL"]) == 0
    assert os.environ["TF_USE_LEGACY_KERAS"] == "1"
    monkeypatch.setenv("TF_USE_LEGACY_KERAS", "0")
    assert main(["catalog", "summary", "--catalog", "4FGL"]) == 0
    assert os.environ["TF_USE_LEGACY_KERAS"] == "0"


def test_the_process_command_freezes_its_objects_before_python_exits(monkeypatch, capsys):
    """Python's exit would otherwise walk TensorFlow's objects in one last collection (2.6 s after the main job);
    an in-process call (a test, a notebook) goes on living and is left alone."""
    import gc

    froze = []
    monkeypatch.setattr(gc, "freeze", lambda: froze.append(True))
    assert main(["catalog", "summary", "--catalog", "4FGL"]) == 0 and froze == []
    monkeypatch.setattr(sys, "argv", ["gpal", "catalog", "summary", "--catalog", "4FGL"])
    assert main() == 0 and froze == [True]
    monkeypatch.setattr(sys, "argv", ["gpal", "catalog", "summary", "--catalog", "5FGL"])
    assert main() == 2 and froze == [True, True]  # a refused command ends the process too


def test_a_type_error_in_gpal_is_a_bug_with_its_traceback_not_bad_input(monkeypatch):
    # the command line hands the library values of the types it declares: a TypeError is gpal's own mistake
    import gpal.catalogs

    def broken(*args, **kwargs):
        raise TypeError("unsupported operand type(s) for +: 'int' and 'str'")

    monkeypatch.setattr(gpal.catalogs, "load_catalog", broken)
    with pytest.raises(TypeError, match="unsupported operand"):
        main(["catalog", "summary", "--catalog", "FL16Y"])

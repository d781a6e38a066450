"""The main job and its parts: class specs, trained-model folders, probability tables, classify_catalog."""

import json
import shutil
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from gpal.catalog_jobs.candidates import BLAZAR_SECTIONS, later_yield_words, trusted_yield_words
from gpal.catalog_jobs.classify import DEFAULT_BASELINES, classify_catalog
from gpal.catalog_jobs.selection import CatalogSelection
from gpal.catalog_jobs.settings import main_job_estimator
from gpal.catalog_jobs.model_folders import load_trained
from gpal.catalog_jobs.layout import (
    BASELINES_FILE, DISCOVERY_FILE, ERROR_BLIND_MODEL_DIR, ESTIMATOR_DIR, INFORMATIVE_FILE, METRICS_FILE,
    OOD_FILE, POOL_PRIOR_FILE, TRAINED_DIR, TRAINING_RECORD, folder_layout, list_path,
)
from gpal.estimators import load_estimator
from gpal.catalog_jobs.report import ERROR_BLIND_MODEL
from gpal.catalog_jobs.prediction import predict_catalog
from gpal.catalog_jobs.tables import check_table_path, read_probability_table, write_probability_table
from gpal.catalogs import repaired_text
from gpal.catalogs.classes import format_class_spec, parse_class_spec
from gpal.runs.output_dir import OutputInUse
from conftest import SMALL, TINY_ESTIMATOR as TINY, write_small_catalog

#: What a user finds at the top of the main job's folder: the classifications, the report and the run record, and the
#: folders every list, table, figure, model and JSON record lies in.
TOP = {"classifications.csv", "classifications.ecsv", "classifications.fits", "report.md", "run.json", ".gpal-written",
       "lists", "tables", "figures", "model", "records"}
#: Every source list, in lists/.
LISTS = {*(f"{name}.{ext}" for name in ("most_informative", "discovery", "extended") for ext in ("csv", "ecsv")),
         *(f"candidates_{c}{clean}.{ext}" for c in ("bll", "fsrq", "pulsar", "other") for clean in ("", "_clean")
           for ext in ("csv", "ecsv", "reg")),
         "most_informative.reg", "known_sources.csv", "known_sources.ecsv"}
#: The report's tables (CSV, Markdown, LaTeX) and figures (PNG, PDF).
TABLES = ("candidates_bll_top10", "candidates_fsrq_top10", "candidates_pulsar_top10", "candidates_other_top10",
          "heldout_metrics",
          "heldout_per_class", "heldout_confusion", "heldout_comparison", "predicted_counts", "predicted_by_latitude",
          "most_informative_top10", "discovery_top10", "most_uncertain")
FIGURES = ("confusion_matrix", "reliability", "reliability_per_class", "sky_classes", "sky_entropy")


def _classify(out, catalog, estimator=TINY, **job):
    """The main job on ``catalog`` with a tiny estimator; ``classes`` goes to the selection, the rest to the job."""
    selection = CatalogSelection(catalog=str(catalog), **({"classes": job.pop("classes")} if "classes" in job else {}))
    return classify_catalog(selection, main_job_estimator(**estimator), out, progress=False, **job)


@pytest.fixture
def classified(main_job_run):
    """The session's finished main job (conftest.py), read only, and its report."""
    return main_job_run, main_job_run / "report.md"


# ------------------------------------------------------------------ class specs
def test_class_spec_parses_merges_and_round_trips():
    classes, merge = parse_class_spec(" bll, FSRQ ,pulsar=psr+MSP")
    assert classes == ("bll", "FSRQ", "pulsar") and merge == {"pulsar": ("psr", "msp")}
    assert format_class_spec(classes, merge) == "bll,FSRQ,pulsar=psr+msp"
    assert parse_class_spec(format_class_spec(classes, merge)) == (classes, merge)


@pytest.mark.parametrize(
    "spec, message",
    [("", "empty"), ("bll,,fsrq", "bad class ''"), ("bll,pulsar=", "bad class 'pulsar='"),
     ("bll,pulsar=psr+", "bad class"), ("bll,bll", "appears twice"), ("bll", "at least two classes")],
)
def test_bad_class_specs_are_named(spec, message):
    with pytest.raises(ValueError, match=message):
        parse_class_spec(spec)


# ------------------------------------------------------------------ selections
@pytest.mark.parametrize("fields, message", [
    ({"classes": "blazar_pulsr"}, r"unknown class scheme 'blazar_pulsr'"),
    ({"classes": "bll,pulsar=psr+"}, r"bad class 'pulsar=psr\+'"),
    ({"classes": "bll,fsrq", "merge": {"pulsar": ["psr"]}}, "give merges inside the class spec or scheme"),
    ({"min_significance": "high"}, r"min_significance must be None or a finite number; got 'high'"),
    ({"features": "fermi_dr5"}, r"unknown feature preset 'fermi_dr5'"),
    ({"features": ["LP_Index", 3]}, r"features must be None or a non-empty string or a list .*; got \['LP_Index', 3\]"),
    ({"catalog": ""}, r"catalog must be a release name \(a key of gpal.catalogs.RELEASES\) or the path"),
    ({"missing_errors": "median"}, r"missing_errors must be .*'exact'.*'population'.*; got 'median'"),
])
def test_a_selection_is_checked_when_made(fields, message):
    with pytest.raises(ValueError, match=message):
        CatalogSelection(**fields)


def test_a_selection_keeps_its_values_and_resolves_its_classes():
    assert CatalogSelection().class_spec.startswith("bll,fsrq,pulsar=psr+msp,other=spp+snr")  # the open sky
    listed = CatalogSelection(classes=["bll", "fsrq", "pulsar"], features=["LP_Index", "log:Signif_Avg"])
    assert listed.classes == ("bll", "fsrq", "pulsar") and listed.features == ("LP_Index", "log:Signif_Avg")
    assert listed.class_groups() == (("bll", "fsrq", "pulsar"), {"pulsar": ("psr", "msp")})  # the default merge
    assert CatalogSelection(classes="blazar_psr_msp").class_spec == "bll,fsrq,psr,msp"
    assert {name: s.default for name, s in CatalogSelection.settings().items()} == {
        "catalog": "FL16Y", "classes": "open_sky", "merge": None, "min_significance": None,
        "features": "release", "missing_errors": None}
    # the release's preset: on every 4FGL-layout release the main job's features are fermi_dr4's, as before
    from gpal.catalogs import FEATURE_PRESETS, load_catalog
    dr4 = load_catalog("4FGL-DR4")
    assert dr4.features(CatalogSelection().features) == FEATURE_PRESETS["fermi_dr4"]
    assert CatalogSelection().features_of(dr4) == FEATURE_PRESETS["fermi_dr4"]
    assert load_catalog("3FGL").features(CatalogSelection().features) == FEATURE_PRESETS["fermi_3fgl"]
    # missing_errors: every feature that repairs a missing error does so by the rule given; the others are untouched
    exact = CatalogSelection(missing_errors="exact").features_of(dr4)
    for given, preset in zip(exact, FEATURE_PRESETS["fermi_dr4"]):
        repairs = preset.missing_error != "drop"
        assert given.missing_error == ("exact" if repairs else "drop") and (repairs or given == preset)
    assert sum(f.missing_error == "exact" for f in exact) == 6


# ----------------------------------------------------------------- the main job
def test_classify_writes_table_figures_metrics_and_report(classified, small_catalog):
    out, report = classified
    for name in ["classifications.csv", "classifications.fits", "tables/heldout.csv", "records/metrics.json",
                 "records/ood.json", "model/training.json", "model/estimator/config.json", "model/estimator/params.npz",
                 "model/error_blind/params.npz", "tables/heldout_metrics.csv", "tables/predicted_counts.md"]:
        assert (out / name).is_file(), name
    for figure in ["confusion_matrix", "reliability", "reliability_per_class", "sky_classes", "sky_entropy"]:
        assert (out / "figures" / f"{figure}.png").stat().st_size > 1000 and (out / "figures" / f"{figure}.pdf").is_file()
    assert not [p.name for p in out.rglob("*") if p.name.endswith(".tmp")]
    # one place per kind of file: the classifications and the report at the top, the rest in a folder each
    assert {p.name for p in out.iterdir()} == TOP and len(TOP) <= 12
    assert {p.name for p in (out / "lists").iterdir()} == LISTS
    assert {p.name for p in (out / "model").iterdir()} == {"training.json", "estimator", "error_blind"}
    assert {p.name for p in (out / "records").iterdir()} == {"metrics.json", "ood.json", "timings.json"}
    # a DR4 run is older than the newest shipped release (FL16Y): the later-release check runs and is shown
    assert {p.name for p in (out / "tables").iterdir()} == {
        "heldout.csv", "heldout_baselines.csv", "later_check.csv", "later_check_sources.csv",
        *(f"{t}.{e}" for t in (*TABLES, "later_release_check") for e in ("csv", "md", "tex"))}
    later = pd.read_csv(out / "tables" / "later_check.csv")
    assert set(later["later"]) == {"FL16Y"} and set(later["model"]) == {"gpal", ERROR_BLIND_MODEL, *DEFAULT_BASELINES}
    # the run's own ood flags are scored too, as gpal check-later scores those of the finished folder
    assert {"none-of-these rate, later other", "none-of-these rate, later AGN+pulsar"} <= set(later["measure"])
    # what the error bars bought, measured on the later labels too: the twin saved by the run, scored like the model
    twin = later[(later["model"] == ERROR_BLIND_MODEL) & (later["measure"] == "4-class nll")].iloc[0]
    sources = pd.read_csv(out / "tables" / "later_check_sources.csv")
    blind = load_estimator(out / ERROR_BLIND_MODEL_DIR)
    assert list(blind.classes_) == ["bll", "fsrq", "other", "pulsar"] and blind.input_noise == "none"
    assert ("later classified, 4-class NLL" in report.read_text()
            and f"without minus with {twin['diff']:+.3f}" in report.read_text())  # the tables' sign
    assert np.isfinite(sources[f"p_bll_{ERROR_BLIND_MODEL}"]).all()
    flags = read_probability_table(out / "classifications.csv").frame.set_index("Source_Name")["ood"]
    assert (sources["ood"].to_numpy() == flags.loc[sources["Source_Name"]].to_numpy()).all()
    assert "**Checked against a later release**: FL16Y gives" in report.read_text()
    # values read as exact are counted, as dropped rows are: in training.json, metrics.json and the report
    repaired = json.loads((out / METRICS_FILE).read_text())["repaired"]
    assert repaired["labelled"] == repaired_text(json.loads((out / TRAINING_RECORD).read_text())["repaired"]) != ""
    assert (f"labelled sources {repaired['labelled']}; sources to classify {repaired['classified'] or 'none'}."
            in report.read_text())
    assert {p.name for p in (out / "figures").iterdir()} == {f"{f}.{e}" for f in FIGURES for e in ("png", "pdf")}

    table = read_probability_table(out / "classifications.csv")
    frame = table.frame
    assert len(frame) == SMALL[""] + SMALL["bcu"]  # every unassociated and bcu source, nothing else
    assert set(frame["CLASS1"].str.lower()) == {"", "bcu"}
    proba = frame[["p_bll", "p_fsrq", "p_pulsar", "p_other"]].to_numpy()
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-9)
    assert (frame["predicted_class"] == np.array(["bll", "fsrq", "pulsar", "other"])[proba.argmax(axis=1)]).all()
    assert ((frame["entropy"] >= 0) & (frame["entropy"] <= np.log(4) + 1e-9)).all()
    assert frame["GLAT"].abs().max() <= 90 and frame["GLON"].between(0, 360).all()
    assert table.meta["CATALOG"] == "4FGL-DR4" and table.meta["CATFILE"] == small_catalog.name
    assert table.meta["CLASSES"].startswith("bll,fsrq,pulsar=psr+msp,other=") and table.meta["SELECT"] == "unassociated,bcu"
    assert table.meta["FITCONF"]["epochs"] == TINY["epochs"] and table.meta["NSOURCES"] == len(frame)

    fits_table = read_probability_table(out / "classifications.fits")
    assert fits_table.meta == table.meta
    assert (fits_table.frame["Source_Name"] == frame["Source_Name"]).all()
    np.testing.assert_allclose(fits_table.frame["p_fsrq"], frame["p_fsrq"], rtol=1e-12)

    metrics = json.loads((out / METRICS_FILE).read_text())
    held = metrics["heldout"]
    n_labelled = SMALL["bll"] + SMALL["fsrq"] + SMALL["psr"] + SMALL["msp"] + SMALL["snr"] + SMALL["spp"]
    assert held["n"] == pytest.approx(0.2 * n_labelled, abs=2)
    assert 0 <= held["ece"] <= 1 and held["nll"] > 0 and held["accuracy"] == pytest.approx(1 - held["error"])
    assert np.asarray(held["confusion"]).sum() == held["n"]
    training = json.loads((out / TRAINING_RECORD).read_text())
    assert sum(training["n_per_class"].values()) + held["n"] == n_labelled
    text = report.read_text()
    for link in ["](classifications.csv)", "](classifications.ecsv)", "](classifications.fits)",
                 "](figures/confusion_matrix.png)", "](figures/reliability.png)", "](figures/sky_classes.png)",
                 "](tables/heldout.csv)", "[CSV](tables/heldout_metrics.csv)", "Held-out check", "Rows left out", "comparison with the baselines",
                 "Faintest quarter", "Population shift", "completeness and purity per class", "Monte Carlo noise",
                 "forced into one of them", "spp", "Run: table written " + table.meta["DATE"], "confusion matrix (counts"]:
        assert link in text, link
    # per-class completeness and purity, with intervals, match the confusion matrix
    conf = np.asarray(held["confusion"])
    for c, row in enumerate(held["per_class"]):
        assert row["completeness"] == pytest.approx(conf[c, c] / conf[:, c].sum())
        assert row["completeness_low"] <= row["completeness"] <= row["completeness_high"]
        if conf[c, :].sum():  # a class the tiny model never predicts has no purity (None in metrics.json)
            assert row["purity"] == pytest.approx(conf[c, c] / conf[c, :].sum())
        else:
            assert row["purity"] is None
    lo, hi = held["intervals"]["accuracy"]
    assert lo < held["accuracy"] < hi and set(held["intervals"]) >= {"nll", "brier", "ece", "accuracy"}
    uncertain = pd.read_csv(out / "tables" / "most_uncertain.csv")
    assert {"RA", "DEC", "Conf_95_SemiMajor", "Flux1000", "Signif_Avg", "Flags"} <= set(uncertain.columns)
    assert uncertain["Signif_Avg"].notna().all() and uncertain["entropy"].is_monotonic_decreasing
    frame = pd.read_csv(out / "classifications.csv", keep_default_na=False, na_values=[""])
    # the epistemic part of the model's entropy, never more (to the difference of two Monte Carlo estimates of p): on
    # the rows the pool prior leaves as the model gave them (the bcu), whose entropy column is the model's
    kept = frame["CLASS1"].fillna("").str.strip().str.lower() == "bcu"
    assert kept.any() and (frame["information"] >= 0).all()
    assert (frame.loc[kept, "information"] <= frame.loc[kept, "entropy"] + 0.05).all()


def test_classify_compares_with_baselines_on_the_same_rows(classified):
    out, _ = classified
    metrics = json.loads((out / METRICS_FILE).read_text())
    rows = {(r["model"], r["metric"]): r for r in metrics["comparison"]}
    # the model's twin without error bars is compared like a baseline: what the error bars bought
    assert {m for m, _ in rows} == {"gpal", "logistic", "random_forest_isotonic", ERROR_BLIND_MODEL}
    # the comparison's gpal NLL is the held-out NLL: same rows, same probabilities
    assert rows["gpal", "nll"]["value"] == pytest.approx(metrics["heldout"]["nll"])
    assert rows["gpal", "nll"]["diff"] == 0
    for model in ("logistic", "random_forest_isotonic", ERROR_BLIND_MODEL):
        r = rows[model, "nll"]
        assert r["diff_low"] <= r["diff"] <= r["diff_high"]
    # one interval per statistic, each holding its value: the report's held-out intervals are the comparison's
    for r in rows.values():
        assert r["low"] <= r["value"] <= r["high"] and r["diff_low"] <= r["diff"] <= r["diff_high"], r
    for metric, (low, high) in metrics["heldout"]["intervals"].items():
        assert [rows["gpal", metric]["low"], rows["gpal", metric]["high"]] == [low, high]
        assert low <= metrics["heldout"][metric] <= high, metric
    from gpal.evaluation.intervals import binomial_interval
    n = metrics["heldout"]["n"]
    for model in ("gpal", "logistic"):
        correct = round(rows[model, "accuracy"]["value"] * n)
        assert [rows[model, "accuracy"]["low"], rows[model, "accuracy"]["high"]] == list(binomial_interval(correct, n, 0.95))
    held = pd.read_csv(out / "tables" / "heldout.csv")
    base = pd.read_csv(out / "tables" / "heldout_baselines.csv")
    assert set(base.groupby("model")["Source_Name"].apply(frozenset)) == {frozenset(held["Source_Name"])}
    # the pool prior on (the default): the report gives the unassociated mix it applied, not an estimate left unapplied
    # the pool prior off (the default): the shift is estimated as a diagnostic, the other populations held
    shift = metrics["population_shift"]
    assert metrics.get("pool_prior") is None and shift["estimated_prior"]["other"] == shift["training_prior"]["other"]
    faint = metrics["faintest_quarter"]
    assert faint["n"] >= len(held) // 4 and set(faint["models"]) == {"gpal", "logistic", "random_forest_isotonic",
                                                                       ERROR_BLIND_MODEL}
    bought = rows[ERROR_BLIND_MODEL, "nll"]
    text = (out / "report.md").read_text()
    # one sign for differences, the tables' (other model minus gpal), in the words too
    assert f"without them minus with them (the tables' sign: other model minus gpal): {bought['diff']:+.3f}" in text
    assert "**Where another model is better**" in text  # said either way, as plainly as where gpal is better
    frame = read_probability_table(out / "classifications.csv").frame
    extended = int(frame["extended"].sum())
    left = f" ({extended} extended left out)" if extended else ""  # a title counts what it draws, names the rest
    assert (f"## Sky map of the predicted classes: {len(frame) - extended} of the {len(frame)} classified "
            f"unassociated + bcu sources{left}\n") in text
    table = read_probability_table(out / "classifications.csv")
    frame = table.frame
    assert (frame["p_mc_se"] >= 0).all()
    # the lists' 4LAC columns are said in the report, with what was joined (read back from the table's header)
    assert table.meta["LACFROM"].startswith("4LAC-DR3 (table-4LAC-DR3-h.fits.gz, table-4LAC-DR3-l.fits.gz) joined by")
    assert "the counterpart's SED from the LAT AGN catalog" in text and table.meta["LACFROM"] in text


def test_unknown_baseline_is_refused_before_the_folder_is_claimed(small_catalog, tmp_path):
    with pytest.raises(ValueError, match=r"baselines\[0\] must be one of \['logistic', .*; got 'svm'"):
        _classify(tmp_path / "run", small_catalog, baselines=["svm"])
    assert not (tmp_path / "run").exists()


def test_rerun_with_same_settings_reuses_the_model_and_reproduces_the_table(classified, small_catalog, tmp_path):
    out = tmp_path / "run"  # the run of the command line, rerun through the API
    shutil.copytree(classified[0], out)
    params = out / TRAINED_DIR / ESTIMATOR_DIR / "params.npz"
    before, table = params.stat().st_mtime_ns, (out / "classifications.csv").read_bytes()
    said = []
    _classify(out, small_catalog, log=said.append)
    assert params.stat().st_mtime_ns == before  # not retrained
    # (the outlier score, fitted beside the model, may speak first)
    assert any(m.startswith(f"reusing the trained model in {out}") for m in said)
    assert not any("training on" in m for m in said)
    assert (out / "classifications.csv").read_bytes() == table


def test_a_failed_model_fit_stops_the_comparison_fitted_beside_it(small_catalog, tmp_path, monkeypatch):
    """The baselines and the error-blind twin train in a second thread beside the model: when the model's fit
    fails (or is interrupted), the twin stops and no comparison table is written for a run without its model."""
    import gpal.catalog_jobs.classify as job

    def failing_fit(*args, **kwargs):
        raise RuntimeError("the model's fit failed")

    monkeypatch.setattr(job, "fit_or_reuse", failing_fit)
    with pytest.raises(RuntimeError, match="the model's fit failed"):
        _classify(tmp_path / "run", small_catalog)
    assert not (tmp_path / "run" / BASELINES_FILE).exists()
    assert not (tmp_path / "run" / TRAINING_RECORD).exists()


def _files(folder):
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


def test_rerun_with_other_settings_is_refused_before_any_work(classified, small_catalog):
    out, _ = classified
    with pytest.raises(OutputInUse, match=r"estimator.params.epochs: 3 -> 4.*--force"):
        _classify(out, small_catalog, estimator={**TINY, "epochs": 4})


@pytest.mark.parametrize(
    "estimator, job, message",
    [({}, {"classes": ("bll", "xyz")}, r"unknown class code\(s\) \['xyz'\]"),
     ({}, {"select": ("unassociated", "foo")}, r"unknown class code\(s\) \['foo'\]"),
     ({"input_noise": "sideways"}, {}, "input_noise must be one of"),
     ({}, {"test_size": 1.5}, r"test_size must be a finite number > 0 and < 1 \(the held-out fraction\); got 1.5")],
)
def test_bad_settings_fail_before_the_folder_is_claimed(small_catalog, tmp_path, estimator, job, message):
    with pytest.raises(ValueError, match=message):
        _classify(tmp_path / "out", small_catalog, estimator={**TINY, **estimator}, **job)
    assert not (tmp_path / "out").exists()


# ----------------------------------------------------------- prediction tables
def test_the_error_blind_twin_reads_an_input_noise_object_by_its_strategy():
    """A job's estimator may hold a strategy object (docs/extending.md): the twin is fitted where it uses error bars."""
    from gpal.catalog_jobs.classify import _error_blind_twin
    from gpal.estimators.noisy_gp import NoisyGPClassifier
    from gpal.models import FirstOrder, NoInputNoise

    assert _error_blind_twin(NoisyGPClassifier(input_noise=NoInputNoise())) == {}
    twin = _error_blind_twin(NoisyGPClassifier(input_noise=FirstOrder()))[ERROR_BLIND_MODEL]
    assert twin.input_noise == "none"


def test_predict_on_catalog_without_a_feature_column_names_it(classified, tmp_path):
    out, _ = classified
    lacking = write_small_catalog(tmp_path / "lacking.fits", drop_column="Unc_LP_beta")
    with pytest.raises(ValueError, match=r"lacks column\(s\) \['Unc_LP_beta'\]"):
        predict_catalog(out, str(lacking), "unassociated", progress=False)


def test_predict_all_and_write_refuses_to_overwrite(classified, small_catalog, tmp_path):
    out, _ = classified
    table = predict_catalog(load_trained(out), str(small_catalog), "all", progress=False)
    assert len(table.frame) == sum(SMALL.values())
    path = write_probability_table(table, tmp_path / "t.csv")
    with pytest.raises(FileExistsError, match="already exists.*--force"):
        write_probability_table(table, path)
    write_probability_table(table, path, force=True)
    with pytest.raises(ValueError, match=r"must end in one of \['.csv', '.fit', '.fits', '.mrt', '.vot'\]"):
        check_table_path(tmp_path / "t.txt")
    assert sorted(os.listdir(tmp_path)) == ["t.csv", "t.ecsv"]
    (tmp_path / "u.ecsv").write_text("someone's table")
    with pytest.raises(FileExistsError, match="u.ecsv already exists"):  # the CSV's twin is not overwritten either
        check_table_path(tmp_path / "u.csv")


def test_predict_takes_the_selection_already_built(classified, small_catalog, monkeypatch):
    """The main job builds its selection once and hands it over: the table is the one prediction would build."""
    from gpal.catalog_jobs import prediction
    from gpal.catalogs import load_catalog

    out, _ = classified
    trained, cat = load_trained(out), load_catalog(str(small_catalog))
    built = predict_catalog(trained, cat, "unassociated", progress=False)
    pool = prediction.selection_pool(cat, ("unassociated",), trained.training["features"])
    monkeypatch.setattr(prediction, "selection_pool", lambda *a: pytest.fail("the selection was built again"))
    given = predict_catalog(trained, cat, "unassociated", progress=False, pool=pool)
    pd.testing.assert_frame_equal(given.frame, built.frame)
    assert given.meta == built.meta and len(given.frame) == SMALL[""]


def test_the_held_out_check_and_the_chunked_prediction_share_one_loaded_model(classified):
    """The job reads its saved model once: the record's estimator is the object chunked prediction loads."""
    from gpal.catalog_jobs.model_folders import _loaded, loaded_estimator
    from gpal.catalog_jobs.prediction import predict_proba_chunked

    out, _ = classified
    trained = load_trained(out)
    assert trained.estimator is loaded_estimator(trained.model_dir)
    assert load_trained(out).estimator is trained.estimator  # another record of the same folder: the same load
    misses = _loaded.cache_info().misses
    X = np.zeros((4, trained.estimator.n_features_in_))
    proba = predict_proba_chunked(trained.model_dir, X, np.zeros_like(X), chunk_size=2, progress=False)
    assert _loaded.cache_info().misses == misses
    # other chunk sizes round otherwise (as tests/estimators/test_prediction.py's chunked predictions do)
    np.testing.assert_allclose(proba, trained.estimator.predict_proba(X, np.zeros_like(X)), rtol=0, atol=1e-12)


def test_load_trained_explains_what_a_model_folder_is(classified, tmp_path):
    out, _ = classified
    with pytest.raises(FileNotFoundError, match="does not exist"):
        load_trained(tmp_path / "nowhere")
    with pytest.raises(FileNotFoundError, match="bare saved model"):
        load_trained(out / TRAINED_DIR / ESTIMATOR_DIR)
    assert load_trained(out / TRAINED_DIR).training == load_trained(out).training  # model/ alone is a model folder
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "training.json").write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON.*corrupt"):
        load_trained(broken)


# ----------------------------------------------------------- none of these
def test_classify_flags_none_of_these_and_counts_by_latitude(classified, small_catalog):
    """The ood flag is calibrated on the held-out split, checked on the classes left out of training
    (the small catalog's radio galaxies: no class of the open sky holds them) and counted in and out of the plane."""
    from gpal.catalog_jobs.none_of_these import PLANE_DEG
    from gpal.estimators.outliers import OOD_FALSE_POSITIVE_RATE

    out, report = classified
    frame = pd.read_csv(out / "classifications.csv")
    assert frame["ood"].dtype == bool and np.isfinite(frame["ood_score"]).all()
    record = json.loads((out / OOD_FILE).read_text())
    assert (frame["ood"] == (frame["ood_score"] > record["threshold"])).all()
    held = json.loads((out / METRICS_FILE).read_text())["heldout"]
    # the small catalog's held-out split is too small for the default rate: its smallest rate, said in the record
    assert record["calibrated_on"] == held["n"] and record["false_positive_rate"] == max(OOD_FALSE_POSITIVE_RATE,
                                                                                          1 / held["n"])
    assert record["left_out"] == {"rdg": {"n": SMALL["rdg"], "flagged": record["left_out"]["rdg"]["flagged"]}}
    by_latitude = pd.read_csv(out / "tables" / "predicted_by_latitude.csv")
    assert set(by_latitude["sources"]) == {"unassociated", "bcu"} and by_latitude["n"].sum() == len(frame)
    assert (by_latitude[["bll", "fsrq", "pulsar", "other"]].sum(axis=1) == by_latitude["n"]).all()
    assert by_latitude["none of these (ood)"].sum() == frame["ood"].sum()
    in_plane = by_latitude[by_latitude["latitude"] == f"|b| <= {PLANE_DEG:g}"]["n"].sum()
    assert in_plane == (frame["GLAT"].abs() <= PLANE_DEG).sum()
    text = report.read_text()
    assert "**None of these**" in text and f"rdg {record['left_out']['rdg']['flagged']}/{SMALL['rdg']}" in text
    assert "in and out of the Galactic plane" in text


def test_the_outlier_record_the_job_flags_by_is_the_one_ood_json_holds(small_catalog):
    """The main job flags its sources by the record in memory and writes it to ood.json; ``gpal predict`` reads that
    file: the two are one record only where every value is JSON's own (a NumPy scalar or a tuple would read back as
    another type)."""
    from gpal.catalog_jobs.none_of_these import check_outliers
    from gpal.files import json_text

    def types(value):
        if isinstance(value, dict):
            return {type(value)} | {type(k) for k in value} | set().union(*map(types, value.values()))
        if isinstance(value, (list, tuple)):
            return {type(value)} | set().union(*map(types, value))
        return {type(value)}

    _, data = CatalogSelection(catalog=str(small_catalog)).load()
    train, test = data.split(test_size=0.2, seed=0, stratify=True)
    record = check_outliers(train, test, None, seed=0)
    assert types(record) <= {dict, list, str, int, float, bool, type(None)}
    assert json.loads(json_text(record)) == record


# ------------------------------------------------------------ source lists
def test_the_target_lists_come_first_and_hold_the_most_probable_followable_sources(classified):
    """One list per class, the class's followable sources most probable first, no bcu among the pulsars; their
    table leads the report's tables, with the counterpart's position; the flags' legend is in the header."""
    from astropy.table import Table

    from gpal.catalog_jobs.candidates import candidate_lists, check_cuts

    out, report = classified
    classified_sources = read_probability_table(out / "classifications.csv")
    frame = classified_sources.frame
    trained = load_trained(out)
    expected = candidate_lists(frame, list(trained.classes), trained.training["merge"], check_cuts({}))
    for cls, rows in expected.items():
        listed = read_probability_table(out / list_path(f"candidates_{cls}.csv")).frame
        assert listed["Source_Name"].tolist() == rows["Source_Name"].tolist(), cls
        # the stated order: a blazar list's sections (counterpart first), the probability to two decimals, then the
        # significance
        sections = listed.get("section", [""] * len(listed))
        section = [BLAZAR_SECTIONS.index(s) if s in BLAZAR_SECTIONS else 0 for s in sections]
        key = list(zip(section, -listed[f"p_{cls}"].round(2), -listed["Signif_Avg"]))
        assert key == sorted(key) and (listed["predicted_class"] == cls).all()
        assert (listed["Signif_Avg"] >= 5).all() and (listed["Conf_95_SemiMajor"] <= 0.1).all() and not listed["ood"].any()
        regions = (out / list_path(f"candidates_{cls}.reg")).read_text().splitlines()
        assert len(regions) == 3 + len(listed) and "target list" in regions[1]
    assert len(expected["bll"]) > 0 and not (expected["pulsar"]["CLASS1"] == "bcu").any()
    text = report.read_text()
    first_table = text.index("\n## ")
    assert text[first_table:].startswith("\n## Target list: bll (lists/candidates_bll.csv")
    assert text.index("**Target lists, one per class**") < text.index("**Held-out check**")
    shown = pd.read_csv(out / "tables" / "candidates_bll_top10.csv")
    assert {"RA_Counterpart", "DEC_Counterpart", "p_mc_se"} <= set(shown.columns)
    meta = Table.read(out / list_path("candidates_bll.ecsv"), format="ascii.ecsv").meta
    assert meta["FLAG5"].startswith("closer than theta_ref") and meta["CSIG"] == 5.0 and "bcu" in meta["KNOWNCLS"]
    # the expected number of members with its interval, and the order's rule, in each list's header
    bll = read_probability_table(out / list_path("candidates_bll.csv")).frame
    assert meta["EXPECTED"] == pytest.approx(bll["p_bll"].sum(), abs=0.05)
    assert meta["EXPLOW"] <= meta["EXPECTED"] <= meta["EXPHIGH"] <= len(bll) and "Signif_Avg" in meta["ORDER"]
    assert meta["DECKEPT"] == meta["CDEC"] == "-90.0,90.0"  # no declination cut; a telescope's narrows it (test_candidates)
    # how far the expected count held on later labels: in the header and, for every class, in the report
    assert meta["LATERYLD"] == later_yield_words("bll") and trusted_yield_words() in text
    clean = read_probability_table(out / list_path("candidates_bll_clean.csv")).frame
    assert set(clean["Source_Name"]) <= set(bll["Source_Name"]) and (clean["caveats"].fillna("").str.find("flag") < 0).all()


def test_the_other_lists_are_read_from_the_classifications(classified):
    """The most informative list holds no ood, extended or faint source, ranked by information; discovery only
    unassociated ood ones without flags 5 or 6, by ood_score; both carry the classifications' columns (target columns
    with units among them) and are in the report."""
    from astropy.table import Table

    out, report = classified
    classified_sources = read_probability_table(out / "classifications.csv")
    frame, minsig = classified_sources.frame, classified_sources.meta["MINSIG"]
    assert minsig == 4.0 and classified_sources.meta["TARGET"] == ""
    follow, found = (read_probability_table(out / list_path(name)).frame for name in (INFORMATIVE_FILE, DISCOVERY_FILE))
    eligible = frame[~frame["ood"] & ~frame["extended"] & (frame["Signif_Avg"] >= minsig)]
    assert len(follow) == len(eligible) > 10 and not follow["ood"].any() and not follow["extended"].any()
    assert follow["Source_Name"].tolist() == eligible.sort_values("information", ascending=False)["Source_Name"].tolist()
    unknown = (frame["CLASS1"] == "") & (frame["Flags"] & (16 + 32) == 0)
    assert found["ood"].all() and set(found["Source_Name"]) == set(
        frame[frame["ood"] & (frame["Signif_Avg"] >= minsig) & unknown & ~frame["extended"]]["Source_Name"])
    assert found["ood_score"].is_monotonic_decreasing and list(follow.columns) == ["rank", *frame.columns]
    same = follow.merge(frame, on="Source_Name", suffixes=("", "_classified"))
    for column in ("information", "p_pulsar", "RA", "Conf_95_PosAng", "Flags"):
        np.testing.assert_array_equal(same[column], same[f"{column}_classified"])
    units = {c.name: str(c.unit) for c in Table.read(out / list_path("most_informative.ecsv"), format="ascii.ecsv").columns.values()}
    assert units["RA"] == units["Conf_95_SemiMajor"] == "deg" and units["Flux1000"] == "ph / (s cm2)"
    ellipses = (out / list_path("most_informative.reg")).read_text().splitlines()[3:]
    assert len(ellipses) == follow["Conf_95_SemiMajor"].notna().sum() and follow["Source_Name"][0] in ellipses[0]
    text = report.read_text()
    for caption in ("Most informative (lists/most_informative.csv", "Discovery (lists/discovery.csv", "](lists/most_informative.reg)"):
        assert caption in text, caption
    shown = pd.read_csv(out / "tables" / "most_informative_top10.csv")
    assert shown["Source_Name"].tolist() == follow["Source_Name"][:10].tolist() and not shown["ood"].any()


def test_classifications_carry_the_target_columns_at_the_catalogs_digits(classified, small_catalog):
    from gpal.catalogs import load_catalog
    from gpal.catalogs.targets import TARGET_COLUMNS, target_columns

    out, _ = classified
    frame = pd.read_csv(out / "classifications.csv", keep_default_na=False, na_values=[""])
    assert set(TARGET_COLUMNS) <= set(frame.columns)
    expected = target_columns(load_catalog(small_catalog), frame["Source_Name"].tolist())
    np.testing.assert_array_equal(frame["RA"], expected["RA"])  # read back from the CSV's text: the same float64
    text = (out / "classifications.csv").read_text()
    assert "0.09830000251531601" not in text and ",0.0983,-73.922," in text  # 4FGL J0000.3-7355, as the catalog has it


def test_extended_sources_are_not_given_a_point_source_class(classified, small_catalog):
    """The small catalog's snr rows include extended sources: predicted as 'extended', never as a trained class."""
    out, _ = classified
    table = predict_catalog(out, str(small_catalog), "snr", progress=False).frame
    extended = table["extended"].to_numpy(bool)
    assert 0 < extended.sum() < len(table)
    assert (table["predicted_class"][extended] == "extended").all()
    assert table["predicted_class"][~extended].isin(["bll", "fsrq", "pulsar"]).all()


#: The error ellipse's columns, which an older catalog layout lacks.
ELLIPSE = ("Conf_95_SemiMajor", "Conf_95_SemiMinor", "Conf_95_PosAng")
#: The follow-up flags the optioned run excludes.
FLAGS = list(range(1, 15))


@pytest.fixture(scope="module")
def optioned_run(small_catalog, tmp_path_factory):
    """One main job for three tests (the ellipse fallback, the excluded flags, the pool prior): a catalog without
    the ellipse columns (not features: the rows, features and estimator are the session run's, so the model is too),
    FLAGS excluded, the pool prior on (the session run has it off, the default); the logistic baseline alone (the tests compare no other).
    Returns the folder, the report, the catalog and the name of each baseline the run fitted, once per fit."""
    import gpal.evaluation.baselines as baselines

    folder = tmp_path_factory.mktemp("options")
    catalog = write_small_catalog(folder / "older.fits", drop_column=ELLIPSE)
    out = folder / "run"
    fits, make = [], baselines.make_baseline
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(baselines, "make_baseline", lambda name, random_state=0: fits.append(name) or make(name, random_state))
        with pytest.warns(UserWarning, match=r"leave no source in candidates_bll.csv, candidates_fsrq.csv, "
                          r"candidates_other.csv, candidates_pulsar.csv, candidates_bll_clean.csv, .*: written with "
                          r"the header alone"):
            report = _classify(out, catalog, follow_up_flags=FLAGS, pool_prior=True, baselines=["logistic"])
    return out, report, catalog, fits


def test_a_catalog_without_the_ellipse_columns_gets_the_stated_fallback(optioned_run):
    """An older layout without Conf_95_*: the ellipse columns are NaN (units kept), the region file holds no source
    (it draws only ellipses it has), and the run writes every file."""
    from astropy.table import Table

    out, _, _, _ = optioned_run
    assert {p.name for p in out.iterdir()} == TOP
    assert {p.name for p in (out / "records").iterdir()} == {"metrics.json", "ood.json", "pool_prior.json", "timings.json"}  # its record
    frame = pd.read_csv(out / list_path("most_informative.csv"), keep_default_na=False, na_values=[""])
    assert len(frame) > 0 and frame[list(ELLIPSE)].isna().all().all() and frame["RA"].notna().all()
    assert Table.read(out / list_path("most_informative.ecsv"), format="ascii.ecsv")["Conf_95_SemiMajor"].unit == "deg"
    assert (out / list_path("most_informative.reg")).read_text().splitlines()[2:] == ["fk5"]
    # no ellipse passes the target lists' ellipse cut: each is its header alone, with units
    empty = Table.read(out / list_path("candidates_pulsar.ecsv"), format="ascii.ecsv")
    assert len(empty) == 0 and empty["Conf_95_SemiMajor"].unit == "deg" and "p_pulsar" in empty.colnames
    assert pd.read_csv(out / list_path("candidates_pulsar.csv")).empty


def test_excluded_flags_leave_flagged_sources_out_of_both_lists_and_the_report_says_so(optioned_run, small_catalog,
                                                                                         tmp_path):
    with pytest.raises(ValueError, match=r"follow_up_flags\[0\] must be an integer >= 1 and <= 32; got 0"):
        _classify(tmp_path / "run", small_catalog, follow_up_flags=[0])
    assert not (tmp_path / "run").exists()
    out, report, _, _ = optioned_run
    frame = read_probability_table(out / "classifications.csv")
    assert frame.meta["XFLAGS"] == ",".join(map(str, FLAGS))
    flagged = frame.frame[(frame.frame["Flags"] > 0) & (frame.frame["Signif_Avg"] >= 4) & ~frame.frame["extended"]]
    assert len(flagged) > 0  # sources the default lists would hold
    for name in (INFORMATIVE_FILE, DISCOVERY_FILE):  # the small run may flag no source "none of these"
        rows = pd.read_csv(out / list_path(name), keep_default_na=False, na_values=[""])
        assert (len(rows) > 0 or name == "discovery.csv") and (rows["Flags"] <= 0).all(), name
    assert f"nor are {len(flagged)} more that carry one of the catalog's Flags 1, 2," in report.read_text()
    assert json.loads((out / "run.json").read_text())["identity"]["follow_up_flags"] == FLAGS


def test_a_target_the_classes_lack_is_refused_before_the_folder_is_claimed(small_catalog, tmp_path):
    with pytest.raises(ValueError, match=r"target 'psr' is not a class of the model; its classes are \['bll', 'fsrq', 'pulsar', 'other'\]"):
        _classify(tmp_path / "run", small_catalog, target="psr")
    assert not (tmp_path / "run").exists()


def test_a_missing_or_malformed_pulsar_catalogue_is_refused_before_the_folder_is_claimed(small_catalog, tmp_path):
    with pytest.raises(FileNotFoundError, match=r"ATNF pulsar catalogue \(psrcat.db\) not found: .*nothere.db"):
        _classify(tmp_path / "run", small_catalog, known_pulsars=str(tmp_path / "nothere.db"))
    (tmp_path / "bad.db").write_text("PSRJ J0000+0000\nRAJ 25:00:00\nDECJ +10:00:00\n@\n")
    with pytest.raises(ValueError, match=r"bad.db.*'25:00:00' is out of range for a right ascension"):
        _classify(tmp_path / "run", small_catalog, known_pulsars=str(tmp_path / "bad.db"))
    assert not (tmp_path / "run").exists()


@pytest.mark.slow
def test_a_scheme_that_trains_on_bcu_classifies_only_the_unassociated(small_catalog, tmp_path):
    """Also what the API returns and leaves alone.  The error-blind model (no twin: one GP fit) and a single
    baseline: nothing here reads the fit."""
    out = tmp_path / "coarse"
    estimator = main_job_estimator(**{**TINY, "input_noise": "none"})
    selection = CatalogSelection(catalog=str(small_catalog), classes="bll,fsrq,pulsar=psr+msp,other=snr+bcu")
    assert classify_catalog(selection, estimator, out, progress=False, baselines=["logistic"]) == out / "report.md"
    assert not hasattr(estimator, "classes_")  # the job fits a copy
    frame = pd.read_csv(out / "classifications.csv", keep_default_na=False)
    assert set(frame["CLASS1"].str.lower()) == {""} and len(frame) == SMALL[""]
    assert set(json.loads((out / OOD_FILE).read_text())["left_out"]) == {"spp", "rdg"}  # snr and bcu are trained on


@pytest.mark.parametrize("classes, message", [
    ("bll,fsrq,pulsar=psr+msp,young=psr", r"'psr' is named 2 times, in pulsar and young"),
    ("bll,fsrq,pulsar=psr+msp,remnants=gc", r"class 'remnants' \(codes \['gc'\]\) has no source"),
    ("bll,fsrq,pulsar=psr+msp,spp", r"too few labelled sources: spp \d \(all: .*\); the training split"),
    ("blazar_pulsr", r"unknown class scheme 'blazar_pulsr': give a scheme \(blazar_pulsar, "),
])
def test_bad_schemes_are_refused_naming_the_group_before_any_work(small_catalog, tmp_path, classes, message):
    with pytest.raises(ValueError, match=message):
        _classify(tmp_path / "out", small_catalog, classes=classes)
    assert not (tmp_path / "out").exists()


def test_the_report_is_rebuilt_without_loading_tensorflow_and_refuses_a_folder_missing_its_classifications(
        classified, tmp_path, capsys):
    """``gpal report`` reads what the run recorded (the input prior it used among them); it never loads the model.
    One rebuild (in a fresh interpreter, the costly part) serves both checks."""
    import subprocess
    import sys

    from gpal.cli import main

    run, _ = classified
    out = tmp_path / "copy"
    shutil.copytree(run, out)
    report = out / "report.md"
    before = report.read_text()
    code = ("import sys; from gpal.cli import main; code = main(['report', sys.argv[1]]); "
            "print('TF-LOADED' if 'tensorflow' in sys.modules else 'TF-ABSENT'); sys.exit(code)")
    done = subprocess.run([sys.executable, "-c", code, str(out)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "TF-ABSENT" in done.stdout, done.stderr
    _same_report(run, out)
    training = json.loads((out / TRAINING_RECORD).read_text())
    assert training["input_prior_used"] is None  # TINY's first_order inputs are not sampled: no prior to state
    assert "input_prior=" not in report.read_text() and "input_prior=" not in before
    from gpal.estimators.params import input_prior_used

    assert input_prior_used(main_job_estimator()) == main_job_estimator().input_prior  # NIMGP samples its inputs
    (out / "classifications.csv").unlink()
    assert main(["report", str(out)]) == 2
    assert "not a finished gpal classify folder: ['classifications.csv'] missing" in capsys.readouterr().err


def _same_report(run: Path, rebuilt: Path) -> None:
    """The report the main job built from its results in memory is the one ``gpal report`` builds from its folder:
    every file the same, bytes for bytes, but the line naming the folder to rebuild from."""
    for path in sorted(p for p in run.rglob("*") if p.is_file() and p.name != ".gpal-written"):
        copy = rebuilt / path.relative_to(run)
        if path.name == "report.md":
            assert (path.read_text().replace(f"gpal report {run}`", "")
                    == copy.read_text().replace(f"gpal report {rebuilt}`", "")), path
        else:
            assert path.read_bytes() == copy.read_bytes(), path


def test_a_report_rebuilt_from_the_folder_is_the_one_the_run_wrote_with_the_pool_prior_and_a_later_check(
        optioned_run, tmp_path):
    """The run with the pool prior on (its mixes in the report) and classifications of an older catalog than the
    newest (the later-release check's table): ``gpal report`` of a copy of its folder writes the same report."""
    from gpal.catalog_jobs.report import write_classify_report

    out, _, _, _ = optioned_run
    assert (out / POOL_PRIOR_FILE).is_file() and (out / "tables" / "later_check.csv").is_file()
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    write_classify_report(copy)
    _same_report(out, copy)


def test_the_pool_prior_is_off_by_default_and_when_on_moves_only_the_unassociated_sources(classified, optioned_run,
                                                                                          small_catalog):
    import warnings

    from gpal.catalog_jobs.later_check import check_later, later_check_inputs
    from gpal.catalog_jobs.pool_prior import adjust_to_pool, training_prior
    from gpal.catalogs.classes import source_groups

    plain, _ = classified  # the default run: the pool prior off
    out, report, _, fits = optioned_run  # the same model with --pool-prior
    assert fits == ["logistic"]  # one fit for the held-out check and the later-release check
    trained = load_trained(out)
    classes, merge = list(trained.classes), trained.training["merge"]
    assert "other" in classes
    columns = [f"p_{c}" for c in classes]
    # the held-out check is the run without it: the same model, nothing refitted
    pd.testing.assert_frame_equal(pd.read_csv(out / "tables" / "heldout.csv"), pd.read_csv(plain / "tables" / "heldout.csv"))
    before = read_probability_table(plain / "classifications.csv").frame
    after = read_probability_table(out / "classifications.csv").frame
    groups = source_groups(before["CLASS1"])
    prior = training_prior(trained.training["n_per_class"], classes)
    expected = adjust_to_pool(before[columns].to_numpy(), groups, prior, classes, merge=merge)
    np.testing.assert_allclose(after[columns].to_numpy(), expected.proba, atol=1e-6)  # the table's printed digits
    unassociated, bcu = groups == "unassociated", groups == "bcu"
    assert bcu.any() and unassociated.any()
    # the bcu keep the model's probabilities (the bcu rule applied, nothing more); the unassociated move
    np.testing.assert_array_equal(after.loc[bcu, columns].to_numpy(), before.loc[bcu, columns].to_numpy())
    assert not np.allclose(after.loc[unassociated, columns].to_numpy(), before.loc[unassociated, columns].to_numpy(),
                           atol=1e-3)
    point = after["predicted_class"] != "extended"
    assert (after.loc[point, "predicted_class"] == np.asarray(classes)[expected.proba[point.to_numpy()].argmax(1)]).all()
    record = json.loads((out / POOL_PRIOR_FILE).read_text())
    assert record == expected.record() == json.loads((out / METRICS_FILE).read_text())["pool_prior"]
    assert set(record["groups"]) == {"unassociated"} and record["left_as_given"] == {"bcu": {"n": int(bcu.sum())}}
    moved = record["groups"]["unassociated"]
    # the other populations keep their training share: EM estimates the blazars' and pulsars'
    assert moved["held"] == ["other"] and moved["prior"]["other"] == record["training_prior"]["other"]
    # the identity names the rule, so a folder of an old default (no record) or of every group moved (True) is
    # another run
    assert json.loads((out / "run.json").read_text())["identity"]["pool_prior"] == ["unassociated"]
    assert json.loads((plain / "run.json").read_text())["identity"]["pool_prior"] is False
    assert not (plain / POOL_PRIOR_FILE).exists()
    shift = json.loads((plain / METRICS_FILE).read_text())["population_shift"]  # off: the shift estimated, not applied
    assert sum(shift["estimated_prior"].values()) == pytest.approx(1, abs=1e-3)
    assert shift["estimated_prior"]["other"] == shift["training_prior"]["other"]
    assert json.loads((plain / METRICS_FILE).read_text()).get("pool_prior") is None
    text = report.read_text()
    assert ("**Pool prior applied**" in text and f"unassociated ({moved['n']} sources) bll "
            f"{moved['prior']['bll']:.3f}" in text and f"bcu ({int(bcu.sum())} sources)" in text)
    assert "**Pool prior applied**" not in (plain / "report.md").read_text()
    # the later-release check scores the moved probabilities of gpal, and the baselines as fitted
    sources = pd.read_csv(out / "tables" / "later_check_sources.csv", keep_default_na=False)
    plain_sources = pd.read_csv(plain / "tables" / "later_check_sources.csv", keep_default_na=False)
    got = sources[[f"{c}_gpal" for c in columns]].to_numpy()
    moved_later = adjust_to_pool(plain_sources[[f"{c}_gpal" for c in columns]].to_numpy(),
                                 source_groups(sources["CLASS1"]), prior, classes, merge=merge).proba
    np.testing.assert_allclose(got, moved_later, atol=1e-12)
    np.testing.assert_allclose(sources[[f"{c}_logistic" for c in columns]], plain_sources[[f"{c}_logistic" for c in columns]])
    # gpal check-later on the folder moves them as its run did, and says so
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        again = check_later(later_check_inputs(out, "FL16Y", earlier=small_catalog, baselines=["logistic"]))
    np.testing.assert_allclose(again.sources[[f"{c}_gpal" for c in columns]].to_numpy(), got, atol=1e-12)
    logistic = [f"{c}_logistic" for c in columns]
    np.testing.assert_allclose(again.sources[logistic].to_numpy(), sources[logistic].to_numpy(), rtol=1e-12, atol=0)
    assert again.pool_prior == record["groups"]
    assert f"(pool prior: unassociated bll {moved['prior']['bll']:.2f}" in again.markdown()


@pytest.mark.parametrize("old", [None, True], ids=["old default, off", "old --pool-prior, every group"])
def test_a_folder_of_the_old_pool_prior_rule_is_another_run_not_reused(classified, small_catalog, tmp_path, old):
    from gpal.runs.output_dir import _signed

    out, _ = classified
    copy = tmp_path / "run"
    shutil.copytree(out, copy)
    record = json.loads((copy / "run.json").read_text())
    identity = {k: v for k, v in record["identity"].items() if k != "pool_prior"}
    if old is not None:
        identity["pool_prior"] = old
    (copy / "run.json").write_text(json.dumps({**record, **_signed(identity)}))
    with pytest.raises(OutputInUse, match=r"pool_prior.*--force"):
        _classify(copy, small_catalog)


def test_predict_with_a_classify_folder_writes_the_columns_classify_does(classified, small_catalog):
    """`gpal predict` with the folder flags "none of these" by the score the run saved, as classify did, and scores
    `information` (BALD) as classify did: the same columns, the same values."""
    from gpal.catalog_jobs.prediction import DEFAULT_SELECT

    out, _ = classified
    written = read_probability_table(out / "classifications.csv")
    classified_sources = written.frame
    table = predict_catalog(out, str(small_catalog), DEFAULT_SELECT, progress=False)
    predicted = table.frame
    assert list(predicted.columns) == list(classified_sources.columns)
    assert table.meta["TARGET"] == written.meta["TARGET"] == ""  # about every class, as the run's default
    same = predicted.merge(classified_sources, on="Source_Name", suffixes=("", "_classify"), validate="one_to_one")
    assert len(same) == len(classified_sources)
    assert same["information"].gt(0).any()
    np.testing.assert_allclose(same["information"], same["information_classify"], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(same["ood_score"], same["ood_score_classify"], rtol=1e-12)
    assert (same["ood"] == same["ood_classify"]).all()
    # predict keeps the model's probabilities as classify's default does: the same probabilities, no mix
    trained = load_trained(out)
    classes, merge = list(trained.classes), trained.training["merge"]
    for c in classes:
        np.testing.assert_allclose(same[f"p_{c}"], same[f"p_{c}_classify"], atol=1e-6)  # the table's printed digits
    assert (same["predicted_class"] == same["predicted_class_classify"]).all()
    assert "POOLMIX" not in table.meta and "POOLMIX" not in written.meta
    # with it, the unassociated move to their mix (the other populations held), the bcu keep the model's
    from gpal.catalog_jobs.pool_prior import adjust_to_pool, training_prior
    from gpal.catalogs.classes import source_groups

    moved_table = predict_catalog(out, str(small_catalog), DEFAULT_SELECT, progress=False, information=False,
                                  pool_prior=True)
    assert moved_table.meta["POOLMIX"].startswith("unassociated ")
    moved_frame = moved_table.frame.set_index("Source_Name").loc[same["Source_Name"]]
    bcu = (source_groups(same["CLASS1"]) == "bcu")
    np.testing.assert_allclose(moved_frame["p_pulsar"].to_numpy()[bcu], same.loc[bcu, "p_pulsar_classify"], rtol=1e-12)
    moved = adjust_to_pool(same[[f"p_{c}" for c in classes]].to_numpy(), source_groups(same["CLASS1"]),
                           training_prior(trained.training["n_per_class"], classes), classes, merge=merge).proba
    np.testing.assert_allclose(moved[:, classes.index("pulsar")], moved_frame["p_pulsar"], atol=1e-6)
    assert not np.allclose(moved_frame["p_pulsar"].to_numpy()[~bcu], same.loc[~bcu, "p_pulsar_classify"], atol=1e-3)
    assert (same["Flag_Words"] == same["Flag_Words_classify"]).all()


def test_predict_information_about_a_target_is_what_a_yes_or_no_label_teaches(classified, small_catalog):
    """With a target class the information is about "pulsar or not": at most ln 2 nat, said in the TARGET keyword;
    without it the column is left out, nothing else changes."""
    out, _ = classified
    about_all = predict_catalog(out, str(small_catalog), "unassociated", progress=False)
    about_pulsar = predict_catalog(out, str(small_catalog), "unassociated", progress=False, target="pulsar")
    assert about_pulsar.meta["TARGET"] == "pulsar"
    assert (about_pulsar.frame["information"] <= np.log(2) + 1e-12).all()
    assert not np.allclose(about_pulsar.frame["information"], about_all.frame["information"])
    plain = predict_catalog(out, str(small_catalog), "unassociated", progress=False, information=False)
    assert "information" not in plain.frame and "TARGET" not in plain.meta
    pd.testing.assert_frame_equal(plain.frame, about_all.frame.drop(columns="information"))


def test_sky_maps_say_what_they_leave_out(classified, small_catalog):
    """Drawn from a table holding extended sources (the snr selection has some), a sky map's title counts the point
    sources it draws out of all and names the extended ones it leaves out."""
    from dataclasses import replace

    from gpal.catalog_jobs.report.figures import report_figures
    from gpal.catalog_jobs.report.inputs import FinishedRun, read_finished_parts

    out, _ = classified
    run = FinishedRun(**read_finished_parts(out, folder_layout(out)))
    snr = predict_catalog(out, str(small_catalog), "snr", progress=False)
    extended = int(snr.frame["extended"].sum())
    assert extended > 0
    figures = report_figures(replace(run, table=replace(snr, meta={**snr.meta, "SELECT": "snr"})), held_out={})
    assert (f"Sky map of the predicted classes: {len(snr.frame) - extended} of the {len(snr.frame)} classified snr "
            f"sources ({extended} extended left out)") in figures


@pytest.mark.parametrize("given", ["name", "object", "class"])
def test_the_training_record_names_an_input_noise_object_by_its_registered_name(given):
    """The report reads the record's ``input_noise`` to say whether the error bars were used: ``none`` whichever
    way the strategy was given."""
    from gpal.catalog_jobs.model_folders import _training_record
    from gpal.data.dataset import NoisyDataset
    from gpal.estimators.noisy_gp import NoisyGPClassifier
    from gpal.models import NoInputNoise

    input_noise = {"name": "none", "object": NoInputNoise(), "class": NoInputNoise}[given]
    data = NoisyDataset(X=np.zeros((4, 1)), X_var=np.zeros((4, 1)), y=np.array([0, 1, 0, 1]),
                        class_names=("bll", "fsrq"), feature_names=("a",), ids=np.array(["s1", "s2", "s3", "s4"]))
    record = _training_record(data, {}, NoisyGPClassifier(input_noise=input_noise), "all", 0.0, "model")
    assert record["estimator"]["params"]["input_noise"] == "none"


def test_the_run_records_where_its_time_went(classified):
    from gpal.catalog_jobs.layout import TIMINGS_FILE
    from gpal.runs.timings import format_times

    folder, _ = classified
    record = json.loads((folder / TIMINGS_FILE).read_text())
    steps = {s["step"]: s for s in record["steps"]}
    assert {"start-up", "catalog and features", "fit", "held-out check", "outlier score", "classification",
            "information", "known sources", "held-out figures", "error-blind model and baselines",
            "baselines", "gpal without error bars", "later-release check", "lists and report", "writing"} <= set(steps)
    assert all(s["wall_s"] >= 0 and s["cpu_s"] >= 0 for s in steps.values())
    # the steps in the main thread follow one another within the process's own time
    in_turn = sum(s["wall_s"] for s in steps.values() if not s["beside"] and not s.get("within"))
    assert steps["information"]["within"] == "classification"  # a part of a step, shown apart, counted once
    assert in_turn <= record["process"]["wall_s"] + 0.01
    lines = format_times(record)
    assert len(lines) == len(steps) + 2 and lines[-1].startswith("whole process")


def test_a_model_just_trained_is_predicted_with_as_it_is_not_loaded_again(small_catalog, tmp_path):
    """The job that trained and saved a model predicts with the fitted object, which predicts as the saved one."""
    from gpal.catalog_jobs.model_folders import _loaded, train_catalog_model
    from gpal.estimators import load_estimator

    selection = CatalogSelection(catalog=str(small_catalog), classes="bll,fsrq")
    out = train_catalog_model(selection, main_job_estimator(**{**TINY, "epochs": 1}), tmp_path / "model")
    misses = _loaded.cache_info().misses
    trained = load_trained(out)
    X = np.random.default_rng(0).normal(size=(6, trained.estimator.n_features_in_))
    proba = trained.estimator.predict_proba(X, np.full_like(X, 0.01))
    assert _loaded.cache_info().misses == misses  # nothing loaded from the folder
    saved = load_estimator(trained.model_dir)
    assert saved is not trained.estimator
    np.testing.assert_allclose(proba, saved.predict_proba(X, np.full_like(X, 0.01)), rtol=0, atol=1e-12)

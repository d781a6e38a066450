"""``gpal active`` with the file oracle: query files an observer can act on, and outcomes of any class."""

import json

import numpy as np
import pandas as pd
import pytest
from astropy.table import Table

from gpal.active import initial_pool_test_split
from gpal.catalog_jobs.active import campaign_settings, follow_up_outcomes, run_active, vetted
from gpal.catalog_jobs.follow_up import DEFAULT_MIN_SIGNIFICANCE
from gpal.catalog_jobs.selection import CatalogSelection
from gpal.catalog_jobs.settings import main_job_estimator
from gpal.catalogs.targets import TARGET_COLUMNS

#: Small settings; the default features (the release's 16, not catalog.pool's default six, so a pool read without
#: the selection's features fails).
TINY = ["--epochs", "2", "--num-inducing", "5", "--no-progress", "--retrain-epochs", "1", "--input-noise", "none"]


def _argv(catalog, out, queries):
    return ["active", "--catalog", str(catalog), "--classes", "bll,fsrq,pulsar=psr+msp", "--out", str(out),
            "--oracle", "file", "--select", "unassociated", "--batch-size", "2", "--queries", str(queries), *TINY]


def _label(path, labels):
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    frame["label"] = labels
    frame.to_csv(path, index=False)
    return frame


@pytest.mark.slow
def test_a_campaign_goes_on_after_a_follow_up_finds_another_class(small_catalog, tmp_path, capsys):
    from gpal.cli import main

    out = tmp_path / "obs"
    assert main(_argv(small_catalog, out, 2)) == 3, capsys.readouterr().err  # query 1 waits for the observers
    first = out / "queries" / "query_0001.csv"
    frame = pd.read_csv(first, keep_default_na=False, na_values=[""])
    assert set(TARGET_COLUMNS) <= set(frame.columns) and frame["RA"].notna().all()  # a target list, with units of
    assert list(frame.columns)[-1] == "label"                                         # TARGET_COLUMNS
    # asked only about what gpal classify's follow-up list ranks: bright in-population point sources
    assert {"ood", "ood_score"} <= set(frame.columns) and not frame["ood"].any() and not frame["extended"].any()
    assert (frame["Signif_Avg"] >= DEFAULT_MIN_SIGNIFICANCE).all() and frame["RA"].dtype == np.float64
    twin = Table.read(first.with_suffix(".ecsv"), format="ascii.ecsv")  # the units a plain CSV cannot hold
    assert twin.colnames == list(frame.columns)[:-1] and twin.meta["LABELS"] == first.name  # labels go in the CSV
    assert list(twin["Source_Name"]) == frame["Source_Name"].tolist() and np.array_equal(twin["RA"], frame["RA"])
    assert all(twin[name].unit == unit for name, (_, unit, _) in TARGET_COLUMNS.items() if unit)
    assert twin["RA"].unit == "deg" and twin["Flux1000"].unit == "ph cm-2 s-1" and twin["Signif_Avg"].description
    _label(first, ["snr", "nothing"])  # a supernova remnant, and a source where nothing was found
    assert main(_argv(small_catalog, out, 2)) == 3, capsys.readouterr().err  # goes on: query 2 waits
    state = json.loads((out / "checkpoint" / "state.json").read_text())
    assert state["queries"][0]["labels"] == ["snr", "nothing"] and state["pending"]["query"] == 2
    assert not set(state["pending"]["ids"]) & set(state["queries"][0]["ids"])  # they left the pool
    assert [m["n_labelled"] for m in state["metrics"]] == [state["metrics"][0]["n_labelled"]] * 2  # in no training set
    second = pd.read_csv(out / "queries" / "query_0002.csv", dtype=str, keep_default_na=False)
    _label(out / "queries" / "query_0002.csv", ["psr", "bll"])  # a CLASS1 code merged into a class is that class
    assert main(_argv(small_catalog, out, 2)) == 0, capsys.readouterr().err
    state = json.loads((out / "checkpoint" / "state.json").read_text())
    assert state["metrics"][-1]["n_labelled"] == state["metrics"][0]["n_labelled"] + 2
    assert second["Source_Name"].tolist() == state["queries"][1]["ids"]
    text = (out / "report.md").read_text()
    assert "3 observed sources turned out to be outside the classes: nothing 1, psr 1 (trained on as pulsar), " \
           "snr 1; they left the pool" in text
    # the pool held none the "none of these" flag had flagged: the remnant is a miss of the flag, and said so
    assert "so the one of another population is a source the flag missed (1 of 4 answered" in text


def test_a_label_file_with_a_bad_spelling_or_a_double_label_is_refused(small_catalog, tmp_path, capsys):
    from gpal.cli import main

    out = tmp_path / "obs"
    assert main(_argv(small_catalog, out, 1)) == 3
    path = out / "queries" / "query_0001.csv"
    frame = _label(path, ["SNR", "bll"])
    assert main(_argv(small_catalog, out, 1)) == 2
    err = capsys.readouterr().err.splitlines()[-1]
    assert err.startswith("gpal: error: ") and f"{frame['Source_Name'][0]}='SNR' (did you mean 'snr'? case matters)" in err
    doubled = pd.concat([frame.assign(label=["snr", "bll"]), frame.iloc[[0]].assign(label="psr")])
    doubled.to_csv(path, index=False)
    assert main(_argv(small_catalog, out, 1)) == 2
    err = capsys.readouterr().err.splitlines()[-1]
    assert f"labelled twice with different classes: {frame['Source_Name'][0]}: ['psr', 'snr']" in err
    state = json.loads((out / "checkpoint" / "state.json").read_text())
    assert state["queries"] == [] and state["pending"]["query"] == 1  # nothing recorded from a refused file


def test_the_file_oracle_asks_only_about_what_the_follow_up_list_ranks(small_catalog):
    from gpal.catalog_jobs.active import _follow_up_pool
    from gpal.catalogs.targets import target_columns

    selection = CatalogSelection(catalog=str(small_catalog), classes="bll,fsrq,pulsar=psr+msp")
    catalog, data = selection.load()
    train, test = data.split(test_size=0.2, seed=0)
    pool = catalog.pool(select=["unassociated"], features=selection.features)
    settings = {name: setting.default for name, setting in campaign_settings().items()}
    kept, described = _follow_up_pool(catalog, pool, train, test, settings, 0, selection.class_groups())
    targets = target_columns(catalog, pool.ids.tolist())
    faint = set(targets.loc[targets["Signif_Avg"] < DEFAULT_MIN_SIGNIFICANCE, "Source_Name"])
    assert faint and not faint & set(kept.ids)  # below the follow-up list's cut: never asked about
    assert described.index.tolist() == kept.ids.tolist() and not described["ood"].any()
    assert np.array_equal(kept.X, pool.X[np.isin(pool.ids, kept.ids)])  # the pool's own rows, features unchanged


def test_a_simulated_campaign_asks_only_about_bright_point_sources(small_catalog, tmp_path, monkeypatch):
    """The follow-up list's significance, Flags and extended rule cuts the simulated pool too; the ood flag does not (a
    pool of the trained classes has no population for it, and a campaign starting from 10 sources could not fit it)."""
    import gpal.catalog_jobs.active as active
    from gpal.catalogs.targets import target_columns

    class Built(Exception):
        pass

    seen = {}

    def loop(estimator, labelled, pool, oracle, **kwargs):
        seen.update(pool=pool, oracle=oracle)
        raise Built

    monkeypatch.setattr(active, "ActiveLearningLoop", loop)
    selection = CatalogSelection(catalog=str(small_catalog), classes="bll,fsrq,pulsar=psr+msp")
    with pytest.raises(Built):
        run_active(selection, main_job_estimator(input_prior="broad"), tmp_path / "al", initial=10, test=30,
                   follow_up_significance=6.0, follow_up_flags=list(range(1, 15)), progress=False)
    catalog, data = selection.load()
    _, drawn, _ = initial_pool_test_split(data, 10, data.n_samples - 40, 30, seed=0)
    targets = target_columns(catalog, drawn.ids.tolist())
    bright = targets[(targets["Signif_Avg"] >= 6.0) & ~targets["extended"] & (targets["Flags"] == 0)]
    assert 0 < len(bright) < len(targets[(targets["Signif_Avg"] >= 6.0)])  # both cuts leave some out
    assert seen["pool"].ids.tolist() == bright["Source_Name"].tolist()  # and only those, in the drawn order
    assert np.array_equal(seen["pool"].X, drawn.X[bright.index.to_numpy()])
    assert seen["oracle"].truth is seen["pool"]  # labels come only from that pool
    assert not (tmp_path / "al").exists()


def test_a_simulated_campaign_too_small_for_the_main_jobs_prior_adapts_and_records_it(small_catalog, tmp_path):
    """30 labelled rows fit a 3-component population prior, not the main job's 8 (was refused, issue 63)."""
    from gpal.catalog_jobs.settings import FewRowsWarning

    selection = CatalogSelection(catalog=str(small_catalog), classes="bll,fsrq")
    with pytest.warns(FewRowsWarning, match=r"30 training rows are too few for a 8-component population prior"):
        run_active(selection, main_job_estimator(epochs=1, num_inducing=3), tmp_path / "al", initial=30, test=30,
                   queries=0, progress=False)
    identity = json.loads((tmp_path / "al" / "run.json").read_text())["identity"]
    assert identity["adapted_to_few_rows"] == {"prior_components": 3}


def test_outcomes_map_merged_codes_to_their_class_and_the_rest_to_other_or_nothing():
    plain = follow_up_outcomes(("bll", "fsrq", "pulsar"), {"pulsar": ("psr", "msp")})
    assert plain["psr"] == plain["msp"] == "pulsar" and plain["snr"] is None and plain["nothing"] is None
    assert "bll" not in plain and plain["other"] is None
    with_other = follow_up_outcomes(("bll", "fsrq", "other"), {"other": ("spp",)})
    assert with_other["snr"] == with_other["spp"] == "other" and with_other["nothing"] is None
    assert np.all([v in (None, "bll", "fsrq", "other") for v in with_other.values()])


def test_a_pulsar_campaign_is_vetted_as_the_main_jobs_lists_are():
    """Two FL16Y bcu (blazars with a counterpart) and FL16Y J1828.8+3231, which FL16Y leaves unassociated but
    4FGL-DR4 associates with the blazar B2 1826+32D, are no pulsar candidates; an unassociated source nothing names
    stays, with its search history and caveats; a telescope's sky cuts as the main job's lists do."""
    from gpal.catalogs import load_catalog
    from gpal.catalogs.schemes import resolve_classes
    from gpal.catalogs.targets import target_columns

    catalog = load_catalog("FL16Y")
    classes, merge = resolve_classes("open_sky")
    names = ["FL16Y J0001.2+4741", "FL16Y J0002.4-5156", "FL16Y J1828.8+3231", "FL16Y J0003.6+3058"]
    class1 = catalog.class_codes[[list(catalog.names).index(name) for name in names]]
    assert class1.tolist() == ["bcu", "bcu", "", ""]
    sky = {"candidate_declination": (-90.0, 90.0), "candidate_visible_from": None}
    targets = target_columns(catalog, names)
    keep = vetted(catalog, targets, class1, (classes, merge), "pulsar", sky)
    assert keep.tolist() == [False, False, False, True]
    assert "B2 1826+32D" in targets.loc[2, "known_reason"]
    assert targets.loc[3, "first_unassociated"] == "3FGL" and "RA_hms" in targets and "caveats" in targets
    # the bcu stay where the campaign targets no class (their labels teach the blazar classes)
    assert vetted(catalog, target_columns(catalog, names), class1, (classes, merge), None, sky).tolist() == [
        True, True, False, True]
    southern = {**sky, "candidate_declination": (-90.0, 0.0)}
    assert vetted(catalog, target_columns(catalog, names), class1, (classes, merge), None, southern).tolist() == [
        False, True, False, False]

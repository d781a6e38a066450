"""The later-release check: links between releases, their refusals, and the measures against independent computations."""

import re
import warnings

import numpy as np
import pandas as pd
import pytest
from astropy.io import fits
from astropy.table import Table

from gpal.catalog_jobs.model_folders import load_trained
from gpal.catalog_jobs.later_check import (
    MODEL, LaterCheckInputs, check_later, later_check_inputs, later_release_of, link_releases, read_later_table,
    write_later_check,
)
from gpal.catalog_jobs.model_folders import train_catalog_model
from gpal.catalog_jobs.selection import CatalogSelection
from gpal.catalog_jobs.settings import main_job_estimator
from gpal.catalogs import RELEASES, load_catalog
from gpal.catalogs.releases import DEFAULT_RELEASE
from gpal.catalogs.links import AmbiguousLinkWarning, link_later
from gpal.catalogs.releases import link_path
from gpal.catalogs.schemes import AGN_CODES, PULSAR_CODES

TINY = dict(epochs=3, num_inducing=5, batch_size=64, input_noise="first_order")


@pytest.fixture(scope="module")
def shipped():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {name: load_catalog(name) for name in ("3FGL", "4FGL", "4FGL-DR4", "FL16Y")}


def _write_rows(catalog, rows, path, drop=None, edit=None):
    """Rows of a shipped catalog as a FITS file with its header keywords; a column dropped or edited."""
    table = Table(catalog.table[rows])
    if drop:
        table.remove_column(drop)
    if edit:
        edit(table)
    hdu = fits.table_to_hdu(table)
    hdu.name = "LAT_Point_Source_Catalog"
    hdu.header["CDS-NAME"] = catalog.cds_name
    hdu.header["VERSION"] = catalog.version
    fits.HDUList([fits.PrimaryHDU(), hdu]).writeto(path)
    return path


def _later_codes(earlier, later):
    """The later CLASS1 of each earlier source by a pandas merge on FL16Y's ASSOC_FGL: the independent link."""
    frame = pd.DataFrame({"link": np.char.strip(np.asarray(later.table["ASSOC_FGL"]).astype(str)),
                          "later": later.class_codes})
    frame = frame[frame.link != ""]
    frame = frame[~frame.link.duplicated(keep=False)]
    merged = pd.DataFrame({"link": earlier.names}).merge(frame, on="link", how="left")
    return merged["later"].fillna("missing").to_numpy()


def test_dr4_to_fl16y_links_the_sources_counted_by_hand(shipped):
    dr4, fl16y = shipped["4FGL-DR4"], shipped["FL16Y"]
    with pytest.warns(AmbiguousLinkWarning, match=r"gll_psc_v41\.fit\.gz \(FL16Y\): 11 4FGL-DR4 source\(s\) are named "
                                                  r"by more than one row of column 'ASSOC_FGL'"):
        index = link_later(dr4, fl16y)
    codes = np.where(index >= 0, fl16y.class_codes[np.maximum(index, 0)], "missing")
    np.testing.assert_array_equal(codes, _later_codes(dr4, fl16y))
    pool = np.isin(dr4.class_codes, ["", "bcu"])
    counts = {k: int(np.sum(pool & np.isin(codes, v))) for k, v in
              {"bll": ["bll"], "fsrq": ["fsrq"], "pulsar": ["psr", "msp"]}.items()}
    assert counts == {"bll": 302, "fsrq": 24, "pulsar": 24}  # issue 34's hand count: 350 sources
    # given a list, the ambiguity is a line there and no warning (what a second thread's caller needs)
    notes: list[str] = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_array_equal(link_later(dr4, fl16y, notes=notes), index)
    assert len(notes) == 1 and "11 4FGL-DR4 source(s) are named by more than one row" in notes[0]
    # the shipped releases read without warnings, so the known-sources index can load them in a second thread
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for release in RELEASES:
            load_catalog(release)


def test_3fgl_links_to_fl16y_through_dr4(shipped):
    assert [r.name for r in link_path(RELEASES["3FGL"], RELEASES["FL16Y"])] == ["4FGL-DR4"]
    assert link_path(RELEASES["4FGL"], RELEASES["FL16Y"]) == ()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AmbiguousLinkWarning)
        index = link_later(shipped["3FGL"], shipped["FL16Y"], [shipped["4FGL-DR4"]])
        step1, step2 = link_later(shipped["3FGL"], shipped["4FGL-DR4"]), link_later(shipped["4FGL-DR4"], shipped["FL16Y"])
    linked = index >= 0
    assert linked.sum() > 2000
    np.testing.assert_array_equal(index[linked], step2[step1[linked]])
    assert (index[~linked] == -1).all() and ((step1[~linked] < 0) | (step2[np.maximum(step1[~linked], 0)] < 0)).all()


def test_the_ambiguous_link_warning_counts_only_the_earlier_releases_sources(shipped):
    """DR4's ASSOC_FGL names ten values twice, three of them 2FGL / 1FGL sources, which unlink no 3FGL source."""
    with pytest.warns(AmbiguousLinkWarning,
                      match=r"\(4FGL-DR4\): 7 3FGL source\(s\) are named by more than one row") as said:
        link_later(shipped["3FGL"], shipped["4FGL-DR4"])
    assert "2FGL" not in str(said[0].message) and "1FGL" not in str(said[0].message)


def test_later_releases_without_a_link_are_refused_by_file_and_column(shipped, tmp_path):
    dr4, fl16y = shipped["4FGL-DR4"], shipped["FL16Y"]
    no_column = load_catalog(_write_rows(fl16y, slice(0, 300), tmp_path / "fl16y_cut.fits", drop="ASSOC_FGL"))
    with pytest.raises(ValueError, match=r"fl16y_cut\.fits \(FL16Y\) has no column 'ASSOC_FGL'; it should name the "
                                         r"4FGL-DR4 counterpart of each source"):
        link_later(dr4, no_column)

    def rename(table):
        table["ASSOC_FGL"] = [f"4FGL J9999.{i % 10}+0000" if str(v).strip() else "" for i, v in
                              enumerate(table["ASSOC_FGL"])]
    no_overlap = load_catalog(_write_rows(fl16y, slice(0, 300), tmp_path / "fl16y_renamed.fits", edit=rename))
    with pytest.raises(ValueError, match=r"no source of gll_psc_v35\.fit\.gz \(4FGL-DR4\) is named in column "
                                         r"'ASSOC_FGL' of fl16y_renamed\.fits"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", AmbiguousLinkWarning)
            link_later(dr4, no_overlap)
    with pytest.raises(ValueError, match="3FGL does not link to 4FGL-DR4"):
        link_later(dr4, shipped["3FGL"])


def test_two_rows_naming_one_source_leave_it_unlinked(shipped, tmp_path):
    dr4, fl16y = shipped["4FGL-DR4"], shipped["FL16Y"]
    rows = np.nonzero(np.char.strip(np.asarray(fl16y.table["ASSOC_FGL"]).astype(str)) != "")[0][:50]
    target = str(fl16y.table["ASSOC_FGL"][rows[1]]).strip()

    def duplicate(table):
        table["ASSOC_FGL"][0] = target
    later = load_catalog(_write_rows(fl16y, rows, tmp_path / "dup.fits", edit=duplicate))
    with pytest.warns(AmbiguousLinkWarning, match=re.escape(f"{target} <- {fl16y.names[rows[0]]}, {fl16y.names[rows[1]]}")):
        index = link_later(dr4, later)
    assert index[list(dr4.names).index(target)] == -1
    others = {str(fl16y.table["ASSOC_FGL"][r]).strip() for r in rows[2:]}
    assert (index >= 0).sum() == len(others & set(dr4.names))  # the other 48 rows still link, where DR4 has the name
    assert len(others & set(dr4.names)) >= 45


def test_later_release_of_names_the_newest_shipped():
    assert [later_release_of(r) for r in RELEASES] == ["FL16Y", "FL16Y", "FL16Y", "FL16Y", None]
    assert later_release_of(DEFAULT_RELEASE) is None  # the main job's default is the newest: no later-release section


@pytest.fixture(scope="module")
def trained(small_catalog, tmp_path_factory):
    out = tmp_path_factory.mktemp("later") / "model"
    return train_catalog_model(CatalogSelection(catalog=str(small_catalog)), main_job_estimator(**TINY), out)


def test_check_later_measures_match_independent_computations(trained, small_catalog, shipped, tmp_path):
    from sklearn.metrics import roc_auc_score

    with pytest.raises(ValueError, match=r"was trained on small_dr4\.fits \(4FGL-DR4\), not a shipped release file; "
                                         r"give earlier="):
        later_check_inputs(trained, "FL16Y")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AmbiguousLinkWarning)
        check = check_later(later_check_inputs(trained, "FL16Y", earlier=small_catalog, baselines=["logistic"]),
                            top_k=(5,))
    sources, measures = check.sources, check.measures.set_index(["measure", "model"])
    small = load_catalog(small_catalog)
    expected = dict(zip(small.names, _later_codes(small, shipped["FL16Y"])))
    assert sources["later_class"].tolist() == [expected[n] for n in sources["Source_Name"]]
    assert set(sources["CLASS1"].str.lower()) <= {"", "bcu"}
    model = load_trained(trained)
    classes, merge = list(model.classes), model.training["merge"]
    assert classes == ["bll", "fsrq", "other", "pulsar"]  # the open sky's, in the model's order
    codes = {code: k for k, c in enumerate(classes) for code in merge.get(c, (c,))}
    truth = sources["later_class"].map(codes)
    scored = truth.notna().to_numpy()
    pulsar = classes.index("pulsar")
    kind = f"{len(classes)}-class nll"
    for model_name in (MODEL, "logistic"):
        p = sources[[f"p_{c}_{model_name}" for c in classes]].to_numpy()
        np.testing.assert_allclose(p.sum(axis=1), 1.0, atol=1e-6)
        y = truth[scored].astype(int).to_numpy()
        nll = -np.mean(np.log(np.clip(p[scored][np.arange(y.size), y], 1e-12, 1)))
        assert measures.loc[(kind, model_name), "value"] == pytest.approx(nll, rel=1e-6)
        assert measures.loc[(kind, model_name), "n"] == scored.sum()
        group = sources["later_class"].map({**dict.fromkeys(AGN_CODES, 0), **dict.fromkeys(PULSAR_CODES, 1)})
        rows = (sources["CLASS1"] == "").to_numpy() & group.notna().to_numpy()
        if 0 < group[rows].sum() < rows.sum():
            assert measures.loc[("AGN-vs-pulsar AUC", model_name), "value"] == pytest.approx(
                roc_auc_score(group[rows].astype(int), p[rows, pulsar]))
        top = np.argsort(-p[:, pulsar], kind="stable")[:5]
        assert measures.loc[("top-5 pulsar yield", model_name), "value"] == pytest.approx(
            np.isin(sources["later_class"].to_numpy()[top], ["psr", "msp"]).mean())
    assert measures.loc[(kind, MODEL), "diff"] == 0
    low, high = measures.loc[(kind, "logistic"), ["diff_low", "diff_high"]]
    assert low <= measures.loc[(kind, "logistic"), "diff"] <= high
    path = write_later_check(check, tmp_path)
    back = read_later_table(path)
    assert path.is_file() and back["later"].eq("FL16Y").all() and len(back) == len(check.measures)


def test_a_compared_model_of_other_classes_is_refused_before_fitting(trained, two_class_model, small_catalog,
                                                                   monkeypatch):
    import gpal.catalog_jobs.later_check as later_check

    monkeypatch.setattr(later_check, "fit_baselines", lambda *a, **k: pytest.fail("fitted before refusing"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AmbiguousLinkWarning)
        with pytest.raises(ValueError, match=r"compared model 'two classes' \(.*\) has classes \['bll', 'fsrq'\] and "
                                             r"\d+ features; the model has \['bll', 'fsrq', 'other', 'pulsar'\]"):
            later_check_inputs(trained, "FL16Y", earlier=small_catalog, compared={"two classes": two_class_model / "model"})


def test_the_auc_of_many_bootstrap_draws_at_once_is_scikit_learns():
    """Ranks (ties half) for every draw in one call, against roc_auc_score draw by draw; NaN without both classes."""
    from sklearn.metrics import roc_auc_score

    from gpal.evaluation.metrics import roc_auc

    rng = np.random.default_rng(3)
    truth, score = rng.integers(0, 2, 40), np.round(rng.random(40), 1)  # one decimal: many ties
    draws = rng.integers(0, 40, (300, 40))
    draws[0] = np.flatnonzero(truth)[0]  # a draw of one class
    got = roc_auc(truth[draws], score[draws])
    assert got.shape == (300,) and np.isnan(got[0]) and np.isnan(roc_auc(np.ones(3), np.arange(3.0)))
    np.testing.assert_allclose(got[1:], [roc_auc_score(truth[d], score[d]) for d in draws[1:]], rtol=0, atol=1e-14)
    assert roc_auc(truth, score) == pytest.approx(roc_auc_score(truth, score), abs=1e-14)


def test_what_the_main_job_already_built_gives_the_same_check(trained, small_catalog):
    """The main job builds the inputs from its pool, its probabilities (as its table has them: the bcu rule applied),
    its training rows and the baselines it fitted once instead of building them again."""
    from gpal.catalog_jobs.model_folders import load_trained
    from gpal.catalog_jobs.prediction import (
        DEFAULT_SELECT, known_class_probabilities, predict_proba_chunked, selection_pool,
    )
    from gpal.catalogs.known_classes import association_weight
    from gpal.evaluation.baselines import fit_baselines_on

    model = load_trained(trained)
    small = load_catalog(small_catalog)
    pool = selection_pool(small, DEFAULT_SELECT, model.training["features"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, train = CatalogSelection(catalog=str(small_catalog)).load()
        proba = known_class_probabilities(model, pool.aux["CLASS1"],
                                          predict_proba_chunked(model.model_dir, pool.X, pool.X_var, progress=False),
                                          association=association_weight(small, pool.ids.tolist()))[0]
        own = check_later(later_check_inputs(model, "FL16Y", earlier=small_catalog, baselines=["logistic"]), top_k=(5,))
        # the baselines fitted once for the job's held-out rows and these sources: the same check
        fitted = {name: p[1] for name, p in fit_baselines_on(train.X, train.y, [train.X[:3], pool.X], ["logistic"]).items()}
        releases = link_releases(model, "FL16Y", earlier=small_catalog)
        once = check_later(LaterCheckInputs(model, releases, pool, train, proba, fitted), top_k=(5,))
        pd.testing.assert_frame_equal(own.measures, once.measures)
        pd.testing.assert_frame_equal(own.sources, once.sources)
        fewer = train.split(test_size=0.5, seed=0, stratify=True)[0]
        with pytest.raises(ValueError, match=r"the training rows given \(.*\) differ from those the model records"):
            LaterCheckInputs(model, releases, pool, fewer, proba, fitted)
        with pytest.raises(ValueError, match=r"the probabilities of logistic have shape \(3, 4\); the sources to score "
                                             r"and the model's classes need \(\d+, 4\)"):
            LaterCheckInputs(model, releases, pool, train, proba, {"logistic": fitted["logistic"][:3]})
        with pytest.raises(ValueError, match=r"the later release 4FGL-DR4 \(small_dr4.fits\) is the model's own release"):
            link_releases(model, small_catalog, earlier=small_catalog)

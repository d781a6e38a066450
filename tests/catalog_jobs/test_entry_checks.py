"""Every way a trained model meets data refuses data unlike its training's, naming what differs (issue 73):
``gpal predict`` and ``gpal check-later`` on a catalog whose feature columns are missing, text or of another
shape, `check_features` on sources of other features, and a workflow whose catalog cannot give its features."""

from __future__ import annotations

import shutil
import warnings

import numpy as np
import pytest
from astropy.io import fits
from astropy.table import Table

from gpal.catalog_jobs.model_folders import check_features, load_trained
from gpal.catalog_jobs.prediction import selection_pool
from gpal.catalogs.catalog import HDU_NAME, load_catalog
from gpal.cli import main


def _variant(small_catalog, path, edit):
    """The small catalog with ``edit`` applied to its table, written to ``path`` with the keywords that name its
    release."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = Table.read(small_catalog, hdu=HDU_NAME)
        header = fits.getheader(small_catalog, HDU_NAME)
    hdu = fits.table_to_hdu(edit(table))
    hdu.name = HDU_NAME
    hdu.header.update({k: header[k] for k in ("CDS-NAME", "VERSION", "DataRelease") if k in header})
    fits.HDUList([fits.PrimaryHDU(), hdu]).writeto(path)
    return path


def _as_text(table):
    table.replace_column("LP_beta", [f"{v:.3f}" for v in np.asarray(table["LP_beta"])])
    return table


def _two_values(table):
    table.replace_column("LP_beta", np.stack([np.asarray(table["LP_beta"])] * 2, axis=1))
    return table


def _five_bands(table):
    for name in ("Flux_Band", "Unc_Flux_Band"):
        table.replace_column(name, np.asarray(table[name])[:, :5])
    return table


CASES = {
    "text": (_as_text, ["column 'LP_beta'", "holds text values", "was trained on it as numbers"]),
    "two values": (_two_values, ["column 'LP_beta'", "holds 2 values per source", "was trained on one (feature "
                                                                                 "'LP_beta')"]),
    "five bands": (_five_bands, ["column 'Flux_Band'", "holds 5 bands per source", "reads band(s) [5]",
                                 "(feature 'HR45')"]),
}


def _refused(capsys, argv, *phrases):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.strip().splitlines()[-1].startswith("gpal: error: "), err
    for phrase in phrases:
        assert phrase in err, (phrase, err)


@pytest.mark.parametrize("case", list(CASES))
def test_predict_names_the_column_unlike_training(case, main_job_run, small_catalog, tmp_path, capsys):
    edit, phrases = CASES[case]
    catalog = _variant(small_catalog, tmp_path / "edited.fits", edit)
    out = tmp_path / "t.csv"
    _refused(capsys, ["predict", str(main_job_run), "--catalog", str(catalog), "--out", str(out), "--no-progress"],
             *phrases, str(main_job_run))
    assert not out.exists()


def test_check_later_refuses_an_earlier_catalog_without_a_feature_column(main_job_run, small_catalog, tmp_path,
                                                                         capsys):
    folder = tmp_path / "run"
    shutil.copytree(main_job_run, folder)
    lacking = _variant(small_catalog, tmp_path / "lacking.fits", lambda t: t[[c for c in t.colnames if c != "LP_beta"]])
    _refused(capsys, ["check-later", "--trained", str(folder), "--earlier", str(lacking), "--later", "FL16Y"],
             "lacking.fits (4FGL-DR4) lacks column(s) ['LP_beta']", f"the model in {folder}")
    assert not (folder / "tables" / "later_check.md").exists()


def test_check_features_names_what_is_missing_extra_or_reordered(main_job_run, small_catalog):
    trained = load_trained(main_job_run)
    features, names = trained.training["features"], trained.training["feature_names"]
    catalog = load_catalog(small_catalog)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pool = selection_pool(catalog, ("unassociated",), features)
        fewer = selection_pool(catalog, ("unassociated",), features[:-1])
        other = selection_pool(catalog, ("unassociated",), [*features[:-1], "LP_EPeak"])
        turned = selection_pool(catalog, ("unassociated",), [features[-1], *features[:-1]])
    check_features(trained, pool)  # the features it was trained on: no error
    expected = f"trained on {len(names)} features ({', '.join(names)})"
    with pytest.raises(ValueError, match=rf"{len(names) - 1}: missing {names[-1]};") as caught:
        check_features(trained, fewer)
    assert expected in str(caught.value)
    with pytest.raises(ValueError, match=rf"missing {names[-1]}; not trained on LP_EPeak;"):
        check_features(trained, other)
    with pytest.raises(ValueError, match="the same features in another order"):
        check_features(trained, turned)


def test_a_workflow_whose_catalog_cannot_give_its_features_is_refused_before_fitting(small_catalog, tmp_path,
                                                                                     monkeypatch):
    import gpal.catalog_jobs.model_folders as model_folders
    from gpal.workflows import run_workflow

    def no_fit(*args, **kwargs):
        raise AssertionError("a model was fitted")

    monkeypatch.setattr(model_folders, "fit_and_save", no_fit)
    catalog = _variant(small_catalog, tmp_path / "five.fits", _five_bands)
    path = tmp_path / "job.yaml"
    path.write_text(f"workflow: classify\nparams:\n  catalog: {catalog}\n  epochs: 1\n  num_inducing: 3\n")
    with pytest.raises(ValueError, match=r"feature 'HR45' asks for band 5 but column 'Flux_Band' has 5 bands"):
        run_workflow(path, out=tmp_path / "job", progress=False)
    assert not (tmp_path / "job").exists()

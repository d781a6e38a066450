"""Catalog loading, release detection, selections and their error handling, on the real 4FGL files."""

import dataclasses
import hashlib
import shutil
import warnings

import numpy as np
import pytest
from astropy.io import fits
from astropy.table import Table

from gpal.catalogs import (CATALOG_DIR, FEATURE_PRESETS, RELEASES, DroppedRowsWarning, Feature, RepairedRowsWarning,
                           load_catalog)

# Published checksums of the shipped files (catalogs/README.md).
SHA256 = {
    "gll_psc_v20.fit.gz": "2142ae898fb30d17736f21648975ea8057a90a0b3ee452c46805f0b4ec52e913",
    "gll_psc_v35.fit.gz": "eae68e5c25eb31b835fe19969f742e52535049d320699459646f7e785f8f8180",
}
PAPER_CLASSES = ["bll", "fsrq", "psr"]


@pytest.fixture(scope="module")
def fgl():
    return load_catalog("4FGL")


@pytest.fixture(scope="module")
def dr4():
    return load_catalog("4FGL-DR4")


def test_shipped_files_are_found_without_configuration_and_intact():
    for name, digest in SHA256.items():
        path = CATALOG_DIR / name
        assert path.is_file()
        assert hashlib.sha256(path.read_bytes()).hexdigest() == digest


def test_release_detection(fgl, dr4):
    assert (fgl.release, fgl.version, fgl.data_release, fgl.n_rows) == ("4FGL", "v20", 1, 5066)
    assert (dr4.release, dr4.version, dr4.data_release, dr4.n_rows) == ("4FGL-DR4", "v35", 4, 7195)
    assert load_catalog().release == list(RELEASES)[-1] == "FL16Y"  # the default: the newest shipped release
    assert load_catalog("4fgl-dr4").version == "v35"  # names are case-insensitive


def test_release_detected_from_file_contents_not_name(tmp_path):
    copy = tmp_path / "renamed.fits.gz"
    shutil.copy(CATALOG_DIR / "gll_psc_v35.fit.gz", copy)
    catalog = load_catalog(str(copy))
    assert (catalog.release, catalog.version) == ("4FGL-DR4", "v35")


def test_published_selection_4fgl(fgl):
    ds = fgl.dataset(classes=PAPER_CLASSES, min_significance=30)
    assert len(ds) == 454
    assert ds.class_counts() == {"bll": 184, "fsrq": 168, "psr": 102}
    assert ds.X.dtype == np.float64 and ds.X.shape == (454, 6)
    assert len(set(ds.ids)) == 454
    assert ds.meta["release"] == "4FGL" and ds.meta["cuts"]["min_significance"] == 30
    assert ds.meta["dropped"] == {}


def test_published_selection_dr4(dr4):
    ds = dr4.dataset(classes=PAPER_CLASSES, min_significance=30)
    assert len(ds) == 584
    assert ds.class_counts() == {"bll": 279, "fsrq": 231, "psr": 74}


def test_merge_groups_codes_and_tolerates_codes_of_later_releases(fgl, dr4):
    merged = dr4.dataset(classes=["bll", "fsrq", "pulsar"], merge={"pulsar": ["psr", "msp"]}, min_significance=30)
    assert merged.class_counts()["pulsar"] == 74 + 58
    # msp only exists from DR3 on: the same configuration still runs on 4FGL.
    assert fgl.dataset(classes=["pulsar"], merge={"pulsar": ["PSR", "msp"]}, min_significance=30).class_counts() == {
        "pulsar": 102
    }


def test_class_codes_match_case_insensitively(fgl):
    ds = fgl.dataset(classes=["BLL", "Fsrq", "psr"], min_significance=30)
    assert ds.class_counts() == {"BLL": 184, "Fsrq": 168, "psr": 102}
    # Identified (upper-case) and associated (lower-case) psr are both kept.
    raw = set(ds.aux["CLASS1"][ds.y == 2])
    assert raw == {"PSR", "psr"}


def test_features_reproduce_the_raw_columns(fgl):
    ds = fgl.dataset(classes=PAPER_CLASSES, min_significance=30)
    table = fgl.table
    names = np.char.strip(np.asarray(table["Source_Name"]).astype(str))
    row = int(np.nonzero(names == ds.ids[7])[0][0])
    x = ds.X[7]
    assert x[0] == table["Flux1000"][row]
    assert x[1] == pytest.approx(np.log(table["Signif_Avg"][row]))
    assert x[3] == pytest.approx(np.log(table["Pivot_Energy"][row]))
    assert ds.X_var[7, 0] == pytest.approx(float(table["Unc_Flux1000"][row]) ** 2)
    assert ds.X_var[7, 4] == pytest.approx(float(table["Unc_LP_Index"][row]) ** 2)
    # Features without an error bar have exactly zero variance.
    assert np.all(ds.X_var[:, 1:4] == 0.0)
    assert np.all(ds.X_var[:, [0, 4, 5]] > 0)


def test_floor_handles_zero_curvature_significance(dr4):
    ds = dr4.dataset(classes=PAPER_CLASSES, min_significance=30)
    assert np.all(np.isfinite(ds.X))
    assert ds.X[:, 2].min() == pytest.approx(np.log(0.1))  # the one LP_SigCurv == 0 row sits at the floor


def test_crab_rows_follow_the_nan_policy(fgl):
    with pytest.warns(DroppedRowsWarning, match=r"4FGL J0534\.5\+2201i"):
        ds = fgl.dataset(classes=["pwn"], features="villacampa2021")  # the paper's rule: a missing error drops too
    assert "4FGL J0534.5+2201i" not in ds.ids and "4FGL J0534.5+2201s" in ds.ids
    # each warning names its set: the labelled sources a job trains and tests on, or the pool it classifies
    with pytest.warns(DroppedRowsWarning, match=r"1 source\(s\) of the pool \(pwn: the sources to classify\) have NaN"):
        fgl.pool(select=["pwn"])
    with pytest.warns(DroppedRowsWarning, match=r"of the labelled selection \(pwn: the training and held-out sources\)"):
        fgl.dataset(classes=["pwn"])
    # The reported columns are exactly the used columns that are non-finite in that row.
    row = fgl.table[list(np.char.strip(np.asarray(fgl.table["Source_Name"]).astype(str))).index("4FGL J0534.5+2201i")]
    used = ["Flux1000", "Unc_Flux1000", "Signif_Avg", "LP_SigCurv", "Pivot_Energy", "LP_Index", "Unc_LP_Index", "LP_beta", "Unc_LP_beta"]
    expected = {c for c in used if not np.isfinite(np.ma.filled(np.float64(row[c]), np.nan))}
    assert {"Unc_Flux1000", "Signif_Avg"} <= expected
    assert set(ds.meta["dropped"]["4FGL J0534.5+2201i"]) == expected
    with pytest.raises(ValueError, match=r"4FGL J0534\.5\+2201i"):
        fgl.dataset(classes=["pwn"], nan_policy="raise")
    # -inf Variability_Index and NaN Signif_Avg count as non-finite too.
    with pytest.warns(DroppedRowsWarning) as record:
        ds = fgl.dataset(classes=["pwn"], min_significance=5, features=["Variability_Index"])
    assert set(ds.meta["dropped"]["4FGL J0534.5+2201i"]) == {"Signif_Avg", "Variability_Index"}
    assert "2201i" in str(record[0].message)


def test_nan_uncertainties_are_dropped_and_counted(fgl):
    table = fgl.table
    cls = np.char.lower(np.char.strip(np.ma.filled(table["CLASS1"], b"").astype(str)))
    unc = np.ma.filled(np.asarray(table["Unc_LP_beta"], float), np.nan)
    unassociated = cls == ""
    expected_dropped = int(np.sum(unassociated & ~np.isfinite(unc)))
    assert expected_dropped > 0
    with pytest.warns(DroppedRowsWarning, match=f"{expected_dropped} source"):
        pool = fgl.pool(features="villacampa2021")  # the paper's own rule for a missing error
    assert len(pool) == unassociated.sum() - expected_dropped
    assert len(pool.meta["dropped"]) == expected_dropped
    assert not pool.is_labelled and np.all(np.isfinite(pool.X_var))
    with pytest.raises(ValueError, match="Unc_LP_beta"):
        fgl.pool(features="villacampa2021", nan_policy="raise")


def test_missing_errors_repaired_are_counted_as_dropped_rows_are(dr4):
    """A missing error the preset repairs (the population's error) is warned of with its count, and recorded."""
    feature = next(f for f in FEATURE_PRESETS["fermi_dr4"] if f.column == "Frac_Variability")
    with pytest.warns(RepairedRowsWarning) as record:
        ds = dr4.dataset(classes=["bll", "fsrq"], features=[feature])
    index = {name: i for i, name in enumerate(dr4.names)}
    unc = np.ma.filled(np.asarray(dr4.table["Unc_Frac_Variability"], float), np.nan)[[index[n] for n in ds.ids]]
    expected = int(np.sum(~np.isfinite(unc) | np.isclose(unc, 10.0, rtol=1e-6)))  # NaN or the 'not measured' 10
    assert expected > 0 and ds.meta["repaired"] == {"Unc_Frac_Variability": expected}
    assert (f"{expected} source(s) of the labelled selection (bll, fsrq: the training and held-out sources) have an "
            "error") in str(record[0].message)

    with warnings.catch_warnings():
        warnings.simplefilter("error", RepairedRowsWarning)  # dropped instead: nothing repaired, nothing said of it
        warnings.simplefilter("ignore", DroppedRowsWarning)
        dropping = dr4.dataset(classes=["bll", "fsrq"], features=[dataclasses.replace(feature, missing_error="drop")])
    assert dropping.meta["repaired"] == {} and len(dropping) == len(ds) - expected


def test_population_errors_give_a_zero_variability_its_half_normal_spread(dr4):
    """missing_error='population': a Frac_Variability of 0 without an error gets the median error of the catalog's
    rows that have one, truncated at 0 like every draw of it: a half-normal, variance sigma^2 (1 - 2/pi)."""
    from gpal.catalogs.features import with_missing_errors

    preset = next(f for f in FEATURE_PRESETS["fermi_dr4"] if f.column == "Frac_Variability")
    (population,), (exact,) = with_missing_errors([preset], "population"), with_missing_errors([preset], "exact")
    assert population == preset and exact.missing_error == "exact"  # the main job's default is the population's
    with pytest.warns(RepairedRowsWarning, match="given the population's median error"):
        ds = dr4.dataset(classes=["bll", "fsrq"], features=[population])
    with pytest.warns(RepairedRowsWarning, match="read as exact"):
        as_exact = dr4.dataset(classes=["bll", "fsrq"], features=[exact])
    unc = np.ma.filled(np.asarray(dr4.table["Unc_Frac_Variability"], float), np.nan)
    measured = np.isfinite(unc) & ~np.isclose(unc, 10.0, rtol=1e-6)
    sigma = np.median(unc[measured])  # over the whole catalog, not the selection
    repaired = as_exact.X_var[:, 0] == 0
    assert repaired.sum() == ds.meta["repaired"]["Unc_Frac_Variability"] > 0
    assert np.all(ds.X[repaired, 0] == 0)
    np.testing.assert_allclose(ds.X_var[repaired, 0], sigma**2 * (1 - 2 / np.pi), rtol=0.01)
    np.testing.assert_array_equal(ds.X_var[~repaired, 0], as_exact.X_var[~repaired, 0])  # the others untouched
    with pytest.raises(ValueError, match="unknown missing-error policy 'median'"):
        with_missing_errors([exact], "median")


def test_pool_selects_unassociated_and_optional_codes(dr4):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DroppedRowsWarning)
        only = dr4.pool()
        wider = dr4.pool(select=["unassociated", "bcu", "UNK"])
    assert set(only.aux["CLASS1"]) == {""}
    assert set(np.char.lower(wider.aux["CLASS1"].astype(str))) == {"", "bcu", "unk"}
    assert len(wider) > len(only) > 2000
    assert {"GLON", "GLAT"} <= set(wider.aux)


def test_user_defined_features(dr4):
    ds = dr4.dataset(
        classes=["bll", "fsrq"],
        features=["PL_Index", "log10:Energy_Flux100", Feature("GLAT"), {"column": "Variability_Index", "transform": "log"}],
    )
    assert ds.feature_names == ("PL_Index", "log10(Energy_Flux100)", "GLAT", "log(Variability_Index)")
    # String specs pick up the Unc_ column; GLAT has none.
    assert np.all(ds.X_var[:, 0] > 0) and np.all(ds.X_var[:, 2] == 0)
    assert len(ds) > 2000


# ---------------------------------------------------------------- bad input
def test_unknown_release_name():
    with pytest.raises(ValueError, match=r"unknown catalog release 'nope'.*4FGL-DR4"):
        load_catalog("nope")


def test_missing_path():
    with pytest.raises(FileNotFoundError, match="no_such.fit"):
        load_catalog("/tmp/no_such.fit")


def test_not_a_fits_file(tmp_path):
    path = tmp_path / "gll_psc_v99.fit"
    path.write_text("this is not FITS")
    with pytest.raises(ValueError, match="is a text file gpal does not read as a catalog.*gpal reads FITS"):
        load_catalog(path)
    path.write_bytes(b"SIMPLE  = T" + bytes(range(200)))  # a FITS header's start, then no FITS
    with pytest.raises(ValueError, match="could not be read as a FITS file"):
        load_catalog(path)


def test_fits_without_the_catalog_table(tmp_path):
    path = tmp_path / "other.fits"
    Table({"a": [1, 2]}).write(path, format="fits")
    with pytest.raises(ValueError, match="no LAT_Point_Source_Catalog HDU"):
        load_catalog(path)


def test_fits_of_another_catalog_family(tmp_path):
    path = tmp_path / "gll_psc_2fgl.fits"
    hdu = fits.BinTableHDU(Table({"Source_Name": ["2FGL J0000.1+6545"], "CLASS1": [""]}), name="LAT_Point_Source_Catalog")
    hdu.header["CDS-NAME"] = "2FGL"
    fits.HDUList([fits.PrimaryHDU(), hdu]).writeto(path)
    # the message names the file, what its header says and every family looked for
    with pytest.raises(ValueError, match=r"gll_psc_2fgl\.fits is not a catalog gpal can read: header CDS-NAME is "
                                         r"'2FGL'; expected one of \['3FGL', '4FGL', 'FL16Y'\]"):
        load_catalog(path)


def test_missing_column_names_column_and_release(dr4):
    with pytest.raises(ValueError, match=r"column 'Flux_1000' is not in the 4FGL-DR4 catalog.*Flux1000"):
        dr4.dataset(features=["Flux_1000"])


def test_unknown_class_code_lists_codes_with_counts(fgl):
    with pytest.raises(ValueError, match=r"unknown class code\(s\) \['blazar'\].*bll \(1131\)"):
        fgl.dataset(classes=["blazar"])


def test_empty_selection(fgl):
    with pytest.raises(ValueError, match="selection is empty"):
        fgl.dataset(classes=["nov"], min_significance=1000)


def test_log_of_non_positive_values_without_floor(fgl):
    with pytest.raises(ValueError, match=r"log transform of feature 'log\(LP_beta\)'.*non-positive.*floor"):
        fgl.dataset(classes=PAPER_CLASSES, min_significance=30, features=[Feature("LP_beta", transform="log")])


def test_bad_policy_and_merge(fgl):
    with pytest.raises(ValueError, match="nan_policy"):
        fgl.dataset(nan_policy="ignore")
    with pytest.raises(ValueError, match="not among classes"):
        fgl.dataset(classes=["bll"], merge={"pulsar": ["psr"]})
    with pytest.raises(ValueError, match="'bll' is named 2 times, in a and b"):
        fgl.dataset(classes=["a", "b"], merge={"a": ["bll"], "b": ["bll", "fsrq"]})


def test_text_is_kept_as_bytes_and_read_as_wide_as_its_longest_value(dr4, monkeypatch):
    """The table keeps a FITS text column as the file's bytes, and `text_values` gives the values a plain decode
    and strip give, as wide as the longest of them, whether it takes the rows in one part or in many."""
    import gpal.catalogs.catalog as catalog_module

    assert np.asarray(dr4.table["Source_Name"]).dtype.kind == "S"
    expected = [name.decode("ascii").strip() for name in np.asarray(dr4.table["Source_Name"])]
    assert dr4.names.tolist() == expected
    assert dr4.names.dtype == np.dtype(f"U{max(map(len, expected))}")
    wide = np.array([b"  a ", b"bcd", b"", b"e" * 40 + b" "], dtype="S41")
    monkeypatch.setattr(catalog_module, "_TEXT_ROWS", 3)  # two parts, the widest in the second
    values = catalog_module.text_values(wide)
    assert values.tolist() == ["a", "bcd", "", "e" * 40] and values.dtype == np.dtype("U40")
    assert catalog_module.text_values(wide[:3]).dtype == np.dtype("U3")


def test_a_feature_of_a_column_the_catalog_lacks_is_refused_naming_the_presets_and_columns():
    catalog = load_catalog("FL16Y")
    with pytest.raises(ValueError, match=r"column 'nosuch' is not in the FL16Y catalog .*feature 'nosuch' reads it; a feature is "
                                         r"a preset \(default, .*'release'.*\) or columns of the catalog: Source_Name"):
        catalog.summary(["nosuch"])
    with pytest.raises(ValueError, match=r"did you mean \['Signif_Avg'"):
        catalog.dataset(classes=["bll", "fsrq"], features=["log:Signif_Avgg"])


def test_the_paper_preset_says_which_sources_it_drops_for_a_missing_error_and_how_the_command_line_keeps_them(fgl):
    with pytest.warns(DroppedRowsWarning, match=r"^63 source\(s\).*\(63 of them only lack an error the catalog does "
                                                r"not give: features='release', the command line's,") as caught:
        paper = fgl.pool(features="villacampa2021")
    assert len([w for w in caught if issubclass(w.category, DroppedRowsWarning)]) == 1
    assert len(paper.ids) == 1337 - 63


def test_the_default_pool_is_the_command_lines(fgl):
    from gpal.catalog_jobs.prediction import selection_pool
    from gpal.catalog_jobs.selection import CatalogSelection

    with pytest.warns(RepairedRowsWarning, match=r"^63 source\(s\) of the pool"):
        default = fgl.pool()
    with pytest.warns(RepairedRowsWarning):
        command_line = selection_pool(fgl, ["unassociated"], CatalogSelection(catalog="4FGL").features_of(fgl))
    # every unassociated source, as the command line selects them; the 63 whose beta is pegged (no Unc_LP_beta)
    # carry the population's median beta error, not an exact value
    assert list(default.ids) == list(command_line.ids) and len(default.ids) == fgl.class_counts()["unassociated"] == 1337
    with pytest.warns(DroppedRowsWarning):
        paper = fgl.pool(features="villacampa2021")
    kept = ~np.isin(default.ids, paper.ids)
    beta = [f.column for f in FEATURE_PRESETS["default"]].index("LP_beta")
    assert kept.sum() == 63 and np.all(default.X_var[kept, beta] > 0)
    np.testing.assert_array_equal(default.X[~kept], paper.X)
    # the published selection has no source without an error: the paper's 454 are built as before
    published = dict(classes=["bll", "fsrq", "psr"], min_significance=30)
    np.testing.assert_array_equal(fgl.dataset(**published).X_var,
                                  fgl.dataset(**published, features="villacampa2021").X_var)

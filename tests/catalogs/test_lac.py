"""4LAC-DR3 beside the source catalogs: the shipped files, missing values read as missing, the join to every
4FGL-family release and FL16Y (its coverage, the issue's counts reproduced), the features and bad input."""

import hashlib
import shutil
import warnings

import numpy as np
import pytest
from astropy.io import fits
from astropy.table import Table

from gpal.catalogs import CATALOG_DIR, load_catalog
from gpal.catalogs.lac import (LAC_COLUMNS, LAC_FEATURES, LAC_FILES, LAC_REDSHIFT_FEATURES, LAC_TABLE_COLUMNS, join_4lac, join_coverage,
                               lac_feature_names, lac_features, lac_rows, lac_table_columns, read_4lac, unshared,
                               with_lac_features)
from gpal.catalogs.links import link_later

SHA256 = {
    "table-4LAC-DR3-h.fits.gz": "dae8351de64aafbddffef33692efe6253c69c9f687341a6af39a715e62dd2459",
    "table-4LAC-DR3-l.fits.gz": "cd1e6baddfcfb867c39a23c36dbf0e7714abe1fe1fc432247b06a1ce12c4ea2b",
}
# What the join reaches per release (printed by test_join_coverage_per_release; the numbers of the report).
COVERAGE = {
    "4FGL": {"rows": 5066, "named": 5066, "joined": 3214, "joined_by_stem": 10, "bcu": 1312, "bcu_joined": 1306,
             "bcu_joined_by_stem": 8, "bcu_nu_syn": 724, "blazars": 1825, "blazars_joined": 1819},
    "4FGL-DR2": {"rows": 5788, "named": 5788, "joined": 3497, "joined_by_stem": 23, "bcu": 1384, "bcu_joined": 1379,
                 "bcu_joined_by_stem": 20, "bcu_nu_syn": 771, "blazars": 2052, "blazars_joined": 2045},
    "4FGL-DR4": {"rows": 7195, "named": 7195, "joined": 3806, "joined_by_stem": 29, "bcu": 1623, "bcu_joined": 1479,
                 "bcu_joined_by_stem": 26, "bcu_nu_syn": 855, "blazars": 2310, "blazars_joined": 2253},
    "FL16Y": {"rows": 7224, "named": 6582, "joined": 3678, "joined_by_stem": 22, "bcu": 1513, "bcu_joined": 1077,
              "bcu_joined_by_stem": 12, "bcu_nu_syn": 638, "blazars": 2660, "blazars_joined": 2441},
}


@pytest.fixture(scope="module")
def lac():
    return read_4lac()


@pytest.fixture(scope="module")
def catalogs():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {name: load_catalog(name) for name in ("3FGL", *COVERAGE)}


def test_the_shipped_files_are_4lac_dr3_unchanged(lac):
    assert {p.name for p in LAC_FILES} == set(SHA256)
    for path in LAC_FILES:
        assert path.parent == CATALOG_DIR
        assert hashlib.sha256(path.read_bytes()).hexdigest() == SHA256[path.name]
    assert tuple(lac.columns) == LAC_COLUMNS
    assert lac["lac_file"].value_counts().to_dict() == {"table-4LAC-DR3-h.fits.gz": 3407, "table-4LAC-DR3-l.fits.gz": 407}
    assert lac["Source_Name"].is_unique and lac["Source_Name"].str.startswith("4FGL J").all()


def test_unknown_values_are_missing_never_zero(lac):
    # 4LAC writes "unknown" as 0 (nu_syn), -inf (Redshift) or masked (HE_EPeak): counted on the raw files here
    raw = [Table.read(p) for p in LAC_FILES]
    nu = np.concatenate([np.asarray(t["nu_syn"], float) for t in raw])
    z = np.concatenate([np.asarray(t["Redshift"], float) for t in raw])
    assert (nu == 0).sum() == 989 and np.isneginf(z).sum() == 1940
    assert lac["log_nu_syn"].isna().sum() == 989 and lac["Redshift"].isna().sum() == 1940
    assert lac["HE_EPeak"].isna().sum() == 554
    assert (lac["log_nu_syn"].dropna() > 10).all() and (lac["Redshift"].dropna() >= 0).all()
    np.testing.assert_allclose(10 ** lac["log_nu_syn"].dropna().to_numpy(), nu[nu > 0], rtol=1e-6)


def test_sed_class_is_the_step_function_of_the_peak(lac):
    """Why SED_class is no feature beside the peak: it is given exactly where nu_syn is, and is its bin."""
    known = lac["log_nu_syn"].notna()
    assert ((lac["SED_class"] != "") == known).all()
    peak = lac["log_nu_syn"].round(6)  # 10^15 Hz exactly (float32 in the file) is HSP
    bins = np.select([peak < 14, peak < 15], ["LSP", "ISP"], "HSP")
    assert (lac["SED_class"][known] == bins[known]).all()


def test_join_coverage_per_release(catalogs, lac):
    for name, expected in COVERAGE.items():
        found = join_coverage(catalogs[name], lac)
        print(name, found)
        assert found == expected
    # the 'c' suffix is the only renaming: every stem-joined name ends in c and 4LAC has it without
    rows, by_stem = lac_rows(catalogs["4FGL-DR4"], lac)
    names = catalogs["4FGL-DR4"].names[by_stem]
    assert all(n.endswith("c") for n in names)
    assert (lac["Source_Name"].to_numpy()[rows[by_stem]] == np.array([n[:-1] for n in names])).all()


def test_the_issues_counts_are_reproduced(catalogs, lac):
    """DR4 bcu that FL16Y later calls BL Lac (248) or FSRQ (16): 241 in 4LAC by name (one more without its c),
    139 with a peak, and the peak alone ranks FSRQs above BL Lacs with AUC 0.954 (a pair count here)."""
    dr4, fl16y = catalogs["4FGL-DR4"], catalogs["FL16Y"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        index = link_later(dr4, fl16y)
    later = np.where(index >= 0, fl16y.class_codes[np.maximum(index, 0)], "")
    picked = (dr4.class_codes == "bcu") & np.isin(later, ["bll", "fsrq"])
    fsrq = later[picked] == "fsrq"
    assert (picked.sum(), fsrq.sum()) == (264, 16)
    joined = join_4lac(dr4, dr4.names[picked], lac)
    exact = np.isin(dr4.names[picked], lac["Source_Name"])
    assert exact.sum() == 241 and (joined["LAC_Name"] != "").sum() == 242
    peak = joined["log_nu_syn"].to_numpy()
    has = np.isfinite(peak)
    assert has.sum() == 139
    low_f, low_b = -peak[has & fsrq], -peak[has & ~fsrq]  # a lower peak ranks higher as an FSRQ
    pairs = (low_f[:, None] > low_b[None, :]).sum() + 0.5 * (low_f[:, None] == low_b[None, :]).sum()
    assert round(pairs / (low_f.size * low_b.size), 3) == 0.954
    assert not ((joined["SED_class"] == "HSP").to_numpy() & fsrq).any()  # no HSP bcu became an FSRQ
    # FL16Y's bcu through ASSOC_FGL: 1068 by name as written (the issue's), 636 with a peak; 3 of them share their
    # 4LAC row with another FL16Y source (a 4FGL source FL16Y split) and are left unjoined
    bcu = fl16y.class_codes == "bcu"
    keys = np.array([str(k).strip() for k in fl16y.table["ASSOC_FGL"]])
    as_written = bcu & np.isin(keys, lac["Source_Name"]) & (keys != "")
    assert as_written.sum() == 1068
    peaks = dict(zip(lac["Source_Name"], np.isfinite(lac["log_nu_syn"].to_numpy())))
    assert sum(peaks[k] for k in keys[as_written]) == 636
    rows, by_stem = lac_rows(fl16y, lac)
    assert (bcu & (rows >= 0) & ~by_stem).sum() == 1065


def test_a_4lac_row_two_sources_link_to_joins_neither(catalogs, lac):
    """FL16Y J0948.5+1753 and its neighbour J0950.2+1743 both name 4FGL J0949.2+1749; 4LAC's counterpart of it
    (TXS 0946+181, FL16Y's ASSOC1 of the neighbour) is given to neither."""
    fl16y = catalogs["FL16Y"]
    rows, by_stem = lac_rows(fl16y, lac)
    keys = np.array([str(k).strip() for k in fl16y.table["ASSOC_FGL"]])
    shared = rows < 0
    shared &= np.isin(keys, lac["Source_Name"]) & (keys != "")
    assert shared.sum() == 8 and not by_stem[shared].any()
    assert all((keys[shared] == k).sum() >= 2 for k in keys[shared])
    assert "FL16Y J0948.5+1753" in set(fl16y.names[shared])


def test_3fgl_is_not_joined(catalogs, lac):
    with pytest.raises(ValueError, match=r"3FGL \(gll_psc_v16.fit.gz\) names no 4FGL source.*FL16Y through ASSOC_FGL"):
        join_coverage(catalogs["3FGL"], lac)


def test_a_source_without_a_4lac_row_is_missing(catalogs, lac):
    fl16y = catalogs["FL16Y"]
    unassociated = fl16y.names[fl16y.class_codes == ""][:3]
    joined = join_4lac(fl16y, unassociated, lac)
    assert (joined["LAC_Name"] == "").all() and (joined["SED_class"] == "").all()
    assert joined[["log_nu_syn", "Redshift", "counterpart_ra"]].isna().all().all()
    with pytest.raises(ValueError, match=r"1 id\(s\) are not sources of FL16Y \(e.g. \['nowhere'\]\)"):
        join_4lac(fl16y, ["nowhere"], lac)


def test_features_carry_error_bars_and_fill_a_missing_value_with_the_population(catalogs, lac):
    dr4 = catalogs["4FGL-DR4"]
    joined = join_4lac(dr4, lac=lac)
    X, V = lac_features(joined, lac)
    assert X.shape == V.shape == (dr4.n_rows, len(LAC_FEATURES)) and np.isfinite(X).all() and np.isfinite(V).all()
    Xz, Vz = lac_features(joined, lac, redshift=True)  # the redshift only when asked for, after the rest
    assert Xz.shape == (dr4.n_rows, len(LAC_FEATURES) + len(LAC_REDSHIFT_FEATURES))
    np.testing.assert_array_equal(Xz[:, :4], X)
    z = joined["Redshift"].notna().to_numpy()
    assert (Xz[:, 5] == z).all() and (Xz[z, 4] == joined["Redshift"].to_numpy()[z]).all() and (Vz[z, 4] == 0).all()
    assert not any("CLASS" in label for label in (*LAC_FEATURES, *LAC_REDSHIFT_FEATURES))
    given = joined["log_nu_syn"].notna().to_numpy()
    assert (X[:, 1] == given).all()
    np.testing.assert_array_equal(X[given, 0], joined["log_nu_syn"].to_numpy()[given])
    assert (V[given, 0] == 0).all()  # 4LAC gives the peak no error
    population = lac["log_nu_syn"].dropna().to_numpy()
    assert np.allclose(X[~given, 0], np.median(population)) and np.allclose(V[~given, 0], population.var())
    # the high-energy peak's first-order variance, against a Monte Carlo of log10 of a narrow Gaussian
    row = int(np.nanargmin(joined["Unc_HE_EPeak"] / joined["HE_EPeak"]))
    e, s = joined.loc[row, ["HE_EPeak", "Unc_HE_EPeak"]].to_numpy(float)
    draws = np.log10(np.random.default_rng(0).normal(e, s, 200_000))
    assert X[row, 2] == pytest.approx(np.log10(e)) and V[row, 2] == pytest.approx(draws.var(), rel=0.02)
    # 4LAC's CLASS is read, never used: scrambling it changes no feature
    scrambled = lac.assign(LAC_CLASS=lac["LAC_CLASS"].sample(frac=1, random_state=0).to_numpy())
    np.testing.assert_array_equal(lac_features(join_4lac(dr4, lac=scrambled), scrambled, redshift=True)[0], Xz)


def test_the_compton_dominance_is_the_peaks_flux_ratio_with_the_high_energy_error(catalogs, lac):
    """Against the raw FITS columns: log10(HE_nuFnuPeak [MeV] * erg/MeV / nuFnu_syn [erg]), its variance a Monte Carlo
    of the high-energy flux's error; missing where either peak is, and a name 4LAC has not refused."""
    dr4 = catalogs["4FGL-DR4"]
    joined = join_4lac(dr4, lac=lac)
    X, V = lac_features(joined, lac, extra=["Compton_dominance"])
    assert X.shape[1] == len(lac_feature_names(["Compton_dominance"])) == len(LAC_FEATURES) + 2
    raw = Table.read(LAC_FILES[0])
    name = "4FGL J2253.9+1609"  # 3C 454.3: both peaks measured
    at = int(np.flatnonzero(dr4.names == name)[0])
    mine = raw[np.char.strip(raw["Source_Name"].astype(str)) == name][0]
    he, he_unc, syn = (float(mine[c]) for c in ("HE_nuFnuPeak", "Unc_HE_nuFnuPeak", "nuFnu_syn"))
    assert X[at, 4] == pytest.approx(np.log10(he * 1.602176634e-6 / syn)) and X[at, 5] == 1
    draws = np.log10(np.random.default_rng(0).normal(he, he_unc, 200_000))
    assert V[at, 4] == pytest.approx(draws.var(), rel=0.03)
    one_missing = (joined["log_nuFnu_syn"].isna() & joined["HE_nuFnuPeak"].notna()).to_numpy()
    assert one_missing.any() and (X[one_missing, 5] == 0).all()
    with pytest.raises(ValueError, match=r"unknown 4LAC quantities \['CLASS'\]; expected some of \['nu_syn'"):
        lac_features(joined, lac, extra=["CLASS"])


def test_a_missing_shipped_file_says_to_reinstall(monkeypatch, tmp_path):
    from gpal.catalogs import lac as module

    monkeypatch.setattr(module, "LAC_FILES", (tmp_path / "table-4LAC-DR3-h.fits.gz", LAC_FILES[1]))
    with pytest.raises(FileNotFoundError, match=r"4LAC-DR3 files should ship at .*table-4LAC-DR3-h.*reinstall gpal"):
        read_4lac()


def test_bad_files_are_refused_by_name(tmp_path, lac):
    with pytest.raises(FileNotFoundError, match="nothing.fits"):
        read_4lac([tmp_path / "nothing.fits"])
    with pytest.raises(ValueError, match=r"README.md could not be read as FITS .*expected a 4LAC-DR3 FITS file"):
        read_4lac([CATALOG_DIR / "README.md"])
    with pytest.raises(ValueError, match=r"gll_psc_v35.fit.gz lacks column\(s\) \['CLASS'.*'SED_class'.*expected a 4LAC-DR3"):
        read_4lac([CATALOG_DIR / "gll_psc_v35.fit.gz"])
    copy = tmp_path / "again.fits.gz"
    shutil.copy(LAC_FILES[1], copy)
    with pytest.raises(ValueError, match=r"name 407 source\(s\) twice.*expected each AGN once"):
        read_4lac([LAC_FILES[1], copy])
    cut = tmp_path / "cut.fits"
    table = Table.read(LAC_FILES[1])
    fits.HDUList([fits.PrimaryHDU(), fits.table_to_hdu(table[:0])]).writeto(cut)
    with pytest.raises(ValueError, match=r"cut.fits has no rows"):
        read_4lac([cut])


def test_table_columns_show_the_counterpart_and_say_where_they_came_from(catalogs, lac):
    dr4 = catalogs["4FGL-DR4"]
    ids = ["4FGL J0344.2+3203c", dr4.names[dr4.class_codes == ""][0]]  # joined without its c; unassociated
    shown, note = lac_table_columns(dr4, ids, lac)
    assert list(shown.columns) == list(LAC_TABLE_COLUMNS)
    row = lac.set_index("Source_Name").loc["4FGL J0344.2+3203"]
    assert shown.loc[0, "LAC_counterpart"] == row["counterpart"] != ""
    assert shown.loc[0, "LAC_counterpart_RA"] == row["counterpart_ra"]
    assert shown.loc[1, "LAC_counterpart"] == "" and np.isnan(shown.loc[1, "LAC_log_nu_syn"])
    assert note == ("4LAC-DR3 (table-4LAC-DR3-h.fits.gz, table-4LAC-DR3-l.fits.gz) joined by Source_Name: 1 of 2 "
                    "sources have a 4LAC row")
    empty, note = lac_table_columns(catalogs["3FGL"], list(catalogs["3FGL"].names[:2]), lac)
    assert note == "no 4LAC-DR3 columns: 3FGL names no 4FGL source"
    assert (empty["LAC_SED_class"] == "").all() and empty["LAC_Redshift"].isna().all() and len(empty) == 2


def test_a_dataset_gains_the_features_after_its_own(catalogs, lac):
    dr4 = catalogs["4FGL-DR4"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        data = dr4.dataset(classes=["bll", "fsrq"], features="release")
    wider = with_lac_features(data, dr4, lac)
    assert wider.feature_names == (*data.feature_names, *LAC_FEATURES) and (wider.ids == data.ids).all()
    np.testing.assert_array_equal(wider.X[:, :data.n_features], data.X)
    X, V = lac_features(join_4lac(dr4, data.ids, lac), lac)
    np.testing.assert_array_equal(wider.X[:, data.n_features:], X)
    np.testing.assert_array_equal(wider.X_var[:, data.n_features:], V)
    assert wider.meta["lac"]["release"] == "4LAC-DR3" and not wider.meta["lac"]["redshift"]


def test_a_block_of_rows_leaves_unjoined_what_the_whole_catalog_does(catalogs, lac):
    """A block holding one of two sources that name one 4LAC row joins it alone; `unshared` of the whole catalog
    leaves it unjoined there too, as `lac_rows` on the whole catalog does."""
    fl16y = catalogs["FL16Y"]
    at = int(np.flatnonzero(fl16y.names == "FL16Y J0948.5+1753")[0])
    block = fl16y.rows(slice(at, at + 1))
    assert lac_rows(block, lac)[0][0] >= 0  # alone, the block cannot see the neighbour
    assert lac_rows(block, unshared(fl16y, lac))[0][0] == -1
    whole, _ = lac_rows(fl16y, lac)
    again, _ = lac_rows(fl16y, unshared(fl16y, lac))
    assert ((whole >= 0) == (again >= 0)).all()

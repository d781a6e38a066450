"""Release records: every shipped release loads by name and by path, is recognised from its header, and reads its
own layout (3FGL's separate band columns, FL16Y's DR4 layout); a non-editable install finds the files."""

import hashlib
import os
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from astropy.io import fits
from astropy.table import Table

from gpal.catalogs import CATALOG_DIR, RELEASES, load_catalog
from gpal.catalogs.releases import FGL3_COLUMNS, identify_release
from gpal.catalogs.targets import TARGET_COLUMNS

# Checksums of the shipped files (catalogs/README.md; the shared folder's README for v16, v27, v41).
SHA256 = {
    "3FGL": "b1011292766111770e8a34a7a6589b1f69ceeee56b12a596c47a272d667b2a97",
    "4FGL": "2142ae898fb30d17736f21648975ea8057a90a0b3ee452c46805f0b4ec52e913",
    "4FGL-DR2": "d4c6eb19124069b0e4e9aed9189cecd0adcb8c9a4c16653e3cc4f2cda7187247",
    "4FGL-DR4": "eae68e5c25eb31b835fe19969f742e52535049d320699459646f7e785f8f8180",
    "FL16Y": "3851ac6e736aa29cfa4d5400c663727c3541fdc7b41d3ef805831f7fe9f6a858",
}
# name -> (version, rows, unassociated sources, source-name prefix), as the README and the files' headers give them.
EXPECTED = {
    "3FGL": ("v16", 3034, 1010, "3FGL J"),
    "4FGL": ("v20", 5066, 1337, "4FGL J"),
    "4FGL-DR2": ("v27", 5788, None, "4FGL J"),
    "4FGL-DR4": ("v35", 7195, None, "4FGL J"),
    "FL16Y": ("v41", 7224, 2114, "FL16Y J"),
}


@pytest.fixture(scope="module")
def catalogs():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {name: load_catalog(name) for name in RELEASES}


def test_every_shipped_file_is_intact():
    assert set(SHA256) == set(RELEASES)
    for name, digest in SHA256.items():
        assert hashlib.sha256((CATALOG_DIR / RELEASES[name].file).read_bytes()).hexdigest() == digest


def test_every_release_loads_by_name_with_its_record(catalogs):
    for name, (version, rows, unassociated, prefix) in EXPECTED.items():
        catalog = catalogs[name]
        assert (catalog.release, catalog.version, catalog.n_rows) == (name, version, rows)
        assert catalog.record is RELEASES[name]
        assert all(n.startswith(prefix) for n in catalog.names)
        if unassociated is not None:
            assert catalog.class_counts()["unassociated"] == unassociated
        # every record column of the layout is in the file (None where the layout lacks one)
        named = [v for v in vars(catalog.columns).values() if v is not None]
        flat = [c for v in named for c in (v if isinstance(v, tuple) else (v,))]
        assert not [c for c in flat if c not in catalog.table.colnames], name


def test_release_is_read_from_the_header_not_the_file_name(tmp_path):
    for name in ("3FGL", "FL16Y", "4FGL-DR2"):
        copy = tmp_path / f"renamed_{name}.fits.gz"
        shutil.copy(CATALOG_DIR / RELEASES[name].file, copy)
        assert load_catalog(copy).release == name


def test_target_list_columns_are_exposed_for_every_release(catalogs):
    for catalog in catalogs.values():
        # every column a target list reads (gpal.catalogs.targets, by role) is in every shipped release
        targets = {role: getattr(catalog.columns, role) for role, _, _ in TARGET_COLUMNS.values()}
        assert {"conf95_semimajor", "conf95_semiminor", "conf95_posang", "assoc1", "flags", "significance", "flux",
                "extended_name"} <= set(targets)
        for role, column in targets.items():
            # None: the layout has no such column (3FGL: no counterpart position or association probability)
            assert column is None or column in catalog.table.colnames, (catalog.release, role)
        missing = {role for role, column in targets.items() if column is None}
        # 3FGL: no counterpart position, association probability, CLASS2 or peak energy; 4FGL and DR2: no peak energy
        expected = {"3FGL": {"counterpart_ra", "counterpart_dec", "assoc_prob_bay", "assoc_prob_lr", "class2",
                             "peak_energy"}, "4FGL": {"peak_energy"}, "4FGL-DR2": {"peak_energy"}}.get(catalog.release, set())
        assert missing == expected, catalog.release
        # the 95% ellipse: semi-axes in degrees, positive and under a degree for most sources, major >= minor
        major = np.asarray(catalog.table[targets["conf95_semimajor"]], float)
        minor = np.asarray(catalog.table[targets["conf95_semiminor"]], float)
        both = np.isfinite(major) & np.isfinite(minor)
        assert (major[both] > 0).all() and (major[both] >= minor[both]).all() and np.median(major[both]) < 1


def test_fl16y_is_dr4_layout_less_dataRelease_plus_prior_sigma(catalogs):
    fl16y, dr4 = catalogs["FL16Y"], catalogs["4FGL-DR4"]
    assert fl16y.columns == dr4.columns and fl16y.record.preset == dr4.record.preset == "fermi_dr4"
    assert "DataRelease" not in fl16y.table.colnames and "ASSOC_4FGL" not in fl16y.table.colnames
    assert "PriorSigma_Band" in fl16y.table.colnames
    # it links to 4FGL by ASSOC_FGL, as 4FGL-family files link to 3FGL; a DR links to earlier DRs by name
    assert fl16y.record.link_column(dr4.record) == "ASSOC_FGL"
    assert dr4.record.link_column(RELEASES["4FGL"]) == "Source_Name"
    with pytest.raises(ValueError, match="3FGL does not link to FL16Y"):
        RELEASES["3FGL"].link_column(fl16y.record)


def test_3fgl_reads_its_own_layout(catalogs):
    fgl3 = catalogs["3FGL"]
    assert fgl3.columns == FGL3_COLUMNS and fgl3.record.preset == "fermi_3fgl"
    beta = np.asarray(fgl3.table["beta"], float)
    kinds = np.char.strip(np.asarray(fgl3.table["SpectrumType"]).astype(str))
    # 3FGL writes -inf for "not fitted"; the record reads it as NaN: beta only for LogParabola sources
    assert not np.isneginf(beta).any()
    assert np.isnan(beta[kinds != "LogParabola"]).all() and np.isfinite(beta[kinds == "LogParabola"]).all()
    data = fgl3.dataset(classes=["bll", "fsrq", "pulsar"], merge={"pulsar": ["psr", "msp"]}, features="release")
    assert data.class_counts() == {"bll": 660, "fsrq": 484, "pulsar": 167}  # 3FGL has no msp code
    assert data.feature_names[5:9] == ("HR12", "HR23", "HR34", "HR45")
    assert np.isfinite(data.X).all() and (data.X_var >= 0).all()


def test_3fgl_band_upper_limits_follow_the_4fgl_convention(catalogs):
    """A NaN lower band error marks Sqrt_TS < 1 exactly, as in 4FGL (docs/catalogs.md, "3FGL")."""
    table = catalogs["3FGL"].table
    for band, error in zip(FGL3_COLUMNS.band_flux, FGL3_COLUMNS.band_flux_error):
        sqrt_ts = np.asarray(table["Sqrt_TS" + band[len("Flux"):]], float)
        lower, upper = np.asarray(table[error], float).T
        limit = np.isnan(lower) & np.isfinite(upper)
        measured = np.isfinite(lower) & np.isfinite(upper)
        assert limit.any() and (sqrt_ts[limit] < 1).all() and (sqrt_ts[measured] >= 1).all()
        assert (lower[measured] <= 0).all() and (upper[measured | limit] >= 0).all()


def test_hardness_of_3fgl_matches_an_independent_computation(catalogs):
    """HR12 on 3FGL: value (F2 - F1) / (F2 + F1) from the two band columns, computed here with numpy."""
    fgl3 = catalogs["3FGL"]
    data = fgl3.pool(select=["unassociated"], features="release")
    index = {n: i for i, n in enumerate(fgl3.names)}
    rows = np.array([index[i] for i in data.ids])
    soft = np.asarray(fgl3.table["Flux100_300"], float)[rows]
    hard = np.asarray(fgl3.table["Flux300_1000"], float)[rows]
    np.testing.assert_allclose(data.X[:, data.feature_names.index("HR12")], (hard - soft) / (hard + soft), rtol=1e-12)


def test_unknown_family_names_what_was_looked_for(tmp_path):
    with pytest.raises(ValueError, match=r"x\.fits is not a catalog gpal can read: header CDS-NAME is 'XYZ'; "
                                         r"expected one of \['3FGL', '4FGL', 'FL16Y'\].*gll_psc_v41\.fit\.gz"):
        identify_release(str(tmp_path / "x.fits"), "XYZ", 1, ["Source_Name", "CLASS1"])
    with pytest.raises(ValueError, match=r"is not a FL16Y catalog: column\(s\) \['CLASS1'\] are missing"):
        identify_release("y.fits", "FL16Y", 1, ["Source_Name"])
    # a data release gpal does not ship is read with its family's layout, under its own name
    assert identify_release("dr3.fits", "4FGL", 3, ["Source_Name", "CLASS1"]).name == "4FGL-DR3"


def test_a_release_file_missing_a_preset_column_is_refused_by_name(tmp_path, catalogs):
    table = catalogs["3FGL"].table[:200].copy()
    table.remove_column("Signif_Curve")
    hdu = fits.table_to_hdu(Table(table))
    hdu.name = "LAT_Point_Source_Catalog"
    hdu.header["CDS-NAME"] = "3FGL"
    path = tmp_path / "gll_psc_v16_cut.fits"
    fits.HDUList([fits.PrimaryHDU(), hdu]).writeto(path)
    with pytest.raises(ValueError, match=r"column 'Signif_Curve' is not in the 3FGL catalog \(gll_psc_v16_cut\.fits\)"):
        load_catalog(path).dataset(classes=["bll", "fsrq"], features="release")


@pytest.mark.slow
def test_a_non_editable_install_finds_the_catalogs(tmp_path):
    """pip install --target (a plain, non-editable install) and load a catalog from another folder."""
    root = Path(__file__).resolve().parents[2]
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--quiet", "--target", str(site), str(root)],
                   check=True, capture_output=True, cwd=tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    code = ("import gpal.catalogs as c; from gpal.catalogs.lac import read_4lac; cat = c.load_catalog('FL16Y'); "
            "print(cat.release, cat.n_rows, c.CATALOG_DIR, len(read_4lac()))")
    env = {**os.environ, "PYTHONPATH": str(site)}
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, cwd=elsewhere, env=env)
    release, rows, folder, agn = out.stdout.split()
    assert (release, rows, agn) == ("FL16Y", "7224", "3814")  # 4LAC-DR3's two files ship too
    assert Path(folder).resolve().is_relative_to(site.resolve())  # the installed copy, not this checkout


def test_a_release_read_by_name_is_read_once_while_its_file_is_unchanged_and_each_load_is_its_own(monkeypatch,
                                                                                                   tmp_path):
    from collections import OrderedDict

    import gpal.catalogs.catalog as catalog_module

    monkeypatch.setattr(catalog_module, "_RELEASES_READ", OrderedDict())
    reads, read = [], catalog_module.read_catalog_file
    monkeypatch.setattr(catalog_module, "read_catalog_file", lambda path: reads.append(path) or read(path))
    first, second = load_catalog("3FGL"), load_catalog("3fgl")
    assert len(reads) == 1 and first.table is not second.table
    assert np.array_equal(first.names, second.names) and first.provenance() == second.provenance()
    flux = first.table["Flux1000"]
    kept = float(flux[0])
    flux[0], first.names[0], first.class_codes[0] = -1.0, "changed", "changed"  # a caller's changes stay its own
    third = load_catalog("3FGL")
    assert len(reads) == 1 and float(third.table["Flux1000"][0]) == kept
    assert third.names[0] == second.names[0] and third.class_codes[0] == second.class_codes[0]
    # a file changed in place (its time moved) is read again
    copy = tmp_path / Path(RELEASES["3FGL"].file).name
    shutil.copyfile(CATALOG_DIR / RELEASES["3FGL"].file, copy)
    catalog_module._release_catalog(copy)
    os.utime(copy, ns=(copy.stat().st_atime_ns, copy.stat().st_mtime_ns + 10**9))
    catalog_module._release_catalog(copy)
    assert len(reads) == 3

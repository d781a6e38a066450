"""A catalog of a new layout added the way docs/extending.md says, from a user's own code: its file, a `Columns`
and its `Release` record (`gpal.register_release`), and a preset written from the layout's roles
(`gpal.register_preset`); it then loads by name and builds the main job's kind of features, with no file of gpal
edited and no module attribute patched.

The layout is made up: a few columns of the small DR4 file of the tests under other names, in a file whose
header names a family of its own (``TOYCAT``).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from astropy.io import fits
from astropy.table import Table

import gpal
from gpal.catalogs import RELEASES
from gpal.catalogs.catalog import HDU_NAME, load_catalog
from gpal.catalogs.features import FEATURE_PRESETS
from gpal.catalogs.features.spec import Feature
from gpal.catalogs.releases import Columns, Release

NAME, FILE, PRESET = "TOYCAT", "toycat_v1.fit.gz", "toycat"
#: The layout's own name of each DR4 column it keeps.
RENAMED = {"Source_Name": "SRC_NAME", "CLASS1": "SRC_CLASS", "RAJ2000": "RA", "DEJ2000": "DEC", "GLON": "L",
           "GLAT": "B", "Signif_Avg": "SIGMA", "Flux1000": "FLUX_1_100", "Unc_Flux1000": "FLUX_1_100_ERR",
           "PL_Index": "GAMMA", "Unc_PL_Index": "GAMMA_ERR"}
#: Its `Columns`: a role per kept column, None for every quantity it lacks.
TOY_COLUMNS = Columns(**{
    **{field: None for field in Columns.__dataclass_fields__},
    "name": "SRC_NAME", "class_code": "SRC_CLASS", "ra": "RA", "dec": "DEC", "glon": "L", "glat": "B",
    "significance": "SIGMA", "flux": "FLUX_1_100", "flux_error": "FLUX_1_100_ERR",
    "power_law_index": "GAMMA", "power_law_index_error": "GAMMA_ERR",
})


def _toy_preset(c: Columns) -> tuple[Feature, ...]:
    """Written from the roles, with the fermi_dr4 error rules of the quantities the layout has (a flux by Monte
    Carlo through its transform, bounded below by 0; a missing error the population's; docs/catalogs.md, "Error
    model of each feature")."""
    return (Feature(c.flux, c.flux_error, transform="log10", propagation="monte_carlo", lower_bound=0.0,
                    missing_error="population"),
            Feature(c.significance, transform="log"),
            Feature(c.power_law_index, c.power_law_index_error, missing_error="population"),
            Feature(c.glat, transform="abs_sin_deg", name="abs_sin_GLAT"))


def _write_toy(small_catalog, path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = Table.read(small_catalog, hdu=HDU_NAME)
    toy = table[list(RENAMED)]
    toy.rename_columns(list(RENAMED), list(RENAMED.values()))
    hdu = fits.table_to_hdu(toy)
    hdu.name = HDU_NAME
    hdu.header["CDS-NAME"] = NAME
    hdu.header["VERSION"] = "v1"
    fits.HDUList([fits.PrimaryHDU(), hdu]).writeto(path)
    return toy


@pytest.fixture
def toy_layout(small_catalog, tmp_path):
    """The recipe's steps: the file where the user keeps it, the Columns and the record, the preset; each registered
    and unregistered afterwards."""
    toy = _write_toy(small_catalog, tmp_path / FILE)
    record = Release(NAME, NAME, 1, str(tmp_path / FILE), len(toy), TOY_COLUMNS, PRESET, description="a made-up layout")
    gpal.register_preset(PRESET, _toy_preset(TOY_COLUMNS))
    gpal.register_release(record)
    yield toy
    gpal.unregister_release(NAME)
    gpal.unregister_preset(PRESET)
    assert NAME not in RELEASES and PRESET not in FEATURE_PRESETS


def test_a_new_layout_loads_by_name_and_builds_its_preset_features(toy_layout):
    cat = load_catalog(NAME)
    assert (cat.release, cat.cds_name, cat.n_rows, cat.columns) == (NAME, NAME, len(toy_layout), TOY_COLUMNS)
    data = cat.dataset(classes=["bll", "fsrq", "psr"], features="release")  # the record's preset
    assert data.feature_names == ("log10(FLUX_1_100)", "log(SIGMA)", "GAMMA", "abs_sin_GLAT")
    assert data.n_samples > 0 and np.isfinite(data.X).all() and (data.X_var[:, [1, 3]] == 0).all()
    assert (data.X_var[:, [0, 2]] > 0).all()  # the errors the layout gives reach the features' variances
    # the same sources and numbers as the 4FGL columns they were copied from
    names = [str(n).strip() for n in np.asarray(toy_layout["SRC_NAME"]).astype(str)]
    rows = [names.index(i) for i in data.ids]
    np.testing.assert_allclose(data.X[:, 2], np.asarray(toy_layout["GAMMA"], float)[rows])
    np.testing.assert_allclose(data.X[:, 1], np.log(np.asarray(toy_layout["SIGMA"], float)[rows]))
    # a quantity asked by its role is read from the layout's column
    assert cat.values_of("significance", data.ids[:2]).tolist() == np.asarray(toy_layout["SIGMA"], float)[rows[:2]].tolist()


def test_a_file_of_no_known_family_is_refused_without_its_record(small_catalog, tmp_path):
    _write_toy(small_catalog, tmp_path / FILE)
    with pytest.raises(ValueError, match=r"header CDS-NAME is 'TOYCAT'; expected one of \['3FGL', '4FGL', 'FL16Y'\]"):
        load_catalog(tmp_path / FILE)


def test_a_new_family_comes_after_the_known_ones_and_a_taken_preset_is_refused(toy_layout):
    assert list(RELEASES)[-2:] == ["FL16Y", NAME]  # newest: a family of its own
    assert gpal.catalogs.releases.NEWEST_RELEASE == "FL16Y"  # the main job's default stays the shipped newest
    with pytest.raises(ValueError, match=r"preset 'TOYCAT' is already registered; pass replace=True to replace it"):
        gpal.register_preset("TOYCAT", _toy_preset(TOY_COLUMNS)[:2])
    gpal.register_preset(PRESET, _toy_preset(TOY_COLUMNS)[:2], replace=True)
    assert [f.label for f in FEATURE_PRESETS[PRESET]] == ["log10(FLUX_1_100)", "log(SIGMA)"]
    with pytest.raises(ValueError, match=r"preset 'fermi_dr4' is shipped with gpal and cannot be replaced"):
        gpal.register_preset("fermi_dr4", _toy_preset(TOY_COLUMNS), replace=True)
    with pytest.raises(ValueError, match=r"a preset name must be a non-empty string other than 'release'"):
        gpal.register_preset("release", _toy_preset(TOY_COLUMNS))
    with pytest.raises(TypeError, match=r"features must be a list of Feature objects or specs; got 'PL_Index'"):
        gpal.register_preset("one", "PL_Index")

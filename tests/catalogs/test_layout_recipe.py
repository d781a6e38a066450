"""A catalog of a new layout added the way docs/architecture.md ("A new layout") says: its file, a `Columns`
and its `Release` record, and a preset written from the layout's roles; it then loads by name and builds the
main job's kind of features, with nothing else edited.

The layout is made up: a few columns of the small DR4 file of the tests under other names, in a file whose
header names a family of its own (``TOYCAT``).
"""

from __future__ import annotations

import sys
import types
import warnings

import numpy as np
import pytest
from astropy.io import fits
from astropy.table import Table

from gpal.catalogs import catalog as catalog_module
from gpal.catalogs import releases
from gpal.catalogs.catalog import HDU_NAME, load_catalog
from gpal.catalogs.features import presets
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
    """Written from the roles, with the fermi_dr4 error rules of the quantities the layout has."""
    return (presets._measured(c.flux, c.flux_error, transform="log10", **presets._FLUX_ERRORS),
            Feature(c.significance, transform="log"),
            presets._measured(c.power_law_index, c.power_law_index_error),
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
def toy_layout(small_catalog, tmp_path, monkeypatch):
    """The recipe's steps: the file in the catalog folder (the test's own), the Columns and the record (newest
    last), the preset."""
    folder = tmp_path / "catalogs"
    folder.mkdir()
    toy = _write_toy(small_catalog, folder / FILE)
    record = Release(NAME, NAME, 1, FILE, len(toy), TOY_COLUMNS, PRESET, "TOY J", description="a made-up layout")
    original = releases.RELEASES
    with_toy = types.MappingProxyType({**original, NAME: record})
    monkeypatch.setattr(catalog_module, "CATALOG_DIR", folder)
    for module in list(sys.modules.values()):  # every module that imported the records by name
        if module is not None and module.__name__.startswith("gpal") and getattr(module, "RELEASES", None) is original:
            monkeypatch.setattr(module, "RELEASES", with_toy)
    monkeypatch.setitem(presets.FEATURE_PRESETS, PRESET, _toy_preset(TOY_COLUMNS))
    return toy


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

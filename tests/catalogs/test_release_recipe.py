"""A catalog release of a known layout added the way docs/architecture.md ("A catalog release") says: its file
in the catalog folder and one `Release` record; `load_catalog`, the main job's ``--catalog`` and the later check
then know it, with nothing else edited.

The release is a throwaway 4FGL-DR3 (a data release gpal does not ship): the small DR4 file of the tests with
its ``DataRelease`` column capped at 3, in a catalog folder of the test's own.
"""

from __future__ import annotations

import sys
import types
import warnings

import numpy as np
import pytest
from astropy.io import fits

from gpal.catalogs import catalog as catalog_module
from gpal.catalogs import releases
from gpal.catalogs.catalog import HDU_NAME, load_catalog
from gpal.catalogs.releases import FGL4_COLUMNS, Release

NAME, FILE = "4FGL-DR3", "gll_psc_v31.fit.gz"


def _write_dr3(small_catalog, path):
    """The small DR4 file as a DR3 one: every source's DataRelease at most 3 (the header's keywords kept)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with fits.open(small_catalog) as hdul:
            primary, table = hdul[0].copy(), hdul[HDU_NAME].copy()
            table.data["DataRelease"] = np.minimum(table.data["DataRelease"], 3)
            table.header["VERSION"] = primary.header["VERSION"] = "v31"
            fits.HDUList([primary, table]).writeto(path)
    return len(table.data)


@pytest.fixture
def dr3(small_catalog, tmp_path, monkeypatch):
    """The recipe's two steps: the file in the catalog folder (here the test's, beside links to the shipped
    files) and the record, written between DR2 and DR4 (oldest first), wherever gpal holds the records."""
    folder = tmp_path / "catalogs"
    folder.mkdir()
    for shipped in catalog_module.CATALOG_DIR.glob("*.fit.gz"):
        (folder / shipped.name).symlink_to(shipped)
    rows = _write_dr3(small_catalog, folder / FILE)
    record = Release(NAME, "4FGL", 3, FILE, rows, FGL4_COLUMNS, "fermi_dr4", "4FGL J",
                     links=types.MappingProxyType({"4FGL": "Source_Name", "3FGL": "ASSOC_FGL"}),
                     description="4FGL-DR3, 12 years (a throwaway record of a test)")
    original = releases.RELEASES
    names = list(original)
    at = names.index("4FGL-DR4")
    with_dr3 = types.MappingProxyType({**{n: original[n] for n in names[:at]}, NAME: record,
                                       **{n: original[n] for n in names[at:]}})
    monkeypatch.setattr(catalog_module, "CATALOG_DIR", folder)
    for module in list(sys.modules.values()):  # every module that imported the records by name
        if module is not None and module.__name__.startswith("gpal") and getattr(module, "RELEASES", None) is original:
            monkeypatch.setattr(module, "RELEASES", with_dr3)
    return record


def test_without_its_record_the_file_is_only_a_path(small_catalog, tmp_path):
    _write_dr3(small_catalog, tmp_path / FILE)
    assert load_catalog(tmp_path / FILE).release == NAME  # a data release of a known family is read ...
    with pytest.raises(ValueError, match=r"unknown catalog release '4FGL-DR3'"):  # ... but not known by name
        load_catalog(NAME)


def test_a_release_of_a_known_layout_is_its_file_and_its_record(dr3):
    from gpal.catalog_jobs.later_check import later_release_of
    from gpal.catalog_jobs.selection import CatalogSelection
    from gpal.cli import build_parser

    cat = load_catalog("4fgl-dr3")  # by name, any case
    assert (cat.release, cat.data_release, cat.n_rows, cat.record) == (NAME, 3, dr3.rows, dr3)
    ids = [str(n).strip() for n in cat.table[dr3.columns.name][:3]]
    assert cat.path.name == FILE and np.all(cat.values_of("flux", ids) > 0)  # read through the record's columns
    assert load_catalog(CatalogSelection(catalog=NAME).catalog).release == NAME  # what --catalog reads
    assert releases.NEWEST_RELEASE == "FL16Y" and later_release_of(NAME) == "FL16Y"  # gpal check-later's later
    assert later_release_of("4FGL-DR4") == "FL16Y" and later_release_of("FL16Y") is None
    parser = build_parser()
    verbs = next(a for a in parser._actions if getattr(a, "choices", None) and "check-later" in a.choices).choices
    later = next(a for a in verbs["check-later"]._actions if a.dest == "later")
    assert later.default == "FL16Y" and f"4FGL-DR2, {NAME}, 4FGL-DR4" in later.help  # listed, oldest first
    # the published row count is checked: a file of that name with other rows is warned about
    with pytest.warns(UserWarning, match=rf"{FILE} has {dr3.rows} rows; the published file has {dr3.rows + 1}"):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(catalog_module, "RELEASES", {NAME: Release(**{**dr3.__dict__, "rows": dr3.rows + 1})})
            catalog_module.Catalog.from_file(catalog_module.CATALOG_DIR / FILE)

"""A catalog release of a known layout added the way docs/extending.md says, from a user's own code: its file
where the user keeps it and one `Release` record given to `gpal.register_release`; `load_catalog`, the main job's
``--catalog`` and the later check then know it, with no file of gpal edited and no module attribute patched.

The release is a throwaway 4FGL-DR3 (a data release gpal does not ship): the small DR4 file of the tests with
its ``DataRelease`` column capped at 3, in a folder of the test's own.
"""

from __future__ import annotations

import dataclasses
import types
import warnings
from pathlib import Path

import numpy as np
import pytest
from astropy.io import fits

import gpal
from gpal.catalogs import RELEASES
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


def _record(path, rows):
    return Release(NAME, "4FGL", 3, str(path), rows, FGL4_COLUMNS, "fermi_dr4",
                   links=types.MappingProxyType({"4FGL": "Source_Name", "3FGL": "ASSOC_FGL"}),
                   description="4FGL-DR3, 12 years (a throwaway record of a test)")


@pytest.fixture
def dr3(small_catalog, tmp_path):
    """The recipe's two steps: the file where the user keeps it, and its record registered (placed between DR2 and
    DR4 by its data release); unregistered afterwards."""
    path = tmp_path / FILE
    record = _record(path, _write_dr3(small_catalog, path))
    gpal.register_release(record)
    yield record
    gpal.unregister_release(NAME)
    assert NAME not in RELEASES


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
    assert cat.path == Path(dr3.file)  # the user's own file, not one in gpal's catalog folder
    assert np.all(cat.values_of("flux", ids) > 0)  # read through the record's columns
    assert load_catalog(CatalogSelection(catalog=NAME).catalog).release == NAME  # what --catalog reads
    assert releases.NEWEST_RELEASE == "FL16Y" and later_release_of(NAME) == "FL16Y"  # gpal check-later's later
    assert later_release_of("4FGL-DR4") == "FL16Y" and later_release_of("FL16Y") is None
    parser = build_parser()
    verbs = next(a for a in parser._actions if getattr(a, "choices", None) and "check-later" in a.choices).choices
    later = next(a for a in verbs["check-later"]._actions if a.dest == "later")
    assert later.default == "FL16Y" and f"4FGL-DR2, {NAME}, 4FGL-DR4" in later.help  # listed, oldest first
    # the record's row count is checked: a file of that name with other rows is warned about
    gpal.register_release(_record(dr3.file, dr3.rows + 1), replace=True)
    for _ in range(2):  # said at every load, the second a copy of the first's read
        with pytest.warns(UserWarning, match=rf"{FILE} has {dr3.rows} rows; the published file has {dr3.rows + 1}"):
            load_catalog(NAME)


def test_a_taken_release_is_refused_unless_replacing_is_asked_for(dr3, tmp_path):
    with pytest.raises(ValueError, match=r"release '4fgl-dr3' is already registered as 4FGL-DR3 .*replace=True"):
        gpal.register_release(dataclasses.replace(dr3, name="4fgl-dr3"))
    with pytest.raises(ValueError, match=r"release 'DR3-again' is already registered as 4FGL-DR3 \(same name or same "
                                         r"family and data release\)"):
        gpal.register_release(dataclasses.replace(dr3, name="DR3-again"))
    gpal.register_release(dataclasses.replace(dr3, description="replaced"), replace=True)
    assert RELEASES[NAME].description == "replaced" and list(RELEASES).count(NAME) == 1
    with pytest.raises(ValueError, match=r"would replace the shipped release 4FGL-DR4"):
        gpal.register_release(dataclasses.replace(dr3, name="mine", data_release=4), replace=True)
    with pytest.raises(ValueError, match=r"4FGL-DR4 is a shipped release and cannot be unregistered"):
        gpal.unregister_release("4fgl-dr4")
    with pytest.raises(TypeError, match=r"takes a gpal.catalogs.releases.Release record; got dict"):
        gpal.register_release({"name": "x"})
    with pytest.raises(ValueError, match=r"data_release must be an integer >= 1; got 0"):
        gpal.register_release(dataclasses.replace(dr3, name="x", data_release=0))
    gpal.register_release(dataclasses.replace(dr3, name="lost", data_release=5, file=str(tmp_path / "absent.fit.gz")))
    try:
        with pytest.raises(FileNotFoundError, match=r"the lost catalog should be at .*absent.fit.gz but is missing; "
                                                     r"check the file of its registered record"):
            load_catalog("lost")
    finally:
        gpal.unregister_release("lost")

"""Two judgement calls of issue 63, decided (docs/cli.md, "Catalogs with missing keywords or positions"):
a catalog's release is read from its header CDS-NAME, never guessed from its columns; a table of sources gives both
position frames when the catalog gives one."""

from __future__ import annotations

import numpy as np
from astropy.io import fits

from gpal.catalogs import load_catalog
from gpal.catalogs.targets import target_columns
from gpal.cli import main
from conftest import write_small_catalog


def _without_cds_name(source, path, headers):
    with fits.open(source) as hdul:
        for index in headers:
            del hdul[index].header["CDS-NAME"]
        hdul.writeto(path)
    return path


def test_a_catalog_without_cds_name_in_either_header_is_refused(small_catalog, tmp_path, capsys):
    path = _without_cds_name(small_catalog, tmp_path / "no_cds.fits", (0, 1))
    assert main(["train", "--catalog", str(path), "--classes", "bll,fsrq", "--out", str(tmp_path / "m")]) == 2
    err = capsys.readouterr().err
    assert "no_cds.fits is not a catalog gpal can read: header CDS-NAME is 'missing'" in err
    assert not (tmp_path / "m").exists()


def test_the_primary_headers_cds_name_stands_for_the_tables(small_catalog, tmp_path):
    path = _without_cds_name(small_catalog, tmp_path / "primary_only.fits", (1,))
    catalog = load_catalog(path)
    assert (catalog.release, catalog.cds_name) == ("4FGL-DR4", "4FGL")


def test_galactic_positions_are_derived_where_the_catalog_gives_only_equatorial(small_catalog, tmp_path):
    """Checked against the catalog's own GLON / GLAT (an independent computation: the LAT team's)."""
    full = load_catalog(small_catalog)
    bare = load_catalog(write_small_catalog(tmp_path / "no_galactic.fits", drop_column=("GLON", "GLAT")))
    ids = full.names[:40].tolist()
    want, got = target_columns(full, ids), target_columns(bare, ids)
    assert not got[["GLON", "GLAT"]].isna().any().any()
    np.testing.assert_allclose(got["GLAT"], want["GLAT"], rtol=0, atol=1e-3)
    dlon = (got["GLON"] - want["GLON"] + 180) % 360 - 180
    np.testing.assert_allclose(dlon * np.cos(np.radians(want["GLAT"])), 0, atol=1e-3)
    assert got.drop(columns=["GLON", "GLAT"]).equals(want.drop(columns=["GLON", "GLAT"]))

"""A catalog given as ECSV or VOTable reads as the FITS file it came from; any other table is refused, naming what
gpal reads."""

import warnings

import numpy as np
import pytest
from astropy.table import Table

from gpal.catalogs import load_catalog

ROWS = 200


@pytest.fixture(scope="module")
def dr4_rows():
    reference = load_catalog("4FGL-DR4")
    table = Table.read(reference.path, hdu="LAT_Point_Source_Catalog")[:ROWS]
    table.meta = {"CDS-NAME": "4FGL", "DataRelease": 4, "VERSION": "v35"}
    return reference, table[[name for name in table.colnames if table[name].ndim == 1]]


@pytest.mark.parametrize("suffix, fmt", [(".ecsv", "ascii.ecsv"), (".vot", "votable")])
def test_an_ecsv_or_votable_copy_reads_as_the_fits_rows(tmp_path, dr4_rows, suffix, fmt):
    reference, table = dr4_rows
    path = tmp_path / f"dr4{suffix}"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table.write(path, format=fmt)  # astropy's VOTable keeps no keywords: the release is told by the names
    copy = load_catalog(path)
    assert (copy.release, copy.n_rows) == ("4FGL-DR4", ROWS)
    np.testing.assert_array_equal(copy.names, reference.names[:ROWS])
    np.testing.assert_array_equal(copy.class_codes, reference.class_codes[:ROWS])
    ours = copy.dataset(classes=["bll", "fsrq"])
    theirs = reference.dataset(classes=["bll", "fsrq"])
    rows = np.isin(theirs.ids, ours.ids)
    np.testing.assert_allclose(ours.X, theirs.X[rows])
    np.testing.assert_allclose(ours.X_var, theirs.X_var[rows])


def test_a_csv_is_refused_naming_the_formats_and_how_to_convert(tmp_path, dr4_rows):
    _, table = dr4_rows
    path = tmp_path / "dr4.csv"
    table.write(path, format="csv")
    with pytest.raises(ValueError, match=r"dr4\.csv is a text file .* gpal reads FITS .* ECSV or VOTable .*CDS-NAME"
                                         r".*Table\.read\(path, format='csv'\)"):
        load_catalog(path)


def test_an_ecsv_without_the_release_keyword_or_names_is_refused_naming_the_keyword(tmp_path, dr4_rows):
    _, table = dr4_rows
    table = table.copy()
    table.meta = {}
    table["Source_Name"] = [f"X J{i:04d}" for i in range(ROWS)]
    table.write(tmp_path / "x.ecsv")
    with pytest.raises(ValueError, match="header CDS-NAME is 'X'"):
        load_catalog(tmp_path / "x.ecsv")
    (tmp_path / "y.ecsv").write_text("# %ECSV 1.0\n# ---\n# datatype:\n# - {name: a, datatype: int64}\na\n")
    with pytest.raises(ValueError, match="empty table"):
        load_catalog(tmp_path / "y.ecsv")

"""The ECSV twin written by pandas reads back as astropy's own ECSV writer's file does; a table as written is the
table read back."""

import numpy as np
import pandas as pd
import pytest
from astropy.table import Table

from gpal.files import write_files

from gpal.catalog_jobs.tables import (
    ClassifiedSources, _astropy_table, dated, read_probability_table, rendered_and_read_back, write_ecsv_twin,
    write_probability_table,
)


def _awkward_frame() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame({
        "Source_Name": pd.array(["4FGL J0001.2+4741", "a \"quoted\" name", "", "J2", "x y z"], dtype="string"),
        "CLASS1": ["bll", "", "fsrq", "psr", ""],
        "ASSOC1": ["a", None, "b", "c", "d"],  # astropy masks the None
        "p_bll": [0.1, np.nan, 1.0 / 3.0, 1e-300, rng.random()],
        "RAJ2000": [0.0, -1.5, np.inf, 359.99999999999994, np.nan],
        "n": [1, 2, 3, -4, 5],
        "ood": [True, False, True, False, False],
        "rank": pd.array([1, None, 3, 4, None], dtype="Int64"),
    })


@pytest.mark.parametrize("objects", [False, True], ids=["text", "a pandas string column with NA (astropy: JSON)"])
def test_the_pandas_written_twin_reads_back_as_astropys_own(tmp_path, objects):
    frame = _awkward_frame()
    if objects:  # astropy keeps this column as Python objects and writes it as JSON: its own writer is used
        frame["ASSOC2"] = pd.array(["a", None, "b", "c", "d"], dtype="string")
    meta = {"CATALOG": "FL16Y", "SELECT": "unassociated,bcu", "MINSIG": 4.0}
    twin = write_ecsv_twin(frame, tmp_path / "t.csv", meta)
    reference = tmp_path / "reference.ecsv"
    _astropy_table(frame, meta).write(reference, format="ascii.ecsv")

    assert ('"fsrq"' in twin.read_text()) != objects  # pandas quotes every string; astropy only where needed
    ours, theirs = Table.read(twin, format="ascii.ecsv"), Table.read(reference, format="ascii.ecsv")
    assert ours.colnames == theirs.colnames == list(frame.columns)
    assert dict(ours.meta) == dict(theirs.meta) == meta
    for name in theirs.colnames:
        a, b = ours[name], theirs[name]
        assert (a.dtype, type(a), a.unit, a.description) == (b.dtype, type(b), b.unit, b.description), name
        assert np.array_equal(np.ma.getmaskarray(a), np.ma.getmaskarray(b)), name
        keep = ~np.ma.getmaskarray(b)
        values_a, values_b = np.asarray(a)[keep], np.asarray(b)[keep]
        if values_b.dtype.kind == "f":
            assert np.array_equal(values_a, values_b, equal_nan=True), name  # bit for bit: floats round-trip
        else:
            assert values_a.tolist() == values_b.tolist(), name
    assert np.ma.getmaskarray(ours["p_bll"]).tolist() == [False, True, False, False, False]  # a NaN is a blank cell


def test_a_table_written_and_read_back_holds_what_its_files_read_back(tmp_path):
    """`rendered_and_read_back` gives what `read_probability_table` reads from the CSV and its twin, and the FITS
    file holds the same rows, with no file read: a float32
    catalog column as its printed decimal, the keywords through the twin's YAML header, so a report
    built from the run in memory sees the numbers a report rebuilt from the folder sees."""
    significance = np.array([4.123457, 25.3, np.nan], dtype=np.float32)
    frame = pd.DataFrame({
        "Source_Name": ["FL16Y J0001.2+4741", "FL16Y J0002.0-0001", "x"], "CLASS1": ["", "bcu", ""],
        "p_bll": [0.1, 1.0 / 3.0, 1e-300], "p_fsrq": [0.9, 2.0 / 3.0, 1.0], "predicted_class": ["fsrq", "fsrq", "fsrq"],
        "Signif_Avg": significance, "GLON": [10.0, 200.5, 359.9], "GLAT": [-1.0, 45.0, np.nan],
        "ood": [True, False, False]})
    table = dated(ClassifiedSources(frame, {"CATALOG": "FL16Y", "SELECT": "unassociated,bcu", "NSOURCES": 3,
                                            "TRAINSEL": {"classes": ("bll", "fsrq"), "cut": None}, "MINSIG": 4.0}))
    files, held = rendered_and_read_back(table, ["t.csv", "t.fits"])
    write_files(tmp_path, files)
    back = read_probability_table(tmp_path / "t.csv")

    pd.testing.assert_frame_equal(held.frame, back.frame, check_exact=True)
    assert held.meta == back.meta
    from_fits = read_probability_table(tmp_path / "t.fits")
    assert from_fits.frame["Source_Name"].tolist() == held.frame["Source_Name"].tolist()
    assert from_fits.meta["CATALOG"] == "FL16Y"
    # the same bytes as the table written alone
    alone = write_probability_table(table, tmp_path / "alone" / "t.csv")
    assert alone.read_bytes() == (tmp_path / "t.csv").read_bytes()
    assert alone.with_suffix(".ecsv").read_bytes() == (tmp_path / "t.ecsv").read_bytes()
    # the decimals, not the float32: a cut at 4.123457 keeps the source in both reports
    assert held.frame["Signif_Avg"].iloc[0] == 4.123457 != float(significance[0])

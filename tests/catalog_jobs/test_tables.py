"""The ECSV twin written by pandas reads back as astropy's own ECSV writer's file does; a table as written is the
table read back."""

import io
import json
import warnings

import numpy as np
import pandas as pd
import pytest
from astropy.table import Table

from gpal.files import write_files

from gpal.catalog_jobs.tables import (
    ClassifiedSources, astropy_table, classified_table_files, dated, read_probability_table, rendered_and_read_back, write_ecsv_twin,
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
    astropy_table(frame, meta).write(reference, format="ascii.ecsv")

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


def _journal_frame() -> pd.DataFrame:
    """A table with what MRT has no room for: 1/3 beside 1e-300 (in a column of no stated format, `weight`, and in a
    probability), NaN and inf, booleans, empty and non-ASCII text, a nullable integer with a missing value, units in
    and out of the CDS syntax."""
    return pd.DataFrame({
        "Source_Name": ["4FGL J0001.2+4741", "FL16Y J0002.0-0001", "x"],
        "CLASS1": ["bll", "", ""],
        "p_bll": [0.1, 1.0 / 3.0, 1e-300],
        "weight": [0.1, 1.0 / 3.0, 1e-300],
        "entropy": [0.3, np.nan, 0.0],  # nat: no CDS / VOUnit name, said in the description
        "Flux1000": [1.4796060e-10, np.inf, 6.779151e-11],  # ph cm-2 s-1
        "GLON": [10.0, 200.5, 359.9],
        "GLAT": [-1.0, 45.0, 0.5],
        "ASSOC1": ["Réseau", "", "b"],
        "ood": [True, False, False],
        "rank": pd.array([1, None, 3], dtype="Int64"),
    })


def _as_text(column) -> list[str]:
    return [("" if masked else str(value)) for value, masked in zip(np.ma.getdata(column), np.ma.getmaskarray(column))]


@pytest.mark.parametrize("suffix, read", [(".mrt", {"format": "ascii.mrt"}), (".vot", {"format": "votable"})])
def test_the_journal_and_vo_tables_read_back_with_the_same_rows_units_and_descriptions(tmp_path, suffix, read):
    import re
    from astropy import units as u

    from gpal.catalog_jobs.table_formats import _column_info

    frame = _journal_frame()
    table = ClassifiedSources(frame, {"CATALOG": "FL16Y", "NSOURCES": 3, "TRAINSEL": {"cut": None}})
    path = write_probability_table(table, tmp_path / f"t{suffix}")
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]  # no twin beside it
    back = Table.read(path, **read)  # the MRT through astropy's reader of the journal's format
    assert len(back) == 3 and {"RA", "DEC"} <= set(back.colnames)  # the table as written gains RA, DEC
    for name in frame.columns:
        column, info = back[name], _column_info(name)
        unit, description = info.unit, info.description
        values, masked = np.ma.getdata(column), np.ma.getmaskarray(column)
        if frame[name].dtype.kind == "f":  # NaN and inf as a blank (masked) cell in MRT
            expected = frame[name].to_numpy()
            finite = np.isfinite(expected)
            if suffix == ".mrt" and info.mrt:  # at the column's decimals (0.3333, 1.480e-10); else bit for bit
                expected = np.array([float(info.mrt % value) if np.isfinite(value) else value for value in expected])
            assert np.array_equal(np.asarray(values, dtype=float)[finite], expected[finite]), name
            assert (masked == ~finite).all() if suffix == ".mrt" else True, name
        elif name == "ood":
            assert np.asarray(values).astype(int).tolist() == [1, 0, 0]
        elif name == "rank":
            assert masked.tolist() == [False, True, False] and np.asarray(values)[[0, 2]].tolist() == [1, 3]
        elif name == "ASSOC1":
            assert _as_text(column) == (["R\\xe9seau", "", "b"] if suffix == ".mrt" else ["Réseau", "", "b"])
        else:
            assert _as_text(column) == frame[name].tolist(), name
        # MRT puts the column's [min/max] range and a "?" (may be blank) before the explanation
        said = re.sub(r"^(\[[^\]]*\])?\??\s*", "", " ".join((column.description or "").split()))
        assert said.startswith(description) and (description or name == "weight"), (name, said)  # weight: none
        expected_unit = None if unit in (None, "nat") else u.Unit(unit)
        assert (column.unit and u.Unit(column.unit)) == expected_unit, name


def test_the_votable_keeps_the_keywords_as_info_elements(tmp_path):
    from astropy.io.votable import parse

    meta = {"CATALOG": "FL16Y", "NSOURCES": 3, "TRAINSEL": {"cut": None, "classes": ["bll"]}}
    path = write_probability_table(ClassifiedSources(_journal_frame(), meta), tmp_path / "t.vot")
    infos = {info.name: info for info in parse(path).get_first_table().infos}
    assert infos["CATALOG"].value == "FL16Y" and infos["NSOURCES"].value == "3"
    assert json.loads(infos["TRAINSEL"].value) == {"cut": None, "classes": ["bll"]}
    assert infos["CATALOG"].content == "release of the classified catalog"
    assert "DATE" in infos  # dated when written


def test_an_empty_list_gets_no_mrt_and_says_so(tmp_path):
    table = ClassifiedSources(_journal_frame().iloc[:0], {"CATALOG": "FL16Y"})
    with pytest.warns(UserWarning, match=r"empty\.mrt is not written: empty\.csv has no rows"):
        files = classified_table_files(table, "empty.csv", ["mrt", "votable"])
    assert sorted(files) == ["empty.csv", "empty.ecsv", "empty.vot"]
    with pytest.raises(ValueError, match="MRT holds at least one row"):
        write_probability_table(table, tmp_path / "empty.mrt")


def test_a_classification_table_or_its_twin_that_is_no_regular_file_is_named_not_read(tmp_path):
    """The CSV and its ECSV twin are read within bounds (`gpal.files.read_bytes`): a FIFO in place of either is
    named as one, where an ``open`` would wait on it forever."""
    import os

    write_probability_table(ClassifiedSources(_journal_frame(), {}), tmp_path / "t.csv")
    (tmp_path / "t.ecsv").unlink()
    os.mkfifo(tmp_path / "t.ecsv")
    with pytest.raises(ValueError, match=r"classification table .*t\.ecsv is a FIFO"):
        read_probability_table(tmp_path / "t.csv")
    os.mkfifo(tmp_path / "u.csv")
    with pytest.raises(ValueError, match=r"classification table .*u\.csv is a FIFO"):
        read_probability_table(tmp_path / "u.csv")


def test_a_journal_or_vo_copy_is_not_read_as_a_gpal_table(tmp_path):
    path = write_probability_table(ClassifiedSources(_journal_frame(), {}), tmp_path / "t.mrt")
    with pytest.raises(ValueError, match=r"t\.mrt is a mrt copy of a table.*read the \.csv"):
        read_probability_table(path)
    with pytest.raises(ValueError, match=r"must end in one of .*\(CSV, FITS, AAS MRT or VOTable\); got '\.txt'"):
        write_probability_table(ClassifiedSources(_journal_frame(), {}), tmp_path / "t.txt")


@pytest.mark.parametrize("objects", [False, True], ids=["text", "a pandas string column with NA (astropy: JSON)"])
def test_the_twin_made_block_by_block_is_the_twin_made_at_once(tmp_path, monkeypatch, objects):
    """The ECSV header learns the columns' types in blocks of rows (bounded memory); blocks of 2 rows give the bytes
    one block gives."""
    import gpal.catalog_jobs.table_formats as table_formats

    frame = _awkward_frame()
    if objects:
        frame["ASSOC2"] = pd.array(["a", None, "b", "c", "d"], dtype="string")
    meta = {"CATALOG": "FL16Y", "MINSIG": 4.0}
    once = write_ecsv_twin(frame, tmp_path / "once.csv", meta).read_bytes()
    monkeypatch.setattr(table_formats, "_HEADER_ROWS", 2)
    assert write_ecsv_twin(frame, tmp_path / "blocks.csv", meta).read_bytes() == once


def test_gpal_predict_writes_the_format_its_out_names(main_job_run, small_catalog, tmp_path):
    """``gpal predict --out FILE.mrt`` / ``FILE.vot``: the suffix picks the writer, and the rows are the CSV's."""
    from gpal.cli import main

    base = ["predict", str(main_job_run), "--catalog", str(small_catalog), "--no-progress", "--out"]
    for name in ("t.csv", "t.mrt", "t.vot"):
        assert main([*base, str(tmp_path / name)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.csv", "t.ecsv", "t.mrt", "t.vot"]
    rows = pd.read_csv(tmp_path / "t.csv", float_precision="round_trip")  # the written decimals, exactly
    for name, fmt in (("t.mrt", "ascii.mrt"), ("t.vot", "votable")):
        back = Table.read(tmp_path / name, format=fmt)
        assert back["Source_Name"].tolist() == rows["Source_Name"].tolist(), name
        expected = [float(f"{v:.4f}") for v in rows["p_pulsar"]] if name == "t.mrt" else rows["p_pulsar"].tolist()
        assert np.asarray(back["p_pulsar"], dtype=float).tolist() == expected, name  # MRT: 4 decimals


def _read_quietly(content: str | bytes, fmt: str) -> Table:
    """``Table.read`` of a file's content, any warning of the reader an error."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return Table.read(io.BytesIO(content) if isinstance(content, bytes) else content, format=fmt)


#: The unit an ECSV column's that astropy cannot parse reads back as in MRT (CDS: [Hz] is log10 of Hz).
_MRT_UNITS = {"log10(Hz)": "[Hz]"}


def test_every_mrt_and_votable_reads_back_with_its_twins_columns_units_and_descriptions(main_job_run):
    """``--table-formats`` reaches every list through the ``FORMATS`` keyword (what ``gpal report`` rebuilds from),
    and the classifications and every list read back with the same columns as the ECSV twin: each unit either the
    same or said in the description, each description the twin's (MRT puts a [min/max] range and "?" before it),
    the values the CSV's (in MRT at the column's decimals); astropy's readers warn of nothing, and no line of an
    MRT's header is over 80 characters."""
    import re
    from astropy import units as u

    from gpal.catalog_jobs.follow_up import follow_up_files
    from gpal.catalog_jobs.table_formats import _column_info
    from gpal.catalog_jobs.tables import formats_of

    table = read_probability_table(main_job_run / "classifications.csv")
    assert formats_of(table.meta) == []  # the default run asked for none
    asked = ClassifiedSources(table.frame, {**table.meta, "FORMATS": "votable,mrt"})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the small catalog's empty lists
        files = classified_table_files(asked, "classifications.csv", formats_of(asked.meta))
        files.update(follow_up_files(asked)[0])
        plain = follow_up_files(table)[0]
    assert not any(name.endswith((".mrt", ".vot")) for name in plain)
    twins = sorted(name for name in files if name.endswith(".ecsv"))
    assert "classifications.ecsv" in twins and len(twins) > 5
    checked = 0
    for twin_name in twins:
        twin = Table.read(files[twin_name], format="ascii.ecsv")
        for suffix, fmt in ((".mrt", "ascii.mrt"), (".vot", "votable")):
            name = twin_name.removesuffix(".ecsv") + suffix
            if name not in files:
                assert suffix == ".mrt" and len(twin) == 0, name  # an empty list has no MRT
                continue
            back = _read_quietly(files[name], fmt)
            assert back.colnames == twin.colnames, name
            assert back["Source_Name"].tolist() == twin["Source_Name"].tolist(), name
            for column in [c for c in twin.colnames if c.startswith("p_")] + ["Signif_Avg"]:
                decimals = _column_info(column).mrt if suffix == ".mrt" else "%r"  # VOTable: every digit
                assert back[column].tolist() == [float(decimals % v) for v in twin[column]], (name, column)
            for column in twin.colnames:
                said = re.sub(r"^(\[[^\]]*\])?\??\s*", "", " ".join((back[column].description or "").split()))
                assert said.startswith(twin[column].description), (name, column, said)
                unit = twin[column].unit
                if unit is None:
                    assert back[column].unit is None, (name, column)
                elif isinstance(unit, u.UnrecognizedUnit) and (suffix == ".vot" or str(unit) not in _MRT_UNITS):
                    assert back[column].unit is None and f"(unit: {unit})" in said, (name, column, said)
                else:
                    expected = u.Unit(_MRT_UNITS[str(unit)], format="cds") if str(unit) in _MRT_UNITS else unit
                    assert back[column].unit == expected, (name, column, back[column].unit)
            checked += 1
        if twin_name.removesuffix(".ecsv") + ".mrt" in files:
            text = files[twin_name.removesuffix(".ecsv") + ".mrt"]
            header = text[:text.rindex("\n-----")]
            assert max(len(line) for line in header.splitlines()) <= 80, twin_name
    assert checked > 10


def test_no_explanation_wraps_into_a_phantom_column(tmp_path):
    """Every column `COLUMNS` describes, in one MRT beside a column whose name (1 to 28 characters) moves where
    each explanation wraps: astropy reads back the same columns, each description whole."""
    import re

    from gpal.catalog_jobs.table_formats import _CATALOG_COLUMNS, COLUMNS, mrt_text

    assert set(_CATALOG_COLUMNS) <= set(COLUMNS)  # no format or UCD given to a column no table has
    row = {name: ("a" if info.mrt is None else 1.0) for name, info in COLUMNS.items()}
    for width in range(1, 31, 3):
        frame = pd.DataFrame([{**row, "n" * width: 1}])
        text = mrt_text(frame, {})
        back = _read_quietly(text, "ascii.mrt")
        assert back.colnames == list(frame.columns), width
        for name, info in COLUMNS.items():
            said = re.sub(r"^(\[[^\]]*\])?\??\s*", "", " ".join(back[name].description.split()))
            assert said.startswith(info.description), (width, name, said)
        assert max(len(line) for line in text[:text.rindex("\n-----")].splitlines()) <= 80, width


def test_the_mrt_has_a_title_and_notes_and_leaves_the_authors_to_the_user():
    from gpal.catalog_jobs.table_formats import mrt_text

    meta = {"CATALOG": "FL16Y", "CATVER": "v41", "SELECT": "unassociated,bcu", "CREATOR": "gpal 0.4.0",
            "LIST": "target list: the most probable pulsar sources to follow up", "EXPECTED": 12.5,
            "FLAG3": "flux changed by > 3 sigma with another diffuse model", "TRAINSEL": {"cut": None}}
    text = mrt_text(_journal_frame(), meta)
    lines = text.splitlines()
    assert lines[0] == "Title: Target list: the most probable pulsar sources to follow up of FL16Y v41"
    assert lines[1].strip() == "(unassociated,bcu), by gpal 0.4.0" and lines[2] == "Authors:"
    notes = lines[lines.index("Notes:") + 1:]
    assert notes[:2] == ["Note (1): Flags, Flag_Words: the catalog's analysis flags; bit n set means",
                         "  3: flux changed by > 3 sigma with another diffuse model"]
    assert "  EXPECTED (expected number of class members in this list (sum of its" in notes
    assert '  TRAINSEL (training selection): {"cut": null}' in notes
    back = _read_quietly(text, "ascii.mrt")  # the notes are not read as rows
    assert back["Source_Name"].tolist() == _journal_frame()["Source_Name"].tolist()


def test_the_votable_gives_positions_and_identifiers_their_ucds_and_coordinate_systems(tmp_path):
    """TOPCAT and Aladin find a table's positions by UCD and COOSYS: astropy's parser sees both, and checks each
    UCD against the controlled vocabulary."""
    from astropy.io.votable import parse
    from astropy.io.votable.ucd import check_ucd

    frame = _journal_frame().assign(LAC_counterpart_RA=[1.0, np.nan, 2.0], LAC_counterpart_DEC=[3.0, np.nan, 4.0],
                                    Conf_95_SemiMajor=[0.1, 0.2, 0.3], Conf_95_SemiMinor=[0.05, 0.1, 0.2],
                                    Conf_95_PosAng=[10.0, 20.0, 30.0], RA_hms=["00h00m00s"] * 3,
                                    DEC_dms=["+00d00m00s"] * 3)
    path = write_probability_table(ClassifiedSources(frame, {}), tmp_path / "t.vot")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        votable = parse(path)
    fields = {field.name: field for field in votable.get_first_table().fields}
    ucds = {name: field.ucd for name, field in fields.items() if field.ucd}
    assert ucds == {"Source_Name": "meta.id;meta.main", "CLASS1": "src.class", "p_bll": "stat.probability",
                    "Flux1000": "phot.flux;em.gamma", "GLON": "pos.galactic.lon", "GLAT": "pos.galactic.lat",
                    "RA": "pos.eq.ra;meta.main", "DEC": "pos.eq.dec;meta.main", "ASSOC1": "meta.id.assoc",
                    "LAC_counterpart_RA": "pos.eq.ra", "LAC_counterpart_DEC": "pos.eq.dec",
                    "Conf_95_SemiMajor": "phys.angSize.smajAxis;pos.errorEllipse",
                    "Conf_95_SemiMinor": "phys.angSize.sminAxis;pos.errorEllipse",
                    "Conf_95_PosAng": "pos.posAng;pos.errorEllipse", "RA_hms": "pos.eq.ra", "DEC_dms": "pos.eq.dec"}
    assert all(check_ucd(ucd, check_controlled_vocabulary=True) for ucd in ucds.values())
    systems = {system.ID: system for system in votable.resources[0].coordinate_systems}
    assert (systems["ICRS"].system, systems["ICRS"].equinox) == ("ICRS", "J2000")
    assert systems["galactic"].system == "galactic"
    refs = {name: field.ref for name, field in fields.items() if field.ref}
    assert refs == {"RA": "ICRS", "DEC": "ICRS", "LAC_counterpart_RA": "ICRS", "LAC_counterpart_DEC": "ICRS",
                    "RA_hms": "ICRS", "DEC_dms": "ICRS",
                    "GLON": "galactic", "GLAT": "galactic"}


def test_a_unit_a_format_cannot_write_is_named_in_its_description(tmp_path):
    """MeV and log10(Hz) kept where the format names them (MRT: [Hz]); the nat, and log10(Hz) outside MRT, said in
    the column's description instead of dropped."""
    from astropy import units as u
    from astropy.io import fits

    frame = _journal_frame().assign(Peak_Energy=[100.0, 200.0, np.nan], LAC_log_nu_syn=[13.25, np.nan, 15.5])
    table = ClassifiedSources(frame.drop(columns="ASSOC1"), {})  # FITS holds ASCII text only
    mrt = _read_quietly(classified_table_files(table, "t.mrt")["t.mrt"], "ascii.mrt")
    vot = _read_quietly(classified_table_files(table, "t.vot")["t.vot"], "votable")
    assert mrt["Peak_Energy"].unit == vot["Peak_Energy"].unit == u.MeV
    assert mrt["LAC_log_nu_syn"].unit == u.dex(u.Hz) and mrt["LAC_log_nu_syn"][0] == 13.25
    assert vot["LAC_log_nu_syn"].unit is None and "(unit: log10(Hz))" in vot["LAC_log_nu_syn"].description
    for back in (mrt, vot):
        assert back["entropy"].unit is None and back["entropy"].description.endswith("(unit: nat)")
    header = fits.getheader(write_probability_table(table, tmp_path / "t.fits"), "CLASSIFICATIONS")
    names = [header[f"TTYPE{i}"] for i in range(1, header["TFIELDS"] + 1)]
    units = {name: header.get(f"TUNIT{i}") for i, name in enumerate(names, start=1)}
    assert units["Peak_Energy"] == "MeV" and units["GLON"] == "deg" and units["entropy"] is None
    assert header[f"TCOMM{names.index('LAC_log_nu_syn') + 1}"].endswith("(unit: log10(Hz))")


def test_published_tables_name_files_not_this_machines_paths_and_the_votable_header_reads_back(tmp_path):
    """An MRT sent to a journal and a VOTable put on the VO say which model and pulsar catalogue were used by file
    name; astropy's Table.read keeps the VOTable's name and description, which say where the keywords are."""
    from astropy.io.votable import parse

    meta = {"CATALOG": "FL16Y", "LIST": "pulsar candidates", "MODEL": str(tmp_path / "run" / "model"),
            "KNOWNFROM": f"CLASS2, 4FGL-DR4, ATNF pulsars ({tmp_path / 'psrcat_1.64.db.gz'}, version 1.64)"}
    frame = _journal_frame()
    mrt = classified_table_files(ClassifiedSources(frame, meta), "t.mrt")["t.mrt"]
    mrt = mrt if isinstance(mrt, str) else mrt.decode()
    path = write_probability_table(ClassifiedSources(frame, meta), tmp_path / "t.vot")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        infos = {info.name: info.value for info in parse(path).get_first_table().infos}
        header = Table.read(path).meta
    for text in (mrt, path.read_text()):
        assert str(tmp_path) not in text
    assert "MODEL (trained-model folder): model" in mrt and "(psrcat_1.64.db.gz, version 1.64)" in mrt
    assert infos["MODEL"] == "model" and "(psrcat_1.64.db.gz, version 1.64)" in infos["KNOWNFROM"]
    assert header["name"] == "pulsar_candidates"
    assert header["description"].startswith("Pulsar candidates of FL16Y") and "INFO" in header["description"]


def test_an_exponent_column_of_the_mrt_has_no_rounded_limits():
    """astropy rounds the limits of a column of fluxes (1e-12 .. 1e-10) to "[0.0/0.01]"; they are left out, while
    a fixed-decimal column keeps its limits."""
    frame = _journal_frame().assign(Flux1000=[1.4796060e-12, np.nan, 6.779151e-11])
    mrt = classified_table_files(ClassifiedSources(frame, {}), "t.mrt")["t.mrt"]
    mrt = mrt if isinstance(mrt, str) else mrt.decode()
    flux = next(line for line in mrt.splitlines() if " Flux1000 " in line)
    assert "[" not in flux and flux.split("Flux1000")[1].strip().startswith("? photon flux")
    probability = next(line for line in mrt.splitlines() if " p_bll " in line)
    assert "[0.0/0.34]" in probability
    back = _read_quietly(mrt, "ascii.mrt")
    np.testing.assert_allclose(back["Flux1000"].filled(np.nan), [1.4796e-12, np.nan, 6.7792e-11], rtol=1e-3)

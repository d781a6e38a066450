"""What is already known about each source: the ATNF catalogue's parser on small texts (and bad ones), and on the
real FL16Y the known objects a user found in the candidate lists (issue 70), with the counts of each route printed
for the record."""

import gzip
import hashlib
import warnings

import numpy as np
import pandas as pd
import pytest

from conftest import write_small_catalog
from gpal.catalogs import load_catalog
from gpal.catalogs.known_sources import KNOWN_COLUMNS, ROUTES, KnownIndex, known_about
from gpal.catalogs.psrcat import PSRCAT_COLUMNS, PSRCAT_FILE, catalogue_words, read_psrcat, sexagesimal_degrees

SMALL_PSRCAT = """#CATALOGUE 9.99
#
PSRJ     J1722-3207                    jbv+19
RAJ      17:22:02.959             2    jbv+19
DECJ     -32:07:45.3              2    jbv+19
P0       0.477                         x
TYPE     HE[x]
@-----------------------------------------------------------------
PSRJ     J0030+0451                    lzb+00
PSRB     B0027+04
ELONG    8.910354709              9    abb+18
ELAT     1.4456968                4    abb+18
F0       205.53069927493          1    abb+18
@-----------------------------------------------------------------
PSRJ     J0033+57                      hrk+08
RAJ      00:33                         hrk+08
DECJ     +57                           hrk+08
@-----------------------------------------------------------------
PSRJ     J1653-45
RAJ      16:53.9
DECJ     -00:30
@-----------------------------------------------------------------
"""


@pytest.fixture(scope="session")
def psrcat():
    """The shipped ATNF catalogue, parsed once."""
    return read_psrcat()


@pytest.fixture(scope="module")
def fl16y(psrcat):
    """known_about of every FL16Y source, the other shipped releases and the ATNF catalogue checked."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return known_about(load_catalog("FL16Y"), pulsars=psrcat)


# ------------------------------------------------------------------ the parser
@pytest.mark.parametrize("zipped", [False, True])
def test_the_parser_reads_positions_in_every_form_and_the_period(tmp_path, zipped):
    path = tmp_path / ("psrcat.db.gz" if zipped else "psrcat.db")
    path.write_bytes(gzip.compress(SMALL_PSRCAT.encode()) if zipped else SMALL_PSRCAT.encode())
    table = read_psrcat(path)
    assert tuple(table.columns) == PSRCAT_COLUMNS
    assert table.attrs == {"file": str(path), "version": "9.99"}
    assert table["PSRJ"].tolist() == ["J1722-3207", "J0030+0451", "J0033+57", "J1653-45"]
    assert table["PSRB"].tolist() == ["", "B0027+04", "", ""]
    ra, dec = table["RAJ2000"].to_numpy(), table["DEJ2000"].to_numpy()
    np.testing.assert_allclose([ra[0], dec[0]], [(17 + 22 / 60 + 2.959 / 3600) * 15, -(32 + 7 / 60 + 45.3 / 3600)])
    # ecliptic -> equatorial: PSR J0030+0451's published J2000 position, RAJ 00:30:27.4277 DECJ +04:51:39.707
    np.testing.assert_allclose([ra[1], dec[1]], [(30 / 60 + 27.4277 / 3600) * 15, 4 + 51 / 60 + 39.707 / 3600],
                               atol=2e-4)
    np.testing.assert_allclose([ra[2], dec[2], ra[3], dec[3]], [33 / 60 * 15, 57.0, (16 + 53.9 / 60) * 15, -0.5])
    np.testing.assert_allclose(table["P0"].to_numpy()[:2], [0.477, 1 / 205.53069927493])
    assert np.isnan(table["P0"][2])
    assert table["TYPE"][0] == "HE[x]"


def test_the_shipped_catalogue_is_version_1_64_with_every_pulsar_placed(psrcat):
    # the checksum catalogs/README.md gives (the shared folder's file, gzipped unchanged)
    assert hashlib.sha256(PSRCAT_FILE.read_bytes()).hexdigest() == \
        "fa65c1c2d8ee7c26c43a9f6dd821f38d875b1598abea1fe21ccce92ccca48a70"
    assert len(psrcat) == 2872 and psrcat.attrs["version"] == "1.64"
    assert psrcat.attrs["file"] == str(PSRCAT_FILE)
    assert np.isfinite(psrcat[["RAJ2000", "DEJ2000"]].to_numpy()).all()
    assert psrcat["RAJ2000"].between(0, 360).all() and psrcat["DEJ2000"].between(-90, 90).all()
    assert psrcat["PSRJ"].is_unique


@pytest.mark.parametrize("text, hours, expected", [
    ("17:22:02.959", True, 260.5123291666667), ("-00:30:00", False, -0.5), ("+57", False, 57.0),
    ("16:53.9", True, 253.475), ("00:00:00", True, 0.0)])
def test_sexagesimal_angles(text, hours, expected):
    assert sexagesimal_degrees(text, hours) == pytest.approx(expected)


@pytest.mark.parametrize("text, hours", [("25:00:00", True), ("-01:00:00", True), ("12:61:00", True),
                                          ("+91:00:00", False), ("12.5:30", False), ("abc", False), ("", True)])
def test_sexagesimal_angles_that_do_not_read(text, hours):
    with pytest.raises(ValueError, match=repr(text).replace("+", r"\+").replace(".", r"\.")):
        sexagesimal_degrees(text, hours)


@pytest.mark.parametrize("text, words", [
    ("", "holds no pulsar entries"),
    ("# only a comment\n", "holds no pulsar entries"),
    ("PSRJ J0001+00\nRAJ 00:01:00\n@---\n", r"line 1 .*J0001\+00.*neither RAJ and DECJ nor ELONG and ELAT"),
    ("PSRJ J0001+00\nRAJ 25:01:00\nDECJ +00\n@---\n", r"position does not read .*'25:01:00'"),
    ("RAJ 00:01:00\nDECJ +00\n@---\n", "has no PSRJ name"),
    ("PSRJ J0001+00\nthis is not a psrcat line\n", r"line 2: 'this is not a psrcat line' is not a 'KEY value' line"),
    ("PSRJ\n", "line 1: 'PSRJ' is not a 'KEY value' line"),
])
def test_a_malformed_catalogue_is_refused_naming_the_file_and_what_was_expected(tmp_path, text, words):
    path = tmp_path / "psrcat.db"
    path.write_text(text)
    with pytest.raises(ValueError, match=words) as caught:
        read_psrcat(path)
    assert str(path) in str(caught.value) and "psrcat.db" in str(caught.value)
    if "KEY value" not in words and "PSRJ name" not in words:
        assert "expected the ATNF Pulsar Catalogue's psrcat.db text" in str(caught.value)


def test_a_missing_or_binary_catalogue_is_refused_by_name(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"ATNF pulsar catalogue \(psrcat.db\) not found: .*nowhere.db"):
        read_psrcat(tmp_path / "nowhere.db")
    binary = tmp_path / "psrcat.bin"
    binary.write_bytes(b"\x00\x01" * 100)
    with pytest.raises(ValueError, match="psrcat.bin holds binary data"):
        read_psrcat(binary)
    with pytest.raises(FileNotFoundError, match="nowhere.db"):
        known_about("FL16Y", ["FL16Y J1721.9-3205"], pulsars=tmp_path / "nowhere.db", releases=[])


# ------------------------------------------------------------------ the real FL16Y
def _row(frame, name):
    return frame.set_index("Source_Name").loc[name]


@pytest.mark.parametrize("name, code, route, words", [
    # the pulsars of issue 70's candidates_pulsar.csv: FL16Y's own CLASS2, or 4FGL-DR4's class
    ("FL16Y J1929.0+1727", "psr", "CLASS2", "FL16Y CLASS2 psr (PSR J1928+1725)"),
    ("FL16Y J1855.2+0457", "psr", "CLASS2", "PSR J1855+0455g"),
    ("FL16Y J1919.0+2353", "msp", "CLASS2", "PSR J1919+23"),
    ("FL16Y J1711.9-1921", "msp", "CLASS2", "PSR J1712-1920"),
    ("FL16Y J1721.9-3205", "psr", "CLASS2", "PSR J1722-3207"),
    ("FL16Y J1759.5-3103", "psr", "CLASS2", "PSR J1759-3107"),
    ("FL16Y J1814.4+3134", "msp", "release", "4FGL-DR4 class msp (PSR J1814+31; 4FGL J1814.4+3132)"),
    ("FL16Y J1947.6-1121", "msp", "CLASS2", "PSR J1947-11"),
    # the globular clusters: 4FGL-DR4 associates the source
    ("FL16Y J1737.5-2354", "glc", "release", "4FGL-DR4 class glc (NGC 6401; 4FGL J1737.6-2350)"),
    ("FL16Y J1837.0-2347", "glc", "release", "4FGL-DR4 class glc (NGC 6656; 4FGL J1836.8-2354)"),
    # the blazars and the AGN
    ("FL16Y J0833.4-0458", "fsrq", "release", "PMN J0833-0454"),
    ("FL16Y J1824.4-3239", "agn", "release", "PKS 1821-327"),
    ("FL16Y J0324.9+3412", "nlsy1", "release", "1H 0323+342"),
    ("FL16Y J0809.1+4052", "fsrq", "release", "S4 0805+41"),
    # a known pulsar that no LAT release associates: found in the ATNF catalogue
    ("FL16Y J1835.2-0517", "psr", "ATNF", "ATNF pulsar PSR J1835-0522 0.080 deg inside the 95% ellipse"),
])
def test_the_known_objects_of_the_candidate_lists_come_out_known(fl16y, name, code, route, words):
    row = _row(fl16y, name)
    assert row["CLASS1"] == ""
    assert (row["known_class"], row["known_route"]) == (code, route)
    assert words in row["known_reason"]


def test_the_frame_one_row_per_name_in_order_with_its_columns_and_record(fl16y, psrcat):
    names = ["FL16Y J1837.0-2347", "FL16Y J1929.0+1727"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        small = known_about("FL16Y", names, pulsars=psrcat, releases=["4FGL-DR4"])
    assert small["Source_Name"].tolist() == names
    assert tuple(small.columns[:len(KNOWN_COLUMNS)]) == KNOWN_COLUMNS
    assert small["known_reason"].tolist() == [_row(fl16y, n)["known_reason"] for n in names]
    assert small.attrs["releases"] == ["4FGL-DR4"] and small.attrs["pulsar_catalogue"]["version"] == "1.64"
    assert len(fl16y) == 7224 and set(fl16y["known_route"]) <= {"", *ROUTES}
    assert fl16y.attrs["releases"] == ["4FGL-DR4", "4FGL-DR2", "4FGL", "3FGL"]
    with pytest.raises(ValueError, match=r"not in FL16Y \(gll_psc_v41.fit.gz\): 'FL16Y J9999\.9\+9999'; expected names .* such as 'FL16Y J"):
        known_about("FL16Y", ["FL16Y J9999.9+9999"], pulsars=None, releases=[])


def test_an_index_asked_a_block_at_a_time_gives_the_whole_frame(fl16y, psrcat):
    """`KnownIndex` made once and asked about FL16Y's sources 1000 at a time, in reverse order, gives each of them
    the row `known_about` gave it over the whole catalog; a name the catalog does not hold is refused by name."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        index = KnownIndex(load_catalog("FL16Y"), pulsars=psrcat)
    names = fl16y["Source_Name"].tolist()[::-1]
    parts = [index.about(names[start:start + 1000]) for start in range(0, len(names), 1000)]
    assert len(parts) == 8
    blocks = pd.concat(parts, ignore_index=True)
    pd.testing.assert_frame_equal(blocks, fl16y.iloc[::-1].reset_index(drop=True), check_exact=True)
    assert parts[0].attrs["releases"] == fl16y.attrs["releases"]
    with pytest.raises(ValueError, match=r"2 source name\(s\) are not in FL16Y .*'FL16Y J0000\.0\+0000', 'x'"):
        index.about([names[0], "FL16Y J0000.0+0000", "x"])


def test_the_association_probabilities_are_tied_to_their_association(fl16y):
    row = _row(fl16y, "FL16Y J1919.0+2353")  # ASSOC1 empty, ASSOC_PROB_BAY 0.70: ASSOC2's
    assert (row["ASSOC1"], row["ASSOC2"]) == ("", "PSR J1919+23")
    assert np.isnan(row["ASSOC1_PROB_BAY"]) and row["ASSOC2_PROB_BAY"] == pytest.approx(0.70, abs=0.005)
    associated = fl16y[fl16y["ASSOC1"] != ""]
    assert associated["ASSOC2_PROB_BAY"].isna().all() and associated["ASSOC2_PROB_LR"].isna().all()
    none = fl16y[(fl16y["ASSOC1"] == "") & (fl16y["ASSOC2"] == "")]
    assert none[["ASSOC1_PROB_BAY", "ASSOC2_PROB_BAY", "ASSOC1_PROB_LR", "ASSOC2_PROB_LR"]].isna().all().all()
    assert any("15 source(s) give an association probability but name no association" in n
               for n in fl16y.attrs["notes"])


def test_a_bcu_keeps_its_association_against_a_pulsar_in_its_ellipse(fl16y):
    row = _row(fl16y, "FL16Y J1644.5-4604")
    assert row["CLASS1"] == "bcu" and row["ATNF_pulsars"] == "PSR J1644-4559"
    assert (row["known_class"], row["known_route"]) == ("bcu", "CLASS1")


def test_counts_of_the_unassociated_and_bcu_sources_known_by_each_route(fl16y):
    pool = fl16y[fl16y["CLASS1"].isin(["", "bcu"])]
    counts = {}
    for group, rows in pool.groupby(pool["CLASS1"].replace("", "unassociated")):
        counts[group] = {"sources": len(rows), **{route: int((rows["known_route"] == route).sum()) for route in ROUTES},
                         "ATNF pulsar inside": int((rows["ATNF_n"] > 0).sum()),
                         "counterpart of another source inside": int((rows["neighbour_class"] != "").sum())}
        print(group, counts[group], "known classes:",
              rows.loc[rows["known_route"].isin(ROUTES[1:]), "known_class"].value_counts().to_dict())
    unassociated = counts["unassociated"]
    assert unassociated["sources"] == 2114 and counts["bcu"]["sources"] == 1513
    assert unassociated["CLASS2"] >= 270 and unassociated["release"] >= 140 and unassociated["ATNF"] >= 5
    assert counts["bcu"]["CLASS1"] == 1513  # no earlier release refines FL16Y's own bcu


# ------------------------------------------------------------------ fallbacks
def test_a_catalog_without_class2_probabilities_or_counterparts_gets_empty_columns_and_notes():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        frame = known_about("3FGL", pulsars=None, releases=[])
    assert (frame["CLASS2"] == "").all() and frame["ASSOC1_PROB_BAY"].isna().all()
    assert (frame["neighbour_sources"] == "").all() and "ATNF_pulsars" not in frame
    notes = " | ".join(frame.attrs["notes"])
    for words in ("3FGL has no CLASS2 column: CLASS2 is empty (its ASSOC2 is given, without a class)",
                  "no ASSOC_PROB_BAY column", "no counterpart positions (RA_Counterpart / DEC_Counterpart)",
                  "no pulsar catalogue was checked (pulsars=None)"):
        assert words in notes
    assert frame.attrs["pulsar_catalogue"] is None
    assert (frame["known_route"].isin(["", "CLASS1"])).all()


def test_a_file_without_the_link_and_association_columns_is_read_with_what_it_has(tmp_path, psrcat):
    path = write_small_catalog(tmp_path / "small.fits", drop_column=("CLASS2", "ASSOC2", "ASSOC_FGL", "RA_Counterpart",
                                                                     "Conf_95_PosAng"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        frame = known_about(path, pulsars=psrcat, releases=["3FGL", "FL16Y"])
    notes = " | ".join(frame.attrs["notes"])
    assert "3FGL: not linked to 4FGL-DR4" in notes and "'ASSOC_FGL'" in notes
    assert "no CLASS2 column" in notes and "no ASSOC2 column" in notes and "no counterpart positions" in notes
    assert "no 95% error ellipse" in notes and (frame["ATNF_n"] == 0).all()
    assert frame.attrs["releases"] == ["FL16Y"] and "3FGL_class" not in frame
    assert (frame["FL16Y_name"] != "").mean() > 0.9  # FL16Y names these DR4 sources in its own ASSOC_FGL


def test_a_users_own_pulsar_list_is_read_as_the_catalogue_is(tmp_path):
    """Discoveries newer than the shipped catalogue, as a CSV of name, ra, dec (degrees or sexagesimal) and p0."""
    path = tmp_path / "mine.csv"
    path.write_text("# TRAPUM and our own\nName, RA, Dec, P0\nJ1828+3231, 18:28:48.0, +32:31:00, 0.0025\n"
                    "J0002-5156, 0.6, -51.93,\n")
    table = read_psrcat(path)
    assert table["PSRJ"].tolist() == ["J1828+3231", "J0002-5156"]
    np.testing.assert_allclose(table["RAJ2000"], [277.2, 0.6])
    np.testing.assert_allclose(table["DEJ2000"], [32 + 31 / 60, -51.93])
    assert table["P0"].iloc[0] == 0.0025 and np.isnan(table["P0"].iloc[1])
    assert table.attrs["version"] == "a user's list of 2 pulsars"
    known = known_about("FL16Y", ["FL16Y J1828.8+3231"], pulsars=path, releases=[])
    assert known.loc[0, "ATNF_pulsars"].startswith("PSR J1828+3231")


def test_what_vetted_a_list_is_said_by_version_year_and_file_name_never_a_local_path(tmp_path):
    shipped = read_psrcat()
    assert catalogue_words(shipped.attrs["file"], shipped.attrs["version"]) == (
        "ATNF Pulsar Catalogue 1.64 (2021), psrcat_1.64.db.gz")
    assert catalogue_words(tmp_path / "psrcat.db", "2.6.1") == "ATNF Pulsar Catalogue 2.6.1, the user's psrcat.db"
    assert catalogue_words(tmp_path / "mine.csv", "a user's list of 2 pulsars") == "a user's list of 2 pulsars, mine.csv"


@pytest.mark.parametrize("text, words", [
    ("name,ra\nJ1,1.0\n", r"has no dec column \(its columns: \['name', 'ra'\]\); expected a CSV of known pulsars"),
    ("name,ra,dec\n", "holds no pulsars"),
    ("name,ra,dec\nJ1,400,0\n", r"line 2: ra '400' is not an angle in range"),
    ("name,ra,dec\nJ1,1,abc\n", "line 2: could not convert"),
])
def test_a_malformed_pulsar_list_is_refused_naming_it_and_the_columns(tmp_path, text, words):
    path = tmp_path / "mine.csv"
    path.write_text(text)
    with pytest.raises(ValueError, match=words):
        read_psrcat(path)

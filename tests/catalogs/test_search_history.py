"""A source's search history: the unbroken run of releases that list it without a class."""

import numpy as np
import pandas as pd
import pytest

from gpal.catalogs import load_catalog
from gpal.catalogs.known_sources import known_about
from gpal.catalogs.search_history import HISTORY_COLUMNS, search_history

EARLIER = ("3FGL", "4FGL", "4FGL-DR2", "4FGL-DR4")


def _known(rows):
    """A known-sources frame from (CLASS1, {release: (name, class)}) rows."""
    frame = {"CLASS1": [r[0] for r in rows], "CLASS2": [""] * len(rows)}
    for release in EARLIER:
        frame[f"{release}_name"] = [r[1].get(release, ("", ""))[0] for r in rows]
        frame[f"{release}_class"] = [r[1].get(release, ("", ""))[1] for r in rows]
    return pd.DataFrame(frame)


def test_the_run_ends_at_a_release_that_classes_or_misses_the_source():
    known = _known([
        ("", {r: (f"{r} J1", "") for r in EARLIER}),                        # unassociated in every release
        ("", {"4FGL-DR4": ("D", ""), "4FGL-DR2": ("C", "bcu"), "4FGL": ("B", "")}),  # classed in DR2: the run stops
        ("", {"4FGL-DR4": ("D", ""), "4FGL": ("B", "")}),                     # DR2 does not list it: stops
        ("", {}),                                                            # new in the catalog's release
        ("psr", {r: (f"{r} J2", "") for r in EARLIER}),                     # has a class: no history
    ])
    history = search_history(known, "FL16Y")
    assert list(history.columns) == list(HISTORY_COLUMNS)
    assert history["first_unassociated"].tolist() == ["3FGL", "4FGL-DR4", "4FGL-DR4", "FL16Y", ""]
    assert history["unassociated_releases"].tolist() == [5, 2, 2, 1, 0]
    # 3FGL 2015, 4FGL-DR4 2023, FL16Y 2025
    np.testing.assert_array_equal(history["unassociated_years"].to_numpy(), [10, 2, 2, 0, np.nan])
    assert history.attrs["checked"] == list(EARLIER)


def test_a_counterpart_of_unknown_type_is_no_class_in_the_catalog_and_in_earlier_releases():
    known = _known([
        ("", {"4FGL-DR4": ("D", "unk"), "4FGL-DR2": ("C", ""), "4FGL": ("B", "bll")}),  # unk in DR4 continues the run
        ("", {"4FGL-DR4": ("D", "UNK "), "4FGL-DR2": ("C", "psr")}),                 # case and spaces as catalogs write
    ])
    known.loc[0, "CLASS2"] = "unk"  # the catalog's own release: associated with a counterpart of unknown type
    history = search_history(known, "FL16Y")
    assert history["first_unassociated"].tolist() == ["4FGL-DR2", "4FGL-DR4"]
    assert history["unassociated_releases"].tolist() == [3, 2]


def test_a_release_whose_columns_are_absent_is_not_checked_and_the_record_says_so():
    known = _known([("", {r: ("x", "") for r in EARLIER})]).drop(columns=["4FGL_name", "4FGL_class"])
    history = search_history(known, "FL16Y")
    assert history["first_unassociated"].tolist() == ["4FGL-DR2"]  # 4FGL unread ends the run
    assert "4FGL" not in history.attrs["checked"]


def test_a_frame_without_the_class_columns_is_refused_naming_them():
    with pytest.raises(ValueError, match="no CLASS1, CLASS2 column"):
        search_history(pd.DataFrame({"x": [1]}), "FL16Y")
    with pytest.raises(ValueError, match=r"shape \(2,\); expected one flag per source \(1,\)"):
        search_history(pd.DataFrame({"x": [1]}), "FL16Y", unassociated=np.array([True, False]))


@pytest.mark.parametrize("name, first, names", [
    # followed by hand through each release's file: unassociated in each, linked by ASSOC_FGL / the kept 4FGL name
    ("FL16Y J0003.6+3058", "3FGL", {"3FGL": "3FGL J0003.4+3100", "4FGL": "4FGL J0003.6+3059",
                                    "4FGL-DR2": "4FGL J0003.6+3059", "4FGL-DR4": "4FGL J0003.6+3059"}),
    ("FL16Y J0000.5+0747", "4FGL-DR2", {"4FGL-DR2": "4FGL J0000.5+0743", "4FGL-DR4": "4FGL J0000.5+0743"}),
])
def test_the_shipped_releases_give_the_history_their_own_rows_give(name, first, names):
    known = known_about("FL16Y", [name], pulsars=None, releases=list(EARLIER))
    history = search_history(known, "FL16Y")
    assert history.loc[0, "first_unassociated"] == first
    for release, source in names.items():  # the independent reading: each release's own CLASS1 of its own row
        catalog = load_catalog(release)
        row = list(catalog.names).index(source)
        assert catalog.class_codes[row] == "", (release, source)
    assert history.loc[0, "unassociated_releases"] == len(names) + 1


def test_a_bcu_an_earlier_release_and_4lac_type_as_a_bl_lac_says_so():
    """FL16Y J2228.7-1636 is a bcu in FL16Y, a BL Lac in 4FGL-DR4 and in 4LAC-DR3 (z = 0.525): what the blazar list
    marks as already typed."""
    from gpal.catalog_jobs.prediction import known_columns
    from gpal.catalogs.lac import lac_table_columns

    catalog = load_catalog("FL16Y")
    known, _ = known_columns(catalog, ["FL16Y J2228.7-1636"])
    lac, _ = lac_table_columns(catalog, ["FL16Y J2228.7-1636"])
    assert known.loc[0, "typed_before"] == "4FGL-DR4 bll" and known.loc[0, "first_unassociated"] == ""
    assert lac.loc[0, "LAC_class"] == "bll" and abs(lac.loc[0, "LAC_Redshift"] - 0.525) < 1e-6


def test_a_published_list_names_a_source_by_its_name_in_the_list_s_release():
    from gpal.catalogs.search_history import named_by

    published = pd.DataFrame({"Source_Name": ["4FGL J1", "4FGL J9", "FL16Y J3"], "release": ["4FGL-DR2", "4FGL-DR2", "FL16Y"],
                              "named_by": ["A 2021", "A 2021", "B 2026"]})
    known = _known([("", {"4FGL-DR2": ("4FGL J1", "")}), ("", {"4FGL-DR2": ("4FGL J2", "")}), ("", {})])
    words = named_by(known, ["FL16Y J1", "FL16Y J2", "FL16Y J3"], "FL16Y", published)
    assert words.tolist() == ["A 2021", "", "B 2026"]  # DR2's name, none, the catalog's own
    assert named_by(known.drop(columns="4FGL-DR2_name"), ["x", "y", "z"], "FL16Y", published).tolist() == [""] * 3


def test_the_shipped_published_list_names_dr2_pulsar_candidates_of_its_paper():
    from gpal.catalogs.search_history import named_by, published_candidates

    table = published_candidates()
    assert set(table["release"]) == {"4FGL-DR2"} and table["Source_Name"].str.startswith("4FGL J").all()
    names = set(load_catalog("4FGL-DR2").names)
    assert set(table["Source_Name"]) <= {str(n).strip() for n in names}  # each a DR2 source
    # 4FGL J0039.1+6257 is in both networks' lists; FL16Y names it through ASSOC_FGL and DR4
    known = known_about("FL16Y", ["FL16Y J0039.1+6257"], pulsars=None, releases=list(EARLIER))
    assert named_by(known, ["FL16Y J0039.1+6257"], "FL16Y")[0].count("Finke et al. 2021") == 2


def test_a_published_list_without_a_name_column_or_with_an_unknown_release_is_refused(tmp_path):
    from gpal.catalogs.search_history import published_candidates

    (tmp_path / "a.csv").write_text("name,release,named_by\nx,4FGL,A\n")
    with pytest.raises(ValueError, match="a.csv has no Source_Name column"):
        published_candidates(tmp_path / "a.csv")
    (tmp_path / "b.csv").write_text("Source_Name,release,named_by\nx,5FGL,A\n")
    with pytest.raises(ValueError, match=r"names the release\(s\) \['5FGL'\]"):
        published_candidates(tmp_path / "b.csv")


def test_the_vetting_words_say_how_far_back_the_search_history_reaches(tmp_path):
    """A catalog whose ASSOC_FGL is gone reaches 3FGL no more (its 4FGL links are its own names); 3FGL, the oldest
    release, has no search history, and its header says so rather than calling every source new."""
    from conftest import write_small_catalog
    from gpal.catalog_jobs.prediction import known_columns

    path = write_small_catalog(tmp_path / "small.fits", drop_column="ASSOC_FGL")
    small = load_catalog(path)
    _, words = known_columns(small, [str(small.names[0])])
    assert words.endswith("; search history back to 4FGL")
    oldest = load_catalog("3FGL")
    _, words = known_columns(oldest, [str(oldest.names[0])])
    assert words.endswith("; no search history (no earlier release linked to this catalog)")
    assert "ATNF Pulsar Catalogue 1.64 (2021), psrcat_1.64.db.gz" in words and "/" not in words

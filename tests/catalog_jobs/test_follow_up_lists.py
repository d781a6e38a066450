"""The source lists: which sources each holds, in which order, and their DS9 regions."""

import numpy as np
import pandas as pd
import pytest

from gpal.catalog_jobs.follow_up import (
    bright_point_sources, check_target, excluded_flags_of, follow_up_lists, region_text,
)
from gpal.catalog_jobs.layout import DISCOVERY_FILE, EXTENDED_FILE, INFORMATIVE_FILE


def _frame():
    """Six sources: in-population bright, faint, unknown significance, ood, ood faint, extended."""
    return pd.DataFrame({
        "Source_Name": ["a", "b", "c", "d", "e", "fe"],
        "CLASS1": [""] * 6,
        "Flags": [0] * 6,
        "predicted_class": ["bll", "pulsar", "bll", "fsrq", "pulsar", "extended"],
        "Signif_Avg": [9.0, 3.2, np.nan, 6.0, 2.0, 30.0],
        "ood": [False, False, False, True, True, False],
        "ood_score": [1.0, 2.0, 3.0, 50.0, 90.0, 5.0],
        "information": [0.1, 0.5, 0.4, 0.9, 0.8, 0.7],
        "extended": [False, False, False, False, False, True],
    })


def test_each_list_holds_its_sources_in_its_order():
    lists = follow_up_lists(_frame(), min_significance=4.0)
    follow, found, extended = lists[INFORMATIVE_FILE], lists[DISCOVERY_FILE], lists[EXTENDED_FILE]
    assert follow["Source_Name"].tolist() == ["a"]  # b is faint, c of unknown significance, d ood, fe extended
    assert found["Source_Name"].tolist() == ["d"] and found["ood"].all()  # e is ood but faint
    assert extended["Source_Name"].tolist() == ["fe"]
    looser = follow_up_lists(_frame(), min_significance=0.0)
    assert looser[INFORMATIVE_FILE]["Source_Name"].tolist() == ["b", "a"]  # by information; c's NaN never passes
    assert looser[DISCOVERY_FILE]["Source_Name"].tolist() == ["e", "d"]  # by ood_score
    for rows in looser.values():
        assert rows["rank"].tolist() == list(range(1, len(rows) + 1))
        assert list(rows.columns) == ["rank", *_frame().columns]  # the classifications' columns, and rank


def test_the_region_draws_each_95_percent_ellipse_in_ds9_convention():
    rows = pd.DataFrame({"rank": [1, 2, 3, 4], "Source_Name": ["4FGL J0000.3-7355", "x", "y", "z"],
                         "RA": [0.0983, 10.0, 20.0, 30.0], "DEC": [-73.922, 5.0, np.nan, 6.0],
                         "Conf_95_SemiMajor": [0.0525, 0.1, 0.2, np.nan], "Conf_95_SemiMinor": [0.051, np.nan, 0.1, np.nan],
                         "Conf_95_PosAng": [-62.7, np.nan, 30.0, np.nan]})
    lines = region_text(rows).splitlines()
    assert lines[:3] == ["# Region file format: DS9 version 4.1", "# gpal source list: 95% error ellipses", "fk5"]
    # arcseconds; DS9's angle is from west (the x axis of a north-up sky), the catalog's from north: +90 degrees
    assert lines[3] == 'ellipse(0.09830,-73.92200,189.00",183.60",27.30) # text={1 4FGL J0000.3-7355}'
    assert lines[4] == 'circle(10.00000,5.00000,360.00") # text={2 x}'  # no angle: the semi-major axis as a circle
    assert len(lines) == 5  # y has no position, z no ellipse (an older layout without the columns): both left out


def test_a_target_the_model_lacks_is_refused_naming_its_classes():
    assert check_target(None, ["bll", "pulsar"]) is None and check_target("pulsar", ["bll", "pulsar"]) == "pulsar"
    with pytest.raises(ValueError, match=r"target 'psr' is not a class of the model; its classes are \['bll', 'pulsar'\]"):
        check_target("psr", ["bll", "pulsar"])


def test_excluded_flags_leave_out_the_sources_that_carry_any_of_them():
    """Flag n is bit value 2**(n-1), as the catalogs number them; Flags -1 (the catalog has none) excludes nothing."""
    frame = pd.DataFrame({"Source_Name": list("abcdef"), "CLASS1": [""] * 6, "Signif_Avg": [9.0] * 5 + [3.0],
                          "extended": [False] * 6,
                          "Flags": [0, 1, 4, 5, -1, 0], "ood": [False] * 6, "ood_score": np.zeros(6),
                          "information": np.linspace(1, 0, 6)})
    assert bright_point_sources(frame, 4.0).tolist() == [True] * 5 + [False]  # by default no flag excludes
    assert bright_point_sources(frame, 4.0, (3,)).tolist() == [True, True, False, False, True, False]
    assert bright_point_sources(frame, 4.0, (1, 3)).tolist() == [True, False, False, False, True, False]
    assert bright_point_sources(frame, 4.0, (2, 14)).tolist() == [True] * 5 + [False]
    assert follow_up_lists(frame, 4.0, (1,))[INFORMATIVE_FILE]["Source_Name"].tolist() == ["a", "c", "e"]
    assert excluded_flags_of({"XFLAGS": "3,14"}) == (3, 14) and excluded_flags_of({"XFLAGS": ""}) == ()
    assert excluded_flags_of({}) == ()  # a table of an earlier gpal


def test_the_discovery_list_holds_only_unknowns_not_confused_ones():
    """A bcu has a counterpart, and a source flagged 5 (a brighter neighbour) or 6 (a diffuse-model defect) is unlike
    the training set for reasons of its own: none of them leads the discovery list, however high its ood_score."""
    frame = pd.DataFrame({"Source_Name": list("abcde"), "CLASS1": ["bcu", "", "", "", ""],
                          "Signif_Avg": [60.0, 16.0, 9.0, 8.0, 7.0], "extended": [False] * 5,
                          "Flags": [0, 16, 32, 8192, 0], "ood": [True] * 5, "ood_score": [90.0, 80.0, 70.0, 60.0, 50.0],
                          "information": np.zeros(5)})
    assert follow_up_lists(frame, 4.0)[DISCOVERY_FILE]["Source_Name"].tolist() == ["d", "e"]  # flag 14 stays

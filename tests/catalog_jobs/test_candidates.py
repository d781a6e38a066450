"""The target lists: which sources each class's list holds, in which order, through which cuts, and how the cuts
are declared once (settings, identity, table keywords, words)."""

import numpy as np
import pandas as pd
import pytest

from gpal.catalog_jobs.candidates import (
    CANDIDATE_SETTINGS, CUTS, DOUBTFUL_FLAGS, NO_COUNTERPART, ORDER_CUTS, ORDER_RULE, RANK_DIGITS, candidate_lists,
    check_cuts, clean, cuts_from_meta, cuts_identity, cuts_meta, cuts_text, expected_members, kept_declinations,
    known_sources, list_order, order_rule, orders_words, passes_flags, ranked,
)
from gpal.catalog_jobs.classify import SETTINGS

MERGE = {"pulsar": ("psr", "msp")}
#: The probability order (the pulsar list's own is by significance), which the order tests below read.
BY_PROBABILITY = {"order": "probability"}


def _frame():
    """Eight sources around the default cuts (5 sigma, 0.1 deg, no flag excluded)."""
    return pd.DataFrame({
        "Source_Name": ["a", "b", "c", "d", "e", "f", "g", "he"],
        "CLASS1": ["", "", "bcu", "", "", "", "bcu", ""],
        "predicted_class": ["pulsar", "pulsar", "pulsar", "pulsar", "pulsar", "bll", "bll", "extended"],
        "p_bll": [0.05, 0.02, 0.1, 0.1, 0.0, 0.9, 0.7, 0.9],
        "p_pulsar": [0.95, 0.98, 0.9, 0.9, 1.0, 0.1, 0.3, 0.1],
        "p_mc_se": [0.01] * 8,
        "Signif_Avg": [9.0, 6.0, 20.0, 4.9, 30.0, 7.0, 8.0, 40.0],
        "Conf_95_SemiMajor": [0.05, 0.08, 0.03, 0.05, np.nan, 0.1, 0.2, np.nan],
        "Flags": [0, 32, 0, 0, 0, 0, 0, 0],
        "ood": [False] * 8,
        "extended": [False] * 7 + [True],
    })


def test_each_class_lists_its_followable_sources_most_probable_first():
    lists = candidate_lists(_frame(), ["bll", "pulsar"], MERGE, check_cuts(BY_PROBABILITY))
    # c is a bcu (a blazar: never a pulsar candidate), d is below 5 sigma, e has no ellipse, he is extended
    assert lists["pulsar"]["Source_Name"].tolist() == ["b", "a"]
    assert lists["pulsar"]["rank"].tolist() == [1, 2]
    assert lists["bll"]["Source_Name"].tolist() == ["f"]  # g's ellipse (0.2 deg) is too large; 0.1 passes
    flagged = candidate_lists(_frame(), ["pulsar"], MERGE, check_cuts({"candidate_flags": [6]}))
    assert list(flagged) == ["pulsar"] and flagged["pulsar"]["Source_Name"].tolist() == ["a"]  # b carries flag 6
    looser = candidate_lists(_frame(), ["bll"], MERGE, check_cuts({"candidate_max_ellipse": 0.5}))
    assert looser["bll"]["Source_Name"].tolist() == ["g", "f"]  # g has a counterpart (a bcu): its section first


def test_cuts_that_leave_nothing_give_an_empty_list_with_every_column():
    lists = candidate_lists(_frame(), ["pulsar"], MERGE, check_cuts({"candidate_significance": 100.0}))
    assert lists["pulsar"].empty and list(lists["pulsar"].columns) == ["rank", *_frame().columns, "caveats"]


def test_saturated_probabilities_are_ordered_by_significance_and_the_rule_is_stated():
    frame = _frame()
    frame.loc[frame["Source_Name"] == "a", "p_pulsar"] = 0.991  # 9 sigma
    frame.loc[frame["Source_Name"] == "b", "p_pulsar"] = 0.994  # 6 sigma: the same 0.99 to the list's digits
    ranked = candidate_lists(frame, ["pulsar"], MERGE, check_cuts(BY_PROBABILITY))["pulsar"]
    assert ranked["Source_Name"].tolist() == ["a", "b"]
    assert f"{RANK_DIGITS} decimals" in ORDER_RULE and "Signif_Avg" in ORDER_RULE


def test_equal_significance_goes_to_the_smaller_ellipse():
    frame = _frame()
    frame.loc[frame["Source_Name"].isin(["a", "b"]), "p_pulsar"] = 0.991
    frame.loc[frame["Source_Name"].isin(["a", "b"]), "Signif_Avg"] = 7.0
    frame.loc[frame["Source_Name"] == "a", "Conf_95_SemiMajor"] = 0.09
    frame.loc[frame["Source_Name"] == "b", "Conf_95_SemiMajor"] = 0.03
    ranked = candidate_lists(frame, ["pulsar"], MERGE, check_cuts(BY_PROBABILITY))["pulsar"]
    assert ranked["Source_Name"].tolist()[:2] == ["b", "a"] and "Conf_95_SemiMajor" in ORDER_RULE


def test_doubts_are_words_in_the_list_and_the_clean_list_leaves_them_out():
    frame = _frame().assign(GLAT=[1.0, 30.0, 0, 0, 0, -1.5, 40, 0],
                            Flag_Words=["", "6: on an interstellar gas clump", "", "", "", "", "", ""],
                            Inside_Extended=["", "", "", "", "", "", "CenA Lobes", ""])
    frame.loc[frame["Source_Name"] == "f", "Flags"] = 1 << 11  # flag 12, a curved spectrum: no doubt
    lists = candidate_lists(frame, ["bll", "pulsar"], MERGE, check_cuts({}))
    words = dict(zip(lists["pulsar"]["Source_Name"], lists["pulsar"]["caveats"]))
    assert words == {"b": "flag 6: on an interstellar gas clump", "a": "on the Galactic plane (|b| < 2 deg)"}
    assert clean(lists["pulsar"])["Source_Name"].tolist() == ["a"] and clean(lists["pulsar"])["rank"].tolist() == [1]
    assert clean(lists["bll"])["Source_Name"].tolist() == ["f"] and 12 not in DOUBTFUL_FLAGS
    loose = candidate_lists(frame, ["bll"], MERGE, check_cuts({"candidate_max_ellipse": 0.5}))["bll"]
    assert dict(zip(loose["Source_Name"], loose["caveats"]))["g"] == "inside extended source CenA Lobes"
    with_pulsar = frame.assign(ATNF_pulsars=["", "", "", "", "", "PSR J1901-1740", "", ""])
    words = dict(zip(*candidate_lists(with_pulsar, ["bll"], MERGE, check_cuts({}))["bll"][["Source_Name", "caveats"]]
                     .to_numpy().T))
    assert words["f"] == ("on the Galactic plane (|b| < 2 deg); ATNF pulsar PSR J1901-1740 inside the 95% ellipse; "
                          + NO_COUNTERPART)


def test_a_source_the_sky_already_names_is_listed_apart_with_its_reason():
    frame = _frame().assign(known_class=["psr", "", "", "", "", "unk", "", ""],
                            known_reason=["FL16Y CLASS2 psr (PSR J0000+00)", "", "", "", "", "4FGL-DR4 unk", "", ""])
    lists = candidate_lists(frame, ["bll", "pulsar"], MERGE, check_cuts({}))
    assert lists["pulsar"]["Source_Name"].tolist() == ["b"]
    assert lists["bll"]["Source_Name"].tolist() == ["f"]  # unknown nature names no class: still a candidate
    apart = known_sources(frame, check_cuts({}))
    assert apart["Source_Name"].tolist() == ["a"] and apart["known_reason"].tolist() == ["FL16Y CLASS2 psr (PSR J0000+00)"]


def test_the_expected_number_of_members_is_the_poisson_binomial_one():
    # counts 0, 1, 2 at 1/4, 1/2, 1/4: the quantiles are the smallest counts whose CDF reaches each tail
    assert expected_members(np.array([0.5, 0.5]), level=0.4) == (1.0, 1, 1)
    assert expected_members(np.array([0.5, 0.5]), level=0.9) == (1.0, 0, 2)
    rng = np.random.default_rng(0)
    p = rng.uniform(0.2, 1.0, 300)
    expected, low, high = expected_members(p)
    draws = (rng.uniform(size=(20000, p.size)) < p).sum(axis=1)  # Monte Carlo of the same count
    assert expected == pytest.approx(p.sum())
    assert abs(low - np.quantile(draws, 0.025)) <= 1 and abs(high - np.quantile(draws, 0.975)) <= 1


def test_flags_pass_unless_they_carry_an_excluded_flag():
    """Flag n is bit 2**(n-1); -1 (the catalog has no Flags) has nothing to cut by."""
    assert passes_flags(np.array([0, 1, 2, 3, 8192, -1]), (1, 14)).tolist() == [True, False, True, False, False, True]


def test_the_cuts_are_declared_once_and_read_back_from_the_table_keywords():
    assert {name: SETTINGS[name] for name in [*CUTS, "order"]} == CANDIDATE_SETTINGS  # the main job's settings hold them
    cuts = check_cuts({"candidate_significance": 6, "candidate_flags": [14, 5], "order": "new_first"})
    assert cuts == {"candidate_significance": 6, "candidate_max_ellipse": 0.1, "candidate_flags": (5, 14),
                    "candidate_declination": (-90.0, 90.0), "candidate_visible_from": None, "candidate_rows": None,
                    "order": "new_first"}
    assert cuts_from_meta(cuts_meta(cuts)) == cuts
    assert cuts_from_meta({}) == check_cuts({})  # a table of an earlier gpal: the defaults
    assert cuts_identity(check_cuts({})) == {}  # a run at the defaults is recorded as before
    assert cuts_identity(cuts) == {"candidate_significance": 6, "candidate_flags": [5, 14], "order": "new_first"}
    assert cuts_text(cuts) == "Signif_Avg >= 6, 95% semi-major axis <= 0.1 deg, none of Flags 5, 14"
    assert all(len(cut.keyword) <= 8 for cut in CUTS.values())  # FITS keywords


def test_bad_cuts_are_refused_naming_the_cut():
    with pytest.raises(TypeError, match=r"unknown target-list setting\(s\) \['candidate_sig'\]; the settings are"):
        check_cuts({"candidate_sig": 5})
    with pytest.raises(ValueError, match="candidate_max_ellipse"):
        check_cuts({"candidate_max_ellipse": 0.0})
    with pytest.raises(ValueError, match=r"candidate_flags\[0\]"):
        check_cuts({"candidate_flags": [0]})
    with pytest.raises(ValueError, match="order"):
        check_cuts({"order": "newest"})


def test_each_order_ranks_inside_its_probability_bands():
    frame = pd.DataFrame({"Source_Name": list("abcdef"), "p_pulsar": [0.99, 0.93, 0.96, 0.85, 1.0, 0.88],
                          "Signif_Avg": [9.0, 6.0, 7.0, 8.0, 5.0, 5.5], "Conf_95_SemiMajor": [0.05] * 6,
                          "unassociated_releases": [4, 1, 3, 1, 2, 4]})
    assert ranked(frame, "pulsar")["Source_Name"].tolist() == ["e", "a", "c", "b", "f", "d"]
    # one band: the most significant first, whatever the probability
    assert ranked(frame, "pulsar", "significance")["Source_Name"].tolist() == ["a", "d", "c", "b", "f", "e"]
    # bands 0.9-1 (e, a, c, b) and 0.8-0.9 (d, f): the new b and d lead their band, e (p = 1) is in the top one
    assert ranked(frame, "pulsar", "new_first", band=0.1)["Source_Name"].tolist() == ["b", "e", "c", "a", "d", "f"]
    assert ranked(frame, "pulsar", "significance", band=0.1)["Source_Name"].tolist() == ["a", "c", "b", "e", "d", "f"]
    # p_pulsar at least 0.95 (a, c, e) first, then the rest (d, b, f), each part the most significant first; at the
    # default cut every row is in the first part: the significance order
    assert ranked(frame, "pulsar", "probable_by_significance", cut=0.95)["Source_Name"].tolist() == list("acedbf")
    assert ORDER_CUTS["probable_by_significance"] < frame["p_pulsar"].min()
    assert (ranked(frame, "pulsar", "probable_by_significance")["Source_Name"].tolist()
            == ranked(frame, "pulsar", "significance")["Source_Name"].tolist())
    # no search history (a catalog without ASSOC_FGL): the bands keep the probability order
    plain = frame.drop(columns="unassociated_releases")
    assert ranked(plain, "pulsar", "new_first")["Source_Name"].tolist() == ranked(plain, "pulsar")["Source_Name"].tolist()
    with pytest.raises(ValueError, match=r"unknown target-list order 'newest'; the orders are \['probability'"):
        ranked(frame, "pulsar", "newest")


def test_off_plane_first_puts_the_sources_off_the_plane_first_each_part_by_significance():
    frame = pd.DataFrame({"Source_Name": list("abcde"), "p_pulsar": [0.9, 0.5, 0.7, 0.6, 0.8],
                          "Signif_Avg": [30.0, 8.0, 12.0, 20.0, 40.0], "Conf_95_SemiMajor": 0.05,
                          "GLAT": [0.5, -45.0, 2.0, -1.99, np.nan]})
    # |b| >= 2 (b, c) first, then the plane and the row without a latitude (e, a, d), each the most significant first
    assert ORDER_CUTS["off_plane_first"] == 2.0
    assert ranked(frame, "pulsar", "off_plane_first")["Source_Name"].tolist() == list("cbead")
    assert ranked(frame, "pulsar", "off_plane_first", cut=40.0)["Source_Name"].tolist() == list("beadc")
    assert check_cuts({"order": "off_plane_first"})["order"] == "off_plane_first"


def test_the_pulsar_list_is_ranked_by_significance_unless_told_and_the_others_by_probability():
    frame = pd.DataFrame({"Source_Name": list("abcd"), "CLASS1": "", "predicted_class": ["pulsar", "pulsar", "bll", "bll"],
                          "p_pulsar": [0.9, 0.6, 0.1, 0.2], "p_bll": [0.1, 0.4, 0.9, 0.8], "Signif_Avg": [6.0, 20.0, 6.0, 20.0],
                          "Conf_95_SemiMajor": 0.05, "Flags": 0, "ood": False, "extended": False})
    lists = candidate_lists(frame, ["pulsar", "bll"], MERGE, check_cuts({}))
    assert lists["pulsar"]["Source_Name"].tolist() == ["b", "a"] and lists["bll"]["Source_Name"].tolist() == ["c", "d"]
    told = candidate_lists(frame, ["pulsar", "bll"], MERGE, check_cuts({"order": "probability"}))
    assert told["pulsar"]["Source_Name"].tolist() == ["a", "b"] and told["bll"]["Source_Name"].tolist() == ["c", "d"]
    assert list_order("pulsar") == "significance" and list_order("bll") == "probability"
    assert list_order("pulsar", "new_first") == "new_first" and order_rule() == ORDER_RULE
    words = orders_words(["bll", "fsrq", "pulsar"])
    assert words.startswith("the bll and fsrq lists by probability: ") and "; the pulsar list by significance: " in words


def test_a_telescope_sees_the_declinations_whose_highest_elevation_clears_its_limit():
    from gpal.catalog_jobs.visibility import TELESCOPES, declination_range

    hour_angle = np.linspace(-np.pi, np.pi, 3601)
    for name, site in TELESCOPES.items():
        south, north = declination_range(name)
        phi = np.radians(site.latitude)
        for dec in np.arange(-89.5, 90, 0.5):  # independently: the elevation over a day, from spherical trigonometry
            d = np.radians(dec)
            highest = np.degrees(np.arcsin(np.sin(phi) * np.sin(d) + np.cos(phi) * np.cos(d) * np.cos(hour_angle))).max()
            if abs(highest - site.min_elevation) > 0.01:
                assert (south <= dec <= north) == (highest > site.min_elevation), (name, dec)
    with pytest.raises(ValueError, match=r"unknown telescope 'Arecibo'; known: FAST, GBT"):
        declination_range("Arecibo")


def test_the_declination_cuts_keep_what_the_telescope_sees():
    frame = _frame().assign(DEC=[-60.0, 10.0, 0, 0, 0, 70.0, 0, 0])
    assert candidate_lists(frame, ["pulsar"], MERGE, check_cuts(BY_PROBABILITY))["pulsar"]["Source_Name"].tolist() == ["b", "a"]
    fast = check_cuts({"candidate_visible_from": "FAST"})  # declinations -14.35 to +65.65
    assert candidate_lists(frame, ["pulsar"], MERGE, fast)["pulsar"]["Source_Name"].tolist() == ["b"]
    assert candidate_lists(frame, ["bll"], MERGE, fast)["bll"].empty  # f at +70 never rises 50 deg at FAST
    south = check_cuts({"candidate_declination": [-90, 0]})
    assert candidate_lists(frame, ["pulsar"], MERGE, south)["pulsar"]["Source_Name"].tolist() == ["a"]
    assert "visible from FAST (declination -14.4 to +65.7 deg)" in cuts_text(fast)
    both = check_cuts({"candidate_visible_from": "FAST", "candidate_declination": [-90, 0]})
    assert kept_declinations(fast) == pytest.approx((-14.35, 65.65)) and kept_declinations(check_cuts({})) == (-90, 90)
    assert kept_declinations(both) == pytest.approx((-14.35, 0.0))  # what the header's DECKEPT records
    with pytest.raises(ValueError, match="candidate_declination"):
        check_cuts({"candidate_declination": [-100, 0]})


def test_the_pool_prior_holds_the_classes_of_no_blazar_or_pulsar_code():
    from gpal.catalog_jobs.pool_prior import held_classes

    merge = {"pulsar": ("psr", "msp"), "other": ("spp", "snr")}
    assert held_classes(["bll", "fsrq", "pulsar", "other"], merge).tolist() == [False, False, False, True]
    assert held_classes(["bll", "fsrq", "pulsar"]).tolist() == [False, False, False]  # the default merge: psr+msp


def test_an_unassociated_blazar_candidate_says_it_has_no_counterpart_a_pulsar_candidate_does_not():
    frame = _frame()
    frame.loc[frame["Source_Name"] == "g", "Conf_95_SemiMajor"] = 0.05
    lists = candidate_lists(frame, ["bll", "pulsar"], MERGE, check_cuts({}))
    words = dict(zip(lists["bll"]["Source_Name"], lists["bll"]["caveats"]))
    assert words == {"f": NO_COUNTERPART, "g": ""}  # g is a bcu: its counterpart is in the catalog
    assert not lists["pulsar"]["caveats"].str.contains("counterpart").any()


def test_a_blazar_list_ranks_the_sources_with_a_counterpart_first_and_says_a_type_another_catalog_gives():
    """A spectroscopist points at a counterpart: f (unassociated, more probable) comes after g (a bcu); a type an
    earlier release or 4LAC-DR3 already gives is said, with 4LAC's redshift."""
    frame = _frame().assign(typed_before=["", "", "", "", "", "", "4FGL-DR4 bll", ""],
                            LAC_class=["", "", "", "", "", "", "bll", ""],
                            LAC_Redshift=[np.nan] * 6 + [0.525, np.nan])
    frame.loc[frame["Source_Name"] == "g", "Conf_95_SemiMajor"] = 0.05
    rows = candidate_lists(frame, ["bll", "pulsar"], MERGE, check_cuts({}))
    bll, pulsar = rows["bll"], rows["pulsar"]
    assert bll["Source_Name"].tolist() == ["g", "f"] and bll["rank"].tolist() == [1, 2]
    assert bll["section"].tolist() == ["counterpart", "unassociated"]
    assert dict(zip(bll["Source_Name"], bll["caveats"])) == {
        "g": "already typed: 4FGL-DR4 bll; 4LAC-DR3 bll, z = 0.525", "f": NO_COUNTERPART}
    assert "section" not in pulsar and "counterpart" in ORDER_RULE


def test_a_counterpart_of_unknown_nature_stays_a_candidate_with_its_name_in_the_caveat():
    frame = _frame().assign(known_class=["unk"] + [""] * 7,
                            known_reason=["4FGL-DR4 class unk (B2 2002+25; 4FGL J2004.1+2517)"] + [""] * 7)
    rows = candidate_lists(frame, ["pulsar"], MERGE, check_cuts({}))["pulsar"]
    words = dict(zip(rows["Source_Name"], rows["caveats"]))
    assert words["a"] == "a counterpart of unknown nature: 4FGL-DR4 class unk (B2 2002+25; 4FGL J2004.1+2517)"
    assert words["b"] == "flag 6"  # its flag only: no counterpart named

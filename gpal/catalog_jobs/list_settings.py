"""The lists' settings: which rows the target and follow-up lists keep, how they are ranked, what formats they are
written in.

``gpal classify`` takes them, ``gpal report FOLDER`` cuts a finished run's lists again with them, and the tables'
keywords record them.  They are declared here, where nothing heavier than the settings' constraints is imported, so
that the command line's parsers read them and answer a mistyped option at once; the lists' own modules
(`gpal.catalog_jobs.candidates`, `gpal.catalog_jobs.follow_up`, `gpal.catalog_jobs.tables`) import them from here.
"""

from __future__ import annotations

import types
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from gpal.catalog_jobs.job_settings import NEVER, WHEN_CHANGED, JobSetting
from gpal.catalog_jobs.visibility import TELESCOPES, declination_range
from gpal.constraints import Integer, ListOf, OneOf, Optional, Real

__all__ = ["BY_CLASS", "CANDIDATE_SETTINGS", "CUTS", "Cut", "DEFAULT_EXCLUDED_FLAGS", "DEFAULT_MIN_SIGNIFICANCE",
           "EXTRA_FORMATS", "FLAG_NUMBERS", "FOLLOW_UP_SETTINGS", "FORMAT_SETTINGS", "LIST_SETTINGS", "ORDERS",
           "ORDER_BANDS", "ORDER_CUTS", "ORDER_RULE", "ORDER_SETTING", "RANK_DIGITS"]

#: A flag number: the LAT catalogs document flags 1 to 14; a Flags column holds at most 32 bits.
FLAG_NUMBERS = Integer(1, 32)
#: The decimals of a class probability a target list ranks by; ties go to the more significant source.
RANK_DIGITS = 2
#: How a target list is ordered, in its header's words.
ORDER_RULE = (f"p_<class> rounded to {RANK_DIGITS} decimals, highest first; ties by Signif_Avg, highest first, "
              "then by Conf_95_SemiMajor, smallest first; a blazar list ranks the sources with a counterpart "
              "(section 'counterpart') before the unassociated ones (section 'unassociated')")
#: The width of the probability bands each order ranks inside (1: one band, the probability not read): chosen on the
#: pulsar lists of the release pairs ending before FL16Y, the top 50 summed; docs/results.md shows the measurement.
ORDER_BANDS: Mapping[str, float] = types.MappingProxyType({"significance": 1.0, "new_first": 0.05})
#: The p_<class> a source needs to be in the first part of an order that cuts the list in two: chosen on the pulsar
#: lists of the release pairs ending before FL16Y, as `ORDER_BANDS`.  The |GLAT| (deg) a source needs to be in the
#: first part of ``off_plane_first``: the Galactic plane of the lists' caveat, which did best of the cuts tried (2, 3,
#: 5, 10 and 15 deg) on those pairs.
ORDER_CUTS: Mapping[str, float] = types.MappingProxyType({"probable_by_significance": 0.7, "off_plane_first": 2.0})
#: The orders a target list can be ranked in (``--order``): name -> the rule in the header's words.
#: ``significance``: a pulsar search finds the bright first (pulsations need photons), and on later labels the
#: most significant of a pulsar list were found more often than the most probable.  ``new_first``: a committee funds
#: a search where earlier searches have not already failed, so among sources of about the same probability the one
#: that has waited fewer releases unassociated (``unassociated_releases``) comes first; on later labels that found
#: no more pulsars (the long-unassociated are the brighter, found more often, not less).
#: ``probable_by_significance``: a committee that funds the likely pulsars first, the brightest of them first; on
#: later labels it found about as many as ``significance`` (within the resampling noise).  ``off_plane_first``: a
#: radio search off the Galactic plane has a colder sky and less dispersion and scattering; on later labels it found
#: about as many as ``significance`` (within the resampling noise).
ORDERS: Mapping[str, str] = types.MappingProxyType({
    "probability": ORDER_RULE,
    "significance": ("Signif_Avg, highest first; ties by p_<class> rounded to "
                     f"{RANK_DIGITS} decimals, highest first, then by Conf_95_SemiMajor, smallest first; a blazar list "
                     "ranks the section 'counterpart' before 'unassociated'"),
    "new_first": (f"p_<class> in bands of {ORDER_BANDS['new_first']:g}, highest first; within a band the sources "
                  "fewest releases unassociated first (unassociated_releases: 1 new to this release), then as the "
                  f"probability order: p_<class> rounded to {RANK_DIGITS} decimals, Signif_Avg, Conf_95_SemiMajor; a "
                  "blazar list ranks the section 'counterpart' before 'unassociated'"),
    "probable_by_significance": (f"the sources with p_<class> at least {ORDER_CUTS['probable_by_significance']:g} "
                                 "first, then the others; each part by Signif_Avg, highest first, then as the "
                                 "significance order; a blazar list ranks the section 'counterpart' before "
                                 "'unassociated'"),
    "off_plane_first": (f"the sources off the Galactic plane (|GLAT| at least {ORDER_CUTS['off_plane_first']:g} deg) "
                        "first, then those on it; each part by Signif_Avg, highest first, then as the significance "
                        "order; a blazar list ranks the section 'counterpart' before 'unassociated'"),
})
#: The ``--order`` that ranks each class's list in its own order (`CLASS_ORDERS`): the default.
BY_CLASS = "by_class"


@dataclass(frozen=True)
class Cut:
    """One cut of the target lists: its setting (with the table keyword that records it, FITS: 8 characters at
    most), the keyword's comment, and how the report states it."""

    setting: JobSetting
    comment: str
    words: Callable[[Any], str]

    @property
    def keyword(self) -> str:
        return str(self.setting.keyword)


def _flags_words(flags: Sequence[int]) -> str:
    return f"none of Flags {', '.join(map(str, flags))}" if flags else "any Flags"


#: The cuts, by setting name (measured in docs/targets.md: share of each list's sources FL16Y later classifies
#: that keep the class, DR4 run at the commit recorded there).  Added after runs were made, each is recorded in a
#: run's identity only when it differs from its default.
CUTS: Mapping[str, Cut] = {
    "candidate_significance": Cut(
        JobSetting(Real(0), 5.0, "Signif_Avg (sigma) below which a source is in no target list (candidates_<class>.csv)",
                   record=WHEN_CHANGED, keyword="CSIG"),
        "Signif_Avg below which no target list holds a source", lambda v: f"Signif_Avg >= {v:g}"),
    "candidate_max_ellipse": Cut(
        JobSetting(Real(0, low_open=True), 0.1,
                   "largest semi-major axis (deg) of the 95% error ellipse of a source in a target list",
                   record=WHEN_CHANGED, keyword="CMAXELL"),
        "largest 95% semi-major axis (deg) in a target list", lambda v: f"95% semi-major axis <= {v:g} deg"),
    "candidate_flags": Cut(
        JobSetting(ListOf(FLAG_NUMBERS, min_length=0), (),
                   "the catalog's Flags (numbers, e.g. 5,6,14) that leave a source out of the target lists",
                   record=WHEN_CHANGED, keyword="CXFLAGS", unordered=True),
        "catalog Flags (numbers) that leave a source out of the target lists", _flags_words),
    "candidate_declination": Cut(
        JobSetting(ListOf(Real(-90, 90), min_length=2, max_length=2), (-90.0, 90.0),
                   "the declinations (deg, south then north) a target list keeps, e.g. -40,90 (on the command "
                   "line --candidate-declination=-40,90: the value starts with a minus)",
                   record=WHEN_CHANGED, keyword="CDEC"),
        "declinations (deg) a target list keeps",
        lambda v: "" if tuple(v) == (-90.0, 90.0) else f"declination {v[0]:+g} to {v[1]:+g} deg"),
    "candidate_visible_from": Cut(
        JobSetting(Optional(OneOf(tuple(TELESCOPES))), None,
                   f"a telescope ({', '.join(TELESCOPES)}) whose sky a target list keeps: the declinations it sees "
                   "at transit (None: any)", record=WHEN_CHANGED, keyword="CVISIBLE"),
        "telescope whose visible declinations a target list keeps",
        lambda v: "" if v is None else (
            f"visible from {v} (declination {declination_range(v)[0]:+.1f} to {declination_range(v)[1]:+.1f} deg)")),
    "candidate_rows": Cut(
        JobSetting(Optional(Integer(1)), None,
                   "how many rows each target list keeps, the first in its order (None: every source that passes "
                   "the cuts)", record=WHEN_CHANGED, keyword="CROWS"),
        "rows a target list keeps at most, the first in its order",
        lambda v: "" if v is None else f"the first {v} in the list's order"),
}
#: The order every target list is ranked in, a setting of the lists beside their cuts (`BY_CLASS`: each class's own).
ORDER_SETTING = JobSetting(
    OneOf((BY_CLASS, *ORDERS)), BY_CLASS,
    "how every target list is ranked: 'probability' (p_<class>, then Signif_Avg), 'significance' (Signif_Avg, then "
    f"p_<class>), 'new_first' (within bands of {ORDER_BANDS['new_first']:g} in p_<class>, the sources fewest "
    "releases unassociated first), 'probable_by_significance' (p_<class> at least "
    f"{ORDER_CUTS['probable_by_significance']:g} first, each part by Signif_Avg) or 'off_plane_first' (|GLAT| at "
    f"least {ORDER_CUTS['off_plane_first']:g} deg first, each part by Signif_Avg); by_class: the pulsar list by "
    "significance and the others by probability, as later releases favoured", record=WHEN_CHANGED, keyword="LISTORD")
#: The lists' settings: the cuts and the order (`gpal.catalog_jobs.classify.SETTINGS` holds them).
CANDIDATE_SETTINGS = {**{name: cut.setting for name, cut in CUTS.items()}, "order": ORDER_SETTING}

#: Signif_Avg below which a source is in no list: the LAT's detection threshold (TS 25, about 4 sigma).
#: Of the 4FGL-DR4 unassociated point sources below 4 sigma only 33% are still in FL16Y, against 70% at
#: 4-5 sigma and 88-98% above (docs/reports.md, "Which sources a list leaves out").
DEFAULT_MIN_SIGNIFICANCE = 4.0
#: The catalog's analysis flags (numbered as its documentation does: flag n is bit value 2**(n-1)) that leave a
#: source out of both lists: none.  Flagged DR4 sources reappear in FL16Y less often (79% against 97%) and keep
#: their class less often (91% against 98.5%), but leaving them out would drop half the unassociated sources, so
#: the lists carry ``Flags`` for the observer to weigh (docs/reports.md, "Which sources a list leaves out").
DEFAULT_EXCLUDED_FLAGS: tuple[int, ...] = ()
#: The follow-up settings both jobs share: the lists ``gpal classify`` writes and the pool ``gpal active`` asks about
#: are cut by one rule (`bright_point_sources`).
FOLLOW_UP_SETTINGS = {
    "follow_up_significance": JobSetting(
        Real(0), DEFAULT_MIN_SIGNIFICANCE,
        "Signif_Avg (sigma) below which a source is in neither most_informative.csv nor discovery.csv, nor in gpal "
        "active's pool: two in three DR4 unassociated sources below 4 are gone from FL16Y", keyword="MINSIG"),
    "follow_up_flags": JobSetting(
        ListOf(FLAG_NUMBERS, min_length=0), DEFAULT_EXCLUDED_FLAGS,
        "the catalog's Flags (numbers, e.g. 5,6,14) that leave a source out of most_informative.csv, discovery.csv "
        "and gpal active's pool; none by default: flagged sources keep their class less often (91% against 98.5% in "
        "FL16Y) but are half the unassociated ones, so the lists carry Flags instead",
        record=WHEN_CHANGED, keyword="XFLAGS", unordered=True),
}
#: The formats a job writes beside each CSV table only when asked -> their suffix: the AAS journals' MRT and the
#: Virtual Observatory's VOTable.  Not by default: they repeat the CSV's rows, and the main job's folder is read
#: mostly by pandas and astropy.
EXTRA_FORMATS = {"mrt": ".mrt", "votable": ".vot"}
#: The job setting naming `EXTRA_FORMATS` (``gpal classify --table-formats mrt,votable``); the tables record it as
#: ``FORMATS``, so the lists (and ``gpal report`` rebuilding them) are written in the formats the classifications were.
FORMAT_SETTINGS = {
    "table_formats": JobSetting(
        ListOf(OneOf(tuple(EXTRA_FORMATS)), min_length=0), (),
        "also write the classifications and every source list as mrt (the AAS journals' machine-readable table, "
        "FILE.mrt) and/or votable (for VO tools such as TOPCAT and Aladin, FILE.vot), e.g. mrt,votable; none by "
        "default: the CSV + ECSV serve pandas and astropy",
        record=NEVER, keyword="FORMATS", unordered=True),
}
#: The settings a re-cut takes: the target lists' cuts and order, the follow-up lists' cuts and the tables' formats.
LIST_SETTINGS = {**CANDIDATE_SETTINGS, **FOLLOW_UP_SETTINGS, **FORMAT_SETTINGS}

"""The main job's source lists, one per observing proposal, read from the columns of ``classifications.csv``.

- **target lists** (`gpal.catalog_jobs.candidates`, ``candidates_<class>.csv`` and ``.reg``): per trained
  class (or the ``target`` class), the sources most probably of it that can be followed up; what a
  proposal submits;
- **most informative** (``most_informative.csv``): point sources of the trained population (not ``ood``,
  not extended, ``Signif_Avg`` >= ``min_significance``, none of the ``excluded_flags``), ranked by
  ``information``, what a label would teach the model about the ``target`` class (all classes when
  None): the sources whose label would teach the model most (BALD), not the likeliest members of a class;
- **discovery** (``discovery.csv``): the unassociated ``ood`` point sources of those cuts, ranked by
  ``ood_score`` (how unlike the training set), ``predicted_class`` the class each is most like.  A
  source with a counterpart (a bcu) is no unknown, and one the catalog flags as confused with a
  brighter neighbour or sitting on a defect of the diffuse model (`DISCOVERY_LEAVES_OUT`: a point
  source beside IC 443 topped the FL16Y list) is unlike the training set for reasons of its own;
- **extended** (``extended.csv``): extended sources, which the point-source classes do not
  describe (``predicted_class`` ``extended``); no list ranks them.

Each list keeps every column of the classifications (the target columns among them) and adds
``rank``; `region_text` draws a list's 95% error ellipses for DS9.  The lists' names and their folder are
`gpal.catalog_jobs.layout`'s.
"""

from __future__ import annotations

import warnings
from dataclasses import replace
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from gpal.catalog_jobs.candidates import (
    DOUBTFUL_FLAGS, FLAG_NUMBERS, candidate_lists, clean, cuts_from_meta, cuts_text, expected_members,
    kept_declinations, known_sources, later_yield_words, list_order, order_rule, passes_flags, point_sources_through, ranked_by,
)
from gpal.catalog_jobs.job_settings import settings_from_header
from gpal.catalog_jobs.layout import (
    DISCOVERY_FILE, EXTENDED_FILE, INFORMATIVE_FILE, KNOWN_FILE, candidate_file, clean_file, list_path, region_file,
)
from gpal.catalog_jobs.list_settings import DEFAULT_EXCLUDED_FLAGS, DEFAULT_MIN_SIGNIFICANCE, FOLLOW_UP_SETTINGS
from gpal.catalog_jobs.main_job_settings import DEFAULT_TARGET
from gpal.catalog_jobs.proba_columns import classes_from_columns, proba_column
from gpal.catalog_jobs.tables import ClassifiedSources, classified_table_files, formats_of

__all__ = ["DEFAULT_EXCLUDED_FLAGS", "DEFAULT_MIN_SIGNIFICANCE", "DEFAULT_TARGET", "DISCOVERY_LEAVES_OUT",
           "FLAG_NUMBERS", "FOLLOW_UP_SETTINGS", "follow_up_of", "LISTS", "NEEDED",
           "bright_point_sources", "check_target", "excluded_flags_of", "follow_up_files", "follow_up_lists",
           "listed_classes", "region_text"]

#: The flags (numbers) that keep a source out of the discovery list: 5, confused with a brighter neighbour; 6, on an
#: interstellar gas clump or a defect of the diffuse model ("c" sources).  Same meaning in 3FGL and 4FGL
#: (`gpal.catalogs.releases`, ``flag_meanings``).
DISCOVERY_LEAVES_OUT = (5, 6)
#: Each list's file and what its rows are, in words (the FITS / ECSV keyword ``LIST``).
LISTS = {
    INFORMATIVE_FILE: "most informative: in-population point sources whose label would teach the model most",
    DISCOVERY_FILE: "discovery: unassociated none-of-these point sources ranked by ood_score",
    EXTENDED_FILE: "extended sources, outside the point-source classes",
    KNOWN_FILE: "known sources: classified point sources through the target-list cuts that the sky already names "
                "(known_class, known_reason), in no target list",
}


def check_target(target: str | None, classes: Sequence[str]) -> str | None:
    """``target`` if it is one of the model's ``classes`` (or None); else a ValueError naming them."""
    if target is not None and target not in classes:
        raise ValueError(f"target {target!r} is not a class of the model; its classes are {list(classes)} "
                         "(or leave target unset to rank by what a label teaches about all of them)")
    return target


def bright_point_sources(frame: pd.DataFrame, min_significance: float,
                         excluded_flags: Sequence[int] = DEFAULT_EXCLUDED_FLAGS) -> np.ndarray:
    """What either ranked list, and ``gpal active``'s pool, may hold: `point_sources_through` at the follow-up
    lists' own default flags.

    Returns
    -------
    numpy.ndarray
        (n,) boolean mask over the frame's rows.
    """
    return point_sources_through(frame, min_significance, excluded_flags)


def follow_up_of(meta: Mapping[str, Any]) -> dict[str, Any]:
    """The follow-up settings a table's keywords record (`FOLLOW_UP_SETTINGS`; a table of an earlier gpal: the
    defaults)."""
    return settings_from_header(FOLLOW_UP_SETTINGS, meta)


def excluded_flags_of(meta: Mapping[str, Any]) -> tuple[int, ...]:
    """The ``excluded_flags`` a table's keywords record (absent: none).

    Returns
    -------
    tuple of int
        The flag numbers.
    """
    return tuple(follow_up_of(meta)["follow_up_flags"])


def follow_up_lists(frame: pd.DataFrame, min_significance: float,
                    excluded_flags: Sequence[int] = DEFAULT_EXCLUDED_FLAGS) -> dict[str, pd.DataFrame]:
    """The three lists (`LISTS`) of a classifications frame, by file name.

    A point source whose ``Signif_Avg`` is below ``min_significance`` (or unknown), or that carries
    one of the ``excluded_flags``, is in neither ranked list (`bright_point_sources`); the discovery
    list holds only unassociated sources, none of `DISCOVERY_LEAVES_OUT`.
    """
    candidates = bright_point_sources(frame, min_significance, excluded_flags)
    ood = frame["ood"].to_numpy(bool)
    unknown = (frame["CLASS1"].fillna("").to_numpy(str) == "") & passes_flags(frame["Flags"].to_numpy(np.int64),
                                                                                 DISCOVERY_LEAVES_OUT)
    return {
        INFORMATIVE_FILE: ranked_by(frame[~ood & candidates], "information"),
        DISCOVERY_FILE: ranked_by(frame[ood & candidates & unknown], "ood_score"),
        EXTENDED_FILE: ranked_by(frame[frame["extended"].to_numpy(bool)], "Signif_Avg"),
    }


#: The columns the lists are read from; a classifications table of an earlier gpal may lack some.
NEEDED = ("CLASS1", "extended", "Signif_Avg", "Conf_95_SemiMajor", "Flags", "ood", "ood_score", "information")


def listed_classes(table: ClassifiedSources) -> list[str]:
    """The classes a table's target lists are for: its ``TARGET`` class, else every class it has a ``p_`` column of."""
    target = table.meta.get("TARGET") or None
    classes = classes_from_columns(table.frame.columns)
    return [target] if target in classes else classes


def follow_up_files(table: ClassifiedSources,
                    merge: Mapping[str, Sequence[str]] | None = None) -> tuple[dict[str, str | bytes], dict[str, pd.DataFrame]]:
    """The lists of a classifications table (CSV + ECSV each) and their region files, made in memory: the files by
    path in the run folder (`gpal.catalog_jobs.layout.list_path`), and the lists by name.

    The target lists first (`gpal.catalog_jobs.candidates`: one per `listed_classes`, cuts from the table's
    keywords; ``merge``: the CLASS1 codes of each merged class), then `LISTS`.  The table's ``MINSIG`` keyword is
    the significance cut of the latter, ``XFLAGS`` their excluded flags; ``TARGET`` the class ``information`` is
    about; ``FORMATS`` the formats each list is also written in (`gpal.catalog_jobs.tables.EXTRA_FORMATS`).  A
    target list the cuts leave empty is written with its header alone, and a warning says so.  No files
    and no lists for a table without the `NEEDED` columns.
    """
    if not set(NEEDED) <= set(table.frame.columns):
        return {}, {}
    cuts = cuts_from_meta(table.meta)
    targets = candidate_lists(table.frame, listed_classes(table), merge or {}, cuts)
    lists = {candidate_file(cls): rows for cls, rows in targets.items()}
    lists.update({clean_file(cls): clean(rows) for cls, rows in targets.items()})
    classes_of = {**{candidate_file(cls): cls for cls in targets}, **{clean_file(cls): cls for cls in targets}}
    drawn = {*lists, INFORMATIVE_FILE}  # the lists a proposal points at get region files
    empty = [name for name, rows in lists.items() if rows.empty]
    if empty:
        warnings.warn(f"the target-list cuts ({cuts_text(cuts)}) leave no source in {', '.join(empty)}: "
                      "written with the header alone; loosen --candidate-significance, --candidate-max-ellipse or "
                      "--candidate-flags", stacklevel=2)
    follow_up, formats = follow_up_of(table.meta), formats_of(table.meta)
    lists.update(follow_up_lists(table.frame, follow_up["follow_up_significance"], follow_up["follow_up_flags"]))
    lists[KNOWN_FILE] = known_sources(table.frame, cuts)
    files: dict[str, str | bytes] = {}
    for name, rows in lists.items():
        meta = {**table.meta, "LIST": LISTS.get(name) or _target_list_words(name, classes_of[name]),
                "NSOURCES": len(rows)}
        if name in classes_of:
            meta.update(_expected_keywords(rows[proba_column(classes_of[name])].to_numpy(np.float64)))
            meta["ORDER"] = order_rule(list_order(classes_of[name], cuts["order"]))
            meta["DECKEPT"] = ",".join(str(round(d, 2)) for d in kept_declinations(cuts))  # as CDEC writes it
            if held := later_yield_words(classes_of[name]):
                meta["LATERYLD"] = held
        files.update(classified_table_files(replace(table, frame=rows, meta=meta), list_path(name), formats))
        if name in drawn:
            files[list_path(region_file(name))] = region_text(rows, meta["LIST"])
    return files, lists


def _target_list_words(name: str, cls: str) -> str:
    """What a target list is, in its header's words."""
    if name == clean_file(cls):
        return (f"clean target list: the most probable {cls} sources to follow up, none carrying a doubtful flag "
                f"({', '.join(map(str, DOUBTFUL_FLAGS))})")
    return f"target list: the most probable {cls} sources to follow up (doubts in the caveats column)"


def _expected_keywords(proba: np.ndarray) -> dict[str, Any]:
    """A target list's expected number of class members and its 95% interval, as header keywords."""
    expected, low, high = expected_members(proba)
    return {"EXPECTED": round(expected, 1), "EXPLOW": low, "EXPHIGH": high}


def region_text(rows: pd.DataFrame, title: str = "gpal source list") -> str:
    """A DS9 region file: each source's 95% error ellipse (a circle of the semi-major axis where the catalog gives
    no angle), labelled with its rank and name.

    DS9 measures an ellipse's angle counter-clockwise from the x axis (west on a north-up sky), the catalog's
    ``Conf_95_PosAng`` east of north: DS9 angle = PosAng + 90.  Sources without an ellipse are left out.
    """
    lines = ["# Region file format: DS9 version 4.1", f"# {title}: 95% error ellipses", "fk5"]
    for row in rows.itertuples(index=False):
        a, b, angle = row.Conf_95_SemiMajor, row.Conf_95_SemiMinor, row.Conf_95_PosAng
        if not (np.isfinite(a) and np.isfinite(row.RA) and np.isfinite(row.DEC)):
            continue
        label = f"# text={{{row.rank} {row.Source_Name}}}"
        if np.isfinite(b) and np.isfinite(angle):
            lines.append(f'ellipse({row.RA:.5f},{row.DEC:.5f},{a * 3600:.2f}",{b * 3600:.2f}",{angle + 90:.2f}) {label}')
        else:
            lines.append(f'circle({row.RA:.5f},{row.DEC:.5f},{a * 3600:.2f}") {label}')
    return "\n".join(lines) + "\n"


"""The report's tables, one function each, made in memory as CSV, Markdown and LaTeX for ``tables/``: {caption: files}."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from gpal.catalog_jobs.candidates import cuts_from_meta, cuts_text, list_order, order_rule
from gpal.catalog_jobs.follow_up import DISCOVERY_LEAVES_OUT, follow_up_of, listed_classes
from gpal.catalog_jobs.later_check import shown_measures
from gpal.catalog_jobs.layout import (
    CONTEXT_COLUMNS, CURRENT_LAYOUT, DISCOVERY_FILE, EXTENDED_FILE, FLUX_COLUMN, INFORMATIVE_FILE,
    SIGNIFICANCE_COLUMN, TABLES_DIR, FolderLayout, candidate_file, list_path,
)
from gpal.catalog_jobs.none_of_these import PLANE_DEG, plane_counts
from gpal.catalog_jobs.proba_columns import MC_ERROR_COLUMN, proba_columns
from gpal.catalog_jobs.report.inputs import FinishedRun
from gpal.catalog_jobs.report.measures import MODEL_NAME, HeldOutCheck
from gpal.catalog_jobs.tables import EXTENDED
from gpal.catalogs.classes import source_groups
from gpal.evaluation.reports import table_files
from gpal.registry import FOLLOW_UP_ACQUISITION

__all__ = ["Tables", "interval_text", "report_tables"]

#: caption -> the table's files (a path in the run folder -> its text).
Tables = dict[str, dict[str, str]]
#: caption -> the table to write under it
_Planned = dict[str, "_Table"]
#: The counterpart's position, shown beside the source's in the target lists' tables.
COUNTERPART = ("RA_Counterpart", "DEC_Counterpart")


def interval_text(lo: float, hi: float) -> str:
    """'[0.12, 0.34]'; n/a for an interval of a fraction with nothing to count."""
    return "n/a" if np.isnan(lo) else f"[{lo:.2f}, {hi:.2f}]"


@dataclass(frozen=True)
class _Table:
    """A table of the report, to be written as ``tables/<name>`` (`gpal.evaluation.reports.table_files`): ``table``
    as shown, ``data`` (None: the same) at full precision."""

    name: str
    table: pd.DataFrame
    data: pd.DataFrame | None = None


def _metric_rows(h: Mapping[str, Any]) -> pd.DataFrame:
    """Held-out metrics, each with its 95% interval: binomial for accuracy, bias-corrected bootstrap for the others."""
    def interval(bounds: Sequence[float] | None) -> str:
        return "" if bounds is None else f"[{bounds[0]:.3f}, {bounds[1]:.3f}]"

    names = {"accuracy": "accuracy", "balanced_accuracy": "balanced accuracy", "nll": "NLL (nats)",
             "brier": "Brier", "ece": f"ECE ({h['n_bins']} bins)"}
    return pd.DataFrame([{"metric": label, "value": round(h[key], 4), "95% interval": interval(h["intervals"].get(key))}
                         for key, label in names.items() if key in h])


def _heldout_metrics(run: FinishedRun, metrics: Mapping[str, Any]) -> _Planned:
    return {"Held-out metrics (95% intervals: Jeffreys binomial for accuracy, bias-corrected bootstrap of 2000 "
            "resamples for the others: the percentile interval shifted by the resamples' median bias, so that it holds "
            "the value)": _Table("heldout_metrics", _metric_rows(metrics["heldout"]))}


def _heldout_per_class(run: FinishedRun, check: HeldOutCheck) -> _Planned:
    per_class = check.per_class
    shown = pd.DataFrame({
        "class": per_class["class"], "true": per_class["true"], "predicted": per_class["predicted"],
        "completeness": per_class["completeness"].round(3),
        "completeness 95%": [interval_text(a, b) for a, b in zip(per_class["completeness_low"], per_class["completeness_high"])],
        "purity": per_class["purity"].round(3),
        "purity 95%": [interval_text(a, b) for a, b in zip(per_class["purity_low"], per_class["purity_high"])],
    })
    return {"Held-out completeness and purity per class (95% Jeffreys binomial intervals)":
            _Table("heldout_per_class", shown, data=per_class)}


def _heldout_confusion(run: FinishedRun, check: HeldOutCheck) -> _Planned:
    shown = pd.DataFrame(check.conf.astype(int), columns=[f"{c} (true)" for c in run.classes])
    shown.insert(0, "predicted", run.classes)
    return {"Held-out confusion matrix (counts; rows = predicted class, columns = true class)":
            _Table("heldout_confusion", shown)}


def _comparison_table(comparison: pd.DataFrame) -> pd.DataFrame:
    """One row per model and metric: value [95% interval] and the paired difference [interval]."""
    def interval(low: float, high: float) -> str:
        return f"[{low:.3f}, {high:.3f}]"

    return pd.DataFrame({
        "model": comparison["model"], "metric": comparison["metric"], "value": comparison["value"].round(4),
        "95% interval": [interval(a, b) for a, b in zip(comparison["low"], comparison["high"])],
        "diff": comparison["diff"].round(4),
        "diff 95% interval": [interval(a, b) for a, b in zip(comparison["diff_low"], comparison["diff_high"])],
    })


def _heldout_comparison(run: FinishedRun, check: HeldOutCheck, metrics: Mapping[str, Any]) -> _Planned:
    """The paired comparison with the baselines, when the run fitted any."""
    if metrics["comparison"] is None:
        return {}
    return {"Held-out comparison with the baselines (same split and features; 95% intervals as in the metrics "
            "table: Jeffreys binomial for accuracy, bias-corrected bootstrap of 2000 paired resamples for the others and "
            f"for every diff; diff = model - {MODEL_NAME}, so diff > 0 means {MODEL_NAME} is better on NLL, ECE "
            "and Brier, worse on accuracy)": _Table("heldout_comparison", _comparison_table(check.comparison))}


def _predicted_counts(run: FinishedRun) -> _Planned:
    """Predicted class (rows) against the catalog's CLASS1 (case-folded) of the classified sources (columns)."""
    frame = run.frame
    kinds = pd.Series(source_groups(frame["CLASS1"]), index=frame.index)
    rows = []
    for name in [*run.classes, *([EXTENDED] if (frame["predicted_class"] == EXTENDED).any() else [])]:
        mine = frame["predicted_class"] == name
        row: dict[str, Any] = {"predicted": name}
        for kind in sorted(kinds.unique()):
            row[kind] = int((mine & (kinds == kind)).sum())
        row["total"] = int(mine.sum())
        rows.append(row)
    return {"Classified sources: predicted class by catalog CLASS1": _Table("predicted_counts", pd.DataFrame(rows))}


def _predicted_by_latitude(run: FinishedRun) -> _Planned:
    flagged = " and how many are flagged as none of these (counted in their predicted class too)" if "ood" in run.frame else ""
    return {f"Classified sources in and out of the Galactic plane (|b| <= {PLANE_DEG:g} deg): predicted class{flagged}":
            _Table("predicted_by_latitude", plane_counts(run.frame, run.classes))}


def _with_context(run: FinishedRun) -> pd.DataFrame:
    """The classified sources with the catalog columns the report quotes (folders of gpal <= 0.3 kept them apart)."""
    if run.context is None or set(CONTEXT_COLUMNS) <= set(run.frame.columns):
        return run.frame
    return run.frame.merge(run.context, on="Source_Name", how="left", validate="one_to_one")


def _shown(rows: pd.DataFrame, scores: Sequence[str], classes: Sequence[str],
           counterpart: bool = False) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The first ten ``rows`` as data and as shown (rounded): names, position, ellipse, context (with ``counterpart``
    its position), probabilities, ``scores``."""
    position = [c for c in ("RA", "DEC", "Conf_95_SemiMajor", *(COUNTERPART if counterpart else ())) if c in rows]
    context = [c for c in ("ASSOC1", *CONTEXT_COLUMNS, "Flags") if c in rows]
    columns = dict.fromkeys(["rank", "Source_Name", "CLASS1", *position, *context, *proba_columns(classes),
                             "predicted_class", *scores, "ood"])
    top = rows.head(10)[[c for c in columns if c in rows]]
    shown = top.round({**{c: 3 for c in top.columns if c in proba_columns(classes) or c in ("entropy", *scores)},
                       **{c: 3 for c in position}, SIGNIFICANCE_COLUMN: 1,
                       MC_ERROR_COLUMN: 4})  # a Monte Carlo error of a few 1e-3 would read 0.0 at three decimals
    if FLUX_COLUMN in shown:
        shown = shown.assign(**{FLUX_COLUMN: [f"{v:.3g}" for v in shown[FLUX_COLUMN]]})
    return top, shown


def _top_sources(frame: pd.DataFrame, score: str, classes: Sequence[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The ten sources with the largest ``score``: the data and the table as shown (rounded)."""
    ranked = frame.sort_values(score, ascending=False, kind="stable").reset_index(drop=True)
    ranked.insert(0, "rank", range(1, len(ranked) + 1))
    return _shown(ranked, ["entropy", score], classes)


def _target_lists(run: FinishedRun, lists: Mapping[str, pd.DataFrame], layout: FolderLayout) -> _Planned:
    """The head of each target list (`gpal.catalog_jobs.candidates`), first among the tables, when the run made them."""
    if not lists:
        return {}
    settings = cuts_from_meta(run.table.meta)
    cuts = cuts_text(settings)
    tables = {}
    for cls in listed_classes(run.table):  # not the clean lists: each is its full list's subset
        name = candidate_file(cls)
        rows = lists[name]
        top, shown = _shown(rows, [MC_ERROR_COLUMN], run.classes, counterpart=True)
        tables[f"Target list: {cls} ({layout.path(list_path(name))}, {len(rows)} sources): point sources of the trained population that the "
               f"model puts in {cls}, {cuts}, in the order {order_rule(list_order(cls, settings['order']))} (RA, DEC, the ellipse's semi-major axis and the "
               "counterpart's position in degrees; every row in full, with the ellipse and the association "
               "probabilities, in the CSV)"] = _Table(f"{Path(name).stem}_top10", shown, data=top)
    return tables


def _follow_up(run: FinishedRun, lists: Mapping[str, pd.DataFrame], layout: FolderLayout) -> _Planned:
    """The head of each other list (`gpal.catalog_jobs.follow_up`), when the run made them."""
    if not lists:
        return {}
    target = run.table.meta.get("TARGET") or None
    follow_up = follow_up_of(run.table.meta)
    minsig = follow_up["follow_up_significance"]
    about = f"whether it is {target}" if target else "its class"
    excluded = follow_up["follow_up_flags"]
    flags = f", none of Flags {', '.join(map(str, excluded))}" if excluded else ""
    units = ("RA, DEC and the 95% ellipse's semi-major axis in degrees, Flux1000 in photons cm^-2 s^-1, Signif_Avg "
             "in sigma; every row in full, with the ellipse, in the CSV")
    follow = lists[INFORMATIVE_FILE]
    top, shown = _shown(follow, ["information"], run.classes)
    tables = {f"Most informative ({layout.path(list_path(INFORMATIVE_FILE))}, {len(follow)} sources): point sources of the trained "
              f"population (not ood, not extended, Signif_Avg >= {minsig:g}{flags}) whose label would teach the model "
              f"most about {about} (`information`, {FOLLOW_UP_ACQUISITION}; {units})":
              _Table("most_informative_top10", shown, data=top)}
    found = lists[DISCOVERY_FILE]
    top, shown = _shown(found, ["ood_score"], run.classes)
    tables[f"Discovery ({layout.path(list_path(DISCOVERY_FILE))}, {len(found)} sources): the unassociated none-of-these (ood) point sources "
           f"with Signif_Avg >= {minsig:g}{flags}, none of Flags {', '.join(map(str, DISCOVERY_LEAVES_OUT))}, most unlike "
           f"the training set first; `predicted_class` is the trained class each is most like ({units})"] = _Table(
        "discovery_top10", shown, data=top)
    extended = lists[EXTENDED_FILE]
    if len(extended):
        top, shown = _shown(extended, ["ood_score"], run.classes)
        tables[f"Extended sources ({layout.path(list_path(EXTENDED_FILE))}, {len(extended)}, brightest first): outside the point-source "
               "classes, in neither list; the probabilities say only what each resembles"] = _Table(
            "extended_top10", shown, data=top)
    return tables


def _ranked_sources(run: FinishedRun) -> _Planned:
    """The ten most uncertain sources."""
    top, shown = _top_sources(_with_context(run), "entropy", run.classes)
    return {"The ten most uncertain classified sources (highest predictive entropy: often ambiguous whatever we learn, "
            "so a label teaches less than their uncertainty suggests)": _Table("most_uncertain", shown, data=top)}


def report_tables(run: FinishedRun, check: HeldOutCheck, metrics: Mapping[str, Any],
                  lists: Mapping[str, pd.DataFrame], layout: FolderLayout = CURRENT_LAYOUT) -> Tables:
    """The target lists first, the held-out check's tables, then the classified sources' (counts by CLASS1 and
    latitude, the other lists): {caption: files}, the captions naming each list where ``layout`` keeps it."""
    planned: _Planned = {
        **_target_lists(run, lists, layout), **_heldout_metrics(run, metrics), **_heldout_per_class(run, check),
        **_heldout_confusion(run, check), **_heldout_comparison(run, check, metrics), **_predicted_counts(run),
        **_predicted_by_latitude(run), **_follow_up(run, lists, layout), **_ranked_sources(run), **_later_check(run)}
    return {caption: {f"{TABLES_DIR}/{t.name}.{ext}": text for ext, text in table_files(t.table, data=t.data).items()}
            for caption, t in planned.items()}


def _later_check(run: FinishedRun) -> _Planned:
    """What a later release found the classified sources to be, scored (`gpal.catalog_jobs.later_check`), if checked."""
    measures = run.later
    if measures is None:
        return {}
    earlier, later = measures["earlier"].iloc[0], measures["later"].iloc[0]
    table = shown_measures(measures.drop(columns=["earlier", "later"]))
    return {f"Checked against a later release: {earlier} classifications scored by the classes {later} gives the same "
            "sources, beside the baselines refitted on the same training rows (95% intervals: paired bootstrap, "
            "Jeffreys for rates; diff = model - gpal)": _Table("later_release_check", table)}

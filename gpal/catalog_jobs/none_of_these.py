"""The main job's "none of these": which classified sources lie outside the trained population.

`check_outliers` fits `PopulationOutlierScore` on the training split, sets its threshold on
the held-out split (`fitted_outlier_score`: `OOD_FALSE_POSITIVE_RATE` of those sources flagged), measures it on the labelled sources of
the classes the model was not trained on (what a user needs to trust a flag), and records for
``ood.json`` the fitted score, which `saved_outliers` reads to flag the sources any
prediction with the folder classifies (``gpal classify`` and ``gpal predict`` alike).  `plane_counts` and `report_paragraph` turn that and the classified table into
the report's counts in and out of the Galactic plane.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from gpal.catalog_jobs.layout import OOD_FILE, located
from gpal.catalog_jobs.tables import EXTENDED
from gpal.data.dataset import NoisyDataset
from gpal.catalogs.classes import source_groups
from gpal.warning_filters import changed_filters

__all__ = ["PLANE_DEG", "check_outliers", "fitted_outlier_score", "left_out_codes", "left_out_sources", "outlier_flags",
           "plane_counts", "read_outlier_record", "report_paragraph", "saved_outliers"]

#: |b| at which the report splits the sky, as the published comparisons do.
PLANE_DEG = 10.0
#: Labels that say "unknown" (bcu: a blazar of unknown type) are neither trained classes nor left-out ones.
_NOT_LEFT_OUT = ("bcu",)


def left_out_codes(catalog: Any, trained: Sequence[str], selected: Sequence[str]) -> list[str]:
    """CLASS1 codes with sources in the catalog that the model neither trained on nor classifies."""
    skip = set(trained) | set(selected) | set(_NOT_LEFT_OUT)
    return [code for code in catalog.class_counts() if code not in skip and code != "unassociated"]


def left_out_sources(catalog: Any, codes: Sequence[str], features: Any) -> NoisyDataset | None:
    """The labelled sources of ``codes`` (None if there are none); rows with missing values are left out (or
    repaired) quietly here, and the left out listed in ``ood.json``, since they are a check, not the job's selection."""
    import warnings

    from gpal.catalogs import DroppedRowsWarning, RepairedRowsWarning

    if not codes:
        return None
    with changed_filters():
        warnings.simplefilter("ignore", DroppedRowsWarning)
        warnings.simplefilter("ignore", RepairedRowsWarning)
        return catalog.pool(select=list(codes), features=features)


def fitted_outlier_score(train: NoisyDataset, test: NoisyDataset, seed: int) -> Any:
    """`PopulationOutlierScore` fitted on ``train``, its threshold set on ``test`` at `OOD_FALSE_POSITIVE_RATE`, or at
    the smallest rate ``test`` can set (one of its sources flagged) when it holds too few sources for that rate: a
    small catalog still gets the flag, at the rate its ``ood.json`` and report state."""
    from gpal.estimators.outliers import OOD_FALSE_POSITIVE_RATE, PopulationOutlierScore

    rate = max(OOD_FALSE_POSITIVE_RATE, 1.0 / max(test.n_samples, 1))
    return PopulationOutlierScore(false_positive_rate=rate, random_state=seed).fit(train).calibrate(test)


def check_outliers(train: NoisyDataset, test: NoisyDataset, left_out: NoisyDataset | None,
                   seed: int) -> dict[str, Any]:
    """Fit, calibrate and measure the outlier score; the record for ``ood.json`` (`gpal.catalog_jobs.layout.OOD_FILE`), the fitted score with it
    (`saved_outliers` scores the sources to classify by it)."""
    scorer = fitted_outlier_score(train, test, seed)
    record: dict[str, Any] = {"threshold": scorer.threshold_, "false_positive_rate": scorer.false_positive_rate,
                              "n_components": scorer.n_components, "calibrated_on": int(test.n_samples),
                              "scorer": scorer.get_config()}
    if left_out is not None:
        flagged = scorer.is_outlier(left_out)
        codes = np.char.lower(left_out.aux["CLASS1"].astype(str))
        record["left_out"] = {code: {"n": int(np.sum(codes == code)), "flagged": int(np.sum(flagged[codes == code]))}
                              for code in sorted(set(codes), key=lambda c: (-np.sum(codes == c), c))}
        record["left_out_dropped"] = sorted(left_out.meta.get("dropped", {}))
    return record


def saved_outliers(folder: Path, pool: NoisyDataset) -> tuple[np.ndarray, np.ndarray] | None:
    """The outlier score and flag of ``pool``'s sources by the score a main job saved in ``folder`` (its
    ``ood.json``), so that ``gpal predict`` with a classify folder flags what ``gpal classify`` flags; None for a
    folder without one (``gpal train``, or a classify folder of gpal <= 0.3)."""
    return outlier_flags(read_outlier_record(located(folder, OOD_FILE)), pool)


def outlier_flags(record: Mapping[str, Any] | None, pool: NoisyDataset) -> tuple[np.ndarray, np.ndarray] | None:
    """The outlier score and flag of ``pool``'s sources by the score ``record`` (as ``ood.json`` holds it) saved;
    None for no record, or one of gpal <= 0.3 that saved no score."""
    from gpal.estimators.outliers import PopulationOutlierScore

    if record is None or "scorer" not in record:
        return None
    scorer = PopulationOutlierScore.from_config(record["scorer"])
    scores = scorer.score(pool)
    return scores, scores > scorer.threshold_


def plane_counts(frame: pd.DataFrame, classes: Sequence[str]) -> pd.DataFrame:
    """Predicted class (``extended`` apart, and "none of these" where ``ood``) of the unassociated and bcu sources, in
    and out of the plane."""
    kinds = pd.Series(source_groups(frame["CLASS1"]), index=frame.index)
    regions = (f"|b| <= {PLANE_DEG:g}", f"|b| > {PLANE_DEG:g}")
    plane = np.where(np.abs(frame["GLAT"].to_numpy()) <= PLANE_DEG, *regions)
    label = frame["predicted_class"].astype(str)
    names = [*classes, *([EXTENDED] if (label == EXTENDED).any() else [])]
    rows = []
    for kind in sorted(kinds.unique(), key=lambda k: k != "unassociated"):
        for where in regions:
            mine = (kinds == kind).to_numpy() & (plane == where)
            row: dict[str, Any] = {"sources": kind, "latitude": where, "n": int(mine.sum())}
            for name in names:
                row[name] = int(np.sum(mine & (label == name).to_numpy()))
            if "ood" in frame:
                row["none of these (ood)"] = int(np.sum(mine & frame["ood"].to_numpy(bool)))
            rows.append(row)
    return pd.DataFrame(rows)


def read_outlier_record(path: Path) -> dict[str, Any] | None:
    """The record `check_outliers` wrote at ``path`` (a folder's `OOD_FILE`; None where it is absent: a run without
    the flag)."""
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def report_paragraph(record: Mapping[str, Any] | None, frame: pd.DataFrame, classes: Sequence[str]) -> str | None:
    """The report's paragraph on "none of these" from the record `check_outliers` wrote: the threshold, what it
    caught among left-out classes, the flags (None for a run without the flag)."""
    if record is None or "ood" not in frame:
        return None
    text = (f"**None of these**: `ood` flags a source whose measurement lies far from the training population "
            f"given its own error bars (`ood_score`: squared distance from the population in units of its spread "
            f"plus the source's error bars; threshold {record['threshold']:.1f}, set so "
            f"that {record['false_positive_rate']:.0%} of the {record['calibrated_on']} held-out sources of the trained "
            f"classes are flagged). It flags {int(frame['ood'].sum())} of the {len(frame)} classified sources")
    left = record.get("left_out", {})
    if left:
        n = sum(v["n"] for v in left.values())
        k = sum(v["flagged"] for v in left.values())
        share = {code: v["flagged"] / v["n"] for code, v in left.items() if v["n"] >= 10}
        caught = [c for c, f in share.items() if f >= 0.5]
        missed = [c for c, f in share.items() if f <= 0.2]
        missing = len(record.get("left_out_dropped", []))
        text += (f". Of the {n} labelled sources of classes the model never saw"
                 + (f" ({missing} more lack a used value)" if missing else "") + f" it flags {k} ({k / n:.0%}): "
                 + ", ".join(f"{code} {v['flagged']}/{v['n']}" for code, v in left.items())
                 + (f"; it catches most {', '.join(caught)}" if caught else "")
                 + (f" and misses most {', '.join(missed)} (populations whose features resemble the trained ones)"
                    if missed else ""))
    return text + ". A source predicted as a trained class and not flagged can still belong to another population."

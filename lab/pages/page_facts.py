"""The measured numbers hand-written pages need inside a sentence, generated from the records that hold them.

A page writes ``{{ fl16y_sources }}`` (a MyST substitution) where a sentence needs a number a study measured, or
includes a small generated table (``{include} _facts/join_coverage.md``); it never types the number.  `FACTS` says
which record and which field each name shows, `TABLES` which printed table each include is; this script writes them
to ``docs/_facts/`` (``substitutions.json``, which the site's configuration reads as ``myst_substitutions``, and one
Markdown file per table), and the README's headline table between its markers, so a record remade changes the page
at the next run, and a test regenerates and compares::

    python lab/pages/page_facts.py            # rewrite docs/_facts/ and the README's headline table
    python lab/pages/page_facts.py --check    # exit 1 if docs/_facts/ or the README is stale

A record without the field a fact needs is refused with the record's path and the field's.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from generated_page import DOCS, ROOT, write_or_check
from result_records import table_markdown

__all__ = ["FACTS", "README_END", "README_START", "TABLES", "Fact", "Table", "main", "readme_headline", "render",
           "with_headline"]

#: The lab's folder from the repository's top (this script's folder's parent): records and study commands are
#: named from the top, as the records and the studies' declarations name them.
_LAB = Path(__file__).resolve().parents[1].relative_to(ROOT).as_posix()
_REGENERATE = f"python {_LAB}/pages/page_facts.py"
_FACTS = f"{_LAB}/studies/records/catalog_facts.json"
_COUNTS = ("commands", f"python {_LAB}/studies/bench_catalog_facts.py", "printed")
_TIMINGS = ("commands", f"python {_LAB}/studies/bench_catalog_facts.py --timings", "printed")
_WHEEL = ("commands", f"python {_LAB}/studies/bench_catalog_facts.py --wheel", "printed")
_CV = f"{_LAB}/studies/records/calibration/calibration_cv.json"
_RESULTS = f"{_LAB}/pages/records/results"


@dataclass(frozen=True)
class Fact:
    """One number a page shows: the record (from the repository's top), the keys down to the value, and, where the
    value is a study's printed ``label: value`` lines, the label and which of its `` / ``-separated parts."""

    record: str
    keys: tuple[Any, ...]
    label: str | None = None
    part: int | None = None
    show: Callable[[Any], str] = str
    #: a regular expression whose first group is the number wanted from a printed value of several
    pattern: str | None = None


@dataclass(frozen=True)
class Table:
    """A table from a study's printed lines: the record, the keys down to them, and either the start of the heading
    of a Markdown table it printed, or (``heading=None``) every ``label: value`` line as a two-column table.  With
    ``verbatim``, ``keys`` lead to the record's commands and every command's lines are shown as printed, under it."""

    record: str
    keys: tuple[Any, ...]
    heading: str | None = None
    verbatim: bool = False
    #: a regular expression a row must match to be shown (an excerpt); the heading lines are always shown
    rows: str | None = None
    #: which of the printed tables with this heading (from 0)
    nth: int = 0
    #: with ``keys`` ``("tables", i)``: the i-th table of a result record, its caption above it
    result_table: bool = False


def _decimals(n: int) -> Callable[[Any], str]:
    return lambda value: f"{value:.{n}f}"


def _interval(bounds: Sequence[float]) -> str:
    """A 95% interval as the pages write one: signed, three decimals, a true minus sign."""
    return "[" + ", ".join(f"{b:+.3f}".replace("-", "\u2212") for b in bounds) + "]"


def _spread(summary: dict[str, float]) -> str:
    """A mean and standard deviation as ``0.0115 ± 0.0029``."""
    return f"{summary['mean']:.4f} ± {summary['sd']:.4f}"


def _printed(label: str, part: int | None = None, keys: tuple[Any, ...] = _COUNTS) -> Fact:
    return Fact(_FACTS, keys, label, part)


_CONVENTIONS = f"{_LAB}/studies/records/catalog_conventions.json"
_CONVENTION_LINES = ("commands", f"python {_LAB}/studies/bench_catalog_conventions.py", "printed")


def _convention(label: str, pattern: str) -> Fact:
    """One number of a ``label: ...`` line the study ``catalog_conventions`` printed, found by ``pattern``."""
    return Fact(_CONVENTIONS, _CONVENTION_LINES, label, pattern=pattern)


_RELEASES = "3FGL / 4FGL / 4FGL-DR2 / 4FGL-DR4 / FL16Y sources"
_HR = "HR12 / HR23 / HR34 / HR45 / HR56"

#: The numbers pages show inside sentences, by the substitution name a page writes.
FACTS: dict[str, Fact] = {
    # the first timing table's first row: `gpal classify` on FL16Y, its wall seconds over the runs
    "main_job_wall_s": Fact(f"{_LAB}/pages/records/results/timings.json", ("tables", 0, "rows", 0, 1)),
    **{f"{name}_sources": _printed(_RELEASES, i)
       for i, name in enumerate(("fgl3", "fgl4", "dr2", "dr4", "fl16y"))},
    "wheel_mb": _printed("wheel MB", keys=_WHEEL),
    "wheel_catalogs_mb": _printed("catalogs in the wheel MB", keys=_WHEEL),
    "wheel_keel_mb": _printed("KEEL copies in the wheel MB", keys=_WHEEL),
    "wheel_rest_mb": _printed("the rest of the wheel MB", keys=_WHEEL),
    "fl16y_names_3fgl": _printed("FL16Y ASSOC_FGL naming a 3FGL source"),
    "fl16y_assoc_twice": _printed("FL16Y ASSOC_FGL naming one 4FGL-DR4 source twice or more"),
    "dr4_assoc_3fgl_twice": _printed("4FGL-DR4 ASSOC_FGL naming one 3FGL source twice or more"),
    "fgl3_psr": _printed("3FGL bll / fsrq / psr / msp sources", 2),
    "fgl3_bll": _printed("3FGL bll / fsrq / psr / msp sources", 0),
    "fgl3_fsrq": _printed("3FGL bll / fsrq / psr / msp sources", 1),
    "fgl3_beta_fitted": _printed("3FGL sources with beta fitted / not", 0),
    "fgl3_beta_not_fitted": _printed("3FGL sources with beta fitted / not", 1),
    "fgl3_features": _printed("3FGL fermi_3fgl features"),
    "fgl3_pool": _printed("3FGL unassociated and bcu sources with every fermi_3fgl feature"),
    "published_sources": _printed("4FGL published cut's sources"),
    "published_min_sigcurv": _printed("4FGL published cut's smallest LP_SigCurv"),
    "dr4_cut_sources": _printed("4FGL-DR4 published cut's sources"),
    "dr4_cut_below": _printed("4FGL-DR4 published cut's sources with LP_SigCurv below 0.1"),
    "dr4_cut_min_sigcurv": _printed("4FGL-DR4 published cut's smallest LP_SigCurv"),
    "dr4_other_classes": _printed("4FGL-DR4 sources of other classes"),
    "fgl4_unassociated_nan_beta": _printed("4FGL unassociated sources with a NaN Unc_LP_beta"),
    "fgl4_pool": _printed("4FGL pool of the unassociated with the default preset"),
    "fgl4_unassociated_sources": _printed("4FGL unassociated sources"),
    "fl16y_labelled": _printed("FL16Y main job's labelled sources in the catalog"),
    "fl16y_kept": _printed("FL16Y of them the fermi_dr4 preset keeps"),
    "fl16y_dropped": _printed("FL16Y of them dropped (the columns without a finite value)"),
    "dr4_labelled": _printed("4FGL-DR4 main job's labelled sources in the catalog"),
    "dr4_kept": _printed("4FGL-DR4 of them the fermi_dr4 preset keeps"),
    "dr4_dropped": _printed("4FGL-DR4 of them dropped (the columns without a finite value)"),
    "fl16y_unc10": _printed("FL16Y rows with Unc_Frac_Variability = 10"),
    "fl16y_unc10_zero": _printed("FL16Y of them with Frac_Variability = 0"),
    "fl16y_classified": _printed("FL16Y main job's classified sources"),
    "fl16y_classified_unc10": _printed("FL16Y main job's classified sources with Unc_Frac_Variability = 10"),
    "fl16y_main_labelled": _printed("FL16Y main job's labelled sources"),
    "fl16y_labelled_unc10": _printed("FL16Y main job's labelled sources with Unc_Frac_Variability = 10"),
    "fl16y_trained": _printed("FL16Y main job's trained on sources"),
    "fl16y_trained_unc10": _printed("FL16Y main job's trained on sources with Unc_Frac_Variability = 10"),
    "fl16y_unc_median": _printed("FL16Y median Unc_Frac_Variability of the rows with one"),
    "hr_old_median": _printed(f"4FGL-DR4 sources, {_HR}, median old error with an upper-limit band"),
    "hr_new_median": _printed(f"4FGL-DR4 sources, {_HR}, median new error with an upper-limit band"),
    "hr_new_largest": _printed("4FGL-DR4 sources, largest new hardness-ratio error"),
    "hr12_detected": _printed("4FGL-DR4 sources, HR12 median new / old error with both bands detected"),
    "flux_error_largest": _printed("4FGL-DR4 labelled sources, largest Unc_Flux1000 / Flux1000"),
    "hr_limit_shift": _printed(f"4FGL-DR4 labelled sources, {_HR}, median |draws' mean - point value| / sd with an "
                               "upper-limit band"),
    "hr_detected_shift": _printed(f"4FGL-DR4 labelled sources, {_HR}, median |draws' mean - point value| / sd with "
                                  "both bands detected"),
    "hr_limit_rows": _printed(f"4FGL-DR4 labelled sources, {_HR}, with an upper-limit band"),
    "draws_hr": _printed("4FGL-DR4 labelled sources, hardness ratios, error bar of 512 draws against 65536, "
                         "median / largest difference in %"),
    "draws_flux": _printed("4FGL-DR4 labelled sources, log fluxes, error bar of 512 draws against 65536, "
                           "median / largest difference in %"),
    "cv_fl16y_ece": Fact(_CV, ("catalogs", "FL16Y", "models", "gpal", "ece"), show=_decimals(4)),
    "cv_fl16y_logistic_ece": Fact(_CV, ("catalogs", "FL16Y", "models", "logistic", "ece"), show=_decimals(4)),
    "cv_fl16y_n": Fact(_CV, ("catalogs", "FL16Y", "n")),
    "cv_fl16y_ece_difference": Fact(_CV, ("catalogs", "FL16Y", "models", "gpal", "minus_logistic", "ece"),
                                    show=_interval),
    "cv_dr4_ece": Fact(_CV, ("catalogs", "4FGL-DR4", "models", "gpal", "ece"), show=_decimals(4)),
    "cv_dr4_logistic_ece": Fact(_CV, ("catalogs", "4FGL-DR4", "models", "logistic", "ece"), show=_decimals(4)),
    "cv_dr4_n": Fact(_CV, ("catalogs", "4FGL-DR4", "n")),
    "cv_dr4_ece_difference": Fact(_CV, ("catalogs", "4FGL-DR4", "models", "gpal", "minus_logistic", "ece"),
                                  show=_interval),
    "cv_dr4_nll": Fact(_CV, ("catalogs", "4FGL-DR4", "models", "gpal", "nll"), show=_decimals(3)),
    "cv_dr4_logistic_nll": Fact(_CV, ("catalogs", "4FGL-DR4", "models", "logistic", "nll"), show=_decimals(3)),
    "cv_dr4_nll_difference": Fact(_CV, ("catalogs", "4FGL-DR4", "models", "gpal", "minus_logistic", "nll"),
                                  show=_interval),
    "cv_fl16y_nll": Fact(_CV, ("catalogs", "FL16Y", "models", "gpal", "nll"), show=_decimals(3)),
    "cv_fl16y_logistic_nll": Fact(_CV, ("catalogs", "FL16Y", "models", "logistic", "nll"), show=_decimals(3)),
    "cv_fl16y_calibrated_ece": Fact(_CV, ("catalogs", "FL16Y", "calibrated_ece"), show=_spread),
    "cv_dr4_calibrated_ece": Fact(_CV, ("catalogs", "4FGL-DR4", "calibrated_ece"), show=_spread),
    # class 2 of the main job's classes (bll, fsrq, pulsar) in the record's class_names
    "cv_fl16y_pulsar_ece_difference": Fact(_CV, ("catalogs", "FL16Y", "models", "gpal", "minus_logistic",
                                                 "class_ece_2"), show=_interval),
    "cv_dr4_pulsar_ece_difference": Fact(_CV, ("catalogs", "4FGL-DR4", "models", "gpal", "minus_logistic",
                                               "class_ece_2"), show=_interval),
}

FACTS.update({
    **{f"{release}_{kind}": _convention(f"{label} sources", rf"{kind}: (\d+)")
       for release, label in (("fgl3", "3FGL"), ("fgl4", "4FGL"), ("fl16y", "FL16Y")) for kind in ("unassociated", "bcu")},
    **{f"{release}_{name}": _convention(f"{label} rows", pattern)
       for release, label in (("fgl4", "4FGL"), ("dr4", "4FGL-DR4"))
       for name, pattern in (("nan_beta", r"NaN Unc_LP_beta: (\d+)"), ("zero_sigcurv", r"LP_SigCurv = 0: (\d+)"),
                             ("unc10", r"Unc_Frac_Variability = 10: (\d+)"),
                             ("unc10_zero", r"Frac_Variability = 0: (\d+)"))},
    "dr4_unc10_labelled": _convention("4FGL-DR4 Unc_Frac_Variability = 10 among the labelled (bll/fsrq/psr/msp)",
                                      r"^(\d+ of \d+)"),
    "dr4_unc_median": _convention("4FGL-DR4 Unc_Frac_Variability = 10 among the labelled (bll/fsrq/psr/msp)",
                                  r"median: ([\d.]+)"),
    "dr4_frac_largest": _convention("4FGL-DR4 Unc_Frac_Variability = 10 among the labelled (bll/fsrq/psr/msp)",
                                    r"largest Frac_Variability: ([\d.]+)"),
    "dr4_limit_bands_labelled": _convention("4FGL-DR4 sources with a NaN lower Unc_Flux_Band, bands 0-7",
                                            r"labelled: ([\d, ]+);"),
    "dr4_limit_bands_pool": _convention("4FGL-DR4 sources with a NaN lower Unc_Flux_Band, bands 0-7",
                                        r"bcu \(\d+\): ([\d, ]+)$"),
    "dr4_pool_sources": _convention("4FGL-DR4 sources with a NaN lower Unc_Flux_Band, bands 0-7",
                                    r"bcu \((\d+)\)"),
    "fgl3_faint_limits": _convention("3FGL upper-limit band-rows with a flux below 0.001 of their upper error",
                                     r"^(\d+)$"),
    "fgl3_month_limits": _convention("3FGL Flux_History", r"upper error: ([\d ]+),"),
    "fgl3_month_zero": _convention("3FGL Flux_History", r"exactly 0: ([\d ]+)$"),
})

_INFORMATIVE = f"{_LAB}/studies/records/informative_vs_uncertain.json"
_INFORMATIVE_LINES = ("commands", f"python {_LAB}/studies/bench_informative_vs_uncertain.py runs/main_job", "printed")
FACTS.update({
    "uncertain_entropy": Fact(_INFORMATIVE, _INFORMATIVE_LINES, "the 10 most uncertain, entropy min / max (nats)",
                              pattern=r"^([\d.]+ / [\d.]+)$"),
    "informative_entropy": Fact(_INFORMATIVE, _INFORMATIVE_LINES, "the 10 most informative, entropy min / max (nats)",
                                pattern=r"^([\d.]+ / [\d.]+)$"),
    "informative_information": Fact(_INFORMATIVE, _INFORMATIVE_LINES,
                                    "the 10 most informative, information min / max (nats)",
                                    pattern=r"^([\d.]+ / [\d.]+)$"),
    "informative_shared": Fact(_INFORMATIVE, _INFORMATIVE_LINES, "sources in both lists"),
})

_BCU_RULE = f"{_LAB}/studies/records/bcu_rule.json"
_BCU_RULE_SCRIPT = f"python {_LAB}/studies/bench_bcu_rule.py"
_TARGETS = f"{_LAB}/studies/records/target_lists.json"
_TARGETS_DR4 = ("commands", f"python {_LAB}/studies/bench_target_lists.py runs/targets-dr4 bcu rule cuts top",
                "printed")
_TARGETS_V20 = ("commands", f"python {_LAB}/studies/bench_target_lists.py runs/targets-v20 bcu rule top", "printed")
FACTS.update({
    "dr4_bcu_candidates": Fact(_TARGETS, _TARGETS_DR4, "bcu among the candidates", pattern=r"^(.*?);"),
    "v20_bcu_candidates": Fact(_TARGETS, _TARGETS_V20, "bcu among the candidates", pattern=r"^(.*?);"),
    **{f"{run}_bcu_{rule}_outside": Fact(_TARGETS, keys, f"gpal {label}", pattern=r"^(\d+ of \d+) bcu predicted")
       for run, keys in (("dr4", _TARGETS_DR4), ("v20", _TARGETS_V20))
       for rule, label in (("no_rule", "no rule"), ("rule", "bcu rule"))},
})

_DATASETS = f"{_LAB}/studies/records/dataset_facts.json"
_DATASET_LINES = ("commands", f"python {_LAB}/studies/bench_dataset_facts.py", "printed")


def _dataset(label: str, part: int | None = None, digits: int = 3, pattern: str | None = None) -> Fact:
    """A number the study ``dataset_facts`` printed, rounded to ``digits`` decimals as the page shows it."""
    return Fact(_DATASETS, _DATASET_LINES, label, part, lambda value: f"{float(value):.{digits}f}", pattern)


_RING = "ringnorm (KEEL ring) / 1000, class 0 / class 1"
_TWO = "twonorm (KEEL), class 0 / class 1"
FACTS.update({
    "keel_mb": _dataset("KEEL files shipped (gpal/data/keel_files/, gzip-compressed, 11 files)", digits=2,
                        pattern=r"= ([\d.]+) MB"),
    **{f"ring_mean{c}": _dataset(f"{_RING} mean of the inputs", c) for c in (0, 1)},
    **{f"ring_sd{c}": _dataset(f"{_RING} per-feature standard deviation, averaged", c, 2) for c in (0, 1)},
    "ring_mean_in_sd": _dataset("ringnorm (KEEL ring), class-1 mean in units of its per-feature standard deviation",
                                digits=2),
    **{f"two_mean{c}": _dataset(f"{_TWO} mean of the inputs", c) for c in (0, 1)},
    **{f"two_sd{c}": _dataset(f"{_TWO} per-feature standard deviation, averaged", c) for c in (0, 1)},
    "two_a": _dataset("twonorm recipe's a = 2/sqrt(20)"),
    "twonorm_bayes": _dataset("twonorm_breiman exact Bayes error, Phi(-2) (%)"),
    "ringnorm_bayes_1": _dataset("ringnorm_breiman exact Bayes error at a = 1/sqrt(20) (%)"),
    "ringnorm_bayes_2": _dataset("ringnorm_breiman exact Bayes error at a = 2/sqrt(20) (%)"),
})

FACTS["mc_error_ratio"] = Fact(f"{_LAB}/studies/records/mc_error.json",
                               ("commands", f"python {_LAB}/studies/bench_mc_error.py", "printed"), None,
                               show=lambda lines: _table_cell(lines, "| latent draws spread over input draws", -1))


def _table_cell(lines: list[str], row: str, column: int) -> str:
    """The cell of a printed Markdown table's row that starts with ``row``."""
    for line in lines:
        if line.startswith(row):
            return line.strip("|").split("|")[column].strip()
    raise ValueError(f"no printed row starting {row!r}")


_ERROR_BARS = f"{_RESULTS}/error_bars.json"
FACTS.update({
    "faint_nll_with": Fact(_ERROR_BARS, ("tables", 0, "rows", 0, 1)),
    "faint_nll_without": Fact(_ERROR_BARS, ("tables", 0, "rows", 0, 2)),
    "faint_nll_difference": Fact(_ERROR_BARS, ("tables", 0, "rows", 0, 3)),
    "fl16y_held_out": Fact(f"{_RESULTS}/main_job.json", ("tables", 0, "columns", 0), pattern=r"\((\d+) sources\)"),
    "fl16y_pool_sources": Fact(f"{_LAB}/studies/records/bcu_counts.json",
                               ("commands", f"python {_LAB}/studies/bench_bcu_counts.py", "printed"),
                               "FL16Y unassociated and bcu sources"),
})

FACTS["bcu_split_cost"] = Fact(f"{_LAB}/studies/records/bcu_split_cost.json",
                               ("commands", f"python {_LAB}/studies/bench_bcu_split_cost.py --pairs 3", "printed"),
                               "CPU ratio 4lac / none", pattern=r"^([\d.]+ \[[\d., ]+\])")

_DEFAULT = f"{_LAB}/studies/records/estimator_default.json"
_DEFAULT_SCRIPT = f"python {_LAB}/studies/bench_estimator_default.py"
_DEFAULT_SYNTHETIC = ("commands", f"{_DEFAULT_SCRIPT} --synthetic error_bars --seeds 0 1 2", "printed")
_DEFAULT_TIME = ("commands", f"{_DEFAULT_SCRIPT} --synthetic default --seeds 0 1 2", "printed")
_DEFAULT_CURVES = ("commands", f"{_DEFAULT_SCRIPT} --curves runs/curves/noisy_d5_s0.jsonl runs/curves/noisy_d5_s1.jsonl "
                   "runs/curves/none_d10_s0.jsonl", "printed")
_DEFAULT_CATALOGS = ("commands", f"{_DEFAULT_SCRIPT} --units runs/estimator_default --summarize", "printed")
_DEFAULT_FIT_TIME = ("commands", f"{_DEFAULT_SCRIPT} --fit-time runs/fit_time --seeds 0 1 2", "printed")
_DEFAULT_POOL_PRIOR = ("commands", f"{_DEFAULT_SCRIPT} --units runs/estimator_default --summarize --reference ignoring "
                       "--models ignoring error_bars error_bars_pool_prior --checks held-out:FL16Y held-out:4FGL-DR4 "
                       "4FGL-DR4:FL16Y 4FGL:FL16Y 4FGL-DR2:FL16Y 4FGL:4FGL-DR4 3FGL:FL16Y",
                       "printed")
_DEFAULT_CHECKS = "held-out:FL16Y held-out:4FGL-DR4 4FGL:FL16Y 4FGL-DR2:FL16Y 4FGL:4FGL-DR4 4FGL-DR4:FL16Y 3FGL:FL16Y"
_DEFAULT_VARIANTS = ("commands", f"{_DEFAULT_SCRIPT} --units runs/prior_variants --summarize --reference ignoring "
                     "--models ignoring error_bars error_bars_background error_bars_widened error_bars_tempered "
                     f"--checks {_DEFAULT_CHECKS}", "printed")
_DEFAULT_BACKGROUND = ("commands", f"{_DEFAULT_SCRIPT} --background-shares --checks {_DEFAULT_CHECKS}", "printed")
_DEFAULT_VARIANT_TASKS = ("commands", f"{_DEFAULT_SCRIPT} --variant-tasks --seeds 0 1 2", "printed")
_DEFAULT_WINE = ("commands", f"{_DEFAULT_SCRIPT} --wine-pipeline --seeds 0 1 2", "printed")
_DEFAULT_STEPS = ("commands", f"{_DEFAULT_SCRIPT} --step-times", "printed")
FACTS["estimator_default_gain"] = Fact(_DEFAULT, _DEFAULT_SYNTHETIC,
                                       "test NLL without X_var minus given X_var, mean over 3 seeds")

_REPORT = f"{_LAB}/studies/records/report_figures.json"
_REPORT_LINES = ("commands", f"python {_LAB}/studies/make_report_figures.py --report runs/report_figures", "printed")

#: The small tables pages include, by file name under ``docs/_facts/``.
TABLES: dict[str, Table] = {
    **{f"scheduler_{i}.md": Table(f"{_LAB}/studies/records/scheduler.json", ("tables", i), result_table=True)
       for i in range(2)},
    **{f"calibration_{name}.md": Table(f"{_LAB}/studies/records/calibration/calibration.md", (), heading)
       for name, heading in (("variants", "| check | model | NLL | ECE |"), ("per_seed", "| check | model | seed 0:"),
                             ("per_class", "| check | model | bll <0.1"), ("pool_prior", "| check | group | sources |"),
                             ("decision_rule", "| check | model | accuracy: argmax"))},
    "report_metrics.md": Table(_REPORT, _REPORT_LINES, "| method | nll | error |"),
    "report_metrics_pooled.md": Table(_REPORT, _REPORT_LINES, "| method | nll | error |", nth=1),
    "list_cuts.md": Table(f"{_LAB}/studies/records/list_cuts.json",
                          ("commands", f"python {_LAB}/studies/bench_list_cuts.py catalogs/gll_psc_v35.fit.gz "
                                       "catalogs/gll_psc_v41.fit.gz", "printed"), "| DR4 Signif_Avg |"),
    **{f"{run}_{part}.md": Table(f"{_LAB}/studies/records/{run}/{part}.md", (), "| ")
       for run in ("follow_up", "follow_up_single", "follow_up_cold") for part in ("differences", "curves_summary",
                                                                                  "queried_classes")},
    # the defaults (5 sigma, 0.1 deg, no flag) and each cut moved one step from them
    "target_cuts.md": Table(_TARGETS, _TARGETS_DR4, "| class | Signif_Avg >=",
                            rows=r"^\| \w+ \| (?:5 \| (?:inf|0\.2|0\.1) \| none|[46] \| 0\.1 \| none|5 \| 0\.1 \| 1-14) \|"),
    "target_top_dr4.md": Table(_TARGETS, _TARGETS_DR4, "| class | base rate |"),
    "target_top_v20.md": Table(_TARGETS, _TARGETS_V20, "| class | base rate |"),
    "bcu_rules_dr4.md": Table(_TARGETS, _TARGETS_DR4, "| | no rule | blazar prior |"),
    "bcu_later_dr4.md": Table(_TARGETS, _TARGETS_DR4, "| model | metric |", rows=r"^\| gpal (?:no rule|\+ bcu rule) \|"),
    "bcu_later_v20.md": Table(_TARGETS, _TARGETS_V20, "| model | metric |", rows=r"^\| gpal (?:no rule|\+ bcu rule) \|"),
    "bcu_rule_selection.md": Table(_BCU_RULE, ("commands", f"{_BCU_RULE_SCRIPT} select runs/bcu-rule", "printed"),
                                   "| rule | NLL |"),
    "bcu_rule_test_dr4.md": Table(_BCU_RULE, ("commands", f"{_BCU_RULE_SCRIPT} test runs/bcu-rule", "printed"),
                                  "| rule | NLL |"),
    "bcu_rule_test_v20.md": Table(_BCU_RULE, ("commands", f"{_BCU_RULE_SCRIPT} test runs/bcu-rule", "printed"),
                                  "| rule | NLL |", nth=1),
    "bcu_rules_v20.md": Table(_TARGETS, _TARGETS_V20, "| | no rule | blazar prior |"),
    "flux_band_limits.md": Table(_CONVENTIONS, _CONVENTION_LINES, "| check | 4FGL-DR4 (v35) | 4FGL (v20) |"),
    "fgl3_band_limits.md": Table(_CONVENTIONS, _CONVENTION_LINES, "| check | 3FGL (v16) |"),
    "flux_history_limits.md": Table(_CONVENTIONS, _CONVENTION_LINES, "| check | 4FGL (v20) | DR2 (v27) |"),
    "join_coverage.md": Table(_FACTS, _COUNTS, "| release | sources with a 4LAC row"),
    "build_timings.md": Table(_FACTS, _TIMINGS),
    "error_model.md": Table(f"{_LAB}/studies/records/error_model.json",
                            ("commands", f"python {_LAB}/studies/make_error_model_figure.py", "printed"),
                            "| feature | old median"),
    "missing_errors.md": Table(f"{_LAB}/studies/records/missing_errors.json", ("commands",), verbatim=True),
    "estimator_default_synthetic.md": Table(_DEFAULT, _DEFAULT_SYNTHETIC),
    "estimator_default_time.md": Table(_DEFAULT, _DEFAULT_TIME),
    "estimator_default_stops.md": Table(_DEFAULT, _DEFAULT_CURVES),
    "estimator_default_catalogs.md": Table(_DEFAULT, _DEFAULT_CATALOGS, "| check | measure |"),
    "estimator_default_fit_time.md": Table(_DEFAULT, _DEFAULT_FIT_TIME),
    "estimator_default_pool_prior.md": Table(_DEFAULT, _DEFAULT_POOL_PRIOR, "| check | measure |"),
    "estimator_default_prior_variants.md": Table(_DEFAULT, _DEFAULT_VARIANTS, "| check | measure |",
                                                 rows=r"^\| [^|]+ \| (?:nll|balanced_accuracy) \|"),
    "estimator_default_background.md": Table(_DEFAULT, _DEFAULT_BACKGROUND),
    "estimator_default_variant_tasks.md": Table(_DEFAULT, _DEFAULT_VARIANT_TASKS),
    "estimator_default_wine.md": Table(_DEFAULT, _DEFAULT_WINE),
    "estimator_default_steps.md": Table(_DEFAULT, _DEFAULT_STEPS),
}


def _field(root: Path, record: str, keys: tuple[Any, ...], what: str) -> Any:
    """The value at ``keys`` in ``record``; ValueError naming the record and the missing field otherwise."""
    path = root / record
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"{record}: cannot be read as a JSON record ({exc}); {what} is shown from it") from None
    for depth, key in enumerate(keys):
        try:
            value = value[key]
        except (KeyError, IndexError, TypeError):
            field = "/".join(map(str, keys[:depth + 1]))
            raise ValueError(f"{record}: no field {field!r}, which {what} is shown from; rerun the study that "
                             f"writes the record, or change the fact in {_LAB}/pages/page_facts.py") from None
    return value


def _value(root: Path, name: str, fact: Fact) -> str:
    value = _field(root, fact.record, fact.keys, f"{{{{ {name} }}}}")
    if fact.label is not None:
        values = dict(line.split(": ", 1) for line in value if ": " in line and not line.startswith("|"))
        if fact.label not in values:
            raise ValueError(f"{fact.record}: field {'/'.join(map(str, fact.keys))!r} has no printed line "
                             f"{fact.label!r}, which {{{{ {name} }}}} is shown from")
        value = values[fact.label]
        if fact.part is not None:
            value = value.split(" / ")[fact.part]
    if fact.pattern is not None:
        found = re.search(fact.pattern, str(value))
        if not found:
            raise ValueError(f"{fact.record}: {fact.label or '/'.join(map(str, fact.keys))!r} ({value!r}) does not "
                             f"match {fact.pattern!r}, which {{{{ {name} }}}} is shown from")
        value = found[1]
    try:
        return fact.show(value)
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise ValueError(f"{fact.record}: {'/'.join(map(str, fact.keys))} cannot show {{{{ {name} }}}} ({exc})"
                         ) from None


def _table(root: Path, name: str, table: Table) -> str:
    if table.record.endswith(".md"):  # a Markdown file a study kept: its lines are the printed ones
        try:
            lines = (root / table.record).read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise ValueError(f"{table.record}: cannot be read ({exc.strerror}); the table {name} is shown from it"
                             ) from None
    else:
        lines = _field(root, table.record, table.keys, f"the table {name}")
    if table.result_table:
        try:
            return table_markdown(lines)
        except (KeyError, TypeError):
            raise ValueError(f"{table.record}: field {'/'.join(map(str, table.keys))!r} is not a result record's table "
                             "(caption, columns, align, rows)") from None
    if table.verbatim:
        shown = []
        for command, run in lines.items():
            printed = _field(root, table.record, (*table.keys, command, "printed"), f"the table {name}")
            shown += [f"$ {command}", *printed, ""]
        return "```text\n" + "\n".join(shown).rstrip("\n") + "\n```\n"
    if table.heading is None:
        rows = [line.split(": ", 1) for line in lines if ": " in line and not line.startswith("|")]
        if not rows:
            raise ValueError(f"{table.record}: field {'/'.join(map(str, table.keys))!r} has no printed "
                             f"'label: value' line, which the table {name} is made of")
        return "\n".join(["| measured | value |", "|---|---|", *(f"| {a} | {b} |" for a, b in rows)]) + "\n"
    starts = [i for i, line in enumerate(lines) if line.startswith(table.heading)]
    if len(starts) <= table.nth:
        raise ValueError(f"{table.record}: field {'/'.join(map(str, table.keys))!r} has no printed table headed "
                         f"{table.heading!r} (number {table.nth} from 0), which the table {name} is")
    shown, notes = _printed_table(lines, starts[table.nth])
    if table.rows is not None:
        shown = shown[:2] + [row for row in shown[2:] if re.search(table.rows, row)]
    return "\n".join(shown) + "\n" + "".join(f"\n- {note}" for note in notes) + ("\n" if notes else "")


def _printed_table(lines: list[str], start: int) -> tuple[list[str], list[str]]:
    """The rows of the printed table whose heading is ``lines[start]``, and the notes printed among them (a study
    that prints a note after each group of rows): the table runs on past a note while rows follow it that are not
    the heading of another table, and the note after the last group, worded as the others, is kept too."""
    rows, notes, end = [], [], start
    while end < len(lines):
        line = lines[end]
        if line.startswith("|"):
            rows.append(line)
        elif (end + 1 < len(lines) and lines[end + 1].startswith("|")
              and not (end + 2 < len(lines) and lines[end + 2].startswith("|---"))):
            notes.append(line)
        else:
            if notes and line.split()[:2] == notes[0].split()[:2]:  # the last group's note, worded as the others
                notes.append(line)
            break
        end += 1
    return rows, notes


#: The README's headline table, between these markers (the README is read outside the site, so it gets no
#: substitutions: the whole table is generated).
README_START = "<!-- headline: generated by page_facts.py from the results records -->"
README_END = "<!-- end headline -->"
_BASELINES = {"logistic regression": "logistic", "isotonic-calibrated random forest": "calibrated random forest"}


def _record_table(root: Path, name: str, index: int) -> dict[str, Any]:
    return _field(root, f"{_RESULTS}/{name}.json", ("tables", index), "the README's headline table")


def _row(root: Path, name: str, index: int, *labels: str) -> list[str]:
    """The row of a results record's table whose first cells are ``labels``; ValueError naming both otherwise."""
    table = _record_table(root, name, index)
    for row in table["rows"]:
        if [str(cell) for cell in row[:len(labels)]] == list(labels):
            return [str(cell) for cell in row]
    raise ValueError(f"{_RESULTS}/{name}.json: table {index} has no row {list(labels)}, which the README's "
                     "headline table shows")


def _first(cell: str) -> str:
    """The leading number of a cell ("0.357 [0.308, 0.411]", "0.381; +0.024 [...]")."""
    found = re.match(r"[\d.]+", cell)
    if not found:
        raise ValueError(f"the README's headline table expected a number at the start of {cell!r}")
    return found[0]


class _Rows(dict):
    """A main-job record's held-out rows by label; a missing one is named with its record."""

    def __init__(self, record: str, rows: dict[str, str]) -> None:
        super().__init__(rows)
        self.record = record

    def __missing__(self, label: str) -> str:
        raise ValueError(f"{self.record}: table 0 has no row {label!r}, which the README's headline table shows")


def _held_out(root: Path, name: str) -> tuple[str, _Rows]:
    """The number of held-out sources of a main-job record and its rows by label."""
    table = _record_table(root, name, 0)
    sources = re.search(r"\((\d+) sources\)", table["columns"][0])
    if not sources:
        raise ValueError(f"{_RESULTS}/{name}.json: table 0's first column {table['columns'][0]!r} does not give the "
                         "held-out sources, which the README's headline table shows")
    return sources[1], _Rows(f"{_RESULTS}/{name}.json", {str(row[0]): str(row[1]) for row in table["rows"]})


def _best_baseline(rows: dict[str, str], measure: str) -> str:
    """The baseline of lowest ``measure`` among the main job's, as "0.359 (calibrated random forest)"."""
    found = [(float(_first(rows[f"{model}: {measure}; it − gpal"])), name) for model, name in _BASELINES.items()
             if f"{model}: {measure}; it − gpal" in rows]
    if not found:
        raise ValueError(f"no baseline's {measure} in the main job's record, which the README's headline table shows")
    value, name = min(found)
    return f"{value:.3f} ({name})"


def readme_headline(root: Path = ROOT) -> str:
    """The README's headline table, each number read from the results record its row names."""
    fl16y, rows = _held_out(root, "main_job")
    dr4, dr4_rows = _held_out(root, "main_job.dr4")
    open_sky = f"`python {_LAB}/studies/run.py open_sky` (record `open_sky.json`)"
    gpal_4fgl = _first(_row(root, "open_sky", 4, "4FGL -> FL16Y", "open sky", "gpal")[3])
    logistic_4fgl = _first(_row(root, "open_sky", 4, "4FGL -> FL16Y", "open sky", "logistic")[3])
    pulsars = _row(root, "open_sky", 0, "4FGL-DR4 -> FL16Y", "open sky")[5].split(" = ")[0]
    pulsars_before = _row(root, "open_sky", 0, "4FGL-DR4 -> FL16Y", "closed sky + pool prior")[5].split(" = ")[0]
    faint = _row(root, "error_bars", 0, "faintest quarter")
    lines = [
        "| check | gpal | best baseline | command |", "|---|---|---|---|",
        f"| FL16Y held out ({fl16y} sources, four classes): NLL, accuracy | {_first(rows['NLL (nats)'])}, "
        f"{_first(rows['accuracy'])} | {_best_baseline(rows, 'NLL')} | `gpal classify` |",
        f"| FL16Y held out: ECE (15 bins) | {_first(rows['ECE (15 bins)'])} | {_best_baseline(rows, 'ECE')} "
        "| `gpal classify` |",
        f"| 4FGL-DR4 held out ({dr4} sources): NLL | {_first(dr4_rows['NLL (nats)'])} | "
        f"{_best_baseline(dr4_rows, 'NLL')} | `gpal classify --catalog 4FGL-DR4` |",
        "| 4FGL's unassociated and bcu sources scored by the classes FL16Y gave them, over the four classes: NLL | "
        f"{gpal_4fgl} | {logistic_4fgl} (logistic) | {open_sky} |",
        f"| 4FGL-DR4's pulsar list, the rows FL16Y classed: pulsars expected / found | {pulsars} | {pulsars_before} "
        f"(the earlier three-class default) | {open_sky} |",
        f"| 4FGL-DR4's faintest quarter, trained on the rest: NLL | {faint[1]} ({faint[2]} without error bars) | "
        f"{faint[4]} | `python {_LAB}/studies/run.py error_bars` (record `error_bars.json`) |",
    ]
    return "\n".join(lines) + "\n"


def with_headline(readme: str, table: str) -> str:
    """The README's text with ``table`` between the headline markers (ValueError if they are missing)."""
    start, end = readme.find(README_START), readme.find(README_END)
    if start < 0 or end < start:
        raise ValueError(f"README.md lacks the markers {README_START!r} ... {README_END!r} around its headline table")
    return readme[:start + len(README_START)] + "\n" + table + readme[end:]


def render(root: Path = ROOT, facts: dict[str, Fact] | None = None,
           tables: dict[str, Table] | None = None) -> dict[str, str]:
    """Each file of ``docs/_facts/`` by name, its text made from the records under ``root``."""
    facts = FACTS if facts is None else facts
    tables = TABLES if tables is None else tables
    substitutions = {name: _value(root, name, fact) for name, fact in facts.items()}
    files = {"substitutions.json": json.dumps(substitutions, indent=1, ensure_ascii=False) + "\n"}
    files.update({name: _table(root, name, table) for name, table in tables.items()})
    return files


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if docs/_facts/ is stale, writing nothing")
    parser.add_argument("--docs", type=Path, default=DOCS, help="the docs folder (default: the repository's)")
    parser.add_argument("--root", type=Path, default=ROOT, help="the folder the records' paths start from")
    args = parser.parse_args(argv)
    try:
        files = render(args.root)
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return 2
    status = 0
    for name, text in files.items():
        status |= write_or_check(args.docs / "_facts" / name, text, args.check, _REGENERATE)
    readme = args.docs.parent / "README.md"
    try:
        text = with_headline(readme.read_text(encoding="utf-8"), readme_headline(args.root))
    except (OSError, ValueError) as exc:
        print(exc, file=sys.stderr)
        return 2
    return status | write_or_check(readme, text, args.check, _REGENERATE)


if __name__ == "__main__":
    sys.exit(main())

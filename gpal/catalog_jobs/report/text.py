"""The words of ``report.md``, one function per paragraph (None: the paragraph does not apply), and the
terminal's `headline`."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from gpal.catalog_jobs.bcu_types import NOT_SPLIT
from gpal.catalog_jobs.candidates import (
    DOUBTFUL_FLAGS, LATER_YIELD_RATIOS, candidate_lists, clean, cuts_from_meta, cuts_text, expected_members,
    followable, known, known_sources, orders_words, trusted_yield_words,
)
from gpal.catalog_jobs.proba_columns import proba_column
from gpal.catalog_jobs.follow_up import (
    DISCOVERY_LEAVES_OUT, NEEDED, bright_point_sources, follow_up_of, listed_classes,
)
from gpal.catalog_jobs.layout import (
    BASELINES_FILE, CLASSIFICATIONS_CSV, CLASSIFICATIONS_FITS, DISCOVERY_FILE, EXTENDED_FILE, HELDOUT_FILE,
    INFORMATIVE_FILE, KNOWN_FILE, METRICS_FILE, REGION_FILE, TRAINING_RECORD, FolderLayout, candidate_file,
    clean_file, list_path, located,
)
from gpal.catalog_jobs.later_check import MODEL
from gpal.catalog_jobs.none_of_these import report_paragraph as none_of_these
from gpal.catalog_jobs.pool_prior import mixes_text
from gpal.catalog_jobs.report.inputs import FinishedRun
from gpal.catalog_jobs.report.measures import ERROR_BLIND_MODEL, MODEL_NAME, N_BINS, HeldOutCheck
from gpal.catalog_jobs.report.tables import interval_text
from gpal.catalog_jobs.tables import EXTNAME, TWIN_SUFFIX
from gpal.catalogs.known_classes import known_class_rule
from gpal.catalogs.targets import TARGET_COLUMNS
from gpal.evaluation.comparison import difference_text
from gpal.registry import FOLLOW_UP_ACQUISITION

__all__ = ["headline", "report_text"]

#: Populations of 4FGL that a model of other classes cannot name; the report's caveat lists those not modelled.
OTHER_POPULATIONS = ("spp", "snr", "pwn", "glc", "unk", "bin", "hmb", "sbg", "rdg", "nlsy1")


def _fractions(per_class: Sequence[Mapping[str, Any]], key: str) -> str:
    """'bll 0.94, fsrq 0.79'; n/a for a class with no true (completeness) or no predicted (purity) source."""
    return ", ".join(f"{r['class']} " + ("n/a" if r[key] is None else f"{r[key]:.2f}") for r in per_class)


def _catalog(run: FinishedRun) -> str:
    meta, training = run.table.meta, run.training
    return (f"Catalog **{meta.get('CATALOG')}** ({meta.get('CATFILE')}, version {meta.get('CATVER')}). "
            f"Classes `{training.get('class_spec')}`; features {', '.join(f'`{f}`' for f in training['feature_names'])}"
            + (", with their catalog error bars as input noise." if _params(run).get("input_noise") != "none" else
               " (the catalog error bars are not used by this model: input_noise `none`)."))


def _run_date(run: FinishedRun) -> str:
    date = run.table.meta.get("DATE")
    if not date:
        return "Run: the table records no date (written by gpal 0.2.0 or earlier)."
    return f"Run: table written {date} UTC by {run.table.meta.get('CREATOR')}."


def _what_the_model_can_say(run: FinishedRun) -> str:
    """Every source gets one of the trained classes: the populations not modelled, and the ood flag to heed."""
    classes = run.classes
    modelled = {code for codes in run.training.get("merge", {}).values() for code in codes} | {c.lower() for c in classes}
    unmodelled = [c for c in OTHER_POPULATIONS if c not in modelled]
    return (f"**What the model can say.** It knows only the classes {', '.join(f'`{c}`' for c in classes)}, and every "
            "classified source is forced into one of them: a source of another population "
            + (f"({', '.join(unmodelled)}, ...) " if unmodelled else "")
            + "still gets a class from this list, often with a confident probability. Read `predicted_class` as "
            "'most like', not as an identification" + (", and heed `ood` (below)." if "ood" in run.frame else "."))


def _params(run: FinishedRun) -> dict[str, Any]:
    return run.training["estimator"]["params"]


def _model(run: FinishedRun) -> str:
    training, est = run.training, _params(run)
    return (f"Model: `{training['estimator']['class']}` with input_noise=`{est.get('input_noise')}`"
            + (f", input_prior=`{training['input_prior_used']}`" if training.get("input_prior_used") else "")
            + ", "
            f"likelihood=`{est.get('likelihood')}`, {est.get('epochs')} epochs, {est.get('num_inducing')} inducing points, "
            f"batch size {est.get('batch_size')}, seed {est.get('random_state')}; trained in {training.get('fit_seconds')} s "
            f"on the {training.get('trained_on')} ({', '.join(f'{k} {v}' for k, v in training['n_per_class'].items())}).")


def _heldout_check(check: HeldOutCheck, h: Mapping[str, Any]) -> str:
    intervals = check.intervals
    return (f"**Held-out check** ({h['n']} sources never seen in training; 95% intervals): accuracy {h['accuracy']:.3f} "
            f"{interval_text(*intervals['accuracy'])} ({check.correct} of {h['n']}), NLL {h['nll']:.3f} nats "
            f"{interval_text(*intervals['nll'])}, Brier {h['brier']:.3f} {interval_text(*intervals['brier'])}, "
            f"ECE {h['ece']:.3f} {interval_text(*intervals['ece'])} ({N_BINS} equal-width bins). Completeness (share of "
            "each true class found): " + _fractions(h["per_class"], "completeness")
            + "; purity (share of each predicted class that is right): " + _fractions(h["per_class"], "purity")
            + ". The model checked here is the model that classified the sources below (no refit on all labels), "
            "so these numbers describe the table. On the classified sources, which are fainter and may hold other "
            "populations, expect worse.")


def _error_bars_bought(run: FinishedRun, check: HeldOutCheck) -> str | None:
    """The paired NLL difference between the model and its twin without error bars, when the run fitted one: held
    out, on the faintest quarter, and on the later release's labels where the run was checked against one."""
    comparison, faint = check.comparison, check.faint
    if ERROR_BLIND_MODEL not in set(comparison["model"]):
        return None
    row = comparison[(comparison["model"] == ERROR_BLIND_MODEL) & (comparison["metric"] == "nll")].iloc[0]
    text = (f"**What the error bars bought**: the same GP fitted on the same sources without them (input_noise "
            f"`none`) has held-out NLL {row['value']:.3f}; without them minus with them (the tables' sign: other "
            f"model minus gpal): {_difference(row)} nats (95% paired interval; above 0: they help)")
    if faint is not None and ERROR_BLIND_MODEL in faint["models"]:
        text += (f"; on the faintest quarter {faint['models'][MODEL_NAME]['nll']:.3f} against "
                 f"{faint['models'][ERROR_BLIND_MODEL]['nll']:.3f}")
    later = run.later
    if later is not None:
        nll = later[_class_nll(later)].set_index("model")
        if ERROR_BLIND_MODEL in nll.index:
            twin = nll.loc[ERROR_BLIND_MODEL]
            text += (f"; on the {int(twin['n'])} sources {later['later'].iloc[0]} later classified, "
                     f"{len(run.classes)}-class NLL "
                     f"{nll.loc[MODEL, 'value']:.3f} with them and {twin['value']:.3f} without, without minus with "
                     f"{_difference(twin)} (paired 95% interval)")
    return text + ". docs/results.md (\"Where the error bars pay\") measures the same on faint sources held out from training."


def _difference(row: Mapping[str, float]) -> str:
    """A comparison row's ``diff`` (the other model minus gpal) with its interval."""
    return difference_text(row["diff"], row["diff_low"], row["diff_high"])


#: Measures where lower is better (the others, accuracy and balanced accuracy, higher).
_LOWER_IS_BETTER = ("nll", "ece", "brier")


def _where_others_are_better(check: HeldOutCheck) -> str | None:
    """The measures on which a compared model beats gpal held out, its paired interval clear of 0 (None: no
    comparison); said as plainly as where gpal is better."""
    comparison = check.comparison
    if comparison is None or comparison.empty:
        return None
    others = comparison[comparison["model"] != MODEL_NAME]
    better = others[np.where(others["metric"].isin(_LOWER_IS_BETTER), others["diff_high"] < 0, others["diff_low"] > 0)]
    mine = comparison[comparison["model"] == MODEL_NAME].set_index("metric")["value"]
    if better.empty:
        return ("**Where another model is better**: on no held-out measure does a compared model beat gpal with its "
                "paired 95% interval clear of 0 (table \"Held-out comparison with the baselines\").")
    return ("**Where another model is better** (held out, paired 95% interval of the difference clear of 0; diff = "
            f"model - {MODEL_NAME}): "
            + "; ".join(f"{r.model} {r.metric} {r.value:.3f} against {MODEL_NAME}'s {mine[r.metric]:.3f} (diff "
                        f"{_difference(r._asdict())})" for r in better.itertuples())
            + ". The table \"Held-out comparison with the baselines\" gives every measure.")


def _faintest_quarter(faint: Mapping[str, Any] | None) -> str | None:
    if faint is None:
        return None
    return (f"**Faintest quarter** of the held-out sources (Signif_Avg <= {faint['max_significance']:.1f}, "
            f"{faint['n']} sources, where the error bars are largest): "
            + "; ".join(f"{name} NLL {m['nll']:.3f}, accuracy {m['accuracy']:.3f}" for name, m in faint["models"].items())
            + ".")


def _population_shift(shift: Mapping[str, Any] | None) -> str | None:
    if shift is None:
        return None
    return ("**Population shift**: the classified sources are fainter than the training sources and need not share "
            "their class proportions. Under a pure label shift (same p(features | class)), EM re-estimates their "
            "class prior as " + ", ".join(f"{c} {v:.3f}" for c, v in shift["estimated_prior"].items())
            + " (training: " + ", ".join(f"{c} {v:.3f}" for c, v in shift["training_prior"].items())
            + "; a class of the other populations is held at its training share: EM would draw the faint, soft "
            "sources into it). The table keeps the model's probabilities, the default, which later releases bore out "
            "better (docs/results.md, \"The open sky\"); `--pool-prior` moves the unassociated sources to their own "
            "mix.")


def _pool_prior(moved: Mapping[str, Any] | None) -> str | None:
    if not moved:
        return None
    left = moved.get("left_as_given") or {}  # a record of gpal <= 0.3 names none: it moved every group it lists
    kept = ("; left as the model gave them: " + ", ".join(f"{g} ({v['n']} sources)" for g, v in left.items())
            if left else "")
    return ("**Pool prior applied** (on by default; `--no-pool-prior` turns it off): the unassociated sources' "
            "probabilities were moved to their own class mix, estimated by EM from the model's probabilities alone "
            "(training: " + ", ".join(f"{c} {v:.3f}" for c, v in moved["training_prior"].items()) + "): "
            + mixes_text(moved["groups"], digits=3, counts=True) + kept
            + ". The held-out check is unchanged; the classifications and the later-release check use the moved "
            "probabilities (the lists of most informative and discovery sources do not depend on them). A bcu keeps "
            "its own: the bcu rule already carries what the catalog knows of it (docs/results.md, \"The pool prior\").")


def _classified(run: FinishedRun, classified: Mapping[str, Any]) -> str:
    return (f"**Classified**: {len(run.frame)} sources ({run.table.meta.get('SELECT')}), "
            + ", ".join(f"{k} {v}" for k, v in classified["predicted"].items())
            + f"; mean predictive entropy {classified['mean_entropy']:.3f} nats (max {np.log(len(run.classes)):.3f}).")


def _bcu_types(run: FinishedRun) -> str | None:
    """How the bcu were split between bll and fsrq (`gpal.catalog_jobs.bcu_types`; None: a run with
    ``--bcu-types none`` or of an earlier gpal)."""
    note = run.table.meta.get("BCUSPLIT")
    if not note:
        return None
    if note.startswith(NOT_SPLIT):
        return f"**The bcu's blazar types**: {note}; their p_bll and p_fsrq are the main model's."
    return (f"**The bcu's blazar types**: {note}. On the bcu that FL16Y later typed this split lowered the NLL of "
            "p_fsrq / (p_bll + p_fsrq) against the main model's (docs/results.md, the bcu section); `--bcu-types none` "
            "leaves the main model's split.")


def _class_nll(measures: Any) -> Any:
    """Which rows of a later check's measures are its NLL over the model's classes ('4-class nll')."""
    return measures["measure"].str.fullmatch(r"\d+-class nll")


def _later_release(run: FinishedRun) -> str | None:
    """What a later release found: the NLL over the model's classes of the model and of the best baseline, if the
    folder was checked."""
    measures = run.later
    if measures is None:
        return None
    nll = measures[_class_nll(measures)].set_index("model")
    if nll.empty:
        return None
    baselines = nll.drop(index=[MODEL, ERROR_BLIND_MODEL], errors="ignore")
    best = baselines["value"].idxmin() if len(baselines) else None
    versus = "" if best is None else (f", the best baseline's ({best}) {nll.loc[best, 'value']:.3f} ({best} minus "
                                      f"model {_difference(nll.loc[best])}, paired 95% interval)")
    return (f"**Checked against a later release**: {measures['later'].iloc[0]} gives {int(nll['n'].iloc[0])} of the "
            f"classified {measures['earlier'].iloc[0]} sources one of the model's classes ({nll['sources'].iloc[0]}). "
            f"On them the {len(run.classes)}-class NLL is {nll.loc[MODEL, 'value']:.3f} nats for the model{versus}; the table "
            "\"Checked against a later release\" gives every measure (`gpal check-later`).")


def _target_lists(run: FinishedRun, layout: FolderLayout) -> str | None:
    """The target lists, what an observer submits: how they are cut and ranked, how many members each should hold,
    what is left out as already known, and which doubts they carry (None for a run without them); linked where the
    folder's ``layout`` keeps them."""
    frame = run.frame
    if not set(NEEDED) <= set(frame.columns):
        return None
    cuts = cuts_from_meta(run.table.meta)
    classes = listed_classes(run.table)
    merge = run.training.get("merge", {})
    lists = candidate_lists(frame, classes, merge, cuts)
    rule = known_class_rule(run.classes, merge, run.training["n_per_class"])
    yields = []
    followed = frame[followable(frame, cuts) & ~known(frame)]
    for cls, rows in lists.items():
        expected, low, high = expected_members(rows[proba_column(cls)].to_numpy(float))
        kept = clean(rows)
        clean_expected = kept[proba_column(cls)].sum()
        elsewhere = followed.loc[followed["predicted_class"] != cls, proba_column(cls)].sum()
        yields.append(f"{_list_link(candidate_file(cls), layout)}: {len(rows)} sources, {expected:.0f} {cls} expected (95% "
                      f"interval {low}-{high}; {len(kept)} sources and {clean_expected:.0f} expected in "
                      f"{_list_link(clean_file(cls), layout)}; another {elsewhere:.0f} expected among the sources through the cuts "
                      f"whose most probable class is another)")
    known_rows = known_sources(frame, cuts)
    known_text = (f"{len(known_rows)} classified sources through the cuts are already known beyond their CLASS1 "
                  f"({', '.join(f'{n} {c}' for c, n in known_rows['known_class'].value_counts().items())}; looked "
                  f"up in {run.table.meta.get('KNOWNFROM', 'the catalog')}): they are in no target list but in "
                  f"{_list_link(KNOWN_FILE, layout)}, each with `known_reason`. " if len(known_rows) else
                  "No classified source through the cuts is known beyond its CLASS1 (`known_class`; looked up in "
                  f"{run.table.meta.get('KNOWNFROM', 'the catalog')}). ")
    return ("**Target lists, one per class** (what a proposal submits): " + "; ".join(yields)
            + ". The expected number of members is the sum of the list's probabilities, its interval that of the count "
            "if each source is a member with exactly its probability (the probabilities' own error is not in it: on "
            "later labels, over the rows a later release classed, the default classes' lists' expected over found "
            "members ranged " + ", ".join(f"{low:.2f}-{high:.2f} for {cls}" for cls, (low, high) in
                                          LATER_YIELD_RATIOS.items())
            + f", docs/results.md, \"The open sky\", each list's `LATERYLD` keyword: {trusted_yield_words()}); "
            "an expected pulsar is a gamma-ray pulsar, not a radio detection (many are "
            "radio-quiet). The classes cover the open sky (the other populations are a class), and a source unlike "
            "every class is `ood` and in no list. Each list holds the point "
            "sources of the trained population that the model puts in the class (`predicted_class`), through the "
            f"cuts {cuts_text(cuts)} (`--candidate-significance`, `--candidate-max-ellipse`, `--candidate-flags`; "
            f"defaults chosen on later labels, docs/targets.md), in the order (`--order`) {orders_words(classes, cuts['order'])} (beyond two decimals the "
            "probabilities do not tell sources apart). " + known_text
            + "The `caveats` column says in words why a row may not be what it seems (the catalog's doubtful flags "
            f"{', '.join(map(str, DOUBTFUL_FLAGS))}; the Galactic plane; an extended source's model; an ATNF pulsar inside "
            "the ellipse; a counterpart of unknown nature another release names; in a blazar list, an unassociated "
            "row's lack of a counterpart to take a spectrum of); the "
            "clean list leaves out the rows with a "
            "doubtful flag. The lists carry what to point at: the catalog position in degrees and sexagesimal "
            "(`RA_hms`, `DEC_dms`) and its 95% ellipse, the counterpart (`ASSOC1`, or `ASSOC2` / `CLASS2` where only "
            "that is given, `RA_Counterpart`, `DEC_Counterpart`, `ASSOC_PROB_BAY`, `ASSOC_PROB_LR`), the curvature "
            "significance, peak energy and variability index, and the `Flags` in words (`Flag_Words`). "
            + (f"For blazar candidates the counterpart's SED from the LAT AGN catalog (`LAC_SED_class`, "
               f"`LAC_log_nu_syn`, `LAC_Redshift`, `LAC_counterpart` and its position; shown, not a feature): "
               f"{run.table.meta['LACFROM']}. " if run.table.meta.get("LACFROM") else "")
            + (f"What the catalog already knows enters the probabilities: {rule}; so no bcu is a candidate of a class "
               "outside the blazars. " if rule else "")
            + ("`--target` lists one class only." if len(classes) == 1 and len(run.classes) > 1 else
               "`--target CLASS` lists one class only."))


def _follow_up(run: FinishedRun, layout: FolderLayout) -> str | None:
    """How the other lists are made, and which sources are in neither (None for a run without them); linked where
    the folder's ``layout`` keeps them."""
    frame = run.frame
    if not set(NEEDED) <= set(frame.columns):
        return None
    target = run.table.meta.get("TARGET") or None
    follow_up = follow_up_of(run.table.meta)
    minsig = follow_up["follow_up_significance"]
    faint = int((~(frame["Signif_Avg"].to_numpy(float) >= minsig) & ~frame["extended"].to_numpy(bool)).sum())
    excluded = follow_up["follow_up_flags"]
    flagged = int((bright_point_sources(frame, minsig) & ~bright_point_sources(frame, minsig, excluded)).sum())
    return (f"**The other lists.** {_list_link(INFORMATIVE_FILE, layout)} holds the point sources of the trained population "
            f"(not `ood`) ranked by `information` ({FOLLOW_UP_ACQUISITION}), what a label would teach the model about "
            + (f"whether the source is `{target}` (`p_{target}` beside it)" if target else
               "its class (all trained classes; `--target CLASS` asks about one)")
            + ": the sources whose label would teach the model most, often faint and poorly localised, not the "
            "likeliest members of a class (the target lists are those). "
            f"{_list_link(DISCOVERY_FILE, layout)} (discovery) holds the unassociated `ood` point sources ranked by `ood_score`, how "
            "unlike the training set they are, with the class each is most like (`predicted_class`); a source with a "
            "counterpart (bcu) is no unknown, and one the catalog flags "
            + " or ".join(f"{flag}" for flag in DISCOVERY_LEAVES_OUT)
            + " (confused with a brighter neighbour; on a defect of the diffuse model) is left out. "
            f"{_list_link(EXTENDED_FILE, layout)} lists the {int(frame['extended'].sum())} extended source(s) apart "
            "(`predicted_class` `extended`, template in `Extended_Source_Name`: no point-source class describes them, "
            "and no list ranks them). "
            f"{faint} point source(s) with Signif_Avg below {minsig:g} are in neither list (`--follow-up-significance`); "
            + (f"nor are {flagged} more that carry one of the catalog's Flags {', '.join(map(str, excluded))} "
               "(`--follow-up-flags`). " if excluded else
               "the catalog's `Flags` are carried for the observer to weigh (`--follow-up-flags` leaves flagged "
               "sources out). ")
            + "Every list has the columns of "
            f"{_link(CLASSIFICATIONS_CSV, layout)} plus `rank`; {_list_link(REGION_FILE, layout)} draws {INFORMATIVE_FILE}'s 95% error "
            "ellipses for DS9.")


def _mc_noise(noise: Mapping[str, Any]) -> str:
    return ("**Monte Carlo noise** of the probabilities (`p_mc_se`): "
            + (f"median {noise['median_se']:.1e}, largest {noise['max_se']:.1e}; {noise['unsettled']} source(s) have "
               "their two most probable classes closer than twice that error, so their `predicted_class` is not settled "
               "by the draws." if noise["max_se"] > 0 else
               "none: this model's probabilities are computed without random draws (`p_mc_se` is 0)."))


def _rows_left_out(dropped: Mapping[str, Any]) -> str:
    labelled, pool = dropped["labelled"], dropped["classified"]
    return ("**Rows left out** (NaN or infinite values in a used column): "
            + (f"{len(labelled)} labelled source(s): " + "; ".join(f"{n} ({', '.join(c)})" for n, c in labelled.items())
               if labelled else "no labelled source")
            + "; " + (f"{len(pool)} source(s) to classify: {', '.join(pool)}" if pool else "no source to classify") + ".")


def _missing_errors_repaired(repaired: Mapping[str, str | None]) -> str:
    """The values kept with a missing error (read as exact or given the population's error, as the features say),
    per error column, beside the rows left out: both change what the model saw (None: a folder of an earlier gpal,
    which did not count them)."""
    said = {key: "not counted" if repaired[key] is None else repaired[key] or "none"
            for key in ("labelled", "classified")}
    return (f"**Missing errors repaired** (an error the catalog does not give, NaN or its 'not measured' value, "
            f"{repaired['how'] or 'none kept'}), per error column: labelled sources {said['labelled']}; sources to classify "
            f"{said['classified']}.")


def _link(path: str, layout: FolderLayout) -> str:
    """A Markdown link to ``path`` (a path of this gpal's layout) where the folder's ``layout`` keeps it."""
    where = layout.path(path)
    return f"[{where}]({where})"


def _list_link(name: str, layout: FolderLayout) -> str:
    """A Markdown link to the list ``name`` where the folder's ``layout`` keeps it."""
    return _link(list_path(name), layout)


def _files(run: FinishedRun, layout: FolderLayout) -> str:
    """The classifications with their columns, and the other files a script reads (tables and figures follow)."""
    frame, ecsv = run.frame, Path(CLASSIFICATIONS_CSV).with_suffix(TWIN_SUFFIX).name
    return (f"Files: {_link(CLASSIFICATIONS_CSV, layout)} (plain CSV: `pandas.read_csv`, TOPCAT), "
            f"{_link(ecsv, layout)} (the same rows with units, column descriptions and provenance: "
            f"`astropy.table.Table.read`) and {_link(CLASSIFICATIONS_FITS, layout)} (HDU `{EXTNAME}`, "
            "provenance in the header); one row per source: `Source_Name`, `CLASS1`, "
            + ", ".join(f"`p_{c}`" for c in run.classes)
            + ", `predicted_class`, `entropy`, `p_mc_se`, " + ("`information`, " if "information" in frame else "")
            + ("`ood_score`, `ood`, " if "ood" in frame else "")
            + ", ".join(f"`{c}`" for c in TARGET_COLUMNS if c in frame)
            + " (the target columns, units in the ECSV and FITS). "
            f"{_link(TRAINING_RECORD, layout)}: what the model beside it was trained on (reuse the run folder with "
            f"`gpal predict`); {_link(HELDOUT_FILE, layout)}, {_link(BASELINES_FILE, layout)}, "
            f"{_link(METRICS_FILE, layout)}.")


def _rebuild(run: FinishedRun, folder: Path) -> str:
    cat = run.training["catalog"]
    return f"Training catalog {cat.get('release')} {cat.get('version')}; rebuild this page with `gpal report {folder}`."


def report_text(run: FinishedRun, check: HeldOutCheck, metrics: Mapping[str, Any], layout: FolderLayout,
                folder: Path) -> str:
    """The text above the report's tables and figures, for the run's ``folder`` kept by ``layout``: its paragraphs in
    reading order."""
    paragraphs = [
        _catalog(run), _target_lists(run, layout), _run_date(run), _what_the_model_can_say(run), _model(run),
        _heldout_check(check, metrics["heldout"]), _where_others_are_better(check), _error_bars_bought(run, check),
        _faintest_quarter(check.faint),
        _population_shift(metrics["population_shift"]), _pool_prior(metrics.get("pool_prior")),
        _classified(run, metrics["classified"]), _bcu_types(run),
        none_of_these(run.outliers, run.frame, run.classes), _later_release(run), _follow_up(run, layout),
        _mc_noise(metrics["classified"]["mc_noise"]), _rows_left_out(metrics["dropped"]),
        _missing_errors_repaired(metrics["repaired"]), _files(run, layout), _rebuild(run, folder),
    ]
    return "\n\n".join(p for p in paragraphs if p is not None)


def headline(folder: str | os.PathLike) -> list[str]:
    """What the terminal shows at the end of ``gpal classify``: the held-out metrics and the counts (``metrics.json``)."""
    metrics = json.loads(located(folder, METRICS_FILE).read_text(encoding="utf-8"))
    h, done = metrics["heldout"], metrics["classified"]
    lo, hi = h["intervals"]["accuracy"]
    return [
        f"held-out check ({h['n']} sources): accuracy {h['accuracy']:.3f} [{lo:.3f}, {hi:.3f}], "
        f"NLL {h['nll']:.3f} nats, Brier {h['brier']:.3f}, ECE {h['ece']:.3f}",
        f"  completeness {_fractions(h['per_class'], 'completeness')}; purity {_fractions(h['per_class'], 'purity')}",
        f"classified {done['n']} sources ({done['select']}): "
        + ", ".join(f"{k} {v}" for k, v in done["predicted"].items())
        + ("" if done.get("none_of_these") is None else f"; {done['none_of_these']} flagged none of these (ood)")
        + f"; mean entropy {done['mean_entropy']:.3f} nats",
    ]

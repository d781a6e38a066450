"""Workflow kind ``later_labels``: every later-label and held-out check of gpal and the baselines, over seeds.

The checks of `gpal.catalog_jobs.later_labels` as a resumable run: one unit per (check, seed, model), its
probabilities in ``units/<check>/seed_<k>/<model>.json``; the measures (``later_labels.csv``, every
measure and interval at full precision), the table (``later_labels.md``) and ``report.md``, which names
the commit that ran.  Seeds and models are not part of the run's identity: more of either adds units
to the same folder.  A release pair without later labels (the earlier release not older than the
later one, or no link between them) is refused before anything is fitted.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

import pandas as pd

from gpal.constraints import SEED, Integer, ListOf, OneOf, Text
from gpal.runs.executors import Executor
from gpal.workflows.schema import Field

__all__ = ["check", "run", "schema"]


def _model_names() -> list[str]:
    from gpal.evaluation.baselines import BASELINES
    from gpal.catalog_jobs.later_labels import (
        GP_VARIANTS, POOL_PRIOR, POOL_PRIOR_UNASSOCIATED, TEMPERATURE, TEMPERATURE_BIAS,
    )

    return [*GP_VARIANTS, TEMPERATURE[1], TEMPERATURE_BIAS, POOL_PRIOR[1], POOL_PRIOR_UNASSOCIATED, *BASELINES]


def schema() -> dict[str, Any]:
    from gpal.catalogs.releases import RELEASES
    from gpal.evaluation.baselines import BASELINES
    from gpal.catalog_jobs.later_labels import HELD_OUT, N_BOOT, PAIRS

    return {
        "checks": {
            "pairs": Field(ListOf(Text(), min_length=0), list(PAIRS),
                           "release pairs EARLIER:LATER: train on the earlier release's labelled sources, score its "
                           "unassociated and bcu sources by the later release's classes"),
            "held_out": Field(ListOf(OneOf(list(RELEASES)), min_length=0), list(HELD_OUT),
                              "releases scored on the main job's held-out split (80 / 20, the seed's)"),
        },
        "seeds": Field(ListOf(SEED), [0, 1, 2], "seeds of the fits and splits; each check is averaged over them",
                       part_of_run=False),
        "models": Field(ListOf(OneOf(_model_names())), ["gpal", "gpal+T", *BASELINES],
                        "models fitted on every check (gpal is the reference of every interval)", part_of_run=False),
        "n_boot": Field(Integer(100), N_BOOT, "bootstrap resamples of the sources per interval"),
    }


def check(config: Mapping[str, Any]) -> None:
    from gpal.catalog_jobs.later_labels import check_pairs

    check_pairs(config["checks"]["pairs"])
    if "gpal" not in config["models"]:
        raise ValueError("models must include gpal: every interval is another model minus gpal")
    if not config["checks"]["pairs"] and not config["checks"]["held_out"]:
        raise ValueError("give at least one check: checks.pairs or checks.held_out")


def _slug(check_name: str) -> str:
    return check_name.replace(":", "_to_").replace("held-out_to_", "held-out_")


def run(config: dict[str, Any], out: Path, executor: Executor, progress: bool) -> None:
    import numpy as np

    from gpal.catalog_jobs.later_labels import (
        POOL_PRIOR, POOL_PRIOR_UNASSOCIATED, TEMPERATURE, TEMPERATURE_BIAS, check_probabilities, fit_unit, measure_check, paired_table,
    )
    from gpal.evaluation.reports import write_report, write_table
    from gpal.identity import source_commit
    from gpal.runs.units import run_units

    checks = [*config["checks"]["pairs"], *(f"held-out:{r}" for r in config["checks"]["held_out"])]
    seeds, models = config["seeds"], config["models"]
    derived_by_pool = (POOL_PRIOR[1], POOL_PRIOR_UNASSOCIATED)
    class_bias, pool_prior = TEMPERATURE_BIAS in models, any(m in models for m in derived_by_pool)
    # gpal+TB is recalibrated on gpal+T's validation fit and gpal+pool moves gpal's probabilities: no unit of their own
    derived = (TEMPERATURE_BIAS, *derived_by_pool)
    fitted = list(dict.fromkeys([m for m in models if m not in derived] + ([TEMPERATURE[1]] if class_bias else [])))
    # seed-major: a run stopped after its first seed has every check's first seed
    units = {f"{_slug(c)}/seed_{s}/{m}": (c, s, m) for s in seeds for c in checks for m in fitted}
    results = run_units(executor, fit_unit, units, out, desc="fits", progress=progress)
    frames = []
    for c in checks:
        probabilities = {s: {m: p for m, p in check_probabilities(
            c, s, {m: results[f"{_slug(c)}/seed_{s}/{m}"] for m in fitted}, class_bias=class_bias,
            pool_prior=pool_prior).items()
            if m in models} for s in seeds}
        frames.append(measure_check(c, seeds, probabilities, n_boot=config["n_boot"]))
    measures = pd.concat(frames, ignore_index=True)
    commit = source_commit()
    shown_models = [m for m in models if m in set(measures["model"])]
    table = paired_table(measures, shown_models)
    tables = {f"Every check, mean over seeds {seeds}; in brackets model - gpal with its 95% paired bootstrap "
              "interval": write_table(out / "later_labels", table, data=measures.assign(commit=commit))}
    calibration = measures[measures["measure"].str.startswith("ece") | (measures["measure"] == "nll_faint_quarter")]
    wide = calibration.pivot_table(index=["check", "model"], columns="measure", values="value", sort=False).reset_index()
    tables["Calibration per class (ECE of each class's probability, 15 bins) and held-out faint-quarter NLL"] = \
        write_table(out / "calibration", wide.round(3), data=calibration.assign(commit=commit))
    temperature = []
    for c in checks:
        for s in seeds:
            unit = results.get(f"{_slug(c)}/seed_{s}/gpal+T")
            if unit is not None:
                from gpal.evaluation.recalibration import TemperatureScaling

                val = (np.asarray(unit["proba"]), np.asarray(unit["y"], dtype=np.int64))
                t, tb = TemperatureScaling().fit(*val), TemperatureScaling(class_bias=True).fit(*val)
                temperature.append({"check": c, "seed": s, "temperature": round(t.temperature_, 3),
                                    "with offsets: temperature": round(tb.temperature_, 3),
                                    "offsets (bll, fsrq, pulsar)": ", ".join(f"{b:+.2f}" for b in tb.bias_)})
    if temperature:
        tables["Temperatures (and class offsets) fitted on each validation split"] = write_table(out / "temperatures",
                                                                             pd.DataFrame(temperature))
    text = "\n".join([
        config["description"] or "", "",
        f"Commit {commit}. Checks: {', '.join(checks)}; seeds {seeds}; models {', '.join(models)}. "
        "Later-label checks train on every labelled bll / fsrq / pulsar source of the earlier release and score its "
        "unassociated and bcu sources by the later release's classes; held-out checks train on the main job's 80% "
        "split. NLL, ECE and balanced accuracy on the sources of the three classes; AGN-vs-pulsar AUC of p(pulsar) on "
        "the earlier unassociated sources the later release calls AGN or pulsar (held out: every source); "
        "pulsar-vs-blazar AUC of p(pulsar) on every source of the three classes; BL Lac-vs-FSRQ AUC of p(fsrq) / (p(bll) + p(fsrq)) on the bll and fsrq sources. Brackets: model - gpal, "
        f"95% paired bootstrap over sources ({config['n_boot']} resamples, each averaged over the seeds); NLL and ECE "
        "> 0 and AUC, balanced accuracy < 0 favour gpal."
        + (f" {POOL_PRIOR_UNASSOCIATED}: gpal's probabilities of a later-label check's unassociated sources moved to "
           "their own class mix estimated by EM, the bcu left as gpal gave them, as `gpal classify` does by default "
           f"(same fit as gpal); {POOL_PRIOR[1]}: every group moved to its own mix, the bcu too. "
           "Held-out rows are not moved (the pool prior applies to the pool only), so held out both are gpal."
           if pool_prior else ""),
    ])
    write_report(out, config["title"], tables=tables, text=text)

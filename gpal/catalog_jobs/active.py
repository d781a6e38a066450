"""``gpal active``: choose which catalog sources to label next, with labels simulated or typed into files.

A campaign retrains the main job's model (`gpal.catalog_jobs.settings.main_job_estimator`, on the
main job's classes and features unless told), so that ``gpal classify`` and ``gpal active`` give
one answer to "which source next".  The pool is cut by the main job's follow-up list's rule:
with either oracle, point sources at ``follow_up_significance`` or more carrying none of
``follow_up_flags`` (`gpal.catalog_jobs.follow_up.bright_point_sources`), so that a simulated
campaign asks about the sources a real one would; with the file oracle, also none "none of
these" (the outlier flag fitted on the labelled sources and calibrated on the test ones, as the
main job's), and vetted as the main job's target lists are (`vetted`): no source the sky already names, no source
whose label puts ``--target`` outside its group (a bcu in a pulsar search), none outside the sky
``--candidate-visible-from`` / ``--candidate-declination`` keep.  A simulated pool is
left unflagged: it is made of the trained classes, so it holds no population the flag is for (its
flags there would be the 5% false positives its threshold allows), and the flag's density needs 10
labelled rows per component (80), more than a campaign that starts small has.  Each query file
carries what a target list's row says (positions, sexagesimal too, the ellipse, what is known and the search
history, ``caveats``) and the ``ood`` flag, with an ECSV twin giving their units
(`gpal.catalog_jobs.tables.write_ecsv_twin`).

A run folder holds the loop's checkpoint (`gpal.active.report.CHECKPOINT_DIR`), with the
file oracle the query files (`QUERIES_DIR`), and the report `gpal.active.report` builds.
"""

from __future__ import annotations

import inspect
import os
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

import gpal

from gpal.active import (
    ActiveLearningLoop, FileOracle, SimulatedOracle, acquisition_settings, initial_pool_test_split, make_acquisition,
)
from gpal.active.oracles import NOTHING_FOUND
from gpal.active.report import CHECKPOINT_DIR, write_active_report
from gpal.catalog_jobs.campaign_settings import (CAMPAIGN_OWNED, ORACLES, QUERIES_DIR, SKY_CUTS, acquisition_options,
                                                 acquisition_takers, campaign_settings)
from gpal.catalog_jobs.candidates import caveats, known, visible
from gpal.catalog_jobs.follow_up import DEFAULT_EXCLUDED_FLAGS, bright_point_sources
from gpal.catalog_jobs.job_settings import check_settings, recorded_settings
from gpal.catalog_jobs.model_folders import job_estimator
from gpal.catalog_jobs.selection import CatalogSelection
from gpal.catalog_jobs.settings import prior_for_rows
from gpal.catalog_jobs.tables import write_ecsv_twin
from gpal.catalogs.known_classes import outside_group
from gpal.catalogs.releases import LAT_CLASS_CODES
from gpal.catalogs.targets import target_columns
from gpal.data.dataset import NoisyDataset
from gpal.identity import jsonable
from gpal.runs.output_dir import claim_output_dir, recorded_identity

__all__ = ["ORACLES", "OTHER", "QUERIES_DIR", "acquisition_config", "acquisition_options", "campaign_settings",
           "follow_up_outcomes", "run_active", "vetted", "write_campaign_report"]

#: The label of the catch-all class of a scheme (``with_other``), which outcomes beyond the classes are trained as.
OTHER = "other"


#: The estimator parameters ``run.json`` records beside the loop's checkpoint (which holds every estimator
#: parameter and the data).
_RECORDED_ESTIMATOR = ("input_noise", "input_prior", "epochs", "num_inducing")


def acquisition_config(name: str, classes: Sequence[str], *, seed: int = 0, **options: Any) -> dict[str, Any]:
    """The acquisition ``name`` with the campaign's `acquisition_options` (by setting name; those left at their
    default are the acquisition's) and the campaign's seed where it takes one, checked before anything is read or
    written: an option ``name`` does not take is refused, one it needs is asked for, and the acquisition made from
    the config checks it against the campaign's ``classes`` (`gpal.active.Acquisition.bind_classes`: a target must
    be one of them)."""
    declared = acquisition_settings(name)
    offered, settings = acquisition_options(), campaign_settings()
    flag = {option: "--" + setting.replace("_", "-") for setting, option in offered.items()}
    given = {offered[setting]: value for setting, value in options.items() if value != settings[setting].default}
    for option in given:
        if option not in declared:
            raise ValueError(f"{flag[option]} applies to --acquisition {' or '.join(acquisition_takers(option))}, not {name!r}")
    for option, setting in declared.items():
        if setting.default is inspect.Parameter.empty and given.get(option) is None and option not in CAMPAIGN_OWNED:
            raise ValueError(f"--acquisition {name} needs {flag[option]} ({setting.doc})")
    config = {"name": name, **{option: seed for option in CAMPAIGN_OWNED if option in declared}, **given}
    make_acquisition(config).bind_classes(classes)
    return config


def run_active(selection: CatalogSelection, estimator: Any, out_dir: str | os.PathLike, *, seed: int = 0,
               force: bool = False, progress: bool = True, **settings: Any) -> Path:
    """Pool-based active learning on the labelled sources of ``selection``, checkpointed after every query.

    ``settings`` are the campaign's own (`campaign_settings`, each checked against its constraint;
    any left out keeps its default).  ``oracle="simulated"``: the sources are split into
    ``initial`` labelled ones, a pool of ``pool`` (default: all the rest) whose labels are
    revealed when queried, and ``test`` sources that score the model after each query.
    ``oracle="file"``: the sources are the initial training set (``test_size`` of them held
    out), the pool is ``select``, and each query is a file in `QUERIES_DIR` for the observers
    to fill in (`gpal.active.LabelsPending` until they have).  Either pool is then cut by the
    follow-up list's rule: no extended source, none below ``follow_up_significance`` or with one of
    ``follow_up_flags``, and for
    the file oracle none "none of these" (see the module docstring).  ``queries`` is
    how many to ask in all: rerunning with more continues the same run; other settings are
    refused unless ``force``.  ``seed`` draws the split, the initial set and random acquisitions; the
    estimator's own is its ``random_state``.  Returns the path of ``report.md``.
    """
    declared = campaign_settings()
    s = check_settings(declared, settings, "run_active")
    classes, _ = selection.class_groups()
    acquisition = make_acquisition(acquisition_config(s["acquisition"], classes, seed=seed,
                                                      **{setting: s[setting] for setting in acquisition_options()}))
    estimator = job_estimator(estimator)
    catalog, data = selection.load()
    out = Path(out_dir)
    if s["oracle"] == "simulated":
        n_pool = s["pool"] or data.n_samples - s["initial"] - s["test"]
        labelled, pool, test = initial_pool_test_split(data, s["initial"], n_pool, s["test"], seed=seed)
        pool, _ = _bright_pool(catalog, pool, s["follow_up_significance"], s["follow_up_flags"])
        oracle: Any = SimulatedOracle(pool)
        outcomes = None  # the catalog's labels are the classes
    else:
        labelled, test = data.split(test_size=s["test_size"], seed=seed)
        pool = catalog.pool(select=[t.strip() for t in s["select"].split(",") if t.strip()],
                            features=selection.features_of(catalog))
        pool, described = _follow_up_pool(catalog, pool, labelled, test, s, seed, selection.class_groups(),
                                           s.get("target"))
        oracle = FileOracle(out / QUERIES_DIR, describe=lambda ids: described.loc[ids].reset_index(),
                            twin=_query_twin)
        outcomes = follow_up_outcomes(*selection.class_groups())
    adapted = prior_for_rows(estimator, labelled.n_samples)  # the first fit's rows: a campaign may start small
    params = estimator.get_params(deep=False)
    identity = {"kind": "gpal.active", "catalog": catalog.provenance(), "classes": _plain(selection.classes),
                "min_significance": selection.min_significance, "acquisition": acquisition.config(),
                **recorded_settings(declared, s), **{name: jsonable(params.get(name)) for name in _RECORDED_ESTIMATOR},
                **({"adapted_to_few_rows": adapted} if adapted else {}),
                "seed": seed}
    # The loop checks its settings against the data here, before the folder is claimed, so a refused
    # command leaves nothing behind and its corrected form is not "a different run".
    loop = ActiveLearningLoop(estimator, labelled, pool, oracle, test=test, acquisition=acquisition,
                              batch_size=s["batch_size"], n_queries=s["queries"], retrain_epochs=s["retrain_epochs"],
                              checkpoint_dir=out / CHECKPOINT_DIR, progress=progress, outcomes=outcomes)
    estimator.check_sizes(labelled.n_samples, labelled.X.shape[1], len(labelled.class_names))  # the first fit's
    claim_output_dir(out, identity, force=force)
    loop.run()
    return write_campaign_report(out)


def write_campaign_report(folder: str | os.PathLike) -> Path:
    """The report of a `run_active` folder (any active-learning folder): a file-oracle campaign's pool held only
    sources the "none of these" flag left in, which the report says of the outcomes beyond the classes.

    Returns
    -------
    Path
        The report's path.
    """
    run = recorded_identity(folder) or {}
    file_oracle = run.get("kind") == "gpal.active" and run.get("oracle") == "file"
    return write_active_report(folder, pool_cut_by_flag=file_oracle)


def _bright_pool(catalog: Any, pool: NoisyDataset, min_significance: float,
                 excluded_flags: Sequence[int] = DEFAULT_EXCLUDED_FLAGS) -> tuple[NoisyDataset, Any]:
    """The pool less what the follow-up list never ranks (extended, below ``min_significance``, flagged with one
    of ``excluded_flags``), the rule of both oracles, and the target columns of the sources kept, in their order."""
    targets = target_columns(catalog, pool.ids.tolist())
    keep = np.nonzero(bright_point_sources(targets, min_significance, excluded_flags))[0]
    return pool.subset(keep), targets.iloc[keep].reset_index(drop=True)


def _follow_up_pool(catalog: Any, pool: NoisyDataset, train: NoisyDataset, test: NoisyDataset,
                    settings: Mapping[str, Any], seed: int,
                    groups: tuple[Sequence[str], Mapping[str, Sequence[str]]],
                    target: str | None = None) -> tuple[NoisyDataset, Any]:
    """The pool the main job's target lists would rank, and what a query file says of each of its sources (what the
    lists say: ``ood_score``, ``ood``, the target columns, what is known and the search history, ``caveats``;
    indexed by ``Source_Name``).

    `_bright_pool`, vetted as the main job's lists are (`vetted`), less the "none of these" sources: the score is
    fitted on ``train`` and its threshold set on ``test``, as the main job's
    (`gpal.catalog_jobs.none_of_these.fitted_outlier_score`).
    """
    from gpal.catalog_jobs.none_of_these import fitted_outlier_score

    pool, targets = _bright_pool(catalog, pool, settings["follow_up_significance"], settings["follow_up_flags"])
    scorer = fitted_outlier_score(train, test, seed)
    targets["ood_score"] = scorer.score(pool)
    targets["ood"] = targets["ood_score"].to_numpy() > scorer.threshold_
    keep = ~targets["ood"].to_numpy(bool) & vetted(catalog, targets, pool.aux["CLASS1"], groups, target, settings)
    return pool.subset(np.nonzero(keep)[0]), targets.loc[keep].set_index("Source_Name")


def vetted(catalog: Any, targets: pd.DataFrame, class1: Sequence[str],
           groups: tuple[Sequence[str], Mapping[str, Sequence[str]]], target: str | None,
           cuts: Mapping[str, Any]) -> np.ndarray:
    """Which sources of ``targets`` (their `target_columns`, in order) a campaign may ask about, by the main job's
    rules for its target lists (`gpal.catalog_jobs.candidates`): none the sky already names (`known`), none whose
    catalog label puts ``target`` outside its group (a bcu is never a pulsar candidate), none outside the
    declinations the sky cuts keep (`visible`).  ``targets`` gains the columns a list row has: what is known, the
    search history and ``caveats``.

    Returns
    -------
    numpy.ndarray
        (n,) boolean mask.
    """
    from gpal.catalog_jobs.prediction import known_columns

    context, _ = known_columns(catalog, targets["Source_Name"].tolist())
    for name in context.columns:
        targets[name] = context[name].to_numpy()
    targets["caveats"] = caveats(targets)
    keep = ~known(targets) & visible(targets, {name: cuts[name] for name in SKY_CUTS})
    if target is not None:
        classes, merge = groups
        keep &= ~outside_group(np.asarray(class1, dtype=str), classes, merge)[:, list(classes).index(target)]
    return keep


def _query_twin(frame: pd.DataFrame, path: Path) -> Path:
    """The ECSV twin of a query file: its rows with units and descriptions, naming the file the labels go in."""
    return write_ecsv_twin(frame, path, {"CREATOR": f"gpal {gpal.__version__}", "LIST": "gpal active query",
                                         "NSOURCES": len(frame), "LABELS": path.name})


def follow_up_outcomes(classes: Sequence[str], merge: Mapping[str, Sequence[str]]) -> dict[str, str | None]:
    """What an observer may label a source beyond the classes, and the class each is trained on.

    A CLASS1 code merged into a class (``psr`` of ``pulsar=psr+msp``) is that class; any other
    4FGL CLASS1 code, lower case (``snr``, ``pwn``, ...), and ``other`` are the class ``other``
    when the scheme has one, else recorded and not trained on; `NOTHING_FOUND` (observed,
    nothing found) is recorded and never trained on.  Every such source leaves the pool.
    """
    other = OTHER if OTHER in classes else None
    out: dict[str, str | None] = {code: name for name, codes in merge.items() for code in codes if code not in classes}
    for code in [*sorted(LAT_CLASS_CODES), OTHER]:
        if code not in classes:
            out.setdefault(code, other)
    out[NOTHING_FOUND] = None
    return out


def _plain(value: Any) -> Any:
    """A value as the record keeps it: a string as written, a sequence as a list."""
    return value if isinstance(value, str) or value is None else list(value)

"""Workflow kind ``classify``: the main job, `gpal.catalog_jobs.classify.classify_catalog`, from a YAML file.

The ``params`` block is generated from what the job declares, never from a function's
signature: the fields of `gpal.catalog_jobs.selection.CatalogSelection`, every
parameter the main job's estimator declares (`gpal.estimators.settings.estimator_settings`,
defaults the main job's) and the job's own settings (`gpal.catalog_jobs.classify.SETTINGS`),
each with its constraint, default and meaning.  A parameter added to the estimator is a
key here without an edit.  classify_catalog claims and writes its output folder itself
(model, probability table, figures, ``report.md``), with the same resume / refuse /
``force`` rules as every workflow.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gpal.runs.executors import Executor
from gpal.workflows.schema import Field, fields_from_settings

__all__ = ["CLAIMS_OUTPUT_DIR", "run", "schema"]

CLAIMS_OUTPUT_DIR = True


def _parts() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """The selection's, the estimator's and the job's settings, by name."""
    from gpal.catalog_jobs.classify import SETTINGS
    from gpal.catalog_jobs.selection import CatalogSelection
    from gpal.catalog_jobs.settings import main_job_estimator
    from gpal.estimators.settings import estimator_settings

    return CatalogSelection.settings(), estimator_settings(main_job_estimator()), SETTINGS


def schema() -> dict[str, Any]:
    params: dict[str, Field] = {}
    for part in _parts():
        shared = sorted(set(params) & set(part))
        if shared:
            raise RuntimeError(f"the classify workflow's params {shared} are named twice (selection, estimator, job)")
        params.update(fields_from_settings(part))
    return {"params": params}


def run(config: dict[str, Any], out: Path, executor: Executor, progress: bool, force: bool = False) -> None:
    from gpal.catalog_jobs.classify import classify_catalog
    from gpal.catalog_jobs.selection import CatalogSelection
    from gpal.catalog_jobs.settings import main_job_estimator

    selection, estimator, job = ({name: config["params"][name] for name in part} for part in _parts())
    classify_catalog(CatalogSelection(**selection), main_job_estimator(**estimator, random_state=config["seed"],
                                                                       progress=progress),
                     out, **job, seed=config["seed"], force=force, progress=progress, executor=executor)

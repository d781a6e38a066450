"""The README states the main job's settings as the code declares them (its example said 300 epochs long after
the default became 50)."""

from __future__ import annotations

import re
from pathlib import Path

from gpal.catalog_jobs.selection import CatalogSelection
from gpal.catalog_jobs.settings import MAIN_JOB_ESTIMATOR

README = (Path(__file__).parents[1] / "README.md").read_text(encoding="utf-8")


def test_the_main_job_description_gives_the_declared_inducing_points_epochs_and_step():
    found = re.search(r"(\d+) inducing points, (\d+) epochs at Adam step ([\d.]+)", README)
    assert found, "the README no longer describes the main job's inducing points, epochs and Adam step"
    stated = {"num_inducing": int(found[1]), "epochs": int(found[2]), "learning_rate": float(found[3])}
    assert stated == {key: MAIN_JOB_ESTIMATOR[key] for key in stated}


def test_the_table_example_reads_back_the_default_catalog_and_the_declared_epochs():
    found = re.search(r'table\.meta\["FITCONF"\]\["epochs"\]\s+# \'(\w+)\', (\d+)', README)
    assert found, "the README's astropy example no longer reads FITCONF's epochs"
    assert (found[1], int(found[2])) == (CatalogSelection().catalog, MAIN_JOB_ESTIMATOR["epochs"])

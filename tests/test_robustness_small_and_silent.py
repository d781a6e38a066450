"""Data warnings reach the terminal whatever Python's warning filters say, and a campaign starts from a handful of
labels (issue 63)."""

from __future__ import annotations

import json
import warnings

import pytest

from gpal.catalog_jobs.settings import FewRowsWarning, main_job_estimator, prior_for_rows
from gpal.cli import main


# ------------------------------------------------------------------ data warnings
@pytest.mark.parametrize("quiet", [False, True])
def test_data_warnings_reach_the_terminal_under_pythonwarnings_ignore(quiet, two_class_model, small_catalog,
                                                                      tmp_path, capsys):
    """As PYTHONWARNINGS=ignore sets Python's filters (common on clusters): the rows whose missing errors are read
    as exact were kept without a word; --quiet is the user's way to silence them."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert main(["predict", str(two_class_model), "--catalog", str(small_catalog), "--no-progress",
                     "--out", str(tmp_path / "t.csv"), *(["--quiet"] if quiet else [])]) == 0
    err = capsys.readouterr().err
    said = "gpal: warning: 42 source(s) of the pool (unassociated, bcu: the sources to classify) have an error the catalog does not give" in err
    assert said is not quiet, err


# ------------------------------------------------------------- a campaign starts small
@pytest.mark.parametrize("rows, expected", [(80, None), (79, {"prior_components": 7}), (10, {"prior_components": 1}),
                                            (9, {"input_prior": "broad"}), (1, {"input_prior": "broad"})])
def test_the_main_jobs_prior_adapts_to_the_rows_it_has(rows, expected):
    estimator = main_job_estimator()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert prior_for_rows(estimator, rows) == expected
    assert [w.category for w in caught] == ([FewRowsWarning] if expected else [])
    assert estimator.get_params()["prior_components"] == (expected or {}).get("prior_components", 8)
    assert estimator.get_params()["input_prior"] == (expected or {}).get("input_prior", "population")
    if expected:
        estimator.check_sizes(rows, 16, 3)  # what refused the campaign before passes now


def test_a_prior_that_is_not_used_or_fits_is_left_alone():
    for estimator in (main_job_estimator(input_prior="broad"), main_job_estimator(input_noise="first_order"),
                      main_job_estimator(prior_components=2)):
        before = estimator.get_params()
        assert prior_for_rows(estimator, 20) is None
        assert estimator.get_params() == before


def test_a_campaign_starts_from_ten_labels(small_catalog, tmp_path, capsys):
    """Was: "a 8-component population prior needs at least 10 training rows per component (80)"."""
    out = tmp_path / "campaign"
    code = main(["active", "--catalog", str(small_catalog), "--initial", "10", "--test", "30", "--queries", "1",
                 "--retrain-epochs", "1", "--epochs", "1", "--num-inducing", "3", "--no-progress", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 0, err
    assert ("gpal: warning: 10 training rows are too few for a 8-component population prior (10 rows per "
            "component); the model uses a 1-component population prior") in err
    identity = json.loads((out / "run.json").read_text())["identity"]
    assert identity["adapted_to_few_rows"] == {"prior_components": 1}

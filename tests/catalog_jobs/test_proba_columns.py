"""The probability columns, the newest release and the CLASS1 groups: each rule written once."""

import numpy as np
import pandas as pd

from gpal.catalog_jobs.later_check import later_release_of
from gpal.catalog_jobs.proba_columns import (
    MC_ERROR_COLUMN, classes_from_columns, proba_column, proba_columns, proba_of, with_proba,
)
from gpal.catalogs.classes import UNASSOCIATED, source_groups
from gpal.catalogs.releases import NEWEST_RELEASE, RELEASES


def test_probability_columns_round_trip_and_the_monte_carlo_error_is_no_class():
    classes = ["bll", "fsrq", "p_weird"]
    columns = ["Source_Name", *proba_columns(classes), MC_ERROR_COLUMN, "entropy"]
    assert proba_column("bll") == "p_bll" and classes_from_columns(columns) == classes
    proba = np.array([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]])
    frame = with_proba(pd.DataFrame({"Source_Name": ["a", "b"]}), classes, proba)
    np.testing.assert_array_equal(proba_of(frame, classes[::-1]), proba[:, ::-1])


def test_the_newest_release_is_the_last_record_and_has_no_later_one():
    assert NEWEST_RELEASE == list(RELEASES)[-1]
    assert later_release_of(NEWEST_RELEASE) is None
    assert later_release_of("4FGL-DR4") == NEWEST_RELEASE


def test_a_source_without_a_class1_code_is_unassociated_however_the_table_spells_it():
    groups = source_groups(["PSR ", " bcu", "", None, float("nan"), "Fsrq"])
    assert groups.tolist() == ["psr", "bcu", UNASSOCIATED, UNASSOCIATED, UNASSOCIATED, "fsrq"]

"""A job's settings declared once: the checks, the run identity, the table header and the command line derive them."""

import pytest

from gpal.catalog_jobs import active, classify
from gpal.catalog_jobs.follow_up import FOLLOW_UP_SETTINGS
from gpal.catalog_jobs.job_settings import (
    NEVER, WHEN_CHANGED, JobSetting, check_settings, header_of, recorded_settings, settings_from_header,
)
from gpal.catalog_jobs.selection import CatalogSelection
from gpal.catalog_jobs.settings import main_job_estimator
from gpal.catalog_jobs.tables import KEYWORDS
from gpal.cli import build_parser
from gpal.constraints import Integer, ListOf, Optional, Real, Text
from conftest import TINY_ESTIMATOR

DECLARED = {
    "level": JobSetting(Real(0), 4.0, "a level", keyword="LEVEL"),
    "flags": JobSetting(ListOf(Integer(1), min_length=0), (), "flags", record=WHEN_CHANGED, keyword="FLAGS",
                        unordered=True),
    "about": JobSetting(Optional(Text()), None, "a class", keyword="ABOUT"),
    "rows": JobSetting(Integer(1), 10, "rows per task", record=NEVER),
}


def test_the_records_derive_from_the_declaration():
    values = check_settings(DECLARED, {"flags": [6, 5]}, "a job")
    assert values.as_dict() == {"level": 4.0, "flags": [6, 5], "about": None, "rows": 10}
    assert recorded_settings(DECLARED, values) == {"level": 4.0, "flags": [5, 6], "about": None}  # rows never
    assert "flags" not in recorded_settings(DECLARED, check_settings(DECLARED, {}, "a job"))  # at its default
    header = header_of(DECLARED, values)
    assert header == {"LEVEL": 4.0, "FLAGS": "5,6", "ABOUT": ""}
    assert settings_from_header(DECLARED, header) == {"level": 4.0, "flags": [5, 6], "about": None}
    assert settings_from_header(DECLARED, {}) == {"level": 4.0, "flags": [], "about": None}  # an earlier table
    assert values.unread() == ["rows"]  # the header read the others: a step must read rows
    with pytest.raises(RuntimeError, match=r"a job declares the settings \['rows'\] but no step of it reads them"):
        values.require_all_read("a job")
    assert values["rows"] == 10 and values.unread() == []


def test_unknown_and_bad_settings_are_refused_by_name():
    with pytest.raises(TypeError, match=r"a job got unknown settings \['levle'\]; valid ones: \['level'"):
        check_settings(DECLARED, {"levle": 3}, "a job")
    with pytest.raises(ValueError, match="level"):
        check_settings(DECLARED, {"level": -1}, "a job")
    with pytest.raises(ValueError, match="record must be one of"):
        JobSetting(Real(0), 1.0, "x", record="sometimes")


def test_both_jobs_share_the_follow_up_settings_and_every_keyword_has_its_comment():
    assert {name: classify.SETTINGS[name] for name in FOLLOW_UP_SETTINGS} == FOLLOW_UP_SETTINGS
    assert {name: active.campaign_settings()[name] for name in FOLLOW_UP_SETTINGS} == FOLLOW_UP_SETTINGS
    for settings in (classify.SETTINGS, active.campaign_settings()):
        keywords = [s.keyword for s in settings.values() if isinstance(s, JobSetting) and s.keyword]
        assert all(k in KEYWORDS and len(k) <= 8 for k in keywords), keywords  # FITS cards, with a comment


@pytest.fixture
def throwaway(monkeypatch):
    """A setting added to the main job's declaration and to nothing else."""
    monkeypatch.setitem(classify.SETTINGS, "throwaway_level", JobSetting(Real(0), 1.0, "a setting no step reads"))


def test_a_setting_added_to_the_declaration_reaches_the_command_line_and_the_checks(throwaway, small_catalog,
                                                                                     tmp_path):
    args = build_parser().parse_args(["classify", "--throwaway-level", "2.5"])
    assert vars(args)["job:throwaway_level"] == 2.5
    selection, estimator = CatalogSelection(catalog=str(small_catalog)), main_job_estimator(**TINY_ESTIMATOR)
    with pytest.raises(ValueError, match="throwaway_level"):
        classify.classify_catalog(selection, estimator, tmp_path / "run", progress=False, throwaway_level=-1.0)


def test_a_setting_no_step_reads_fails_before_any_work(throwaway, small_catalog, tmp_path):
    selection, estimator = CatalogSelection(catalog=str(small_catalog)), main_job_estimator(**TINY_ESTIMATOR)
    with pytest.raises(RuntimeError, match=r"declares the settings \['throwaway_level'\] but no step of it reads"):
        classify.classify_catalog(selection, estimator, tmp_path / "run", progress=False)
    assert not (tmp_path / "run").exists()  # refused before the folder was claimed


@pytest.fixture
def throwaway_in_header(monkeypatch):
    """A setting added by the recipe: its declaration, with a keyword, and that keyword's comment (two files)."""
    monkeypatch.setitem(classify.SETTINGS, "throwaway_level",
                        JobSetting(Real(0), 1.0, "a level the lists would read", keyword="THROWLVL"))
    monkeypatch.setitem(KEYWORDS, "THROWLVL", "a level the lists would read")


def test_a_setting_added_by_the_recipe_reaches_the_option_the_workflow_the_check_and_the_identity(
        throwaway_in_header, small_catalog, tmp_path):
    from gpal.workflows import WorkflowError, classify as classify_workflow, load_workflow

    assert vars(build_parser().parse_args(["classify", "--throwaway-level", "2.5"]))["job:throwaway_level"] == 2.5
    field = classify_workflow.schema()["params"]["throwaway_level"]
    assert (field.default, field.doc) == (1.0, "a level the lists would read")
    path = tmp_path / "classify.yaml"
    path.write_text(f"workflow: classify\nparams:\n  catalog: {small_catalog}\n  throwaway_level: 2.5\n")
    assert load_workflow(path).config["params"]["throwaway_level"] == 2.5
    with pytest.raises(WorkflowError, match="throwaway_level"):
        load_workflow(path, ["params.throwaway_level=-1"])
    selection, estimator = CatalogSelection(catalog=str(small_catalog)), main_job_estimator(**TINY_ESTIMATOR)
    with pytest.raises(ValueError, match="throwaway_level"):
        classify._plan(selection, estimator, {"throwaway_level": -1.0}, seed=0)
    # the header reads it (so no step is left without it), the identity records it: another value, another run
    plans = [classify._plan(selection, estimator, given, seed=0) for given in ({}, {"throwaway_level": 2.5})]
    assert [plan.header["THROWLVL"] for plan in plans] == [1.0, 2.5]
    assert [plan.identity["throwaway_level"] for plan in plans] == [1.0, 2.5]
    assert {k: v for k, v in plans[0].identity.items() if k != "throwaway_level"} == \
        {k: v for k, v in plans[1].identity.items() if k != "throwaway_level"}

"""A setting added to the estimator in one place reaches the CLI, the workflows and their docs (issue 38).

The estimator below differs from ``NoisyGPClassifier`` by one declared parameter: its constraint
in ``_parameters``, its constructor argument and its line under "Parameters". Nothing else is
edited; the main job's estimator is swapped for it, and every surface that offers the main job's
settings must then offer the new one with its constraint, default and meaning.
"""

from __future__ import annotations

import inspect

import pytest

from gpal.constraints import Integer
from gpal.estimators.noisy_gp import NoisyGPClassifier

DOC = "how many widgets the estimator of this test makes"


def _with_new_setting() -> type:
    base = inspect.signature(NoisyGPClassifier.__init__)

    class WithNewSetting(NoisyGPClassifier):
        __doc__ = NoisyGPClassifier.__doc__.replace(
            "    Parameters\n    ----------\n", f"    Parameters\n    ----------\n    new_setting\n        {DOC}.\n", 1)
        _parameters = {**NoisyGPClassifier._parameters, "new_setting": Integer(2)}

        def __init__(self, *, new_setting: int = 7, **params):
            super().__init__(**params)
            self.new_setting = new_setting

    # scikit-learn reads the parameter names from the signature: the one a written-out __init__ would have
    new = inspect.Parameter("new_setting", inspect.Parameter.KEYWORD_ONLY, default=7)
    WithNewSetting.__init__.__signature__ = base.replace(parameters=[*base.parameters.values(), new])
    return WithNewSetting


@pytest.fixture
def with_new_setting(monkeypatch):
    import gpal.catalog_jobs.settings
    import gpal.estimators.noisy_gp

    cls = _with_new_setting()
    # the class main_job_estimator builds, and the declaration an ordinary parse reads without importing it (adding
    # the parameter to NoisyGPClassifier adds it to both: its _parameters are that declaration)
    monkeypatch.setattr(gpal.estimators.noisy_gp, "NoisyGPClassifier", cls)
    monkeypatch.setattr(gpal.catalog_jobs.settings, "MAIN_JOB_PARAMETERS", cls._parameters)
    return cls


def test_the_declaration_is_complete(with_new_setting):
    """The subclass is what adding the parameter to NoisyGPClassifier would make: every other parameter kept."""
    from gpal.catalog_jobs.settings import main_job_estimator
    from gpal.estimators.settings import parameter_docs

    est = main_job_estimator(new_setting=3)
    assert type(est) is with_new_setting and est.get_params()["new_setting"] == 3
    assert set(est.get_params()) == set(NoisyGPClassifier().get_params()) | {"new_setting"}
    assert parameter_docs(with_new_setting)["new_setting"] == DOC
    with pytest.raises(ValueError, match="new_setting"):
        main_job_estimator(new_setting=1).validate_params()


@pytest.mark.parametrize("verb", ["train", "classify", "active"])
def test_the_command_line_offers_it(with_new_setting, verb):
    from gpal.catalog_jobs.settings import main_job_estimator
    from gpal.cli import build_parser
    from gpal.cli.verbs import _estimator

    parser = build_parser()
    verbs = next(a for a in parser._actions if a.dest == "verb").choices
    text = " ".join(verbs[verb].format_help().split())
    assert f"--new-setting NEW_SETTING {DOC}; default 7" in text
    required = {"train": ["--out", "x", "--classes", "blazar_pulsar"], "classify": [], "active": ["--out", "x"]}[verb]
    args = parser.parse_args([verb, *required, "--new-setting", "3"])
    assert _estimator(args, main_job_estimator, False).new_setting == 3
    assert _estimator(parser.parse_args([verb, *required]), main_job_estimator, False).new_setting == 7


def test_the_classify_workflow_offers_it(with_new_setting, tmp_path):
    from gpal.workflows import WorkflowError, load_workflow
    from gpal.workflows.classify import schema

    field = schema()["params"]["new_setting"]
    assert (field.default, field.doc, field.constraint) == (7, DOC, Integer(2))
    path = tmp_path / "job.yaml"
    path.write_text("workflow: classify\nparams: {new_setting: 5}\n")
    assert load_workflow(path).config["params"]["new_setting"] == 5
    assert load_workflow(path, ["params.new_setting=4"]).config["params"]["new_setting"] == 4
    with pytest.raises(WorkflowError, match="params.new_setting must be an integer >= 2"):
        load_workflow(path, ["params.new_setting=1"])

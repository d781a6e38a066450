"""An acquisition's options are declared once, beside it; ``gpal active`` and the learning-curve workflows read them."""

import importlib
import inspect

import pytest

import gpal.catalog_jobs.active as campaign
from gpal.active.acquisition import ACQUISITIONS, BALD, Discovery, acquisition_settings, make_acquisition
from gpal.cli import build_parser
from gpal.constraints import Integer, InvalidParameter, Real
from gpal.workflows import active_learning, follow_up

DRAWS_DOC = "probe draws of the latent functions"
EXPLORATION_DOC = "probe weight of the spread of p(target)"


def test_settings_join_each_declared_constraint_with_the_constructor_default_and_the_parameter_entry():
    for name in ACQUISITIONS.names():
        cls = ACQUISITIONS[name]
        settings = acquisition_settings(name)
        assert list(settings) == list(cls._parameters)
        signature = inspect.signature(cls.__init__).parameters
        for option, setting in settings.items():
            assert setting.default is signature[option].default and setting.doc, (name, option)
    assert acquisition_settings("bald")["n_samples"].default == BALD().n_samples == 100
    assert acquisition_settings("discovery")["target"].default is inspect.Parameter.empty  # required
    with pytest.raises(ValueError, match="unknown acquisition 'nope'"):
        acquisition_settings("nope")


def test_a_constructor_checks_its_options_against_the_declaration():
    with pytest.raises(InvalidParameter, match="n_samples must be an integer >= 2"):
        BALD(n_samples=1)
    with pytest.raises(InvalidParameter, match="exploration"):
        Discovery("pulsar", exploration=-1.0)


@pytest.fixture
def exploration_on_bald(monkeypatch):
    """``exploration`` added to BALD with discovery's default, and BALD's ``n_samples`` declared afresh."""
    init = BALD.__init__

    def __init__(self, n_samples=100, input_draws=16, target=None, exploration=0.0, **batching):
        init(self, n_samples, input_draws, target, **batching)
        self._set_options(exploration=exploration)

    entry = "    n_samples : Monte Carlo draws of the latent functions per pool source (cost grows linearly).\n"
    assert entry in BALD.__doc__
    monkeypatch.setattr(BALD, "__init__", __init__)
    monkeypatch.setattr(BALD, "__doc__", BALD.__doc__.replace(
        entry, f"    n_samples : {DRAWS_DOC}.\n    exploration : {EXPLORATION_DOC}.\n"))
    monkeypatch.setattr(BALD, "_parameters", {**BALD._parameters, "n_samples": Integer(3), "exploration": Real(0)})
    importlib.reload(campaign)  # its settings are built when it is imported
    yield
    monkeypatch.undo()
    importlib.reload(campaign)


def test_a_declaration_reaches_gpal_active_and_both_workflows(exploration_on_bald):
    # gpal active: the added option is offered with BALD's meaning, and BALD now takes it
    parser = build_parser()
    active = parser._subparsers._group_actions[0].choices["active"]
    help_text = " ".join(active.format_help().split())
    assert f"bald: {EXPLORATION_DOC}; discovery: weight of the model's uncertainty" in help_text
    assert campaign.acquisition_config("bald", ["bll", "pulsar"], target=None, exploration=0.5) == \
        {"name": "bald", "exploration": 0.5}
    assert make_acquisition({"name": "bald", "exploration": 0.5}).exploration == 0.5
    # both workflows: BALD's draws keep the study's default, with BALD's constraint and meaning
    for kind in (active_learning, follow_up):
        field = kind.schema()["loop"]["bald_samples"]
        assert field.default == 30 and field.doc == f"bald: {DRAWS_DOC}", kind.__name__
        with pytest.raises(InvalidParameter, match="must be an integer >= 3"):
            field.constraint.check("loop.bald_samples", 2)


def test_gpal_active_refuses_an_option_the_acquisition_does_not_take():
    assert campaign.acquisition_config("bald", ["bll"], target=None, exploration=0.0) == {"name": "bald"}
    with pytest.raises(ValueError, match=r"--exploration applies to --acquisition discovery, not 'bald'"):
        campaign.acquisition_config("bald", ["bll"], target=None, exploration=0.5)

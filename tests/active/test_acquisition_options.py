"""An acquisition's options are declared once, beside it; ``gpal active`` and the learning-curve workflows read them."""

import inspect

import pytest

import gpal
import gpal.catalog_jobs.active as campaign
from gpal.active.acquisition import ACQUISITIONS, BALD, Discovery, acquisition_settings, make_acquisition
from gpal.cli import build_parser, main
from gpal.constraints import Integer, InvalidParameter, Real
from gpal.workflows import WorkflowError, active_learning, follow_up, load_workflow
from gpal.workflows.curves import acquisition_config

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

    entry = "    n_samples\n        Monte Carlo draws of the latent functions per pool source (cost grows linearly).\n"
    assert entry in BALD.__doc__
    monkeypatch.setattr(BALD, "__init__", __init__)
    monkeypatch.setattr(BALD, "__doc__", BALD.__doc__.replace(
        entry, f"    n_samples\n        {DRAWS_DOC}.\n    exploration\n        {EXPLORATION_DOC}.\n"))
    monkeypatch.setattr(BALD, "_parameters", {**BALD._parameters, "n_samples": Integer(3), "exploration": Real(0)})


def test_a_declaration_reaches_gpal_active_and_both_workflows(exploration_on_bald):
    # gpal active: the added option is offered with BALD's meaning, and BALD now takes it
    parser = build_parser()
    active = parser._subparsers._group_actions[0].choices["active"]
    help_text = " ".join(active.format_help().split())
    assert f"bald: {EXPLORATION_DOC}; discovery: weight of the model's uncertainty" in help_text
    assert campaign.acquisition_config("bald", ["bll", "pulsar"], target=None, exploration=0.5) == \
        {"name": "bald", "exploration": 0.5}
    assert make_acquisition({"name": "bald", "exploration": 0.5}).exploration == 0.5
    # both workflows: BALD's draws keep the study's default, with BALD's constraint and meaning; the added
    # option with BALD's default and meaning
    for kind in (active_learning, follow_up):
        bald = kind.schema()["acquisitions"]["bald"]
        assert bald["n_samples"].default == 30 and bald["n_samples"].doc == DRAWS_DOC, kind.__name__
        with pytest.raises(InvalidParameter, match="must be an integer >= 3"):
            bald["n_samples"].constraint.check("acquisitions.bald.n_samples", 2)
        assert bald["exploration"].default == 0.0 and bald["exploration"].doc == EXPLORATION_DOC


def test_gpal_active_refuses_an_option_the_acquisition_does_not_take():
    assert campaign.acquisition_config("bald", ["bll"], target=None, exploration=0.0) == {"name": "bald"}
    with pytest.raises(ValueError, match=r"--exploration applies to --acquisition discovery, not 'bald'"):
        campaign.acquisition_config("bald", ["bll"], target=None, exploration=0.5)


def test_the_config_is_derived_from_the_declared_options():
    # every declared option, but those at None; the batch rule's settings as before
    assert BALD(n_samples=7).config() == {"name": "bald", "batch": "top_k", "lengthscale": None, "n_samples": 7,
                                         "input_draws": 16}
    assert BALD(target="pulsar").config()["target"] == "pulsar"
    assert Discovery("pulsar", exploration=0.5).config() == {
        "name": "discovery", "batch": "top_k", "lengthscale": None, "target": "pulsar", "exploration": 0.5,
        "n_samples": 100}


@pytest.fixture
def throwaway_acquisition():
    """An acquisition added by the recipe from a user's own code: a class with its options declared and documented,
    registered by `gpal.register_acquisition` (and unregistered afterwards)."""
    from gpal.active import Acquisition

    class Widest(Acquisition):
        """Scores by the spread of a few draws.

        Parameters
        ----------
        spread_draws : draws whose spread is the score.
        """

        _parameters = {"spread_draws": Integer(3)}

        def __init__(self, spread_draws: int = 5, **batching):
            super().__init__(**batching)
            self._set_options(spread_draws=spread_draws)

        def scores(self, model, X_pool):  # pragma: no cover - never asked to score here
            raise NotImplementedError

    gpal.register_acquisition("widest_throwaway", Widest)
    yield Widest
    gpal.unregister_acquisition("widest_throwaway")
    assert "widest_throwaway" not in ACQUISITIONS


def test_an_acquisition_added_by_the_recipe_reaches_gpal_active_and_its_resume_check(throwaway_acquisition):
    assert campaign.acquisition_options()["spread_draws"] == "spread_draws"
    args = build_parser().parse_args(["active", "--out", "x", "--acquisition", "widest_throwaway", "--spread-draws", "9"])
    assert vars(args)["job:spread_draws"] == 9
    config = campaign.acquisition_config("widest_throwaway", ["bll"], spread_draws=9)
    assert config == {"name": "widest_throwaway", "spread_draws": 9}
    made = make_acquisition(config)
    assert made.config() == {"name": "widest_throwaway", "batch": "top_k", "lengthscale": None, "spread_draws": 9}
    assert make_acquisition(made.config()).config() == made.config()  # what the resume check compares
    with pytest.raises(InvalidParameter, match="spread_draws must be an integer >= 3"):
        make_acquisition({"name": "widest_throwaway", "spread_draws": 2})
    with pytest.raises(ValueError, match=r"--spread-draws applies to --acquisition widest_throwaway, not 'bald'"):
        campaign.acquisition_config("bald", ["bll"], spread_draws=9)


def test_an_option_declared_without_a_constructor_argument_is_refused_when_the_class_is_written():
    from gpal.active import Acquisition

    with pytest.raises(TypeError, match=r"Orphan declares options \['draws'\] its constructor does not take"):
        class Orphan(Acquisition):
            _parameters = {"draws": Integer(1)}


def test_an_acquisition_added_by_the_recipe_reaches_both_workflows_and_gpal_workflow(throwaway_acquisition, tmp_path,
                                                                                      capsys):
    # a strategy of either workflow, its option a key of the acquisitions section with its declared default
    for kind in (active_learning, follow_up):
        field = kind.schema()["acquisitions"]["widest_throwaway"]["spread_draws"]
        assert (field.default, field.doc) == (5, "draws whose spread is the score"), kind.__name__
    path = tmp_path / "al.yaml"
    path.write_text("workflow: active_learning\nstrategies: [widest_throwaway, random]\n"
                    "acquisitions:\n  widest_throwaway: {spread_draws: 7}\n")
    config = load_workflow(path, ["acquisitions.widest_throwaway.spread_draws=9"]).config
    assert config["acquisitions"]["widest_throwaway"] == {"spread_draws": 9}
    made = make_acquisition(acquisition_config("widest_throwaway", config["acquisitions"]))
    assert isinstance(made, throwaway_acquisition) and made.spread_draws == 9
    pick = make_acquisition(follow_up.acquisition_for("widest_throwaway+balance", config["acquisitions"], None, 3))
    assert (pick.spread_draws, pick.balance) == (9, True)
    # gpal workflow checks the value against the declaration before anything runs
    assert main(["workflow", str(path), "--out", str(tmp_path / "out"),
                 "--set", "acquisitions.widest_throwaway.spread_draws=2"]) == 2
    assert "acquisitions.widest_throwaway.spread_draws must be an integer >= 3 and <= 1000000; got 2" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_a_workflow_asks_for_an_option_its_strategy_requires(tmp_path):
    # discovery's target has no default: None in the section, asked for only where discovery is a strategy
    field = active_learning.schema()["acquisitions"]["discovery"]["target"]
    assert field.default is None and "required where the acquisition is a strategy" in field.doc
    path = tmp_path / "al.yaml"
    path.write_text("workflow: active_learning\nstrategies: [discovery, random]\n")
    with pytest.raises(WorkflowError, match=r"strategy 'discovery' needs acquisitions.discovery.target "
                                            r"\(the class searched for"):
        load_workflow(path)
    config = load_workflow(path, ["acquisitions.discovery.target=psr"]).config
    assert make_acquisition(acquisition_config("discovery", config["acquisitions"])).target == "psr"
    path.write_text("workflow: active_learning\nstrategies: [entropy, random]\n")
    assert load_workflow(path).config["acquisitions"]["discovery"]["target"] is None  # not a strategy: not asked


def test_gpal_active_asks_for_a_required_option_and_the_acquisition_checks_its_target_against_the_classes():
    with pytest.raises(ValueError, match=r"--acquisition discovery needs --target \(the class searched for, "
                                         r"e.g. pulsar\)"):
        campaign.acquisition_config("discovery", ["bll", "pulsar"])
    with pytest.raises(ValueError, match=r"discovery target 'psr' is not one of the classes \['bll', 'pulsar'\]"):
        campaign.acquisition_config("discovery", ["bll", "pulsar"], target="psr")
    with pytest.raises(ValueError, match=r"bald target 'psr' is not one of the classes \['bll', 'pulsar'\]"):
        campaign.acquisition_config("bald", ["bll", "pulsar"], target="psr")
    assert campaign.acquisition_config("discovery", ["bll", "pulsar"], target="pulsar") == {
        "name": "discovery", "target": "pulsar"}


def test_a_taken_acquisition_name_is_refused_unless_replacing_is_asked_for(throwaway_acquisition):
    from gpal.active import Acquisition

    class Other(Acquisition):
        def scores(self, model, X_pool):  # pragma: no cover - never asked to score here
            raise NotImplementedError

    with pytest.raises(ValueError, match=r"acquisition name 'widest_throwaway' is already registered \(.*Widest\); "
                                         r"pass replace=True"):
        gpal.register_acquisition("widest_throwaway", Other)
    with pytest.raises(ValueError, match=r"acquisition name 'bald' is already registered"):
        gpal.register_acquisition("bald", Other)
    with pytest.raises(ValueError, match=r"acquisition 'bald' is built in and cannot be unregistered"):
        gpal.unregister_acquisition("bald")
    with pytest.raises(TypeError, match=r"acquisition 'plain' must be a subclass of gpal.active.base.Acquisition; got <class 'object'>"):
        gpal.register_acquisition("plain", object)
    gpal.register_acquisition("widest_throwaway", Other, replace=True)
    assert isinstance(make_acquisition("widest_throwaway"), Other)
    assert campaign.campaign_settings()["acquisition"].constraint.choices()[-1] == "widest_throwaway"
    assert "spread_draws" not in campaign.acquisition_options()  # the replaced class's option went with it

"""Every list of names lives once (gpal.registry) and everything else reads it; each default is stated once."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from gpal.estimators.params import AUTO
from gpal.registry import (
    ACQUISITIONS,
    AUGMENTED_INFERENCE,
    DEFAULT_LIKELIHOOD,
    ESTIMATORS,
    INFERENCE,
    INPUT_NOISE,
    INPUT_PRIORS,
    KERNELS,
    LIKELIHOODS,
    NOISE_VARIANCE_MODES,
    WORKFLOWS,
)

WORKFLOW_FILES = Path(__file__).resolve().parents[1] / "gpal" / "workflows" / "files"


def _option(parser, verb: str, flag: str):
    """The argparse action of ``gpal VERB FLAG``."""
    sub = next(a for a in parser._actions if a.dest == "verb").choices[verb]
    return next(a for a in sub._actions if flag in a.option_strings)


@pytest.mark.parametrize("verb,flag,names", [
    ("train", "--likelihood", LIKELIHOODS.names()),
    ("train", "--input-noise", INPUT_NOISE.names()),
    ("train", "--input-prior", (AUTO, *INPUT_PRIORS)),  # the estimator's own default resolves to one of them
    ("active", "--input-noise", INPUT_NOISE.names()),
    ("active", "--acquisition", ACQUISITIONS.names()),
    ("classify", "--likelihood", LIKELIHOODS.names()),
    ("classify", "--noise-variance", NOISE_VARIANCE_MODES),
    ("classify", "--inference", INFERENCE),
    ("train", "--kernel", KERNELS.names()),
])
def test_cli_choices_are_the_registrys_names(verb, flag, names):
    from gpal.cli import build_parser

    assert tuple(_option(build_parser(), verb, flag).choices) == tuple(names)


def test_the_cli_refuses_an_unregistered_likelihood(capsys):
    from gpal.cli import build_parser

    with pytest.raises(SystemExit):
        build_parser().parse_args(["train", "--classes", "bll,fsrq", "--out", "x", "--likelihood", "robust"])
    assert "invalid choice: 'robust'" in capsys.readouterr().err


def test_one_default_likelihood_everywhere():
    from gpal.catalog_jobs.settings import main_job_estimator
    from gpal.estimators.noisy_gp import NoisyGPClassifier
    from gpal.models.svgp import build_model
    from gpal.workflows.methods import training_schema

    assert DEFAULT_LIKELIHOOD in LIKELIHOODS
    assert NoisyGPClassifier().likelihood == DEFAULT_LIKELIHOOD
    assert inspect.signature(build_model).parameters["likelihood"].default == DEFAULT_LIKELIHOOD
    assert main_job_estimator().likelihood == DEFAULT_LIKELIHOOD
    assert training_schema()["likelihood"].default == DEFAULT_LIKELIHOOD


def test_the_workflows_training_block_defaults_are_the_classifiers_but_the_records_settings():
    from gpal.estimators.noisy_gp import NoisyGPClassifier
    from gpal.workflows.methods import WORKFLOW_TRAINING, training_schema

    own = {**NoisyGPClassifier().get_params(), **WORKFLOW_TRAINING}
    for name, field in training_schema().items():
        expected = list(own[name]) if isinstance(own[name], tuple) else own[name]
        assert field.default == expected, name
    assert training_schema(batch_size=200)["batch_size"].default == 200
    with pytest.raises(TypeError, match="not training settings"):
        training_schema(batch=200)


@pytest.mark.parametrize("name", ["toy_1d.yaml", "papers/001_synthetic_2d.yaml", "waveform_active_learning.yaml", "fermi_4fgl.yaml"])
def test_the_paper_reproductions_state_the_papers_likelihood(name):
    """Their recorded numbers are robust-max's; the product default (softmax) must not change them."""
    from gpal.workflows import load_workflow

    assert load_workflow(WORKFLOW_FILES / name).config["training"]["likelihood"] == "robustmax"


def test_fixed_choices_are_read_not_restated():
    from gpal.estimators.logistic_softmax import LogisticSoftmaxGPClassifier
    from gpal.estimators.noisy_gp import NoisyGPClassifier
    from gpal.workflows.methods import training_schema

    assert tuple(NoisyGPClassifier._parameters["noise_variance"].options) == NOISE_VARIANCE_MODES
    assert tuple(training_schema()["noise_variance"].constraint.options) == NOISE_VARIANCE_MODES
    # the workflows' training block is the estimator's declaration, not a copy of it
    for name, field in training_schema().items():
        if name != "num_inducing":  # which also takes 'auto'
            assert field.constraint is NoisyGPClassifier._parameters.get(name, field.constraint), name
    assert training_schema()["likelihood"].constraint.choices() == LIKELIHOODS.names()
    assert tuple(NoisyGPClassifier._parameters["inference"].options) == INFERENCE
    assert tuple(LogisticSoftmaxGPClassifier._parameters["inference"].options) == AUGMENTED_INFERENCE


def test_noise_variance_modes_are_the_models():
    pytest.importorskip("gpflow")
    from gpal.models.noise_variance import NoiseVariance

    for mode in NOISE_VARIANCE_MODES:
        assert NoiseVariance(mode, 2).mode == mode
    with pytest.raises(ValueError, match=r"noise_variance must be one of \['known', 'learned', 'both'\]"):
        NoiseVariance("measured", 2)


def test_the_comparison_runs_every_registered_likelihood():
    from gpal.workflows.compare import FIXED_DELTA, FIXED_DELTA_SUFFIX, METHODS, SOFTMAX_MC, SOFTMAX_MC_LBFGS

    fixed = [m for m in METHODS if m.endswith(FIXED_DELTA_SUFFIX)]
    plain = [m for m in METHODS if m.startswith("svgp-") and m not in fixed and m not in (SOFTMAX_MC, SOFTMAX_MC_LBFGS)]
    assert plain == [f"svgp-{n}" for n in LIKELIHOODS.names()]
    assert SOFTMAX_MC.startswith("svgp-softmax") and "softmax" in LIKELIHOODS.names()  # paper 003's softmax GPC
    # paper 000's fixed-delta variants: of registered likelihoods only
    assert fixed == [f"svgp-{n}{FIXED_DELTA_SUFFIX}" for n in FIXED_DELTA] and set(FIXED_DELTA) <= set(LIKELIHOODS.names())


def test_every_workflow_kind_is_registered():
    """Each kind shipped as a file: tests/workflows/test_workflows.py, which loads every shipped file once."""
    for kind in WORKFLOWS.names():
        module = WORKFLOWS[kind]
        assert callable(module.schema) and callable(module.run), kind


def test_acquisitions_register_where_they_are_defined():
    from gpal.active.acquisition import Acquisition, make_acquisition

    for name in ACQUISITIONS.names():
        assert ACQUISITIONS[name].name == name

    class Closest(Acquisition):
        name = "test_closest"

        def scores(self, model, X_pool):  # pragma: no cover - never called
            raise NotImplementedError

    try:
        assert ACQUISITIONS["test_closest"] is Closest
        assert isinstance(make_acquisition("test_closest"), Closest)
        with pytest.raises(ValueError, match="acquisition name 'bald' is already registered"):
            type("Impostor", (Acquisition,), {"name": "bald", "scores": lambda self, m, X: None})
    finally:
        del ACQUISITIONS["test_closest"]


@pytest.mark.parametrize("family", ESTIMATORS.names())
def test_every_family_answers_what_callers_ask(family):
    """Callers (prediction, the CLI, the main job) use the public API, never private attributes or signatures."""
    estimator = ESTIMATORS[family]()
    assert estimator.validate_params() is None
    assert isinstance(estimator.needs_X_var, bool)
    takes_error = "return_mc_error" in inspect.signature(estimator.predict_proba).parameters
    assert estimator.reports_mc_error is takes_error


def test_needs_X_var_follows_the_parameters():
    from gpal.estimators.noisy_gp import NoisyGPClassifier

    assert not NoisyGPClassifier(input_noise="none").needs_X_var
    assert NoisyGPClassifier(input_noise="latent").needs_X_var
    assert not NoisyGPClassifier(input_noise="latent", noise_variance="learned").needs_X_var


def test_a_likelihood_registered_from_a_users_code_reaches_the_estimator_and_the_cli():
    import gpal
    from gpal.cli import build_parser
    from gpal.constraints import InvalidParameter
    from gpal.estimators.noisy_gp import NoisyGPClassifier
    from gpal.models.likelihoods.base import RobustMax, make_likelihood

    class Sharper(RobustMax):
        """Robust-max under a name of the user's."""

    gpal.register_likelihood("sharper_throwaway", Sharper)
    try:
        made = make_likelihood("sharper_throwaway", num_classes=3)
        assert isinstance(made, Sharper) and made.name == "sharper_throwaway"
        assert NoisyGPClassifier(likelihood="sharper_throwaway").validate_params() is None
        assert _option(build_parser(), "train", "--likelihood").choices[-1] == "sharper_throwaway"
        with pytest.raises(InvalidParameter, match=r"likelihood must be a likelihood name \[.*'sharper_throwaway'\]"):
            NoisyGPClassifier(likelihood="nope").validate_params()
        other = type("Other", (RobustMax,), {})
        with pytest.raises(ValueError, match=r"likelihood name 'softmax' is already registered .*replace=True"):
            gpal.register_likelihood("softmax", other)
        with pytest.raises(ValueError, match=r"a likelihood name must be a lower-case string"):
            gpal.register_likelihood("Other", other)
        with pytest.raises(ValueError, match=r"Sharper declares the name 'sharper_throwaway': register it as"):
            gpal.register_likelihood("sharper_again", Sharper)  # one class, one name: the one its configs hold
    finally:
        gpal.unregister_likelihood("sharper_throwaway")
    with pytest.raises(InvalidParameter, match="likelihood must be"):
        NoisyGPClassifier(likelihood="sharper_throwaway").validate_params()


def test_two_classes_a_function_made_under_one_name_clash():
    """A reload defines a module-level class again (no clash); two classes of one factory are two (a clash)."""
    from gpal.registry import Registry

    def made():
        class Made:
            pass
        return Made

    registry = Registry("thing", {})
    first, second = made(), made()
    registry.register("made", first)
    registry.register("made", first)  # the same class again
    with pytest.raises(ValueError, match=r"thing name 'made' is already registered .*made\.<locals>\.Made"):
        registry.register("made", second)
    reloaded = type("Registry", (), {"__module__": Registry.__module__, "__qualname__": Registry.__qualname__})
    registry.register("module_level", Registry)
    registry.register("module_level", reloaded)  # a module-level class defined again by a reload
    assert registry["module_level"] is reloaded


def test_no_test_patches_a_registry():
    """A test adds to a registry by its documented call (`gpal.register_release` and its kind, undone by
    ``unregister_*``), as a user's code does, so what it checks is what every verb reads: replacing a module's copy
    (``monkeypatch.setattr(prediction, "RELEASES", ...)``) leaves the other readers unpatched, and an item set in
    the plain mappings skips their call's checks.  A `gpal.registry.Registry`'s item assignment is its
    ``register`` (and deletion its ``unregister``), so ``monkeypatch.setitem`` on one goes through it."""
    import re

    registries = "RELEASES|FEATURE_PRESETS|ACQUISITIONS|ESTIMATORS|INPUT_NOISE|KERNELS|LIKELIHOODS|WORKFLOWS"
    patched = re.compile(rf"setattr\(\s*[\w.]+\s*,\s*[\"'](?:{registries})[\"']"
                         rf"|setitem\(\s*(?:RELEASES|FEATURE_PRESETS)\b|patch(?:\.dict|\.object)?\([^)]*\b(?:{registries})\b")
    tests = Path(__file__).resolve().parent
    found = [f"{path.relative_to(tests)}:{number}" for path in sorted(tests.rglob("*.py")) if path != Path(__file__)
             for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if patched.search(line)]
    assert not found, f"tests patching a registry instead of registering through its call: {found}"
    assert patched.search('monkeypatch.setattr(prediction, "RELEASES", {})')
    assert patched.search("monkeypatch.setitem(FEATURE_PRESETS, 'x', ())")
    assert not patched.search("monkeypatch.setitem(LIKELIHOODS, NAME, entry)")

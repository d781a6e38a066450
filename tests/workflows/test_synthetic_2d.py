"""The synthetic_2d workflow's ``method_options``: one method's settings of the training block, checked on load."""

from pathlib import Path

import pytest

from gpal.workflows import load_workflow, run_workflow
from gpal.workflows.schema import WorkflowError

PATH = Path(__file__).resolve().parents[2] / "gpal" / "workflows" / "files" / "papers" / "001_synthetic_2d.yaml"
TITLE = r"\(the workflow of 2-D synthetic problems"


def test_the_papers_workflow_gives_mgp_alone_the_authors_label_flips():
    config = load_workflow(PATH).config
    assert config["method_options"] == {"MGP": {"likelihood_options": {"flip_spread": "all"}}}
    assert config["training"]["likelihood_options"] == {"epsilon": 0.001, "learn_epsilon": False}


@pytest.mark.slow
def test_a_methods_options_reach_its_fitted_estimator_alone(tmp_path, monkeypatch):
    """MGP's ``likelihood_options`` are merged key by key into the block's (its epsilon stays the block's), its
    ``learning_rate`` replaces the block's; NIMGP-FO, run with the same block, keeps the block's settings."""
    import gpal.workflows.synthetic as synthetic

    fitted = []

    class Recording(synthetic.NoisyGPClassifier):
        def fit(self, *args, **kwargs):
            fitted.append(self)
            return super().fit(*args, **kwargs)

    monkeypatch.setattr(synthetic, "NoisyGPClassifier", Recording)
    tiny = ["repetitions=1", "data.n_train=40", "data.n_test=30", "data.noise_levels=[0.25]", "data.bayes_cells=20",
            "methods=[MGP, NIMGP-FO]", "noise_variance=[known]", "training.epochs=1", "training.num_inducing=4",
            "training.n_samples=2", "training.likelihood_options={epsilon: 0.002, learn_epsilon: false}",
            "method_options={MGP: {likelihood_options: {flip_spread: all}, learning_rate: 0.05}}"]
    run_workflow(PATH, tiny, out=tmp_path / "syn", progress=False)
    by_method = {("MGP" if clf.input_noise == "none" else "NIMGP-FO"): clf for clf in fitted}
    assert sorted(by_method) == ["MGP", "NIMGP-FO"] and len(fitted) == 2
    mgp, fo = (by_method[m].model_.likelihood for m in ("MGP", "NIMGP-FO"))
    assert (mgp.flip_spread, fo.flip_spread) == ("all", "others")
    assert float(mgp.epsilon.numpy()) == pytest.approx(0.002) == float(fo.epsilon.numpy())
    assert (by_method["MGP"].learning_rate, by_method["NIMGP-FO"].learning_rate) == (0.05, 0.01)


@pytest.mark.parametrize("option, message", [
    ("{svgp-step: {epochs: 3}}", r"method_options names 'svgp-step', which is not a method of this workflow; valid "
                                 r"names are \['MGP', 'NIMGP', 'NIMGP-NN', 'NIMGP-FO'\]"),
    ("{NIMGP: {noise_variance: known}}", r"method_options.NIMGP: the noisy-input methods take settings of the "
                                         r"training block \[.*\]; \['noise_variance'\] is not one"),
    ("{MGP: {max_iter: 3}}", r"method_options.MGP: the noisy-input methods take settings of the training block "
                             r"\[.*'likelihood'.*\]; \['max_iter'\] is not one"),
    ("{MGP: {likelihood_options: {flip_spread: winner}}}", r"likelihood_options\['flip_spread'\] must be one of "
                                                           r"\['others', 'all'\]; got 'winner'"),
    ("{NIMGP-FO: {learning_rate: -1}}", r"method_options.NIMGP-FO.*learning_rate"),
])
def test_bad_method_options_are_refused_when_the_file_loads(option, message):
    with pytest.raises(WorkflowError, match=f"{message}.*{TITLE}"):
        load_workflow(PATH, [f"method_options={option}"])


def test_the_options_of_a_method_the_run_leaves_out_warn():
    with pytest.warns(UserWarning, match=r"method_options.MGP is not used: the run's methods \['NIMGP'\] leave MGP out"):
        config = load_workflow(PATH, ["methods=[NIMGP]"]).config
    assert config["methods"] == ["NIMGP"]

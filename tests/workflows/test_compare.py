"""gpal.workflows.compare (the likelihood comparison): table shape, binary-only cells, resume without recomputation."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gpal.data.dataset import NoisyDataset
from gpal.data.registry import DatasetEntry
from gpal.workflows import WorkflowError, compare, load_workflow


@pytest.fixture(scope="module")
def cl():
    return compare


def _blobs(n_classes: int, n: int = 40) -> NoisyDataset:
    rng = np.random.default_rng(n_classes)
    y = np.arange(n) % n_classes
    X = rng.normal(size=(n, 2)) + 3.0 * np.eye(n_classes, 2)[y]
    return NoisyDataset(
        X=X, X_var=np.zeros_like(X), y=y, class_names=tuple(f"c{k}" for k in range(n_classes)),
        feature_names=("a", "b"), ids=np.array([f"s{n_classes}-{i}" for i in range(n)]),
    )


TINY = {"tiny3": DatasetEntry(lambda n, seed: _blobs(3), "3 blobs", 40),
        "tiny2": DatasetEntry(lambda n, seed: _blobs(2), "2 blobs", 40)}


def test_unknown_names_list_the_valid_ones(cl):
    with pytest.raises(ValueError, match="valid names are .*svgp-robustmax.*jj"):
        cl.check_methods(["svgp-robustmax", "svgp-nope"])
    with pytest.raises(ValueError, match="valid names are .*waveform.*4fgl-dr4"):
        cl.parse_dataset("mnist", cl.DATASETS)
    with pytest.raises(ValueError, match="row count"):
        cl.parse_dataset("digits:ten")
    assert cl.parse_dataset("Digits:600") == ("digits", 600)


def test_table_and_resume(cl, tmp_path, monkeypatch):
    kwargs = dict(n_splits=1, epochs=2, out=tmp_path, iters=3, num_inducing=4, progress=False, registry=TINY)
    table = cl.run_comparison(["tiny3", "tiny2"], ["dirichlet", "jj"], **kwargs)

    assert [(r["dataset"], r["method"]) for r in table] == [
        ("tiny3", "dirichlet"), ("tiny3", "jj"), ("tiny2", "dirichlet"), ("tiny2", "jj")
    ]
    na = table[1]
    assert na["splits"] == 0 and {na[k] for k in ("accuracy", "nll", "ece", "train_seconds")} == {cl.NOT_APPLICABLE}
    for r in (table[0], table[2], table[3]):
        assert r["splits"] == 1
        acc = float(r["accuracy"].split(" ± ")[0])
        assert 0.0 <= acc <= 1.0
        assert float(r["nll"].split(" ± ")[0]) > 0 and float(r["train_seconds"].split(" ± ")[0]) > 0
        assert 0.0 <= float(r["ece"].split(" ± ")[0]) <= 1.0
    md = (tmp_path / "comparison.md").read_text().splitlines()
    assert md[0].split("|")[1:-1] == [
        " data set ", " n ", " C ", " method ", " splits ", " test accuracy ", " test NLL ", " ECE ", " train s "
    ]
    assert len(md) == 2 + 4 and "n/a (binary only)" in md[3]
    assert not (tmp_path / "tiny3" / "units" / "jj").exists()  # never run on 3 classes
    assert (tmp_path / "comparison.csv").read_text().splitlines()[0].startswith("dataset,n,classes,method")
    assert table[0]["nll_mean"] == pytest.approx(float(table[0]["nll"].split(" ± ")[0]), abs=5e-4)

    units = sorted(tmp_path.glob("*/units/*/split_*.json"))
    assert len(units) == 3
    stamps = {p: p.stat().st_mtime_ns for p in units}

    # A rerun must not fit anything: any fit now raises (and would leave an .error.json).
    def refuse(*args, **kwargs):
        raise AssertionError("recomputed a finished unit")

    monkeypatch.setattr("gpal.estimators.dirichlet.DirichletGPClassifier.fit", refuse)
    monkeypatch.setattr("gpal.estimators.logistic_bound.LogisticBoundGPClassifier.fit", refuse)
    again = cl.run_comparison(["tiny3", "tiny2"], ["dirichlet", "jj"], **kwargs)
    assert again == table
    assert not list(tmp_path.glob("*/units/*/*.error.json"))
    assert {p: p.stat().st_mtime_ns for p in units} == stamps


def test_changed_settings_are_refused_not_mixed(cl, tmp_path):
    kwargs = dict(n_splits=1, out=tmp_path, num_inducing=4, progress=False, registry=TINY)
    cl.run_comparison(["tiny2"], ["jj"], epochs=2, iters=2, **kwargs)
    with pytest.raises(ValueError, match=r"holds a different run \(methods\.jj"):
        cl.run_comparison(["tiny2"], ["jj"], epochs=2, iters=3, **kwargs)


def test_workflow_file_checks_data_sets_and_methods():
    path = Path(__file__).resolve().parents[2] / "gpal" / "workflows" / "files" / "compare_likelihoods.yaml"
    with pytest.raises(WorkflowError, match=r"datasets\[0\]: unknown data set 'mnist'; valid names are \[.*'wine'"):
        load_workflow(path, ["datasets=[mnist]"])
    with pytest.raises(WorkflowError, match=r"methods\[1\]: unknown method\(s\) \['svgp-nope'\]; valid names are \[.*'taylor'"):
        load_workflow(path, ["methods=[jj, svgp-nope]"])


@pytest.mark.parametrize("likelihood", ["step", "probit", "logit"])
def test_fixed_delta_methods_hold_delta_and_the_others_learn_it(cl, likelihood):
    """Paper 000's Fig. 4 pair: ``svgp-<lik>-fixed-delta`` keeps delta at its start, ``svgp-<lik>`` moves it."""
    from gpal import NoisyGPClassifier
    from gpal.models.likelihoods.gaussian_noise import DEFAULT_DELTA

    data = _blobs(2)
    deltas = {}
    for name in (f"svgp-{likelihood}", f"svgp-{likelihood}-fixed-delta"):
        spec = {**cl.method_spec(name, data.n_samples, 3, 10, 5), "batch_size": 20}
        assert spec["likelihood"] == likelihood
        clf = NoisyGPClassifier(**spec, random_state=0).fit(data.X, data.y)
        deltas[name] = (float(clf.model_.likelihood.delta.numpy()), clf.model_.likelihood.delta.trainable)
    assert deltas[f"svgp-{likelihood}-fixed-delta"] == (pytest.approx(DEFAULT_DELTA, rel=1e-12), False)
    learned, trainable = deltas[f"svgp-{likelihood}"]
    assert trainable and abs(learned - DEFAULT_DELTA) > 1e-5


def test_softmax_methods_train_paper_003s_monte_carlo_elbo_and_paper_000s_bound(cl):
    """``svgp-softmax-mc`` (paper 003's GPC) fits E_q log softmax by Monte Carlo; ``svgp-softmax`` keeps paper 000's
    Gumbel bound.  The two fitted models' likelihoods say which ELBO they trained."""
    from gpal import NoisyGPClassifier

    data = _blobs(3)
    fitted = {}
    for name in ("svgp-softmax-mc", "svgp-softmax"):
        spec = {**cl.method_spec(name, data.n_samples, 3, 10, 5), "batch_size": 20}
        assert spec["likelihood"] == "softmax"
        fitted[name] = NoisyGPClassifier(**spec, random_state=0).fit(data.X, data.y).model_.likelihood.get_config()
    assert (fitted["svgp-softmax-mc"]["elbo"], fitted["svgp-softmax-mc"]["num_elbo_samples"]) == (
        "monte_carlo", cl.SOFTMAX_MC_SAMPLES)
    assert fitted["svgp-softmax"]["elbo"] == "bound"


def test_kernel_setting_reaches_the_svgp_methods_only(cl):
    spec = cl.method_spec("svgp-probit", 100, 2, 10, 5, kernel="matern52_plus_se")
    assert spec["kernel"] == "matern52_plus_se"
    assert "kernel" not in cl.method_spec("svgp-probit", 100, 2, 10, 5)  # default specs unchanged
    with pytest.raises(ValueError, match=r"method 'dirichlet' has its own kernel"):
        cl.method_spec("dirichlet", 100, 2, 10, 5, kernel="matern52_plus_se")


def test_the_svgp_methods_train_at_the_workflows_batch_and_step_not_the_estimators_defaults(cl):
    """The estimator's own defaults are the main job's (batch 200, Adam 0.03); a workflow's svgp- methods keep the
    batch and step their records and the paper workflows' descriptions state, whatever the estimator's defaults."""
    from gpal import NoisyGPClassifier
    from gpal.workflows.methods import WORKFLOW_TRAINING

    for name in ("svgp-step", "svgp-probit", "svgp-softmax", "svgp-softmax-mc", "svgp-robustmax", "svgp-logit-fixed-delta"):
        clf = NoisyGPClassifier(**cl.method_spec(name, 100, 2, 10, 5))
        assert (clf.batch_size, clf.learning_rate) == (WORKFLOW_TRAINING["batch_size"], WORKFLOW_TRAINING["learning_rate"])
    estimator = NoisyGPClassifier()
    assert (estimator.batch_size, estimator.learning_rate) != (clf.batch_size, clf.learning_rate)


def test_method_options_reach_the_estimator_and_are_checked_first(cl, tmp_path):
    spec = cl.method_spec("dirichlet", 100, 2, 10, 5, options={"prior_mean": "class_frequency", "num_inducing": 7})
    clf = spec(0)
    assert (clf.prior_mean, clf.num_inducing, clf.max_iter) == ("class_frequency", 7, 10)
    assert cl.method_spec("svgp-probit", 100, 2, 10, 5, options={"learning_rate": 0.05})["learning_rate"] == 0.05
    kwargs = dict(n_splits=1, epochs=2, out=tmp_path, iters=3, num_inducing=4, progress=False, registry=TINY)
    with pytest.raises(ValueError, match=r"method_options.dirichlet: DirichletGPClassifier has no setting\(s\) "
                                         r"\['prior'\]; its settings are \[.*'prior_mean'"):
        cl.run_comparison(["tiny3"], ["dirichlet"], method_options={"dirichlet": {"prior": "x"}}, **kwargs)
    with pytest.raises(ValueError, match=r"prior_mean must be one of \['zero', 'class_frequency'\]; got 'x'"):
        cl.run_comparison(["tiny3"], ["dirichlet"], method_options={"dirichlet": {"prior_mean": "x"}}, **kwargs)
    with pytest.raises(ValueError, match=r"method_options names 'gpd', which is not a method; valid names are \[.*'jj'"):
        cl.run_comparison(["tiny3"], ["dirichlet"], method_options={"gpd": {}}, **kwargs)
    with pytest.raises(ValueError, match=r"LogisticBoundGPClassifier has no setting\(s\) \['optimiser'\].* \(the workflow of Paper 2\)"):
        cl.run_comparison(["tiny2"], ["jj"], method_options={"jj": {"optimiser": "gplib"}}, paper="Paper 2", **kwargs)
    assert cl.check_method_options({"jj": {"scheme": "gplib"}}, ["dirichlet"]) == {}  # jj is not run: unused
    assert not list(tmp_path.iterdir())  # nothing ran


def test_a_noisy_input_methods_options_replace_its_block_settings_alone():
    """Paper 001's authors' MGP spreads its label flips over all classes, their other methods over the others:
    ``method_options.MGP`` replaces the block's likelihood options for MGP only, checked on the block."""
    path = Path(__file__).resolve().parents[2] / "gpal" / "workflows" / "files" / "papers" / "001_uci_input_noise.yaml"
    floor = {"likelihood_options": {"epsilon": 0.001, "learn_epsilon": False, "flip_spread": "all"}}
    config = load_workflow(path, [f"method_options={{MGP: {floor}}}".replace("'", "")]).config
    mgp, fo = (cl_spec(name, config) for name in ("MGP", "NIMGP-FO"))
    assert mgp["likelihood_options"]["flip_spread"] == "all"
    assert "flip_spread" not in fo["likelihood_options"]
    assert load_workflow(path).config["method_options"] == {"MGP": floor}  # the authors' MGP is the workflow's
    block = cl_spec("MGP", {**config, "method_options": {}})
    assert block.pop("likelihood_options") == {"epsilon": 0.001, "learn_epsilon": False}
    assert {k: v for k, v in mgp.items() if k != "likelihood_options"} == block
    with pytest.raises(WorkflowError, match=r"method_options.MGP: the noisy-input methods take settings of the "
                                            r"noisy_input block \[.*\]; \['max_iter'\] is not one"):
        load_workflow(path, ["method_options={MGP: {max_iter: 3}}"])
    with pytest.raises(WorkflowError, match=r"likelihood_options\['flip_spread'\] must be one of \['others', 'all'\]; "
                                            r"got 'winner'.*\(the workflow of UCI data sets"):
        load_workflow(path, ["method_options={MGP: {likelihood_options: {flip_spread: winner}}}"])


def cl_spec(method, config):
    from gpal.workflows.compare import method_spec

    return method_spec(method, 900, 1, 1, 1, config["noisy_input"], None, config["method_options"].get(method), 1000)


def test_ece_setting_is_the_papers_in_the_table_and_the_comparison(cl, tmp_path):
    import json

    from gpal.evaluation.calibration import MILIOS_2018_ECE, expected_calibration_error

    kwargs = dict(n_splits=1, epochs=2, out=tmp_path, iters=3, num_inducing=4, progress=False, registry=TINY)
    table = cl.run_comparison(["tiny2"], ["dirichlet"], ece=MILIOS_2018_ECE, **kwargs)
    unit = json.loads(next(tmp_path.glob("tiny2/units/dirichlet/split_*.json")).read_text())
    y, p = np.asarray(unit["y_true"]), np.asarray(unit["proba"])
    papers, gpals = expected_calibration_error(y, p, **MILIOS_2018_ECE), expected_calibration_error(y, p)
    assert papers != pytest.approx(gpals, abs=1e-3)  # the two definitions differ on this split
    assert table[0]["ece"].startswith(f"{papers:.3f}")
    assert cl.measured_values(tmp_path, ["tiny2"], ["dirichlet"], 1, registry=TINY, ece=MILIOS_2018_ECE)[
        ("tiny2", "dirichlet", "ece")] == [pytest.approx(papers)]
    assert cl.measured_values(tmp_path, ["tiny2"], ["dirichlet"], 1, registry=TINY)[
        ("tiny2", "dirichlet", "ece")] == [pytest.approx(gpals)]


def test_a_paper_workflow_refuses_an_option_its_method_does_not_take_when_loaded():
    path = Path(__file__).resolve().parents[2] / "gpal" / "workflows" / "files" / "papers" / "004_augmented.yaml"
    with pytest.raises(WorkflowError, match=r"004_augmented.yaml: local_passes=2 repeats the paper's mean-field local "
                                            r"updates; inference='cavi_collapsed' .* \(the workflow of Augmented logistic-softmax.*paper 004\)"):
        load_workflow(path, ["method_options={ls-cavi-collapsed: {local_passes: 2}}"])
    with pytest.raises(WorkflowError, match=r"method_options.svgp-softmax: .* no setting\(s\) \['kernel_per_class'\].*"
                                            r"\(the workflow of Augmented logistic-softmax.*paper 004\)"):
        load_workflow(path, ["method_options={svgp-softmax: {kernel_per_class: true}}"])
    authors = load_workflow(path).config["method_options"]
    assert authors["ls-cavi"] == {"kernel_per_class": True, "local_passes": 5, "learning_rate": 0.01}


def test_likelihood_options_add_to_what_makes_the_method(cl):
    prior = {"likelihood_options": {"delta_prior": [0.2, 5]}}
    fixed = cl.method_spec("svgp-step-fixed-delta", 100, 1, 1, 5, options=prior)
    assert fixed["likelihood"] == "step" and fixed["likelihood_options"] == {"learn_delta": False, "delta_prior": [0.2, 5]}
    bound = cl.method_spec("svgp-softmax", 100, 1, 1, 5, options={"likelihood_options": {"num_predict_samples": 10}})
    assert bound["likelihood_options"] == {"elbo": "bound", "num_predict_samples": 10}
    assert cl.method_spec("svgp-logit", 100, 1, 1, 5, options=prior)["likelihood_options"] == prior["likelihood_options"]


def test_paper_000s_workflows_default_to_the_authors_prior_on_the_flip_rate_and_take_gpals_none():
    papers = Path(__file__).resolve().parents[2] / "gpal" / "workflows" / "files" / "papers"
    authors = {"likelihood_options": {"delta_prior": [0.2, 5]}}
    for name in ("000_tables_3_4.yaml", "000_table_5.yaml", "000_fig_4.yaml"):
        config = load_workflow(papers / name).config
        assert config["method_options"] == {m: authors for m in ("svgp-step", "svgp-probit", "svgp-logit")}
        assert load_workflow(papers / name, ["method_options={}"]).config["method_options"] == {}  # gpal's own
    prior = "method_options={svgp-step: {likelihood_options: {delta_prior: [0.2, 5]}}}"
    with pytest.raises(WorkflowError, match=r"likelihood_options\['delta_prior'\]\[0\] must be a finite number > 0"):
        load_workflow(papers / "000_tables_3_4.yaml", [prior.replace("0.2", "0")])

"""``NoisyGPClassifier(share_kernel_and_inducing=True)``: its parameter, saved folder, batched fits and the
comparison workflows' ``method_options`` keep the shared model; where it means nothing it says so."""

from pathlib import Path

import numpy as np
import pytest
from sklearn.base import clone

from gpal import NoisyGPClassifier
from gpal.estimators.batched import fit_batched
from gpal.models.state import module_values

TINY = dict(input_noise="none", likelihood="robustmax", num_inducing=5, epochs=2, batch_size=16, progress=False)
PAPERS = Path(__file__).resolve().parents[2] / "gpal" / "workflows" / "files" / "papers"


def _data(seed=0, n=45, classes=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    y = np.digitize(X[:, 0] + 0.3 * X[:, 1], [-0.4, 0.4])[:n] % classes
    return X, y


def test_the_parameter_round_trips_and_builds_the_shared_model(tmp_path):
    est = NoisyGPClassifier(share_kernel_and_inducing=True, random_state=1, **TINY)
    assert est.get_params()["share_kernel_and_inducing"] is True
    assert clone(est).share_kernel_and_inducing is True
    assert est.set_params(share_kernel_and_inducing=False).share_kernel_and_inducing is False
    est.set_params(share_kernel_and_inducing=True)
    X, y = _data()
    est.fit(X, y)
    gp = est.model_.gp
    assert gp.shared and gp.num_latent == 3 and len(gp.kernels) == 1 and tuple(gp.Z.shape) == (1, 5, 2)
    est.save(tmp_path / "m")
    loaded = NoisyGPClassifier.load(tmp_path / "m")
    assert loaded.share_kernel_and_inducing is True and loaded.model_.gp.shared
    np.testing.assert_array_equal(loaded.predict_proba(X), est.predict_proba(X))
    values, saved = module_values(est.model_), module_values(loaded.model_)
    assert set(values) == set(saved) and ".gp.kernels[1].variance" not in values
    # the default builds a kernel and Z per latent function, and refits warm to the same model
    own = NoisyGPClassifier(random_state=1, **TINY).fit(X, y)
    assert not own.model_.gp.shared and len(own.model_.gp.kernels) == 3
    loaded.set_params(warm_start=True, epochs=1).fit(X, y)
    assert loaded.model_.gp.shared


def test_a_batched_fit_of_shared_models_equals_the_fits_alone():
    problems = [_data(k) for k in range(2)]
    alone = [NoisyGPClassifier(share_kernel_and_inducing=True, random_state=k, **TINY).fit(*p)
             for k, p in enumerate(problems)]
    together = fit_batched([NoisyGPClassifier(share_kernel_and_inducing=True, random_state=k, **TINY)
                            for k in range(2)], problems)
    for one, batched in zip(alone, together):
        assert batched.model_.gp.shared
        expected, got = module_values(one.model_), module_values(batched.model_)
        for path in expected:
            np.testing.assert_allclose(got[path], expected[path], rtol=0, atol=1e-10, err_msg=path)


def test_where_sharing_means_nothing_or_cannot_be_it_says_so():
    X, y = _data()
    with pytest.warns(UserWarning, match="share_kernel_and_inducing=True is ignored: likelihood 'probit' with 2 "
                                         "classes has one latent function"):
        est = NoisyGPClassifier(share_kernel_and_inducing=True, **{**TINY, "likelihood": "probit"}).fit(X, y % 2)
    assert not est.model_.gp.shared
    with pytest.raises(ValueError, match="inducing_start='random_per_latent' starts each its own: use "
                                         "inducing_start='kmeans'"):
        NoisyGPClassifier(share_kernel_and_inducing=True, inducing_start="random_per_latent").fit(X, y)
    with pytest.raises(ValueError, match="inference='cavi' builds its own model: leave it at False"):
        NoisyGPClassifier(share_kernel_and_inducing=True, likelihood="logistic_softmax", input_noise="none",
                          inference="cavi").fit(X, y)
    with pytest.raises(ValueError, match="share_kernel_and_inducing"):
        NoisyGPClassifier(share_kernel_and_inducing="yes").fit(X, y)


def test_method_options_reach_the_svgp_and_the_noisy_input_methods():
    from gpal.workflows import WorkflowError, load_workflow
    from gpal.workflows.compare import method_spec

    spec = method_spec("svgp-softmax", 100, 2, 10, 5, options={"share_kernel_and_inducing": True})
    assert spec["share_kernel_and_inducing"] is True and spec["likelihood_options"] == {"elbo": "bound"}
    assert NoisyGPClassifier(**spec).share_kernel_and_inducing is True
    config = load_workflow(PAPERS / "000_table_5.yaml",
                           ["method_options={svgp-softmax: {share_kernel_and_inducing: true}}"]).config
    assert config["method_options"]["svgp-softmax"] == {"share_kernel_and_inducing": True}
    with pytest.raises(WorkflowError, match="share_kernel_and_inducing"):
        load_workflow(PAPERS / "000_table_5.yaml", ["method_options={svgp-softmax: {share_kernel_and_inducing: 2}}"])
    # a noisy-input method takes it as a setting of its block; left at False, a method's spec does not name it
    path = PAPERS / "001_uci_input_noise.yaml"  # its authors' per-latent inducing start, which sharing refuses
    with pytest.raises(WorkflowError, match="method_options.MGP: share_kernel_and_inducing=True gives every latent "
                                            "function one set of inducing inputs; inducing_start='random_per_latent'"):
        load_workflow(path, ["method_options={MGP: {share_kernel_and_inducing: true}}"])
    config = load_workflow(path, ["method_options={MGP: {share_kernel_and_inducing: true, inducing_start: kmeans}}"]
                           ).config

    def spec_of(method, config):
        return method_spec(method, 900, 1, 1, 1, config["noisy_input"], None, config["method_options"].get(method),
                           1000)

    assert spec_of("MGP", config)["share_kernel_and_inducing"] is True
    assert "share_kernel_and_inducing" not in spec_of("NIMGP", config)
    config = load_workflow(path, ["noisy_input.share_kernel_and_inducing=true", "noisy_input.inducing_start=kmeans"]
                           ).config
    assert spec_of("NIMGP", config)["share_kernel_and_inducing"] is True

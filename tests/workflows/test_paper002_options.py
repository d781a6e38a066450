"""Paper 002's workflow runs its authors' kernel (gplib's SE with one length scale and a noise term) by default, and
gpal's SE-ARD when asked; a kernel it does not know is refused naming the paper."""

from __future__ import annotations

from pathlib import Path

import gpflow
import numpy as np
import pytest

from gpal.workflows import load_workflow
from gpal.workflows.compare import EstimatorFactory, method_spec

WORKFLOW = Path(__file__).resolve().parents[2] / "gpal" / "workflows" / "files" / "papers" / "002_izmailov.yaml"
VI = ("jj", "jj-full", "jj-hybrid", "taylor")


def _fitted_kernels(config):
    """Each method's kernel after a two-iteration fit on 60 rows of 3 features, as the workflow builds it."""
    from gpal import NoisyGPClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = (X[:, 0] + 0.3 * rng.normal(size=60) > 0).astype(int)
    t = config["training"]
    kernels = {}
    for method in config["methods"]:
        spec = method_spec(method, 48, 1, 2, 5, kernel=t["kernel"] if method.startswith("svgp-") else None,
                           options=config["method_options"].get(method))
        clf = spec(0) if isinstance(spec, EstimatorFactory) else NoisyGPClassifier(**spec, random_state=0)
        clf.fit(X, y)
        model = clf.model_
        kernels[method] = model.kernel if hasattr(model, "kernel") else model.gp.kernels[0]
    return kernels


def test_every_method_runs_gplibs_kernel_by_default_and_se_ard_when_asked():
    config = load_workflow(WORKFLOW).config
    assert all(config["method_options"][m]["scheme"] == "gplib" for m in VI)
    for method, kernel in _fitted_kernels(config).items():
        se, white = kernel.kernels  # one length scale and a noise term, as gplib's SE
        assert isinstance(se, gpflow.kernels.SquaredExponential) and se.lengthscales.shape == (), method
        assert isinstance(white, gpflow.kernels.White), method
    ard = {m: {**config["method_options"][m], "kernel": "se_ard"} for m in VI}
    flow = "{" + ", ".join(f"{m}: {{" + ", ".join(f"{k}: {str(v).lower()}" for k, v in o.items()) + "}"
                           for m, o in ard.items()) + "}"
    config = load_workflow(WORKFLOW, ["training.kernel=se_ard", f"method_options={flow}"]).config
    assert all(config["method_options"][m]["scheme"] == "gplib" for m in VI)
    for method, kernel in _fitted_kernels(config).items():
        assert isinstance(kernel, gpflow.kernels.SquaredExponential) and kernel.lengthscales.shape == (3,), method


def test_a_kernel_the_workflow_does_not_know_is_refused_naming_the_known_ones_and_the_paper():
    with pytest.raises(ValueError, match=r"kernel must be .*se_iso_plus_noise.*got 'gplib_se'.*Paper 002"):
        load_workflow(WORKFLOW, ["method_options={jj: {kernel: gplib_se}}"])

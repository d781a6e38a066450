"""Papers 002 and 003's workflow files, each run whole at a tiny fixed-seed size: every (data set, method) of the
file appears in the comparison with a split's numbers, the file's protocol (its test fraction) is the one run, and
its measurements hold every split's value."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpal.runs.repeated_splits import unit_path
from gpal.workflows import load_workflow, run_workflow

PAPERS = Path(__file__).resolve().parents[2] / "gpal" / "workflows" / "files" / "papers"
TINY = ["protocol.splits=1", "training.epochs=1", "training.iters=2", "training.num_inducing=4"]
CASES = {
    "002_izmailov.yaml": ["datasets=[german:80]"],
    "003_milios_magic.yaml": ["datasets=[magic:80]"],
    "003_milios_letter.yaml": ["datasets=[letter:130]", "protocol.test_size=0.4"],  # 26 classes: 5 rows each
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CASES))
def test_paper_workflow_runs_tiny_and_tables_every_method(name, tmp_path):
    path = PAPERS / name
    full = load_workflow(path)
    overrides = TINY + CASES[name]
    tiny = load_workflow(path, overrides)
    out = run_workflow(path, overrides, out=tmp_path / "out", progress=False)
    table = json.loads((out / "comparison.json").read_text())
    sets = [f"{d.split(':')[0]}-n{d.split(':')[1]}" for d in tiny.config["datasets"]]
    assert [(r["dataset"], r["method"]) for r in table] == [(s, m) for s in sets for m in full.config["methods"]]
    for r in table:
        assert r["splits"] == 1 and r["failed"] == 0, r
        assert 0.0 <= float(r["accuracy"].split(" ± ")[0]) <= 1.0 and float(r["nll"].split(" ± ")[0]) > 0
        assert float(r["train_seconds"].split(" ± ")[0]) > 0
    unit = json.loads(unit_path(out / sets[0], full.config["methods"][0], 0).read_text())
    n_rows = int(tiny.config["datasets"][0].split(":")[1])
    assert len(unit["y_true"]) == pytest.approx(tiny.config["protocol"]["test_size"] * n_rows, abs=1)
    assert (out / "report.md").exists() and (out / "comparison.md").read_text().count("\n") == 2 + len(table)
    # each split's value per data set, method and metric, what a paper's table is set beside
    result = json.loads((out / "measurements.json").read_text())
    run_sets = {d.split(":")[0] for d in tiny.config["datasets"]}
    assert {(v["setting"], v["method"]) for v in result["values"]} == {
        (s, m) for s in run_sets for m in full.config["methods"]}
    assert all(len(v["values"]) == 1 for v in result["values"]) and result["budget"]["splits"] == 1


def test_paper_003_gpc_holds_its_inducing_inputs_as_the_authors_code_does():
    """The GPCs of the 003 workflows keep their k-means inducing inputs (dirichletGPC's evaluate_vgp); gpal's
    trained ones are the alternative; a value that is no boolean is refused naming the setting."""
    import numpy as np

    from gpal import NoisyGPClassifier
    from gpal.models.svgp import NoisySVGP, kmeans_inducing

    for name in ("003_milios_magic.yaml", "003_milios_letter.yaml"):
        options = load_workflow(PAPERS / name).config["method_options"]
        assert options["svgp-softmax-mc"]["train_inducing"] is False
        assert all(options[m]["train_inducing"] is False for m in options if m.startswith("svgp-"))
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    y = (X[:, 0] + 0.3 * rng.normal(size=60) > 0).astype(int)
    kw = dict(input_noise="none", likelihood="probit", num_inducing=5, epochs=3, batch_size=20, tol=None)
    held = NoisyGPClassifier(train_inducing=False, **kw).fit(X, y)
    start = kmeans_inducing((X - X.mean(0)) / X.std(0), 5, held.random_seed_)
    np.testing.assert_array_equal(held.model_.gp.Z.numpy()[0], start)
    assert not NoisySVGP.from_structure(held.model_.structure()).gp.Z.trainable  # kept when rebuilt
    trained = NoisyGPClassifier(**kw).fit(X, y)
    assert np.abs(trained.model_.gp.Z.numpy()[0] - start).max() > 1e-3
    with pytest.raises(ValueError, match="train_inducing"):
        NoisyGPClassifier(train_inducing="no", **kw).fit(X, y)


def test_paper_003_gpr_platt_calibrates_as_the_authors_code_on_two_classes():
    """MAGIC (two classes): the authors' probit of the spread-scaled mean (bincf_gpr_calibrated); LETTER: Platt's
    one-vs-rest sigmoids, as theirs (mltcf_gpr_calibrated)."""
    from gpal.estimators.gpr_platt import GPRPlattClassifier

    magic = load_workflow(PAPERS / "003_milios_magic.yaml").config["method_options"]["gpr-platt"]
    assert magic["calibration"] == "probit"
    letter = load_workflow(PAPERS / "003_milios_letter.yaml").config["method_options"]["gpr-platt"]
    assert letter.get("calibration", GPRPlattClassifier().calibration) == "platt"

"""gpal/workflows/files/papers/004_augmented.yaml at a tiny size: it runs and measures each method the paper orders."""

import json
from pathlib import Path

from gpal.workflows import run_workflow

YAML = Path(__file__).resolve().parents[2] / "gpal" / "workflows" / "files" / "papers" / "004_augmented.yaml"


def test_the_augmented_model_workflow_runs_small_with_its_exact_finish_and_measures_each_method(tmp_path):
    # one run: the paper's CAVI, gpal's exact finish (its CAVI start then exact steps) and the robust-max baseline
    tiny = ["datasets=[vehicle:120]", "methods=[ls-cavi, ls-cavi-exact, svgp-robustmax, robustmax-natgrad]",
            "protocol.splits=1",
            "training.epochs=2", "training.iters=3", "training.num_inducing=5"]
    out = run_workflow(YAML, tiny, out=tmp_path / "run", progress=False)
    result = json.loads((out / "measurements.json").read_text())
    ran = {(v["setting"], v["method"], v["metric"]): v["values"] for v in result["values"]}
    assert set(ran) == {("vehicle", m, k) for m in ("ls-cavi", "ls-cavi-exact", "svgp-robustmax", "robustmax-natgrad")
                        for k in ("nll", "train_seconds", "ece", "accuracy", "error")}
    assert all(len(v) == 1 for v in ran.values()) and result["budget"] == {"splits": 1, "epochs": 2}
    # the exact finish is another fit than the CAVI it starts from
    assert ran[("vehicle", "ls-cavi-exact", "nll")] != ran[("vehicle", "ls-cavi", "nll")]


def test_the_natural_gradient_robust_max_baseline_halves_a_step_that_would_leave_q_no_gaussian():
    """Robust-max rewards a wider q(f) where the labelled class is not ranked first, so a whole natural-gradient step
    (gamma 1) from the prior makes the precision indefinite; the baseline halves such steps and still learns."""
    import numpy as np

    from gpal.data import load_dataset
    from gpal.workflows.robustmax_natgrad import NaturalGradientRobustMax

    data = load_dataset("vehicle")
    rng = np.random.default_rng(0)
    rows = rng.permutation(data.n_samples)
    train, test = rows[:300], rows[300:500]
    whole = NaturalGradientRobustMax(num_inducing=10, epochs=3, gamma=1.0).fit(data.X[train], data.y[train])
    assert whole.halved_steps_ > 0
    proba = whole.predict_proba(data.X[test])
    assert np.all(np.isfinite(proba)) and np.allclose(proba.sum(axis=1), 1.0)
    codes = np.searchsorted(whole.classes_, data.y[test])
    assert np.mean(proba.argmax(axis=1) == codes) > 0.35  # four classes: chance is about 0.25


def test_the_natural_gradient_robust_max_baseline_shows_its_epochs_only_when_asked(capsys):
    """progress=True draws the epochs' bar as gpal's own fits do; the default stays quiet."""
    import numpy as np

    from gpal.workflows.robustmax_natgrad import NaturalGradientRobustMax

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    y = (X[:, 0] > 0).astype(int)
    NaturalGradientRobustMax(num_inducing=5, epochs=2, batch_size=20).fit(X, y)
    assert capsys.readouterr().err == ""
    NaturalGradientRobustMax(num_inducing=5, epochs=2, batch_size=20, progress=True).fit(X, y)
    err = capsys.readouterr().err
    assert "robust-max (natural gradients)" in err and "2/2" in err and "loss=" in err

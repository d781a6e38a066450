"""lab/studies/bench_paper001_authors.py: without the authors' code it says where to get it and runs nothing; its
split of the authors' data is standardised on the training rows before the noise is added."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import repository_script


@pytest.fixture(scope="module")
def study():
    return repository_script("lab/studies/bench_paper001_authors.py")


def test_without_the_authors_code_it_says_where_to_get_it_and_runs_nothing(study, tmp_path, capsys):
    units = tmp_path / "units"
    assert study.main(["--authors", str(tmp_path / "nowhere"), "--units", str(units), "--json", str(tmp_path / "r.json")]) == 0
    out = capsys.readouterr().out
    assert "skipped" in out and "https://github.com/cvillacampa/GPInputNoise" in out and "0e9268a" in out
    assert not units.exists() and not (tmp_path / "r.json").exists()


def test_the_split_is_standardised_on_its_training_rows_then_noised(study, tmp_path):
    """The noise is the one generate_data.py draws after its 100 permutations, so removing it must leave the
    training rows at mean 0 and standard deviation 1, and the test rows standardised by the same shift and scale."""
    rng = np.random.default_rng(1)
    X, Y = rng.normal(3.0, 2.0, size=(40, 3)), rng.integers(0, 3, size=40)
    data = tmp_path / study.data_folder("wine")
    data.mkdir(parents=True)
    np.savetxt(data / "X.txt", X)
    np.savetxt(data / "Y.txt", Y)
    X_train, y_train, X_test, y_test, n_rows = study.noisy_split(tmp_path, 2, 0.25, "wine")

    draws = np.random.RandomState(0)
    splits = [draws.permutation(40) for _ in range(100)]
    draws.normal(size=(100, 40, 3))  # the 0.1 level's noise comes first
    eps = draws.normal(size=(100, 40, 3))[2] * 0.5
    train, test = splits[2][:36], splits[2][36:]
    clean = X_train - eps[train]
    np.testing.assert_allclose(clean.mean(0), 0.0, atol=1e-12)
    np.testing.assert_allclose(clean.std(0), 1.0)
    np.testing.assert_allclose((X_test - eps[test]) * X[train].std(0) + X[train].mean(0), X[test])
    assert n_rows == 40 and np.array_equal(y_train, Y[train]) and np.array_equal(y_test, Y[test])


def test_the_floor_sides_change_mgps_label_flips_alone(study):
    """"gpal floor" and "gpal as authors without floor" each differ from the side they start from in MGP's
    flip_spread only, and give every other method that side's parameters."""
    shipped = {m: study.gpal_params(m, 900, 1000) for m in ("MGP", "NIMGP-FO")}
    assert shipped["MGP"]["likelihood_options"]["flip_spread"] == "all"  # the workflow runs the authors' MGP
    for side, base, mgp_spread in (("gpal as authors without floor", "gpal as authors", None),
                                   ("gpal floor", "gpal", "all")):
        for method, params in shipped.items():
            here, there = study.side_params(side, method, params), study.side_params(base, method, params)
            assert {k: v for k, v in here.items() if k != "likelihood_options"} == \
                   {k: v for k, v in there.items() if k != "likelihood_options"}
            spread = here["likelihood_options"].get("flip_spread")
            assert spread == (mgp_spread if method == "MGP" else there["likelihood_options"].get("flip_spread"))


def test_epochs_replace_the_synthetic_training_for_one_call_only(study):
    """--epochs reaches both sides through ``training``; the authors' settings the records name stay as coded."""
    assert study.training("synthetic", 750)["epochs"] == 750
    assert study.training("synthetic")["epochs"] == 100 and study.training("wine")["epochs"] == 1000
    assert study.training("synthetic", 750)["learning_rate"] == study.training("synthetic")["learning_rate"]


def test_the_authors_path_is_read_at_the_runs_own_epochs(study, tmp_path):
    """A trace of one line an epoch gives the NLL every 100 epochs, at the last and at its lowest; a trace of another
    length (their NIMGP writes once) is named, not read."""
    nll = np.r_[np.linspace(1.0, 0.5, 10), np.linspace(0.5, 2.0, 740)]
    trace = tmp_path / "trace.txt"
    np.savetxt(trace, np.c_[np.full(750, 0.3), nll, np.zeros(750), np.arange(750.0)])
    path = study.authors_path(trace, 750)
    assert path["epoch"] == [100, 200, 300, 400, 500, 600, 700, 750]
    np.testing.assert_allclose(path["nll"], nll[[99, 199, 299, 399, 499, 599, 699, 749]])
    assert path["lowest_nll"]["epoch"] == 10 and path["lowest_nll"]["nll"] == pytest.approx(0.5)
    assert "note" in study.authors_path(trace, 1000)


def test_a_known_variance_names_its_own_units_and_is_refused_outside_the_synthetic_problems(study, tmp_path, capsys):
    """Units of the variance known never collide with the learned ones the records read; the UCI scripts learn it."""
    learned = study.unit_name("authors", "NIMGP", 0.25, 3, "synthetic")
    known = study.unit_name("authors", "NIMGP", 0.25, 3, "synthetic", "known")
    assert learned == "synthetic_authors_NIMGP_0.25_s3" and known != learned
    assert study.unit_name("authors", "MGP", 0.25, 3, "waveform") == "authors_MGP_0.25_s3"
    with pytest.raises(SystemExit):
        study.main(["--dataset", "wine", "--variance", "known", "--units", str(tmp_path)])
    assert "--variance known is for --dataset synthetic" in capsys.readouterr().err

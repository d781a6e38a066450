"""Robustness of the CLI: a sweep of bad inputs, each refused with exit 2, a message naming
what was wrong, no traceback, and nothing written where the output would have gone.

Cases from the 307-case review (issue 13) that were refused only after the output folder
was claimed, or not at all; the loading cases live in test_robustness_loading.py.
"""

import pytest

from gpal.cli import main
from conftest import BILLION_LAUGHS

TINY = ["--epochs", "2", "--num-inducing", "5", "--no-progress"]


def _active(catalog, *extra):
    return ["active", "--catalog", str(catalog), "--classes", "bll,fsrq", "--initial", "10", "--pool", "20",
            "--test", "30", *TINY, *extra]


def _workflow(tmp_path, text):
    path = tmp_path / "wf.yaml"
    path.write_text(text)
    return ["workflow", str(path)]


CASES = {
    "active: batch size 0": (lambda cat, tmp: _active(cat, "--batch-size", "0"), ["batch_size must be an integer >= 1; got 0"]),
    "active: retrain epochs -1": (lambda cat, tmp: _active(cat, "--retrain-epochs", "-1"), ["retrain_epochs", "got -1"]),
    "active: more queries than the pool": (lambda cat, tmp: _active(cat, "--queries", "50"),
                                           ["the pool has 20 source(s) but 50 queries"]),
    "classify workflow: unknown class": (
        lambda cat, tmp: _workflow(tmp, f"workflow: classify\nparams:\n  catalog: {cat}\n  classes: [bll, nebula]\n"),
        ["unknown class code(s) ['nebula']", "codes present"]),
    "classify workflow: not a catalog": (
        lambda cat, tmp: _workflow(tmp, f"workflow: classify\nparams:\n  catalog: {tmp / 'notes.fits'}\n"),
        ["notes.fits could not be read as a FITS file"]),
    "classify workflow: test_size 0.999": (
        lambda cat, tmp: _workflow(tmp, f"workflow: classify\nparams:\n  catalog: {cat}\n  test_size: 0.999\n"),
        ["test_size=0.999", "at least one row on each side"]),
    "classify workflow: a handful of sources": (
        lambda cat, tmp: _workflow(tmp, f"workflow: classify\nparams:\n  catalog: {cat}\n  min_significance: 150\n"),
        ["too few labelled sources", "needs at least 5 per class"]),
    "train: one class left": (
        lambda cat, tmp: ["train", "--catalog", str(cat), "--classes", "bll,fsrq", "--min-significance", "200", *TINY],
        ["too few labelled sources: bll 0", "training needs at least 1 per class"]),
    "repeated splits workflow: unknown class": (
        lambda cat, tmp: _workflow(tmp, f"workflow: repeated_splits\ndata:\n  catalog: {cat}\n  classes: [bll, nebula]\n"),
        ["wf.yaml", "unknown class code(s) ['nebula']"]),
    "workflow: alias bomb": (lambda cat, tmp: _workflow(tmp, BILLION_LAUGHS), ["wf.yaml:2", "anchors and aliases"]),
    "workflow: a key twice": (
        lambda cat, tmp: _workflow(tmp, "workflow: toy_1d\ndata:\n  n_train: 10\n  n_train: 20\n"),
        ["wf.yaml:4: key data.n_train is given twice (first at line 3)"]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_refused_with_exit_2_and_nothing_written(case, small_catalog, tmp_path, capsys):
    (tmp_path / "notes.fits").write_text("SIMPLE  = T  / not really")
    argv, phrases = CASES[case]
    out = tmp_path / "out"
    code = main([*argv(small_catalog, tmp_path), "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err and err.strip().splitlines()[-1].startswith("gpal: error: ")
    for phrase in phrases:
        assert phrase in err, (phrase, err)
    assert not out.exists(), sorted(p.name for p in out.rglob("*"))


def test_the_corrected_command_then_runs_in_the_same_folder(small_catalog, tmp_path, capsys):
    out = ["--out", str(tmp_path / "model")]
    train = ["train", "--catalog", str(small_catalog), "--classes", "bll,fsrq", *TINY, *out]
    assert main([*train, "--min-significance", "200"]) == 2
    assert main(train) == 0, capsys.readouterr().err  # not refused as "a different run"


def test_force_never_empties_a_folder_gpal_did_not_write(small_catalog, tmp_path, capsys):
    (tmp_path / "thesis.tex").write_text("precious")
    argv = ["train", "--catalog", str(small_catalog), "--classes", "bll,fsrq", *TINY, "--out", str(tmp_path), "--force"]
    assert main(argv) == 2
    assert "not a gpal run folder; --force only replaces gpal runs" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["thesis.tex"]

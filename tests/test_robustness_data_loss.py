"""Nothing of a user's is ever deleted or replaced, and a changed input is never taken for the same run (issue 33, items 1-2)."""

import json

import numpy as np
import pytest

from gpal.files import MANIFEST, write_json_atomic, write_text_atomic
from gpal.saved_models import NotAModelFolder, save_model_dir
from gpal.runs.output_dir import OutputInUse, claim_output_dir


def _user_files(folder):
    (folder / "sub").mkdir(parents=True)
    (folder / "thesis.tex").write_text("x\n")
    (folder / "sub" / "data.csv").write_text("1\n")


@pytest.mark.parametrize("foreign_record", ['{"tool":"other"}', "", '{"seed": 0}',
                                            '{"identity": {"seed": 0}, "gpal_run_signature": "forged"}'])
def test_a_run_json_that_gpal_did_not_sign_is_not_a_gpal_run_even_with_force(tmp_path, foreign_record):
    out = tmp_path / "o"
    _user_files(out)
    (out / "run.json").write_text(foreign_record)
    (out / MANIFEST).write_text("thesis.tex\nsub/data.csv\n")  # a manifest alone proves nothing either
    for force in (False, True):
        with pytest.raises(OutputInUse, match="holds no record of a gpal run"):
            claim_output_dir(out, {"seed": 0}, force=force)
    assert (out / "thesis.tex").read_text() == "x\n"
    assert (out / "sub" / "data.csv").read_text() == "1\n"
    assert (out / "run.json").read_text() == foreign_record


def test_force_removes_what_gpal_wrote_and_nothing_else(tmp_path):
    out = tmp_path / "o"
    claim_output_dir(out, {"seed": 0})
    write_text_atomic(out / "report.md", "old run\n")
    write_json_atomic(out / "tables" / "metrics.json", {"nll": 1.0})
    save_model_dir(out / "model", "test-format", 1, {}, {"w": np.zeros(2)})
    _user_files(out)  # the user adds files to the run folder afterwards
    (out / "tables" / "my_notes.txt").write_text("keep\n")
    claim_output_dir(out, {"seed": 1}, force=True)
    left = sorted(p.relative_to(out).as_posix() for p in out.rglob("*"))
    assert left == [MANIFEST, "run.json", "sub", "sub/data.csv", "tables", "tables/my_notes.txt", "thesis.tex"]
    assert json.loads((out / "run.json").read_text())["identity"] == {"seed": 1}
    assert (out / MANIFEST).read_text() == "run.json\n"


def test_an_edited_manifest_cannot_reach_outside_the_run_folder(tmp_path):
    out = tmp_path / "o"
    outside = tmp_path / "precious.txt"
    outside.write_text("keep\n")
    claim_output_dir(out, {"seed": 0})
    (out / "link").symlink_to(tmp_path)
    with open(out / MANIFEST, "a") as fh:
        fh.write("../precious.txt\n" + str(outside) + "\nlink/precious.txt\n")
    claim_output_dir(out, {"seed": 1}, force=True)
    assert outside.read_text() == "keep\n"


def test_save_never_replaces_a_users_file_or_folder(tmp_path):
    from gpal.estimators.noisy_gp import NoisyGPClassifier

    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(20, 2)), np.repeat([0, 1], 10)
    clf = NoisyGPClassifier(input_noise="none", epochs=1, num_inducing=4, random_state=0).fit(X, y)
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    with pytest.raises(NotAModelFolder, match="notes.txt: it exists and is not a model folder"):
        clf.save(notes)
    assert notes.read_text() == "my notes\n"
    project = tmp_path / "project"
    project.mkdir()
    (project / "paper.tex").write_text("x")
    with pytest.raises(NotAModelFolder, match="holds other files than a saved model"):
        clf.save(project)
    assert (project / "paper.tex").read_text() == "x"
    clf.save(tmp_path / "model")
    clf.save(tmp_path / "model")  # a saved model is replaced by a newer save, as before
    assert sorted(p.name for p in (tmp_path / "model").iterdir()) == ["config.json", "params.npz"]


def test_a_changed_catalog_file_is_a_different_run(tmp_path):
    """Same path, same options, other values in the file: the identity differs, so nothing is reused."""
    from astropy.io import fits

    from gpal.catalog_jobs.model_folders import open_job
    from gpal.catalog_jobs.selection import CatalogSelection
    from gpal.catalogs.catalog import CATALOG_DIR
    from gpal.estimators.noisy_gp import NoisyGPClassifier

    path = tmp_path / "cat.fit"
    with fits.open(CATALOG_DIR / "gll_psc_v35.fit.gz") as hdul:
        hdul.writeto(path)
    selection = CatalogSelection(catalog=str(path), classes=("bll", "fsrq"), min_significance=30)
    estimator = NoisyGPClassifier(epochs=1)
    _, _, before = open_job("gpal.train", selection, estimator)
    with fits.open(path, mode="update") as hdul:
        table = hdul["LAT_Point_Source_Catalog"].data
        blazar = np.flatnonzero((np.char.strip(table["CLASS1"]) == "bll") & (table["Signif_Avg"] > 30))[0]  # selected
        table["LP_Index"][blazar] += 0.5
    _, _, after = open_job("gpal.train", selection, estimator)
    assert before["catalog"]["file"] == after["catalog"]["file"]
    assert before["catalog"]["sha256"] != after["catalog"]["sha256"]
    assert before["data"]["sha256"] != after["data"]["sha256"]  # the selected rows changed too
    out = tmp_path / "o"
    claim_output_dir(out, before)
    with pytest.raises(OutputInUse, match=r"catalog\.sha256"):
        claim_output_dir(out, after)

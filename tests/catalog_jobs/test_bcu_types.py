"""The bcu split by the blazar-type model with 4LAC-DR3's SED peaks (`gpal.catalog_jobs.bcu_types`)."""

from __future__ import annotations

import shutil
import types

import numpy as np
import pandas as pd
import pytest

from gpal.catalog_jobs.bcu_types import NOT_SPLIT, BcuSplit, read_lac, split_bcu, split_rule
from gpal.catalog_jobs.layout import BCU_TYPES_DIR, BCU_TYPES_FILE, TRAINED_DIR
from gpal.catalog_jobs.model_folders import load_trained
from gpal.catalog_jobs.prediction import (DEFAULT_SELECT, known_class_probabilities, predict_catalog,
                                          predict_catalog_blocks)
from gpal.catalog_jobs.tables import read_probability_table, write_probability_blocks, write_probability_table
from gpal.catalogs import load_catalog
from gpal.catalogs.classes import class1_codes
from gpal.catalogs.known_classes import association_weight


@pytest.fixture(scope="module")
def split_run(small_catalog, tmp_path_factory):
    """The session's main job (conftest.py: its small catalog and tiny estimator) with the bcu split on, and no
    baselines (nothing here reads the comparison)."""
    from conftest import TINY_ESTIMATOR
    from gpal.cli import main

    out = tmp_path_factory.mktemp("bcu_split") / "run"
    options = [f"--{name.replace('_', '-')}={value}" for name, value in TINY_ESTIMATOR.items()]
    assert main(["classify", "--catalog", str(small_catalog), *options, "--bcu-types=4lac", "--baselines=[]",
                 "--no-progress", "--out", str(out)]) == 0
    return out


def test_the_rule_keeps_each_bcu_blazar_total_and_sums_to_one():
    rng = np.random.default_rng(0)
    classes = ["bll", "fsrq", "pulsar", "other"]
    proba = rng.dirichlet(np.ones(4), size=6)
    rows = np.array([True, False, True, True, False, True])
    q = rng.uniform(size=4)
    split = split_rule(proba, q, rows, classes)
    total = proba[:, 0] + proba[:, 1]
    np.testing.assert_allclose(split.sum(axis=1), 1.0, rtol=1e-12)
    np.testing.assert_allclose(split[:, 0] + split[:, 1], total, rtol=1e-12)  # the blazar total kept
    np.testing.assert_allclose(split[rows, 1] / total[rows], q, rtol=1e-12)  # its FSRQ share is q
    np.testing.assert_array_equal(split[~rows], proba[~rows])  # not a bcu: untouched
    np.testing.assert_array_equal(split[:, 2:], proba[:, 2:])  # pulsar and other: untouched
    # the columns are found by name, in any order
    flipped = split_rule(proba[:, ::-1], q, rows, classes[::-1])
    np.testing.assert_allclose(flipped[:, ::-1], split, rtol=1e-12)
    with pytest.raises(ValueError, match=r"q must be probabilities in \[0, 1\]"):
        split_rule(proba, np.array([0.1, 0.2, 1.5, 0.3]), rows, classes)
    with pytest.raises(ValueError, match="one q per selected row"):
        split_rule(proba, q[:3], rows, classes)


def test_classify_splits_the_bcu_and_predict_on_the_folder_reproduces_it(split_run, small_catalog, monkeypatch):
    import gpal.catalog_jobs.bcu_types as bcu_types
    import gpal.catalogs.lac as lac

    folder = split_run
    model = folder / TRAINED_DIR
    assert (model / BCU_TYPES_FILE).is_file() and (model / BCU_TYPES_DIR / "config.json").is_file()
    written = read_probability_table(folder / "classifications.csv")
    assert "bcu" in written.meta["BCUSPLIT"] and "4LAC-DR3" in written.meta["BCUSPLIT"]
    frame = written.frame
    bcu = class1_codes(frame["CLASS1"]) == "bcu"
    assert bcu.sum() >= 2
    # the main model's own probabilities with the bcu rule, computed apart: the split keeps their blazar total
    trained = load_trained(folder)
    catalog = load_catalog(str(small_catalog))
    table = predict_catalog(folder, catalog, DEFAULT_SELECT, progress=False, information=False)
    ids = table.frame["Source_Name"].tolist()
    assert ids == frame["Source_Name"].tolist()
    pool_rows = catalog.pool(select=list(DEFAULT_SELECT), features=trained.training["features"])
    own, _ = known_class_probabilities(trained, pool_rows.aux["CLASS1"],
                                       trained.estimator.predict_proba(pool_rows.X, pool_rows.X_var),
                                       association=association_weight(catalog, ids))
    columns = [f"p_{c}" for c in trained.classes]
    blazars = [trained.classes.index(c) for c in ("bll", "fsrq")]
    got = frame[columns].to_numpy(float)
    np.testing.assert_allclose(got[bcu][:, blazars].sum(axis=1), own[bcu][:, blazars].sum(axis=1), atol=1e-6)
    np.testing.assert_allclose(got[~bcu], own[~bcu], atol=1e-6)  # the unassociated sources are not split
    assert np.abs(got[bcu][:, blazars[1]] - own[bcu][:, blazars[1]]).max() > 1e-3  # the split moved the bcu
    # predict with the folder: the same bcu probabilities (to the table's printed digits) and the same note
    np.testing.assert_allclose(table.frame[columns].to_numpy(float), got, atol=1e-6)
    assert table.meta["BCUSPLIT"] == written.meta["BCUSPLIT"]
    # in blocks of sources or of catalog rows (32: seven blocks hold sources to classify): the same rows, and the note
    # of all the blocks' bcu (the blazar-type model predicts a block's bcu together: another count of rows moved a
    # probability in its last digit); by catalog rows, 4LAC-DR3 and the blazar-type model are read once for the whole
    # prediction (each block read 4LAC twice, and joined every bcu seen so far again).  Blocks of 64 written as one
    # table: the next test.
    in_blocks = predict_catalog(folder, catalog, DEFAULT_SELECT, progress=False, information=False, rows=32)
    pd.testing.assert_frame_equal(in_blocks.frame, table.frame, check_exact=False, rtol=0, atol=1e-12)
    assert in_blocks.meta["BCUSPLIT"] == written.meta["BCUSPLIT"]
    reads, loads = [], []
    read_one, loaded = lac._read_one, bcu_types.loaded_estimator
    monkeypatch.setattr(lac, "_read_one", lambda path: reads.append(path) or read_one(path))
    monkeypatch.setattr(bcu_types, "loaded_estimator", lambda folder: loads.append(folder) or loaded(folder))
    parts = list(predict_catalog_blocks(folder, catalog, DEFAULT_SELECT, progress=False, information=False, rows=32))
    assert len(parts) == 7 and len(reads) == len(lac.LAC_FILES) and len(loads) == 1
    monkeypatch.undo()
    assert parts[-1].meta["BCUSPLIT"] == written.meta["BCUSPLIT"]
    alone = predict_catalog(folder / TRAINED_DIR, catalog, DEFAULT_SELECT, progress=False, information=False)
    np.testing.assert_allclose(alone.frame[columns].to_numpy(float), got, atol=1e-6)  # model/ alone splits alike
    assert f"**The bcu's blazar types**: {written.meta['BCUSPLIT']}." in (folder / "report.md").read_text()


def test_a_release_without_4fgl_names_keeps_the_main_models_split(split_run):
    catalog = types.SimpleNamespace(release="3FGL", record=types.SimpleNamespace(links={}))
    pool = types.SimpleNamespace(aux={"CLASS1": np.array(["bcu", ""])}, ids=np.array(["a", "b"]))
    proba = np.array([[0.5, 0.3, 0.1, 0.1], [0.2, 0.2, 0.3, 0.3]])
    out, error, note = split_bcu(split_run / TRAINED_DIR, catalog, pool, proba, ["bll", "fsrq", "pulsar", "other"])
    assert out is proba and error is None
    assert note.startswith(NOT_SPLIT) and "3FGL names no 4FGL source" in note


def test_blocks_of_rows_carry_the_whole_tables_bcusplit(split_run, small_catalog, tmp_path):
    """``gpal predict`` in blocks (64 rows: the small catalog's 283 in five, bcu in several of them) writes the
    whole table's files, the BCUSPLIT keyword counting every block's bcu; a block before the last says its own."""
    whole, blocks = tmp_path / "whole.csv", tmp_path / "blocks.csv"
    write_probability_table(predict_catalog(split_run, small_catalog, DEFAULT_SELECT, progress=False,
                                            pool_prior=False), whole)
    parts = list(predict_catalog_blocks(split_run, small_catalog, DEFAULT_SELECT, progress=False, rows=64))
    write_probability_blocks(iter(parts), blocks)
    with_bcu = [int((class1_codes(p.frame["CLASS1"]) == "bcu").sum()) for p in parts]
    assert sum(n > 0 for n in with_bcu) >= 2  # the note's counts add up over blocks
    note = read_probability_table(whole).meta["BCUSPLIT"]
    assert note.startswith(f"the {sum(with_bcu)} bcu's p_bll and p_fsrq split")
    assert note == read_probability_table(split_run / "classifications.csv").meta["BCUSPLIT"]  # the run's own
    assert read_probability_table(blocks).meta["BCUSPLIT"] == note
    assert parts[-1].meta["BCUSPLIT"] == note
    first = next(i for i, n in enumerate(with_bcu) if n > 0)
    assert parts[first].meta["BCUSPLIT"].startswith(f"the {with_bcu[first]} bcu's")
    # the same header, keyword for keyword; the same rows to float64 rounding (this model's unsplit rows too differ
    # in their last digit between the two, the block's matrix products summing in another order)
    written = {name: read_probability_table(path) for name, path in (("whole", whole), ("blocks", blocks))}
    assert ({k: v for k, v in written["blocks"].meta.items() if k != "DATE"}
            == {k: v for k, v in written["whole"].meta.items() if k != "DATE"})
    pd.testing.assert_frame_equal(written["blocks"].frame, written["whole"].frame, rtol=1e-12)


def test_the_notes_counts_add_up_and_only_for_one_split():
    one, two = BcuSplit(None, 30, 40, bcu=2, in_lac=2, peaks=1), BcuSplit(None, 30, 40, bcu=5, in_lac=3, peaks=3)
    assert one + two == BcuSplit(None, 30, 40, bcu=7, in_lac=5, peaks=4)
    assert (one + two).note.startswith("the 7 bcu's p_bll and p_fsrq split by a blazar-type model (the main job's "
                                       "estimator on 30 bll and 40 fsrq")
    assert "5 of them have a 4LAC-DR3 row, 4 a synchrotron peak; 3 without one" in (one + two).note
    assert BcuSplit(None, 30, 40).note == NOT_SPLIT + "no bcu among the classified sources"
    assert BcuSplit("why", bcu=3).note == NOT_SPLIT + "why"
    with pytest.raises(ValueError, match="cannot add the bcu counts of two different splits"):
        one + BcuSplit(None, 31, 40, bcu=1)


def test_a_folder_without_the_record_splits_nothing(tmp_path):
    proba = np.array([[0.5, 0.3, 0.1, 0.1]])
    assert split_bcu(tmp_path, None, None, proba, ["bll", "fsrq", "pulsar", "other"]) == (proba, None, None)


def test_a_malformed_or_missing_4lac_file_is_named(tmp_path, monkeypatch, small_catalog):
    from astropy.table import Table

    bad = tmp_path / "not_4lac.fits"
    Table({"Source_Name": ["4FGL J0000.0+0000"], "nu_syn": [1e14]}).write(bad)
    with pytest.raises(ValueError, match=r"not_4lac\.fits lacks column.*--bcu-types none"):
        read_lac([bad])
    # the main job refuses it before any work: no output folder
    import gpal.catalogs.lac as lac
    from gpal.catalog_jobs.classify import classify_catalog
    from gpal.catalog_jobs.selection import CatalogSelection
    from gpal.catalog_jobs.settings import main_job_estimator

    monkeypatch.setattr(lac, "LAC_FILES", (tmp_path / "gone.fits.gz",))
    out = tmp_path / "run"
    with pytest.raises(FileNotFoundError, match=r"gone\.fits\.gz.*--bcu-types none"):
        classify_catalog(CatalogSelection(catalog=str(small_catalog)), main_job_estimator(epochs=1), out,
                         bcu_types="4lac")
    assert not out.exists()


def test_a_damaged_record_is_named(split_run, tmp_path):
    copy = tmp_path / "run"
    shutil.copytree(split_run, copy)
    (copy / TRAINED_DIR / BCU_TYPES_FILE).write_text('{"format": "something else"}')
    with pytest.raises(ValueError, match="bcu_types.json is not a gpal.bcu_types record"):
        split_bcu(copy / TRAINED_DIR, None, None, np.zeros((1, 4)), ["bll", "fsrq", "pulsar", "other"])


def test_by_default_the_main_job_leaves_the_main_models_split(main_job_run):
    assert not (main_job_run / TRAINED_DIR / BCU_TYPES_FILE).exists()
    assert "BCUSPLIT" not in read_probability_table(main_job_run / "classifications.csv").meta
    assert "blazar types" not in (main_job_run / "report.md").read_text()

"""Robustness (loading): damaged, edited or odd inputs are refused with a message naming the file, the field and what was expected.

A table-driven sweep (issue 13): each case damages a copy of one tiny trained-model folder, a
catalog file or an input, and checks the clear error (exit code 2 and no traceback through the CLI).
"""

from __future__ import annotations

import gzip
import json
import shutil
import warnings
from pathlib import Path

import numpy as np
import pytest
from astropy.io import fits
from astropy.table import Table

from gpal.active.oracles import FileOracle, OracleError
from gpal.estimators import load_estimator
from gpal.catalogs import DroppedRowsWarning
from gpal.catalogs.catalog import HDU_NAME, load_catalog
from gpal.catalogs.features import Feature
from gpal.cli import main
from gpal.data.dataset import NoisyDataset
from gpal.estimators.base import check_fit_data
from gpal.saved_models import CorruptModel
from gpal.workflows import load_workflow
from gpal.workflows.schema import WorkflowError
from conftest import SMALL

SAVED = Path(__file__).resolve().parents[1] / "fixtures" / "saved_v0_3"


@pytest.fixture(scope="module")
def trained(small_catalog, tmp_path_factory):
    out = tmp_path_factory.mktemp("robustness") / "trained"
    argv = ["train", "--catalog", str(small_catalog), "--classes", "bll,fsrq,pulsar=psr+msp", "--out", str(out),
            "--epochs", "1", "--num-inducing", "3", "--features", "villacampa2021", "--no-progress"]
    assert main(argv) == 0
    return out


def _fails(capsys, argv, *phrases):
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.splitlines()[-1].startswith("gpal: error: ") and "Traceback" not in err, err
    for phrase in phrases:
        assert phrase in err, (phrase, err)
    return err


# ------------------------------------------------------------- model folders
def _config(edit):
    def damage(folder):
        path = folder / "model" / "config.json"
        config = json.loads(path.read_text())
        edit(config)
        path.write_text(json.dumps(config))
    return damage


def _arrays(edit):
    def damage(folder):
        path = folder / "model" / "params.npz"
        arrays = dict(np.load(path))
        edit(arrays)
        np.savez(path, **arrays)
    return damage


def _set(value, *keys):
    def edit(obj):
        for key in keys[:-1]:
            obj = obj[key]
        obj[keys[-1]] = value
    return edit


def _npz_bytes(cut):
    def damage(folder):
        path = folder / "model" / "params.npz"
        path.write_bytes(cut(path.read_bytes()))
    return damage


def _outside_model(folder):
    shutil.copytree(folder / "model", folder.parent / "elsewhere")
    record = json.loads((folder / "training.json").read_text())
    (folder / "training.json").write_text(json.dumps({**record, "model": "../elsewhere"}))


MODEL_DAMAGE = {
    "nan_parameter": (_arrays(lambda a: a[".gp.kernels[0].lengthscales"].__setitem__(0, np.nan)),
                      ["params.npz", "'.gp.kernels[0].lengthscales'", "NaN or infinite", "finite"]),
    "inf_parameter": (_arrays(lambda a: a[".gp.q_mu"].__setitem__((0, 0), np.inf)), ["params.npz", "'.gp.q_mu'"]),
    "zero_scale": (_config(lambda c: c["standardizer"]["scale"].__setitem__(0, 0.0)),
                   ["config.json", "'standardizer'", "scale must be finite and > 0"]),
    "nan_in_json": (lambda f: (f / "model" / "config.json").write_text(
        (f / "model" / "config.json").read_text().replace('"mean": [', '"mean": [NaN, ', 1)), ["config.json", "NaN"]),
    "truncated_npz": (_npz_bytes(lambda b: b[: len(b) // 2]), ["params.npz could not be read", "corrupt"]),
    "empty_npz": (_npz_bytes(lambda b: b""), ["params.npz could not be read"]),
    "garbage_npz": (_npz_bytes(lambda b: b"PK\x03\x04" + b"\x00" * 64), ["params.npz could not be read"]),
    "no_structure": (_config(lambda c: c.pop("structure")), ["config.json", "field 'structure' is missing"]),
    "negative_n_samples": (_config(_set(-3, "params", "n_samples")),
                           ["config.json", "'params.n_samples'", "must be an integer >= 1; got -3"]),
    "inducing_shape": (_config(_set(4, "structure", "num_inducing")),
                       ["params.npz", "'.gp.Z'", "shape (3, 3, 6)", "(3, 4, 6)"]),
    "lengthscale_shape": (_config(_set([5], "structure", "kernels", 0, "params", "lengthscales")),
                          ["params.npz", "'.gp.kernels[0].lengthscales'", "has (5,)"]),
    "fewer_classes": (_config(_set(["bll", "fsrq"], "classes", "values")),
                      ["config.json", "'structure.num_classes' is 3", "'classes' lists 2"]),
    "unsorted_classes": (_config(_set(["fsrq", "bll", "pulsar"], "classes", "values")),
                         ["config.json", "'classes'", "sorted order"]),
    "n_features_in": (_config(_set(5, "n_features_in")), ["config.json", "'standardizer' has 6 features"]),
    "bad_dtype": (_config(_set("garbage", "classes", "dtype")), ["config.json", "'classes.dtype'", "numpy dtype"]),
    "int_dtype": (_config(_set("<i8", "classes", "dtype")), ["'classes.dtype'", "['bll', 'fsrq', 'pulsar']"]),
    "unknown_kernel": (_config(_set("Nonexistent", "structure", "kernels", 0, "class")),
                       ["config.json", "kernel class 'Nonexistent'", "stationary kernel"]),
    "kernel_class_swapped": (_config(_set("Linear", "structure", "kernels", 0, "class")),
                             ["config.json", "Linear kernel has parameters", "['variance']"]),
    "model_outside_folder": (_outside_model, ["training.json", "field 'model'", "inside", "'../elsewhere'"]),
}


@pytest.mark.parametrize("case", sorted(MODEL_DAMAGE))
def test_damaged_model_folder_is_refused_by_predict(case, trained, small_catalog, tmp_path, capsys):
    damage, phrases = MODEL_DAMAGE[case]
    folder = tmp_path / "trained"
    shutil.copytree(trained, folder)
    damage(folder)
    out = tmp_path / "table.csv"
    _fails(capsys, ["predict", str(folder), "--catalog", str(small_catalog), "--out", str(out), "--no-progress"],
           *phrases)
    assert not out.exists()


def test_undamaged_copy_still_predicts(trained, small_catalog, tmp_path, capsys):
    out = tmp_path / "table.csv"
    code = main(["predict", str(trained), "--catalog", str(small_catalog), "--select", "bcu", "--out", str(out),
                 "--no-progress"])
    assert code == 0, capsys.readouterr().err


@pytest.mark.parametrize("family", ["noisy_gp_latent", "noisy_gp_cavi", "dirichlet", "logistic_bound", "logistic_softmax"])
def test_every_family_refuses_non_finite_parameters_and_missing_fields(family, tmp_path):
    folder = tmp_path / family
    shutil.copytree(SAVED / family, folder)
    arrays = dict(np.load(folder / "params.npz"))
    key = next(k for k, v in arrays.items() if v.dtype.kind == "f" and v.size)
    arrays[key] = np.full_like(arrays[key], np.nan)
    np.savez(folder / "params.npz", **arrays)
    with pytest.raises(CorruptModel, match=r"params\.npz: array .* NaN or infinite"):
        load_estimator(folder)
    shutil.copy(SAVED / family / "params.npz", folder / "params.npz")
    config = json.loads((folder / "config.json").read_text())
    del config["params"]
    (folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(CorruptModel, match=r"config\.json: field 'params' is missing"):
        load_estimator(folder)


# ------------------------------------------------------------------ catalogs
def _write_catalog(path, source, edit):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with fits.open(source) as hdul:
            table, keys = Table.read(hdul[HDU_NAME]), dict(hdul[HDU_NAME].header)
    table = edit(table)
    hdu = fits.table_to_hdu(table)
    hdu.name = HDU_NAME
    hdu.header.update({k: keys[k] for k in ("CDS-NAME", "VERSION", "DataRelease") if k in keys})
    fits.HDUList([fits.PrimaryHDU(), hdu]).writeto(path)
    return path


def _truncated(source, path):
    """Cut inside a 2880-byte block: the block-count check names it."""
    blocks = source.stat().st_size // 2880
    path.write_bytes(source.read_bytes()[: 2880 * (blocks * 2 // 3) + 1000])
    return path


def _truncated_at_block(source, path):
    """Cut at a block boundary: the table's own size (NAXIS2 rows) says it is short."""
    blocks = source.stat().st_size // 2880
    path.write_bytes(source.read_bytes()[: 2880 * (blocks * 2 // 3)])
    return path


def _truncated_gz(source, path):
    path = path.with_suffix(".fit.gz")
    path.write_bytes(gzip.compress(source.read_bytes())[:30000])
    return path


def _empty(source, path):
    path.write_bytes(b"")
    return path


def _text_column(table):
    table.replace_column("LP_Index", np.array(["n/a"] * len(table)))
    return table


CATALOG_DAMAGE = {
    "truncated_fit": (_truncated, ["truncated", "2880-byte FITS blocks"]),
    "truncated_fit_at_block": (_truncated_at_block, ["truncated", "smaller than the expected size"]),
    "truncated_fit_gz": (_truncated_gz, ["truncated or corrupt", "gzip stream cannot be read"]),
    "empty_file": (_empty, ["it is empty"]),
    "zero_rows": (lambda src, p: _write_catalog(p, src, lambda t: t[:0]), ["empty", "(0 rows)"]),
}


@pytest.mark.parametrize("case", sorted(CATALOG_DAMAGE))
def test_damaged_catalog_file_is_named(case, small_catalog, tmp_path, capsys):
    damage, phrases = CATALOG_DAMAGE[case]
    path = damage(small_catalog, tmp_path / "cat.fit")
    _fails(capsys, ["catalog", "summary", "--catalog", str(path)], str(path), *phrases)


def test_text_column_is_named_where_numbers_are_expected(small_catalog, tmp_path, capsys):
    path = _write_catalog(tmp_path / "text.fit", small_catalog, _text_column)
    _fails(capsys, ["train", "--catalog", str(path), "--classes", "bll,fsrq", "--out", str(tmp_path / "m"),
                    "--features", "villacampa2021", "--no-progress"],
           "column 'LP_Index'", "text.fit", "'n/a'", "expected numbers")
    assert not (tmp_path / "m").exists()


def test_negative_one_sided_errors_drop_their_rows(small_catalog, tmp_path):
    def negative(table):
        table["Unc_LP_Index"][rows] = -0.1
        return table

    rows = np.nonzero(np.char.strip(load_catalog(small_catalog).class_codes) == "bll")[0][:3]
    catalog = load_catalog(_write_catalog(tmp_path / "neg.fit", small_catalog, negative))
    with pytest.warns(DroppedRowsWarning, match=r"3 source.*Unc_LP_Index \(negative\)"):
        data = catalog.dataset(classes=["bll", "fsrq"], features="villacampa2021")
    assert not set(catalog.names[rows]) & set(data.ids) and data.n_samples == SMALL["bll"] + SMALL["fsrq"] - 3
    with pytest.raises(ValueError, match="1 negative value"):
        Feature("c", error="e").apply(np.array([1.0, 2.0]), np.array([0.1, -0.1]))


# --------------------------------------------------------------- other inputs
def test_missing_class_labels_are_refused():
    X = np.zeros((4, 1))
    for y in (np.array([0.0, np.nan, 1.0, 1.0]), np.array(["a", None, "b", "b"], dtype=object)):
        with pytest.raises(ValueError, match="1 missing label.*row 1"):
            check_fit_data(X, y)


@pytest.mark.parametrize("split", [lambda d: d.split(0.1), lambda d: next(d.repeated_splits(1, 0.1))])
def test_stratified_split_with_an_empty_test_set_is_refused(split):
    data = NoisyDataset(np.arange(3.0)[:, None], None, np.array([0, 1, 2]), ("a", "b", "c"), (), None)
    with pytest.raises(ValueError, match="leaves the test set empty"):
        split(data)


@pytest.mark.parametrize("content", [b"", b"\x89PNG\r\n\x1a\n\xff\x00\xfe"])
def test_unreadable_labels_file_is_named(content, tmp_path):
    oracle = FileOracle(tmp_path)
    oracle.path(1).write_bytes(content)
    with pytest.raises(OracleError, match=r"query_0001\.csv is not a readable CSV.*'Source_Name'"):
        oracle.read(1, ["a"], ["x", "y"])


def test_workflow_file_that_is_not_utf8_is_named(tmp_path):
    path = tmp_path / "w.yaml"
    path.write_bytes(b"workflow: classify\nout: \xff\xfe\n")
    with pytest.raises(WorkflowError, match=r"w\.yaml:2: not UTF-8"):
        load_workflow(path)


def test_one_code_where_classes_are_a_list_is_refused(small_catalog, tmp_path, capsys):
    path = tmp_path / "w.yaml"
    path.write_text("workflow: classify\n")
    _fails(capsys, ["workflow", str(path), "--set", "params.classes=bll", "--set", f"params.catalog={small_catalog}",
                    "--out", str(tmp_path / "out"), "--no-progress"],
           "'bll' is one CLASS1 code", "classes: [bll, fsrq]", "blazar_pulsar")

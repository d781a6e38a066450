"""The data-set facts docs/datasets.md quotes: every set's rows, features and classes as `gpal.data.load_dataset`
returns it, the shipped KEEL files' size, the KEEL ringnorm and twonorm files' class statistics set beside Breiman's
recipes, and the recipes' exact Bayes errors.

Each line it prints is ``label: value``, kept in ``lab/studies/records/dataset_facts.json``; the statistics
come from gpal's own loaders (`gpal.data.load_dataset`, `gpal.data.breiman`), so the page states what gpal reads.
Seconds to run::

    python lab/studies/bench_dataset_facts.py
"""

from __future__ import annotations

from importlib import resources

import numpy as np

from shared import keep_printed  # the script's folder, first on its path

#: KEEL's ``ring`` file stores each input times 1000 as an integer; the page compares the file with the recipe in
#: the recipe's units.
RING_SCALE = 1000.0


def keel_bytes() -> tuple[int, int]:
    """(number of files, their bytes): the gzip-compressed KEEL files the manifest lists, as gpal ships them."""
    from gpal.data.keel import manifest

    folder = resources.files("gpal.data").joinpath("keel_files")
    files = [entry["file"] for entry in manifest()["datasets"].values()]
    return len(files), sum(len(folder.joinpath(name).read_bytes()) for name in files)


def class_statistics(X: np.ndarray, y: np.ndarray) -> list[tuple[float, float]]:
    """For each class (in label order): the mean of all its inputs, and its per-feature standard deviation
    averaged over the features, the two numbers a recipe N(m 1, s^2 I) sets as m and s."""
    return [(float(X[y == c].mean()), float(X[y == c].std(axis=0).mean())) for c in np.unique(y)]


def _pair(values: list[float]) -> str:
    return " / ".join(f"{v:.5f}" for v in values)


def main() -> None:
    from gpal.data import breiman, dataset_names, load_dataset

    for name in dataset_names():
        data = load_dataset(name)
        print(f"{name} rows / features / classes: {data.X.shape[0]} / {data.X.shape[1]} / {data.n_classes}")
    n_files, size = keel_bytes()
    print(f"KEEL files shipped (gpal/data/keel_files/, gzip-compressed, {n_files} files): {size} bytes = "
          f"{size / 1e6:.5f} MB")
    ring = load_dataset("ringnorm")
    ring_stats = class_statistics(ring.X / RING_SCALE, ring.y)
    print(f"ringnorm (KEEL ring) / {RING_SCALE:.0f}, class 0 / class 1 mean of the inputs: "
          f"{_pair([m for m, _ in ring_stats])}")
    print(f"ringnorm (KEEL ring) / {RING_SCALE:.0f}, class 0 / class 1 per-feature standard deviation, averaged: "
          f"{_pair([s for _, s in ring_stats])}")
    print(f"ringnorm (KEEL ring), class-1 mean in units of its per-feature standard deviation: "
          f"{ring_stats[1][0] / ring_stats[1][1]:.5f}")
    two = load_dataset("twonorm")
    two_stats = class_statistics(two.X, two.y)
    print(f"twonorm (KEEL), class 0 / class 1 mean of the inputs: {_pair([m for m, _ in two_stats])}")
    print(f"twonorm (KEEL), class 0 / class 1 per-feature standard deviation, averaged: "
          f"{_pair([s for _, s in two_stats])}")
    print(f"twonorm recipe's a = 2/sqrt({breiman.DIM}): {breiman.TWONORM_A:.5f}")
    print(f"twonorm_breiman exact Bayes error, Phi(-2) (%): {100 * breiman.twonorm_bayes_error():.5f}")
    for label, a in (("1/sqrt", breiman.RINGNORM_A), ("2/sqrt", 2 * breiman.RINGNORM_A)):
        print(f"ringnorm_breiman exact Bayes error at a = {label}({breiman.DIM}) (%): "
              f"{100 * breiman.ringnorm_bayes_error(a=a):.5f}")


if __name__ == "__main__":
    with keep_printed("dataset_facts", __file__):
        main()

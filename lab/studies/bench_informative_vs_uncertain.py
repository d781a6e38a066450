"""What the main job's two follow-up rankings hold, the numbers docs/active_learning.md quotes: the report's ten
most uncertain sources (highest predictive entropy) against its ten most informative (highest BALD information,
what a label would teach the model), their entropies and information, and how many sources the two share.

BALD asks about the model, not the source: a source whose classes are evenly mixed under every draw of the model
is uncertain but teaches nothing; the two lists differ where that shows.  Reads a finished ``gpal classify``
folder's report tables (``tables/most_uncertain.csv``, ``tables/most_informative_top10.csv``)::

    gpal classify --out runs/main_job --no-progress
    python lab/studies/bench_informative_vs_uncertain.py runs/main_job
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from shared import keep_printed  # the script's folder, first on its path


def entropy(frame: pd.DataFrame) -> np.ndarray:
    """Each row's predictive entropy (nats) from its class probabilities, as gpal computes it."""
    from gpal.catalog_jobs.proba_columns import classes_from_columns, proba_of
    from gpal.estimators.base import entropy as row_entropy

    return row_entropy(proba_of(frame, classes_from_columns(frame.columns)))


def main(folder: Path) -> None:
    from gpal.catalog_jobs.layout import TABLES_DIR, located
    from gpal.catalog_jobs.proba_columns import classes_from_columns

    uncertain = pd.read_csv(located(folder, f"{TABLES_DIR}/most_uncertain.csv"))
    informative = pd.read_csv(located(folder, f"{TABLES_DIR}/most_informative_top10.csv"))
    classes = len(classes_from_columns(uncertain.columns))
    print(f"classes: {classes}; ln {classes} (the largest entropy, nats): {np.log(classes):.3f}")
    low, high = entropy(uncertain).min(), entropy(uncertain).max()
    print(f"the {len(uncertain)} most uncertain, entropy min / max (nats): {low:.3f} / {high:.3f}")
    low, high = entropy(informative).min(), entropy(informative).max()
    print(f"the {len(informative)} most informative, entropy min / max (nats): {low:.3f} / {high:.3f}")
    print(f"the {len(informative)} most informative, information min / max (nats): "
          f"{informative['information'].min():.3f} / {informative['information'].max():.3f}")
    shared = set(uncertain["Source_Name"]) & set(informative["Source_Name"])
    print(f"sources in both lists: {len(shared)}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="a finished gpal classify folder")
    args = parser.parse_args()
    with keep_printed("informative_vs_uncertain", __file__):
        main(args.folder)

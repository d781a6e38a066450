"""The catalog counts behind the bcu rule that docs/targets.md and docs/cli.md quote: what 4FGL-DR4 calls the
4FGL (v20) bcu sources (the blazar prior, `gpal.catalogs.known_classes.NON_BLAZAR_SHARE`), DR4's bcu without a
Bayesian association, and FL16Y's unassociated and bcu sources before the main job's features drop any.

Each line it prints is ``label: value``, kept in ``lab/studies/records/bcu_counts.json``.  Seconds::

    python lab/studies/bench_bcu_counts.py
"""

from __future__ import annotations

import warnings
from collections import Counter

import numpy as np

from shared import float_column, keep_printed, quiet_catalog  # the script's folder, first on its path


def main() -> None:
    from gpal.catalogs.links import link_later

    v20, dr4 = quiet_catalog("4FGL"), quiet_catalog("4FGL-DR4")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an ambiguous link leaves its source unlinked, as the main job does
        later = link_later(v20, dr4)
    linked = (v20.class_codes == "bcu") & (later >= 0)
    became = Counter(dr4.class_codes[later[linked]])
    counts = {code: became.get(code, 0) for code in ("bll", "fsrq", "psr", "msp")}
    print(f"4FGL (v20) bcu that 4FGL-DR4 calls bll, fsrq, psr or msp: {sum(counts.values())} ("
          + ", ".join(f"{code} {n}" for code, n in counts.items()) + ")")
    bayes = float_column(dr4.table["ASSOC_PROB_BAY"])[dr4.class_codes == "bcu"]
    print(f"4FGL-DR4 bcu with ASSOC_PROB_BAY 0 / none: {(bayes == 0).sum()} / {np.isnan(bayes).sum()}")
    fl16y = quiet_catalog("FL16Y").class_counts()
    print(f"FL16Y unassociated and bcu sources: {fl16y['unassociated'] + fl16y['bcu']}")


if __name__ == "__main__":
    with keep_printed("bcu_counts", __file__):
        main()

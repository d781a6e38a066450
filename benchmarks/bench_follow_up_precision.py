"""How many of the main job's top pulsar candidates FL16Y calls pulsars: list (a), p_pulsar alone, logistic regression.

Reads a finished ``gpal classify --target pulsar`` folder on 4FGL-DR4, refits the logistic-regression
baseline on the same training split and features, and counts, among the top 20 / 50 sources of each
ranking, those that FL16Y (v41) associates with a pulsar (psr or msp), matched by FL16Y's ``ASSOC_FGL``.
Rankings: list (a) (``follow_up.csv``: in-population point sources by what a label teaches about
pulsar), the same sources by ``p_pulsar``, and every classified point source by ``p_pulsar`` and by
logistic regression's probability.

    python benchmarks/bench_follow_up_precision.py RUN_FOLDER PATH/gll_psc_v41.fit.gz
"""

import json
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from astropy.table import Table

from gpal.catalog_jobs.selection import CatalogSelection
from gpal.evaluation.baselines import fit_baselines

PULSARS = ("psr", "msp")


def main(folder, fl16y_path, top=(20, 50)):
    warnings.simplefilter("ignore")
    folder = Path(folder)
    fl16y = Table.read(fl16y_path, hdu="LAT_Point_Source_Catalog")
    text = lambda name: np.char.strip(np.asarray(fl16y[name]).astype(str))  # noqa: E731
    later = dict(zip(text("ASSOC_FGL"), np.char.lower(text("CLASS1"))))
    run = json.loads((folder / "run.json").read_text())
    frame = pd.read_csv(folder / "classifications.csv", keep_default_na=False, na_values=[""])
    follow = pd.read_csv(folder / "follow_up.csv", keep_default_na=False, na_values=[""])
    points = frame[~frame["extended"]]

    selection = CatalogSelection()  # the main job's defaults, as the folder's run used them
    catalog, data = selection.load()
    train, _ = data.split(test_size=run.get("test_size", 0.2), seed=run.get("seed", 0), stratify=True)
    pool = catalog.pool(select=["unassociated", "bcu"], features=data.meta["features"]).by_ids(points["Source_Name"].tolist())
    logistic = fit_baselines(train.X, train.y, pool.X, names=["logistic"], random_state=0)["logistic"]
    p_logistic = pd.Series(logistic[:, list(data.class_names).index("pulsar")], index=pool.ids)

    rankings = {
        "list (a): information about pulsar": follow["Source_Name"],
        "list (a)'s sources by p_pulsar": follow.sort_values("p_pulsar", ascending=False)["Source_Name"],
        "every point source by p_pulsar": points.sort_values("p_pulsar", ascending=False)["Source_Name"],
        "every point source by logistic regression": p_logistic.sort_values(ascending=False).index.to_series(),
    }
    print("| ranking | " + " | ".join(f"top {k}: FL16Y pulsars / associated / listed" for k in top) + " |")
    for name, ids in rankings.items():
        cells = []
        for k in top:
            found = [later.get(i) for i in list(ids)[:k]]
            pulsars = sum(c in PULSARS for c in found)
            associated = sum(bool(c) for c in found)
            cells.append(f"{pulsars} / {associated} / {sum(c is not None for c in found)}")
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main(*sys.argv[1:])

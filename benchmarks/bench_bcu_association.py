"""The bcu prior on later labels, as applied today and weighted by the association's probability.

A bcu's blazar prior (`gpal.catalogs.known_classes`) rests on its counterpart being the gamma-ray
source.  This reads a main job's later check (bcu sources that the later release classifies), takes
the model's probabilities back to the features' own (dividing out the class weights the run
applied), and scores the rule variants, paired against the rule as applied (2000 resamples):
none; today's; and the rule applied to the share ``a`` of the source's association that a
probability says is right, the prior a mixture ``a * bcu prior + (1 - a) * training prior`` (so a
class's weight is ``a * w + 1 - a``), with ``a`` the Bayesian method's ``ASSOC_PROB_BAY``, the
larger or the smaller of it and ``ASSOC_PROB_LR`` (a method that did not associate the source: 0).
It also counts the run's bcu sources each variant predicts pulsar::

    gpal classify --catalog 4FGL --out /tmp/run-v20
    python benchmarks/bench_bcu_association.py /tmp/run-v20
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pandas as pd

from gpal.catalogs import load_catalog
from gpal.catalogs.known_classes import class_weights
from gpal.evaluation.comparison import bootstrap_comparison


def _variants(features: np.ndarray, w: np.ndarray, bay: np.ndarray, lr: np.ndarray) -> dict[str, np.ndarray]:
    def weighted(a: np.ndarray | float) -> np.ndarray:
        p = features * (np.reshape(a, (-1, 1)) * w + 1 - np.reshape(a, (-1, 1)))
        return p / p.sum(axis=1, keepdims=True)

    return {"rule (today)": weighted(1.0), "no rule": features, "rule x bay": weighted(bay),
            "rule x max(bay, lr)": weighted(np.maximum(bay, lr)), "rule x min(bay, lr)": weighted(np.minimum(bay, lr))}


def _features_proba(frame: pd.DataFrame, columns: list[str], w: np.ndarray) -> np.ndarray:
    p = frame[columns].to_numpy(float) / w  # the run applied the rule: divide its weights out
    return p / p.sum(axis=1, keepdims=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path, help="the --out folder of gpal classify on a release older than FL16Y")
    args = parser.parse_args()
    training = json.loads((args.run / "training.json").read_text())
    classes = list(training["classes"])
    w = class_weights(classes, training.get("merge", {}), training["n_per_class"])["bcu"]
    catalog = load_catalog(training["catalog"]["release"])  # a shipped release: the later check needs one
    row = {name: i for i, name in enumerate(catalog.names)}
    assoc = {m: np.nan_to_num(catalog.values_of(role, catalog.names), nan=0.0)
             for m, role in (("bay", "assoc_prob_bay"), ("lr", "assoc_prob_lr"))}
    pulsar = classes.index("pulsar")

    later = pd.read_csv(args.run / "tables" / "later_check_sources.csv", comment="#", keep_default_na=False)
    groups = {"bll": ("bll",), "fsrq": ("fsrq",), "pulsar": ("psr", "msp")}
    code = later["later_class"].str.lower()
    label = np.array([next((k for k, c in enumerate(classes) if x in groups[c]), -1) for x in code])
    rows = (label >= 0) & (later["CLASS1"].str.lower() == "bcu")
    later, y = later[rows], label[rows]
    at = np.array([row[n] for n in later["Source_Name"]])
    probas = _variants(_features_proba(later, [f"p_{c}_gpal" for c in classes], w), w,
                       assoc["bay"][at], assoc["lr"][at])
    print(f"{training['catalog']['release']} bcu that the later release classifies: {y.size}, per class "
          f"{dict(zip(classes, np.bincount(y, minlength=len(classes)).tolist()))}; later pulsars' ASSOC_PROB_BAY "
          f"{np.round(assoc['bay'][at][y == pulsar], 3).tolist()}, ASSOC_PROB_LR {np.round(assoc['lr'][at][y == pulsar], 3).tolist()}")
    table = bootstrap_comparison(y, probas, "rule (today)", n_boot=2000).set_index(["model", "metric"])
    for name, p in probas.items():
        nll, bal = table.loc[(name, "nll")], table.loc[(name, "balanced_accuracy")]
        predicted = p.argmax(axis=1)
        print(f"  {name:20s} NLL {nll['value']:.3f} ({nll['diff']:+.3f} [{nll['diff_low']:+.3f}, {nll['diff_high']:+.3f}])"
              f"  balanced accuracy {bal['value']:.3f} ({bal['diff']:+.3f} [{bal['diff_low']:+.3f}, "
              f"{bal['diff_high']:+.3f}])  later pulsars found {int(np.sum((predicted == pulsar) & (y == pulsar)))}"
              f"/{int(np.sum(y == pulsar))}, later blazars called pulsar {int(np.sum((predicted == pulsar) & (y != pulsar)))}")

    pool = pd.read_csv(args.run / "classifications.csv", comment="#", keep_default_na=False)
    pool = pool[pool["CLASS1"].str.lower() == "bcu"]
    at = np.array([row[n] for n in pool["Source_Name"]])
    every = _variants(_features_proba(pool, [f"p_{c}" for c in classes], w), w, assoc["bay"][at], assoc["lr"][at])
    print(f"  the run's {len(pool)} bcu predicted pulsar: "
          + ", ".join(f"{name} {int(np.sum(p.argmax(axis=1) == pulsar))}" for name, p in every.items()))


if __name__ == "__main__":
    main()

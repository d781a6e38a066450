"""How many of the main job's top candidates of its target class a later release confirms: list (a), the
class probability alone, logistic regression.

Reads a finished ``gpal classify --target pulsar`` folder of a release older than the newest shipped
(4FGL v20, 4FGL-DR4, ...): its classifications, its classification follow-up list (``follow_up.csv``)
and the later-release check classify wrote for it (``tables/later_check_sources.csv``: each
classified source's class in the later release, linked by the release links of
`gpal.catalogs.links`, and the logistic-regression baseline refitted on the model's own training
rows).  For a folder without that file, run ``gpal check-later --trained FOLDER`` first.

Among the top 20 / 50 sources of each ranking it counts those the later release puts in the target
class (its CLASS1 codes, e.g. psr or msp for ``pulsar=psr+msp``), those it associates at all, and
those it still lists.  Rankings: list (a) (in-population point sources by what a label teaches about
the target), the same sources by ``p_<target>``, and every classified point source by ``p_<target>``
and by logistic regression's probability.

    python benchmarks/bench_follow_up_precision.py RUN_FOLDER [TOP ...]
"""

import sys
from pathlib import Path

import pandas as pd

from gpal.catalog_jobs.selection import CatalogSelection
from gpal.evaluation.intervals import binomial_interval
from gpal.runs.output_dir import recorded_identity

#: What the later-release check writes where the later release has no row for a source, or no class.
UNLISTED, NO_CLASS = "missing", ("", "unk")


def rankings(folder):
    """The ranked source names of each ranking, the target's CLASS1 codes, and each source's later class."""
    folder = Path(folder)
    run = recorded_identity(folder) or {}
    target = run.get("target")
    if not target:
        raise SystemExit(f"{folder} was classified without --target; rerun gpal classify with --target pulsar")
    checked = folder / "tables" / "later_check_sources.csv"
    if not checked.is_file():
        raise SystemExit(f"{checked} is missing: the folder's release is the newest, or it predates the check; "
                         f"run gpal check-later --trained {folder}")
    read = lambda path: pd.read_csv(path, keep_default_na=False, na_values=[""], dtype={"CLASS1": str})  # noqa: E731
    frame, follow, later = read(folder / "classifications.csv"), read(folder / "follow_up.csv"), read(checked)
    later = later.set_index("Source_Name")
    classes, merge = CatalogSelection(classes=run["class_spec"]).class_groups()
    codes = tuple(merge.get(target, (target.lower(),)))
    points = frame[~frame["extended"].astype(bool)]
    p, p_logistic = f"p_{target}", later.loc[points["Source_Name"], f"p_{target}_logistic"]
    ranked = {
        f"list (a): information about {target}": follow["Source_Name"],
        f"list (a)'s sources by {p}": follow.sort_values(p, ascending=False, kind="stable")["Source_Name"],
        f"every classified point source by {p}": points.sort_values(p, ascending=False, kind="stable")["Source_Name"],
        "every classified point source by logistic regression (same training rows and features)":
            p_logistic.sort_values(ascending=False, kind="stable").index.to_series(),
    }
    return ranked, codes, later["later_class"].fillna("")


def main(folder, *top):
    top = tuple(int(k) for k in top) or (20, 50)
    ranked, codes, later_class = rankings(folder)
    print(f"{folder}: among the first k of each ranking, the later release's {'/'.join(codes)} (precision, "
          "Jeffreys 95%), and the sources it associates / still lists")
    print("| ranking | " + " | ".join(f"top {k}: {'/'.join(codes)} | top {k}: associated / listed" for k in top) + " |")
    print("|---|" + "---|---|" * len(top))
    for name, ids in ranked.items():
        cells = []
        for k in top:
            found = later_class.loc[list(ids)[:k]]
            listed = found != UNLISTED
            associated = listed & ~found.isin(NO_CLASS)
            hits = int(found.isin(codes).sum())
            low, high = binomial_interval(hits, len(found))
            cells += [f"{hits} ({hits / len(found):.2f} [{low:.2f}, {high:.2f}])",
                      f"{int(associated.sum())} / {int(listed.sum())}"]
        print(f"| {name} | " + " | ".join(cells) + " |")
    base = int(later_class.isin(codes).sum())
    print(f"later {'/'.join(codes)} among all {len(later_class)} classified sources: {base} "
          f"({base / len(later_class):.3f})")


if __name__ == "__main__":
    main(*sys.argv[1:])

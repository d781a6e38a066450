#!/usr/bin/env python
"""Discovery mode in simulation: how many pulsars does a search find per source observed?

A radio search picks targets from a classifier's ranking of unassociated sources.  Here the
"unassociated" sources are the faintest quarter of the labelled 4FGL-DR4 sources (658, as in
``bench_error_bars.py --task faint``: the sources to classify are fainter than the training
ones), whose classes we know; the main job's classifier (NIMGP, population prior) is trained on
a 90% subsample (seed r) of the brighter three quarters.  Strategies, each observing the top k:

* ``random``: the expected yield of k sources drawn at random, k x (pulsar share of the pool);
* ``probability``: `gpal.active.Discovery` with no exploration (the plain ranking by p(pulsar));
* ``ucb``: `Discovery(exploration=1)`, p + sd of p over 100 joint posterior draws.

For every k: the pulsars found, their ratio to random, and the yield the probabilities promised
(`gpal.active.expected_yield`: mean and 95% Poisson-binomial range), so a user can see whether
the stated expectation is honest.  Intervals are percentile bootstraps over the pool's sources
(2000 resamples, the ranking recomputed on each), pooled over the repetitions.

    python benchmarks/bench_discovery.py --reps 3          # ~3 min a repetition on 2 cores
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from bench_error_bars import GP_METHODS, GP_SHARED, _catalog, _dr4  # noqa: E402  (the same tasks and model)

BUDGETS = (10, 20, 50, 100, 200)
TARGET = "pulsar"
OUT = Path("docs/studies/discovery")


def run_rep(rep: int, dr4) -> dict:
    from gpal import NoisyGPClassifier
    from gpal.active import Discovery

    train, pool, _, settings, _ = _catalog("faint", rep, dr4)
    t0 = time.perf_counter()
    clf = NoisyGPClassifier(**{**settings, **GP_METHODS["NIMGP pop"]}, random_state=rep).fit(train)
    c = list(clf.classes_).index(TARGET)
    proba = clf.predict_proba(pool)
    ucb = Discovery(TARGET, exploration=1.0, n_samples=100).scores(clf, pool)
    return {"rep": rep, "p_target": proba[:, c].tolist(), "ucb": ucb.tolist(),
            "is_target": (pool.labels() == TARGET).tolist(), "seconds": time.perf_counter() - t0}


def yields(units: list[dict], n_boot: int = 2000) -> str:
    from gpal.active import expected_yield

    rng = np.random.default_rng(0)
    rows = ["| sources observed | strategy | pulsars found (mean over reps) | per source | × random [95%] | "
            "promised by the probabilities (95% range) |", "|---|---|---|---|---|---|"]
    for k in BUDGETS:
        found: dict[str, list] = {"random": [], "probability": [], "ucb": []}
        boot: dict[str, list] = {"probability": [], "ucb": []}
        promised = []
        for u in units:
            is_target = np.asarray(u["is_target"], dtype=float)
            scores = {"probability": np.asarray(u["p_target"]), "ucb": np.asarray(u["ucb"])}
            n = is_target.size
            found["random"].append(k * is_target.mean())
            for name, s in scores.items():
                top = np.argsort(-s, kind="stable")[:k]
                found[name].append(is_target[top].sum())
                idx = rng.integers(0, n, size=(n_boot, n))
                # each resampled pool re-ranked: found / (k x share) within it
                order = np.argsort(-s[idx], axis=1, kind="stable")[:, :k]
                hits = np.take_along_axis(is_target[idx], order, axis=1).sum(axis=1)
                boot[name].append(hits / (k * is_target[idx].mean(axis=1)))
            top = np.argsort(-scores["probability"], kind="stable")[:k]
            promised.append(expected_yield(scores["probability"][top]))
        base = np.mean(found["random"])
        for name in ("random", "probability", "ucb"):
            mean = float(np.mean(found[name]))
            if name == "random":
                ratio = "1"
                promise = ""
            else:
                ratios = np.concatenate(boot[name])
                ratio = f"{mean / base:.2f} [{np.quantile(ratios, 0.025):.2f}, {np.quantile(ratios, 0.975):.2f}]"
                promise = "" if name == "ucb" else (
                    f"{np.mean([p['expected'] for p in promised]):.1f} "
                    f"({np.mean([p['low'] for p in promised]):.0f}-{np.mean([p['high'] for p in promised]):.0f})")
            rows.append(f"| {k} | {name} | {mean:.1f} | {mean / k:.3f} | {ratio} | {promise} |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    dr4 = None
    units = []
    for rep in range(args.reps):
        path = args.out / f"rep{rep}.json"
        if not path.exists():  # each repetition saved as it finishes: a rerun resumes
            dr4 = _dr4() if dr4 is None else dr4
            unit = run_rep(rep, dr4)
            tmp = path.with_suffix(".tmp")
            tmp.write_text(json.dumps(unit))
            tmp.replace(path)
            print(f"rep {rep}: {unit['seconds']:.0f} s", flush=True)
        units.append(json.loads(path.read_text()))
    share = np.mean([np.mean(u["is_target"]) for u in units])
    text = (f"{len(units)} repetitions, {len(units[0]['is_target'])} pool sources, pulsar share {share:.3f}\n\n"
            + yields(units))
    (args.out / "summary.md").write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

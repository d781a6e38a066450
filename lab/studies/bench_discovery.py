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

    python lab/studies/bench_discovery.py --reps 3          # ~3 min a repetition on 2 cores
    python lab/studies/bench_discovery.py --reps 3 --record lab/pages/records/results/discovery.json   # the results page's record
    python lab/studies/bench_discovery.py --reps 3 --summarize --record lab/pages/records/results/discovery.json   # from the saved repetitions only, in seconds
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from shared import code_commit, dr4_sources, significance_task  # the error-bars study's faint task and model

BUDGETS = (10, 20, 50, 100, 200)
TARGET = "pulsar"
OUT = Path("lab/studies/records/discovery")


def run_rep(rep: int, dr4) -> dict:
    from gpal import NoisyGPClassifier
    from gpal.active import Discovery

    train, pool, _, settings, _ = significance_task("faint", rep, dr4)
    t0 = time.perf_counter()
    clf = NoisyGPClassifier(**settings, input_noise="latent", input_prior="population", random_state=rep).fit(train)
    c = list(clf.classes_).index(TARGET)
    proba = clf.predict_proba(pool)
    ucb = Discovery(TARGET, exploration=1.0, n_samples=100).scores(clf, pool)
    return {"rep": rep, "p_target": proba[:, c].tolist(), "ucb": ucb.tolist(),
            "is_target": (pool.labels() == TARGET).tolist(), "seconds": time.perf_counter() - t0}


def yields(units: list[dict], n_boot: int = 2000) -> list[dict]:
    """Per budget k and strategy: pulsars found, the ratio to random with its bootstrap interval, the promised yield."""
    from gpal.active import expected_yield

    rng = np.random.default_rng(0)
    rows = []
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
            row = {"k": k, "strategy": name, "found": mean, "ratio": None, "promised": None}
            if name != "random":
                ratios = np.concatenate(boot[name])
                row["ratio"] = (mean / base, float(np.quantile(ratios, 0.025)), float(np.quantile(ratios, 0.975)))
            if name == "probability":
                row["promised"] = tuple(float(np.mean([p[key] for p in promised]))
                                        for key in ("expected", "low", "high"))
            rows.append(row)
    return rows


def yields_markdown(rows: list[dict]) -> str:
    lines = ["| sources observed | strategy | pulsars found (mean over reps) | per source | × random [95%] | "
             "promised by the probabilities (95% range) |", "|---|---|---|---|---|---|"]
    for r in rows:
        ratio = "1" if r["ratio"] is None else "{:.2f} [{:.2f}, {:.2f}]".format(*r["ratio"])
        promise = "" if r["promised"] is None else "{:.1f} ({:.0f}-{:.0f})".format(*r["promised"])
        lines.append(f"| {r['k']} | {r['strategy']} | {r['found']:.1f} | {r['found'] / r['k']:.3f} | {ratio} "
                     f"| {promise} |")
    return "\n".join(lines)


def results_record(rows: list[dict], units: list[dict], commit: str) -> dict:
    """The results page's record (`result_records`): ranking by p(pulsar) at 10 to 100 sources observed."""
    from result_records import make_record, make_table

    table = [[r["k"], f"{r['found']:.1f}", "{:.2f} [{:.2f}, {:.2f}]".format(*r["ratio"]), f"{r['promised'][0]:.1f}"]
             for r in rows if r["strategy"] == "probability" and r["k"] <= 100]
    share = np.mean([np.mean(u["is_target"]) for u in units])
    return make_record(
        "Pulsars found by rank", f"python lab/studies/bench_discovery.py --reps {len(units)}", commit,
        [make_table(["sources observed", "pulsars found, ranked by p(pulsar)", "× random [95%]",
                     "promised by the probabilities"], table, "rrlr")],
        {"pool": f"the faintest quarter of 4FGL-DR4's labelled sources ({len(units[0]['is_target'])}, "
                 f"{share:.1%} pulsars)", "repetitions": len(units)},
        source=f"the study's units in {OUT}/", workflow="lab/studies/discovery.yaml")


def load_units(out: Path, reps: int) -> list[dict]:
    """The saved repetitions 0 .. ``reps`` - 1 under ``out``; a missing or unreadable one raises ValueError naming it."""
    units = []
    for rep in range(reps):
        path = out / f"rep{rep}.json"
        try:
            unit = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            raise ValueError(f"{path}: no saved repetition {rep} ({exc}); run it first (without --summarize)") from None
        missing = {"p_target", "ucb", "is_target"} - set(unit)
        if missing or len({len(unit.get(k, ())) for k in ("p_target", "ucb", "is_target")}) != 1:
            raise ValueError(f"{path} is not a repetition of this study: expected p_target, ucb and is_target of one "
                             f"length each (missing {sorted(missing)})")
        units.append(unit)
    return units


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--record", type=Path, help="also write the results page's record to this file")
    parser.add_argument("--summarize", action="store_true",
                        help="read the saved repetitions only, fitting nothing (a missing one is an error)")
    args = parser.parse_args(argv)
    from result_records import checking, outcome, write_record

    if args.summarize:
        try:
            units = load_units(args.out, args.reps)
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    else:
        args.out.mkdir(parents=True, exist_ok=True)
        dr4 = None
        units = []
        for rep in range(args.reps):
            path = args.out / f"rep{rep}.json"
            if not path.exists():  # each repetition saved as it finishes: a rerun resumes
                dr4 = dr4_sources() if dr4 is None else dr4
                unit = {**run_rep(rep, dr4), "commit": code_commit()}
                tmp = path.with_suffix(".tmp")
                tmp.write_text(json.dumps(unit))
                tmp.replace(path)
                print(f"rep {rep}: {unit['seconds']:.0f} s", flush=True)
            units.append(json.loads(path.read_text()))
    share = np.mean([np.mean(u["is_target"]) for u in units])
    rows = yields(units)
    text = (f"{len(units)} repetitions, {len(units[0]['is_target'])} pool sources, pulsar share {share:.3f}\n\n"
            + yields_markdown(rows))
    if not checking():  # a check writes nothing
        (args.out / "summary.md").write_text(text + "\n")
    print(text)
    if args.record:
        commits = {u.get("commit", "unknown") for u in units}
        if len(commits) != 1 or commits & {"unknown"} or any(c.endswith("+dirty") for c in commits):
            print(f"error: the units in {args.out} were made at {sorted(commits)}: a record needs one committed "
                  "source (rerun them into an empty --out)", file=sys.stderr)
            return 2
        try:
            written = write_record(args.record, results_record(rows, units, commits.pop()))
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        print(outcome(written))
    return 0

if __name__ == "__main__":
    sys.exit(main())

"""Paper 000: the authors' Beta(0.2, 5) prior on the learned label-flip delta against gpal's none, paired by split.

The authors' code (GPCnoise, ``likelihoods_GPCnoise.py``: ``Binary_Unifying`` and ``RobustMax``) gives delta a
``priors.Beta(0.2, 5.)``, which GPflow 1 adds once to the training objective with the logistic's log Jacobian;
gpal's ``likelihood_options={"delta_prior": [0.2, 5]}`` adds the same.  This reads two folders of
``gpal/workflows/files/papers/000_tables_3_4.yaml`` runs made with the same settings, WITH giving the svgp- methods
that option through ``method_options``, and reports per data set and likelihood the test accuracy and NLL of with
minus without, split by split (same split, same seed), as mean ± SE and the 95 % t interval:

    PYTHONPATH=$PWD/lab/studies python lab/studies/bench_paper000_prior.py runs/papers/000_prior_without \
        runs/papers/000_prior_with --json lab/studies/records/papers/paper000_prior.json

The units keep no learned delta, so ``--learned-delta DATASET ...`` refits split 0 of each named set, each
likelihood, both sides, one split at a time with the runs' settings and seed, and reports delta after training
beside the test NLL of the refit and of the run's unit, which agree when the refit is the run's fit
(``--learned-delta-kept FILE`` keeps the refits, so a rerun fits only those missing).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from shared import code_commit, paired_t  # the script's folder, first on its path

LIKELIHOODS = ("step", "probit", "logit")
PRIOR = [0.2, 5]


def _units(folder: Path, method: str) -> dict[int, dict]:
    return {int(p.stem.split("_")[1]): json.loads(p.read_text())
            for p in sorted((folder / "units" / method).glob("split_*.json"))}


def _check_sides(without: Path, with_prior: Path) -> None:
    """Each run's svgp- methods with the prior where they should have it (its ``workflow.json``), and nothing else
    of the runs' settings different, or the script ends naming what.  The workflow file's prose (title,
    description) and its path are not settings: a run resumed after they changed is the same run."""
    settings = []
    for run, wanted in ((without, None), (with_prior, PRIOR)):
        config = json.loads((run / "workflow.json").read_text())
        options = config.get("method_options") or {}
        settings.append({k: v for k, v in config.items() if k not in ("method_options", "out", "title", "description", "source")})
        for lik in LIKELIHOODS:
            got = ((options.get(f"svgp-{lik}") or {}).get("likelihood_options") or {}).get("delta_prior")
            if got != wanted:
                raise SystemExit(f"{run}: svgp-{lik} has delta_prior {got!r}, expected {wanted!r}")
    if settings[0] != settings[1]:
        differ = sorted(k for k in settings[0].keys() | settings[1].keys() if settings[0].get(k) != settings[1].get(k))
        raise SystemExit(f"{without} and {with_prior} differ in {differ}, not only in the prior")


def paired(without: Path, with_prior: Path) -> list[dict]:
    rows = []
    for folder in sorted(p for p in with_prior.iterdir() if (p / "units").is_dir()):
        for lik in LIKELIHOODS:
            method = f"svgp-{lik}"
            a, b = _units(without / folder.name, method), _units(folder, method)
            both = sorted(set(a) & set(b))
            if not both:
                continue
            for metric in ("accuracy", "nll"):
                value = (lambda u: 1.0 - u["error"]) if metric == "accuracy" else (lambda u: u["nll"])
                diff = [value(b[k]) - value(a[k]) for k in both]
                # one split (a run stopped early) is kept, with no spread or interval to give
                mean, se, low, high = paired_t(diff) if len(diff) > 1 else (diff[0], None, None, None)
                rows.append({"dataset": folder.name, "likelihood": lik, "metric": metric, "splits": both,
                             "without": float(np.mean([value(a[k]) for k in both])),
                             "with": float(np.mean([value(b[k]) for k in both])),
                             "per_split": diff, "mean": mean, "se": se, "low": low, "high": high,
                             "train_seconds_without": float(np.mean([a[k]["train_seconds"] for k in both])),
                             "train_seconds_with": float(np.mean([b[k]["train_seconds"] for k in both]))})
    return rows


def learned_delta(without: Path, with_prior: Path, datasets: list[str], kept: Path | None = None) -> list[dict]:
    """delta after training on split 0 of each of ``datasets``, step / probit / logit, without and with the prior,
    refitted one split at a time with the runs' settings (their ``workflow.json``) and the unit's seed.  With
    ``kept``, each refit is written there as it ends and a rerun takes the refits it finds instead of fitting again
    (the units' NLL is read afresh)."""
    from gpal import NoisyGPClassifier
    from gpal.data.registry import load_dataset
    from gpal.files import write_json_atomic
    from gpal.evaluation.metrics import negative_log_likelihood
    from gpal.runs.units import derived_seed
    from gpal.workflows.compare import method_spec

    config = json.loads((without / "workflow.json").read_text())
    training, protocol, seed = config["training"], config["protocol"], config["seed"]
    done = {(r["dataset"], r["likelihood"], r["side"]): r
            for r in (json.loads(kept.read_text()) if kept is not None and kept.is_file() else [])}
    rows = []
    for name in datasets:
        if name not in config["datasets"]:
            raise SystemExit(f"--learned-delta {name}: the runs' data sets are {config['datasets']}")
        ds = load_dataset(name, seed=seed)
        split = next(ds.repeated_splits(1, protocol["test_size"], seed))
        train, test = ds.subset(split.train), ds.subset(split.test)
        unit_seed = derived_seed(seed, split.index)  # as the runs' units: shared by all methods on a split
        for lik in LIKELIHOODS:
            for side, run, prior in (("without", without, None), ("with", with_prior, PRIOR)):
                unit = _units(run / name, f"svgp-{lik}").get(split.index)
                if unit is not None and unit["estimator_seed"] != unit_seed:
                    raise SystemExit(f"{run / name}: svgp-{lik} split 0 has seed {unit['estimator_seed']}, "
                                     f"the refit's is {unit_seed}")
                row = done.get((name, lik, side))
                if row is None:
                    options = None if prior is None else {"likelihood_options": {"delta_prior": prior}}
                    spec = method_spec(f"svgp-{lik}", train.n_samples, training["epochs"], training["iters"],
                                       training["num_inducing"], kernel=training["kernel"], options=options,
                                       n_rows=ds.n_samples)
                    cpu = time.process_time()
                    clf = NoisyGPClassifier(**spec, random_state=unit_seed).fit(train.X, train.y)
                    nll = negative_log_likelihood(test.y, clf.predict_proba(test.X))
                    row = {"dataset": name, "classes": int(ds.n_classes), "likelihood": lik, "side": side,
                           "split": int(split.index), "delta": float(clf.model_.likelihood.delta.numpy()),
                           "refit_nll": float(nll), "cpu_seconds": time.process_time() - cpu}
                    done[(name, lik, side)] = row
                    if kept is not None:  # atomic: an interrupted refit leaves the earlier ones readable
                        write_json_atomic(kept, list(done.values()))
                rows.append({**row, "unit_nll": None if unit is None else unit["nll"]})
                print(f"| {name} | {lik} | {side} | {row['delta']:.4g} | {row['refit_nll']:.4f} | "
                      f"{'–' if unit is None else format(unit['nll'], '.4f')} |", flush=True)
    return rows


def difference(row: dict) -> str:
    """Mean ± SE of a row's paired differences in powers of ten (they are far below the values' last digit)."""
    return f"{row['mean']:+.1e}" + ("" if row["se"] is None else f" ± {row['se']:.1e}")


def interval(row: dict) -> str:
    """A row's 95 % t interval, or a dash for one split."""
    return "–" if row["low"] is None else f"[{row['low']:+.1e}, {row['high']:+.1e}]"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("without", type=Path, help="000_tables_3_4 run folder without the prior")
    parser.add_argument("with_prior", type=Path, metavar="with", help="the same run with delta_prior [0.2, 5]")
    parser.add_argument("--json", type=Path, help="write the record here")
    parser.add_argument("--runs", type=Path, help="a JSON file of the two runs' commands and times, kept in the record")
    parser.add_argument("--learned-delta", nargs="+", default=[], metavar="DATASET",
                        help="refit split 0 of these sets, both sides, and report the learned delta")
    parser.add_argument("--learned-delta-kept", type=Path, help="a JSON file keeping the refits, reused on a rerun")
    args = parser.parse_args(argv)
    _check_sides(args.without, args.with_prior)
    rows = paired(args.without, args.with_prior)
    deltas = []
    if args.learned_delta:
        print("| data set | likelihood | prior | learned delta | refit test NLL | unit test NLL |")
        print("|---|---|---|---:|---:|---:|")
        deltas = learned_delta(args.without, args.with_prior, args.learned_delta, args.learned_delta_kept)
    print("| data set | likelihood | metric | splits | without | with | with - without, mean ± SE | 95 % t interval |")
    print("|---|---|---|---:|---:|---:|---|---|")
    for r in rows:
        print(f"| {r['dataset']} | {r['likelihood']} | {r['metric']} | {len(r['splits'])} | {r['without']:.4f} "
              f"| {r['with']:.4f} | {difference(r)} | {interval(r)} |")
    if args.json:
        record = {"title": "Paper 000: the authors' Beta(0.2, 5) prior on the learned label-flip delta, with minus "
                           "without, paired by split (000_tables_3_4's protocol)",
                  "commit": code_commit(), "prior": PRIOR, "without": str(args.without), "with": str(args.with_prior),
                  "runs": json.loads(args.runs.read_text()) if args.runs else None, "rows": rows,
                  "learned_delta": deltas}
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
        print(f"recorded {args.json}")


if __name__ == "__main__":
    main()

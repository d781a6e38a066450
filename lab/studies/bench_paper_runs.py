#!/usr/bin/env python
"""A papers workflow's run (``gpal workflow papers/<name>``) read past its record: per data set and
method the test accuracy, NLL, ECE and training seconds (mean ± SE over the splits), and per split the predictions'
confidence and which rows the NLL comes from.

A workflow's record keeps the metrics its paper publishes (paper 002's: accuracy only); a papers page also explains
those numbers by what the same fits say of confidence and calibration.  Each split's unit keeps its test rows'
probabilities, so the explanation is read from the run rather than from a second fit:

- largest probability, mean and max over the test rows: how confident the predictions are;
- the NLL's parts: -ln p(true class) summed over the correctly and the wrongly classified rows, each divided by
  all test rows, so the two add up to the NLL (a robust likelihood's cap at 1 - delta shows in the first part,
  confident mistakes in the second).

The accuracy and NLL are recomputed from the probabilities and must agree with the unit's own (a run whose units
disagree is refused: its probabilities are not the ones it scored).

With ``--paired OTHER`` each method of the run is set against each of another run's (a method one run trained
longer, another run's baseline) on the splits both ran, split by split: the difference of accuracy, NLL and ECE with
its 95 % t interval over those splits.  Methods run on the same splits move together, so the paired interval is the
one that resolves their difference; a split whose test rows differ between the runs is refused.

    PYTHONPATH=$PWD python lab/studies/bench_paper_runs.py runs/papers/002_izmailov_2 \\
        --json lab/studies/records/papers/paper002_izmailov_2.json

With ``--timed FILE`` the record keeps the run's command's wall and user CPU time, as ``/usr/bin/time`` wrote them
for that command (``/usr/bin/time -f '{"wall_seconds": %e, "user_seconds": %U}' -o FILE gpal workflow ...``): the
units keep only their own training seconds, and a page that states how long the run took cites the record.

With ``--record PATH --study YAML`` the measures become a table a papers claim reads (`result_records`, under
lab/pages/records/papers/tables/): one table per data set, each method's test accuracy, NLL and ECE as mean ±
SE over its splits, the splits in ``settings.splits.<data set>``.  ``run`` may also be a record this script kept
(``--json``), so the table is remade from what is kept without the run's folder::

    PYTHONPATH=$PWD python lab/studies/bench_paper_runs.py lab/studies/records/papers/paper004_nll_repeats.json \\
        --record lab/pages/records/papers/tables/paper004_nll_repeats.json --study lab/studies/paper004_nll_repeats.yaml
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from shared import code_commit, outputs_commit, paired_t, record_from_kept  # the script's folder, first on its path

#: The run's record, which names its workflow, command and commit (`gpal.workflows.measurements`).
RUN_RECORD = "measurements.json"
#: How closely a unit's own NLL and accuracy must match the ones recomputed from its probabilities.
TOLERANCE = 1e-6
#: Per split and per method, the measures averaged over the splits (and their digits in the printed tables).
SUMMARISED = {"accuracy": 3, "nll": 3, "ece": 3, "train_seconds": 1}
#: The digits of a table record's cells: the claims judge from them, so more than the printed tables show.
RECORD_DIGITS = 4


def split_measures(unit: dict[str, Any], path: Path, ece: Mapping[str, Any] | None = None,
                   method: str = "") -> dict[str, float]:
    """One unit's measures from its test rows' probabilities, checked against the unit's own NLL and error; the ECE
    as the run declares it for ``method`` (its workflow's ``ece`` block, a paper's definition; None: gpal's)."""
    from gpal.workflows.compare import method_ece

    try:
        y = np.asarray(unit["y_true"], dtype=np.int64)
        proba = np.asarray(unit["proba"], dtype=np.float64)
        own_nll, own_error, seconds = float(unit["nll"]), float(unit["error"]), float(unit["train_seconds"])
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"{path}: not a compare unit (expected y_true, proba, nll, error, train_seconds): {exc}") from None
    if proba.ndim != 2 or proba.shape[0] != y.size or y.size == 0:
        raise ValueError(f"{path}: proba must be one row of class probabilities per test row, got shape "
                         f"{proba.shape} for {y.size} labels")
    cost = -np.log(np.maximum(proba[np.arange(y.size), y], np.finfo(float).tiny))
    right = proba.argmax(axis=1) == y
    measures = {"accuracy": float(right.mean()), "nll": float(cost.mean()),
                "ece": method_ece(y, proba, ece or {}, method), "train_seconds": seconds,
                "confidence_mean": float(proba.max(axis=1).mean()), "confidence_max": float(proba.max()),
                "nll_correct_rows": float(cost[right].sum() / y.size),
                "nll_wrong_rows": float(cost[~right].sum() / y.size), "n_test": int(y.size)}
    if abs(measures["nll"] - own_nll) > TOLERANCE * max(1.0, own_nll) or \
            abs(1.0 - measures["accuracy"] - own_error) > TOLERANCE:
        raise ValueError(f"{path}: its probabilities give NLL {measures['nll']:.6f} and error "
                         f"{1 - measures['accuracy']:.6f}, the unit records {own_nll:.6f} and {own_error:.6f}")
    return measures


def read_run(run: Path) -> dict[str, Any]:
    """The run's workflow, command and commit (from its record) and every data set's methods, split by split."""
    record_path = run / RUN_RECORD
    if not record_path.is_file():
        raise ValueError(f"{run}: no {RUN_RECORD}; expected the folder of a papers workflow's run "
                         "(gpal workflow papers/<name> --out FOLDER)")
    record = json.loads(record_path.read_text(encoding="utf-8"))
    order = list(record.get("settings", {}).get("methods", []))  # the workflow's order, as its own tables
    ece = record.get("settings", {}).get("ece")  # the ECE the run's workflow declares (a record before it: gpal's)
    datasets: dict[str, dict[str, Any]] = {}
    # a data set's units, or with injected noise a level's (<data set>/noise_<level>/units, named so)
    for folder in sorted({p.parent for p in (*run.glob("*/units"), *run.glob("*/*/units")) if p.is_dir()}):
        name = folder.relative_to(run).as_posix()
        method_dirs = sorted((p for p in (folder / "units").iterdir() if p.is_dir()),
                             key=lambda p: (order.index(p.name) if p.name in order else len(order), p.name))
        for method_dir in method_dirs:
            units = sorted(method_dir.glob("split_*.json"))
            splits = {int(p.stem.split("_")[1]): split_measures(json.loads(p.read_text(encoding="utf-8")), p, ece,
                                                                      method_dir.name)
                      for p in units}
            if splits:
                datasets.setdefault(name, {})[method_dir.name] = {"splits": splits}
    if not datasets:
        raise ValueError(f"{run}: no finished units (expected <data set>[/noise_<level>]/units/<method>/split_*.json)")
    for methods in datasets.values():
        for entry in methods.values():
            values = {k: np.array([s[k] for s in entry["splits"].values()]) for k in SUMMARISED}
            entry["summary"] = {k: {"mean": float(v.mean()),
                                    "se": float(v.std(ddof=1) / np.sqrt(v.size)) if v.size > 1 else None}
                                for k, v in values.items()}
    return {"workflow": record.get("workflow"), "command": record.get("command"), "run_commit": record.get("commit"),
            "run": run.as_posix(), "script_commit": code_commit(), "datasets": datasets}


def _test_rows(unit_path: Path) -> list:
    """The test rows a unit scored: its ids where it keeps them, else its labels."""
    unit = json.loads(unit_path.read_text(encoding="utf-8"))
    return unit["test_ids"] if "test_ids" in unit else unit["y_true"]


def paired(run: Path, other: Path) -> dict[str, Any]:
    """Each method of ``run`` minus each of ``other``'s, per data set both ran, on the splits both ran: accuracy, NLL
    and ECE, per split and as mean, SE and 95 % t interval over the splits (`shared.paired_t`)."""
    mine, theirs = read_run(run), read_run(other)
    rows, too_few = [], []
    for name in (n for n in mine["datasets"] if n in theirs["datasets"]):
        for a, entry_a in mine["datasets"][name].items():
            for b, entry_b in theirs["datasets"][name].items():
                shared = sorted(set(entry_a["splits"]) & set(entry_b["splits"]))
                if len(shared) < 2:  # no interval: said in the output rather than averaged
                    too_few.append({"dataset": name, "method": a, "against": b, "splits": shared})
                    continue
                for k in shared:
                    unit = f"split_{k:04d}.json"
                    if _test_rows(run / name / "units" / a / unit) != _test_rows(other / name / "units" / b / unit):
                        raise ValueError(f"{run / name / 'units' / a / unit} and {other / name / 'units' / b / unit}: "
                                         "different test rows; expected the same split of the same data")
                for key in ("accuracy", "nll", "ece"):
                    diffs = [entry_a["splits"][k][key] - entry_b["splits"][k][key] for k in shared]
                    mean, se, low, high = paired_t(diffs)
                    rows.append({"dataset": name, "method": a, "against": b, "metric": key, "splits": shared,
                                 "per_split": diffs, "mean": mean, "se": se, "low": low, "high": high})
    if not rows:
        raise ValueError(f"{run} and {other}: no method pair shares two or more splits of a data set; a paired "
                         "interval needs them")
    return {"run": theirs["run"], "command": theirs["command"], "run_commit": theirs["run_commit"], "rows": rows,
            "fewer_than_two_splits": too_few}


def command_time(path: Path) -> dict[str, float]:
    """The wall and user CPU seconds ``/usr/bin/time`` wrote for the run's command."""
    try:
        timed = json.loads(path.read_text(encoding="utf-8"))
        wall, user = float(timed["wall_seconds"]), float(timed["user_seconds"])
    except (OSError, json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"{path}: not the time of a command (expected /usr/bin/time -f "
                         f"'{{\"wall_seconds\": %e, \"user_seconds\": %U}}' -o {path}): {exc}") from None
    return {"wall_seconds": wall, "user_seconds": user}


def _cell(summary: dict[str, Any], digits: int) -> str:
    se = "n/a" if summary["se"] is None else f"{summary['se']:.{digits}f}"
    return f"{summary['mean']:.{digits}f} ± {se}"


def tables(result: dict[str, Any]) -> str:
    """The per-method table and the per-split one, in Markdown."""
    timed = result.get("command_time")
    took = f"; it took {timed['wall_seconds']:.0f} s of wall time, {timed['user_seconds']:.0f} s of user CPU" if timed else ""
    lines = [f"{result['command']} (commit {result['run_commit']}), read from {result['run']}{took}", "",
             "| data set | method | splits | test accuracy | test NLL | ECE | train s |",
             "|---|---|---:|---|---|---|---|"]
    for name, methods in result["datasets"].items():
        for method, entry in methods.items():
            cells = " | ".join(_cell(entry["summary"][k], d) for k, d in SUMMARISED.items())
            lines.append(f"| {name} | {method} | {len(entry['splits'])} | {cells} |")
    lines += ["", "| data set | method | split | accuracy | NLL | NLL from correct rows | NLL from wrong rows "
              "| ECE | largest probability (mean / max) |", "|---|---|---:|---:|---:|---:|---:|---:|---|"]
    for name, methods in result["datasets"].items():
        for method, entry in methods.items():
            for k, s in entry["splits"].items():
                lines.append(f"| {name} | {method} | {k} | {s['accuracy']:.4f} | {s['nll']:.4f} "
                             f"| {s['nll_correct_rows']:.4f} | {s['nll_wrong_rows']:.4f} | {s['ece']:.4f} "
                             f"| {s['confidence_mean']:.3f} / {s['confidence_max']:.3f} |")
    if "paired" in result:
        against = result["paired"]
        lines += ["", f"Paired against {against['command']} (commit {against['run_commit']}), read from {against['run']}:",
                  "", "| data set | method − other run's | metric | splits | mean ± SE | 95 % t interval |",
                  "|---|---|---|---|---|---|"]
        for r in against["rows"]:
            lines.append(f"| {r['dataset']} | {r['method']} − {r['against']} | {r['metric']} | "
                         f"{', '.join(map(str, r['splits']))} | {r['mean']:.4f} ± {r['se']:.4f} | "
                         f"[{r['low']:.4f}, {r['high']:.4f}] |")
        for r in against["fewer_than_two_splits"]:
            lines.append(f"| {r['dataset']} | {r['method']} − {r['against']} | – | {r['splits']} | no interval | – |")
    return "\n".join(lines) + "\n"


def table_record(result: dict[str, Any], study: str, command: str) -> dict[str, Any]:
    """The run's measures as a results record a papers claim reads: per data set one table of each method's
    accuracy, NLL and ECE (mean ± SE).  A claim judges a table at one count of repeats, so a data set whose methods
    ran different splits, or one split (no SE), is refused, as is a run at uncommitted source."""
    from result_records import make_record, make_table

    commit = outputs_commit([{"commit": result["run_commit"]}], [result["run"]])
    tables, splits = [], {}
    for name, methods in result["datasets"].items():
        ran = {method: sorted(entry["splits"]) for method, entry in methods.items()}
        if len({tuple(s) for s in ran.values()}) > 1 or len(next(iter(ran.values()))) < 2:
            raise ValueError(f"{result['run']}: data set {name} has splits {ran}; a table needs every method on the "
                             "same two or more splits (run the workflow with one protocol.splits for all)")
        splits[name] = len(next(iter(ran.values())))
        rows = [[method] + [_cell(entry["summary"][k], RECORD_DIGITS) for k in ("accuracy", "nll", "ece")]
                for method, entry in methods.items()]
        tables.append(make_table(["method", "gpal accuracy", "gpal NLL", "gpal ECE"], rows, "lrrr", name))
    return make_record(f"Test accuracy, NLL and ECE per data set and method of `{result['command']}`", command,
                       commit, tables, settings={"splits": splits, "script_commit": result["script_commit"]},
                       source=f"the units of {result['run']} (its command {result['command']})", workflow=study)


def main(argv: list[str] | None = None) -> int:
    from gpal.files import write_json_atomic

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run", type=Path, help="the output folder of a papers workflow's run, or a record this "
                        "script kept (--json) to remake --record from")
    parser.add_argument("--json", help="write the measures here (a record under lab/studies/records/papers/)")
    parser.add_argument("--paired", type=Path, help="another papers run on the same splits: each method of the run "
                        "minus each of its, split by split")
    parser.add_argument("--timed", type=Path, help="the time /usr/bin/time wrote for the run's command, kept in the "
                        "record (its JSON format: the module's docstring)")
    parser.add_argument("--record", help="write the measures as a table a papers claim reads here "
                        "(lab/pages/records/papers/tables/<name>.json); needs --study")
    parser.add_argument("--study", help="the study declaration (lab/studies/<name>.yaml) that lists --record")
    args = parser.parse_args(argv)
    if bool(args.record) != bool(args.study):
        parser.error("--record and --study go together: the table record names the study that declares it")
    kept = args.run.suffix == ".json" and args.run.is_file()
    if kept and (args.paired or args.json or args.timed):
        parser.error(f"{args.run} is a kept record: it remakes --record only (--paired, --timed and --json read a "
                     "run folder)")
    for folder in (args.paired,) if kept else (args.run, args.paired):
        if folder is not None and not folder.is_dir():
            parser.error(f"{folder} is not a folder: expected a papers workflow's output folder"
                         + ("" if folder is args.paired else " or a record this script kept (--json)"))
    try:
        if kept:
            result = json.loads(args.run.read_text(encoding="utf-8"))
            if not isinstance(result, dict) or not {"run", "run_commit", "command", "datasets"} <= set(result):
                raise ValueError(f"{args.run}: not a record of this script (keys run, run_commit, command, datasets)")
        else:
            result = read_run(args.run)
            if args.paired is not None:
                result["paired"] = paired(args.run, args.paired)
            if args.timed is not None:
                result["command_time"] = command_time(args.timed)
    except ValueError as exc:
        parser.error(str(exc))
    sys.stdout.write(tables(result))
    if args.json:
        write_json_atomic(args.json, result)
        print(f"recorded {args.json}")
    if args.record:
        command = "PYTHONPATH=$PWD python lab/studies/bench_paper_runs.py " + shlex.join(
            sys.argv[1:] if argv is None else argv)
        record_from_kept(parser, args.record, lambda: table_record(result, args.study, command))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""``gpal predict``'s peak memory and time on a catalog of many rows: 4FGL-DR4's rows repeated, only the columns the
main job's model reads and those naming and placing a source.

Writes the catalog into a temporary folder (never into the repository; 222 MB for 10^6 rows), runs
``gpal predict MODEL --catalog it --select all`` under ``/usr/bin/time -v`` and prints the rows, the peak resident
memory, the wall and CPU seconds and the predicted classes; ``--keep`` leaves the catalog for another run.
``--block-rows N`` runs `gpal predict`'s functions with blocks of N rows instead (the figures `BLOCK_ROWS` was chosen
by), ``--whole`` makes the table whole (`predict_catalog`, the path of ``--pool-prior`` without the prior)::

    gpal classify --out /tmp/mj --no-progress
    python lab/studies/bench_predict_memory.py /tmp/mj --rows 1000000
    python lab/studies/bench_predict_memory.py /tmp/mj --rows 100000 --block-rows 16384
    python lab/studies/bench_predict_memory.py --summarize lab/studies/records/predict_memory --record FILE

``--json`` keeps a run's figures (with the commit that ran and the model's classes), in a folder under a name of its
rows and path; ``--record`` and ``--summarize`` make the results page's record from kept runs, a row each.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any


from shared import (
    kept_output, output_field, output_files, outputs_commit, read_outputs, record_from_kept, run_commit,
    tiled_catalog)

#: The study's declaration, which the results page's record (`results_record`) names.
WORKFLOW = "lab/studies/predict_memory.yaml"

#: The columns written: the main job's features' (FL16Y's preset on DR4's layout) and what names and places a source.
COLUMNS = ("Source_Name", "CLASS1", "RAJ2000", "DEJ2000", "GLON", "GLAT", "Signif_Avg", "Flux1000", "Unc_Flux1000",
           "Energy_Flux100", "Unc_Energy_Flux100", "Pivot_Energy", "LP_Index", "Unc_LP_Index", "PL_Index",
           "Unc_PL_Index", "LP_SigCurv", "LP_beta", "Unc_LP_beta", "Variability_Index", "Frac_Variability",
           "Unc_Frac_Variability", "Flux_Band", "Unc_Flux_Band")


#: `gpal predict`'s functions with a given block size (an integer) or the table made whole ("whole"); their output
#: is the command's, but for the line of counts it prints.
_DRIVER = """
import sys, warnings
from gpal.catalog_jobs.prediction import predict_catalog, predict_catalog_blocks
from gpal.catalog_jobs.tables import write_probability_blocks, write_probability_table
warnings.simplefilter("ignore")
model, catalog, rows, out = sys.argv[1:5]
if rows == "whole":
    write_probability_table(predict_catalog(model, catalog, "all", progress=False, pool_prior=False), out)
else:
    write_probability_blocks(predict_catalog_blocks(model, catalog, "all", progress=False, rows=int(rows)), out)
"""


def measured(report: str) -> dict[str, float]:
    """Peak resident memory (GiB), wall and CPU seconds from ``/usr/bin/time -v``'s report."""
    def value(label: str) -> str:
        return re.search(rf"{re.escape(label)}: (.+)", report).group(1).strip()

    parts = [float(p) for p in value("Elapsed (wall clock) time (h:mm:ss or m:ss)").split(":")]
    wall = sum(p * 60 ** k for k, p in enumerate(reversed(parts)))
    return {"peak_gib": int(value("Maximum resident set size (kbytes)")) / 2**20, "wall_s": wall,
            "cpu_s": float(value("User time (seconds)")) + float(value("System time (seconds)"))}


def _rows(n: int) -> str:
    """A row count as the page writes it: 10^6, 5 x 10^4, else with spaces between thousands."""
    digits = len(str(n)) - 1
    lead, rest = divmod(n, 10 ** digits)
    if rest == 0 and digits >= 3:
        return f"10^{digits}" if lead == 1 else f"{lead} x 10^{digits}"
    return f"{n:,}".replace(",", " ")


def _seconds(value: float) -> str:
    return f"{value:.0f}" if value >= 100 else f"{value:.1f}"


def results_record(paths: list[str]) -> dict[str, Any]:
    """The results page's record from kept runs (``--json``), a row each in the order given: rows, the path that
    predicted (gpal predict's own blocks, blocks of a given size, the whole table), the model's classes, the peak
    resident memory and the wall and CPU seconds."""
    from result_records import make_record, make_table

    outputs = read_outputs(paths)
    commit = outputs_commit(outputs, paths)
    models = list(dict.fromkeys(str(output_field(raw, path, "model")) for raw, path in zip(outputs, paths)))
    if len(models) > 1:
        raise ValueError(f"the runs {list(map(str, paths))} predicted with the models {models}: one record is one model")
    rows, loads, lines = [], [], []
    for raw, path in zip(outputs, paths):
        how = output_field(raw, path, "path")
        blocks = "gpal predict (its blocks)" if how == "predict" else "whole table" if how == "whole" else \
            f"blocks of {int(how):,}".replace(",", " ")
        m = output_field(raw, path, "measured")
        rows.append([_rows(int(output_field(raw, path, "rows"))), blocks,
                     f"{len(output_field(raw, path, 'classes'))} classes", f"{output_field(m, path, 'peak_gib'):.2f} GiB",
                     _seconds(output_field(m, path, "wall_s")), _seconds(output_field(m, path, "cpu_s"))])
        loads.append(float(output_field(raw, path, "load_average_at_start")[0]))
        option = "" if how == "predict" else " --whole" if how == "whole" else f" --block-rows {how}"
        kept = Path(path).parent if Path(path).name == _kept_name(raw["rows"], how) else path
        lines.append(f"python lab/studies/bench_predict_memory.py {models[0]} --rows {raw['rows']}{option} "
                     f"--json {kept}")
    low, high = f"{min(loads):.1f}", f"{max(loads):.1f}"
    table = make_table(["rows", "path", "model", "peak resident memory", "wall s", "CPU s (user + system)"], rows,
                       "lllrrr", caption=(
                           f"`gpal predict {models[0]} --catalog repeated.fits --select all` under `/usr/bin/time -v` "
                           "(or its functions, as `--block-rows` and `--whole` run them), the model a folder of the main "
                           "job (`gpal classify`), the catalog 4FGL-DR4's rows repeated; one run each, one after another "
                           f"(load average {low if low == high else f'{low}-{high}'} at their starts):"))
    folders = {str(Path(p).parent) for p in paths}
    # runs kept in one folder: the last run's command, given --record, makes the record from all of them
    kept = len(folders) == 1 and all(Path(p).name == _kept_name(raw["rows"], raw["path"]) for raw, p in zip(outputs, paths))
    summary = [] if len(paths) == 1 or kept else \
        [f"python lab/studies/bench_predict_memory.py --summarize {' '.join(map(str, paths))}"]
    command = "\n".join([f"gpal classify --out {models[0]} --no-progress", *lines, *summary])
    return make_record("Prediction on a million-row catalog", command, commit, [table],
                       source=f"the runs' outputs {', '.join(map(str, paths))}", workflow=WORKFLOW)


def _kept_name(rows: int, how: Any) -> str:
    """A run's file in the study's folder of kept runs: its rows and path, so a rerun replaces it."""
    return f"rows{rows}_{'blocks' + str(how) if isinstance(how, int) else how}.json"


def _classes(model: str) -> list[str]:
    """The classes the model folder was trained on (its training record), for the record to say which model ran."""
    import json

    from gpal.catalog_jobs.layout import TRAINING_RECORD, located

    path = located(model, TRAINING_RECORD)
    try:
        return list(json.loads(path.read_text(encoding="utf-8"))["classes"])
    except (OSError, ValueError, KeyError) as exc:
        raise SystemExit(f"{model}: no training record with its classes at {path} ({exc}); expected a gpal classify "
                         "folder") from None


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", nargs="?", help="a gpal classify (or gpal train) folder of the main job's features")
    parser.add_argument("--rows", type=int, default=10**6, help="catalog rows (default 10^6)")
    parser.add_argument("--keep", type=Path, default=None, help="write the catalog here and keep it (reused if there)")
    how = parser.add_mutually_exclusive_group()
    how.add_argument("--block-rows", type=int, default=None, help="blocks of this many catalog rows (default: "
                     "gpal predict itself, gpal.catalog_jobs.prediction.BLOCK_ROWS)")
    how.add_argument("--whole", action="store_true", help="the table made whole (predict_catalog)")
    parser.add_argument("--json", help="keep the run's figures in this JSON file (a folder: rows<N>_<path>.json in it, "
                        "and --record makes the record from every run there)")
    parser.add_argument("--record", help="write the results page's record to this file from the run's --json or "
                        "--summarize's")
    parser.add_argument("--summarize", nargs="+", metavar="JSON", help="run nothing: the record from these kept runs "
                        "(a row each, in this order), with --record")
    args = parser.parse_args(argv)
    if args.record and not (args.summarize or args.json) or args.summarize and not args.record:
        parser.error("--record needs the run's --json or kept runs (--summarize JSON ...); --summarize needs --record")
    from result_records import outcome, write_record

    if args.summarize:
        record_from_kept(parser, args.record, lambda: results_record(output_files(args.summarize)))
        return
    if args.model is None:
        parser.error("give the model folder to predict with (a gpal classify folder)")

    commit = run_commit(parser, bool(args.record))
    classes = _classes(args.model)
    load = os.getloadavg()
    how = "whole" if args.whole else "predict" if args.block_rows is None else args.block_rows
    folder = args.json if args.json and Path(args.json).is_dir() else None
    args.json = kept_output(args.json, _kept_name(args.rows, how))
    with tempfile.TemporaryDirectory() as tmp:
        catalog = args.keep or Path(tmp) / f"repeated_{args.rows}.fits"
        if not catalog.is_file():
            tiled_catalog("4FGL-DR4", args.rows, catalog, columns=COLUMNS)
        out = str(Path(tmp) / "t.csv")
        if args.whole or args.block_rows is not None:
            command = ["/usr/bin/time", "-v", sys.executable, "-c", _DRIVER, args.model, str(catalog),
                       "whole" if args.whole else str(args.block_rows), out]
        else:
            command = ["/usr/bin/time", "-v", sys.executable, "-m", "gpal.cli", "predict", args.model, "--catalog",
                       str(catalog), "--select", "all", "--no-progress", "--out", out]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode:
            raise SystemExit(f"gpal predict failed:\n{done.stderr}")
        m = measured(done.stderr)
        print(f"{args.rows} rows: peak {m['peak_gib']:.2f} GiB, {m['wall_s']:.0f} s wall, {m['cpu_s']:.0f} CPU s; "
              f"{done.stdout.strip()}")
    if args.json:
        from gpal.files import write_json_atomic

        write_json_atomic(args.json, {"commit": commit, "model": args.model, "rows": args.rows, "path": how, "classes": classes,
                                      "load_average_at_start": load, "measured": m})
    if args.record:  # from every run kept in the folder, else from this run alone
        print(outcome(write_record(args.record, results_record(output_files([folder or args.json])))))


if __name__ == "__main__":
    main()

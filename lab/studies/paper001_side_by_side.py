#!/usr/bin/env python
"""Paper 001's Tables 5-6 beside gpal's numbers on the authors' settings and the authors' own code's: the table the
papers page's headline reads, made from kept records, run nothing.

gpal's numbers come from kept records of ``gpal workflow papers/001_uci_input_noise`` (`labkit.paper_comparison`,
which also holds the paper's Table 5-6 value of each row).  A record speaks for a method only where it ran with
the parameters the workflow gives that method today, every one of the authors' settings gpal has
(`gpal.workflows.methods.classifier_params` of the record's ``noisy_input`` block against the shipped workflow's):
a run made before an option existed, or with gpal's own choice, is left out for that method, and the record says
which and why.  A (setting, method) two records measure at those settings is refused: which run speaks for it
would be a choice the page does not show.

The authors' code's numbers come from the kept records of the study ``paper001_authors``
(`bench_paper001_authors.py`), each unit one fit of one method on one split of the authors' own copy of a data set
at one injected noise level; its side "gpal as authors" is gpal with the workflow's parameters fitted on those same
rows and splits.  Every (data set, level)
the records hold becomes columns of its table (a table of its own, gpal's workflow "not run", where no workflow run
at the authors' settings has it), whatever the splits, so more splits or levels in those records need only this
command again::

    PYTHONPATH=$PWD/lab/studies python lab/studies/paper001_side_by_side.py \\
        --record lab/pages/records/papers/tables/paper001_side_by_side.json \\
        --workflow-records lab/studies/records/papers/paper001_uci_waveform_authors_q.json ... \\
        --authors-records lab/studies/records/papers/paper001_authors_waveform.json ...
"""

from __future__ import annotations

import argparse
import json
import shlex
from pathlib import Path
from typing import Any, Iterable, Mapping

import numpy as np

from shared import ROOT, record_from_kept

WORKFLOW = "gpal/workflows/files/papers/001_uci_input_noise.yaml"
METHODS = ("MGP", "NIMGP", "NIMGP-NN", "NIMGP-FO")
#: The record's metric names -> the page's (the headline reads "gpal NLL", "paper NLL", "authors' code NLL").
METRICS = {"nll": "NLL", "error": "error"}
#: The authors'-code study's sides shown: their code, and gpal with the workflow's parameters on their rows.
SIDES = {"authors": "authors' code", "gpal as authors": "gpal, the authors' rows"}


def _mean_se(values: Iterable[float]) -> str:
    """'mean ± SE (n)' over the splits, as the papers page shows a cell."""
    v = np.asarray(list(values), dtype=float)
    se = f" ± {v.std(ddof=1) / np.sqrt(v.size):.3f}" if v.size > 1 else ""
    return f"{v.mean():.3f}{se} ({v.size})"


def _level(setting: str) -> tuple[str, float]:
    """'waveform/0.25' -> ('waveform', 0.25)."""
    dataset, _, level = setting.partition("/")
    return dataset, float(level)


def caption(dataset: str, level: float) -> str:
    return f"{dataset}, injected noise {level:g}"


def _load(path: str, keys: set[str], what: str) -> dict[str, Any]:
    try:
        kept = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: not a readable JSON record ({exc})") from None
    if not isinstance(kept, dict) or not keys <= set(kept):
        raise ValueError(f"{path}: not {what} (keys {sorted(keys)}); got keys "
                         f"{sorted(kept) if isinstance(kept, dict) else type(kept).__name__}")
    return kept


def workflow_parameters(settings: Mapping[str, Any], method: str) -> dict[str, Any]:
    """The NoisyGPClassifier parameters a workflow's ``settings`` give ``method``: its noisy_input block with the
    method's own ``method_options`` in place (on waveform's 900 of 1000 rows: what matters is that two give the
    same)."""
    from gpal.workflows.compare import method_spec

    return method_spec(method, 900, 1, 1, 1, dict(settings["noisy_input"]), None,
                       (settings.get("method_options") or {}).get(method), 1000)


def authors_settings() -> dict[str, Any]:
    """The shipped workflow's settings, its defaults filled: every setting of the authors' gpal has."""
    from gpal.workflows import load_workflow

    return dict(load_workflow(ROOT / WORKFLOW).config)


def gpal_rows(paths: list[str], reference: Mapping[str, Any]
              ) -> tuple[dict[tuple, dict], dict[tuple, dict], dict[str, list[str]]]:
    """(setting, method, metric) -> the record's row, from the records' methods run at ``reference``'s parameters;
    the same key -> the row holding the paper's number (every record holds all of Tables 5-6, run or not); and per
    record the methods left out, with the parameters that differ."""
    rows: dict[tuple, dict] = {}
    published: dict[tuple, dict] = {}
    taken: dict[tuple, str] = {}
    left_out: dict[str, list[str]] = {}
    for path in paths:
        kept = _load(path, {"settings", "rows", "commit", "source"}, "a paper comparison record")
        for row in kept["rows"]:
            published.setdefault((row["setting"], row["method"], row["metric"]), row)
        ran = kept["settings"]
        if ran.get("noisy_input") is None:
            raise ValueError(f"{path}: its settings hold no 'noisy_input' block; it is not a run of {WORKFLOW}")
        for method in kept["settings"]["methods"]:
            want, got = workflow_parameters(reference, method), workflow_parameters(ran, method)
            differ = sorted(k for k in set(want) | set(got) if want.get(k) != got.get(k))
            if differ:
                left_out.setdefault(path, []).append(f"{method} ({', '.join(differ)} not the workflow's)")
                continue
            for row in kept["rows"]:
                if row["method"] != method or row["metric"] not in METRICS or not row["n"]:
                    continue
                key = (row["setting"], method, row["metric"])
                if key in taken:
                    raise ValueError(f"{path}: {'/'.join(key)} at the authors' settings is measured by {taken[key]} "
                                     "too; keep one record of it")
                taken[key], rows[key] = path, row
    if not rows:
        raise ValueError(f"none of {paths} ran a method with the workflow's settings; nothing to tabulate")
    return rows, published, left_out


def authors_units(paths: list[str]) -> dict[tuple, dict[str, list[float]]]:
    """(dataset, level, method, side, metric) -> the values over the splits, from the authors'-code study's records;
    a fit two records hold is refused."""
    out: dict[tuple, dict[int, float]] = {}
    for path in paths:
        kept = _load(path, {"units", "authors_code", "commit"}, "a record of bench_paper001_authors.py")
        for unit in kept["units"]:
            if unit["side"] not in SIDES:
                continue
            for metric in METRICS:
                key = (unit["dataset"], float(unit["level"]), unit["method"], unit["side"], metric)
                if unit["split"] in out.setdefault(key, {}):
                    raise ValueError(f"{path}: split {unit['split']} of {unit['method']} ({unit['side']}) on "
                                     f"{unit['dataset']} at {unit['level']} is in another kept record too; keep one")
                out[key][unit["split"]] = float(unit[metric])
    return {key: [v for _, v in sorted(by_split.items())] for key, by_split in out.items()}


def _paper(row: Mapping[str, Any]) -> str:
    se = row.get("paper_se")
    return f"{row['paper_mean']:g}" + ("" if se is None else f" ± {se:g}")


def kept_record(workflow_paths: list[str], authors_paths: list[str]) -> dict[str, Any]:
    """The results record: a table per (data set, injected noise) gpal ran at the authors' settings, each method's
    paper value, gpal's, and where the authors' code ran that setting its value and gpal's on the same rows."""
    from result_records import make_record, make_table

    rows, published, left_out = gpal_rows(workflow_paths, authors_settings())
    theirs = authors_units(authors_paths)
    # a setting only the authors' code ran gets its table too, gpal's cells "not run"
    ran = [f"{d}/{lv:g}" for d, lv in dict.fromkeys((d, lv) for d, lv, *_ in theirs)]
    unknown = sorted(s for s in ran if (s, "MGP", "nll") not in published)
    if unknown:
        raise ValueError(f"the authors' code ran {unknown}, which Tables 5-6 (as the kept workflow records hold "
                         "them) do not have")
    tables, splits = [], {}
    for setting in dict.fromkeys([*(s for s, _, _ in rows), *ran]):
        dataset, level = _level(setting)
        sides = [side for side in SIDES if any((dataset, level, m, side, "nll") in theirs for m in METHODS)]
        columns = ["method"]
        for metric in METRICS.values():
            columns += [f"paper {metric}", f"gpal {metric}"] + [f"{SIDES[side]} {metric}" for side in sides]
        table_rows = []
        for method in METHODS:
            if (setting, method, "nll") not in rows and not any(
                    (dataset, level, method, side, "nll") in theirs for side in sides):
                continue
            cells = [method]
            for metric in METRICS:
                cells += [_paper(published[(setting, method, metric)]), _gpal_cell(rows.get((setting, method, metric)))]
                cells += [_mean_se(theirs[(dataset, level, method, side, metric)])
                          if (dataset, level, method, side, metric) in theirs else "not run" for side in sides]
            table_rows.append(cells)
        name = caption(dataset, level)
        splits[name] = sorted({rows[k]["n"] for k in rows if k[0] == setting})
        tables.append(make_table(columns, table_rows, "l" + "r" * (len(columns) - 1), name))
    command = ("PYTHONPATH=$PWD/lab/studies python lab/studies/paper001_side_by_side.py --record "
               "lab/pages/records/papers/tables/paper001_side_by_side.json --workflow-records "
               + " ".join(map(shlex.quote, workflow_paths)) + " --authors-records "
               + " ".join(map(shlex.quote, authors_paths)))
    commits = [json.loads(Path(p).read_text(encoding="utf-8"))["commit"] for p in [*workflow_paths, *authors_paths]]
    return make_record("Paper 001: Tables 5-6 beside gpal on the authors' settings and the authors' own code "
                       "(GPInputNoise), test NLL and error", command, ", ".join(dict.fromkeys(commits)), tables,
                       {"workflow": WORKFLOW, "kept": [*workflow_paths, *authors_paths],
                        "left_out": left_out, "splits": splits},
                       ", ".join([*workflow_paths, *authors_paths]), workflow="lab/studies/paper001_side_by_side.yaml")


def _gpal_cell(row: Mapping[str, Any] | None) -> str:
    if row is None:
        return "not run"
    se = row.get("gpal_se")
    return f"{row['gpal_mean']:.3f}" + ("" if se is None else f" ± {se:.3f}") + f" ({row['n']})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--record", required=True, help="write the papers page's table here")
    parser.add_argument("--workflow-records", nargs="+", required=True,
                        help="kept paper comparison records of runs of papers/001_uci_input_noise")
    parser.add_argument("--authors-records", nargs="*", default=[],
                        help="kept records of bench_paper001_authors.py (the authors' code beside gpal)")
    args = parser.parse_args(argv)
    record_from_kept(parser, args.record, lambda: kept_record(args.workflow_records, args.authors_records))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

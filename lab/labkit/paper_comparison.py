"""A paper's published numbers beside a run's measurements: the comparison table and its verdicts.

The numbers a paper prints are the lab's, one file per workflow in ``lab/pages/records/papers/published/``
(``<workflow>.yaml``, named by the workflow file's stem), in one format::

    workflow: gpal/workflows/files/papers/001_uci_input_noise.yaml
    source: {paper: "Villacampa-Calvo et al. (2021)", table: "Table 9", spread: SE, repeats: 100,
             budget: {splits: 100, epochs: 750}}
    values:                          # setting -> method -> metric -> [mean, spread] (or a bare mean)
      4FGL:
        MGP: {nll: [0.377, 0.0194], error: [0.075, 0.0043]}
    corrections:                     # optional: a printed number the comparison does not use, and why
      known/0.1/NIMGP/nll: {printed: [0.0256, 0.007], reason: "..."}
    notes: "..."                     # optional: what explains the differences, for docs/papers.md

``spread`` says what the paper's ± is: a standard error (SE) or a standard deviation (SD) over
``repeats`` splits (an SD is turned into an SE by dividing by sqrt(repeats)); ``none`` where the
paper prints means without any spread; ``rank`` where it states only an order (its text or its
bars, no number): the values are then ranks, 1 the best, equal ranks for methods it calls alike.
Under ``none`` and ``rank`` a value is a bare number, and the verdict is the ordering's.  A *setting* is
what one row of the paper's table varies (a data set, a noise level); each workflow kind names its
settings, methods and metrics (its ``produces(config)``), and `check_reference` refuses any key the
workflow file would not produce (``lab/tests/test_paper_comparison.py`` holds every published file to it),
so a typo is an error and not a blank cell.

A run of the workflow writes its values per repeat (``measurements.json``, `gpal.workflows.measurements`);
`compare_run` sets each published number against gpal's mean ± SE over the run's repeats, and
`labkit.verdicts` judges them: a value by the t interval of its difference from the paper's, an ordering
pair by pair, a pair counting only where the paper separates it and gpal's t interval resolves it.
`write_comparison` writes the table as ``paper_comparison.csv`` / ``.md`` / ``.json`` (with the
commit, the command, the settings, the budget run against the paper's and, under ``unpublished``, gpal's
mean of every measured cell the paper prints no number for); `comparison_markdown`
judges a recorded comparison anew from its numbers, so a record made under an older rule is shown
under the current one::

    python -m labkit.paper_comparison runs/001_synthetic_2d            # paper_comparison.* in the run's folder
    python -m labkit.paper_comparison runs/x --out lab/studies/records/papers/x.json
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import Counter
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd
import yaml

from gpal.files import atomic_output, write_json_atomic, write_text_atomic
from gpal.workflows.measurements import MEASUREMENTS_FILE, Produced, json_plain
from labkit.verdicts import judge_rows, orderings, pair_counts

__all__ = [
    "COMPARISON_FILE", "NO_SPREAD", "PUBLISHED", "check_reference", "compare_run", "comparison_markdown",
    "comparison_rows", "judged", "main", "parse_reference", "published", "read_published", "unpublished_rows",
    "verdict_counts", "write_comparison",
]

#: The stem of the files `write_comparison` writes.
COMPARISON_FILE = "paper_comparison"
#: The published numbers, one ``<workflow>.yaml`` per workflow file's stem.
PUBLISHED = Path(__file__).resolve().parents[1] / "pages" / "records" / "papers" / "published"
#: What a paper's ± can be (`_parse_source`); the last two carry no spread, so the ordering decides.
SPREADS = ("SE", "SD", "none", "rank")
NO_SPREAD = ("none", "rank")
_SOURCE_KEYS = {"paper", "table", "spread", "repeats", "budget"}


def _number(where: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{where} must be a finite number; got {value!r}")
    return float(value)


def _mean_spread(where: str, value: Any) -> list[float | None]:
    """``[mean, spread]``, ``[mean, null]`` or a bare mean -> ``[mean, spread or None]``."""
    if isinstance(value, (list, tuple)):
        if len(value) != 2:
            raise ValueError(f"{where} must be [mean, spread] or a bare mean; got {value!r}")
        mean = _number(f"{where}[0]", value[0])
        spread = None if value[1] is None else _number(f"{where}[1]", value[1])
        if spread is not None and spread < 0:
            raise ValueError(f"{where}[1] (the spread) must be >= 0; got {spread}")
        return [mean, spread]
    return [_number(where, value), None]


def _mapping(where: str, value: Any) -> dict[str, Any]:
    if not isinstance(value, Mapping) or not value:
        raise ValueError(f"{where} must be a non-empty mapping; got {value!r}")
    return {str(k): v for k, v in value.items()}


def _parse_source(value: Any) -> dict[str, Any]:
    source = _mapping("reference.source", value)
    missing = sorted({"paper", "table", "spread", "repeats"} - set(source))
    unknown = sorted(set(source) - _SOURCE_KEYS)
    if missing or unknown:
        raise ValueError(f"reference.source needs keys {sorted(_SOURCE_KEYS - {'budget'})} (and optionally "
                         f"'budget'); missing {missing}, unknown {unknown}")
    for key in ("paper", "table"):
        if not isinstance(source[key], str) or not source[key].strip():
            raise ValueError(f"reference.source.{key} must be a non-empty text; got {source[key]!r}")
    if source["spread"] not in SPREADS:
        raise ValueError(f"reference.source.spread must be one of {list(SPREADS)} (what the paper's ± is); "
                         f"got {source['spread']!r}")
    repeats = source["repeats"]
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise ValueError(f"reference.source.repeats (splits or problems the paper averaged) must be an integer "
                         f">= 1; got {repeats!r}")
    budget = {}
    for key, count in _mapping("reference.source.budget", source.get("budget") or {"repeats": repeats}).items():
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise ValueError(f"reference.source.budget.{key} must be an integer >= 1; got {count!r}")
        budget[key] = count
    return {**source, "budget": budget}


def parse_reference(value: Any) -> dict[str, Any]:
    """The reference block in its plain form (setting, method, metric keys as text), or ValueError naming the key."""
    block = _mapping("reference", value)
    unknown = sorted(set(block) - {"source", "values", "corrections", "notes"})
    if unknown or "source" not in block or "values" not in block:
        raise ValueError(f"reference needs 'source' and 'values' (optionally 'corrections', 'notes'); "
                         f"got keys {sorted(block)}")
    values: dict[str, dict[str, dict[str, list]]] = {}
    for setting, methods in _mapping("reference.values", block["values"]).items():
        values[setting] = {}
        for method, metrics in _mapping(f"reference.values.{setting}", methods).items():
            values[setting][method] = {
                metric: _mean_spread(f"reference.values.{setting}.{method}.{metric}", pair)
                for metric, pair in _mapping(f"reference.values.{setting}.{method}", metrics).items()
            }
    corrections = {}
    for key, fix in (block.get("corrections") or {}).items():
        where = f"reference.corrections[{key!r}]"
        fix = _mapping(where, fix)
        if set(fix) != {"printed", "reason"} or not isinstance(fix["reason"], str):
            raise ValueError(f"{where} must be {{printed: [mean, spread], reason: text}}; got {fix!r}")
        setting, method, metric = _split_key(str(key), where)
        if metric not in values.get(setting, {}).get(method, {}):
            raise ValueError(f"{where} corrects {key!r}, which reference.values does not hold")
        corrections[str(key)] = {"printed": _mean_spread(f"{where}.printed", fix["printed"]), "reason": fix["reason"]}
    notes = block.get("notes") or ""
    if not isinstance(notes, str):
        raise ValueError(f"reference.notes must be text; got {notes!r}")
    source = _parse_source(block["source"])
    if source["spread"] in NO_SPREAD:
        for setting, methods in values.items():
            for method, metrics in methods.items():
                for metric, (_, spread) in metrics.items():
                    if spread is not None:
                        raise ValueError(f"reference.values.{setting}.{method}.{metric} has a spread, but "
                                         f"reference.source.spread is {source['spread']!r} (the paper gives none): "
                                         f"write the bare {'rank' if source['spread'] == 'rank' else 'mean'}")
    return {"source": source, "values": values, "corrections": corrections, "notes": notes}


def _split_key(key: str, where: str) -> tuple[str, str, str]:
    """``"known/0.1/NIMGP/nll"`` -> ("known/0.1", "NIMGP", "nll"): the setting may itself hold '/'."""
    parts = key.rsplit("/", 2)
    if len(parts) != 3 or not all(parts):
        raise ValueError(f"{where}: a correction key is SETTING/METHOD/METRIC; got {key!r}")
    return parts[0], parts[1], parts[2]


def read_published(path: Path) -> dict[str, Any]:
    """A published-numbers file, parsed (`parse_reference`) and its ``workflow`` kept; ValueError naming the file."""
    try:
        block = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ValueError(f"{path}: cannot read the published numbers: {exc}") from None
    if not isinstance(block, dict) or not isinstance(block.get("workflow"), str):
        raise ValueError(f"{path}: expected a mapping with 'workflow' (the workflow file it sits beside), "
                         "'source' and 'values'")
    workflow = block.pop("workflow")
    try:
        return {"workflow": workflow, **parse_reference(block)}
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None


def check_reference(reference: Mapping[str, Any] | None, produced: Produced) -> None:
    """Refuse a setting, method or metric the run will not produce (ValueError naming the dotted key)."""
    if not reference:
        return
    for setting, methods in reference["values"].items():
        if setting not in produced.settings:
            raise ValueError(f"reference.values.{setting}: this workflow produces no setting {setting!r}; "
                             f"its settings are {list(produced.settings)}")
        for method, metrics in methods.items():
            if method not in produced.methods:
                raise ValueError(f"reference.values.{setting}.{method}: this workflow runs no method {method!r}; "
                                 f"its methods are {list(produced.methods)}")
            for metric in metrics:
                if metric not in produced.metrics:
                    raise ValueError(f"reference.values.{setting}.{method}.{metric}: this workflow records no "
                                     f"metric {metric!r}; its metrics are {list(produced.metrics)}")


def published(reference: Mapping[str, Any] | None, setting: str) -> dict[str, dict[str, list]]:
    """One setting's published numbers, ``method -> metric -> [mean, se]`` (SD turned into SE)."""
    if not reference:
        return {}
    source = reference["source"]
    scale = 1.0 / math.sqrt(source["repeats"]) if source["spread"] == "SD" else 1.0
    return {m: {k: [v[0], None if v[1] is None else v[1] * scale] for k, v in metrics.items()}
            for m, metrics in reference["values"].get(setting, {}).items()}


def _stat(values: Sequence[float]) -> tuple[float, float, int]:
    v = np.asarray([x for x in values if x is not None], dtype=np.float64)
    if v.size == 0:
        return math.nan, math.nan, 0
    se = float(v.std(ddof=1) / math.sqrt(v.size)) if v.size > 1 else math.nan
    return float(v.mean()), se, int(v.size)


def comparison_rows(reference: Mapping[str, Any], measured: Mapping[tuple[str, str, str], Sequence[float]]) -> list[dict]:
    """One row per published number: the paper's mean and SE, gpal's mean, SE and n, the difference and verdict.

    ``measured[(setting, method, metric)]`` holds gpal's value of every repeat (split, problem);
    the verdicts are `labkit.verdicts.judge_rows`'.
    """
    rows = []
    for setting in reference["values"]:
        for method, metrics in published(reference, setting).items():
            for metric, (p_mean, p_se) in metrics.items():
                g_mean, g_se, n = _stat(measured.get((setting, method, metric), ()))
                correction = reference["corrections"].get(f"{setting}/{method}/{metric}")
                rows.append({"setting": setting, "method": method, "metric": metric, "paper_mean": p_mean,
                             "paper_se": p_se, "gpal_mean": g_mean, "gpal_se": g_se, "n": n,
                             "printed": None if correction is None else correction["printed"][0]})
    return judge_rows(rows, reference["source"]["spread"], reference["source"]["repeats"])


def unpublished_rows(reference: Mapping[str, Any], measured: Mapping[tuple[str, str, str], Sequence[float]]) -> list[dict]:
    """gpal's mean, SE and n of every measured cell the paper prints no number for (a Bayes-optimal predictive,
    a learned variance), so a page's reading of them cites the record rather than a run folder."""
    rows = []
    for (setting, method, metric), values in measured.items():
        if metric in published(reference, setting).get(method, {}):
            continue
        mean, se, n = _stat(values)
        if n:
            rows.append({"setting": setting, "method": method, "metric": metric,
                         "gpal_mean": mean, "gpal_se": se, "n": n})
    return rows


def _decimals(x: float | None, significant: int) -> int:
    """Decimals that show ``significant`` digits of ``x`` (0 for a missing, zero or large number)."""
    if x is None or not math.isfinite(x) or x == 0:
        return 0
    return significant - 1 - math.floor(math.log10(abs(x)))


def _printed_decimals(x: float | None) -> int:
    """The decimals a published number was printed with (its shortest repr: 0.0004 -> 4, 0.16 -> 2)."""
    if x is None or not math.isfinite(x) or float(x).is_integer():
        return 0
    text = repr(float(x))
    if "e" in text:
        return _decimals(x, 2)
    return len(text.split(".")[1])


#: The most decimals a table shows, however small a number.
MAX_DECIMALS = 6


def _fmt(mean: float, se: float | None, digits: int = 3, printed: bool = False) -> str:
    """``mean ± se`` with at least ``digits`` decimals, and more where a number needs them to be read.

    A published number (``printed``) keeps every decimal the paper printed (0.0004, not 0.000);
    a measured one shows two significant digits of a small mean and one of its SE.
    """
    if mean is None or not math.isfinite(mean):
        return "–"
    if printed:
        places = max(digits, _printed_decimals(mean), _printed_decimals(se))
    else:
        places = max(digits, _decimals(mean, 2), _decimals(se, 1))
    places = min(places, MAX_DECIMALS)
    if se is None or not math.isfinite(se):
        return f"{mean:.{places}f}"
    return f"{mean:.{places}f} ± {se:.{places}f}"


def _source_line(source: Mapping[str, Any]) -> str:
    where = f"Source: {source['paper']}, {source['table']}"
    if source["spread"] == "rank":
        return (f"{where}. The paper states an order, not numbers: its column holds ranks (1 the best, equal "
                f"ranks for methods it calls alike) and only the orderings are compared.")
    if source["spread"] == "none":
        return f"{where} (means over {source['repeats']} repeats, printed without a spread)."
    return f"{where} (± is the {source['spread']} over {source['repeats']} repeats; shown here as SE)."


def budget_line(run_budget: Mapping[str, int], paper_budget: Mapping[str, int]) -> str:
    """'splits 10 (paper 100), epochs 200 (paper 750): reduced from the paper's' -- the budget run against the paper's.

    A count the paper's budget does not hold is "paper: not stated", and the run is then not called the paper's.
    """
    parts, reduced, same = [], False, True
    for key, ran in run_budget.items():
        paper = paper_budget.get(key)
        if paper is None:
            same = False
            parts.append(f"{key} {ran} (paper: not stated)")
        elif ran != paper:
            same, reduced = False, reduced or ran < paper
            parts.append(f"{key} {ran} (paper {paper})")
        else:
            parts.append(f"{key} {ran}")
    suffix = ": reduced from the paper's" if reduced else ": the paper's" if same else ""
    return ", ".join(parts) + suffix


def judged(result: Mapping[str, Any]) -> tuple[list[dict], list[dict]]:
    """A comparison's rows and orderings judged anew from its numbers (`labkit.verdicts`)."""
    spread, repeats = result["source"]["spread"], result["source"]["repeats"]
    rows = judge_rows(result["rows"], spread, repeats)
    return rows, orderings(rows, spread, repeats)


def verdict_counts(rows: Sequence[Mapping[str, Any]], ordered: Sequence[Mapping[str, Any]]) -> str:
    """'Values: differs 1, interval covers 0 3. Pairs the paper orders: 12; gpal reproduces 5, ...'."""
    values = Counter(r["verdict"] for r in rows if r["verdict"] in ("interval covers 0", "differs"))
    pairs = pair_counts(ordered)
    parts = []
    if values:
        parts.append(f"Values: differs {values['differs']}, interval covers 0 {values['interval covers 0']}.")
    one_split = pairs["one split: no interval"]
    unresolved = pairs["not resolved"] + one_split
    parts.append(f"Pairs the paper orders: {sum(pairs.values())}; gpal reproduces {pairs['reproduced']}, "
                 f"contradicts {pairs['contradicted']}, leaves {unresolved} not resolved"
                 + (f" ({one_split} at one split)" if one_split else "") + ".")
    not_run = [r for r in rows if r["verdict"] == "not run"]
    if not_run:
        settings = ", ".join(dict.fromkeys(r["setting"] for r in not_run))
        parts.append(f"Not run: {len(not_run)} published numbers ({settings}).")
    return " ".join(parts)


def comparison_markdown(result: Mapping[str, Any], digits: int = 3, not_comparable: str | None = None) -> str:
    """The comparison as Markdown: source, budget, a row per published number, the orderings, the counts.

    ``not_comparable`` is why the run's setting cannot judge the paper's numbers (another machine, say):
    every verdict then reads "not comparable", so the table says what the claim's verdict says, and the
    counts the intervals alone would give follow that reason.
    """
    source = result["source"]
    ranks = source["spread"] == "rank"
    rows, ordered = judged(result)
    counts = verdict_counts(rows, ordered)
    if not_comparable is not None:
        counts = f"Not comparable: {not_comparable}. The intervals alone would give: {counts}"
        rows = [{**r, "verdict": "not comparable"} if r["verdict"] != "not run" else r for r in rows]
    lines = [
        _source_line(source),
        f"Budget run: {budget_line(result['budget']['run'], result['budget']['paper'])}.",
        "",
        "| setting | method | metric | paper | gpal (n) | gpal − paper, 95 % t interval | verdict |",
        "|---|---|---|---|---|---:|---|",
    ]
    for r in (r for r in rows if r["verdict"] != "not run"):  # counted, with their settings, at the end
        paper = (f"rank {r['paper_mean']:g}" if ranks else _fmt(r["paper_mean"], r["paper_se"], digits, printed=True))
        if r["printed"] is not None:
            paper += f" (printed {r['printed']:g})"
        z = ("–" if not math.isfinite(r["low"]) else
             f"{_fmt(r['difference'], None, digits)} [{_fmt(r['low'], None, digits)}, {_fmt(r['high'], None, digits)}]")
        lines.append(f"| {r['setting']} | {r['method']} | {r['metric']} | {paper} | "
                     f"{_fmt(r['gpal_mean'], r['gpal_se'], digits)} ({r['n']}) | {z} | {r['verdict']} |")
    if ordered:
        lines += ["", "| setting | metric | paper's order (best first) | gpal's order | pairs the paper orders | "
                      "reproduced | contradicted | not resolved | verdict |",
                  "|---|---|---|---|---:|---:|---:|---:|---|"]
        for o in ordered:
            reversed_ = "; ".join(o["contradicted_pairs"])
            verdict = ("not comparable" if not_comparable is not None else o["verdict"]) + (
                f" (the paper's {reversed_} reversed)" if reversed_ else "")
            lines.append(f"| {o['setting']} | {o['metric']} | {o['paper']} | {o['gpal']} | {o['claimed']} | "
                         f"{o['reproduced']} | {o['contradicted']} | {o['not_resolved']} | {verdict} |")
    if result["corrections"]:
        lines += ["", "Corrected published numbers:"]
        lines += [f"- {key}: printed {_fmt(*fix['printed'], digits=0, printed=True)}; {fix['reason']}"
                  for key, fix in result["corrections"].items()]
    lines += ["", counts]
    return "\n".join(lines) + "\n"


def compare_run(run: Path, published_file: Path = PUBLISHED) -> dict[str, Any]:
    """The comparison of a run's ``measurements.json`` with its workflow's published numbers.

    ``published_file`` is the file, or a folder holding it as ``<workflow>.yaml`` (the run's workflow file's stem).
    A number the paper prints that the run did not measure (a reduced run) is a row "not run".
    """
    source = Path(run) / MEASUREMENTS_FILE
    if not source.is_file():
        raise ValueError(f"{source} does not exist: expected the folder of a `gpal workflow` run whose kind "
                         "measures repeats (toy_1d, synthetic_2d, repeated_splits, compare, epoch_times)")
    run_record = json.loads(source.read_text(encoding="utf-8"))
    path = Path(published_file)
    if path.is_dir():
        path = path / f"{run_record['workflow']}.yaml"
    if not path.is_file():
        raise ValueError(f"{path} does not exist: no published numbers for the workflow {run_record['workflow']!r} "
                         f"(those of {sorted(p.stem for p in path.parent.glob('*.yaml'))} are there)")
    reference = read_published(path)
    measured = {(v["setting"], v["method"], v["metric"]): v["values"] for v in run_record["values"]}
    rows = comparison_rows(reference, measured)
    spread, repeats = reference["source"]["spread"], reference["source"]["repeats"]
    return json_plain({
        **{k: run_record[k] for k in ("workflow", "title", "command", "commit", "settings")},
        "source": reference["source"],
        "budget": {"run": dict(run_record["budget"]), "paper": reference["source"]["budget"]},
        "rows": rows,
        "orderings": orderings(rows, spread, repeats),
        "unpublished": unpublished_rows(reference, measured),
        "corrections": reference["corrections"],
        "notes": reference["notes"],
    })




def write_comparison(out: Path, result: Mapping[str, Any]) -> Path:
    """``paper_comparison.json`` / ``.md`` / ``.csv`` in the folder ``out``; the JSON's path."""
    out = Path(out)
    write_json_atomic(out / f"{COMPARISON_FILE}.json", result)
    write_text_atomic(out / f"{COMPARISON_FILE}.md", comparison_markdown(result))
    with atomic_output(out / f"{COMPARISON_FILE}.csv") as tmp:
        pd.DataFrame(result["rows"]).to_csv(tmp, index=False)
    return out / f"{COMPARISON_FILE}.json"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m labkit.paper_comparison", description=__doc__.split("\n")[0])
    parser.add_argument("run", type=Path, help="the folder of a `gpal workflow` run (its measurements.json)")
    parser.add_argument("--published", type=Path, default=PUBLISHED,
                        help="the published numbers: a file, or a folder of <workflow>.yaml (default: the lab's, "
                             "lab/pages/records/papers/published)")
    parser.add_argument("--out", type=Path, default=None,
                        help="write the comparison's JSON to this file only (default: paper_comparison.* in the run)")
    args = parser.parse_args(argv)
    try:
        result = compare_run(args.run, args.published)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.out is None:
        print(f"wrote {write_comparison(args.run, result)}")
    else:
        write_json_atomic(args.out, result)
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What a paper's own budget would cost to run here: per record, the fits one repeat ran, the fits the paper's
repeats add, the minutes a fit took on this machine and the hours that makes on 2 cores, and the fits of the
settings the paper reports and no run covered.

A claims file declares, per record whose repeats fall short of the paper's, how long a fit took here::

    needs:
      - record: 001_uci_input_noise
        minutes: {vehicle: 2.7, waveform: 1.5, wine: 0.44}   # or one number, or train_seconds (the record's own)
        source: "vehicle's 32 fits 85 min, waveform's 24 fits 37 min, wine's 64 fits 28 min (the numbers page)"

A record no ``needs`` entry names is priced from its own mean ``train_seconds``, so that every claim left open
says what deciding it would cost (`fit_costs`, `to_resolve`); a record without times says "no time recorded".
The counts come from the records, so the table follows a new run by itself; the minutes are timings under the
machine's load of the day, stated with their source.  Two fits run at once on the 2 cores (one thread each).
A record whose run was cut in more than its repeats (fewer epochs or samples than the paper's) counts every one of
the paper's repeats, those run included: they would run again at the paper's budget.
"""

from __future__ import annotations

import math
from typing import Any, Mapping, Sequence

from labkit.claim_rules import MAX_REPEATS

#: ``minutes: train_seconds``: a fit's minutes from the record's own mean ``train_seconds`` over its methods.
FROM_RECORD = "train_seconds"
CORES = 2


def parse_needs(where: str, block: Any) -> list[dict]:
    """The ``needs`` list of a claims file, checked (ValueError naming the entry and field)."""
    if block is None:
        return []
    if not isinstance(block, list):
        raise ValueError(f"{where} must be a list of {{record, minutes, source}}; got {block!r}")
    out = []
    for i, entry in enumerate(block):
        at = f"{where}[{i}]"
        if not isinstance(entry, Mapping) or set(entry) != {"record", "minutes", "source"}:
            raise ValueError(f"{at} must have exactly 'record', 'minutes' (a number, {{part: number}} or "
                             f"{FROM_RECORD!r}) and 'source' (text); got {entry!r}")
        minutes = entry["minutes"]
        numbers = minutes.values() if isinstance(minutes, Mapping) else [minutes]
        if minutes != FROM_RECORD and not all(isinstance(m, (int, float)) and m > 0 for m in numbers):
            raise ValueError(f"{at}.minutes must be a positive number, {{part: number}} or {FROM_RECORD!r}; "
                             f"got {minutes!r}")
        out.append({"record": str(entry["record"]), "minutes": minutes, "source": str(entry["source"])})
    return out


def _repeats(budget: Mapping[str, Any]) -> int | None:
    value = budget.get("splits", budget.get("repeats"))
    return int(value) if isinstance(value, (int, float)) else None


def _reduced(budget: Mapping[str, Any]) -> list[str]:
    """The budget's keys other than its repeats where the run stopped short of the paper's (``epochs``)."""
    run, paper = budget["run"], budget["paper"]
    return sorted(k for k in set(run) & set(paper) - {"splits", "repeats"}
                  if isinstance(run[k], (int, float)) and isinstance(paper[k], (int, float)) and run[k] < paper[k])


def _ran(result: Mapping[str, Any]) -> set[tuple[str, str]]:
    return {(r["setting"], r["method"]) for r in result["rows"] if r.get("gpal_mean") is not None}


def _minutes(entry: Mapping[str, Any], part: str | None, result: Mapping[str, Any], where: str) -> float:
    minutes = entry["minutes"]
    if minutes == FROM_RECORD:
        seconds = [r["gpal_mean"] for r in result["rows"]
                   if r["metric"] == FROM_RECORD and r.get("gpal_mean") is not None]
        if not seconds:
            raise ValueError(f"{where}: minutes {FROM_RECORD!r}, but the record has no {FROM_RECORD} values")
        return sum(seconds) / len(seconds) / 60
    if isinstance(minutes, Mapping):
        if part not in minutes:
            raise ValueError(f"{where}.minutes names parts {sorted(minutes)}; the record's parts include {part!r}")
        return float(minutes[part])
    return float(minutes)


def fit_costs(needs: Sequence[Mapping[str, Any]],
              parts_of: Mapping[str, Sequence[tuple[str | None, Mapping[str, Any]]]], source: str
              ) -> dict[tuple[str, str], tuple[int, float | None]]:
    """(record, setting) -> (fits a repeat of it, minutes a fit), for every record: what one more repeat of a
    setting costs, from the part that ran it.  A record ``needs`` does not price is priced from its own mean
    ``train_seconds``; one that records no time has minutes None (`to_resolve` says so)."""
    declared = {entry["record"]: (i, entry) for i, entry in enumerate(needs)}
    out = {}
    for record, parts in parts_of.items():
        i, entry = declared.get(record, (None, {"record": record, "minutes": FROM_RECORD}))
        for part, result in parts:
            ran = _ran(result)
            # a part that timed nothing (its rows of other parts' methods "not run") is not priced from itself
            timed = entry["minutes"] != FROM_RECORD or any(r["metric"] == FROM_RECORD and r.get("gpal_mean") is not None
                                                           for r in result["rows"])
            minutes = _minutes(entry, part, result, f"{source}: needs[{i}]") if timed else None
            for setting in {s for s, _ in ran}:
                out[(record, setting)] = (sum(1 for s, _ in ran if s == setting), minutes)
    return out


def to_resolve(needed: Mapping[tuple[str, str], list], costs: Mapping[tuple[str, str], tuple[int, float | None]]
               ) -> str:
    """What more repeats of the same settings would decide the open units: "9 by 22 repeats (+240 fits, 1.1 h)",
    with the fits, and the hours on `CORES` cores where every setting's record holds a time (`fit_costs`), and how
    many no number of repeats up to `MAX_REPEATS` would decide.  ``needed`` maps (record, setting) to [repeats
    run, repeats each open unit needs (None: more than `MAX_REPEATS`)...]."""
    most, fits, minutes, beyond, decided = 0, 0, 0.0, 0, 0
    untimed, unpriced = False, set()
    for key, (ran, *needs) in needed.items():
        reachable = [n for n in needs if n is not None]
        beyond += len(needs) - len(reachable)
        decided += len(reachable)
        if not reachable:
            continue
        most = max(most, max(reachable))
        if key not in costs:
            unpriced.add(key[0])
            continue
        per_repeat, per_fit = costs[key]
        fits += (max(reachable) - ran) * per_repeat
        untimed = untimed or per_fit is None
        if per_fit is not None:
            minutes += (max(reachable) - ran) * per_repeat * per_fit
    parts = []
    if most:
        if unpriced:
            names = ", ".join(f"`{r}`" for r in sorted(unpriced))
            price = f" (not priced: {names} {'keeps' if len(unpriced) == 1 else 'keep'} no fits a repeat)"
        else:
            # the evidence names its records: an untimed one is not named again
            price = f" (+{fits} fits, " + ("no time recorded)" if untimed else f"{hours_text(minutes / 60 / CORES)} h)")
        parts.append(f"{'all' if not beyond else decided} by {most} repeats{price}")
    if beyond:
        parts.append(f"{beyond} not by {MAX_REPEATS}")
    return "; ".join(parts)


def needs_markdown(needs: Sequence[Mapping[str, Any]],
                   parts_of: Mapping[str, Sequence[tuple[str | None, Mapping[str, Any]]]], source: str) -> str:
    """The table of what the paper's repeats and settings would add, one row per record part."""
    if not needs:
        return ""
    lines = ["| record | repeats run (paper) | fits a repeat | fits to the paper's repeats | minutes a fit here | "
             f"hours on {CORES} cores | settings no run covered (their fits) |",
             "|---|---|---:|---:|---:|---:|---|"]
    sources = []
    for i, entry in enumerate(needs):
        where = f"{source}: needs[{i}]"
        if entry["record"] not in parts_of:
            raise ValueError(f"{where}.record: no record {entry['record']!r}; recorded are {sorted(parts_of)}")
        parts = parts_of[entry["record"]]
        covered = set().union(*(_ran(result) for _, result in parts))
        every = {(r["setting"], r["method"]) for _, result in parts for r in result["rows"]}
        missing = sorted({s for s, _ in every} - {s for s, _ in covered})
        missing_fits = sum(1 for s, _ in every if s in missing)  # each setting's own methods (a binary set: no GPCsm)
        rows = []
        for part, result in parts:
            run, paper = _repeats(result["budget"]["run"]), _repeats(result["budget"]["paper"])
            if run is None or paper is None:
                raise ValueError(f"{where}: record {entry['record']} ({part or 'whole'}) states no numeric splits "
                                 f"or repeats in its budget (run {result['budget']['run']}, paper "
                                 f"{result['budget']['paper']})")
            per_repeat = len(_ran(result))
            reduced = _reduced(result["budget"])
            # a cut run is not part of the paper's budget: each of its repeats runs again at the paper's settings
            more = per_repeat * (paper if reduced else max(paper - run, 0))
            minutes = _minutes(entry, part, result, where)
            name = f"`{entry['record']}`" + (f" {part}" if part else "")
            repeats = f"{run} ({paper})" + (f"; {', '.join(reduced)} cut: all rerun" if reduced else "")
            rows.append(f"| {name} | {repeats} | {per_repeat} | {more} | {minutes:.2g} | "
                        f"{hours_text(more * minutes / 60 / CORES)} |")
        uncovered = f"{len(missing)}: {', '.join(missing)} ({paper * missing_fits})" if missing else "–"
        # the settings no part ran are the record's, not a part's: on a single part's row, else on a row of their own
        if len(rows) == 1:
            lines.append(f"{rows[0]} {uncovered} |")
        else:
            lines += [f"{row} – |" for row in rows]
            if missing:
                lines.append(f"| `{entry['record']}`, no part | – | – | – | – | – | {uncovered} |")
        sources.append(f"`{entry['record']}`: {entry['source']}")
    return "\n".join(lines) + "\n\nMinutes a fit: " + "; ".join(sources) + ".\n"


def hours_text(hours: float) -> str:
    """Hours as the tables print them: two figures below 10, whole hours above."""
    if hours == 0:
        return "0"
    return f"{hours:.2g}" if hours < 10 else f"{math.ceil(hours):,}".replace(",", " ")

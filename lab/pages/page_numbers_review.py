"""A reader's review of the pins ``page_numbers.py --pin`` chose: each number shown in its page's context beside the
record fields that show it, and the reader's choices written back as checked pins.

``--pin`` picks a field by the words around a number; where two fields show the same digits (a wide table's
repeated blocks) it can pick the wrong one.  This is how a person corrects that::

    python lab/pages/page_numbers_review.py --show docs/targets.md > sheet.txt
    # write one line per pin reviewed in decisions.txt:
    #   ID ok                      the pin is the field the page means
    #   ID N                       the page means candidate N of the sheet
    #   ID field RECORD AS POINTER a field the sheet does not list (AS: x, 100x, 1-x, 100(1-x) or -x; the pointer
    #                              is the rest of the line, spaces and all)
    #   ID quote WHY               no cited record holds it: this occurrence quoted in its section with why
    python lab/pages/page_numbers_review.py --apply docs/targets.md decisions.txt

A number ``--pin`` found in no cited record is listed too, its ID ``uK``: ``uK field ...`` pins it, ``uK quote WHY``
quotes it.  Every pin a decision names is marked ``"checked": true``; ``--apply`` refuses a decision whose field
does not show the page's number, and ``page_numbers.py --check`` holds the result as it holds every pin.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import page_numbers
from page_numbers import (NUMBER, SHOWN_AS, _fields, _quote_of, _quoted, _sections, _shows, _value, candidates,
                          occurrences)

__all__ = ["apply", "sheet"]

#: How many candidate fields a sheet lists for one number (the current pin is listed whatever its rank).
_LISTED = 8


def _lines(page: str) -> dict[str, list[str]]:
    """Each record-citing section's prose lines, as ``occurrences`` numbers them."""
    return {heading: prose.splitlines() for heading, prose, _ in _sections(page)}


def _context(lines: list[str], i: int, decimal: str, n_in_line: int) -> str:
    """The decimal's line marked (»0.123«), with its table's heading row, or the prose line's neighbours."""
    line = lines[i]
    matches = [m.start() for m in NUMBER.finditer(line) if m.group() == decimal]
    start = matches[n_in_line] if n_in_line < len(matches) else -1
    marked = line[:start] + "»" + decimal + "«" + line[start + len(decimal):] if start >= 0 else line
    if line.startswith("|"):
        top = i
        while top > 0 and lines[top - 1].startswith("|"):
            top -= 1
        above = next((b for b in reversed(lines[:top]) if b.strip()), "")
        return f"  above: {above.strip()[:200]}\n  head:  {lines[top].strip()}\n  row:   {marked.strip()}"
    start = marked.find("»")
    before = " ".join(x.strip() for x in lines[max(0, i - 1):i])[-160:]
    return f"  text:  …{before} {marked[max(0, start - 240):start + 120].strip()}…"


def _describe(record: str, pointer: str) -> str:
    """A field as a reader needs it: its labels and measure (for a line of a printed table, the line)."""
    for field, value, written, measure, labels, _ in _fields(record):
        if field == pointer:
            if written is not None and "#" in pointer:
                try:
                    return f"{value!r} in line: {_line_of(record, pointer)[:220]}"
                except (KeyError, IndexError, ValueError):  # a pointer it cannot follow: its measure says enough
                    return f"{value!r}  after: {measure.strip()[-60:]}  labels: {labels.strip()[-140:]}"
            return f"{value!r}  measure: {measure.strip()[:60]}  labels: {labels.strip()[-140:]}"
    return "(no such field)"


def _line_of(record: str, pointer: str) -> str:
    """The text a ``...#k`` pointer's number is written in (a key may hold a "/": a command's arguments)."""
    rest = pointer.split("#")[0]
    target = page_numbers.ROOT / record
    if target.is_dir():  # the file within the folder first
        for file in sorted(p for p in target.rglob("*") if p.is_file()):
            within = "/" + file.relative_to(target).as_posix()
            if rest == within or rest.startswith(within + "/"):
                target, rest = file, rest[len(within):]
                break
    text = target.read_text(encoding="utf-8")
    node: object = json.loads(text) if target.suffix == ".json" else text.splitlines()
    while rest:
        rest = rest[1:]  # the "/" before the next key
        if isinstance(node, list):
            index, _, rest = rest.partition("/")
            node, rest = node[int(index)], "/" + rest if rest else ""
        else:  # the longest key the rest starts with
            key = max((k for k in node if rest == k or rest.startswith(k + "/")), key=len)
            node, rest = node[key], rest[len(key):]
    return str(node)


def sheet(page: str, all_pins: dict, everything: bool = False, listed_at_most: int = _LISTED) -> str:
    """The review sheet of ``page``'s unchecked pins in ``all_pins`` (every pin with ``everything``), each with at
    most ``listed_at_most`` candidate fields besides its current one."""
    pins = all_pins[page]["pinned"]
    index = {(p["section"], p["decimal"], p["n"]): (i, p) for i, p in enumerate(pins)}
    unpinned = {occurrence.key: k for k, (occurrence, _) in enumerate(_unpinned(page, all_pins))}
    lines = _lines(page)
    out = []
    for occurrence, cited in occurrences(page):
        section_lines = lines[occurrence.section]
        earlier = sum(m.group() == occurrence.decimal for line in section_lines[:occurrence.line[1]]
                      for m in NUMBER.finditer(line))
        context = _context(section_lines, occurrence.line[1], occurrence.decimal, max(0, occurrence.n - earlier))
        if occurrence.key in unpinned:
            out += [f"[u{unpinned[occurrence.key]}] {occurrence.decimal} in {occurrence.section!r}   (unpinned)",
                    context, "      (no field of the cited records shows it: pin a field, or quote it)", ""]
            continue
        found = index.get(occurrence.key)
        if found is None or (found[1].get("checked") and not everything):
            continue
        i, pin = found
        out.append(f"[{i}] {occurrence.decimal} in {occurrence.section!r}"
                   + ("   (checked)" if pin.get("checked") else ""))
        out.append(context)
        listed = [c for _, c in candidates(occurrence, cited)]
        current = {"record": pin["record"], "field": pin["field"], "as": pin["as"]}
        keys = [(c["record"], c["field"], c["as"]) for c in listed]
        shown = listed[:listed_at_most]
        if (pin["record"], pin["field"], pin["as"]) not in keys[:listed_at_most]:
            shown.append(current)
        for n, c in enumerate(shown):
            mark = "*" if (c["record"], c["field"], c["as"]) == (pin["record"], pin["field"], pin["as"]) else " "
            record = c["record"].replace("lab/studies/records/", "…/")
            out.append(f"   {mark}{n:>2} {record} {c['field']} ({c['as']}): {_describe(c['record'], c['field'])}")
        if len(listed) == 1:
            out.append("      (the only field of the cited records that shows it)")
        if len(listed) > listed_at_most:
            out.append(f"      … {len(listed) - listed_at_most} more fields show {occurrence.decimal}")
        out.append("")
    return "\n".join(out)


def _unpinned(page: str, all_pins: dict) -> list[tuple[page_numbers.Occurrence, list[str]]]:
    """``page``'s numbers neither pinned nor quoted, in the page's order (the sheet's ``uK``)."""
    entry = all_pins.get(page, {"quoted": [], "pinned": []})
    pinned = {(p["section"], p["decimal"], p["n"]) for p in entry["pinned"]}
    quoted = _quoted(entry)
    return [(o, cited) for o, cited in occurrences(page)
            if o.key not in pinned and _quote_of(o, quoted) is None]


def apply(page: str, all_pins: dict, decisions: str, listed_at_most: int = _LISTED) -> list[str]:
    """Apply a decisions text to ``page``'s pins in ``all_pins`` (see the module's docstring); the lines refused,
    with why."""
    entry = all_pins[page]
    pins = entry["pinned"]
    by_key = {(o.section, o.decimal, o.n): (o, cited) for o, cited in occurrences(page)}
    unpinned = _unpinned(page, all_pins)
    refused = []
    for number, line in enumerate(decisions.splitlines(), 1):
        words = line.split(maxsplit=2)
        if not words or line.lstrip().startswith("#"):
            continue
        try:
            if words[0].startswith("u"):  # a number no pin holds yet: a new pin, or a quote
                occurrence = unpinned[int(words[0][1:])][0]
                pin = {"section": occurrence.section, "decimal": occurrence.decimal, "n": occurrence.n,
                       "record": "", "field": "", "as": "x", "at": occurrence.at}
                if len(words) < 2 or words[1] not in ("field", "quote"):
                    refused.append(f"line {number}: {line!r}: an unpinned number takes field or quote")
                    continue
                pins.append(pin)
                i = len(pins) - 1
            else:
                i = int(words[0])
                pin = pins[i]
        except (ValueError, IndexError):
            refused.append(f"line {number}: {line!r}: the first word is not the id of one of the page's pins "
                           "or unpinned numbers")
            continue
        occurrence, cited = by_key[(pin["section"], pin["decimal"], pin["n"])]
        action = words[1] if len(words) > 1 else ""
        if action == "ok":
            choice = {"record": pin["record"], "field": pin["field"], "as": pin["as"]}
        elif action.isdigit():
            listed = [c for _, c in candidates(occurrence, cited)]
            shown = listed[:listed_at_most]
            if all((c["record"], c["field"], c["as"]) != (pin["record"], pin["field"], pin["as"]) for c in shown):
                shown.append({"record": pin["record"], "field": pin["field"], "as": pin["as"]})
            if int(action) >= len(shown):
                refused.append(f"line {number}: {line!r}: the sheet lists {len(shown)} candidates for pin {i}")
                continue
            choice = {k: shown[int(action)][k] for k in ("record", "field", "as")}
        elif action == "field":
            parts = words[2].split(maxsplit=2) if len(words) > 2 else []
            if len(parts) != 3 or parts[1] not in SHOWN_AS:
                refused.append(f"line {number}: {line!r}: expected 'ID field RECORD AS POINTER', AS one of "
                               f"{', '.join(SHOWN_AS)}")
                continue
            choice = {"record": parts[0], "as": parts[1], "field": parts[2].strip()}
            if choice["record"] not in cited:
                refused.append(f"line {number}: {line!r}: the section does not cite {choice['record']}")
                continue
        elif action == "quote":
            why = words[2].strip() if len(words) > 2 else ""
            if not why:
                refused.append(f"line {number}: {line!r}: a quote needs its why")
                continue
            entry["quoted"].append({"section": pin["section"], "decimal": pin["decimal"], "n": pin["n"], "why": why})
            pin["drop"] = True
            continue
        else:
            refused.append(f"line {number}: {line!r}: the second word must be ok, a candidate number, field or quote")
            continue
        held = _value({**pin, **choice})
        if held is None or not _shows(*held, pin["decimal"], choice["as"], occurrence.sign):
            refused.append(f"line {number}: {line!r}: {choice['record']} {choice['field']} ({choice['as']}) does "
                           f"not show {pin['decimal']}")
            if not pin["record"]:  # the new pin of a refused decision
                pin["drop"] = True
            continue
        pin.update(choice)
        pin.pop("named", None)
        pin["checked"] = True
    entry["pinned"] = [p for p in pins if not p.get("drop")]
    return refused


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--show", metavar="PAGE", help="print PAGE's review sheet")
    parser.add_argument("--all", action="store_true", help="with --show: the checked pins too")
    parser.add_argument("--apply", nargs=2, metavar=("PAGE", "DECISIONS"), help="apply a decisions file")
    parser.add_argument("--listed", type=int, default=_LISTED, metavar="N",
                        help=f"candidate fields a sheet lists per number (default {_LISTED}); give --apply the same")
    args = parser.parse_args(argv)
    all_pins = json.loads(page_numbers.PINS.read_text(encoding="utf-8"))
    if args.show:
        print(sheet(args.show, all_pins, args.all, args.listed))
        return 0
    if args.apply:
        refused = apply(args.apply[0], all_pins, Path(args.apply[1]).read_text(encoding="utf-8"), args.listed)
        page_numbers.PINS.write_text(json.dumps(all_pins, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print("\n".join(refused) if refused else "applied")
        return 1 if refused else 0
    parser.error("give --show PAGE or --apply PAGE DECISIONS")
    return 2


if __name__ == "__main__":
    sys.exit(main())

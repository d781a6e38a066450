"""The hand-written docs pages' numbers, each pinned to a record field that shows it.

The pages in `PAGES` (the hand-written docs pages that quote study records, and the explanations the papers page
shows beside its tables, ``lab/pages/records/papers/*.md``) are written by hand around numbers their records
hold.  Every decimal of these pages, and every count (an integer of three or more significant digits: 1623,
15,216), is either

- **pinned**, at its place in its section, to one field of one record the section cites (by path from the
  repository's top, a ``paper_runs`` record by its name, or a study by name: ``the study `target_lists``` cites the
  records its declaration lists; a section also cites what its enclosing sections cite, the page's introduction
  and the "##" above a "###"; an explanation cites its own record): a JSON pointer
  (``/rows/3/gpal_mean``; in a printed line, a Markdown table or a CSV file of a record folder, ``.../4#k`` is the
  line's k-th decimal) shown at the decimal's precision as it is (``x``), as a percent (``100x``), as an error
  from an accuracy (``1-x``, ``100(1-x)``) or negated (``-x``), rounded half to even or half up, with the sign the
  page writes (a number written without one may show a difference's size); or
- **quoted** in its section from elsewhere (the paper's own numbers, a setting, a value the prose works out, a run
  that was not kept), with why: every occurrence of the decimal in the section, or with ``"n"`` the n-th (counting
  from 0) where the same digits elsewhere in the section are a record's.

A round figure (one significant digit: 0.1, 1.0, 0.05) and a section number are taken as settings, not held; so
are smaller integers (300 epochs, 20 inducing points, a count of 47 said in words) and a name's digits
("J1623-5005", paper "003"); a year is quoted.  A count is shown as it is (a field of decimals rounded to the unit).  In a section that cites no record, every
decimal and count is quoted.  The pins live in
``lab/pages/page_numbers.json``; ``--check`` (run by the tests) names every decimal with no pin, every pin
whose field no longer shows its decimal (a retyped number, or a record remade with another value), every pinned
number that moved within its section (two numbers swapped), and every pin or quote the page no longer has.

``--pin`` pins a page's new decimals by reading their context: among the fields that show a decimal, the one whose
measure (its key, its row's metric, its printed column's heading) the decimal's sentence or table headings name,
then whose labels (method, data set) they name; where none is named, the likeliest field, marked ``"named":
false``.  That reading is not a proof: where two fields show the same value it can choose the wrong one, and then
a record remade with another value in the meant field goes unnoticed.  Each new pin is printed, and the diff of
the pins file shows which field a number was taken to be, for a reader to correct; a pin a reader corrected carries
``"checked": true``, and ``--pin`` keeps every pin whose field still shows its number::

    python lab/pages/page_numbers.py --check
    python lab/pages/page_numbers.py --pin docs/papers/003_milios.md
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import re
import sys
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from functools import cache
from pathlib import Path
from typing import Iterator

from generated_page import ROOT, read_study

__all__ = ["PAGES", "PINS", "Occurrence", "candidates", "clear_caches", "occurrences", "pin_page", "problems"]

#: The hand-written pages whose numbers are pinned, from the repository's top.
PAGES = ("docs/active_learning.md", "docs/architecture.md", "docs/benchmarks.md", "docs/calibration.md",
         "docs/catalogs.md", "docs/cli.md", "docs/datasets.md", "docs/getting_started.md", "docs/gpu.md",
         "docs/methods.md", "docs/reports.md", "docs/scaling.md", "docs/targets.md", "docs/tutorials/error_bars.md",
         "docs/workflows.md",
         "docs/papers/000_liu.md", "docs/papers/002_izmailov_kropotov.md", "docs/papers/002_numbers.md",
         "docs/papers/003_milios.md", *sorted(f"lab/pages/records/papers/{p.name}"
                                                for p in (ROOT / "lab/pages/records/papers").glob("*.md")))
PINS = ROOT / "lab/pages/page_numbers.json"

#: A decimal: digits, a point, digits; not part of a name, a version or a longer number.
DECIMAL = re.compile(r"(?<![\w.])\d+\.\d+(?!\d)(?!\.\d)")
#: A record cited by its path from the repository's top (in backticks, or in a command's comment): a JSON record,
#: a study's kept Markdown or CSV output, or a folder of them.
_CITED = re.compile(r"(lab/[\w./-]*records/[\w.-][\w./-]*?(?:\.json|\.md|\.csv|/))(?![\w.-])")
#: The files a cited folder's numbers are read from.
_KINDS = (".json", ".md", ".csv")
#: A ``paper_runs`` record named without its folder, after the section has given it (`paper003_milios_magic_2.json`).
_NAMED = re.compile(r"`(paper\d{3}_[\w.-]+\.json)`")
_RUNS = "lab/studies/records/papers/"
#: A study cited by its name (the study `target_lists`): its declared records are cited, if it has at most this many.
_STUDY_RECORDS_CITED = 4
_STUDY = re.compile(r"\bstud(?:y|ies) `([\w-]+)`")
#: A code block: a fenced one, or lines indented by four spaces (commands; their numbers are settings).
_CODE = re.compile(r"(?ms)^```.*?^```$|^    .*?$")
#: A table generated from its records between markers (``paper_runs_tables.py``, whose ``--check`` holds it).
_GENERATED = re.compile(r"(?s)<!-- paper_runs table ([\w-]+):.*?<!-- end paper_runs table \1 -->")
#: How a field is shown: as it is, as a percent, as an error from an accuracy (and that in percent), negated (a
#: difference the page takes the other way round: GPC − GPD where the record keeps GPD − GPC).
SHOWN_AS = {"x": lambda v: v, "100x": lambda v: 100 * v, "1-x": lambda v: 1 - v, "100(1-x)": lambda v: 100 * (1 - v),
            "-x": lambda v: -v}
_WORD = re.compile(r"[a-z]+|\d+")
#: A decimal with the exponent it may have in scientific notation (5.7e-7).
_WITH_EXPONENT = re.compile(DECIMAL.pattern + r"(?:e[-+]?\d+)?")
#: An integer written alone (1623; 15,216 or 15 216, its thousands grouped): not part of a name ("A100", "AVX-512", a
#: source's "J1623-5005", paper "003"), a decimal or a longer number.  One of three or more significant digits is a
#: count a record holds.
COUNT = re.compile(r"(?<![\w.,])(?<![A-Za-z]-)(?<!J\d{4}[+-])(?<!J\d{4}\.\d[+-])"
                   r"(?:[1-9]\d{0,2}(?:,\d{3})+|[1-9]\d{0,2}(?:[ \u2009\u202f]\d{3})+|[1-9]\d*)"
                   r"(?!\d)(?!\.\d)(?![,\u2009\u202f ]\d{3}(?!\d))(?![A-Za-z_])")
#: The numbers a page's sections are read for: its decimals, then its integers (`_held` keeps the counts).
NUMBER = re.compile(f"{_WITH_EXPONENT.pattern}|{COUNT.pattern}")
#: Any number, an integer too (a table row's counts say which record line it is).
_ANY_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?:e[-+]?\d+)?(?![\w.]\d)")
#: A paper's section number before a decimal ("sec. 5.2", "Section 4.1").
_SECTION = re.compile(r"(?:\bsec\.|\bSec\.|\bSection|§)\s*$")
#: A percent sign after a number, or after the range or list it starts ("89.9-90.5 %", "97.9 / 98.0 %").
_PERCENT = re.compile(r"[\d.\s/–-]*%")


@dataclass(frozen=True)
class Occurrence:
    """The ``n``-th time ``decimal`` appears in the section headed ``section``, with the words naming it (``local``:
    its table's headings, its row's label and the line above the table, or its sentence) and whether it is a
    percent (a "%" after it, or a table of percents or accuracies)."""

    section: str
    decimal: str
    n: int
    local: str
    percent: bool
    #: the words saying which row of a record it is (method, data set): its sentence, or its own column's heading
    #: and its row's label (the other columns' headings name other methods)
    labelling: str
    #: the table column it sits in (a column shows one measure) and its line, each named within the page
    column: tuple[str, int, int] | None
    line: tuple[str, int]
    #: its place among the section's decimals, so two numbers swapped are two numbers moved
    at: int = 0
    #: the other numbers of its table row: a record's row or line that holds them too is the one it was read from
    beside: tuple[str, ...] = ()
    #: the sign written before it ("-" or "+"), or "" (prose often drops a difference's sign: "0.05 nats behind")
    sign: str = ""

    @property
    def key(self) -> tuple[str, str, int]:
        return self.section, self.decimal, self.n


def _sections(page: str) -> Iterator[tuple[str, str, list[str]]]:
    """(heading, prose without code or comments, records cited) of each section of ``page``."""
    text = (ROOT / page).read_text(encoding="utf-8")
    own = sorted(str(p.relative_to(ROOT)) for p in (ROOT / page).parent.glob(Path(page).stem + "*.json")) \
        if page.startswith("lab/") else []
    enclosing: list[tuple[int, set[str]]] = []  # the headings above a section, with what their text cites
    for section in _split_at_headings(text):
        # a section reads the records its enclosing sections cite: a page's introduction, a "##" above a "###"
        level = len(section) - len(section.lstrip("#")) if section.startswith("#") else 0
        while enclosing and enclosing[-1][0] >= level:
            enclosing.pop()
        own_citations = _citations(section)
        cited = own + sorted(own_citations.union(*(c for _, c in enclosing)))
        enclosing.append((level, own_citations))
        heading = section.splitlines()[0].strip() if section.startswith("#") else ""
        prose = _CODE.sub("", re.sub(r"<!--.*?-->", "", _GENERATED.sub("", section), flags=re.S))
        absent = [c for c in cited if not (ROOT / c).exists()]
        if absent:
            raise ValueError(f"{page}, section {heading!r}: cites records that do not exist: {absent}")
        yield heading, prose, cited


def _citations(section: str) -> set[str]:
    """The records ``section`` cites: by path, a ``paper_runs`` record by name, a study by name."""
    return ({c.rstrip("/") for c in _CITED.findall(section)
             if not c.endswith("/") or c.rstrip("/") in _declared_folders()}
            | {_RUNS + name for name in _NAMED.findall(section)}
            | {r for name in _STUDY.findall(section) for r in _study_records(name)})


@cache
def _study_records(name: str) -> tuple[str, ...]:
    """The records the study ``name`` declares (``lab/studies/NAME.yaml``): a page citing the study cites them."""
    declaration = ROOT / "lab" / "studies" / f"{name}.yaml"
    if not declaration.is_file():
        raise ValueError(f"a page cites the study `{name}`, which has no declaration {declaration.relative_to(ROOT)}")
    records = [r.rstrip("/") for r in read_study(declaration)["records"]]
    records = [r for r in records if (ROOT / r).is_dir() or Path(r).suffix in _KINDS]  # not its figures
    # a study of many records (paper_runs: a run each) is cited by naming the record, not the study
    return tuple(records) if len(records) <= _STUDY_RECORDS_CITED else ()


@cache
def _declared_folders() -> frozenset[str]:
    """The record folders studies declare: a folder a page names is a record only if one is (not the folder of
    many studies' records, ``lab/studies/records/papers/``)."""
    return frozenset(r.rstrip("/") for path in sorted((ROOT / "lab" / "studies").glob("*.yaml"))
                     for r in read_study(path)["records"] if (ROOT / r).is_dir())


def _split_at_headings(text: str) -> list[str]:
    """``text`` cut before each Markdown heading, a ``#`` line inside a fenced code block (a comment) not being one."""
    sections, fenced = [[]], False
    for line in text.splitlines(keepends=True):
        if line.startswith("```"):
            fenced = not fenced
        elif line.startswith("#") and not fenced:
            sections.append([])
        sections[-1].append(line)
    return ["".join(lines) for lines in sections if lines]


def _table_cell(lines: list[str], i: int, start: int) -> tuple[str, str, str, int]:
    """The headings of the table whose cell starts at ``start`` of ``lines[i]`` (a column's measure may be said in
    another's heading: "acc / NLL (paper → gpal)"), the cell's own column heading, the row's label with the side of
    a "paper → gpal" arrow the cell's number is on, and the table's first line."""
    top = i
    while top > 0 and lines[top - 1].startswith("|"):
        top -= 1
    line = lines[i]
    cell = line[line.rfind("|", 0, start) + 1:line.find("|", start)]
    at = start - line.rfind("|", 0, start) - 1
    side = "gpal" if "→" in cell[:at] else "paper" if "→" in cell[at:] else ""
    headings = lines[top].strip().strip("|").split("|")
    column = line[:start].count("|") - 1
    own = headings[column] if 0 <= column < len(headings) else ""
    return " ".join(headings), own, f"{line.strip().strip('|').split('|')[0]} {side}", top


def occurrences(page: str) -> Iterator[tuple[Occurrence, list[str]]]:
    """Each decimal of ``page``'s record-citing sections, with the records its section cites; a round figure (0.1,
    1.0, 0.05: a setting, a margin, an axis) and a section number ("sec. 5.2") are not a record's."""
    for heading, prose, cited in _sections(page):
        seen: dict[str, int] = {}
        at = 0
        lines = prose.splitlines()
        for i, line in enumerate(lines):
            for match in NUMBER.finditer(line):
                decimal = match.group()
                if not _held(decimal) or _SECTION.search(line[:match.start()]):
                    continue
                n = seen.get(decimal, 0)
                seen[decimal] = n + 1
                percent = _PERCENT.match(line, match.end()) is not None
                column = None
                if line.startswith("|"):
                    headings, own, row, top = _table_cell(lines, i, match.start())
                    above = next((b for b in reversed(lines[:top]) if b.strip()), "")  # "accuracy in %:"
                    local = f"{headings} {row} {above}"
                    labelling = f"{own} {row}"
                    percent = percent or "%" in headings + above or "acc" in headings.lower()
                    column = (heading, top, line[:match.start()].count("|"))
                else:
                    around = " ".join(lines[max(0, i - 1):i + 2])
                    start = around.find(line) + match.start()
                    local = labelling = around[max(0, start - 120):start + 30]
                if line[:match.start()].rstrip().endswith("±"):
                    local += " se"  # "0.638 ± 0.019": a standard error
                if line.startswith("|"):  # past the row's label ("split 3" names no value)
                    beside = tuple(m.group() for m in _ANY_NUMBER.finditer(line, line.find("|", 1))
                                   if m.start() != match.start())
                else:  # a sentence's other numbers measure other things as often as not
                    beside = ()
                yield Occurrence(heading, decimal, n, local, percent, labelling, column, (heading, i), at,
                                 beside, _sign(line, match.start())), cited
                at += 1


def _held(number: str) -> bool:
    """Whether a page's ``number`` is a record's: a decimal of two or more significant digits (0.1, 1.0, 0.05 are
    settings, margins, axes), an integer of three or more (20, 300, 1000 are settings or small counts said in
    words; a year is quoted as one)."""
    if "." in number:
        return len(number.split("e")[0].replace(".", "").strip("0")) >= 2
    return len(_digits(number).rstrip("0")) >= 3


def _digits(count: str) -> str:
    """A count's digits without its thousands' separators."""
    return re.sub(r"[, \u2009\u202f]", "", count)


def _numbers_in(text: str) -> Iterator[tuple[str, re.Match]]:
    """The numbers of a record's text with their pointers' suffixes: ``#k`` the k-th decimal, ``#ck`` the k-th
    count (`_held`)."""
    for k, match in enumerate(_WITH_EXPONENT.finditer(text)):
        yield f"#{k}", match
    counts = (m for m in COUNT.finditer(text) if _held(m.group()))
    for k, match in enumerate(counts):
        yield f"#c{k}", match


@cache
def _fields(record: str) -> tuple[tuple[str, float, str | None, str, str, str], ...]:
    """Every number of ``record``: (pointer, value, as written if in a text, the words of its measure, the words
    labelling it, the numbers beside it).  A number's measure is its key and its parent's (``ece/mean``) with the
    ``metric`` its row names; in a printed table, the column's heading; its labels are the record's name and the
    texts beside it in its rows (method, data set, setting); the numbers beside it are its line's, or its row's
    (the other values of its object or list), which a page's table row shows beside it too."""
    out: list[tuple[str, float, str | None, str, str, str]] = []

    def walk(node: object, pointer: str, keys: tuple[str, ...], labels: str, metric: str, near: str = "") -> None:
        if isinstance(node, dict):
            texts = " ".join(v for v in node.values() if isinstance(v, str) and len(v) < 60)
            row_metric = " ".join(str(node[k]) for k in ("metric", "measure") if isinstance(node.get(k), str))
            row = _numbers_of(node.values())
            for key, value in node.items():
                walk(value, f"{pointer}/{key}", keys + (key,), f"{labels} {texts}", row_metric or metric, row)
        elif isinstance(node, list):
            heading: list[str] = []
            row = _numbers_of(node)
            for i, value in enumerate(node):
                if isinstance(value, str) and value.startswith("|"):
                    cells = value.strip().strip("|").split("|")
                    following = node[i + 1] if i + 1 < len(node) and isinstance(node[i + 1], str) else ""
                    if re.match(r"\|\s*:?-{3}", following):
                        heading = cells
                        continue
                    for suffix, match in _numbers_in(value):
                        column = value[:match.start()].count("|") - 1
                        measure = heading[column] if 0 <= column < len(heading) else ""
                        out.append((f"{pointer}/{i}{suffix}", _signed(value, match), match.group(), measure,
                                    f"{labels} {cells[0]}", value))
                else:
                    walk(value, f"{pointer}/{i}", keys, labels, metric, row)
        elif isinstance(node, bool):
            return
        elif isinstance(node, (int, float)):
            # a test statistic is named by its own name only: "z" is not the NLL its row measures
            measure = keys[-1] if keys and keys[-1] in _STATISTICS else f"{' '.join(keys[-2:])} {metric}"
            out.append((pointer, float(node), None, measure, labels, near))
        elif isinstance(node, str):
            for suffix, match in _numbers_in(node):
                out.append((f"{pointer}{suffix}", _signed(node, match), match.group(),
                            f"{' '.join(keys[-1:])} {node[:match.start()][-40:]}", labels, node))

    path = ROOT / record
    files = sorted(p for p in path.rglob("*") if p.suffix in _KINDS) if path.is_dir() else [path]
    for file in files:
        text = file.read_text(encoding="utf-8")
        if file.suffix == ".json":
            node: object = json.loads(text)
        elif file.suffix == ".csv":  # a row per dict, so a number's measure is its column's name
            node = [{key: _number(value) for key, value in row.items()} for row in csv.DictReader(io.StringIO(text))]
        else:  # a Markdown summary: its tables' cells and its prose's numbers
            node = text.splitlines()
        within = "" if file == path else "/" + file.relative_to(path).as_posix()
        walk(node, within, (), f"{path.stem} {file.stem}", "")
    return tuple(out)


def _sign(text: str, start: int) -> str:
    """The sign written before the number at ``start`` of ``text``: a minus or plus not joining two words or numbers
    (the dash of "0.2-0.5" or "level-0.25" is not one)."""
    if start == 0 or text[start - 1] not in "-−+":
        return ""
    if start >= 2 and (text[start - 2].isalnum() or text[start - 2] in "._"):
        return ""
    return "+" if text[start - 1] == "+" else "-"


def _numbers_of(values: object) -> str:
    """The numbers among ``values`` (an object's or a list's), written out: the row a number sits in."""
    return " ".join(repr(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool))


def _signed(text: str, match: re.Match) -> float:
    """A number of a text with the sign written before it."""
    value = float(_digits(match.group()))
    return -value if _sign(text, match.start()) == "-" else value


def _number(text: str | None) -> float | str | None:
    """A CSV cell as a number where it is a decimal or an integer, else as it is."""
    return float(text) if text is not None and re.fullmatch(r"-?\d+(?:\.\d+)?", text.strip()) else text


def _shows(value: float, written: str | None, decimal: str, shown_as: str, sign: str = "") -> bool:
    """Whether ``value`` shown as ``shown_as`` is ``decimal`` at its precision, rounded half to even (Python's
    format) or half up (a person rounding the record's 0.8815 to 0.882), with the ``sign`` the page writes before it
    (none: either sign, a difference's size)."""
    shown_value = SHOWN_AS[shown_as](value)
    if sign and shown_value != 0 and (sign == "-") != (shown_value < 0):
        return False
    if "." not in decimal:  # a count, shown as it is
        count = _digits(decimal)
        if written is not None:
            return shown_as in ("x", "-x") and _digits(written) == count
        half_up = Decimal(repr(round(abs(shown_value), 12))).quantize(Decimal(1), rounding=ROUND_HALF_UP)
        return shown_as in ("x", "-x") and count in (f"{abs(shown_value):.0f}", str(half_up))
    if written == decimal:
        return shown_as in ("x", "-x")
    if "e" in decimal:  # 5.7e-7: the same mantissa digits in scientific notation
        mantissa, exponent = decimal.split("e")
        return shown_as == "x" and f"{value:.{len(mantissa.split('.')[1])}e}" == f"{mantissa}e{int(exponent):+03d}"
    digits = len(decimal.split(".")[1])
    shown = abs(SHOWN_AS[shown_as](value))
    half_up = Decimal(repr(round(shown, 12))).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP)
    return decimal in (f"{shown:.{digits}f}", str(half_up))


#: Record keys of test statistics, which the page names as such when it quotes them.
_STATISTICS = {"z", "t", "df"}
#: Words too common to say which field a number is.
_COMMON = {"the", "a", "an", "of", "in", "on", "at", "to", "and", "or", "by", "for", "with", "its", "is", "are",
           "from", "as", "it", "than", "against", "over", "per", "after", "not", "no", "mean"}


#: Words a page and a record spell differently for one measure.
_SAME = {"acc": "accuracy", "accuracies": "accuracy", "mnll": "nll", "errors": "error", "err": "error",
         "seconds": "s", "sec": "s", "time": "s", "times": "s", "train": "training", "ses": "se"}


def _words(text: str) -> set[str]:
    return {_SAME.get(w, w) for w in _WORD.findall(text.lower().replace("_", " "))
            if not w.isdigit() and w not in _COMMON}


def _admits(occurrence: Occurrence, shown_as: str) -> bool:
    """Whether the context allows the field to be shown transformed: a percent only where the number is one (a
    "%" after it, or a column of percents or accuracies), an error from an accuracy only where an error is said."""
    local = occurrence.local.lower()
    percent = occurrence.percent or re.search(r"\b(?:accuracy|percentage) points\b", local) is not None
    error = "error" in local
    return {"x": True, "100x": percent, "1-x": error, "100(1-x)": percent and error,
            "-x": occurrence.sign != ""}[shown_as]


def candidates(occurrence: Occurrence, cited: list[str]) -> list[tuple[int, dict]]:
    """The fields of ``cited`` that show the occurrence's decimal, best first.

    A field whose measure the context names (a word of the decimal's sentence, or of its table's headings and row
    label, in the field's key or its row's metric or its printed column's heading) ranks first, by how many such
    words, then by how many of the context's words label it (method, data set).  Where no field's measure is named,
    the other fields that show it follow (those the context labels, or that a printed line writes exactly so to
    three or more decimals, first), marked ``"named": False``.  Either way the pin is the likeliest field by these
    words, not a certain one: a wide table's repeated blocks and near-identical labels mislead it."""
    local = _words(_aliased(occurrence.local))
    labelling = _words(_aliased(occurrence.labelling))
    one_of_many = _PART.search(occurrence.local) is not None  # "split 0", "epoch 10": a part, not the summary
    scored = []
    for record in cited:
        for pointer, value, written, measure, labels, near in _fields(record):
            for shown_as in SHOWN_AS:
                if _admits(occurrence, shown_as) and _shows(value, written, occurrence.decimal, shown_as,
                                                            occurrence.sign):
                    named = len(local & _words(measure))
                    labelled = len(labelling & _words(labels)) - 2 * (_PARTS.search(pointer) is not None
                                                                     and not one_of_many)
                    exact = written == occurrence.decimal and len(occurrence.decimal.partition(".")[2]) >= 3
                    labelled += 3 * _agreeing(occurrence.beside, near)
                    choice = {"record": record, "field": pointer, "as": shown_as}
                    # a field of a structured record before a line of a kept Markdown summary that restates it
                    summary = -3 * (record.endswith(".md") or ".md/" in pointer)
                    if named:
                        scored.append((100 + 4 * named + labelled + summary + (shown_as == "x"), choice))
                    else:
                        scored.append((labelled + 2 * exact + (shown_as == "x"), {**choice, "named": False}))
    return sorted(scored, key=lambda s: -s[0])


def _agreeing(beside: tuple[str, ...], near: str) -> int:
    """How many of a page's numbers beside a decimal the field's row or line holds too."""
    held = _parsed(near)
    return sum(any(_shows(v, None, number, a) if "." in number else v == float(number)
                   for v in held for a in ("x", "100x")) for number in beside)


@cache
def _parsed(near: str) -> tuple[float, ...]:
    return tuple(float(m.group()) for m in _ANY_NUMBER.finditer(near))


#: The papers' names for gpal's methods, so a page's "GPC-II" names the record's ``svgp-probit``.
_ALIASES = ((re.compile(r"GPC-III\b"), "logit"), (re.compile(r"GPC-II\b"), "probit"), (re.compile(r"GPC-I\b"), "step"),
            (re.compile(r"GPCsm\b"), "softmax"), (re.compile(r"robust-max SVI"), "svgp robustmax"),
            (re.compile(r"softmax SVI"), "svgp softmax"), (re.compile(r"the paper's CAVI"), "ls cavi"))
#: A record field that is one part of a summary (a split, an epoch of a trace, a unit of a probe) ...
_PARTS = re.compile(r"/(?:splits|traces|per_split|profile|units|variance_trace)/")
#: ... which a page names as such.
_PART = re.compile(r"\b(?:split|splits|epoch|epochs|step|steps|unit|per-split|trace)\b \d|\bsplit\b", re.I)


def _aliased(text: str) -> str:
    return " ".join([text, *(words for pattern, words in _ALIASES if pattern.search(text))])


def _read_pins() -> dict:
    return json.loads(PINS.read_text(encoding="utf-8")) if PINS.is_file() else {}


@cache
def _values(record: str) -> dict[str, tuple[float, str | None]]:
    """``record``'s numbers by pointer (none if the record is gone)."""
    if not (ROOT / record).exists():
        return {}
    return {pointer: (value, written) for pointer, value, written, *_ in _fields(record)}


def _value(pin: dict) -> tuple[float, str | None] | None:
    return _values(pin["record"]).get(pin["field"])


def clear_caches() -> None:
    """Forget the records and declarations read (a test that remakes a record, or points `ROOT` elsewhere)."""
    for cached in (_fields, _values, _study_records, _declared_folders, _parsed):
        cached.cache_clear()


def _quoted(entry: dict) -> dict[tuple[str, str, int | None], str]:
    """The quotes by (section, decimal, occurrence): a quote without ``n`` covers every occurrence in its section."""
    return {(q["section"], q["decimal"], q.get("n")): q["why"] for q in entry["quoted"]}


def _quote_of(occurrence: Occurrence, quoted: dict) -> tuple[str, str, int | None] | None:
    """The quote covering ``occurrence``, if any."""
    for key in ((occurrence.section, occurrence.decimal, occurrence.n), (occurrence.section, occurrence.decimal, None)):
        if key in quoted:
            return key
    return None


def problems(page: str, pins: dict | None = None) -> list[str]:
    """What is wrong with ``page``'s numbers against its pins (empty: every decimal shows its pinned field, in its
    place, or is quoted in its section)."""
    entry = (_read_pins() if pins is None else pins).get(page, {"quoted": [], "pinned": []})
    quoted, pinned = _quoted(entry), {(p["section"], p["decimal"], p["n"]): p for p in entry["pinned"]}
    found, used, wrong = set(), set(), []
    for occurrence, cited in occurrences(page):
        if (quote := _quote_of(occurrence, quoted)) is not None:
            used.add(quote)
            continue
        found.add(occurrence.key)
        pin = pinned.get(occurrence.key)
        where = f"{page}, section {occurrence.section!r}: {occurrence.decimal} (#{occurrence.n + 1})"
        if pin is None:
            wrong.append(f"{where} is pinned to no record field (python lab/pages/page_numbers.py --pin {page}"
                         ", or quote it with why)")
        elif pin["at"] != occurrence.at:
            wrong.append(f"{where} is number {occurrence.at + 1} of its section, pinned as number {pin['at'] + 1}: "
                         "moved or swapped (re-pin once the page is right)")
        elif pin["record"] not in cited:
            wrong.append(f"{where} is pinned to {pin['record']}, which its section no longer cites")
        elif (held := _value(pin)) is None:
            wrong.append(f"{where} is pinned to {pin['record']} {pin['field']}, which the record no longer has")
        elif not _shows(*held, occurrence.decimal, pin["as"], occurrence.sign):
            wrong.append(f"{where} is not {pin['record']} {pin['field']} shown as {pin['as']} ({held[0]!r})")
    wrong += [f"{page}, section {s!r}: the pin of {d} (#{n + 1}) matches no number of the page"
              for (s, d, n) in pinned if (s, d, n) not in found]
    wrong += [f"{page}, section {s!r}: quoted {d}{'' if n is None else f' (#{n + 1})'} is not in the section"
              for (s, d, n) in quoted if (s, d, n) not in used]
    return wrong


def _pattern(choice: dict) -> str:
    """A field's place with its row numbers left out: the cells of one table column share it."""
    return choice["record"] + re.sub(r"/\d+(?=/|#|$)", "/*", choice["field"]) + choice["as"]


def _choose(page: str, occurrences_: list[tuple[Occurrence, list[str]]]) -> dict[tuple, dict | None]:
    """The best field of each occurrence: its context's words first; among ties, the field whose place the most
    cells of its table column share (a column shows one measure), then the record the line's previous number was
    pinned to."""
    scored = {occ.key: candidates(occ, cited) for occ, cited in occurrences_}
    columns: dict[str, dict[str, int]] = {}
    for occ, _ in occurrences_:
        if occ.column is not None:
            counts = columns.setdefault(occ.column, {})
            for pattern in {_pattern(c) for _, c in scored[occ.key]}:
                counts[pattern] = counts.get(pattern, 0) + 1
    chosen: dict[tuple, dict | None] = {}
    previous: dict[tuple[str, int], str] = {}
    for occ, _ in occurrences_:
        counts = columns.get(occ.column, {}) if occ.column is not None else {}

        def rank(item: tuple[int, dict], occ: Occurrence = occ, counts: dict = counts) -> tuple:
            score, choice = item
            return (-score, -counts.get(_pattern(choice), 0), choice["record"] != previous.get(occ.line))

        best = sorted(scored[occ.key], key=rank)
        chosen[occ.key] = best[0][1] if best else None
        if best:
            previous[occ.line] = best[0][1]["record"]
    return chosen


def pin_page(page: str, pins: dict) -> list[str]:
    """Pin ``page``'s unpinned decimals in ``pins`` (dropping pins the page no longer has); the ones it could not
    pin (no cited record shows them: quote them with why, or cite the record)."""
    entry = pins.setdefault(page, {"quoted": [], "pinned": []})
    old = {(p["section"], p["decimal"], p["n"]): p for p in entry["pinned"]}
    quoted = _quoted(entry)
    found = [(occ, cited) for occ, cited in occurrences(page) if _quote_of(occ, quoted) is None]
    chosen = _choose(page, found)
    kept, unpinned = [], []
    for occurrence, cited in found:
        pin = old.get(occurrence.key)
        if pin is None or pin["record"] not in cited or _value(pin) is None \
                or not _shows(*_value(pin), occurrence.decimal, pin["as"], occurrence.sign):
            best = chosen[occurrence.key]
            if best is None:
                unpinned.append(f"{occurrence.section!r}: {occurrence.decimal} ({occurrence.local.strip()[-90:]})")
                continue
            pin = {"section": occurrence.section, "decimal": occurrence.decimal, "n": occurrence.n, **best}
            print(f"pinned {occurrence.decimal} in {occurrence.section!r} to {pin['record']} {pin['field']} "
                  f"({pin['as']})", file=sys.stderr)
        kept.append({**pin, "at": occurrence.at})
    entry["pinned"] = kept
    return unpinned


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pin", nargs="*", metavar="PAGE", help="pin these pages' new decimals (default: every page)")
    parser.add_argument("--check", action="store_true", help="exit 1 naming every number its pin does not hold")
    args = parser.parse_args(argv)
    if args.pin is not None:
        pins = _read_pins()
        unpinned = [f"{page}, {u}" for page in (args.pin or PAGES) for u in pin_page(page, pins)]
        PINS.write_text(json.dumps(pins, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        print("\n".join(f"not pinned: {u}" for u in unpinned))
        return 1 if unpinned else 0
    wrong = [w for page in PAGES for w in problems(page)]
    print("\n".join(wrong) if wrong else f"every number of {len(PAGES)} pages shows its pinned record field")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())

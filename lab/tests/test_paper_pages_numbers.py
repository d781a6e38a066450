"""The papers' hand-written pages retype no measured number: gpal's numbers reach them only through generated tables
(between their markers) or the papers page, and the paper's own through its records or the claims files' headline
rows, where each is typed once with the table or figure it comes from."""

from __future__ import annotations

import json
import re

import pytest
import yaml

from papers_page import DOCS, RECORDS

#: The hand-written papers pages (the numbers pages and the papers page itself are generated) and the explanations
#: beside the records, which the numbers pages show.
PAGES = [*sorted(p for p in (DOCS / "papers").glob("*.md") if not p.stem.endswith("_numbers")),
         *sorted((RECORDS / "papers").glob("*.md"))]

_GENERATED = re.compile(r"<!-- paper_runs table ([\w-]+):.*?<!-- end paper_runs table \1 -->", re.DOTALL)
_FENCED = re.compile(r"^(```|~~~).*?^\1", re.DOTALL | re.MULTILINE)
_INDENTED = re.compile(r"^(?: {4}|\t).*$", re.MULTILINE)  # an indented code block
_SKIPPED = re.compile(r"`[^`]*`"             # inline code: names, options, file names
                      r"|\$[^$]+\$"          # maths
                      r"|\]\([^)]*\)"        # link targets
                      r"|\{\{[^}]*\}\}"      # substitutions
                      r"|Matérn \d/\d"       # a kernel's name
                      r"|\d+ % (?:t )?interval"   # an interval's level, part of the rule
                      r"|±\s?\d+(?:\.\d+)?")     # a declared margin
_PART = r"(?:[IVX]+(?:-[A-Z]\d*)?|\d+(?:\.\d+)?[a-z]?)(?:\([a-z]\))?"
#: A citation of the paper's text: "Tables III-IV", "Fig. 4(b)", "sec. IV-B2", "eqs. 8-13", "App. B.1", "paper 000".
_CITATION = re.compile(rf"\b(?:Tables?|Figs?\.|Figures?|[Ss]ecs?\.|[Ee]qs?\.|App\.|[Pp]apers?|ref\.)\s+"
                       rf"{_PART}(?:\s*(?:-|–|,|and)\s*{_PART})*")
#: A number standing alone (not inside a word such as 4FGL, or a name such as GPC-I).
_NUMBER = re.compile(r"(?<![\w.\-/])\d+(?:\.\d+)?(?![\w/])")


def running_numbers(text: str) -> list[tuple[int, str]]:
    """(line, number) of each number in ``text``'s running prose (its first line, the title, left out)."""
    text = text.split("\n", 1)[1] if "\n" in text else ""
    for pattern in (_GENERATED, _FENCED, _INDENTED):
        text = pattern.sub(lambda m: "\n" * m[0].count("\n"), text)
    found = []
    for number, line in enumerate(text.split("\n"), 2):
        line = _CITATION.sub(" ", _SKIPPED.sub(" ", line))
        found += [(number, m[0]) for m in _NUMBER.finditer(line)]
    return found


def paper_facts() -> set[str]:
    """The paper's numbers as typed once: the records' published values and the claims files' headline rows."""
    facts = set()
    for path in (RECORDS / "papers").glob("*.json"):
        for row in json.loads(path.read_text(encoding="utf-8"))["rows"]:
            if row.get("paper_mean") is not None:
                facts.add(f"{row['paper_mean']:g}")
    for path in (RECORDS / "papers" / "claims").glob("*.yaml"):
        for row in yaml.safe_load(path.read_text(encoding="utf-8")).get("headline") or []:
            if row.get("paper"):
                facts.update(m[0] for m in _NUMBER.finditer(str(row["paper"]["value"])))
    return facts


def test_the_pages_are_found():
    assert {p.name for p in PAGES} >= {"000_liu.md", "001_villacampa_calvo.md", "002_izmailov_kropotov.md",
                                       "003_milios.md", "004_galy_fajou.md", "004_augmented.md"}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_a_papers_page_retypes_no_number(page):
    facts = paper_facts()
    stray = [f"{page.name}:{line}: {number}" for line, number in running_numbers(page.read_text(encoding="utf-8"))
             if number not in facts]
    assert not stray, ("numbers typed into a papers page: show gpal's through a generated table, say the paper's "
                       "where its record or headline row holds it, or say it in words:\n" + "\n".join(stray))


@pytest.mark.parametrize(("text", "found"), [
    ("title\nNLL 0.372 against 0.466", ["0.372", "0.466"]),
    ("title\nTables III-IV, Fig. 4(b), sec. IV-B2, eqs. 8-13, App. B.1, paper 000 and Tables 2-3", []),
    ("title\n`--set protocol.splits=10`, $10^{-3}$, [page](papers/000_liu.md), 4FGL, GPC-I, Matérn 5/2", []),
    ("title\nits 95 % t interval, the 90 % interval; 95 % of the rows", ["95"]),
    ("title\nwithin ±0.01 (TOST), a margin of ± 0.02", []),
    ("title\n```bash\ngpal workflow x --set a=3\n```\n    python run.py 5\nM = 300", [(6, "300")]),
    ("title\n<!-- paper_runs table t: generated -->\n| 0.5 |\n<!-- end paper_runs table t -->\n7 splits", ["7"]),
])
def test_what_counts_as_a_typed_number(text, found):
    got = running_numbers(text)
    assert (got if found and isinstance(found[0], tuple) else [n for _, n in got]) == found

"""docs/catalogs.md's tables of the catalogs' upper-limit convention are the study ``catalog_conventions``'s printed
tables (record lab/studies/records/catalog_conventions.json): read from the record, not recomputed, so a
table typed or edited by hand, or a study run again with other numbers, fails here."""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).parents[2]
PAGE = ROOT / "docs" / "catalogs.md"
RECORD = ROOT / "lab" / "studies" / "records" / "catalog_conventions.json"
COMMAND = "python lab/studies/bench_catalog_conventions.py"


def _printed() -> list[str]:
    record = json.loads(RECORD.read_text(encoding="utf-8"))
    assert record["study"] == "catalog_conventions"
    return record["commands"][COMMAND]["printed"]


def _cited_tables(text: str) -> list[list[str]]:
    """Every markdown table whose introducing paragraph (the one just above it) names the study."""
    tables, lines = [], text.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("|") and (i == 0 or not lines[i - 1].startswith("|")):
            above = []
            j = i - 1
            while j >= 0 and not lines[j].strip():
                j -= 1
            while j >= 0 and lines[j].strip():
                above.append(lines[j])
                j -= 1
            end = i
            while end < len(lines) and lines[end].startswith("|"):
                end += 1
            if "catalog_conventions" in " ".join(above):
                tables.append(lines[i:end])
            i = end
        else:
            i += 1
    return tables


def test_every_row_of_the_pages_convention_tables_is_a_row_the_study_printed():
    printed = set(_printed())
    tables = _cited_tables(PAGE.read_text(encoding="utf-8"))
    assert len(tables) == 3, f"expected the Flux_Band, 3FGL and Flux_History tables to cite the study; found {len(tables)}"
    for table in tables:
        for row in table:
            assert row in printed, f"docs/catalogs.md's row {row!r} is not in {RECORD.name}"
    assert sum(len(t) for t in tables) == sum(1 for line in printed if line.startswith("|"))


def test_every_count_the_study_prints_outside_its_tables_is_on_the_page():
    """The release, data-problem, upper-limit and 3FGL counts the page quotes in prose: each number printed after a
    label's colon appears on the page as a number of its own (not inside a longer one)."""
    page = " ".join(PAGE.read_text(encoding="utf-8").split())
    lines = [line for line in _printed() if not line.startswith(("|", "#"))]
    assert len(lines) == 9
    for line in lines:
        for run in re.findall(r": ([\d][\d ,.]*)", line):
            for number in filter(None, (n.strip(" .") for n in run.split(","))):
                assert re.search(rf"(?<![\d.]){re.escape(number)}(?![\d]|\.\d)", page), (
                    f"the study's {number!r} ({line!r}) is not on docs/catalogs.md")

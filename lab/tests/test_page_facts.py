"""The numbers hand-written pages show inside sentences come from records (the lab's pages/page_facts.py): the
generated substitutions and tables are current, every one a page writes is declared, a changed record changes the
page, and a record without the field a fact needs is named with the field."""

from __future__ import annotations

import json
import re
import shutil

import pytest

import page_facts
from generated_page import DOCS, ROOT

#: A MyST substitution as a page writes it.
SUBSTITUTION = re.compile(r"\{\{\s*(\w+)\s*\}\}")
INCLUDE = re.compile(r"```\{include\} _facts/([\w.]+)")


#: Inline code, where MyST substitutes nothing (a page may show the syntax itself: `{{ name }}`).
CODE_SPAN = re.compile(r"(?<!`)`[^`\n]+`(?!`)")


def _pages() -> dict[str, str]:
    return {p.relative_to(DOCS).as_posix(): CODE_SPAN.sub("", p.read_text(encoding="utf-8"))
            for p in DOCS.rglob("*.md") if not {"_build", "_facts"} & set(p.relative_to(DOCS).parts)}


def test_the_generated_facts_are_current():
    assert page_facts.main(["--check"]) == 0, "docs/_facts/ or the README is stale: run pages/page_facts.py"


def test_every_fact_a_page_shows_is_declared_and_every_declared_fact_is_shown():
    written = {m[1] for text in _pages().values() for m in SUBSTITUTION.finditer(text)}
    included = {m[1] for text in _pages().values() for m in INCLUDE.finditer(text)}
    assert written == set(page_facts.FACTS)
    assert included == set(page_facts.TABLES)


#: The results records the README's headline table reads.
HEADLINE = [f"{page_facts._RESULTS}/{name}.json" for name in ("main_job", "main_job.dr4", "open_sky", "error_bars")]
#: The study catalog_facts' record and its counts command's printed lines, as the facts name them.
CATALOG_FACTS = page_facts.FACTS["dr4_other_classes"]


@pytest.fixture
def lab(tmp_path):
    """A copy of the records the facts read and of the README, under a repository top of its own."""
    for record in {fact.record for fact in [*page_facts.FACTS.values(), *page_facts.TABLES.values()]} | {*HEADLINE}:
        (tmp_path / record).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / record, tmp_path / record)
    shutil.copy(ROOT / "README.md", tmp_path / "README.md")
    return tmp_path


def _shown(page: str, substitutions: dict[str, str]) -> str:
    return SUBSTITUTION.sub(lambda m: substitutions[m[1]], page)


def test_changing_a_record_changes_the_page(lab):
    record = lab / CATALOG_FACTS.record
    data = json.loads(record.read_text(encoding="utf-8"))
    printed = data["commands"][CATALOG_FACTS.keys[1]]["printed"]
    line = next(i for i, text in enumerate(printed) if text.startswith("4FGL-DR4 sources of other classes: "))
    printed[line] = "4FGL-DR4 sources of other classes: 401"
    table = next(i for i, text in enumerate(printed) if text.startswith("| 4FGL-DR2 |"))
    printed[table] = printed[table].replace("| 23 |", "| 24 |")
    record.write_text(json.dumps(data), encoding="utf-8")

    before, after = page_facts.render(), page_facts.render(lab)
    page = (DOCS / "catalogs.md").read_text(encoding="utf-8")
    old = " ".join(_shown(page, json.loads(before["substitutions.json"])).split())
    new = " ".join(_shown(page, json.loads(after["substitutions.json"])).split())
    assert "4FGL-DR4 labels 401 sources of other classes" in new and "labels 401" not in old
    assert {n for n in after if after[n] != before[n]} == {"substitutions.json", "join_coverage.md"}

    (lab / "docs").mkdir()
    assert page_facts.main(["--root", str(lab), "--docs", str(lab / "docs")]) == 0
    assert "| 24 |" in (lab / "docs/_facts/join_coverage.md").read_text(encoding="utf-8")


def test_a_record_without_the_field_a_fact_needs_is_named_with_the_field(lab, capsys):
    cv = lab / page_facts.FACTS["cv_dr4_n"].record
    data = json.loads(cv.read_text(encoding="utf-8"))
    del data["catalogs"]["4FGL-DR4"]["n"]
    cv.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ValueError, match=r"calibration_cv\.json: no field 'catalogs/4FGL-DR4/n', which "
                                         r"\{\{ cv_dr4_n \}\}"):
        page_facts.render(lab)
    assert page_facts.main(["--root", str(lab), "--docs", str(lab / "docs"), "--check"]) == 2
    assert "catalogs/4FGL-DR4/n" in capsys.readouterr().err


def test_a_missing_printed_line_or_table_is_named(lab):
    record = lab / CATALOG_FACTS.record
    data = json.loads(record.read_text(encoding="utf-8"))
    counts = data["commands"][CATALOG_FACTS.keys[1]]
    counts["printed"] = [line for line in counts["printed"] if not line.startswith(("4FGL-DR4 sources of", "|"))]
    record.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ValueError, match=r"no printed line '4FGL-DR4 sources of other classes'.*dr4_other_classes"):
        page_facts.render(lab)
    with pytest.raises(ValueError, match=r"no printed table headed '\| release \| sources with a 4LAC row'"):
        page_facts.render(lab, facts={})


def test_the_readme_headline_is_made_from_the_results_records(lab):
    assert page_facts.readme_headline(lab) == page_facts.readme_headline()
    main_job = lab / HEADLINE[0]
    data = json.loads(main_job.read_text(encoding="utf-8"))
    rows = data["tables"][0]["rows"]
    nll = next(row for row in rows if row[0] == "NLL (nats)")
    nll[1] = "0.301 [0.250, 0.350]"
    forest = next(row for row in rows if row[0].startswith("isotonic-calibrated random forest: NLL"))
    forest[1] = "0.370; +0.069 [+0.040, +0.100]"  # now below logistic regression's: the best baseline changes
    main_job.write_text(json.dumps(data), encoding="utf-8")
    table = page_facts.readme_headline(lab)
    assert "| FL16Y held out (665 sources, four classes): NLL, accuracy | 0.301, " in table
    assert "| 0.370 (calibrated random forest) | `gpal classify` |" in table

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert page_facts.with_headline(readme, page_facts.readme_headline()) == readme
    with pytest.raises(ValueError, match="lacks the markers"):
        page_facts.with_headline(readme.replace(page_facts.README_END, ""), table)
    del data["tables"][0]["rows"][0]  # accuracy
    main_job.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ValueError, match=r"main_job\.json: table 0 has no row 'accuracy'"):
        page_facts.readme_headline(lab)
    assert page_facts.main(["--root", str(lab), "--docs", str(lab / "docs")]) == 2


def test_a_printed_table_runs_on_past_the_notes_among_its_groups():
    """A study that prints a note after each group of rows: every group's rows are the table, the notes follow it;
    another table's heading ends it."""
    lines = ["| check | value |", "|---|---|", "| a | 1 |", "fit seconds a: 3", "| b | 2 |", "fit seconds b: 4",
             "| other | table |", "|---|---|", "| c | 5 |"]
    rows, notes = page_facts._printed_table(lines, 0)
    assert rows == lines[:3] + ["| b | 2 |"]
    assert notes == ["fit seconds a: 3", "fit seconds b: 4"]
    assert page_facts._printed_table(lines, 6) == (lines[6:], [])

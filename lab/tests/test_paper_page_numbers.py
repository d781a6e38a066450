"""The papers' hand-written pages quote their records field by field: every decimal of a section that cites a record,
and of an explanation the papers page shows, is pinned to the record field it shows (or quoted from elsewhere, with
why) in ``lab/pages/page_numbers.json``, so a number retyped on a page, or a record remade with another value,
fails here (``lab/pages/page_numbers.py``)."""

from __future__ import annotations

import json

import pytest

import page_numbers


@pytest.mark.parametrize("page", page_numbers.PAGES)
def test_every_decimal_of_a_page_shows_the_record_field_it_is_pinned_to(page):
    assert page_numbers.problems(page) == []


@pytest.fixture
def site(tmp_path, monkeypatch):
    """A repository with one page citing one record, its pins made by ``--pin``."""
    monkeypatch.setattr(page_numbers, "ROOT", tmp_path)
    page_numbers.clear_caches()
    record = tmp_path / "lab" / "studies" / "records" / "r.json"
    record.parent.mkdir(parents=True)
    record.write_text(json.dumps({"rows": [{"method": "GPC", "ece": 0.0731}, {"method": "GPD", "ece": 0.0732}],
                                  "accuracy": 0.8726, "variance": 5.7e-7, "nll": 0.8815,
                                  "printed": ["| method | NLL |", "|---|---|", "| GPD | 0.3736 |"]}))
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "p.md").write_text(
        "# A\nFrom `lab/studies/records/r.json`: GPD's ECE 0.073, accuracy 87.3 %, NLL 0.3736, "
        "variance 5.7e-7, test NLL 0.882 (rounded half up); the paper's 0.25 at a step of 0.5 (sec. 4.1)."
        "\n\n    gpal workflow x --set lr=0.75\n# B\nUncited 0.5.\n")
    pins = {"docs/p.md": {"quoted": [{"section": "# A", "decimal": "0.25", "why": "the paper's"}], "pinned": []}}
    assert page_numbers.pin_page("docs/p.md", pins) == []
    yield tmp_path, pins
    page_numbers.clear_caches()


def test_a_decimal_is_pinned_to_the_field_its_context_names(site):
    _, pins = site
    fields = {p["decimal"]: (p["field"], p["as"]) for p in pins["docs/p.md"]["pinned"]}
    assert fields == {"0.073": ("/rows/1/ece", "x"), "87.3": ("/accuracy", "100x"), "0.3736": ("/printed/2#0", "x"),
                      "5.7e-7": ("/variance", "x"), "0.882": ("/nll", "x")}  # not the round 0.5 nor sec. 4.1
    assert page_numbers.problems("docs/p.md", pins) == []


def test_a_retyped_number_a_remade_record_and_a_stale_quote_are_named(site):
    root, pins = site
    page = root / "docs" / "p.md"
    page.write_text(page.read_text().replace("0.073", "0.074").replace("the paper's 0.25", "the paper's"))
    found = page_numbers.problems("docs/p.md", pins)
    assert any("0.074 (#1) is pinned to no record field" in p for p in found)
    assert any("the pin of 0.073 (#1) matches no number" in p for p in found)
    assert any("quoted 0.25 is not in the section" in p for p in found)
    page.write_text(page.read_text().replace("0.074", "0.073"))
    record = root / "lab" / "studies" / "records" / "r.json"
    record.write_text(record.read_text().replace("0.0732", "0.0751"))
    page_numbers.clear_caches()
    assert [p for p in page_numbers.problems("docs/p.md", pins) if "0.073" in p] == [
        "docs/p.md, section '# A': 0.073 (#1) is not lab/studies/records/r.json /rows/1/ece shown as x (0.0751)"]


def test_a_cited_record_that_does_not_exist_is_named(site):
    root, pins = site
    (root / "docs" / "p.md").write_text("# A\n`lab/studies/records/gone.json` 0.1\n")
    with pytest.raises(ValueError, match="gone.json"):
        page_numbers.problems("docs/p.md", pins)


def test_two_numbers_swapped_are_named(site):
    root, pins = site
    page = root / "docs" / "p.md"
    page.write_text(page.read_text().replace("ECE 0.073, accuracy 87.3 %", "ECE 87.3 %, accuracy 0.073"))
    found = page_numbers.problems("docs/p.md", pins)
    assert len([p for p in found if "moved or swapped" in p]) == 2, found


def test_a_table_cell_is_read_from_the_record_line_holding_its_rows_other_numbers(tmp_path, monkeypatch):
    """Two blocks of a printed table show 0.97 for one class: the page's row (5, 1219) is the second line."""
    monkeypatch.setattr(page_numbers, "ROOT", tmp_path)
    page_numbers.clear_caches()
    record = tmp_path / "lab" / "studies" / "records" / "t.json"
    record.parent.mkdir(parents=True)
    record.write_text(json.dumps({"printed": ["| class | cut | n | share |", "|---|---|---|---|",
                                              "| bll | 4 | 1274 | 0.97 |", "| bll | 5 | 1219 | 0.97 |"]}))
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "t.md").write_text("# A\n`lab/studies/records/t.json`:\n\n| class | cut | n | share |\n"
                                            "|---|---|---|---|\n| bll | 5 | 1219 | 0.97 |\n")
    pins: dict = {}
    assert page_numbers.pin_page("docs/t.md", pins) == []
    assert [p["field"] for p in pins["docs/t.md"]["pinned"]] == ["/printed/3#c0", "/printed/3#0"]  # 1219, 0.97
    page_numbers.clear_caches()


def test_a_count_is_held_like_a_decimal_and_settings_and_names_are_not(tmp_path, monkeypatch):
    """A count of three or more significant digits (1,623; 15 216) is pinned to the field holding it, and a retyped
    one is named; a paper's number, a source's name and a round setting are not a record's; a year is a number no
    record holds (quoted as one)."""
    monkeypatch.setattr(page_numbers, "ROOT", tmp_path)
    page_numbers.clear_caches()
    record = tmp_path / "lab" / "studies" / "records" / "c.json"
    record.parent.mkdir(parents=True)
    record.write_text(json.dumps({"bcu": 1623, "unassociated": 2423, "rows": 15216, "epochs": 300}))
    (tmp_path / "docs").mkdir()
    page = tmp_path / "docs" / "c.md"
    page.write_text("# A\n`lab/studies/records/c.json`: 1,623 bcu and 2423 unassociated sources of 15 216 in 2023 "
                    "(paper 003, 4FGL J1623.5-5005 and PSR J1623-5005 among them, hashed by SHA-256), trained 300 epochs on 120 of them.\n")
    pins: dict = {}
    assert [u.split(":")[1].split()[0] for u in page_numbers.pin_page("docs/c.md", pins)] == ["2023"]
    assert {p["decimal"]: p["field"] for p in pins["docs/c.md"]["pinned"]} == {
        "1,623": "/bcu", "2423": "/unassociated", "15 216": "/rows"}
    pins["docs/c.md"]["quoted"].append({"section": "# A", "decimal": "2023", "why": "the year"})
    assert page_numbers.problems("docs/c.md", pins) == []
    page.write_text(page.read_text().replace("1,623", "1,632"))
    assert any("1,632 (#1) is pinned to no record field" in p for p in page_numbers.problems("docs/c.md", pins))
    page_numbers.clear_caches()


def test_a_readers_decisions_become_checked_pins_and_a_field_not_showing_the_number_is_refused(site):
    import page_numbers_review

    _, pins = site
    ids = {p["decimal"]: i for i, p in enumerate(pins["docs/p.md"]["pinned"])}
    sheet = page_numbers_review.sheet("docs/p.md", pins)
    assert "»0.073«" in sheet and "/rows/1/ece" in sheet and f"[{ids['0.073']}] 0.073" in sheet
    refused = page_numbers_review.apply("docs/p.md", pins, "\n".join([
        f"{ids['0.073']} field lab/studies/records/r.json x /rows/0/ece",   # GPC's 0.0731 shows 0.073 too
        f"{ids['0.882']} field lab/studies/records/r.json x /accuracy",     # 0.8726 is not 0.882
        f"{ids['87.3']} ok",
        f"{ids['5.7e-7']} quote the variance the prose sets",
        "99 ok"]))
    assert len(refused) == 2 and "does not show 0.882" in refused[0] and "not the id" in refused[1]
    by_decimal = {p["decimal"]: p for p in pins["docs/p.md"]["pinned"]}
    assert by_decimal["0.073"]["field"] == "/rows/0/ece" and by_decimal["0.073"]["checked"]
    assert by_decimal["87.3"]["checked"] and not by_decimal["0.882"].get("checked")
    assert "5.7e-7" not in by_decimal
    assert page_numbers.problems("docs/p.md", pins) == []
    assert f"[{ids['0.073']}]" not in page_numbers_review.sheet("docs/p.md", pins)  # checked: off the sheet


def test_a_number_no_cited_record_shows_is_listed_and_pinned_or_quoted_from_the_sheet(site):
    import page_numbers_review

    root, pins = site
    page = root / "docs" / "p.md"
    page.write_text(page.read_text().replace("(sec. 4.1).", "(sec. 4.1); 1,234 sources of 5,678."))  # last
    sheet = page_numbers_review.sheet("docs/p.md", pins)
    assert "[u0] 1,234 in '# A'   (unpinned)" in sheet and "»5,678«" in sheet
    record = root / "lab" / "studies" / "records" / "r.json"
    record.write_text(record.read_text().replace('"nll"', '"n": 1234, "nll"'))
    page_numbers.clear_caches()
    refused = page_numbers_review.apply("docs/p.md", pins, "\n".join([
        "u0 field lab/studies/records/r.json x /n", "u1 quote the catalog's size, said in words", "u7 ok"]))
    assert len(refused) == 1 and "not the id" in refused[0]
    assert page_numbers.problems("docs/p.md", pins) == []
    assert [p["checked"] for p in pins["docs/p.md"]["pinned"] if p["decimal"] == "1,234"] == [True]


def test_a_quote_of_one_occurrence_leaves_the_others_pinned_and_goes_stale_alone(site):
    root, pins = site
    page = root / "docs" / "p.md"
    page.write_text(page.read_text().replace("GPD's ECE 0.073,", "GPD's ECE 0.073, a worked 0.073,"))
    entry = pins["docs/p.md"]
    entry["quoted"].append({"section": "# A", "decimal": "0.073", "n": 1, "why": "worked"})
    assert page_numbers.pin_page("docs/p.md", pins) == []
    assert [p["n"] for p in entry["pinned"] if p["decimal"] == "0.073"] == [0]
    assert page_numbers.problems("docs/p.md", pins) == []
    page.write_text(page.read_text().replace(", a worked 0.073,", ","))
    assert "docs/p.md, section '# A': quoted 0.073 (#2) is not in the section" in page_numbers.problems("docs/p.md", pins)


def test_a_number_written_with_the_other_sign_is_named(tmp_path, monkeypatch):
    """A difference the record keeps as −0.063: the page's −0.063 and its size 0.063 hold; +0.063 does not."""
    monkeypatch.setattr(page_numbers, "ROOT", tmp_path)
    page_numbers.clear_caches()
    record = tmp_path / "lab" / "studies" / "records" / "d.json"
    record.parent.mkdir(parents=True)
    record.write_text(json.dumps({"nll_difference": -0.0631, "printed": ["| diff | -0.0412 |"]}))
    (tmp_path / "docs").mkdir()
    page = tmp_path / "docs" / "d.md"
    page.write_text("# A\n`lab/studies/records/d.json`: NLL difference −0.063 (0.063 nats better), diff "
                    "-0.041, a range 0.2-0.5.\n")
    pins: dict = {}
    assert page_numbers.pin_page("docs/d.md", pins) == []
    assert page_numbers.problems("docs/d.md", pins) == []
    page.write_text(page.read_text().replace("−0.063 (", "+0.063 (").replace("diff -0.041", "diff +0.041"))
    found = page_numbers.problems("docs/d.md", pins)
    assert len([p for p in found if "is not lab/studies/records/d.json" in p]) == 2, found
    page_numbers.clear_caches()

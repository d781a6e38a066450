"""A paper's headline table: the paper's number and gpal's read from the records, never typed twice."""

import pytest

from paper_headline import headline_markdown, headline_rows, parse_headline


def _row(setting, method, metric, mean, se, n, paper):
    return {"setting": setting, "method": method, "metric": metric, "paper_mean": paper, "paper_se": None,
            "gpal_mean": mean, "gpal_se": se, "n": n}


RECORDS = {
    "values": {"source": {"table": "Table 3"}, "rows": [_row("a", "A", "nll", 0.31234, 0.0123, 10, 0.2999)]},
    "orders": {"source": {"table": "Sec. 5 (orderings stated in the text)"},
               "rows": [_row("a", "A", "nll", 0.5, 0.01, 5, 1.0)]},
}
OTHERS = {"tables/t": {"source": "a study", "tables": [
    {"caption": "vehicle", "columns": ["method", "gpal NLL", "paper NLL"], "rows": [["A", "0.66 ± 0.01", "0.70"]]}]},
    "tables/a": {"source": "a study", "tables": [
        {"caption": "german", "columns": ["method", "gpal NLL", "authors' code NLL"],
         "rows": [["A", "0.496 (3)", "0.498 (3)"], ["B", "not run", "0.51 (2)"]]}]}}


def _rows(block):
    return headline_rows(parse_headline("009.yaml: headline", block), RECORDS, OTHERS, "009.yaml")


def test_the_numbers_come_from_the_records_and_the_papers_where_it_is_printed():
    rows = _rows([{"quantity": "a, A NLL", "workflow": "values", "setting": "a", "method": "A", "metric": "nll",
                   "differences": "fewer steps"},
                  {"quantity": "vehicle", "record": "tables/t", "table": "vehicle", "row": "A", "metric": "NLL",
                   "cite": "Table 9"},
                  {"quantity": "ordered", "workflow": "orders", "setting": "a", "method": "A", "metric": "nll",
                   "paper": {"value": "curves only", "source": "Fig. 4"}}])
    table = headline_markdown(rows)
    assert "| a, A NLL | 0.2999 (Table 3) | 0.312 ± 0.012 (10) | fewer steps |" in table
    assert "| vehicle | 0.70 (Table 9) | 0.66 ± 0.01 | – |" in table
    # a record of orderings holds a placeholder, not the paper's number: the declared one is shown
    assert "| ordered | curves only (Fig. 4) | 0.500 ± 0.010 (5) | – |" in table


def test_the_authors_code_gets_a_column_only_where_it_ran():
    paper = {"value": "curves only", "source": "Fig. 4"}
    rows = _rows([{"quantity": "same row", "record": "tables/a", "table": "german", "row": "A", "metric": "NLL",
                   "paper": paper},
                  {"quantity": "other row", "record": "tables/t", "table": "vehicle", "row": "A", "metric": "NLL",
                   "authors": {"record": "tables/a", "table": "german", "row": "B"}},
                  {"quantity": "none", "workflow": "values", "setting": "a", "method": "A", "metric": "nll"}])
    table = headline_markdown(rows)
    assert "| quantity | the paper | gpal, mean ± SE (repeats) | the authors' code, mean ± SE (repeats) |" in table
    assert "| same row | curves only (Fig. 4) | 0.496 (3) | 0.498 (3) | – |" in table
    assert "| other row | 0.70 | 0.66 ± 0.01 | 0.51 (2) | – |" in table
    assert "| none | 0.2999 (Table 3) | 0.312 ± 0.012 (10) | – | – |" in table
    # a paper whose code ran nowhere has no such column
    assert "authors' code" not in headline_markdown(_rows([{"quantity": "v", "record": "tables/t", "table": "vehicle",
                                                             "row": "A", "metric": "NLL"}]))


def test_gpal_on_the_authors_rows_is_shown_beside_the_authors_code_where_gpals_column_is_another_run():
    others = {"tables/r": {"source": "a study", "tables": [
        {"caption": "w", "columns": ["method", "gpal NLL", "authors' code NLL", "gpal, the authors' rows NLL"],
         "rows": [["A", "0.90 (3)", "0.72 (2)", "0.58 (2)"], ["B", "0.91 (3)", "0.70 (2)", "not run"]]}]}}
    block = [{"quantity": q, "record": "tables/r", "table": "w", "row": q, "metric": "NLL",
              "paper": {"value": "0.85", "source": "Table 5"}} for q in ("A", "B")]
    table = headline_markdown(headline_rows(parse_headline("009.yaml: headline", block), RECORDS, others, "009.yaml"))
    assert "| A | 0.85 (Table 5) | 0.90 (3) | 0.72 (2); gpal on the same rows 0.58 (2) | – |" in table
    assert "| B | 0.85 (Table 5) | 0.91 (3) | 0.70 (2) | – |" in table


@pytest.mark.parametrize(("block", "message"), [
    ([{"quantity": "q", "workflow": "values", "setting": "b", "method": "A", "metric": "nll"}],
     r"headline\[0\]: the record of values has no 'nll' of 'A' in setting 'b'"),
    ([{"quantity": "q", "workflow": "orders", "setting": "a", "method": "A", "metric": "nll"}],
     r"headline\[0\]: the record holds no published number here"),
    ([{"quantity": "q", "workflow": "values", "setting": "a", "method": "A", "metric": "nll",
       "paper": {"value": "0.3", "source": "Table 3"}}], r"headline\[0\]\.paper: the record already holds"),
    ([{"quantity": "q", "record": "tables/t", "table": "vehicle", "row": "Z", "metric": "NLL"}],
     r"headline\[0\]\.row: table 'vehicle' of tables/t has no row 'Z'"),
    ([{"quantity": "q", "workflow": "values", "metric": "nll"}], r"headline\[0\]: with workflow give"),
    ([{"quantity": "q", "workflow": "values", "setting": "a", "method": "A", "metric": "nll", "paper": "0.3"}],
     r"headline\[0\]\.paper must be \{value"),
    ([{"quantity": "q", "record": "tables/t", "table": "vehicle", "row": "A", "metric": "NLL",
       "authors": {"record": "tables/t", "table": "vehicle", "row": "A"}}],
     r"headline\[0\]\.authors: table 'vehicle' of tables/t has no column \"authors' code NLL\""),
    ([{"quantity": "q", "workflow": "values", "setting": "a", "method": "A", "metric": "nll",
       "authors": {"record": "tables/a", "table": "german", "row": "A"}}],
     r"headline\[0\]\.authors: a workflow's record holds no authors' code"),
    ([{"quantity": "q", "record": "tables/t", "table": "vehicle", "row": "A", "metric": "NLL", "authors": "0.5"}],
     r"headline\[0\]\.authors must be \{record, table, row\}"),
])
def test_a_row_the_records_cannot_fill_is_refused_naming_it(block, message):
    with pytest.raises(ValueError, match=message):
        _rows(block)


def test_the_authors_code_beside_a_workflows_number_is_the_mean_and_se_of_its_fits_in_a_study_record(tmp_path):
    import json
    import math
    import statistics

    values = [0.41, 0.47, 0.52]
    record = tmp_path / "authors.json"
    record.write_text(json.dumps({"units": [{"side": "authors", "method": "A", "nll": v} for v in values]
                                  + [{"side": "gpal", "method": "A", "nll": 9.0},
                                     {"side": "authors", "method": "B", "nll": 9.0}]}))
    rows = _rows([{"quantity": "a, A NLL", "workflow": "values", "setting": "a", "method": "A", "metric": "nll",
                   "authors": {"study_record": str(record), "method": "A"}}])
    se = statistics.stdev(values) / math.sqrt(3)
    assert rows[0]["authors"] == f"{statistics.fmean(values):.3f} ± {se:.3f} (3)"
    with pytest.raises(ValueError, match=r"holds 1 fit\(s\) of 'B' by the authors' code"):
        _rows([{"quantity": "q", "workflow": "values", "setting": "a", "method": "A", "metric": "nll",
                "authors": {"study_record": str(record), "method": "B"}}])

"""lab/pages/paper_runs_tables.py: the papers' sub-pages' tables of the study paper_runs, from its records."""

from __future__ import annotations

import json
import re
import shutil

import numpy as np
import pytest

import paper_runs_tables
from paper_runs_tables import (DECLARATION, TABLES, Cell, PrintedTable, Row, StudyTable, Table, main, render_page, render_pages,
                               render_table)
from generated_page import DOCS, ROOT, read_study


def test_every_table_is_current_with_its_records():
    for page, text in render_pages().items():
        assert (DOCS / page).read_text(encoding="utf-8") == text, \
            f"docs/{page}: a paper_runs table is stale: run python lab/pages/papers_page.py"


def test_every_table_names_its_study_and_records_and_each_record_is_the_studys():
    declared = read_study(ROOT / DECLARATION)["records"]
    for name, table in TABLES.items():
        if isinstance(table, (PrintedTable, StudyTable)):
            continue
        text = render_table(name)
        # a table of the papers page's records alone names their workflow, not the study
        if not all(row.record.startswith(paper_runs_tables.PAGE_RECORDS) for row in table.rows):
            assert "the study `paper_runs` (`lab/studies/paper_runs.yaml`)" in text
        for row in table.rows:
            assert f"`{row.record}`" in text
            assert row.record in declared or row.record.startswith(paper_runs_tables.PAGE_RECORDS)


def _cells(name):
    """Table ``name``'s body as rows of cells, read back from its Markdown."""
    body = [line for line in render_table(name).splitlines() if line.startswith("|")][2:]
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in body]


def test_a_split_row_shows_the_splits_measures_at_the_shown_precision():
    record = json.loads((ROOT / "lab/studies/records/papers/paper000_fig_4_satimage.json").read_text())
    learned = record["datasets"]["satimage"]["svgp-step"]["splits"]["0"]
    # the same numbers from the record's split, formatted here, not by the generator
    expected = [f"{round(100 * learned['accuracy'], 1)} %", f"{learned['nll']:.3f}",
                f"{learned['confidence_mean']:.3f} / {learned['confidence_max']:.3f}",
                f"{learned['nll_correct_rows']:.3f}", f"{learned['nll_wrong_rows']:.3f}"]
    assert _cells("satimage_delta")[0] == ["δ learned", *expected]
    assert expected == ["89.9 %", "0.372", "0.869 / 0.903", "0.114", "0.258"]  # as the page's prose reads them


def test_a_summary_row_is_the_mean_and_se_of_the_records_splits():
    record = json.loads((ROOT / "lab/studies/records/papers/paper002_izmailov_2.json").read_text())
    expected = []
    for dataset in ("german", "magic-n3000"):
        for method in ("jj", "jj-full", "jj-hybrid", "taylor", "svgp-logit"):  # the table's order
            splits = record["datasets"][dataset][method]["splits"].values()
            values = [np.array([s[k] for s in splits]) for k in ("accuracy", "nll", "ece", "train_seconds")]
            expected.append([f"{v.mean():.{d}f} ± {v.std(ddof=1) / np.sqrt(v.size):.{d}f}"
                             for v, d in zip(values, (3, 3, 3, 1))])
    assert [row[2:] for row in _cells("izmailov_nll_ece")] == expected


def test_a_row_of_the_papers_page_record_and_a_method_not_run():
    rows = _cells("ringnorm_budget")
    record = json.loads((ROOT / "lab/pages/records/papers/000_tables_3_4.json").read_text())
    mean = {(r["method"], r["metric"]): r["gpal_mean"] for r in record["rows"] if r["setting"] == "ringnorm"}
    assert rows[0][1:] == ["10", *(f"{100 * mean[m, 'accuracy']:.1f} / {mean[m, 'nll']:.3f}"
                                   for m in ("svgp-step", "svgp-probit", "svgp-logit"))]
    assert rows[2][-1] == "–" and rows[3][1:] == ["1 (split 0)", "96.9 / 0.100", "–", "–"]


def test_an_error_cell_is_a_page_records_error_or_one_minus_its_accuracy():
    rows = _cells("milios_magic")
    page = json.loads((ROOT / "lab/pages/records/papers/003_milios_magic.json").read_text())
    error = {r["method"]: (r["gpal_mean"], r["gpal_se"]) for r in page["rows"] if r["metric"] == "error"}
    assert [row[2] for row in rows[:3]] == [f"{error[m][0]:.3f} ± {error[m][1]:.3f}"
                                           for m in ("svgp-softmax-mc-lbfgs", "dirichlet", "gpr-platt")]
    # the released code's likelihood, which the paper publishes no number of: its error is one minus its accuracy
    probit = next(r for r in page["unpublished"] if r["method"] == "svgp-probit" and r["metric"] == "accuracy")
    assert rows[4][1:3] == [str(probit["n"]), f"{1 - probit['gpal_mean']:.3f} ± {probit['gpal_se']:.3f}"]


@pytest.fixture
def docs(tmp_path):
    for page in {t.page for t in TABLES.values()}:
        (tmp_path / page).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(DOCS / page, tmp_path / page)
    return tmp_path


def test_check_notices_a_table_edited_by_hand_and_rewriting_restores_it(docs, capsys):
    page = docs / "papers" / "002_izmailov_kropotov.md"
    original = page.read_text(encoding="utf-8")
    assert main(["--docs", str(docs), "--check"]) == 0
    page.write_text(original.replace("0.468 ± 0.004", "0.470 ± 0.004", 1), encoding="utf-8")
    assert main(["--docs", str(docs), "--check"]) == 1
    assert "002_izmailov_kropotov.md is out of date" in capsys.readouterr().err
    assert main(["--docs", str(docs)]) == 0 and page.read_text(encoding="utf-8") == original


def test_markers_that_are_missing_unknown_or_unpaired_are_named():
    text = (DOCS / "papers" / "000_liu.md").read_text(encoding="utf-8")
    without = re.sub(r"<!-- paper_runs table satimage_delta:.*?<!-- end paper_runs table satimage_delta -->\n", "",
                     text, flags=re.DOTALL)
    with pytest.raises(ValueError, match=r"000_liu\.md: expected each of .*\['satimage_delta'\]"):
        render_page("papers/000_liu.md", without)
    with pytest.raises(ValueError, match=r"table '(fig_4_delta|ringnorm_budget|satimage_delta)' name no table of this page"):
        render_page("papers/002_izmailov_kropotov.md",
                    (DOCS / "papers" / "002_izmailov_kropotov.md").read_text(encoding="utf-8") + text)
    unpaired = text.replace("<!-- end paper_runs table satimage_delta -->", "<!-- end paper_runs table other -->")
    with pytest.raises(ValueError, match="close as 'other'"):
        render_page("papers/000_liu.md", unpaired)


def test_a_record_not_the_studys_or_a_method_it_lacks_is_refused(monkeypatch):
    other = "lab/studies/records/papers/paper001_uci_satimage.json"  # another study's record
    monkeypatch.setitem(TABLES, "t", Table("p.md", ("a", "b"), ("---", "---"),
                                           (Row(("x",), other, "satimage", (Cell("svgp-step"),)),)))
    with pytest.raises(ValueError, match=r"paper001_uci_satimage\.json is not a record of lab/studies/"
                                         r"paper_runs\.yaml"):
        render_table("t")
    runs = "lab/studies/records/papers/paper000_fig_4_satimage.json"
    monkeypatch.setitem(TABLES, "t", Table("p.md", ("a", "b"), ("---", "---"),
                                           (Row(("x",), runs, "satimage", (Cell("svgp-probit"),)),)))
    with pytest.raises(ValueError, match=r"paper000_fig_4_satimage\.json: no run of satimage/svgp-probit"):
        render_table("t")


def test_a_printed_table_is_the_lines_its_command_printed_in_the_studys_record():
    record = json.loads((ROOT / "lab/studies/records/paper000_delta.json").read_text(encoding="utf-8"))
    kept = record["commands"]["python lab/studies/bench_paper000_delta.py paired runs/papers/000_fig_4_10"]
    text = render_table("fig_4_delta")
    assert [line for line in text.splitlines() if line.startswith("|")] == \
        [line for line in kept["printed"] if line.startswith("|")]
    assert "the study `paper000_delta` (`lab/studies/paper000_delta.yaml`)" in text
    assert f"commit `{kept['commit']}`" in text
    # the magic/step row as the page's prose reads it
    assert _cells("fig_4_delta")[0][3:5] == ["0.3736", "0.6847"]


def test_a_printed_table_of_a_command_the_record_lacks_or_of_an_undeclared_record_is_refused(monkeypatch):
    monkeypatch.setitem(TABLES, "t", PrintedTable("p.md", "paper000_delta", "python nothing.py"))
    with pytest.raises(ValueError, match=r"paper000_delta\.json: no command 'python nothing\.py'"):
        render_table("t")
    monkeypatch.setitem(TABLES, "t", PrintedTable("p.md", "calibration", "python x.py"))
    with pytest.raises(ValueError, match=r"records/calibration\.json is not a record of lab/studies/calibration"):
        render_table("t")


def test_a_study_table_reads_its_studys_record_at_the_shown_precision():
    """Paper 000's Fig. 4(b) table: each row's numbers are the record's checkpoint, and only the declared
    checkpoints carry the rule's verdict bare."""
    record = json.loads((ROOT / "lab/studies/records/papers/paper000_curves.json").read_text())
    rows = _cells("gpcsm_early")
    assert [r[0] for r in rows] == [str(c["steps"]) for c in record["rows"]]
    for row, checkpoint in zip(rows, record["rows"]):
        low = checkpoint["gpcsm_minus"]["GPC-I"][1]
        assert row[2].endswith(f"{low:+.3f}".replace("-", "−") + ", " + f"{checkpoint['gpcsm_minus']['GPC-I'][2]:+.3f}"
                               .replace("-", "−") + "]")
        assert (row[5] == checkpoint["verdict"]) is checkpoint["early"]
    assert "`lab/studies/paper000_curves.yaml`" in render_table("gpcsm_early")


def test_the_learned_delta_table_pairs_the_sides_of_each_likelihood():
    row = {"dataset": "waveform_noise", "classes": 3, "split": 0, "refit_nll": 0.3, "unit_nll": 0.31}
    record = {"learned_delta": [{**row, "likelihood": "step", "side": "without", "delta": 0.0123},
                                {**row, "likelihood": "step", "side": "with", "delta": 0.00456, "unit_nll": None},
                                {**row, "likelihood": "probit", "side": "with", "delta": 0.002},
                                {**row, "likelihood": "probit", "side": "without", "delta": 0.003}]}
    assert paper_runs_tables._delta_prior_learned(record) == [
        ("waveform_noise", "step", "0", "0.0123", "0.00456", "0.3000 / 0.3100", "0.3000 / –"),
        ("waveform_noise", "probit", "0", "0.003", "0.002", "0.3000 / 0.3100", "0.3000 / 0.3100")]


def test_a_study_table_of_a_record_its_study_does_not_list_is_refused(monkeypatch):
    table = TABLES["gpcsm_early"]
    monkeypatch.setitem(TABLES, "gpcsm_early", StudyTable(table.page, "paper000_delta", table.record, table.head,
                                                          table.align, table.rows))
    with pytest.raises(ValueError, match=r"paper000_curves\.json is not a record of lab/studies/"
                                         r"paper000_delta\.yaml"):
        render_table("gpcsm_early")


def test_a_study_tables_other_records_are_named_with_their_commits_and_must_be_the_studys(monkeypatch):
    table = TABLES["synthetic_authors_code"]
    text = render_table("synthetic_authors_code")
    for path in table.also:
        assert f"`{path}` (commit `{json.loads((ROOT / path).read_text(encoding='utf-8'))['commit']}`)" in text
    monkeypatch.setitem(TABLES, "synthetic_authors_code", StudyTable(
        table.page, table.study, table.record, table.head, table.align, table.rows,
        also=(*table.also, "lab/studies/records/papers/paper000_curves.json")))
    with pytest.raises(ValueError, match=r"paper000_curves\.json is not a record of lab/studies/paper001_authors"):
        render_table("synthetic_authors_code")


def test_a_changed_study_record_changes_paper_004s_numbers_page(tmp_path, monkeypatch):
    """The explanation beside paper 004's record holds only markers; its tables come from the study's printed lines,
    so a remade record remakes the page's numbers."""
    import papers_page

    for path in {path for table in TABLES.values() if table.page == "papers/004_numbers.md"
                 for path in (table.declaration, table.record)}:
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / path, tmp_path / path)
    record = json.loads((tmp_path / "lab/studies/records/augmented_gap.json").read_text())
    paired = record["commands"]["python lab/studies/bench_augmented_gap.py paired runs/papers/004_augmented"]
    cavi = next(r for r in paired["printed"] if isinstance(r, dict) and r["method"] == "ls-cavi"
                and r["data"] == "digits-n600" and "against" not in r)
    before = render_table("augmented_methods")
    assert f"{cavi['nll']:.3f} ± {cavi['nll_se']:.3f}, {cavi['ece']:.3f}" in before
    cavi["nll"] = 9.876
    (tmp_path / "lab/studies/records/augmented_gap.json").write_text(json.dumps(record))
    monkeypatch.setattr(paper_runs_tables, "ROOT", tmp_path)
    after = render_table("augmented_methods")
    assert "9.876 ± " in after and after.replace("9.876", f"{0.835:.3f}") == before
    page = papers_page.render_pages(papers_page.RECORDS / "papers")["papers/004_numbers.md"]
    assert after in page and "<!-- end paper_runs table augmented_methods -->" in page


def test_the_authors_code_pairs_are_paired_t_intervals_over_the_splits_both_sides_ran():
    """Checked against scipy's paired t test: its statistic and the t quantile give the same interval; a split one
    side lacks is left out of the pair, and a pair with fewer than two splits gets no row."""
    from scipy import stats

    nll = {("MGP", "authors"): [0.56, 0.87, 1.03], ("MGP", "gpal"): [0.46, 0.70, 0.84],
           ("NIMGP-FO", "authors"): [0.54, 0.84], ("NIMGP-FO", "gpal"): [0.46, 0.70, 0.85]}
    record = {"settings": {"splits": 3, "methods": ["MGP", "NIMGP-FO"]},
              "units": [{"method": m, "side": side, "split": s, "nll": v}
                        for (m, side), values in nll.items() for s, v in enumerate(values)]}
    rows = {what: (n, cell) for what, n, cell in paper_runs_tables._authors_code_001_paired(record)}
    a, g = np.array(nll["MGP", "authors"]), np.array(nll["MGP", "gpal"])
    test = stats.ttest_rel(g, a)
    se = (g - a).mean() / test.statistic
    half = stats.t.ppf(0.975, 2) * se
    expected = "{:+.3f} [{:+.3f}, {:+.3f}]".format((g - a).mean(), (g - a).mean() - half, (g - a).mean() + half)
    assert rows["MGP: gpal − authors' code"] == ("3", expected.replace("-", "−"))
    assert rows["NIMGP-FO: gpal − authors' code"][0] == "2"  # split 2 has no authors' NIMGP-FO
    assert rows["authors' code: NIMGP-FO − MGP"][0] == "2" and rows["gpal: NIMGP-FO − MGP"][0] == "3"
    assert not any("NIMGP −" in what or "− NIMGP" in what for what in rows)  # NIMGP was not run
    # the MGP with the authors' label flips, where the record has it, against gpal's own methods
    floor = [0.48, 0.72, 0.87]
    record["settings"]["sides"] = ["authors", "gpal", "gpal floor"]
    record["units"] += [{"method": "MGP", "side": "gpal floor", "split": s, "nll": v} for s, v in enumerate(floor)]
    rows = {what: (n, cell) for what, n, cell in paper_runs_tables._authors_code_001_paired(record)}
    d = np.array(floor) - g
    assert rows["gpal: MGP with the authors' label flips − MGP"][1].startswith(f"{d.mean():+.3f}".replace("-", "−"))
    assert rows["gpal: NIMGP-FO − MGP with the authors' label flips"][0] == "3"

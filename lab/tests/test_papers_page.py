"""The papers page (lab/pages/papers_page.py): built from a run's comparison, refusing records whose workflow is gone
or differs, and up to date with the repository's records."""

import json
import re
import shutil

import pytest

from gpal.workflows import run_workflow
from labkit.paper_comparison import PUBLISHED, published, read_published
from papers_page import main as papers_page_main
from papers_page import MAX_LINES, render, render_pages


def test_a_run_is_recorded_and_the_page_built_from_it(tmp_path, capsys):
    path = tmp_path / "toy_ref.yaml"
    path.write_text("workflow: toy_1d\nmethods: [MGP]\n")
    docs, records = tmp_path / "docs", tmp_path / "records" / "papers"
    (records / "published").mkdir(parents=True)
    (records / "published" / "toy_ref.yaml").write_text(
        f"workflow: {path}\nsource: {{paper: P, table: T1, spread: SE, repeats: 1, budget: {{repeats: 1, epochs: 750}}}}\n"
        'values: {"toy_1d": {"MGP": {"nll": [0.88, 0.08]}}}\nnotes: the explanation\n')
    out = run_workflow(path, ["data.n_train=60", "data.n_test=40", "training.epochs=2", "training.num_inducing=5",
                              "training.n_samples=4", "plot.grid_points=20"], out=tmp_path / "run", progress=False)
    result = json.loads((out / "measurements.json").read_text())
    folders = ["--docs", str(docs), "--records", str(records)]
    assert papers_page_main([*folders, "--record", str(out)]) == 0
    page, numbers = (docs / "papers.md").read_text(), (docs / "papers" / "toy_ref_numbers.md").read_text()
    assert "## P" in page and "(papers/toy_ref_numbers.md)" in page
    assert "the explanation" in numbers and result["commit"] in numbers
    assert papers_page_main([*folders, "--check"]) == 0
    (records / "toy_ref.md").write_text("Why the numbers differ.\n")
    assert papers_page_main([*folders, "--check"]) == 1  # a new explanation makes the page stale
    recorded = json.loads((records / "toy_ref.json").read_text())
    assert recorded["workflow"] == str(path.resolve()) and result["workflow"] == "toy_ref"  # the file, not the stem
    path.unlink()  # a record whose workflow is gone is refused, naming both
    capsys.readouterr()
    assert papers_page_main([*folders, "--check"]) == 2  # said on the terminal, no traceback
    assert re.search(r"toy_ref\.json: its workflow .*toy_ref\.yaml \(field 'workflow'\) does not exist",
                     capsys.readouterr().err)


@pytest.fixture
def paper_docs(tmp_path):
    """A copy of the papers page's records and claims (``records/papers``, the results records beside them), which
    renders as the repository's do; the pages written to ``docs``."""
    from papers_page import RECORDS

    shutil.copytree(RECORDS, tmp_path / "records")
    assert papers_page_main(_paper_folders(tmp_path)) == 0
    return tmp_path


def _paper_folders(tmp_path):
    return ["--docs", str(tmp_path / "docs"), "--records", str(tmp_path / "records" / "papers")]


@pytest.mark.parametrize(("change", "message"), [
    ({"workflow": None}, r"000_fig_4\.json: no field 'workflow'"),
    ({"workflow": "gpal/workflows/files/papers/000_gone.yaml"}, r"000_fig_4\.json: its workflow gpal/workflows/files/papers/000_gone\.yaml "
                                                     r"\(field 'workflow'\) does not exist"),
    ({"workflow": "gpal/workflows/files/papers/000_table_5.yaml"}, r"000_fig_4\.json: field 'workflow' is "
                                                        r"gpal/workflows/files/papers/000_table_5\.yaml, but its command ran"),
    ({"command": "gpal workflow papers/000_gone"}, r"000_fig_4\.json: field 'command' runs papers/000_gone, "
                                                   r"which does not exist"),
])
def test_a_papers_record_without_the_workflow_that_made_it_is_refused(paper_docs, change, message, capsys):
    path = paper_docs / "records" / "papers" / "000_fig_4.json"
    record = {**json.loads(path.read_text()), **change}  # a field changed to None is left out
    path.write_text(json.dumps({k: v for k, v in record.items() if v is not None}))
    capsys.readouterr()
    assert papers_page_main([*_paper_folders(paper_docs), "--check"]) == 2
    assert re.search(message, capsys.readouterr().err)


def test_the_papers_page_is_up_to_date_with_its_records():
    from papers_page import DOCS, RECORDS

    pages = render_pages(RECORDS / "papers")
    assert pages["papers.md"] == render(RECORDS / "papers")
    for name, text in pages.items():
        assert (DOCS / name).read_text(encoding="utf-8") == text, \
            f"docs/{name} is stale: run python lab/pages/papers_page.py"
    # each paper in one screen: its implementation, headline numbers and claims; the statistics on the sub-pages
    sections = pages["papers.md"].split("\n## ")[1:]
    assert len(sections) == 5
    for section in sections:
        assert len(section.rstrip("\n").split("\n")) <= MAX_LINES, section.split("\n")[0]


def test_each_record_holds_its_workflows_published_numbers():
    """A published number lives in its workflow's file of published numbers; the record beside the page must agree."""
    from papers_page import RECORDS, ROOT

    workflows = ROOT / "gpal" / "workflows" / "files"
    for path in sorted((RECORDS / "papers").glob("*.json")):
        record = json.loads(path.read_text(encoding="utf-8"))
        source = ROOT / record["workflow"]
        assert source.is_file() and source.is_relative_to(workflows), f"{path.name}: no workflow {record['workflow']}"
        reference = read_published(PUBLISHED / f"{source.stem}.yaml")
        assert reference["workflow"] == record["workflow"], path.name
        published_values = {(r["setting"], r["method"], r["metric"]): [r["paper_mean"], r["paper_se"]]
                            for r in record["rows"]}
        expected = {(s, m, k): v for s, methods in reference["values"].items() for m, metrics in methods.items()
                    for k, v in metrics.items()}
        expected = {key: [v[0], published(reference, key[0])[key[1]][key[2]][1]] for key, v in expected.items()}
        assert record["source"] == reference["source"], f"{path.name}: source differs from {source}"
        assert published_values == expected, f"{path.name}: published numbers differ from {source}"
        assert record["corrections"] == reference["corrections"] and record["notes"] == reference["notes"], path.name


def _row(setting, n, mean):
    return {"setting": setting, "method": "MGP", "metric": "nll", "paper_mean": 0.5, "paper_se": 0.01,
            "gpal_mean": mean, "gpal_se": 0.01 if n > 1 else None, "n": n, "printed": None}


def test_a_workflows_parts_merge_into_one_record_and_a_number_measured_twice_is_refused():
    from papers_page import merged_record

    nan = float("nan")
    wine = {"source": {"spread": "SE"}, "rows": [_row("wine/0", 4, 0.3), _row("vehicle/0", 0, nan)]}
    vehicle = {"source": {"spread": "SE"}, "rows": [_row("wine/0", 0, nan), _row("vehicle/0", 4, 0.6)]}
    merged = merged_record([vehicle, wine], "here")
    assert {r["setting"]: r["gpal_mean"] for r in merged["rows"]} == {"wine/0": 0.3, "vehicle/0": 0.6}
    assert merged_record([wine], "here")["rows"][1]["n"] == 0  # a setting no part ran stays "not run"
    with pytest.raises(ValueError, match="here: wine/0/MGP/nll is measured by two"):
        merged_record([wine, wine], "here")


def test_a_part_is_recorded_beside_the_workflows_record_and_named_safely(tmp_path):
    from papers_page import record

    run = tmp_path / "run"
    run.mkdir()
    (run / "measurements.json").write_text(json.dumps({
        "workflow": "001_uci_input_noise", "command": "gpal workflow papers/001_uci_input_noise", "title": "t",
        "commit": "c", "settings": {}, "budget": {"splits": 1}, "values": []}))
    shutil.copytree(PUBLISHED, tmp_path / "docs" / "published")
    assert record(run, tmp_path / "docs", "wine").name == "001_uci_input_noise.wine.json"
    recorded = json.loads(record(run, tmp_path / "docs").read_text())
    assert recorded["workflow"] == "gpal/workflows/files/papers/001_uci_input_noise.yaml"  # the file, from the repository's top
    with pytest.raises(ValueError, match="a part is a name of letters"):
        record(run, tmp_path / "docs", "../wine")

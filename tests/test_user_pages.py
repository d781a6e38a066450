"""The user pages are reference, not a diary: no commit hashes and no machine load averages in their running text.

A number measured at a commit is recorded on the results or papers page (their records in
``lab/pages/records/``), whose provenance lines name the command, the commit and the machine; a user page may
point there. Commands in fenced code blocks are not running text (``compare_commits.py A B`` takes commits as
arguments), but their comments are (``gpal classify ...  # at <commit>`` is a provenance line)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).parents[1] / "docs"
#: The pages that keep provenance lines: the generated pages and the papers' pages.
PROVENANCE = {"results.md", "papers.md", "papers", "_build"}
USER_PAGES = sorted(p for p in DOCS.rglob("*.md") if not PROVENANCE & {p.relative_to(DOCS).parts[0]})

#: 7 to 40 hexadecimal characters with a digit and a letter, standing alone (not inside a path, anchor or word).
COMMIT = re.compile(r"(?<![\w./#-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}(?![\w-])")
#: "load average 5", "load ~25", "load averages of 4-7", "loadavg 3".
LOAD = re.compile(r"\bload(?:avg| averages?)?(?: of| was| at| near| around| about)?\s*[~≈]?\s*\d", re.I)


#: A comment in a fenced code block: ``#`` at the start of a line or after a blank (not a URL's or a path's anchor).
COMMENT = re.compile(r"(?:^|\s)#(.*)$")


def _running_text(page: Path) -> list[tuple[int, str]]:
    """The page's lines outside fenced code blocks and the comments inside them, numbered from 1."""
    lines, fenced = [], False
    for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced:
            lines.append((number, line))
        elif comment := COMMENT.search(line):
            lines.append((number, comment[1]))
    return lines


def test_the_user_pages_are_found():
    names = {p.relative_to(DOCS).as_posix() for p in USER_PAGES}
    assert {"index.md", "getting_started.md", "targets.md", "tutorials/classify_catalog.md"} <= names
    assert not names & {"results.md", "papers.md"}


@pytest.mark.parametrize("page", USER_PAGES, ids=lambda p: p.relative_to(DOCS).as_posix())
def test_no_commit_hash_or_load_average_in_running_text(page):
    found = [f"{page.relative_to(DOCS)}:{number}: {match[0]!r}" for number, line in _running_text(page)
             for pattern in (COMMIT, LOAD) for match in pattern.finditer(line)]
    assert not found, ("commit hashes or load figures in a user page's running text (record them on the results "
                       "page and point there):\n" + "\n".join(found))


@pytest.mark.parametrize(("line", "caught"), [
    ("measured at commit `cc240a7` on the machine", True), ("(load average ~25 on the 2-core machine)", True),
    ("load averages of 4-7", True), ("see [results](results.md#under-the-earlier-bcu-rule-f099ab0)", False),
    ("NLL 0.0983 and 1234567 sources", False), ("a decade of accrued data", False), ("loaded 2 cores", False),
])
def test_the_patterns_catch_hashes_and_loads_not_numbers_or_anchors(line, caught):
    assert bool(COMMIT.search(line) or LOAD.search(line)) is caught


def test_a_commit_in_a_commands_comment_is_running_text_and_its_arguments_are_not(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("Text.\n\n```bash\ngpal classify --out x   # at f7f87e2\n"
                    "python benchmarks/compare_commits.py 2b82606 f1b836f\nls docs/results.md#a1b2c3d\n```\n",
                    encoding="utf-8")
    found = [(number, match[0]) for number, line in _running_text(page) for match in COMMIT.finditer(line)]
    assert found == [(4, "f7f87e2")]


#: A repository path of the lab, its studies' records included, as a page names it
#: (``lab/studies/bench_plane.py``, ``lab/studies/records/table9_account.md``): the README and site pages
#: point a reader at them, so each must exist.
LAB_PATH = re.compile(r"(?<![\w/.-])((?:lab/(?:studies|pages|tools)|benchmarks)/[\w./-]*\w)")
SITE_PAGES = [DOCS.parent / "README.md",
              *sorted(p for p in DOCS.rglob("*.md") if p.relative_to(DOCS).parts[0] != "_build")]


def test_every_lab_script_and_study_record_a_page_names_exists():
    named = {(page.relative_to(DOCS.parent).as_posix(), m.group(1))
             for page in SITE_PAGES for m in LAB_PATH.finditer(page.read_text(encoding="utf-8"))}
    assert any(path.startswith("lab/studies/records/") for _, path in named)
    assert any(path.startswith("lab/studies/") and not path.startswith("lab/studies/records/")
               for _, path in named)
    missing = sorted(f"{page}: {path}" for page, path in named if not (DOCS.parent / path).exists())
    assert not missing, "pages name paths that do not exist:\n" + "\n".join(missing)


@pytest.mark.parametrize(("text", "found"), [
    ("run `python lab/studies/bench_plane.py --seeds 0`.", ["lab/studies/bench_plane.py"]),
    ("(lab/studies/records/table9_account.md) and benchmarks/suite/.",
     ["lab/studies/records/table9_account.md", "benchmarks/suite"]),
    ("the asv benchmarks' environment; gpal/workflows/x.py", []),
])
def test_the_lab_path_pattern(text, found):
    assert [m.group(1) for m in LAB_PATH.finditer(text)] == found

"""The user pages are reference, not a diary: no commit hashes and no machine load averages in their running text.

A number measured at a commit is recorded on the results or papers page (their records in
``lab/pages/records/``), whose provenance lines name the command, the commit and the machine; a user page may
point there. Commands in fenced code blocks are not running text (``compare_commits.py A B`` takes commits as
arguments), but their comments are (``gpal classify ...  # at <commit>`` is a provenance line)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from generated_page import RECORDS  # the lab's page generators' records: the results page's explanations

DOCS = Path(__file__).parents[2] / "docs"
#: The pages that keep provenance lines: the generated pages (the tables included from records among them) and the
#: papers' pages.
PROVENANCE = {"results.md", "papers.md", "papers", "_build", "_facts"}
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


#: The pages a user reads, not a contributor: the README, the catalogs' README, getting started, the tutorials, the
#: user guide's pages (its toctree) and the results page's hand-written explanations. The contributor pages
#: (contributing, architecture, benchmarks) may name tests and CI; the papers' pages are studies of their own.
_GUIDE = re.search(r"```\{toctree\}\n(?::[^\n]*\n|\n)*((?:\w[\w/]*\n)+)```",
                   (DOCS / "user_guide.md").read_text(encoding="utf-8"))[1].split()
FOR_USERS = [DOCS.parent / "README.md", DOCS.parent / "catalogs" / "README.md", DOCS / "index.md",
             DOCS / "getting_started.md", DOCS / "user_guide.md", *sorted((DOCS / "tutorials").glob("*.md")),
             *(DOCS / f"{name}.md" for name in _GUIDE),
             *sorted((RECORDS / "results").glob("*.md"))]
#: "issue 72", "Issue #72".
ISSUE = re.compile(r"\bissues? #?\d+", re.I)
#: A path into the test suite, as a page would cite one (`tests/test_cli.py`, tests/catalogs/).
TESTS_PATH = re.compile(r"(?<![\w.-])tests/")
#: A path on the machine the project was made on, or a scratch folder: no user has it.
MACHINE_PATH = re.compile(r"(?<![\w.~-])/(?:work|root|home|tmp)/")
#: A "how measured" line: it names the record its numbers come from (or the repository a shipped file was taken
#: from) and the commit that made them.
HOW_MEASURED = re.compile(r"(?:record `[^`]+`|repository \S+).*commit `?[0-9a-f]{7,40}")


def _page_lines(page: Path) -> list[tuple[int, str]]:
    return list(enumerate(page.read_text(encoding="utf-8").splitlines(), 1))


def test_the_pages_for_users_are_found():
    names = {p.relative_to(DOCS.parent).as_posix() for p in FOR_USERS}
    assert {"README.md", "docs/cli.md", "docs/catalogs.md", "docs/tutorials/classify_catalog.md"} <= names
    assert any(name.endswith("records/results/later_labels.md") for name in names)
    assert all(p.is_file() for p in FOR_USERS)


@pytest.mark.parametrize("page", FOR_USERS, ids=lambda p: p.relative_to(DOCS.parent).as_posix())
def test_a_page_for_users_names_no_issue_test_file_machine_path_or_stray_commit(page):
    found = [f"{page.relative_to(DOCS.parent)}:{number}: {match[0]!r}" for number, line in _page_lines(page)
             for pattern in (ISSUE, TESTS_PATH, MACHINE_PATH) for match in pattern.finditer(line)]
    found += [f"{page.relative_to(DOCS.parent)}:{number}: {match[0]!r} outside a how-measured line"
              for number, line in _running_text(page) if not HOW_MEASURED.search(line)
              for match in COMMIT.finditer(line)]
    assert not found, ("a page for users names an issue, a test file, a machine path or a commit (say what the user "
                       "needs; provenance goes on a how-measured line: record and commit):\n" + "\n".join(found))


@pytest.mark.parametrize(("line", "caught"), [
    ("as issue 72 quotes them", True), ("Issue #5's target", True), ("kept by `tests/test_cli.py`", True),
    ("the file of `/work/shared/catalogs/psrcat/`", True), ("--out /tmp/quick", True), ("/home/me/run", True),
    ("the issue is the plane", False), ("attests/ nothing", False), ("runs/quick and ~/tmp/x", False),
])
def test_the_patterns_catch_issues_tests_and_machine_paths(line, caught):
    assert any(p.search(line) for p in (ISSUE, TESTS_PATH, MACHINE_PATH)) is caught


def test_a_how_measured_line_names_a_record_and_a_commit():
    assert HOW_MEASURED.search("Workflow `gpal/workflows/files/main_job.yaml`; record `records/results/main_job.json`, "
                               "commit `4184cbd26b`:")
    assert not HOW_MEASURED.search("At commit f099ab0, before the association-weighted bcu rule")

"""The documentation site builds with warnings as errors, in nitpicky mode, with every tutorial executed: an
example that stopped working, a broken cross-reference or a docstring that is not valid reStructuredText fails
the build and the build names it.  `.ci/run` builds the site once (``python -m sphinx -W ...``) and names it in
`SITE_VARIABLE`, so the check of the tutorials' outputs reads that build instead of making a second one; without
it the check builds the site itself.  The build is CI's, not the library's test run: it takes minutes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
DOCS = ROOT / "docs"
#: The environment variable naming a site already built from docs/ with warnings as errors (`.ci/run` sets it).
SITE_VARIABLE = "GPAL_BUILT_SITE"
TUTORIALS = sorted(p.stem for p in (DOCS / "tutorials").glob("*.md") if p.stem != "index")


def _sphinx(source: Path, out: Path) -> subprocess.CompletedProcess:
    """``python -m sphinx -W --keep-going -n`` as contributing.md gives it, with this Python's `gpal` on PATH."""
    env = {**os.environ, "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]), "MPLBACKEND": "Agg"}
    return subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-n", "-q", "-b", "html",
                           str(source), str(out)], capture_output=True, text=True, env=env, cwd=ROOT)


@pytest.mark.slow
def test_the_site_builds_without_warnings_with_every_tutorial_executed(tmp_path):
    site = Path(os.environ[SITE_VARIABLE]) if os.environ.get(SITE_VARIABLE) else None
    if site is None:
        site = tmp_path / "html"
        built = _sphinx(DOCS, site)
        assert built.returncode == 0, f"the docs build failed:\n{built.stderr[-6000:]}"
    assert TUTORIALS, "no tutorials found in docs/tutorials"
    for name in TUTORIALS:
        page = site / "tutorials" / f"{name}.html"
        assert page.is_file(), f"{site} holds no page of the tutorial {name}: is it a build of docs/?"
        assert "cell_output" in page.read_text(encoding="utf-8"), f"the tutorial {name} has no executed output"
    api = (site / "api" / "generated" / "gpal.NoisyGPClassifier.html")
    assert "input_noise" in api.read_text(encoding="utf-8"), "the API page of NoisyGPClassifier lacks its parameters"
    assert "fit" in (site / "api" / "index.html").read_text(encoding="utf-8")


def _site(tmp_path: Path, index: str, pages: dict[str, str]) -> Path:
    """A small site with the real docs/conf.py: ``index.md`` and the given pages."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "conf.py").write_text(
        f"__file__ = {str(DOCS / 'conf.py')!r}\nexec(compile(open(__file__).read(), __file__, 'exec'))\n"
        "exclude_patterns = ['_build']\n", encoding="utf-8")
    (site / "index.md").write_text(index, encoding="utf-8")
    for name, text in pages.items():
        (site / f"{name}.md").write_text(text, encoding="utf-8")
    return site


@pytest.mark.slow
def test_a_broken_link_fails_the_build_by_name_and_the_other_pages_still_show_terminal_lines_whole(tmp_path):
    """One build for two checks (each build costs a Sphinx start and a kernel): a link to a missing page fails the
    build and the build names the page; ``--keep-going`` writes the other pages, where a ``%%bash`` cell's output,
    which reaches the notebook in 100-byte chunks, shows each line as printed."""
    line = " ".join(f"word{i:03d}" for i in range(40))
    notebook = ("---\njupytext:\n  text_representation:\n    format_name: myst\nkernelspec:\n  name: python3\n"
                "  display_name: Python 3\n---\n# Terminal\n\n"
                f"```{{code-cell}} ipython3\n%%bash\necho '{line}'\necho 'second line'\n```\n")
    site = _site(tmp_path, "# Site\n\nSee [the missing page](missing.md).\n\n```{toctree}\nterminal\n```\n",
                 {"terminal": notebook})
    built = _sphinx(site, tmp_path / "html")
    assert built.returncode != 0
    assert "missing" in built.stderr and "index.md" in built.stderr, built.stderr[-3000:]
    assert "terminal.md" not in built.stderr, built.stderr[-3000:]  # the notebook's page itself built cleanly
    page = (tmp_path / "html" / "terminal.html").read_text(encoding="utf-8")
    assert len(line) > 300 and f"{line}\nsecond line" in page


@pytest.mark.slow
def test_a_failing_tutorial_fails_the_build_by_name(tmp_path):
    broken = ("---\njupytext:\n  text_representation:\n    format_name: myst\nkernelspec:\n  name: python3\n"
              "  display_name: Python 3\n---\n# Broken\n\n"
              "```{code-cell} ipython3\nraise RuntimeError('this tutorial broke')\n```\n")
    site = _site(tmp_path, "# Site\n\n```{toctree}\nbroken\n```\n", {"broken": broken})
    built = _sphinx(site, tmp_path / "html")
    assert built.returncode != 0
    assert "broken.md" in built.stderr and "ExecutionError" in built.stderr, built.stderr[-3000:]

"""The README states what the code does: the main job's settings as the code declares them (its example said 300
epochs long after the default became 50), a Python example that runs and prints what its comments say, the two
commands CI reads, and links that lead somewhere."""

from __future__ import annotations

import json
import re
import shlex
import tomllib
from pathlib import Path

import pytest

from gpal.catalog_jobs.selection import CatalogSelection
from gpal.catalog_jobs.settings import MAIN_JOB_ESTIMATOR

ROOT = Path(__file__).parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _python_blocks() -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", README, flags=re.S | re.M)


def test_the_main_job_description_gives_the_declared_inducing_points_epochs_and_step():
    found = re.search(r"(\d+) inducing\s+points, (\d+) epochs\s+at\s+Adam\s+step\s+([\d.]+)", README)
    assert found, "the README no longer describes the main job's inducing points, epochs and Adam step"
    stated = {"num_inducing": int(found[1]), "epochs": int(found[2]), "learning_rate": float(found[3])}
    assert stated == {key: MAIN_JOB_ESTIMATOR[key] for key in stated}


def test_the_table_example_reads_back_the_default_catalog_and_the_declared_epochs():
    found = re.search(r'table\.meta\["FITCONF"\]\["epochs"\]\s+# \'(\w+)\', (\d+)', README)
    assert found, "the README's astropy example no longer reads FITCONF's epochs"
    assert (found[1], int(found[2])) == (CatalogSelection().catalog, MAIN_JOB_ESTIMATOR["epochs"])


def test_ci_reads_one_command_after_each_marker():
    """.ci/run runs the first line of the fenced block after each marker: both are there, one line each."""
    for marker in ("main-job", "tests"):
        found = re.search(rf"^<!-- ci:{marker} -->\n```bash\n([^\n]+)\n```$", README, flags=re.M)
        assert found, f"the README lacks the <!-- ci:{marker} --> marker followed by a one-line bash block"
    assert "gpal classify" in re.search(r"<!-- ci:main-job -->\n```bash\n([^\n]+)", README)[1]
    assert "pytest" in re.search(r"<!-- ci:tests -->\n```bash\n([^\n]+)", README)[1]


def test_every_relative_link_leads_to_a_file():
    targets = re.findall(r"\]\(((?!https?:)[^)#\s]+)(?:#[^)]*)?\)", README)
    assert targets, "the README links to no page of its own"
    missing = [t for t in targets if not (ROOT / t).exists()]
    assert not missing, f"README links to files that do not exist: {missing}"


def test_the_sphinx_command_comes_with_the_docs_extra_that_installs_sphinx():
    found = re.search(r"`pip install -e \"\.\[(\w+)\]\" && python -m sphinx [^`]*`", README)
    assert found, "the README gives the Sphinx build without installing the extra that brings Sphinx"
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    assert {"sphinx", "myst-nb", "numpydoc"} <= {re.split(r"[<>=\[ ]", dep)[0] for dep in extras[found[1]]}


def _as_run(command: str) -> list[str]:
    """A command's words without what does not change its numbers: environment settings and ``--out DIR``."""
    words = [w for w in shlex.split(command, comments=True) if not re.fullmatch(r"[A-Z_]+=\S*", w)]
    return [w for i, w in enumerate(words) if w != "--out" and (i == 0 or words[i - 1] != "--out")]


def test_each_headline_row_of_a_gpal_command_gives_the_command_its_record_was_made_with():
    """The row's gpal number is in one results record (lab/pages/records/results/*.json), made with the row's
    command."""
    rows = re.findall(r"^\| ([^|]+) \| ([\d.]+)[^|]* \|[^|]*\| `(gpal [^`]+)` \|$", README, flags=re.M)
    assert len(rows) >= 3, "the README's headline table lost its rows of gpal commands"
    folder = ROOT / "lab" / "pages" / "records" / "results"
    records = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.json"))]
    for check, number, command in rows:
        holding = [r for r in records if _as_run(r["command"])[0] == "gpal" and f'"{number}' in json.dumps(r["tables"])]
        assert holding, f"no results record holds {number} ({check})"
        assert any(_as_run(r["command"]) == _as_run(command) for r in holding), \
            f"{check}: the README says `{command}`, the record holding {number} was made with " \
            f"{[r['command'] for r in holding]}"


def test_no_history_in_the_readme():
    narrated = re.findall(r"\b(?:session|issue)s? \d+", README, flags=re.I)
    assert not narrated, f"the README narrates its history: {narrated}"


@pytest.mark.slow
def test_the_python_example_runs_and_gives_the_shape_it_states(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    example = next(block for block in _python_blocks() if "NoisyGPClassifier" in block)
    stated = re.search(r"proba = .*# \((\d+), (\d+)\)", example)
    assert stated, "the README's Python example no longer states the shape of its probabilities"
    names: dict[str, object] = {}
    exec(compile(example, "README.md", "exec"), names)  # noqa: S102 - the README's own example
    proba, pool, ranked = names["proba"], names["pool"], names["ranked"]
    assert proba.shape == (int(stated[1]), int(stated[2]))
    assert sorted(ranked) == sorted(pool.ids) and len(ranked) == len(pool.ids)

#!/usr/bin/env python
"""Two commits' timings compared in one command: the asv suite run at each, then ``asv compare``.

``asv continuous`` builds a fresh environment per commit (TensorFlow included) and refuses the existing one
("No range spec may be specified if benchmarking in an existing environment").  This runs the suite of this
checkout (``benchmarks/suite``) in the environment gpal is installed in, once per commit, with that commit's
gpal first on the benchmarks' path: asv drops ``PYTHONPATH`` but passes ``ASV_PYTHONPATH``, pointed at the
commit's files exported by ``git archive``.  The results are stored under the commits' hashes, so
``asv publish`` shows them in the history too::

    python benchmarks/compare_commits.py main HEAD                            # every benchmark
    python benchmarks/compare_commits.py main HEAD --bench MainJobStep        # what asv run selects
    python benchmarks/compare_commits.py main HEAD --factor 1.2 --quick       # other options go to asv run

Prints asv compare's table (``+``: slower beyond ``--factor``, ``-``: faster, ``!``: failed) and exits 1 if
a benchmark got slower or failed at the second commit, as ``asv continuous`` does.  Compare on a quiet
machine: other work moves the timings more than most changes do.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def export(commit: str, into: Path) -> None:
    """The files of ``commit`` (``git archive``) unpacked into ``into``."""
    archive = into.with_suffix(".tar")
    with archive.open("wb") as out:
        subprocess.run(["git", "archive", commit], cwd=ROOT, check=True, stdout=out)
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    archive.unlink()


def regressed(table: str) -> bool:
    """Whether asv compare's table marks a benchmark slower (``+``) or failed (``!``)."""
    return any(line.split("|")[1].strip() in ("+", "!") for line in table.splitlines()
               if line.startswith("|") and line.count("|") > 2)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("base", help="the commit to compare against (a hash, branch or tag)")
    parser.add_argument("other", help="the commit to test")
    parser.add_argument("--factor", type=float, default=1.1, help="the ratio beyond which a change counts (asv's)")
    args, run_options = parser.parse_known_args(argv)
    commits = []
    for name in (args.base, args.other):
        found = subprocess.run(["git", "rev-parse", "--verify", "--quiet", f"{name}^{{commit}}"], cwd=ROOT,
                               capture_output=True, text=True)
        if found.returncode:
            print(f"error: {name!r} is not a commit of {ROOT}", file=sys.stderr)
            return 2
        commits.append(found.stdout.strip())
    asv = [sys.executable, "-m", "asv"]
    if not (Path.home() / ".asv-machine.json").is_file():
        subprocess.run([*asv, "machine", "--yes"], cwd=ROOT, check=True)
    with tempfile.TemporaryDirectory() as work:
        for commit in commits:
            source = Path(work) / commit
            export(commit, source)
            print(f"timing {commit[:10]} (its gpal from {source})", flush=True)
            subprocess.run([*asv, "run", "-E", f"existing:{sys.executable}", "--set-commit-hash", commit,
                            *run_options], cwd=ROOT, env={**os.environ, "ASV_PYTHONPATH": str(source)}, check=True)
    table = subprocess.run([*asv, "compare", "--factor", str(args.factor), *commits], cwd=ROOT, check=True,
                           capture_output=True, text=True).stdout
    print(table)
    return 1 if regressed(table) else 0


if __name__ == "__main__":
    sys.exit(main())

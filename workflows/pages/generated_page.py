"""A docs page generated from records: where the docs are, and writing it or checking that it is current.

The pages built this way (``docs/papers.md``, ``docs/results.md``) are never edited by hand, so a test
regenerates each in memory and compares it with the file (``--check``).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from gpal.files import write_text_atomic

__all__ = ["DOCS", "current_paths", "write_or_check"]

#: The repository's top; its docs folder (the pages and their records live there, not in the installed package).
ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"

#: Where a study script of ``benchmarks/`` lives since the studies left the timing suite's folder.
_MOVED_STUDIES = ("benchmarks", "workflows/studies")


def current_paths(command: str) -> str:
    """A record's command (or source) as a reader runs it today: a script it names under ``benchmarks/`` that now
    lives in ``workflows/studies/`` is named there (the record keeps the command that ran; the page gives the one
    that runs)."""
    old, new = _MOVED_STUDIES

    def moved(match: re.Match) -> str:
        script = match.group(1)
        return f"{new}/{script}" if (ROOT / new / script).is_file() and not (ROOT / old / script).is_file() \
            else match.group(0)

    return re.sub(rf"\b{old}/(\w+\.py)\b", moved, command)


def write_or_check(page: Path, text: str, check: bool, regenerate: str) -> int:
    """Write ``text`` to ``page`` (exit status 0), or with ``check`` return 1 if the file differs from it.

    ``regenerate`` is the command that rebuilds the page, named in the message of a stale page.
    """
    if check:
        current = page.read_text(encoding="utf-8") if page.is_file() else ""
        if current != text:
            print(f"{page} is out of date with its records; run {regenerate}", file=sys.stderr)
            return 1
        return 0
    write_text_atomic(page, text)
    print(f"wrote {page}")
    return 0

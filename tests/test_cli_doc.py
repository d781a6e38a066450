"""docs/cli.md states each option's default as the code has it (it said ``--epochs`` 300 long after the default
became 50).

Every default the page states for an option of a verb, in the section of that verb, is compared with the
default the parser gives it (for options generated from declared settings, the default their ``--help`` shows,
which is the setting's own).  The forms read: ``--x`` (default V ...), ``--x`` (... default V), ``--x`` (V)
or (V: ...) where V is a number or a literal, ``--x`` V, ``--x`` defaults to V, and ``--x V`` (default).
"""

from __future__ import annotations

import argparse
import ast
import re
from pathlib import Path

import pytest

from gpal.catalog_jobs.prediction import DEFAULT_SELECT
from gpal.cli import build_parser

DOC = (Path(__file__).parents[1] / "docs" / "cli.md").read_text(encoding="utf-8")

_VALUE = r"(?:`(?P<lit>[^`]+)`|(?P<word>[^\s,;:)`]+))"
_FORMS = (
    rf"`(?P<opt>--[\w-]+)(?: [A-Z]+)?` \(default {_VALUE}",
    rf"`(?P<opt>--[\w-]+)` \([^()`]*(?:`[^`]*`[^()`]*)*?\bdefault {_VALUE}",
    rf"`(?P<opt>--[\w-]+)` \((?:`(?P<lit>[^`]+)`|(?P<word>-?\d[\d.e+-]*))[:,;)]",
    rf"`(?P<opt>--[\w-]+)` (?P<word>-?\d[\d.]*)\b",
    rf"`(?P<opt>--[\w-]+)` defaults to {_VALUE}",
    r"`(?P<opt>--[\w-]+) (?P<word>[\w-]+)` \(default\)",
)


def documented_defaults(text: str) -> list[tuple[str, str, str]]:
    """(verb, option, stated default) for every default the page states, read section by section."""
    found = []
    for section in re.split(r"^## ", text, flags=re.M)[1:]:
        verb = re.match(r"`gpal ([\w-]+)`", section)
        if not verb:
            continue
        flat = " ".join(section.split())
        for form in _FORMS:
            for m in re.finditer(form, flat):
                found.append((verb[1], m["opt"], (m["lit"] if "lit" in m.groupdict() and m["lit"] else m["word"])))
    return sorted(set(found))


def _verb_parsers() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    verbs = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(verbs.choices)


def code_default(parser: argparse.ArgumentParser, option: str) -> object:
    """The default of ``option``: the parser's, or for a generated option (no parser default) what its help states."""
    action = next((a for a in parser._actions if option in a.option_strings), None)
    if action is None:
        raise AssertionError(f"docs/cli.md documents {option}, which the verb does not have")
    if action.default is not argparse.SUPPRESS:
        return action.default
    stated = re.search(r"; default (.+)$", action.help or "")
    return stated[1] if stated else None


#: Options whose code default is None, and what None means there (so a page that states it is checked too).
_NONE_MEANS = {"--scheduler": "in-process", "--select": ",".join(DEFAULT_SELECT)}


def _same(stated: str, actual: object) -> bool:
    if isinstance(actual, str) and actual.startswith("["):
        actual = ast.literal_eval(actual)  # a list default as --help prints it
    if isinstance(actual, (list, tuple)):
        actual = ",".join(str(a) for a in actual)
    actual = str(actual)
    try:
        return float(stated) == float(actual)
    except ValueError:
        return stated.strip("./") == actual.strip("./").strip("'")


def mismatches(text: str) -> list[str]:
    parsers = _verb_parsers()
    out = []
    for verb, option, stated in documented_defaults(text):
        if verb not in parsers:
            continue
        actual = code_default(parsers[verb], option)
        actual = _NONE_MEANS.get(option, actual) if actual is None else actual
        if not _same(stated, actual):
            out.append(f"gpal {verb} {option}: docs/cli.md says {stated!r}, the code {actual!r}")
    return out


def test_the_page_states_defaults_the_check_reads():
    stated = {(verb, option) for verb, option, _ in documented_defaults(DOC)}
    for expected in [("classify", "--out"), ("classify", "--catalog"), ("train", "--epochs"), ("active", "--epochs"),
                     ("predict", "--chunk-size"), ("active", "--retrain-epochs")]:
        assert expected in stated, f"the check no longer reads the default of gpal {expected[0]} {expected[1]}"


def test_every_documented_default_is_the_codes():
    assert not mismatches(DOC), "\n".join(mismatches(DOC))


@pytest.mark.parametrize("wrong", [
    "## `gpal train`\n\n`--epochs` (300), `--num-inducing` (50)\n",
    "## `gpal classify` — the main job\n\nOptions: `--out` (default `elsewhere`)\n",
    "## `gpal active`\n\n`--oracle file` (default): ...\n",
])
def test_a_wrong_default_is_caught(wrong):
    assert mismatches(wrong), f"a wrong default went unnoticed in {wrong!r}"

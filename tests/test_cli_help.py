"""No --help text cites an issue number or a module path (what a user cannot act on).

docs/cli.md's stated defaults are checked against the code in tests/test_cli_doc.py."""

import re

import pytest

from gpal.cli import build_parser

VERBS = sorted(next(a for a in build_parser()._actions if a.choices and "classify" in a.choices).choices)


@pytest.mark.parametrize("verb", VERBS)
def test_help_cites_no_issue_and_no_module_path(verb, capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args([verb, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert not re.search(r"\bissue \d+", text), verb
    assert not re.search(r"\bgpal\.[a-z_]+\.", text), re.search(r"\bgpal\.[a-z_]+\.\S+", text).group(0)

"""The command line's help and docs/cli.md state the defaults the code has: every "`--option` (value)" docs/cli.md
gives a default in is checked against the settings the options are generated from, and no --help text cites an
issue number or a module path (what a user cannot act on)."""

import re
from pathlib import Path

import pytest

from gpal.catalog_jobs.active import SETTINGS as CAMPAIGN_SETTINGS
from gpal.catalog_jobs.classify import SETTINGS as MAIN_JOB_SETTINGS
from gpal.catalog_jobs.settings import main_job_estimator
from gpal.cli import build_parser
from gpal.estimators.settings import estimator_settings

CLI_DOC = Path(__file__).resolve().parents[1] / "docs" / "cli.md"
#: "`--epochs` (50)", "`--epochs` 50 for ...", "`--chunk-size` (default 20000)": an option and the number given it
_STATED = re.compile(r"`--([a-z-]+)` \(?(?:default )?(\d+(?:\.\d+)?)[),; ]")


def _defaults():
    """Option -> the defaults the code gives it on any verb (an option's meaning is one across verbs)."""
    defaults: dict[str, set] = {}
    for settings in (estimator_settings(main_job_estimator()), MAIN_JOB_SETTINGS, CAMPAIGN_SETTINGS):
        for name, setting in settings.items():
            defaults.setdefault(name.replace("_", "-"), set()).add(setting.default)
    defaults.setdefault("train-batch-size", set()).add(main_job_estimator().batch_size)  # gpal active's rename
    for verb in _verbs():
        for action in verb._actions:
            for flag in action.option_strings:
                if isinstance(action.default, (int, float)) and not isinstance(action.default, bool):
                    defaults.setdefault(flag.lstrip("-"), set()).add(action.default)
    return defaults


def _verbs():
    parser = build_parser()
    return list(next(a for a in parser._actions if a.choices and "classify" in a.choices).choices.values())


def test_every_default_docs_cli_states_is_the_codes():
    defaults, text = _defaults(), CLI_DOC.read_text(encoding="utf-8")
    stated = _STATED.findall(text)
    assert len(stated) >= 10  # the pattern still finds what the page states
    wrong = [(option, value, sorted(map(str, defaults[option]))) for option, value in stated
             if option in defaults and float(value) not in {float(v) for v in defaults[option]
                                                            if isinstance(v, (int, float))}]
    assert not wrong, f"docs/cli.md states defaults the code does not have: {wrong}"


@pytest.mark.parametrize("verb", ["classify", "predict", "train", "check-later", "active"])
def test_help_cites_no_issue_and_no_module_path(verb, capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args([verb, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert not re.search(r"\bissue \d+", text), verb
    assert not re.search(r"\bgpal\.[a-z_]+\.", text), re.search(r"\bgpal\.[a-z_]+\.\S+", text).group(0)

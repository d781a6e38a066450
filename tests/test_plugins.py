"""Additions installed as a package reach the ``gpal`` command (`gpal.plugins`): its entry points are imported
before the command reads its arguments, and a plugin that fails is named while the command runs without it."""

from __future__ import annotations

import sys
from importlib.metadata import EntryPoint

import pytest

import gpal.plugins
from gpal.cli import main

#: A user's package module that registers an acquisition on import (as docs/extending.md shows).
_MODULE = '''
import gpal
from gpal.active.acquisition import PredictiveEntropy


class Hesitant(PredictiveEntropy):
    """Entropy, under a name of the plugin's own."""


gpal.register_acquisition("plugin_hesitant", Hesitant)
'''


@pytest.fixture
def installed(tmp_path, monkeypatch):
    """Two entry points of group gpal.plugins: one module that registers, one that fails on import."""
    (tmp_path / "my_gpal_additions.py").write_text(_MODULE)
    (tmp_path / "my_broken_additions.py").write_text("raise RuntimeError('a dependency is missing')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    points = [EntryPoint("mine", "my_gpal_additions", gpal.plugins.GROUP),
              EntryPoint("broken", "my_broken_additions", gpal.plugins.GROUP)]
    monkeypatch.setattr(gpal.plugins, "entry_points", lambda group: [p for p in points if p.group == group])
    yield
    if "plugin_hesitant" in gpal.registry.ACQUISITIONS:
        gpal.unregister_acquisition("plugin_hesitant")
    for name in ("my_gpal_additions", "my_broken_additions"):
        sys.modules.pop(name, None)


def test_an_installed_plugin_is_seen_by_the_command_and_a_broken_one_is_named(installed, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["active", "--help"])
    assert exit_.value.code == 0
    captured = capsys.readouterr()
    assert "plugin_hesitant" in captured.out  # the command's choices hold the plugin's acquisition
    assert ("gpal: warning: the plugin 'broken' (my_broken_additions, entry point gpal.plugins) could not be "
            "imported: RuntimeError: a dependency is missing; its additions are missing") in captured.err


def test_no_plugin_installed_is_no_message(monkeypatch, capsys):
    monkeypatch.setattr(gpal.plugins, "entry_points", lambda group: [])
    assert gpal.plugins.load_plugins() == []
    with pytest.raises(SystemExit):
        main(["--version"])
    assert "plugin" not in capsys.readouterr().err

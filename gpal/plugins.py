"""Additions a user installed as a package: the ``gpal.plugins`` entry points, imported by every ``gpal`` command.

A registration (`gpal.register_release`, `register_preset`, `register_acquisition`, `register_likelihood`,
`register_input_noise`) lives in the process that made it.  A package that makes its registrations on import and
names that module in the entry-point group ``gpal.plugins`` (its ``pyproject.toml``::

    [project.entry-points."gpal.plugins"]
    my_additions = "my_package.gpal_additions"

) is imported by the ``gpal`` command before it reads its arguments, so every verb and its ``--help`` see the
additions, and a model saved with a user's class loads in the shell's ``gpal predict``.
"""

from __future__ import annotations

from importlib.metadata import entry_points

__all__ = ["GROUP", "load_plugins"]

#: The entry-point group a package names its registering module in.
GROUP = "gpal.plugins"


def load_plugins() -> list[str]:
    """Import every module installed under `GROUP`; the ones that failed, each said in words (a broken plugin
    leaves gpal and the other plugins working: its additions are missing, and the caller says so).

    Returns
    -------
    list of str
        One message per plugin that could not be imported.
    """
    failed = []
    for entry in entry_points(group=GROUP):
        try:
            entry.load()
        except Exception as exc:  # a plugin's own error, whatever it is: gpal still runs without it
            failed.append(f"the plugin {entry.name!r} ({entry.value}, entry point {GROUP}) could not be imported: "
                          f"{type(exc).__name__}: {exc}; its additions are missing")
    return failed

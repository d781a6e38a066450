"""The main job end to end, as a user runs it: ``gpal classify`` in a fresh process (imports included)."""

from __future__ import annotations

from .sizes import pick

#: Options after ``gpal classify``: the defaults, or the smallest job that still runs every step (4FGL's sources
#: above significance 20: 734 labelled, 88 to classify; 5 inducing points; the comparison with one baseline, the
#: calibrated random forest being the tests' main job's to run).
_OPTIONS = pick([], ["--epochs", "2", "--catalog", "4FGL", "--min-significance", "20", "--num-inducing", "5",
                     "--baselines", "logistic"])


def timeraw_classify() -> str:
    """A fresh interpreter per run (asv's ``timeraw_``): TensorFlow's import is part of what a user waits for."""
    return f"""
import tempfile
from gpal.cli import main
with tempfile.TemporaryDirectory() as out:
    assert main(["classify", "--out", out, "--no-progress", *{_OPTIONS!r}]) == 0
"""


timeraw_classify.timeout = 600
timeraw_classify.number = 1
timeraw_classify.repeat = pick(3, 1)


def timeraw_help() -> str:
    """``gpal --help`` in a fresh interpreter: what a user waits for before the command does anything."""
    return """
from gpal.cli import main
try:
    main(["--help"])
except SystemExit as done:
    assert done.code == 0
"""


_FINISHED: dict[str, str] = {}


def _finished_run() -> str:
    """A main job's folder, made once per process (asv times each benchmark in a process of its own)."""
    if "folder" not in _FINISHED:
        import tempfile

        from gpal.cli import main

        folder = f"{tempfile.mkdtemp()}/run"
        assert main(["classify", "--out", folder, "--no-progress", *_OPTIONS]) == 0
        _FINISHED["folder"] = folder
    return _FINISHED["folder"]


class Recut:
    """A finished run's lists cut again (``gpal report FOLDER --candidate-visible-from ...``): no model loaded."""

    timeout = 900

    def setup(self) -> None:
        self.folder = _finished_run()
        self.sky = iter(["FAST", "Parkes"] * 100)  # another cut each time: every run writes the lists

    def time_recut(self) -> None:
        from gpal.catalog_jobs.report.recut import recut_lists

        recut_lists(self.folder, candidate_visible_from=next(self.sky))

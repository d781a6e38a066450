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

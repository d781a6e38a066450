"""Progress bars: redrawn in place on a terminal, a few whole lines in a log."""

from __future__ import annotations

import io
import sys

import numpy as np
import pytest

from gpal.progress import progress_bar


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _run_bar(monkeypatch, stream, n=5000):
    monkeypatch.setattr(sys, "stderr", stream)
    total = 0
    for i in progress_bar(range(n), desc="training", unit="epoch"):
        total += i
    assert total == n * (n - 1) // 2  # the bar yields every item, once
    return stream.getvalue()


def test_log_file_gets_a_few_whole_lines_and_no_carriage_return(monkeypatch):
    text = _run_bar(monkeypatch, io.StringIO())
    assert "\r" not in text
    lines = text.splitlines()
    assert 1 <= len(lines) <= 3, lines
    assert text.endswith("\n") and all(line.strip() for line in lines)  # no blank lines either
    assert lines[-1].startswith("training: 100%") and "5000/5000" in lines[-1]


def test_terminal_keeps_the_in_place_redraw(monkeypatch):
    text = _run_bar(monkeypatch, _Terminal(), n=50)
    assert text.count("\r") >= 2  # start and end redrawn on one line: what a log must not get
    assert "50/50" in text and "\n" not in text.rstrip("\n")


def test_a_bar_of_total_counts_updates_in_the_log(monkeypatch):
    stream = io.StringIO()
    monkeypatch.setattr(sys, "stderr", stream)
    with progress_bar(total=7, initial=2, desc="queries", unit="query") as bar:
        for _ in range(5):
            bar.update()
    lines = stream.getvalue().splitlines()
    assert "\r" not in stream.getvalue()
    assert lines[0].startswith("queries:") and "2/7" in lines[0]
    assert "7/7" in lines[-1]


def test_disabled_bar_writes_nothing(monkeypatch):
    stream = io.StringIO()
    monkeypatch.setattr(sys, "stderr", stream)
    assert list(progress_bar(range(3), disable=True)) == [0, 1, 2]
    assert stream.getvalue() == ""


@pytest.mark.parametrize("log", [True, False])
def test_training_loop_progress_in_a_log(monkeypatch, log):
    """The SVI loop's bar, shown (progress=True) with stderr redirected to a file, writes whole lines only."""
    from gpal import NoisyGPClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    y = (X[:, 0] > 0).astype(int)
    stream = io.StringIO() if log else _Terminal()
    monkeypatch.setattr(sys, "stderr", stream)
    NoisyGPClassifier(num_inducing=5, epochs=30, batch_size=10, progress=True, random_state=0).fit(X, y)
    text = stream.getvalue()
    assert "30/30" in text
    if log:
        assert "\r" not in text and 1 <= len(text.splitlines()) <= 3
        assert "30/30" in text.splitlines()[-1]
    else:
        assert "\r" in text

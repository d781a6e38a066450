"""Keep TensorFlow's native start-up logging off the terminal of a ``gpal`` command and of a library user.

On a machine without GPU, importing TensorFlow prints absl and CUDA lines
(``Could not find cuda drivers``, ``failed call to cuInit``) that read like failures.
``TF_CPP_MIN_LOG_LEVEL`` silences the C++ runtime's later messages but not the lines
written before absl's logging starts, so the import itself runs with the process's
native stderr (file descriptor 2) captured; if the import fails, what it printed is
replayed before the error.  TensorFlow still loads lazily, on its first import.  The import may
run in a background thread (`gpal.runs.background.preload`) while the main thread reports its
own work: what other threads write to ``sys.stderr`` meanwhile still reaches the terminal.

Importing gpal quiets TensorFlow the same way (`quiet_tensorflow_unless_chosen`), unless the user chose
TensorFlow's logging (``TF_CPP_MIN_LOG_LEVEL`` set) or imported TensorFlow first; ``gpal --verbose`` undoes it.
"""

from __future__ import annotations

import contextlib
import importlib.abc
import importlib.machinery
import os
import sys
import tempfile
import threading
from typing import Any, Iterator

__all__ = ["loud_tensorflow", "quiet_tensorflow", "quiet_tensorflow_if_asked", "quiet_tensorflow_unless_chosen"]

_LOG_LEVEL = "TF_CPP_MIN_LOG_LEVEL"
#: Whether gpal set ``TF_CPP_MIN_LOG_LEVEL`` (the user had not): only then does `loud_tensorflow` take it back.
_level_set_here = False


class _OtherThreadsThrough:
    """``sys.stderr`` while one thread's native stderr is captured: that thread writes into the capture as
    before, every other thread to ``elsewhere`` (the real stderr), so a warning of the main thread is not lost."""

    def __init__(self, stream: Any, elsewhere: Any) -> None:
        self._stream, self._elsewhere, self._thread = stream, elsewhere, threading.get_ident()

    def _target(self) -> Any:
        return self._stream if threading.get_ident() == self._thread else self._elsewhere

    def write(self, text: str) -> int:
        return self._target().write(text)

    def flush(self) -> None:
        self._target().flush()

    def __getattr__(self, name: str) -> Any:  # encoding, isatty, fileno, ... of the stream itself
        return getattr(self._target(), name)


def _writes_to_fd2(stream: Any) -> bool:
    try:
        return stream.fileno() == 2
    except (AttributeError, OSError, ValueError):  # a stream in memory (a test's capture): not the descriptor
        return False


@contextlib.contextmanager
def _native_stderr_captured() -> Iterator[None]:
    """Route file descriptor 2 (C++ and this thread's Python writes) to a temp file; replay it if the block raises."""
    sys.stderr.flush()
    saved = os.dup(2)
    stream = sys.stderr
    elsewhere = open(os.dup(saved), "w", encoding=stream.encoding, errors=stream.errors, buffering=1) \
        if _writes_to_fd2(stream) else stream
    sys.stderr = routed = _OtherThreadsThrough(stream, elsewhere)
    with tempfile.TemporaryFile() as sink:
        os.dup2(sink.fileno(), 2)
        try:
            yield
        except BaseException:
            os.dup2(saved, 2)
            sink.seek(0)
            os.write(2, sink.read())
            raise
        finally:
            stream.flush()
            os.dup2(saved, 2)
            os.close(saved)
            if sys.stderr is routed:  # else someone replaced it meanwhile: theirs stays
                sys.stderr = stream
            if elsewhere is not stream:
                elsewhere.close()


class _QuietLoader(importlib.abc.Loader):
    """TensorFlow's own loader, executing the package with native stderr captured."""

    def __init__(self, loader: Any) -> None:
        self._loader = loader

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> Any:
        return self._loader.create_module(spec)

    def exec_module(self, module: Any) -> None:
        with _native_stderr_captured():
            self._loader.exec_module(module)

    def __getattr__(self, name: str) -> Any:  # get_data, get_source, ... of the real loader
        return getattr(self._loader, name)


class _QuietFinder(importlib.abc.MetaPathFinder):
    """Finds ``tensorflow`` once, through the other finders, and wraps its loader."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname != "tensorflow":
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is not None and spec.loader is not None:
            spec.loader = _QuietLoader(spec.loader)
        return spec


def quiet_tensorflow() -> None:
    """Silence TensorFlow's native logging for this process (a ``TF_CPP_MIN_LOG_LEVEL`` already set is kept)."""
    global _level_set_here
    if _LOG_LEVEL not in os.environ:
        os.environ[_LOG_LEVEL], _level_set_here = "3", True
    if "tensorflow" not in sys.modules and not any(isinstance(f, _QuietFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _QuietFinder())


def quiet_tensorflow_if_asked() -> None:
    """In a worker process: silence TensorFlow as its parent did.

    A ``gpal`` command sets ``TF_CPP_MIN_LOG_LEVEL`` (unless ``--verbose``); the Dask
    workers it starts inherit the environment, so the setting carries the choice.
    """
    if os.environ.get(_LOG_LEVEL, "0") not in ("", "0"):
        quiet_tensorflow()


def quiet_tensorflow_unless_chosen() -> None:
    """On importing gpal: TensorFlow's start-up lines (``failed call to cuInit`` on a machine without a GPU) kept off
    a library user's stderr as a ``gpal`` command keeps them, unless the user chose its logging
    (``TF_CPP_MIN_LOG_LEVEL`` set) or imported TensorFlow before gpal: then theirs holds. An import that fails
    still shows what TensorFlow printed, and Python's errors and warnings are untouched."""
    if _LOG_LEVEL not in os.environ and "tensorflow" not in sys.modules:
        quiet_tensorflow()


def loud_tensorflow() -> None:
    """``gpal --verbose``: TensorFlow's start-up messages back on stderr, undoing what importing gpal set (a
    ``TF_CPP_MIN_LOG_LEVEL`` the user set is kept)."""
    global _level_set_here
    if _level_set_here:
        os.environ.pop(_LOG_LEVEL, None)
        _level_set_here = False
    sys.meta_path[:] = [finder for finder in sys.meta_path if not isinstance(finder, _QuietFinder)]

"""Keep TensorFlow's native start-up logging off the terminal of a ``gpal`` command.

On a machine without GPU, importing TensorFlow prints absl and CUDA lines
(``Could not find cuda drivers``, ``failed call to cuInit``) that read like failures.
``TF_CPP_MIN_LOG_LEVEL`` silences the C++ runtime's later messages but not the lines
written before absl's logging starts, so the import itself runs with the process's
native stderr (file descriptor 2) captured; if the import fails, what it printed is
replayed before the error.  TensorFlow still loads lazily, on its first import.
"""

from __future__ import annotations

import contextlib
import importlib.abc
import importlib.machinery
import os
import sys
import tempfile
from typing import Any, Iterator

__all__ = ["quiet_tensorflow", "quiet_tensorflow_if_asked"]

_LOG_LEVEL = "TF_CPP_MIN_LOG_LEVEL"


@contextlib.contextmanager
def _native_stderr_captured() -> Iterator[None]:
    """Route file descriptor 2 (C++ and Python writes alike) to a temp file; replay it if the block raises."""
    sys.stderr.flush()
    saved = os.dup(2)
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
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)


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
    os.environ.setdefault(_LOG_LEVEL, "3")
    if "tensorflow" not in sys.modules and not any(isinstance(f, _QuietFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _QuietFinder())


def quiet_tensorflow_if_asked() -> None:
    """In a worker process: silence TensorFlow as its parent did.

    A ``gpal`` command sets ``TF_CPP_MIN_LOG_LEVEL`` (unless ``--verbose``); the Dask
    workers it starts inherit the environment, so the setting carries the choice.
    """
    if os.environ.get(_LOG_LEVEL, "0") not in ("", "0"):
        quiet_tensorflow()

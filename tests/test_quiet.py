"""`gpal.quiet`: TensorFlow's import noise is captured, other threads' messages are not; a library user's import of
gpal is quiet too, unless the user chose TensorFlow's log level."""

import os
import subprocess
import sys

import pytest

from conftest import TF_NOISE

# One thread captures native stderr (as TensorFlow's import does in `gpal.runs.background.preload`) while the main
# thread warns: the warning reaches the terminal, the capturing thread's writes do not.
_CODE = """
import os, sys, threading
from gpal.quiet import _native_stderr_captured

inside, warned = threading.Event(), threading.Event()

def importing():
    with _native_stderr_captured():
        os.write(2, b"NATIVE-NOISE\\n")
        print("PYTHON-NOISE", file=sys.stderr)
        inside.set()
        warned.wait(30)

thread = threading.Thread(target=importing)
thread.start()
inside.wait(30)
print("MAIN-WARNING", file=sys.stderr)
warned.set()
thread.join()
print("AFTER", file=sys.stderr)
print(type(sys.stderr).__name__)
"""


def test_other_threads_write_to_stderr_while_one_captures_it():
    done = subprocess.run([sys.executable, "-c", _CODE], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "MAIN-WARNING" in done.stderr and "AFTER" in done.stderr
    assert "NATIVE-NOISE" not in done.stderr and "PYTHON-NOISE" not in done.stderr
    assert done.stdout.strip() == "TextIOWrapper"  # sys.stderr is the interpreter's own again


def _python(code: str, **env: str) -> subprocess.CompletedProcess:
    """``code`` in a plain Python, with TF_CPP_MIN_LOG_LEVEL as ``env`` gives it (unset otherwise)."""
    base = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**base, **env},
                          timeout=300)


# The README's first line of Python, then TensorFlow's first operation (where CUDA is probed) and a real error.
_LIBRARY_USER = """
import os, sys
from gpal import NoisyGPClassifier
import tensorflow as tf
tf.constant(1.0) + 1.0
print(os.environ.get("TF_CPP_MIN_LOG_LEVEL"), any(type(f).__name__ == "_QuietFinder" for f in sys.meta_path))
tf.linalg.matmul(tf.ones((2, 3)), tf.ones((2, 3)))
"""


@pytest.mark.slow
def test_a_library_user_sees_no_tensorflow_start_up_lines_but_sees_its_errors():
    done = _python(_LIBRARY_USER)
    assert done.stdout.split() == ["3", "False"], done.stderr  # the finder removed itself once it found TensorFlow
    assert not [word for word in TF_NOISE if word.lower() in done.stderr.lower()], done.stderr
    assert done.returncode == 1 and "InvalidArgumentError" in done.stderr.splitlines()[-1]


@pytest.mark.slow
def test_a_log_level_the_user_set_is_kept():
    done = _python(_LIBRARY_USER, TF_CPP_MIN_LOG_LEVEL="0")
    assert done.stdout.split() == ["0", "False"], done.stderr


def test_verbose_takes_back_only_what_importing_gpal_set():
    code = ("import os, sys, gpal; from gpal.quiet import loud_tensorflow; loud_tensorflow(); "
            "print(os.environ.get('TF_CPP_MIN_LOG_LEVEL'), any(type(f).__name__ == '_QuietFinder' for f in sys.meta_path))")
    assert _python(code).stdout.split() == ["None", "False"]
    assert _python(code, TF_CPP_MIN_LOG_LEVEL="2").stdout.split() == ["2", "False"]

"""`gpal.quiet`: TensorFlow's import noise is captured, other threads' messages are not."""

import subprocess
import sys

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

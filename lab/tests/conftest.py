"""The lab's tests (lab/tests/): they check the studies, the page generators, the benchmarks' scripts and the docs
build, not the library, so CI runs them after the library's tests (.ci/run); from the repository's top:
``python -m pytest -q lab/tests``."""

import os
import sys
from pathlib import Path

# As the command's process does (gpal.cli.main): TensorFlow's import loads tf_keras, not Keras 3.
os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
# The page generators are scripts of the lab (lab/pages/, not installed); their tests import them by name.
sys.path.insert(0, str(Path(__file__).parents[1] / "pages"))
# The lab's own package (lab/labkit), found beside them whether or not it is installed (pip install -e lab).
sys.path.insert(0, str(Path(__file__).parents[1]))


def repository_script(path):
    """A script of the repository's lab (``lab/studies/bench_4lac.py``) loaded as a module: the scripts are run,
    not installed, so a test loads one by its path from the clone's top, its folder first on the path while it loads
    (as Python puts it when the script runs: a study imports its neighbour ``shared`` by name)."""
    import importlib.util

    script = Path(__file__).parents[2] / path
    spec = importlib.util.spec_from_file_location(script.stem, script)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(script.parent))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(script.parent))
    return module

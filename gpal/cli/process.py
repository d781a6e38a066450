"""One ``gpal`` command run as a process: Ctrl-C taken over, what was done to the data said, and every outcome an
exit code (the codes: `gpal.cli`).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import io
import os
import sys
import warnings
from typing import Any, Sequence

from gpal.cli.parser import VERBS, build_parser
from gpal.interrupts import check_stop, stopping_at_safe_points

EXIT_BAD_INPUT = 2
EXIT_FAILED = 1
EXIT_LABELS_PENDING = 3
EXIT_INTERRUPTED = 130


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command of ``argv`` (None: this process's command line) and return its exit status.

    With None the process ends when this returns, and its last objects leave Python's garbage collector
    (`gc.freeze`): the collection at Python's exit otherwise walks TensorFlow's millions of objects, 2.6 s after
    the main job (0.3 s frozen).  Nothing that needs finalising is among them: outputs are written and closed
    before a command returns, and exit handlers (`atexit`, `weakref.finalize`) still run.
    """
    # the process's own command keeps the handler to its end: Python's exit waits for the threads still importing
    # (`preload`), and a Ctrl-C meanwhile is the system's at once rather than a KeyboardInterrupt in that wait
    with stopping_at_safe_points(restore=argv is not None), _escaping_what_cannot_be_shown():
        code = _run(argv)
    if argv is None:
        gc.freeze()
    return code


@contextlib.contextmanager
def _escaping_what_cannot_be_shown() -> Any:
    """Messages reach any terminal: a character its encoding lacks (an ASCII terminal, a folder named 'résultats')
    is written as an escape (r\\xe9sultats) instead of failing the command after its work was done."""
    changed = []
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper) and stream.errors == "strict":
            stream.reconfigure(errors="backslashreplace")
            changed.append(stream)
    try:
        yield
    finally:
        for stream in changed:
            stream.reconfigure(errors="strict")


def _run(argv: Sequence[str] | None) -> int:
    # TensorFlow's import then loads tf_keras (GPflow's optimisers) instead of Keras 3, which gpal never uses:
    # a quarter of the import's CPU.  Only the command's own process: a library user's tf.keras is left alone.
    os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")
    # One thread per TensorFlow op unless the user chose otherwise: the main job trains its models on threads of their
    # own (the model, beside it the same GP without error bars), whose steps are too small (a batch of 50 against 50
    # inducing points) to gain from splitting an op, and pools of several threads per op spun on both cores (the main
    # job: 1.2 s less wall and 4 s less CPU on two cores; probabilities moved by at most 2e-9, the order of a few
    # reductions).  Every command alike, so `gpal predict` gives the bits the main job wrote.
    os.environ.setdefault("TF_NUM_INTRAOP_THREADS", "1")
    args = _parse(sys.argv[1:] if argv is None else list(argv))
    from gpal.active.oracles import LabelsPending

    from gpal.quiet import loud_tensorflow, quiet_tensorflow

    if getattr(args, "verbose", False):
        loud_tensorflow()  # importing gpal quieted TensorFlow unless the user set its log level
    else:
        quiet_tensorflow()

    from gpal.runs.output_dir import discard_unused_claims, forget_claims

    forget_claims()
    code = _run_verb(args, LabelsPending)
    if code in (EXIT_BAD_INPUT, EXIT_FAILED):
        discard_unused_claims()  # a refusal leaves no folder it created
    return code


def _parse(words: list[str]) -> argparse.Namespace:
    """The command line parsed with the options of its verb only.

    ``gpal``, ``gpal --help``, ``gpal --version`` and a mistyped verb end here (argparse exits) before anything
    heavy is imported: no plugin, catalog, pandas or TensorFlow.
    """
    verb = next((word for word in words if not word.startswith("-")), None)
    if verb not in VERBS:
        build_parser(only=()).parse_args(words)  # prints the help, the version or the error, and exits
    from gpal.plugins import load_plugins

    for failure in load_plugins():  # before the verb's options: their choices and --help list what plugins register
        print(f"gpal: warning: {failure}", file=sys.stderr)
    return build_parser(only=(verb,), described=False).parse_args(words)


def _run_verb(args: argparse.Namespace, LabelsPending: type) -> int:
    from gpal.catalog_jobs.settings import FewRowsWarning
    from gpal.catalogs import DroppedRowsWarning, RepairedRowsWarning
    from gpal.catalogs.links import AmbiguousLinkWarning

    with warnings.catch_warnings():
        warnings.showwarning = lambda message, *_, **__: print(f"gpal: warning: {message}", file=sys.stderr)
        # what was done to the data is said whatever Python's warning filters say (PYTHONWARNINGS=ignore is common
        # on clusters); --quiet is the way to silence it.  The library keeps them Python warnings.
        for category in (DroppedRowsWarning, RepairedRowsWarning, AmbiguousLinkWarning, FewRowsWarning):
            warnings.filterwarnings("ignore" if getattr(args, "quiet", False) else "default", category=category)
        try:
            code = args.run(args)
            check_stop()  # Ctrl-C during the last step: the work is done, and a rerun says so at once
            return code
        except LabelsPending as exc:
            print(f"gpal: waiting for labels: {exc}", file=sys.stderr)
            return EXIT_LABELS_PENDING
        except KeyboardInterrupt:
            return _interrupted()
        except FloatingPointError as exc:  # gpal.training.svi.TrainingError: the ELBO became non-finite
            print(f"gpal: error: training failed: {exc}", file=sys.stderr)
            return EXIT_FAILED
        except (ValueError, OSError) as exc:  # a bad value (InvalidParameter is one), a missing or unreadable file
            _error(str(exc))
            return EXIT_BAD_INPUT
        except Exception as exc:
            why = _user_caused(exc)
            if why is None:
                raise
            _error(why)
            return EXIT_BAD_INPUT


def _interrupted() -> int:
    print("gpal: interrupted; rerun the same command to resume", file=sys.stderr)
    return EXIT_INTERRUPTED


def _error(message: str) -> None:
    """One ``gpal: error:`` line, however many lines the message had."""
    print(f"gpal: error: {' '.join(message.split())}", file=sys.stderr)


def _user_caused(exc: Exception) -> str | None:
    """What to say of a failure the input caused (the settings asked for too much), or None for a bug.

    The library bounds sizes before any work (`gpal.training.budget`); this is the net under it:
    a Cholesky failure (settings the model cannot train with), memory or TensorFlow's resource
    limits, a number or a nesting past Python's.
    """
    from gpal.training.svi import CholeskyError

    if isinstance(exc, CholeskyError):
        return f"training failed: {exc}"
    if isinstance(exc, MemoryError) or type(exc).__name__ == "ResourceExhaustedError":
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
        return (f"out of memory ({first}); lower the sizes asked for (--n-samples, --num-inducing, --hidden-sizes, "
                "--batch-size, --chunk-size)")
    if isinstance(exc, OverflowError):
        return f"a value is too large for the computation ({exc}); give smaller settings"
    if isinstance(exc, RecursionError):
        return "an input is nested too deeply to read (a list or mapping inside thousands of others)"
    return None


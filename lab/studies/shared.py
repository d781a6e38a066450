"""What several benchmark scripts share: synthetic problems, the machine's description, timing, the faint-source task,
binary GP classifiers traced along their training clocks (papers 002 and 003), the blazar-type studies' paired
measures, a catalog tiled from a shipped one, a paired difference's t interval, a split of paper 001's UCI workflow
and the start of a learned input-noise variance, how a timing study's kept outputs become a record (read, their one
commit, the command that made them), and the record that keeps what a study's command printed.

Not a script: the scripts beside it import it by name (Python puts a script's own folder first on its path),
so each shared piece is written once and no script imports another.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.util
import io
import json
import os
import platform
import shlex
import sys
import time
import warnings
from pathlib import Path
from types import ModuleType
from typing import Any, Callable, Iterator, NamedTuple, Sequence

import numpy as np
import pandas as pd

#: gpal's methods of the noisy-input paper, by the ``input_noise`` each is.
METHODS = {"MGP": "none", "NIMGP": "latent", "NIMGP-NN": "amortized", "NIMGP-FO": "first_order"}
#: The main job's model shapes (FL16Y's training rows, features, classes, inducing points, batch, prior components).
MAIN_JOB_SHAPES = {"n": 2103, "d": 16, "classes": 3, "inducing": 50, "batch": 200, "prior_components": 8}
#: The GP settings of the faint-source studies (error bars, discovery).
GP_SHARED = dict(likelihood="softmax", num_inducing=50, batch_size=200, epochs=300)
#: The GP of the class-scheme and Galactic-plane studies: the main job's model (NIMGP, population prior, softmax, M = 50).
CLASS_SCHEME_GP = dict(input_noise="latent", input_prior="population", likelihood="softmax", num_inducing=50,
                       batch_size=200, epochs=300)
#: The coarse groups of the published Galactic-plane comparison (`gpal.catalogs.schemes.coarse_group`).
COARSE_GROUPS = ("agn", "pulsar", "other")
#: The Galactic plane of the published AGN / pulsar / other comparison (Zhu et al. 2023): |b| <= 10 deg.
PLANE_DEG = 10.0
#: The repository's top, where the studies' commands run.
ROOT = Path(__file__).resolve().parents[2]
#: The folder of the asv timing suite's package ``suite`` (benchmarks/suite).
BENCHMARKS = ROOT / "benchmarks"
#: The page generators' folder, where the format of the records they are built from lives (result_records.py):
#: on the path once this module is imported, so a study writes its records with ``from result_records import ...``.
PAGES = Path(__file__).resolve().parents[1] / "pages"
if str(PAGES) not in sys.path:
    sys.path.append(str(PAGES))
#: Where a study keeps what its commands printed (``<study>.json``); read at each call, so a test can point it elsewhere.
RECORDS = Path(__file__).resolve().parent / "records"


class _Tee(io.TextIOBase):
    """Writes to the terminal's stream and to a buffer, so a study prints as before and its output is kept."""

    def __init__(self, stream: Any) -> None:
        self.stream, self.buffer = stream, io.StringIO()

    def write(self, text: str) -> int:
        self.stream.write(text)
        return self.buffer.write(text)

    def flush(self) -> None:
        self.stream.flush()


def _not_json(name: str) -> None:
    """NaN and the infinities, which Python's json reads but a record may not hold: such a line stays text."""
    raise ValueError(f"{name} is not JSON")


def _printed_line(line: str) -> Any:
    """A printed line as kept: a JSON object or array as itself (a reader takes its numbers by key), other text as is."""
    if line.lstrip().startswith(("{", "[")):
        try:
            return json.loads(line, parse_constant=_not_json)
        except ValueError:
            pass
    return line


def chosen(parser: argparse.ArgumentParser, flag: str, text: str, allowed: Sequence[str]) -> list[str]:
    """The comma-separated names of ``flag``, each one of ``allowed`` (else the parser's usage error naming them)."""
    names = [name for name in text.split(",") if name]
    unknown = sorted(set(names) - set(allowed))
    if unknown:
        parser.error(f"{flag}: unknown {unknown}; expected some of {list(allowed)}")
    return names


def code_commit() -> str:
    """`gpal.identity.source_commit`, but with ``+dirty`` only for changes outside the records (the studies' own and
    the pages'): running a study rewrites its records (and a second command reads the first's), which changes no
    code that ran."""
    import subprocess

    from gpal.identity import source_commit

    commit = source_commit()
    if not commit.endswith("+dirty"):
        return commit
    try:
        changed = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", ":/",
                                  f":(top,exclude){Path(RECORDS).relative_to(ROOT).as_posix()}",
                                  f":(top,exclude){(PAGES / 'records').relative_to(ROOT).as_posix()}"], cwd=ROOT,
                                 capture_output=True, text=True, check=True, timeout=10).stdout.strip()
    except (OSError, ValueError, subprocess.SubprocessError):
        return commit
    return commit if changed else commit.removesuffix("+dirty")


@contextlib.contextmanager
def keep_printed(study: str, script: str, argv: Sequence[str] | None = None) -> Iterator[Path]:
    """Print as usual inside the block, and keep what was printed in the study's record ``RECORDS/<study>.json``.

    A docs page cites the numbers a study's command prints; the record holds them under that command (``python
    lab/studies/<script> ARGS``, replacing its earlier entry; a study's other commands keep theirs) with the
    commit that made them (`code_commit`), so a reader can find and check a page's number.  A block
    that raises keeps nothing: a failed command's partial output is not a result."""
    from gpal.files import write_json_atomic

    args = list(sys.argv[1:] if argv is None else argv)
    command = "python " + shlex.join([f"lab/studies/{Path(script).name}", *map(str, args)])
    path = Path(RECORDS) / f"{study}.json"
    kept = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {"study": study, "commands": {}}
    if not (isinstance(kept, dict) and kept.get("study") == study and isinstance(kept.get("commands"), dict)):
        found = f"the keys {sorted(kept)}, study {kept.get('study')!r}" if isinstance(kept, dict) else type(kept).__name__
        raise ValueError(f"{path} is not the record of study {study!r}: expected {{'study': {study!r}, "
                         f"'commands': {{...}}}}, found {found}")
    commit = code_commit()  # at the start: what the block writes (a study's figures, say) is not code that ran
    tee = _Tee(sys.stdout)
    with contextlib.redirect_stdout(tee):
        yield path
    lines = tee.buffer.getvalue().rstrip("\n").split("\n")
    kept["commands"][command] = {"commit": commit, "printed": [_printed_line(line) for line in lines]}
    write_json_atomic(path, kept)


def timing_suite(module: str) -> ModuleType:
    """A module of the asv timing suite (``benchmarks/suite/<module>.py``): a study reuses its harness (a step's
    flops and GEMM times, the papers' training curves) rather than restating it, and the suite lives in another
    folder of the repository than the studies."""
    if str(BENCHMARKS) not in sys.path:
        sys.path.insert(0, str(BENCHMARKS))
    return importlib.import_module(f"suite.{module}")


def synthetic_problem(n: int, d: int, n_classes: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Standardised-looking inputs with class-dependent means and per-point error bars on half the features."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n)
    centres = rng.normal(scale=1.5, size=(n_classes, d))
    X = centres[y] + rng.normal(size=(n, d))
    X_var = rng.uniform(0.01, 0.2, size=(n, d))
    X_var[:, d // 2 :] = 0.0  # like the catalog: some features have no error bar
    return X, X_var, y


def environment() -> dict[str, Any]:
    """The software and machine a timing was taken on, and how busy the machine was."""
    import gpflow
    import tensorflow as tf

    gpus = tf.config.list_physical_devices("GPU")
    return {
        "python": platform.python_version(),
        "tensorflow": tf.__version__,
        "gpflow": gpflow.__version__,
        "device": ", ".join(tf.config.experimental.get_device_details(g).get("device_name", g.name) for g in gpus)
        or f"CPU ({platform.processor() or platform.machine()})",
        "cpu_count": os.cpu_count(),
        "load_average_at_start": os.getloadavg(),
    }


def median_seconds(fn: Callable[[], Any], repeats: int) -> float:
    """Median wall seconds of ``repeats`` calls, after one call that traces."""
    fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def quiet_catalog(name: str):
    """The shipped release ``name``, its reader's notes (repaired or unusable values) left unsaid: a study counts
    them itself."""
    from gpal.catalogs import load_catalog

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_catalog(name)


def float_column(column) -> np.ndarray:
    """A catalog column as float64, masked entries (a "not measured" value the reader masks, a missing one) as NaN."""
    filled = column.filled(np.nan) if hasattr(column, "filled") else column
    return np.asarray(filled, dtype=np.float64)


def dr4_sources():
    """The labelled bll / fsrq / pulsar sources and the unassociated + bcu pool (X, X_var) of 4FGL-DR4."""
    from gpal.catalogs import load_catalog
    from gpal.catalogs.classes import DEFAULT_MERGE

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        catalog = load_catalog("4FGL-DR4")
        data = catalog.dataset(classes=("bll", "fsrq", "pulsar"), merge=DEFAULT_MERGE, features="fermi_dr4")
        pool = catalog.pool(select=("unassociated", "bcu"), features="fermi_dr4")
    return data, (pool.X, pool.X_var)


def tiled_catalog(release: str, rows: int, path: Path, *, columns: Sequence[str] | None = None,
                  sources: Sequence[str] | None = None) -> Path:
    """A catalog of ``rows`` rows written to ``path``: ``release``'s rows (only those of the names ``sources`` if
    given, only ``columns`` if given) repeated, each copy after the first renamed (``<name> r<k>``: a
    catalog lists a source once), with the release's keywords so that the file reads as that release. The studies
    time prediction on more rows than a shipped catalog has."""
    from astropy.io import fits
    from astropy.table import Table

    from gpal.catalogs.catalog import CATALOG_DIR, HDU_NAME, RELEASES

    record = RELEASES[release]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with fits.open(CATALOG_DIR / record.file) as hdul:
            header = hdul[HDU_NAME].header
            table = Table.read(hdul[HDU_NAME])
            keys = {k: header[k] for k in ("CDS-NAME", "VERSION", "DataRelease") if k in header}
    if columns is not None:
        table = table[list(columns)]
    name = record.columns.name
    if sources is not None:
        table = table[np.isin(np.char.strip(np.asarray(table[name]).astype(str)), np.asarray(sources, dtype=str))]
        if len(table) == 0:
            raise ValueError(f"none of the {len(sources)} sources given is a row of {release}")
    copies = -(-rows // len(table))
    big = table[np.tile(np.arange(len(table)), copies)[:rows]]
    copy = np.repeat(np.arange(copies), len(table))[:rows]
    names = np.char.strip(np.asarray(big[name]).astype(str))
    big[name] = np.where(copy == 0, names, np.char.add(np.char.add(names, " r"), copy.astype(str)))
    hdu = fits.table_to_hdu(big)
    hdu.name = HDU_NAME
    hdu.header.update(keys)
    primary = fits.PrimaryHDU()
    primary.header.update(keys)
    fits.HDUList([primary, hdu]).writeto(path)
    return path


def dr4_labelled():
    """Every labelled source of 4FGL-DR4 (one class per CLASS1 code) with the fermi_dr4 features."""
    from gpal.catalogs import load_catalog

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        catalog = load_catalog("4FGL-DR4")
        codes = [c for c in catalog.class_counts() if c != "unassociated"]
        return catalog.dataset(classes=codes, features="fermi_dr4")


def group_balanced_accuracy(truth: np.ndarray, pred: np.ndarray, groups) -> float:
    """Mean over ``groups`` present in ``truth`` of the share of their sources predicted as themselves (labels, not
    probabilities: a decision rule's output, `gpal.evaluation.comparison.balanced_accuracy` takes the argmax)."""
    return float(np.mean([np.mean(pred[truth == g] == g) for g in groups if np.any(truth == g)]))


def significance_task(task: str, rep: int, dr4):
    """(training, test, None, GP settings, unlabelled pool) of a task on `dr4_sources`.

    ``faint``: tested on the faintest quarter by ``Signif_Avg``, trained on the rest; ``bright``: the brightest
    quarter; ``main``: the main job's random 80/20 split.  Repetition ``rep`` trains on a 90% subsample.
    """
    data, pool = dr4
    significance = data.X[:, list(data.feature_names).index("log(Signif_Avg)")]
    unlabelled = pool
    if task == "main":
        pool, test = data.split(test_size=0.2, seed=0)
    else:
        faint = significance <= np.quantile(significance, 0.25)
        bright = significance > np.quantile(significance, 0.75)
        test_rows = faint if task == "faint" else bright
        pool, test = data.subset(np.nonzero(~test_rows)[0]), data.subset(np.nonzero(test_rows)[0])
    keep = np.sort(np.random.default_rng([rep, 11]).permutation(pool.n_samples)[: int(0.9 * pool.n_samples)])
    return pool.subset(keep), test, None, dict(GP_SHARED), unlabelled


# ------------------------------------------------ traced fits (papers 002 and 003)
class Trace:
    """Test accuracy, NLL and ECE of one method along its training clock (evaluation excluded)."""

    def __init__(self, method: str) -> None:
        self.method = method
        self.seconds: list[float] = []
        self.accuracy: list[float] = []
        self.nll: list[float] = []
        self.ece: list[float] = []

    def as_dict(self) -> dict[str, Any]:
        return {"method": self.method, "seconds": self.seconds, "accuracy": self.accuracy, "nll": self.nll,
                "ece": self.ece}

    def add(self, seconds: float, y: np.ndarray, proba: np.ndarray) -> None:
        from gpal.evaluation.calibration import expected_calibration_error
        from gpal.evaluation.metrics import error_rate, negative_log_likelihood

        self.seconds.append(float(seconds))
        self.accuracy.append(1.0 - error_rate(y, proba))
        self.nll.append(negative_log_likelihood(y, proba))
        self.ece.append(expected_calibration_error(y, proba))

    def seconds_to(self, accuracy: float) -> float | None:
        hits = np.nonzero(np.asarray(self.accuracy) >= accuracy - 1e-12)[0]
        return float(self.seconds[hits[0]]) if hits.size else None


class Problem(NamedTuple):
    """A standardised train / test split of a binary set."""

    name: str
    X: np.ndarray
    y: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray


def make_problem(name: str, seed: int, rows: int | None = None, test_size: float = 0.2) -> Problem:
    """An 80/20 stratified split of ``name`` (capped at ``rows``, seeded and stratified), standardised on its training rows."""
    from gpal.data import load_dataset
    from gpal.data.standardizer import Standardizer

    ds = load_dataset(name, n=rows, seed=seed)
    if ds.n_classes != 2:
        raise ValueError(f"paper 002's methods are binary; {name} has {ds.n_classes} classes")
    train, test = ds.split(test_size=test_size, seed=seed)
    scaler = Standardizer.fit(train.X)
    return Problem(name, scaler.transform_arrays(train.X)[0], train.y, scaler.transform_arrays(test.X)[0], test.y)


def trace_vi(p: Problem, method: str, iters: int, num_inducing: int, seed: int, scheme: str = "gpal",
             record: str = "current", kernel: str | None = None) -> Trace:
    """One ``LogisticBoundGPClassifier`` fit, evaluated after every outer iteration through its callback (with
    ``record="authors"`` as paper 002's authors recorded it: the start first, then q one step stale); ``kernel`` a
    name of `gpal.registry.KERNELS` (None: SE-ARD)."""
    from gpal import LogisticBoundGPClassifier

    trace = Trace(f"vi-{method}")
    clf = LogisticBoundGPClassifier(method=method, num_inducing=num_inducing, max_iter=iters, tol=0.0, kernel=kernel,
                                    train_inducing=False, standardize=False, random_state=seed, scheme=scheme)
    clock = {"start": time.perf_counter(), "paused": 0.0}

    def callback(iteration: int, bound: float) -> None:
        pause = time.perf_counter()
        trace.add(pause - clock["start"] - clock["paused"], p.y_test, clf.predict_proba(p.X_test))
        clock["paused"] += time.perf_counter() - pause

    clf.fit(p.X, p.y, callback=callback, record=record)
    return trace


def workflow_svi() -> dict[str, Any]:
    """SVI's batch and Adam step as the paper workflows set them (`gpal.workflows.methods.WORKFLOW_TRAINING`), for a
    study that fits `gpal.NoisyGPClassifier` itself: the estimator's own defaults are the main job's."""
    from gpal.workflows.methods import WORKFLOW_TRAINING

    return {key: WORKFLOW_TRAINING[key] for key in ("batch_size", "learning_rate")}


def trace_svi(p: Problem, epochs: int, num_inducing: int, batch_size: int, seed: int,
              likelihood: str = "logit", kernel: str | None = None) -> Trace:
    """SVI (Adam, lr 0.01) on gpal's SVGP (paper 000's logit likelihood by default), evaluated after every epoch;
    ``kernel`` as `trace_vi`'s."""
    import tensorflow as tf

    from gpal.models.svgp import build_model
    from gpal.training.svi import TrainData, Trainer

    trace = Trace("svi")
    start, paused = time.perf_counter(), [0.0]
    model = build_model(p.X, p.y, num_classes=2, likelihood=likelihood, num_inducing=num_inducing, seed=seed,
                        kernel=kernel)
    zeros = tf.zeros_like(tf.constant(p.X_test))
    predict = tf.function(lambda: model.predict_proba(tf.constant(p.X_test), zeros, tf.constant([seed, 7], tf.int64), 1))

    def callback(epoch: int, loss: float) -> None:
        pause = time.perf_counter()
        trace.add(pause - start - paused[0], p.y_test, predict().numpy())
        paused[0] += time.perf_counter() - pause

    Trainer(model, seed=seed).fit(TrainData.from_arrays(p.X, np.zeros_like(p.X), p.y), epochs=epochs,
                                  batch_size=batch_size, learning_rate=0.01, progress=False, callback=callback)
    return trace


def binary_nll(truth: np.ndarray, q: np.ndarray) -> float:
    """Mean -log of the probability q gave the true type (FSRQ: q; BL Lac: 1 - q)."""
    p = np.clip(np.where(truth, q, 1 - q), 1e-12, 1.0)
    return float(-np.log(p).mean())


def type_measures(truth: np.ndarray, q: dict[str, np.ndarray], reference: str, n_boot: int,
                  seed: int = 0) -> dict[str, dict[str, list[float]]]:
    """The blazar-type studies' measures (bench_4lac, bench_bcu_split) of each model's q (p_fsrq, (seeds, n)) against
    ``truth`` (FSRQ: True): model -> 'auc' / 'nll' -> [seed-mean value, its 95% interval, minus ``reference``, its
    paired interval], over ``n_boot`` bootstrap resamples of the sources (the same for every model and seed; a
    resample needs both types for an AUC), each resample's measure averaged over the seeds."""
    from gpal.evaluation.metrics import roc_auc

    def both(index: np.ndarray) -> dict[str, np.ndarray]:
        t = truth[index]
        return {m: np.array([[roc_auc(t.astype(int), v[index]) for v in per_seed],
                             [binary_nll(t, v[index]) for v in per_seed]]).mean(axis=1) for m, per_seed in q.items()}

    full = both(np.arange(truth.size))
    rng = np.random.default_rng(seed)
    draws = []
    while len(draws) < n_boot:
        index = rng.integers(0, truth.size, truth.size)
        if 0 < truth[index].sum() < truth.size:
            draws.append(both(index))
    out = {}
    for m in q:
        values = np.array([d[m] for d in draws])
        diffs = values - np.array([d[reference] for d in draws])
        out[m] = {name: [float(full[m][k]), *np.quantile(values[:, k], [0.025, 0.975]).tolist(),
                         float(full[m][k] - full[reference][k]), *np.quantile(diffs[:, k], [0.025, 0.975]).tolist()]
                  for k, name in enumerate(("auc", "nll"))}
    return out


def paired_t(diff: Any) -> tuple[float, float, float, float]:
    """Mean of the paired differences ``diff``, its SE and 95% Student t interval (n - 1 degrees of freedom, as
    `labkit.verdicts.interval` gives the papers page's)."""
    try:
        from labkit.verdicts import interval
    except ModuleNotFoundError as exc:  # gpal installed without the lab beside it
        raise SystemExit("the lab's studies need its package labkit: from the repository's top, pip install -e lab"
                         ) from exc

    diff = np.asarray(diff, dtype=np.float64)
    if diff.ndim != 1 or diff.size < 2:
        raise ValueError(f"a paired interval needs two or more differences; got shape {diff.shape}")
    mean, se = float(diff.mean()), float(np.std(diff, ddof=1) / np.sqrt(diff.size))
    return (mean, se, *interval(mean, se, diff.size - 1))


def read_outputs(paths: Any) -> list[dict[str, Any]]:
    """A timing study's kept raw outputs (JSON files its runs wrote), each checked to be a JSON object; a missing or
    unreadable file raises ValueError naming it, so a record is never built from part of its runs."""
    import json

    outputs = []
    for path in paths:
        try:
            raw = json.loads(Path(path).read_text(encoding="utf-8"))
        except OSError as exc:
            raise ValueError(f"{path}: cannot read the study's output ({exc.strerror or exc})") from None
        except ValueError as exc:
            raise ValueError(f"{path} is not JSON ({exc})") from None
        if not isinstance(raw, dict):
            raise ValueError(f"{path}: expected a JSON object (a run's output), got {type(raw).__name__}")
        outputs.append(raw)
    if not outputs:
        raise ValueError("no output given: a record is built from at least one run's JSON")
    return outputs


def output_field(raw: dict[str, Any], path: Any, *keys: str) -> Any:
    """``raw[k1][k2]...``, or ValueError naming the file and the missing field (an output of another script or
    of an older version of it)."""
    value = raw
    for depth, key in enumerate(keys):
        if not isinstance(value, dict) or key not in value:
            raise ValueError(f"{path}: no field {'.'.join(keys[: depth + 1])!r}; expected this study's output")
        value = value[key]
    return value


def outputs_commit(outputs: list[dict[str, Any]], paths: Any, given: str | None = None) -> str:
    """The one commit the outputs were measured at: their ``commit`` field (what a run writes), else ``given`` (the
    record's commit, for outputs kept from before runs named theirs); mixed, unknown or uncommitted is refused."""
    named = [str(raw["commit"]) for raw in outputs if "commit" in raw]
    where = [str(p) for p in paths]
    if named and (len(named) < len(outputs) or len(set(named)) > 1):
        raise ValueError(f"the outputs {where} name the commits {sorted(set(named))} ({len(outputs) - len(named)} "
                         "none): a record needs all its runs at one commit")
    if named and given and given != named[0]:
        raise ValueError(f"--commit {given}, but the outputs {where} name {named[0]}: a run's own commit wins")
    commit = named[0] if named else given
    if not commit:
        raise ValueError(f"the outputs {where} name no commit: give the one they ran at (--commit)")
    if commit == "unknown" or commit.endswith("+dirty"):
        raise ValueError(f"the outputs {where} were made at {commit!r}: a record needs the committed source that "
                         "ran (commit, then run again)")
    return commit


def committed_source() -> str:
    """This source's commit (`code_commit`), for a run that will write a record; uncommitted or unknown source raises
    ValueError before the run starts, so a long measurement is not made in vain (its record would be refused)."""
    commit = code_commit()
    if commit == "unknown" or commit.endswith("+dirty"):
        raise ValueError(f"the source's commit is {commit!r}: commit first, so the record names the code that ran")
    return commit


def run_commit(parser: Any, record: bool) -> str:
    """The commit a timing run names: `committed_source` when it will write a record (a dirty source ends the script
    through ``parser``, before a measurement is made in vain), else `code_commit`."""
    try:
        return committed_source() if record else code_commit()
    except ValueError as exc:
        parser.error(str(exc))


def record_from_kept(parser: Any, path: str, build: Callable[[], dict[str, Any]]) -> None:
    """Write the results record ``build()`` makes from kept outputs to ``path`` and say where; an output it cannot
    use (a ValueError naming it) ends the script through ``parser``, as a bad option does."""
    from result_records import outcome, write_record

    try:
        print(outcome(write_record(path, build())))
    except ValueError as exc:
        parser.error(str(exc))


def run_command(script: str, settings: dict[str, Any], defaults: dict[str, Any], *fixed: str) -> str:
    """The command line that reruns a run of ``script`` whose options were ``settings``: every option that differs
    from the script's ``defaults``, then the ``fixed`` words (a record names how its numbers were made, not a run
    with defaults they did not have)."""
    words = [f"python {script}"]
    for key, default in defaults.items():
        value = settings.get(key, default)
        if value == default or key in ("json", "record", "summarize", "commit"):
            continue
        flag = "--" + key.replace("_", "-")
        if isinstance(value, bool):
            words.append(flag if value else "")
        elif isinstance(value, (list, tuple)):
            words.append(" ".join([flag, *map(str, value)]))
        else:
            words.append(f"{flag} {value}")
    return " ".join(w for w in [*words, *fixed] if w)


def kept_output(json_arg: str | None, name: str) -> str | None:
    """Where a run keeps its figures: ``--json`` as given, or ``name`` inside it when it names a folder (a study's
    folder of kept runs under lab/studies/records/, its README saying what they are)."""
    if json_arg and Path(json_arg).is_dir():
        return str(Path(json_arg) / name)
    return json_arg


def output_files(paths: Any) -> list[str]:
    """The runs' JSON files: the files given, a folder standing for its ``*.json`` in name order."""
    files: list[str] = []
    for path in paths:
        if Path(path).is_dir():
            found = sorted(str(f) for f in Path(path).glob("*.json"))
            if not found:
                raise ValueError(f"{path}: no run's JSON in this folder; run the study first")
            files += found
        else:
            files.append(str(path))
    return files


def runs_in_children(script: str, argv: list[str], runs: int, folder: str, stem: str) -> list[str]:
    """``runs`` runs of ``script`` with ``argv``, each a fresh process (its own imports, tracing and caches, as a user's
    command has) keeping its figures in ``folder/<stem>_run<k>.json``; a failed run stops them with its status."""
    import subprocess

    paths = [str(Path(folder) / f"{stem}_run{k}.json") for k in range(1, runs + 1)]
    for path in paths:
        subprocess.run([sys.executable, script, *argv, "--json", path], check=True)
    return paths


def uci_split(dataset: str, split_index: int, level: float) -> tuple[Any, Any, int, np.ndarray]:
    """Split ``split_index`` of paper 001's UCI workflow (``gpal/workflows/files/papers/001_uci_input_noise.yaml``) at injected
    level ``level``: its (train, test) rows with the same noise draws, the unit's seed, and the clean training rows'
    scale (the paper states a variance in units of the training split standardised before the noise)."""
    from gpal.data.registry import load_dataset
    from gpal.data.standardizer import Standardizer
    from gpal.runs.repeated_splits import split_with_injected_noise
    from gpal.runs.units import derived_seed

    ds = load_dataset(dataset)
    split = list(ds.repeated_splits(split_index + 1, 0.1, seed=0))[split_index]
    seed = derived_seed(0, split.index)
    train, test = split_with_injected_noise(ds, split, level, seed)
    return train, test, seed, Standardizer.fit(ds.subset(split.train)).scale


@contextlib.contextmanager
def learned_variance_start(start: float | None, built: list[Any], inducing: str | None = None) -> Iterator[None]:
    """Inside the block, models start their learned input-noise variance at ``start`` and their inducing inputs as
    ``inducing`` says (``build_model`` takes both, the estimator does not expose them; None keeps its default), and
    each model built is appended to ``built`` (to read it while it trains)."""
    import gpal.models.svgp as svgp

    original = svgp.build_model
    options = {k: v for k, v in (("initial_learned_variance", start), ("inducing_start", inducing)) if v is not None}

    def build_from(*args: Any, **kwargs: Any) -> Any:
        built.append(original(*args, **{**kwargs, **options}))
        return built[-1]

    svgp.build_model = build_from
    try:
        yield
    finally:  # a worker runs several fits: the next must not inherit this start
        svgp.build_model = original


#: The three-class labelled selection (pulsar = psr + msp) the error-model figure and the catalog facts describe.
THREE_CLASS_SELECTION = dict(classes=["bll", "fsrq", "pulsar"], merge={"pulsar": ["psr", "msp"]})


def first_order(feature):
    """The same feature under the model gpal used before: first order, symmetrised errors, no bound, no sentinel."""
    import dataclasses

    return dataclasses.replace(feature, propagation="first_order", two_sided="mean", lower_bound=None, error_sentinel=None)


def error_bars(data) -> dict[str, np.ndarray]:
    """Each feature's propagated 1-sigma error bar, by name."""
    return {name: np.sqrt(data.X_var[:, j]) for j, name in enumerate(data.feature_names)}


def build(catalog, features, **selection):
    """A labelled data set (``classes`` given) or the pool of ``catalog`` with ``features``; the rows a feature cannot
    take are left out as every error-model study has left them (their count is not what these studies measure)."""
    from gpal.catalogs import DroppedRowsWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DroppedRowsWarning)
        if "classes" in selection:
            return catalog.dataset(**selection, features=features)
        return catalog.pool(**selection, features=features)


#: The augmented-model studies' data sets: training and test rows of each stratified split.
SPLITS = {"digits": (500, 1000), "vehicle": (500, 346), "satimage": (1000, 2000)}


def split(name: str, seed: int = 0, n_train: int | None = None):
    """The data set's stratified train/test split of ``SPLITS`` sizes (raw features; estimators standardise);
    ``n_train`` rows for training instead, the test rows as many as before or as the set has left."""
    from sklearn.model_selection import train_test_split

    from gpal.data import load_dataset

    ds = load_dataset(name)
    n_train, n_test = SPLITS[name] if n_train is None else (n_train, min(SPLITS[name][1], ds.n_samples - n_train))
    return train_test_split(ds.X, ds.y, train_size=n_train, test_size=n_test, stratify=ds.y, random_state=seed)


def test_nll(proba: np.ndarray, y: np.ndarray, classes: np.ndarray) -> float:
    """Mean negative log probability of the true classes (``classes`` sorted, as a fitted estimator's)."""
    idx = np.searchsorted(classes, y)
    return float(-np.mean(np.log(np.clip(proba[np.arange(len(y)), idx], 1e-300, None))))


def benchmark_script(name: str) -> ModuleType:
    """A script of ``benchmarks/`` (e.g. ``heteroscedastic``) as a module, loaded from its file: a study reuses the
    task it defines rather than restating it."""
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look the module up by name
    spec.loader.exec_module(module)
    return module


def authors_code(folder: Path) -> None:
    """Put an author's checkout (git-ignored under ``lab/authors/``) first on the import path, so that its package
    imports itself as its authors run it."""
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))


# The pulsar lists of the release pairs (the pulsar order and pulsar rank studies).

#: The releases whose pulsar lists are scored, oldest first, and every release that scores them.
EARLIER = ("3FGL", "4FGL", "4FGL-DR2", "4FGL-DR4")
LATER = ("4FGL", "4FGL-DR2", "4FGL-DR4", "FL16Y")
#: The ranks at which a list is read.
TOP = (25, 50, 100)
#: The later classes that count as a pulsar found.
PULSARS = ("psr", "msp")
#: Paired bootstrap resamples of each list's rows; the studies' records are made with this many.
N_BOOT = 2000


def pulsar_study_arguments(doc: str, runs_help: str, argv: Sequence[str] | None,
                           **more_runs: str) -> argparse.Namespace:
    """A pulsar-list study's command line: ``--runs`` (the classify runs it reuses; ``more_runs``: name -> help of
    other folders of runs, ``--<name>``), ``--record`` and ``--n-boot``, a record refused unless made with `N_BOOT`
    resamples."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=Path, required=True, help=runs_help)
    for name, words in more_runs.items():
        parser.add_argument(f"--{name.replace('_', '-')}", type=Path, required=True, help=words)
    parser.add_argument("--record", type=Path, help="also write the results page's record to this file")
    parser.add_argument("--n-boot", type=int, default=N_BOOT, help=f"bootstrap resamples (default {N_BOOT}; the "
                        "record is made with the default)")
    args = parser.parse_args(argv)
    if args.record and args.n_boot != N_BOOT:
        parser.error(f"--record is made with the default --n-boot {N_BOOT}")
    return args


def report_pulsar_study(args: argparse.Namespace, made: list, chosen: str, title: str, command: str,
                        settings: dict[str, Any], workflow: str) -> None:
    """A pulsar-list study's tables and the order chosen on the older pairs, printed; with ``--record`` (``args``:
    `pulsar_study_arguments`'), the results page's record of them written too."""
    from result_records import make_record, outcome, table_markdown, write_record

    for table in made:
        print(table_markdown(table), "\n", sep="")
    print(f"chosen on the pairs ending before FL16Y: {chosen}")
    if args.record:
        print(outcome(write_record(args.record, make_record(title, command, code_commit(), made, settings=settings,
                                                            workflow=workflow))))


def run(runs: Path, release: str, *options: str) -> Path:
    """The finished ``gpal classify`` folder of one release (run here when missing, with the command-line
    ``options``)."""
    import subprocess

    from gpal.catalog_jobs.layout import REPORT_FILE

    out = runs / release
    if not (out / REPORT_FILE).is_file():
        print(f"running gpal classify on {release} -> {out}", file=sys.stderr, flush=True)
        subprocess.run([sys.executable, "-m", "gpal.cli", "classify", "--catalog", release, "--out", str(out),
                        "--no-progress", "--quiet", *options], check=True, stdout=subprocess.DEVNULL)
    return out


def pulsar_list(folder: Path) -> pd.DataFrame:
    """The run's pulsar list, without its rank."""
    from gpal.catalog_jobs.layout import candidate_file, list_path, located

    rows = pd.read_csv(located(folder, list_path(candidate_file("pulsar"))), keep_default_na=False)
    return rows.drop(columns="rank")


def later_classes(runs: Path, earlier: str, later: str,
                  codes: Callable[[str], np.ndarray] | None = None) -> pd.Series:
    """The later release's CLASS1 code of each earlier source ('' where none or unlinked), by earlier name (kept in
    ``RUNS/later_<earlier>_<later>.csv``); ``codes``: the later release's codes by release name, where not its
    CLASS1 (a study that types more finely keeps them in its own ``RUNS``)."""
    cache = runs / f"later_{earlier}_{later}.csv"
    if not cache.is_file():
        from gpal.catalogs import load_catalog
        from gpal.catalogs.links import link_later
        from gpal.catalogs.releases import RELEASES, link_path

        first, last = load_catalog(earlier), load_catalog(later)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # an ambiguous link is left out: no later class, as the checks read it
            index = link_later(first, last, [load_catalog(r.name) for r in link_path(RELEASES[earlier], RELEASES[later])])
        given = last.class_codes if codes is None else np.char.lower(np.asarray(codes(later), dtype=str))
        linked = np.where(index >= 0, given[np.maximum(index, 0)], "")
        pd.DataFrame({"Source_Name": [str(n).strip() for n in first.names],
                      "later_class": [str(c).strip().lower() for c in linked]}).to_csv(cache, index=False)
    table = pd.read_csv(cache, keep_default_na=False)
    return table.set_index("Source_Name")["later_class"]


def hits(names: pd.Series, later: pd.Series) -> np.ndarray:
    """Which of ``names`` the later release calls a pulsar."""
    return later.reindex(names.astype(str).str.strip()).fillna("").isin(PULSARS).to_numpy()

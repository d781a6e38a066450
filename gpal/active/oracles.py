"""Oracles: whoever reveals the class of a queried source.

An oracle is called as ``oracle(query, queried, scores, proba, class_names)`` and
returns one class name per queried source; ``query`` is the query number (from 1),
``queried`` the queried rows (a ``NoisyDataset``, ids = source names), ``proba``
their predicted class probabilities (columns = ``class_names``).

- `SimulatedOracle` reads labels from a labelled ``NoisyDataset`` (benchmarks).
- `FileOracle` is for real follow-up: it writes ``query_0007.csv`` (Source_Name,
  score, one probability column per class, the columns ``describe`` gives such as the
  position and error ellipse, an empty ``label`` column), then waits until every label
  is filled in.  The file is never overwritten once written, so labels typed into it
  survive a crash; a rerun reads it again.  ``twin``, if given, writes a described copy
  of the query beside it first (for a catalog: an ECSV with the columns' units).

A label is a class name as the loop spells it (case matters: ``snr``, not ``SNR``; a
near miss is named), or one of the loop's ``outcomes``: what a follow-up can find beyond
the trained classes, such as another population, or `NOTHING_FOUND`.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd

from gpal.data.dataset import NoisyDataset
from gpal.files import atomic_output

__all__ = ["NOTHING_FOUND", "LabelsPending", "OracleError", "SimulatedOracle", "FileOracle", "check_labels"]

#: The label of a source observed with nothing found: recorded, out of the pool, never trained on.
NOTHING_FOUND = "nothing"


class OracleError(ValueError):
    """An oracle answered with something the loop cannot use (unknown source, unknown class, ...).

    Examples
    --------
    >>> import numpy as np
    >>> from gpal import NoisyDataset
    >>> from gpal.active import OracleError, SimulatedOracle
    >>> truth = NoisyDataset(X=[[0.0], [1.0]], X_var=None, y=np.array([0, 1]), class_names=("bll", "fsrq"),
    ...                      feature_names=(), ids=["a", "b"])
    >>> stranger = NoisyDataset(X=[[2.0]], X_var=None, y=None, class_names=(), feature_names=(), ids=["c"])
    >>> SimulatedOracle(truth)(1, stranger, None, None, truth.class_names)
    Traceback (most recent call last):
        ...
    gpal.active.oracles.OracleError: simulated oracle has no label for 1 source(s), e.g. ['c']
    """


class LabelsPending(RuntimeError):
    """A file oracle's labels are not all filled in yet; fill them and rerun (the loop resumes).

    Examples
    --------
    >>> import tempfile
    >>> import numpy as np
    >>> from gpal import NoisyDataset
    >>> from gpal.active import FileOracle, LabelsPending
    >>> queried = NoisyDataset(X=[[0.0]], X_var=None, y=None, class_names=(), feature_names=(),
    ...                        ids=["4FGL J0001.2+4741"])
    >>> FileOracle(tempfile.mkdtemp())(1, queried, np.array([0.9]), np.array([[0.5, 0.5]]), ("bll", "fsrq"))
    Traceback (most recent call last):
        ...
    gpal.active.oracles.LabelsPending: query 1: labels missing in .../query_0001.csv; fill its 'label' column ...
    """


def check_labels(labels: Sequence[Any], ids: Sequence[str], class_names: Sequence[str], source: str,
                 outcomes: Sequence[str] = ()) -> list[str]:
    """Labels as class names or ``outcomes``, one per id, or an `OracleError` naming the offending sources.

    Returns
    -------
    list of str
        The labels as strings, in the order of ``ids``.
    """
    labels = [str(v) for v in labels]
    if len(labels) != len(ids):
        raise OracleError(f"{source} returned {len(labels)} label(s) for {len(ids)} queried source(s)")
    known = list(dict.fromkeys([*class_names, *outcomes]))
    bad = [(i, v) for i, v in zip(ids, labels) if v not in known]
    if bad:
        folded = {k.lower(): k for k in known}
        raise OracleError(
            f"{source}: label(s) outside the known classes {list(class_names)}"
            + (f" and outcomes {[o for o in known if o not in class_names]}" if len(known) > len(class_names) else "")
            + f" for {len(bad)} source(s): "
            + ", ".join(f"{i}={v!r}" + (f" (did you mean {folded[v.lower()]!r}? case matters)"
                                        if v.lower() in folded else "") for i, v in bad[:10])
        )
    return labels


class SimulatedOracle:
    """Reveals the true labels held in a labelled ``NoisyDataset`` (looked up by id).

    Examples
    --------
    >>> import numpy as np
    >>> from gpal import NoisyDataset
    >>> from gpal.active import SimulatedOracle
    >>> truth = NoisyDataset(X=[[0.0], [1.0]], X_var=None, y=np.array([0, 1]), class_names=("bll", "fsrq"),
    ...                      feature_names=(), ids=["a", "b"])
    >>> oracle = SimulatedOracle(truth)
    >>> oracle(1, truth.by_ids(["b", "a"]), None, None, truth.class_names)   # (query, queried, scores, proba, classes)
    ['fsrq', 'bll']
    """

    def __init__(self, truth: NoisyDataset):
        if not isinstance(truth, NoisyDataset) or not truth.is_labelled:
            raise TypeError("SimulatedOracle needs a labelled NoisyDataset holding the true classes")
        self.truth = truth
        self._label = dict(zip(truth.ids.tolist(), truth.labels().tolist()))

    def __call__(self, query: int, queried: NoisyDataset, scores: np.ndarray, proba: np.ndarray,
                 class_names: Sequence[str], outcomes: Sequence[str] = ()) -> list[str]:
        missing = [i for i in queried.ids.tolist() if i not in self._label]
        if missing:
            raise OracleError(f"simulated oracle has no label for {len(missing)} source(s), e.g. {missing[:5]}")
        return check_labels([self._label[i] for i in queried.ids.tolist()], queried.ids.tolist(), class_names,
                            "simulated oracle", outcomes)


class FileOracle:
    """Queries as CSV files in ``directory``; labels are typed into their ``label`` column.

    ``timeout`` seconds (0 = do not wait) are spent polling every ``poll_interval``
    seconds; if labels are still missing, `LabelsPending` is raised and the loop's
    checkpoint keeps the pending query, so rerunning the loop later picks it up.
    ``describe(ids)``, if given, returns a frame of more columns for those sources (one row
    each, in order; for a catalog: `gpal.catalogs.targets.target_columns`), written after
    the probabilities.  ``twin(frame, path)``, if given, writes the query's rows less the
    ``label`` column beside ``path`` (for a catalog: `gpal.catalog_jobs.tables.write_ecsv_twin`,
    whose units a plain CSV cannot hold); it is written before the CSV, whose presence marks
    the query as asked, so a crash between the two leaves no query without its twin.

    Examples
    --------
    >>> import tempfile
    >>> import numpy as np
    >>> import pandas as pd
    >>> from gpal import NoisyDataset
    >>> from gpal.active import FileOracle
    >>> oracle = FileOracle(tempfile.mkdtemp())     # timeout 0: do not wait for the labels
    >>> queried = NoisyDataset(X=[[0.0], [1.0]], X_var=None, y=None, class_names=(), feature_names=(),
    ...                        ids=["4FGL J0001.2+4741", "4FGL J0002.1-6728"])
    >>> scores, proba, classes = np.array([0.9, 0.7]), np.array([[0.5, 0.5], [0.8, 0.2]]), ("bll", "fsrq")
    >>> path = oracle.write(1, queried, scores, proba, classes)
    >>> print(path.read_text().strip())
    Source_Name,score,p_bll,p_fsrq,label
    4FGL J0001.2+4741,0.9,0.5,0.5,
    4FGL J0002.1-6728,0.7,0.8,0.2,
    >>> print(oracle.read(1, queried.ids.tolist(), classes))    # not labelled yet
    None
    >>> table = pd.read_csv(path)
    >>> table["label"] = ["fsrq", "bll"]                         # what the astronomer types in
    >>> table.to_csv(path, index=False)
    >>> oracle(1, queried, scores, proba, classes)
    ['fsrq', 'bll']
    """

    NAME = "Source_Name"

    def __init__(self, directory: str | Path, timeout: float = 0.0, poll_interval: float = 5.0,
                 describe: Callable[[list[str]], pd.DataFrame] | None = None,
                 twin: Callable[[pd.DataFrame, Path], Any] | None = None):
        if timeout < 0 or poll_interval <= 0:
            raise ValueError(f"timeout must be >= 0 and poll_interval > 0; got {timeout!r}, {poll_interval!r}")
        self.describe = describe
        self.twin = twin
        self.directory = Path(directory)
        self.timeout = float(timeout)
        self.poll_interval = float(poll_interval)

    def path(self, query: int) -> Path:
        """Where the file of query ``query`` is.

        Returns
        -------
        pathlib.Path
            ``directory / "query_0007.csv"`` for query 7.
        """
        return self.directory / f"query_{query:04d}.csv"

    def write(self, query: int, queried: NoisyDataset, scores: np.ndarray, proba: np.ndarray,
              class_names: Sequence[str]) -> Path:
        """Write the query file (only if absent: a file that exists may already hold typed labels).

        Returns
        -------
        pathlib.Path
            The query file (written now, or kept as it was).
        """
        path = self.path(query)
        if path.exists():
            return path
        frame = pd.DataFrame({self.NAME: queried.ids, "score": np.asarray(scores, dtype=np.float64)})
        for c, name in enumerate(class_names):
            frame[f"p_{name}"] = np.asarray(proba, dtype=np.float64)[:, c]
        if self.describe is not None:
            more = self.describe(queried.ids.tolist()).drop(columns=[self.NAME], errors="ignore")
            frame = pd.concat([frame, more.drop(columns=[c for c in more if c in frame]).reset_index(drop=True)], axis=1)
        if self.twin is not None:
            path.parent.mkdir(parents=True, exist_ok=True)  # the twin's folder, as atomic_output makes the query's
            self.twin(frame, path)
        frame["label"] = ""
        with atomic_output(path) as tmp:
            frame.to_csv(tmp, index=False)
        return path

    def read(self, query: int, ids: Sequence[str], class_names: Sequence[str],
             outcomes: Sequence[str] = ()) -> list[str] | None:
        """Labels in the order of ``ids``; None while some are blank; `OracleError` for bad content.

        Returns
        -------
        list of str or None
            One class name per id, or None while a label is blank.
        """
        path = self.path(query)
        try:
            frame = pd.read_csv(path, dtype=str, keep_default_na=False)
        except ValueError as exc:  # empty (EmptyDataError), not UTF-8 (UnicodeDecodeError) or unparsable (ParserError)
            raise OracleError(
                f"{path} is not a readable CSV query file ({exc}); expected UTF-8 text with a {self.NAME!r} and a "
                "'label' column, as gpal wrote it (delete it and rerun to have it written again)"
            ) from None
        for column in (self.NAME, "label"):
            if column not in frame.columns:
                raise OracleError(f"{path} has no {column!r} column; columns are {list(frame.columns)}")
        names = frame[self.NAME].str.strip().tolist()
        given = frame["label"].str.strip().tolist()
        twice = {n: sorted({v for m, v in zip(names, given) if m == n and v}) for n in set(names) if names.count(n) > 1}
        conflicting = {n: v for n, v in twice.items() if len(v) > 1}
        if conflicting:
            raise OracleError(f"{path}: source(s) labelled twice with different classes: "
                              + "; ".join(f"{n}: {v}" for n, v in sorted(conflicting.items())[:10])
                              + "; keep one row per source with the class the follow-up found")
        duplicated = sorted(twice)
        unknown = sorted(set(names) - set(ids))
        missing = sorted(set(ids) - set(names))
        if duplicated or unknown or missing:
            raise OracleError(
                f"{path} does not list exactly the queried sources: "
                + "; ".join(
                    f"{what} {vals[:10]}"
                    for what, vals in [("duplicated", duplicated), ("unknown (not queried)", unknown),
                                       ("missing", missing)]
                    if vals
                )
            )
        label = dict(zip(names, frame["label"].str.strip()))
        if any(label[i] == "" for i in ids):
            return None
        return check_labels([label[i] for i in ids], ids, class_names, str(path), outcomes)

    def __call__(self, query: int, queried: NoisyDataset, scores: np.ndarray, proba: np.ndarray,
                 class_names: Sequence[str], outcomes: Sequence[str] = ()) -> list[str]:
        path = self.write(query, queried, scores, proba, class_names)
        ids = queried.ids.tolist()
        deadline = time.monotonic() + self.timeout
        while True:
            labels = self.read(query, ids, class_names, outcomes)
            if labels is not None:
                return labels
            if time.monotonic() >= deadline:
                raise LabelsPending(
                    f"query {query}: labels missing in {path}; fill its 'label' column with one of "
                    f"{list(class_names)} for every source" + (f" (or an outcome beyond them: {NOTHING_FOUND!r} when "
                    "nothing was found, another class code such as 'snr')" if outcomes else "")
                    + " and run again (the loop resumes at this query)"
                )
            time.sleep(self.poll_interval)
